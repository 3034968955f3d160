// p_train against p_inf of the sampled tokens, with the diagonal p_train = p_inf.
//
// A run has millions of tokens; the chart draws at most maxPoints() of them, chosen in the
// background by sampleScatter(): the tokens with the largest |log ratio| (drawn in their
// own colour, so the outliers are never sampled away) plus tokens at even steps. The points
// are drawn as one image by a PointCloudItem, not as Qt Charts' one item per point.
#pragma once

#include <QWidget>

#include <memory>

#include "core/formats/run.h"
#include "ui/charts/chart_data.h"
#include "ui/charts/chart_job.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLabel;
QT_END_NAMESPACE

namespace kcx::ui {

class PointCloudItem;

class ScatterChart : public QWidget {
    Q_OBJECT
public:
    explicit ScatterChart(QWidget* parent = nullptr);
    ~ScatterChart() override;

    void setRun(std::shared_ptr<const Run> run);
    void setLogLog(bool on);              // redraw only
    void setMaxPoints(size_t maxPoints);  // re-samples
    bool logLog() const { return logLog_; }
    size_t maxPoints() const { return maxPoints_; }

    std::shared_ptr<const ScatterSample> sample() const { return sample_; }
    bool isBusy() const { return jobs_.busy(); }
    QChartView* chartView() const { return view_; }
    QChart* chart() const { return chart_; }
    PointCloudItem* cloud() const { return cloud_; }   // draws the sampled points
    QString caption() const;

signals:
    void updated();   // a new sample is on screen

private:
    void resample();
    void rebuild();

    QChart* chart_;
    QChartView* view_;
    QLabel* caption_;
    PointCloudItem* cloud_;
    ChartJobs jobs_;
    std::shared_ptr<const Run> run_;
    std::shared_ptr<const ScatterSample> sample_;
    size_t maxPoints_ = 20000;
    bool logLog_ = false;
};

}  // namespace kcx::ui
