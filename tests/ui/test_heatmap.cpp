// The divergence heatmap: grids against a brute-force reference on hand-built runs, the
// row order, tooltips and click targets (core/heatmap/heatmap.h), and the widget rendered
// offscreen: pixel colours, threshold marks, clicks, zoom and recolouring (ui/heatmap/heatmap_view.h).
#include <QSignalSpy>
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "core/heatmap/heatmap.h"
#include "core/metrics/derived_slices.h"
#include "ui/heatmap/heatmap_render.h"
#include "ui/heatmap/heatmap_view.h"

using namespace kcx;

namespace {

struct Built {
    std::shared_ptr<Run> run;
    std::shared_ptr<MetricValues> values;
};

// Sequences with the given per-token values; slice key "task" with the given codes.
Built makeRun(const std::vector<std::vector<double>>& seqs, const std::vector<int32_t>& task,
              const std::vector<std::string>& taskNames) {
    Built b;
    b.run = std::make_shared<Run>();
    b.values = std::make_shared<MetricValues>();
    b.values->name = std::string(1, 'm');
    std::vector<int64_t> off{0};
    for (size_t s = 0; s < seqs.size(); ++s) {
        b.run->ids.push_back(std::string(1, 's').append(std::to_string(s)));   // (GCC 12 PR 105329)
        for (double v : seqs[s])
            b.values->values.push_back(v);
        off.push_back(int64_t(b.values->values.size()));
    }
    b.run->offsets = Array<int64_t>(off);
    b.run->tokens = Array<int32_t>(std::vector<int32_t>(b.values->values.size(), 1));
    b.run->slices.keys = {"task"};
    b.run->slices.values = {taskNames};
    b.run->slices.codes = task;
    b.values->count = b.values->values.size();
    return b;
}

std::shared_ptr<const HeatmapIndex> indexOf(const Built& b, HeatmapRows mode, std::string value = {}) {
    return HeatmapIndex::build(b.run, b.values, HeatmapRowSpec{mode, "task", value});
}

HeatmapRequest req(size_t r0, size_t r1, size_t rb, size_t p0, size_t p1, size_t cols,
                   HeatmapAggregate a = HeatmapAggregate::Mean, double thr = 0) {
    HeatmapRequest q{r0, r1, rb, p0, p1, cols, a, thr};
    q.mark = HeatmapMark::Above;   // marks against the same level, as a clause on the cells' statistic
    q.markLevel = thr;
    return q;
}

bool same(double a, double b) {
    if (a != a || b != b)
        return a != a && b != b;
    return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b));
}

// The grid worked out token by token: item x of [begin, begin+W) in B bins is in bin
// floor((x - begin) * B / W).
// in(r, s, t): whether position t of sequence s counts in index row r (default: every
// position of the row's sequences).
using Membership = std::function<bool(size_t r, size_t s, size_t t)>;

void checkAgainstBruteForce(const HeatmapIndex& ix, const Run& run, const std::vector<double>& v,
                            const HeatmapRequest& q, const Membership& in = {}) {
    const HeatmapGrid g = computeGrid(ix, q);
    const size_t r1 = std::min(q.row1, ix.rowCount()), r0 = std::min(q.row0, r1);
    const size_t p1 = std::min(q.pos1, ix.maxLength()), p0 = std::min(q.pos0, p1);
    const size_t R = std::min(r1 - r0, q.rowBins), C = std::min(p1 - p0, q.columns);
    QCOMPARE(g.rows, R);
    QCOMPARE(g.cols, C);
    std::vector<double> sum(R * C, 0), mx(R * C, -INFINITY);
    std::vector<uint32_t> n(R * C, 0), above(R * C, 0);
    std::vector<std::vector<double>> all(R * C);
    for (size_t r = r0; r < r1; ++r) {
        const size_t gr = (r - r0) * R / (r1 - r0);
        for (uint32_t s : ix.row(r).sequences)
            for (size_t t = p0; t < std::min(p1, run.seqLength(s)); ++t) {
                const double x = v[run.seqBegin(s) + t];
                if (std::isnan(x) || (in && !in(r, s, t)) || (q.scope && !(*q.scope)[run.seqBegin(s) + t]))
                    continue;
                const size_t k = gr * C + (t - p0) * C / (p1 - p0);
                sum[k] += x;
                ++n[k];
                mx[k] = std::max(mx[k], x);
                above[k] += x > q.threshold;
                all[k].push_back(x);
            }
    }
    for (size_t k = 0; k < R * C; ++k) {
        QCOMPARE(g.n[k], n[k]);
        double want = NAN;
        if (n[k] && q.aggregate == HeatmapAggregate::Quantile) {
            // Type 7 from a full sort: x[floor(h)] + frac(h) (x[floor(h)+1] - x[floor(h)]).
            std::sort(all[k].begin(), all[k].end());
            const double h = double(n[k] - 1) * q.quantile;
            const size_t lo = size_t(std::floor(h)), hi = std::min<size_t>(lo + 1, n[k] - 1);
            want = all[k][lo] + (h - double(lo)) * (all[k][hi] - all[k][lo]);
        } else if (n[k]) {
            want = q.aggregate == HeatmapAggregate::Mean  ? sum[k] / n[k]
                   : q.aggregate == HeatmapAggregate::Max ? mx[k]
                                                          : double(above[k]) / n[k];
        }
        if (!same(g.value[k], want))
            QFAIL(qPrintable(QString("cell %1: %2 != %3").arg(k).arg(g.value[k]).arg(want)));
        QVERIFY(same(g.max[k], n[k] ? mx[k] : NAN));
        const bool wantMark = q.mark == HeatmapMark::Above   ? want > q.markLevel
                              : q.mark == HeatmapMark::Below ? want < q.markLevel
                                                             : false;
        QCOMPARE(g.marked(k / C, k % C), wantMark);
        QCOMPARE(g.few(k / C, k % C), n[k] > 0 && n[k] < q.fewBelow);
    }
}

// A random run: 60 sequences of 0..80 tokens, 3 task values and some unlabeled, 5% NaN.
Built randomRun(uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<double>> seqs(60);
    std::vector<int32_t> task;
    for (auto& s : seqs) {
        s.resize(rng() % 81);
        for (auto& x : s)
            x = rng() % 20 == 0 ? (rng() % 2 ? missingDouble() : NAN) : std::normal_distribution<double>(0, 1)(rng);
        task.push_back(int32_t(rng() % 4) - 1);
    }
    return makeRun(seqs, task, {"a", "b", "c"});
}

// derived.pos_bucket codes worked out here from the edges 0, 64, 256, 1024, 4096 (not by
// core/metrics/derived_slices), and a lookup that hands them to the heatmap.
DerivedLookup positionLookup(const Run& run) {
    auto codes = std::make_shared<DerivedCodes>();
    codes->key = "derived.pos_bucket";
    codes->level = DerivedLevel::Token;
    codes->values = {"pos_0_64", "pos_64_256", "pos_256_1024", "pos_1024_4096", "pos_4096_inf"};
    for (size_t s = 0; s < run.sequenceCount(); ++s)
        for (size_t t = 0; t < run.seqLength(s); ++t)
            codes->token.push_back(int8_t(t < 64 ? 0 : t < 256 ? 1 : t < 1024 ? 2 : t < 4096 ? 3 : 4));
    return [codes](const std::string& key) -> std::shared_ptr<const DerivedCodes> {
        if (key != codes->key)
            throw std::invalid_argument("no such derived key in this test: " + key);
        return codes;
    };
}

// [from, to) of a pos_bucket value name, from its name.
std::pair<size_t, size_t> bucketRange(const std::string& name) {
    if (name == "pos_0_64") return {0, 64};
    if (name == "pos_64_256") return {64, 256};
    if (name == "pos_256_1024") return {256, 1024};
    return {SIZE_MAX, SIZE_MAX};
}

}  // namespace

class TestHeatmap : public QObject {
    Q_OBJECT
private slots:
    void binsByHand() {
        const Bins b(3, 8, 2);   // 5 positions into 2 bins: [3, 6), [6, 8)
        QCOMPARE(b.count, size_t(2));
        QCOMPARE(b.lo(0), size_t(3));
        QCOMPARE(b.hi(0), size_t(6));
        QCOMPARE(b.hi(1), size_t(8));
        QCOMPARE(b.binOf(5), size_t(0));
        QCOMPARE(b.binOf(6), size_t(1));
        QCOMPARE(Bins(0, 3, 10).count, size_t(3));   // never more bins than items
    }

    // Two sequences in two slices, values worked out by hand.
    void gridByHand() {
        const auto b = makeRun({{1, 2, 3, 4, 5}, {10, NAN, 30}}, {0, 1}, {"x", "y"});
        auto ix = indexOf(b, HeatmapRows::AllSequences);
        QCOMPARE(ix->rowCount(), size_t(2));
        QCOMPARE(ix->row(0).label, std::string("s1"));   // mean 20 before mean 3
        QCOMPARE(ix->row(0).score, 20.0);
        QCOMPARE(ix->maxLength(), size_t(5));
        // Columns [0, 3) and [3, 5).
        auto g = computeGrid(*ix, req(0, 2, 10, 0, 5, 2, HeatmapAggregate::Mean, 2.5));
        QCOMPARE(g.cols, size_t(2));
        QCOMPARE(g.value[g.at(0, 0)], 20.0);   // 10 and 30 (NaN skipped)
        QCOMPARE(g.n[g.at(0, 0)], 2u);
        QVERIFY(std::isnan(g.value[g.at(0, 1)]));   // s1 has no position 3 or 4: empty
        QCOMPARE(g.n[g.at(0, 1)], 0u);
        QCOMPARE(g.value[g.at(1, 0)], 2.0);
        QCOMPARE(g.value[g.at(1, 1)], 4.5);
        QVERIFY(!g.marked(1, 0) && g.marked(1, 1) && g.marked(0, 0) && !g.marked(0, 1));   // means 2, 4.5, 20 vs 2.5
        QCOMPARE(g.lo, 2.0);
        QCOMPARE(g.hi, 20.0);
        g = computeGrid(*ix, req(0, 2, 10, 0, 5, 2, HeatmapAggregate::ShareAbove, 2.5));
        QCOMPARE(g.value[g.at(1, 0)], 1.0 / 3);   // only 3 of 1, 2, 3
        QCOMPARE(g.value[g.at(1, 1)], 1.0);
        g = computeGrid(*ix, req(0, 2, 10, 1, 4, 100, HeatmapAggregate::Max));
        QCOMPARE(g.cols, size_t(3));   // zoomed in: one column per position
        QCOMPARE(g.value[g.at(1, 2)], 4.0);
        QVERIFY(std::isnan(g.value[g.at(0, 0)]));   // position 1 of s1 is NaN

        // Slice rows pool their sequences; one row per value.
        ix = indexOf(b, HeatmapRows::SliceValues);
        QCOMPARE(ix->row(0).label, std::string("x"));
        g = computeGrid(*ix, req(0, 2, 1, 0, 5, 1, HeatmapAggregate::Mean));
        QCOMPARE(g.rows, size_t(1));
        QCOMPARE(g.value[0], (15.0 + 40.0) / 7);   // all 7 values pooled
        QCOMPARE(g.n[0], 7u);
    }

    void gridMatchesBruteForce_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("aggregate");
        for (int m = 0; m < 3; ++m)
            for (int a = 0; a < 4; ++a)
                QTest::addRow("mode%d-agg%d", m, a) << m << a;
    }
    void gridMatchesBruteForce() {
        QFETCH(int, mode);
        QFETCH(int, aggregate);
        std::mt19937_64 rng(uint64_t(mode * 3 + aggregate));
        for (int trial = 0; trial < 12; ++trial) {
            const auto b = randomRun(rng());
            const auto ix = indexOf(b, HeatmapRows(mode), "b");
            const size_t rows = ix->rowCount(), len = ix->maxLength();
            const size_t r0 = rng() % (rows + 1), p0 = rng() % (len + 1);
            auto q = req(r0, r0 + rng() % (rows + 2), 1 + rng() % 12, p0, p0 + rng() % (len + 3),
                         1 + rng() % 40, HeatmapAggregate(aggregate), std::normal_distribution<double>(0.5, 1)(rng));
            q.quantile = std::uniform_real_distribution<double>(0, 1)(rng);
            q.fewBelow = uint32_t(rng() % 6);
            if (trial % 3 == 1)
                q.mark = HeatmapMark::Below;
            if (trial % 2 == 1) {   // a clause's scope: a random third of the tokens
                auto scope = std::make_shared<std::vector<uint8_t>>(b.run->tokenCount());
                for (auto& x : *scope)
                    x = rng() % 3 == 0;
                q.scope = scope;
            }
            checkAgainstBruteForce(*ix, *b.run, b.values->values, q);
            if (QTest::currentTestFailed())
                return;
            for (int threads : {1, 3}) {   // the thread count never changes the numbers
                const auto g1 = computeGrid(*ix, q, {}, threads), g0 = computeGrid(*ix, q);
                QCOMPARE(g1.n, g0.n);
                for (size_t k = 0; k < g0.value.size(); ++k)
                    QVERIFY(same(g1.value[k], g0.value[k]));
            }
        }
    }

    // Rows by a per-token derived key, worked out by hand: three sequences of 70, 66 and 10
    // tokens with value (s + 1) * 1000 + t at position t.
    void derivedTokenRowsByHand() {
        std::vector<std::vector<double>> seqs(3);
        const size_t lens[] = {70, 66, 10};
        for (size_t s = 0; s < 3; ++s)
            for (size_t t = 0; t < lens[s]; ++t)
                seqs[s].push_back(double(s + 1) * 1000 + double(t));
        const auto b = makeRun(seqs, {0, 1, 0}, {"a", "b"});
        const DerivedLookup lookup = positionLookup(*b.run);

        // Slice rows: positions 0-63 of every sequence, and 64-69 / 64-65 of the first two;
        // buckets without tokens and "(unlabeled)" have no row.
        auto ix = HeatmapIndex::build(b.run, b.values, {HeatmapRows::SliceValues, "derived.pos_bucket", ""}, {}, 0, lookup);
        QCOMPARE(ix->rowCount(), size_t(2));
        QCOMPARE(ix->row(0).label, std::string("pos_0_64"));
        QCOMPARE(ix->row(1).label, std::string("pos_64_256"));
        QCOMPARE(ix->row(0).n, uint64_t(64 + 64 + 10));
        QCOMPARE(ix->row(0).length, size_t(64));
        QCOMPARE(ix->row(1).n, uint64_t(8));
        QCOMPARE(ix->row(1).length, size_t(70));
        QCOMPARE(ix->row(1).sequences, (std::vector<uint32_t>{0, 1}));
        // (1064 + ... + 1069) + (2064 + 2065) = 6399 + 4129
        QCOMPARE(ix->row(1).score, (6399.0 + 4129.0) / 8);
        QCOMPARE(ix->sliceText(1), std::string("derived.pos_bucket=pos_64_256"));
        auto g = computeGrid(*ix, req(0, 2, 2, 0, 70, 70));
        QCOMPARE(g.n[g.at(0, 64)], 0u);                // pos_0_64 ends at 63
        QCOMPARE(g.n[g.at(1, 3)], 0u);                 // pos_64_256 starts at 64
        QCOMPARE(g.value[g.at(1, 65)], (1065.0 + 2065.0) / 2);
        QCOMPARE(g.value[g.at(1, 66)], 1066.0);        // the second sequence has ended
        QCOMPARE(g.value[g.at(0, 5)], (1005.0 + 2005.0 + 3005.0) / 3);
        g = computeGrid(*ix, req(0, 2, 2, 60, 70, 1, HeatmapAggregate::ShareAbove, 2000));
        // Positions 60-69: row 0 has 60-63 of the two long sequences (the third has 10
        // tokens), 4 of 8 above 2000; row 1 has 64-69 and 64-65, 2 of 8 above 2000.
        QCOMPARE(g.value[g.at(0, 0)], 4.0 / 8);
        QCOMPARE(g.value[g.at(1, 0)], 2.0 / 8);
        const HeatmapCell cell = cellDetails(*ix, g, 1, 0);
        QCOMPARE(cell.above, 2u);
        // A click opens the row's sequence with the largest mean there, at its peak.
        g = computeGrid(*ix, req(0, 2, 2, 60, 70, 1));
        auto target = cellTarget(*ix, g, 1, 0);
        QVERIFY(target);
        QCOMPARE(target->sequence, size_t(1));
        QCOMPARE(target->position, size_t(65));   // not 63: position 63 is in the other row

        // The sequences of one bucket value: only its tokens count.
        ix = HeatmapIndex::build(b.run, b.values, {HeatmapRows::SequencesOfSlice, "derived.pos_bucket", "pos_64_256"}, {}, 0,
                                 lookup);
        QCOMPARE(ix->rowCount(), size_t(2));
        QCOMPARE(ix->row(0).label, std::string("s1"));   // mean 2064.5 before 1066.5
        QCOMPARE(ix->row(0).n, uint64_t(2));
        QCOMPARE(ix->row(1).score, 6399.0 / 6);
        g = computeGrid(*ix, req(0, 2, 2, 0, 70, 1));
        QCOMPARE(g.value[g.at(1, 0)], 6399.0 / 6);

        // A finding: task=a and positions 64-255 (only the first sequence), and the rest.
        HeatmapRowSpec spec;
        spec.mode = HeatmapRows::Conditions;
        spec.conditions = {{"task", "a"}, {"derived.pos_bucket", "pos_64_256"}};
        ix = HeatmapIndex::build(b.run, b.values, spec, {}, 0, lookup);
        QCOMPARE(ix->rowCount(), size_t(2));
        QCOMPARE(ix->row(0).label, std::string("task=a \u2227 derived.pos_bucket=pos_64_256"));
        QCOMPARE(ix->row(0).n, uint64_t(6));
        QCOMPARE(ix->row(0).score, 6399.0 / 6);
        QCOMPARE(ix->row(1).label, std::string("(rest of the run)"));
        QCOMPARE(ix->row(1).n, uint64_t(70 + 66 + 10 - 6));
        g = computeGrid(*ix, req(0, 2, 2, 64, 70, 1));
        QCOMPARE(g.value[g.at(0, 0)], 6399.0 / 6);
        QCOMPARE(g.value[g.at(1, 0)], 4129.0 / 2);
        // Only labeled conditions: whole sequences.
        spec.conditions = {{"task", "b"}};
        ix = HeatmapIndex::build(b.run, b.values, spec);
        QCOMPARE(ix->row(0).sequences, (std::vector<uint32_t>{1}));
        QCOMPARE(ix->row(1).sequences, (std::vector<uint32_t>{0, 2}));
        QVERIFY(!ix->tokenRows());

        // Errors: a derived key without a lookup, a value the key does not have, no conditions.
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 HeatmapIndex::build(b.run, b.values, {HeatmapRows::SliceValues, "derived.pos_bucket", ""}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 HeatmapIndex::build(b.run, b.values, {HeatmapRows::SequencesOfSlice, "derived.pos_bucket", "pos_9"},
                                                     {}, 0, lookup));
        spec.conditions.clear();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, HeatmapIndex::build(b.run, b.values, spec, {}, 0, lookup));
    }

    // Per-token rows against the brute force, with membership worked out from row labels.
    void derivedTokenRowsMatchBruteForce() {
        std::mt19937_64 rng(7);
        for (int trial = 0; trial < 24; ++trial) {
            std::vector<std::vector<double>> seqs(40);
            std::vector<int32_t> task;
            for (auto& sq : seqs) {
                sq.resize(rng() % 400);
                for (auto& x : sq)
                    x = rng() % 20 == 0 ? NAN : std::normal_distribution<double>(0, 1)(rng);
                task.push_back(int32_t(rng() % 3) - 1);
            }
            const auto b = makeRun(seqs, task, {"a", "b"});
            const DerivedLookup lookup = positionLookup(*b.run);
            const int mode = trial % 3;
            HeatmapRowSpec spec;
            Membership in;
            std::shared_ptr<const HeatmapIndex> ix;
            if (mode == 0) {
                spec = {HeatmapRows::SliceValues, "derived.pos_bucket", ""};
                ix = HeatmapIndex::build(b.run, b.values, spec, {}, 0, lookup);
                in = [&](size_t r, size_t, size_t t) {
                    const auto [lo, hi] = bucketRange(ix->row(r).label);
                    return t >= lo && t < hi;
                };
            } else if (mode == 1) {
                spec = {HeatmapRows::SequencesOfSlice, "derived.pos_bucket", "pos_64_256"};
                ix = HeatmapIndex::build(b.run, b.values, spec, {}, 0, lookup);
                in = [](size_t, size_t, size_t t) { return t >= 64 && t < 256; };
            } else {
                spec.mode = HeatmapRows::Conditions;
                spec.conditions = {{"derived.pos_bucket", "pos_64_256"}, {"task", "b"}};
                ix = HeatmapIndex::build(b.run, b.values, spec, {}, 0, lookup);
                in = [&](size_t r, size_t s, size_t t) {
                    const bool finding = t >= 64 && t < 256 && task[s] == 1;
                    return ix->row(r).label == "(rest of the run)" ? !finding : finding;
                };
            }
            const size_t rows = ix->rowCount(), len = ix->maxLength();
            for (int q = 0; q < 6; ++q) {
                const size_t r0 = rng() % (rows + 1), p0 = rng() % (len + 1);
                const auto request = req(r0, r0 + rng() % (rows + 2), 1 + rng() % 6, p0, p0 + rng() % (len + 3),
                                         1 + rng() % 50, HeatmapAggregate(rng() % 3),
                                         std::normal_distribution<double>(0.5, 1)(rng));
                checkAgainstBruteForce(*ix, *b.run, b.values->values, request, in);
                if (QTest::currentTestFailed())
                    return;
            }
        }
    }

    // Derived rows through the real DerivedSlices of a run's metric engine.
    void derivedRowsFromTheEngine() {
        std::vector<std::vector<double>> seqs{std::vector<double>(300, 1.0), std::vector<double>(20, 2.0)};
        const auto b = makeRun(seqs, {0, 1}, {"a", "b"});
        auto engine = std::make_shared<MetricEngine>(b.run);
        auto derived = std::make_shared<DerivedSlices>(*engine);
        const DerivedLookup lookup = [derived](const std::string& key) { return derived->get(key); };
        auto ix = HeatmapIndex::build(b.run, b.values, {HeatmapRows::SliceValues, "derived.pos_bucket", ""}, {}, 0, lookup);
        QCOMPARE(ix->rowCount(), size_t(3));
        QCOMPARE(ix->row(2).label, std::string("pos_256_1024"));
        QCOMPARE(ix->row(2).n, uint64_t(300 - 256));
        // A per-sequence derived key: the length buckets hold whole sequences.
        ix = HeatmapIndex::build(b.run, b.values, {HeatmapRows::SliceValues, "derived.len_bucket", ""}, {}, 0, lookup);
        QCOMPARE(ix->rowCount(), size_t(2));
        QCOMPARE(ix->row(0).label, std::string("len_0_64"));
        QCOMPARE(ix->row(1).label, std::string("len_256_1024"));
        QCOMPARE(ix->row(0).sequences, (std::vector<uint32_t>{1}));
        QCOMPARE(ix->row(1).sequences, (std::vector<uint32_t>{0}));
        QVERIFY(!ix->tokenRows());
    }

    // Sequences sorted by their mean, descending, rows without values last; ties in run order.
    void sequenceOrder() {
        const auto b = randomRun(99);
        const Run& run = *b.run;
        for (const bool ofSlice : {false, true}) {
            std::vector<std::pair<double, size_t>> want;
            for (size_t s = 0; s < run.sequenceCount(); ++s) {
                if (ofSlice && run.slices.codes[s] != 1)
                    continue;
                double sum = 0;
                int n = 0;
                for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i)
                    if (!std::isnan(b.values->values[i]))
                        sum += b.values->values[i], ++n;
                want.emplace_back(n ? -sum / n : INFINITY, s);
            }
            std::sort(want.begin(), want.end());
            const auto ix = indexOf(b, ofSlice ? HeatmapRows::SequencesOfSlice : HeatmapRows::AllSequences, "b");
            QCOMPARE(ix->rowCount(), want.size());
            for (size_t r = 0; r < want.size(); ++r)
                QCOMPARE(size_t(ix->row(r).sequences.front()), want[r].second);
        }
        const auto slices = indexOf(b, HeatmapRows::SliceValues);
        QCOMPARE(slices->rowCount(), size_t(4));
        QCOMPARE(slices->row(3).label, std::string("(unlabeled)"));
    }

    void cellDetailsAndClicks() {
        // Slice "x" holds s0 and s2; s2 has the larger values at positions 2-3.
        const auto b = makeRun({{1, 1, 1, 9}, {5, 5, 5, 5}, {0, 0, 7, 8}}, {0, 1, 0}, {"x", "y"});
        auto ix = indexOf(b, HeatmapRows::SliceValues);
        auto g = computeGrid(*ix, req(0, 2, 2, 0, 4, 2, HeatmapAggregate::Mean, 6));
        auto t = cellTarget(*ix, g, 0, 1);   // positions 2-3 of x: s0 mean 5, s2 mean 7.5
        QVERIFY(t);
        QCOMPARE(t->sequence, size_t(2));
        QCOMPARE(t->position, size_t(3));
        t = cellTarget(*ix, g, 0, 0);        // positions 0-1: s0 mean 1 beats s2 mean 0
        QCOMPARE(t->sequence, size_t(0));
        g = computeGrid(*ix, req(0, 2, 2, 0, 4, 2, HeatmapAggregate::Max, 6));
        QCOMPARE(cellTarget(*ix, g, 0, 1)->sequence, size_t(0));   // max 9 beats 8
        const HeatmapCell c = cellDetails(*ix, g, 0, 1);
        QCOMPARE(c.rowLabel, std::string("x"));
        QCOMPARE(c.slice, std::string("task=x"));
        QCOMPARE(c.pos0, size_t(2));
        QCOMPARE(c.pos1, size_t(4));
        QCOMPARE(c.n, 4u);
        QCOMPARE(c.value, 9.0);
        QCOMPARE(c.above, 3u);   // 9, 7, 8 > 6

        ix = indexOf(b, HeatmapRows::AllSequences);
        g = computeGrid(*ix, req(0, 3, 3, 0, 4, 4));
        QCOMPARE(ix->row(0).label, std::string("s1"));
        QCOMPARE(cellTarget(*ix, g, 0, 2)->sequence, size_t(1));
        QCOMPARE(cellDetails(*ix, g, 0, 0).slice, std::string("task=y"));
        g = computeGrid(*ix, req(0, 3, 1, 0, 4, 4));   // all three rows in one grid row
        QCOMPARE(cellDetails(*ix, g, 0, 0).rowLabel, std::string("s1 … s0 (3 rows)"));
        QCOMPARE(cellTarget(*ix, g, 0, 3)->sequence, size_t(0));

        const auto e = makeRun({{1, 2}, {}}, {0, 0}, {"x"});
        ix = indexOf(e, HeatmapRows::AllSequences);
        g = computeGrid(*ix, req(0, 2, 2, 0, 2, 2));
        QVERIFY(!cellTarget(*ix, g, 1, 0));   // the empty sequence: no target
    }

    void errorsAndCancel() {
        auto b = makeRun({{1, 2}}, {0}, {"x"});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, HeatmapIndex::build(b.run, b.values, {HeatmapRows::SliceValues, "nope", ""}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 HeatmapIndex::build(b.run, b.values, {HeatmapRows::SequencesOfSlice, "task", "zz"}));
        const auto ix = indexOf(b, HeatmapRows::AllSequences);
        QVERIFY_THROWS_EXCEPTION(Cancelled, computeGrid(*ix, req(0, 1, 1, 0, 2, 2), [](double) { return false; }));
        QVERIFY_THROWS_EXCEPTION(Cancelled, HeatmapIndex::build(b.run, b.values, {}, [](double) { return false; }));
        b.values->level = MetricLevel::Sequence;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, HeatmapIndex::build(b.run, b.values, {}));
        const auto g = computeGrid(*ix, req(0, 1, 1, 5, 9, 4));   // positions past the end
        QCOMPARE(g.cols, size_t(0));
    }

    // ---- the widget, offscreen -------------------------------------------------------
    void widgetRendersMarksAndClicks() {
        // Two slice rows x 4 positions; fixed linear range [0, 1]; threshold 0.45 on the means.
        const auto b = makeRun({{0.1, 0.2, 0.9, 0.4}, {0.5, 0.6, 0.3, 0.0}, {0.3, 0.2, 0.1, 0.0}}, {0, 1, 0},
                               {"x", "y"});
        ui::HeatmapView view;
        view.resize(640, 320);
        ui::ColourScale scale;
        scale.autoRange = false;
        scale.lo = 0;
        scale.hi = 1;
        view.setColourScale(scale);
        ui::CellStatistic stat;   // a clause on the mean with max 0.45
        stat.clause = "C1";
        stat.mark = HeatmapMark::Above;
        stat.markLevel = 0.45;
        view.setStatistic(stat);
        view.setRowMode({HeatmapRows::SliceValues, "task", ""});
        view.setData(b.run, b.values, "m");
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(!view.isBusy() && view.grid());
        const auto g = view.grid();
        QCOMPARE(g->rows, size_t(2));
        QCOMPARE(g->cols, size_t(4));
        const QRect plot = view.plotRect();
        const auto cellRect = [&](size_t r, size_t c) {
            const int x0 = int(ui::pixelOfCell(c, plot.width(), 4)), x1 = int(ui::pixelOfCell(c + 1, plot.width(), 4));
            const int y0 = int(ui::pixelOfCell(r, plot.height(), 2)), y1 = int(ui::pixelOfCell(r + 1, plot.height(), 2));
            return QRect(plot.left() + x0, plot.top() + y0, x1 - x0, y1 - y0);
        };
        const QImage shot = view.grab().toImage().convertToFormat(QImage::Format_RGB32);
        const auto table = ui::colourTable(ui::ColourMap::Viridis);
        const ui::LevelMapper levels(0, 1, false);
        // Row x, position 0: mean of 0.1 and 0.3.
        QCOMPARE(QColor(shot.pixel(cellRect(0, 0).center())), QColor(table[levels.level(0.2)]));
        QCOMPARE(QColor(shot.pixel(cellRect(1, 1).center())), QColor(table[levels.level(0.6)]));
        // Row x, position 2: mean 0.5 > 0.45, outlined in the marker colour, value inside.
        const QRect marked = cellRect(0, 2);
        QCOMPARE(QColor(shot.pixel(marked.center())), QColor(table[levels.level(0.5)]));
        QCOMPARE(QColor(shot.pixel(marked.left(), marked.center().y())), QColor(table[ui::kMarkerIndex]));
        QCOMPARE(QColor(shot.pixel(marked.center().x(), marked.bottom())), QColor(table[ui::kMarkerIndex]));
        const QRect plain = cellRect(0, 1);   // mean 0.2
        QVERIFY(QColor(shot.pixel(plain.left(), plain.center().y())) != QColor(table[ui::kMarkerIndex]));
        QCOMPARE(view.cellAt(marked.center()), (std::optional<std::pair<size_t, size_t>>{{0, 2}}));
        QVERIFY(view.toolTipAt(marked.center()).contains("n = 2"));
        QVERIFY(view.toolTipAt(marked.center()).contains("task=x"));

        // A click on row x, positions 2: s0 (0.9) beats s2 (0.1).
        QSignalSpy spy(&view, &ui::HeatmapView::sequenceActivated);
        QTest::mouseClick(&view, Qt::LeftButton, {}, marked.center());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<size_t>(), size_t(0));
        QTest::mouseClick(&view, Qt::LeftButton, {}, cellRect(1, 3).center());
        QCOMPARE(spy.count(), 2);
        QCOMPARE(spy.at(1).at(0).value<size_t>(), size_t(1));

        // Another colour map: the same image and grid, another colour table.
        const auto gridBefore = view.grid();
        scale.map = ui::ColourMap::Inferno;
        view.setColourScale(scale);
        QVERIFY(!view.isBusy());
        QCOMPARE(view.grid(), gridBefore);
        QCOMPARE(view.image().color(levels.level(0.2)), ui::colourTable(ui::ColourMap::Inferno)[levels.level(0.2)]);

        // Zoom in on the keyboard, pan with an arrow key, back with Home.
        QSignalSpy rendered(&view, &ui::HeatmapView::rendered);
        QTest::keyClick(&view, Qt::Key_Plus);
        QTRY_VERIFY(!view.isBusy() && rendered.count() > 0);
        QCOMPARE(view.grid()->colBins.width, size_t(3));   // 4 / 1.5, rounded
        QTest::keyClick(&view, Qt::Key_Right);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.begin == 1);
        QTest::keyClick(&view, Qt::Key_Home);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.width == 4);

        // Dragging pans instead of clicking.
        view.setView(0, 2, 0, 2);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.width == 2);
        spy.clear();
        const QPoint from = plot.center();
        QTest::mousePress(&view, Qt::LeftButton, {}, from);
        QTest::mouseMove(&view, from - QPoint(plot.width() / 2, 0));
        QTest::mouseRelease(&view, Qt::LeftButton, {}, from - QPoint(plot.width() / 2, 0));
        QCOMPARE(spy.count(), 0);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.begin == 1);

        // A new limit re-marks the cached values without rebinning.
        view.resetView();
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.width == 4);
        const auto valuesBefore = view.grid()->value;
        stat.markLevel = 0.55;
        view.setStatistic(stat);
        QTRY_VERIFY(!view.isBusy() && view.grid()->request.markLevel == 0.55);
        QCOMPARE(view.grid()->value, valuesBefore);
        QVERIFY(!view.grid()->marked(0, 2) && view.grid()->marked(1, 1));   // 0.5 and 0.6

        // Share above, a plain statistic: the values and the legend range change, and
        // nothing is marked (no clause bounds a share here).
        view.setThreshold(0.55);
        view.setAggregate(HeatmapAggregate::ShareAbove);
        QTRY_VERIFY(!view.isBusy() && view.grid()->request.aggregate == HeatmapAggregate::ShareAbove);
        QCOMPARE(view.grid()->value[view.grid()->at(0, 2)], 0.5);
        const QImage& img = view.image();   // shares are never marked
        for (int y = 0; y < img.height(); ++y)
            QVERIFY(std::none_of(img.scanLine(y), img.scanLine(y) + img.width(),
                                 [](uchar i) { return i == ui::kMarkerIndex; }));
    }

    // Many sequence rows on few pixels: rows are pooled, labels thinned, still exact.
    void widgetManyRows() {
        const auto b = randomRun(5);
        ui::HeatmapView view;
        view.resize(500, 260);
        view.setData(b.run, b.values, "m");
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(!view.isBusy() && view.grid());
        QCOMPARE(view.grid()->rows, std::min<size_t>(60, size_t(view.plotRect().height())));
        checkAgainstBruteForce(*view.index(), *b.run, b.values->values, view.grid()->request);
        QVERIFY(!view.grab().isNull());
    }
};

QTEST_MAIN(TestHeatmap)
#include "test_heatmap.moc"
