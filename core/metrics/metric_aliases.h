// The RL frameworks' names for metrics whose per-token formula is one of KCX's (issue 21;
// docs/corrections.md "Framework names"): a contract clause may say `metric: mismatch_kl` and
// mean `k3`. Only exact formulas are aliases; with `aggregate: mean` a clause reproduces the
// framework's figure (pooled over tokens, or over sequences for slime's).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kcx {

struct MetricAlias {
    std::string alias;       // the framework's name, without its aggregate suffix
    std::string metric;      // the KCX metric
    std::string framework;
    std::string note;
};

const std::vector<MetricAlias>& metricAliases();
// The alias entry for `name`, or nullptr.
const MetricAlias* findMetricAlias(std::string_view name);

}  // namespace kcx
