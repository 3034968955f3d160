#include "core/evaluate/stats.h"

#include "core/base/det_math.h"
#include "core/base/xoshiro.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kcx {

double normalQuantile(double p) {
    if (!(p > 0 && p < 1))
        throw std::domain_error("normalQuantile needs 0 < p < 1");
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    const double lo = 0.02425, hi = 1 - lo;
    double x;
    if (p < lo) {
        const double q = std::sqrt(-2 * det::log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p <= hi) {
        const double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    } else {
        const double q = std::sqrt(-2 * det::log1p(-p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    // Halley refinement against the exact CDF, 0.5 erfc(-x / sqrt 2).
    for (int i = 0; i < 2; ++i) {
        const double e = 0.5 * det::erfc(-x / std::sqrt(2.0)) - p;
        const double u = e * std::sqrt(2 * M_PI) * det::exp(x * x / 2);
        x = x - u / (1 + x * u / 2);
    }
    return x;
}

double wilsonUpper(uint64_t k, uint64_t n, double confidence) {
    if (n == 0)
        return std::numeric_limits<double>::quiet_NaN();
    const double z = normalQuantile(confidence), nn = double(n), p = double(k) / nn, z2 = z * z;
    const double u = (p + z2 / (2 * nn) + z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn))) / (1 + z2 / nn);
    return std::min(1.0, u);
}

Xoshiro256::Xoshiro256(uint64_t seed) {
    for (auto& s : s_)
        s = splitmix64(seed);
}

uint64_t Xoshiro256::next() { return xoshiro256ssNext(s_); }

uint64_t Xoshiro256::below(uint64_t n) { return uint64_t((static_cast<unsigned __int128>(next()) * n) >> 64); }

std::pair<double, double> bootstrapMeanInterval(const std::vector<double>& sums, const std::vector<double>& counts,
                                                double confidence, int64_t resamples, uint64_t seed) {
    const size_t n = sums.size();
    if (n == 0 || resamples < 1)
        return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    Xoshiro256 rng(seed);
    std::vector<double> means(static_cast<size_t>(resamples));
    for (auto& m : means) {
        double s = 0, c = 0;
        for (size_t i = 0; i < n; ++i) {
            const size_t u = size_t(rng.below(n));
            s += sums[u];
            c += counts[u];
        }
        m = c > 0 ? s / c : std::numeric_limits<double>::quiet_NaN();
    }
    std::sort(means.begin(), means.end());
    auto q = [&](double p) {
        const double h = double(means.size() - 1) * p;
        const size_t lo = size_t(std::floor(h));
        const size_t hi = std::min(lo + 1, means.size() - 1);
        return means[lo] + (h - double(lo)) * (means[hi] - means[lo]);
    };
    const double alpha = 1 - confidence;
    return {q(alpha / 2), q(1 - alpha / 2)};
}

}  // namespace kcx
