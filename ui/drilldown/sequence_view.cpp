// The sequence view's data and selection; its layout, remembered sizes and scrolling are
// in sequence_view_layout.cpp.
#include "ui/drilldown/sequence_view.h"

#include <QAction>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "ui/drilldown/metric_legend.h"
#include "ui/drilldown/runtime_table.h"
#include "ui/drilldown/token_context.h"
#include "ui/drilldown/token_strip.h"
#include "ui/drilldown/token_table_model.h"
#include "ui/drilldown/topk_model.h"
#include "ui/session/background.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {

// Rows of TopKCompareModel at a token: the ids of both lists, each once.
int drillTopKUnion(const Run& run, size_t token, std::vector<int32_t>& ids) {
    ids.clear();
    for (const TopK* t : {&run.topkTrain, &run.topkInf}) {
        if (!t->present())
            continue;
        const size_t base = token * size_t(t->k);
        for (int r = 0; r < t->k; ++r) {
            const int32_t id = t->ids[base + size_t(r)];
            if (id >= 0 && !isMissing(t->logp[base + size_t(r)]))
                ids.push_back(id);
        }
    }
    std::sort(ids.begin(), ids.end());
    return int(std::unique(ids.begin(), ids.end()) - ids.begin());
}

}  // namespace

SequenceView::SequenceView(QWidget* parent) : QWidget(parent) {
    buildLayout();
    connect(strip_, &TokenStrip::tokenClicked, this, [this](int pos) {
        revealPending_ = false;   // the user clicked it: it is in view
        setSelection(pos, false);
    });
    connect(tokenTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    setSelection(sorted_->mapToSource(current).row(), true);
            });
    connect(nextAct_, &QAction::triggered, this, &SequenceView::selectNextWorst);
    connect(prevAct_, &QAction::triggered, this, &SequenceView::selectPreviousWorst);
    restoreLayout();
    setSequence(nullptr, 0);
}

SequenceView::~SequenceView() {
    if (layoutDirty_)
        saveLayout();
}

QString SequenceView::headerText() const { return header_->text(); }
QString SequenceView::rankText() const { return rank_->text(); }

void SequenceView::setSequenceWhenShown(std::shared_ptr<const Run> run, size_t seq) {
    if (isVisible()) {
        setSequence(std::move(run), seq);
        return;
    }
    pendingRun_ = std::move(run);
    pendingSeq_ = seq;
}

void SequenceView::setSequence(std::shared_ptr<const Run> run, size_t seq) {
    pendingRun_.reset();
    const bool newRun = run != run_;
    run_ = std::move(run);
    seq_ = seq;
    selected_ = -1;
    revealPending_ = false;
    const bool ok = run_ && seq < run_->sequenceCount();
    header_->setText(ok ? sequenceSummary(*run_, seq) : tr("No sequence"));
    worst_ = ok ? WorstTokens(*run_, seq) : WorstTokens();
    maxTopKRows_ = 0;
    std::vector<int32_t> scratch;
    if (ok)
        for (size_t i = run_->seqBegin(seq); i < run_->seqEnd(seq); ++i)
            maxTopKRows_ = std::max(maxTopKRows_, drillTopKUnion(*run_, i, scratch));
    runtime_->setRecord(ok && seq < run_->runtime.size() ? &run_->runtime[seq] : nullptr);
    tokens_->setSequence(ok ? run_ : nullptr, seq);
    topk_->clear();
    topkTitle_->setText(tr("Top-k of both kernels: select a token"));
    context_->showMessage(ok ? tr("Select a token to read it in its context.") : QString());
    if (newRun) {
        vocab_.reset();
        topk_->setVocab(nullptr);
        loadVocab();
    }
    refreshColours();
    updateNavigation();
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
    tokenTable_->resizeColumnsToContents();   // measures at most 200 rows (see buildLayout)
    const int textCap = fontMetrics().averageCharWidth() * 18;   // long texts are elided; the tooltip has them
    if (tokenTable_->columnWidth(TokenTableModel::Text) > textCap)
        tokenTable_->setColumnWidth(TokenTableModel::Text, textCap);
    applyAutoSizes();
    if (revealPending_)
        revealSelection();   // the strip was laid out again, and the table may have re-sorted
}

void SequenceView::selectToken(size_t position) {
    const bool ok = run_ && seq_ < run_->sequenceCount() && position < run_->seqLength(seq_);
    revealPending_ = ok;
    setSelection(ok ? int(position) : -1, false);
    revealSelection();
}

void SequenceView::selectNextWorst() {
    const int to = worst_.next(selected_);
    if (to >= 0)
        selectToken(size_t(to));
}

void SequenceView::selectPreviousWorst() {
    const int to = worst_.previous(selected_);
    if (to >= 0)
        selectToken(size_t(to));
}

void SequenceView::setSelection(int position, bool fromTable) {
    if (position == selected_)
        return;
    selected_ = position;
    strip_->setSelected(position);
    updateNavigation();
    if (position < 0) {
        topk_->clear();
        tokenTable_->clearSelection();
        context_->showMessage(run_ ? tr("Select a token to read it in its context.") : QString());
        return;
    }
    if (!fromTable) {
        const QModelIndex index = sorted_->mapFromSource(tokens_->index(position, 0));
        tokenTable_->selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
    if (!revealPending_)   // a click: keep the strip and the table in step, minimal scrolling
        revealSelection();
    const size_t flat = run_->seqBegin(seq_) + size_t(position);
    topk_->setToken(run_, flat);
    context_->showToken(*run_, seq_, size_t(position));
    if (!run_->topkTrain.present() && !run_->topkInf.present())
        topkTitle_->setText(tr("No top-k lists in this run"));
    else
        topkTitle_->setText(tr("Top-k of both kernels at t = %1 (bold: sampled)").arg(position));
    emit tokenSelected(flat);
}

void SequenceView::updateNavigation() {
    const int n = worst_.count();
    const int rank = worst_.rankOf(selected_);
    nextButton_->setEnabled(worst_.next(selected_) >= 0);
    prevButton_->setEnabled(worst_.previous(selected_) >= 0);
    nextAct_->setEnabled(nextButton_->isEnabled());
    prevAct_->setEnabled(prevButton_->isEnabled());
    if (!run_ || seq_ >= run_->sequenceCount())
        rank_->clear();
    else if (selected_ < 0)
        rank_->setText(n > 0 ? tr("%n token(s) ranked by |log ratio|", nullptr, n) : tr("no token has a log ratio"));
    else if (rank < 0)
        rank_->setText(tr("t = %1 has no log ratio").arg(selected_));
    else
        rank_->setText(tr("|log ratio| rank %1 of %2").arg(rank + 1).arg(n));
}

}  // namespace kcx::ui
