// The statistics of SPEC 4.2: the one-sided Wilson upper bound, the normal quantile, and
// a seeded percentile bootstrap over sequences.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace kcx {

// Phi^{-1}(p) for p in (0, 1), accurate to ~1e-15 (Acklam's rational start, one Halley step).
double normalQuantile(double p);

// u = (p + z^2/2n + z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), p = k/n, z = Phi^{-1}(c).
double wilsonUpper(uint64_t k, uint64_t n, double confidence);

// The PRNG of the bootstrap: xoshiro256** seeded through splitmix64 (docs/contracts.md).
class Xoshiro256 {
public:
    explicit Xoshiro256(uint64_t seed);
    uint64_t next();
    // Uniform in [0, n): the high 64 bits of next() * n (Lemire's multiply, no rejection).
    uint64_t below(uint64_t n);

private:
    uint64_t s_[4];
};

// Percentile bootstrap of a ratio mean: each unit u has (sum_u, count_u); a replicate
// draws the units with replacement and takes sum(sum)/sum(count). Returns the two-sided
// interval at `confidence` from `resamples` replicates (type-7 quantiles of the replicates).
std::pair<double, double> bootstrapMeanInterval(const std::vector<double>& sums,
                                                const std::vector<double>& counts, double confidence,
                                                int64_t resamples, uint64_t seed);

}  // namespace kcx
