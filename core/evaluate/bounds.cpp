// The bound chain of SPEC 5. The mathematics, and the choices SPEC leaves open, are in
// docs/bounds.md; this file follows it step by step.
#include "core/base/det_math.h"
#include "core/evaluate/bounds.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace kcx {

namespace {

// Above this exponent e^x is reported as overflowing (e^709.78 is the largest double).
constexpr double kMaxExponent = 700.0;
// tv_sequence is vacuous when its bound is within this of the trivial maximum 1.
constexpr double kSeqSlack = 1e-12;

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::optional<double> finite(std::optional<double> v) {
    return v && std::isfinite(*v) ? v : std::nullopt;
}

// Max and mean over the values that exist (NaN skipped); nullopt over zero values.
std::optional<double> maxOf(MetricEngine& engine, const char* metric) {
    const auto m = engine.moments(metric);
    return m.n ? std::optional(m.max) : std::nullopt;
}

struct Mean {
    double mean = 0;
    uint64_t n = 0;
};
std::optional<Mean> meanOf(MetricEngine& engine, const char* metric) {
    const auto m = engine.moments(metric);
    return m.n ? std::optional(Mean{m.mean, m.n}) : std::nullopt;
}

// A contract guarantee `aggregate(metric) <= max` that holds over the whole run: a
// numerical clause on one of `metrics` with aggregate max (or p100) and a finite,
// non-negative `max`, not restricted by `where`, `positions` or `per_slice` (a clause on
// a part of the run guarantees nothing about the rest). With several, the smallest wins:
// when the contract passes, all of them hold.
struct Guarantee {
    double value = 0;
    std::string clause, metric;
};
std::optional<Guarantee> guarantee(const Contract& contract, std::initializer_list<const char*> metrics) {
    std::optional<Guarantee> best;
    for (const Clause& c : contract.clauses) {
        if (c.family != Family::Numerical || !c.aggregate || !c.max)
            continue;
        bool named = false;
        for (const char* m : metrics)
            named = named || c.metric == m;
        if (!named)
            continue;
        const Aggregate& a = *c.aggregate;
        const bool isMax = a.kind == Aggregate::Kind::Max || (a.kind == Aggregate::Kind::Quantile && a.q >= 1.0);
        if (!isMax || !c.where.empty() || c.positions || !c.perSlice.empty())
            continue;
        const double v = c.max->value;
        if (!std::isfinite(v) || v < 0)
            continue;
        if (!best || v < best->value)
            best = Guarantee{v, c.id, c.metric};
    }
    return best;
}

// An input of the chain (epsilon or rho) and where it came from.
struct Input {
    std::optional<double> value;
    std::string name;
};

Input epsilonOf(const Contract& contract, MetricEngine& engine) {
    if (auto g = guarantee(contract, {"logit_drift"}))
        return {g->value, "epsilon = contract guarantee (clause " + g->clause + ": max logit_drift <= " +
                              num(g->value) + ")"};
    if (!engine.run().hasLogits())   // no array of NaN for a run without logits
        return {std::nullopt, "epsilon: needs full logits or a logit_drift clause"};
    // (Moments only: the array is not held, so a lean engine drops it at once. Every
    // value that exists is finite, so the moments' n is the metric's count.)
    if (auto m = maxOf(engine, "logit_drift"))
        return {*m, "epsilon = observed max logit_drift over " + std::to_string(engine.moments("logit_drift").n) +
                        " positions with full logits"};
    return {std::nullopt, "epsilon: needs full logits or a logit_drift clause"};
}

Input rhoOf(const Contract& contract, MetricEngine& engine) {
    if (auto g = guarantee(contract, {"abs_log_ratio", "seq_max_abs_log_ratio"}))
        return {g->value, "rho = contract guarantee (clause " + g->clause + ": max " + g->metric + " <= " +
                              num(g->value) + ")"};
    if (auto m = maxOf(engine, "abs_log_ratio"))
        return {*m, "rho = observed max |log_ratio| over " + std::to_string(engine.moments("abs_log_ratio").n) +
                        " tokens"};
    return {std::nullopt, "rho: needs log-probs or an abs_log_ratio clause"};
}

// 1 - (1 - delta)^T without cancellation for tiny delta.
double seqTv(double delta, double T) {
    if (delta >= 1.0)
        return 1.0;
    return -det::expm1(T * det::log1p(-delta));
}

}  // namespace

std::vector<BoundStep> boundChain(const Contract& contract, MetricEngine& engine) {
    const Run& run = engine.run();
    const ContractBounds& cb = contract.bounds;
    std::vector<BoundStep> steps;

    // ---- 1. per-token TV ---------------------------------------------------------------
    const Input eps = epsilonOf(contract, engine);
    BoundStep tv;
    tv.step = "tv_per_token";
    tv.inputName = eps.name;
    tv.input = eps.value;
    tv.assumption = "Both kernels give softmaxes over the same vocabulary, and at every position "
                    "logit_drift = (max d - min d)/2 <= epsilon, d = z_train - z_inf";
    if (eps.value) {
        tv.bound = det::tanh(*eps.value / 2.0);
        tv.vacuous = *tv.bound >= 1.0;
        tv.title = "per-token TV <= tanh(epsilon/2) = " + num(*tv.bound) + " (epsilon = " + num(*eps.value) + ")";
    } else {
        tv.title = "per-token TV: no bound (needs full logits or a logit_drift clause)";
    }
    if (!engine.run().hasLogits() && !engine.run().hasTopK()) {
        tv.observedName = "tv: needs full logits or top-k";
    } else {
        const auto exact = engine.get("tv");
        if (auto m = maxOf(engine, "tv")) {
            tv.observed = m;
            tv.observedName = "max tv over " + std::to_string(exact->count) + " positions with full logits";
        } else {
            const auto lower = engine.get("tv_lower");
            if (auto ml = maxOf(engine, "tv_lower")) {
                tv.observed = ml;
                tv.observedName = "max tv_lower (certified lower bound from top-k) over " +
                                  std::to_string(lower->count) + " positions";
            } else {
                tv.observedName = "tv: needs full logits or top-k";
            }
        }
    }
    steps.push_back(tv);

    // ---- 2. sequence TV ----------------------------------------------------------------
    std::optional<double> horizon;
    std::string horizonName;
    if (cb.seqLen && *cb.seqLen > 0) {
        horizon = double(*cb.seqLen);
        horizonName = "T = " + std::to_string(*cb.seqLen) + " (bounds.seq_len)";
    } else if (run.maxLength() > 0) {
        horizon = double(run.maxLength());
        horizonName = "T = " + std::to_string(run.maxLength()) + " (the run's longest sequence)";
    } else {
        horizonName = "T: no bounds.seq_len and no tokens in the run";
    }
    BoundStep seq;
    seq.step = "tv_sequence";
    seq.input = tv.bound;
    seq.inputName = "delta = per-token TV bound; " + horizonName;
    seq.assumption = "The per-token bound delta holds at every position of every prefix, over a horizon of "
                     "at most T response tokens (the two kernels see the same prompt)";
    const bool seqVacuousIn = tv.vacuous;
    if (tv.bound && horizon) {
        const double delta = *tv.bound, T = *horizon;
        seq.bound = seqTv(delta, T);
        seq.vacuous = seqVacuousIn || *seq.bound >= 1.0 - kSeqSlack;
        seq.title = "sequence TV <= 1 - (1 - delta)^T = " + num(*seq.bound) + " <= T delta = " + num(T * delta) +
                    " (delta = " + num(delta) + ", T = " + num(T) + ")";
    } else {
        seq.title = std::string("sequence TV: no bound (needs ") +
                    (tv.bound ? "a horizon T" : "the per-token bound: full logits or a logit_drift clause") + ")";
    }
    // Observable proxy: TV(P_train, P_inf) = E_inf[(1 - P_train/P_inf)^+], and the
    // sequence ratio is exp(seq_log_ratio); its mean over the run estimates TV_seq when
    // the responses were sampled from pi_inf (rollouts).
    {
        const auto slr = engine.get("seq_log_ratio");
        double s = 0;
        uint64_t n = 0;
        for (double x : slr->values)
            if (std::isfinite(x)) {
                s += x < 0 ? -det::expm1(x) : 0.0;
                ++n;
            }
        if (n) {
            seq.observed = s / double(n);
            seq.observedName = "estimate mean_s (1 - exp(seq_log_ratio))^+ over " + std::to_string(n) +
                               " sequences (unbiased for TV_seq when responses were sampled from pi_inf)";
        } else {
            seq.observedName = "not measurable (no sequence with complete log-probs)";
        }
    }
    steps.push_back(seq);

    // ---- 3. reward drift ---------------------------------------------------------------
    BoundStep rew;
    rew.step = "reward_drift";
    rew.input = seq.bound;
    rew.assumption = "Rewards lie in [R_min, R_max] (bounds.reward_range) and are a function of the sequence";
    std::optional<std::pair<double, double>> range;
    if (cb.rewardRange && std::isfinite(cb.rewardRange->first) && std::isfinite(cb.rewardRange->second) &&
        cb.rewardRange->second >= cb.rewardRange->first)
        range = cb.rewardRange;
    if (range) {
        const double width = range->second - range->first;
        rew.inputName = "TV_seq bound; reward range [" + num(range->first) + ", " + num(range->second) + "]";
        if (seq.bound) {
            rew.bound = width * *seq.bound;
            rew.vacuous = seq.vacuous || *rew.bound >= width * (1.0 - kSeqSlack);
            rew.title = "|E_train R - E_inf R| <= (R_max - R_min) TV_seq = " + num(*rew.bound);
        } else {
            rew.title = "reward drift: no bound (needs the sequence TV bound)";
        }
    } else {
        rew.inputName = "TV_seq bound";
        rew.title = cb.rewardRange ? "reward drift: no bound (bounds.reward_range is not a finite [R_min, R_max])"
                                   : "reward drift: no bound (needs bounds.reward_range)";
    }
    {
        const auto rd = engine.get("reward_diff");
        if (auto m = meanOf(engine, "reward_diff")) {
            rew.observed = std::fabs(m->mean);
            rew.observedName = "|mean reward_diff| over " + std::to_string(m->n) + " sequences with both rewards";
        } else {
            rew.observedName = "reward_diff: needs reward_train and reward_inf";
        }
    }
    steps.push_back(rew);

    // ---- 4. policy-gradient bias -------------------------------------------------------
    const Input rho = rhoOf(contract, engine);
    // e^rho - 1, absent when it overflows.
    std::optional<double> growth;
    if (rho.value && *rho.value <= kMaxExponent)
        growth = det::expm1(*rho.value);

    BoundStep pg;
    pg.step = "pg_bias";
    pg.input = rho.value;
    pg.inputName = rho.name;
    pg.assumption = "Support: pi_inf > 0 wherever pi_train > 0; |r_t| <= rho at every token; "
                    "||grad log pi|| <= G (bounds.grad_norm); |advantage| <= A_max (bounds.advantage_max)";
    const bool haveGA = cb.gradNorm && cb.advantageMax && std::isfinite(*cb.gradNorm) &&
                        std::isfinite(*cb.advantageMax) && *cb.gradNorm >= 0 && *cb.advantageMax >= 0;
    if (growth) {
        // Trivial maximum: |E_train[gA] - E_inf[gA]| <= 2 G A_max whatever the ratio.
        pg.vacuous = *growth >= 2.0;
        if (haveGA) {
            const double ga = *cb.gradNorm * *cb.advantageMax;
            pg.bound = ga * *growth;
            pg.title = "per-token policy-gradient bias <= G A_max (e^rho - 1) = " + num(*pg.bound) +
                       " (G = " + num(*cb.gradNorm) + ", A_max = " + num(*cb.advantageMax) + ")";
        } else {
            pg.bound = *growth;
            pg.title = "per-token policy-gradient bias <= (e^rho - 1) x G A_max = " + num(*growth) +
                       " x G A_max (set bounds.grad_norm and bounds.advantage_max for an absolute bound)";
        }
    } else if (rho.value) {
        pg.vacuous = true;
        pg.title = "policy-gradient bias: vacuous (e^rho overflows, rho = " + num(*rho.value) + ")";
    } else {
        pg.title = "policy-gradient bias: no bound (needs log-probs or an abs_log_ratio clause)";
    }
    pg.observedName = "not measurable (needs gradients)";
    steps.push_back(pg);

    // ---- 4b. sequence importance ratio ---------------------------------------------------
    BoundStep sr;
    sr.step = "seq_ratio";
    sr.input = rho.value;
    sr.inputName = rho.name + "; " + horizonName;
    sr.assumption = "|r_t| <= rho at every token, sequences of at most T tokens";
    if (rho.value && horizon) {
        const double x = *rho.value * *horizon;
        if (x <= kMaxExponent) {
            sr.lower = det::exp(-x);
            sr.bound = det::exp(x);
            sr.title = "sequence ratio in [e^(-T rho), e^(T rho)] = [" + num(*sr.lower) + ", " + num(*sr.bound) +
                       "] (T rho = " + num(x) + ")";
        } else {
            sr.vacuous = true;
            sr.title = "sequence ratio in [e^(-T rho), e^(T rho)]: vacuous (T rho = " + num(x) + " > " +
                       num(kMaxExponent) + ")";
        }
    } else {
        sr.title = std::string("sequence ratio: no bound (needs ") +
                   (rho.value ? "a horizon T" : "log-probs or an abs_log_ratio clause") + ")";
    }
    {
        const auto sabs = engine.get("seq_abs_log_ratio");
        if (auto m = maxOf(engine, "seq_abs_log_ratio")) {
            if (*m <= kMaxExponent) {
                sr.observed = det::exp(*m);
                sr.observedName = "exp(max |seq_log_ratio|) over " + std::to_string(sabs->count) + " sequences";
            } else {
                sr.observedName = "exp(max |seq_log_ratio|) overflows: max |seq_log_ratio| = " + num(*m);
            }
        } else {
            sr.observedName = "seq_log_ratio: no sequence with complete log-probs";
        }
    }
    steps.push_back(sr);

    // ---- 5. PPO clip -------------------------------------------------------------------
    BoundStep pc;
    pc.step = "ppo_clip";
    pc.input = rho.value;
    pc.inputName = rho.name;
    const double c = cb.ppoClip;
    if (std::isfinite(c))
        pc.limit = c;
    pc.assumption = "|r_t| <= rho at every token; the ratio pi_train/pi_inf at identical weights is compared "
                    "with the clip range [1 - c, 1 + c], c = bounds.ppo_clip";
    if (growth) {
        pc.bound = growth;
        pc.exceedsLimit = *growth > c;
        pc.title = "kernel pair alone moves the ratio by up to e^rho - 1 = " + num(*growth) +
                   (pc.exceedsLimit ? " > c = " + num(c) + ": clipping acts at identical weights"
                                    : " <= c = " + num(c) + ": clipping does not act at identical weights");
    } else if (rho.value) {
        pc.exceedsLimit = true;
        pc.title = "kernel pair alone: e^rho overflows (rho = " + num(*rho.value) +
                   "): clipping acts at identical weights";
    } else {
        pc.title = "PPO clip: no bound (needs log-probs or an abs_log_ratio clause)";
    }
    {
        // clip_excess with the contract's c (recomputed when the engine was built with another c).
        std::optional<Mean> m;
        if (engine.options().ppoClip == c) {
            m = meanOf(engine, "clip_excess");
        } else {
            const auto lr = engine.get("log_ratio");
            uint64_t n = 0, out = 0;
            for (double r : lr->values)
                if (std::isfinite(r)) {
                    const double w = det::exp(r);
                    out += (w < 1.0 - c || w > 1.0 + c) ? 1 : 0;
                    ++n;
                }
            if (n)
                m = Mean{double(out) / double(n), n};
        }
        if (m) {
            pc.observed = m->mean;
            pc.observedName = "mean clip_excess (c = " + num(c) + ") over " + std::to_string(m->n) + " tokens";
        } else {
            pc.observedName = "clip_excess: needs log-probs";
        }
    }
    steps.push_back(pc);

    // Every number is finite or absent.
    for (BoundStep& s : steps) {
        s.input = finite(s.input);
        s.bound = finite(s.bound);
        s.observed = finite(s.observed);
        s.lower = finite(s.lower);
        s.limit = finite(s.limit);
    }
    return steps;
}

}  // namespace kcx
