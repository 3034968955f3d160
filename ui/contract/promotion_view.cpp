#include "ui/contract/promotion_view.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "ui/contract/promotion_model.h"
#include "ui/session/session.h"
#include "ui/style/action_style.h"
#include "ui/style/cached_size_delegate.h"

namespace kcx::ui {

struct PromotionView::Box {
    std::string stage;
    QFrame* frame = nullptr;
    QLabel* title = nullptr;
    QLabel* action = nullptr;
    QLabel* summary = nullptr;
    QTableView* table = nullptr;
    StageResultsModel* model = nullptr;
    QLabel* arrow = nullptr;   // before the box (none before the first)
    bool current = false;
};

PromotionView::PromotionView(QWidget* parent)
    : QWidget(parent), row_(new QHBoxLayout), caption_(new QLabel(this)) {
    caption_->setWordWrap(true);
    caption_->setText(tr("Each stage takes the strongest action of the results' escalation rules at that stage "
                         "(SPEC 4.1). Bold: the results that set it. Click a result to show its clause."));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    // The stages side by side, each as wide as its results need (nothing in them is cut);
    // a window too narrow for all of them scrolls sideways.
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* strip = new QWidget(scroll);
    strip->setLayout(row_);
    row_->setContentsMargins(0, 0, 0, 0);
    scroll->setWidget(strip);
    layout->addWidget(scroll, 1);
    setEvaluation(nullptr, nullptr);
}

PromotionView::~PromotionView() = default;

void PromotionView::setSession(Session* session) {
    // Queued: the promotion cards are built in an event of their own, after the results
    // table (one long event kept the window from answering, issue 17); the newest result.
    connect(
        session, &Session::evaluated, this,
        [this, session] {
            setEvaluation(session->latest().contract, session->latest().evaluation);
        },
        Qt::QueuedConnection);
    if (session->latest().evaluation)
        setEvaluation(session->latest().contract, session->latest().evaluation);
}

void PromotionView::setEvaluation(std::shared_ptr<const Contract> contract, std::shared_ptr<const Evaluation> evaluation) {
    contract_ = std::move(contract);
    evaluation_ = std::move(evaluation);
    rebuildBoxes(contract_ ? contract_->stages : Contract{}.stages);
    for (auto& box : boxes_) {
        box->model->setStage(contract_, evaluation_, box->stage);
        updateBox(*box, evaluation_ && box->stage == evaluation_->stage);
    }
}

void PromotionView::rebuildBoxes(const std::vector<std::string>& stages) {
    bool same = stages.size() == boxes_.size();
    for (size_t i = 0; same && i < stages.size(); ++i)
        same = boxes_[i]->stage == stages[i];
    if (same)
        return;
    for (auto& box : boxes_) {
        delete box->arrow;
        delete box->frame;
    }
    boxes_.clear();
    for (const std::string& stage : stages) {
        auto box = std::make_unique<Box>();
        box->stage = stage;
        if (!boxes_.empty()) {
            box->arrow = new QLabel(QStringLiteral("\u2192"), this);
            QFont f = box->arrow->font();
            f.setPointSizeF(f.pointSizeF() * 2);
            box->arrow->setFont(f);
            row_->addWidget(box->arrow);
        }
        box->frame = new QFrame(this);
        box->frame->setObjectName(QStringLiteral("stageBox"));
        box->title = new QLabel(box->frame);
        box->action = new QLabel(box->frame);
        box->action->setAlignment(Qt::AlignCenter);
        box->summary = new QLabel(box->frame);
        box->model = new StageResultsModel(box->frame);
        box->table = new QTableView(box->frame);
        box->table->setModel(box->model);
        box->table->setItemDelegate(new CachedSizeDelegate(box->table));
        box->table->setSelectionBehavior(QAbstractItemView::SelectRows);
        box->table->setSelectionMode(QAbstractItemView::SingleSelection);
        box->table->setEditTriggers(QAbstractItemView::NoEditTriggers);
        box->table->verticalHeader()->hide();
        QHeaderView* header = box->table->horizontalHeader();
        header->setSectionResizeMode(QHeaderView::ResizeToContents);
        header->setStretchLastSection(true);
        box->table->verticalHeader()->setDefaultSectionSize(box->table->fontMetrics().height() + 6);
        box->table->setTextElideMode(Qt::ElideRight);
        box->table->setWordWrap(false);
        auto* inner = new QVBoxLayout(box->frame);
        inner->addWidget(box->title);
        inner->addWidget(box->action);
        inner->addWidget(box->summary);
        inner->addWidget(box->table, 1);
        row_->addWidget(box->frame, 1);
        const QTableView* table = box->table;
        auto emitClause = [this](const QModelIndex& index) {
            emit clauseActivated(index.data(StageResultsModel::ClauseRole).toString());
        };
        connect(table, &QAbstractItemView::activated, this, emitClause);
        connect(table, &QAbstractItemView::clicked, this, [table, emitClause](const QModelIndex& index) {
            if (!table->style()->styleHint(QStyle::SH_ItemView_ActivateItemOnSingleClick, nullptr, table))
                emitClause(index);   // else `activated` has fired already
        });
        boxes_.push_back(std::move(box));
    }
}

namespace {

// Setting a style sheet re-polishes the widget, even with the same text: an edit that
// changes nothing here must cost nothing.
void setStyleSheetIfChanged(QWidget* w, const QString& sheet) {
    if (w->styleSheet() != sheet)
        w->setStyleSheet(sheet);
}

}  // namespace

void PromotionView::updateBox(Box& box, bool current) {
    box.current = current;
    const QString name = QString::fromStdString(box.stage);
    box.title->setText(current ? tr("<b>%1</b> &nbsp;(current stage)").arg(name.toHtmlEscaped())
                               : tr("<b>%1</b>").arg(name.toHtmlEscaped()));
    const QColor highlight = palette().color(QPalette::Highlight);
    setStyleSheetIfChanged(box.frame, QStringLiteral("QFrame#stageBox { border: %1px solid %2; border-radius: 6px; }")
                                 .arg(current ? 3 : 1)
                                 .arg(current ? highlight.name() : palette().color(QPalette::Mid).name()));
    if (!evaluation_) {
        box.action->setText(tr("no evaluation"));
        setStyleSheetIfChanged(box.action, {});
        box.summary->clear();
        return;
    }
    const auto it = evaluation_->stageActions.find(box.stage);
    const Action action = it == evaluation_->stageActions.end() ? Action::Pass : it->second;
    const QColor bg = actionColour(action);
    box.action->setText(actionLabel(action));
    setStyleSheetIfChanged(box.action, QStringLiteral("QLabel { background: %1; color: %2; font-weight: bold; padding: 6px; "
                                             "border-radius: 4px; }")
                                  .arg(bg.name(), textColourOn(bg).name()));
    const int n = box.model->rowCount();
    // As wide as its columns: the status and the action are never cut.
    int wide = 2 * box.table->frameWidth() + box.table->verticalScrollBar()->sizeHint().width() + 4;
    box.table->resizeColumnsToContents();
    for (int c = 0; c < box.model->columnCount(); ++c)
        wide += box.table->columnWidth(c);
    box.table->setMinimumWidth(wide);
    box.summary->setText(n == 0 ? tr("no result escalates here") : tr("%n result(s) escalate here", nullptr, n));
}

QString PromotionView::stageName(int i) const { return QString::fromStdString(boxes_.at(size_t(i))->stage); }
StageResultsModel* PromotionView::stageModel(int i) const { return boxes_.at(size_t(i))->model; }
QTableView* PromotionView::stageTable(int i) const { return boxes_.at(size_t(i))->table; }
QString PromotionView::stageActionText(int i) const { return boxes_.at(size_t(i))->action->text(); }
bool PromotionView::isCurrentStage(int i) const { return boxes_.at(size_t(i))->current; }

}  // namespace kcx::ui
