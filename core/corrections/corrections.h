// Off-policy corrections, what-if (SPEC 11, issue 21; docs/corrections.md): what the usual
// corrections for training–inference mismatch would do to a run, with w = exp(r),
// r = lp_train − lp_inf, over the tokens whose two log-probs are both finite:
//   tis:C           truncate token weights at C (w > C becomes C); tis:A,C clamps them to
//                   [A, C] (OpenRLHF's and slime's two-sided clamp);
//   token_mask:A,B  mask tokens with w outside [A, B] (IcePop-style);
//   geo_mask:A,B    mask sequences whose exp(mean_t r_t) lies outside [A, B];
//   seq_reject:A,B  mask sequences with any token weight outside [A, B];
// and two extensions the frameworks' presets need (docs/corrections.md):
//   seq_tis:C       every token of a sequence weighted by min(exp(Σ_t r_t), C) (verl's,
//                   SkyRL's and TRL's sequence-level truncated IS; Σ r clamped at ±20);
//   product_mask:A,B mask sequences whose exp(Σ_t r_t) lies outside [A, B] (TRL's default
//                   sequence_mask, SkyRL's product mask, verl's seq_sum_k1).
// For each: token_fraction (tokens truncated or masked, directly or with their sequence,
// over all such tokens), sequence_fraction (sequences with at least one, over the sequences
// that have any token), and ess = (Σw)² / (n Σw²) over the n tokens kept, with the weights
// after truncation (SPEC 2.4a). Also, per method: the share of the affected sequences whose
// reward was positive, and SPEC 5's step 4 over the tokens the correction keeps; and all of it
// per value of a slice key (per step with "step").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/formats/run.h"

namespace kcx {

struct CorrectionMethod {
    enum class Kind { Tis, TokenMask, GeoMask, SeqReject, SeqTis, ProductMask };
    Kind kind = Kind::Tis;
    std::vector<double> params;   // tis: {C} or {A, C}; seq_tis: {C}; the others: {A, B}
    std::string name() const;     // "tis", "token_mask", …
};

// "tis:2", "token_mask:0.5,2", …; nullopt and *error set when the text does not parse or
// the parameters are out of range (C > 0; 0 ≤ A ≤ B). "inf" is accepted as an upper bound.
std::optional<CorrectionMethod> parseCorrection(const std::string& text, std::string* error = nullptr);
// Whether the method's bounds are in range; *error says why not.
bool checkCorrection(const CorrectionMethod& m, std::string* error = nullptr);
// tis:2, token_mask:0.5,2, geo_mask:0.99,1.01, seq_reject:0.5,2 — the defaults the issue's
// frameworks document (docs/corrections.md).
std::vector<CorrectionMethod> defaultCorrections();

struct CorrectionResult {
    CorrectionMethod method;
    double tokenFraction = 0, sequenceFraction = 0;
    double ess = 0;                 // NaN when no token is kept
    uint64_t tokens = 0, sequences = 0;   // affected
    uint64_t tokensKept = 0;
    // Rewards (the rollout's: reward_inf, else reward_train): of the affected sequences with a
    // reward, how many had a positive one (NeMo-RL's masked_correct_pct).
    uint64_t affectedWithReward = 0, affectedPositive = 0;
    double positiveRewardShare = 0;   // NaN without rewards
    // SPEC 5 step 4 over what the correction leaves: ρ = max |log w| over the kept tokens with
    // their weights after truncation; the per-token policy-gradient bias is ≤ G A_max (e^ρ − 1).
    double rho = 0;                 // NaN when no token is kept
    double pgBias = 0;              // G A_max (e^ρ − 1), or e^ρ − 1 without G and A_max
    // tis only: mean over all tokens of (w − C)+, the weight truncation removes (the truncated
    // estimator's bias is at most G A_max times this).
    double truncatedMass = 0;
};

struct CorrectionsOptions {
    std::string perSlice;                  // a slice key ("step" for training steps), or ""
    std::optional<double> gradNorm, advantageMax;   // G and A_max (contract bounds), if known
};

struct CorrectionsGroup;

struct CorrectionsReport {
    uint64_t tokens = 0, sequences = 0;   // tokens with both log-probs finite; sequences with any
    double essBefore = 0;                 // ess of the untouched weights
    double rhoBefore = 0, pgBiasBefore = 0;   // step 4 with no correction
    uint64_t sequencesWithReward = 0, positiveReward = 0;
    std::string rewardSide;               // "inf", "train" or "" (no rewards)
    bool absoluteBias = false;            // pgBias includes G A_max
    std::vector<CorrectionResult> methods;
    std::string sliceKey;                 // set when perSlice was asked for
    std::vector<CorrectionsGroup> groups; // one per value of that key, in the key's order
};

struct CorrectionsGroup {
    std::string value;
    CorrectionsReport report;
};

// Over the sequences listed (all when null).
CorrectionsReport applyCorrections(const Run& run, const std::vector<CorrectionMethod>& methods,
                                   const CorrectionsOptions& options = {}, const std::vector<size_t>* sequences = nullptr);
nlohmann::json correctionsJson(const CorrectionsReport& r);

}  // namespace kcx
