// The loaded run's file, watched: a run rewritten on disk after it was loaded is not read
// again behind the user's back (the window would mix old results with a new file), but
// the status bar says so at once and File > Reload Run (Ctrl+Shift+R) reads it again.
// (A run rewritten *while* it loads is refused by Session::openRun.)
#include <QDateTime>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QLabel>
#include <QStatusBar>
#include <QTimer>

#include "ui/session/session.h"
#include "ui/window/main_window.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

namespace {

std::pair<qint64, qint64> stampOf(const QString& path) {
    const QFileInfo f(path);
    if (!f.exists())
        return {-1, -1};
    return {f.isDir() ? 0 : f.size(), f.lastModified().toMSecsSinceEpoch()};
}

}  // namespace

void MainWindow::watchRun() {
    runWatcher_ = new QFileSystemWatcher(this);
    runChangedLabel_ = new QLabel(this);
    runChangedLabel_->setStyleSheet(QStringLiteral("color: #b35c00; font-weight: bold"));
    runChangedLabel_->hide();
    statusBar()->addPermanentWidget(runChangedLabel_);


    // A summary rewritten by a new merge is noticed like a run.
    for (auto loaded : {&Session::runLoaded, &Session::summaryLoaded})
        connect(session_, loaded, this, [this] {
            runChanged_ = false;
            runChangedLabel_->hide();
            const QStringList watched = runWatcher_->files() + runWatcher_->directories();
            if (!watched.isEmpty())
                runWatcher_->removePaths(watched);
            const QString path = session_->runPath();
            std::tie(runSize_, runMtime_) = stampOf(path);
            if (!path.isEmpty() && QFileInfo::exists(path))
                runWatcher_->addPath(path);
        });
    const auto changed = [this](const QString&) {
        // Writers replace files (write + rename) or append in bursts: look once it settles.
        QTimer::singleShot(200, this, &MainWindow::runFileChanged);
    };
    connect(runWatcher_, &QFileSystemWatcher::fileChanged, this, changed);
    connect(runWatcher_, &QFileSystemWatcher::directoryChanged, this, changed);
}

void MainWindow::runFileChanged() {
    const QString path = session_->runPath();
    if (path.isEmpty() || session_->loading())
        return;
    if (QFileInfo::exists(path) && !runWatcher_->files().contains(path) && !runWatcher_->directories().contains(path))
        runWatcher_->addPath(path);   // replaced by a rename: watch the new file
    const auto [size, mtime] = stampOf(path);
    if (size == runSize_ && mtime == runMtime_)
        return;
    runChanged_ = true;
    const QString what = size < 0 ? tr("The run's file was removed from disk") : tr("The run's file changed on disk");
    runChangedLabel_->setText(tr("%1 — showing the version loaded earlier (Ctrl+Shift+R reloads)").arg(what));
    runChangedLabel_->setToolTip(plainToolTip(path));
    runChangedLabel_->show();
    statusBar()->showMessage(tr("%1 since it was loaded: %2").arg(what, path), 8000);
}

void MainWindow::reloadRun() {
    if (!session_->runPath().isEmpty())
        openRun(session_->runPath());
}

}  // namespace kcx::ui
