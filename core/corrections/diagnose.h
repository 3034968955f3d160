// Diagnosis (SPEC 11, issue 21; docs/corrections.md "kcx diagnose"): which systematic cause,
// if any, explains the divergence between the two kernels' log-probs, ranked by how much of
// it each explains. Five tests, each with a statistic standardised by a standard error that
// treats sequences as the unit (tokens of one sequence are not independent), and each also
// asking for a size that matters, so that millions of tokens do not turn a negligible
// effect into a finding:
//   misalignment      lp_inf[t] agrees with lp_train[t + s] for a shift s ≠ 0 much better
//                     than unshifted (sampled-token log-probs; every run has them);
//   temperature       within a position, the centred log-probs of the ids both sides list
//                     satisfy inf = train / τ (top-k or full logits);
//   constant_offset   E_inf[w] = Σ_x π_train(x) = 1 for any two proper distributions when the
//                     tokens were sampled from π_inf, so log mean w ≠ 0 is a level shift —
//                     not the mean log-ratio, which is −KL on pure noise;
//   renormalization   that level shift, but varying from position to position far beyond the
//                     noise within a position (top-k/logits), or concentrated on a few tokens
//                     (sampled tokens only): one side renormalised over a truncated set;
//   position_drift    mean |r| grows with the token's position.
// Misalignment, when found, is reported alone: the other tests assume aligned sides.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/formats/run.h"

namespace kcx {

struct DiagnoseOptions {
    double zCritical = 4.0;            // every test's standardised statistic must reach this
    double minTemperatureChange = 0.02;   // |τ − 1|
    double minOffset = 0.002;          // |log mean w|, nats
    double minDriftExplained = 0.2;    // share of mean |r| due to growth
    double misalignedShare = 0.05;     // share of sequences that must be misaligned
    size_t maxPairPositions = 200000;  // top-k/logit positions read (evenly spread)
};

struct DiagnosisTest {
    std::string cause;
    bool ran = false;
    std::string why;          // when it did not run: what it needs
    bool found = false;
    double estimate = 0, explained = 0, z = 0;
    std::string evidence;
    nlohmann::json detail;    // the test's own figures
};

struct Diagnosis {
    uint64_t tokens = 0, sequences = 0, pairPositions = 0;
    std::string pairSource;          // "top-k", "logits", "top-k and logits" or ""
    std::vector<DiagnosisTest> tests;   // every test, in a fixed order
    std::vector<DiagnosisTest> findings() const;   // the found ones, most explained first
};

Diagnosis diagnose(const Run& run, const DiagnoseOptions& options = {});
nlohmann::json diagnosisJson(const Diagnosis& d);

}  // namespace kcx
