// summarizeRun: one run reduced to cells (summary.h). Every metric is computed by the
// MetricEngine exactly as `kcx metrics` computes it, one at a time, and its values are
// routed to the cells of their step and slices.
#include <malloc.h>

#include <algorithm>
#include <numeric>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/base/det_math.h"
#include "core/base/parallel.h"
#include "core/metrics/derived_slices.h"
#include "core/summary/summary.h"
#include "core/summary/summary_layout.h"
#include "core/formats/tensor_run.h"

namespace kcx {

namespace {

using namespace summary_layout;

constexpr size_t kExpBlock = 64;   // tokens whose exps the first pass takes at once (whole vectors)

// A sequence's running figures per slot, flushed when the sequence ends.
struct Partial {
    uint64_t n = 0;
    double sum = 0, max = -INFINITY;
    bool touched = false;
};

struct SeqScratch {
    std::vector<Partial> slot;
    std::vector<int> touched;
    explicit SeqScratch(int K) : slot(size_t(K)) {}
    Partial& at(int k) {
        Partial& p = slot[size_t(k)];
        if (!p.touched) {
            p.touched = true;
            touched.push_back(k);
        }
        return p;
    }
    template <class F>
    void flush(F&& f) {
        for (int k : touched) {
            f(k, slot[size_t(k)]);
            slot[size_t(k)] = Partial();
        }
        touched.clear();
    }
};

// Consecutive tokens of one sequence that go to one fine accumulator, and the running
// figures of that accumulator's slots.
struct Segment {
    const double* values;
    size_t begin, end, seqBegin;
    const std::string* id;
    int64_t step;
    Partial* slots[kMaxSlotsPerCombo] = {};
    int nSlots = 0;
};

// Where the segment that begins at token i ends (t1: its sequence's end), and its fine
// accumulator's slots in `out` (made running for the sequence); how many.
size_t segmentEnd(const Fine& F, size_t i, size_t t1) {
    size_t j = i + 1;
    while (j < t1 && F.fineOf[j] == F.fineOf[i])
        ++j;
    return j;
}

int segmentSlots(const Fine& F, int32_t f, SeqScratch& scratch, Partial** out) {
    int n = 0;
    const int* sl = F.slots(F.comboOfFine[size_t(f)]);
    for (int k = 0; k < F.W && sl[k] >= 0; ++k)
        out[n++] = &scratch.at(sl[k]);
    return n;
}

// A segment's values into its fine accumulator and slots: what MetricCell::add, offerWorst
// and the slots' running figures do for each value, with the cell's figures and the worst
// entries' threshold held in registers (the same figures: min, max and the exact sums do not
// depend on grouping, and each slot's running sum adds its values in the same order).
inline void addSegment(MetricCell& m, const Segment& g) {
    double lo = m.count ? m.min : INFINITY, hi = m.count ? m.max : -INFINITY;
    uint64_t n = 0;
    // Below the last kept entry's magnitude a value cannot enter; at it, only a tie-break can
    // let it in (many metrics are 0 for most tokens).
    const auto threshold = [&] { return m.worst.size() < kWorstKept ? -1.0 : std::fabs(m.worst.back().value); };
    double worst = threshold();
    for (size_t i = g.begin; i < g.end; ++i) {
        const double v = g.values[i];
        if (std::isnan(v)) {
            (isMissing(v) ? m.missing : m.nonfinite)++;
            continue;
        }
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        ++n;
        m.sum.add(v);
        m.sumSq.add(v * v);
        m.sketch.add(v);
        if (std::fabs(v) >= worst) {
            const int64_t position = int64_t(i - g.seqBegin);
            if (m.worst.size() < kWorstKept || worseThan(v, g.step, *g.id, position, m.worst.back())) {
                m.offerWorst({v, *g.id, position, g.step});
                worst = threshold();
            }
        }
        for (int k = 0; k < g.nSlots; ++k) {
            Partial& pt = *g.slots[k];
            ++pt.n;
            pt.sum += v;
            pt.max = std::max(pt.max, v);
        }
    }
    if (n) {
        m.count += n;
        m.min = lo;
        m.max = hi;
    }
}

// What the first pass sums per cell: tokens, sequences and the per-run sums.
struct RunAcc {
    uint64_t sequences = 0, tokens = 0;
    RunSums run;
    void merge(const RunAcc& o) {
        sequences += o.sequences;
        tokens += o.tokens;
        run.merge(o.run);
    }
};



}  // namespace

namespace {

RunSummary summarizeWhole(std::shared_ptr<const Run> runPtr, const SummarizeOptions& options,
                          const Progress& progress) {
    const Run& run = *runPtr;
    MetricOptions mo;
    mo.ppoClip = options.ppoClip;
    mo.threads = options.threads;
    MetricEngine engine(runPtr, mo);
    engine.setLean(true);
    Layout L = makeLayout(run, engine);
    const size_t N = run.sequenceCount(), C = L.keys.size();
    const size_t chunks = chunksFor(options.threads);

    RunSummary out;
    out.ppoClip = options.ppoClip;
    out.hasTopK = run.hasTopK();
    out.hasLogits = run.hasLogits();
    out.hasRewards = run.hasRewards();
    std::vector<CellData> cells(C);

    const Fine F = makeFine(run, L);
    const size_t FC = F.fines(), PK = L.profiles.size() * size_t(F.K);

    // Tokens and sequences per cell, and the per-run sums, in one pass.
    {
        std::vector<std::unique_ptr<Sparse<RunAcc>>> fineParts(chunks), slotParts(chunks);
        parallelChunks(N, chunks, options.threads, [&](size_t ci, size_t b, size_t e) {
            auto fine = std::make_unique<Sparse<RunAcc>>(FC);
            auto slots = std::make_unique<Sparse<RunAcc>>(PK);
            SeqScratch scratch(F.K);
            for (size_t s = b; s < e; ++s) {
                const int32_t slot0 = L.profileOf[s] * F.K;
                const size_t t1 = run.seqEnd(s);
                for (size_t i = run.seqBegin(s); i < t1;) {
                    // A segment (addSegment): every token touches its slots, a missing one too.
                    const int32_t f = F.fineOf[i];
                    const size_t j = segmentEnd(F, i, t1);
                    RunAcc& d = (*fine)[f];
                    d.tokens += j - i;
                    RunSums& r = d.run;
                    Partial* segSlots[kMaxSlotsPerCombo];
                    const int nSlots = segmentSlots(F, f, scratch, segSlots);
                    // The three exps of each token a vector at a time (det::expMany: the
                    // same bits as det::exp), kExpBlock tokens at once.
                    alignas(64) double A[kExpBlock], Q[kExpBlock], D[kExpBlock], EW[kExpBlock], EA[kExpBlock],
                        EQ[kExpBlock];
                    for (size_t from = i; from < j; from += kExpBlock) {
                        const size_t n = std::min(kExpBlock, j - from);
                        for (size_t t = 0; t < kExpBlock; ++t) {
                            A[t] = t < n ? run.lpTrain[from + t] : 0.0;
                            Q[t] = t < n ? run.lpInf[from + t] : 0.0;
                            D[t] = A[t] - Q[t];
                        }
                        det::expMany(D, EW, n);
                        det::expMany(A, EA, n);
                        det::expMany(Q, EQ, n);
                        for (size_t t = 0; t < n; ++t) {
                            const double a = A[t], q = Q[t];
                            if (isMissing(a) || isMissing(q) || !std::isfinite(a) || !std::isfinite(q)) {
                                ((isMissing(a) || isMissing(q)) ? r.missing : r.nonfinite)++;
                                continue;
                            }
                            const double w = EW[t], pa = EA[t], pq = EQ[t];
                            ++r.pairs;
                            r.sp.add(pa);
                            r.sq.add(pq);
                            r.sp2.add(pa * pa);
                            r.sq2.add(pq * pq);
                            r.spq.add(pa * pq);
                            if (std::isfinite(w)) {
                                ++r.ratios;
                                r.sw.add(w);
                                r.sw2.add(w * w);
                            } else {
                                ++r.nonfinite;
                            }
                            for (int k = 0; k < nSlots; ++k) {
                                ++segSlots[k]->n;
                                segSlots[k]->sum += q - a;
                            }
                        }
                    }
                    i = j;
                }
                // A sequence belongs to its base cells even when it has no token.
                scratch.at(0);
                scratch.flush([&](int k, const Partial& pt) {
                    RunAcc& d = (*slots)[slot0 + k];
                    ++d.sequences;
                    if (pt.n) {
                        ++d.run.sequences;
                        d.run.seqMeans.add(pt.sum / double(pt.n));
                    }
                });
            }
            fineParts[ci] = std::move(fine);
            slotParts[ci] = std::move(slots);
        });
        std::vector<RunAcc> fine = gather(fineParts, FC), slots = gather(slotParts, PK);
        std::vector<RunAcc> acc = rollUp(F, fine, slots, options.threads);
        for (size_t c = 0; c < C; ++c) {
            cells[c].sequences = acc[c].sequences;
            cells[c].tokens = acc[c].tokens;
            cells[c].run = std::move(acc[c].run);
        }
    }
    report(progress, 0.05);

    const auto& catalog = metricCatalog();
    size_t done = 0;
    for (const MetricInfo& info : catalog) {
        report(progress, 0.05 + 0.95 * double(done++) / double(catalog.size()));
        if (info.level == MetricLevel::Run)
            continue;   // from the run sums
        if (lacksInputs(info, out.hasTopK, out.hasLogits))
            continue;   // every token missing: implied (RunSummary::metric)
        auto values = engine.get(info.name);
        std::vector<std::unique_ptr<Sparse<MetricCell>>> fineParts(chunks), slotParts(chunks);
        const bool tokenLevel = info.level == MetricLevel::Token;
        parallelChunks(N, chunks, options.threads, [&](size_t ci, size_t b, size_t e) {
            auto fine = std::make_unique<Sparse<MetricCell>>(tokenLevel ? FC : 0);
            auto slots = std::make_unique<Sparse<MetricCell>>(PK);
            SeqScratch scratch(F.K);
            for (size_t s = b; s < e; ++s) {
                const int32_t slot0 = L.profileOf[s] * F.K;
                if (!tokenLevel) {   // a sequence metric: its sequence's base cells (slot 0)
                    const double v = values->values[s];
                    MetricCell& m = (*slots)[slot0];
                    if (std::isnan(v)) {
                        (isMissing(v) ? m.missing : m.nonfinite)++;
                        continue;
                    }
                    m.add(v);
                    ++m.sequences;
                    m.seqSumSq.add(v * v);
                    m.seqCountSq.add(1);
                    m.seqSumCount.add(v);
                    m.seqMax.add(v);
                    if (m.worst.size() < kWorstKept || std::fabs(v) >= std::fabs(m.worst.back().value))
                        m.offerWorst({v, run.ids[s], -1, L.stepOf[s]});
                    continue;
                }
                const size_t t0 = run.seqBegin(s), t1 = run.seqEnd(s);
                for (size_t i = t0; i < t1;) {
                    // A segment: the sequence's next tokens that go to one fine accumulator
                    // (the same position bucket and token-level codes), added at once.
                    const int32_t f = F.fineOf[i];
                    const size_t j = segmentEnd(F, i, t1);
                    Segment g{values->values.data(), i, j, t0, &run.ids[s], L.stepOf[s], {}, 0};
                    g.nSlots = segmentSlots(F, f, scratch, g.slots);
                    addSegment((*fine)[f], g);
                    i = j;
                }
                scratch.flush([&](int k, const Partial& pt) {
                    if (!pt.n)
                        return;
                    MetricCell& m = (*slots)[slot0 + k];
                    ++m.sequences;
                    m.seqSumSq.add(pt.sum * pt.sum);
                    m.seqCountSq.add(double(pt.n) * double(pt.n));
                    m.seqSumCount.add(pt.sum * double(pt.n));
                    m.seqMax.add(pt.max);
                });
            }
            fineParts[ci] = std::move(fine);
            slotParts[ci] = std::move(slots);
        });
        values.reset();
        engine.release(info.name);
        std::vector<MetricCell> fine = gather(fineParts, tokenLevel ? FC : 0), slots = gather(slotParts, PK);
        std::vector<MetricCell> acc = rollUp(F, fine, slots, options.threads);
        // Complete: packed, so that a summary of many steps does not hold a dense store of
        // hundreds of buckets for each small cell's few values (1,000 steps: 3.3 GB).
        for (size_t c = 0; c < C; ++c) {
            acc[c].pack();
            cells[c].metrics[info.name] = std::move(acc[c]);
        }
    }
    // Sequence metrics are not kept in cells that split a sequence (position buckets,
    // token-level keys): drop their empty entries there.
    for (size_t c = 0; c < C; ++c) {
        const bool splits = L.keys[c].pos >= 0 || (isDerivedKey(L.keys[c].key) &&
                                                    derivedLevel(L.keys[c].key) == DerivedLevel::Token);
        if (splits)
            for (const MetricInfo& info : catalog)
                if (info.level == MetricLevel::Sequence)
                    cells[c].metrics.erase(info.name);
        out.cells.emplace(L.keys[c], std::move(cells[c]));
    }
    report(progress, 1.0);
    return out;
}

// This process's pages of a mapped run's tokens [t0, t1) (tensors::dropMappedPages: nothing
// for a run in memory).
void dropTokenPages(const Run& run, size_t t0, size_t t1) {
    const auto column = [&](const Column& c, size_t width) {
        if (!c.empty())
            c.visit([&](auto span) { tensors::dropMappedPages(span.data(), span.size_bytes()); }, t0 * width,
                    (t1 - t0) * width);
    };
    column(run.lpTrain, 1);
    column(run.lpInf, 1);
    if (!run.tokens.empty())
        tensors::dropMappedPages(run.tokens.data() + t0, (t1 - t0) * sizeof(int32_t));
    for (const TopK* t : {&run.topkTrain, &run.topkInf})
        if (t->present()) {
            column(t->logp, size_t(t->k));
            tensors::dropMappedPages(t->ids.data() + t0 * size_t(t->k), (t1 - t0) * size_t(t->k) * sizeof(int32_t));
        }
}

}  // namespace

RunSummary summarizeRun(std::shared_ptr<const Run> runPtr, const SummarizeOptions& options,
                        const Progress& progress) {
    const Run& run = *runPtr;
    const size_t N = run.sequenceCount(), M = run.tokenCount();
    if (!options.blockTokens || M <= options.blockTokens)
        return summarizeWhole(runPtr, options, progress);
    RunSummary total;
    bool first = true;
    for (size_t s0 = 0; s0 < N;) {
        size_t s1 = s0 + 1;
        while (s1 < N && run.seqEnd(s1) - run.seqBegin(s0) <= options.blockTokens)
            ++s1;
        std::vector<size_t> seqs(s1 - s0);
        std::iota(seqs.begin(), seqs.end(), s0);
        const size_t t0 = run.seqBegin(s0), t1 = run.seqEnd(s1 - 1);
        auto block = std::make_shared<const Run>(subsetRun(run, seqs));
        const Progress sub = [&](double f) {
            return !progress || progress((double(t0) + f * double(t1 - t0)) / double(M));
        };
        RunSummary part = summarizeWhole(std::move(block), options, sub);
        dropTokenPages(run, t0, t1);
        if (first)
            total = std::move(part);
        else
            total.merge(part);
        first = false;
        s0 = s1;
        // Cells that several blocks have were merged densely: packed again, or the total's
        // dense stores grow with the run (20M tokens in 10 blocks: 80 MB more).
        for (auto& [key, cell] : total.cells)
            for (auto& [name, m] : cell.metrics)
                m.pack();
        // The block's freed arrays back to the system: kept in the heap (app/common.cpp keeps
        // freed memory for speed), the small packed stores allocated between them made the
        // heap grow by about 0.4 MB a block.
        malloc_trim(0);
    }
    return total;
}

}  // namespace kcx
