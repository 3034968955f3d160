// The window's charts: histogram bins, the scatter's downsampling, per-position means and
// the per-slice bars against numbers worked out by hand here, and background jobs that keep
// only the newest result. The panel in a session: test_charts_panel.cpp.
#include <QtTest/QSignalSpy>
#include <QtTest/QTest>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarLegendMarker>
#include <QtCharts/QBarSet>
#include <QtCharts/QLegend>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>
#include <QtCharts/QXYSeries>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/formats/run_writer.h"
#include "tests/support/test_runs.h"
#include "ui/charts/chart_data.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/histogram_chart.h"
#include "ui/charts/point_cloud_item.h"
#include "ui/charts/position_chart.h"
#include "ui/charts/scatter_chart.h"
#include "ui/charts/slice_bars_chart.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"
#include "ui/style/chart_style.h"
#include "ui/style/status_style.h"

using namespace kcx;
using namespace kcx::ui;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// A run whose log-ratios r = lp_train - lp_inf are given per sequence; slice key "task"
// with the given codes (-1 unlabeled).
std::shared_ptr<Run> runOf(const std::vector<std::vector<double>>& r, std::vector<int32_t> codes = {}) {
    auto run = test::runFromRatios(r, "");
    if (!codes.empty()) {
        run->slices.keys = {"task"};
        run->slices.values = {{"a", "b"}};
        run->slices.codes = std::move(codes);
    }
    return run;
}

const PositionSeries* seriesNamed(const PositionMeans& m, const std::string& label) {
    for (const auto& s : m.series)
        if (s.label == label)
            return &s;
    return nullptr;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b)); }

}  // namespace

class TestCharts : public QObject {
    Q_OBJECT
private slots:
    // ---- histogram bins ------------------------------------------------------------------
    void histogramLinearBins() {
        // 4 bins over [0, 1]: [0,.25) [.25,.5) [.5,.75) [.75,1]
        const std::vector<double> v{0, 0.1, 0.25, 0.5, 0.99, 1.0, missingDouble(), kNaN, kInf, -kInf};
        const Histogram h = computeHistogram(v, 4, false);
        QCOMPARE(h.counts, (std::vector<uint64_t>{2, 1, 1, 2}));
        QCOMPARE(h.shown, uint64_t(6));
        QCOMPARE(h.missing, uint64_t(1));
        QCOMPARE(h.nonfinite, uint64_t(3));
        QCOMPARE(h.nonpositive, uint64_t(0));
        QCOMPARE(h.edge(0), 0.0);
        QCOMPARE(h.edge(2), 0.5);
        QCOMPARE(h.edge(4), 1.0);
        QCOMPARE(h.maxCount(), uint64_t(2));
    }

    void histogramLogBins() {
        // log10 from -3 to 1 in 4 decades: [1e-3,1e-2) [1e-2,1e-1) [1e-1,1) [1,10]
        const std::vector<double> v{0.001, 0.003, 0.03, 0.05, 0.3, 3, 10, 0, -1, missingDouble()};
        const Histogram h = computeHistogram(v, 4, true);
        QCOMPARE(h.counts, (std::vector<uint64_t>{2, 2, 1, 2}));
        QCOMPARE(h.nonpositive, uint64_t(2));
        QCOMPARE(h.missing, uint64_t(1));
        QVERIFY(near(h.edge(0), 0.001));
        QVERIFY(near(h.edge(4), 10));
        QVERIFY(near(h.edge(1), 0.01));
    }

    void histogramOneValueAndNone() {
        const Histogram h = computeHistogram(std::vector<double>(5, 4.0), 3, false);
        QCOMPARE(h.counts, (std::vector<uint64_t>{0, 5, 0}));   // range [2, 6]
        QCOMPARE(h.edge(0), 2.0);
        const Histogram e = computeHistogram(std::vector<double>{kNaN, missingDouble()}, 3, false);
        QCOMPARE(e.shown, uint64_t(0));
        QCOMPARE(e.counts, (std::vector<uint64_t>{0, 0, 0}));
    }

    void histogramCancels() {
        std::vector<double> v(3'000'000, 1.0);
        QVERIFY_THROWS_EXCEPTION(Cancelled, computeHistogram(v, 10, false, [](double) { return false; }));
    }

    // Ten million values bin in the background; of two jobs only the newest is shown.
    void histogramChartBackgroundNewestWins() {
        auto big = std::make_shared<MetricValues>();
        big->values.resize(10'000'000);
        for (size_t i = 0; i < big->values.size(); ++i)
            big->values[i] = double(i % 1000) / 1000.0;
        auto small = std::make_shared<MetricValues>();
        small->values = {1, 2, 3};
        HistogramChart chart;
        QSignalSpy updated(&chart, &HistogramChart::updated);
        chart.setValues(big, "big");
        QVERIFY(chart.isBusy());
        QVERIFY(!chart.histogram());
        chart.setValues(small, "small");
        QTRY_VERIFY_WITH_TIMEOUT(!chart.isBusy(), 30000);
        QCOMPARE(updated.count(), 1);
        QCOMPARE(chart.histogram()->shown, uint64_t(3));

        chart.setValues(big, "big");
        QTRY_VERIFY_WITH_TIMEOUT(chart.histogram() != nullptr, 30000);
        const auto& c = chart.histogram()->counts;
        QCOMPARE(std::accumulate(c.begin(), c.end(), uint64_t(0)), uint64_t(10'000'000));
        QVERIFY(chart.caption().contains("10"));
    }

    // A threshold edit that keeps the same lines in view moves the line and nothing else:
    // the chart keeps its series (no Qt Charts rebuild on every edit, issue 17) and its
    // count scale; a value outside the x range rebuilds the chart with a wider axis.
    void histogramThresholdEditsMoveTheLineInPlace() {
        auto values = std::make_shared<MetricValues>();
        for (int i = 0; i < 1000; ++i)
            values->values.push_back(i / 1000.0);   // 0 .. 0.999
        HistogramChart chart;
        chart.setValues(values, "m");
        QTRY_VERIFY_WITH_TIMEOUT(chart.histogram() != nullptr, 30000);
        auto line = [&]() -> QXYSeries* {   // the threshold: the only two-point series at one x
            for (QAbstractSeries* a : chart.chart()->series())
                if (auto* x = qobject_cast<QXYSeries*>(a); x && x->count() == 2 && x->at(0).x() == x->at(1).x() &&
                                                          x->name().startsWith("N1 max"))
                    return x;
            return nullptr;
        };
        chart.setThresholds({ValueLine{"max", 0.5, true, "N1 max"}});
        QVERIFY(line());
        QCOMPARE(line()->at(0).x(), 0.5);
        // Marked objects: a rebuild makes new series (perhaps at the same addresses).
        const QList<QAbstractSeries*> before = chart.chart()->series();
        for (QAbstractSeries* a : before)
            a->setProperty("kcxTestMark", true);
        auto marked = [&] {
            const QList<QAbstractSeries*> now = chart.chart()->series();
            return now.size() == before.size() &&
                   std::all_of(now.begin(), now.end(), [](QAbstractSeries* a) { return a->property("kcxTestMark").toBool(); });
        };
        const bool logCount = chart.logCount();
        chart.setThresholds({ValueLine{"max", 0.97, true, "N1 max"}});   // in view, in the tail
        QVERIFY(marked());
        QCOMPARE(line()->at(0).x(), 0.97);
        QVERIFY(line()->name().contains("0.97"));
        QCOMPARE(chart.logCount(), logCount);   // the scale does not jump while editing
        QCOMPARE(chart.thresholds()[0].value, 0.97);
        chart.setThresholds({ValueLine{"max", 5.0, true, "N1 max"}});    // beyond the axis: rebuilt
        QVERIFY(!marked());
        QCOMPARE(line()->at(0).x(), 5.0);
        auto* ax = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
        QVERIFY(ax && ax->max() >= 5.0);
        // Another line (a new clause) rebuilds too.
        for (QAbstractSeries* a : chart.chart()->series())
            a->setProperty("kcxTestMark", true);
        chart.setThresholds({ValueLine{"level", 0.3, true, "S1 level"}});
        const QList<QAbstractSeries*> rebuilt = chart.chart()->series();
        QVERIFY(std::none_of(rebuilt.begin(), rebuilt.end(), [](QAbstractSeries* a) { return a->property("kcxTestMark").toBool(); }));
    }

    // ---- the scatter's sample ------------------------------------------------------------
    void scatterKeepsExtremesAndCaps() {
        // 100,000 tokens with |r| <= 0.01, 50 planted outliers with |r| in [1, 5], and 7
        // tokens whose inference log-prob is missing.
        const size_t m = 100'000;
        std::vector<double> r(m);
        uint64_t x = 12345;
        for (size_t i = 0; i < m; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            r[i] = (double(x >> 11) / 9007199254740992.0 - 0.5) * 0.02;
        }
        std::vector<size_t> planted;
        for (size_t j = 0; j < 50; ++j) {
            planted.push_back(j * 1999 + 17);
            r[planted.back()] = (j % 2 ? 1.0 : -1.0) * (1.0 + double(j) * 0.08);
        }
        auto run = runOf({r});
        std::vector<double> inf(run->lpInf.size());
        for (size_t i = 0; i < inf.size(); ++i)
            inf[i] = run->lpInf[i];
        const std::vector<size_t> missing{3, 500, 501, 7777, 50'000, 99'998, 99'999};
        for (size_t i : missing)
            inf[i] = missingDouble();
        run->lpInf = Column(Array<double>(inf));

        const ScatterSample s = sampleScatter(*run, 2000, 0.25);
        QVERIFY(s.index.size() <= 2000);
        QVERIFY(s.index.size() >= 1900);
        QCOMPARE(s.total, m);
        QCOMPARE(s.valid, m - missing.size());
        QVERIFY(std::is_sorted(s.index.begin(), s.index.end()));
        // The 500 largest |r| among valid tokens, found here by sorting.
        std::vector<size_t> order;
        for (size_t i = 0; i < m; ++i)
            if (!std::count(missing.begin(), missing.end(), i))
                order.push_back(i);
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return std::fabs(r[a]) > std::fabs(r[b]); });
        for (size_t k = 0; k < 500; ++k) {
            auto it = std::lower_bound(s.index.begin(), s.index.end(), order[k]);
            QVERIFY2(it != s.index.end() && *it == order[k], "an extreme token was sampled away");
            QCOMPARE(s.extreme[size_t(it - s.index.begin())], uint8_t(1));
        }
        for (size_t i : planted)
            QVERIFY(std::binary_search(s.index.begin(), s.index.end(), i));
        for (size_t i : missing)
            QVERIFY(!std::binary_search(s.index.begin(), s.index.end(), i));
        QCOMPARE(size_t(std::count(s.extreme.begin(), s.extreme.end(), 1)), size_t(500));
        // The probabilities are exp of the log-probs of the chosen tokens.
        for (size_t k = 0; k < s.index.size(); k += 97) {
            QCOMPARE(s.pTrain[k], std::exp(-1.0));
            QCOMPARE(s.pInf[k], std::exp(-1.0 - r[s.index[k]]));
        }
        // The even sample reaches the end of the run.
        QVERIFY(s.index.back() > m - 200);

        // Few tokens: all valid ones, none marked extreme.
        const ScatterSample all = sampleScatter(*runOf({{0.1, 0.2}, {kNaN, 0.3}}), 2000);
        QCOMPARE(all.index, (std::vector<size_t>{0, 1, 3}));
        QCOMPARE(std::count(all.extreme.begin(), all.extreme.end(), 1), 0);
    }

    void scatterChartDrawsAtMostTheCap() {
        std::vector<double> r(50'000);
        for (size_t i = 0; i < r.size(); ++i)
            r[i] = double(i % 101) / 1000.0;
        ScatterChart chart;
        chart.setMaxPoints(3000);
        chart.setRun(runOf({r}));
        QTRY_VERIFY_WITH_TIMEOUT(chart.sample() != nullptr, 30000);
        QVERIFY(chart.sample()->index.size() <= 3000);
        // The points are drawn by the cloud item, every sampled one; the series only name them.
        QCOMPARE(chart.cloud()->pointCount(), chart.sample()->index.size());
        for (QAbstractSeries* series : chart.chart()->series())
            if (series->type() == QAbstractSeries::SeriesTypeScatter)
                QCOMPARE(static_cast<QXYSeries*>(series)->count(), 0);
        chart.setLogLog(true);
        QCOMPARE(chart.chart()->axes(Qt::Horizontal).value(0)->type(), QAbstractAxis::AxisTypeLogValue);
    }

    // The cloud puts a point where Qt Charts itself would: mapToPosition() through the
    // diagonal series, on linear and on log axes; and the image has ink there, none far off.
    void scatterCloudPlacesPointsWhereQtChartsWould() {
        // One token, lp_train = -1 and lp_inf = -1.5: p_inf = e^-1.5, p_train = e^-1.
        const QPointF value(std::exp(-1.5), std::exp(-1.0));
        ScatterChart chart;
        chart.resize(500, 400);
        chart.show();
        chart.setRun(runOf({{0.5}}));
        QTRY_VERIFY_WITH_TIMEOUT(chart.sample() != nullptr, 30000);
        QCOMPARE(chart.cloud()->pointCount(), size_t(1));
        for (bool log : {false, true}) {
            chart.setLogLog(log);
            QApplication::processEvents();
            QXYSeries* diagonal = nullptr;
            for (QAbstractSeries* series : chart.chart()->series())
                if (series->type() == QAbstractSeries::SeriesTypeLine)
                    diagonal = static_cast<QXYSeries*>(series);
            QVERIFY(diagonal);
            const QPointF want = chart.chart()->mapToPosition(value, diagonal);
            const QPointF got = chart.cloud()->position(value);
            QVERIFY2(std::abs(want.x() - got.x()) < 0.5 && std::abs(want.y() - got.y()) < 0.5,
                     qPrintable(QStringLiteral("log %1: Qt Charts (%2, %3), cloud (%4, %5)")
                                    .arg(log).arg(want.x()).arg(want.y()).arg(got.x()).arg(got.y())));
            const QImage img = chart.cloud()->image();
            const QRectF area = chart.chart()->plotArea();
            QCOMPARE(img.size(), area.size().toSize());
            const QPoint at = (want - area.topLeft()).toPoint();
            QVERIFY(qAlpha(img.pixel(at)) > 0);
            QCOMPARE(qAlpha(img.pixel(img.width() - 1 - at.x() / 2, img.height() - 1)), 0);
        }
    }

    // A log axis keeps its minor grid only with 32 pixels a decade: [1, 1e6] is 6 decades,
    // so 192 pixels keep it and 191 do not; a plot not laid out yet (0) has no room; a
    // linear axis is left as it is.
    void logMinorGridOnlyWithRoom() {
        QLogValueAxis log;
        log.setBase(10);
        log.setRange(1, 1e6);
        log.setMinorTickCount(5);
        fitLogMinorGrid(&log, 192);
        QCOMPARE(log.minorTickCount(), -1);
        fitLogMinorGrid(&log, 191);
        QCOMPARE(log.minorTickCount(), 0);
        fitLogMinorGrid(&log, 1000);
        QCOMPARE(log.minorTickCount(), -1);
        fitLogMinorGrid(&log, 0);
        QCOMPARE(log.minorTickCount(), 0);
        log.setRange(1, 10);   // under a decade counts as one: 32 pixels are enough
        fitLogMinorGrid(&log, 32);
        QCOMPARE(log.minorTickCount(), -1);
        QValueAxis linear;
        linear.setMinorTickCount(3);
        fitLogMinorGrid(&linear, 0);
        QCOMPARE(linear.minorTickCount(), 3);
    }

    // Our nice numbers are Qt Charts' own: compared with QValueAxis::applyNiceNumbers().
    void niceRangeMatchesQtCharts() {
        const std::vector<std::pair<double, double>> ranges{{0, 1},        {0, 0.0123}, {-3.2, 17.9}, {0.5, 0.51},
                                                            {1e-7, 3e-5},  {0, 1e6},    {-1, -0.2},   {0, 0.1 * 1.08},
                                                            {0.02, 0.57}};
        for (const auto& [lo, hi] : ranges) {
            QValueAxis axis;
            axis.setTickCount(6);
            axis.setRange(lo, hi);
            axis.applyNiceNumbers();
            const NiceRange r = niceRange(lo, hi, 6);
            QVERIFY2(qFuzzyCompare(1 + r.lo, 1 + axis.min()) && qFuzzyCompare(1 + r.hi, 1 + axis.max()) &&
                         r.ticks == axis.tickCount(),
                     qPrintable(QStringLiteral("[%1, %2]: ours [%3, %4] %5 ticks, Qt [%6, %7] %8 ticks")
                                    .arg(lo).arg(hi).arg(r.lo).arg(r.hi).arg(r.ticks)
                                    .arg(axis.min()).arg(axis.max()).arg(axis.tickCount())));
        }
        // By hand: [0, 0.0123] spans 0.02 (ceiling), step 0.005 (0.02/5 = 0.004 -> 5e-3).
        const NiceRange h = niceRange(0, 0.0123, 6);
        QCOMPARE(h.lo, 0.0);
        QVERIFY(qFuzzyCompare(h.hi, 0.015));
        QCOMPARE(h.ticks, 4);
    }

    // ---- per-position means --------------------------------------------------------------
    void positionMeansByHand() {
        // Per-token values given directly (the metric array), sequences of lengths 3, 2, 4:
        //   s0 (task a): 1 2 3     s1 (task b): 10 20     s2 (unlabeled): 5 NaN 7 9
        auto run = runOf({{0, 0, 0}, {0, 0}, {0, 0, 0, 0}}, {0, 1, -1});
        const std::vector<double> v{1, 2, 3, 10, 20, 5, kNaN, 7, 9};

        const PositionMeans one = computePositionMeans(*run, v, 0, 10);
        QCOMPARE(one.binWidth, size_t(1));
        QCOMPARE(one.longest, size_t(4));
        QCOMPARE(one.series.size(), size_t(3));
        QCOMPARE(seriesNamed(one, "a")->mean, (std::vector<double>{1, 2, 3}));
        QCOMPARE(seriesNamed(one, "b")->mean, (std::vector<double>{10, 20}));
        const PositionSeries* u = seriesNamed(one, "(unlabeled)");
        QCOMPARE(u->x, (std::vector<double>{0, 2, 3}));   // position 1 has no value
        QCOMPARE(u->mean, (std::vector<double>{5, 7, 9}));

        // Two bins of two positions over all sequences: [0,2) and [2,4).
        const PositionMeans all = computePositionMeans(*run, v, -1, 2);
        QCOMPARE(all.binWidth, size_t(2));
        QCOMPARE(all.series.size(), size_t(1));
        QCOMPARE(all.series[0].label, std::string("all"));
        QCOMPARE(all.series[0].x, (std::vector<double>{0.5, 2.5}));
        QVERIFY(near(all.series[0].mean[0], (1 + 2 + 10 + 20 + 5) / 5.0));
        QVERIFY(near(all.series[0].mean[1], (3 + 7 + 9) / 3.0));
        QCOMPARE(all.series[0].count, (std::vector<uint64_t>{5, 3}));

        // Three bins for a longest sequence of 4: width ceil(4/3) = 2, so two bins.
        QCOMPARE(computePositionMeans(*run, v, -1, 3).binWidth, size_t(2));
    }

    void positionChartShowsOneLinePerSlice() {
        auto run = runOf({{0, 0, 0}, {0, 0}, {0, 0, 0, 0}}, {0, 1, -1});
        auto values = std::make_shared<MetricValues>();
        values->level = MetricLevel::Token;
        values->values = {1, 2, 3, 10, 20, 5, kNaN, 7, 9};
        PositionChart chart;
        chart.setSliceKey(0);
        Clause c;
        c.id = "N";
        c.metric = "x";
        c.aggregate = parseAggregate("max");
        c.max = Threshold{15, {}};
        chart.setThresholds(valueLines(c));
        chart.setData(run, values, "x");
        QTRY_VERIFY_WITH_TIMEOUT(chart.means() != nullptr, 10000);
        QStringList names;
        for (QAbstractSeries* s : chart.chart()->series())
            names << s->name();
        QCOMPARE(names, (QStringList{"a", "b", "(unlabeled)", "N max = 15"}));

        auto seq = std::make_shared<MetricValues>();
        seq->level = MetricLevel::Sequence;
        seq->values = {1, 2, 3};
        chart.setData(run, seq, "per_seq");
        QVERIFY(!chart.means());
        QVERIFY(chart.caption().contains("not a per-token metric"));
    }

    // ---- thresholds on the value axis -----------------------------------------------------
    void valueLinesOfClauses() {
        Clause n;
        n.id = "N1";
        n.family = Family::Numerical;
        n.metric = "abs_log_ratio";
        n.aggregate = parseAggregate("p99.9");
        n.max = Threshold{0.3, {}};
        auto l = valueLines(n);
        QCOMPARE(l.size(), size_t(1));
        QCOMPARE(l[0].which, std::string("max"));
        QCOMPARE(l[0].value, 0.3);
        QVERIFY(l[0].editable);

        n.aggregate = parseAggregate("fraction_above: 0.2");
        l = valueLines(n);
        QCOMPARE(l.size(), size_t(1));
        QCOMPARE(l[0].value, 0.2);
        QVERIFY(!l[0].editable);   // max is a fraction here, not a metric value

        Clause s;
        s.id = "S1";
        s.family = Family::Statistical;
        s.test = Clause::Test::Exceedance;
        s.level = Threshold{0.15, {}};
        s.max = Threshold{0.005, {}};
        l = valueLines(s);
        QCOMPARE(l.size(), size_t(1));
        QCOMPARE(l[0].which, std::string("level"));
        s.test = Clause::Test::Mean;
        s.min = Threshold{-0.02, {}};
        s.max = Threshold{0.02, {}};
        QCOMPARE(valueLines(s).size(), size_t(2));

        Clause r;
        r.family = Family::Runtime;
        r.max = Threshold{32, {}};
        QVERIFY(valueLines(r).empty());
    }

    // ---- per-slice bars ------------------------------------------------------------------
    void sliceBarsFromResults() {
        auto result = [](const std::string& task, double k, double n, double upper, Status st) {
            Result r;
            r.clause = "S1";
            r.family = Family::Statistical;
            r.metric = "abs_log_ratio";
            r.aggregate = "exceedance";
            r.observed = k / n;
            r.upper = upper;
            r.max = 0.005;
            r.n = uint64_t(n);
            r.status = st;
            r.slice = SliceLabels{{"task", task}};
            return r;
        };
        Result other;
        other.clause = "N1";
        const std::vector<Result> results{result("math", 2, 1000, 0.0049, Status::Pass), other,
                                          result("code", 9, 1000, 0.0150, Status::Fail),
                                          result("chat", 1, 100, 0.049, Status::Inconclusive)};
        SliceBarsChart chart;
        chart.show();   // legend markers are visible only in a shown legend
        chart.setResults(results, "S1");
        QCOMPARE(chart.bars().size(), size_t(3));
        QCOMPARE(chart.bars()[1].label, QString("code"));
        QCOMPARE(chart.sliceTitle(), QString("task"));
        QCOMPARE(chart.bars()[1].value, 0.009);
        QCOMPARE(*chart.bars()[1].lo, 0.009);
        QCOMPARE(*chart.bars()[1].hi, 0.015);
        QCOMPARE(chart.thresholds().size(), size_t(1));
        QCOMPARE(chart.thresholds()[0].second, 0.005);
        QVERIFY(chart.valueTitle().contains("above the level"));
        // One bar set per status, coloured by it, each non-zero only at its own slice.
        QAbstractBarSeries* bars = nullptr;
        int whiskers = 0, lines = 0;
        for (QAbstractSeries* s : chart.chart()->series()) {
            if (auto* b = qobject_cast<QAbstractBarSeries*>(s))
                bars = b;
            else if (s->name().startsWith("max"))
                ++lines;
            else
                ++whiskers;
        }
        QVERIFY(bars);
        // All four sets are there (a flipping verdict moves a bar, not the chart's
        // structure); only the statuses with a bar have a legend entry: not "error".
        auto checkSets = [&](const std::vector<Status>& want) {
            QApplication::processEvents();   // the legend shows its markers' visibility after layout
            QCOMPARE(bars->count(), 4);
            for (QBarSet* set : bars->barSets()) {
                const Status st = *parseStatus(set->label().toStdString());
                QCOMPARE(set->color(), statusColour(st));
                for (int i = 0; i < 3; ++i)
                    QCOMPARE(set->at(i), want[size_t(i)] == st ? chart.bars()[size_t(i)].value : 0.0);
                const bool present = std::find(want.begin(), want.end(), st) != want.end();
                for (QLegendMarker* m : chart.chart()->legend()->markers(bars))
                    if (static_cast<QBarLegendMarker*>(m)->barset() == set)
                        QVERIFY2(m->isVisible() == present, statusName(st));
            }
        };
        checkSets({Status::Pass, Status::Fail, Status::Inconclusive});
        QCOMPARE(whiskers, 3);
        QCOMPARE(lines, 1);

        // A threshold edit that flips "code" to pass and moves the line: the same objects
        // are updated (no rebuild), the bar changes colour, the line moves to 0.02.
        std::vector<Result> edited = results;
        for (Result& r : edited)
            if (r.clause == "S1") {
                r.max = 0.02;
                if (r.slice->at("task") == "code")
                    r.status = Status::Pass;
            }
        chart.setResults(edited, "S1");
        QCOMPARE(chart.chart()->series().value(0), static_cast<QAbstractSeries*>(bars));
        checkSets({Status::Pass, Status::Pass, Status::Inconclusive});
        for (QAbstractSeries* s : chart.chart()->series())
            if (s->name().startsWith("max")) {
                QCOMPARE(s->name(), QString("max = 0.02"));
                QCOMPARE(static_cast<QXYSeries*>(s)->at(0).y(), 0.02);
            }
        // The value axis now reaches past the line: 0.02 plus the 8 % pad, in nice numbers.
        const auto yAxis = chart.chart()->axes(Qt::Vertical).value(0);
        QVERIFY(axisRange(yAxis).second >= 0.02 * 1.08);

        // A mean test: the whisker is the bootstrap interval.
        Result mean;
        mean.clause = "S3";
        mean.family = Family::Statistical;
        mean.aggregate = "mean";
        mean.observed = -0.002;
        mean.ci = std::pair{-0.010, 0.006};
        mean.min = -0.02;
        mean.max = 0.02;
        chart.setResults({mean}, "S3");
        QCOMPARE(chart.bars()[0].label, QString("all"));
        QCOMPARE(*chart.bars()[0].lo, -0.010);
        QCOMPARE(*chart.bars()[0].hi, 0.006);
        QCOMPARE(chart.thresholds().size(), size_t(2));

        // Two slice keys: labels name them.
        Result two = results[0];
        two.slice = SliceLabels{{"task", "a"}, {"precision", "fp8"}};
        QString key = "x";
        const auto labelled = SliceBarsChart::barsOf({two}, "S1", &key);
        QCOMPARE(labelled[0].label, QString("precision=fp8, task=a"));
        QVERIFY(key.isEmpty());
    }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
