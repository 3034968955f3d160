#include "core/metrics/quantile.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

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

// The keys the selection works on: orderKey(v) - base, shifted left so that the range of
// the values fills all 64 bits. Order and distinctness are kept, and when the caller knows
// the minimum and maximum the top 16 bits split that range, not the whole line of doubles:
// a ratio of two near-equal kernels (all values within 1 % of 1.0) spreads over thousands
// of top-level buckets instead of crowding into one that takes further passes to narrow.
struct KeyMap {
    uint64_t base = 0;
    int shift = 0;
    uint64_t operator()(double v) const { return (orderKey(v) - base) << shift; }
};

// One parallel pass over the values: body(chunk, key, value) for every value that is not
// NaN, `chunks` of them (one below 65,536 values, else one per thread).
size_t passChunks(const ValueSource& values, int threads) {
    return values.size < (size_t(1) << 16) ? 1 : size_t(resolveThreads(threads));
}
template <class Body>
void forEachKey(const ValueSource& values, const KeyMap& map, size_t chunks, int threads, Body&& body) {
    if (!values.fill) {
        const double* x = values.data;
        parallelChunks(values.size, chunks, resolveThreads(threads), [&](size_t c, size_t b, size_t e) {
            for (size_t i = b; i < e; ++i) {
                const double v = x[i];
                if (v == v)
                    body(c, map(v), v);
            }
        });
        return;
    }
    // Computed values: block by block into a buffer that stays in the cache.
    parallelChunks(values.blocks(), chunks, resolveThreads(threads), [&](size_t c, size_t kb, size_t ke) {
        std::vector<double> buffer(kReduceBlock);
        for (size_t k = kb; k < ke; ++k) {
            const size_t b = values.blockBegin(k), e = values.blockBegin(k + 1);
            values.fill(k, b, e, buffer.data());
            for (size_t i = 0; i < e - b; ++i) {
                const double v = buffer[i];
                if (v == v)
                    body(c, map(v), v);
            }
        }
    });
}

struct Histogram {
    std::vector<uint64_t> cumulative;   // kBuckets + 1: values in buckets before b
    uint64_t count = 0;
};

Histogram histogram(const ValueSource& values, const KeyMap& map, int threads) {
    const size_t chunks = passChunks(values, threads);
    std::vector<std::vector<uint64_t>> partial(chunks, std::vector<uint64_t>(kBuckets, 0));
    forEachKey(values, map, chunks, threads, [&](size_t c, uint64_t k, double) { ++partial[c][k >> (64 - kBits)]; });
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

// The double whose key under `map` is k (the inverse of orderKey and of the map).
inline double fromKey(uint64_t key, const KeyMap& map) {
    const uint64_t k = (key >> map.shift) + map.base;
    const uint64_t b = (k >> 63) ? (k & ~(uint64_t(1) << 63)) : ~k;
    double d;
    std::memcpy(&d, &b, sizeof d);
    return d;
}

// A key prefix: the values whose top `bits` key bits are `prefix`.
struct Prefix {
    uint64_t prefix = 0;
    int bits = 0;
    bool operator==(const Prefix&) const = default;
    bool holds(uint64_t key) const { return (key >> (64 - bits)) == prefix; }
};

// At most this many values are copied to select within (8 MB). A larger bucket is split
// again by its next 16 key bits, one counting pass at a time, instead of being copied: the
// ratio of two near-equal kernels (every value near 1.0) or clip_excess (0 or 1) put all
// 20M values in one top-level bucket, and the copy took 160 MB and most of the time.
constexpr uint64_t kCollectMax = uint64_t(1) << 20;

// The top-level buckets the prefixes lie in, as a table: a value outside them is skipped
// with one lookup.
std::vector<char> topBuckets(const std::vector<Prefix>& ps) {
    std::vector<char> out(kBuckets, 0);
    for (const Prefix& p : ps)
        out[size_t(p.prefix >> (p.bits - kBits))] = 1;
    return out;
}

// Counts, among the values under each prefix (a short list), each value of the next 16
// key bits: one parallel pass for all of them.
std::vector<std::vector<uint64_t>> subHistograms(const ValueSource& values, const KeyMap& map,
                                                 const std::vector<Prefix>& ps, int threads) {
    const size_t chunks = passChunks(values, threads);
    std::vector<std::vector<uint64_t>> partial(chunks, std::vector<uint64_t>(ps.size() * kBuckets, 0));
    const std::vector<char> candidate = topBuckets(ps);
    forEachKey(values, map, chunks, threads, [&](size_t c, uint64_t k, double) {
        if (!candidate[k >> (64 - kBits)])
            return;   // most values: one table lookup
        for (size_t w = 0; w < ps.size(); ++w)
            if (ps[w].holds(k))
                ++partial[c][w * kBuckets + ((k >> (64 - ps[w].bits - kBits)) & (kBuckets - 1))];
    });
    std::vector<std::vector<uint64_t>> out(ps.size(), std::vector<uint64_t>(kBuckets, 0));
    for (const auto& part : partial)
        for (size_t w = 0; w < ps.size(); ++w)
            for (size_t b = 0; b < kBuckets; ++b)
                out[w][b] += part[w * kBuckets + b];
    return out;
}

// Collects the values under each prefix (a short list) in one parallel pass.
std::vector<std::vector<double>> collect(const ValueSource& values, const KeyMap& map,
                                         const std::vector<Prefix>& wanted, int threads) {
    const size_t chunks = passChunks(values, threads);
    std::vector<std::vector<std::vector<double>>> partial(chunks, std::vector<std::vector<double>>(wanted.size()));
    const std::vector<char> candidate = topBuckets(wanted);
    forEachKey(values, map, chunks, threads, [&](size_t c, uint64_t k, double v) {
        if (!candidate[k >> (64 - kBits)])
            return;
        for (size_t w = 0; w < wanted.size(); ++w)
            if (wanted[w].holds(k))
                partial[c][w].push_back(v);
    });
    std::vector<std::vector<double>> out(wanted.size());
    for (auto& p : partial)
        for (size_t w = 0; w < wanted.size(); ++w)
            out[w].insert(out[w].end(), p[w].begin(), p[w].end());
    return out;
}

// The order statistics (0-based ranks) of the non-NaN values: the top 16 key bits from the
// histogram, then 16 more at a time while more than kCollectMax values share the prefix;
// the few left are copied and selected with nth_element (or, when all 64 bits are fixed,
// the value is the key's).
std::vector<double> selectRanks(const ValueSource& values, const KeyMap& map, const Histogram& h,
                                const std::vector<uint64_t>& ranks, int threads) {
    // A prefix that leaves no key bit free (or only bits the map's shift keeps zero) holds
    // one value: all ±0 (clip_excess of two near-equal kernels) needs no pass beyond the
    // histogram.
    const auto single = [&](const Prefix& p) { return 64 - p.bits <= map.shift; };
    std::vector<Prefix> prefixOf(ranks.size());
    std::vector<uint64_t> local(ranks.size()), inside(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
        const auto it = std::upper_bound(h.cumulative.begin(), h.cumulative.end(), ranks[i]);
        const size_t b = size_t(it - h.cumulative.begin()) - 1;
        prefixOf[i] = Prefix{b, kBits};
        local[i] = ranks[i] - h.cumulative[b];
        inside[i] = h.cumulative[b + 1] - h.cumulative[b];
    }
    // Narrow every crowded rank one level at a time; ranks under the same prefix (p99 and
    // p99.9 of a ratio near 1) share the pass.
    for (;;) {
        std::vector<Prefix> crowded;
        for (size_t i = 0; i < ranks.size(); ++i)
            if (inside[i] > kCollectMax && !single(prefixOf[i]) &&
                std::find(crowded.begin(), crowded.end(), prefixOf[i]) == crowded.end())
                crowded.push_back(prefixOf[i]);
        if (crowded.empty())
            break;
        const auto subs = subHistograms(values, map, crowded, threads);
        for (size_t i = 0; i < ranks.size(); ++i) {
            const auto at = std::find(crowded.begin(), crowded.end(), prefixOf[i]);
            if (inside[i] <= kCollectMax || at == crowded.end())
                continue;
            const std::vector<uint64_t>& sub = subs[size_t(at - crowded.begin())];
            size_t s = 0;
            while (local[i] >= sub[s]) {
                local[i] -= sub[s];
                ++s;
            }
            inside[i] = sub[s];
            prefixOf[i] = Prefix{(prefixOf[i].prefix << kBits) | s, prefixOf[i].bits + kBits};
        }
    }
    std::vector<Prefix> wanted;
    for (const Prefix& p : prefixOf)
        if (!single(p) && std::find(wanted.begin(), wanted.end(), p) == wanted.end())
            wanted.push_back(p);
    auto buckets = collect(values, map, wanted, threads);
    std::vector<double> out(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
        if (single(prefixOf[i])) {
            out[i] = fromKey(prefixOf[i].prefix << (64 - prefixOf[i].bits), map);   // every value under it is this one
            continue;
        }
        auto& vals = buckets[size_t(std::find(wanted.begin(), wanted.end(), prefixOf[i]) - wanted.begin())];
        // By key, not by <: -0 and +0 may share a bucket under a range map, and their order
        // decides the sign of a zero quantile.
        std::nth_element(vals.begin(), vals.begin() + ptrdiff_t(local[i]), vals.end(),
                         [](double a, double b) { return orderKey(a) < orderKey(b); });
        out[i] = vals[local[i]];
    }
    return out;
}

// Below this many values the selection copies them and uses nth_element: the histogram's
// 1 MB of counts, zeroed and summed on every call, cost 60 times the selection itself for a
// bootstrap over one step's few hundred tokens (kcx steps --aggregate p99 calls this
// thousands of times per step).
constexpr size_t kSmallValues = size_t(1) << 12;

std::vector<double> nonNaN(const ValueSource& values, int threads) {
    std::vector<double> out;
    out.reserve(values.size);
    forEachKey(values, KeyMap{}, 1, threads, [&](size_t, uint64_t, double v) { out.push_back(v); });
    return out;
}

// The same order statistics as selectRanks: by key, so -0 comes before +0.
std::vector<double> selectSmall(std::vector<double>& vals, const std::vector<uint64_t>& ranks) {
    std::vector<double> out(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
        std::nth_element(vals.begin(), vals.begin() + ptrdiff_t(ranks[i]), vals.end(),
                         [](double a, double b) { return orderKey(a) < orderKey(b); });
        out[i] = vals[ranks[i]];
    }
    return out;
}

}  // namespace

size_t ValueSource::blocks() const { return std::max<size_t>(1, std::min(reduceBlocks(size), std::max<size_t>(size, 1))); }
size_t ValueSource::blockBegin(size_t k) const { return size * k / blocks(); }

std::vector<double> quantilesType7(std::span<const double> values, std::span<const double> qs, int threads,
                                   std::optional<std::pair<double, double>> range) {
    return quantilesType7(ValueSource::of(values), qs, threads, range);
}

std::vector<double> quantilesType7(const ValueSource& values, std::span<const double> qs, int threads,
                                   std::optional<std::pair<double, double>> range) {
    KeyMap map;
    if (range && range->first <= range->second) {
        // -0 and +0 compare equal, so a minimum of 0 may stand for either: widen to both.
        const uint64_t lo = orderKey(range->first == 0 ? -0.0 : range->first);
        const uint64_t hi = orderKey(range->second == 0 ? 0.0 : range->second);
        if (lo == hi)   // every value is this one
            return std::vector<double>(qs.size(), range->first);
        map = KeyMap{lo, std::countl_zero(hi - lo)};
    }
    const bool small = values.size <= kSmallValues;
    std::vector<double> copy;
    Histogram h;
    if (small)
        copy = nonNaN(values, threads);
    else
        h = histogram(values, map, threads);
    const uint64_t n = small ? copy.size() : h.count;
    if (n == 0)
        return {};
    std::vector<uint64_t> ranks;
    std::vector<double> fractions;
    for (double q : qs) {
        const double hpos = double(n - 1) * std::clamp(q, 0.0, 1.0);
        const uint64_t lo = std::min<uint64_t>(uint64_t(std::floor(hpos)), n - 1);
        ranks.push_back(lo);
        ranks.push_back(std::min<uint64_t>(lo + 1, n - 1));
        fractions.push_back(hpos - double(lo));
    }
    const std::vector<double> xs = small ? selectSmall(copy, ranks) : selectRanks(values, map, h, ranks, threads);
    std::vector<double> out;
    for (size_t i = 0; i < qs.size(); ++i) {
        const double a = xs[2 * i], b = xs[2 * i + 1], f = fractions[i];
        // numpy's _lerp: a + (b - a) * f, switching form for f >= 0.5 to stay monotone.
        out.push_back(f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f);
    }
    return out;
}

double orderStatistic(std::span<const double> values, size_t k, int threads) {
    const uint64_t rank = k;
    return orderStatistics(values, std::span<const uint64_t>(&rank, 1), threads)[0];
}

std::vector<double> orderStatistics(std::span<const double> values, std::span<const uint64_t> ranks, int threads) {
    if (ranks.empty())
        return {};
    const ValueSource src = ValueSource::of(values);
    if (values.size() <= kSmallValues) {
        std::vector<double> copy = nonNaN(src, threads);
        return selectSmall(copy, std::vector<uint64_t>(ranks.begin(), ranks.end()));
    }
    const Histogram h = histogram(src, KeyMap{}, threads);
    return selectRanks(src, KeyMap{}, h, std::vector<uint64_t>(ranks.begin(), ranks.end()), threads);
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
