#include "core/corrections/presets.h"

#include "core/corrections/framework_sources.h"

namespace kcx {

namespace {

using namespace sources;

std::string at(const char* repo, const char* path) { return std::string(repo) + " " + path; }

}  // namespace

const std::vector<CorrectionPreset>& correctionPresets() {
    static const std::vector<CorrectionPreset> presets = {
        {"verl",
         "old_log_prob, recomputed by the actor before the update (decoupled mode)",
         {{"tis:2", "rollout_is=token, rollout_is_threshold=2.0 (decoupled_token_is)", "exact",
           at(kVerl, "verl/trainer/config/algorithm.py:182; verl/trainer/ppo/rollout_corr_helper.py:561-562")},
          {"token_mask:0.5,2", "rollout_rs=token_k1, threshold 2.0 (token_rs)", "exact",
           at(kVerl, "docs/algo/rollout_corr.md:552-604; verl/trainer/ppo/rollout_corr_helper.py:271-275")},
          {"geo_mask:0.999000999,1.001001001", "rollout_rs=seq_mean_k1, \"0.999_1.001\" (decoupled_geo_rs)",
           "exact: verl's k1 bounds apply to 1/w, so its window on w is [1/1.001, 1/0.999]",
           at(kVerl, "verl/trainer/config/algorithm.py:235; verl/trainer/ppo/rollout_corr_helper.py:301-308")},
          {"seq_tis:2", "rollout_is=sequence, rollout_is_threshold=2.0 (decoupled_seq_is; the dataclass default)", "exact",
           at(kVerl, "verl/trainer/config/algorithm.py:173-179,196; verl/trainer/ppo/rollout_corr_helper.py:536-562")},
          {"product_mask:0.5,2", "rollout_rs=seq_sum_k1, \"0.5_2.0\" (decoupled_seq_is_rs)", "exact (reciprocal bounds)",
           at(kVerl, "verl/trainer/config/algorithm.py:210; verl/trainer/ppo/rollout_corr_helper.py:282-289")}},
         "The k2/k3 rejection options (seq_mean_k3 ≤ 0.01 and kin) have no KCX method. verl combines IS and RS in one "
         "preset; KCX shows each part alone."},
        {"slime",
         "log_probs recomputed by the training engine before the update",
         {{"tis:2", "--use-tis (--tis-clip 2.0, --tis-clip-low 0)", "exact",
           at(kSlime, "slime/utils/arguments.py:1061-1077; slime/backends/megatron_utils/loss.py:884-905")},
          {"token_mask:0.5,2", "icepop_function with [0.5, 2.0]", "exact",
           at(kSlime, "slime/backends/megatron_utils/loss.py:908-931; tests/test_glm52_6layer_deterministic_e2e.py:216-219")},
          {"tis:0.5,2", "--use-tis --tis-clip-low 0.5 --tis-clip 2.0 (GLM-5.2 script)", "exact (two-sided clamp)",
           at(kSlime, "scripts/run-glm5.2-744B-A40B.sh:102-104")},
          {"seq_reject:0.0001,inf", "mis.yaml rs_veto_threshold 1e-4", "approximate: slime's veto is strict (<)",
           at(kSlime, "examples/train_infer_mismatch_helper/mis.yaml:2-39; examples/train_infer_mismatch_helper/mis.py:82-100")},
          {"geo_mask:0.9999,1.0001", "MIS geometric-level rejection (the bounds mis.yaml's comments give)", "exact",
           at(kSlime, "examples/train_infer_mismatch_helper/mis.yaml:21,25")}},
         "mis.yaml's batch normalisation of the weights to mean 1 has no KCX method."},
        {"skyrl",
         "old_log_probs from the trainer's forward pass before the update",
         {{"geo_mask:0.99,1.01", "sequence_mask_metric=geometric, geo_mask_low/high 0.99/1.01 (recommended first)",
           "exact alone; stacked with token/outlier masks SkyRL takes the mean over the surviving tokens",
           at(kSkyrl, "docs/content/docs/algorithms/off_policy_correction.mdx:17-47; skyrl/train/config/config.py:794-818")},
          {"tis:2", "tis_ratio_type=token, token_tis_ratio_clip_high=2.0", "exact",
           at(kSkyrl, "skyrl/backends/skyrl_train/utils/off_policy_correction_utils.py:24-72")},
          {"token_mask:0.5,2", "token_mask_is_threshold_low/high 0.5/2.0 (icepop)", "exact",
           at(kSkyrl, "skyrl/backends/skyrl_train/utils/off_policy_correction_utils.py:137-188")},
          {"seq_reject:0.0001,100", "outlier_token_is_threshold_low/high 1e-4/100", "exact",
           at(kSkyrl, "skyrl/backends/skyrl_train/utils/off_policy_correction_utils.py:75-134")},
          {"seq_tis:5", "tis_ratio_type=sequence, sequence_tis_ratio_clip_high=5.0", "exact",
           at(kSkyrl, "skyrl/backends/skyrl_train/utils/off_policy_correction_utils.py:61-70")},
          {"product_mask:0.5,2", "sequence_mask_metric=product, product_mask_low/high 0.5/2.0", "exact",
           at(kSkyrl, "skyrl/backends/skyrl_train/utils/off_policy_correction_utils.py:237-252")}},
         ""},
        {"trl",
         "old_per_token_logps, recomputed by the training model after generation",
         {{"product_mask:0,3", "vllm_importance_sampling_mode=sequence_mask, clip_max=3.0 (the default)", "exact",
           at(kTrl, "trl/trainer/grpo_config.py:924-952; trl/trainer/grpo_trainer.py:2579-2622")},
          {"tis:3", "token_truncate, clip_max=3.0", "exact", at(kTrl, "trl/trainer/grpo_trainer.py:2579-2622")},
          {"seq_tis:3", "sequence_truncate, clip_max=3.0", "exact", at(kTrl, "trl/trainer/grpo_trainer.py:2579-2622")},
          {"token_mask:0.5,2", "token_mask, clip_min=0.5, clip_max=2.0 (MIS in the paper index)", "exact",
           at(kTrl, "docs/source/paper_index.md:438-446")}},
         "off_policy_mask_threshold (DeepSeek-V3.2's OPSM) depends on the advantage and has no KCX method. TRL's "
         "docstring names token_truncate as the default; the field's default is sequence_mask."},
        {"nemo-rl",
         "prev_logprobs, computed by the policy before training",
         {{"tis:2", "truncated_importance_sampling_type=tis, ratio 2 (most recipes)", "exact",
           at(kNemo, "nemo_rl/algorithms/loss/loss_functions.py:597-616; "
                     "examples/configs/recipes/llm/grpo-qwen3.5-9b-1n8g-megatron-fp8.yaml:5-7")},
          {"token_mask:0.5,5", "icepop [0.5, 5.0] (ProRL v2)", "exact",
           at(kNemo, "docs/guides/prorlv2.md:152-197; nemo_rl/algorithms/loss/loss_functions.py:617-636")},
          {"geo_mask:0.999,1.002", "seq-mask-tis [0.999, 1.002] (recommended)", "exact for what is masked",
           at(kNemo, "docs/guides/prorlv2.md:176-181; nemo_rl/algorithms/loss/loss_functions.py:637-656")}},
         "seq_logprob_error_threshold masks on the per-sequence mean of exp(|r|), which has no KCX method."},
        {"openrlhf",
         "action_log_probs computed by the actor during experience making",
         {{"tis:0.5,5", "is_correction_type=tis, is_correction_threshold 0.5 5.0 (the defaults)", "exact (two-sided clamp)",
           at(kOpenrlhf, "openrlhf/cli/train_ppo_ray.py:257-271; openrlhf/models/loss.py:214-217")},
          {"token_mask:0.5,5", "is_correction_type=icepop", "exact", at(kOpenrlhf, "openrlhf/models/loss.py:200-205")},
          {"geo_mask:0.5,5", "is_correction_type=seq-mask-tis", "exact for what is masked",
           at(kOpenrlhf, "openrlhf/models/loss.py:206-213")}},
         ""},
        {"prime-rl",
         "trainer_logprobs with the current step's weights (no recomputed old policy)",
         {{"token_mask:0.125,8", "token_mask_low/high 0.125/8 (the loss before 2026-03)", "exact",
           at(kPrimeLegacy, "src/prime_rl/configs/trainer.py:536-588; src/prime_rl/trainer/rl/loss.py:107-173")},
          {"geo_mask:0.1,10", "geo_mask_low/high 0.1/10 (the loss before 2026-03)", "exact",
           at(kPrimeLegacy, "src/prime_rl/trainer/rl/loss.py:107-173")},
          {"seq_reject:0,100", "sequence_mask_low/high 0/100 (the loss before 2026-03)", "exact",
           at(kPrimeLegacy, "src/prime_rl/trainer/rl/loss.py:107-173")}},
         "prime-rl's current default loss (DPPO binary TV, 0.2/0.2) and the IPO loss mask on p_train − p_inf and on the "
         "advantage's sign: no KCX method."},
    };
    return presets;
}

const CorrectionPreset* findPreset(const std::string& framework) {
    for (const CorrectionPreset& p : correctionPresets())
        if (p.framework == framework)
            return &p;
    return nullptr;
}

std::string presetNames() {
    std::string s;
    for (const CorrectionPreset& p : correctionPresets())
        s += (s.empty() ? "" : ", ") + p.framework;
    return s;
}

}  // namespace kcx
