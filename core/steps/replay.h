// `kcx replay` (SPEC 8, docs/steps.md): the contract evaluated on each step's sequences
// alone, in step order, with the escalation rules' `persist` and `until` applied over the
// steps: each step's verdict and action per stage, and the events where a stage's action
// changed.
//
// The policy, per stage and per (rule, clause):
//   - the rule's `when` matches the clause at a step when it matches one of the clause's
//     results there that is not a pass (as in `kcx check`);
//   - persist {failures: K, window: W}: the rule matches the clause at step s only if its
//     `when` matched it at ≥ K of the last W steps present (s included); else the clause's
//     results fall through to the later rules;
//   - until {passes: R}: once the rule has matched the clause, it keeps matching it — every
//     result of the clause, passing or not, takes the rule's action — until a step at which
//     the clause has passed R consecutive steps (that step included), where it stops;
//   - first matching rule wins, per result; a non-pass result no rule matches is `warn`, a
//     passing one `pass`; a stage's action is the strongest of its results'.
// Events compare each step's action with the previous step's; before the first step every
// stage's action is `pass`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/evaluate/evaluator.h"
#include "core/evaluate/evaluator_summary.h"

namespace kcx {

struct ReplayStep {
    int64_t step = 0;
    uint64_t sequences = 0, tokens = 0;
    Status verdict = Status::Pass;
    std::vector<Result> results;                      // the step's evaluation
    std::map<std::string, Action> actions;            // per stage, after persist/until
    std::vector<std::map<std::string, Action>> resultActions;   // per result, per stage
};

struct ReplayEvent {
    int64_t step = 0;
    std::string stage;
    Action from = Action::Pass, to = Action::Pass;
};

struct Replay {
    std::vector<ReplayStep> steps;
    std::vector<ReplayEvent> events;
    uint64_t sequencesWithoutStep = 0;
};

// The policy alone, on steps whose `step` and `results` are filled: fills actions,
// resultActions and events (verdicts are the caller's).
void replayEscalation(const Contract& contract, std::vector<ReplayStep>& steps, std::vector<ReplayEvent>& events);

// Evaluates the contract step by step on a run or a summary, then the policy. Throws
// std::invalid_argument when the data have no steps; Cancelled when progress says stop.
Replay replayContract(const Contract& contract, const EvaluationData& data, const Progress& progress = {});

// SPEC 8's JSON (contract name and hash are the caller's: `contract` is merged in).
nlohmann::json replayJson(const Replay& r, const Contract& contract, const nlohmann::json& header);

}  // namespace kcx
