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
#include <utility>
#include <vector>

namespace kcx {

inline constexpr double kRelativeAccuracy = 0.01;

class Sketch {
public:
    // The bucket of a finite non-zero magnitude.
    static int32_t bucketOf(double magnitude);
    // The same from det::log alone (the definition; bucketOf takes a table shortcut).
    static int32_t bucketOfByLog(double magnitude);
    // The value a bucket stands for (within α of every magnitude it holds).
    static double bucketValue(int32_t index);
    // The bucket's bounds: (lower, upper].
    static std::pair<double, double> bucketBounds(int32_t index);

    void add(double x);                    // finite values only
    // The same with the bucket found once (bucketOf) for adding one value to many sketches:
    // sign 0 for a zero, +1 or −1 with the bucket of the magnitude.
    void addPrepared(int sign, int32_t bucket) {
        if (sign == 0)
            ++zero_;
        else
            (sign > 0 ? pos_ : neg_).add(bucket, 1);
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
        void add(int32_t index, uint64_t n);
        uint64_t total() const;
        bool empty() const { return counts.empty(); }
        void trim();   // no zero count at either end
    };
    // Replaces a store with one read whole (the summary reader: trimmed, its final size).
    void setStore(bool negative, Store s);
    const Store& positive() const { return pos_; }
    const Store& negative() const { return neg_; }
    uint64_t zeros() const { return zero_; }
    bool operator==(const Sketch& o) const;

private:
    Store pos_, neg_;
    uint64_t zero_ = 0;
};

}  // namespace kcx
