#include "core/metrics/quantile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "core/base/parallel.h"

namespace kcx {
namespace {

constexpr int kBits = 16;
constexpr size_t kBuckets = size_t(1) << kBits;

// Maps a double to an unsigned key with the same order (negative values flipped).
inline uint64_t orderKey(double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return (b >> 63) ? ~b : (b | (uint64_t(1) << 63));
}
inline size_t bucketOf(double d) { return size_t(orderKey(d) >> (64 - kBits)); }

struct Histogram {
    std::vector<uint64_t> cumulative;   // kBuckets + 1: values in buckets before b
    uint64_t count = 0;
};

Histogram histogram(std::span<const double> values, int threads) {
    const int t = resolveThreads(threads);
    const size_t chunks = values.size() < (size_t(1) << 16) ? 1 : size_t(t);
    std::vector<std::vector<uint64_t>> partial(chunks, std::vector<uint64_t>(kBuckets, 0));
    parallelChunks(values.size(), chunks, t, [&](size_t c, size_t b, size_t e) {
        uint64_t* h = partial[c].data();
        for (size_t i = b; i < e; ++i) {
            const double v = values[i];
            if (v == v)
                ++h[bucketOf(v)];
        }
    });
    Histogram out;
    out.cumulative.assign(kBuckets + 1, 0);
    for (size_t b = 0; b < kBuckets; ++b) {
        uint64_t s = 0;
        for (const auto& p : partial)
            s += p[b];
        out.cumulative[b + 1] = out.cumulative[b] + s;
    }
    out.count = out.cumulative[kBuckets];
    return out;
}

// Collects the values of the wanted buckets (a sorted list) in one parallel pass.
std::map<size_t, std::vector<double>> collect(std::span<const double> values,
                                              const std::vector<size_t>& wanted, int threads) {
    const int t = resolveThreads(threads);
    const size_t chunks = values.size() < (size_t(1) << 16) ? 1 : size_t(t);
    std::vector<char> isWanted(kBuckets, 0);
    for (size_t b : wanted)
        isWanted[b] = 1;
    std::vector<std::map<size_t, std::vector<double>>> partial(chunks);
    parallelChunks(values.size(), chunks, t, [&](size_t c, size_t b, size_t e) {
        auto& mine = partial[c];
        for (size_t i = b; i < e; ++i) {
            const double v = values[i];
            if (v == v) {
                const size_t bucket = bucketOf(v);
                if (isWanted[bucket])
                    mine[bucket].push_back(v);
            }
        }
    });
    std::map<size_t, std::vector<double>> out;
    for (auto& p : partial)
        for (auto& [bucket, vals] : p)
            out[bucket].insert(out[bucket].end(), vals.begin(), vals.end());
    return out;
}

// The order statistics (0-based ranks) of the non-NaN values.
std::vector<double> selectRanks(std::span<const double> values, const Histogram& h,
                                const std::vector<uint64_t>& ranks, int threads) {
    std::vector<size_t> bucketOfRank(ranks.size());
    std::vector<size_t> wanted;
    for (size_t i = 0; i < ranks.size(); ++i) {
        const auto it = std::upper_bound(h.cumulative.begin(), h.cumulative.end(), ranks[i]);
        bucketOfRank[i] = size_t(it - h.cumulative.begin()) - 1;
        wanted.push_back(bucketOfRank[i]);
    }
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    auto buckets = collect(values, wanted, threads);
    std::vector<double> out(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
        auto& vals = buckets[bucketOfRank[i]];
        const size_t local = size_t(ranks[i] - h.cumulative[bucketOfRank[i]]);
        std::nth_element(vals.begin(), vals.begin() + ptrdiff_t(local), vals.end());
        out[i] = vals[local];
    }
    return out;
}

}  // namespace

std::vector<double> quantilesType7(std::span<const double> values, std::span<const double> qs,
                                   int threads) {
    const Histogram h = histogram(values, threads);
    if (h.count == 0)
        return {};
    const uint64_t n = h.count;
    std::vector<uint64_t> ranks;
    std::vector<double> fractions;
    for (double q : qs) {
        const double hpos = double(n - 1) * std::clamp(q, 0.0, 1.0);
        const uint64_t lo = std::min<uint64_t>(uint64_t(std::floor(hpos)), n - 1);
        ranks.push_back(lo);
        ranks.push_back(std::min<uint64_t>(lo + 1, n - 1));
        fractions.push_back(hpos - double(lo));
    }
    const std::vector<double> xs = selectRanks(values, h, ranks, threads);
    std::vector<double> out;
    for (size_t i = 0; i < qs.size(); ++i) {
        const double a = xs[2 * i], b = xs[2 * i + 1], f = fractions[i];
        // numpy's _lerp: a + (b - a) * f, switching form for f >= 0.5 to stay monotone.
        out.push_back(f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f);
    }
    return out;
}

double orderStatistic(std::span<const double> values, size_t k, int threads) {
    const Histogram h = histogram(values, threads);
    return selectRanks(values, h, {uint64_t(k)}, threads)[0];
}

std::vector<double> orderStatistics(std::span<const double> values, std::span<const uint64_t> ranks, int threads) {
    if (ranks.empty())
        return {};
    const Histogram h = histogram(values, threads);
    return selectRanks(values, h, std::vector<uint64_t>(ranks.begin(), ranks.end()), threads);
}

void BucketedValues::build(std::span<double> values) {
    std::vector<uint64_t> next(kBuckets, 0), end(kBuckets, 0);
    for (double v : values)
        ++end[bucketOf(v)];
    bucket_.clear();
    begin_.clear();
    uint64_t at = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
        next[b] = at;
        if (end[b]) {
            bucket_.push_back(uint16_t(b));
            begin_.push_back(at);
        }
        at += end[b];
        end[b] = at;
    }
    begin_.push_back(at);
    // One in-place permutation (American flag sort, one digit): each value is carried along
    // the cycle of displaced values until one belongs where it was taken from.
    for (uint16_t b : bucket_)
        while (next[b] < end[b]) {
            double v = values[next[b]];
            size_t d = bucketOf(v);
            while (d != b) {
                std::swap(v, values[next[d]++]);
                d = bucketOf(v);
            }
            values[next[b]++] = v;
        }
}

// The first non-empty bucket at or above the level's; `inside` when it is the level's own.
size_t BucketedValues::find(double level, bool& inside) const {
    const auto b = uint16_t(bucketOf(level));
    const size_t i = size_t(std::lower_bound(bucket_.begin(), bucket_.end(), b) - bucket_.begin());
    inside = i < bucket_.size() && bucket_[i] == b;
    return i;
}

uint64_t BucketedValues::countAbove(std::span<const double> values, double level) const {
    if (level != level)
        return 0;
    if (level == 0)
        level = 0.0;   // +0: -0 equals it but lies in the bucket below
    bool inside = false;
    const size_t i = find(level, inside);
    const uint64_t n = begin_.back();
    if (!inside)
        return n - begin_[i];
    const auto from = values.begin() + ptrdiff_t(begin_[i]), to = values.begin() + ptrdiff_t(begin_[i + 1]);
    return n - begin_[i + 1] + uint64_t(std::count_if(from, to, [&](double x) { return x > level; }));
}

uint64_t BucketedValues::countBelow(std::span<const double> values, double level) const {
    if (level != level)
        return 0;
    if (level == 0)
        level = -0.0;   // -0: +0 equals it but lies in the bucket above
    bool inside = false;
    const size_t i = find(level, inside);
    if (!inside)
        return begin_[i];
    const auto from = values.begin() + ptrdiff_t(begin_[i]), to = values.begin() + ptrdiff_t(begin_[i + 1]);
    return begin_[i] + uint64_t(std::count_if(from, to, [&](double x) { return x < level; }));
}

}  // namespace kcx
