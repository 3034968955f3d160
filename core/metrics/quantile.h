// Exact order statistics over large arrays without sorting them.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <span>
#include <vector>

namespace kcx {

// Type-7 quantiles (numpy's default linear interpolation) of the non-NaN values, for each
// q in qs (each in [0, 1]). Exact: it selects the order statistics x[floor(h)] and
// x[floor(h)+1] with a parallel radix histogram followed by a selection inside the one
// bucket that holds them. Returns an empty vector when no value exists. `range`, when the
// caller knows it, is the minimum and maximum of the non-NaN values (at least one exists):
// the histogram then splits that range (fewer passes for values crowded near one number),
// and equal ends answer without a pass. The result is the same either way.
std::vector<double> quantilesType7(std::span<const double> values, std::span<const double> qs,
                                   int threads = 0, std::optional<std::pair<double, double>> range = {});

// The k-th smallest (0-based) of the non-NaN values. Precondition: k < count.
double orderStatistic(std::span<const double> values, size_t k, int threads = 0);

// Several order statistics (0-based ranks, each below the count of non-NaN values) from one
// histogram pass, in the order of `ranks`.
std::vector<double> orderStatistics(std::span<const double> values, std::span<const uint64_t> ranks,
                                    int threads = 0);

// Counting the values above or below a level again and again (a threshold dragged in the
// window) without a pass over all of them each time. build() partitions the values in
// place by the same 16-bit radix buckets as the quantiles (sign, exponent and 4 mantissa
// bits: O(n), one in-place permutation; their order changes, their multiset does not); a
// count then adds the sizes of whole buckets and scans the one bucket that holds the level.
class BucketedValues {
public:
    void build(std::span<double> values);   // values without NaN
    bool built() const { return !begin_.empty(); }
    // The number of values strictly above (below) `level`; `values` as build() left them.
    uint64_t countAbove(std::span<const double> values, double level) const;
    uint64_t countBelow(std::span<const double> values, double level) const;

private:
    size_t find(double level, bool& inside) const;
    std::vector<uint16_t> bucket_;   // the non-empty buckets, ascending
    std::vector<uint64_t> begin_;    // where each starts in the values; one more for the end
};

}  // namespace kcx
