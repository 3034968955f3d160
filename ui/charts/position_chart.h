// A per-token metric against token position: the mean per position bin, one line per
// value of a slice key, with the clause's value thresholds as horizontal lines. The bin
// width adapts to the longest sequence (about maxBins() bins); the means are computed in
// the background.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

#include "core/evaluate/clause_scope.h"
#include "core/metrics/metrics.h"
#include "ui/charts/chart_data.h"
#include "ui/charts/chart_job.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLabel;
class QAbstractAxis;
class QLineSeries;
QT_END_NAMESPACE

namespace kcx::ui {

class PositionChart : public QWidget {
    Q_OBJECT
public:
    explicit PositionChart(QWidget* parent = nullptr);
    ~PositionChart() override;

    // A per-token metric of the run (a per-sequence one shows a note instead).
    void setData(std::shared_ptr<const Run> run, std::shared_ptr<const MetricValues> values, const QString& metric);
    void clear();
    void setSliceKey(int key);          // index into run.slices.keys; -1: one line for all
    void setLogY(bool on);              // redraw only
    void setMaxBins(size_t bins);
    void setThresholds(std::vector<ValueLine> lines);
    // Only these tokens count (one byte per token; nullptr: all), named in the title.
    void setScope(std::shared_ptr<const LazyClauseScope> scope, const QString& name);
    // What each point is (the mean unless a selected clause bounds something else).
    void setStatistic(const PositionStatistic& statistic);
    const PositionStatistic& statistic() const { return statistic_; }
    int sliceKey() const { return sliceKey_; }
    bool logY() const { return logY_; }
    size_t maxBins() const { return maxBins_; }

    std::shared_ptr<const PositionMeans> means() const { return means_; }
    bool isBusy() const { return jobs_.busy(); }
    QChartView* chartView() const { return view_; }
    QChart* chart() const { return chart_; }
    QString caption() const;

signals:
    void updated();

private:
    void recompute();
    void rebuild();
    // The y range for the data and the lines (padded; from 0 for non-negative data).
    std::pair<double, double> yRange() const;

    QChart* chart_;
    QChartView* view_;
    QLabel* caption_;
    ChartJobs jobs_;
    std::shared_ptr<const Run> run_;
    std::shared_ptr<const MetricValues> values_;
    std::shared_ptr<const PositionMeans> means_;
    QString metric_;
    int sliceKey_ = -1;
    bool logY_ = false;
    size_t maxBins_ = 200;
    std::vector<ValueLine> lines_;
    std::shared_ptr<const LazyClauseScope> scope_;
    QString scopeName_;
    PositionStatistic statistic_;
    // From the last rebuild: what a threshold edit updates in place.
    double dataLo_ = 0, dataHi_ = 0;
    QAbstractAxis* xAxis_ = nullptr;
    QAbstractAxis* yAxis_ = nullptr;
    std::vector<QLineSeries*> lineSeries_;   // one per drawn line of lines_
};

}  // namespace kcx::ui
