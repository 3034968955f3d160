// kcx: the Kernel Contract Explorer. Headless subcommands run on a QCoreApplication and
// never need a display (SPEC 6); `kcx` alone and `kcx open` run the window.
#include <QApplication>
#include <QCoreApplication>
#include <QIcon>
#include <QTextStream>

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>

#include "core/base/printable.h"
#include "app/commands.h"

namespace {

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const QStringList&);
};

const Command kCommands[] = {
    {"check", "evaluate a kernel contract against a run (the offline-CI gate)", kcx::app::runCheck},
    {"metrics", "compute every divergence metric of a run and summarise it", kcx::app::runMetrics},
    {"import", "pair inference and training log-prob dumps (vLLM, SGLang, OpenAI, plain) into a run", kcx::app::runImport},
    {"convert", "write any run kcx can open as native safetensors", kcx::app::runConvert},
    {"demo", "write the built-in demo run and contract (a tiny transformer under two kernels)", kcx::app::runDemo},
    {"keygen", "write an Ed25519 key pair for signing off runs (KEY private, KEY.pub public)", kcx::app::runKeygen},
    {"sign", "evaluate a contract against a run and write a signed sign-off record", kcx::app::runSign},
    {"verify", "check a sign-off record's signature and that the files still match it", kcx::app::runVerify},
    {"report", "write the review report (HTML or PDF) of a contract evaluated against a run", kcx::app::runReport},
    {"discover", "find the slices where divergence most exceeds the rest of a run (FDR-controlled)", kcx::app::runDiscover},
    {"summarize", "reduce runs or shards to a summary that merges exactly (SPEC 10)", kcx::app::runSummarize},
    {"merge", "merge summaries of disjoint shards into one", kcx::app::runMerge},
    {"steps", "a metric over training steps: per-step intervals, the onset of a rise, spikes (SPEC 7)", kcx::app::runSteps},
    {"replay", "evaluate a contract step by step with persist/until escalation (SPEC 8)", kcx::app::runReplay},
    {"corrections", "what the usual off-policy corrections (TIS, masks) would do to this run (SPEC 11)", kcx::app::runCorrections},
    {"diagnose", "which systematic cause (temperature, renormalisation, offset, drift, misalignment) explains the divergence (SPEC 11)", kcx::app::runDiagnose},
    {"compare", "is run B's kernel pair worse than run A's? per metric and slice, FDR-controlled (SPEC 9)", kcx::app::runCompare},
    {"calibrate", "propose contract thresholds from a trusted run and check they catch bad runs", kcx::app::runCalibrate},
    {"open", "open the window on a run and a contract (the demo when no run is given)", kcx::app::runOpen},
};

void printHelp(FILE* to) {
    QTextStream out(to);
    out << "Usage: kcx [SUBCOMMAND] [options]\n\n"
           "KCX compares what a training kernel and an inference kernel compute for the same\n"
           "policy, and checks the divergence against a kernel contract.\n\nSubcommands:\n";
    for (const auto& c : kCommands)
        out << "  " << QString(c.name).leftJustified(12) << c.summary << "\n";
    out << "\nWithout a subcommand, kcx opens the window on the built-in demo.\n"
           "\nOptions:\n  -h, --help     show this help (also: kcx SUBCOMMAND --help)\n"
           "  -v, --version  show the version\n";
}

}  // namespace

int main(int argc, char** argv) {
#ifdef M_TOP_PAD
    // glibc grows a worker thread's heap only as far as each allocation needs, one mprotect
    // call a page: reading a 1,000-step summary in the window's loader thread made 65,000 of
    // them (0.3-0.5 s of its 2 s). With a 64 MB pad a thread's heap is made accessible whole
    // when it is created (78 calls); pages are still touched, so counted, only when used.
    mallopt(M_TOP_PAD, 64 << 20);
#endif
    // The window needs a QApplication (and a display, or QT_QPA_PLATFORM=offscreen); every
    // other subcommand runs headless.
    bool window = argc < 2 || std::strcmp(argv[1], "open") == 0;
    // `kcx open --help` prints and leaves: no window, so no display needed.
    for (int i = 2; window && i < argc; ++i)
        if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "--help-all") == 0)
            window = false;
    // Without a display Qt would abort (exit 134) inside QApplication: say what to do instead.
    if (window && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
        qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        std::fprintf(stderr, "kcx: the window needs a display (DISPLAY or WAYLAND_DISPLAY is not set); without one, "
                             "QT_QPA_PLATFORM=offscreen kcx open RUN --screenshot OUT.png renders it to a PNG, and "
                             "every other subcommand (kcx --help) runs headless\n");
        return 2;
    }
    // `report` paints (fonts, Qt Charts) but needs no display: offscreen unless told otherwise.
    const bool report = argc >= 2 && std::strcmp(argv[1], "report") == 0;
    if (report && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    std::unique_ptr<QCoreApplication> app(window || report ? new QApplication(argc, argv)
                                                           : new QCoreApplication(argc, argv));
    QCoreApplication::setOrganizationName("kcx");
    QCoreApplication::setApplicationName("kcx");
    QCoreApplication::setApplicationVersion(KCX_VERSION);
    if (window) {
        // The window's icon (resources/kcx.qrc), and the desktop entry it belongs to, so that
        // docks and Wayland compositors show the installed icon (packaging/).
        QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/kcx.svg")));
        QGuiApplication::setDesktopFileName(QStringLiteral("io.github.kcx.kcx"));
    }
    QStringList args = app->arguments();
    if (args.size() < 2)
        args << QStringLiteral("open");
    if (args[1] == "-h" || args[1] == "--help" || args[1] == "help") {
        printHelp(stdout);
        return 0;
    }
    if (args[1] == "-v" || args[1] == "--version") {
        std::printf("kcx %s\n", KCX_VERSION);
        return 0;
    }
    for (const auto& c : kCommands)
        if (args[1] == c.name) {
            QStringList sub = args.mid(1);
            sub[0] = QStringLiteral("kcx ") + c.name;
            // A subcommand reports its own errors; anything that still escapes is an input
            // it did not expect (exit 2 with the message), never an abort.
            try {
                return c.run(sub);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "kcx %s: %s\n", c.name, kcx::printable(e.what()).c_str());
                return 2;
            }
        }
    std::fprintf(stderr, "kcx: unknown subcommand '%s'\n\n", qPrintable(args[1]));
    printHelp(stderr);
    return 2;
}
