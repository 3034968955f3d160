// The window's charts in one tabbed panel: histogram, per-slice bars, p_train/p_inf
// scatter and metric-by-position, with a metric chooser (the per-token and per-sequence
// metrics of kcx::metricCatalog(), those the run cannot compute disabled), a slice key
// chooser and log-scale toggles for the tab on show.
//
// The panel follows a Session: it asks for metrics through Session::requestMetric() and
// draws them on metricReady(), redraws the bars on evaluated(), and moves threshold lines
// on thresholdChanged(). setClause() picks the clause whose metric, slice key and
// thresholds are shown. Dragging a threshold in the histogram pushes ThresholdCommands
// with one gesture id per drag onto the undo stack given to setUndoStack(), so a drag is
// one undo step (without a stack the session is changed directly).
#pragma once

#include <QPointer>
#include <QString>
#include <QUndoStack>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "core/evaluate/evaluator.h"
#include "core/metrics/metrics.h"
#include "ui/charts/chart_data.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QTabWidget;
QT_END_NAMESPACE

namespace kcx::ui {

class Session;
struct EvaluationSnapshot;
class HistogramChart;
class SliceBarsChart;
class ScatterChart;
class PositionChart;

class ChartsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChartsPanel(Session* session, QWidget* parent = nullptr);

    void setUndoStack(QUndoStack* stack);
    QUndoStack* undoStack() const { return undo_; }

    // A narrow window: the toolbar drops its "Metric:" and "Slice key:" labels.
    void setCompact(bool compact);

    QString clause() const { return clause_; }
    QString metric() const { return metric_; }
    using QWidget::metric;   // (QPaintDevice's, which the line above would hide)
    QString sliceKey() const;    // empty: all sequences together

    HistogramChart* histogramChart() const { return histogram_; }
    SliceBarsChart* sliceBarsChart() const { return bars_; }
    ScatterChart* scatterChart() const { return scatter_; }
    PositionChart* positionChart() const { return position_; }
    QTabWidget* tabs() const { return tabs_; }

public slots:
    // Shows this clause: its metric, its per_slice key and its thresholds ("" for none).
    // With `slice` (the selected result's labels), the histogram and the position chart
    // show that slice of the clause's scope, and the result's observed value and interval.
    void setClause(const QString& clauseId, const std::optional<SliceLabels>& slice = std::nullopt);
    // Shows a metric (requested from the session when needed).
    void setMetric(const QString& name);
    // The slice key of the position chart ("" for one line over all sequences).
    void setSliceKey(const QString& key);

signals:
    void metricChanged(const QString& name);

private:
    void applyClause();   // metric, slice key, lines and bars from the clause
    void buildControls(QWidget* bar);
    void fillMetrics();
    void fillSliceKeys();
    void updateThresholds();
    void updateScope();      // charts_panel_clause.cpp: the clause's tokens, the result's value
    void updateObserved();
    std::vector<ValueLine> positionLines(const std::vector<ValueLine>& valueLines) const;
    void updateBars();
    void updateControls();
    void onRunLoaded();
    void onEvaluated(const EvaluationSnapshot& snapshot);
    void onMetricReady(const QString& name, std::shared_ptr<const MetricValues> values);
    void onThresholdChanged(const QString& clause, const QString& which, double value);
    void onThresholdDragged(double value, quint64 gesture);

    QPointer<Session> session_;
    QPointer<QUndoStack> undo_;
    QString clause_, metric_ = QStringLiteral("abs_log_ratio");
    bool clauseApplied_ = false;
    std::optional<SliceLabels> slice_;
    std::shared_ptr<const MetricValues> values_;   // of metric_, once ready
    QComboBox* metricBox_ = nullptr;
    QComboBox* sliceBox_ = nullptr;
    std::vector<QLabel*> labels_;
    QCheckBox* logX_ = nullptr;
    QCheckBox* logCount_ = nullptr;
    QCheckBox* logLog_ = nullptr;
    QCheckBox* logY_ = nullptr;
    QTabWidget* tabs_;
    HistogramChart* histogram_;
    SliceBarsChart* bars_;
    ScatterChart* scatter_;
    PositionChart* position_;
};

}  // namespace kcx::ui
