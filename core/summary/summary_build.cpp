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
constexpr int kMaxSlotsPerCombo = 8;   // all tokens, a position bucket, one per token-level key

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

size_t chunksFor(int threads) { return size_t(std::max(1, resolveThreads(threads))) * 2; }

// The finest cells of a block. A token goes to exactly one "fine" accumulator: its sequence's
// profile × its position bucket × its code for each token-level key (a "combo"). A sequence's
// figures go to the "slots" of its profile: 0 = all its tokens, 1 + b = its tokens of position
// bucket b, then one per token-level key and code. A slot's token figures are the sum of its
// fine accumulators, and a cell's figures the sum of the slots that belong to it (a profile's
// base cells: slot 0; its cells of bucket b: slot 1 + b; a token key's cell: that key's slot).
// Each token is added once instead of once per cell (about five cells, or nine with top-k),
// and since every part merges exactly the cells are the same, bit for bit.
struct Fine {
    int combos = kPosBuckets;
    int K = 1 + kPosBuckets;                        // slots per profile
    int W = 2;                                      // slots per combo
    std::vector<int> comboSlots;                    // combos × W
    std::vector<int32_t> fineOf;                    // per token: its fine accumulator
    std::vector<int32_t> profileOfFine;             // per fine accumulator
    std::vector<int32_t> comboOfFine;
    std::vector<std::vector<int32_t>> fineOfProfile;   // per profile: its fine accumulators
    std::vector<std::vector<int32_t>> slotsOfCell;      // per cell: its slots (profile × K + slot)
    size_t fines() const { return profileOfFine.size(); }
    const int* slots(int combo) const { return comboSlots.data() + size_t(combo) * size_t(W); }
};

Fine makeFine(const Run& run, const Layout& L) {
    Fine F;
    const size_t T = L.tokenCodes.size();
    std::vector<int> radix(T), slotBase(T);
    for (size_t t = 0; t < T; ++t) {
        radix[t] = int(L.tokenCodes[t]->values.size()) + 1;   // code −1 (no value) too
        slotBase[t] = F.K;
        F.K += radix[t] - 1;
        F.combos *= radix[t];
    }
    F.W = 2 + int(T);
    if (F.W > kMaxSlotsPerCombo)
        throw std::logic_error("summarize: more token-level keys than a segment holds");
    F.comboSlots.assign(size_t(F.combos) * size_t(F.W), -1);
    for (int combo = 0; combo < F.combos; ++combo) {
        int* out = F.comboSlots.data() + size_t(combo) * size_t(F.W);
        int rest = combo / kPosBuckets;
        *out++ = 0;
        *out++ = 1 + combo % kPosBuckets;
        for (size_t t = 0; t < T; ++t) {
            const int code = rest % radix[t] - 1;
            rest /= radix[t];
            if (code >= 0)
                *out++ = slotBase[t] + code;
        }
    }
    const size_t P = L.profiles.size(), N = run.sequenceCount();
    std::vector<int32_t> table(P * size_t(F.combos), -1);
    F.fineOf.resize(run.tokenCount());
    F.fineOfProfile.resize(P);
    for (size_t s = 0; s < N; ++s) {
        const size_t p = size_t(L.profileOf[s]), t0 = run.seqBegin(s), t1 = run.seqEnd(s);
        int32_t* row = table.data() + p * size_t(F.combos);
        for (size_t i = t0; i < t1; ++i) {
            int combo = 0;
            for (size_t t = T; t-- > 0;)
                combo = combo * radix[t] + L.tokenCodes[t]->token[i] + 1;
            combo = combo * kPosBuckets + positionBucket(i - t0);
            int32_t& id = row[combo];
            if (id < 0) {
                id = int32_t(F.profileOfFine.size());
                F.profileOfFine.push_back(int32_t(p));
                F.comboOfFine.push_back(combo);
                F.fineOfProfile[p].push_back(id);
            }
            F.fineOf[i] = id;
        }
    }
    // Slot → cells, inverted.
    F.slotsOfCell.resize(L.keys.size());
    for (size_t p = 0; p < P; ++p) {
        const Profile& pr = L.profiles[p];
        const int32_t at = int32_t(p) * F.K;
        for (int c : pr.base)
            F.slotsOfCell[size_t(c)].push_back(at);
        for (int b = 0; b < kPosBuckets; ++b)
            for (int c : pr.pos[b])
                F.slotsOfCell[size_t(c)].push_back(at + 1 + b);
        for (size_t t = 0; t < T; ++t)
            for (size_t code = 0; code < pr.tokenKey[t].size(); ++code)
                F.slotsOfCell[size_t(pr.tokenKey[t][code])].push_back(at + slotBase[t] + int32_t(code));
    }
    return F;
}

// A chunk's accumulators by id, made on first use (a chunk of consecutive sequences touches
// few of a block's profiles).
template <class Acc>
struct Sparse {
    std::vector<int32_t> at;
    std::vector<int32_t> ids;
    std::vector<Acc> accs;
    explicit Sparse(size_t n) : at(n, -1) {}
    Acc& operator[](int32_t id) {
        int32_t& a = at[size_t(id)];
        if (a < 0) {
            a = int32_t(accs.size());
            ids.push_back(id);
            accs.emplace_back();
        }
        return accs[size_t(a)];
    }
};

// The chunks' accumulators summed into one array of n (in chunk order; any order gives the
// same figures).
template <class Acc>
std::vector<Acc> gather(std::vector<std::unique_ptr<Sparse<Acc>>>& parts, size_t n) {
    std::vector<Acc> out(n);
    std::vector<char> seen(n, 0);
    for (auto& part : parts) {
        if (!part)
            continue;
        for (size_t j = 0; j < part->ids.size(); ++j) {
            const size_t id = size_t(part->ids[j]);
            if (seen[id]) {
                out[id].merge(part->accs[j]);
            } else {
                out[id] = std::move(part->accs[j]);
                seen[id] = 1;
            }
        }
        part.reset();
    }
    return out;
}

// Fine accumulators into their profiles' slots, then slots into cells.
template <class Acc>
std::vector<Acc> rollUp(const Fine& F, std::vector<Acc>& fine, std::vector<Acc>& slots, int threads) {
    const size_t P = fine.empty() ? 0 : F.fineOfProfile.size();   // none: a sequence metric
    parallelChunks(P, std::min(P, chunksFor(threads) * 4), threads, [&](size_t, size_t b, size_t e) {
        for (size_t p = b; p < e; ++p)
            for (int32_t f : F.fineOfProfile[p]) {
                const int* sl = F.slots(F.comboOfFine[size_t(f)]);
                for (int j = 0; j < F.W && sl[j] >= 0; ++j)
                    slots[p * size_t(F.K) + size_t(sl[j])].merge(fine[size_t(f)]);
                fine[size_t(f)] = Acc();
            }
    });
    const size_t C = F.slotsOfCell.size();
    std::vector<Acc> cells(C);
    parallelChunks(C, std::min(C, chunksFor(threads) * 4), threads, [&](size_t, size_t b, size_t e) {
        for (size_t c = b; c < e; ++c)
            for (int32_t slot : F.slotsOfCell[c])
                cells[c].merge(slots[size_t(slot)]);
    });
    return cells;
}

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
                    size_t j = i + 1;
                    while (j < t1 && F.fineOf[j] == f)
                        ++j;
                    RunAcc& d = (*fine)[f];
                    d.tokens += j - i;
                    RunSums& r = d.run;
                    Partial* slots[kMaxSlotsPerCombo];
                    int nSlots = 0;
                    const int* sl = F.slots(F.comboOfFine[size_t(f)]);
                    for (int k = 0; k < F.W && sl[k] >= 0; ++k)
                        slots[nSlots++] = &scratch.at(sl[k]);
                    for (; i < j; ++i) {
                        const double a = run.lpTrain[i], q = run.lpInf[i];
                        if (isMissing(a) || isMissing(q) || !std::isfinite(a) || !std::isfinite(q)) {
                            ((isMissing(a) || isMissing(q)) ? r.missing : r.nonfinite)++;
                            continue;
                        }
                        const double w = det::exp(a - q), pa = det::exp(a), pq = det::exp(q);
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
                            ++slots[k]->n;
                            slots[k]->sum += q - a;
                        }
                    }
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
                    size_t j = i + 1;
                    while (j < t1 && F.fineOf[j] == f)
                        ++j;
                    Segment g{values->values.data(), i, j, t0, &run.ids[s], L.stepOf[s], {}, 0};
                    const int* sl = F.slots(F.comboOfFine[size_t(f)]);
                    for (int k = 0; k < F.W && sl[k] >= 0; ++k)
                        g.slots[g.nSlots++] = &scratch.at(sl[k]);
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
