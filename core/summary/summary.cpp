#include "core/summary/summary.h"

#include "core/metrics/derived_slices.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace kcx {

bool worseThan(double value, int64_t step, const std::string& id, int64_t position, const WorstEntry& b) {
    const double x = std::fabs(value), y = std::fabs(b.value);
    if (x != y)
        return x > y;
    if (value != b.value)
        return value > b.value;
    if (step != b.step)
        return step < b.step;
    if (id != b.id)
        return id < b.id;
    return position < b.position;
}

bool worseThan(const WorstEntry& a, const WorstEntry& b) { return worseThan(a.value, a.step, a.id, a.position, b); }

void MetricCell::offerWorst(const WorstEntry& e) {
    if (worst.size() >= kWorstKept && !worseThan(e, worst.back()))
        return;
    worst.insert(std::upper_bound(worst.begin(), worst.end(), e,
                                  [](const WorstEntry& a, const WorstEntry& b) { return worseThan(a, b); }),
                 e);
    if (worst.size() > kWorstKept)
        worst.pop_back();
}

void MetricCell::merge(const MetricCell& o) {
    if (o.count) {
        min = count ? std::min(min, o.min) : o.min;
        max = count ? std::max(max, o.max) : o.max;
    }
    count += o.count;
    missing += o.missing;
    nonfinite += o.nonfinite;
    sum.merge(o.sum);
    sumSq.merge(o.sumSq);
    sketch.merge(o.sketch);
    sequences += o.sequences;
    seqSumSq.merge(o.seqSumSq);
    seqCountSq.merge(o.seqCountSq);
    seqSumCount.merge(o.seqSumCount);
    seqMax.merge(o.seqMax);
    for (const WorstEntry& e : o.worst)
        offerWorst(e);
}

bool MetricCell::operator==(const MetricCell& o) const {
    return count == o.count && missing == o.missing && nonfinite == o.nonfinite && sum == o.sum &&
           sumSq == o.sumSq && (count == 0 || (min == o.min && max == o.max)) && sketch == o.sketch &&
           sequences == o.sequences && seqSumSq == o.seqSumSq && seqCountSq == o.seqCountSq &&
           seqSumCount == o.seqSumCount && seqMax == o.seqMax && worst == o.worst;
}

void RunSums::merge(const RunSums& o) {
    pairs += o.pairs;
    ratios += o.ratios;
    missing += o.missing;
    nonfinite += o.nonfinite;
    sequences += o.sequences;
    sw.merge(o.sw);
    sw2.merge(o.sw2);
    sp.merge(o.sp);
    sq.merge(o.sq);
    sp2.merge(o.sp2);
    sq2.merge(o.sq2);
    spq.merge(o.spq);
    seqMeans.merge(o.seqMeans);
}

bool RunSums::operator==(const RunSums& o) const {
    return pairs == o.pairs && ratios == o.ratios && missing == o.missing && nonfinite == o.nonfinite &&
           sequences == o.sequences && sw == o.sw && sw2 == o.sw2 && sp == o.sp && sq == o.sq && sp2 == o.sp2 &&
           sq2 == o.sq2 && spq == o.spq && seqMeans == o.seqMeans;
}

void CellData::merge(const CellData& o) {
    sequences += o.sequences;
    tokens += o.tokens;
    for (const auto& [name, m] : o.metrics)
        metrics[name].merge(m);
    run.merge(o.run);
}

bool CellData::operator==(const CellData& o) const {
    return sequences == o.sequences && tokens == o.tokens && metrics == o.metrics && run == o.run;
}

bool lacksInputs(const MetricInfo& info, bool hasTopK, bool hasLogits) {
    if (info.level != MetricLevel::Token)
        return false;
    return (info.needs == "logits" && !hasLogits) || (info.needs == "topk|logits" && !hasTopK && !hasLogits);
}

const MetricCell* RunSummary::metric(const CellData& d, const std::string& name, MetricCell& implied) const {
    if (auto it = d.metrics.find(name); it != d.metrics.end())
        return &it->second;
    const MetricInfo* info = findMetric(name);
    if (!info || !lacks(*info))
        return nullptr;
    implied = MetricCell();
    implied.missing = d.tokens;
    return &implied;
}

std::vector<std::string> RunSummary::takeHead(const RunSummary& o) {
    if (ppoClip != o.ppoClip)
        throw std::invalid_argument("the summaries were made with different --ppo-clip (" + std::to_string(ppoClip) +
                                    " and " + std::to_string(o.ppoClip) + ")");
    std::set<std::string> hashes, paths;
    for (const SummaryInput& i : inputs) {
        hashes.insert(i.sha256);
        paths.insert(i.path);
    }
    for (const SummaryInput& i : o.inputs) {
        if (hashes.count(i.sha256))
            throw std::invalid_argument("input '" + i.path + "' (sha256 " + i.sha256.substr(0, 12) +
                                        "…) is in both summaries: merging would count it twice");
        if (paths.count(i.path))
            throw std::invalid_argument("the path '" + i.path + "' is in both summaries with different contents");
    }
    // A shard without top-k or logits counts those metrics as missing, as the whole run does:
    // a metric one side lacks inputs for and the merged summary does not gets its entries,
    // every token of the side's cells missing.
    const bool topK = hasTopK || o.hasTopK, logits = hasLogits || o.hasLogits;
    std::vector<std::string> gained;   // lacking in o, not in the result
    for (const MetricInfo& info : metricCatalog()) {
        if (lacksInputs(info, topK, logits))
            continue;
        if (lacks(info))
            for (auto& [key, cell] : cells)
                cell.metrics[info.name].missing += cell.tokens;
        if (o.lacks(info))
            gained.push_back(info.name);
    }
    hasTopK = topK;
    hasLogits = logits;
    hasRewards = hasRewards || o.hasRewards;
    inputs.insert(inputs.end(), o.inputs.begin(), o.inputs.end());
    std::sort(inputs.begin(), inputs.end());
    return gained;
}

void RunSummary::merge(const RunSummary& o) {
    const std::vector<std::string> gained = takeHead(o);
    for (const auto& [key, cell] : o.cells) {
        CellData& into = cells[key];
        into.merge(cell);
        for (const std::string& name : gained)
            into.metrics[name].missing += cell.tokens;
    }
}

bool RunSummary::mergeHead(const RunSummary& o) {
    // A part whose data differ (top-k, logits) changes which metrics the cells merged so far
    // count as missing: merge() it once they are all in.
    if (o.hasTopK != hasTopK || o.hasLogits != hasLogits)
        return false;
    takeHead(o);   // no metric gained: the same data
    return true;
}

void RunSummary::mergeCells(const std::vector<RunSummary>& parts) {
    using It = std::map<CellKey, CellData>::const_iterator;
    std::vector<It> at;
    for (const RunSummary& p : parts)
        at.push_back(p.cells.begin());
    auto hint = cells.begin();
    for (;;) {
        const CellKey* next = nullptr;   // the least key the parts have left
        for (size_t k = 0; k < parts.size(); ++k)
            if (at[k] != parts[k].cells.end() && (!next || at[k]->first < *next))
                next = &at[k]->first;
        if (!next)
            return;
        const auto into = cells.try_emplace(hint, *next);
        const CellKey& key = into->first;
        for (size_t k = 0; k < parts.size(); ++k)
            if (at[k] != parts[k].cells.end() && at[k]->first == key) {
                into->second.merge(at[k]->second);
                ++at[k];
            }
        hint = std::next(into);
    }
}

std::pair<uint64_t, uint64_t> RunSummary::sequencesAndTokens() const {
    uint64_t sequences = 0, tokens = 0;
    for (const auto& [key, cell] : cells)
        if (key.key.empty() && key.pos < 0) {
            sequences += cell.sequences;
            tokens += cell.tokens;
        }
    return {sequences, tokens};
}

uint64_t RunSummary::sequences() const { return sequencesAndTokens().first; }

uint64_t RunSummary::tokens() const { return sequencesAndTokens().second; }

std::vector<int64_t> RunSummary::steps() const {
    std::vector<int64_t> s;   // the cells are ordered by step first
    for (const auto& [key, cell] : cells)
        if (s.empty() || s.back() != key.step)
            s.push_back(key.step);
    return s;
}

std::optional<CellData> RunSummary::total(const std::string& key, const std::string& value, int pos) const {
    std::optional<CellData> t;
    for (const auto& [k, cell] : cells)
        if (k.key == key && k.value == value && k.pos == pos) {
            if (!t)
                t = cell;
            else
                t->merge(cell);
        }
    return t;
}

double essOf(const RunSums& s) {
    const double sw = s.sw.value(), sw2 = s.sw2.value();
    return s.ratios && sw2 > 0 ? sw * sw / (double(s.ratios) * sw2) : std::numeric_limits<double>::quiet_NaN();
}

double probPearsonOf(const RunSums& s) {
    if (s.pairs < 2)
        return std::numeric_limits<double>::quiet_NaN();
    // From raw moments in long double: n Σpq − Σp Σq over the square roots of the same for p
    // and q. The sums are exact; the differences keep 64 bits.
    const long double n = s.pairs, sp = s.sp.value(), sq = s.sq.value();
    const long double cov = n * (long double)s.spq.value() - sp * sq;
    const long double vp = n * (long double)s.sp2.value() - sp * sp;
    const long double vq = n * (long double)s.sq2.value() - sq * sq;
    if (!(vp > 0 && vq > 0))
        return std::numeric_limits<double>::quiet_NaN();
    return double(cov / std::sqrt(vp * vq));
}

double logPplDiffOf(const RunSums& s) {
    return s.sequences ? s.seqMeans.value() / double(s.sequences) : std::numeric_limits<double>::quiet_NaN();
}

const std::vector<std::string>& positionBucketNames() { return findDerivedKey("derived.pos_bucket")->values; }

std::optional<double> sketchQuantile(const MetricCell& c, double q) {
    if (c.count == 0)
        return std::nullopt;
    const uint64_t n = c.count;
    const double h = double(n - 1) * q;
    const uint64_t lo = std::min<uint64_t>(uint64_t(std::floor(h)), n - 1);
    const double frac = h - double(lo);
    auto at = [&](uint64_t r) {
        if (r == 0)
            return c.min;
        if (r >= n - 1)
            return c.max;
        return std::clamp(c.sketch.valueAtRank(r), c.min, c.max);
    };
    const double a = at(lo);
    if (frac == 0 || lo + 1 >= n)
        return a;
    return a + frac * (at(lo + 1) - a);
}

}  // namespace kcx
