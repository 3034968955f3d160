#include "core/corrections/frameworks.h"

#include "core/corrections/framework_sources.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kcx {

namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// The per-token and per-sequence inputs every formula below reads.
struct Tokens {
    std::vector<double> r, pt, pi, lt, li;   // per token with both log-probs finite
    std::vector<size_t> seqEnd;              // token ends of the sequences that have any
};

Tokens tokensOf(const Run& run) {
    Tokens t;
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        const size_t before = t.r.size();
        for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
            const double a = run.lpTrain[i], b = run.lpInf[i];
            if (!std::isfinite(a) || !std::isfinite(b))
                continue;
            t.r.push_back(a - b);
            t.lt.push_back(a);
            t.li.push_back(b);
            t.pt.push_back(std::exp(a));
            t.pi.push_back(std::exp(b));
        }
        if (t.r.size() > before)
            t.seqEnd.push_back(t.r.size());
    }
    return t;
}

template <class F>
double pooledMean(const Tokens& t, F f) {
    if (t.r.empty())
        return kNoValue;
    double s = 0;
    for (size_t i = 0; i < t.r.size(); ++i)
        s += f(i);
    return s / double(t.r.size());
}

template <class F>
std::vector<double> perToken(const Tokens& t, F f) {
    std::vector<double> v(t.r.size());
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = f(i);
    return v;
}

// Per sequence: f over the sequence's token range [b, e).
template <class F>
std::vector<double> perSequence(const Tokens& t, F f) {
    std::vector<double> v;
    size_t b = 0;
    for (size_t e : t.seqEnd) {
        v.push_back(f(b, e));
        b = e;
    }
    return v;
}

double meanOf(const std::vector<double>& v);

// Per sequence: the mean of v over its tokens.
std::vector<double> sequenceMeans(const Tokens& t, const std::vector<double>& v) {
    return perSequence(t, [&](size_t b, size_t e) {
        double s = 0;
        for (size_t i = b; i < e; ++i)
            s += v[i];
        return s / double(e - b);
    });
}

double meanOf(const std::vector<double>& v) {
    if (v.empty())
        return kNoValue;
    double s = 0;
    for (double x : v)
        s += x;
    return s / double(v.size());
}

double stdUnbiased(const std::vector<double>& v) {
    if (v.size() < 2)
        return kNoValue;
    const double m = meanOf(v);
    double s = 0;
    for (double x : v)
        s += (x - m) * (x - m);
    return std::sqrt(s / double(v.size() - 1));
}

double maxOf(const std::vector<double>& v) { return v.empty() ? kNoValue : *std::max_element(v.begin(), v.end()); }
double minOf(const std::vector<double>& v) { return v.empty() ? kNoValue : *std::min_element(v.begin(), v.end()); }

// torch.median: the lower of the two middle values when the count is even.
double torchMedian(std::vector<double> v) {
    if (v.empty())
        return kNoValue;
    const size_t k = (v.size() - 1) / 2;
    std::nth_element(v.begin(), v.begin() + long(k), v.end());
    return v[k];
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() < 2)
        return kNoValue;
    const double mx = meanOf(x), my = meanOf(y);
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : kNoValue;
}

std::string src(const char* repo, const char* where) { return std::string(repo) + " " + where; }

using namespace sources;

}  // namespace

std::vector<std::string> frameworkNames() { return {"verl", "slime", "prime-rl", "nemo-rl", "trl", "skyrl", "openrlhf"}; }

std::vector<FrameworkFigure> frameworkFigures(const Run& run, const std::string& fw) {
    const Tokens t = tokensOf(run);
    std::vector<FrameworkFigure> out;
    auto add = [&](std::string name, double v, std::string formula, std::string kcx, std::string source) {
        out.push_back({std::move(name), v, std::move(formula), std::move(kcx), std::move(source)});
    };
    const auto absR = perToken(t, [&](size_t i) { return std::fabs(t.r[i]); });
    const auto k3 = perToken(t, [&](size_t i) { return std::expm1(t.r[i]) - t.r[i]; });
    if (fw == "verl") {
        const auto dp = perToken(t, [&](size_t i) { return std::fabs(t.pt[i] - t.pi[i]); });
        const std::string dbg = src(kVerl, "verl/utils/debug/metrics.py:58-109");
        add("training/rollout_probs_diff_mean", meanOf(dp), "mean |p_train − p_inf| over the tokens (probability space)",
            "prob_diff mean", dbg);
        add("training/rollout_probs_diff_max", maxOf(dp), "max |p_train − p_inf|", "prob_diff max", dbg);
        add("training/rollout_probs_diff_std", stdUnbiased(dp), "std of |p_train − p_inf| (n − 1)", "", dbg);
        add("training/rollout_actor_probs_pearson_corr", pearson(t.pt, t.pi), "Pearson correlation of p_train and p_inf",
            "prob_pearson", dbg);
        const std::string off = src(kVerl, "verl/trainer/ppo/rollout_corr_helper.py:834-940");
        add("rollout_corr/kl", pooledMean(t, [&](size_t i) { return -t.r[i]; }), "mean −r", "k1 mean", off);
        add("rollout_corr/k3_kl", meanOf(k3), "mean (w − r − 1)", "k3 mean", off);
        add("rollout_corr/chi2_token",
            pooledMean(t, [&](size_t i) { return std::exp(2 * std::clamp(t.r[i], -20.0, 20.0)); }) - 1,
            "mean exp(2 clamp(r, ±20)) − 1", "", off);
        const auto sumR = perSequence(t, [&](size_t b, size_t e) {
            double s = 0;
            for (size_t i = b; i < e; ++i)
                s += t.r[i];
            return s;
        });
        const auto meanR = sequenceMeans(t, t.r);
        std::vector<double> chi2s, lpd, lpad, ratio, tppl, rppl;
        for (double s : sumR)
            chi2s.push_back(std::exp(2 * std::clamp(s, -20.0, 20.0)));
        for (double m : meanR) {
            lpd.push_back(-m);
            lpad.push_back(std::fabs(m));
            ratio.push_back(std::exp(-m));
        }
        for (double m : sequenceMeans(t, t.lt))
            tppl.push_back(std::exp(-m));
        for (double m : sequenceMeans(t, t.li))
            rppl.push_back(std::exp(-m));
        add("rollout_corr/chi2_seq", meanOf(chi2s) - 1, "mean over sequences of exp(2 clamp(Σr, ±20)), − 1", "", off);
        add("rollout_corr/training_ppl", meanOf(tppl), "mean over sequences of exp(−mean lp_train)", "", off);
        add("rollout_corr/rollout_ppl", meanOf(rppl), "mean over sequences of exp(−mean lp_inf)", "", off);
        add("rollout_corr/log_ppl_diff", meanOf(lpd), "mean over sequences of (mean lp_inf − mean lp_train)", "log_ppl_diff",
            off);
        add("rollout_corr/log_ppl_abs_diff", meanOf(lpad), "mean over sequences of |mean r|", "", off);
        add("rollout_corr/ppl_ratio", meanOf(ratio), "mean over sequences of exp(−mean r)", "", off);
        add("rollout_corr/rollout_is_ratio_fraction_high", pooledMean(t, [&](size_t i) { return std::exp(t.r[i]) > 2.0 ? 1.0 : 0.0; }),
            "share of tokens with w > 2 (rollout_is_threshold 2.0)", "kcx corrections tis:2 token_fraction",
            src(kVerl, "verl/trainer/ppo/rollout_corr_helper.py:660-663"));
    } else if (fw == "slime") {
        const auto perSeq = sequenceMeans(t, absR);
        add("train/train_rollout_logprob_abs_diff", meanOf(perSeq), "mean over sequences of the mean |r| (the default)",
            "seq_mean_abs_log_ratio mean",
            src(kSlime, "slime/backends/megatron_utils/loss.py:1136-1151; slime/backends/megatron_utils/cp_utils.py:47-81"));
        add("train/train_rollout_logprob_abs_diff (--calculate-per-token-loss)", meanOf(absR), "mean |r| over the tokens",
            "abs_log_ratio mean", src(kSlime, "slime/backends/megatron_utils/cp_utils.py:83-89"));
    } else if (fw == "prime-rl") {
        const std::string s = src(kPrime, "src/prime_rl/trainer/rl/loss.py:100-106; src/prime_rl/trainer/utils.py:238-281");
        add("mismatch_kl/all/mean", meanOf(k3), "mean (w − r − 1) over the tokens", "k3 mean", s);
        add("mismatch_kl/all/median", torchMedian(k3), "torch.median (the lower middle value)", "", s);
        add("mismatch_kl/all/std", stdUnbiased(k3), "std (n − 1)", "", s);
        add("mismatch_kl/all/min", minOf(k3), "min", "k3 min", s);
        add("mismatch_kl/all/max", maxOf(k3), "max", "k3 max", s);
    } else if (fw == "nemo-rl") {
        const std::string s = src(kNemo, "nemo_rl/algorithms/loss/loss_functions.py:404-466");
        add("token_mult_prob_error", pooledMean(t, [&](size_t i) { return std::exp(absR[i]); }),
            "mean exp(|r|) over the tokens (1 = identical)", "", s);
        add("gen_kl_error", meanOf(k3), "mean (w − 1 − r) (reference_policy_kl_type k3)", "k3 mean", s);
        add("policy_kl_error", pooledMean(t, [&](size_t i) { return std::expm1(-t.r[i]) + t.r[i]; }), "mean (e^−r − 1 + r)", "",
            s);
        add("js_divergence_error", pooledMean(t, [&](size_t i) {
                const double logM = std::log(0.5 * t.pt[i] + 0.5 * t.pi[i]);
                const double a = t.lt[i] - logM, b = t.li[i] - logM;
                return 0.5 * (std::expm1(a) - a) + 0.5 * (std::expm1(b) - b);
            }),
            "mean of ½ k3(lp_train − log M) + ½ k3(lp_inf − log M), M = (p_train + p_inf)/2", "", s);
        const auto seqErr = sequenceMeans(t, perToken(t, [&](size_t i) { return std::exp(absR[i]); }));
        const std::string g = src(kNemo, "nemo_rl/algorithms/grpo.py:2537-2568");
        add("max_seq_mult_prob_error", maxOf(seqErr), "max over sequences of the mean exp(|r|)", "", g);
        add("mean_seq_mult_prob_error", meanOf(seqErr), "mean over sequences of the mean exp(|r|)", "", g);
        add("min_seq_mult_prob_error", minOf(seqErr), "min over sequences of the mean exp(|r|)", "", g);
    } else if (fw == "trl") {
        const std::string s = src(kTrl, "trl/trainer/grpo_trainer.py:2779-2812");
        add("sampling/sampling_logp_difference/mean", meanOf(absR), "mean |r| over the tokens (one process)",
            "abs_log_ratio mean", s);
        add("sampling/sampling_logp_difference/max", maxOf(absR), "max |r|", "abs_log_ratio max", s);
    } else if (fw == "skyrl") {
        const std::string s = src(kSkyrl, "skyrl/train/trainer.py:1383-1405");
        add("policy/rollout_train_logprobs_abs_diff_mean", meanOf(absR), "mean |r| over the tokens", "abs_log_ratio mean", s);
        add("policy/rollout_train_logprobs_abs_diff_std", stdUnbiased(absR), "std of |r| (n − 1)", "", s);
        add("policy/rollout_train_logprobs_abs_diff_max", maxOf(absR), "max |r|", "abs_log_ratio max", s);
        add("policy/rollout_train_logprobs_abs_diff_min", minOf(absR), "min |r|", "abs_log_ratio min", s);
    } else if (fw == "openrlhf") {
        add("vllm_kl", pooledMean(t, [&](size_t i) { return -t.r[i]; }), "mean −r over the tokens (k1)", "k1 mean",
            src(kOpenrlhf, "openrlhf/models/loss.py:218"));
    }
    return out;
}

nlohmann::json frameworkFiguresJson(const std::string& framework, const std::vector<FrameworkFigure>& figures) {
    nlohmann::json j;
    j["kcx"] = 1;
    j["framework"] = framework;
    nlohmann::json a = nlohmann::json::array();
    for (const FrameworkFigure& f : figures)
        a.push_back({{"name", f.name},
                     {"value", std::isfinite(f.value) ? nlohmann::json(f.value) : nlohmann::json(nullptr)},
                     {"formula", f.formula},
                     {"kcx", f.kcx.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.kcx)},
                     {"source", f.source}});
    j["figures"] = std::move(a);
    return j;
}

}  // namespace kcx
