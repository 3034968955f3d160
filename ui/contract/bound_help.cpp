// Names and explanations of the bound chain's steps, condensed from docs/bounds.md.
#include <QObject>

#include "ui/contract/bounds_model.h"

namespace kcx::ui {

QString boundStepName(const std::string& step) {
    if (step == "tv_per_token") return QObject::tr("1 · per-token TV");
    if (step == "tv_sequence") return QObject::tr("2 · sequence TV");
    if (step == "reward_drift") return QObject::tr("3 · reward drift");
    if (step == "pg_bias") return QObject::tr("4 · policy-gradient bias");
    if (step == "seq_ratio") return QObject::tr("4b · sequence ratio");
    if (step == "ppo_clip") return QObject::tr("5 · PPO clip");
    return QString::fromStdString(step);
}

QString boundStepHelp(const std::string& step) {
    if (step == "tv_per_token")
        return QObject::tr(
            "TV(p, q) ≤ tanh(ε/2), where ε is the per-token logit drift ½(max Δ − min Δ), Δ = z − z'. "
            "Tight: two logits ±ε/2 swapped reach it. Needs the same vocabulary for both kernels. "
            "Observed: max of tv over positions with full logits (else the top-k lower bound tv_lower). "
            "Vacuous when the bound reaches 1.");
    if (step == "tv_sequence")
        return QObject::tr(
            "TV_seq ≤ 1 − (1 − δ)^T ≤ Tδ with δ = tanh(ε/2) and horizon T (coupling argument). "
            "Needs the per-token bound at every prefix, including unvisited ones: a contract guarantee on "
            "logit_drift gives that, an observed ε is only a plug-in. Observed: mean of (1 − exp(seq_log_ratio))⁺, "
            "an estimate only when the responses were sampled from the inference kernel. "
            "Vacuous when the bound reaches 1.");
    if (step == "reward_drift")
        return QObject::tr(
            "|E_train R − E_inf R| ≤ (R_max − R_min) · TV_seq for rewards in bounds.reward_range. "
            "Observed: |mean reward_diff|, the closest observable. Vacuous when the bound reaches R_max − R_min.");
    if (step == "pg_bias")
        return QObject::tr(
            "Per-token policy-gradient bias ≤ G · A_max · (e^ρ − 1) with |log ratio| ≤ ρ, ‖∇log π‖ ≤ G "
            "(bounds.grad_norm) and |A| ≤ A_max (bounds.advantage_max); without G and A_max the bound is per unit. "
            "Needs support: π_inf > 0 wherever π_train > 0. Nothing observed (needs gradients). "
            "Vacuous when e^ρ − 1 ≥ 2 (twice the trivial maximum of each expectation).");
    if (step == "seq_ratio")
        return QObject::tr(
            "The sequence importance ratio lies in [e^(−Tρ), e^(Tρ)]. Observed: e^(max |seq_log_ratio|), the "
            "ratio farthest from 1. Vacuous when Tρ > 700 (the interval is not representable).");
    if (step == "ppo_clip")
        return QObject::tr(
            "At identical weights the kernel pair alone moves PPO's ratio by up to e^ρ − 1. If that exceeds the "
            "clip c (bounds.ppo_clip), clipping acts before any update: part of the trust region is spent on the "
            "kernel mismatch. Observed: mean clip_excess, the share of tokens outside [1 − c, 1 + c]. "
            "A comparison, never vacuous.");
    return {};
}

}  // namespace kcx::ui
