// Showing the main window on the demo in a GUI test, and waiting until it has settled.
#pragma once

#include <QSize>
#include <QString>
#include <QtTest/QTest>

#include "tests/support/qt_files.h"
#include "ui/window/main_window.h"

namespace kcx::test {

// Shows `w` at `size` on the demo run with the demo contract written to `path` (or the
// built-in demo contract when `path` is empty), and waits until it has settled.
inline bool showDemo(kcx::ui::MainWindow& w, QSize size, const QString& path = {}) {
    if (path.isEmpty())
        w.setDemoContract(demoContract().toStdString());
    else
        writeAll(path, demoContract());
    w.resize(size);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w))
        return false;
    w.openDemo();
    if (!path.isEmpty() && !w.openContract(path))
        return false;
    return QTest::qWaitFor([&] { return w.settled(); }, 120000);
}

}  // namespace kcx::test
