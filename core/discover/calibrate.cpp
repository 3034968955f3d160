// Contract calibration (core/discover/calibrate.h, docs/slices.md).
#include "core/discover/calibrate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/metrics/derived_slices.h"

namespace kcx {

namespace {

// How a metric is bounded from a trusted run.
enum class Kind {
    Divergence,   // >= 0, larger is worse: the tail (pQ) and the mean, each a `max`
    Signed,       // either sign is a drift: pQ as `max` and p(1-Q) as `min`
    Share,        // a 0/1 rate, larger is worse: the mean as `max`
    Agreement,    // a 0/1 rate, smaller is worse: the mean as `min` (margin on 1 - mean)
    RunHigher,    // a per-run value in (0, 1], smaller is worse: `min` (margin on 1 - value)
};

struct Plan {
    const char* metric;
    Kind kind;
};

const Plan kPlans[] = {
    {"abs_log_ratio", Kind::Divergence},   {"log_ratio", Kind::Signed},
    {"prob_diff", Kind::Divergence},       {"k3", Kind::Divergence},
    {"clip_excess", Kind::Share},          {"tv_lower", Kind::Divergence},
    {"kl_lower", Kind::Divergence},        {"top1_agree", Kind::Agreement},
    {"tv", Kind::Divergence},              {"kl_train_inf", Kind::Divergence},
    {"kl_inf_train", Kind::Divergence},    {"js", Kind::Divergence},
    {"max_abs_logit_diff", Kind::Divergence}, {"logit_drift", Kind::Divergence},
    {"entropy_diff", Kind::Signed},        {"seq_abs_log_ratio", Kind::Divergence},
    {"seq_max_abs_log_ratio", Kind::Divergence}, {"seq_mean_abs_log_ratio", Kind::Divergence},
    {"reward_diff", Kind::Signed},         {"ess", Kind::RunHigher},
};

// v rounded outward (up for a max, down for a min) to four significant digits, as text
// that reads back as exactly the number compared.
double roundOut(double v, bool up) {
    if (v == 0 || !std::isfinite(v))
        return v;
    const double scale = std::pow(10.0, std::floor(std::log10(std::fabs(v))) - 3);
    const double r = (up ? std::ceil(v / scale) : std::floor(v / scale)) * scale;
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.4g", r);
    double back = std::strtod(buf, nullptr);
    // %.4g can round back across v; step one unit outward when it did.
    if (up ? back < v : back > v) {
        std::snprintf(buf, sizeof buf, "%.4g", up ? r + scale : r - scale);
        back = std::strtod(buf, nullptr);
    }
    return back;
}

std::string calibrationNumber(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string percent(double q) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", q * 100);
    return buf;
}

std::string sliceText(const std::optional<SliceLabels>& s) {
    std::string out;
    if (s)
        for (const auto& [k, v] : *s)
            out += (out.empty() ? "" : ",") + k + "=" + v;
    return out;
}

struct Probe {
    std::string metric, aggregate;
    bool upper = true;   // the bound is a max (else a min)
    Kind kind = Kind::Divergence;
};

}  // namespace

const std::vector<std::string>& calibrationMetrics() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const Plan& p : kPlans)
            v.push_back(p.metric);
        return v;
    }();
    return names;
}

bool Calibration::separates() const {
    if (!goodPasses())
        return false;
    for (size_t i = 0; i < bad.size(); ++i)
        if (!badFails(i))
            return false;
    return true;
}

Calibration calibrate(std::shared_ptr<const Run> good, const std::vector<std::shared_ptr<const Run>>& bad,
                      const CalibrateOptions& o, const Progress& progress) {
    if (!(o.quantile > 0.5 && o.quantile < 1))
        throw std::invalid_argument("the quantile must lie in (0.5, 1), found " + calibrationNumber(o.quantile));
    if (!(o.margin >= 0) || !std::isfinite(o.margin))
        throw std::invalid_argument("the margin must be a number >= 0, found " + calibrationNumber(o.margin));
    for (const auto& m : o.metrics)
        if (std::find(calibrationMetrics().begin(), calibrationMetrics().end(), m) == calibrationMetrics().end())
            throw std::invalid_argument("'" + m + "' is not a metric kcx calibrate bounds (one of the list in "
                                        "docs/slices.md)");
    if (!o.perSlice.empty()) {
        if (isDerivedKey(o.perSlice)) {
            if (auto err = checkDerivedKey(o.perSlice))
                throw std::invalid_argument(*err);
        } else if (good->slices.keyIndex(o.perSlice) < 0) {
            throw std::invalid_argument("the good run has no slice key '" + o.perSlice + "'");
        }
    }
    const std::string hi = "p" + percent(o.quantile), lo = "p" + percent(1 - o.quantile);
    if (!parseAggregate(hi) || !parseAggregate(lo))
        throw std::invalid_argument("the quantile " + calibrationNumber(o.quantile) + " does not make an aggregate pNN.N");

    // per_slice applies to per-token metrics, and to per-sequence ones when the key is per sequence.
    auto perSliceFor = [&](const std::string& metric) -> std::string {
        const MetricLevel level = findMetric(metric)->level;
        if (o.perSlice.empty() || level == MetricLevel::Run)
            return "";
        if (level == MetricLevel::Sequence && derivedLevel(o.perSlice) == DerivedLevel::Token)
            return "";
        return o.perSlice;
    };
    Calibration cal;
    auto engine = std::make_shared<MetricEngine>(good);
    // The probes: one clause per bound, evaluated on the good run to read what it observes.
    std::vector<Probe> probes;
    for (const Plan& plan : kPlans) {
        if (!o.metrics.empty() && std::find(o.metrics.begin(), o.metrics.end(), plan.metric) == o.metrics.end())
            continue;
        const auto values = engine->get(plan.metric);
        if (!values->supported()) {
            cal.notes.push_back(std::string(plan.metric) + ": the good run's data cannot support it");
            continue;
        }
        switch (plan.kind) {
        case Kind::Divergence:
            probes.push_back({plan.metric, hi, true, plan.kind});
            probes.push_back({plan.metric, "mean", true, plan.kind});
            break;
        case Kind::Signed:
            probes.push_back({plan.metric, hi, true, plan.kind});
            probes.push_back({plan.metric, lo, false, plan.kind});
            break;
        case Kind::Share: probes.push_back({plan.metric, "mean", true, plan.kind}); break;
        case Kind::Agreement: probes.push_back({plan.metric, "mean", false, plan.kind}); break;
        case Kind::RunHigher: probes.push_back({plan.metric, "mean", false, plan.kind}); break;
        }
    }
    report(progress, 0.1);
    Contract probe;
    probe.name = "probe";
    for (size_t i = 0; i < probes.size(); ++i) {
        Clause c;
        c.id = std::string("P").append(std::to_string(i));
        c.metric = probes[i].metric;
        c.aggregate = parseAggregate(probes[i].aggregate);
        c.max = Threshold{1e308, {}};
        c.perSlice = perSliceFor(c.metric);
        probe.clauses.push_back(c);
    }
    Clause nonfinite;
    nonfinite.id = "Pnf";
    nonfinite.family = Family::Observability;
    nonfinite.metric = "log_ratio";
    nonfinite.maxNonfiniteFraction = Threshold{1, {}};
    probe.clauses.push_back(nonfinite);
    const Evaluation seen = Evaluator(engine, probe).evaluate();
    report(progress, 0.4);

    // The contract text.
    std::string numerical, header;
    size_t n = 0;
    for (size_t i = 0; i < probes.size(); ++i) {
        const Probe& p = probes[i];
        std::optional<double> worst;
        std::string error;
        for (const Result& r : seen.results)
            if (r.clause == std::string("P").append(std::to_string(i))) {
                if (r.status == Status::Error)
                    error = r.message;
                if (r.observed)
                    worst = !worst ? *r.observed : p.upper ? std::max(*worst, *r.observed) : std::min(*worst, *r.observed);
            }
        if (!worst) {
            cal.notes.push_back(p.metric + " " + p.aggregate + ": " + (error.empty() ? "no value on the good run" : error));
            continue;
        }
        double bound;
        if (p.kind == Kind::Agreement || p.kind == Kind::RunHigher)
            bound = 1 - (1 - *worst) * (1 + o.margin);   // the margin widens the disagreement
        else
            bound = *worst + (p.upper ? 1 : -1) * o.margin * std::fabs(*worst);
        bound = roundOut(bound, p.upper);
        CalibratedClause cc;
        cc.id = std::string("N").append(std::to_string(++n));
        cc.metric = p.metric;
        cc.aggregate = p.aggregate;
        cc.observed = *worst;
        (p.upper ? cc.max : cc.min) = bound;
        const bool perSlice = !perSliceFor(p.metric).empty();
        numerical += "  - id: " + cc.id + "\n    description: \"" + p.aggregate + " of " + p.metric + " on the good run: " +
                     calibrationNumber(*worst) + (perSlice ? " (worst " + o.perSlice + ")" : std::string()) + "\"\n    metric: " +
                     p.metric + "\n    aggregate: " + p.aggregate + "\n    " + (p.upper ? "max: " : "min: ") +
                     calibrationNumber(bound) + "\n" + (perSlice ? "    per_slice: " + nlohmann::json(o.perSlice).dump() + "\n" : "");
        cal.clauses.push_back(cc);
    }
    double nf = 0;
    for (const Result& r : seen.results)
        if (r.clause == "Pnf" && r.observed)
            nf = std::max(nf, *r.observed);
    header = "# Proposed by kcx calibrate from " + (o.source.empty() ? std::string("a trusted run") : o.source) +
             ": each threshold is what that run showed (" + hi + " tail, mean), widened by " + calibrationNumber(100 * o.margin) +
             "%.\nkcx_contract: 1\nname: " + nlohmann::json(o.name).dump() +
             "\ndescription: \"Thresholds calibrated from a trusted run at " + hi + " with a " + calibrationNumber(100 * o.margin) +
             "% margin.\"\n";
    cal.yaml = header + (numerical.empty() ? "" : "numerical:\n" + numerical) +
               "observability:\n  - id: O1\n    description: \"non-finite share of log_ratio on the good run: " + calibrationNumber(nf) +
               "\"\n    metric: log_ratio\n    max_nonfinite_fraction: " + calibrationNumber(roundOut(nf, true)) +
               "\nescalation:\n  - when: {severity: [error, critical]}\n    action: block_promotion\n"
               "  - when: {status: inconclusive}\n    action: hold\n  - default: warn\n"
               "stages: [offline_ci, shadow, canary, full]\n";
    cal.contract = parseContract(cal.yaml, o.name + ".yaml");

    // Both ways: the good run must pass, every bad run must fail.
    cal.good = Evaluator(engine, cal.contract).evaluate();
    for (size_t i = 0; i < bad.size(); ++i) {
        MetricOptions mo;
        mo.ppoClip = cal.contract.bounds.ppoClip;
        cal.bad.push_back(Evaluator(std::make_shared<MetricEngine>(bad[i], mo), cal.contract).evaluate());
        report(progress, 0.5 + 0.5 * double(i + 1) / double(bad.size()));
    }
    std::map<std::pair<std::string, std::string>, size_t> rowOf;
    auto row = [&](const Result& r) -> SeparationRow& {
        const auto key = std::make_pair(r.clause, sliceText(r.slice));
        auto it = rowOf.find(key);
        if (it == rowOf.end()) {
            it = rowOf.emplace(key, cal.table.size()).first;
            SeparationRow sr;
            sr.clause = r.clause;
            sr.slice = key.second;
            sr.good = Status::Inconclusive;   // until the good run says otherwise
            sr.bad.assign(bad.size(), Status::Inconclusive);
            cal.table.push_back(sr);
        }
        return cal.table[it->second];
    };
    for (const Result& r : cal.good.results)
        row(r).good = r.status;
    for (size_t i = 0; i < cal.bad.size(); ++i)
        for (const Result& r : cal.bad[i].results)
            row(r).bad[i] = r.status;
    report(progress, 1.0);
    return cal;
}

}  // namespace kcx
