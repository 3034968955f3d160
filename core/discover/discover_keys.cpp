#include "core/discover/discover_keys.h"

#include <algorithm>

namespace kcx::discover_detail {


void addPositionKeys(const Run& run, size_t maxValues, std::vector<Key>& keys) {
    const int64_t longest = int64_t(run.maxLength());
    const size_t M = run.tokenCount();
    auto make = [&](int64_t offset, int64_t width) {
        const int64_t n = longest > offset ? (longest - offset + width - 1) / width : 0;
        if (n < 2 || size_t(n) > maxValues || n > 127)
            return;
        Key k;
        k.name = "positions";
        k.token = true;
        k.position = true;
        for (int64_t a = 0; a < n; ++a) {
            const int64_t from = offset + a * width, to = from + width;
            k.ranges.emplace_back(from, to);
            std::string text = "[";   // built in steps: GCC 12 warns (-Wrestrict) on "[" + to_string(…)
            text += std::to_string(from);
            text += ", ";
            text += std::to_string(to);
            text += ")";
            k.values.push_back(std::move(text));
        }
        k.ownTok.assign(M, int8_t(-1));
        for (size_t s = 0; s < run.sequenceCount(); ++s)
            for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
                const int64_t pos = int64_t(i - run.seqBegin(s));
                if (pos >= offset)
                    k.ownTok[i] = int8_t((pos - offset) / width);
            }
        k.tok = k.ownTok.data();
        keys.push_back(std::move(k));
    };
    for (int64_t w = 1; w < longest; w *= 2) {
        make(0, w);
        make(w, 2 * w);
    }
}

void addStepKeys(const Run& run, std::vector<Key>& keys) {
    const std::vector<int64_t> seqStep = run.steps();
    std::vector<int64_t> steps;
    for (int64_t s : seqStep)
        if (s >= 0)
            steps.push_back(s);
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    if (steps.size() < 3)
        return;
    std::vector<int64_t> from;
    const size_t places = std::min<size_t>(8, steps.size() - 1);
    for (size_t j = 1; j <= places; ++j)
        from.push_back(steps[j * (steps.size() - 1) / places]);
    from.erase(std::unique(from.begin(), from.end()), from.end());
    for (int64_t f : from) {
        Key k;
        k.name = kStepKey;
        k.values = {"≥ " + std::to_string(f)};
        std::vector<std::string> labels;
        for (int64_t s : steps)
            if (s >= f)
                labels.push_back(std::to_string(s));
        k.anyOf = {labels};
        k.seq.resize(run.sequenceCount());
        for (size_t s = 0; s < k.seq.size(); ++s)
            k.seq[s] = seqStep[s] >= f ? 0 : -1;
        keys.push_back(std::move(k));
    }
}

bool exclusive(const Key& a, const Key& b) {
    return (a.position && b.position) || (!a.anyOf.empty() && !b.anyOf.empty());
}

}  // namespace kcx::discover_detail
