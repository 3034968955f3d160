// Contract calibration: thresholds proposed from a run the user trusts, then checked both
// ways — the contract must pass its good run and fail each bad run (docs/slices.md).
//
// For every metric of the calibration list that the good run supports, the observed
// aggregate (the `quantile` tail, and the mean for divergences) is widened by `margin`
// outward and rounded outward to four significant digits; with `perSlice` the threshold is
// the worst slice's. The observed values come from the evaluator itself (a probe clause per
// metric), so the written contract is evaluated exactly as it was measured.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluate/evaluator.h"

namespace kcx {

struct CalibrateOptions {
    double quantile = 0.999;           // the tail aggregate, p99.9 by default
    double margin = 0.1;               // thresholds widened by 10% of the observed value
    std::string perSlice;              // optional slice key (labeled or derived)
    std::vector<std::string> metrics;  // empty = every calibratable metric the good run supports
    std::string name = "calibrated";
    std::string source;                // the good run's name, for the description
};

struct CalibratedClause {
    std::string id, metric, aggregate;
    double observed = 0;               // the good run's value (worst slice with perSlice)
    std::optional<double> max, min;
};

// One row of the separation table: a clause (and slice) with its status on every run.
struct SeparationRow {
    std::string clause;
    std::string slice;                 // "key=value" or ""
    Status good = Status::Pass;
    std::vector<Status> bad;           // per bad run
};

struct Calibration {
    std::string yaml;                  // the contract text
    Contract contract;                 // parsed back from `yaml`
    std::vector<CalibratedClause> clauses;
    std::vector<std::string> notes;    // metrics left out and why
    Evaluation good;
    std::vector<Evaluation> bad;
    std::vector<SeparationRow> table;
    bool goodPasses() const { return good.verdict == Status::Pass; }
    bool badFails(size_t i) const { return bad[i].verdict == Status::Fail; }
    bool separates() const;            // good passes and every bad run fails
};

// The metrics `calibrate` considers, in order (docs/slices.md says how each is bounded).
const std::vector<std::string>& calibrationMetrics();

// Proposes the contract from the good run and evaluates it on every run. Throws
// std::invalid_argument for bad options (quantile outside (0, 1), negative margin, an
// unknown metric or slice key); Cancelled when progress asks to stop.
Calibration calibrate(std::shared_ptr<const Run> good, const std::vector<std::shared_ptr<const Run>>& bad,
                      const CalibrateOptions& options, const Progress& progress = {});

}  // namespace kcx
