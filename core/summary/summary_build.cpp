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
#include "core/formats/tensor_run.h"

namespace kcx {

namespace {

constexpr int kPosBuckets = int(std::size(kPositionEdges));

// The cells a sequence's tokens go to: the same for every sequence of one step and one set
// of sequence-level labels (a "profile").
struct Profile {
    std::vector<int> base;                          // pos −1: all, then each labelled value
    std::vector<int> pos[kPosBuckets];              // the same crossed with the position bucket
    std::vector<std::vector<int>> tokenKey;         // per token-level derived key: cell per code
};

struct Layout {
    std::vector<CellKey> keys;                      // cell id -> key
    std::map<CellKey, int> ids;
    std::vector<Profile> profiles;
    std::vector<int> profileOf;                     // per sequence
    std::vector<int64_t> stepOf;                    // per sequence
    std::vector<std::shared_ptr<const DerivedCodes>> tokenCodes;   // token-level derived keys
    int cell(const CellKey& k) {
        auto [it, fresh] = ids.emplace(k, int(keys.size()));
        if (fresh)
            keys.push_back(k);
        return it->second;
    }
};

Layout makeLayout(const Run& run, MetricEngine& engine) {
    Layout L;
    const size_t N = run.sequenceCount();
    const std::vector<int64_t> steps = run.steps();
    L.stepOf = steps.empty() ? std::vector<int64_t>(N, -1) : steps;
    // Sequence-level keys: the labelled ones (step is the cells' own axis), then the derived.
    struct SeqKey {
        std::string name;
        std::vector<std::string> values;
        int labelIndex = -1;                                // into run.slices
        std::shared_ptr<const DerivedCodes> codes;          // or derived
    };
    std::vector<SeqKey> seqKeys;
    for (size_t k = 0; k < run.slices.keys.size(); ++k) {
        if (!steps.empty() && run.slices.keys[k] == kStepKey)
            continue;
        seqKeys.push_back({run.slices.keys[k], run.slices.values[k], int(k), nullptr});
    }
    std::vector<std::string> tokenKeyNames;
    for (const std::string& key : engine.derived().available()) {
        if (key == "derived.pos_bucket")
            continue;   // the cells' position axis
        auto codes = engine.derived().get(key);
        if (codes->level == DerivedLevel::Sequence) {
            seqKeys.push_back({key, codes->values, -1, codes});
        } else {
            L.tokenCodes.push_back(codes);
            tokenKeyNames.push_back(key);
        }
    }
    std::map<std::vector<int64_t>, int> profileIds;
    L.profileOf.resize(N);
    std::vector<int64_t> sig;
    for (size_t s = 0; s < N; ++s) {
        sig.assign(1, L.stepOf[s]);
        for (const SeqKey& k : seqKeys) {
            if (k.labelIndex >= 0)
                sig.push_back(run.slices.codes[s * run.slices.keys.size() + size_t(k.labelIndex)]);
            else
                sig.push_back(k.codes->sequence[s]);
        }
        auto [it, fresh] = profileIds.emplace(sig, int(L.profiles.size()));
        L.profileOf[s] = it->second;
        if (!fresh)
            continue;
        Profile p;
        const int64_t step = L.stepOf[s];
        p.base.push_back(L.cell({step, "", "", -1}));
        for (int b = 0; b < kPosBuckets; ++b)
            p.pos[b].push_back(L.cell({step, "", "", b}));
        for (size_t k = 0; k < seqKeys.size(); ++k) {
            const int64_t code = sig[k + 1];
            if (code < 0)
                continue;
            const std::string& value = seqKeys[k].values[size_t(code)];
            p.base.push_back(L.cell({step, seqKeys[k].name, value, -1}));
            for (int b = 0; b < kPosBuckets; ++b)
                p.pos[b].push_back(L.cell({step, seqKeys[k].name, value, b}));
        }
        for (size_t t = 0; t < L.tokenCodes.size(); ++t) {
            std::vector<int> byCode;
            for (const std::string& value : L.tokenCodes[t]->values)
                byCode.push_back(L.cell({step, tokenKeyNames[t], value, -1}));
            p.tokenKey.push_back(std::move(byCode));
        }
        L.profiles.push_back(std::move(p));
    }
    return L;
}

// The cells of one token, in a small reused buffer.
template <class F>
void forTokenCells(const Layout& L, const Profile& p, size_t tokenIndex, size_t position, F&& f) {
    for (int c : p.base)
        f(c);
    const int b = positionBucket(position);
    for (int c : p.pos[b])
        f(c);
    for (size_t t = 0; t < L.tokenCodes.size(); ++t) {
        const int code = L.tokenCodes[t]->token[tokenIndex];
        if (code >= 0)
            f(p.tokenKey[t][size_t(code)]);
    }
}

// A sequence's running figures in one cell, flushed when the sequence ends.
struct Partial {
    int cell = -1;
    uint64_t n = 0;
    double sum = 0, max = -INFINITY;
};

struct SeqScratch {
    std::vector<int> slot;           // per cell: index into parts, or −1
    std::vector<Partial> parts;
    explicit SeqScratch(size_t cells) : slot(cells, -1) {}
    Partial& at(int cell) {
        int& s = slot[size_t(cell)];
        if (s < 0) {
            s = int(parts.size());
            parts.push_back({cell, 0, 0, -INFINITY});
        }
        return parts[size_t(s)];
    }
    template <class F>
    void flush(F&& f) {
        for (Partial& p : parts) {
            f(p);
            slot[size_t(p.cell)] = -1;
        }
        parts.clear();
    }
};

bool lacksInputs(const MetricInfo& info, const Run& run) {
    if (info.level != MetricLevel::Token)
        return false;
    return (info.needs == "logits" && !run.hasLogits()) ||
           (info.needs == "topk|logits" && !run.hasTopK() && !run.hasLogits());
}

size_t chunksFor(int threads) { return size_t(std::max(1, resolveThreads(threads))) * 2; }

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

    // Tokens and sequences per cell, and the per-run sums, in one pass.
    {
        std::vector<std::vector<CellData>> part(chunks);
        parallelChunks(N, chunks, options.threads, [&](size_t ci, size_t b, size_t e) {
            std::vector<CellData> local(C);
            SeqScratch scratch(C);
            for (size_t s = b; s < e; ++s) {
                const Profile& p = L.profiles[size_t(L.profileOf[s])];
                std::vector<int> touched;
                for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
                    const double a = run.lpTrain[i], q = run.lpInf[i];
                    const int st = (isMissing(a) || isMissing(q)) ? 1 : (!std::isfinite(a) || !std::isfinite(q)) ? 2 : 0;
                    const double w = det::exp(a - q), pa = det::exp(a), pq = det::exp(q);
                    using S = ExactSum;
                    const bool finiteW = std::isfinite(w);
                    const S::Split xp = S::split(pa), xq = S::split(pq), xp2 = S::split(pa * pa),
                                   xq2 = S::split(pq * pq), xpq = S::split(pa * pq), xw = S::split(finiteW ? w : 0),
                                   xw2 = S::split(finiteW ? w * w : 0);
                    forTokenCells(L, p, i, i - run.seqBegin(s), [&](int c) {
                        CellData& d = local[size_t(c)];
                        ++d.tokens;
                        Partial& part = scratch.at(c);
                        RunSums& r = d.run;
                        if (st) {
                            (st == 1 ? r.missing : r.nonfinite)++;
                            return;
                        }
                        ++r.pairs;
                        ++part.n;
                        part.sum += q - a;
                        r.sp.add(xp);
                        r.sq.add(xq);
                        r.sp2.add(xp2);
                        r.sq2.add(xq2);
                        r.spq.add(xpq);
                        if (finiteW) {
                            ++r.ratios;
                            r.sw.add(xw);
                            r.sw2.add(xw2);
                        } else {
                            ++r.nonfinite;
                        }
                    });
                }
                // A sequence belongs to its base cells even when it has no token.
                for (int c : p.base)
                    scratch.at(c);
                scratch.flush([&](const Partial& pt) {
                    CellData& d = local[size_t(pt.cell)];
                    ++d.sequences;
                    if (pt.n) {
                        ++d.run.sequences;
                        d.run.seqMeans.add(pt.sum / double(pt.n));
                    }
                });
            }
            part[ci] = std::move(local);
        });
        for (auto& local : part)
            if (!local.empty())
                for (size_t c = 0; c < C; ++c)
                    cells[c].merge(local[c]);
    }
    report(progress, 0.05);

    const auto& catalog = metricCatalog();
    size_t done = 0;
    for (const MetricInfo& info : catalog) {
        report(progress, 0.05 + 0.95 * double(done++) / double(catalog.size()));
        if (info.level == MetricLevel::Run)
            continue;   // from the run sums
        if (lacksInputs(info, run)) {
            for (size_t c = 0; c < C; ++c)
                cells[c].metrics[info.name].missing = cells[c].tokens;
            continue;
        }
        auto values = engine.get(info.name);
        std::vector<std::vector<MetricCell>> part(chunks);
        if (info.level == MetricLevel::Token) {
            parallelChunks(N, chunks, options.threads, [&](size_t ci, size_t b, size_t e) {
                std::vector<MetricCell> local(C);
                SeqScratch scratch(C);
                for (size_t s = b; s < e; ++s) {
                    const Profile& p = L.profiles[size_t(L.profileOf[s])];
                    const size_t t0 = run.seqBegin(s);
                    for (size_t i = t0; i < run.seqEnd(s); ++i) {
                        const double v = values->values[i];
                        const bool miss = std::isnan(v) && isMissing(v);
                        const bool nf = std::isnan(v) && !miss;
                        const MetricCell::Prepared prep(miss || nf ? 0.0 : v);
                        forTokenCells(L, p, i, i - t0, [&](int c) {
                            MetricCell& m = local[size_t(c)];
                            if (miss) {
                                ++m.missing;
                                return;
                            }
                            if (nf) {
                                ++m.nonfinite;
                                return;
                            }
                            m.add(prep);
                            Partial& pt = scratch.at(c);
                            ++pt.n;
                            pt.sum += v;
                            pt.max = std::max(pt.max, v);
                            if (m.worst.size() < kWorstKept || std::fabs(v) >= std::fabs(m.worst.back().value))
                                m.offerWorst({v, run.ids[s], int64_t(i - t0), L.stepOf[s]});
                        });
                    }
                    scratch.flush([&](const Partial& pt) {
                        if (!pt.n)
                            return;
                        MetricCell& m = local[size_t(pt.cell)];
                        ++m.sequences;
                        m.seqSumSq.add(pt.sum * pt.sum);
                        m.seqCountSq.add(double(pt.n) * double(pt.n));
                        m.seqSumCount.add(pt.sum * double(pt.n));
                        m.seqMax.add(pt.max);
                    });
                }
                part[ci] = std::move(local);
            });
        } else {   // a sequence metric: its sequence's base cells
            parallelChunks(N, chunks, options.threads, [&](size_t ci, size_t b, size_t e) {
                std::vector<MetricCell> local(C);
                for (size_t s = b; s < e; ++s) {
                    const Profile& p = L.profiles[size_t(L.profileOf[s])];
                    const double v = values->values[s];
                    const MetricCell::Prepared prep(std::isnan(v) ? 0.0 : v);
                    for (int c : p.base) {
                        MetricCell& m = local[size_t(c)];
                        if (std::isnan(v)) {
                            (isMissing(v) ? m.missing : m.nonfinite)++;
                            continue;
                        }
                        m.add(prep);
                        ++m.sequences;
                        m.seqSumSq.add(v * v);
                        m.seqCountSq.add(1);
                        m.seqSumCount.add(v);
                        m.seqMax.add(v);
                        if (m.worst.size() < kWorstKept || std::fabs(v) >= std::fabs(m.worst.back().value))
                            m.offerWorst({v, run.ids[s], -1, L.stepOf[s]});
                    }
                }
                part[ci] = std::move(local);
            });
        }
        for (auto& local : part)
            if (!local.empty())
                for (size_t c = 0; c < C; ++c)
                    cells[c].metrics[info.name].merge(local[c]);
        // Complete: packed, so that a summary of many steps does not hold a dense store of
        // hundreds of buckets for each small cell's few values (1,000 steps: 3.3 GB).
        for (size_t c = 0; c < C; ++c)
            cells[c].metrics[info.name].pack();
        values.reset();
        engine.release(info.name);
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
