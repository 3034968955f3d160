// Aggregates (SPEC 3) and exact quantiles, against values worked out by hand or by sorting.
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "core/metrics/aggregate.h"
#include "core/metrics/metrics.h"
#include "core/metrics/quantile.h"

using namespace kcx;

namespace {
double agg(const char* text, const std::vector<double>& v) {
    std::string err;
    const auto a = parseAggregate(text, &err);
    if (!a)
        qFatal("%s", err.c_str());
    const auto r = applyAggregate(*a, v);
    return r ? *r : -12345.0;
}
// Type 7 from its definition, over a sorted copy.
double type7(std::vector<double> x, double q) {
    std::sort(x.begin(), x.end());
    const double h = double(x.size() - 1) * q;
    const size_t lo = size_t(std::floor(h));
    if (lo + 1 >= x.size())
        return x[lo];
    return x[lo] + (h - double(lo)) * (x[lo + 1] - x[lo]);
}
// Type 7 over values already sorted with -0 before +0, the way numpy interpolates
// (a + (b - a) f, from b downwards for f >= 0.5): equal to the bit, sign of a zero included.
double type7SortedExact(const std::vector<double>& sorted, double q) {
    const double h = double(sorted.size() - 1) * q;
    const size_t k = size_t(std::floor(h));
    const double a = sorted[k], b = sorted[std::min(k + 1, sorted.size() - 1)], f = h - double(k);
    return f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f;
}
}  // namespace

class TestAggregate : public QObject {
    Q_OBJECT
private slots:
    // Issue 16: a mean over many values is the same double on any number of threads (the
    // values are summed in fixed blocks, combined in order), so a record signed on 2 cores
    // verifies on 1, 3 or 16. Values of wildly different sizes make the order matter: the
    // plain left-to-right sum below differs from a sum in other orders, so a chunking by
    // thread count would show here.
    void meanIsTheSameOnAnyThreadCount() {
        std::mt19937_64 rng(7);
        std::lognormal_distribution<double> wide(0.0, 6.0);
        std::vector<double> v(300000);
        for (double& x : v)
            x = (rng() & 1 ? 1 : -1) * wide(rng);
        double leftToRight = 0;
        for (double x : v)
            leftToRight += x;
        double backwards = 0;
        for (size_t i = v.size(); i-- > 0;)
            backwards += v[i];
        QVERIFY(leftToRight != backwards);   // the order matters for these values
        const auto mean = *kcx::parseAggregate("mean");
        const double one = *kcx::applyAggregate(mean, v, 1);
        for (int threads : {2, 3, 5, 16}) {
            const double t = *kcx::applyAggregate(mean, v, threads);
            QVERIFY2(std::memcmp(&t, &one, sizeof t) == 0, qPrintable(QString("%1 threads: %2 vs %3")
                                                                          .arg(threads).arg(t, 0, 'g', 17).arg(one, 0, 'g', 17)));
        }
        kcx::MetricValues mv;
        mv.values = v;
        mv.count = v.size();
        const double s1 = *kcx::summarize(mv, 1).mean;
        for (int threads : {2, 3, 16}) {
            const double st = *kcx::summarize(mv, threads).mean;
            QVERIFY(std::memcmp(&st, &s1, sizeof st) == 0);
        }
        QCOMPARE(s1, one);
    }

    void byHand() {
        const std::vector<double> v = {4, 1, NAN, 3, 2};
        QCOMPARE(agg("max", v), 4.0);
        QCOMPARE(agg("min", v), 1.0);
        QCOMPARE(agg("mean", v), 2.5);
        QCOMPARE(agg("sum", v), 10.0);
        QCOMPARE(agg("count", v), 4.0);
        QCOMPARE(agg("p50", v), 2.5);                 // h = 1.5 between 2 and 3
        QCOMPARE(agg("p99", v), 3.97);                // h = 2.97: 3 + 0.97
        QCOMPARE(agg("p0", v), 1.0);
        QCOMPARE(agg("p100", v), 4.0);
        QVERIFY(std::fabs(agg("p99.9", v) - 3.997) < 1e-12);
        QCOMPARE(agg("fraction_above: 2", v), 0.5);    // strictly greater: 3, 4
        QCOMPARE(agg("fraction_above:3.5", v), 0.25);
        QCOMPARE(agg("fraction_outside: [2, 3]", v), 0.5);   // 1 and 4
        QCOMPARE(agg("  fraction_outside: [-1, 10] ", v), 0.0);
    }
    void emptyHasNoValue() {
        for (const char* a : {"max", "mean", "sum", "count", "p50", "fraction_above: 0"}) {
            QVERIFY(!applyAggregate(*parseAggregate(a), std::vector<double>{}));
            QVERIFY(!applyAggregate(*parseAggregate(a), std::vector<double>{NAN, NAN}));
        }
    }
    void badText_data() {
        QTest::addColumn<QString>("text");
        for (const char* t : {"median", "p101", "p", "px", "p99.9.9", "p-1", "fraction_above: abc", "fraction_above:",
                              "fraction_outside: [3, 1]", "fraction_outside: 1, 2", "fraction_outside: [1]", "MAX", ""})
            QTest::newRow(t) << QString(t);
    }
    void badText() {
        QFETCH(QString, text);
        std::string err;
        QVERIFY(!parseAggregate(text.toStdString(), &err));
        QVERIFY(!err.empty());
    }
    void canonicalText() {
        QCOMPARE(parseAggregate("fraction_above:0.2")->text, std::string("fraction_above: 0.2"));
        QCOMPARE(parseAggregate("p99.9")->q, 0.999);
    }
    // Radix selection against a full sort: mixed signs, duplicates, NaN, tiny and huge values.
    void quantilesMatchSorting() {
        std::mt19937_64 rng(7);
        for (int trial = 0; trial < 30; ++trial) {
            const size_t n = trial < 10 ? size_t(1 + trial) : size_t(rng() % 300000 + 1);
            std::vector<double> v(n), clean;
            std::normal_distribution<double> normal(0, 1);
            for (auto& x : v) {
                const int kind = int(rng() % 10);
                x = kind == 0 ? std::round(normal(rng)) : kind == 1 ? NAN : kind == 2 ? normal(rng) * 1e-300
                  : kind == 3 ? -0.0 : std::exp(normal(rng) * 5) * (rng() % 2 ? 1 : -1);
                if (!std::isnan(x))
                    clean.push_back(x);
            }
            const double qs[] = {0, 0.001, 0.5, 0.99, 0.999, 1};
            const auto got = quantilesType7(v, qs, trial % 3);
            if (clean.empty()) {
                QVERIFY(got.empty());
                continue;
            }
            for (size_t i = 0; i < 6; ++i)
                QCOMPARE(got[i], type7(clean, qs[i]));
            std::sort(clean.begin(), clean.end());
            const size_t k = clean.size() / 3;
            QCOMPARE(orderStatistic(v, k), clean[k]);
        }
    }

    // Issue 17: more than a million values in one top-level bucket (ratios of two near-equal
    // kernels, all within 1e-6 of 1.0; clip_excess's 0s and 1s; one value repeated) are
    // narrowed 16 key bits at a time instead of copied; the quantiles are still exactly
    // those of sorting, including ties, -0 beside +0, and NaNs among them.
    void quantilesOfCrowdedBucketsMatchSorting() {
        std::mt19937_64 rng(17);
        std::normal_distribution<double> normal(0, 1e-6);
        const size_t n = 2'500'000;
        for (int kind = 0; kind < 4; ++kind) {
            std::vector<double> v(n), clean;
            for (size_t i = 0; i < n; ++i) {
                v[i] = kind == 0   ? 1.0 + normal(rng)
                       : kind == 1 ? double(rng() % 100 == 0)
                       : kind == 2 ? 0.25
                                   : (i % 7 == 0 ? -0.0 : i % 11 == 0 ? NAN : 1.0 + std::round(normal(rng) * 1e6) * 1e-9);
                if (!std::isnan(v[i]))
                    clean.push_back(v[i]);
            }
            const double qs[] = {0, 0.001, 0.01, 0.5, 0.99, 0.999, 1};
            const auto got = quantilesType7(v, qs, kind % 3);
            QCOMPARE(got.size(), size_t(7));
            for (size_t i = 0; i < 7; ++i)
                QVERIFY2(got[i] == type7(clean, qs[i]),
                         qPrintable(QString("kind %1 q %2: %3 vs %4").arg(kind).arg(qs[i]).arg(got[i], 0, 'g', 17)
                                        .arg(type7(clean, qs[i]), 0, 'g', 17)));
            std::sort(clean.begin(), clean.end());
            for (size_t k : {size_t(0), clean.size() / 2, clean.size() - 1})
                QCOMPARE(orderStatistic(v, k), clean[k]);
        }
    }
    // At and around the size below which the values are copied and selected directly instead
    // of counted (4,096): the same order statistics to the bit as a sort that puts -0 before
    // +0, with and without a known range, and with NaNs among the values.
    void smallInputsMatchSorting() {
        std::mt19937_64 rng(29);
        std::normal_distribution<double> normal(0, 1);
        for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(17), size_t(300), size_t(4095), size_t(4096),
                         size_t(4097), size_t(5000)}) {
            for (int kind = 0; kind < 3; ++kind) {
                std::vector<double> v(n), clean;
                for (auto& x : v) {
                    const int r = int(rng() % 8);
                    x = r == 0 ? -0.0 : r == 1 ? 0.0 : r == 2 && kind ? NAN : std::round(normal(rng) * 4) / 4;
                    if (!std::isnan(x))
                        clean.push_back(x);
                }
                if (clean.empty())
                    continue;
                std::sort(clean.begin(), clean.end(), [](double a, double b) {
                    return a < b || (a == b && std::signbit(a) && !std::signbit(b));
                });
                const double qs[] = {0, 0.01, 0.37, 0.5, 0.99, 1};
                std::optional<std::pair<double, double>> range;
                if (kind == 2)
                    range = std::pair{clean.front(), clean.back()};
                const auto got = quantilesType7(v, qs, 2, range);
                QCOMPARE(got.size(), size_t(6));
                for (size_t i = 0; i < 6; ++i) {
                    const double want = type7SortedExact(clean, qs[i]);
                    QVERIFY2(std::memcmp(&got[i], &want, sizeof want) == 0,
                             qPrintable(QString("n %1 kind %2 q %3: %4 vs %5").arg(n).arg(kind).arg(qs[i])
                                            .arg(got[i], 0, 'g', 17).arg(want, 0, 'g', 17)));
                }
                for (size_t k : {size_t(0), clean.size() / 2, clean.size() - 1}) {
                    const double o = orderStatistic(v, k);
                    QVERIFY(std::memcmp(&o, &clean[k], sizeof o) == 0);
                }
                const std::vector<uint64_t> ranks = {clean.size() - 1, 0, clean.size() / 3};
                const auto many = orderStatistics(v, ranks);
                for (size_t i = 0; i < ranks.size(); ++i)
                    QVERIFY(std::memcmp(&many[i], &clean[ranks[i]], sizeof(double)) == 0);
            }
        }
    }

    // With the minimum and maximum given (summarize knows them), the histogram splits that
    // range: the same order statistics, to the bit (the sign of a zero included), as sorting.
    void quantilesWithAKnownRangeMatchSorting() {
        std::mt19937_64 rng(23);
        std::normal_distribution<double> normal(0, 2e-3);
        const size_t n = 400'000;
        for (int kind = 0; kind < 8; ++kind) {
            std::vector<double> v(n), clean;
            for (size_t i = 0; i < n; ++i) {
                switch (kind) {
                case 0: v[i] = std::exp(normal(rng)); break;                    // a ratio near 1
                case 1: v[i] = 0.0; break;                                      // all +0
                case 2: v[i] = i % 3 != 1 ? 0.0 : -0.0; break;                  // both zeros, +0 first
                case 7: v[i] = i % 3 == 0 ? -0.0 : (i % 3 == 1 ? 0.0 : -1.0); break;   // max: -0 first
                case 3: v[i] = i % 1000 ? 0.0 : 1.0; break;                     // clip_excess
                case 4: v[i] = i % 5 ? normal(rng) : (i % 10 ? -0.0 : 0.0); break;
                case 5: v[i] = i == 7 ? INFINITY : (i == 9 ? -INFINITY : normal(rng)); break;
                case 6: v[i] = i % 2 ? NAN : -3.5; break;                      // one value and NaNs
                }
                if (!std::isnan(v[i]))
                    clean.push_back(v[i]);
            }
            double lo = INFINITY, hi = -INFINITY;   // as summarize finds them: == ignores a zero's sign
            for (double x : clean) {
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
            std::vector<double> sorted = clean;
            std::sort(sorted.begin(), sorted.end(), [](double a, double b) {
                return a < b || (a == b && std::signbit(a) && !std::signbit(b));
            });
            const double qs[] = {0, 0.001, 0.3, 0.5, 0.99, 0.999, 1};
            const auto got = quantilesType7(v, qs, 2, std::pair{lo, hi});
            QCOMPARE(got.size(), size_t(7));
            for (size_t i = 0; i < 7; ++i) {
                const double want = type7SortedExact(sorted, qs[i]);
                QVERIFY2(std::memcmp(&got[i], &want, sizeof want) == 0,
                         qPrintable(QString("kind %1 q %2: %3 vs %4").arg(kind).arg(qs[i]).arg(got[i], 0, 'g', 17)
                                        .arg(want, 0, 'g', 17)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestAggregate)
#include "test_aggregate.moc"
