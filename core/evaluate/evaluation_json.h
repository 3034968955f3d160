// The JSON of an evaluation (SPEC 6.1), shared by `kcx check`, reports and sign-off.
#pragma once

#include <nlohmann/json.hpp>

#include "core/evaluate/evaluator.h"

namespace kcx {

nlohmann::json resultJson(const Result& r);
nlohmann::json boundJson(const BoundStep& b);
// {"kcx": 1, "verdict", "stage", "action", "stages", "results", "bounds"}; the caller adds
// "contract" and "run" (they need file hashes).
nlohmann::json evaluationJson(const Evaluation& ev);

}  // namespace kcx
