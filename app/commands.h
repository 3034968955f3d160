// Headless subcommands of `kcx`. Each takes its own arguments (argv[0] = "kcx SUBCOMMAND")
// and returns the process exit code (SPEC 6: 2 for input or usage errors).
#pragma once

#include <QStringList>

namespace kcx::app {

int runMetrics(const QStringList& args);
int runDemo(const QStringList& args);
int runCheck(const QStringList& args);
int runImport(const QStringList& args);
int runConvert(const QStringList& args);
int runKeygen(const QStringList& args);
int runSign(const QStringList& args);
int runVerify(const QStringList& args);
int runOpen(const QStringList& args);   // needs a QApplication
int runReport(const QStringList& args); // needs a QApplication (offscreen is fine)
int runDiscover(const QStringList& args);
int runCalibrate(const QStringList& args);
int runSummarize(const QStringList& args);
int runMerge(const QStringList& args);
int runSteps(const QStringList& args);
int runReplay(const QStringList& args);
int runCompare(const QStringList& args);
int runCorrections(const QStringList& args);
int runDiagnose(const QStringList& args);

// Prints "kcx: message" to stderr and returns 2.
int usageError(const QString& message);

}  // namespace kcx::app
