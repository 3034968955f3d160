// ChartsPanel: following the session (run, metrics, evaluations, thresholds) and turning
// threshold drags into undo commands.
#include <QComboBox>
#include <QUndoStack>

#include "ui/charts/chart_data.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/histogram_chart.h"
#include "ui/charts/position_chart.h"
#include "ui/charts/scatter_chart.h"
#include "ui/charts/slice_bars_chart.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"

namespace kcx::ui {

void ChartsPanel::setUndoStack(QUndoStack* stack) { undo_ = stack; }

void ChartsPanel::setClause(const QString& clauseId, const std::optional<SliceLabels>& slice) {
    // The window re-selects the current clause after every evaluation: nothing to redo
    // (thresholds and bars follow their own signals), and the user's metric stays; only the
    // observed value may have moved.
    if (clauseId == clause_ && slice == slice_ && clauseApplied_) {
        updateObserved();
        return;
    }
    clause_ = clauseId;
    slice_ = slice;
    histogram_->setAutoLogCount(true);   // a new clause: its threshold decides the count axis
    applyClause();
}

void ChartsPanel::applyClause() {
    clauseApplied_ = true;
    auto contract = session_ ? session_->contract() : nullptr;
    const Clause* c = contract ? contract->find(clause_.toStdString()) : nullptr;
    if (c) {
        const MetricInfo* info = findMetric(c->metric);
        if (info && info->level != MetricLevel::Run)
            setMetric(QString::fromStdString(c->metric));
        if (!c->perSlice.empty())
            setSliceKey(QString::fromStdString(c->perSlice));
    }
    updateScope();   // first: the position chart's lines depend on its statistic
    updateThresholds();
    updateBars();
    updateObserved();
}

void ChartsPanel::setMetric(const QString& name) {
    const int i = metricBox_->findData(name);
    if (i < 0)
        return;
    metricBox_->setCurrentIndex(i);
    if (name == metric_ && values_)
        return;
    const bool changed = name != metric_;
    metric_ = name;
    values_.reset();
    if (session_ && session_->run()) {
        histogram_->setValues(nullptr, name);
        position_->setData(session_->run(), nullptr, name);
        session_->requestMetric(name);
    }
    updateScope();
    updateThresholds();
    updateObserved();
    if (changed)
        emit metricChanged(name);
}

void ChartsPanel::updateThresholds() {
    std::vector<ValueLine> lines;
    auto contract = session_ ? session_->contract() : nullptr;
    const Clause* c = contract ? contract->find(clause_.toStdString()) : nullptr;
    if (c && QString::fromStdString(c->metric) == metric_)
        lines = valueLines(*c);
    if (!histogram_->dragging())
        histogram_->setThresholds(lines);
    position_->setThresholds(positionLines(lines));
}

void ChartsPanel::updateBars() {
    const auto& snapshot = session_ ? session_->latest() : EvaluationSnapshot{};
    if (snapshot.evaluation)
        bars_->setResults(snapshot.evaluation->results, clause_);
    else
        bars_->clear();
}

void ChartsPanel::onRunLoaded() {
    values_.reset();
    fillMetrics();
    fillSliceKeys();
    setSliceKey(sliceKey());
    scatter_->setRun(session_->run());
    if (!histogram_->dragging())
        histogram_->clear();
    position_->clear();
    setMetric(metric_);
}

void ChartsPanel::onEvaluated(const EvaluationSnapshot& snapshot) {
    if (snapshot.run)
        scatter_->setRun(snapshot.run);
    if (snapshot.evaluation)
        bars_->setResults(snapshot.evaluation->results, clause_);
    updateObserved();
}

void ChartsPanel::onMetricReady(const QString& name, std::shared_ptr<const MetricValues> values) {
    if (name != metric_ || !values || values == values_)
        return;
    values_ = std::move(values);
    histogram_->setValues(values_, name);
    position_->setData(session_->run(), values_, name);
}

void ChartsPanel::onThresholdChanged(const QString& clause, const QString& which, double) {
    if (clause != clause_)
        return;
    // The histogram moves its line; the position chart redraws its lines (after a drag).
    const auto value = session_->threshold(clause.toStdString(), which.toStdString());
    if (value)
        histogram_->setThresholdValue(which, *value);
    if (!histogram_->dragging())
        updateThresholds();
}

void ChartsPanel::onThresholdDragged(double value, quint64 gesture) {
    if (!session_ || clause_.isEmpty())
        return;
    value = snapSignificant(value);   // a pointer's position, not a typed number
    const std::string clause = clause_.toStdString(), which = histogram_->draggedThreshold().toStdString();
    const auto before = session_->threshold(clause, which);
    if (!before || *before == value)
        return;
    if (undo_)
        undo_->push(new ThresholdCommand(session_, clause, which, *before, value, gesture));
    else
        session_->setThreshold(clause, which, value);
}

}  // namespace kcx::ui
