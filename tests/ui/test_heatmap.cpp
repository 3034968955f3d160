// The divergence heatmap: grids against a brute-force reference on hand-built runs, the
// row order, tooltips and click targets (core/heatmap/heatmap.h). The widget is in
// test_heatmap_widget.cpp.
#include <QSignalSpy>
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "core/heatmap/heatmap.h"
#include "tests/support/heatmap_runs.h"
#include "core/metrics/derived_slices.h"
#include "ui/heatmap/heatmap_render.h"
#include "ui/heatmap/heatmap_view.h"

using namespace kcx;

using namespace kcx::test;


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
        // A range of discovery's dyadic search (issue 20): the same tokens as the bucket here.
        spec.conditions = {{"task", "a"}, {"positions", "[64, 70)"}};
        ix = HeatmapIndex::build(b.run, b.values, spec, {}, 0, lookup);
        QCOMPARE(ix->row(0).n, uint64_t(6));
        QCOMPARE(ix->row(0).score, 6399.0 / 6);
        spec.conditions = {{"task", "a"}, {"positions", "[64, 66)"}};
        ix = HeatmapIndex::build(b.run, b.values, spec, {}, 0, lookup);
        QCOMPARE(ix->row(0).n, uint64_t(2));
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

};

QTEST_MAIN(TestHeatmap)
#include "test_heatmap.moc"
