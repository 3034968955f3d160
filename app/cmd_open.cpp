// `kcx open [RUN] [--contract C] [--screenshot OUT.png] [--size WxH]` (SPEC 6.3), and
// `kcx` alone: the window, on the built-in demo when no run is named.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QTimer>

#include <chrono>
#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "app/common.h"
#include "app/demo_contract.h"
#include "ui/session/session.h"
#include "ui/window/main_window.h"

namespace kcx::app {

namespace {

using Clock = std::chrono::steady_clock;

// Saves the window once it has settled (loaded, evaluated, heatmap drawn), then quits.
// With KCX_SETTLE_TIME set, it also says on stderr when the window first settled, counted
// from `opened` (the run's load asked for) and from `started` (runOpen began, after the
// QApplication), and looks every 5 ms instead of every 50 (docs/performance.md).
void screenshotWhenSettled(ui::MainWindow* w, const QString& out, int* exitCode, Clock::time_point started,
                           Clock::time_point opened) {
    auto* timer = new QTimer(w);
    auto clock = std::make_shared<QElapsedTimer>();   // lives as long as the lambda
    clock->start();
    const bool timing = qEnvironmentVariableIsSet("KCX_SETTLE_TIME");
    // The same 150-200 ms of quiet ticks either way, before the window is saved.
    const int tickMs = timing ? 5 : 50, quietTicks = timing ? 40 : 4;
    timer->setInterval(tickMs);
    const int timeoutMs = qEnvironmentVariableIsSet("KCX_SCREENSHOT_TIMEOUT")
                              ? qEnvironmentVariableIntValue("KCX_SCREENSHOT_TIMEOUT") * 1000
                              : 300000;
    int stableTicks = 0;
    bool reported = false;
    QObject::connect(timer, &QTimer::timeout, w, [=]() mutable {
        const bool failed = !w->session()->loading() && !w->session()->hasData();
        if (failed) {
            // Say why, whichever of this tick and the loadFailed signal comes first.
            const QString why = w->session()->loadError();
            std::fprintf(stderr, "kcx: %s\n", why.isEmpty() ? "nothing to show: the run did not load" : qPrintable(why));
            *exitCode = 2;
            QApplication::exit(2);
            return;
        }
        // A few quiet ticks in a row: late signals (a metric arriving, a repaint) land first.
        stableTicks = w->settled() ? stableTicks + 1 : 0;
        if (stableTicks == 1 && timing && !reported) {
            reported = true;
            const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
            const auto now = Clock::now();
            std::fprintf(stderr,
                         "kcx: settled %.0f ms after the open was asked for, %.0f ms after kcx open began "
                         "(QApplication made)\n",
                         ms(now - opened), ms(now - started));
        }
        if (stableTicks >= quietTicks) {
            timer->stop();
            const bool ok = w->grab().save(out, "PNG");
            if (!ok)
                std::fprintf(stderr, "kcx: %s: cannot write the screenshot\n", qPrintable(out));
            *exitCode = ok ? 0 : 2;
            QApplication::exit(*exitCode);
        } else if (clock->elapsed() > timeoutMs) {
            std::fprintf(stderr, "kcx: gave up waiting for loading and evaluation after %d s (%s)\n", timeoutMs / 1000,
                         qPrintable(w->settleState()));
            *exitCode = 1;
            QApplication::exit(1);
        }
    });
    timer->start();
}

}  // namespace

int runOpen(const QStringList& args) {
    const Clock::time_point started = Clock::now();
    QCommandLineParser p;
    p.setApplicationDescription("Open the window on a run (and a contract). Without a run, the built-in demo "
                                "run and demo contract open.");
    p.addHelpOption();
    const QCommandLineOption contractOpt("contract", "The contract to evaluate (YAML or JSON).", "C");
    const QCommandLineOption shotOpt("screenshot",
                                     "Wait until loading and evaluation have finished, save the whole window as "
                                     "PNG, and exit.",
                                     "OUT.png");
    const QCommandLineOption sizeOpt("size", "The window size, e.g. 1600x1000.", "WxH");
    const QCommandLineOption tabOpt("tab", "Bring this detail tab forward, e.g. Promotion or \"Where is it hiding?\".",
                                    "TITLE");
    const QCommandLineOption compareOpt("compare", "Once the run is open, compare it with this second run (B) in the "
                                                   "Compare tab (File ▸ Compare with…).",
                                        "RUN_B");
    p.addOptions({contractOpt, shotOpt, sizeOpt, tabOpt, compareOpt});
    p.addPositionalArgument("RUN", "A run: .jsonl, .jsonl.gz or .safetensors. A .yaml, .yml or .json file given "
                                   "here is taken as the contract (as when files are dropped on the window).",
                            "[RUN] [CONTRACT]");
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx open --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    // Files as a file manager passes them: contracts by their name, the rest as the run.
    QString runPath, contractPath = p.value(contractOpt);
    for (const QString& f : p.positionalArguments()) {
        const QString suffix = QFileInfo(f).suffix().toLower();
        const bool contract = (suffix == "yaml" || suffix == "yml" || suffix == "json") && !f.endsWith(".signoff.json");
        QString& slot = contract ? contractPath : runPath;
        if (!slot.isEmpty())
            return usageError(QString("open takes one run and one contract, and got two %1s (see kcx open --help)")
                                  .arg(contract ? "contract" : "run"));
        slot = f;
    }
    QSize size(1600, 1000);
    if (p.isSet(sizeOpt)) {
        const QStringList wh = p.value(sizeOpt).split('x');
        bool ok1 = false, ok2 = false;
        if (wh.size() == 2)
            size = QSize(wh[0].toInt(&ok1), wh[1].toInt(&ok2));
        if (!ok1 || !ok2 || size.width() < 200 || size.height() < 150 || size.width() > 10000 || size.height() > 10000)
            return usageError("--size needs WIDTHxHEIGHT, e.g. 1600x1000");
    }
    const bool shot = p.isSet(shotOpt);
    if (shot)
        qputenv("KCX_NO_DIALOGS", "1");   // errors go to stderr, never to a dialog nobody sees

    ui::MainWindow window;
    window.setDemoContract(std::string(demoContractYaml()));
    window.resize(size);
    if (p.isSet(tabOpt) && !window.showDetailTab(p.value(tabOpt)))
        return usageError(QString("--tab: no tab \"%1\"; the tabs are: %2")
                              .arg(p.value(tabOpt), window.detailTabs().join(", ")));
    if (p.isSet(compareOpt)) {
        const QString b = p.value(compareOpt);
        QObject::connect(window.session(), &ui::Session::runLoaded, &window, [&window, b] { window.compareWith(b); },
                         Qt::SingleShotConnection);
    }
    const Clock::time_point opened = Clock::now();
    if (runPath.isEmpty()) {
        window.openDemo();
    } else {
        window.openRun(runPath);
    }
    if (!contractPath.isEmpty() && !window.openContract(contractPath)) {
        if (shot) {
            std::fprintf(stderr, "kcx: the contract could not be read\n");
            return 2;
        }
    }
    int exitCode = 0;
    if (shot) {
        QObject::connect(window.session(), &ui::Session::evaluationFailed, &window,
                         [](const QString& m) { std::fprintf(stderr, "kcx: evaluation failed: %s\n", qPrintable(m)); });
        QObject::connect(window.session(), &ui::Session::contractFailed, &window,
                         [](const QString& m) { std::fprintf(stderr, "kcx: %s\n", qPrintable(m)); });
        QObject::connect(window.session(), &ui::Session::loadFailed, &window, [&exitCode](const QString& m) {
            if (exitCode == 0)
                std::fprintf(stderr, "kcx: %s\n", qPrintable(m));
            exitCode = 2;
            QApplication::exit(2);
        });
        screenshotWhenSettled(&window, p.value(shotOpt), &exitCode, started, opened);
    }
    window.show();
    const int rc = QApplication::exec();
    keepUntilExit(window.session()->summary());   // (app/common.h) the window's last holder goes without freeing it
    return shot ? exitCode : rc;
}

}  // namespace kcx::app
