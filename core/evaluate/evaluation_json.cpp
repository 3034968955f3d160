#include "core/evaluate/evaluation_json.h"

#include <cmath>

namespace kcx {

namespace {
nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
}  // namespace

nlohmann::json resultJson(const Result& r) {
    nlohmann::json j;
    j["clause"] = r.clause;
    j["family"] = familyName(r.family);
    j["metric"] = r.metric;
    j["aggregate"] = r.aggregate;
    j["status"] = statusName(r.status);
    j["observed"] = opt(r.observed);
    if (r.max)
        j["max"] = *r.max;
    if (r.min)
        j["min"] = *r.min;
    j["n"] = r.n;
    j["action"] = actionName(r.action);
    j["slice"] = r.slice ? nlohmann::json(*r.slice) : nlohmann::json();
    if (r.upper)
        j["upper"] = *r.upper;
    if (r.ci)   // a side a quantile's interval cannot bound (±∞) is null
        j["ci"] = {opt(std::isfinite(r.ci->first) ? std::optional(r.ci->first) : std::nullopt),
                   opt(std::isfinite(r.ci->second) ? std::optional(r.ci->second) : std::nullopt)};
    if (r.beyond)
        j["beyond"] = *r.beyond;
    if (r.confidence)
        j["confidence"] = *r.confidence;
    j["margin"] = opt(r.margin);
    j["severity"] = severityName(r.severity);
    j["message"] = r.message;
    return j;
}

nlohmann::json boundJson(const BoundStep& b) {
    nlohmann::json j;
    j["step"] = b.step;
    j["input"] = opt(b.input);
    j["bound"] = opt(b.bound);
    j["observed"] = opt(b.observed);
    j["vacuous"] = b.vacuous;
    if (b.lower)
        j["lower"] = *b.lower;
    j["title"] = b.title;
    j["assumption"] = b.assumption;
    j["input_name"] = b.inputName;
    j["observed_name"] = b.observedName;
    return j;
}

nlohmann::json evaluationJson(const Evaluation& ev) {
    nlohmann::json j;
    j["kcx"] = 1;
    j["verdict"] = statusName(ev.verdict);
    j["stage"] = ev.stage;
    j["action"] = actionName(ev.action);
    nlohmann::json stages = nlohmann::json::object();
    for (const auto& [s, a] : ev.stageActions)
        stages[s] = actionName(a);
    j["stages"] = stages;
    j["results"] = nlohmann::json::array();
    for (const auto& r : ev.results)
        j["results"].push_back(resultJson(r));
    j["bounds"] = nlohmann::json::array();
    for (const auto& b : ev.bounds)
        j["bounds"].push_back(boundJson(b));
    return j;
}

}  // namespace kcx
