// `kcx compare` (SPEC 9, docs/steps.md): is B's kernel pair worse than A's? Exit 0 when
// nothing is worse, 1 when something is, 2 on input or usage errors.
#include <QCommandLineParser>

#include <cstdio>

#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/base/printable.h"
#include "core/metrics/metrics.h"
#include "core/steps/compare.h"

namespace kcx::app {

int runCompare(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Is B's kernel pair worse than A's (a kernel upgrade, a fix, a new precision)? For each metric\n"
        "and slice: the aggregate in A and in B, the difference B - A with a 95% interval over\n"
        "sequences, and a verdict (worse, better, same) with the false discovery rate held at Q over\n"
        "everything tested (SPEC 9). Either side may be a summary (kcx summarize).\n"
        "Exit codes: 0 nothing worse, 1 something worse, 2 input or usage error.");
    p.addHelpOption();
    const QCommandLineOption aOpt("a", "Run A, the reference (given more than once: read as one).", "RUN_A");
    const QCommandLineOption bOpt("b", "Run B, the candidate.", "RUN_B");
    const QCommandLineOption metricOpt("metric", "Metrics, comma-separated (default abs_log_ratio).", "M[,M...]",
                                       "abs_log_ratio");
    const QCommandLineOption aggOpt("aggregate", "SPEC 3 aggregate (default mean).", "A", "mean");
    const QCommandLineOption sliceOpt("per-slice", "Compare every value of this slice key.", "KEY");
    const QCommandLineOption qOpt("q", "False discovery rate (default 0.05).", "Q", "0.05");
    const QCommandLineOption jsonOpt("json", "Write the SPEC 9 JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption clipOpt("ppo-clip", "The PPO clip c of clip_excess (default 0.2).", "C", "0.2");
    const QCommandLineOption threadsOpt("threads", "Worker threads (default: all cores).", "N", "0");
    const QCommandLineOption quietOpt("quiet", "No progress or table output.");
    p.addOptions({aOpt, bOpt, metricOpt, aggOpt, sliceOpt, qOpt, jsonOpt, clipOpt, threadsOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx compare --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(aOpt) || !p.isSet(bOpt))
        return usageError("compare needs --a RUN_A and --b RUN_B (see kcx compare --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    CompareOptions options;
    if (!readClipAndThreads(p, clipOpt, threadsOpt, options.ppoClip, options.threads))
        return 2;
    options.metrics.clear();
    for (const QString& m : p.value(metricOpt).split(',', Qt::SkipEmptyParts)) {
        if (!findMetric(m.trimmed().toStdString()))
            return usageError("unknown metric '" + m.trimmed() + "' (kcx metrics --help lists them)");
        options.metrics.push_back(m.trimmed().toStdString());
    }
    if (options.metrics.empty())
        return usageError("--metric needs at least one metric");
    std::string error;
    const auto agg = parseAggregate(p.value(aggOpt).toStdString(), &error);
    if (!agg)
        return usageError("--aggregate: " + QString::fromStdString(error));
    options.aggregate = *agg;
    options.perSlice = p.value(sliceOpt).toStdString();
    bool ok = false;
    options.q = p.value(qOpt).toDouble(&ok);
    if (!ok || !(options.q > 0 && options.q < 1))
        return usageError("--q needs a rate in (0, 1)");
    const bool quiet = p.isSet(quietOpt);
    const bool toStdout = p.value(jsonOpt) == "-";
    std::vector<NamedInput> inputs = runInputs(p.values(aOpt));
    for (const NamedInput& in : runInputs(p.values(bOpt)))
        inputs.push_back(in);
    if (p.isSet(jsonOpt) && refuseOutputOverInput(p.value(jsonOpt), inputs))
        return 2;
    const EvaluationData a = openRunsOrSummaries(p.values(aOpt), quiet, "--a");
    if (!a)
        return 2;
    const EvaluationData b = openRunsOrSummaries(p.values(bOpt), quiet, "--b");
    if (!b)
        return 2;
    Comparison c;
    try {
        c = compareRuns(a, b, options, terminalProgress("comparing", quiet || toStdout));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kcx: %s\n", printable(e.what()).c_str());
        return 2;
    }
    if (p.isSet(jsonOpt)) {
        nlohmann::json j = compareJson(c);
        j["a"] = {{"path", p.values(aOpt).join(" + ").toStdString()}, {"summary", a.summary != nullptr}};
        j["b"] = {{"path", p.values(bOpt).join(" + ").toStdString()}, {"summary", b.summary != nullptr}};
        if (!writeOutput(p.value(jsonOpt), j.dump(2) + "\n"))
            return 2;
    }
    if (!quiet && !toStdout) {
        TextTable t({"metric", "slice", "A", "B", "B - A", "95% interval", "q", "verdict"},
                    {false, false, true, true, true, false, true, false});
        for (const CompareResult& r : c.results) {
            std::string slice;
            for (const auto& [k, v] : r.slice)
                slice += k + "=" + v;
            std::string ci = "[";
            ci += human(r.lo);
            ci += ", ";
            ci += human(r.hi);
            ci += "]";
            t.addRow({r.metric, printable(slice.empty() ? "all" : slice), human(*r.a.value), human(*r.b.value),
                      human(r.diff), ci, human(r.q), r.verdict});
        }
        std::printf("%s of B (%s) against A (%s); false discovery rate %g over %zu tests\n\n%s",
                    c.aggregate.c_str(), qPrintable(p.values(bOpt).join(" + ")), qPrintable(p.values(aOpt).join(" + ")),
                    c.q, c.results.size(), t.render().c_str());
        for (const CompareSkip& s : c.skipped) {
            std::string slice;
            for (const auto& [k, v] : s.slice)
                slice += k + "=" + v;
            std::printf("untested: %s %s: %s\n", s.metric.c_str(), printable(slice).c_str(), s.why.c_str());
        }
        std::printf("\n%s\n", c.anyWorse() ? "B is worse somewhere" : "B is worse nowhere");
    }
    return c.anyWorse() ? 1 : 0;
}

}  // namespace kcx::app
