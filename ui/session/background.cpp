#include "ui/session/background.h"

#include <QCoreApplication>
#include <QSettings>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

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

void lowerThreadPriority() {
#ifdef __linux__
    thread_local bool done = false;
    if (done)
        return;
    done = true;
    // On Linux the nice value belongs to the thread (PRIO_PROCESS with a thread id);
    // raising it needs no privilege. A thread already nicer than that is left alone.
    const id_t tid = id_t(::syscall(SYS_gettid));
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && now < kBackgroundNice)
        ::setpriority(PRIO_PROCESS, tid, kBackgroundNice);
#endif
}

}  // namespace kcx::ui
