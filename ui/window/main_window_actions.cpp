// The main window's menus and file handling: open, recent files, save, reload on change.
#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QUndoStack>

#include "ui/report/report_action.h"
#include "ui/session/background.h"
#include "ui/session/session.h"
#include "ui/signoff/signoff_panel.h"
#include "ui/window/main_window.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

namespace {
constexpr int kMaxRecent = 8;
const char* kRunFilter = QT_TRANSLATE_NOOP("MainWindow",
                                           "Runs (*.safetensors *.jsonl *.jsonl.gz *.gz *.npz *.npy);;All files (*)");
const char* kContractFilter = QT_TRANSLATE_NOOP("MainWindow", "Contracts (*.yaml *.yml *.json);;All files (*)");
}  // namespace

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* openRunAct = file->addAction(tr("&Open Run…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Open a run"), QString(), tr(kRunFilter));
        if (!p.isEmpty())
            openRun(p);
    });
    openRunAct->setShortcut(QKeySequence::Open);
    QAction* openContractAct = file->addAction(tr("Open &Contract…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Open a contract"), QString(), tr(kContractFilter));
        if (!p.isEmpty())
            openContract(p);
    });
    openContractAct->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addAction(tr("Open Run &Folder…"), this, [this] {
        // NumPy arrays (one NAME.npy per tensor) or trainer exports (one file per step and rank).
        const QString p = QFileDialog::getExistingDirectory(this, tr("Open a run kept as a folder"));
        if (!p.isEmpty())
            openRun(p);
    });
    file->addAction(tr("&Import Log-probs…"), this, [this] {
        // Two one-sided dumps (vLLM/OpenAI, SGLang, plain arrays): inference first.
        const QString filter = tr("Log-prob dumps (*.jsonl *.jsonl.gz *.json);;All files (*)");
        const QString inf = QFileDialog::getOpenFileName(this, tr("Import: the inference kernel's log-probs"), QString(), filter);
        if (inf.isEmpty())
            return;
        const QString train = QFileDialog::getOpenFileName(this, tr("Import: the training kernel's log-probs"),
                                                           QFileInfo(inf).absolutePath(), filter);
        if (!train.isEmpty())
            session_->importRun(inf, train);
    });
    QAction* compare = file->addAction(tr("Compare &with…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Compare with a second run (B)"), QString(), tr(kRunFilter));
        if (!p.isEmpty())
            compareWith(p);
    });
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
    file->addAction(tr("Open &Demo"), this, &MainWindow::openDemo);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    // Reads the run's file again: after the window said it changed on disk (main_window_runwatch.cpp).
    QAction* reload = file->addAction(tr("Re&load Run"), this, &MainWindow::reloadRun);
    reload->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    reload->setToolTip(tr("Read the run's file again"));
    rebuildRecentMenu();
    file->addSeparator();
    QAction* save = file->addAction(tr("&Save Contract"), this, [this] { saveContract(false); });
    save->setShortcut(QKeySequence::Save);
    QAction* saveAs = file->addAction(tr("Save Contract &As…"), this, [this] { saveContract(true); });
    saveAs->setShortcut(QKeySequence::SaveAs);
    file->addAction(tr("Save Screens&hot…"), this, &MainWindow::saveScreenshot);
    QAction* report = file->addAction(tr("&Export Report…"), this, [this] { exportReport(this, session_); });
    report->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = undo_->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = undo_->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);

    QMenu* review = menuBar()->addMenu(tr("&Review"));
    QAction* signOff = review->addAction(tr("Sign &Off…"), this, [this] {
        details_->setCurrentWidget(signoff_);
        signoff_->signOff();
    });
    signOff->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_S));
    review->addAction(tr("Open Sign-off &Record…"), this, [this] {
        details_->setCurrentWidget(signoff_);
        signoff_->openRecordDialog();
    });
    review->addAction(tr("Re-&check Records"), this, [this] {
        details_->setCurrentWidget(signoff_);
        signoff_->refresh();
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
    keys->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
    help->addAction(tr("&About KCX"), this, [this] {
        QMessageBox::about(this, tr("About KCX"),
                           tr("<b>KCX %1</b> — Kernel Contract Explorer<p>Checks whether an inference kernel may stand "
                              "in for the training kernel: divergence metrics, kernel contracts, the bound chain.</p>")
                               .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::addRecent(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent_.removeAll(abs);
    recent_.prepend(abs);
    while (recent_.size() > kMaxRecent)
        recent_.removeLast();
    storeSetting(QStringLiteral("recentFiles"), recent_);   // in the background: it syncs to disk
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = recent_;
    for (int i = 0; i < recent.size(); ++i) {
        const QString path = recent[i];
        QAction* a = recentMenu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this, [this, path] {
            const QString s = QFileInfo(path).suffix().toLower();
            if (s == QLatin1String("yaml") || s == QLatin1String("yml") || s == QLatin1String("json"))
                openContract(path);
            else
                openRun(path);
        });
        a->setToolTip(plainToolTip(path));
    }
    recentMenu_->setEnabled(!recent.isEmpty());
}

bool MainWindow::maybeSave() {
    if (undo_->isClean())
        return true;
    if (qEnvironmentVariableIsSet("KCX_NO_DIALOGS"))
        return true;
    const auto answer = QMessageBox::question(this, tr("Unsaved thresholds"),
                                              tr("The contract has threshold edits that are not saved. Save them?"),
                                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel)
        return false;
    return answer == QMessageBox::Discard || saveContract(false);
}

bool MainWindow::saveBeforeSigning() {
    if (!session_->contract())
        return true;   // the panel says what is missing
    const bool noFile = session_->contractPath().isEmpty();
    if (!noFile && undo_->isClean())
        return true;
    if (qEnvironmentVariableIsSet("KCX_NO_DIALOGS"))
        return false;
    const auto answer = QMessageBox::question(
        this, tr("Save before signing"),
        noFile ? tr("A sign-off record binds the contract file, and this contract is not saved in one. Save it now?")
               : tr("A sign-off record binds the contract file, and it does not have your threshold edits yet. "
                    "Save them now?"),
        QMessageBox::Save | QMessageBox::Cancel);
    return answer == QMessageBox::Save && saveContract(noFile);
}

bool MainWindow::saveContract(bool askPath) {
    if (!session_->contract())
        return false;
    QString path;
    if (askPath || session_->contractPath().isEmpty()) {
        path = QFileDialog::getSaveFileName(this, tr("Save the contract"), session_->contractPath(), tr(kContractFilter));
        if (path.isEmpty())
            return false;
    }
    ignoreNextChange_ = true;   // our own write must not look like someone else's
    const QString error = session_->saveContract(path);
    if (!error.isEmpty()) {
        ignoreNextChange_ = false;
        showError(tr("Could not save the contract"), error);
        return false;
    }
    undo_->setClean();
    if (!path.isEmpty())
        addRecent(path);
    watcher_->addPath(session_->contractPath());
    updateTitle();
    statusBar()->showMessage(tr("Saved %1").arg(session_->contractPath()), 4000);
    return true;
}

void MainWindow::contractFileChanged(const QString& path) {
    // Editors often replace the file (write + rename): watch the path again.
    QTimer::singleShot(200, this, [this, path] {
        if (QFileInfo::exists(path) && !watcher_->files().contains(path))
            watcher_->addPath(path);
        if (ignoreNextChange_) {
            ignoreNextChange_ = false;
            return;
        }
        if (path != session_->contractPath() || !QFileInfo::exists(path))
            return;
        if (!undo_->isClean() && !qEnvironmentVariableIsSet("KCX_NO_DIALOGS")) {
            const auto answer = QMessageBox::question(
                this, tr("Contract changed on disk"),
                tr("%1 changed on disk, and you have unsaved threshold edits. Reload it and lose them?").arg(path),
                QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
            if (answer != QMessageBox::Yes)
                return;
        }
        undo_->clear();
        if (session_->openContract(path))
            statusBar()->showMessage(tr("Reloaded %1 (changed on disk)").arg(path), 5000);
    });
}

void MainWindow::saveScreenshot() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save a screenshot"), QStringLiteral("kcx.png"), tr("PNG images (*.png)"));
    if (!path.isEmpty() && !grab().save(path))
        showError(tr("Could not save the screenshot"), path);
}

}  // namespace kcx::ui
