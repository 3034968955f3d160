// The order-statistic interval of a quantile (quantile_ci.h, docs/metrics.md).
#include "core/metrics/quantile_ci.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/base/det_math.h"
#include "core/metrics/quantile.h"

namespace kcx {
namespace {

// The binomial distribution's mass as weights relative to its mode, w(k) = P(B = k) /
// P(B = mode), over the range [first, last] outside which less than 1e-18 of the mass lies.
// Each weight follows from its neighbour by the exact ratio P(k+1)/P(k) = (n−k)/(k+1) ·
// p/(1−p), so no factorial, no lgamma and no pow of a huge n enter (lgamma(10¹¹) ≈ 2.4e12
// would lose 4 digits to cancellation); the normalisation divides by the summed weights.
// The pmf is log-concave, so once a step's ratio r is below 1 the mass beyond is at most
// w·r/(1−r), and the walk stops when that is negligible.
struct BinomialWeights {
    uint64_t n = 0;
    double odds = 0;          // p / (1 − p)
    uint64_t first = 0, last = 0;
    double wFirst = 1;        // w(first)
    double total = 0;         // Σ w(k), first ≤ k ≤ last

    double up(uint64_t k) const { return double(n - k) * odds / double(k + 1); }   // w(k+1)/w(k)
};

constexpr double kNegligibleMass = 1e-18;

BinomialWeights binomialWeights(uint64_t n, double p) {   // 0 < p < 1
    BinomialWeights b;
    b.n = n;
    b.odds = p / (1 - p);
    const uint64_t mode = std::min<uint64_t>(n, uint64_t(std::floor((double(n) + 1) * p)));
    b.total = 1;
    double w = 1;
    uint64_t k = mode;
    while (k > 0) {
        const double r = double(k) / (double(n - k + 1) * b.odds);   // w(k−1)/w(k)
        if (r < 1 && w * r / (1 - r) <= kNegligibleMass * b.total)
            break;
        w *= r;
        --k;
        b.total += w;
    }
    b.first = k;
    b.wFirst = w;
    w = 1;
    k = mode;
    while (k < n) {
        const double r = b.up(k);
        if (r < 1 && w * r / (1 - r) <= kNegligibleMass * b.total)
            break;
        w *= r;
        ++k;
        b.total += w;
    }
    b.last = k;
    return b;
}

}  // namespace

double binomialCdf(uint64_t n, double p, uint64_t k) {
    if (k >= n || p <= 0)
        return 1;
    if (p >= 1)
        return 0;
    const BinomialWeights b = binomialWeights(n, p);
    if (k < b.first)
        return 0;
    if (k >= b.last)
        return 1;
    double s = 0, w = b.wFirst;
    for (uint64_t j = b.first;; ++j) {
        s += w;
        if (j == k)
            break;
        w *= b.up(j);
    }
    return std::min(1.0, s / b.total);
}

QuantileRanks quantileIntervalRanks(uint64_t n, double q, double confidence) {
    QuantileRanks out;
    if (n == 0)
        return out;
    const double tail = (1 - confidence) / 2;
    if (q <= 0) {   // B = 0: P(B ≤ k) = 1 for every k; x(0), the minimum, bounds from above
        out.hi = 0;
        out.coverage = 1;
        return out;
    }
    if (q >= 1) {   // B = n: the maximum x(n−1) bounds from below; nothing from above
        out.lo = n - 1;
        out.coverage = 1;
        return out;
    }
    const BinomialWeights b = binomialWeights(n, q);
    double cdfLo = 0, cdfHi = 1;
    if (b.first > 0)   // P(B ≤ first−1) < 1e-18 ≤ tail
        out.lo = b.first - 1;
    double s = 0, w = b.wFirst;
    for (uint64_t k = b.first; k < n && k <= b.last; ++k) {
        s += w;
        const double cdf = s / b.total;
        if (cdf <= tail) {
            out.lo = k;
            cdfLo = cdf;
        }
        if (cdf >= 1 - tail) {
            out.hi = k;
            cdfHi = cdf;
            break;
        }
        w *= b.up(k);
    }
    out.coverage = std::min(1.0, cdfHi) - cdfLo;
    return out;
}

std::optional<uint64_t> quantileIntervalMinCount(double q, bool upper, double confidence) {
    const double tail = (1 - confidence) / 2;
    const double base = upper ? q : 1 - q;   // P(B = n) = qⁿ, P(B = 0) = (1−q)ⁿ
    if (base >= 1)
        return std::nullopt;
    if (base <= 0)
        return uint64_t(1);
    // base^n by repeated squaring: plain multiplications, the same double on every CPU
    // (glibc's pow depends on it; docs/signoff.md).
    auto power = [&](uint64_t n) {
        double r = 1, b = base;
        for (; n; n >>= 1, b *= b)
            if (n & 1)
                r *= b;
        return r;
    };
    auto enough = [&](uint64_t n) { return power(n) <= tail; };
    uint64_t n = uint64_t(std::max(1.0, std::ceil(det::log(tail) / det::log(base))));
    while (n > 1 && enough(n - 1))
        --n;
    while (!enough(n))
        ++n;
    return n;
}

std::pair<double, double> quantileInterval(std::span<const double> values, double q, double confidence,
                                           int threads) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::pair<double, double> out{-inf, inf};
    const QuantileRanks r = quantileIntervalRanks(values.size(), q, confidence);
    std::vector<uint64_t> ranks;
    if (r.lo)
        ranks.push_back(*r.lo);
    if (r.hi)
        ranks.push_back(*r.hi);
    const std::vector<double> xs = orderStatistics(values, ranks, threads);
    if (r.lo)
        out.first = xs.front();
    if (r.hi)
        out.second = xs.back();
    return out;
}

}  // namespace kcx
