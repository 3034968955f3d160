#include "ui/window/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>

#include <algorithm>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include "ui/contract/contract_panel.h"
#include "ui/heatmap/clause_lens.h"
#include "ui/heatmap/heatmap_panel.h"
#include "ui/heatmap/heatmap_view.h"
#include "ui/session/background.h"
#include "ui/session/recovery.h"
#include "ui/session/session.h"
#include "ui/signoff/signoff_panel.h"
#include "ui/compare/compare_panel.h"
#include "ui/contract/verdict_banner.h"
#include "ui/corrections/corrections_panel.h"
#include "ui/steps/steps_panel.h"
#include "ui/summary/summary_panel.h"
#include "ui/window/panels.h"

namespace kcx::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), session_(new Session(this)), undo_(new QUndoStack(this)) {
    setObjectName(QStringLiteral("kcxMainWindow"));
    setAcceptDrops(true);
    watcher_ = new QFileSystemWatcher(this);
    buildPanels();
    buildMenus();
    buildDiscover();   // a tab and Review menu entries
    buildStatusBar();
    watchRun();
    setUpRecovery();

    connect(session_, &Session::evaluated, this, &MainWindow::showEvaluation);
    connect(session_, &Session::summaryLoaded, this, [this] {
        rightStack_->setCurrentWidget(summaryPanel_);
        updateStatus();
        updateTitle();
        emit settledChanged();
    });
    connect(summaryPanel_, &SummaryPanel::drawn, this, &MainWindow::settledChanged);
    connect(session_, &Session::runLoaded, this, [this] {
        rightStack_->setCurrentWidget(runPage_);
        offerConvert();
        sayWhatWasLeftOut();
        updateStatus();
        updateTitle();
    });
    connect(session_, &Session::loadFailed, this, [this](const QString& m) {
        progress_->hide();
        cancel_->hide();
        showError(tr("Could not open the run"), m);
        emit settledChanged();
    });
    connect(session_, &Session::loadProgress, this, [this](double f, const QString& what) {
        progress_->show();
        cancel_->show();
        progress_->setFormat(what + QStringLiteral(" %p%"));
        progress_->setValue(int(f * 1000));
    });
    connect(session_, &Session::contractFailed, this, [this](const QString& m) { showError(tr("Could not read the contract"), m); });
    connect(session_, &Session::evaluationFailed, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    connect(session_, &Session::evaluationStarted, this, [this] {
        if (!session_->loading())
            statusBar()->showMessage(tr("Evaluating…"));
        // Nothing selected yet (a run or contract just opened): the heatmap starts on the
        // first per-token clause now, beside the evaluation, instead of after it. The
        // results then select the first failing clause; when that is another one the
        // heatmap follows. At 10M tokens the window settled 0.2 s sooner (issue 17).
        const auto c = session_->contract();
        if (!c || !session_->run() || !contract_->selectedClause().isEmpty())
            return;
        for (const Clause& cl : c->clauses) {
            const MetricInfo* info = findMetric(cl.metric);
            if (info && info->level == MetricLevel::Token) {
                heatmap_->setClause(clauseLens(cl, *session_));
                break;
            }
        }
    });
    connect(session_, &Session::contractChanged, this, [this] {
        updateTitle();
        const QStringList watched = watcher_->files();
        if (!watched.isEmpty())
            watcher_->removePaths(watched);
        if (!session_->contractPath().isEmpty())
            watcher_->addPath(session_->contractPath());
    });
    connect(watcher_, &QFileSystemWatcher::fileChanged, this, &MainWindow::contractFileChanged);
    connect(undo_, &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
    connect(heatmap_->view(), &HeatmapView::rendered, this, [this] {
        emit settledChanged();
    });

    qApp->installEventFilter(this);   // Undo/Redo from the threshold boxes (main_window_help.cpp)
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    recent_ = settings.value(QStringLiteral("recentFiles")).toStringList();
    rebuildRecentMenu();
    updateTitle();
}

MainWindow::~MainWindow() {
    // The children are destroyed after this body, and some emit on the way (an undo stack
    // that is not clean emits cleanChanged): no signal may reach the half-destroyed window
    // (UBSan: a slot called on an object that is no longer a MainWindow).
    for (QObject* child : findChildren<QObject*>())
        QObject::disconnect(child, nullptr, this, nullptr);
}

// The results table needs about 550 px for Clause … Action; the heatmap takes what is left.
// Until the user moves the divider, each resize splits the width again: 44 % for the
// results, at least 548 px and at most 820 px. Below 1,280 px the heatmap toolbar drops its
// labels so that the heatmap side can give up that width.
void MainWindow::placeSplit() {
    if (!mainSplit_ || splitMoved_)
        return;
    const int w = std::max(width(), 800);
    const int left = std::clamp(int(0.44 * w), 548, 820);
    heatmap_->setCompact(w < 1280);
    panelsSetCompact(charts_, w < 1280);
    mainSplit_->setSizes({left, w - left});
}

QStringList MainWindow::detailTabs() const {
    QStringList titles;
    for (int i = 0; i < details_->count(); ++i)
        titles << details_->tabText(i).remove(QLatin1Char('&'));
    return titles;
}

bool MainWindow::showDetailTab(const QString& title) {
    const QStringList titles = detailTabs();
    for (int i = 0; i < titles.size(); ++i)
        if (titles[i].compare(title.trimmed(), Qt::CaseInsensitive) == 0) {
            details_->setCurrentIndex(i);
            return true;
        }
    return false;
}

void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    placeSplit();
    // Once more after the layouts have taken the new width (the compact toolbars change
    // what the heatmap side needs at least).
    QTimer::singleShot(0, this, &MainWindow::placeSplit);
}

void MainWindow::buildPanels() {
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    banner_ = makeVerdictBanner(session_, central);
    layout->addWidget(banner_);

    auto* split = new QSplitter(Qt::Horizontal, central);
    split->setObjectName(QStringLiteral("mainSplit"));
    contract_ = new ContractPanel(session_, undo_, split);
    rightStack_ = new QStackedWidget(split);
    auto* right = new QSplitter(Qt::Vertical, rightStack_);
    runPage_ = right;
    right->setObjectName(QStringLiteral("rightSplit"));
    heatmap_ = new HeatmapPanel(session_, right);
    details_ = new QTabWidget(right);
    details_->setDocumentMode(true);
    details_->setUsesScrollButtons(true);   // six tabs must not set the window's minimum width
    details_->setElideMode(Qt::ElideNone);   // whole titles; the arrows scroll to the rest
    charts_ = makeChartsPanel(session_, undo_, details_);
    sequence_ = makeSequencePanel(session_, details_);
    bounds_ = makeBoundsPanel(session_, details_);
    promotion_ = makePromotionPanel(session_, details_);
    details_->addTab(charts_, tr("&Charts"));
    details_->addTab(sequence_, tr("&Sequence"));
    details_->addTab(bounds_, tr("&Bound chain"));
    details_->addTab(promotion_, tr("&Promotion"));
    stepsPanel_ = new StepsPanel(session_, details_);
    details_->addTab(stepsPanel_, tr("Over s&teps"));
    connect(stepsPanel_, &StepsPanel::sequenceActivated, this, &MainWindow::openSequence);
    comparePanel_ = new ComparePanel(session_, details_);
    details_->addTab(comparePanel_, tr("Co&mpare"));
    connect(comparePanel_, &ComparePanel::failed, this,
            [this](const QString& why) { statusBar()->showMessage(tr("Compare: %1").arg(why), 10000); });
    correctionsPanel_ = new CorrectionsPanel(session_, undo_, details_);
    details_->addTab(correctionsPanel_, tr("Co&rrections"));
    correctionsPanel_->setHoldBack([this] { return !resultsDrawn(); });
    connect(this, &MainWindow::settledChanged, correctionsPanel_, &CorrectionsPanel::release);
    connect(correctionsPanel_, &CorrectionsPanel::diagnosed, this,
            [this](const QString& summary) { static_cast<VerdictBanner*>(banner_)->setDiagnosis(summary); });
    connect(static_cast<VerdictBanner*>(banner_), &VerdictBanner::diagnosisActivated, this,
            [this] { details_->setCurrentWidget(correctionsPanel_); });
    signoff_ = new SignoffPanel(session_, details_);
    signoff_->setBeforeSigning([this] { return saveBeforeSigning(); });
    details_->addTab(signoff_, tr("Sign-o&ff"));
    right->addWidget(heatmap_);
    right->addWidget(details_);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 2);
    summaryPanel_ = new SummaryPanel(session_, rightStack_);
    rightStack_->addWidget(right);
    rightStack_->addWidget(summaryPanel_);
    split->addWidget(contract_);
    split->addWidget(rightStack_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 5);
    mainSplit_ = split;
    placeSplit();
    connect(split, &QSplitter::splitterMoved, this, [this] { splitMoved_ = true; });
    layout->addWidget(split, 1);
    setCentralWidget(central);

    connect(contract_, &ContractPanel::clauseSelected, this, &MainWindow::selectClause);
    connect(heatmap_, &HeatmapPanel::sequenceActivated, this, &MainWindow::openSequence);
    connectPanels(this, charts_, sequence_, bounds_, promotion_);
}

void MainWindow::buildStatusBar() {
    runInfo_ = new QLabel(this);
    runInfo_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(280);
    progress_->hide();
    cancel_ = new QToolButton(this);
    cancel_->setText(tr("Cancel"));
    cancel_->setToolTip(tr("Stop loading (Esc)"));
    cancel_->setShortcut(Qt::Key_Escape);
    cancel_->hide();
    connect(cancel_, &QToolButton::clicked, this, [this] {
        session_->cancelLoad();
        progress_->hide();
        cancel_->hide();
        statusBar()->showMessage(tr("Loading cancelled."), 5000);
    });
    // No stretch: the run's label takes its own width at the right, and the bar's left part
    // stays free for messages ("Saved", "Wrote the report", errors), which a stretching
    // permanent widget would cover.
    runInfo_->setTextFormat(Qt::PlainText);   // kernel names come from the run file
    statusBar()->addPermanentWidget(runInfo_);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_);
}

void MainWindow::updateStatus() {
    progress_->hide();
    cancel_->hide();
    if (const auto s = session_->summary()) {
        const SummaryOutline& o = session_->summaryOutline();
        runInfo_->setText(tr("summary of %L1 input(s) · %L2 sequences · %L3 tokens · %L4 step(s)")
                              .arg(s->inputs.size())
                              .arg(o.sequences)
                              .arg(o.tokens)
                              .arg(o.steps.size()));
        return;
    }
    const auto run = session_->run();
    if (!run) {
        runInfo_->clear();
        return;
    }
    auto kernel = [&](const char* side) {
        // The header is optional (SPEC 1.3) and may hold anything: read it defensively.
        auto text = [](const nlohmann::json& j, const char* key) {
            return j.is_object() && j.contains(key) && j[key].is_string() ? QString::fromStdString(j[key].get<std::string>())
                                                                          : QStringLiteral("?");
        };
        const nlohmann::json& h = run->header;
        const nlohmann::json none;
        const nlohmann::json& kernels = h.is_object() && h.contains("kernels") ? h["kernels"] : none;
        const nlohmann::json& k = kernels.is_object() && kernels.contains(side) ? kernels[side] : none;
        const QString name = text(k, "name"), precision = text(k, "precision");
        if (name == QLatin1String("?") && precision == QLatin1String("?"))
            return tr("not described (no run header)");
        return precision == QLatin1String("?") ? name : QStringLiteral("%1 (%2)").arg(name, precision);
    };
    runInfo_->setText(tr("%L1 sequences · %L2 tokens · train: %3 · inf: %4")
                          .arg(run->sequenceCount())
                          .arg(run->tokenCount())
                          .arg(kernel("train"), kernel("inf")));
}

void MainWindow::updateTitle() {
    const QString run = session_->runPath().isEmpty() ? (session_->hasData() ? tr("demo run") : tr("no run"))
                                                      : QFileInfo(session_->runPath()).fileName();
    const QString contract = session_->contractPath().isEmpty()
                                 ? (session_->contract() ? tr("demo contract") : tr("no contract"))
                                 : QFileInfo(session_->contractPath()).fileName();
    // "[*]" is where Qt shows the unsaved-changes mark ("*") while the window is modified.
    setWindowTitle(tr("%1[*] — %2 — KCX").arg(contract, run));
    setWindowModified(!undo_->isClean());
}

void MainWindow::showEvaluation(const EvaluationSnapshot& snapshot) {
    evaluatedOnce_ = true;
    statusBar()->clearMessage();
    // Keep the heatmap's threshold in step with the selected clause.
    const QString clause = contract_->selectedClause();
    if (!clause.isEmpty())
        selectClause(clause);
    (void)snapshot;
    emit settledChanged();
}

void MainWindow::selectClause(const QString& clause) {
    const auto c = session_->contract();
    const Clause* cl = c ? c->find(clause.toStdString()) : nullptr;
    if (session_->summary()) {
        const Result* picked = contract_->selectedResult();
        summaryPanel_->setClause(cl, picked && cl && picked->clause == cl->id && picked->slice ? *picked->slice
                                                                                                : SliceLabels{});
    }
    if (!cl) {
        heatmap_->setClause(std::nullopt);
        return;
    }
    // The heatmap shows the clause's own statistic over its own scope, with its current
    // (perhaps dragged) limit; without a run there is no scope yet.
    if (session_->run())
        heatmap_->setClause(clauseLens(*cl, *session_));
    const Result* selected = contract_->selectedResult();
    const auto slice = selected && selected->clause == cl->id ? selected->slice : std::nullopt;
    panelsSelectClause(charts_, promotion_, clause, slice);
    stepsPanel_->setClause(clause, slice);
    comparePanel_->setClause(clause);
}

void MainWindow::compareWith(const QString& path) {
    details_->setCurrentWidget(comparePanel_);
    comparePanel_->compareWith(path);
}

void MainWindow::openSequence(size_t sequence, size_t position) {
    showSequence(sequence_, session_, heatmap_->metric(), sequence, position);
    details_->setCurrentWidget(sequence_);
}

bool MainWindow::settled() const { return resultsDrawn() && !correctionsPanel_->isBusy(); }

bool MainWindow::resultsDrawn() const {
    if (session_->loading() || !session_->hasData())
        return false;
    if (session_->contract() && (session_->evaluating() || !evaluatedOnce_))
        return false;
    if (session_->summary())
        return summaryPanel_->isDrawn();
    if ((stepsPanel_->isVisible() && !stepsPanel_->isDrawn()) || comparePanel_->isBusy())
        return false;
    // State, not events: the view shows this run's data and has nothing on its way.
    const HeatmapView* view = heatmap_->view();
    return view->run() == session_->run() && view->isDrawn();
}

QString MainWindow::settleState() const {
    return QStringLiteral("loading=%1 run=%2 contract=%3 evaluating=%4 evaluated=%5 heatmapOfThisRun=%6 heatmapBusy=%7")
        .arg(session_->loading()).arg(bool(session_->run())).arg(bool(session_->contract()))
        .arg(session_->evaluating()).arg(evaluatedOnce_).arg(heatmap_->view()->run() == session_->run()).arg(heatmap_->view()->isBusy()) + QLatin1Char(' ') + heatmap_->view()->stateText();
}

void MainWindow::openDemo() {
    if (!maybeSave())
        return;
    if (session_->contract())
        removeRecovery(session_->contractPath());   // saved, or discarded by the user
    undo_->clear();
    if (!demoContract_.empty() && session_->setContractText(demoContract_, tr("demo contract")))
        offerRecovery();
    session_->openDemo();
}

void MainWindow::openRun(const QString& path) {
    loadClock_.start();
    session_->openRun(path);
    addRecent(path);
}

bool MainWindow::openContract(const QString& path) {
    if (!maybeSave())
        return false;
    if (session_->contract())
        removeRecovery(session_->contractPath());   // saved, or discarded by the user
    undo_->clear();
    const bool ok = session_->openContract(path);
    if (ok) {
        addRecent(path);
        offerRecovery();
    }
    return ok;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    if (session_->contract())
        removeRecovery(session_->contractPath());   // saved, or discarded by the user
    waitForRecovery();
    waitForSettings();   // the recent files, written in the background, first
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    for (const QUrl& url : event->mimeData()->urls()) {
        const QString path = url.toLocalFile();
        if (path.isEmpty())
            continue;
        const QString suffix = QFileInfo(path).suffix().toLower();
        if (suffix == QLatin1String("yaml") || suffix == QLatin1String("yml") ||
            (suffix == QLatin1String("json") && !path.endsWith(QLatin1String(".signoff.json"))))
            openContract(path);
        else
            openRun(path);
    }
    event->acceptProposedAction();
}

void MainWindow::showError(const QString& title, const QString& message) {
    statusBar()->showMessage(message, 10000);
    if (qEnvironmentVariableIsSet("KCX_NO_DIALOGS"))
        return;
    QMessageBox box(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box.setTextFormat(Qt::PlainText);   // messages quote file names and file text (issue 16)
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.exec();
}

}  // namespace kcx::ui
