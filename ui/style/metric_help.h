// Every metric's one-line meaning, wherever the window shows a metric's name. The text is
// the metric catalogue's (core/metrics/metrics.cpp), the same lines as the table in
// docs/metrics.md ("What each metric means"), which a test keeps equal to the catalogue.
#pragma once

#include <QString>

class QComboBox;

namespace kcx::ui {

// "k3 — (w - 1) - r: unbiased, never negative (per token; needs log-probs)"; empty for a
// name that is not a metric.
QString metricMeaning(const QString& name);

// Gives each item of a combo box of metric names its meaning as a tooltip, and the box
// itself `what` followed by the current metric's meaning (kept current).
void addMetricTooltips(QComboBox* box, const QString& what);

}  // namespace kcx::ui
