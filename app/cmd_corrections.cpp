// `kcx corrections` (SPEC 11, docs/corrections.md): what the usual off-policy corrections
// would do to this run. Exit 0, or 2 on input or usage errors.
#include <QCommandLineParser>

#include <cstdio>

#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/base/printable.h"
#include "core/contract/contract.h"
#include "core/corrections/corrections.h"
#include "core/corrections/presets.h"

namespace kcx::app {

int runCorrections(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "What the usual off-policy corrections would do to this run (SPEC 11), with w = exp(lp_train - lp_inf):\n"
        "  tis:C           truncate token weights at C\n"
        "  token_mask:A,B  mask tokens with w outside [A, B] (IcePop-style)\n"
        "  geo_mask:A,B    mask sequences whose exp(mean r) lies outside [A, B]\n"
        "  seq_reject:A,B  mask sequences with any token weight outside [A, B]\n"
        "For each: the share of tokens and of sequences affected, and the effective sample size of\n"
        "the weights kept, the share of affected sequences whose reward was positive (when the run has\n"
        "rewards), and the bound chain's step 4 over the tokens kept (rho = max |log w|; the per-token\n"
        "policy-gradient bias is at most G A_max (e^rho - 1), G and A_max from --contract's bounds).\n"
        "Also: tis:A,C (weights clamped to [A, C]), seq_tis:C (every token weighted by min(exp(sum r), C)),\n"
        "product_mask:A,B (mask sequences whose exp(sum r) lies outside [A, B]).\n"
        "Without --method or --preset: tis:2, token_mask:0.5,2, geo_mask:0.99,1.01, seq_reject:0.5,2.\n"
        "Exit codes: 0, 2 input or usage error.");
    p.addHelpOption();
    const QCommandLineOption runOpt("run", "The run (given more than once: read as one).", "RUN");
    const QCommandLineOption methodOpt("method", "A correction, e.g. tis:2 or token_mask:0.5,2 (repeatable).", "M:PARAMS");
    const QCommandLineOption presetOpt("preset",
                                       QString::fromStdString("A framework's own corrections and documented defaults, read from its code "
                                                              "(docs/corrections.md): " + presetNames() + "."),
                                       "FRAMEWORK");
    const QCommandLineOption perSliceOpt("per-slice", "Also per value of this slice key ('step': per training step).", "KEY");
    const QCommandLineOption contractOpt("contract", "Read G and A_max (bounds.grad_norm, bounds.advantage_max) from this contract.",
                                         "C.yaml");
    const QCommandLineOption jsonOpt("json", "Write the SPEC 11 JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption quietOpt("quiet", "No progress or table output.");
    p.addOptions({runOpt, methodOpt, presetOpt, perSliceOpt, contractOpt, jsonOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx corrections --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(runOpt))
        return usageError("corrections needs --run RUN (see kcx corrections --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    std::vector<CorrectionMethod> methods;
    const CorrectionPreset* preset = nullptr;
    if (p.isSet(presetOpt)) {
        preset = findPreset(p.value(presetOpt).toLower().toStdString());
        if (!preset)
            return usageError("--preset: unknown framework '" + p.value(presetOpt) + "' (" + QString::fromStdString(presetNames()) +
                              ")");
        for (const PresetMethod& m : preset->methods)
            methods.push_back(*parseCorrection(m.method));
    }
    for (const QString& m : p.values(methodOpt)) {
        std::string error;
        const auto parsed = parseCorrection(m.toStdString(), &error);
        if (!parsed)
            return usageError("--method: " + QString::fromStdString(error));
        methods.push_back(*parsed);
    }
    if (methods.empty())
        methods = defaultCorrections();
    const bool quiet = p.isSet(quietOpt);
    const QStringList paths = p.values(runOpt);
    auto inputs = runInputs(paths);
    if (p.isSet(contractOpt))
        inputs.push_back({"contract", p.value(contractOpt).toStdString()});
    if (p.isSet(jsonOpt) && refuseOutputOverInput(p.value(jsonOpt), inputs))
        return 2;
    CorrectionsOptions options;
    if (p.isSet(contractOpt)) {
        try {
            const Contract c = loadContract(p.value(contractOpt).toStdString());
            options.gradNorm = c.bounds.gradNorm;
            options.advantageMax = c.bounds.advantageMax;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kcx: %s\n", printable(e.what()).c_str());
            return 2;
        }
    }
    const auto run = openRuns(paths, quiet);
    if (!run)
        return 2;
    if (p.isSet(perSliceOpt)) {
        options.perSlice = p.value(perSliceOpt).toStdString();
        if (run->slices.keyIndex(options.perSlice) < 0) {
            std::string keys;
            for (const std::string& k : run->slices.keys)
                keys += (keys.empty() ? "" : ", ") + k;
            std::fprintf(stderr, "kcx: --per-slice: the run has no slice key '%s' (its keys: %s)\n",
                         printable(options.perSlice).c_str(), keys.empty() ? "none" : printable(keys).c_str());
            return 2;
        }
    }
    const CorrectionsReport r = applyCorrections(*run, methods, options);
    nlohmann::json out = correctionsJson(r);
    if (preset) {
        out["preset"] = {{"framework", preset->framework}, {"lp_train", preset->lpTrain}, {"note", preset->note}};
        for (size_t i = 0; i < preset->methods.size(); ++i) {
            out["methods"][i]["setting"] = preset->methods[i].setting;
            out["methods"][i]["fidelity"] = preset->methods[i].fidelity;
            out["methods"][i]["source"] = preset->methods[i].source;
        }
    }
    if (p.isSet(jsonOpt) && !writeOutput(p.value(jsonOpt), out.dump(2) + "\n"))
        return 2;
    if (!quiet && p.value(jsonOpt) != "-") {
        const bool rewards = !r.rewardSide.empty();
        auto table = [&](const CorrectionsReport& rr) {
            std::vector<std::string> head = {"method", "params", "tokens affected", "sequences affected", "ess after",
                                             "rho after", r.absoluteBias ? "pg bias <=" : "pg bias / (G A_max)"};
            std::vector<bool> right = {false, false, true, true, true, true, true};
            if (rewards) {
                head.push_back("affected with reward > 0");
                right.push_back(true);
            }
            TextTable t(head, right);
            for (const CorrectionResult& c : rr.methods) {
                std::string params;
                for (double v : c.method.params) {
                    if (!params.empty())
                        params += ',';
                    params += human(v);
                }
                std::vector<std::string> row = {c.method.name(), params, human(100 * c.tokenFraction) + " %",
                                                human(100 * c.sequenceFraction) + " %", human(c.ess), human(c.rho), human(c.pgBias)};
                if (rewards)
                    row.push_back(c.affectedWithReward ? human(100 * c.positiveRewardShare) + " % of " +
                                                             std::to_string(c.affectedWithReward)
                                                       : "-");
                t.addRow(row);
            }
            return t.render();
        };
        std::printf("%s: %llu tokens with both log-probs, %llu sequences; ess before %s, rho before %s\n\n%s",
                    qPrintable(paths.join(" + ")), (unsigned long long)r.tokens, (unsigned long long)r.sequences,
                    human(r.essBefore).c_str(), human(r.rhoBefore).c_str(), table(r).c_str());
        if (preset) {
            std::printf("\n%s's corrections (lp_train there: %s):\n", preset->framework.c_str(), preset->lpTrain.c_str());
            for (const PresetMethod& m : preset->methods)
                std::printf("  %-34s %s [%s]\n  %-34s %s\n", m.method.c_str(), printable(m.setting).c_str(),
                            printable(m.fidelity).c_str(), "", printable(m.source).c_str());
            if (!preset->note.empty())
                std::printf("  %s\n", printable(preset->note).c_str());
        }
        for (const CorrectionsGroup& g : r.groups)
            std::printf("\n%s = %s: %llu tokens, %llu sequences\n%s", printable(r.sliceKey).c_str(), printable(g.value).c_str(),
                        (unsigned long long)g.report.tokens, (unsigned long long)g.report.sequences, table(g.report).c_str());
    }
    return 0;
}

}  // namespace kcx::app
