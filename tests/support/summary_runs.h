// Runs for the summary tests (test_summary, test_summary_io): labelled, with steps, and cut
// into shards.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/formats/run.h"
#include "core/metrics/derived_slices.h"
#include "tests/support/test_runs.h"

namespace kcx::test {

// A run of `n` sequences with steps 0..steps-1 and a label task ∈ {a, b, c}: log-ratios
// lognormal in size with random sign, a few tokens missing or non-finite, lengths 1..300.
inline std::shared_ptr<Run> makeRun(uint64_t seed, size_t n, int steps, const std::string& prefix = "s") {
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> size(-4.0, 1.5);
    std::uniform_int_distribution<int> len(1, 300);
    std::vector<int64_t> off{0};
    std::vector<double> a, b;
    for (size_t s = 0; s < n; ++s) {
        const int T = len(rng);
        for (int t = 0; t < T; ++t) {
            const double train = -std::fabs(size(rng)) * 10;
            double r = size(rng) * ((rng() & 1) ? 1 : -1);
            const uint64_t u = rng() % 1000;
            a.push_back(train);
            if (u == 0)
                b.push_back(missingDouble());
            else if (u == 1)
                b.push_back(NAN);
            else
                b.push_back(train - r);
        }
        off.push_back(int64_t(a.size()));
    }
    auto run = runFromFlat(std::move(off), std::move(a), std::move(b), prefix);
    run->slices.keys = {"task", kStepKey};
    run->slices.values = {{"a", "b", "c"}, {}};
    for (int st = 0; st < steps; ++st)
        run->slices.values[1].push_back(std::to_string(st));
    for (size_t s = 0; s < n; ++s) {
        run->slices.codes.push_back(int32_t(rng() % 4) - 1);   // −1: unlabelled
        run->slices.codes.push_back(int32_t(rng() % uint64_t(steps)));
    }
    run->checkInvariants();
    return run;
}

// Type 7 over a sorted vector; *lo (when given) is the lower of the two order statistics it
// interpolates between.
inline double type7(const std::vector<double>& x, double q, size_t* lo = nullptr) {
    const double h = double(x.size() - 1) * q;
    const size_t l = size_t(std::floor(h));
    if (lo)
        *lo = l;
    if (l + 1 >= x.size())
        return x[l];
    return x[l] + (h - double(l)) * (x[l + 1] - x[l]);
}

// The run's sequences [b, e) as a run of their own (a shard), same ids, labels and steps.
inline std::shared_ptr<Run> shardOf(const Run& run, size_t b, size_t e) {
    std::vector<int64_t> off{0};
    std::vector<double> x, y;
    for (size_t s = b; s < e; ++s) {
        for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
            x.push_back(run.lpTrain[i]);
            y.push_back(run.lpInf[i]);
        }
        off.push_back(int64_t(x.size()));
    }
    auto out = runFromFlat(std::move(off), std::move(x), std::move(y));
    for (size_t s = b; s < e; ++s)
        out->ids[s - b] = run.ids[s];
    out->slices.keys = run.slices.keys;
    out->slices.values = run.slices.values;
    const size_t K = run.slices.keys.size();
    out->slices.codes.assign(run.slices.codes.begin() + long(b * K), run.slices.codes.begin() + long(e * K));
    out->checkInvariants();
    return out;
}

}  // namespace kcx::test
