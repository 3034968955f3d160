// The results table's Observed cell for a numerical quantile: its 95 % interval and the
// values beyond the thresholds in the tooltip (ui/contract/results_model.h), on results
// written by hand and on a real evaluation; and the per-slice bars, which draw a
// quantile's interval as a whisker only when both sides are bounded.
#include <QTextDocumentFragment>
#include <QtTest/QTest>
#include <QtCharts/QChart>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

#include "core/evaluate/evaluator.h"
#include "tests/support/test_runs.h"
#include "ui/charts/slice_bars_chart.h"
#include "ui/contract/results_model.h"

using namespace kcx;
using namespace kcx::ui;

namespace {

Result numerical(const std::string& clause, const std::string& aggregate, double observed, uint64_t n,
                 std::pair<double, double> ci, uint64_t beyond) {
    Result r;
    r.clause = clause;
    r.family = Family::Numerical;
    r.metric = "abs_log_ratio";
    r.aggregate = aggregate;
    r.observed = observed;
    r.n = n;
    r.ci = ci;
    r.confidence = 0.95;
    r.beyond = beyond;
    r.message = "observed " + std::to_string(observed);
    return r;
}

// A tooltip as the user reads it: the rich text that Qt renders, as plain text.
QString cell(const ResultsModel& m, int family, int row, int column, int role = Qt::DisplayRole) {
    const QString v = m.data(m.index(row, column, m.index(family, 0)), role).toString();
    return role == Qt::ToolTipRole ? QTextDocumentFragment::fromHtml(v).toPlainText() : v;
}

}  // namespace

class TestResultsModel : public QObject {
    Q_OBJECT
private slots:
    void observedTooltipShowsTheInterval() {
        const double inf = INFINITY;
        auto ev = std::make_shared<Evaluation>();
        Result p50 = numerical("N1", "p50", 0.01555, 48, {0.0114, 0.0239}, 8);
        p50.min = 0.001;
        p50.max = 0.05;
        ev->results.push_back(p50);
        Result p90 = numerical("N2", "p90", 0.05156, 24, {0.0298, inf}, 6);
        p90.max = 0.03;
        ev->results.push_back(p90);
        Result mx = numerical("N3", "max", 0.2404, 48, {0.2404, inf}, 1);
        mx.max = 0.2;
        ev->results.push_back(mx);
        Result mn = numerical("N4", "min", -0.1138, 48, {-inf, -0.1138}, 0);
        mn.min = -0.2;
        ev->results.push_back(mn);
        Result mean;   // a bootstrap interval: the Bound column, as before
        mean.clause = "S1";
        mean.family = Family::Statistical;
        mean.aggregate = "mean";
        mean.observed = 0.0034;
        mean.ci = std::pair{-0.0044, 0.0103};
        mean.confidence = 0.95;
        mean.message = "mean 0.0034";
        ev->results.push_back(mean);
        ResultsModel m;
        m.setEvaluation(ev);
        const int num = int(Family::Numerical), stat = int(Family::Statistical);

        // The cell itself shows the value only; the interval is not a bound that decides.
        QCOMPARE(cell(m, num, 0, ResultsModel::ObservedCol), QString("0.01555"));
        QCOMPARE(cell(m, num, 0, ResultsModel::BoundCol), QString());
        QCOMPARE(cell(m, stat, 0, ResultsModel::BoundCol), QString("[-0.0044, 0.0103]"));
        QVERIFY(cell(m, stat, 0, ResultsModel::BoundCol, Qt::ToolTipRole).contains("bootstrap"));
        QVERIFY(!cell(m, num, 0, ResultsModel::BoundCol, Qt::ToolTipRole).contains("bootstrap"));

        const QString t1 = cell(m, num, 0, ResultsModel::ObservedCol, Qt::ToolTipRole);
        QVERIFY2(t1.startsWith("observed 0.015550"), qPrintable(t1));
        QVERIFY2(t1.contains("95 % interval of the true p50: [0.0114, 0.0239]"), qPrintable(t1));
        QVERIFY2(t1.contains("8 of 48 values outside [0.001, 0.05]"), qPrintable(t1));
        QVERIFY2(!t1.contains("No upper"), qPrintable(t1));

        // p90 of 24 values: 0.9^24 = 0.080 > 0.025, so no upper rank; 36 values would do
        // (0.9^35 = 0.0250, 0.9^36 = 0.0225).
        const QString t2 = cell(m, num, 1, ResultsModel::ObservedCol, Qt::ToolTipRole);
        QVERIFY2(t2.contains("interval of the true p90: [0.0298, ∞)"), qPrintable(t2));
        QVERIFY2(t2.contains("No upper bound: the p90 needs at least 36 values for one (here 24)."), qPrintable(t2));
        QVERIFY2(t2.contains("6 of 24 values above max 0.03"), qPrintable(t2));

        const QString t3 = cell(m, num, 2, ResultsModel::ObservedCol, Qt::ToolTipRole);
        QVERIFY2(t3.contains("[0.2404, ∞)"), qPrintable(t3));
        QVERIFY2(t3.contains("No upper bound: no number of values bounds the max from above"), qPrintable(t3));
        QVERIFY2(t3.contains("1 of 48 values above max 0.2"), qPrintable(t3));

        const QString t4 = cell(m, num, 3, ResultsModel::ObservedCol, Qt::ToolTipRole);
        QVERIFY2(t4.contains("(−∞, -0.1138]"), qPrintable(t4));
        QVERIFY2(t4.contains("No lower bound: no number of values bounds the min from below"), qPrintable(t4));
        QVERIFY2(t4.contains("0 of 48 values below min -0.2"), qPrintable(t4));

        // The statistical result's Observed tooltip is its message, unchanged.
        QCOMPARE(cell(m, stat, 0, ResultsModel::ObservedCol, Qt::ToolTipRole), QString("mean 0.0034"));
    }

    // From a real evaluation: ten values 1..10 (as log-ratios), p50 <= 4.5. For n = 10,
    // q = 0.5: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024, and P(B <= 8) =
    // 1013/1024 >= 0.975 > P(B <= 7) = 968/1024: the interval is [x(1), x(8)] = [2, 9];
    // six values (5..10) lie above 4.5.
    // Issue 16: a slice value or clause id from a file is shown as text. A label that is
    // markup ("<b>fake</b>", an <img>) reads literally in the tooltip and renders nothing.
    void markupFromFilesIsShownAsText() {
        auto ev = std::make_shared<Evaluation>();
        Result r = numerical("N<i>1</i>", "p50", 0.5, 10, {0.1, 0.9}, 2);
        r.message = "p50 of task=<b>fake</b><img src=\"x.png\"> is 0.5";
        ev->results.push_back(r);
        ResultsModel m;
        m.setEvaluation(ev);
        for (int col : {int(ResultsModel::ClauseCol), int(ResultsModel::ObservedCol), int(ResultsModel::StatusCol)}) {
            const QString raw = m.data(m.index(0, col, m.index(int(Family::Numerical), 0)), Qt::ToolTipRole).toString();
            QVERIFY2(!raw.contains("<b>") && !raw.contains("<img"), qPrintable(raw));
            QVERIFY(cell(m, int(Family::Numerical), 0, col, Qt::ToolTipRole).contains("task=<b>fake</b><img src=\"x.png\">"));
        }
    }

    void tooltipFromAnEvaluation() {
        std::vector<double> r;
        for (int i = 1; i <= 10; ++i)
            r.push_back(i);
        Contract c;
        c.clauses.push_back(test::maxClause("N1", "log_ratio", "p50", 4.5));
        auto ev = std::make_shared<Evaluation>(evaluateContract(c, test::runFromRatios({r})));
        ResultsModel m;
        m.setEvaluation(ev);
        const QString t = cell(m, int(Family::Numerical), 0, ResultsModel::ObservedCol, Qt::ToolTipRole);
        QVERIFY2(t.contains("95 % interval of the true p50: [2, 9]"), qPrintable(t));
        QVERIFY2(t.contains("6 of 10 values above max 4.5"), qPrintable(t));
        QCOMPARE(cell(m, int(Family::Numerical), 0, ResultsModel::StatusCol), QString("fail"));   // 5.5 > 4.5
    }

    // Per-slice bars: a two-sided quantile interval is a whisker; a one-sided one is none
    // (an infinite end would stretch the value axis without limit).
    void sliceBarsWhiskers() {
        const double inf = INFINITY;
        Result a = numerical("N1", "p99", 0.3, 5000, {0.25, 0.36}, 40);
        a.slice = SliceLabels{{"task", "math"}};
        a.max = 0.2;
        Result b = numerical("N1", "p99", 0.5, 100, {0.4, inf}, 2);
        b.slice = SliceLabels{{"task", "code"}};
        b.max = 0.2;
        const auto bars = SliceBarsChart::barsOf({a, b}, "N1");
        QCOMPARE(bars.size(), size_t(2));
        QCOMPARE(*bars[0].lo, 0.25);
        QCOMPARE(*bars[0].hi, 0.36);
        QVERIFY(!bars[1].lo && !bars[1].hi);
        SliceBarsChart chart;
        chart.setResults({a, b}, "N1");
        const auto axes = chart.chart()->axes(Qt::Vertical);
        QVERIFY(!axes.isEmpty());
        const auto* axis = qobject_cast<QValueAxis*>(axes.first());
        QVERIFY(axis && std::isfinite(axis->max()) && axis->max() >= 0.5 && axis->max() < 1);
    }
};

QTEST_MAIN(TestResultsModel)
#include "test_results_model.moc"
