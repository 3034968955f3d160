// File > Export report…: the report (ui/report/report.h) of the window's current run, contract and
// latest evaluation, as HTML or PDF.
#pragma once

#include <QString>

#include <functional>

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace kcx::ui {

class Session;

// Asks for a file name (.html or .pdf) unless `path` is given, then writes the report:
// metrics, heatmap and sign-off checks on a worker thread, the charts on the GUI thread,
// the file on a worker thread again. Errors go to a message box (the status bar only
// under KCX_NO_DIALOGS=1, which also skips the file dialog: without `path`, nothing is
// written). `done` is called on the GUI thread with the error, empty on success.
void exportReport(QWidget* parent, Session* session, const QString& path = {},
                  std::function<void(const QString& error)> done = {});

}  // namespace kcx::ui
