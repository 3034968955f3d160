// Runtime (R) and observability (O) clauses.
#include <algorithm>
#include <cmath>

#include "core/evaluate/evaluator_internal.h"

namespace kcx::detail {
namespace {

Result start(const Clause& c, const std::string& subject) {
    Result r;
    r.clause = c.id;
    r.family = c.family;
    r.severity = c.severity;
    r.metric = subject;
    return r;
}

// header.kernels.<side>.<key> for "train.x"/"inf.x", else a dotted path from the header root.
const nlohmann::json* headerPath(const nlohmann::json& header, const std::string& path) {
    const nlohmann::json* node = &header;
    std::string rest = path;
    if (rest.rfind("train.", 0) == 0 || rest.rfind("inf.", 0) == 0) {
        if (!header.is_object() || !header.contains("kernels"))
            return nullptr;
        node = &header["kernels"];
    }
    size_t start = 0;
    while (start <= rest.size()) {
        const size_t dot = rest.find('.', start);
        const std::string key = rest.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!node->is_object() || !node->contains(key))
            return nullptr;
        node = &(*node)[key];
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    return node;
}

// Share of scope units that have a field; nullopt for a field KCX does not know.
std::optional<double> coverage(const Run& run, const std::string& field, const std::vector<char>& keep) {
    size_t seqs = 0, toks = 0;
    for (size_t s = 0; s < keep.size(); ++s)
        if (keep[s]) {
            ++seqs;
            toks += run.seqLength(s);
        }
    auto perSeq = [&](auto has) -> double {
        size_t n = 0;
        for (size_t s = 0; s < keep.size(); ++s)
            n += keep[s] && has(s);
        return seqs ? double(n) / double(seqs) : 0.0;
    };
    auto perTok = [&](auto has) -> double {
        size_t n = 0;
        for (size_t s = 0; s < keep.size(); ++s)
            if (keep[s])
                for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i)
                    n += has(i);
        return toks ? double(n) / double(toks) : 0.0;
    };
    if (field == "id" || field == "tokens")
        return 1.0;
    if (field == "logp_train")
        return perTok([&](size_t i) { return !isMissing(run.lpTrain[i]); });
    if (field == "logp_inf")
        return perTok([&](size_t i) { return !isMissing(run.lpInf[i]); });
    if (field == "topk_train" || field == "topk_inf") {
        const TopK& t = field == "topk_train" ? run.topkTrain : run.topkInf;
        if (!t.present())
            return 0.0;
        return perTok([&](size_t i) { return !isMissing(t.logp[i * size_t(t.k)]); });
    }
    if (field == "logits" || field == "logits_train" || field == "logits_inf") {
        std::vector<char> has(run.tokenCount(), 0);
        if (run.logits.present())
            for (int64_t r : run.logits.rows)
                has[size_t(r)] = 1;
        return perTok([&](size_t i) { return has[i] != 0; });
    }
    if (field == "text")
        return run.hasText() ? 1.0 : 0.0;
    if (field == "reward_train" || field == "reward_inf") {
        const auto& v = field == "reward_train" ? run.rewardTrain : run.rewardInf;
        return perSeq([&](size_t s) { return !v.empty() && !isMissing(v[s]); });
    }
    if (field == "runtime")
        return perSeq([&](size_t s) { return !run.runtime.empty() && !run.runtime[s].empty(); });
    if (field.rfind("runtime.", 0) == 0) {
        const std::string key = field.substr(8);
        return perSeq([&](size_t s) { return !run.runtime.empty() && run.runtime[s].contains(key); });
    }
    if (field.rfind("slices.", 0) == 0) {
        const int k = run.slices.keyIndex(field.substr(7));
        if (k < 0)
            return 0.0;
        return perSeq([&](size_t s) { return run.slices.label(s, size_t(k)) != nullptr; });
    }
    return std::nullopt;
}

}  // namespace

std::vector<Result> decideRuntime(const Clause& c, const Run& run) {
    if (!c.requireEqual.empty()) {
        Result r = start(c, c.requireEqual);
        r.aggregate = "require_equal";
        const auto* a = headerPath(run.header, "train." + c.requireEqual);
        const auto* b = headerPath(run.header, "inf." + c.requireEqual);
        if (!a || !b) {
            r.status = Status::Inconclusive;
            r.message = std::string("the run's header lacks kernels.") + (!a ? "train." : "inf.") + c.requireEqual;
        } else {
            r.status = *a == *b ? Status::Pass : Status::Fail;
            r.message = "train " + a->dump() + (*a == *b ? " == " : " != ") + "inf " + b->dump();
        }
        return {r};
    }
    if (!c.require.empty()) {
        Result r = start(c, c.require.front().first);
        r.aggregate = "require";
        r.status = Status::Pass;
        r.message = "all required header values match";
        for (const auto& [path, want] : c.require) {
            const auto* got = headerPath(run.header, path);
            if (!got) {
                r.status = Status::Inconclusive;
                r.metric = path;
                r.message = "the run's header lacks " + path;
                continue;
            }
            if (*got != want) {
                r.status = Status::Fail;
                r.metric = path;
                r.message = path + " is " + got->dump() + ", required " + want.dump();
                break;
            }
        }
        return {r};
    }
    // field + aggregate over per-sequence runtime records.
    Result r = start(c, c.field);
    r.aggregate = c.aggregate ? c.aggregate->text : "";
    std::vector<double> values;
    bool seen = false;
    for (const auto& rec : run.runtime) {
        if (!rec.contains(c.field))
            continue;
        seen = true;
        if (rec[c.field].is_number())
            values.push_back(rec[c.field].get<double>());
    }
    if (!seen) {
        r.status = Status::Error;
        r.message = "no sequence has the runtime field '" + c.field + "'";
        return {r};
    }
    r.n = values.size();
    if (c.aggregate)
        r.observed = applyAggregate(*c.aggregate, values);
    decideAgainst(c, r, "no numeric values of the field");
    return {r};
}

std::vector<Result> decideObservability(const Clause& c, MetricEngine& engine, ClauseState& st) {
    const Run& run = engine.run();
    if (!c.requireFields.empty()) {
        Result r = start(c, "");
        r.aggregate = "coverage";
        std::vector<char> keep(run.sequenceCount(), 1);
        for (const auto& [key, accepted] : c.where.anyOf) {
            const int k = run.slices.keyIndex(key);
            for (size_t s = 0; s < keep.size(); ++s) {
                const std::string* label = k < 0 ? nullptr : run.slices.label(s, size_t(k));
                keep[s] = keep[s] && label && std::count(accepted.begin(), accepted.end(), *label);
            }
        }
        double worst = 2;
        for (const auto& f : c.requireFields) {
            const auto cov = coverage(run, f, keep);
            if (!cov) {
                r.status = Status::Error;
                r.metric = f;
                r.message = "unknown field '" + f + "' (known: id, tokens, logp_train, logp_inf, topk_train, "
                            "topk_inf, logits, text, reward_train, reward_inf, runtime, runtime.NAME, slices.KEY)";
                return {r};
            }
            if (*cov < worst) {
                worst = *cov;
                r.metric = f;
            }
        }
        r.n = size_t(std::count(keep.begin(), keep.end(), 1));
        const double need = c.minCoverage ? c.minCoverage->value : 1.0;
        r.min = need;
        if (r.n == 0) {   // nothing in scope: no evidence either way (SPEC 4.1)
            r.status = Status::Inconclusive;
            r.message = "no sequences in scope";
            return {r};
        }
        r.observed = worst;
        r.margin = worst - need;
        r.status = worst >= need ? Status::Pass : Status::Fail;
        r.message = "coverage of " + r.metric + " is " + fmt(worst) + (r.status == Status::Pass ? " >= " : " < ") +
                    fmt(need);
        return {r};
    }
    // metric + max_nonfinite_fraction
    if (!st.built) {
        buildMetricState(c, engine, st);
        st.built = true;
    }
    std::vector<Result> out;
    for (const auto& g : st.groups) {
        Result r = baseResult(c, g);
        r.aggregate = "nonfinite_fraction";
        if (!st.error.empty()) {
            r.status = Status::Error;
            r.message = st.error;
            return {r};
        }
        const double total = double(g.values.size() + g.missing + g.nonfinite);
        r.n = uint64_t(total);
        if (total == 0) {
            r.status = Status::Inconclusive;
            r.message = "no positions in scope";
        } else {
            r.observed = double(g.nonfinite) / total;
            r.max = c.maxNonfiniteFraction ? c.maxNonfiniteFraction->value : 0.0;
            r.margin = *r.max - *r.observed;
            r.status = *r.margin >= 0 ? Status::Pass : Status::Fail;
            r.message = std::to_string(g.nonfinite) + " of " + std::to_string(r.n) + " positions non-finite (" +
                        std::to_string(g.missing) + " missing)";
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace kcx::detail
