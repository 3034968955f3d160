#include "ui/report/report_action.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

#include <memory>

#include "ui/report/report.h"
#include "ui/session/background.h"
#include "ui/session/session.h"

namespace kcx::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("Report", text); }

void showStatus(QWidget* parent, const QString& message, int ms) {
    if (auto* w = parent ? qobject_cast<QMainWindow*>(parent->window()) : nullptr)
        w->statusBar()->showMessage(message, ms);
}

struct Prepared {
    ReportData data;
    QString error;
};

}  // namespace

void exportReport(QWidget* parent, Session* session, const QString& pathIn, std::function<void(const QString&)> done) {
    const bool noDialogs = qEnvironmentVariableIsSet("KCX_NO_DIALOGS");
    auto finish = [parent, done, noDialogs](const QString& path, const QString& error) {
        if (error.isEmpty()) {
            showStatus(parent, tr("Wrote the report %1").arg(path), 8000);
        } else {
            showStatus(parent, error, 10000);
            if (!noDialogs) {
                QMessageBox box(QMessageBox::Warning, tr("Could not export the report"), error, QMessageBox::Ok, parent);
                box.setTextInteractionFlags(Qt::TextSelectableByMouse);
                box.exec();
            }
        }
        if (done)
            done(error);
    };
    const EvaluationSnapshot snapshot = session->latest();
    if (!session->hasData() || !snapshot.evaluation || !snapshot.contract || snapshot.run != session->run() ||
        snapshot.summary != session->summary()) {
        finish(pathIn, tr("Nothing to report yet: open a run and a contract, and let the evaluation finish."));
        return;
    }
    if (session->evaluating()) {
        finish(pathIn, tr("The evaluation is still running: export the report when it has finished."));
        return;
    }
    QString path = pathIn;
    if (path.isEmpty()) {
        if (noDialogs) {
            if (done)
                done(tr("No file name for the report (KCX_NO_DIALOGS is set)."));
            return;
        }
        const QString base = session->contractPath().isEmpty() ? QDir::current().filePath(QStringLiteral("kcx-report.html"))
                                                               : QFileInfo(session->contractPath()).absolutePath() + QLatin1Char('/') +
                                                                     QFileInfo(session->contractPath()).completeBaseName() +
                                                                     QStringLiteral(".report.html");
        QString filter;
        path = QFileDialog::getSaveFileName(parent, tr("Export report"), base,
                                            tr("HTML report (*.html);;PDF report (*.pdf)"), &filter);
        if (path.isEmpty())
            return;   // cancelled
        if (QFileInfo(path).suffix().isEmpty())
            path += filter.contains(QLatin1String("pdf")) ? QStringLiteral(".pdf") : QStringLiteral(".html");
    }
    if (!isReportPath(path)) {
        finish(path, tr("%1: a report is .html or .pdf").arg(path));
        return;
    }

    ReportInput in;
    in.run = snapshot.run;
    in.summary = snapshot.summary;
    in.runPath = session->runPath().toStdString();
    in.contract = snapshot.contract;
    in.contractText = session->editedContractText();
    in.contractPath = session->contractPath().toStdString();
    in.evaluation = *snapshot.evaluation;
    in.engine = session->engine();
    in.signoffPaths = signoffsBesideContract(in.contractPath);
    const auto input = std::make_shared<const ReportInput>(std::move(in));
    QObject* context = parent ? static_cast<QObject*>(parent) : static_cast<QObject*>(session);
    showStatus(parent, tr("Writing the report %1…").arg(path), 0);

    // Metrics, heatmap, sign-off checks: a worker. Qt Charts: here. The file: a worker.
    QtConcurrent::run(workPool(), [input] {
        lowerThreadPriority();
        Prepared p;
        try {
            p.data = prepareReport(*input);
        } catch (const std::exception& e) {
            p.error = QString::fromUtf8(e.what());
        }
        return p;
    }).then(context, [input, path, finish, context](Prepared p) {
        if (!p.error.isEmpty()) {
            finish(path, tr("%1: cannot make the report: %2").arg(path, p.error));
            return;
        }
        auto data = std::make_shared<ReportData>(std::move(p.data));
        renderReportFigures(*input, *data);
        QtConcurrent::run(workPool(), [input, data, path] {
            lowerThreadPriority();
            return writeReportFile(path, *input, *data);
        }).then(context, [finish, path](const QString& error) { finish(path, error); });
    });
}

}  // namespace kcx::ui
