// "Where is it hiding?" and "Suggest thresholds" (ui/discover/discover_panel.h).
#include "ui/discover/discover_panel.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "core/discover/calibrate.h"
#include "core/metrics/derived_slices.h"
#include "ui/session/background.h"
#include "ui/style/metric_help.h"

namespace kcx::ui {

namespace {

QString number(double v) { return QString::number(v, 'g', 4); }

// A q-value of exactly 0 is an underflow (an effect tens of standard errors out), not a
// certainty: it is shown as "< 1e-300", never as 0.
constexpr double kDiscoverSmallestQ = 1e-300;
QString discoverQText(double q) { return q < kDiscoverSmallestQ ? QStringLiteral("< 1e-300") : number(q); }

QString conditionsLabel(const std::vector<SliceCondition>& c) {
    QStringList parts;
    for (const auto& x : c)
        parts << QString::fromStdString(x.key + " = " + x.value);
    return parts.join(QStringLiteral(", "));
}

struct DiscoverOutcome {
    Discovery discovery;
    QString error;
};

}  // namespace

DiscoverPanel::DiscoverPanel(QWidget* parent) : QWidget(parent) {
    metric_ = new QComboBox;
    for (const auto& m : metricCatalog())
        if (m.level != MetricLevel::Run)
            metric_->addItem(QString::fromStdString(m.name));
    metric_->setCurrentText(QStringLiteral("abs_log_ratio"));
    metric_->setAccessibleName(tr("Discovery metric"));
    addMetricTooltips(metric_, tr("The metric whose mean is compared, slice against the rest of the run"));
    metric_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    metric_->setMinimumContentsLength(10);
    depth_ = new QSpinBox;
    depth_->setRange(1, 3);
    depth_->setValue(2);
    depth_->setPrefix(tr("up to "));
    depth_->setSuffix(tr(" conditions"));
    run_ = new QPushButton(tr("Search"));
    clause_ = new QPushButton(tr("Add clause"));
    clause_->setEnabled(false);
    summary_ = new QLabel(tr("Open a run to search it for slices whose divergence exceeds the rest."));
    summary_->setWordWrap(true);
    table_ = new QTableWidget(0, 6);
    table_->setHorizontalHeaderLabels({tr("slice"), tr("values"), tr("mean"), tr("rest"), tr("effect (CI)"), tr("q")});
    // The numbers and the interval are never cut; the slice label takes what is left.
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table_->horizontalHeader()->setMinimumSectionSize(40);
    table_->horizontalHeaderItem(5)->setToolTip(tr("q: the Benjamini–Hochberg adjusted p-value (false discovery rate)"));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();

    auto* bar = new QHBoxLayout;
    bar->addWidget(metric_);
    bar->addWidget(depth_);
    bar->addWidget(run_);
    bar->addStretch();
    bar->addWidget(clause_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(summary_);
    layout->addWidget(table_);

    connect(run_, &QPushButton::clicked, this, &DiscoverPanel::search);
    connect(table_, &QTableWidget::itemSelectionChanged, this,
            [this] { clause_->setEnabled(!table_->selectedItems().isEmpty()); });
    connect(table_, &QTableWidget::cellActivated, this, [this](int row, int) {
        if (row >= 0 && size_t(row) < discovery_.findings.size())
            emit findingActivated(discovery_.findings[size_t(row)].conditions);
    });
    connect(clause_, &QPushButton::clicked, this, [this] {
        const int row = table_->currentRow();
        if (row >= 0 && size_t(row) < discovery_.findings.size())
            emit clauseRequested(QString::fromStdString(discovery_.findings[size_t(row)].clause));
    });
    run_->setEnabled(false);
}

void DiscoverPanel::setRun(std::shared_ptr<MetricEngine> engine) {
    engine_ = std::move(engine);
    ++generation_;   // a search on the previous run is dropped when it ends
    discovery_ = {};
    table_->setRowCount(0);
    run_->setEnabled(engine_ != nullptr);
    summary_->setText(engine_ ? tr("Search the run for slices (labels and derived keys: position, length, "
                                   "p_inf, entropy, top-1 agreement, runtime) whose divergence exceeds the rest.")
                              : tr("Open a run to search it."));
}

void DiscoverPanel::search() {
    if (!engine_)
        return;
    DiscoverOptions o;
    o.metric = metric_->currentText().toStdString();
    o.maxDepth = depth_->value();
    const int gen = ++generation_;
    busy_ = true;
    run_->setEnabled(false);
    summary_->setText(tr("Searching…"));
    QtConcurrent::run(workPool(), [engine = engine_, o]() {
        lowerThreadPriority();
        DiscoverOutcome out;
        try {
            out.discovery = discover(*engine, o);
        } catch (const std::exception& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    }).then(this, [this, gen](DiscoverOutcome out) {
        if (gen != generation_)
            return;   // the run changed, or a newer search started
        busy_ = false;
        run_->setEnabled(engine_ != nullptr);
        if (!out.error.isEmpty())
            summary_->setText(tr("Cannot search: %1").arg(out.error));
        else
            show(out.discovery);
        emit searched();
    });
}

void DiscoverPanel::show(const Discovery& d) {
    discovery_ = d;
    table_->setRowCount(int(d.findings.size()));
    for (size_t i = 0; i < d.findings.size(); ++i) {
        const Finding& f = d.findings[i];
        const QStringList cells = {conditionsLabel(f.conditions),
                                   QString::number(f.nTokens) + " / " + QString::number(f.nSequences) + tr(" seq"),
                                   number(f.mean), number(f.restMean),
                                   QStringLiteral("%1 [%2, %3]").arg(number(f.effect), number(f.ciLo), number(f.ciHi)),
                                   discoverQText(f.qValue)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c > 0)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (c == 5 && f.qValue < kDiscoverSmallestQ)
                item->setToolTip(tr("Below %1: the test's p-value is smaller than a double can tell apart from 0")
                                     .arg(number(kDiscoverSmallestQ)));
            table_->setItem(int(i), c, item);
        }
    }
    summary_->setText(
        d.findings.empty()
            ? tr("Nothing found: no slice's %1 exceeds the rest of the run at false discovery rate %2 (%3 slices "
                 "tested).")
                  .arg(QString::fromStdString(d.metric), number(d.q), QString::number(d.tested))
            : tr("%1 slices tested; %2 significant at false discovery rate %3, %4 shown (intervals at %5%). "
                 "Double-click a row for its heatmap.")
                  .arg(QString::number(d.tested), QString::number(d.significant), number(d.q),
                       QString::number(d.findings.size()), number(100 * d.ciLevel)));
}

std::optional<std::pair<size_t, size_t>> DiscoverPanel::positionRange(const std::vector<SliceCondition>& conditions) {
    const auto& values = findDerivedKey("derived.pos_bucket")->values;
    for (const auto& c : conditions)
        if (c.positions)   // a range of the dyadic search
            return std::make_pair(size_t(c.positions->first), size_t(c.positions->second));
    for (const auto& c : conditions)
        if (c.key == "derived.pos_bucket")
            for (size_t v = 0; v < values.size(); ++v)
                if (values[v] == c.value)
                    return std::make_pair(kPositionEdges[v],
                                          v + 1 < std::size(kPositionEdges) ? kPositionEdges[v + 1] : SIZE_MAX);
    return std::nullopt;
}

void showCalibrationDialog(QWidget* parent, std::shared_ptr<const Run> good,
                           std::function<void(const std::string&)> apply) {
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(QObject::tr("Suggest thresholds"));
    auto* text = new QPlainTextEdit;
    text->setReadOnly(true);
    text->setPlainText(QObject::tr("Calibrating from this run (p99.9 tails and means, 10% margin)…"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    QPushButton* use = buttons->addButton(QObject::tr("Use this contract"), QDialogButtonBox::AcceptRole);
    use->setEnabled(false);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(new QLabel(QObject::tr("Thresholds proposed from the open run, which you trust:")));
    layout->addWidget(text);
    layout->addWidget(buttons);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto yaml = std::make_shared<std::string>();
    QObject::connect(use, &QPushButton::clicked, dialog, [dialog, yaml, apply] {
        if (apply)
            apply(*yaml);
        dialog->accept();
    });
    dialog->resize(640, 520);
    dialog->show();
    QtConcurrent::run(workPool(), [good]() -> std::pair<std::string, QString> {
        lowerThreadPriority();
        try {
            return {calibrate(good, {}, CalibrateOptions{}).yaml, {}};
        } catch (const std::exception& e) {
            return {{}, QString::fromStdString(e.what())};
        }
    }).then(dialog, [text, use, yaml](std::pair<std::string, QString> r) {
        if (!r.second.isEmpty()) {
            text->setPlainText(QObject::tr("Cannot calibrate: %1").arg(r.second));
            return;
        }
        *yaml = r.first;
        text->setPlainText(QString::fromStdString(r.first));
        use->setEnabled(true);
    });
}

}  // namespace kcx::ui
