// The main window end to end, offscreen: it opens the demo and settles, shows what the
// headless core computes, takes a typed threshold as one undo step, saves only the edited
// number, takes a mouse drag on the histogram as one undo step that Ctrl+Z reverts, and
// reloads a contract changed on disk.
#include <QDoubleSpinBox>
#include <QFile>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QtCharts/QChartView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeView>
#include <QUndoStack>
#include <QStatusBar>
#include <QHeaderView>
#include <QScrollBar>
#include <QLabel>
#include <QStackedWidget>
#include <QtTest/QTest>

#include "core/evaluate/evaluator.h"
#include "core/formats/loader.h"
#include "tests/support/qt_files.h"
#include "tests/support/window_demo.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/histogram_chart.h"
#include "ui/contract/contract_panel.h"
#include "ui/contract/results_model.h"
#include "ui/contract/verdict_banner.h"
#include "ui/discover/discover_panel.h"
#include "ui/heatmap/heatmap_panel.h"
#include "ui/heatmap/heatmap_view.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"
#include "ui/summary/summary_panel.h"
#include "ui/steps/steps_panel.h"
#include "ui/compare/compare_panel.h"
#include "core/steps/compare.h"
#include <random>
#include "core/steps/replay.h"
#include "core/steps/steps.h"
#include <QPushButton>
#include <QtCharts/QLineSeries>
#include "core/summary/summary.h"
#include "core/base/sha256.h"
#include "ui/window/main_window.h"

using namespace kcx;
using namespace kcx::ui;

namespace {
using kcx::test::demoContract;
using kcx::test::showDemo;
using kcx::test::writeAll;
const kcx::Result* find(const kcx::Evaluation& ev, const std::string& clause, const std::string& sliceValue = {}) {
    return kcx::test::findResult(ev, clause, sliceValue);
}

}  // namespace

class TestWindow : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private:
    // Writes `text` to `path`, opens it in `w` as a run slow enough to offer conversion
    // ($KCX_CONVERT_OFFER_MS=0 makes every load "slow"), and finds the offer's button.
    void openOfferingConversion(MainWindow& w, const QString& path, const QByteArray& text, QToolButton*& convert) {
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text);
        out.close();
        qputenv("KCX_CONVERT_OFFER_MS", "0");
        w.resize(1200, 800);
        w.show();
        QSignalSpy loaded(w.session(), &Session::runLoaded);
        w.openRun(path);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
        qunsetenv("KCX_CONVERT_OFFER_MS");
        for (auto* b : w.findChildren<QToolButton*>())
            if (b->text().startsWith("Convert to safetensors"))
                convert = b;
    }

private slots:
    void initTestCase() { qputenv("KCX_NO_DIALOGS", "1"); }

    void opensTheDemoAndAgreesWithTheCore() {
        MainWindow w;
        QVERIFY2(showDemo(w, {1400, 900}), qPrintable(w.settleState()));
        const auto& snap = w.session()->latest();
        QVERIFY(snap.evaluation);
        // `kcx check` and the window call the same code: a fresh one-shot evaluation of the
        // same run and contract gives the same statuses and observed values.
        const Evaluation core = evaluateContract(*snap.contract, snap.run);
        QCOMPARE(snap.evaluation->results.size(), core.results.size());
        for (size_t i = 0; i < core.results.size(); ++i) {
            QCOMPARE(snap.evaluation->results[i].status, core.results[i].status);
            QCOMPARE(snap.evaluation->results[i].observed, core.results[i].observed);
        }
        QCOMPARE(snap.evaluation->verdict, Status::Fail);   // docs/demo.md: the demo contract fails
        // The results tree shows every result.
        const ResultsModel* model = w.contractPanel()->model();
        int rows = 0;
        for (int f = 0; f < model->rowCount(); ++f)
            rows += model->rowCount(model->index(f, 0));
        QCOMPARE(size_t(rows), core.results.size());
        QVERIFY(!w.grab().isNull());
    }

    // Type a new max for N1 (the FP8 tail clause) into its spin box: one undo step, the
    // clause passes, and undo brings the failure back.
    void typedThresholdIsOneUndoStep() {
        const QString path = dir_.path() + "/demo.yaml";
        MainWindow w;
        QVERIFY2(showDemo(w, {1400, 900}, path), qPrintable(w.settleState()));
        const Result* n1 = find(*w.session()->latest().evaluation, "N1", "fp8");
        QVERIFY(n1 && n1->status == Status::Fail && n1->observed);
        const double observed = *n1->observed;

        w.contractPanel()->selectClause(QStringLiteral("N1"));
        // The editor is shown once the layout has run; wait for it rather than race it.
        const auto findSpin = [&w]() -> QDoubleSpinBox* {
            for (auto* s : w.findChildren<QDoubleSpinBox*>())
                if (s->accessibleName() == QLatin1String("max") && s->isVisible())
                    return s;
            return nullptr;
        };
        QTRY_VERIFY(findSpin() != nullptr);
        QDoubleSpinBox* spin = findSpin();
        const double before = spin->value();
        QVERIFY(before < observed);
        spin->setFocus();
        QTRY_VERIFY(spin->hasFocus());
        spin->selectAll();
        const QString typed = QString::number(observed + 0.05, 'f', 4);
        QTest::keyClicks(spin, typed);
        QTest::keyClick(spin, Qt::Key_Return);
        QCOMPARE(w.undoStack()->count(), 1);
        QCOMPARE(*w.session()->threshold("N1", "max"), typed.toDouble());
        QTRY_VERIFY_WITH_TIMEOUT(!w.session()->evaluating() && w.session()->latest().contract->find("N1")->max->value == typed.toDouble(), 60000);
        QCOMPARE(find(*w.session()->latest().evaluation, "N1", "fp8")->status, Status::Pass);
        QVERIFY(w.isWindowModified());   // the title shows "*" through its [*] placeholder

        w.undoStack()->undo();
        QCOMPARE(*w.session()->threshold("N1", "max"), before);
        QTRY_VERIFY_WITH_TIMEOUT(!w.session()->evaluating() && w.session()->latest().contract->find("N1")->max->value == before, 60000);
        QCOMPARE(find(*w.session()->latest().evaluation, "N1", "fp8")->status, Status::Fail);
        QTRY_COMPARE(spin->value(), before);   // the editor follows undo

        // Redo and save: only that number changes in the file.
        w.undoStack()->redo();
        QCOMPARE(w.session()->saveContract(), QString());
        w.undoStack()->setClean();
        QVERIFY(!w.isWindowModified());
        QFile saved(path);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        const QByteArray after = saved.readAll();
        const QByteArray original = demoContract();
        QVERIFY(after != original);
        QCOMPARE(after.size() - original.size(), typed.size() - QString::number(before).size());
        const Contract reread = parseContract(after.toStdString(), "demo.yaml");
        QCOMPARE(reread.find("N1")->max->value, typed.toDouble());
    }

    // The GUI test: open the demo, drag N1's threshold on the histogram past the
    // fp8 slice's observed p99.9 with the mouse, see the clause and the verdict banner
    // change, and see Ctrl+Z restore them, the drag being one undo step.
    void dragThresholdPastObservedAndUndo() {
        const QString path = dir_.path() + "/drag.yaml";
        MainWindow w;
        QVERIFY2(showDemo(w, {1400, 900}, path), qPrintable(w.settleState()));
        const Result* n1 = find(*w.session()->latest().evaluation, "N1", "fp8");
        QVERIFY(n1 && n1->status == Status::Fail && n1->observed);
        const double observed = *n1->observed, before = *w.session()->threshold("N1", "max");
        QVERIFY(before < observed);
        // What the window shows before: N1/fp8 failing in the table, the banner's counts.
        const ResultsModel* model = w.contractPanel()->model();
        auto tableStatus = [&] {
            for (int f = 0; f < model->rowCount(); ++f)
                for (int r = 0; r < model->rowCount(model->index(f, 0)); ++r) {
                    const QModelIndex i = model->index(r, 0, model->index(f, 0));
                    if (i.data(ResultsModel::ClauseIdRole).toString() == "N1" &&
                        model->index(r, ResultsModel::SliceCol, model->index(f, 0)).data().toString().contains("fp8"))
                        return Status(i.data(ResultsModel::StatusRole).toInt());
                }
            return Status::Error;
        };
        QCOMPARE(tableStatus(), Status::Fail);
        auto* banner = w.findChild<VerdictBanner*>();
        QVERIFY(banner);
        const QString countsBefore = banner->countsText();

        // Select N1; its threshold line appears on the histogram of abs_log_ratio.
        w.contractPanel()->selectClause(QStringLiteral("N1"));
        auto* charts = w.findChild<ChartsPanel*>();
        QVERIFY(charts);
        QCOMPARE(charts->clause(), QString("N1"));
        if (auto* tabs = qobject_cast<QTabWidget*>(charts->parentWidget()->parentWidget()))
            tabs->setCurrentWidget(charts);
        HistogramChart* h = charts->histogramChart();
        QTRY_VERIFY_WITH_TIMEOUT(h->histogram() != nullptr && h->thresholds().size() == 1, 60000);
        QTest::qWait(100);   // the chart lays out its plot area
        QWidget* viewport = h->chartView()->viewport();
        QVERIFY(viewport->isVisible());

        // Press on the line at `before`, move in steps, release 12 px right of `observed`.
        const QPoint start = h->positionOf(before), pastObserved = h->positionOf(observed) + QPoint(12, 0);
        QVERIFY(viewport->rect().contains(start) && viewport->rect().contains(pastObserved));
        QVERIFY(pastObserved.x() > start.x());
        QTest::mousePress(viewport, Qt::LeftButton, Qt::NoModifier, start + QPoint(2, 0));
        for (int k = 1; k <= 4; ++k)
            QTest::mouseMove(viewport, start + (pastObserved - start) * k / 5);
        QTest::mouseRelease(viewport, Qt::LeftButton, Qt::NoModifier, pastObserved);

        const double dropped = *w.session()->threshold("N1", "max");
        QVERIFY2(dropped > observed, qPrintable(QStringLiteral("dropped at %1, observed %2").arg(dropped).arg(observed)));
        QCOMPARE(w.undoStack()->count(), 1);   // five moves, one step
        QTRY_VERIFY_WITH_TIMEOUT(!w.session()->evaluating() &&
                                     w.session()->latest().contract->find("N1")->max->value == dropped, 60000);
        QCOMPARE(find(*w.session()->latest().evaluation, "N1", "fp8")->status, Status::Pass);
        QTRY_COMPARE(tableStatus(), Status::Pass);
        QTRY_VERIFY(banner->countsText() != countsBefore);

        // Ctrl+Z, as a user would: the threshold, the clause, the table, the banner and
        // the histogram's line all come back.
        w.activateWindow();
        QTest::keyClick(&w, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(*w.session()->threshold("N1", "max"), before);
        QTRY_VERIFY_WITH_TIMEOUT(!w.session()->evaluating() &&
                                     w.session()->latest().contract->find("N1")->max->value == before, 60000);
        QCOMPARE(find(*w.session()->latest().evaluation, "N1", "fp8")->status, Status::Fail);
        QTRY_COMPARE(tableStatus(), Status::Fail);
        QTRY_COMPARE(banner->countsText(), countsBefore);
        QCOMPARE(h->thresholds().at(0).value, before);
    }

    // A run without a header (SPEC 1.3 makes it optional) opens and settles; the status
    // bar once threw on it, and the exception vanished inside the load's continuation.
    void opensARunWithoutHeader() {
        const QString path = dir_.path() + "/bare.jsonl";
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write("{\"id\": \"a\", \"tokens\": [1, 2], \"logp_train\": [-1, -2], \"logp_inf\": [-1.5, -2]}\n");
        out.close();
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        QSignalSpy loaded(w.session(), &Session::runLoaded);
        w.openRun(path);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
        QTRY_VERIFY2_WITH_TIMEOUT(w.settled(), qPrintable(w.settleState()), 20000);
        QCOMPARE(w.session()->run()->tokenCount(), size_t(2));
    }

    // A run read from a slow format: the status bar offers a safetensors copy, which reads
    // back with the same numbers. ($KCX_CONVERT_OFFER_MS=0 makes every load "slow".)
    void offersToConvertASlowRun() {
        MainWindow w;
        QToolButton* convert = nullptr;
        openOfferingConversion(w, dir_.path() + "/slow.jsonl",
                               "{\"id\": \"a\", \"tokens\": [1, 2, 3], \"logp_train\": [-1, -2, -0.5], "
                               "\"logp_inf\": [-1.5, -2, -0.25]}\n",
                               convert);
        QVERIFY(convert && convert->isVisible());
        QSignalSpy converted(&w, &MainWindow::runConverted);
        convert->click();
        QTRY_COMPARE_WITH_TIMEOUT(converted.size(), 1, 20000);
        QCOMPARE(converted.at(0).at(0).toString(), dir_.path() + "/slow.safetensors");
        const Run back = loadRun((dir_.path() + "/slow.safetensors").toStdString());
        QCOMPARE(back.tokenCount(), size_t(3));
        QCOMPARE(back.lpInf[2], -0.25);
        QCOMPARE(back.lpTrain[0], -1.0);
        QVERIFY(!convert->isVisible());
    }

    // Issue 16: converting never writes over the run itself. Here the suggested output name
    // is a link to the run (as a name typed in the dialog could be): refused by name, and
    // the run is byte for byte what it was.
    void convertNeverWritesOverTheRun() {
        const QString path = dir_.path() + "/linked.jsonl";
        const QByteArray text =
            "{\"id\": \"a\", \"tokens\": [1, 2], \"logp_train\": [-1, -2], \"logp_inf\": [-1.5, -2]}\n";
        QVERIFY(QFile::link(path, dir_.path() + "/linked.safetensors"));
        MainWindow w;
        QToolButton* convert = nullptr;
        openOfferingConversion(w, path, text, convert);
        QVERIFY(convert && convert->isVisible());
        QSignalSpy converted(&w, &MainWindow::runConverted);
        convert->click();
        QTest::qWait(300);
        QCOMPARE(converted.size(), 0);
        const QString shown = w.statusBar()->currentMessage();
        QVERIFY2(shown.contains("refusing") && shown.contains("run"), qPrintable(shown));
        QFile back(path);
        QVERIFY(back.open(QIODevice::ReadOnly));
        QCOMPARE(back.readAll(), text);
        QVERIFY(QFileInfo(dir_.path() + "/linked.safetensors").isSymLink());
    }

    // "Where is it hiding?" on the demo: the search runs in the background and ranks the
    // FP8 traffic first (docs/demo.md: the fp8 kernel is what drifts); activating the
    // finding shows its sequences in the heatmap.
    void discoverTabOnTheDemo() {
        MainWindow w;
        QVERIFY2(showDemo(w, {1400, 900}), qPrintable(w.settleState()));
        auto* panel = w.findChild<DiscoverPanel*>();
        QVERIFY(panel);
        QSignalSpy searched(panel, &DiscoverPanel::searched);
        panel->search();
        QTRY_COMPARE_WITH_TIMEOUT(searched.size(), 1, 120000);
        const Discovery& d = panel->discovery();
        QVERIFY(d.tested > 0);
        QVERIFY(!d.findings.empty());
        const auto& top = d.findings.front().conditions;
        QVERIFY(std::any_of(top.begin(), top.end(), [](const SliceCondition& c) { return c.key == "precision" && c.value == "fp8"; }));
        // A finding opens as a heatmap row against the rest of the run, and its row holds
        // exactly the values that the finding's conditions select (counted here from the
        // run's labels and positions), zoomed to its position range when it has one. The
        // top finding, then one with a position range.
        HeatmapView* view = w.heatmapPanel()->view();
        const std::vector<SliceCondition> withPositions{{"precision", "fp8", std::nullopt, {}},
                                                        {"derived.pos_bucket", "pos_64_256", std::nullopt, {}}};
        // ... and a dyadic range of the search (issue 20), which no slice key names.
        const std::vector<SliceCondition> withRange{{"precision", "fp8", std::nullopt, {}},
                                                    {"positions", "[16, 32)", std::pair<int64_t, int64_t>(16, 32), {}}};
        for (const auto& conditions : {top, withPositions, withRange}) {
            emit panel->findingActivated(conditions);
            QTRY_COMPARE(view->rowMode().mode, HeatmapRows::Conditions);
            QTRY_COMPARE(view->rowMode().conditions.size(), conditions.size());
            QTRY_VERIFY2_WITH_TIMEOUT(w.settled(), qPrintable(w.settleState()), 120000);
            const auto ix = view->index();
            QVERIFY(ix);
            QCOMPARE(ix->spec().conditions.size(), conditions.size());
            QVERIFY(QString::fromStdString(ix->row(0).label).contains("precision=fp8"));
            QCOMPARE(ix->row(ix->rowCount() - 1).label, std::string("(rest of the run)"));
            const Run& run = ix->run();
            const auto& v = ix->values().values;
            uint64_t want = 0;
            bool countable = true;
            for (size_t s = 0; s < run.sequenceCount(); ++s)
                for (size_t t = 0; t < run.seqLength(s); ++t) {
                    bool in = true;
                    for (const auto& c : conditions) {
                        if (c.key == "derived.pos_bucket" || c.positions) {
                            const auto range = DiscoverPanel::positionRange({c});
                            in = in && t >= range->first && t < range->second;
                        } else if (c.key.rfind("derived.", 0) == 0) {
                            countable = false;
                        } else {
                            const std::string* label = run.slices.label(s, size_t(run.slices.keyIndex(c.key)));
                            in = in && label && *label == c.value;
                        }
                    }
                    want += in && !std::isnan(v[run.seqBegin(s) + t]);
                }
            QVERIFY(want > 0);
            if (countable)
                QCOMPARE(ix->row(0).n, want);
            if (const auto range = DiscoverPanel::positionRange(conditions)) {
                QTRY_VERIFY(view->grid());
                QCOMPARE(view->grid()->colBins.begin, range->first);
                QVERIFY(view->grid()->colBins.begin + view->grid()->colBins.width <= range->second);
            }
        }
        if (const QString shot = qEnvironmentVariable("KCX_WINDOW_SCREENSHOT"); !shot.isEmpty()) {
            w.findChild<QTabWidget*>()->setCurrentWidget(panel);
            QTRY_VERIFY2_WITH_TIMEOUT(w.settled(), qPrintable(w.settleState()), 120000);
            QVERIFY(w.grab().save(shot));
        }
    }

    // Issue 15: status messages are visible. The run's label sits at the right of the bar
    // and leaves its left part to messages, even at 1024x700.
    void statusMessagesHaveRoom() {
        MainWindow w;
        QVERIFY2(showDemo(w, {1024, 700}), qPrintable(w.settleState()));
        QLabel* runInfo = nullptr;
        for (auto* l : w.statusBar()->findChildren<QLabel*>())
            if (l->text().contains("sequences"))
                runInfo = l;
        QVERIFY(runInfo && runInfo->isVisible());
        w.statusBar()->showMessage("Saved gate.yaml");
        QCOMPARE(w.statusBar()->currentMessage(), QString("Saved gate.yaml"));
        const int messageRoom = runInfo->geometry().left();
        QVERIFY2(messageRoom >= w.statusBar()->fontMetrics().horizontalAdvance("Saved gate.yaml") + 20,
                 qPrintable(QString("the run label starts at x=%1 of %2").arg(messageRoom).arg(w.statusBar()->width())));
    }

    // Issue 15: usable at 1024x700. In the results table the columns a reviewer reads
    // (Status, Observed, Threshold, Action) lie wholly inside the viewport without
    // scrolling, and no cell's text in them is wider than its column; every detail tab's
    // title is whole (the tab bar scrolls rather than eliding).
    void resultsFitAt1024() {
        MainWindow w;
        QVERIFY2(showDemo(w, {1024, 700}), qPrintable(w.settleState()));
        QTreeView* view = w.contractPanel()->view();
        QTRY_VERIFY(view->model()->rowCount() > 0);
        QCoreApplication::processEvents();
        QHeaderView* header = view->header();
        QCOMPARE(view->horizontalScrollBar()->value(), 0);
        for (int col : {ResultsModel::StatusCol, ResultsModel::ObservedCol, ResultsModel::ThresholdCol, ResultsModel::ActionCol}) {
            const int right = header->sectionViewportPosition(col) + header->sectionSize(col);
            QVERIFY2(header->sectionViewportPosition(col) >= 0 && right <= view->viewport()->width(),
                     qPrintable(QString("column %1 ends at %2 of %3").arg(col).arg(right).arg(view->viewport()->width())));
            const QAbstractItemModel* m = view->model();
            for (int f = 0; f < m->rowCount(); ++f)
                for (int r = 0; r < m->rowCount(m->index(f, 0)); ++r) {
                    const QString text = m->index(r, col, m->index(f, 0)).data().toString();
                    const int need = view->fontMetrics().horizontalAdvance(text) + (col == ResultsModel::StatusCol ? 22 : 0);
                    QVERIFY2(need <= header->sectionSize(col),
                             qPrintable(QString("\"%1\" needs %2 px, its column has %3").arg(text).arg(need).arg(header->sectionSize(col))));
                }
        }
        auto* tabs = w.findChild<QTabWidget*>();
        QVERIFY(tabs);
        QCOMPARE(tabs->elideMode(), Qt::ElideNone);
        QVERIFY(w.showDetailTab("where is it hiding?"));
        QVERIFY(!w.showDetailTab("no such tab"));
    }

    // A summary opens (SPEC 10): the results come from its cells, the summary page replaces
    // the heatmap and shows the grid, the steps and the worst tokens with where the raw data
    // are, and a dragged threshold re-evaluates from the summary and undoes.
    void opensASummary() {
        // 36 sequences over 3 steps, task a or b; |log ratio| is 0.001·(q mod 7) per token,
        // plus 0.05 on task b at step 2.
        const QString runPath = dir_.path() + "/steps.jsonl";
        QByteArray jsonl;
        long double sumA = 0, sumB = 0;
        double nA = 0, nB = 0, worst = 0;
        std::string worstId;
        for (int q = 0; q < 36; ++q) {
            const int step = q % 3, T = 10 + q;
            const bool b = q % 2 == 1;
            const double d = 0.001 * (q % 7) + (b && step == 2 ? 0.05 : 0);
            QByteArray train = "[", inf = "[", tokens = "[";
            for (int t = 0; t < T; ++t) {
                const double x = -1 - 0.01 * t;
                train += (t ? "," : "") + QByteArray::number(x, 'g', 17);
                inf += (t ? "," : "") + QByteArray::number(x - d, 'g', 17);
                tokens += t ? ",1" : "1";
                const double v = std::fabs(x - (x - d));   // as the run will hold it
                (b ? sumB : sumA) += v;
                (b ? nB : nA) += 1;
                if (v > worst)
                    worst = v, worstId = QByteArray("q").append(QByteArray::number(q)).toStdString();
            }
            jsonl += "{\"id\": \"q" + QByteArray::number(q) + "\", \"step\": " + QByteArray::number(step) +
                     ", \"slices\": {\"task\": \"" + (b ? "b" : "a") + "\"}, \"tokens\": " + tokens +
                     "], \"logp_train\": " + train + "], \"logp_inf\": " + inf + "]}\n";
        }
        writeAll(runPath, jsonl);
        const double meanA = double(sumA / nA), meanB = double(sumB / nB);
        const QString sumPath = dir_.path() + "/steps.kcxsum";
        {
            auto run = std::make_shared<const Run>(loadRun(runPath.toStdString()));
            RunSummary summary = summarizeRun(run);
            summary.inputs.push_back({runPath.toStdString(), sha256File(runPath.toStdString()), run->sequenceCount(),
                                      run->tokenCount()});
            writeSummary(summary, sumPath.toStdString());
        }
        // The limit lies between the two tasks' means: b fails, a passes.
        const double limit = 0.5 * (meanA + meanB);
        const QString contractPath = dir_.path() + "/steps.yaml";
        writeAll(contractPath, QByteArray("kcx_contract: 1\nname: steps\nversion: \"1\"\nnumerical:\n  - id: N1\n"
                                          "    metric: abs_log_ratio\n    aggregate: mean\n    max: ") +
                                   QByteArray::number(limit, 'g', 17) + "\n    per_slice: task\n");
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openContract(contractPath));
        QSignalSpy loaded(w.session(), &Session::summaryLoaded);
        w.openRun(sumPath);
        QTRY_VERIFY2_WITH_TIMEOUT(loaded.size() == 1, qPrintable(w.session()->loadError()), 20000);
        QTRY_VERIFY2_WITH_TIMEOUT(w.settled(), qPrintable(w.settleState()), 20000);
        QVERIFY(!w.session()->run());
        QVERIFY(w.summaryPanel()->isVisible());
        QVERIFY(!w.heatmapPanel()->isVisible());
        auto statusOf = [&](const std::string& task) {
            const Result* r = find(*w.session()->latest().evaluation, "N1", task);
            return r ? r->status : Status::Error;
        };
        QCOMPARE(statusOf("a"), Status::Pass);
        QCOMPARE(statusOf("b"), Status::Fail);
        QVERIFY(std::fabs(*find(*w.session()->latest().evaluation, "N1", "b")->observed - meanB) <= 1e-12 * meanB);

        // The page: the clause's metric and statistic by its slice key; the b row's mean.
        SummaryPanel* page = w.summaryPanel();
        w.contractPanel()->selectClause("N1");
        QTRY_VERIFY(page->isDrawn() && page->rowKey() == "task");
        const SummaryGrid* g = page->grid();
        QCOMPARE(g->rows, (std::vector<std::string>{"all", "a", "b"}));
        QVERIFY(std::fabs(g->value(2, 0) - meanB) <= 1e-12 * meanB);
        QVERIFY(std::fabs(g->value(1, 0) - meanA) <= 1e-12 * meanA);
        page->selectCell(2, 0);
        QCOMPARE(page->steps().size(), size_t(3));
        QVERIFY(page->steps()[2].value > page->steps()[0].value + 0.04);   // the rise at step 2
        QVERIFY(!page->worst().empty());
        QCOMPARE(page->worst()[0].value, worst);
        QCOMPARE(page->worst()[0].id, worstId);
        QVERIFY2(page->worstNote().contains(runPath), qPrintable(page->worstNote()));

        // Drag the limit above b's mean: re-evaluated from the summary; undo brings it back.
        w.undoStack()->push(new ThresholdCommand(w.session(), "N1", "max", limit, meanB * 1.01, ThresholdCommand::newGesture()));
        QTRY_VERIFY_WITH_TIMEOUT(!w.session()->evaluating() && w.session()->latest().contract->find("N1")->max->value == meanB * 1.01, 20000);
        QCOMPARE(statusOf("b"), Status::Pass);
        w.undoStack()->undo();
        QTRY_VERIFY_WITH_TIMEOUT(!w.session()->evaluating() && w.session()->latest().contract->find("N1")->max->value == limit, 20000);
        QCOMPARE(statusOf("b"), Status::Fail);

        // A run opened after the summary brings the heatmap back.
        QSignalSpy runLoaded(w.session(), &Session::runLoaded);
        w.openRun(runPath);
        QTRY_COMPARE_WITH_TIMEOUT(runLoaded.size(), 1, 20000);
        QVERIFY(!w.session()->summary());
        QTRY_VERIFY(w.heatmapPanel()->isVisible());
        QVERIFY(!page->isVisible());
    }

    // The "Over steps" tab (issue 20): task b's mean rises by 0.05 from step 12 of 24; the
    // clause's limit 0.02 fails it from there, and the escalation rule needs 2 failing steps
    // of 2, so the replay warns at 12 and blocks from 13. A drag of the limit above the rise
    // passes every step.
    void overStepsTab() {
        const QString runPath = dir_.path() + "/rise.jsonl";
        QByteArray jsonl;
        for (int step = 0; step < 24; ++step)
            for (int i = 0; i < 6; ++i) {
                const int q = step * 6 + i;
                const bool b = i % 2 == 1;
                QByteArray train = "[", inf = "[", tokens = "[";
                for (int t = 0; t < 20; ++t) {
                    const double d = 0.001 * ((q * 7 + t) % 5) + (b && step >= 12 ? 0.05 : 0);
                    train += (t ? "," : "") + QByteArray::number(-1.0, 'g', 17);
                    inf += (t ? "," : "") + QByteArray::number(-1.0 - d, 'g', 17);
                    tokens += t ? ",1" : "1";
                }
                jsonl += "{\"id\": \"q" + QByteArray::number(q) + "\", \"step\": " + QByteArray::number(step) +
                         ", \"slices\": {\"task\": \"" + (b ? "b" : "a") + "\"}, \"tokens\": " + tokens +
                         "], \"logp_train\": " + train + "], \"logp_inf\": " + inf + "]}\n";
            }
        writeAll(runPath, jsonl);
        const QString contractPath = dir_.path() + "/rise.yaml";
        writeAll(contractPath, QByteArray("kcx_contract: 1\nname: rise\nnumerical:\n  - id: N1\n"
                                          "    metric: abs_log_ratio\n    aggregate: mean\n    max: 0.02\n"
                                          "    per_slice: task\nescalation:\n  - when: {clause: N1}\n"
                                          "    persist: {failures: 2, window: 2}\n    action: block_promotion\n"));
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openContract(contractPath));
        QSignalSpy loaded(w.session(), &Session::runLoaded);
        w.openRun(runPath);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
        QVERIFY(w.showDetailTab("Over steps"));
        StepsPanel* panel = w.stepsPanel();
        w.contractPanel()->selectClause("N1");
        QTRY_VERIFY2_WITH_TIMEOUT(w.settled() && panel->steps() && panel->replay(), qPrintable(w.settleState()), 20000);
        // The series: one per task; b's onset at 12, none in a.
        const auto steps = panel->steps();
        QCOMPARE(steps->series.size(), size_t(2));
        QCOMPARE(steps->series[0].slice[0].second, std::string("a"));
        QVERIFY(!steps->series[0].onsetStep);
        QCOMPARE(steps->series[1].onsetStep, std::optional<int64_t>(12));
        QCOMPARE(steps->series[1].steps.size(), size_t(24));
        // b's mean at step 12, from the tokens: 0.05 plus 0.001·((7q + t) mod 5) averaged
        double sum = 0;
        for (int i : {1, 3, 5})
            for (int t = 0; t < 20; ++t)
                sum += std::fabs(-1.0 - (-1.0 - (0.001 * (((12 * 6 + i) * 7 + t) % 5) + 0.05)));
        QVERIFY(std::fabs(*steps->series[1].steps[12].value - sum / 60) < 1e-12);
        bool marker = false;
        for (QAbstractSeries* s : panel->chart()->series())
            marker = marker || s->name().contains("onset task=b (step 12)");
        QStringList names;
        for (QAbstractSeries* s : panel->chart()->series())
            names << s->name();
        QVERIFY2(marker, qPrintable(names.join(" | ")));
        // The replay: warn at 12 (one failing step of the 2 the rule needs), block from 13.
        auto actionAt = [&](size_t j) { return panel->replay()->steps[j].actions.at("offline_ci"); };
        QCOMPARE(panel->replay()->steps.size(), size_t(24));
        QCOMPARE(actionAt(11), Action::Pass);
        QCOMPARE(actionAt(12), Action::Warn);
        QCOMPARE(actionAt(13), Action::BlockPromotion);
        QCOMPARE(actionAt(23), Action::BlockPromotion);
        // A flagged step opens its worst token: a b sequence of step 12.
        QSignalSpy opened(panel, &StepsPanel::sequenceActivated);
        panel->selectStep(12);
        QVERIFY(panel->openWorstButton()->isEnabled());
        panel->openWorstButton()->click();
        QCOMPARE(opened.size(), 1);
        const size_t seq = opened.at(0).at(0).value<size_t>();
        QCOMPARE(seq % 6 % 2, size_t(1));
        QCOMPARE(seq / 6, size_t(12));
        // A cell of the steps × slices grid: a's worst token at step 5, found here from the
        // tokens (the largest |d| among a's sequences of step 5).
        size_t wantSeq = 0, wantPos = 0;
        double worstA = -1;
        for (int i : {0, 2, 4})
            for (int t = 0; t < 20; ++t) {
                const double d = 0.001 * (((5 * 6 + i) * 7 + t) % 5);
                if (d > worstA + 1e-15)
                    worstA = d, wantSeq = size_t(5 * 6 + i), wantPos = size_t(t);
            }
        panel->selectCell(5, 0);
        QVERIFY(panel->openWorstButton()->isEnabled());
        panel->openWorstButton()->click();
        QCOMPARE(opened.size(), 2);
        QCOMPARE(opened.at(1).at(0).value<size_t>(), wantSeq);
        QCOMPARE(opened.at(1).at(1).value<size_t>(), wantPos);
        // Drag the limit above the rise: every step passes; the series is not recomputed.
        QVERIFY(w.showDetailTab("Over steps"));
        w.undoStack()->push(new ThresholdCommand(w.session(), "N1", "max", 0.02, 0.1, ThresholdCommand::newGesture()));
        QTRY_VERIFY_WITH_TIMEOUT(panel->replay() && panel->replay()->steps.size() == 24 && actionAt(13) == Action::Pass &&
                                     panel->isDrawn(), 20000);
        for (size_t j = 0; j < 24; ++j)
            QCOMPARE(actionAt(j), Action::Pass);
        QCOMPARE(panel->steps().get(), steps.get());
    }

    // File ▸ Compare with… (issue 20): run B's task b has 3× the spread of A's; the Compare
    // tab calls b worse and a the same, with A's and B's means as computed here from the
    // files, and adds the position buckets.
    void compareWithASecondRun() {
        auto write = [&](const QString& path, uint64_t seed, double bSpread, std::map<std::string, double>& means) {
            std::mt19937_64 rng(seed);
            std::normal_distribution<double> n01(0, 1);
            std::map<std::string, double> sum, count;
            QByteArray jsonl;
            for (int q = 0; q < 60; ++q) {
                const std::string task = q % 2 ? "b" : "a";
                const int T = 30 + q % 20;
                QByteArray train = "[", inf = "[", tokens = "[";
                for (int t = 0; t < T; ++t) {
                    const double d = 0.01 * (task == "b" ? bSpread : 1.0) * n01(rng);
                    train += (t ? "," : "") + QByteArray::number(-1.0, 'g', 17);
                    inf += (t ? "," : "") + QByteArray::number(-1.0 - d, 'g', 17);
                    tokens += t ? ",1" : "1";
                    sum[task] += std::fabs(-1.0 - (-1.0 - d));
                    count[task] += 1;
                }
                jsonl += "{\"id\": \"q" + QByteArray::number(q) + "\", \"slices\": {\"task\": \"" +
                         QByteArray::fromStdString(task) + "\"}, \"tokens\": " + tokens + "], \"logp_train\": " + train +
                         "], \"logp_inf\": " + inf + "]}\n";
            }
            writeAll(path, jsonl);
            for (const auto& [k, v] : sum)
                means[k] = v / count[k];
        };
        std::map<std::string, double> meanA, meanB;
        const QString a = dir_.path() + "/cmp-a.jsonl", b = dir_.path() + "/cmp-b.jsonl";
        write(a, 1, 1.0, meanA);
        write(b, 2, 3.0, meanB);
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QSignalSpy loaded(w.session(), &Session::runLoaded);
        w.openRun(a);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
        ComparePanel* panel = w.comparePanel();
        QSignalSpy compared(panel, &ComparePanel::compared);
        w.compareWith(b);
        QVERIFY(panel->isVisible());
        QTRY_COMPARE_WITH_TIMEOUT(compared.size(), 1, 30000);
        const auto c = panel->comparison();
        QVERIFY(c);
        std::map<std::string, const CompareResult*> byTask, cell;
        for (const CompareResult& r : c->results) {
            QCOMPARE(r.metric, std::string("abs_log_ratio"));
            QCOMPARE(r.slice[0].first, std::string("task"));
            if (r.slice.size() == 1)
                byTask[r.slice[0].second] = &r;
            else if (r.slice[1] == std::pair<std::string, std::string>("derived.pos_bucket", "pos_0_64"))
                cell[r.slice[0].second] = &r;
        }
        QCOMPARE(byTask.size(), size_t(2));
        // The difference heatmap: task × position bucket (every position is below 64, so each
        // task's one cell is its whole slice again).
        QCOMPARE(cell.size(), size_t(2));
        QCOMPARE(c->results.size(), size_t(4));
        QCOMPARE(panel->grid()->rowCount(), 2);
        QCOMPARE(panel->grid()->columnCount(), 1);
        QVERIFY(panel->grid()->item(1, 0)->font().bold());    // b: worse
        QVERIFY(!panel->grid()->item(0, 0)->font().bold());   // a: same
        QVERIFY(std::fabs(cell["b"]->diff - byTask["b"]->diff) < 1e-12);
        for (const std::string t : {"a", "b"}) {
            QVERIFY(std::fabs(*byTask[t]->a.value - meanA[t]) < 1e-12 * meanA[t]);
            QVERIFY(std::fabs(*byTask[t]->b.value - meanB[t]) < 1e-12 * meanB[t]);
        }
        QCOMPARE(byTask["b"]->verdict, std::string("worse"));
        QCOMPARE(byTask["a"]->verdict, std::string("same"));
        QCOMPARE(panel->table()->rowCount(), int(c->results.size()));
        // A file that is not a run: said, nothing shown.
        QSignalSpy failed(panel, &ComparePanel::failed);
        const QString junk = dir_.path() + "/junk.jsonl";
        writeAll(junk, "not json\n");
        w.compareWith(junk);
        QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 1, 30000);
        QVERIFY2(failed.at(0).at(0).toString().contains("junk.jsonl"), qPrintable(failed.at(0).at(0).toString()));
    }

    void reloadsAContractChangedOnDisk() {
        const QString path = dir_.path() + "/watched.yaml";
        MainWindow w;
        QVERIFY2(showDemo(w, {1200, 800}, path), qPrintable(w.settleState()));
        QSignalSpy changed(w.session(), &Session::contractChanged);
        QByteArray text = demoContract();
        text.replace("name: kcx-demo", "name: kcx-demo-edited");
        writeAll(path, text);
        QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), 10000);
        QCOMPARE(QString::fromStdString(w.session()->contract()->name), QString("kcx-demo-edited"));
    }
};

QTEST_MAIN(TestWindow)
#include "test_window.moc"
