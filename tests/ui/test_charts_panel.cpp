// The charts panel in a session: a threshold drag on the histogram with the mouse is one
// undo step, and every chart of the panel on the demo run.
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

class TestChartsPanel : public QObject {
    Q_OBJECT
private slots:
    // ---- the panel: a drag with the mouse is one undo step ---------------------------------
    void panelDragIsOneUndoStep() {
        // 20 sequences of 50 tokens with |r| = 0.00 .. 0.99.
        std::vector<std::vector<double>> r(20, std::vector<double>(50));
        for (size_t s = 0; s < r.size(); ++s)
            for (size_t t = 0; t < 50; ++t)
                r[s][t] = double((s * 50 + t) % 100) / 100.0;
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.jsonl").toStdString();
        writeJsonl(*test::runFromRatios(r, ""), path);

        Session session;
        QSignalSpy loaded(&session, &Session::runLoaded);
        session.openRun(QString::fromStdString(path));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        QVERIFY(session.setContractText("kcx_contract: 1\nname: t\nnumerical:\n"
                                        "  - id: N1\n    metric: abs_log_ratio\n    aggregate: max\n    max: 0.5\n",
                                        "t.yaml"));
        QUndoStack undo;
        ChartsPanel panel(&session);
        panel.setUndoStack(&undo);
        panel.setClause("N1");
        QCOMPARE(panel.metric(), QString("abs_log_ratio"));
        panel.resize(900, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        HistogramChart* h = panel.histogramChart();
        QTRY_VERIFY_WITH_TIMEOUT(h->histogram() != nullptr, 30000);
        QCOMPARE(h->histogram()->shown, uint64_t(1000));
        QCOMPARE(h->thresholds().size(), size_t(1));
        QTest::qWait(100);   // let the chart lay out its plot area

        QWidget* viewport = h->chartView()->viewport();
        const QPoint start = h->positionOf(0.5);
        QVERIFY(viewport->rect().contains(start));
        QVERIFY(std::fabs(h->valueAt(start) - 0.5) < 0.01);
        QSignalSpy dragged(h, &HistogramChart::thresholdDragged);
        QSignalSpy finished(h, &HistogramChart::thresholdDragFinished);
        QSignalSpy changed(&session, &Session::thresholdChanged);

        const QPoint end = start + QPoint(110, 0);
        QTest::mousePress(viewport, Qt::LeftButton, Qt::NoModifier, start + QPoint(3, 0));
        for (int dx : {20, 45, 80, 100})
            QTest::mouseMove(viewport, start + QPoint(dx, 0));
        QTest::mouseRelease(viewport, Qt::LeftButton, Qt::NoModifier, end);

        const double expected = h->valueAt(end);
        QVERIFY(expected > 0.55 && expected < 0.99);
        QCOMPARE(dragged.count(), 5);
        QCOMPARE(finished.count(), 1);
        const quint64 gesture = dragged.first().at(1).toULongLong();
        for (const auto& args : dragged)
            QCOMPARE(args.at(1).toULongLong(), gesture);
        QCOMPARE(dragged.last().at(0).toDouble(), expected);
        QCOMPARE(h->draggedThreshold(), QString("max"));

        QCOMPARE(undo.count(), 1);   // five moves, one step
        auto* cmd = dynamic_cast<const ThresholdCommand*>(undo.command(0));
        QVERIFY(cmd);
        QCOMPARE(cmd->before(), 0.5);
        // The contract gets the pointer's value to 3 significant figures (0.7018 -> 0.702).
        const double snapped = std::round(expected * 1000) / 1000;
        QVERIFY(expected > 0.1 && expected < 1);   // (so 3 significant figures = 3 decimals)
        QCOMPARE(cmd->after(), snapped);
        QCOMPARE(*session.threshold("N1", "max"), snapped);
        QCOMPARE(changed.count(), 5);
        QCOMPARE(h->thresholds()[0].value, snapped);

        undo.undo();
        QCOMPARE(*session.threshold("N1", "max"), 0.5);
        QCOMPARE(h->thresholds()[0].value, 0.5);
        QCOMPARE(std::abs(h->positionOf(0.5).x() - start.x()) <= 1, true);

        // A press away from the line does nothing.
        QTest::mousePress(viewport, Qt::LeftButton, Qt::NoModifier, start + QPoint(60, 0));
        QTest::mouseRelease(viewport, Qt::LeftButton, Qt::NoModifier, start + QPoint(90, 0));
        QCOMPARE(undo.count(), 1);
        QCOMPARE(*session.threshold("N1", "max"), 0.5);
    }

    // The panel on the demo run, with the demo contract's S1 selected. Saves a picture of
    // each tab when KCX_CHARTS_SCREENSHOTS names a directory.
    void panelOnDemo() {
        Session session;
        QSignalSpy evaluated(&session, &Session::evaluated);
        QVERIFY(session.openContract(QStringLiteral(KCX_SOURCE_DIR "/resources/contracts/demo.yaml")));
        session.openDemo();
        QTRY_VERIFY_WITH_TIMEOUT(evaluated.count() > 0, 240000);
        QUndoStack undo;
        ChartsPanel panel(&session);
        panel.setUndoStack(&undo);
        panel.setClause("S1");
        QCOMPARE(panel.metric(), QString("abs_log_ratio"));
        QCOMPARE(panel.sliceKey(), QString("task"));
        panel.resize(1000, 640);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTRY_VERIFY_WITH_TIMEOUT(panel.histogramChart()->histogram() != nullptr, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(panel.scatterChart()->sample() != nullptr, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(panel.positionChart()->means() != nullptr, 60000);
        // S1's scope is `where: {precision: bf16}`: only bf16 tokens are binned.
        const Run& run = *session.run();
        const int precision = run.slices.keyIndex("precision");
        uint64_t bf16 = 0;
        for (size_t s = 0; s < run.sequenceCount(); ++s)
            if (const std::string* l = run.slices.label(s, size_t(precision)); l && *l == "bf16")
                bf16 += run.seqLength(s);
        QVERIFY(bf16 > 0 && bf16 < run.tokenCount());
        QCOMPARE(panel.histogramChart()->histogram()->shown, bf16);
        QVERIFY(panel.histogramChart()->chart()->title().contains("precision=bf16"));
        QVERIFY(panel.scatterChart()->sample()->index.size() <= 20000);
        QCOMPARE(panel.histogramChart()->thresholds().at(0).which, std::string("level"));
        // S1's results per task; the long_context task fails (docs in demo.yaml).
        const auto& bars = panel.sliceBarsChart()->bars();
        QCOMPARE(bars.size(), size_t(4));
        QVERIFY(std::any_of(bars.begin(), bars.end(), [](const SliceBar& b) { return b.status == Status::Fail; }));
        QCOMPARE(panel.positionChart()->means()->series.size(), size_t(4));

        panel.histogramChart()->setLogX(true);
        QTRY_VERIFY_WITH_TIMEOUT(panel.histogramChart()->histogram() && panel.histogramChart()->histogram()->logX, 60000);

        const QString dir = qEnvironmentVariable("KCX_CHARTS_SCREENSHOTS");
        if (dir.isEmpty())
            return;
        panel.scatterChart()->setLogLog(true);
        const char* names[] = {"histogram", "slices", "scatter", "position"};
        for (int i = 0; i < 4; ++i) {
            panel.tabs()->setCurrentIndex(i);
            QTest::qWait(300);
            QVERIFY(panel.grab().save(dir + "/charts_" + names[i] + ".png"));
        }
    }
};

QTEST_MAIN(TestChartsPanel)
#include "test_charts_panel.moc"
