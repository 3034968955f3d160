// Unsaved threshold edits survive a crash (ui/session/recovery.h): written after each edit (after a
// short pause, so a drag writes once), removed once saved or discarded, offered back when
// the same contract opens again.
#include <QMessageBox>
#include <QStatusBar>
#include <QTimer>
#include <QUndoStack>

#include "core/base/sha256.h"
#include "ui/session/recovery.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"
#include "ui/window/main_window.h"

namespace kcx::ui {

void MainWindow::setUpRecovery() {
    recoveryTimer_ = new QTimer(this);
    recoveryTimer_->setSingleShot(true);
    recoveryTimer_->setInterval(300);
    connect(recoveryTimer_, &QTimer::timeout, this, [this] { updateRecovery(*session_); });
    connect(undo_, &QUndoStack::indexChanged, recoveryTimer_, qOverload<>(&QTimer::start));
    connect(undo_, &QUndoStack::cleanChanged, recoveryTimer_, qOverload<>(&QTimer::start));
}

void MainWindow::offerRecovery() {
    const auto state = readRecovery(session_->contractPath());
    if (!state || state->edits.empty())
        return;
    const QString name = session_->contractPath().isEmpty() ? tr("the demo contract") : session_->contractPath();
    if (state->baseSha256 != sha256Hex(session_->contractText())) {
        // The edits were made on another version of the file: applying them could put a
        // number on the wrong line of thought. Say so and drop them.
        removeRecovery(session_->contractPath());
        statusBar()->showMessage(
            tr("Unsaved edits from %1 were not restored: %2 has changed since.").arg(state->time, name), 10000);
        return;
    }
    bool restore = false;
    if (qEnvironmentVariableIsSet("KCX_NO_DIALOGS")) {
        restore = qEnvironmentVariable("KCX_RECOVER") == QLatin1String("restore");
    } else {
        const auto answer = QMessageBox::question(
            this, tr("Restore unsaved edits?"),
            tr("KCX did not close normally, and %n threshold edit(s) to %1 were not saved (last at %2). Restore them?",
               nullptr, int(state->edits.size()))
                .arg(name, state->time),
            QMessageBox::Yes | QMessageBox::Discard, QMessageBox::Yes);
        restore = answer == QMessageBox::Yes;
        if (!restore)
            removeRecovery(session_->contractPath());
    }
    if (!restore)
        return;
    // One undo step, so one Ctrl+Z returns to the file as saved.
    undo_->beginMacro(tr("restore unsaved edits"));
    for (const auto& e : state->edits)
        if (const auto before = session_->threshold(e.clause, e.which))
            undo_->push(new ThresholdCommand(session_, e.clause, e.which, *before, e.value, ThresholdCommand::newGesture()));
    undo_->endMacro();
    statusBar()->showMessage(tr("Restored %1 unsaved threshold edit(s) from %2.").arg(state->edits.size()).arg(state->time), 8000);
}

}  // namespace kcx::ui
