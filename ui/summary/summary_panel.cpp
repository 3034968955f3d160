#include "ui/summary/summary_panel.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPointer>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>
#include <functional>

#include "core/contract/contract.h"
#include "core/metrics/metrics.h"
#include "ui/heatmap/summary_grid_paint.h"
#include "ui/session/background.h"
#include "ui/session/session.h"
#include "ui/style/chart_style.h"
#include "ui/style/status_style.h"
#include "ui/style/step_chart.h"

namespace kcx::ui {

// The grid itself: paints it, says what is under the mouse, selects with the mouse and
// the arrow keys. Its height grows with the rows (the page scrolls).
class SummaryGridView : public QWidget {
public:
    explicit SummaryGridView(QWidget* parent) : QWidget(parent) {
        setFocusPolicy(Qt::StrongFocus);
        setMouseTracking(true);
        setMinimumHeight(120);
        setAccessibleName(tr("Summary heatmap"));
    }
    void setGrid(std::shared_ptr<const SummaryGrid> g) {
        grid_ = std::move(g);
        if (grid_ && (size_t(row_) >= grid_->rowCount() || size_t(col_) >= grid_->columnCount()))
            row_ = col_ = 0;
        // Every row its own strip of pixels: the page scrolls when they are many.
        const size_t rows = grid_ ? grid_->rowCount() : 4;
        setMinimumHeight(fontMetrics().height() + 14 + int(rows) * summaryRowPixels(rows));
        updateGeometry();
        update();
    }
    void setStyle(const SummaryGridStyle& s) {
        style_ = s;
        update();
    }
    void select(int r, int c) {
        if (!grid_ || r < 0 || c < 0 || size_t(r) >= grid_->rowCount() || size_t(c) >= grid_->columnCount())
            return;
        row_ = r;
        col_ = c;
        update();
        if (onSelect)
            onSelect(r, c);
    }
    std::pair<int, int> selected() const { return {row_, col_}; }
    QSize sizeHint() const override {
        const size_t rows = grid_ ? grid_->rowCount() : 4;
        return {600, int(rows) * summaryRowPixels(rows) + fontMetrics().height() + 14};
    }
    std::function<void(int, int)> onSelect;

protected:
    SummaryGridLayout layoutNow() const { return summaryGridLayout(*grid_, rect().adjusted(4, 2, -4, -2), font()); }
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        if (!grid_) {
            p.drawText(rect(), Qt::AlignCenter, tr("Computing…"));
            return;
        }
        SummaryGridStyle s = style_;
        s.selectedRow = row_;
        s.selectedColumn = col_;
        paintSummaryGrid(p, *grid_, layoutNow(), s, font());
    }
    void mousePressEvent(QMouseEvent* e) override {
        if (!grid_)
            return;
        const auto [r, c] = layoutNow().cellAt(e->position().toPoint(), *grid_);
        if (r >= 0)
            select(r, c);
    }
    void mouseMoveEvent(QMouseEvent* e) override {
        if (!grid_)
            return;
        const auto [r, c] = layoutNow().cellAt(e->position().toPoint(), *grid_);
        if (r < 0) {
            QToolTip::hideText();
            return;
        }
        const double v = grid_->value(size_t(r), size_t(c));
        const QString text = tr("%1 · %2\n%3: %4\n%5 values")
                                 .arg(QString::fromStdString(grid_->rows[size_t(r)]),
                                      QString::fromStdString(grid_->columns[size_t(c)]),
                                      QString::fromStdString(cellStatName(grid_->stat)),
                                      std::isnan(v) ? tr("no value") : numberText(v),
                                      countText(grid_->counts[size_t(r) * grid_->columnCount() + size_t(c)]));
        QToolTip::showText(e->globalPosition().toPoint(), text, this);
    }
    void keyPressEvent(QKeyEvent* e) override {
        int r = row_, c = col_;
        switch (e->key()) {
        case Qt::Key_Up: --r; break;
        case Qt::Key_Down: ++r; break;
        case Qt::Key_Left: --c; break;
        case Qt::Key_Right: ++c; break;
        default: QWidget::keyPressEvent(e); return;
        }
        select(r, c);
    }

private:
    std::shared_ptr<const SummaryGrid> grid_;
    SummaryGridStyle style_;
    int row_ = 0, col_ = 0;
};

namespace {

QTableWidgetItem* item(const QString& text, bool number = false) {
    auto* it = new QTableWidgetItem(text);
    it->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    if (number)
        it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
}

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
    auto* t = new QTableWidget(0, int(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    return t;
}

}  // namespace

SummaryPanel::SummaryPanel(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
    setObjectName(QStringLiteral("summaryPanel"));
    // The page shares the heatmap's side of the window: it must never widen that side
    // beyond what the run's page needs (the results table keeps its room at 1,024 px).
    setMinimumWidth(320);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    auto addBox = [&](const QString& label, QComboBox* box) {
        // Narrow when the window is: the page shares the heatmap's side of the window and
        // must not widen it (the results table keeps its room at 1,024 px).
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(6);
        auto* l = new QLabel(label, this);
        l->setBuddy(box);
        bar->addWidget(l);
        bar->addWidget(box);
    };
    metricBox_ = new QComboBox(this);
    statBox_ = new QComboBox(this);
    rowsBox_ = new QComboBox(this);
    stepBox_ = new QComboBox(this);
    statBox_->addItem(tr("mean"), QStringLiteral("mean"));
    statBox_->addItem(tr("p99 (sketch)"), QStringLiteral("0.99"));
    statBox_->addItem(tr("p99.9 (sketch)"), QStringLiteral("0.999"));
    statBox_->addItem(tr("median (sketch)"), QStringLiteral("0.5"));
    statBox_->addItem(tr("max"), QStringLiteral("max"));
    statBox_->addItem(tr("count"), QStringLiteral("count"));
    addBox(tr("&Metric"), metricBox_);
    addBox(tr("S&tatistic"), statBox_);
    addBox(tr("&Rows"), rowsBox_);
    addBox(tr("St&ep"), stepBox_);
    bar->addStretch(1);
    layout->addLayout(bar);
    caption_ = new QLabel(this);
    caption_->setWordWrap(true);
    caption_->setTextFormat(Qt::PlainText);
    layout->addWidget(caption_);

    auto* split = new QSplitter(Qt::Vertical, this);
    auto* scroll = new QScrollArea(split);
    scroll->setWidgetResizable(true);
    view_ = new SummaryGridView(scroll);
    scroll->setWidget(view_);
    tabs_ = new QTabWidget(split);
    tabs_->setDocumentMode(true);
    chart_ = new QChart;
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chartView_ = new QChartView(chart_, tabs_);
    setUpChartView(chartView_);
    tabs_->addTab(chartView_, tr("&Over steps"));
    auto* worstPage = new QWidget(tabs_);
    auto* wl = new QVBoxLayout(worstPage);
    wl->setContentsMargins(0, 0, 0, 0);
    worstLabel_ = new QLabel(worstPage);
    worstLabel_->setWordWrap(true);
    worstLabel_->setTextFormat(Qt::PlainText);
    worstLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    worstTable_ = makeTable({tr("value"), tr("sequence id"), tr("position"), tr("step")}, worstPage);
    wl->addWidget(worstLabel_);
    wl->addWidget(worstTable_, 1);
    tabs_->addTab(worstPage, tr("&Worst tokens"));
    inputs_ = makeTable({tr("input"), tr("sequences"), tr("tokens"), tr("sha256")}, tabs_);
    tabs_->addTab(inputs_, tr("&Inputs"));
    split->addWidget(scroll);
    split->addWidget(tabs_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    view_->onSelect = [this](int, int) { showCell(); };
    for (QComboBox* box : {metricBox_, statBox_, rowsBox_, stepBox_})
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            if (!filling_)
                refreshGrid();
        });
    connect(session_, &Session::summaryLoaded, this, &SummaryPanel::summaryLoaded);
    connect(session_, &Session::thresholdChanged, this, &SummaryPanel::updateLimit);
    connect(session_, &Session::contractChanged, this, &SummaryPanel::updateLimit);
    if (session_->summary())
        summaryLoaded();
}

void SummaryPanel::summaryLoaded() {
    summary_ = session_->summary();
    if (!summary_)
        return;
    filling_ = true;
    const QString metric = metricBox_->currentText();
    metricBox_->clear();
    const SummaryOutline& outline = session_->summaryOutline();
    for (const std::string& m : outline.metrics)
        metricBox_->addItem(QString::fromStdString(m));
    if (const int i = metricBox_->findText(metric); i >= 0)
        metricBox_->setCurrentIndex(i);
    else if (const int a = metricBox_->findText(QStringLiteral("abs_log_ratio")); a >= 0)
        metricBox_->setCurrentIndex(a);
    rowsBox_->clear();
    rowsBox_->addItem(tr("(all tokens)"), QString());
    for (const std::string& k : outline.rowKeys)
        rowsBox_->addItem(QString::fromStdString(k), QString::fromStdString(k));
    // Steps as rows when there are several: the first question is when it grew.
    rowsBox_->setCurrentIndex(rowsBox_->count() > 1 ? 1 : 0);
    stepBox_->clear();
    stepBox_->addItem(tr("all steps"), QVariant());
    for (int64_t s : outline.steps)
        if (s >= 0)
            stepBox_->addItem(QString::number(s), QVariant::fromValue<qlonglong>(s));
    filling_ = false;
    fillInputs();
    updateLimit();
    refreshGrid();
}

void SummaryPanel::fillInputs() {
    inputs_->setRowCount(0);
    if (!summary_)
        return;
    for (const SummaryInput& in : summary_->inputs) {
        const int r = inputs_->rowCount();
        inputs_->insertRow(r);
        inputs_->setItem(r, 0, item(QString::fromStdString(in.path)));
        inputs_->setItem(r, 1, item(countText(in.sequences), true));
        inputs_->setItem(r, 2, item(countText(in.tokens), true));
        inputs_->setItem(r, 3, item(QString::fromStdString(in.sha256)));
    }
    inputs_->resizeColumnsToContents();
}

CellStatSpec SummaryPanel::statistic() const {
    const QString s = statBox_->currentData().toString();
    CellStatSpec spec;
    if (s == QLatin1String("mean"))
        spec.stat = CellStat::Mean;
    else if (s == QLatin1String("max"))
        spec.stat = CellStat::Max;
    else if (s == QLatin1String("count"))
        spec.stat = CellStat::Count;
    else {
        spec.stat = CellStat::Quantile;
        spec.q = s.toDouble();
    }
    return spec;
}

QString SummaryPanel::metric() const { return metricBox_->currentText(); }
QString SummaryPanel::rowKey() const { return rowsBox_->currentData().toString(); }
const SummaryGrid* SummaryPanel::grid() const { return grid_.get(); }
std::pair<int, int> SummaryPanel::selectedCell() const { return view_->selected(); }
bool SummaryPanel::isDrawn() const { return summary_ && grid_ && drawnGeneration_ == generation_; }

void SummaryPanel::setMetric(const QString& metric) {
    if (const int i = metricBox_->findText(metric); i >= 0)
        metricBox_->setCurrentIndex(i);
}

void SummaryPanel::setRowKey(const QString& key) {
    if (const int i = rowsBox_->findData(key); i >= 0)
        rowsBox_->setCurrentIndex(i);
}

void SummaryPanel::setStatistic(const CellStatSpec& stat) {
    QString data = stat.stat == CellStat::Mean ? QStringLiteral("mean")
                   : stat.stat == CellStat::Max ? QStringLiteral("max")
                   : stat.stat == CellStat::Count ? QStringLiteral("count")
                                                  : QString::number(stat.q, 'g', 10);
    int i = statBox_->findData(data);
    if (i < 0 && stat.stat == CellStat::Quantile) {
        statBox_->addItem(tr("p%1 (sketch)").arg(QString::number(stat.q * 100, 'g', 8)), data);
        i = statBox_->count() - 1;
    }
    if (i >= 0)
        statBox_->setCurrentIndex(i);
}

void SummaryPanel::setStep(std::optional<int64_t> step) {
    const int i = step ? stepBox_->findData(QVariant::fromValue<qlonglong>(*step)) : 0;
    if (i >= 0)
        stepBox_->setCurrentIndex(i);
}

void SummaryPanel::selectCell(int row, int column) { view_->select(row, column); }

void SummaryPanel::setClause(const Clause* c, const std::map<std::string, std::string>& slice) {
    clause_ = c ? c->id : std::string();
    wantRow_.clear();
    if (c && !c->perSlice.empty())
        if (auto it = slice.find(c->perSlice); it != slice.end())
            wantRow_ = it->second;
    if (c && summary_ && (c->family == Family::Numerical || c->family == Family::Statistical)) {
        filling_ = true;
        setMetric(QString::fromStdString(c->metric));
        if (!c->perSlice.empty())
            setRowKey(QString::fromStdString(c->perSlice));
        CellStatSpec stat;
        if (c->family == Family::Numerical && c->aggregate) {
            switch (c->aggregate->kind) {
            case Aggregate::Kind::Max: stat.stat = CellStat::Max; break;
            case Aggregate::Kind::Quantile: stat = {CellStat::Quantile, c->aggregate->q}; break;
            default: stat.stat = CellStat::Mean; break;
            }
        }
        setStatistic(stat);
        filling_ = false;
    }
    updateLimit();
    refreshGrid();
}

// The selected clause's limit, as it is now (dragged thresholds included), marks the
// cells beyond it and draws the line over steps, when the page shows the clause's own
// statistic of its metric.
void SummaryPanel::updateLimit() {
    limitMax_.reset();
    limitMin_.reset();
    const auto contract = session_->contract();
    const Clause* c = contract && !clause_.empty() ? contract->find(clause_) : nullptr;
    if (c && c->metric == metricBox_->currentText().toStdString() && c->family == Family::Numerical && c->aggregate) {
        const CellStatSpec s = statistic();
        const auto& a = *c->aggregate;
        const bool same = (a.kind == Aggregate::Kind::Mean && s.stat == CellStat::Mean) ||
                          (a.kind == Aggregate::Kind::Max && s.stat == CellStat::Max) ||
                          (a.kind == Aggregate::Kind::Quantile && s.stat == CellStat::Quantile && a.q == s.q);
        if (same) {
            if (c->max)
                limitMax_ = c->max->value;
            if (c->min)
                limitMin_ = c->min->value;
        }
    } else if (c && c->metric == metricBox_->currentText().toStdString() && c->family == Family::Statistical &&
               c->test == Clause::Test::Mean && statistic().stat == CellStat::Mean) {
        if (c->max)
            limitMax_ = c->max->value;
        if (c->min)
            limitMin_ = c->min->value;
    }
    SummaryGridStyle style;
    style.markAbove = limitMax_;
    style.markBelow = limitMin_;
    view_->setStyle(style);
    showCell();
}

void SummaryPanel::refreshGrid() {
    if (!summary_ || metricBox_->count() == 0)
        return;
    const quint64 gen = ++generation_;
    const std::string metric = metricBox_->currentText().toStdString();
    const std::string key = rowsBox_->currentData().toString().toStdString();
    const CellStatSpec stat = statistic();
    std::optional<int64_t> step;
    if (stepBox_->currentData().isValid())
        step = stepBox_->currentData().toLongLong();
    auto summary = summary_;
    QPointer<SummaryPanel> self(this);
    QtConcurrent::run(workPool(), [summary, metric, key, step, stat] {
        lowerThreadPriority();
        const ForegroundWork foreground;
        return std::make_shared<const SummaryGrid>(summaryGrid(*summary, metric, key, step, stat));
    }).then(this, [this, gen](std::shared_ptr<const SummaryGrid> g) { showGrid(std::move(g), gen); });
}

void SummaryPanel::showGrid(std::shared_ptr<const SummaryGrid> grid, quint64 generation) {
    if (generation != generation_)
        return;
    grid_ = std::move(grid);
    view_->setGrid(grid_);
    if (!wantRow_.empty()) {
        for (size_t r = 1; r < grid_->rowCount(); ++r)
            if (grid_->rows[r] == wantRow_)
                view_->select(int(r), 0);
        wantRow_.clear();
    }
    caption_->setText(summaryGridTitle(*grid_) +
                      tr(" — from the summary's cells: counts, means and maxima exact, quantiles within 1 % "
                         "(sketch). Click a cell for its steps and worst tokens."));
    updateLimit();   // the marks of this statistic, and the cell's series
    drawnGeneration_ = generation;
    emit drawn();
}

QString SummaryPanel::worstNote() const { return worstLabel_->text(); }

void SummaryPanel::showCell() {
    clearChart(chart_);
    const auto [r, c] = view_->selected();
    // A threshold drag redraws the limit only: the cell's series and worst tokens (a merge
    // over every step) are read again only when the grid or the cell changed.
    const bool sameCell = grid_.get() == shownGrid_ && std::pair{r, c} == shownCell_;
    shownGrid_ = grid_.get();
    shownCell_ = {r, c};
    if (!sameCell) {
        steps_.clear();
        worst_.clear();
        worstTable_->setRowCount(0);
    }
    if (!grid_ || !summary_ || grid_->rowCount() == 0)
        return;
    if (r < 0 || size_t(r) >= grid_->rowCount() || size_t(c) >= grid_->columnCount())
        return;
    const SummaryGrid::Place& place = grid_->places[size_t(r) * grid_->columnCount() + size_t(c)];
    const QString where = QStringLiteral("%1 · %2").arg(QString::fromStdString(grid_->rows[size_t(r)]),
                                                         QString::fromStdString(grid_->columns[size_t(c)]));
    // Over steps: the scope of the cell at every step.
    if (!sameCell)
        steps_ = summarySteps(*summary_, grid_->metric, place.key, place.value, place.pos, grid_->stat);
    StepChart spec;
    spec.title = tr("%1 of %2 over steps — %3")
                     .arg(QString::fromStdString(cellStatName(grid_->stat)), QString::fromStdString(grid_->metric), where);
    spec.yTitle = QString::fromStdString(grid_->metric);
    StepLine line;
    line.name = QString::fromStdString(cellStatName(grid_->stat));
    for (const StepPoint& p : steps_) {
        line.x.push_back(double(p.step));
        line.y.push_back(p.value);
        line.lo.push_back(p.lo);
        line.hi.push_back(p.hi);
    }
    spec.lines.push_back(std::move(line));
    for (const auto& limit : {limitMax_, limitMin_})
        if (limit)
            spec.limits.emplace_back(tr("limit %1 (%2)").arg(numberText(*limit), QString::fromStdString(clause_)), *limit);
    drawStepChart(chart_, spec);
    // The worst tokens kept for the cell; the raw tokens are in the inputs, not here.
    if (sameCell)
        return;
    worst_ = summaryWorst(*summary_, grid_->metric, place.key, place.value, place.pos, place.step);
    for (const WorstEntry& w : worst_) {
        const int i = worstTable_->rowCount();
        worstTable_->insertRow(i);
        worstTable_->setItem(i, 0, item(numberText(w.value), true));
        worstTable_->setItem(i, 1, item(QString::fromStdString(w.id)));
        worstTable_->setItem(i, 2, item(w.position >= 0 ? QString::number(w.position) : tr("(sequence)"), true));
        worstTable_->setItem(i, 3, item(w.step >= 0 ? QString::number(w.step) : tr("—"), true));
    }
    worstTable_->resizeColumnsToContents();
    QStringList paths;
    for (const SummaryInput& in : summary_->inputs)
        paths << QString::fromStdString(in.path);
    const int shown = 3;
    QString list = paths.mid(0, shown).join(QStringLiteral(", "));
    if (paths.size() > shown)
        list += tr(" and %1 more (Inputs tab)").arg(paths.size() - shown);
    worstLabel_->setText(
        tr("The %1 worst values of %2 the summary kept for %3. The tokens themselves are not in the summary: "
           "open the run they came from (%4) to see them in the drill-down.")
            .arg(worst_.size())
            .arg(QString::fromStdString(grid_->metric), where, list.isEmpty() ? tr("no input recorded") : list));
}

}  // namespace kcx::ui
