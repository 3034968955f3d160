// Exact order statistics over large arrays without sorting them.
#pragma once

#include <span>
#include <vector>

namespace kcx {

// Type-7 quantiles (numpy's default linear interpolation) of the non-NaN values, for each
// q in qs (each in [0, 1]). Exact: it selects the order statistics x[floor(h)] and
// x[floor(h)+1] with a parallel radix histogram followed by a selection inside the one
// bucket that holds them. Returns an empty vector when no value exists.
std::vector<double> quantilesType7(std::span<const double> values, std::span<const double> qs,
                                   int threads = 0);

// The k-th smallest (0-based) of the non-NaN values. Precondition: k < count.
double orderStatistic(std::span<const double> values, size_t k, int threads = 0);

}  // namespace kcx
