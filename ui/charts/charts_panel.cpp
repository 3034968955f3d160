#include "ui/charts/charts_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLayout>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QVBoxLayout>

#include "ui/charts/histogram_chart.h"
#include "ui/charts/position_chart.h"
#include "ui/charts/scatter_chart.h"
#include "ui/charts/slice_bars_chart.h"
#include "ui/session/session.h"
#include "ui/style/metric_help.h"
#include "ui/style/toolbar_labels.h"

namespace kcx::ui {

namespace {

enum Tab { HistogramTab, SlicesTab, ScatterTab, PositionTab };

bool available(const Run* run, const std::string& needs) {
    if (!run)
        return true;
    if (needs == "topk")
        return run->hasTopK();
    if (needs == "logits")
        return run->hasLogits();
    if (needs == "topk|logits")
        return run->hasTopK() || run->hasLogits();
    if (needs == "rewards")
        return run->hasRewards();
    return true;   // logprobs, tokens
}

}  // namespace

ChartsPanel::ChartsPanel(Session* session, QWidget* parent)
    : QWidget(parent), session_(session), tabs_(new QTabWidget), histogram_(new HistogramChart),
      bars_(new SliceBarsChart), scatter_(new ScatterChart), position_(new PositionChart) {
    tabs_->addTab(histogram_, tr("Histogram"));
    tabs_->addTab(bars_, tr("Per slice"));
    tabs_->addTab(scatter_, tr("p_train vs p_inf"));
    tabs_->addTab(position_, tr("By position"));
    tabs_->setDocumentMode(true);

    auto* bar = new QWidget;
    buildControls(bar);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(bar);
    layout->addWidget(tabs_, 1);

    connect(tabs_, &QTabWidget::currentChanged, this, &ChartsPanel::updateControls);
    connect(histogram_, &HistogramChart::updated, this, &ChartsPanel::updateControls);
    connect(histogram_, &HistogramChart::logCountChanged, this, &ChartsPanel::updateControls);
    connect(scatter_, &ScatterChart::updated, this, &ChartsPanel::updateControls);
    connect(position_, &PositionChart::updated, this, &ChartsPanel::updateControls);
    connect(histogram_, &HistogramChart::thresholdDragged, this, &ChartsPanel::onThresholdDragged);
    connect(histogram_, &HistogramChart::thresholdDragFinished, this, &ChartsPanel::updateThresholds);
    if (session_) {
        connect(session_, &Session::runLoaded, this, &ChartsPanel::onRunLoaded);
        connect(session_, &Session::contractChanged, this, &ChartsPanel::applyClause);
        connect(session_, &Session::evaluated, this, &ChartsPanel::onEvaluated);
        connect(session_, &Session::metricReady, this, &ChartsPanel::onMetricReady);
        connect(session_, &Session::thresholdChanged, this, &ChartsPanel::onThresholdChanged);
    }
    fillMetrics();
    fillSliceKeys();
    updateControls();
    if (session_ && session_->run())
        onRunLoaded();
}

void ChartsPanel::setCompact(bool compact) {
    showToolbarLabels(labels_, !compact);
}

void ChartsPanel::buildControls(QWidget* bar) {
    metricBox_ = new QComboBox;
    metricBox_->setAccessibleName(tr("Chart metric"));
    addMetricTooltips(metricBox_, tr("The metric the charts show"));
    sliceBox_ = new QComboBox;
    sliceBox_->setAccessibleName(tr("Chart slice key"));
    // Narrow windows: the boxes give up width (their lists stay whole).
    for (QComboBox* box : {metricBox_, sliceBox_}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(10);
    }
    sliceBox_->setToolTip(tr("One line per value of this slice key"));
    logX_ = new QCheckBox(tr("Log x"));
    logX_->setToolTip(tr("Bins of equal width on a log scale; values <= 0 are left out"));
    logCount_ = new QCheckBox(tr("Log count"));
    logLog_ = new QCheckBox(tr("Log-log"));
    logY_ = new QCheckBox(tr("Log y"));
    auto* row = new QHBoxLayout(bar);
    row->setContentsMargins(4, 2, 4, 2);
    labels_ = {new QLabel(tr("Metric:")), new QLabel(tr("Slice key:"))};
    row->addWidget(labels_[0]);
    row->addWidget(metricBox_);
    row->addWidget(labels_[1]);
    row->addWidget(sliceBox_);
    for (QCheckBox* box : {logX_, logCount_, logLog_, logY_})
        row->addWidget(box);
    row->addStretch(1);

    connect(metricBox_, &QComboBox::activated, this, [this](int i) { setMetric(metricBox_->itemData(i).toString()); });
    connect(sliceBox_, &QComboBox::activated, this, [this](int i) { setSliceKey(sliceBox_->itemData(i).toString()); });
    connect(logX_, &QCheckBox::toggled, histogram_, &HistogramChart::setLogX);
    connect(logCount_, &QCheckBox::toggled, histogram_, &HistogramChart::setLogCount);
    connect(logLog_, &QCheckBox::toggled, scatter_, &ScatterChart::setLogLog);
    connect(logY_, &QCheckBox::toggled, position_, &PositionChart::setLogY);
}

void ChartsPanel::updateControls() {
    const int tab = tabs_->currentIndex();
    const bool metricTab = tab == HistogramTab || tab == PositionTab;
    metricBox_->setEnabled(metricTab);
    sliceBox_->setEnabled(tab == PositionTab);
    logX_->setVisible(tab == HistogramTab);
    logCount_->setVisible(tab == HistogramTab);
    logLog_->setVisible(tab == ScatterTab);
    logY_->setVisible(tab == PositionTab);
    // The charts may have been switched through their own API.
    const std::pair<QCheckBox*, bool> states[] = {{logX_, histogram_->logX()}, {logCount_, histogram_->logCount()},
                                                  {logLog_, scatter_->logLog()}, {logY_, position_->logY()}};
    for (const auto& [box, on] : states) {
        const QSignalBlocker block(box);
        box->setChecked(on);
    }
}

void ChartsPanel::fillMetrics() {
    const Run* run = session_ && session_->run() ? session_->run().get() : nullptr;
    metricBox_->clear();
    auto* model = qobject_cast<QStandardItemModel*>(metricBox_->model());
    for (const MetricInfo& m : metricCatalog()) {
        if (m.level == MetricLevel::Run)
            continue;   // one number per run: nothing to plot
        const QString name = QString::fromStdString(m.name);
        metricBox_->addItem(name, name);
        const int row = metricBox_->count() - 1;
        metricBox_->setItemData(row, QString::fromStdString(m.description), Qt::ToolTipRole);
        if (model && !available(run, m.needs)) {
            model->item(row)->setEnabled(false);
            metricBox_->setItemData(row, tr("%1 (needs %2, not in this run)")
                                             .arg(QString::fromStdString(m.description), QString::fromStdString(m.needs)),
                                    Qt::ToolTipRole);
        }
    }
    metricBox_->setCurrentIndex(metricBox_->findData(metric_));
}

void ChartsPanel::fillSliceKeys() {
    const QString keep = sliceKey();
    sliceBox_->clear();
    sliceBox_->addItem(tr("(all sequences)"), QString());
    if (session_ && session_->run())
        for (const std::string& key : session_->run()->slices.keys)
            sliceBox_->addItem(QString::fromStdString(key), QString::fromStdString(key));
    sliceBox_->setCurrentIndex(std::max(0, sliceBox_->findData(keep)));
}

QString ChartsPanel::sliceKey() const { return sliceBox_ ? sliceBox_->currentData().toString() : QString(); }

void ChartsPanel::setSliceKey(const QString& key) {
    const int i = std::max(0, sliceBox_->findData(key));
    sliceBox_->setCurrentIndex(i);
    int index = -1;
    if (session_ && session_->run() && !key.isEmpty())
        index = session_->run()->slices.keyIndex(key.toStdString());
    position_->setSliceKey(index);
}

}  // namespace kcx::ui
