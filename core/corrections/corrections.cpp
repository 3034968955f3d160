#include "core/corrections/corrections.h"

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
    else
        return fail("unknown correction '" + name + "' (tis:C, token_mask:A,B, geo_mask:A,B, seq_reject:A,B)");
    const size_t want = m.kind == CorrectionMethod::Kind::Tis ? 1 : 2;
    if (colon == std::string::npos)
        return fail(name + " needs " + (want == 1 ? "a bound, e.g. tis:2" : "two bounds, e.g. " + name + ":0.5,2"));
    std::string rest = text.substr(colon + 1);
    size_t at = 0;
    while (at <= rest.size()) {
        const size_t comma = rest.find(',', at);
        const std::string part = rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        char* end = nullptr;
        const double v = std::strtod(part.c_str(), &end);
        if (part.empty() || end != part.c_str() + part.size() || !std::isfinite(v))
            return fail("'" + part + "' in '" + text + "' is not a number");
        m.params.push_back(v);
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    if (m.params.size() != want)
        return fail(name + " takes " + std::to_string(want) + " number" + (want == 1 ? "" : "s") + ", got " +
                    std::to_string(m.params.size()) + " in '" + text + "'");
    if (want == 1 && !(m.params[0] > 0))
        return fail("tis: the truncation C must be positive");
    if (want == 2 && !(m.params[0] >= 0 && m.params[0] <= m.params[1]))
        return fail(name + ": the bounds need 0 ≤ A ≤ B");
    return m;
}

std::vector<CorrectionMethod> defaultCorrections() {
    std::vector<CorrectionMethod> out;
    for (const char* t : {"tis:2", "token_mask:0.5,2", "geo_mask:0.99,1.01", "seq_reject:0.5,2"})
        out.push_back(*parseCorrection(t));
    return out;
}

CorrectionsReport applyCorrections(const Run& run, const std::vector<CorrectionMethod>& methods) {
    CorrectionsReport rep;
    struct Acc {
        uint64_t tokens = 0, sequences = 0, kept = 0;
        double sw = 0, sw2 = 0;
    };
    std::vector<Acc> acc(methods.size());
    double sw = 0, sw2 = 0;
    uint64_t wn = 0;
    std::vector<double> w;
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        w.clear();
        double sumR = 0;
        for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
            const double a = run.lpTrain[i], b = run.lpInf[i];
            if (!std::isfinite(a) || !std::isfinite(b))
                continue;
            const double r = a - b;
            sumR += r;
            w.push_back(std::exp(r));
        }
        if (w.empty())
            continue;
        ++rep.sequences;
        rep.tokens += w.size();
        for (double x : w)
            if (std::isfinite(x)) {
                sw += x;
                sw2 += x * x;
                ++wn;
            }
        const double geo = std::exp(sumR / double(w.size()));
        for (size_t k = 0; k < methods.size(); ++k) {
            const CorrectionMethod& m = methods[k];
            Acc& a = acc[k];
            const double lo = m.params.size() > 1 ? m.params[0] : 0, hi = m.params.size() > 1 ? m.params[1] : 0;
            auto outside = [&](double x) { return !(x >= lo && x <= hi); };
            uint64_t hit = 0;
            switch (m.kind) {
            case CorrectionMethod::Kind::Tis:
                for (double x : w) {
                    const double kept = std::min(x, m.params[0]);
                    hit += x > m.params[0];
                    a.sw += kept;
                    a.sw2 += kept * kept;
                    ++a.kept;
                }
                a.tokens += hit;
                break;
            case CorrectionMethod::Kind::TokenMask:
                for (double x : w) {
                    if (outside(x)) {
                        ++hit;
                        continue;
                    }
                    a.sw += x;
                    a.sw2 += x * x;
                    ++a.kept;
                }
                a.tokens += hit;
                break;
            case CorrectionMethod::Kind::GeoMask:
            case CorrectionMethod::Kind::SeqReject: {
                bool drop = false;
                if (m.kind == CorrectionMethod::Kind::GeoMask)
                    drop = outside(geo);
                else
                    for (double x : w)
                        drop = drop || outside(x);
                if (drop) {
                    hit = w.size();
                    a.tokens += hit;
                } else {
                    for (double x : w) {
                        a.sw += x;
                        a.sw2 += x * x;
                        ++a.kept;
                    }
                }
                break;
            }
            }
            a.sequences += hit > 0;
        }
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto ess = [&](double s1, double s2, uint64_t n) { return n && s2 > 0 && std::isfinite(s2) ? s1 * s1 / (double(n) * s2) : nan; };
    rep.essBefore = ess(sw, sw2, wn);
    for (size_t k = 0; k < methods.size(); ++k) {
        CorrectionResult r;
        r.method = methods[k];
        r.tokens = acc[k].tokens;
        r.sequences = acc[k].sequences;
        r.tokensKept = acc[k].kept;
        r.tokenFraction = rep.tokens ? double(r.tokens) / double(rep.tokens) : nan;
        r.sequenceFraction = rep.sequences ? double(r.sequences) / double(rep.sequences) : nan;
        r.ess = ess(acc[k].sw, acc[k].sw2, acc[k].kept);
        rep.methods.push_back(r);
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
    nlohmann::json methods = nlohmann::json::array();
    for (const CorrectionResult& c : r.methods)
        methods.push_back({{"method", c.method.name()},
                           {"params", c.method.params},
                           {"token_fraction", num(c.tokenFraction)},
                           {"sequence_fraction", num(c.sequenceFraction)},
                           {"ess", num(c.ess)},
                           {"tokens_affected", c.tokens},
                           {"sequences_affected", c.sequences},
                           {"tokens_kept", c.tokensKept}});
    j["methods"] = std::move(methods);
    return j;
}

}  // namespace kcx
