// The bound chain of SPEC 5: from a per-token logit drift to TV, sequence TV, reward
// drift, importance-ratio bias and the PPO clip budget.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/metrics/metrics.h"

namespace kcx {

struct BoundStep {
    std::string step;          // tv_per_token, tv_sequence, reward_drift, pg_bias, seq_ratio, ppo_clip
    std::string title;         // one line for people
    std::string assumption;    // what the step needs to hold
    std::string inputName;     // e.g. "epsilon (max logit_drift)"
    std::optional<double> input;
    std::optional<double> bound;
    std::optional<double> observed;   // the run's value of what is bounded, where it has one
    std::string observedName;
    bool vacuous = false;      // bound >= the trivial maximum of what it bounds
    std::optional<double> lower;      // seq_ratio: the interval's lower end
    std::optional<double> limit;      // ppo_clip: the clip c the bound is compared with
    bool exceedsLimit = false;        // ppo_clip: bound > c (clipping acts at identical weights)
};

// Computes every step from the contract's bounds and clauses and the run's metrics.
// Steps whose inputs the run cannot supply carry no input/bound (and say why in title).
std::vector<BoundStep> boundChain(const Contract& contract, MetricEngine& engine);

}  // namespace kcx
