// `kcx diagnose` (SPEC 11, docs/corrections.md): which systematic cause, if any, explains the
// divergence — temperature, renormalisation, a constant offset, drift with position,
// misaligned tokens. Exit 0 (also when something is found), or 2 on input or usage errors.
#include <QCommandLineParser>

#include <cstdio>

#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/base/printable.h"
#include "core/corrections/diagnose.h"

namespace kcx::app {

int runDiagnose(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Which systematic cause, if any, explains the divergence between the two kernels (SPEC 11):\n"
        "  temperature      p_inf ∝ p_train^(1/τ)            (needs top-k or logits)\n"
        "  renormalization  one side renormalised over a truncated set (top-p/top-k sampling)\n"
        "  constant_offset  lp_train − lp_inf shifted by a constant\n"
        "  position_drift   |lp_train − lp_inf| grows with position\n"
        "  misalignment     the two sides' tokens shifted against each other\n"
        "Findings are ranked by the share of the divergence each explains. No finding means nothing\n"
        "systematic beyond noise. Assumes the tokens were sampled by the inference side.\n"
        "Exit codes: 0, 2 input or usage error.");
    p.addHelpOption();
    const QCommandLineOption runOpt("run", "The run (given more than once: read as one).", "RUN");
    const QCommandLineOption jsonOpt("json", "Write the SPEC 11 JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption quietOpt("quiet", "No progress or table output.");
    p.addOptions({runOpt, jsonOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx diagnose --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(runOpt))
        return usageError("diagnose needs --run RUN (see kcx diagnose --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    const bool quiet = p.isSet(quietOpt);
    const QStringList paths = p.values(runOpt);
    if (p.isSet(jsonOpt) && refuseOutputOverInput(p.value(jsonOpt), runInputs(paths)))
        return 2;
    const auto run = openRuns(paths, quiet);
    if (!run)
        return 2;
    const Diagnosis d = diagnose(*run);
    if (p.isSet(jsonOpt) && !writeOutput(p.value(jsonOpt), diagnosisJson(d).dump(2) + "\n"))
        return 2;
    if (!quiet && p.value(jsonOpt) != "-") {
        std::printf("%s: %llu tokens with both log-probs in %llu sequences; %llu positions with ids both sides list%s\n\n",
                    qPrintable(paths.join(" + ")), (unsigned long long)d.tokens, (unsigned long long)d.sequences,
                    (unsigned long long)d.pairPositions,
                    d.pairSource.empty() ? "" : (" (" + d.pairSource + ")").c_str());
        const auto found = d.findings();
        if (found.empty())
            std::printf("No systematic cause found: the divergence is within noise for every test.\n");
        for (const DiagnosisTest& t : found)
            std::printf("%s  estimate %s, explains %s %%\n  %s\n\n", t.cause.c_str(), human(t.estimate).c_str(),
                        human(100 * t.explained).c_str(), printable(t.evidence).c_str());
        std::printf("\nTests:\n");
        TextTable tab({"cause", "ran", "statistic", "found"}, {false, false, true, false});
        for (const DiagnosisTest& t : d.tests)
            tab.addRow({t.cause, t.ran ? "yes" : "no: " + t.why, t.ran ? human(t.z) : "", t.found ? "yes" : "no"});
        std::printf("%s", tab.render().c_str());
    }
    return 0;
}

}  // namespace kcx::app
