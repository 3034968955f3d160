// `kcx demo`: writes the built-in demo run and its contract (docs/demo.md, SPEC 6).
#include <QCommandLineParser>

#include <cstdio>
#include <filesystem>
#include "core/base/safe_write.h"

#include "core/base/printable.h"
#include "app/commands.h"
#include "app/demo_contract.h"
#include "core/demo/demo.h"

namespace kcx::app {

int runDemo(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription("Write the built-in demo run: a tiny transformer scored by a float32 training "
                                "kernel and a bf16/FP8 inference kernel (demo.jsonl and demo.safetensors), and "
                                "the demo contract (demo-contract.yaml). Prints the paths of the run and the "
                                "contract, one per line.");
    p.addHelpOption();
    const QCommandLineOption outOpt("out", "The directory to write into (created if needed).", "DIR");
    const QCommandLineOption seedOpt("seed", "The seed (the same seed gives the same run).", "S");
    const QCommandLineOption seqOpt("sequences", "How many rollouts.", "N");
    p.addOptions({outOpt, seedOpt, seqOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx demo --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(outOpt))
        return usageError("demo needs --out DIR (see kcx demo --help)");
    DemoOptions options;
    bool ok = true;
    if (p.isSet(seedOpt))
        options.seed = p.value(seedOpt).toULongLong(&ok);
    if (!ok)
        return usageError("--seed needs a whole number");
    if (p.isSet(seqOpt)) {
        options.sequences = p.value(seqOpt).toInt(&ok);
        if (!ok || options.sequences < 1 || options.sequences > 100000)
            return usageError("--sequences needs a whole number from 1 to 100000");
    }
    try {
        const std::string dir = p.value(outOpt).toStdString();
        const std::string path = writeDemo(dir, options);
        const std::string contract = (std::filesystem::path(dir) / kDemoContractFile).string();
        const std::string_view yaml = demoContractYaml();
        writeFileAtomically(contract, yaml);   // throws InputError naming the file
        std::printf("%s\n%s\n", path.c_str(), contract.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    return 0;
}

}  // namespace kcx::app
