#include "core/metrics/metric_aliases.h"

namespace kcx {

const std::vector<MetricAlias>& metricAliases() {
    static const std::vector<MetricAlias> aliases = {
        {"training/rollout_probs_diff", "prob_diff", "verl",
         "|exp(lp_train) − exp(lp_inf)|, probability space; _mean/_max/_std pooled over the batch's tokens"},
        {"rollout_probs_diff", "prob_diff", "verl", "short form of training/rollout_probs_diff"},
        {"rollout_corr/kl", "k1", "verl", "−r, pooled masked mean"},
        {"rollout_corr/k3_kl", "k3", "verl", "w − r − 1, pooled masked mean"},
        {"train/train_rollout_logprob_abs_diff", "seq_mean_abs_log_ratio", "slime",
         "per-sequence mean |r|, then the mean over sequences (slime's default reduction)"},
        {"train_rollout_logprob_abs_diff", "seq_mean_abs_log_ratio", "slime", "short form"},
        {"mismatch_kl", "k3", "prime-rl", "w − r − 1; mismatch_kl/all/mean is the pooled mean"},
        {"gen_kl_error", "k3", "nemo-rl", "w − 1 − r with the default reference_policy_kl_type k3; pooled"},
        {"sampling/sampling_logp_difference", "abs_log_ratio", "trl", "|r|; /mean pooled (one process), /max"},
        {"sampling_logp_difference", "abs_log_ratio", "trl", "short form"},
        {"policy/rollout_train_logprobs_abs_diff", "abs_log_ratio", "skyrl", "|r|; _mean/_std/_max/_min pooled"},
        {"rollout_train_logprobs_abs_diff", "abs_log_ratio", "skyrl", "short form"},
        {"vllm_kl", "k1", "openrlhf", "−r (k1), masked mean"},
    };
    return aliases;
}

const MetricAlias* findMetricAlias(std::string_view name) {
    for (const MetricAlias& a : metricAliases())
        if (a.alias == name)
            return &a;
    return nullptr;
}

}  // namespace kcx
