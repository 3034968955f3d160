// Background work yields the processor to the window.
//
// Loading, metrics, evaluation, heatmaps and chart data run on worker threads that use
// every core (core::parallelChunks spawns one thread per core). On a machine with few
// cores the GUI thread then waits for a time slice, and a repaint that takes 3 ms of
// processor time took 80 ms of wall time. Every background task calls
// lowerThreadPriority() first: the calling thread (and every thread it starts, which
// inherits the setting) runs at nice 10, so the scheduler serves the GUI thread first
// and the work still gets every idle cycle.
//
// Background tasks also run on workPool(), never on QThreadPool::globalInstance(): Qt's
// raster paint engine splits large fills across the global pool's threads and waits for
// them, so a heatmap index being built there held up a repaint for 100 ms.
#pragma once

#include <functional>

#include <QString>
#include <QVariant>

QT_BEGIN_NAMESPACE
class QThreadPool;
QT_END_NAMESPACE

namespace kcx::ui {

// The pool for the window's background work (one thread per core).
QThreadPool* workPool();

// The pool for chart data (histogram, positions, scatter): its threads run at nice 19, so
// while the verdicts and the heatmap are being computed at nice 10 the charts get about
// an eighth of the processor (CFS weights 110 : 15) and the results are not held up by
// them; alone, they still get every idle cycle. A 10M-token run settled in 1.0 s with the
// charts competing as equals, 0.7 s without (issue 17).
QThreadPool* chartPool();
void lowerChartThreadPriority();

// Foreground work: what the window is waiting for to show its verdicts (an evaluation, the
// metric and index of the heatmap, its render). One of these lives while such a task runs
// on a worker thread.
class ForegroundWork {
public:
    ForegroundWork();
    ~ForegroundWork();
    ForegroundWork(const ForegroundWork&) = delete;
    ForegroundWork& operator=(const ForegroundWork&) = delete;
};
// A chart job calls this before it starts: it waits while foreground work runs (even at
// nice 19 a chart took a share of the two cores and the verdicts came 0.1 s later), and
// throws kcx::Cancelled when `stillWanted` says the job is stale.
void waitForForeground(const std::function<bool(double)>& stillWanted);

// Writes a setting from a background thread, in call order: QSettings writes its file
// with fsync, which took 50-100 ms on the GUI thread. waitForSettings() blocks until
// every write so far is on disk (for closing and for tests).
void storeSetting(const QString& key, const QVariant& value);
void waitForSettings();

// Once per thread; a no-op where threads have no nice value of their own (not Linux).
void lowerThreadPriority();

}  // namespace kcx::ui
