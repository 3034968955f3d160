// A run's figures under the RL frameworks' own metric names and formulas (issue 21,
// `kcx metrics --as FRAMEWORK`; docs/corrections.md "Framework names"), implemented from their
// code at the commits named in each figure's source. Over the tokens whose two log-probs are
// both finite; "pooled" means over all those tokens at once, as a single-process batch.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/formats/run.h"

namespace kcx {

struct FrameworkFigure {
    std::string name;          // the framework's key, e.g. "mismatch_kl/all/mean"
    double value = 0;          // NaN when the run has no token for it
    std::string formula;       // in r = lp_train − lp_inf, w = e^r, p = e^lp
    std::string kcx;           // the same figure in KCX's words, when there is one
    std::string source;        // repo@commit path:line
};

// Known: verl, slime, prime-rl, nemo-rl, trl, skyrl, openrlhf.
std::vector<std::string> frameworkNames();
// Empty when the framework is unknown.
std::vector<FrameworkFigure> frameworkFigures(const Run& run, const std::string& framework);
nlohmann::json frameworkFiguresJson(const std::string& framework, const std::vector<FrameworkFigure>& figures);

}  // namespace kcx
