#include "core/steps/replay.h"

#include <algorithm>
#include <stdexcept>

#include "core/evaluate/evaluation_json.h"
#include "core/steps/estimate.h"
#include "core/summary/summary.h"

namespace kcx {

namespace {

bool overSteps(const EscalationRule& r) { return r.persist || r.untilPasses; }

}  // namespace

void replayEscalation(const Contract& contract, std::vector<ReplayStep>& steps, std::vector<ReplayEvent>& events) {
    const auto& rules = contract.escalation;
    std::vector<std::string> clauses;
    for (const Clause& c : contract.clauses)
        clauses.push_back(c.id);
    auto clauseIndex = [&](const std::string& id) {
        return size_t(std::find(clauses.begin(), clauses.end(), id) - clauses.begin());
    };
    const size_t R = rules.size(), C = clauses.size() + 1;   // + 1: results of no known clause
    for (ReplayStep& st : steps) {
        st.actions.clear();
        st.resultActions.assign(st.results.size(), {});
    }
    events.clear();
    // Consecutive passing steps per clause (stage-independent).
    std::vector<std::vector<int64_t>> passRun(steps.size(), std::vector<int64_t>(C, 0));
    for (size_t j = 0; j < steps.size(); ++j) {
        std::vector<bool> pass(C, true);
        for (const Result& r : steps[j].results)
            if (r.status != Status::Pass)
                pass[clauseIndex(r.clause)] = false;
        for (size_t c = 0; c < C; ++c)
            passRun[j][c] = pass[c] ? (j ? passRun[j - 1][c] : 0) + 1 : 0;
    }
    for (const std::string& stage : contract.stages) {
        std::vector<std::vector<std::vector<bool>>> history(R, std::vector<std::vector<bool>>(C));
        std::vector<std::vector<bool>> latched(R, std::vector<bool>(C, false));
        Action previous = Action::Pass;
        for (size_t j = 0; j < steps.size(); ++j) {
            ReplayStep& st = steps[j];
            std::vector<std::vector<bool>> now(R, std::vector<bool>(C, false)), carried(R, std::vector<bool>(C, false));
            for (size_t i = 0; i < R; ++i) {
                const EscalationRule& rule = rules[i];
                if (rule.isDefault || !overSteps(rule))
                    continue;
                std::vector<bool> raw(C, false);
                for (const Result& r : st.results)
                    if (r.status != Status::Pass && ruleMatches(rule, contract, r, stage))
                        raw[clauseIndex(r.clause)] = true;
                for (size_t c = 0; c < C; ++c) {
                    auto& h = history[i][c];
                    h.push_back(raw[c]);
                    bool ok = raw[c];
                    if (ok && rule.persist) {
                        const size_t w = size_t(std::min<int64_t>(rule.persist->window, int64_t(h.size())));
                        const auto hits = std::count(h.end() - std::ptrdiff_t(w), h.end(), true);
                        ok = hits >= rule.persist->failures;
                    }
                    now[i][c] = ok;
                    if (rule.untilPasses) {
                        if (latched[i][c]) {
                            if (passRun[j][c] >= *rule.untilPasses)
                                latched[i][c] = false;
                            else
                                carried[i][c] = true;
                        }
                        if (!latched[i][c] && ok)
                            latched[i][c] = true;
                    }
                }
            }
            Action strongest = Action::Pass;
            for (size_t k = 0; k < st.results.size(); ++k) {
                const Result& r = st.results[k];
                const size_t c = clauseIndex(r.clause);
                Action a = r.status == Status::Pass ? Action::Pass : Action::Warn;
                for (size_t i = 0; i < R; ++i) {
                    const EscalationRule& rule = rules[i];
                    bool hit = false;
                    if (rule.isDefault)
                        hit = r.status != Status::Pass;
                    else if (overSteps(rule))
                        hit = carried[i][c] ||
                              (now[i][c] && r.status != Status::Pass && ruleMatches(rule, contract, r, stage));
                    else
                        hit = r.status != Status::Pass && ruleMatches(rule, contract, r, stage);
                    if (hit) {
                        a = rule.action;
                        break;
                    }
                }
                st.resultActions[k][stage] = a;
                strongest = std::max(strongest, a);
            }
            st.actions[stage] = strongest;
            if (strongest != previous)
                events.push_back({st.step, stage, previous, strongest});
            previous = strongest;
        }
    }
    // Events in step order, stages in the contract's order within a step.
    std::stable_sort(events.begin(), events.end(), [](const ReplayEvent& a, const ReplayEvent& b) { return a.step < b.step; });
}

Replay replayContract(const Contract& contract, const EvaluationData& data, const Progress& progress) {
    Replay out;
    if (data.run) {
        const Run& run = *data.run;
        const std::vector<int64_t> seqStep = run.steps();
        std::map<int64_t, std::vector<size_t>> bySteps;
        for (size_t s = 0; s < seqStep.size(); ++s) {
            if (seqStep[s] >= 0)
                bySteps[seqStep[s]].push_back(s);
            else
                ++out.sequencesWithoutStep;
        }
        if (bySteps.empty())
            throw std::invalid_argument("the run has no training steps (SPEC 7: a `step` key, a `step` tensor, or "
                                        "trainer step_N folders)");
        size_t done = 0;
        for (const auto& [step, seqs] : bySteps) {
            auto sub = std::make_shared<const Run>(subsetRun(run, seqs));
            ReplayStep st;
            st.step = step;
            st.sequences = sub->sequenceCount();
            st.tokens = sub->tokenCount();
            const Progress inner = progress ? Progress([&, done](double f) {
                return progress((double(done) + f) / double(bySteps.size()));
            })
                                            : Progress();
            Evaluation ev = evaluateContract(contract, sub, {}, inner);
            st.verdict = ev.verdict;
            st.results = std::move(ev.results);
            out.steps.push_back(std::move(st));
            ++done;
            report(progress, double(done) / double(bySteps.size()));
        }
    } else if (data.summary) {
        const RunSummary& sum = *data.summary;
        const std::vector<int64_t> steps = summaryStepList(sum, out.sequencesWithoutStep);
        size_t done = 0;
        for (int64_t step : steps) {
            RunSummary one;
            one.ppoClip = sum.ppoClip;
            one.inputs = sum.inputs;
            one.hasTopK = sum.hasTopK;
            one.hasLogits = sum.hasLogits;
            one.hasRewards = sum.hasRewards;
            for (auto it = sum.cells.lower_bound(CellKey{step, "", "", -1}); it != sum.cells.end() && it->first.step == step;
                 ++it)
                one.cells.emplace(it->first, it->second);
            ReplayStep st;
            st.step = step;
            st.sequences = one.sequences();
            st.tokens = one.tokens();
            Evaluation ev = evaluateContractOnSummary(contract, one);
            st.verdict = ev.verdict;
            st.results = std::move(ev.results);
            out.steps.push_back(std::move(st));
            report(progress, double(++done) / double(steps.size()));
        }
    } else {
        throw std::invalid_argument("nothing to replay");
    }
    replayEscalation(contract, out.steps, out.events);
    return out;
}

nlohmann::json replayJson(const Replay& r, const Contract& contract, const nlohmann::json& header) {
    nlohmann::json j = header;
    j["kcx"] = 1;
    j["stages"] = contract.stages;
    j["sequences_without_step"] = r.sequencesWithoutStep;
    nlohmann::json steps = nlohmann::json::array();
    for (const ReplayStep& st : r.steps) {
        nlohmann::json js = {{"step", st.step}, {"verdict", statusName(st.verdict)}};
        js["actions"] = nlohmann::json::object();
        for (const std::string& stage : contract.stages)
            js["actions"][stage] = actionName(st.actions.at(stage));
        js["sequences"] = st.sequences;
        js["tokens"] = st.tokens;
        // The results behind an action: every one that is not a pass or takes an action.
        nlohmann::json results = nlohmann::json::array();
        for (size_t k = 0; k < st.results.size(); ++k) {
            const Result& res = st.results[k];
            bool acts = res.status != Status::Pass;
            for (const auto& [stage, a] : st.resultActions[k])
                acts = acts || a != Action::Pass;
            if (!acts)
                continue;
            nlohmann::json jr = resultJson(res);
            jr.erase("action");
            jr["actions"] = nlohmann::json::object();
            for (const std::string& stage : contract.stages)
                jr["actions"][stage] = actionName(st.resultActions[k].at(stage));
            results.push_back(std::move(jr));
        }
        js["results"] = std::move(results);
        steps.push_back(std::move(js));
    }
    j["steps"] = std::move(steps);
    nlohmann::json events = nlohmann::json::array();
    for (const ReplayEvent& e : r.events)
        events.push_back({{"step", e.step}, {"stage", e.stage}, {"from", actionName(e.from)}, {"to", actionName(e.to)}});
    j["events"] = std::move(events);
    return j;
}

}  // namespace kcx
