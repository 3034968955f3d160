#include "ui/heatmap/heatmap_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLayout>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics.h"
#include "ui/heatmap/clause_lens.h"
#include "ui/heatmap/heatmap_view.h"
#include "ui/session/session.h"
#include "ui/style/metric_help.h"
#include "ui/style/toolbar_labels.h"

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
    addMetricTooltips(metric_, tr("The per-token metric the colour shows"));
    rows_ = new QComboBox(this);
    rows_->setAccessibleName(tr("Heatmap rows"));
    rows_->setToolTip(tr("Rows: the values of a slice key, or sequences sorted by divergence"));
    aggregate_ = new QComboBox(this);
    aggregate_->setAccessibleName(tr("Heatmap cell statistic"));
    // Narrow windows: the combo boxes give up width (their text is cut, the list is whole)
    // so that the results table next to the heatmap keeps its numbers in view.
    for (QComboBox* box : {metric_, rows_, aggregate_}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(8);
    }
    aggregate_->setToolTip(tr("How the values that fall into one cell are combined. With a clause selected, "
                              "its own statistic over its own scope, marked where a cell breaks its limit"));
    fillAggregateChoices();
    log_ = new QCheckBox(tr("log colour"), this);
    note_ = new QLabel(this);
    note_->setStyleSheet(QStringLiteral("color: palette(mid)"));
    note_->setTextFormat(Qt::PlainText);   // slice values and errors come from files
    for (const QString& text : {tr("Metric:"), tr("Rows:"), tr("Cell:")})
        labels_.push_back(new QLabel(text, this));
    bar->addWidget(labels_[0]);
    bar->addWidget(metric_);
    bar->addWidget(labels_[1]);
    bar->addWidget(rows_, 1);
    bar->addWidget(labels_[2]);
    bar->addWidget(aggregate_);
    bar->addWidget(log_);
    bar->addWidget(note_);
    layout->addLayout(bar);
    view_ = new HeatmapView(this);
    view_->setAccessibleName(tr("Divergence heatmap"));
    layout->addWidget(view_, 1);

    connect(metric_, &QComboBox::currentTextChanged, this, [this](const QString& m) {
        session_->requestMetric(m);
        fillAggregateChoices();
        applyAggregate();
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
        // The clause's scope was the old run's tokens: put it aside until the window selects
        // the clause again on the new run (after its first evaluation).
        if (lens_ && lens_->has) {
            lens_->has = false;
            lens_->statistic = CellStatistic{};
            fillAggregateChoices();
            applyAggregate();
        }
        // Derived keys' codes: the engine's, computed once per run on first use (here in
        // the index's worker) and shared with the evaluator and discovery.
        view_->setDerivedLookup({});
        if (auto engine = session_->engine())
            view_->setDerivedLookup([engine](const std::string& key) { return engine->derived().get(key); });
        fillRowChoices();
        if (lens_ && !lens_->rowKey.isEmpty())
            if (const int i = rows_->findData(QStringList{QStringLiteral("slices"), lens_->rowKey}); i >= 0) {
                rows_->setCurrentIndex(i);
                applyRowMode();
            }
        session_->requestMetric(metric_->currentText());
    });
    setMetric(QStringLiteral("abs_log_ratio"));
}

HeatmapPanel::~HeatmapPanel() = default;

void HeatmapPanel::setCompact(bool compact) {
    // The combo boxes keep their tooltips and accessible names; only the words go.
    showToolbarLabels(labels_, !compact);
}

QString HeatmapPanel::metric() const { return metric_->currentText(); }

void HeatmapPanel::setClause(const std::optional<ClauseLens>& lens) {
    const bool fresh = !lens || !lens_ || lens_->clause != lens->clause;
    // A lens put aside while a new run loaded comes back with the clause's statistic.
    const bool back = lens && lens_ && !fresh && !lens_->has && lens->has;
    lens_ = lens ? std::make_unique<ClauseLens>(*lens) : nullptr;
    if (fresh && lens_) {
        setMetric(lens_->metric);
        if (!lens_->rowKey.isEmpty())
            if (const int i = rows_->findData(QStringList{QStringLiteral("slices"), lens_->rowKey}); i >= 0 &&
                i != rows_->currentIndex()) {
                rows_->setCurrentIndex(i);   // applyRowMode through the signal
            }
    }
    fillAggregateChoices();
    if ((fresh || back) && lens_ && lens_->has) {
        const QSignalBlocker block(aggregate_);
        aggregate_->setCurrentIndex(0);
    }
    applyAggregate();
}

void HeatmapPanel::fillAggregateChoices() {
    const QSignalBlocker block(aggregate_);
    const int was = aggregate_->currentData().isValid() ? aggregate_->currentData().toInt() : -1;
    aggregate_->clear();
    const bool clauseHere = lens_ && lens_->has && lens_->metric == metric_->currentText();
    if (clauseHere)
        aggregate_->addItem(tr("%1: %2").arg(lens_->clause, lens_->statistic.name), -1);
    aggregate_->addItem(tr("mean"), int(HeatmapAggregate::Mean));
    aggregate_->addItem(tr("max"), int(HeatmapAggregate::Max));
    aggregate_->addItem(tr("share above …"), int(HeatmapAggregate::ShareAbove));
    const int share = aggregate_->count() - 1;
    // "Share above" needs a level in the metric's units: a selected clause's on this metric,
    // or one given before. Never a made-up 0.
    double level = shareLevel_;
    if (lens_ && lens_->has && lens_->metric == metric_->currentText())
        level = lens_->statistic.aggregate == HeatmapAggregate::ShareAbove ? lens_->statistic.threshold
                                                                            : lens_->statistic.markLevel;
    if (std::isnan(level)) {
        if (auto* model = qobject_cast<QStandardItemModel*>(aggregate_->model()))
            model->item(share)->setEnabled(false);
        aggregate_->setItemData(share, tr("Select a clause on this metric: its level is the share's"), Qt::ToolTipRole);
    } else {
        aggregate_->setItemText(share, tr("share above %1").arg(level, 0, 'g', 4));
    }
    aggregate_->setItemData(share, std::isnan(level) ? QVariant() : QVariant(level), Qt::UserRole + 1);
    int pick = aggregate_->findData(was);
    if (pick < 0 || (pick == share && std::isnan(level)))
        pick = 0;
    aggregate_->setCurrentIndex(pick);
}

void HeatmapPanel::setMetric(const QString& metric) {
    const int i = metric_->findText(metric);
    if (i >= 0 && i != metric_->currentIndex())
        metric_->setCurrentIndex(i);
}

void HeatmapPanel::setThreshold(double value) {
    shareLevel_ = value;
    fillAggregateChoices();
    applyAggregate();
}

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

void HeatmapPanel::applyAggregate() {
    const int d = aggregate_->currentData().toInt();
    const bool clauseHere = lens_ && lens_->has && lens_->metric == metric_->currentText();
    if (d < 0 && clauseHere) {
        view_->setStatistic(lens_->statistic);
        note_->setText(lens_->note);
        return;
    }
    CellStatistic s;
    s.aggregate = HeatmapAggregate(std::max(0, d));
    s.name = QString::fromLatin1(aggregateName(s.aggregate));
    if (s.aggregate == HeatmapAggregate::ShareAbove) {
        s.threshold = aggregate_->currentData(Qt::UserRole + 1).toDouble();
        s.name = tr("share above %1").arg(s.threshold, 0, 'g', 4);
    }
    view_->setStatistic(s);
    // Say why nothing is marked: the cells are not what the clause bounds.
    if (lens_ && lens_->has)
        note_->setText(tr("unmarked: %1 bounds the %2 of %3").arg(lens_->clause, lens_->statistic.name, lens_->metric));
    else
        note_->setText(lens_ ? lens_->note : QString());
}

}  // namespace kcx::ui
