// Contract texts the contract tests share: a header, one valid numerical clause with known
// places, and the error a text gets.
#pragma once

#include <string>

#include "core/base/errors.h"
#include "core/contract/contract.h"

namespace kcx::test {

// The error a text gets, or "" when it parses.
inline std::string contractErrorOf(const std::string& text, InputError* out = nullptr) {
    try {
        parseContract(text, "c.yaml");
    } catch (const InputError& e) {
        if (out)
            *out = e;
        return e.what();
    }
    return "";
}

inline const std::string kHead = "kcx_contract: 1\nname: t\n";
// A valid numerical clause N1 on lines 3-7: id at 4:9, metric 5:13, aggregate 6:16, max 7:10.
inline const std::string kN1 = kHead + "numerical:\n  - id: N1\n    metric: abs_log_ratio\n    aggregate: p99\n    max: 0.2\n";

}  // namespace kcx::test
