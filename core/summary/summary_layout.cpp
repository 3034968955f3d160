// The layout kcx summarize adds a run's tokens into: the cells of each profile of
// sequence-level labels (makeLayout), and the finest cells of a block (makeFine).
#include "core/summary/summary_layout.h"

#include <stdexcept>

namespace kcx::summary_layout {

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

}  // namespace kcx::summary_layout
