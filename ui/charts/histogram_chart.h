// A histogram of one metric's values with the selected clause's thresholds as vertical
// lines that can be dragged.
//
// Bins are computed in the background (ChartJobs: only the newest result is shown), so
// ten million values never hold up the window; a threshold drag only moves a line. The
// caption counts the values left out (missing, non-finite, <= 0 on a log axis).
//
// Dragging: press on (or within a few pixels of) an editable line, move, release.
// thresholdDragged() is emitted for every move with the gesture id of the drag
// (ThresholdCommand::newGesture() at the press), thresholdDragFinished() at the release;
// draggedThreshold() names the line ("max", "min", "level").
#pragma once

#include <QWidget>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/evaluate/clause_scope.h"
#include "core/metrics/metrics.h"
#include "ui/charts/chart_data.h"
#include "ui/charts/chart_job.h"

QT_BEGIN_NAMESPACE
class QLabel;
class QChart;
class QChartView;
class QAreaSeries;
class QLineSeries;
class QAbstractAxis;
QT_END_NAMESPACE

namespace kcx::ui {

class HistogramChart : public QWidget {
    Q_OBJECT
public:
    explicit HistogramChart(QWidget* parent = nullptr);
    ~HistogramChart() override;

    // The values to bin (per-token or per-sequence); `metric` names the x axis.
    void setValues(std::shared_ptr<const MetricValues> values, const QString& metric);
    // Only these values count (one byte per value, non-zero = counts; nullptr: all), named
    // in the title (e.g. "N1: precision=fp8"). A mask of another length is ignored.
    void setScope(std::shared_ptr<const LazyClauseScope> scope, const QString& name);
    QString scopeName() const { return scopeName_; }
    // The selected result's observed value, drawn as a dashed line, with its interval as a
    // band when it has one (in the metric's units only; nullopt: none).
    struct Observed {
        double value = 0;
        std::optional<std::pair<double, double>> interval;
        QString label;   // e.g. "N1 p99.9 (fp8)"
    };
    void setObserved(std::optional<Observed> observed);
    const std::optional<Observed>& observed() const { return observed_; }
    // Log count switches itself on when a threshold line sits in the tail (fewer than 5 %
    // of the shown values beyond it), so the bins around it are not flat; off again when
    // none does. Until the user sets it (setLogCount), after which it is theirs. Decided
    // when values or lines arrive; an edit that moves a line within view keeps the scale.
    void setAutoLogCount(bool on);
    bool autoLogCount() const { return autoLog_; }
    void clear();
    void setLogX(bool on);          // bins equal-width in log10 (re-bins)
    void setLogCount(bool on);      // a log count axis (redraw only)
    void setBinCount(int bins);     // re-bins
    bool logX() const { return logX_; }
    bool logCount() const { return logCount_; }
    int binCount() const { return bins_; }

    // The threshold lines (from valueLines(clause)); replaces the old ones.
    void setThresholds(std::vector<ValueLine> lines);
    // Moves one line when its threshold changed elsewhere (undo, a spin box).
    void setThresholdValue(const QString& which, double value);
    const std::vector<ValueLine>& thresholds() const { return lines_; }
    // The line being (or last) dragged.
    QString draggedThreshold() const { return dragWhich_; }
    bool dragging() const { return dragIndex_ >= 0; }

    QChartView* chartView() const { return view_; }
    QChart* chart() const { return chart_; }
    QString caption() const;
    std::shared_ptr<const Histogram> histogram() const { return histogram_; }
    bool isBusy() const { return jobs_.busy(); }
    // The value under a viewport point, and the viewport point of a value (mid-height).
    double valueAt(QPoint viewportPos) const;
    QPoint positionOf(double value) const;

signals:
    void logCountChanged(bool on);   // by itself (setAutoLogCount)
    void thresholdDragged(double value, quint64 gesture);
    void thresholdDragFinished();
    void updated();   // a new histogram is on screen

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void recompute();
    void rebuild();
    void applyAutoLog();
    void addObserved(QAbstractAxis* ax, QAbstractAxis* ay);
    void placeLine(size_t i);
    // Whether `lines` are the drawn lines with new values, all still in view.
    bool inPlace(const std::vector<ValueLine>& lines) const;
    int lineNear(QPoint viewportPos) const;
    void dragTo(QPoint viewportPos);

    QChart* chart_;
    QChartView* view_;
    QLabel* caption_;
    ChartJobs jobs_;
    std::shared_ptr<const MetricValues> values_;
    std::shared_ptr<const Histogram> histogram_;
    QString metric_;
    int bins_ = 80;
    bool logX_ = false, logCount_ = false;
    std::vector<ValueLine> lines_;
    std::vector<QLineSeries*> lineSeries_;   // parallel to lines_ (null when not drawable)
    QAreaSeries* area_ = nullptr;
    double xLo_ = 0, xHi_ = 1, yLo_ = 0, yHi_ = 1;
    int dragIndex_ = -1;
    quint64 gesture_ = 0;
    double lastDragValue_ = 0;
    QString dragWhich_;
    std::shared_ptr<const LazyClauseScope> scope_;
    QString scopeName_;
    std::optional<Observed> observed_;
    bool autoLog_ = true;
};

}  // namespace kcx::ui
