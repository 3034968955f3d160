// The sequence drill-down driven as a user drives it, offscreen: a heatmap click far from
// t = 0 scrolls the strip and the table to the token and shows its top-k; at 1600x1000
// twelve token rows and every top-k row are in view, and at 1024x700 the view still works;
// N / Shift+N and the buttons walk the tokens by |log ratio| (the order worked out here
// from the log-probs); the splitters are remembered from one window to the next; the
// runtime record is a key/value table; hostile token text is shown literally.
//
// Settings go to QStandardPaths' test location under this test's own names, never to the
// user's. KCX_DRILL_SCREENSHOTS=DIR ./test_drilldown screenshots writes the pictures.
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QSplitterHandle>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QHeaderView>
#include <QTextBlock>
#include <QToolButton>
#include <QAction>
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/heatmap/heatmap.h"
#include "tests/support/qt_files.h"
#include "ui/drilldown/runtime_table.h"
#include "ui/drilldown/sequence_view.h"
#include "ui/drilldown/token_context.h"
#include "ui/drilldown/token_strip.h"
#include "ui/drilldown/token_table_model.h"
#include "ui/drilldown/topk_model.h"
#include "ui/drilldown/worst_tokens.h"
#include "ui/heatmap/heatmap_panel.h"
#include "ui/heatmap/heatmap_view.h"
#include "ui/session/session.h"
#include "ui/window/main_window.h"

using namespace kcx;
using namespace kcx::ui;

namespace {

// The demo in a window of `size`, settled (loaded, evaluated, heatmap drawn).
bool showDemoAt(MainWindow& w, QSize size) {
    w.setDemoContract(kcx::test::demoContract().toStdString());
    w.resize(size);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w))
        return false;
    w.openDemo();
    return QTest::qWaitFor([&] { return w.settled(); }, 120000);
}

// The heatmap point whose click opens the token farthest from t = 0, and that token.
struct FarCell {
    QPoint point;
    HeatmapTarget target;
};
std::optional<FarCell> farthestCell(const HeatmapView* view) {
    const auto index = view->index();
    const auto grid = view->grid();
    if (!index || !grid)
        return std::nullopt;
    // Every pixel of the plot, as a click would land, each cell worked out once.
    std::optional<FarCell> best;
    std::set<std::pair<size_t, size_t>> seen;
    const QRect plot = view->plotRect();
    for (int y = plot.top() + 1; y < plot.bottom(); y += 2)
        for (int x = plot.left() + 1; x < plot.right(); ++x) {
            const auto cell = view->cellAt({x, y});
            if (!cell || !seen.insert(*cell).second)
                continue;
            const auto t = cellTarget(*index, *grid, cell->first, cell->second);
            if (t && (!best || t->position > best->target.position))
                best = FarCell{{x, y}, *t};
        }
    return best;
}

// Rows of `table` wholly inside its viewport.
int rowsInView(const QTableView* table) {
    int n = 0;
    const int h = table->viewport()->height();
    for (int r = 0; r < table->model()->rowCount(); ++r) {
        const QRect rect = table->visualRect(table->model()->index(r, 0));
        n += rect.isValid() && rect.top() >= 0 && rect.bottom() < h;
    }
    return n;
}

bool rowInView(const QTableView* table, int row) {
    const QRect rect = table->visualRect(table->model()->index(row, 0));
    return rect.isValid() && rect.top() >= 0 && rect.bottom() < table->viewport()->height();
}

// Whether the strip's token `t` lies inside the strip's visible part.
bool tokenInView(const SequenceView* view, int t) {
    const QRect r = view->strip()->tokenRect(t);
    const QPoint left = view->strip()->mapTo(view->stripArea()->viewport(), r.topLeft());
    return left.x() >= 0 && left.x() + r.width() <= view->stripArea()->viewport()->width();
}

// The positions of sequence `seq` by |logp_train - logp_inf|, largest first, ties by
// position; tokens without both log-probs or with a NaN ratio are left out.
std::vector<int> absLogRatioOrder(const Run& run, size_t seq) {
    std::vector<std::pair<double, int>> v;
    for (size_t t = 0; t < run.seqLength(seq); ++t) {
        const double a = run.lpTrain[run.seqBegin(seq) + t], b = run.lpInf[run.seqBegin(seq) + t];
        if (!isMissing(a) && !isMissing(b) && !std::isnan(a - b))
            v.emplace_back(std::fabs(a - b), int(t));
    }
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) {
        return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    std::vector<int> order;
    for (const auto& p : v)
        order.push_back(p.second);
    return order;
}

// A hand-made run of one sequence whose token texts, id and runtime are hostile markup.
std::shared_ptr<Run> hostileRun() {
    const std::vector<std::string> texts = {"Hi", "<b>x</b>", " <img src=\"kcx-test-nope.png\">", "&amp;", "\x1b[31m", " end"};
    auto run = std::make_shared<Run>();
    run->ids = {"<i>seq</i>"};
    run->offsets = Array<int64_t>(std::vector<int64_t>{0, int64_t(texts.size())});
    run->tokens = Array<int32_t>(std::vector<int32_t>{1, 2, 3, 4, 5, 6});
    run->lpTrain = Column(Array<double>(std::vector<double>{-0.1, -0.2, -0.3, -0.4, -0.5, -0.6}));
    run->lpInf = Column(Array<double>(std::vector<double>{-0.1, -0.5, -0.3, -0.4, -0.5, -0.7}));
    run->textOffsets = {0};
    for (const auto& t : texts) {
        run->textPool += t;
        run->textOffsets.push_back(run->textPool.size());
    }
    run->runtime = {nlohmann::json{{"note", "<b>bold</b>"}, {"gpu", {{"name", "<img src=x>"}}}}};
    run->checkInvariants();
    return run;
}

void clearDrillSettings() {
    QSettings settings;
    settings.remove(QStringLiteral("drilldown"));
    settings.sync();
}

}  // namespace

class TestDrilldown : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);   // QSettings files go under ~/.qttest
        QCoreApplication::setOrganizationName(QStringLiteral("kcx-test"));
        QCoreApplication::setApplicationName(QStringLiteral("test_drilldown"));
        QSettings().clear();
        qputenv("KCX_NO_DIALOGS", "1");
    }

    void worstTokensRankByAbsLogRatio() {
        auto run = hostileRun();   // |r| = 0, 0.3, 0, 0, 0, 0.1
        const WorstTokens w(*run, 0);
        QCOMPARE(w.count(), 6);
        QCOMPARE(w.at(0), 1);
        QCOMPARE(w.at(1), 5);
        QCOMPARE(w.at(2), 0);   // ties: the lower position first
        QCOMPARE(w.next(-1), 1);
        QCOMPARE(w.next(1), 5);
        QCOMPARE(w.previous(5), 1);
        QCOMPARE(w.previous(1), -1);
        QCOMPARE(w.next(w.at(5)), -1);
        // Missing and NaN log-probs have no rank.
        run->lpInf = Column(Array<double>(std::vector<double>{missingDouble(), std::nan(""), -0.3, -0.4, -0.5, -0.7}));
        const WorstTokens m(*run, 0);
        QCOMPARE(m.count(), 4);
        QCOMPARE(m.rankOf(0), -1);
        QCOMPARE(m.rankOf(1), -1);
        QCOMPARE(m.next(0), 5);   // from an unranked token: the worst
    }

    // A run loaded while the drill-down's tab is hidden is laid out when the tab is shown,
    // not before (setSequenceWhenShown); shown at once when the view is on screen; and an
    // explicit setSequence() in between wins over the pending one.
    void sequenceIsLaidOutWhenShown() {
        auto run = hostileRun();
        SequenceView view;
        view.setSequenceWhenShown(run, 0);
        QVERIFY(!view.run());
        QCOMPARE(view.tokenModel()->rowCount(), 0);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.run(), std::shared_ptr<const Run>(run));
        QCOMPARE(view.tokenModel()->rowCount(), 6);

        auto other = hostileRun();
        view.setSequenceWhenShown(other, 0);   // visible: now
        QCOMPARE(view.run(), std::shared_ptr<const Run>(other));
        view.hide();
        view.setSequenceWhenShown(run, 0);
        view.setSequence(other, 0);   // the user's pick replaces what was pending
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.run(), std::shared_ptr<const Run>(other));
    }

    void runtimeRecordIsAKeyValueTable() {
        const auto record = nlohmann::json::parse(
            R"({"batch_size": 8, "latency_ms": 12.300000000000001, "sched": {"queue_ms": 0.25, "gpu": {"id": 3}},
                "tags": ["a", "b"], "big": 1.5e13, "ok": true, "none": null, "empty": {}})");
        std::map<QString, QString> rows;
        for (const RuntimeField& f : flattenRuntime(record))
            rows[f.key] = f.value;
        const std::map<QString, QString> expected = {
            {"batch_size", "8"}, {"latency_ms", "12.3"}, {"sched.queue_ms", "0.25"}, {"sched.gpu.id", "3"},
            {"tags", "a, b"},    {"big", "1.5e+13"},     {"ok", "true"},             {"none", "null"},
            {"empty", "{}"}};
        QCOMPARE(rows, expected);
        QCOMPARE(flattenRuntime(record, 3).size(), size_t(4));   // three, and "6 more"
        QCOMPARE(flattenRuntime(nlohmann::json::parse(R"({"a": [{"b": 1}, {"b": 2}]})")).at(1).key, QStringLiteral("a[1].b"));

        // The view shows the demo's record of the sequence it opens.
        MainWindow w;
        QVERIFY2(showDemoAt(w, {1600, 1000}), qPrintable(w.settleState()));
        auto* view = w.findChild<SequenceView*>();
        QVERIFY(view);
        const auto run = w.session()->run();
        emit w.heatmapPanel()->sequenceActivated(7, 3);
        const RuntimeTable* table = view->runtimeTable();
        std::map<QString, QString> shown;
        for (int r = 0; r < table->rowCount(); ++r)
            shown[table->item(r, 0)->text()] = table->item(r, 1)->text();
        QCOMPARE(shown.size(), run->runtime[7].size());
        QCOMPARE(shown.at("batch_size"), QString::number(run->runtime[7]["batch_size"].get<int>()));
        QCOMPARE(shown.at("kernel_version"), QString::fromStdString(run->runtime[7]["kernel_version"].get<std::string>()));
        QCOMPARE(shown.at("latency_ms").toDouble(), run->runtime[7]["latency_ms"].get<double>());
        QVERIFY(!view->headerText().contains(QStringLiteral("kernel_version")));   // no raw JSON in the header
    }

    void hostileTokenTextIsShownLiterally() {
        auto run = hostileRun();
        SequenceView view;
        view.setSequence(run, 0);
        view.resize(1000, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.selectToken(1);
        // The context: plain text, the token highlighted literally, no image, no bold markup.
        const TokenContext* context = view.context();
        QCOMPARE(context->highlightedText(), QStringLiteral("<b>x</b>"));
        const QString text = context->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Hi<b>x</b> <img src=\"kcx-test-nope.png\">&amp;")), qPrintable(text));
        QVERIFY(text.contains(QChar(0x241B)));   // ESC shows as its control picture
        int marked = 0;
        for (QTextBlock b = context->document()->begin(); b.isValid(); b = b.next())
            for (auto it = b.begin(); !it.atEnd(); ++it) {
                QVERIFY(!it.fragment().charFormat().isImageFormat());
                if (it.fragment().charFormat().fontWeight() == QFont::Bold) {
                    QCOMPARE(it.fragment().text(), QStringLiteral("<b>x</b>"));
                    ++marked;
                }
            }
        QCOMPARE(marked, 1);
        // The table, the runtime record and the header: literal text; every label plain.
        QCOMPARE(view.tokenModel()->index(1, TokenTableModel::Text).data().toString(), QStringLiteral("<b>x</b>"));
        QVERIFY(view.tokenModel()->index(1, TokenTableModel::Text).data(Qt::ToolTipRole).toString().contains(
            QStringLiteral("&lt;b&gt;x&lt;/b&gt;")));
        QVERIFY(view.headerText().startsWith(QStringLiteral("<i>seq</i>")));
        for (const QLabel* label : view.findChildren<QLabel*>())
            QCOMPARE(label->textFormat(), Qt::PlainText);
        const RuntimeTable* rt = view.runtimeTable();
        QCOMPARE(rt->rowCount(), 2);
        QCOMPARE(rt->item(0, 0)->text(), QStringLiteral("gpu.name"));
        QCOMPARE(rt->item(0, 1)->text(), QStringLiteral("<img src=x>"));
        QCOMPARE(rt->item(1, 1)->text(), QStringLiteral("<b>bold</b>"));
        QVERIFY(rt->item(1, 1)->toolTip().contains(QStringLiteral("&lt;b&gt;bold")));
        view.selectToken(2);
        QCOMPARE(view.context()->highlightedText(), QStringLiteral("\u00B7<img\u00B7src=\"kcx-test-nope.png\">"));
    }

    // The issue: a click at t = 342 left the strip at t = 0, and about 4 rows showed.
    void heatmapClickOpensTheTokenInView() {
        clearDrillSettings();
        MainWindow w;
        QVERIFY2(showDemoAt(w, {1600, 1000}), qPrintable(w.settleState()));
        auto* view = w.findChild<SequenceView*>();
        QVERIFY(view && !view->isVisible());   // the Charts tab is in front
        HeatmapView* heat = w.heatmapPanel()->view();
        const auto far = farthestCell(heat);
        QVERIFY(far);
        const auto run = w.session()->run();
        const int t = int(far->target.position);
        QVERIFY2(t >= 300, qPrintable(QString::number(t)));
        QTest::mouseClick(heat, Qt::LeftButton, {}, far->point);

        QTRY_VERIFY(view->isVisible());
        QCOMPARE(view->sequence(), far->target.sequence);
        QCOMPARE(view->selectedPosition(), t);
        QCOMPARE(view->strip()->selected(), t);
        QTRY_VERIFY(tokenInView(view, t));
        const QModelIndex current = view->tokenTable()->currentIndex();
        QCOMPARE(current.data(TokenTableModel::FlatIndexRole).toULongLong(), run->seqBegin(size_t(view->sequence())) + t);
        QVERIFY(view->tokenTable()->selectionModel()->isRowSelected(current.row(), {}));
        QTRY_VERIFY(rowInView(view->tokenTable(), current.row()));
        // The top-k are the lists at t: the training kernel's first id leads.
        const size_t flat = run->seqBegin(view->sequence()) + size_t(t);
        QVERIFY(view->topKModel()->rowCount() > 0);
        QCOMPARE(view->topKModel()->entries().front().id, run->topkTrain.ids[flat * size_t(run->topkTrain.k)]);
        QVERIFY(view->context()->highlightedText().size() > 0);

        // Room: twelve token rows and every top-k row.
        QTRY_VERIFY2(rowsInView(view->tokenTable()) >= SequenceView::kComfortableTokenRows,
                     qPrintable(QString::number(rowsInView(view->tokenTable()))));
        QCOMPARE(rowsInView(view->topKTable()), view->topKModel()->rowCount());
        QVERIFY(view->topKModel()->rowCount() >= run->topkTrain.k);
        QVERIFY(rowInView(view->tokenTable(), view->tokenTable()->currentIndex().row()));   // still, after the room
        QVERIFY(tokenInView(view, t));
        // The log ratio needs no horizontal scrolling.
        const QHeaderView* header = view->tokenTable()->horizontalHeader();
        QCOMPARE(header->logicalIndex(2), int(TokenTableModel::LogRatio));
        QCOMPARE(view->tokenTable()->horizontalScrollBar()->value(), 0);
        QVERIFY(header->sectionViewportPosition(TokenTableModel::LogRatio) + header->sectionSize(TokenTableModel::LogRatio) <=
                view->tokenTable()->viewport()->width());
        QVERIFY(heat->height() >= 200);   // the heatmap keeps room too
    }

    void nextAndPreviousWorstKeys() {
        MainWindow w;
        QVERIFY2(showDemoAt(w, {1600, 1000}), qPrintable(w.settleState()));
        auto* view = w.findChild<SequenceView*>();
        const auto run = w.session()->run();
        const size_t seq = run->sequenceCount() - 1;
        const std::vector<int> order = absLogRatioOrder(*run, seq);
        QVERIFY(order.size() > 4);
        const int start = order[2];
        emit w.heatmapPanel()->sequenceActivated(seq, size_t(start));
        QTRY_VERIFY(view->isVisible());
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QCOMPARE(view->selectedPosition(), start);
        QVERIFY(view->rankText().contains(QStringLiteral("rank 3 of %1").arg(order.size())));

        QTest::keyClick(&w, Qt::Key_N);
        QCOMPARE(view->selectedPosition(), order[3]);
        QTRY_VERIFY(tokenInView(view, order[3]));
        QTest::keyClick(&w, Qt::Key_N, Qt::ShiftModifier);
        QCOMPARE(view->selectedPosition(), order[2]);
        QTest::keyClick(&w, Qt::Key_N, Qt::ShiftModifier);
        QTest::keyClick(&w, Qt::Key_N, Qt::ShiftModifier);
        QCOMPARE(view->selectedPosition(), order[0]);
        QVERIFY(!view->previousWorstAction()->isEnabled());   // nothing is worse than the worst
        QTest::keyClick(&w, Qt::Key_N, Qt::ShiftModifier);
        QCOMPARE(view->selectedPosition(), order[0]);
        // The buttons do the same, and everything follows.
        QToolButton* next = nullptr;
        for (auto* b : view->findChildren<QToolButton*>())
            if (b->defaultAction() == view->nextWorstAction())
                next = b;
        QVERIFY(next && next->isVisible());
        QTest::mouseClick(next, Qt::LeftButton);
        QCOMPARE(view->selectedPosition(), order[1]);
        QCOMPARE(view->strip()->selected(), order[1]);
        QCOMPARE(size_t(view->tokenTable()->currentIndex().data(TokenTableModel::FlatIndexRole).toULongLong()),
                 run->seqBegin(seq) + size_t(order[1]));
        QCOMPARE(view->topKModel()->entries().front().id,
                 run->topkTrain.ids[(run->seqBegin(seq) + size_t(order[1])) * size_t(run->topkTrain.k)]);
        // With the focus in the token table the keys still work.
        view->tokenTable()->setFocus();
        QTest::keyClick(view->tokenTable(), Qt::Key_N);
        QCOMPARE(view->selectedPosition(), order[2]);
    }

    void layoutIsRememberedAcrossWindows() {
        clearDrillSettings();
        QList<int> tables, outer;
        {
            MainWindow w;
            QVERIFY2(showDemoAt(w, {1600, 1000}), qPrintable(w.settleState()));
            auto* view = w.findChild<SequenceView*>();
            emit w.heatmapPanel()->sequenceActivated(3, 5);
            QTRY_VERIFY(view->isVisible());
            QTest::qWait(50);   // the room it asks for
            // Drag the table | top-k handle 90 px left and the context | tables handle 30 px down.
            auto drag = [](QSplitter* s, QPoint by) {
                QSplitterHandle* h = s->handle(1);
                const QPoint c = h->rect().center();
                QTest::mousePress(h, Qt::LeftButton, {}, c);
                QTest::mouseMove(h, c + by / 2);
                QTest::mouseMove(h, c + by);
                QTest::mouseRelease(h, Qt::LeftButton, {}, c + by);
            };
            const QList<int> before = view->tableSplitter()->sizes();
            drag(view->tableSplitter(), {-90, 0});
            QVERIFY2(view->tableSplitter()->sizes() != before, "the drag did not move the splitter");
            drag(view->outerSplitter(), {0, 30});
            tables = view->tableSplitter()->sizes();
            outer = view->outerSplitter()->sizes();
            w.close();
        }
        QVERIFY(QSettings().contains(QStringLiteral("drilldown/tables")));
        MainWindow w2;
        QVERIFY2(showDemoAt(w2, {1600, 1000}), qPrintable(w2.settleState()));
        auto* view = w2.findChild<SequenceView*>();
        emit w2.heatmapPanel()->sequenceActivated(3, 5);
        QTRY_VERIFY(view->isVisible());
        QTest::qWait(50);
        QCOMPARE(view->tableSplitter()->sizes(), tables);
        QCOMPARE(view->outerSplitter()->sizes().at(0), outer.at(0));
        clearDrillSettings();
    }

    void usableAt1024x700() {
        clearDrillSettings();
        MainWindow w;
        QVERIFY2(showDemoAt(w, {1024, 700}), qPrintable(w.settleState()));
        auto* view = w.findChild<SequenceView*>();
        const auto far = farthestCell(w.heatmapPanel()->view());
        QVERIFY(far);
        QTest::mouseClick(w.heatmapPanel()->view(), Qt::LeftButton, {}, far->point);
        QTRY_VERIFY(view->isVisible());
        QTest::qWait(50);
        const int t = int(far->target.position);
        QCOMPARE(view->selectedPosition(), t);
        QTRY_VERIFY(tokenInView(view, t));
        QVERIFY(rowInView(view->tokenTable(), view->tokenTable()->currentIndex().row()));
        QVERIFY2(rowsInView(view->tokenTable()) >= 4, qPrintable(QString::number(rowsInView(view->tokenTable()))));
        QVERIFY(rowsInView(view->topKTable()) >= 4);
        QVERIFY(view->context()->isVisible() && view->context()->height() >= view->context()->fontMetrics().lineSpacing() * 2);
        QVERIFY(w.heatmapPanel()->view()->height() >= 120);
        for (auto* b : view->findChildren<QToolButton*>())
            QVERIFY(b->isVisible() && b->width() >= b->sizeHint().width());
    }

    // Pictures for people: KCX_DRILL_SCREENSHOTS=/tmp ./test_drilldown screenshots writes
    // drill-1024x700.png and drill-1600x1000.png (the window after a heatmap click), and
    // the drill-down alone as drill-WxH-view.png.
    void screenshots() {
        const QString dir = qEnvironmentVariable("KCX_DRILL_SCREENSHOTS");
        if (dir.isEmpty())
            QSKIP("set KCX_DRILL_SCREENSHOTS to a directory");
        for (const QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
            clearDrillSettings();
            MainWindow w;
            QVERIFY2(showDemoAt(w, size), qPrintable(w.settleState()));
            const auto far = farthestCell(w.heatmapPanel()->view());
            QVERIFY(far);
            QTest::mouseClick(w.heatmapPanel()->view(), Qt::LeftButton, {}, far->point);
            QTest::qWait(400);   // the room, the metric's colours and the top-k texts arrive
            const QString path = QStringLiteral("%1/drill-%2x%3.png").arg(dir).arg(size.width()).arg(size.height());
            QVERIFY(w.grab().save(path));
            // The drill-down alone, at its real size, to look at closely.
            QVERIFY(w.findChild<SequenceView*>()->grab().save(QString(path).replace(".png", "-view.png")));
        }
    }
};

QTEST_MAIN(TestDrilldown)
#include "test_drilldown.moc"
