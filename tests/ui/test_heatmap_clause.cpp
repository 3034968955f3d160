// The selected clause drives the heatmap: a clause's scope worked out by hand
// (core/evaluate/clause_scope.h), the statistic, limit, rows and few-values line each kind of
// clause gives (ui/heatmap/clause_lens.h), and the window on the demo: selecting N1 shows
// N1's p99.9 per precision, marked where a cell's p99.9 is above N1's max, each cell checked
// against a type-7 quantile worked out here; another statistic or metric is never marked
// against N1's limit; N3's `where` and `positions` leave every other token out.
#include <QComboBox>
#include <QTreeView>
#include <QtCharts/QChart>
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "core/contract/contract.h"
#include "core/evaluate/clause_scope.h"
#include "core/metrics/metrics.h"
#include "tests/support/test_runs.h"
#include "tests/support/window_demo.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/histogram_chart.h"
#include "ui/charts/position_chart.h"
#include "ui/contract/contract_panel.h"
#include "ui/contract/results_model.h"
#include "ui/heatmap/clause_lens.h"
#include "ui/heatmap/heatmap_panel.h"
#include "ui/heatmap/heatmap_view.h"
#include "ui/session/session.h"

using namespace kcx;
using namespace kcx::ui;

namespace {

// Three sequences of 4, 3 and 5 tokens labeled task = a, b, a; |log ratio| of token i is
// i / 100.
std::shared_ptr<Run> taskRun() {
    std::vector<std::vector<double>> train{{0, 0, 0, 0}, {0, 0, 0}, {0, 0, 0, 0, 0}}, inf = train;
    double i = 0;
    for (auto& s : inf)
        for (auto& x : s)
            x = -(i++) / 100;
    auto run = test::runFromLogprobs(train, inf);
    run->slices.keys = {"task"};
    run->slices.values = {{"a", "b"}};
    run->slices.codes = {0, 1, 0};
    return run;
}

std::vector<uint8_t> maskOf(std::initializer_list<size_t> in, size_t n) {
    std::vector<uint8_t> m(n, 0);
    for (size_t i : in)
        m[i] = 1;
    return m;
}

// Type 7 worked out from a full sort.
double type7(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double h = double(v.size() - 1) * q;
    const size_t lo = size_t(std::floor(h)), hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (h - double(lo)) * (v[hi] - v[lo]);
}

QComboBox* comboNamed(QWidget* root, const QString& name) {
    for (QComboBox* c : root->findChildren<QComboBox*>())
        if (c->accessibleName() == name)
            return c;
    return nullptr;
}

}  // namespace

class TestHeatmapClause : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qputenv("KCX_NO_DIALOGS", "1"); }

    void scopeByHand() {
        auto run = taskRun();
        MetricEngine engine(run);
        Clause c;
        c.metric = "abs_log_ratio";
        QVERIFY(clauseTokenScope(c, engine).all());   // no where, no positions: every token

        // task = a (sequences 0 and 2, tokens 0-3 and 7-11), positions [1, 3).
        c.where.anyOf["task"] = {"a"};
        c.positions = std::pair<int64_t, int64_t>{1, 3};
        ClauseScope s = clauseTokenScope(c, engine);
        QVERIFY(s.tokens && s.error.empty());
        QCOMPARE(*s.tokens, maskOf({1, 2, 8, 9}, 12));
        QCOMPARE(s.count, uint64_t(4));

        // Positions past a sequence's end are clamped: [3, 100) is token 3 of sequence 0
        // and tokens 3, 4 of sequence 2 (sequence 1 is b, and has only 3 tokens anyway).
        c.positions = std::pair<int64_t, int64_t>{3, 100};
        s = clauseTokenScope(c, engine);
        QCOMPARE(*s.tokens, maskOf({3, 10, 11}, 12));

        // Both values accepted, no positions: every token.
        c.positions.reset();
        c.where.anyOf["task"] = {"a", "b"};
        s = clauseTokenScope(c, engine);
        QCOMPARE(s.count, uint64_t(12));

        // A per-token derived key: every token of these short sequences is in pos_0_64.
        c.where.anyOf.clear();
        c.where.anyOf["derived.pos_bucket"] = {"pos_64_256"};
        s = clauseTokenScope(c, engine);
        QVERIFY(s.tokens);
        QCOMPARE(s.count, uint64_t(0));
        c.where.anyOf["derived.pos_bucket"] = {"pos_0_64"};
        QCOMPARE(clauseTokenScope(c, engine).count, uint64_t(12));

        // A key the run does not have: an error, no mask.
        c.where.anyOf.clear();
        c.where.anyOf["model"] = {"x"};
        s = clauseTokenScope(c, engine);
        QVERIFY(!s.tokens);
        QVERIFY(s.error.find("no slice key 'model'") != std::string::npos);
    }

    // The window's charts get a scope not yet built (LazyClauseScope): built once, by
    // whichever thread asks first, the same mask for every caller; its all() is known
    // without building, and the session hands out one object per scope and run.
    void lazyScopeBuiltOnceOffTheGuiThread() {
        auto run = taskRun();
        auto engine = std::make_shared<MetricEngine>(run);
        Clause c;
        c.metric = "abs_log_ratio";
        QVERIFY(LazyClauseScope(c, engine, std::nullopt).all());
        QVERIFY(LazyClauseScope(c, engine, SliceLabels{}).all());
        QVERIFY(!LazyClauseScope(c, engine, SliceLabels{{"task", "b"}}).all());

        // task = b by a result's slice: sequence 1, tokens 4-6; eight threads ask at once.
        const LazyClauseScope lazy(c, engine, SliceLabels{{"task", "b"}});
        std::vector<const std::vector<uint8_t>*> seen(8, nullptr);
        std::vector<std::thread> threads;
        for (size_t t = 0; t < seen.size(); ++t)
            threads.emplace_back([&, t] { seen[t] = lazy.get().tokens.get(); });
        for (auto& t : threads)
            t.join();
        QVERIFY(seen[0] != nullptr);
        for (const auto* p : seen)
            QCOMPARE(p, seen[0]);
        QCOMPARE(*seen[0], maskOf({4, 5, 6}, 12));
        QCOMPARE(lazy.get().count, uint64_t(3));

        // A key the run lacks: the error, no mask, as clauseTokenScope says.
        c.where.anyOf["model"] = {"x"};
        const LazyClauseScope bad(c, engine, std::nullopt);
        QVERIFY(!bad.all());
        QVERIFY(!bad.get().tokens);
        QVERIFY(bad.get().error.find("no slice key 'model'") != std::string::npos);

        // It does not keep the engine alive: built after the engine is gone, it is empty.
        std::weak_ptr<MetricEngine> gone = engine;
        const LazyClauseScope late(Clause{}, engine, SliceLabels{{"task", "a"}});
        engine.reset();
        QVERIFY(gone.expired());
        QVERIFY(!late.get().tokens && late.get().error.empty());
    }

    // widenForFew by hand: one slice row of ten sequences of ten tokens, so ten values at
    // every position. With fewBelow 30, 4 columns (widths 3, 2, 3, 2: 30, 20, 30, 20 values)
    // leave half the cells short; 3 columns (4, 3, 3: 40, 30, 30) leave none. Tried: 10, 8,
    // 6, 4, 3 (each 4/5 of the last).
    // A cell's quantile from its largest values in a heap (a tail quantile needs k = n - lo
    // of them) and, when k is over 4,096, from a copy of all of them: both equal type 7 by
    // sorting, at q where each path is taken.
    void quantileCellsOfEitherPath() {
        std::mt19937_64 rng(41);
        std::normal_distribution<double> z(0, 1);
        std::vector<std::vector<double>> train(20, std::vector<double>(600, 0.0)), inf = train;
        std::vector<double> all;
        for (auto& s : inf)
            for (double& x : s) {
                x = -std::fabs(z(rng));
                all.push_back(-x);   // abs_log_ratio of train 0
            }
        auto run = test::runFromLogprobs(train, inf);
        run->slices.keys = {"task"};
        run->slices.values = {{"a"}};
        run->slices.codes.assign(20, 0);
        MetricEngine engine(run);
        const auto index = HeatmapIndex::build(run, engine.get("abs_log_ratio"), {HeatmapRows::SliceValues, "task", ""});
        for (double q : {0.999, 0.99, 0.9, 0.5, 0.1, 0.0, 1.0}) {   // k = 13 ... 12,000
            HeatmapRequest r{0, 1, 1, 0, 600, 1, HeatmapAggregate::Quantile, 0};
            r.quantile = q;
            const HeatmapGrid g = computeGrid(*index, r);
            QCOMPARE(g.n[0], 12000u);
            QCOMPARE(g.value[0], type7(all, q));
        }
    }

    void widerColumnsForFewValues() {
        std::vector<std::vector<double>> seqs(10, std::vector<double>(10, 0.0)), inf = seqs;
        for (auto& s : inf)
            for (size_t t = 0; t < s.size(); ++t)
                s[t] = -double(t) / 10;
        auto run = test::runFromLogprobs(seqs, inf);
        run->slices.keys = {"task"};
        run->slices.values = {{"a"}};
        run->slices.codes.assign(10, 0);
        MetricEngine engine(run);
        const auto index = HeatmapIndex::build(run, engine.get("abs_log_ratio"), {HeatmapRows::SliceValues, "task", ""});
        HeatmapRequest q{0, 1, 1, 0, 10, 10, HeatmapAggregate::Quantile, 0};
        q.quantile = 0.9;
        q.fewBelow = 30;
        QCOMPARE(computeGrid(*index, q).cols, size_t(10));   // not asked to widen
        q.widenForFew = true;
        HeatmapGrid g = computeGrid(*index, q);
        QCOMPARE(g.cols, size_t(3));
        QCOMPARE(g.n, (std::vector<uint32_t>{40, 30, 30}));
        std::vector<double> first;   // ten values each of 0, 0.1, 0.2, 0.3
        for (int t = 0; t < 4; ++t)
            first.insert(first.end(), 10, double(t) / 10);
        QCOMPARE(g.value[0], type7(first, 0.9));
        // A scope of positions 0-4 only: 3 columns give 40 and 10 values (and an empty
        // cell, which does not count), half short; 2 columns give 50 and an empty one.
        auto scope = std::make_shared<std::vector<uint8_t>>(run->tokenCount(), 0);
        for (size_t s = 0; s < 10; ++s)
            for (size_t t = 0; t < 5; ++t)
                (*scope)[s * 10 + t] = 1;
        q.scope = scope;
        g = computeGrid(*index, q);
        QCOMPARE(g.cols, size_t(2));
        QCOMPARE(g.n, (std::vector<uint32_t>{50, 0}));
    }

    void lensOfEachKindOfClause() {
        auto run = taskRun();
        MetricEngine engine(run);
        const auto contract = parseContract(R"(kcx_contract: 1
name: t
numerical:
  - id: Q
    metric: abs_log_ratio
    aggregate: p99.9
    max: 0.3
    per_slice: task
  - id: M
    metric: abs_log_ratio
    aggregate: mean
    min: 0.01
    where: {task: [b]}
  - id: F
    metric: abs_log_ratio
    aggregate: "fraction_above: 0.2"
    max: 0.05
  - id: O
    metric: abs_log_ratio
    aggregate: "fraction_outside: [0.1, 0.2]"
    max: 0.1
statistical:
  - id: E
    metric: abs_log_ratio
    test: exceedance
    level: 0.15
    max: 0.005
)",
                                            "t.yaml");
        const ClauseLens q = clauseLens(*contract.find("Q"), engine);
        QVERIFY(q.has);
        QCOMPARE(q.statistic.aggregate, HeatmapAggregate::Quantile);
        QCOMPARE(q.statistic.quantile, 0.999);
        QCOMPARE(q.statistic.mark, HeatmapMark::Above);
        QCOMPARE(q.statistic.markLevel, 0.3);
        QCOMPARE(q.statistic.fewBelow, 1000u);   // 1 / (1 - 0.999)
        QCOMPARE(q.rowKey, QStringLiteral("task"));
        QVERIFY(!q.statistic.scope);             // per_slice splits rows; it does not narrow the scope

        const ClauseLens m = clauseLens(*contract.find("M"), engine);
        QVERIFY(m.has);
        QCOMPARE(m.statistic.aggregate, HeatmapAggregate::Mean);
        QCOMPARE(m.statistic.mark, HeatmapMark::Below);   // a min marks cells below it
        QCOMPARE(m.statistic.markLevel, 0.01);
        QCOMPARE(m.rowKey, QStringLiteral("task"));
        QVERIFY(m.statistic.scope);
        QCOMPARE(*m.statistic.scope, maskOf({4, 5, 6}, 12));   // sequence 1 is task b
        QCOMPARE(m.statistic.scopeText, QStringLiteral("task=b"));

        const ClauseLens f = clauseLens(*contract.find("F"), engine);
        QCOMPARE(f.statistic.aggregate, HeatmapAggregate::ShareAbove);
        QCOMPARE(f.statistic.threshold, 0.2);    // the share is of values above 0.2 ...
        QCOMPARE(f.statistic.markLevel, 0.05);   // ... and a cell breaks F above 5 %
        QCOMPARE(f.statistic.fewBelow, 20u);     // a 5 % share needs 20 values to show one

        const ClauseLens e = clauseLens(*contract.find("E"), engine);
        QCOMPARE(e.statistic.aggregate, HeatmapAggregate::ShareAbove);
        QCOMPARE(e.statistic.threshold, 0.15);
        QCOMPARE(e.statistic.markLevel, 0.005);
        QCOMPARE(e.statistic.fewBelow, 200u);

        // fraction_outside has no cell statistic here: no lens, and a reason.
        const ClauseLens o = clauseLens(*contract.find("O"), engine);
        QVERIFY(!o.has);
        QVERIFY(o.note.contains("fraction_outside"));

        QCOMPARE(fewValuesFor(HeatmapAggregate::Quantile, 0.5), 10u);
        QCOMPARE(fewValuesFor(HeatmapAggregate::Quantile, 0.99), 100u);
        QCOMPARE(fewValuesFor(HeatmapAggregate::Quantile, 0.01), 100u);
        QCOMPARE(fewValuesFor(HeatmapAggregate::Mean, 0.5), 10u);
    }

    // The window on the demo: N1 (p99.9 of abs_log_ratio per precision, max 0.3; the fp8
    // slice fails) drives the heatmap.
    void windowShowsTheSelectedClause() {
        MainWindow w;
        QVERIFY2(test::showDemo(w, {1600, 1000}), qPrintable(w.settleState()));
        w.contractPanel()->selectClause(QStringLiteral("N1"));
        HeatmapPanel* panel = w.heatmapPanel();
        HeatmapView* view = panel->view();
        QTRY_VERIFY(view->statistic().clause == QLatin1String("N1") && !view->isBusy() && view->grid() &&
                    view->grid()->request.aggregate == HeatmapAggregate::Quantile);
        QCOMPARE(view->rowMode().sliceKey, std::string("precision"));   // N1's per_slice
        auto grid = view->grid();
        QCOMPARE(grid->request.quantile, 0.999);
        QCOMPARE(grid->request.mark, HeatmapMark::Above);
        QCOMPARE(grid->request.markLevel, 0.3);

        // Every cell against a p99.9 worked out here from the tokens of its rows and positions.
        const auto values = w.session()->engine()->get("abs_log_ratio");
        const Run& run = *w.session()->run();
        const auto index = view->index();
        size_t marked = 0, few = 0, checked = 0;
        for (size_t r = 0; r < grid->rows; ++r)
            for (size_t c = 0; c < grid->cols; ++c) {
                std::vector<double> cell;
                for (size_t row = grid->rowBins.lo(r); row < grid->rowBins.hi(r); ++row)
                    for (uint32_t s : index->row(row).sequences)
                        for (size_t t = grid->colBins.lo(c); t < std::min(grid->colBins.hi(c), run.seqLength(s)); ++t)
                            if (const double x = values->values[run.seqBegin(s) + t]; !std::isnan(x))
                                cell.push_back(x);
                QCOMPARE(size_t(grid->n[grid->at(r, c)]), cell.size());
                if (cell.empty())
                    continue;
                const double want = type7(cell, 0.999);
                QVERIFY(std::fabs(grid->value[grid->at(r, c)] - want) <= 1e-12);
                QCOMPARE(grid->marked(r, c), want > 0.3);
                QCOMPARE(grid->few(r, c), cell.size() < 1000);
                marked += grid->marked(r, c);
                few += grid->few(r, c);
                ++checked;
            }
        QVERIFY(checked > 10);
        QVERIFY(marked > 0);   // the fp8 tail shows
        // Cells are wide enough that most rest on enough values for a p99.9.
        QVERIFY2(few < checked / 2, qPrintable(QString("%1 of %2 cells few").arg(few).arg(checked)));

        // The charts show N1's fp8 result: the histogram bins only fp8 tokens, marks N1's
        // observed p99.9 and, N1's max being in the tail, counts on a log axis; the position
        // chart shows the p99.9 per position bin of those tokens.
        auto* charts = w.findChild<ChartsPanel*>();
        QVERIFY(charts);
        ResultsModel* model = w.contractPanel()->model();
        QModelIndex fp8Row;
        for (int f = 0; f < model->rowCount() && !fp8Row.isValid(); ++f)
            for (int r = 0; r < model->rowCount(model->index(f, 0)); ++r) {
                const QModelIndex i = model->index(r, 0, model->index(f, 0));
                const Result* res = model->resultAt(i);
                if (res && res->clause == "N1" && res->slice && res->slice->at("precision") == "fp8")
                    fp8Row = i;
            }
        QVERIFY(fp8Row.isValid());
        w.contractPanel()->view()->setCurrentIndex(fp8Row);
        const int precision = run.slices.keyIndex("precision");
        uint64_t fp8 = 0, fp8Above = 0;
        std::vector<double> fp8Values;
        for (size_t s = 0; s < run.sequenceCount(); ++s)
            if (const std::string* l = run.slices.label(s, size_t(precision)); l && *l == "fp8")
                for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i)
                    if (std::isfinite(values->values[i])) {
                        ++fp8;
                        fp8Above += values->values[i] > 0.3;
                        fp8Values.push_back(values->values[i]);
                    }
        HistogramChart* histogram = charts->histogramChart();
        QTRY_VERIFY(!histogram->isBusy() && histogram->histogram() && histogram->histogram()->shown == fp8);
        QVERIFY(histogram->chart()->title().contains("precision=fp8"));
        QVERIFY(histogram->observed());
        QVERIFY(std::fabs(histogram->observed()->value - type7(fp8Values, 0.999)) <= 1e-12);
        QVERIFY(double(fp8Above) < 0.05 * double(fp8));   // the limit is in the tail ...
        QVERIFY(histogram->logCount());                   // ... so the count axis is log
        PositionChart* position = charts->positionChart();
        QCOMPARE(position->statistic().kind, PositionStatistic::Kind::Quantile);
        QCOMPARE(position->statistic().q, 0.999);
        QTRY_VERIFY(!position->isBusy() && position->means());
        uint64_t plotted = 0;
        for (const PositionSeries& ps : position->means()->series)
            for (uint64_t c : ps.count)
                plotted += c;
        QCOMPARE(plotted, fp8);   // only N1's fp8 tokens
        QVERIFY(position->chart()->title().startsWith("p99.9 of abs_log_ratio"));

        // The user's own statistic: the mean is not what N1 bounds, so nothing is marked.
        QComboBox* cell = comboNamed(&w, QStringLiteral("Heatmap cell statistic"));
        QVERIFY(cell);
        QCOMPARE(cell->currentText(), QStringLiteral("N1: p99.9"));
        cell->setCurrentIndex(cell->findText(QStringLiteral("mean")));
        QTRY_VERIFY(!view->isBusy() && view->grid()->request.aggregate == HeatmapAggregate::Mean);
        QCOMPARE(view->grid()->request.mark, HeatmapMark::None);
        // A re-evaluation (as after every drag) keeps the user's choice.
        w.session()->setThreshold("N1", "max", 0.31);
        QTRY_VERIFY(!w.session()->evaluating());
        QTRY_VERIFY(!view->isBusy());
        QCOMPARE(view->grid()->request.aggregate, HeatmapAggregate::Mean);

        // Back to N1's statistic: the dragged limit is the mark.
        cell->setCurrentIndex(0);
        QTRY_VERIFY(!view->isBusy() && view->grid()->request.aggregate == HeatmapAggregate::Quantile);
        QCOMPARE(view->grid()->request.markLevel, 0.31);

        // Another metric: N1's limit is not in its units; no clause statistic, no marks.
        QComboBox* metric = comboNamed(&w, QStringLiteral("Heatmap metric"));
        QVERIFY(metric);
        metric->setCurrentIndex(metric->findText(QStringLiteral("ratio")));
        QTRY_VERIFY(!view->isBusy() && view->grid() && view->statistic().clause.isEmpty());
        QCOMPARE(view->grid()->request.mark, HeatmapMark::None);
        QVERIFY(cell->findText(QStringLiteral("N1: p99.9")) < 0);

        // N3: p99 over bf16 at positions >= 256. Its metric comes back; only its tokens count.
        w.contractPanel()->selectClause(QStringLiteral("N3"));
        QTRY_VERIFY(view->statistic().clause == QLatin1String("N3") && !view->isBusy() && view->grid() &&
                    view->grid()->request.scope);
        QCOMPARE(view->rowMode().sliceKey, std::string("precision"));   // its where key
        grid = view->grid();
        for (size_t r = 0; r < grid->rows; ++r)
            for (size_t c = 0; c < grid->cols; ++c) {
                const std::string& label = view->index()->row(grid->rowBins.lo(r)).label;
                if (label != "bf16" || grid->colBins.hi(c) <= 256)
                    QCOMPARE(grid->n[grid->at(r, c)], 0u);
            }

        // No clause: no marks, whatever the statistic.
        panel->setClause(std::nullopt);
        QTRY_VERIFY(!view->isBusy() && view->grid()->request.mark == HeatmapMark::None);
    }
};

QTEST_MAIN(TestHeatmapClause)
#include "test_heatmap_clause.moc"
