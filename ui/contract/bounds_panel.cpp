#include "ui/contract/bounds_panel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "ui/contract/bounds_model.h"
#include "ui/session/session.h"

namespace kcx::ui {

BoundsPanel::BoundsPanel(QWidget* parent)
    : QWidget(parent), model_(new BoundsModel(this)), table_(new QTableView(this)), details_(new QLabel(this)) {
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setWordWrap(true);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setStretchLastSection(true);
    details_->setWordWrap(true);
    details_->setTextFormat(Qt::RichText);
    details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    details_->setMinimumHeight(details_->fontMetrics().height() * 4);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* heading = new QLabel(tr("<b>Bound chain</b> (SPEC 5): from the per-token logit drift ε and log-ratio "
                                  "bound ρ to what they guarantee. Hover a step for its explanation."),
                               this);
    heading->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(heading);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(table_);
    split->addWidget(details_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    layout->addWidget(split, 1);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showDetails(current.row()); });
    connect(model_, &QAbstractItemModel::modelReset, this, [this] {
        table_->resizeColumnsToContents();
        for (int c : {BoundsModel::InputFrom, BoundsModel::Assumption, BoundsModel::ObservedAs})
            table_->setColumnWidth(c, std::min(table_->columnWidth(c), 260));
        table_->resizeRowsToContents();
        showDetails(table_->currentIndex().row());
    });
    setEvaluation(nullptr);
}

void BoundsPanel::setSession(Session* session) {
    connect(session, &Session::evaluated, this,
            [this](const EvaluationSnapshot& snapshot) { setEvaluation(snapshot.evaluation); });
    if (session->latest().evaluation)
        setEvaluation(session->latest().evaluation);
}

void BoundsPanel::setEvaluation(std::shared_ptr<const Evaluation> evaluation) {
    evaluation_ = std::move(evaluation);
    const int row = table_->currentIndex().row();
    model_->setSteps(evaluation_ ? evaluation_->bounds : std::vector<BoundStep>{});
    if (row >= 0 && row < model_->rowCount())   // keep the selected step across threshold edits
        table_->setCurrentIndex(model_->index(row, 0));
}

void BoundsPanel::showDetails(int row) {
    if (row < 0 || row >= model_->rowCount()) {
        details_->setText(evaluation_ ? tr("Select a step to see its statement and assumptions.")
                                      : tr("No evaluation yet: open a run and a contract."));
        return;
    }
    const BoundStep& s = model_->steps()[size_t(row)];
    details_->setText(QStringLiteral("<p><b>%1</b>: %2</p><p>%3</p>")
                          .arg(boundStepName(s.step).toHtmlEscaped(), QString::fromStdString(s.title).toHtmlEscaped(),
                               boundStepHelp(s.step).toHtmlEscaped()));
}

}  // namespace kcx::ui
