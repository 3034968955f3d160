// After a run loads slowly from a text or foreign format, the status bar offers to write it
// as a native safetensors run (SPEC 1.2), which opens mapped, at once, next time — the
// window's `kcx convert`.
#include <QFileDialog>
#include <QFileInfo>
#include <QStatusBar>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>

#include "core/base/safe_write.h"
#include "core/formats/run_writer.h"
#include "ui/session/background.h"
#include "ui/session/session.h"
#include "ui/window/main_window.h"

namespace kcx::ui {

namespace {
// Loads slower than this are worth a native copy ($KCX_CONVERT_OFFER_MS overrides, for tests).
qint64 offerAfterMs() {
    bool ok = false;
    const int v = qEnvironmentVariableIntValue("KCX_CONVERT_OFFER_MS", &ok);
    return ok ? v : 2000;
}
}  // namespace

// A trainer tree's step folders still being written are left out (core/formats/
// import_trainer.h); the window says so as every command does.
void MainWindow::sayWhatWasLeftOut() {
    const auto run = session_->run();
    if (!run || !run->header.is_object() || !run->header.contains("import") || !run->header["import"].is_object())
        return;
    const auto skipped = run->header["import"].value("steps_skipped", nlohmann::json::array());
    if (!skipped.is_array() || skipped.empty())
        return;
    QStringList names;
    for (const auto& s : skipped)
        if (s.is_string())
            names << QFileInfo(QString::fromStdString(s.get<std::string>())).fileName();
    statusBar()->showMessage(tr("Left out %n step folder(s) without the STABLE marker (still being written): %1", "",
                                int(names.size()))
                                 .arg(names.join(", ")),
                             30000);
}

void MainWindow::offerConvert() {
    if (!convert_) {
        convert_ = new QToolButton(this);
        convert_->setText(tr("Convert to safetensors…"));
        convert_->setToolTip(tr("Write this run as a native safetensors run, which opens at once next time"));
        connect(convert_, &QToolButton::clicked, this, &MainWindow::convertRun);
        statusBar()->addPermanentWidget(convert_);
    }
    const QString path = session_->runPath();
    const bool slow = !path.isEmpty() && loadClock_.isValid() && loadClock_.elapsed() >= offerAfterMs() &&
                      !path.endsWith(QLatin1String(".safetensors"), Qt::CaseInsensitive);
    convert_->setVisible(slow);
    if (slow)
        statusBar()->showMessage(tr("%1 took %2 s to read; a safetensors copy opens at once.")
                                     .arg(QFileInfo(path).fileName())
                                     .arg(double(loadClock_.elapsed()) / 1000.0, 0, 'f', 1),
                                 15000);
}

void MainWindow::convertRun() {
    const auto run = session_->run();
    if (!run)
        return;
    const QFileInfo in(session_->runPath());
    QString base = in.absolutePath() + QLatin1Char('/') + in.completeBaseName();
    if (base.endsWith(QLatin1String(".jsonl")))
        base.chop(6);   // run.jsonl.gz -> run
    QString out = base + QStringLiteral(".safetensors");
    if (!qEnvironmentVariableIsSet("KCX_NO_DIALOGS")) {
        out = QFileDialog::getSaveFileName(this, tr("Convert to safetensors"), out, tr("Safetensors runs (*.safetensors)"));
        if (out.isEmpty())
            return;
    }
    // Never over the run being converted or the contract (issue 16; `kcx convert` refuses it too).
    if (const std::string why = sameFileRefusal(out.toStdString(), {{"run", session_->runPath().toStdString()},
                                                                     {"contract", session_->contractPath().toStdString()}});
        !why.empty()) {
        showError(tr("Could not convert the run"), QString::fromStdString(why));
        return;
    }
    convert_->setEnabled(false);
    statusBar()->showMessage(tr("Writing %1…").arg(out));
    QtConcurrent::run(workPool(), [run, path = out.toStdString()]() -> QString {
        lowerThreadPriority();
        try {
            writeSafetensors(*run, path);   // atomic: a temporary renamed over
            return {};
        } catch (const std::exception& e) {
            return QString::fromStdString(e.what());
        }
    }).then(this, [this, out](const QString& error) {
        convert_->setEnabled(true);
        if (!error.isEmpty()) {
            showError(tr("Could not convert the run"), error);
            return;
        }
        convert_->hide();
        addRecent(out);
        statusBar()->showMessage(tr("Wrote %1; open it next time (File > Open Recent).").arg(out), 10000);
        emit runConverted(out);
    });
}

}  // namespace kcx::ui
