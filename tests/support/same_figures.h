// Two runs that must give the same numbers: every metric's summary (what `kcx metrics
// --json` prints) compared exactly. For the readers that must agree with SPEC 1.1 JSON Lines.
#pragma once

#include <QtGlobal>

#include <cmath>
#include <memory>
#include <optional>

#include "core/formats/run.h"
#include "core/metrics/metrics.h"

namespace kcx::test {

inline bool sameNumber(const std::optional<double>& a, const std::optional<double>& b) {
    if (a.has_value() != b.has_value())
        return false;
    return !a || (std::isnan(*a) && std::isnan(*b)) || *a == *b;
}

// How many metrics had values in both runs, or -1 (with a warning naming the metric) when
// any summary differs.
inline int compareFigures(const Run& x, const Run& y) {
    MetricEngine ex(std::make_shared<Run>(x)), ey(std::make_shared<Run>(y));
    int supported = 0;
    for (const MetricInfo& m : metricCatalog()) {
        const Summary a = summarize(*ex.get(m.name)), b = summarize(*ey.get(m.name));
        if (a.count != b.count || a.missing != b.missing || a.nonfinite != b.nonfinite || !sameNumber(a.mean, b.mean) ||
            !sameNumber(a.min, b.min) || !sameNumber(a.max, b.max) || !sameNumber(a.p50, b.p50) ||
            !sameNumber(a.p99, b.p99) || !sameNumber(a.p999, b.p999)) {
            qWarning("metric %s differs: count %llu/%llu mean %.17g/%.17g", m.name.c_str(), (unsigned long long)a.count,
                     (unsigned long long)b.count, a.mean.value_or(NAN), b.mean.value_or(NAN));
            return -1;
        }
        supported += a.count > 0;
    }
    return supported;
}

}  // namespace kcx::test
