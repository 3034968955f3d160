#include "ui/drilldown/sequence_view.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/drilldown/metric_legend.h"
#include "ui/drilldown/token_strip.h"
#include "ui/drilldown/token_table_model.h"
#include "ui/drilldown/topk_model.h"
#include "ui/session/background.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {
QTableView* makeTable(QWidget* parent) {
    auto* t = new QTableView(parent);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setAlternatingRowColors(true);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}
}  // namespace

SequenceView::SequenceView(QWidget* parent)
    : QWidget(parent),
      header_(new QLabel(this)),
      legend_(new MetricLegend(this)),
      strip_(new TokenStrip),
      stripArea_(new QScrollArea(this)),
      tokens_(new TokenTableModel(this)),
      sorted_(new QSortFilterProxyModel(this)),
      tokenTable_(makeTable(this)),
      topkTitle_(new QLabel(this)),
      topk_(new TopKCompareModel(this)),
      topkTable_(makeTable(this)) {
    header_->setTextFormat(Qt::RichText);
    header_->setWordWrap(true);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    stripArea_->setWidget(strip_);
    stripArea_->setWidgetResizable(false);
    stripArea_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    stripArea_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    stripArea_->setFixedHeight(strip_->sizeHint().height() + stripArea_->horizontalScrollBar()->sizeHint().height() + 4);

    sorted_->setSourceModel(tokens_);
    sorted_->setSortRole(TokenTableModel::SortRole);
    tokenTable_->setModel(sorted_);
    tokenTable_->setSortingEnabled(true);
    // Column widths from the first 200 rows: measuring 1,000 (Qt's default) cost 20 ms of
    // the GUI thread every time a run loaded or the metric changed.
    tokenTable_->horizontalHeader()->setResizeContentsPrecision(200);
    tokenTable_->sortByColumn(TokenTableModel::Position, Qt::AscendingOrder);
    topkTable_->setModel(topk_);
    topkTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    topkTable_->horizontalHeader()->setSectionResizeMode(TopKCompareModel::Text, QHeaderView::Stretch);
    topkTable_->horizontalHeader()->setStretchLastSection(false);

    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(topkTitle_);
    rightLayout->addWidget(topkTable_);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(tokenTable_);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(header_);
    layout->addWidget(legend_);
    layout->addWidget(stripArea_);
    layout->addWidget(split, 1);

    connect(strip_, &TokenStrip::tokenClicked, this, [this](int pos) { setSelection(pos, false); });
    connect(tokenTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    setSelection(sorted_->mapToSource(current).row(), true);
            });
    setSequence(nullptr, 0);
}

SequenceView::~SequenceView() = default;

QString SequenceView::headerText() const { return header_->text(); }

void SequenceView::setSequence(std::shared_ptr<const Run> run, size_t seq) {
    const bool newRun = run != run_;
    run_ = std::move(run);
    seq_ = seq;
    selected_ = -1;
    const bool ok = run_ && seq < run_->sequenceCount();
    header_->setText(ok ? sequenceSummary(*run_, seq) : tr("No sequence"));
    header_->setToolTip(ok && seq < run_->runtime.size() ? QString::fromStdString(run_->runtime[seq].dump(2)) : QString());
    tokens_->setSequence(ok ? run_ : nullptr, seq);
    topk_->clear();
    topkTitle_->setText(tr("Top-k of both kernels: select a token"));
    if (newRun) {
        vocab_.reset();
        topk_->setVocab(nullptr);
        loadVocab();
    }
    refreshColours();
}

void SequenceView::loadVocab() {
    if (!run_ || !run_->hasText() || !run_->hasTopK())
        return;
    auto run = run_;
    QtConcurrent::run(workPool(), [run] {
        lowerThreadPriority();
        return std::make_shared<const TokenVocab>(run);
    })
        .then(this, [this, run](std::shared_ptr<const TokenVocab> vocab) {
            if (run != run_)
                return;   // the run changed meanwhile
            vocab_ = std::move(vocab);
            topk_->setVocab(vocab_);
        });
}

void SequenceView::setMetric(std::shared_ptr<const MetricValues> metric) {
    metric_ = std::move(metric);
    refreshColours();
}

void SequenceView::refreshColours() {
    const bool ok = run_ && seq_ < run_->sequenceCount();
    const size_t begin = ok ? run_->seqBegin(seq_) : 0, end = ok ? run_->seqEnd(seq_) : 0;
    const bool perToken = ok && metric_ && metric_->level == MetricLevel::Token &&
                          metric_->values.size() == run_->tokenCount();
    const MetricColours colours(perToken ? metric_.get() : nullptr, begin, end);
    QStringList texts;
    std::vector<double> values;
    int missing = 0, nonFinite = 0;
    for (size_t i = begin; i < end; ++i) {
        texts << (run_->hasText() ? escapeTokenText(run_->tokenText(i)) : QStringLiteral("#%1").arg(run_->tokens[i]));
        const double v = perToken ? metric_->values[i] : missingDouble();
        values.push_back(v);
        missing += valueKind(v) == ValueKind::Missing;
        nonFinite += valueKind(v) == ValueKind::NonFinite;
    }
    QString name;
    if (metric_)
        name = perToken ? QString::fromStdString(metric_->name)
                        : tr("%1 (not a per-token metric)").arg(QString::fromStdString(metric_->name));
    legend_->setLegend(name, colours, missing, nonFinite);
    const int keep = selected_;
    strip_->setTokens(texts, std::move(values), colours, perToken);
    strip_->setSelected(keep);
    tokens_->setMetric(perToken ? metric_ : nullptr, colours);
    tokenTable_->resizeColumnsToContents();   // measures at most 200 rows (see the constructor)
}

void SequenceView::selectToken(size_t position) {
    const bool ok = run_ && seq_ < run_->sequenceCount() && position < run_->seqLength(seq_);
    setSelection(ok ? int(position) : -1, false);
}

void SequenceView::setSelection(int position, bool fromTable) {
    if (position == selected_)
        return;
    selected_ = position;
    strip_->setSelected(position);
    if (position < 0) {
        topk_->clear();
        tokenTable_->clearSelection();
        return;
    }
    stripArea_->ensureVisible(strip_->tokenRect(position).center().x(), 0, 60, 0);
    if (!fromTable) {
        const QModelIndex index = sorted_->mapFromSource(tokens_->index(position, 0));
        tokenTable_->selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        tokenTable_->scrollTo(index);
    }
    const size_t flat = run_->seqBegin(seq_) + size_t(position);
    topk_->setToken(run_, flat);
    if (!run_->topkTrain.present() && !run_->topkInf.present())
        topkTitle_->setText(tr("No top-k lists in this run"));
    else
        topkTitle_->setText(tr("Top-k at t = %1 (bold: the sampled token; blank: not in that kernel's list)")
                                .arg(position));
    emit tokenSelected(flat);
}

}  // namespace kcx::ui
