// The layout kcx summarize adds a run's tokens into (summary_build.cpp): the cells a
// sequence's tokens go to, per "profile" of sequence-level labels, and the finest cells of a
// block with their slots and rolling up. Private to core/summary.
#pragma once

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <vector>

#include "core/base/parallel.h"
#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics.h"
#include "core/summary/summary.h"

namespace kcx::summary_layout {

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

Layout makeLayout(const Run& run, MetricEngine& engine);

inline size_t chunksFor(int threads) { return size_t(std::max(1, resolveThreads(threads))) * 2; }

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

Fine makeFine(const Run& run, const Layout& L);

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

}  // namespace kcx::summary_layout
