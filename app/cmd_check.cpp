// `kcx check`: the offline-CI gate (SPEC 6, 6.1). Exit 0 pass, 1 fail, 2 input or usage
// error, 3 inconclusive.
#include <QCommandLineParser>

#include <cmath>
#include <cstdio>
#include <optional>

#include "core/base/printable.h"
#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/base/errors.h"
#include "core/base/sha256.h"
#include "core/contract/contract.h"
#include "core/evaluate/evaluation_json.h"
#include "core/evaluate/evaluator.h"
#include "core/evaluate/evaluator_summary.h"

namespace kcx::app {

namespace {

std::string sliceText(const Result& r) {
    if (!r.slice)
        return "-";
    std::string s;
    for (const auto& [k, v] : *r.slice)
        s += (s.empty() ? "" : ",") + k + "=" + v;
    return s;
}

// The threshold a result was (or would have been) compared with. A result that could not
// be decided (too few samples, no values) carries no bounds; those come from its clause.
std::string thresholdText(const Result& r, const Contract& contract) {
    auto f = [](double v) { return human(v); };
    const auto [lo, hi] = comparedBounds(r, contract);
    const bool exceedance = r.family == Family::Statistical && r.aggregate == "exceedance";
    const bool mean = r.family == Family::Statistical && r.aggregate == "mean";
    if (exceedance && hi)
        return "upper " + (r.upper ? f(*r.upper) : std::string("?")) + " <= " + f(*hi);
    if (mean && (lo || hi)) {
        std::string s = r.ci ? "[" + f(r.ci->first) + ", " + f(r.ci->second) + "]" : std::string("[?, ?]");
        return s + " in [" + (lo ? f(*lo) : "-inf") + ", " + (hi ? f(*hi) : "inf") + "]";
    }
    if (lo && hi)
        return "[" + f(*lo) + ", " + f(*hi) + "]";
    if (hi)
        return "<= " + f(*hi);
    if (lo)
        return ">= " + f(*lo);
    return "-";
}

// A numerical quantile's interval, for the reviewer (it decides nothing): "[0.011, 0.024]",
// "[0.24, inf)" when no rank bounds it from above; empty for other results.
std::string intervalText(const Result& r) {
    if (r.family != Family::Numerical || !r.ci)
        return "";
    const auto [lo, hi] = *r.ci;
    return (std::isfinite(lo) ? "[" + human(lo) : std::string("(-inf")) + ", " +
           (std::isfinite(hi) ? human(hi) + "]" : std::string("inf)"));
}

std::string xmlEscape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        case '\t': case '\n': case '\r': o += c; break;
        default: o += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;   // not allowed in XML 1.0
        }
    }
    return o;
}

// JUnit XML: one testcase per result; failures state observed against threshold.
std::string junit(const Contract& c, const Evaluation& ev) {
    size_t failures = 0, errors = 0, skipped = 0;
    std::string cases;
    for (const Result& r : ev.results) {
        std::string name = r.clause + (r.slice ? " [" + sliceText(r) + "]" : "");
        cases += "    <testcase classname=\"kcx." + std::string(familyName(r.family)) + "\" name=\"" + xmlEscape(name) +
                 "\">\n";
        // A result without a number (require, require_equal) states its comparison in its message.
        const std::string what = xmlEscape(r.metric + " " + r.aggregate + ": " +
                                           (r.observed ? "observed " + human(*r.observed) + ", threshold " +
                                                             thresholdText(r, c)
                                                       : r.message) +
                                           "; action " + actionName(r.action));
        if (r.status == Status::Fail) {
            ++failures;
            cases += "      <failure message=\"" + what + "\">" + xmlEscape(r.message) + "</failure>\n";
        } else if (r.status == Status::Error) {
            ++errors;
            cases += "      <error message=\"" + xmlEscape(r.message) + "\"/>\n";
        } else if (r.status == Status::Inconclusive) {
            ++skipped;
            cases += "      <skipped message=\"inconclusive: " + xmlEscape(r.message) + "\"/>\n";
        }
        cases += "    </testcase>\n";
    }
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"kcx contract " +
           xmlEscape(c.name) + "\" tests=\"" + std::to_string(ev.results.size()) + "\" failures=\"" +
           std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" +
           std::to_string(skipped) + "\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

}  // namespace

int runCheck(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription("Evaluate a kernel contract against a run: the offline-CI gate.\n"
                                "Exit codes: 0 pass, 1 fail, 2 input or usage error, 3 inconclusive.");
    p.addHelpOption();
    const QCommandLineOption contractOpt("contract", "The contract (YAML or JSON).", "C.yaml");
    const QCommandLineOption runOpt("run", "The run: .jsonl, .jsonl.gz or .safetensors, a NumPy .npz, or a folder (given more than once: read as one run).", "RUN");
    const QCommandLineOption stageOpt("stage", "The stage to decide the action for (default: the contract's first).",
                                      "S");
    const QCommandLineOption jsonOpt("json", "Write the SPEC 6.1 JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption junitOpt("junit", "Write JUnit XML (one testcase per result) to a file, or '-' for stdout.",
                                      "OUT");
    const QCommandLineOption quietOpt("quiet", "Print nothing but errors; the exit code says the verdict.");
    p.addOptions({contractOpt, runOpt, stageOpt, jsonOpt, junitOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx check --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(contractOpt) || !p.isSet(runOpt))
        return usageError("check needs --contract C and --run RUN (see kcx check --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    const bool quiet = p.isSet(quietOpt);
    const bool jsonToStdout = p.isSet(jsonOpt) && p.value(jsonOpt) == "-";
    const bool junitToStdout = p.isSet(junitOpt) && p.value(junitOpt) == "-";
    if (jsonToStdout && junitToStdout)
        return usageError("only one of --json and --junit can write to stdout ('-')");
    std::vector<NamedInput> inputs = runInputs(p.values(runOpt));
    inputs.push_back({"contract", p.value(contractOpt).toStdString()});
    for (const auto* o : {&jsonOpt, &junitOpt})
        if (p.isSet(*o) && refuseOutputOverInput(p.value(*o), inputs))
            return 2;

    Contract contract;
    try {
        contract = loadContract(p.value(contractOpt).toStdString());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    // A summary (SPEC 10) is evaluated from its cells; every result is the run's status or
    // inconclusive with the summary's resolution as the reason.
    const QStringList runPaths = p.values(runOpt);
    int summaries = 0;
    for (const QString& path : runPaths)
        summaries += looksLikeSummary(path.toStdString()) ? 1 : 0;
    if (summaries && summaries != runPaths.size())
        return usageError("--run takes runs or summaries, not both (kcx summarize turns a run into a summary)");
    std::shared_ptr<const Run> run;
    const RunSummary* summary = nullptr;   // kept until the process ends (keepUntilExit)
    std::string runPath;
    uint64_t sequences = 0, tokens = 0;
    if (summaries) {
        try {
            summary = &keptUntilExit(readSummaries(stdPaths(runPaths)));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
            return 2;
        }
        runPath = runPaths.join(" + ").toStdString();
        sequences = summary->sequences();
        tokens = summary->tokens();
    } else {
        run = openRuns(runPaths, quiet);
        if (!run)
            return 2;
        runPath = run->path;
        sequences = run->sequenceCount();
        tokens = run->tokenCount();
    }
    std::future<std::string> runHash;
    if (p.isSet(jsonOpt))
        runHash = hashInBackground(runPaths);
    Evaluation ev;
    try {
        EvaluateOptions options;
        options.stage = p.value(stageOpt).toStdString();
        ev = summary ? evaluateContractOnSummary(contract, *summary, options)
                     : evaluateContract(contract, run, options, terminalProgress("evaluating", quiet));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }

    if (p.isSet(jsonOpt)) {
        nlohmann::json j = evaluationJson(ev);
        j["contract"] = {{"name", contract.name}, {"version", contract.version}, {"sha256", sha256Hex(contract.text)},
                         {"path", contract.path}};
        j["run"] = {{"path", runPath}, {"sha256", runHash.get()}, {"sequences", sequences}, {"tokens", tokens}};
        if (run && runPaths.size() > 1)
            j["run"]["joined"] = run->header.value("joined", nlohmann::json::array());
        if (summary)
            j["run"]["summary"] = {{"relative_accuracy", kRelativeAccuracy}, {"steps", summary->steps().size()},
                                   {"inputs", summary->inputs.size()}};
        if (!writeOutput(p.value(jsonOpt), j.dump(2) + "\n"))
            return 2;
    }
    if (p.isSet(junitOpt) && !writeOutput(p.value(junitOpt), junit(contract, ev)))
        return 2;
    if (!quiet && !jsonToStdout && !junitToStdout) {
        // A quantile's 95% interval and the values beyond its thresholds sit beside it; the
        // status compares the observed value alone (SPEC 4).
        TextTable t({"clause", "slice", "observed", "95% interval", "threshold", "beyond", "status", "action"},
                    {false, false, true, false, false, true, false, false});
        for (const Result& r : ev.results)
            t.addRow({r.clause, sliceText(r), r.observed ? human(*r.observed) : "-", intervalText(r),
                      thresholdText(r, contract), r.beyond ? std::to_string(*r.beyond) : "", statusName(r.status),
                      r.status == Status::Pass ? "" : actionName(r.action)});
        std::printf("contract %s %s against %s%s (%llu sequences, %llu tokens)\n\n%s\n", contract.name.c_str(),
                    contract.version.c_str(), runPath.c_str(), summary ? " (a summary)" : "",
                    (unsigned long long)sequences, (unsigned long long)tokens, t.render().c_str());
        // Why a result has no number: too few samples, a header value that differs or is absent.
        std::string notes;
        for (const Result& r : ev.results)
            if (r.status != Status::Pass && (!r.observed || summary) && !r.message.empty())
                notes += "  " + r.clause + (r.slice ? " [" + sliceText(r) + "]" : "") + " (" + statusName(r.status) +
                         "): " + r.message + "\n";
        if (!notes.empty())
            std::printf("%s\n", notes.c_str());
        std::string stages;
        for (const auto& s : contract.stages)
            stages += (stages.empty() ? "" : ", ") + s + ": " + actionName(ev.stageActions[s]);
        std::printf("verdict: %s   action at %s: %s\nstages: %s\n", statusName(ev.verdict), ev.stage.c_str(),
                    actionName(ev.action), stages.c_str());
    }
    return ev.verdict == Status::Pass ? 0 : ev.verdict == Status::Fail ? 1 : 3;
}

}  // namespace kcx::app
