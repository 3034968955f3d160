#include "ui/contract/contract_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include "ui/contract/results_model.h"
#include "ui/contract/threshold_editor.h"
#include "ui/session/session.h"
#include "ui/style/cached_size_delegate.h"

namespace kcx::ui {

ContractPanel::ContractPanel(Session* session, QUndoStack* undo, QWidget* parent)
    : QWidget(parent), session_(session), model_(new ResultsModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* top = new QHBoxLayout;
    header_ = new QLabel(this);
    header_->setWordWrap(true);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    stage_ = new QComboBox(this);
    stage_->setToolTip(tr("The promotion stage whose actions the results show"));
    stage_->setAccessibleName(tr("Stage"));
    top->addWidget(header_, 1);
    top->addWidget(new QLabel(tr("Stage:"), this));
    top->addWidget(stage_);
    layout->addLayout(top);

    auto* split = new QSplitter(Qt::Vertical, this);
    view_ = new QTreeView(split);
    view_->setModel(model_);
    view_->setItemDelegate(new CachedSizeDelegate(view_));   // columns fit their texts; each is shaped once
    view_->setAlternatingRowColors(true);
    view_->setUniformRowHeights(true);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->header()->setStretchLastSection(false);
    view_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // What a reviewer reads first stays in view in a narrow window: Observed, Threshold,
    // Action right after Status; the bound, n and subject follow. Long slice labels and
    // actions are cut (the whole text is in the tooltip), not the numbers.
    view_->header()->moveSection(view_->header()->visualIndex(ResultsModel::BoundCol), ResultsModel::ActionCol);
    view_->header()->setSectionResizeMode(ResultsModel::SliceCol, QHeaderView::Interactive);
    view_->setIndentation(14);
    // A family row ("numerical (5)") spans the whole width, so the Clause column is only
    // as wide as the clause ids.
    auto spanFamilies = [this] {
        for (int r = 0; r < model_->rowCount(); ++r)
            view_->setFirstColumnSpanned(r, QModelIndex(), true);
    };
    connect(model_, &QAbstractItemModel::modelReset, this, spanFamilies);
    connect(model_, &QAbstractItemModel::rowsInserted, this, spanFamilies);
    spanFamilies();
    view_->setAccessibleName(tr("Contract results"));
    editor_ = new ThresholdEditor(session_, undo, split);
    split->addWidget(view_);
    split->addWidget(editor_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        const QString id = model_->data(cur.siblingAtColumn(0), ResultsModel::ClauseIdRole).toString();
        if (id.isEmpty())
            return;
        editor_->setClause(id);
        emit clauseSelected(id);
    });
    connect(stage_, &QComboBox::currentTextChanged, session_, [this](const QString& s) {
        if (!s.isEmpty())
            session_->setStage(s);
    });
    connect(session_, &Session::evaluated, this, &ContractPanel::showEvaluation);
    connect(session_, &Session::contractChanged, this, &ContractPanel::showContract);
    showContract();
}

QString ContractPanel::selectedClause() const { return editor_->clause(); }

const Result* ContractPanel::selectedResult() const {
    const QModelIndex cur = view_->currentIndex();
    return cur.isValid() ? model_->resultAt(cur.siblingAtColumn(0)) : nullptr;
}

void ContractPanel::selectClause(const QString& clauseId) {
    const QModelIndex idx = model_->indexOfClause(clauseId);
    if (idx.isValid()) {
        view_->setCurrentIndex(idx);
        view_->scrollTo(idx);
    }
    editor_->setClause(clauseId);
}

void ContractPanel::showContract() {
    const auto c = session_->contract();
    if (!c) {
        header_->setText(tr("No contract. Open one with File ▸ Open Contract."));
        return;
    }
    // Without a result yet (no run, a run that failed to load, or loading), the clauses
    // are listed unchecked, so that the contract can be read and edited before any run.
    if (!model_->evaluation()) {
        model_->setClausesOnly(*c);
        view_->expandAll();
    }
    const QString file = session_->contractPath().isEmpty() ? tr("built-in") : QFileInfo(session_->contractPath()).fileName();
    header_->setText(tr("<b>%1</b> %2<br><small>%3 · %4</small>")
                         .arg(QString::fromStdString(c->name).toHtmlEscaped(), QString::fromStdString(c->version).toHtmlEscaped(),
                              file.toHtmlEscaped(), QString::fromStdString(c->description).toHtmlEscaped()));
    const QSignalBlocker block(stage_);
    stage_->clear();
    for (const auto& s : c->stages)
        stage_->addItem(QString::fromStdString(s));
    const int at = stage_->findText(session_->stage());
    stage_->setCurrentIndex(at >= 0 ? at : 0);
}

void ContractPanel::showEvaluation(const EvaluationSnapshot& snapshot) {
    const bool first = !model_->evaluation();   // (also after a clauses-only listing)
    model_->setEvaluation(snapshot.evaluation);
    if (first) {
        view_->expandAll();
        for (int c = 0; c < ResultsModel::kColumns; ++c)
            view_->resizeColumnToContents(c);
        view_->setColumnWidth(ResultsModel::SliceCol, std::min(view_->columnWidth(ResultsModel::SliceCol), 100));
        // Start where the trouble is: the first failing result, else the first one.
        QModelIndex first, failing;
        for (int f = 0; f < model_->rowCount() && !failing.isValid(); ++f)
            for (int r = 0; r < model_->rowCount(model_->index(f, 0)); ++r) {
                const QModelIndex i = model_->index(r, 0, model_->index(f, 0));
                if (!first.isValid())
                    first = i;
                if (model_->data(i, ResultsModel::StatusRole).toInt() == int(Status::Fail)) {
                    failing = i;
                    break;
                }
            }
        // Selecting it re-points the heatmap and the charts: as an event of its own, so
        // that the window answers in between (the first evaluation's handlers took 16 ms
        // in one event; beside a busy process that doubles, issue 17).
        const QPersistentModelIndex pick = failing.isValid() ? failing : first;
        if (pick.isValid())
            QMetaObject::invokeMethod(
                this,
                [this, pick] {
                    if (pick.isValid() && !view_->currentIndex().isValid())
                        view_->setCurrentIndex(pick);
                },
                Qt::QueuedConnection);
    }
}

}  // namespace kcx::ui
