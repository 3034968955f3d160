#include "ui/steps/steps_panel.h"

#include <QLabel>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

#include "core/evaluate/clause_scope.h"
#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics.h"
#include "core/steps/replay.h"
#include "core/steps/steps.h"
#include "ui/session/background.h"
#include "ui/session/session.h"
#include "ui/style/action_style.h"
#include "ui/style/chart_style.h"
#include "ui/style/colour_map.h"
#include "ui/style/step_chart.h"

namespace kcx::ui {

// The replay per stage: one row per stage, one cell per step, coloured by its action.
class StepTimeline : public QWidget {
    Q_OBJECT
public:
    explicit StepTimeline(QWidget* parent) : QWidget(parent) {
        setMouseTracking(true);
        setMinimumHeight(4 * kRow + kTop);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    void setReplay(std::shared_ptr<const Replay> r, std::vector<std::string> stages) {
        replay_ = std::move(r);
        stages_ = std::move(stages);
        setFixedHeight(int(std::max<size_t>(stages_.size(), 1)) * kRow + kTop);
        update();
    }
    void setSelected(std::optional<int64_t> step) {
        selected_ = step;
        update();
    }

signals:
    void stepClicked(int64_t step);

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        if (!replay_ || replay_->steps.empty()) {
            p.setPen(palette().color(QPalette::PlaceholderText));
            p.drawText(rect(), Qt::AlignCenter, tr("No replay: the run has no training steps, or no contract is loaded."));
            return;
        }
        const QRect area = cells();
        const size_t n = replay_->steps.size();
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(0, 0, width(), kTop), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("The contract replayed step by step (persist and until applied): the action at each stage"));
        for (size_t r = 0; r < stages_.size(); ++r) {
            const int y = kTop + int(r) * kRow;
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QRect(0, y, kLabel - 4, kRow), Qt::AlignRight | Qt::AlignVCenter, QString::fromStdString(stages_[r]));
            for (size_t j = 0; j < n; ++j) {
                const auto it = replay_->steps[j].actions.find(stages_[r]);
                const Action a = it == replay_->steps[j].actions.end() ? Action::Pass : it->second;
                const int x0 = area.left() + int(double(j) * area.width() / double(n));
                const int x1 = area.left() + int(double(j + 1) * area.width() / double(n));
                p.fillRect(QRect(x0, y + 1, std::max(1, x1 - x0 - (n < 200 ? 1 : 0)), kRow - 2), actionColour(a));
            }
        }
        if (selected_)
            for (size_t j = 0; j < n; ++j)
                if (replay_->steps[j].step == *selected_) {
                    const int x0 = area.left() + int(double(j) * area.width() / double(n));
                    const int x1 = area.left() + int(double(j + 1) * area.width() / double(n));
                    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
                    p.setBrush(Qt::NoBrush);
                    p.drawRect(QRect(x0, kTop, std::max(2, x1 - x0), int(stages_.size()) * kRow).adjusted(0, 0, -1, -1));
                }
    }
    void mouseMoveEvent(QMouseEvent* e) override {
        const auto j = stepAt(e->position().toPoint());
        if (!j) {
            QToolTip::hideText();
            return;
        }
        const ReplayStep& st = replay_->steps[*j];
        QString text = tr("step %1: %2").arg(st.step).arg(statusLabel(st.verdict));
        for (const std::string& s : stages_)
            text += QStringLiteral("\n%1: %2").arg(QString::fromStdString(s), actionLabel(st.actions.at(s)));
        for (const ReplayEvent& ev : replay_->events)
            if (ev.step == st.step)
                text += tr("\nchanged at %1: %2 → %3")
                            .arg(QString::fromStdString(ev.stage), actionLabel(ev.from), actionLabel(ev.to));
        QToolTip::showText(e->globalPosition().toPoint(), text, this);
    }
    void mousePressEvent(QMouseEvent* e) override {
        if (const auto j = stepAt(e->position().toPoint()))
            emit stepClicked(replay_->steps[*j].step);
    }

private:
    static constexpr int kRow = 12, kTop = 16, kLabel = 90;
    QRect cells() const { return QRect(kLabel, kTop, std::max(1, width() - kLabel - 8), height() - kTop); }
    std::optional<size_t> stepAt(QPoint pt) const {
        if (!replay_ || replay_->steps.empty() || pt.x() < kLabel || pt.y() < kTop)
            return std::nullopt;
        const QRect area = cells();
        const double f = double(pt.x() - area.left()) / double(area.width());
        if (f < 0 || f >= 1)
            return std::nullopt;
        return size_t(f * double(replay_->steps.size()));
    }
    std::shared_ptr<const Replay> replay_;
    std::vector<std::string> stages_;
    std::optional<int64_t> selected_;
};

// Steps × slices: one row per series (slice value), one cell per step, coloured by the
// statistic (viridis over all cells); a cell beyond the clause's limit is outlined. A click
// picks that step and slice (the panel opens its worst token).
class StepSliceGrid : public QWidget {
    Q_OBJECT
public:
    explicit StepSliceGrid(QWidget* parent) : QWidget(parent), colours_(colourTable(ColourMap::Viridis)) {
        setMouseTracking(true);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        setFixedHeight(0);
    }
    void setData(std::shared_ptr<const StepsResult> r, std::optional<double> limitMax, std::optional<double> limitMin) {
        result_ = std::move(r);
        max_ = limitMax;
        min_ = limitMin;
        const size_t rows = result_ && result_->series.size() > 1 ? result_->series.size() : 0;
        rowH_ = rows > 8 ? 8 : 12;
        setFixedHeight(rows ? int(rows) * rowH_ + kTop : 0);
        update();
    }

signals:
    void cellClicked(int64_t step, size_t series);

protected:
    void paintEvent(QPaintEvent*) override {
        if (!result_ || result_->series.size() < 2)
            return;
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        double lo = INFINITY, hi = -INFINITY;
        for (const StepSeries& s : result_->series)
            for (const StepPointResult& pt : s.steps)
                if (pt.value && std::isfinite(*pt.value))
                    lo = std::min(lo, *pt.value), hi = std::max(hi, *pt.value);
        if (!(lo <= hi))
            return;
        const LevelMapper levels(lo, hi > lo ? hi : lo + 1, false);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(0, 0, width(), kTop), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("Steps × %1 (colour: %2, %3 to %4; outlined: beyond the limit; click a cell for its worst token)")
                       .arg(QString::fromStdString(result_->perSlice), QString::fromStdString(result_->aggregate),
                            numberText(lo), numberText(hi)));
        const QRect area = cells();
        for (size_t r = 0; r < result_->series.size(); ++r) {
            const StepSeries& s = result_->series[r];
            const int y = kTop + int(r) * rowH_;
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QRect(0, y, kLabel - 4, rowH_), Qt::AlignRight | Qt::AlignVCenter,
                       QString::fromStdString(s.slice.empty() ? std::string("all") : s.slice[0].second));
            const size_t n = s.steps.size();
            for (size_t j = 0; j < n; ++j) {
                const int x0 = area.left() + int(double(j) * area.width() / double(n));
                const int x1 = area.left() + int(double(j + 1) * area.width() / double(n));
                const QRect cell(x0, y, std::max(1, x1 - x0), rowH_ - 1);
                const auto& v = s.steps[j].value;
                if (!v || !std::isfinite(*v)) {
                    p.fillRect(cell, palette().color(QPalette::Window));
                    continue;
                }
                p.fillRect(cell, QColor::fromRgb(colours_[levels.level(*v)]));
                if ((max_ && *v > *max_) || (min_ && *v < *min_)) {
                    p.setPen(QPen(QColor(0xd6, 0x27, 0x28), 1));
                    p.setBrush(Qt::NoBrush);
                    p.drawRect(cell.adjusted(0, 0, -1, -1));
                }
            }
        }
    }
    void mouseMoveEvent(QMouseEvent* e) override {
        const auto at = cellAt(e->position().toPoint());
        if (!at) {
            QToolTip::hideText();
            return;
        }
        const StepSeries& s = result_->series[at->first];
        const StepPointResult& pt = s.steps[at->second];
        QToolTip::showText(e->globalPosition().toPoint(),
                           tr("%1, step %2: %3 (%4 values, %5 sequences)")
                               .arg(QString::fromStdString(s.slice.empty() ? std::string("all") : s.slice[0].second))
                               .arg(pt.step)
                               .arg(pt.value ? numberText(*pt.value) : tr("no value"))
                               .arg(pt.n)
                               .arg(pt.sequences),
                           this);
    }
    void mousePressEvent(QMouseEvent* e) override {
        if (const auto at = cellAt(e->position().toPoint()))
            emit cellClicked(result_->series[at->first].steps[at->second].step, at->first);
    }

private:
    static constexpr int kTop = 16, kLabel = 90;
    QRect cells() const { return QRect(kLabel, kTop, std::max(1, width() - kLabel - 8), height() - kTop); }
    std::optional<std::pair<size_t, size_t>> cellAt(QPoint pt) const {
        if (!result_ || result_->series.size() < 2 || pt.x() < kLabel || pt.y() < kTop)
            return std::nullopt;
        const size_t r = size_t((pt.y() - kTop) / rowH_);
        if (r >= result_->series.size())
            return std::nullopt;
        const QRect area = cells();
        const double f = double(pt.x() - area.left()) / double(area.width());
        const size_t n = result_->series[r].steps.size();
        if (f < 0 || f >= 1 || n == 0)
            return std::nullopt;
        return std::pair{r, size_t(f * double(n))};
    }
    QList<QRgb> colours_;
    std::shared_ptr<const StepsResult> result_;
    std::optional<double> max_, min_;
    int rowH_ = 12;
};

namespace {

// The aggregate a clause's own statistic has over a step's values.
std::optional<Aggregate> clauseAggregate(const Clause& c) {
    if (c.metric.empty() || c.family == Family::Runtime)
        return std::nullopt;
    if (c.family == Family::Numerical)
        return c.aggregate;
    if (c.family == Family::Statistical)
        return c.test == Clause::Test::Mean ? parseAggregate("mean")
                                            : std::optional<Aggregate>(makeFractionAbove(c.level ? c.level->value : 0));
    return std::nullopt;
}

}  // namespace

StepsPanel::StepsPanel(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    caption_ = new QLabel(this);
    caption_->setWordWrap(true);
    caption_->setTextFormat(Qt::PlainText);
    chart_ = new QChart;
    chart_->legend()->setAlignment(Qt::AlignRight);   // the tab is wide and short
    chart_->setMargins(QMargins(2, 2, 2, 2));
    chartView_ = new QChartView(chart_, this);
    setUpChartView(chartView_);
    chartView_->setMinimumHeight(160);
    timeline_ = new StepTimeline(this);
    grid_ = new StepSliceGrid(this);
    drivers_ = new QLabel(this);
    drivers_->setWordWrap(true);
    drivers_->setTextFormat(Qt::PlainText);
    drivers_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(caption_);
    layout->addWidget(chartView_, 1);
    layout->addWidget(grid_);
    layout->addWidget(timeline_);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(drivers_, 1);
    openWorst_ = new QPushButton(tr("Open the worst token"), this);
    openWorst_->setEnabled(false);
    openWorst_->setToolTip(tr("A flagged step (onset or spike): its largest value, in the Sequence tab"));
    bottom->addWidget(openWorst_, 0, Qt::AlignTop);
    layout->addLayout(bottom);
    connect(openWorst_, &QPushButton::clicked, this, [this] {
        if (worstToken_)
            emit sequenceActivated(worstToken_->first, worstToken_->second);
    });
    connect(timeline_, &StepTimeline::stepClicked, this, &StepsPanel::selectStep);
    connect(grid_, &StepSliceGrid::cellClicked, this, &StepsPanel::selectCell);
    connect(session_, &Session::evaluated, this, [this](const EvaluationSnapshot& s) {
        contract_ = s.contract;
        refresh();
    });
    connect(session_, &Session::runLoaded, this, [this] {
        steps_.reset();
        replay_.reset();
        stepsKey_.clear();
        selectedStep_.reset();
        refresh();
    });
}

StepsPanel::~StepsPanel() = default;

void StepsPanel::setClause(const QString& clause, const std::optional<SliceLabels>& slice) {
    if (clause == clause_ && slice == slice_)
        return;
    clause_ = clause;
    slice_ = slice;
    refresh();
}

void StepsPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (dirty_)
        refresh();
}

void StepsPanel::refresh() {
    if (!isVisible()) {
        dirty_ = true;
        return;
    }
    dirty_ = false;
    const auto run = session_->run();
    const auto contract = contract_ ? contract_ : session_->contract();
    const quint64 gen = ++generation_;
    run_ = run;
    if (!run || run->steps().empty()) {
        steps_.reset();
        replay_.reset();
        stepsKey_.clear();
        caption_->setText(run ? tr("This run has no training steps (SPEC 7: a `step` key, a `step` tensor, or trainer "
                                   "step_N folders), so there is nothing to show over steps.")
                              : tr("No run is open."));
        clearChart(chart_);
        timeline_->setReplay(nullptr, {});
        drivers_->clear();
        drawn_ = true;
        return;
    }
    const Clause* c = contract ? contract->find(clause_.toStdString()) : nullptr;
    const std::optional<Aggregate> agg = c ? clauseAggregate(*c) : std::nullopt;
    StepsOptions o;
    std::string key;
    if (agg) {
        o.metric = c->metric;
        o.aggregate = *agg;
        o.perSlice = c->perSlice;
        key = std::to_string(reinterpret_cast<uintptr_t>(run.get())) + "|" + o.metric + "|" + agg->text + "|" +
              clauseScopeKey(*c);
    }
    auto reuse = key == stepsKey_ ? steps_ : nullptr;
    drawn_ = false;
    const auto engine = session_->engine();
    const Clause clause = c ? *c : Clause{};
    QtConcurrent::run(workPool(), [run, contract, engine, o, key, reuse, clause]() mutable {
        lowerThreadPriority();
        std::shared_ptr<const StepsResult> steps = reuse;
        std::shared_ptr<const Replay> replay;
        QString error;
        try {
            if (!steps && !key.empty() && engine) {
                const ClauseScope scope = clauseTokenScope(clause, *engine);
                o.scope = scope.tokens;
                auto r = std::make_shared<StepsResult>(stepsOfRun(*engine, o));
                // What a click on a cell needs: each series' worst token at every step.
                r->scope = scope.tokens;
                steps = std::move(r);
            }
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        try {
            if (contract)
                replay = std::make_shared<const Replay>(replayContract(*contract, EvaluationData(run)));
        } catch (const std::exception& e) {
            if (error.isEmpty())
                error = QString::fromStdString(e.what());
        }
        return std::make_tuple(steps, replay, error, key);
    }).then(this, [this, gen](std::tuple<std::shared_ptr<const StepsResult>, std::shared_ptr<const Replay>, QString,
                                         std::string> r) {
        if (gen != generation_)
            return;
        stepsKey_ = std::get<3>(r);
        showResult(std::get<0>(r), std::get<1>(r), std::get<2>(r), gen);
    });
}

void StepsPanel::showResult(std::shared_ptr<const StepsResult> steps, std::shared_ptr<const Replay> replay,
                            const QString& error, quint64) {
    steps_ = std::move(steps);
    replay_ = std::move(replay);
    const auto contract = contract_ ? contract_ : session_->contract();
    timeline_->setReplay(replay_, contract ? contract->stages : std::vector<std::string>{});
    draw();
    if (!error.isEmpty())
        caption_->setText(caption_->text() + tr("\n%1").arg(error));
    drawn_ = true;
}

void StepsPanel::draw() {
    const auto contract = contract_ ? contract_ : session_->contract();
    const Clause* c = contract ? contract->find(clause_.toStdString()) : nullptr;
    if (!steps_ || !c) {
        clearChart(chart_);
        grid_->setData(nullptr, std::nullopt, std::nullopt);
        caption_->setText(c ? tr("%1 is not a clause over token or sequence metrics: only the replay below applies.")
                                  .arg(clause_)
                            : tr("Select a clause to see its metric over the training steps."));
        return;
    }
    StepChart spec;
    spec.title = tr("%1: %2 of %3 per step").arg(clause_, QString::fromStdString(steps_->aggregate),
                                                   QString::fromStdString(steps_->metric));
    spec.yTitle = QString::fromStdString(steps_->metric);
    QStringList onsets;
    for (const StepSeries& s : steps_->series) {
        // Every slice's line; the band of the selected result's slice (or of the only series).
        const bool selected = !s.slice.empty() && slice_ && slice_->count(s.slice[0].first) &&
                              slice_->at(s.slice[0].first) == s.slice[0].second;
        const bool band = selected || steps_->series.size() == 1;
        StepLine line;
        line.name = s.slice.empty() ? QString::fromStdString(steps_->aggregate)
                                    : QString::fromStdString(s.slice[0].first + "=" + s.slice[0].second);
        for (const StepPointResult& p : s.steps) {
            line.x.push_back(double(p.step));
            line.y.push_back(p.value ? *p.value : NAN);
            line.lo.push_back(band && p.ci ? p.ci->first : NAN);
            line.hi.push_back(band && p.ci ? p.ci->second : NAN);
        }
        spec.lines.push_back(std::move(line));
        if (s.onsetStep) {
            spec.markers.emplace_back(tr("onset %1 (step %2)").arg(spec.lines.back().name).arg(*s.onsetStep),
                                      double(*s.onsetStep));
            onsets << tr("%1 from step %2").arg(spec.lines.back().name).arg(*s.onsetStep);
        }
    }
    const bool numerical = c->family == Family::Numerical;
    if (numerical && c->max)
        spec.limits.emplace_back(tr("max %1").arg(numberText(c->max->value)), c->max->value);
    if (numerical && c->min)
        spec.limits.emplace_back(tr("min %1").arg(numberText(c->min->value)), c->min->value);
    if (c->family == Family::Statistical && c->test == Clause::Test::Exceedance && c->max)
        spec.limits.emplace_back(tr("max share %1").arg(numberText(c->max->value)), c->max->value);
    drawStepChart(chart_, spec);
    grid_->setData(steps_, numerical && c->max ? std::optional<double>(c->max->value) : std::nullopt,
                   numerical && c->min ? std::optional<double>(c->min->value) : std::nullopt);
    caption_->setText(tr("%1 of %2 per step over the clause's own tokens · onset of a rise: %3 · click a step below "
                         "for what drove it")
                          .arg(QString::fromStdString(steps_->aggregate), QString::fromStdString(steps_->metric),
                               onsets.isEmpty() ? tr("none") : onsets.join(QStringLiteral(", "))));
    caption_->setToolTip(tr("The band is the 95 % interval over sequences (%1). The onset test (docs/steps.md) raises "
                            "a false alarm on a run that never changes with probability %2 over the whole series, "
                            "across slices.")
                             .arg(QString::fromStdString(steps_->interval))
                             .arg(steps_->alpha));
    if (selectedStep_)
        selectStep(*selectedStep_);
}

void StepsPanel::selectCell(int64_t step, size_t series) {
    selectStep(step);
    if (!steps_ || series >= steps_->series.size() || !run_ || !steps_->values)
        return;
    // The series' worst token at that step: the largest value of its tokens in the clause's
    // scope, from the values the background job kept (nothing is computed here, on the GUI
    // thread).
    const StepSeries& s = steps_->series[series];
    const auto& values = steps_->values;
    const std::vector<int64_t> seqStep = run_->steps();
    const int key = s.slice.empty() ? -1 : run_->slices.keyIndex(s.slice[0].first);
    const std::shared_ptr<const DerivedCodes> derived = key < 0 ? steps_->derived : nullptr;
    int code = -1;
    if (derived)
        code = int(std::find(derived->values.begin(), derived->values.end(), s.slice[0].second) - derived->values.begin());
    std::optional<std::pair<size_t, size_t>> best;
    double worst = -INFINITY;
    const bool token = values->level == MetricLevel::Token;
    for (size_t q = 0; q < run_->sequenceCount(); ++q) {
        if (seqStep.empty() || seqStep[q] != step)
            continue;
        if (key >= 0) {
            const std::string* label = run_->slices.label(q, size_t(key));
            if (!label || *label != s.slice[0].second)
                continue;
        }
        if (!token) {   // a sequence metric: the sequence is the unit (its first token opens)
            const double v = values->values[q];
            if (!std::isnan(v) && (!derived || derived->level == DerivedLevel::Token || derived->code(q, 0) == code) &&
                v > worst) {
                worst = v;
                best = std::pair{q, size_t(0)};
            }
            continue;
        }
        for (size_t i = run_->seqBegin(q); i < run_->seqEnd(q); ++i) {
            const double v = values->values[i];
            if (std::isnan(v) || (steps_->scope && !(*steps_->scope)[i]) || (derived && derived->code(q, i) != code))
                continue;
            if (v > worst) {
                worst = v;
                best = std::pair{q, i - run_->seqBegin(q)};
            }
        }
    }
    worstToken_ = best;
    openWorst_->setEnabled(best.has_value());
    if (best)
        openWorst_->setText(tr("Open %1 at %2 (%3) in the Sequence tab")
                                .arg(QString::fromStdString(run_->ids[best->first]))
                                .arg(best->second)
                                .arg(numberText(worst)));
}

void StepsPanel::selectStep(int64_t step) {
    selectedStep_ = step;
    timeline_->setSelected(step);
    QStringList lines;
    const StepContributor* first = nullptr;
    if (replay_)
        for (const ReplayStep& st : replay_->steps)
            if (st.step == step) {
                QStringList failing;
                for (const Result& r : st.results)
                    if (r.status != Status::Pass)
                        failing << QString::fromStdString(r.clause);
                lines << tr("Step %1: %2 (%3 sequences)%4")
                             .arg(step)
                             .arg(statusLabel(st.verdict))
                             .arg(st.sequences)
                             .arg(failing.isEmpty() ? QString() : tr("; not passing: %1").arg(failing.join(", ")));
            }
    if (steps_)
        for (const StepSeries& s : steps_->series) {
            const QString name = s.slice.empty() ? QString() : QString::fromStdString(s.slice[0].second) + ": ";
            for (const StepPointResult& p : s.steps)
                if (p.step == step && p.value)
                    lines << tr("%1%2 = %3 (n %4)").arg(name, QString::fromStdString(steps_->aggregate))
                                 .arg(numberText(*p.value)).arg(p.n);
            for (const StepFlag& f : s.flags)
                if (f.step == step) {
                    QStringList who;
                    for (const auto& q : f.sequences)
                        who << tr("%1 (%2 % of the excess)").arg(QString::fromStdString(q.id)).arg(std::round(q.share * 100));
                    QStringList toks;
                    for (const auto& t : f.tokens) {
                        toks << QStringLiteral("%1@%2 = %3").arg(QString::fromStdString(t.id)).arg(t.position)
                                    .arg(numberText(t.value));
                        if (!first)
                            first = &t;
                    }
                    lines << tr("%1%2 — sequences: %3; tokens: %4")
                                 .arg(name, f.onset ? tr("onset") : tr("spike"),
                                      who.isEmpty() ? tr("none above the baseline") : who.join(", "),
                                      toks.join(", "));
                }
        }
    drivers_->setText(lines.join('\n'));
    // The worst token of a flagged step, for the Sequence tab.
    worstToken_.reset();
    if (first && run_)
        for (size_t s = 0; s < run_->sequenceCount(); ++s)
            if (run_->ids[s] == first->id) {
                worstToken_ = std::pair{s, size_t(std::max<int64_t>(0, first->position))};
                break;
            }
    openWorst_->setEnabled(worstToken_.has_value());
    openWorst_->setText(first ? tr("Open %1 at %2 in the Sequence tab").arg(QString::fromStdString(first->id)).arg(first->position)
                              : tr("Open the worst token"));
}

}  // namespace kcx::ui

#include "steps_panel.moc"
