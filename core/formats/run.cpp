#include "core/formats/run.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace kcx {

int SliceTable::keyIndex(const std::string& key) const {
    for (size_t k = 0; k < keys.size(); ++k)
        if (keys[k] == key)
            return int(k);
    return -1;
}

const std::string* SliceTable::label(size_t s, size_t k) const {
    const int32_t code = codes[s * keys.size() + k];
    return code < 0 ? nullptr : &values[k][size_t(code)];
}

std::optional<int64_t> stepNumber(std::string_view label) {
    if (label.empty() || label.size() > 18 || (label.size() > 1 && label[0] == '0'))
        return std::nullopt;
    int64_t v = 0;
    for (char c : label) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

std::vector<int64_t> Run::steps() const {
    const int k = slices.keyIndex(kStepKey);
    if (k < 0)
        return {};
    std::vector<int64_t> number(slices.values[size_t(k)].size());
    for (size_t v = 0; v < number.size(); ++v) {
        const auto step = stepNumber(slices.values[size_t(k)][v]);
        if (!step)
            return {};
        number[v] = *step;
    }
    std::vector<int64_t> out(sequenceCount(), -1);
    for (size_t s = 0; s < out.size(); ++s) {
        const int32_t code = slices.codes[s * slices.keys.size() + size_t(k)];
        if (code >= 0)
            out[s] = number[size_t(code)];
    }
    return out;
}

size_t Run::maxLength() const {
    size_t m = 0;
    for (size_t s = 0; s < sequenceCount(); ++s)
        m = std::max(m, seqLength(s));
    return m;
}

std::string_view Run::tokenText(size_t i) const {
    if (textOffsets.empty())
        return {};
    return std::string_view(textPool).substr(textOffsets[i], textOffsets[i + 1] - textOffsets[i]);
}

size_t Run::sequenceOf(size_t tokenIndex) const {
    // offsets is non-decreasing; the sequence is the last s with offsets[s] <= i < offsets[s+1].
    const auto it = std::upper_bound(offsets.begin(), offsets.end(), int64_t(tokenIndex));
    return size_t(it - offsets.begin()) - 1;
}

size_t Run::approxBytes() const {
    size_t b = offsets.size() * 8 + tokens.size() * 4 + lpTrain.bytes() + lpInf.bytes();
    for (const TopK* t : {&topkTrain, &topkInf})
        b += t->ids.size() * 4 + t->logp.bytes();
    b += logits.rows.size() * 8 + logits.train.bytes() + logits.inf.bytes();
    b += (rewardTrain.size() + rewardInf.size()) * 8 + slices.codes.size() * 4;
    b += textPool.size() + textOffsets.size() * 8;
    for (const auto& id : ids)
        b += id.size() + sizeof(std::string);
    return b;
}

void Run::checkInvariants() const {
    auto fail = [](const std::string& what) { throw std::logic_error("run invariant: " + what); };
    const size_t n = ids.size(), m = tokens.size();
    if (offsets.size() != n + 1)
        fail("offsets has N+1 entries");
    if (offsets[0] != 0 || size_t(offsets[n]) != m)
        fail("offsets span the tokens");
    for (size_t s = 0; s < n; ++s)
        if (offsets[s + 1] < offsets[s])
            fail("offsets non-decreasing");
    if (lpTrain.size() != m || lpInf.size() != m)
        fail("log-prob columns have M entries");
    for (const TopK* t : {&topkTrain, &topkInf})
        if (t->present() && (t->ids.size() != m * size_t(t->k) || t->logp.size() != m * size_t(t->k)))
            fail("top-k has M*k entries");
    if (logits.present()) {
        const size_t p = logits.rows.size(), v = size_t(logits.vocab);
        if (logits.train.size() != p * v || logits.inf.size() != p * v)
            fail("logits have P*V entries");
        for (size_t i = 0; i < p; ++i)
            if (logits.rows[i] < 0 || size_t(logits.rows[i]) >= m || (i && logits.rows[i] <= logits.rows[i - 1]))
                fail("logits rows ascending within the tokens");
    }
    if ((!rewardTrain.empty() && rewardTrain.size() != n) || (!rewardInf.empty() && rewardInf.size() != n))
        fail("rewards have N entries");
    if (slices.codes.size() != n * slices.keys.size() || slices.values.size() != slices.keys.size())
        fail("slice codes are N*K");
    if (!runtime.empty() && runtime.size() != n)
        fail("runtime has N entries");
    if (!textOffsets.empty() && textOffsets.size() != m + 1)
        fail("text offsets have M+1 entries");
}

namespace {

// Copies the rows [begin, end) × width of each chosen range into a new column of the same type.
// The ranges as one [begin, end) when each starts where the one before ends (a block of
// consecutive sequences: kcx summarize's blocks, a step's sequences when the run is in step
// order): the subset then shares the run's storage instead of copying it.
std::optional<std::pair<size_t, size_t>> contiguous(const std::vector<std::pair<size_t, size_t>>& ranges) {
    if (ranges.empty())
        return std::nullopt;
    for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first != ranges[i - 1].second)
            return std::nullopt;
    return std::pair{ranges.front().first, ranges.back().second};
}

Column subsetColumn(const Column& c, const std::vector<std::pair<size_t, size_t>>& ranges, size_t width) {
    if (c.empty())
        return c.slice(0, 0);   // empty, of the same type
    if (auto r = contiguous(ranges))
        return c.slice(r->first * width, (r->second - r->first) * width);
    return c.visit([&](auto all) {
        using T = std::remove_cv_t<typename decltype(all)::element_type>;
        std::vector<T> out;
        for (auto [b, e] : ranges)
            out.insert(out.end(), all.begin() + std::ptrdiff_t(b * width), all.begin() + std::ptrdiff_t(e * width));
        return Column(Array<T>(std::move(out)));
    });
}

template <class T>
Array<T> subsetArray(const Array<T>& a, const std::vector<std::pair<size_t, size_t>>& ranges, size_t width) {
    if (a.empty())
        return Array<T>();
    if (auto r = contiguous(ranges))
        return a.slice(r->first * width, (r->second - r->first) * width);
    std::vector<T> out;
    for (auto [b, e] : ranges)
        out.insert(out.end(), a.begin() + b * width, a.begin() + e * width);
    return Array<T>(std::move(out));
}

}  // namespace

Run subsetRun(const Run& run, const std::vector<size_t>& sequences) {
    Run out;
    out.path = run.path;
    out.header = run.header;
    std::vector<std::pair<size_t, size_t>> ranges;   // token ranges kept
    std::vector<int64_t> offsets{0};
    for (size_t s : sequences) {
        out.ids.push_back(run.ids[s]);
        ranges.emplace_back(run.seqBegin(s), run.seqEnd(s));
        offsets.push_back(offsets.back() + int64_t(run.seqLength(s)));
    }
    out.offsets = Array<int64_t>(std::move(offsets));
    out.tokens = subsetArray(run.tokens, ranges, 1);
    out.lpTrain = subsetColumn(run.lpTrain, ranges, 1);
    out.lpInf = subsetColumn(run.lpInf, ranges, 1);
    for (auto [from, to] : {std::pair{&run.topkTrain, &out.topkTrain}, std::pair{&run.topkInf, &out.topkInf}})
        if (from->present()) {
            to->k = from->k;
            to->ids = subsetArray(from->ids, ranges, size_t(from->k));
            to->logp = subsetColumn(from->logp, ranges, size_t(from->k));
        }
    if (run.logits.present()) {
        // Rows of the kept tokens, renumbered into the new token order.
        std::vector<int64_t> rows;
        std::vector<std::pair<size_t, size_t>> rowRanges;
        size_t base = 0;
        for (auto [b, e] : ranges) {
            const auto* first = std::lower_bound(run.logits.rows.begin(), run.logits.rows.end(), int64_t(b));
            const auto* last = std::lower_bound(run.logits.rows.begin(), run.logits.rows.end(), int64_t(e));
            for (const auto* r = first; r != last; ++r)
                rows.push_back(int64_t(base) + (*r - int64_t(b)));
            rowRanges.emplace_back(size_t(first - run.logits.rows.begin()), size_t(last - run.logits.rows.begin()));
            base += e - b;
        }
        if (!rows.empty()) {
            out.logits.vocab = run.logits.vocab;
            out.logits.rows = Array<int64_t>(std::move(rows));
            out.logits.train = subsetColumn(run.logits.train, rowRanges, size_t(run.logits.vocab));
            out.logits.inf = subsetColumn(run.logits.inf, rowRanges, size_t(run.logits.vocab));
        }
    }
    for (auto [from, to] : {std::pair{&run.rewardTrain, &out.rewardTrain}, std::pair{&run.rewardInf, &out.rewardInf}})
        if (!from->empty())
            for (size_t s : sequences)
                to->push_back((*from)[s]);
    out.slices.keys = run.slices.keys;
    out.slices.values = run.slices.values;
    const size_t K = run.slices.keys.size();
    for (size_t s : sequences)
        out.slices.codes.insert(out.slices.codes.end(), run.slices.codes.begin() + std::ptrdiff_t(s * K),
                                run.slices.codes.begin() + std::ptrdiff_t((s + 1) * K));
    if (!run.runtime.empty())
        for (size_t s : sequences)
            out.runtime.push_back(run.runtime[s]);
    if (run.hasText()) {
        out.textOffsets.push_back(0);
        for (auto [b, e] : ranges)
            for (size_t i = b; i < e; ++i) {
                out.textPool += run.tokenText(i);
                out.textOffsets.push_back(out.textPool.size());
            }
    }
    out.checkInvariants();
    return out;
}

}  // namespace kcx
