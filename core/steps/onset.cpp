#include "core/steps/onset.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/evaluate/stats.h"   // Xoshiro256

namespace kcx {

namespace {

constexpr double kMedianChi2One = 0.45493642311957184;   // median of χ²(1)

struct Cusum {
    double statistic = 0;
    std::optional<size_t> alarm;
};

// Steps 1–3 and 5 of the header on one series; `scratch` holds n − 1 doubles.
struct Procedure {
    std::span<const double> se;
    bool standardErrors = false;
    size_t baseline = 0;
    double k = 0.5;
    std::vector<double> scratch;

    double scale(std::span<const double> x) {
        const size_t n = x.size();
        scratch.resize(n - 1);
        for (size_t t = 1; t < n; ++t) {
            const double r = (x[t] - x[t - 1]) / std::sqrt(se[t] * se[t] + se[t - 1] * se[t - 1]);
            scratch[t - 1] = r * r;
        }
        auto mid = scratch.begin() + std::ptrdiff_t(scratch.size() / 2);
        std::nth_element(scratch.begin(), mid, scratch.end());
        double phi2 = *mid / kMedianChi2One;
        if (!(phi2 > 0)) {   // half the differences are 0: the mean of the squares instead
            double s = 0;
            for (double v : scratch)
                s += v;
            phi2 = s / double(scratch.size());
        }
        const double phi = std::sqrt(phi2);
        return standardErrors ? std::max(1.0, phi) : phi;
    }

    // Returns the CUSUM; fills z (when given) and level/phi.
    Cusum run(std::span<const double> x, double threshold, std::vector<double>* z, double* level, double* phiOut,
              double* maxZ = nullptr) {
        const double phi = scale(x);
        double sw = 0, swx = 0;
        for (size_t t = 0; t < baseline; ++t) {
            const double w = 1 / (se[t] * se[t]);
            sw += w;
            swx += w * x[t];
        }
        const double mu0 = swx / sw, v0 = 1 / sw;
        if (level)
            *level = mu0;
        if (phiOut)
            *phiOut = phi;
        Cusum c;
        if (!(phi > 0))   // a constant series: nothing rises
            return c;
        double S = 0;
        for (size_t t = baseline; t < x.size(); ++t) {
            const double zt = (x[t] - mu0) / (phi * std::sqrt(se[t] * se[t] + v0));
            if (z)
                (*z)[t] = zt;
            if (maxZ)
                *maxZ = std::max(*maxZ, zt);
            S = std::max(0.0, S + zt - k);
            c.statistic = std::max(c.statistic, S);
            if (!c.alarm && S > threshold)
                c.alarm = t;
        }
        return c;
    }
};

// A standard normal variate (Box–Muller on the project's xoshiro256**).
struct Normal {
    Xoshiro256 rng;
    double spare = 0;
    bool haveSpare = false;
    explicit Normal(uint64_t seed) : rng(seed) {}
    double uniform() { return (double(rng.next() >> 11) + 0.5) * 0x1.0p-53; }
    double operator()() {
        if (haveSpare) {
            haveSpare = false;
            return spare;
        }
        const double r = std::sqrt(-2 * std::log(uniform())), a = 2 * std::numbers::pi * uniform();
        spare = r * std::sin(a);
        haveSpare = true;
        return r * std::cos(a);
    }
};

// The type-7 quantile at 1 − α.
double upperQuantile(std::vector<double>& v, double alpha) {
    std::sort(v.begin(), v.end());
    const double h = (double(v.size()) - 1) * (1 - alpha);
    const size_t lo = size_t(std::floor(h));
    return lo + 1 < v.size() ? v[lo] + (h - double(lo)) * (v[lo + 1] - v[lo]) : v.back();
}

}  // namespace

size_t onsetBaseline(size_t n) { return std::clamp<size_t>(n / 4, 3, 20); }

OnsetResult detectOnset(std::span<const double> x, std::span<const double> seIn, const OnsetOptions& options,
                        std::span<const double> units) {
    OnsetResult out;
    const size_t n = x.size();
    out.z.assign(n, std::numeric_limits<double>::quiet_NaN());
    if (n < kOnsetMinSteps) {
        out.reason = "fewer than " + std::to_string(kOnsetMinSteps) + " steps";
        return out;
    }
    for (double v : x)
        if (!std::isfinite(v)) {
            out.reason = "a step has no finite value";
            return out;
        }
    // Standard errors: the given ones, gaps filled with their median; none when fewer than half.
    std::vector<double> se(n, 1.0);
    std::vector<double> known;
    if (seIn.size() == n)
        for (double s : seIn)
            if (std::isfinite(s) && s > 0)
                known.push_back(s);
    if (known.size() * 2 >= n && !known.empty()) {
        std::nth_element(known.begin(), known.begin() + std::ptrdiff_t(known.size() / 2), known.end());
        const double fill = known[known.size() / 2];
        for (size_t t = 0; t < n; ++t)
            se[t] = std::isfinite(seIn[t]) && seIn[t] > 0 ? seIn[t] : fill;
        out.standardErrors = true;
        if (units.size() == n) {   // step 0: pooled errors
            std::vector<double> sigma2;
            for (size_t t = 0; t < n; ++t)
                if (units[t] > 0)
                    sigma2.push_back(se[t] * se[t] * units[t]);
            if (sigma2.size() == n) {
                std::nth_element(sigma2.begin(), sigma2.begin() + std::ptrdiff_t(n / 2), sigma2.end());
                const double s2 = sigma2[n / 2];
                for (size_t t = 0; t < n; ++t)
                    se[t] = std::sqrt(s2 / units[t]);
                out.pooled = true;
            }
        }
    }
    out.baseline = onsetBaseline(n);
    Procedure proc{se, out.standardErrors, out.baseline, options.k, {}};

    // The threshold: simulated series with no change.
    const double alpha = std::clamp(options.alpha, 1e-6, 0.5);
    int sims = options.simulations;
    if (sims <= 0) {
        sims = int(std::clamp(std::ceil(200 / alpha), 2000.0, 100000.0));
        const double budget = 3e7 / double(n);   // keeps a 1,000-step series under a second
        sims = std::max(1000, std::min(sims, int(budget)));
    }
    out.simulations = sims;
    std::vector<double> stats(static_cast<size_t>(sims)), maxZs(static_cast<size_t>(sims));
    std::vector<double> y(n);
    Normal normal(options.seed ^ (uint64_t(n) * 0x9e3779b97f4a7c15ULL));
    for (int r = 0; r < sims; ++r) {
        for (size_t t = 0; t < n; ++t)
            y[t] = se[t] * normal();
        double maxZ = -std::numeric_limits<double>::infinity();
        stats[size_t(r)] = proc.run(y, std::numeric_limits<double>::infinity(), nullptr, nullptr, nullptr, &maxZ).statistic;
        maxZs[size_t(r)] = maxZ;
    }
    out.threshold = upperQuantile(stats, alpha);
    out.spikeThreshold = upperQuantile(maxZs, alpha);

    const Cusum c = proc.run(x, out.threshold, &out.z, &out.level, &out.scale);
    out.tested = true;
    out.statistic = c.statistic;
    out.alarm = c.alarm;
    if (c.alarm) {
        // Where the rise began: the split τ ≤ alarm that best separates the series into a
        // lower and a higher level (inverse-variance weighted means of [0, τ) and [τ, n)).
        // The start of the CUSUM's excursion is biased early: under no change S wanders
        // above 0 for a while, and a rise that follows keeps it there (measured: 1 in 6
        // planted rises placed more than 3 steps early).
        std::vector<double> w(n), wx(n);
        for (size_t t = 0; t < n; ++t) {
            w[t] = 1 / (se[t] * se[t]);
            wx[t] = w[t] * x[t];
        }
        double W = 0, WX = 0;
        for (size_t t = 0; t < n; ++t) {
            W += w[t];
            WX += wx[t];
        }
        double preW = 0, preWX = 0, best = -std::numeric_limits<double>::infinity();
        size_t at = *c.alarm;
        for (size_t tau = 1; tau <= *c.alarm; ++tau) {
            preW += w[tau - 1];
            preWX += wx[tau - 1];
            const double postW = W - preW, postWX = WX - preWX;
            const double T = (postWX / postW - preWX / preW) / std::sqrt(1 / preW + 1 / postW);
            if (T > best) {
                best = T;
                at = tau;
            }
        }
        out.onset = at;
    }
    for (size_t t = out.baseline; t < n; ++t)
        if (out.z[t] > out.spikeThreshold)
            out.spikes.push_back(t);
    return out;
}

}  // namespace kcx
