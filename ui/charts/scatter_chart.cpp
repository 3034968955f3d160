#include "ui/charts/scatter_chart.h"

#include <QLabel>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>

#include <algorithm>
#include <limits>

#include "ui/charts/point_cloud_item.h"
#include "ui/style/chart_style.h"

namespace kcx::ui {

ScatterChart::ScatterChart(QWidget* parent)
    : QWidget(parent), chart_(new QChart), view_(new QChartView(chart_)), caption_(new QLabel),
      cloud_(new PointCloudItem(chart_)) {
    view_->setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);   // see setUpChartView
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_, 1);
    layout->addWidget(caption_);
    rebuild();
}

ScatterChart::~ScatterChart() { jobs_.cancel(); }

void ScatterChart::setRun(std::shared_ptr<const Run> run) {
    if (run == run_)
        return;
    run_ = std::move(run);
    resample();
}

void ScatterChart::setLogLog(bool on) {
    if (on == logLog_)
        return;
    logLog_ = on;
    rebuild();
}

void ScatterChart::setMaxPoints(size_t maxPoints) {
    maxPoints = std::max<size_t>(maxPoints, 1);
    if (maxPoints == maxPoints_)
        return;
    maxPoints_ = maxPoints;
    resample();
}

QString ScatterChart::caption() const { return caption_->text(); }

void ScatterChart::resample() {
    sample_.reset();
    if (!run_) {
        jobs_.cancel();
        rebuild();
        return;
    }
    auto run = run_;
    const size_t cap = maxPoints_;
    rebuild();
    caption_->setText(tr("Sampling tokens…"));   // before start(): a quick result is applied inside it
    jobs_.start(
        this,
        [run, cap](const Progress& p) { return std::make_shared<const ScatterSample>(sampleScatter(*run, cap, 0.25, p)); },
        [this](std::shared_ptr<const ScatterSample> s) {
            sample_ = std::move(s);
            rebuild();
            emit updated();
        },
        [this](const QString& message) { caption_->setText(message); });
}

void ScatterChart::rebuild() {
    clearChart(chart_);
    chart_->setTitle(tr("Sampled token probabilities: training against inference kernel"));
    const ScatterSample* s = sample_.get();
    if (!s) {
        cloud_->clear();
        return;
    }
    // On log axes, a probability that underflowed to 0 has no place: it is left out.
    // The points are drawn by the cloud item; the two empty series give the legend entries.
    double lo = 1.0;
    auto* uniform = new QScatterSeries;
    auto* extreme = new QScatterSeries;
    std::vector<QPointF> up, ep;
    up.reserve(s->index.size());
    size_t hidden = 0;
    for (size_t i = 0; i < s->index.size(); ++i) {
        const double x = s->pInf[i], y = s->pTrain[i];
        if (logLog_ && (x <= 0 || y <= 0)) {
            ++hidden;
            continue;
        }
        if (x > 0)
            lo = std::min(lo, x);
        if (y > 0)
            lo = std::min(lo, y);
        (s->extreme[i] ? ep : up).push_back(QPointF(x, y));
    }
    uniform->setName(tr("even sample (%1)").arg(countText(uint64_t(up.size()))));
    extreme->setName(tr("largest |log ratio| (%1)").arg(countText(uint64_t(ep.size()))));
    uniform->setMarkerSize(5);
    extreme->setMarkerSize(5);
    const QColor uniformColour(0x4c, 0x78, 0xa8, 110), extremeColour(0xe1, 0x57, 0x59, 170);
    uniform->setColor(uniformColour);
    extreme->setColor(extremeColour);
    uniform->setBorderColor(Qt::transparent);
    extreme->setBorderColor(Qt::transparent);

    const double axLo = logLog_ ? padded(lo, 1.0, true, 0.02).first : 0.0;
    const double axHi = logLog_ ? padded(lo, 1.0, true, 0.02).second : 1.0;
    auto* diagonal = new QLineSeries;
    diagonal->append(logLog_ ? lo : 0.0, logLog_ ? lo : 0.0);
    diagonal->append(1.0, 1.0);
    diagonal->setName(tr("p_train = p_inf"));
    QPen pen(QColor(0x40, 0x40, 0x40));
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    diagonal->setPen(pen);

    chart_->addSeries(extreme);   // under the even sample: the outliers frame it
    chart_->addSeries(uniform);
    chart_->addSeries(diagonal);
    QAbstractAxis* ax = addValueAxis(chart_, Qt::AlignBottom, logLog_, axLo, axHi, tr("p_inf (inference kernel)"), false);
    QAbstractAxis* ay = addValueAxis(chart_, Qt::AlignLeft, logLog_, axLo, axHi, tr("p_train (training kernel)"), false);
    for (QAbstractSeries* series : {static_cast<QAbstractSeries*>(uniform), static_cast<QAbstractSeries*>(extreme),
                                    static_cast<QAbstractSeries*>(diagonal)})
        attach(series, ax, ay);

    std::vector<PointCloudItem::Layer> layers;
    layers.push_back({std::move(ep), extremeColour});   // under the even sample, as the series were
    layers.push_back({std::move(up), uniformColour});
    cloud_->setLayers(std::move(layers), PointCloudItem::Axes{axLo, axHi, axLo, axHi, logLog_}, 5.0);

    QString text = tr("%1 of %2 tokens shown (%3 with both log-probs finite)")
                       .arg(countText(s->index.size() - hidden), countText(s->total), countText(s->valid));
    if (hidden)
        text += tr(" · %1 with p = 0 not on the log axes").arg(countText(hidden));
    caption_->setText(text);
}

}  // namespace kcx::ui
