// The onset of a sustained rise in a series over training steps (SPEC 7, docs/steps.md).
//
// Input: one value per step, in step order, and its standard error (sequences as the unit),
// or none, and optionally the number of sequences behind each step. The test:
//   0. with standard errors and sequence counts m_t, the errors are pooled:
//      se_t = σ / √m_t, σ² the median over steps of se_s² m_s. A step's error estimated from
//      a handful of sequences is itself noisy; divided into, it would make z heavy-tailed
//      and alarms frequent on a run that never changes (measured: 32 of 60 such runs);
//   1. baseline: the first b = clamp(n / 4, 3, 20) steps; their level is the inverse-
//      variance weighted mean μ0 (variance v0 = 1 / Σ 1/se²);
//   2. scale: φ² = median(r_t²) / 0.4549 over successive differences
//      r_t = (x_t − x_{t−1}) / √(se_t² + se_{t−1}²), which a level shift barely moves; with
//      standard errors φ = max(1, φ) (it widens errors the data show to be too small, never
//      narrows them); without, every se is 1 and φ is the series' own noise scale;
//   3. z_t = (x_t − μ0) / (φ √(se_t² + v0)) for t ≥ b, and the one-sided CUSUM
//      S_t = max(0, S_{t−1} + z_t − k), k = 0.5 (tuned to a rise of one standard error);
//   4. threshold h: the (1 − α) quantile of max_t S_t over simulated series of the same
//      length and standard errors with no change at all, put through steps 1–3 exactly
//      (the baseline's own error and φ's estimation included): the probability of any
//      alarm over the whole series of an unchanging run is α, up to the simulation's error;
//   5. the alarm is the first step with S_t > h; the onset is the split τ ≤ alarm that best
//      separates a lower level before from a higher one after (the largest standardised
//      difference of the inverse-variance weighted means of [0, τ) and [τ, n)): the first
//      step from which the series stays above its early level.
// Spikes: steps (after the baseline) whose own z_t exceeds the (1 − α) quantile of
// max_t z_t over the same simulated series (with few steps, φ's own error makes a normal
// quantile too low).
// Deterministic: the simulation's generator has a fixed seed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kcx {

struct OnsetOptions {
    double alpha = 0.05;          // false-alarm probability over the whole series
    double k = 0.5;               // CUSUM reference value, in standard errors
    int simulations = 0;          // 0: chosen from alpha and the series' length
    uint64_t seed = 0x6b63782d6f6e73ULL;
};

struct OnsetResult {
    bool tested = false;
    std::string reason;           // why not tested (too few steps)
    bool standardErrors = false;  // false: every se taken as 1 (none given)
    bool pooled = false;          // step 0 applied
    size_t baseline = 0;          // steps in the baseline
    double level = 0;             // μ0
    double scale = 1;             // φ
    double statistic = 0;         // max_t S_t
    double threshold = 0;         // h
    double spikeThreshold = 0;    // the z a spike exceeds
    int simulations = 0;
    std::optional<size_t> onset;  // index into the series
    std::optional<size_t> alarm;  // index where S first exceeded h
    std::vector<double> z;        // per step; NaN in the baseline
    std::vector<size_t> spikes;   // indices
};

inline constexpr size_t kOnsetMinSteps = 6;

// x and se have the same length (se may be empty, or hold NaN / non-positive entries: those
// take the median of the others, and with fewer than half given none is used).
// units: sequences per step (empty: no pooling).
OnsetResult detectOnset(std::span<const double> x, std::span<const double> se, const OnsetOptions& options = {},
                        std::span<const double> units = {});

// The baseline's length for a series of n steps.
size_t onsetBaseline(size_t n);

}  // namespace kcx
