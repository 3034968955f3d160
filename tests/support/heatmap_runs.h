// Hand-built runs and the brute-force reference for the heatmap tests (test_heatmap,
// test_heatmap_widget): sequences with given per-token values and a "task" slice key, and
// every cell of a grid recomputed from the run's tokens one by one.
#pragma once

#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/heatmap/heatmap.h"
#include "core/metrics/derived_slices.h"

namespace kcx::test {

using namespace kcx;


struct Built {
    std::shared_ptr<Run> run;
    std::shared_ptr<MetricValues> values;
};

// Sequences with the given per-token values; slice key "task" with the given codes.
inline Built makeRun(const std::vector<std::vector<double>>& seqs, const std::vector<int32_t>& task,
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

inline std::shared_ptr<const HeatmapIndex> indexOf(const Built& b, HeatmapRows mode, std::string value = {}) {
    return HeatmapIndex::build(b.run, b.values, HeatmapRowSpec{mode, "task", value});
}

inline HeatmapRequest req(size_t r0, size_t r1, size_t rb, size_t p0, size_t p1, size_t cols,
                   HeatmapAggregate a = HeatmapAggregate::Mean, double thr = 0) {
    HeatmapRequest q{r0, r1, rb, p0, p1, cols, a, thr};
    q.mark = HeatmapMark::Above;   // marks against the same level, as a clause on the cells' statistic
    q.markLevel = thr;
    return q;
}

inline bool same(double a, double b) {
    if (a != a || b != b)
        return a != a && b != b;
    return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b));
}

// The grid worked out token by token: item x of [begin, begin+W) in B bins is in bin
// floor((x - begin) * B / W).
// in(r, s, t): whether position t of sequence s counts in index row r (default: every
// position of the row's sequences).
using Membership = std::function<bool(size_t r, size_t s, size_t t)>;

inline void checkAgainstBruteForce(const HeatmapIndex& ix, const Run& run, const std::vector<double>& v,
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
inline Built randomRun(uint64_t seed) {
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
inline DerivedLookup positionLookup(const Run& run) {
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
inline std::pair<size_t, size_t> bucketRange(const std::string& name) {
    if (name == "pos_0_64") return {0, 64};
    if (name == "pos_64_256") return {64, 256};
    if (name == "pos_256_1024") return {256, 1024};
    return {SIZE_MAX, SIZE_MAX};
}


}  // namespace kcx::test
