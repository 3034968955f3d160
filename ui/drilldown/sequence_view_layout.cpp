// The sequence view's layout: building it, remembering its splitters in QSettings, asking
// the window for room, and scrolling the strip and the table to the selected token.
#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

#include "ui/drilldown/metric_legend.h"
#include "ui/drilldown/runtime_table.h"
#include "ui/drilldown/sequence_view.h"
#include "ui/drilldown/token_context.h"
#include "ui/drilldown/token_strip.h"
#include "ui/drilldown/token_table_model.h"
#include "ui/drilldown/topk_model.h"

namespace kcx::ui {

namespace {

constexpr double kDrillMaxShare = 0.7;   // of the window's splitter that requestRoom() may take
constexpr int kDrillSaveDelayMs = 400;   // a drag saves once, after it stops
constexpr int kDrillStripMargin = 40;    // a token this close to the strip's edge is scrolled in

QTableView* makeDrillTable(QWidget* parent) {
    auto* t = new QTableView(parent);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setAlternatingRowColors(true);
    t->setWordWrap(false);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

QSplitter* makeDrillSplitter(Qt::Orientation o, const char* name, QWidget* parent) {
    auto* s = new QSplitter(o, parent);
    s->setObjectName(QLatin1String(name));
    s->setChildrenCollapsible(false);
    return s;
}

QString drillSettingsKey(const QSplitter* s) { return QStringLiteral("drilldown/") + s->objectName(); }

}  // namespace

void SequenceView::buildLayout() {
    header_ = new QLabel(this);
    header_->setTextFormat(Qt::PlainText);   // ids and slice labels come from the run file
    header_->setWordWrap(true);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    header_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    rank_ = new QLabel(this);
    rank_->setTextFormat(Qt::PlainText);
    rank_->setToolTip(tr("The selected token's place when the sequence's tokens are ranked by |log ratio|, "
                         "largest first (N: next, Shift+N: previous)"));

    nextAct_ = new QAction(tr("Next worst"), this);
    nextAct_->setShortcut(QKeySequence(Qt::Key_N));
    nextAct_->setToolTip(tr("Next worst token (N): the token with the next smaller |log ratio| in this sequence; "
                            "with no token selected, the worst"));
    prevAct_ = new QAction(tr("Previous worst"), this);
    prevAct_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_N));
    prevAct_->setToolTip(tr("Previous worst token (Shift+N): the token with the next larger |log ratio| in this "
                            "sequence"));
    for (QAction* a : {prevAct_, nextAct_}) {
        a->setShortcutContext(Qt::WindowShortcut);   // while the view is shown; text fields keep their keys
        addAction(a);
    }
    // Like a find bar's "3 of 12" with its arrows: up towards the worst, down away from it.
    prevButton_ = new QToolButton(this);
    prevButton_->setDefaultAction(prevAct_);
    prevButton_->setArrowType(Qt::UpArrow);
    nextButton_ = new QToolButton(this);
    nextButton_->setDefaultAction(nextAct_);
    nextButton_->setArrowType(Qt::DownArrow);
    for (QToolButton* b : {prevButton_, nextButton_})
        b->setToolButtonStyle(Qt::ToolButtonIconOnly);

    legend_ = new MetricLegend(this);
    strip_ = new TokenStrip;
    stripArea_ = new QScrollArea(this);
    stripArea_->setWidget(strip_);
    stripArea_->setWidgetResizable(false);
    stripArea_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    stripArea_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    stripArea_->setFixedHeight(strip_->sizeHint().height() + stripArea_->horizontalScrollBar()->sizeHint().height() + 4);

    context_ = new TokenContext(this);
    runtime_ = new RuntimeTable(this);
    tokens_ = new TokenTableModel(this);
    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(tokens_);
    sorted_->setSortRole(TokenTableModel::SortRole);
    tokenTable_ = makeDrillTable(this);
    tokenTable_->setModel(sorted_);
    tokenTable_->setSortingEnabled(true);
    // Column widths from the first 200 rows: measuring 1,000 (Qt's default) cost 20 ms of
    // the GUI thread every time a run loaded or the metric changed.
    tokenTable_->horizontalHeader()->setResizeContentsPrecision(200);
    tokenTable_->sortByColumn(TokenTableModel::Position, Qt::AscendingOrder);
    topkColumn_ = new QWidget(this);
    topkTitle_ = new QLabel(topkColumn_);
    topkTitle_->setTextFormat(Qt::PlainText);
    topkTitle_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    topkTitle_->setToolTip(tr("Both kernels' top-k lists at the selected token, one row per id in either list. "
                              "Bold: the sampled token; blank: not in that kernel's list."));
    topk_ = new TopKCompareModel(this);
    topkTable_ = makeDrillTable(topkColumn_);
    topkTable_->setModel(topk_);
    // The texts keep their width (sizeTopKText); the numbers fit theirs; the ranks, last,
    // are what a narrow window scrolls to.
    topkTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    topkTable_->horizontalHeader()->setSectionResizeMode(TopKCompareModel::Text, QHeaderView::Interactive);
    connect(topk_, &QAbstractItemModel::modelReset, this, &SequenceView::sizeTopKText);
    connect(topk_, &QAbstractItemModel::dataChanged, this, &SequenceView::sizeTopKText);
    auto* topkLayout = new QVBoxLayout(topkColumn_);
    topkLayout->setContentsMargins(0, 0, 0, 0);
    topkLayout->setSpacing(2);
    topkLayout->addWidget(topkTitle_);
    topkLayout->addWidget(topkTable_, 1);

    contextSplit_ = makeDrillSplitter(Qt::Horizontal, "context", this);
    contextSplit_->addWidget(context_);
    contextSplit_->addWidget(runtime_);
    contextSplit_->setStretchFactor(0, 3);
    contextSplit_->setStretchFactor(1, 1);
    tableSplit_ = makeDrillSplitter(Qt::Horizontal, "tables", this);
    tableSplit_->addWidget(tokenTable_);
    tableSplit_->addWidget(topkColumn_);
    tableSplit_->setStretchFactor(0, 1);
    tableSplit_->setStretchFactor(1, 1);
    outer_ = makeDrillSplitter(Qt::Vertical, "outer", this);
    outer_->addWidget(contextSplit_);
    outer_->addWidget(tableSplit_);
    outer_->setStretchFactor(0, 0);   // more height goes to the tables
    outer_->setStretchFactor(1, 1);
    outer_->setSizes({context_->sizeHint().height(), 400});

    auto* legendRow = new QHBoxLayout;
    legendRow->setSpacing(4);
    legendRow->addWidget(legend_, 1);
    legendRow->addWidget(rank_);
    legendRow->addWidget(prevButton_);
    legendRow->addWidget(nextButton_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addWidget(header_);
    layout->addLayout(legendRow);
    layout->addWidget(stripArea_);
    layout->addWidget(outer_, 1);

    saveTimer_ = new QTimer(this);
    saveTimer_->setSingleShot(true);
    saveTimer_->setInterval(kDrillSaveDelayMs);
    connect(saveTimer_, &QTimer::timeout, this, &SequenceView::saveLayout);
    for (QSplitter* s : {outer_, contextSplit_, tableSplit_})
        connect(s, &QSplitter::splitterMoved, this, [this, s] { layoutMoved(s); });
}

void SequenceView::restoreLayout() {
    const QSettings settings;
    for (QSplitter* s : {outer_, contextSplit_, tableSplit_}) {
        const QByteArray state = settings.value(drillSettingsKey(s)).toByteArray();
        if (!state.isEmpty() && s->restoreState(state))
            (s == outer_ ? autoOuter_ : s == contextSplit_ ? autoContext_ : autoTables_) = false;
    }
}

void SequenceView::layoutMoved(QSplitter* splitter) {
    (splitter == outer_ ? autoOuter_ : splitter == contextSplit_ ? autoContext_ : autoTables_) = false;
    layoutDirty_ = true;
    saveTimer_->start();
}

void SequenceView::applyAutoSizes() {
    if (!isVisible())
        return;   // sizes of a hidden view are not its real ones
    if (autoContext_) {   // the runtime record as wide as its text, up to 40%
        const int total = contextSplit_->width() - contextSplit_->handleWidth();
        const int runtime = std::min(runtime_->sizeHint().width(), total * 2 / 5);
        contextSplit_->setSizes({total - runtime, runtime});
    }
    if (autoTables_) {   // the top-k whole if the token table keeps t, text, log ratio and metric
        const QHeaderView* th = tokenTable_->horizontalHeader();
        const int last = TokenTableModel::ColumnCount - 1;
        const int tokenChrome = 2 * tokenTable_->frameWidth() + tokenTable_->verticalScrollBar()->sizeHint().width();
        int tokens = tokenChrome + std::max(static_cast<const QAbstractItemView*>(tokenTable_)->sizeHintForColumn(last),
                                            th->sectionSizeHint(last));
        int essential = tokenChrome;
        for (int c = 0; c < last; ++c) {
            tokens += th->sectionSize(c);
            if (c <= TokenTableModel::Metric)
                essential += th->sectionSize(c);
        }
        const QHeaderView* kh = topkTable_->horizontalHeader();
        int topk = 2 * topkTable_->frameWidth() + topkTable_->verticalScrollBar()->sizeHint().width();
        for (int c = 0; c < TopKCompareModel::ColumnCount; ++c)
            topk += c == TopKCompareModel::Text
                        ? std::max(kh->sectionSize(c), fontMetrics().averageCharWidth() * 10)
                        : std::max(kh->sectionSizeHint(c), static_cast<const QAbstractItemView*>(topkTable_)->sizeHintForColumn(c));
        const int total = tableSplit_->width() - tableSplit_->handleWidth();
        const int left = std::clamp(total - topk, std::min(essential, total / 2), std::max(tokens, total / 2));
        tableSplit_->setSizes({left, total - left});
    }
    if (autoOuter_) {   // the context row as tall as five lines or the runtime rows, the rest to the tables
        const int total = outer_->height() - outer_->handleWidth();
        const int row = std::min(std::max(context_->sizeHint().height(), runtime_->sizeHint().height()), total / 2);
        outer_->setSizes({row, total - row});
    }
}

void SequenceView::saveLayout() {
    saveTimer_->stop();
    layoutDirty_ = false;
    QSettings settings;
    for (QSplitter* s : {outer_, contextSplit_, tableSplit_})
        settings.setValue(drillSettingsKey(s), s->saveState());
}

void SequenceView::requestRoom() {
    wantRoom_ = true;
    if (isVisible())
        QTimer::singleShot(0, this, [this] {
            if (wantRoom_)
                takeRoom();
        });
}

void SequenceView::windowSplitMoved() { userSizedWindow_ = true; }

int SequenceView::topKRowsNeeded() const { return std::max(maxTopKRows_, topk_->rowCount()); }

void SequenceView::takeRoom() {
    wantRoom_ = false;
    if (!isVisible() || userSizedWindow_ || !run_)
        return;
    QWidget* child = this;
    QSplitter* split = nullptr;
    for (QWidget* w = parentWidget(); w && !split; w = w->parentWidget()) {
        auto* s = qobject_cast<QSplitter*>(w);
        if (s && s->orientation() == Qt::Vertical)
            split = s;
        else
            child = w;
    }
    if (!split)
        return;
    if (split != roomSplit_) {
        roomSplit_ = split;
        connect(split, &QSplitter::splitterMoved, this, &SequenceView::windowSplitMoved);
    }
    // What the tables need, from their laid-out parts; each may get a horizontal scroll bar.
    // Growing lays the view out again at once (and the context row may take its share), so
    // measure again until the tables have it or the share is used up.
    const auto chrome = [](const QTableView* t) {
        return t->horizontalHeader()->height() + 2 * t->frameWidth() + t->horizontalScrollBar()->sizeHint().height();
    };
    const int tokenRows = std::min(kComfortableTokenRows, tokens_->rowCount());
    const int i = split->indexOf(child);
    for (int round = 0; round < 3 && i >= 0; ++round) {
        const int tokenNeed = chrome(tokenTable_) + tokenRows * tokenTable_->verticalHeader()->defaultSectionSize();
        const int topkNeed = topkTable_->y() + chrome(topkTable_) +
                             topKRowsNeeded() * topkTable_->verticalHeader()->defaultSectionSize();
        const int deficit = std::max(tokenNeed, topkNeed) - tableSplit_->height();
        QList<int> sizes = split->sizes();
        const int total = std::accumulate(sizes.begin(), sizes.end(), 0);
        const int others = total - sizes[i];
        const int want = std::min(sizes[i] + deficit, int(total * kDrillMaxShare));
        if (deficit <= 0 || want <= sizes[i] || others <= 0)
            break;
        const int give = want - sizes[i];
        int given = 0;
        for (int j = 0; j < sizes.size(); ++j)
            if (j != i) {
                const int d = int(qint64(give) * sizes[j] / others);
                sizes[j] -= d;
                given += d;
            }
        sizes[i] += given;
        split->setSizes(sizes);
    }
    revealSelection();
}

void SequenceView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (pendingRun_)
        setSequence(pendingRun_, pendingSeq_);
    // Scroll bars get their ranges only once the view is laid out and shown: scroll then.
    QTimer::singleShot(0, this, [this] {
        applyAutoSizes();
        if (wantRoom_)
            takeRoom();
        if (revealPending_)
            revealSelection();
    });
}

void SequenceView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    applyAutoSizes();
    if (revealPending_)
        revealSelection();
}

void SequenceView::sizeTopKText() {
    // As wide as the widest text of the lists (at least its header), up to 24 characters:
    // a long text is elided, its tooltip has it whole.
    topkTable_->resizeColumnToContents(TopKCompareModel::Text);
    const int cap = fontMetrics().averageCharWidth() * 24;
    if (topkTable_->columnWidth(TopKCompareModel::Text) > cap)
        topkTable_->setColumnWidth(TopKCompareModel::Text, cap);
}

void SequenceView::revealSelection() {
    if (selected_ < 0 || !run_)
        return;
    const QRect r = strip_->tokenRect(selected_);
    QScrollBar* h = stripArea_->horizontalScrollBar();
    const int width = stripArea_->viewport()->width();
    const int margin = std::min(kDrillStripMargin, width / 4);
    if (r.left() < h->value() + margin || r.right() > h->value() + width - margin)
        h->setValue(r.center().x() - width / 2);   // out of view or at the edge: centre it
    const QModelIndex index = sorted_->mapFromSource(tokens_->index(selected_, 0));
    const QRect row = tokenTable_->visualRect(index);
    if (row.top() < 0 || row.bottom() >= tokenTable_->viewport()->height())
        tokenTable_->scrollTo(index, QAbstractItemView::PositionAtCenter);
    if (isVisible())
        revealPending_ = false;
}

}  // namespace kcx::ui
