// `kcx replay` (SPEC 8, docs/steps.md): the contract evaluated step by step with the
// escalation rules' `persist` and `until`; exit codes as `kcx check` for the last step.
#include <QCommandLineParser>

#include <cstdio>

#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/base/printable.h"
#include "core/base/sha256.h"
#include "core/steps/replay.h"

namespace kcx::app {

int runReplay(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Evaluate a contract on each training step's sequences alone, in step order, applying the\n"
        "escalation rules' persist and until (SPEC 8): each step's verdict and action per stage, and\n"
        "the steps where a stage's action changed. The run may be a summary (kcx summarize).\n"
        "Exit codes (for the last step, as kcx check): 0 pass, 1 fail, 2 input or usage error,\n"
        "3 inconclusive.");
    p.addHelpOption();
    const QCommandLineOption contractOpt("contract", "The contract (YAML or JSON).", "C.yaml");
    const QCommandLineOption runOpt("run", "The run or summary (given more than once: read as one).", "RUN");
    const QCommandLineOption jsonOpt("json", "Write the SPEC 8 JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption quietOpt("quiet", "No progress or table output.");
    p.addOptions({contractOpt, runOpt, jsonOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx replay --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(contractOpt) || !p.isSet(runOpt))
        return usageError("replay needs --contract C and --run RUN (see kcx replay --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    const bool quiet = p.isSet(quietOpt);
    const bool toStdout = p.value(jsonOpt) == "-";
    const QStringList paths = p.values(runOpt);
    std::vector<NamedInput> inputs = runInputs(paths);
    inputs.push_back({"contract", p.value(contractOpt).toStdString()});
    if (p.isSet(jsonOpt) && refuseOutputOverInput(p.value(jsonOpt), inputs))
        return 2;
    Contract contract;
    try {
        contract = loadContract(p.value(contractOpt).toStdString());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", printable(e.what()).c_str());
        return 2;
    }
    const EvaluationData data = openRunsOrSummaries(paths, quiet);
    if (!data)
        return 2;
    std::future<std::string> runHash;
    if (p.isSet(jsonOpt))
        runHash = hashInBackground(paths);
    Replay replay;
    try {
        replay = replayContract(contract, data, terminalProgress("replaying", quiet || toStdout));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kcx: %s: %s\n", qPrintable(paths.join(" + ")), printable(e.what()).c_str());
        return 2;
    }
    if (p.isSet(jsonOpt)) {
        nlohmann::json header;
        header["contract"] = {{"name", contract.name}, {"version", contract.version}, {"sha256", sha256Hex(contract.text)},
                              {"path", contract.path}};
        header["run"] = {{"path", paths.join(" + ").toStdString()}, {"sha256", runHash.get()}};
        if (data.summary)
            header["run"]["summary"] = true;
        if (!writeOutput(p.value(jsonOpt), replayJson(replay, contract, header).dump(2) + "\n"))
            return 2;
    }
    if (!quiet && !toStdout) {
        std::vector<std::string> head{"step", "verdict"};
        std::vector<bool> right{true, false};
        for (const std::string& s : contract.stages) {
            head.push_back(s);
            right.push_back(false);
        }
        head.push_back("not passing");
        right.push_back(false);
        TextTable t(head, right);
        for (const ReplayStep& st : replay.steps) {
            std::vector<std::string> row{std::to_string(st.step), statusName(st.verdict)};
            for (const std::string& s : contract.stages)
                row.push_back(actionName(st.actions.at(s)));
            std::string failing;
            for (const Result& r : st.results)
                if (r.status != Status::Pass) {
                    std::string slice;
                    if (r.slice)
                        for (const auto& [k, v] : *r.slice)
                            slice += (slice.empty() ? "" : ",") + k + "=" + v;
                    failing += (failing.empty() ? "" : " ") + r.clause + (slice.empty() ? "" : "[" + slice + "]");
                }
            row.push_back(printable(failing));
            t.addRow(std::move(row));
        }
        std::printf("contract %s %s replayed over %zu steps of %s%s\n\n%s", contract.name.c_str(),
                    contract.version.c_str(), replay.steps.size(), qPrintable(paths.join(" + ")),
                    data.summary ? " (a summary)" : "", t.render().c_str());
        if (replay.sequencesWithoutStep)
            std::printf("%llu sequences have no step and are left out\n",
                        (unsigned long long)replay.sequencesWithoutStep);
        std::printf("\nevents:%s\n", replay.events.empty() ? " none" : "");
        for (const ReplayEvent& e : replay.events)
            std::printf("  step %lld  %s: %s -> %s\n", (long long)e.step, e.stage.c_str(), actionName(e.from),
                        actionName(e.to));
    }
    const Status last = replay.steps.empty() ? Status::Pass : replay.steps.back().verdict;
    return last == Status::Pass ? 0 : last == Status::Fail ? 1 : 3;
}

}  // namespace kcx::app
