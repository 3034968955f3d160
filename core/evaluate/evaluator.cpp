// The evaluator: clause results, escalation per stage, verdict and bound chain (SPEC 4.1).
#include "core/evaluate/evaluator.h"

#include <algorithm>
#include <stdexcept>

#include "core/evaluate/evaluator_internal.h"

namespace kcx {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// The slice labels a result stands for: its per_slice label plus the clause's single-valued `where`.
SliceLabels context(const Contract& contract, const Result& r) {
    SliceLabels labels;
    if (const Clause* c = contract.find(r.clause))
        for (const auto& [key, values] : c->where.anyOf)
            if (values.size() == 1)
                labels[key] = values.front();
    if (r.slice)
        for (const auto& [k, v] : *r.slice)
            labels[k] = v;
    return labels;
}

}  // namespace

bool ruleMatches(const EscalationRule& rule, const Contract& contract, const Result& r, const std::string& stage) {
    if (rule.isDefault)
        return true;
    if (!rule.clauses.empty() && !contains(rule.clauses, r.clause))
        return false;
    if (!rule.families.empty() && std::find(rule.families.begin(), rule.families.end(), r.family) == rule.families.end())
        return false;
    if (!rule.severities.empty() &&
        std::find(rule.severities.begin(), rule.severities.end(), r.severity) == rule.severities.end())
        return false;
    if (!rule.statuses.empty() && std::find(rule.statuses.begin(), rule.statuses.end(), r.status) == rule.statuses.end())
        return false;
    if (!rule.stages.empty() && !contains(rule.stages, stage))
        return false;
    if (!rule.slice.empty()) {
        const SliceLabels labels = context(contract, r);
        for (const auto& [key, accepted] : rule.slice.anyOf) {
            const auto it = labels.find(key);
            if (it == labels.end() || !contains(accepted, it->second))
                return false;
        }
    }
    return true;
}

std::pair<std::optional<double>, std::optional<double>> comparedBounds(const Result& r, const Contract& contract) {
    std::optional<double> lo = r.min, hi = r.max;
    const Clause* c = contract.find(r.clause);
    if (!lo && !hi && c && r.aggregate != "coverage" && r.aggregate != "nonfinite_fraction") {
        if (c->min)
            lo = c->min->value;
        if (c->max)
            hi = c->max->value;
    }
    return {lo, hi};
}

Action escalate(const Contract& contract, const Result& result, const std::string& stage) {
    if (result.status == Status::Pass)
        return Action::Pass;
    for (const auto& rule : contract.escalation)
        if (ruleMatches(rule, contract, result, stage))
            return rule.action;
    return Action::Warn;
}

Evaluator::Evaluator(std::shared_ptr<MetricEngine> engine, Contract contract)
    : engine_(std::move(engine)), contract_(std::move(contract)) {}

Evaluator::~Evaluator() = default;

void Evaluator::setThreshold(const std::string& clauseId, const std::string& which, double value) {
    auto it = std::find_if(contract_.clauses.begin(), contract_.clauses.end(),
                           [&](const Clause& c) { return c.id == clauseId; });
    if (it == contract_.clauses.end())
        throw std::invalid_argument("no clause '" + clauseId + "'");
    auto set = [&](std::optional<Threshold>& t) {
        if (!t)
            t = Threshold{};
        t->value = value;
    };
    if (which == "max") set(it->max);
    else if (which == "min") set(it->min);
    else if (which == "level") set(it->level);
    else if (which == "min_coverage") set(it->minCoverage);
    else if (which == "max_nonfinite_fraction") set(it->maxNonfiniteFraction);
    else if (which == "confidence") it->confidence.value = value;
    else throw std::invalid_argument("no threshold '" + which + "' (max, min, level, confidence, min_coverage, "
                                     "max_nonfinite_fraction)");
    decided_.erase(clauseId);   // the cached groups stay: only the decision is redone
}

void Evaluator::replaceClause(const Clause& clause) {
    auto it = std::find_if(contract_.clauses.begin(), contract_.clauses.end(),
                           [&](const Clause& c) { return c.id == clause.id; });
    if (it == contract_.clauses.end())
        throw std::invalid_argument("no clause '" + clause.id + "'");
    *it = clause;
    decided_.erase(clause.id);
    states_.erase(clause.id);
}

Evaluation Evaluator::evaluate(const EvaluateOptions& options, const Progress& progress) {
    Evaluation ev;
    ev.stage = evaluationStage(contract_, options);
    const size_t total = contract_.clauses.size() + 1;
    size_t done = 0;
    const int threads = engine_->options().threads;
    for (const Clause& c : contract_.clauses) {
        if (!decided_.count(c.id)) {
            auto& st = states_[c.id];
            if (!st)
                st = std::make_unique<ClauseState>();
            std::vector<Result> results;
            const bool metricClause = c.family == Family::Numerical || c.family == Family::Statistical;
            // A counted state answers its own level only: another level (a drag) gets the
            // values, built once and kept for the drags that follow. (Any other edit of the
            // clause goes through replaceClause(), which drops its state.)
            if (st->counted && (!c.level || c.level->value != st->countedLevel)) {
                *st = ClauseState{};
                detail::buildMetricState(c, *engine_, *st, !oneShot_);
                st->built = true;
            }
            if (metricClause && !st->built) {
                detail::buildMetricState(c, *engine_, *st, !oneShot_, /*countFirst=*/true);
                st->built = true;
            }
            if (metricClause && !st->error.empty()) {
                Result r = detail::baseResult(c, detail::Group{});
                r.status = Status::Error;
                r.message = st->error;
                r.aggregate = c.aggregate ? c.aggregate->text : "";
                results.push_back(r);
            } else if (c.family == Family::Numerical) {
                results = detail::decideNumerical(c, *st, threads);
            } else if (c.family == Family::Statistical) {
                results = detail::decideStatistical(c, *st);
            } else if (c.family == Family::Runtime) {
                results = detail::decideRuntime(c, engine_->run());
            } else {
                results = detail::decideObservability(c, *engine_, *st);
            }
            decided_[c.id] = std::move(results);
            // One shot: nothing re-decides this clause, so its copies of the values go now,
            // before the next clause copies its own (kcx check held every clause's at once).
            if (oneShot_)
                *st = ClauseState{};
        }
        for (Result r : decided_[c.id])
            ev.results.push_back(std::move(r));
        report(progress, double(++done) / double(total));
    }
    finishEvaluation(contract_, ev);
    if (oneShot_) {
        // Nothing asks for the clauses' arrays again: the bound chain computes its inputs
        // one at a time and keeps only their moments.
        engine_->clear();
        engine_->setLean();
    }
    ev.bounds = boundChain(contract_, *engine_);
    report(progress, 1.0);
    return ev;
}

std::string evaluationStage(const Contract& contract, const EvaluateOptions& options) {
    const std::string stage = options.stage.empty() ? (contract.stages.empty() ? "offline_ci" : contract.stages.front())
                                                    : options.stage;
    if (!contains(contract.stages, stage))
        throw std::invalid_argument("unknown stage '" + stage + "' (the contract's stages are " + [&] {
            std::string s;
            for (const auto& st : contract.stages)
                s += (s.empty() ? "" : ", ") + st;
            return s;
        }() + ")");
    return stage;
}

void finishEvaluation(const Contract& contract, Evaluation& ev) {
    for (const auto& stage : contract.stages) {
        Action strongest = Action::Pass;
        for (const Result& r : ev.results)
            strongest = std::max(strongest, escalate(contract, r, stage));
        ev.stageActions[stage] = strongest;
    }
    for (Result& r : ev.results)
        r.action = escalate(contract, r, ev.stage);
    ev.action = ev.stageActions[ev.stage];
    bool fail = false, inconclusive = false;
    for (const Result& r : ev.results) {
        fail = fail || r.status == Status::Fail;
        inconclusive = inconclusive || r.status == Status::Inconclusive || r.status == Status::Error;
    }
    ev.verdict = fail ? Status::Fail : inconclusive ? Status::Inconclusive : Status::Pass;
}

Evaluation evaluateContract(const Contract& contract, std::shared_ptr<const Run> run,
                            const EvaluateOptions& options, const Progress& progress) {
    MetricOptions mo;
    mo.ppoClip = contract.bounds.ppoClip;
    Evaluator ev(std::make_shared<MetricEngine>(std::move(run), mo), contract);
    ev.setOneShot();
    return ev.evaluate(options, progress);
}

}  // namespace kcx
