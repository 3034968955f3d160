#include "ui/session/background.h"

#include <QCoreApplication>
#include <QSettings>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "core/formats/run.h"

#ifdef __linux__
#include <algorithm>
#include <cerrno>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kcx::ui {

namespace {

constexpr int kBackgroundNice = 10;
constexpr int kChartNice = 19;

QThreadPool* settingsPool() {
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool;   // lives as long as the process (threads end on exit)
        p->setMaxThreadCount(1);     // one writer: the writes land in call order
        p->setExpiryTimeout(2000);
        return p;
    }();
    return pool;
}

}  // namespace

QThreadPool* workPool() {
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool;
        p->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        return p;
    }();
    return pool;
}

QThreadPool* chartPool() {
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool;
        p->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        return p;
    }();
    return pool;
}

namespace {
std::mutex foregroundMutex;
std::condition_variable foregroundDone;
int foregroundCount = 0;
}  // namespace

ForegroundWork::ForegroundWork() {
    std::lock_guard lock(foregroundMutex);
    ++foregroundCount;
}

ForegroundWork::~ForegroundWork() {
    std::lock_guard lock(foregroundMutex);
    if (--foregroundCount == 0)
        foregroundDone.notify_all();
}

void waitForForeground(const std::function<bool(double)>& stillWanted) {
    std::unique_lock lock(foregroundMutex);
    while (foregroundCount > 0) {
        // Woken when the last one ends; every 20 ms it asks whether it is still wanted.
        foregroundDone.wait_for(lock, std::chrono::milliseconds(20));
        if (stillWanted && !stillWanted(0)) {
            lock.unlock();
            throw Cancelled();
        }
    }
}

void storeSetting(const QString& key, const QVariant& value) {
    // The QSettings constructor needs the application's names: read them here.
    const QString org = QCoreApplication::organizationName(), app = QCoreApplication::applicationName();
    (void)QtConcurrent::run(settingsPool(), [org, app, key, value] {
        QSettings settings(org, app);
        settings.setValue(key, value);
        settings.sync();
    });
}

void waitForSettings() { settingsPool()->waitForDone(); }

namespace {
void niceThisThread(int nice) {
#ifdef __linux__
    // On Linux the nice value belongs to the thread (PRIO_PROCESS with a thread id);
    // raising it needs no privilege. A thread already nicer than that is left alone.
    const id_t tid = id_t(::syscall(SYS_gettid));
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && now < nice)
        ::setpriority(PRIO_PROCESS, tid, nice);
#else
    (void)nice;
#endif
}
}  // namespace

void lowerThreadPriority() {
    thread_local bool done = false;
    if (!done)
        niceThisThread(kBackgroundNice);
    done = true;
}

void lowerChartThreadPriority() {
    thread_local bool done = false;
    if (!done)
        niceThisThread(kChartNice);
    done = true;
}

}  // namespace kcx::ui
