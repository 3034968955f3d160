// The order-statistic interval of a quantile (core/metrics/quantile_ci.h): ranks from
// textbooks, ranks from binomial sums written out here (long double lgamma, an independent
// method), the sides that n values cannot bound, huge n, the interval's values, and the
// bucketed counting behind a dragged threshold.
#include <QtTest/QTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "core/metrics/quantile.h"
#include "core/metrics/quantile_ci.h"

using namespace kcx;

namespace {

// P(B ≤ k) for every k, B ~ Binomial(n, q), each term exp(lgamma…) in long double and summed
// from k = 0: the textbook formula, nothing shared with the library's ratio walk.
std::vector<long double> referenceCdf(uint64_t n, double q) {
    std::vector<long double> cdf(n + 1);
    const long double lq = std::log(static_cast<long double>(q)), lp = std::log1p(-static_cast<long double>(q));
    const long double ln = std::lgamma(static_cast<long double>(n) + 1);
    long double s = 0;
    for (uint64_t k = 0; k <= n; ++k) {
        const auto kk = static_cast<long double>(k), rest = static_cast<long double>(n - k);
        s += std::exp(ln - std::lgamma(kk + 1) - std::lgamma(rest + 1) + kk * lq + rest * lp);
        cdf[k] = s;
    }
    return cdf;
}

struct RefRanks {
    std::optional<uint64_t> lo, hi;
    bool borderline = false;   // a CDF value within 1e-9 of a cut: rounding may decide
};

// The equal-tailed ranks from their definition, over the reference CDF.
RefRanks referenceRanks(uint64_t n, double q, double confidence = 0.95) {
    const auto cdf = referenceCdf(n, q);
    const long double a = (1 - static_cast<long double>(confidence)) / 2;
    RefRanks r;
    for (uint64_t k = 0; k < n; ++k) {
        r.borderline = r.borderline || std::fabs(cdf[k] - a) < 1e-9L || std::fabs(cdf[k] - (1 - a)) < 1e-9L;
        if (cdf[k] <= a)
            r.lo = k;
        if (cdf[k] >= 1 - a && !r.hi)
            r.hi = k;
    }
    return r;
}

QString ranksText(const std::optional<uint64_t>& lo, const std::optional<uint64_t>& hi) {
    auto t = [](const std::optional<uint64_t>& x) { return x ? QString::number(*x) : QStringLiteral("none"); };
    return QStringLiteral("(%1, %2)").arg(t(lo), t(hi));
}

}  // namespace

class TestQuantileCi : public QObject {
    Q_OBJECT
private slots:
    // The classic tables: the 95 % interval of the median is x(6)..x(15) (1-based) for
    // n = 20 and x(40)..x(61) for n = 100; coverage 1 − 2·P(B ≤ 5) = 1 − 2·21700/2²⁰.
    void textbookMedian() {
        const QuantileRanks r20 = quantileIntervalRanks(20, 0.5);
        QCOMPARE(r20.lo, std::optional<uint64_t>(5));
        QCOMPARE(r20.hi, std::optional<uint64_t>(14));
        QVERIFY(std::fabs(r20.coverage - (1 - 2 * 21700.0 / 1048576.0)) < 1e-12);
        const QuantileRanks r100 = quantileIntervalRanks(100, 0.5);
        QCOMPARE(r100.lo, std::optional<uint64_t>(39));
        QCOMPARE(r100.hi, std::optional<uint64_t>(60));
        QVERIFY(std::fabs(r100.coverage - (0.9823998998911476 - 0.017600100108852407)) < 1e-12);   // F(60) − F(39)
    }

    // Every n up to 400 at several q, and some larger n, against the written-out sums.
    void ranksAgainstBinomialSums() {
        int compared = 0, borderline = 0;
        const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999, 0.1, 0.01, 0.25, 0.75, 0.123};
        std::vector<uint64_t> ns;
        for (uint64_t n = 1; n <= 400; ++n)
            ns.push_back(n);
        for (uint64_t n : {1000, 3687, 3688, 5000, 20000})
            ns.push_back(n);
        for (uint64_t n : ns)
            for (double q : qs) {
                const RefRanks want = referenceRanks(n, q);
                if (want.borderline) {
                    ++borderline;
                    continue;
                }
                const QuantileRanks got = quantileIntervalRanks(n, q);
                QVERIFY2(got.lo == want.lo && got.hi == want.hi,
                         qPrintable(QStringLiteral("n=%1 q=%2: got %3, want %4")
                                        .arg(n).arg(q).arg(ranksText(got.lo, got.hi), ranksText(want.lo, want.hi))));
                QVERIFY(got.coverage >= 0.95 - 1e-12 && got.coverage <= 1 + 1e-12);
                ++compared;
            }
        QVERIFY(compared > 4000);
        QVERIFY(borderline < 10);
    }

    // The CDF itself, at every k of moderate n (absolute 1e-12).
    void cdfAgainstBinomialSums() {
        for (uint64_t n : {1, 2, 7, 50, 333, 2000, 100000})
            for (double q : {0.5, 0.999, 0.003, 0.7}) {
                const auto want = referenceCdf(n, q);
                const uint64_t step = std::max<uint64_t>(1, n / 500);
                for (uint64_t k = 0; k <= n; k += step) {
                    const double got = binomialCdf(n, q, k);
                    QVERIFY2(std::fabs(got - double(want[k])) < 1e-12,
                             qPrintable(QStringLiteral("n=%1 q=%2 k=%3: %4 vs %5")
                                            .arg(n).arg(q).arg(k).arg(got, 0, 'g', 17).arg(double(want[k]), 0, 'g', 17)));
                }
            }
    }

    // Too few values for a side: p99.9 of 100 values has a lower rank but no upper one. The
    // least n with an upper side is the least n with 0.999ⁿ ≤ 0.025: 3688 (0.999³⁶⁸⁷ =
    // 0.0250009); then the upper rank is the maximum.
    void unboundedSides() {
        const QuantileRanks p999 = quantileIntervalRanks(100, 0.999);
        QVERIFY(p999.lo.has_value());
        QVERIFY(!p999.hi.has_value());
        QCOMPARE(quantileIntervalMinCount(0.999, true), std::optional<uint64_t>(3688));
        QVERIFY(!quantileIntervalRanks(3687, 0.999).hi);
        QCOMPARE(quantileIntervalRanks(3688, 0.999).hi, std::optional<uint64_t>(3687));
        // The mirror image for a low quantile, and the median: 0.5⁶ = 0.016 ≤ 0.025 < 0.5⁵.
        QCOMPARE(quantileIntervalMinCount(0.001, false), std::optional<uint64_t>(3688));
        QVERIFY(!quantileIntervalRanks(3687, 0.001).lo);
        QCOMPARE(quantileIntervalRanks(3688, 0.001).lo, std::optional<uint64_t>(0));
        QCOMPARE(quantileIntervalMinCount(0.5, true), std::optional<uint64_t>(6));
        QCOMPARE(quantileIntervalMinCount(0.5, false), std::optional<uint64_t>(6));
        QCOMPARE(quantileIntervalRanks(5, 0.5).lo, std::optional<uint64_t>());
        QCOMPARE(quantileIntervalRanks(6, 0.5).lo, std::optional<uint64_t>(0));
        QCOMPARE(quantileIntervalRanks(6, 0.5).hi, std::optional<uint64_t>(5));
        // p99 needs 368 values (ln 0.025 / ln 0.99 = 367.04).
        QCOMPARE(quantileIntervalMinCount(0.99, true), std::optional<uint64_t>(368));
        // max (q = 1): the sample maximum bounds from below, nothing from above; min mirrors it.
        QCOMPARE(quantileIntervalRanks(50, 1.0).lo, std::optional<uint64_t>(49));
        QVERIFY(!quantileIntervalRanks(50, 1.0).hi);
        QVERIFY(!quantileIntervalMinCount(1.0, true));
        QCOMPARE(quantileIntervalRanks(50, 0.0).hi, std::optional<uint64_t>(0));
        QVERIFY(!quantileIntervalRanks(50, 0.0).lo);
        QVERIFY(!quantileIntervalMinCount(0.0, false));
        // One value, and none.
        QVERIFY(!quantileIntervalRanks(1, 0.5).lo && !quantileIntervalRanks(1, 0.5).hi);
        QVERIFY(!quantileIntervalRanks(0, 0.5).lo && !quantileIntervalRanks(0, 0.5).hi);
    }

    // n = 10¹¹: the sums still work (no normal approximation), fast. The ranks agree with
    // the normal approximation with continuity correction to within a few ranks (its error
    // is O(1) ranks here), and the CDF at them brackets the tails.
    void hugeN() {
        const uint64_t n = 100'000'000'000ULL;
        const double z = 1.959963984540054;
        for (double q : {0.5, 0.999, 0.9999999}) {
            const auto t0 = std::chrono::steady_clock::now();
            const QuantileRanks r = quantileIntervalRanks(n, q);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
            QVERIFY(r.lo && r.hi);
            const double mean = double(n) * q, sd = std::sqrt(double(n) * q * (1 - q));
            const double lo = std::floor(mean - z * sd - 0.5), hi = std::ceil(mean + z * sd - 0.5);
            QVERIFY2(std::fabs(double(*r.lo) - lo) <= 3 && std::fabs(double(*r.hi) - hi) <= 3,
                     qPrintable(QStringLiteral("q=%1: (%2, %3) vs normal (%4, %5)")
                                    .arg(q).arg(*r.lo).arg(*r.hi).arg(lo, 0, 'f', 0).arg(hi, 0, 'f', 0)));
            QVERIFY(binomialCdf(n, q, *r.lo) <= 0.025 && binomialCdf(n, q, *r.lo + 1) > 0.025);
            QVERIFY(binomialCdf(n, q, *r.hi) >= 0.975 && binomialCdf(n, q, *r.hi - 1) < 0.975);
            // Each tail misses by less than one step of the pmf near it (≈ 0.058/sd).
            QVERIFY2(r.coverage >= 0.95 && r.coverage < 0.95 + 0.12 / sd, qPrintable(QString::number(r.coverage, 'g', 10)));
        }
    }

    // The values: for a shuffled 0..n−1 the order statistic of rank k is k itself.
    void intervalValues() {
        std::mt19937_64 rng(3);
        for (size_t n : {20, 100, 1000, 70000}) {
            std::vector<double> v(n);
            for (size_t i = 0; i < n; ++i)
                v[i] = double(i);
            std::shuffle(v.begin(), v.end(), rng);
            for (double q : {0.5, 0.9, 0.999, 1.0, 0.0}) {
                const QuantileRanks r = quantileIntervalRanks(n, q);
                const auto [lo, hi] = quantileInterval(v, q);
                QCOMPARE(lo, r.lo ? double(*r.lo) : -std::numeric_limits<double>::infinity());
                QCOMPARE(hi, r.hi ? double(*r.hi) : std::numeric_limits<double>::infinity());
            }
        }
        const auto none = quantileInterval({}, 0.5);
        QVERIFY(std::isinf(none.first) && std::isinf(none.second));
        // n = 20, median, on values with ties: x(5) and x(14) of the sorted values.
        std::vector<double> t = {5, 1, 1, 2, 9, 3, 3, 3, 7, 8, 0.5, 4, 4, 6, 2, 2, 10, 11, 12, 0};
        std::vector<double> sorted = t;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(quantileInterval(t, 0.5), std::make_pair(sorted[5], sorted[14]));
    }

    void orderStatisticsMany() {
        std::mt19937_64 rng(9);
        std::normal_distribution<double> g;
        std::vector<double> v(100000);
        for (double& x : v)
            x = g(rng);
        v[17] = NAN;   // skipped
        std::vector<double> sorted;
        for (double x : v)
            if (!std::isnan(x))
                sorted.push_back(x);
        std::sort(sorted.begin(), sorted.end());
        const std::vector<uint64_t> ranks = {99998, 0, 5, 49999, 5};
        const auto got = orderStatistics(v, ranks);
        QCOMPARE(got.size(), ranks.size());
        for (size_t i = 0; i < ranks.size(); ++i)
            QCOMPARE(got[i], sorted[ranks[i]]);
        QVERIFY(orderStatistics(v, {}).empty());
    }

    // Bucketed counts equal plain counts for every kind of level: values present (ties),
    // between values, ±0 against ±0 values, denormals, negatives, beyond the range, ±∞, NaN.
    void bucketedCounts() {
        std::mt19937_64 rng(21);
        std::exponential_distribution<double> ex(50);
        std::vector<double> v;
        for (int i = 0; i < 50000; ++i) {
            const double x = ex(rng);
            v.push_back(i % 7 == 0 ? -x : x);
        }
        for (int i = 0; i < 300; ++i) {
            v.push_back(0.0);
            v.push_back(-0.0);
            v.push_back(0.03125);   // many ties
            v.push_back(4.9e-324 * (i + 1));
        }
        std::shuffle(v.begin(), v.end(), rng);
        const std::vector<double> original = v;
        std::vector<double> levels = {0.0, -0.0, 0.03125, 4.9e-324, -4.9e-324, 1e-300, 1.0, 1e9, -1e9,
                                      std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
        for (int i = 0; i < 200; ++i)
            levels.push_back(original[size_t(i) * 97]);
        std::uniform_real_distribution<double> u(-0.1, 0.2);
        for (int i = 0; i < 200; ++i)
            levels.push_back(u(rng));
        BucketedValues b;
        QVERIFY(!b.built());
        b.build(v);
        QVERIFY(b.built());
        std::vector<double> sortedBefore = original, sortedAfter = v;
        std::sort(sortedBefore.begin(), sortedBefore.end());
        std::sort(sortedAfter.begin(), sortedAfter.end());
        QVERIFY(sortedBefore == sortedAfter);   // the same values, reordered
        for (double level : levels) {
            const auto above = uint64_t(std::count_if(original.begin(), original.end(), [&](double x) { return x > level; }));
            const auto below = uint64_t(std::count_if(original.begin(), original.end(), [&](double x) { return x < level; }));
            QVERIFY2(b.countAbove(v, level) == above, qPrintable(QString::number(level, 'g', 17)));
            QVERIFY2(b.countBelow(v, level) == below, qPrintable(QString::number(level, 'g', 17)));
        }
        QCOMPARE(b.countAbove(v, NAN), uint64_t(0));
        QCOMPARE(b.countBelow(v, NAN), uint64_t(0));
        // Counting changes nothing: a second round gives the same counts.
        for (double level : levels)
            QCOMPARE(b.countAbove(v, level),
                     uint64_t(std::count_if(original.begin(), original.end(), [&](double x) { return x > level; })));
        BucketedValues empty;
        std::vector<double> none;
        empty.build(none);
        QCOMPARE(empty.countAbove(none, 0.5), uint64_t(0));
        QCOMPARE(empty.countBelow(none, 0.5), uint64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestQuantileCi)
#include "test_quantile_ci.moc"
