// A mergeable quantile sketch with a guaranteed relative error (DDSketch: Masson, Rim and
// Lee, VLDB 2019). Values are counted in logarithmic buckets: bucket i of the positive store
// holds (γ^(i−1), γ^i] with γ = (1 + α)/(1 − α), and a value read back from bucket i is
// 2γ^i/(γ + 1), within α (relatively) of every value the bucket holds. Negative values go
// to a mirrored store by magnitude; zeros are counted apart. Counts are integers, so merging
// is exact, associative and commutative.
//
// α is 0.01 (kRelativeAccuracy). Bucket indices come from det::log (core/base/det_math.h),
// so a value lands in the same bucket on every machine and summaries merge byte for byte.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/leb128.h"

namespace kcx {

inline constexpr double kRelativeAccuracy = 0.01;

namespace sketch_detail {
// log_γ of the mantissa at 4096 steps over [1, 2], and log_γ 2 (sketch.cpp): a value's
// bucket read from its exponent and top 12 mantissa bits, unless a bucket edge falls within
// its step (then det::log decides).
struct LogTable {
    static constexpr int kBits = 12;
    double step[(1 << kBits) + 1];
    double log2;
    LogTable();
};
extern const LogTable kLogTable;
int32_t bucketByLog(double magnitude);
}  // namespace sketch_detail

class Sketch {
public:
    // The bucket of a finite non-zero magnitude (inline: on the path of every value kcx
    // summarize counts).
    static int32_t bucketOf(double magnitude);
    // The same from det::log alone (the definition; bucketOf takes a table shortcut).
    static int32_t bucketOfByLog(double magnitude);
    // The value a bucket stands for (within α of every magnitude it holds).
    static double bucketValue(int32_t index);
    // The bucket's bounds: (lower, upper].
    static std::pair<double, double> bucketBounds(int32_t index);

    // The same with the bucket found once (bucketOf) for adding one value to many sketches:
    // sign 0 for a zero, +1 or −1 with the bucket of the magnitude.
    void addPrepared(int sign, int32_t bucket) {
        if (packed_)
            unpack();
        if (sign == 0)
            ++zero_;
        else
            (sign > 0 ? pos_ : neg_).add(bucket, 1);
    }
    // A finite value (inline: kcx summarize's path for every value).
    void add(double x) {
        if (packed_)
            unpack();
        if (x == 0)
            ++zero_;
        else if (x > 0)
            pos_.add(bucketOf(x), 1);
        else
            neg_.add(bucketOf(-x), 1);
    }
    void addBucket(bool negative, int32_t index, uint64_t n = 1);
    void addZero(uint64_t n = 1) { zero_ += n; }
    void merge(const Sketch& other);

    uint64_t count() const;
    // The value at 0-based rank r of the values in ascending order (r < count()).
    double valueAtRank(uint64_t r) const;
    // How many values are certainly > level, and how many more might be (those in the
    // bucket that holds level).
    std::pair<uint64_t, uint64_t> countAbove(double level) const;
    // How many values are certainly < level, and how many more might be.
    std::pair<uint64_t, uint64_t> countBelow(double level) const;

    // Dense stores: counts_[i] is bucket offset_ + i.
    struct Store {
        int32_t offset = 0;
        std::vector<uint64_t> counts;
        void add(int32_t index, uint64_t n) {
            const size_t at = size_t(int64_t(index) - int64_t(offset));   // huge when below
            if (at < counts.size())
                counts[at] += n;
            else
                grow(index, n);
        }
        void grow(int32_t index, uint64_t n);   // add, outside the counts so far
        void cover(int32_t lo, int32_t hi);   // room for buckets lo..hi (with spare, as add grows)
        uint64_t total() const;
        bool empty() const { return counts.empty(); }
        void trim();   // no zero count at either end
    };
    // Replaces a store with one read whole (the summary reader: trimmed, its final size).
    void setStore(bool negative, Store s);
    // A store, dense and trimmed (decoded when the sketch is packed).
    Store store(bool negative) const;
    uint64_t zeros() const { return zero_; }
    bool operator==(const Sketch& o) const;

    // A sketch read from a binary summary is kept as the file's bytes for its two stores
    // (docs/summaries.md, "The binary container": u entries, s offset, then per entry a count
    // >= 1, or 0 and a run k of empty buckets), checked once by the reader and decoded each time
    // it is walked. A summary of 1,000 steps holds 760,000 stores spanning 75 million buckets:
    // 600 MB dense, 40 MB as they are in the file. Adding to a packed sketch, or merging into
    // it, makes it dense first (kcx merge: a cell that several parts have is summed densely; a
    // cell only one part has stays packed).
    struct Packed {
        std::shared_ptr<const std::string> bytes;   // the decompressed file
        uint32_t pos = 0, neg = 0;                   // where each store's encoding starts (< 4 GB)
        uint64_t posTotal = 0, negTotal = 0;
        int32_t posLo = 0, posHi = -1, negLo = 0, negHi = -1;   // their first and last buckets
    };
    static Sketch fromPacked(uint64_t zeros, std::shared_ptr<const Packed> p);
    const Packed* packed() const { return packed_.get(); }
    // Packs a dense sketch into bytes of its own (kcx summarize, once a metric's cells are
    // complete: a per-step cell's dense stores span hundreds of buckets for a few values).
    void pack();
    // Appends a store's encoding (the binary container's; zero counts at either end are
    // not part of it) to `out`.
    static void encodeStore(std::string& out, const Store& s);
    // Appends the sketch's encoding: zeros, then both stores.
    void encode(std::string& out) const;
    // Walks a store's encoding from `at`: f(bucket index, count) for each non-empty bucket,
    // in ascending index; returns where the encoding ends.
    template <class F>
    static size_t walkPacked(const std::string& bytes, size_t at, F&& f);

private:
    Store pos_, neg_;
    uint64_t zero_ = 0;
    std::shared_ptr<const Packed> packed_;   // when set, pos_ and neg_ are empty
    void unpack();
    template <class F>
    void forEachBucket(bool negative, F&& f) const;
    int32_t packedBucketAtRank(bool negative, uint64_t k) const;
};

[[gnu::always_inline]] inline int32_t Sketch::bucketOf(double magnitude) {
    // ceil(log_γ x) for x = 2^e (1 + f): log_γ x lies in [e log_γ 2 + step[k], e log_γ 2 +
    // step[k+1]] for the top bits k of f. When one ceiling covers that whole interval (widened
    // by far more than any rounding here or in det::log), it is the bucket det::log gives;
    // else det::log decides. Same answer as bucketOfByLog, about ten times faster.
    using sketch_detail::LogTable;
    const LogTable& table = sketch_detail::kLogTable;
    uint64_t bits;
    std::memcpy(&bits, &magnitude, 8);
    const int e = int(bits >> 52);
    if (e == 0 || e >= 0x7ff)
        return sketch_detail::bucketByLog(magnitude);   // subnormal (or not a finite positive number)
    const size_t k = size_t(bits >> (52 - LogTable::kBits)) & ((size_t(1) << LogTable::kBits) - 1);
    const double base = double(e - 1023) * table.log2;
    // ceil(z) for |z| < 2^31, as std::ceil gives it, without the library call (x86-64's
    // baseline has no rounding instruction).
    const auto ceilOf = [](double z) {
        const int64_t t = int64_t(z);   // toward zero
        return t + (double(t) < z);
    };
    // The interval's two ends round up to the same integer when the upper end is at most the
    // lower end's ceiling (the upper end is not below the lower one).
    const int64_t lo = ceilOf(base + table.step[k] - 1e-6);
    if (base + table.step[k + 1] + 1e-6 <= double(lo))
        return int32_t(lo);
    return sketch_detail::bucketByLog(magnitude);
}

// The encoding was checked when it was read (SummaryBinary's reader): no bounds checks here.
template <class F>
size_t Sketch::walkPacked(const std::string& bytes, size_t at, F&& f) {
    using leb128::readU;
    const uint64_t entries = readU(bytes, at);
    if (!entries)
        return at;
    int64_t index = leb128::unzigzag(readU(bytes, at));
    for (uint64_t i = 0; i < entries; ++i) {
        const uint64_t c = readU(bytes, at);
        if (c) {
            f(int32_t(index), c);
            ++index;
        } else {
            index += int64_t(readU(bytes, at));
        }
    }
    return at;
}

}  // namespace kcx
