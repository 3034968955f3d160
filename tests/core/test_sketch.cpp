// Summaries' parts (issue 19, SPEC 10): the exact sum, the quantile sketch (its buckets,
// ranks and the store's encoding) and a cell's quantiles within SPEC 10's bound. The cells
// built from a run, and merging: test_summary.cpp; the files: test_summary_io.cpp.
#include <QtTest/QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "core/summary/summary.h"
#include "core/summary/summary_views.h"
#include "tests/support/summary_runs.h"

using namespace kcx;
using test::type7;

class TestSketch : public QObject {
    Q_OBJECT
private slots:
    void exactSumIsExactInAnyOrder() {
        // Values k·2^-30 with integer k: their exact sum is (Σk)·2^-30, a double.
        std::mt19937_64 rng(1);
        std::vector<double> v;
        int64_t k = 0;
        for (int i = 0; i < 100000; ++i) {
            const int64_t x = int64_t(rng() % 2000001) - 1000000;
            k += x;
            v.push_back(std::ldexp(double(x), -30));
        }
        ExactSum s;
        for (double x : v)
            s.add(x);
        QCOMPARE(s.value(), std::ldexp(double(k), -30));
        // Catastrophic cancellation: plain double addition loses the 1 entirely.
        ExactSum c;
        for (double x : {1e300, 1.0, -1e300, 0x1p-1074, -0x1p-1074, 3e-310})
            c.add(x);
        QCOMPARE(c.value(), 1.0 + 3e-310);
        ExactSum neg;
        for (double x : {-2.5, 1e-20, -1e-20, 0.5})
            neg.add(x);
        QCOMPARE(neg.value(), -2.0);
        // Any order and grouping: the same canonical form.
        std::vector<double> w;
        std::lognormal_distribution<double> wide(0, 20);
        for (int i = 0; i < 20000; ++i)
            w.push_back(wide(rng) * ((rng() & 1) ? 1 : -1));
        ExactSum whole;
        for (double x : w)
            whole.add(x);
        for (int round = 0; round < 5; ++round) {
            std::shuffle(w.begin(), w.end(), rng);
            std::vector<ExactSum> parts(1 + rng() % 7);
            for (double x : w)
                parts[rng() % parts.size()].add(x);
            ExactSum m;
            std::shuffle(parts.begin(), parts.end(), rng);
            for (const auto& p : parts)
                m.merge(p);
            QVERIFY(m == whole);
            const auto a = m.canonical(), b = whole.canonical();
            QCOMPARE(a.limbs, b.limbs);
            QVERIFY(ExactSum::fromCanonical(a) == whole);
        }
        QVERIFY(ExactSum().isZero());
        QVERIFY(ExactSum().value() == 0);
        // A sum keeps only the limbs it touched: carries above them (2^20 · DBL_MAX needs a limb
        // no double reaches), windows far apart merged, and a negative top.
        ExactSum big, bigNeg;
        const double dmax = std::numeric_limits<double>::max();
        for (int i = 0; i < (1 << 20); ++i) {
            big.add(dmax);
            bigNeg.add(-dmax);
        }
        QCOMPARE(big.canonical().low + int(big.canonical().limbs.size()) - 1, 66);
        QCOMPARE(big.value(), std::numeric_limits<double>::infinity());
        for (int i = 0; i < (1 << 20) - 1; ++i) {
            big.add(-dmax);
            bigNeg.add(dmax);
        }
        QCOMPARE(big.value(), dmax);
        QCOMPARE(bigNeg.value(), -dmax);
        ExactSum far1, far2, farAll;
        for (double x : {1e300, -3e-300, 0x1p-1074}) {
            far1.add(x);
            farAll.add(x);
        }
        for (double x : {-1e300, 7e-300, 1.0}) {
            far2.add(x);
            farAll.add(x);
        }
        ExactSum farMerged = far2;
        farMerged.merge(far1);
        QVERIFY(farMerged == farAll);
        QCOMPARE(farMerged.value(), 1.0);   // 1 + 4e-300 + 2^-1074 rounds to 1
        QCOMPARE(farMerged.canonical().low, 0);
        // Non-canonical forms are refused.
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ExactSum::fromCanonical({1, 3, {0, 5}}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ExactSum::fromCanonical({2, 3, {5}}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ExactSum::fromCanonical({1, 66, {5, 5}}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ExactSum::fromCanonical({0, 0, {5}}));
    }

    // The bucket from the table shortcut is the bucket from the log, on every kind of value
    // (edges included: values next to γ^i, where the shortcut must give way to the log).
    void bucketShortcutIsTheLog() {
        std::mt19937_64 rng(9);
        std::uniform_real_distribution<double> expo(-300, 300);
        int edges = 0;
        for (int i = 0; i < 400000; ++i) {
            double x = std::pow(10.0, expo(rng));
            if (i % 4 == 0) {   // right at a bucket edge, and one ulp either side
                const double edge = Sketch::bucketBounds(int32_t(std::lround(std::log(x) / std::log(1.0202020202))) ).second;
                x = (i % 3 == 0) ? edge : std::nextafter(edge, (i % 3 == 1) ? 0.0 : INFINITY);
                ++edges;
            }
            QCOMPARE(Sketch::bucketOf(x), Sketch::bucketOfByLog(x));
        }
        for (double x : {5e-324, 1e-310, 2.2250738585072014e-308, 1.0, 2.0, 1.7976931348623157e308})
            QCOMPARE(Sketch::bucketOf(x), Sketch::bucketOfByLog(x));
        QVERIFY(edges > 80000);
    }

    // A store's encoding (docs/summaries.md, "The binary container") by hand: entries, the
    // first bucket zigzagged, counts, "0 k" for k empty buckets; zero counts at either end of
    // a dense store are not written. Packed and merged into a dense sketch, the same counts.
    void storeEncodingByHand() {
        Sketch::Store st;
        st.offset = 10;
        st.counts = {0, 0, 3, 1, 0, 0, 0, 200, 0};   // buckets 12, 13, 17 (14 to 16 empty)
        std::string out;
        Sketch::encodeStore(out, st);
        QCOMPARE(out, std::string("\x04\x18\x03\x01\x00\x03\xc8\x01", 8));
        Sketch dense;
        std::vector<std::pair<int32_t, uint64_t>> want;
        for (int32_t b = -40; b < 40; ++b) {
            const uint64_t c = b == 7 ? 300 : (b % 13 == 0 ? 0 : uint64_t(1 + (b + 40) % 127));
            if (c) {
                dense.addBucket(false, b, c);
                want.emplace_back(b, c);
            }
        }
        Sketch packed = dense;
        packed.pack();
        std::vector<std::pair<int32_t, uint64_t>> got;
        const Sketch::Packed* p = packed.packed();
        QVERIFY(p);
        Sketch::walkPacked(*p->bytes, p->pos, [&](int32_t b, uint64_t c) { got.emplace_back(b, c); });
        QVERIFY(got == want);
        QCOMPARE(p->posLo, -40);   // -39 and 39 are empty (b % 13 == 0)
        QCOMPARE(p->posHi, 38);
        Sketch twice = dense;
        twice.merge(packed);
        const Sketch::Store sum = twice.store(false);
        for (const auto& [b, c] : want)
            QCOMPARE(sum.counts[size_t(b - sum.offset)], 2 * c);
    }

    // A packed store read and merged (Sketch::merge into a dense one, twice) on entries of
    // every length. The store by hand: offset -3; counts 5, 200 (two bytes), 20000 (three), 5
    // written in two bytes (0x85 0x00); runs of 2 and of 150 empty buckets (its k in two
    // bytes); a last count 1.
    void packedCountsMergeAsTheyRead() {
        // 7 entries: 5 | 200 | run of 2 | 20000 | 5 | run of 150 | 1.
        const std::string store("\x07\x05\x05\xc8\x01\x00\x02\xa0\x9c\x01\x85\x00\x00\x96\x01\x01", 16);
        auto packed = std::make_shared<Sketch::Packed>();
        packed->bytes = std::make_shared<const std::string>(store + std::string("\x00", 1));
        packed->pos = 0;
        packed->neg = uint32_t(store.size());
        std::vector<std::pair<int32_t, uint64_t>> walked;
        Sketch::walkPacked(*packed->bytes, 0, [&](int32_t b, uint64_t c) { walked.emplace_back(b, c); });
        const std::vector<std::pair<int32_t, uint64_t>> want = {{-3, 5}, {-2, 200}, {1, 20000}, {2, 5}, {153, 1}};
        QVERIFY(walked == want);
        packed->posTotal = 20211;
        packed->posLo = -3;
        packed->posHi = 153;
        const Sketch k = Sketch::fromPacked(0, packed);
        Sketch sum;
        sum.merge(k);
        sum.merge(k);
        const Sketch::Store st = sum.store(false);
        QCOMPARE(st.offset, -3);
        QCOMPARE(st.counts.size(), size_t(157));
        for (const auto& [b, c] : want)
            QCOMPARE(st.counts[size_t(b + 3)], 2 * c);
        QCOMPARE(sum.count(), uint64_t(2 * 20211));
    }

    // Every rank of the sketch lies within 1 % of the value of that rank.
    void sketchRanksWithinOnePercent() {
        std::mt19937_64 rng(2);
        std::lognormal_distribution<double> wide(-3, 4);
        std::vector<double> v;
        Sketch sk;
        for (int i = 0; i < 50000; ++i) {
            const uint64_t u = rng() % 50;
            const double x = u == 0 ? 0.0 : wide(rng) * (u < 10 ? -1 : 1);
            v.push_back(x);
            sk.add(x);
        }
        v.push_back(5e-324);   // subnormals too
        sk.add(5e-324);
        std::sort(v.begin(), v.end());
        QCOMPARE(sk.count(), uint64_t(v.size()));
        for (size_t r = 0; r < v.size(); ++r) {
            const double got = sk.valueAtRank(r);
            QVERIFY2(std::fabs(got - v[r]) <= 0.01 * std::fabs(v[r]) * (1 + 1e-12),
                     qPrintable(QString("rank %1: %2 vs %3").arg(r).arg(got, 0, 'g', 17).arg(v[r], 0, 'g', 17)));
        }
        // Counts above a level: the sure count and the unsure ones bracket the truth.
        for (double level : {-1.0, -1e-3, 0.0, 1e-6, 0.02, 0.05, 1.0, 30.0}) {
            const auto [sure, maybe] = sk.countAbove(level);
            const uint64_t truth = uint64_t(v.end() - std::upper_bound(v.begin(), v.end(), level));
            QVERIFY2(sure <= truth && truth <= sure + maybe, qPrintable(QString::number(level)));
            QVERIFY(maybe <= uint64_t(v.size()) / 50);   // only one bucket's worth is unsure
            const auto [sb, mb] = sk.countBelow(level);
            const uint64_t below = uint64_t(std::lower_bound(v.begin(), v.end(), level) - v.begin());
            QVERIFY(sb <= below && below <= sb + mb);
        }
    }

    // SPEC 10: a quantile lies within 1 % (relative) of the span of the two order
    // statistics that the exact type-7 quantile interpolates between.
    void quantilesWithinTheSpecsBound() {
        std::mt19937_64 rng(3);
        for (int trial = 0; trial < 20; ++trial) {
            std::lognormal_distribution<double> d(-5 + trial * 0.3, 2);
            const size_t n = 1 + rng() % 5000;
            std::vector<double> v;
            MetricCell c;
            for (size_t i = 0; i < n; ++i) {
                const double x = d(rng) * ((trial % 3 == 0 && (rng() & 1)) ? -1 : 1);
                v.push_back(x);
                c.add(x);
            }
            std::sort(v.begin(), v.end());
            for (double q : {0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
                size_t lo = 0;
                type7(v, q, &lo);
                const double a = v[lo], b = v[std::min(lo + 1, n - 1)];
                const double got = *sketchQuantile(c, q);
                QVERIFY2(got >= a - 0.01 * std::fabs(a) && got <= b + 0.01 * std::fabs(b),
                         qPrintable(QString("n %1 q %2: %3 not in [%4, %5]").arg(n).arg(q).arg(got).arg(a).arg(b)));
            }
            QCOMPARE(*sketchQuantile(c, 0), v.front());
            QCOMPARE(*sketchQuantile(c, 1), v.back());
        }
        QVERIFY(!sketchQuantile(MetricCell{}, 0.5));
    }
};

QTEST_GUILESS_MAIN(TestSketch)
#include "test_sketch.moc"
