#include "ui/heatmap/heatmap_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics.h"
#include "ui/heatmap/heatmap_view.h"
#include "ui/session/session.h"

namespace kcx::ui {

HeatmapPanel::HeatmapPanel(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    metric_ = new QComboBox(this);
    metric_->setAccessibleName(tr("Heatmap metric"));
    for (const MetricInfo& m : metricCatalog())
        if (m.level == MetricLevel::Token)
            metric_->addItem(QString::fromStdString(m.name));
    metric_->setToolTip(tr("The per-token metric the colour shows"));
    rows_ = new QComboBox(this);
    rows_->setAccessibleName(tr("Heatmap rows"));
    rows_->setToolTip(tr("Rows: the values of a slice key, or sequences sorted by divergence"));
    aggregate_ = new QComboBox(this);
    aggregate_->addItem(tr("mean"), int(HeatmapAggregate::Mean));
    aggregate_->addItem(tr("max"), int(HeatmapAggregate::Max));
    aggregate_->addItem(tr("share above threshold"), int(HeatmapAggregate::ShareAbove));
    aggregate_->setToolTip(tr("How the values that fall into one cell are combined"));
    log_ = new QCheckBox(tr("log colour"), this);
    note_ = new QLabel(this);
    note_->setStyleSheet(QStringLiteral("color: palette(mid)"));
    bar->addWidget(new QLabel(tr("Metric:"), this));
    bar->addWidget(metric_);
    bar->addWidget(new QLabel(tr("Rows:"), this));
    bar->addWidget(rows_, 1);
    bar->addWidget(new QLabel(tr("Cell:"), this));
    bar->addWidget(aggregate_);
    bar->addWidget(log_);
    bar->addWidget(note_);
    layout->addLayout(bar);
    view_ = new HeatmapView(this);
    view_->setAccessibleName(tr("Divergence heatmap"));
    layout->addWidget(view_, 1);

    connect(metric_, &QComboBox::currentTextChanged, this, [this](const QString& m) {
        session_->requestMetric(m);
        emit metricChanged(m);
    });
    connect(rows_, &QComboBox::currentIndexChanged, this, &HeatmapPanel::applyRowMode);
    connect(aggregate_, &QComboBox::currentIndexChanged, this, &HeatmapPanel::applyAggregate);
    connect(log_, &QCheckBox::toggled, this, [this](bool on) {
        ColourScale s = view_->colourScale();
        s.log = on;
        view_->setColourScale(s);
    });
    connect(view_, &HeatmapView::tokenActivated, this, &HeatmapPanel::sequenceActivated);
    connect(view_, &HeatmapView::failed, note_, &QLabel::setText);
    connect(session_, &Session::metricReady, this, [this](const QString& name, std::shared_ptr<const MetricValues> v) {
        if (name != metric_->currentText())
            return;
        values_ = v;
        note_->setText(v->count == 0 ? tr("no values: the run lacks what %1 needs").arg(name) : QString());
        view_->setData(session_->run(), v, name);
    });
    connect(session_, &Session::runLoaded, this, [this] {
        // Derived keys' codes: the engine's, computed once per run on first use (here in
        // the index's worker) and shared with the evaluator and discovery.
        view_->setDerivedLookup({});
        if (auto engine = session_->engine())
            view_->setDerivedLookup([engine](const std::string& key) { return engine->derived().get(key); });
        fillRowChoices();
        session_->requestMetric(metric_->currentText());
    });
    setMetric(QStringLiteral("abs_log_ratio"));
}

QString HeatmapPanel::metric() const { return metric_->currentText(); }

void HeatmapPanel::setMetric(const QString& metric) {
    const int i = metric_->findText(metric);
    if (i >= 0 && i != metric_->currentIndex())
        metric_->setCurrentIndex(i);
}

void HeatmapPanel::setThreshold(double value) { view_->setThreshold(value); }

void HeatmapPanel::fillRowChoices() {
    const QSignalBlocker block(rows_);
    rows_->clear();
    const auto run = session_->run();
    if (!run)
        return;
    // Slice keys first (the overview), then every sequence, then the sequences of one slice.
    for (const auto& key : run->slices.keys)
        rows_->addItem(tr("slices by %1").arg(QString::fromStdString(key)),
                       QStringList{QStringLiteral("slices"), QString::fromStdString(key)});
    rows_->addItem(tr("all sequences, most divergent first"), QStringList{QStringLiteral("all")});
    // Derived keys (docs/slices.md): position, length, p_inf, entropy, top-1 agreement,
    // runtime. After "all sequences", so that a run without labels still opens on it.
    if (const auto engine = session_->engine())
        for (const auto& key : engine->derived().available())
            rows_->addItem(tr("slices by %1").arg(QString::fromStdString(key)),
                           QStringList{QStringLiteral("slices"), QString::fromStdString(key)});
    for (size_t k = 0; k < run->slices.keys.size(); ++k)
        for (const auto& value : run->slices.values[k])
            rows_->addItem(tr("sequences of %1 = %2").arg(QString::fromStdString(run->slices.keys[k]), QString::fromStdString(value)),
                           QStringList{QStringLiteral("of"), QString::fromStdString(run->slices.keys[k]), QString::fromStdString(value)});
    rows_->setCurrentIndex(0);
    applyRowMode();
}

void HeatmapPanel::applyRowMode() {
    const QStringList d = rows_->currentData().toStringList();
    if (d.isEmpty())
        return;
    HeatmapRowSpec spec;
    if (d[0] == QLatin1String("slices")) {
        spec.mode = HeatmapRows::SliceValues;
        spec.sliceKey = d[1].toStdString();
    } else if (d[0] == QLatin1String("of")) {
        spec.mode = HeatmapRows::SequencesOfSlice;
        spec.sliceKey = d[1].toStdString();
        spec.sliceValue = d[2].toStdString();
    } else if (d[0] == QLatin1String("finding")) {
        spec.mode = HeatmapRows::Conditions;
        for (qsizetype i = 1; i + 1 < d.size(); i += 2)
            spec.conditions.emplace_back(d[i].toStdString(), d[i + 1].toStdString());
    }
    view_->setRowMode(spec);
}

bool HeatmapPanel::showSequencesOf(const QString& key, const QString& value) {
    const int i = rows_->findData(QStringList{QStringLiteral("of"), key, value});
    if (i < 0)
        return false;
    rows_->setCurrentIndex(i);
    applyRowMode();
    return true;
}

void HeatmapPanel::showFinding(const std::vector<std::pair<std::string, std::string>>& conditions,
                               std::optional<std::pair<size_t, size_t>> positions) {
    if (conditions.empty())
        return;
    QStringList data{QStringLiteral("finding")};
    for (const auto& [k, v] : conditions)
        data << QString::fromStdString(k) << QString::fromStdString(v);
    const QString label = tr("finding: %1").arg(QString::fromStdString(conditionsText(conditions)));
    {
        // One finding at a time in the list: the newest replaces the last.
        const QSignalBlocker block(rows_);
        for (int i = rows_->count() - 1; i >= 0; --i)
            if (rows_->itemData(i).toStringList().value(0) == QLatin1String("finding"))
                rows_->removeItem(i);
        rows_->insertItem(0, label, data);
        rows_->setCurrentIndex(0);
    }
    HeatmapRowSpec spec;
    spec.mode = HeatmapRows::Conditions;
    spec.conditions = conditions;
    view_->setRowMode(spec, positions);
}

void HeatmapPanel::applyAggregate() { view_->setAggregate(HeatmapAggregate(aggregate_->currentData().toInt())); }

}  // namespace kcx::ui
