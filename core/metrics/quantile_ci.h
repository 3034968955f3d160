// A distribution-free confidence interval for a quantile, from two order statistics
// (docs/metrics.md, "The interval of a quantile").
//
// For n independent values from any distribution, the number B of values below the
// population q-quantile ξ is Binomial(n, q) (at most, for a distribution with atoms), so
// with x(0) ≤ … ≤ x(n−1) the sorted values
//     P(x(l) > ξ) ≤ P(B ≤ l)          P(x(u) < ξ) ≤ P(B ≥ u + 1) = 1 − P(B ≤ u).
// KCX takes the equal-tailed pair: l the largest rank with P(B ≤ l) ≤ α/2 and u the
// smallest with P(B ≤ u) ≥ 1 − α/2, α = 1 − confidence; then P(x(l) ≤ ξ ≤ x(u)) ≥ 1 − α.
// A side that no rank of 0..n−1 achieves (n too small for q: p99.9 of 100 values has no
// upper rank) is unbounded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

namespace kcx {

// The confidence of the interval KCX shows beside a numerical clause's quantile.
inline constexpr double kQuantileIntervalConfidence = 0.95;

struct QuantileRanks {
    std::optional<uint64_t> lo, hi;   // 0-based ranks; nullopt = that side is unbounded
    double coverage = 0;              // P(x(lo) ≤ ξ ≤ x(hi)) guaranteed: P(lo < B ≤ hi)
};

// The equal-tailed ranks above for n values (n ≥ 1), q ∈ [0, 1] and a two-sided
// confidence in (0, 1). Exact binomial sums (no normal approximation) at any n up to 2⁵³:
// O(√(n q (1−q))) steps, about 20 ms at n = 10¹¹ and q = 0.5.
QuantileRanks quantileIntervalRanks(uint64_t n, double q, double confidence = kQuantileIntervalConfidence);

// P(B ≤ k) for B ~ Binomial(n, p), by the same summation (relative error about 1e-12; an
// omitted far tail below 1e-18 of the mass). For tests and for documentation.
double binomialCdf(uint64_t n, double p, uint64_t k);

// The fewest values for which the interval has a lower (upper = false) or an upper side:
// the least n with (1−q)ⁿ ≤ α/2 (lower) or qⁿ ≤ α/2 (upper). nullopt when no n suffices
// (q = 0 has no lower side, q = 1, the maximum, no upper side).
std::optional<uint64_t> quantileIntervalMinCount(double q, bool upper,
                                                 double confidence = kQuantileIntervalConfidence);

// The interval's values: {x(lo), x(hi)} of `values` (no NaN among them), with −∞ / +∞ for
// an unbounded side; {−∞, +∞} for no values. One histogram pass (orderStatistics).
std::pair<double, double> quantileInterval(std::span<const double> values, double q,
                                           double confidence = kQuantileIntervalConfidence, int threads = 0);

}  // namespace kcx
