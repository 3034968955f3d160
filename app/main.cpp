// kcx: the Kernel Contract Explorer. Headless subcommands run on a QCoreApplication and
// never need a display (SPEC 6).
#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>

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
    {"demo", "write the built-in demo run (a tiny transformer under two kernels)", kcx::app::runDemo},
};

void printHelp(FILE* to) {
    QTextStream out(to);
    out << "Usage: kcx SUBCOMMAND [options]\n\n"
           "KCX compares what a training kernel and an inference kernel compute for the same\n"
           "policy, and checks the divergence against a kernel contract.\n\nSubcommands:\n";
    for (const auto& c : kCommands)
        out << "  " << QString(c.name).leftJustified(10) << c.summary << "\n";
    out << "\nOptions:\n  -h, --help     show this help (also: kcx SUBCOMMAND --help)\n"
           "  -v, --version  show the version\n";
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("kcx");
    QCoreApplication::setApplicationVersion(KCX_VERSION);
    const QStringList args = app.arguments();
    if (args.size() < 2 || args[1] == "-h" || args[1] == "--help" || args[1] == "help") {
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
            return c.run(sub);
        }
    std::fprintf(stderr, "kcx: unknown subcommand '%s'\n\n", qPrintable(args[1]));
    printHelp(stderr);
    return 2;
}
