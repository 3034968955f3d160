#include "core/corrections/corrections.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace kcx {

std::string CorrectionMethod::name() const {
    switch (kind) {
    case Kind::Tis: return "tis";
    case Kind::TokenMask: return "token_mask";
    case Kind::GeoMask: return "geo_mask";
    case Kind::SeqReject: return "seq_reject";
    case Kind::SeqTis: return "seq_tis";
    case Kind::ProductMask: return "product_mask";
    }
    return "?";
}

std::optional<CorrectionMethod> parseCorrection(const std::string& text, std::string* error) {
    auto fail = [&](const std::string& why) -> std::optional<CorrectionMethod> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const size_t colon = text.find(':');
    const std::string name = text.substr(0, colon);
    CorrectionMethod m;
    if (name == "tis")
        m.kind = CorrectionMethod::Kind::Tis;
    else if (name == "token_mask")
        m.kind = CorrectionMethod::Kind::TokenMask;
    else if (name == "geo_mask")
        m.kind = CorrectionMethod::Kind::GeoMask;
    else if (name == "seq_reject")
        m.kind = CorrectionMethod::Kind::SeqReject;
    else if (name == "seq_tis")
        m.kind = CorrectionMethod::Kind::SeqTis;
    else if (name == "product_mask")
        m.kind = CorrectionMethod::Kind::ProductMask;
    else
        return fail("unknown correction '" + name +
                    "' (tis:C, tis:A,C, token_mask:A,B, geo_mask:A,B, seq_reject:A,B, seq_tis:C, product_mask:A,B)");
    size_t want = m.kind == CorrectionMethod::Kind::SeqTis ? 1 : 2;
    if (colon == std::string::npos)
        return fail(name + " needs " +
                    (m.kind == CorrectionMethod::Kind::Tis || want == 1 ? "a bound, e.g. " + name + ":2"
                                                                       : "two bounds, e.g. " + name + ":0.5,2"));
    std::string rest = text.substr(colon + 1);
    size_t at = 0;
    while (at <= rest.size()) {
        const size_t comma = rest.find(',', at);
        const std::string part = rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        char* end = nullptr;
        const double v = std::strtod(part.c_str(), &end);
        const bool infinite = part == "inf" && comma == std::string::npos;
        if (!infinite && (part.empty() || end != part.c_str() + part.size() || !std::isfinite(v)))
            return fail("'" + part + "' in '" + text + "' is not a number");
        m.params.push_back(v);
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    if (m.kind == CorrectionMethod::Kind::Tis && m.params.size() == 1)
        want = 1;
    if (m.params.size() != want)
        return fail(name + " takes " +
                    (m.kind == CorrectionMethod::Kind::Tis ? std::string("one or two numbers")
                                                           : std::to_string(want) + " number" + (want == 1 ? "" : "s")) +
                    ", got " + std::to_string(m.params.size()) + " in '" + text + "'");
    std::string why;
    if (!checkCorrection(m, &why))
        return fail(why);
    return m;
}

bool checkCorrection(const CorrectionMethod& m, std::string* error) {
    auto fail = [&](const std::string& why) {
        if (error)
            *error = why;
        return false;
    };
    const auto& p = m.params;
    const bool tis = m.kind == CorrectionMethod::Kind::Tis, seqTis = m.kind == CorrectionMethod::Kind::SeqTis;
    if (p.empty() || p.size() > 2 || (seqTis && p.size() != 1) || (!tis && !seqTis && p.size() != 2))
        return fail(m.name() + ": wrong number of bounds");
    if ((tis || seqTis) && !(p.back() > 0))
        return fail(m.name() + ": the truncation C must be positive");
    if (p.size() == 2 && !(p[0] >= 0 && p[0] <= p[1]))
        return fail(m.name() + ": the bounds need 0 ≤ A ≤ B");
    for (double v : p)
        if (std::isnan(v) || v < 0)
            return fail(m.name() + ": a bound is not a non-negative number");
    return true;
}

std::vector<CorrectionMethod> defaultCorrections() {
    std::vector<CorrectionMethod> out;
    for (const char* t : {"tis:2", "token_mask:0.5,2", "geo_mask:0.99,1.01", "seq_reject:0.5,2"})
        out.push_back(*parseCorrection(t));
    return out;
}

namespace {

// SPEC 5 step 4's factor e^ρ − 1 (times G A_max when both are known).
double pgBiasOf(double rho, const CorrectionsOptions& o) {
    if (!std::isfinite(rho))
        return std::numeric_limits<double>::quiet_NaN();
    const double g = std::expm1(rho);
    return o.gradNorm && o.advantageMax ? *o.gradNorm * *o.advantageMax * g : g;
}

nlohmann::json paramsJson(const std::vector<double>& params) {
    nlohmann::json a = nlohmann::json::array();
    for (double v : params)
        a.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf"));
    return a;
}

}  // namespace

CorrectionsReport applyCorrections(const Run& run, const std::vector<CorrectionMethod>& methods,
                                   const CorrectionsOptions& options, const std::vector<size_t>* sequences) {
    CorrectionsReport rep;
    rep.absoluteBias = options.gradNorm && options.advantageMax;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (!options.perSlice.empty()) {
        const int key = run.slices.keyIndex(options.perSlice);
        if (key >= 0) {
            rep.sliceKey = options.perSlice;
            const size_t K = run.slices.keys.size();
            std::vector<std::vector<size_t>> byCode(run.slices.values[size_t(key)].size());
            auto add = [&](size_t s) {
                const int32_t c = run.slices.codes[s * K + size_t(key)];
                if (c >= 0 && size_t(c) < byCode.size())
                    byCode[size_t(c)].push_back(s);
            };
            if (sequences)
                for (size_t s : *sequences)
                    add(s);
            else
                for (size_t s = 0; s < run.sequenceCount(); ++s)
                    add(s);
            std::vector<size_t> order(byCode.size());
            for (size_t c = 0; c < order.size(); ++c)
                order[c] = c;
            // Steps in numeric order, other keys in their values' order.
            if (options.perSlice == kStepKey)
                std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                    const auto x = stepNumber(run.slices.values[size_t(key)][a]), y = stepNumber(run.slices.values[size_t(key)][b]);
                    return x.value_or(-1) < y.value_or(-1);
                });
            CorrectionsOptions inner = options;
            inner.perSlice.clear();
            for (size_t c : order)
                if (!byCode[c].empty())
                    rep.groups.push_back({run.slices.values[size_t(key)][c], applyCorrections(run, methods, inner, &byCode[c])});
        }
    }
    struct Acc {
        uint64_t tokens = 0, sequences = 0, kept = 0, withReward = 0, positive = 0;
        double sw = 0, sw2 = 0, rho = 0, truncated = 0;
    };
    std::vector<Acc> acc(methods.size());
    double sw = 0, sw2 = 0, rhoBefore = 0;
    uint64_t wn = 0;
    std::vector<double> w, r;
    const std::vector<double>* rewards = !run.rewardInf.empty() ? &run.rewardInf : !run.rewardTrain.empty() ? &run.rewardTrain : nullptr;
    rep.rewardSide = !run.rewardInf.empty() ? "inf" : !run.rewardTrain.empty() ? "train" : "";
    const size_t count = sequences ? sequences->size() : run.sequenceCount();
    for (size_t q = 0; q < count; ++q) {
        const size_t s = sequences ? (*sequences)[q] : q;
        w.clear();
        r.clear();
        double sumR = 0;
        for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
            const double a = run.lpTrain[i], b = run.lpInf[i];
            if (!std::isfinite(a) || !std::isfinite(b))
                continue;
            sumR += a - b;
            r.push_back(a - b);
            w.push_back(std::exp(a - b));
        }
        if (w.empty())
            continue;
        ++rep.sequences;
        rep.tokens += w.size();
        const double reward = rewards ? (*rewards)[s] : nan;
        const bool hasReward = std::isfinite(reward);
        rep.sequencesWithReward += hasReward;
        rep.positiveReward += hasReward && reward > 0;
        for (size_t t = 0; t < w.size(); ++t) {
            rhoBefore = std::max(rhoBefore, std::fabs(r[t]));
            if (std::isfinite(w[t])) {
                sw += w[t];
                sw2 += w[t] * w[t];
                ++wn;
            }
        }
        const double geo = std::exp(sumR / double(w.size()));
        for (size_t k = 0; k < methods.size(); ++k) {
            const CorrectionMethod& m = methods[k];
            Acc& a = acc[k];
            const double lo = m.params.size() > 1 ? m.params[0] : 0, hi = m.params.size() > 1 ? m.params[1] : 0;
            auto outside = [&](double x) { return !(x >= lo && x <= hi); };
            auto keep = [&](double x, double rx) {
                a.sw += x;
                a.sw2 += x * x;
                a.rho = std::max(a.rho, std::fabs(rx));
                ++a.kept;
            };
            uint64_t hit = 0;
            switch (m.kind) {
            case CorrectionMethod::Kind::Tis: {
                // tis:C, or tis:A,C: clamped to [A, C]
                const double C = m.params.back(), A = m.params.size() > 1 ? m.params[0] : 0;
                for (size_t t = 0; t < w.size(); ++t) {
                    const bool high = w[t] > C, low = w[t] < A;
                    hit += high || low;
                    if (high)
                        a.truncated += w[t] - C;
                    const double used = high ? C : low ? A : w[t];
                    keep(used, high || low ? std::log(used) : r[t]);
                }
                a.tokens += hit;
                break;
            }
            case CorrectionMethod::Kind::SeqTis: {
                // Every token weighted by the sequence's min(exp(Σ r), C), Σ r clamped at ±20.
                const double sr = std::clamp(sumR, -20.0, 20.0), C = m.params[0];
                const bool cut = std::exp(sr) > C;
                const double used = cut ? C : std::exp(sr), logUsed = cut ? std::log(C) : sr;
                for (size_t t = 0; t < w.size(); ++t) {
                    if (cut)
                        a.truncated += std::exp(sr) - C;
                    keep(used, logUsed);
                }
                hit = cut ? w.size() : 0;
                a.tokens += hit;
                break;
            }
            case CorrectionMethod::Kind::TokenMask:
                for (size_t t = 0; t < w.size(); ++t) {
                    if (outside(w[t])) {
                        ++hit;
                        continue;
                    }
                    keep(w[t], r[t]);
                }
                a.tokens += hit;
                break;
            case CorrectionMethod::Kind::GeoMask:
            case CorrectionMethod::Kind::ProductMask:
            case CorrectionMethod::Kind::SeqReject: {
                bool drop = false;
                if (m.kind == CorrectionMethod::Kind::GeoMask)
                    drop = outside(geo);
                else if (m.kind == CorrectionMethod::Kind::ProductMask)
                    drop = outside(std::exp(std::clamp(sumR, -20.0, 20.0)));
                else
                    for (double x : w)
                        drop = drop || outside(x);
                if (drop) {
                    hit = w.size();
                    a.tokens += hit;
                } else {
                    for (size_t t = 0; t < w.size(); ++t)
                        keep(w[t], r[t]);
                }
                break;
            }
            }
            a.sequences += hit > 0;
            if (hit > 0 && hasReward) {
                ++a.withReward;
                a.positive += reward > 0;
            }
        }
    }
    auto ess = [&](double s1, double s2, uint64_t n) { return n && s2 > 0 && std::isfinite(s2) ? s1 * s1 / (double(n) * s2) : nan; };
    rep.essBefore = ess(sw, sw2, wn);
    rep.rhoBefore = rep.tokens ? rhoBefore : nan;
    rep.pgBiasBefore = pgBiasOf(rep.rhoBefore, options);
    for (size_t k = 0; k < methods.size(); ++k) {
        CorrectionResult c;
        c.method = methods[k];
        c.tokens = acc[k].tokens;
        c.sequences = acc[k].sequences;
        c.tokensKept = acc[k].kept;
        c.tokenFraction = rep.tokens ? double(c.tokens) / double(rep.tokens) : nan;
        c.sequenceFraction = rep.sequences ? double(c.sequences) / double(rep.sequences) : nan;
        c.ess = ess(acc[k].sw, acc[k].sw2, acc[k].kept);
        c.affectedWithReward = acc[k].withReward;
        c.affectedPositive = acc[k].positive;
        c.positiveRewardShare = acc[k].withReward ? double(acc[k].positive) / double(acc[k].withReward) : nan;
        c.rho = acc[k].kept ? acc[k].rho : nan;
        c.pgBias = pgBiasOf(c.rho, options);
        const bool truncates = c.method.kind == CorrectionMethod::Kind::Tis || c.method.kind == CorrectionMethod::Kind::SeqTis;
        c.truncatedMass = truncates && rep.tokens ? acc[k].truncated / double(rep.tokens) : nan;
        rep.methods.push_back(c);
    }
    return rep;
}

nlohmann::json correctionsJson(const CorrectionsReport& r) {
    auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json j;
    j["kcx"] = 1;
    j["tokens"] = r.tokens;
    j["sequences"] = r.sequences;
    j["ess_before"] = num(r.essBefore);
    j["rho_before"] = num(r.rhoBefore);
    j["pg_bias_before"] = num(r.pgBiasBefore);
    j["pg_bias_absolute"] = r.absoluteBias;
    if (!r.rewardSide.empty()) {
        j["reward_side"] = r.rewardSide;
        j["sequences_with_reward"] = r.sequencesWithReward;
        j["positive_reward_share"] = num(r.sequencesWithReward ? double(r.positiveReward) / double(r.sequencesWithReward)
                                                                : std::numeric_limits<double>::quiet_NaN());
    }
    nlohmann::json methods = nlohmann::json::array();
    for (const CorrectionResult& c : r.methods) {
        nlohmann::json m = {{"method", c.method.name()},
                            {"params", paramsJson(c.method.params)},
                            {"token_fraction", num(c.tokenFraction)},
                            {"sequence_fraction", num(c.sequenceFraction)},
                            {"ess", num(c.ess)},
                            {"tokens_affected", c.tokens},
                            {"sequences_affected", c.sequences},
                            {"tokens_kept", c.tokensKept},
                            {"rho", num(c.rho)},
                            {"pg_bias", num(c.pgBias)}};
        if (c.method.kind == CorrectionMethod::Kind::Tis || c.method.kind == CorrectionMethod::Kind::SeqTis)
            m["truncated_mass"] = num(c.truncatedMass);
        if (!r.rewardSide.empty()) {
            m["affected_with_reward"] = c.affectedWithReward;
            m["affected_positive_reward_share"] = num(c.positiveRewardShare);
        }
        methods.push_back(std::move(m));
    }
    j["methods"] = std::move(methods);
    if (!r.sliceKey.empty()) {
        nlohmann::json groups = nlohmann::json::array();
        for (const CorrectionsGroup& g : r.groups) {
            nlohmann::json e = correctionsJson(g.report);
            e.erase("kcx");
            e["value"] = g.value;
            groups.push_back(std::move(e));
        }
        j["per_slice"] = {{"key", r.sliceKey}, {"values", std::move(groups)}};
    }
    return j;
}

}  // namespace kcx
