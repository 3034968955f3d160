// Background jobs of one chart: each has a generation number and only the newest one's
// result is applied (hotspot's jobtracker idea). A job that is no longer the newest is
// told to stop through its Progress callback (it throws kcx::Cancelled), and a job whose
// chart is gone is dropped by QFuture::then's context object.
#pragma once

#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <type_traits>

#include "core/formats/run.h"
#include "ui/session/background.h"

namespace kcx::ui {

class ChartJobs {
public:
    // Runs compute(progress) on chartPool(), once the verdicts and the heatmap are done;
    // apply(result) on context's thread when it is still the newest job, failed(message)
    // when it threw (not when cancelled).
    // A job that finishes before start() returns may be applied inside start().
    template <class Compute, class Apply>
    void start(QObject* context, Compute compute, Apply apply,
               std::function<void(const QString&)> failed = {}) {
        using R = std::invoke_result_t<Compute, const Progress&>;
        const quint64 gen = ++*latest_;
        auto latest = latest_;
        auto running = running_;
        ++*running;
        const Progress progress = [latest, gen](double) { return latest->load() == gen; };
        QtConcurrent::run(chartPool(), [compute = std::move(compute), progress]() -> R {
            lowerChartThreadPriority();
            waitForForeground(progress);
            return compute(progress);
        })
            .then(context, [latest, running, gen, apply = std::move(apply)](R result) {
                --*running;
                if (latest->load() == gen)
                    apply(std::move(result));
            })
            .onFailed(context, [latest, running, gen, failed](const std::exception& e) {
                --*running;
                if (latest->load() == gen && failed && !dynamic_cast<const Cancelled*>(&e))
                    failed(QString::fromUtf8(e.what()));
            });
    }
    // Makes every job in flight stale.
    void cancel() { ++*latest_; }
    bool busy() const { return *running_ > 0; }

private:
    std::shared_ptr<std::atomic<quint64>> latest_ = std::make_shared<std::atomic<quint64>>(0);
    std::shared_ptr<int> running_ = std::make_shared<int>(0);   // touched on the GUI thread only
};

}  // namespace kcx::ui
