// The heatmap widget rendered offscreen (ui/heatmap/heatmap_view.h): pixel colours,
// threshold marks, clicks, zoom and recolouring, and many rows pooled onto few pixels,
// checked against the brute-force grid of tests/support/heatmap_runs.h.
#include <QSignalSpy>
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>

#include "tests/support/heatmap_runs.h"
#include "ui/heatmap/heatmap_render.h"
#include "ui/heatmap/heatmap_view.h"

using namespace kcx;
using namespace kcx::test;

class TestHeatmapWidget : public QObject {
    Q_OBJECT
private slots:
    // ---- the widget, offscreen -------------------------------------------------------
    void widgetRendersMarksAndClicks() {
        // Two slice rows x 4 positions; fixed linear range [0, 1]; threshold 0.45 on the means.
        const auto b = makeRun({{0.1, 0.2, 0.9, 0.4}, {0.5, 0.6, 0.3, 0.0}, {0.3, 0.2, 0.1, 0.0}}, {0, 1, 0},
                               {"x", "y"});
        ui::HeatmapView view;
        view.resize(640, 320);
        ui::ColourScale scale;
        scale.autoRange = false;
        scale.lo = 0;
        scale.hi = 1;
        view.setColourScale(scale);
        ui::CellStatistic stat;   // a clause on the mean with max 0.45
        stat.clause = "C1";
        stat.mark = HeatmapMark::Above;
        stat.markLevel = 0.45;
        view.setStatistic(stat);
        view.setRowMode({HeatmapRows::SliceValues, "task", ""});
        view.setData(b.run, b.values, "m");
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(!view.isBusy() && view.grid());
        const auto g = view.grid();
        QCOMPARE(g->rows, size_t(2));
        QCOMPARE(g->cols, size_t(4));
        const QRect plot = view.plotRect();
        const auto cellRect = [&](size_t r, size_t c) {
            const int x0 = int(ui::pixelOfCell(c, plot.width(), 4)), x1 = int(ui::pixelOfCell(c + 1, plot.width(), 4));
            const int y0 = int(ui::pixelOfCell(r, plot.height(), 2)), y1 = int(ui::pixelOfCell(r + 1, plot.height(), 2));
            return QRect(plot.left() + x0, plot.top() + y0, x1 - x0, y1 - y0);
        };
        const QImage shot = view.grab().toImage().convertToFormat(QImage::Format_RGB32);
        const auto table = ui::colourTable(ui::ColourMap::Viridis);
        const ui::LevelMapper levels(0, 1, false);
        // Row x, position 0: mean of 0.1 and 0.3.
        QCOMPARE(QColor(shot.pixel(cellRect(0, 0).center())), QColor(table[levels.level(0.2)]));
        QCOMPARE(QColor(shot.pixel(cellRect(1, 1).center())), QColor(table[levels.level(0.6)]));
        // Row x, position 2: mean 0.5 > 0.45, outlined in the marker colour, value inside.
        const QRect marked = cellRect(0, 2);
        QCOMPARE(QColor(shot.pixel(marked.center())), QColor(table[levels.level(0.5)]));
        QCOMPARE(QColor(shot.pixel(marked.left(), marked.center().y())), QColor(table[ui::kMarkerIndex]));
        QCOMPARE(QColor(shot.pixel(marked.center().x(), marked.bottom())), QColor(table[ui::kMarkerIndex]));
        const QRect plain = cellRect(0, 1);   // mean 0.2
        QVERIFY(QColor(shot.pixel(plain.left(), plain.center().y())) != QColor(table[ui::kMarkerIndex]));
        QCOMPARE(view.cellAt(marked.center()), (std::optional<std::pair<size_t, size_t>>{{0, 2}}));
        QVERIFY(view.toolTipAt(marked.center()).contains("n = 2"));
        QVERIFY(view.toolTipAt(marked.center()).contains("task=x"));

        // A click on row x, positions 2: s0 (0.9) beats s2 (0.1).
        QSignalSpy spy(&view, &ui::HeatmapView::sequenceActivated);
        QTest::mouseClick(&view, Qt::LeftButton, {}, marked.center());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<size_t>(), size_t(0));
        QTest::mouseClick(&view, Qt::LeftButton, {}, cellRect(1, 3).center());
        QCOMPARE(spy.count(), 2);
        QCOMPARE(spy.at(1).at(0).value<size_t>(), size_t(1));

        // Another colour map: the same image and grid, another colour table.
        const auto gridBefore = view.grid();
        scale.map = ui::ColourMap::Inferno;
        view.setColourScale(scale);
        QVERIFY(!view.isBusy());
        QCOMPARE(view.grid(), gridBefore);
        QCOMPARE(view.image().color(levels.level(0.2)), ui::colourTable(ui::ColourMap::Inferno)[levels.level(0.2)]);

        // Zoom in on the keyboard, pan with an arrow key, back with Home.
        QSignalSpy rendered(&view, &ui::HeatmapView::rendered);
        QTest::keyClick(&view, Qt::Key_Plus);
        QTRY_VERIFY(!view.isBusy() && rendered.count() > 0);
        QCOMPARE(view.grid()->colBins.width, size_t(3));   // 4 / 1.5, rounded
        QTest::keyClick(&view, Qt::Key_Right);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.begin == 1);
        QTest::keyClick(&view, Qt::Key_Home);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.width == 4);

        // Dragging pans instead of clicking.
        view.setView(0, 2, 0, 2);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.width == 2);
        spy.clear();
        const QPoint from = plot.center();
        QTest::mousePress(&view, Qt::LeftButton, {}, from);
        QTest::mouseMove(&view, from - QPoint(plot.width() / 2, 0));
        QTest::mouseRelease(&view, Qt::LeftButton, {}, from - QPoint(plot.width() / 2, 0));
        QCOMPARE(spy.count(), 0);
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.begin == 1);

        // A new limit re-marks the cached values without rebinning.
        view.resetView();
        QTRY_VERIFY(!view.isBusy() && view.grid()->colBins.width == 4);
        const auto valuesBefore = view.grid()->value;
        stat.markLevel = 0.55;
        view.setStatistic(stat);
        QTRY_VERIFY(!view.isBusy() && view.grid()->request.markLevel == 0.55);
        QCOMPARE(view.grid()->value, valuesBefore);
        QVERIFY(!view.grid()->marked(0, 2) && view.grid()->marked(1, 1));   // 0.5 and 0.6

        // Share above, a plain statistic: the values and the legend range change, and
        // nothing is marked (no clause bounds a share here).
        view.setThreshold(0.55);
        view.setAggregate(HeatmapAggregate::ShareAbove);
        QTRY_VERIFY(!view.isBusy() && view.grid()->request.aggregate == HeatmapAggregate::ShareAbove);
        QCOMPARE(view.grid()->value[view.grid()->at(0, 2)], 0.5);
        const QImage& img = view.image();   // shares are never marked
        for (int y = 0; y < img.height(); ++y)
            QVERIFY(std::none_of(img.scanLine(y), img.scanLine(y) + img.width(),
                                 [](uchar i) { return i == ui::kMarkerIndex; }));
    }

    // Many sequence rows on few pixels: rows are pooled, labels thinned, still exact.
    void widgetManyRows() {
        const auto b = randomRun(5);
        ui::HeatmapView view;
        view.resize(500, 260);
        view.setData(b.run, b.values, "m");
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(!view.isBusy() && view.grid());
        QCOMPARE(view.grid()->rows, std::min<size_t>(60, size_t(view.plotRect().height())));
        checkAgainstBruteForce(*view.index(), *b.run, b.values->values, view.grid()->request);
        QVERIFY(!view.grab().isNull());
    }
};

QTEST_MAIN(TestHeatmapWidget)
#include "test_heatmap_widget.moc"
