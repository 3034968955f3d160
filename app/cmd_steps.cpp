// `kcx steps` (SPEC 7, docs/steps.md): a metric over training steps, the onset of a
// sustained rise, spikes and what drove them. Exit 0, or 2 on input or usage errors.
#include <QCommandLineParser>

#include <cstdio>

#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/base/printable.h"
#include "core/metrics/metrics.h"
#include "core/steps/steps.h"

namespace kcx::app {

namespace {

std::string sliceText(const StepSeries& s) {
    std::string t;
    for (const auto& [k, v] : s.slice)
        t += (t.empty() ? "" : ", ") + k + "=" + v;
    return t.empty() ? "all sequences" : t;
}

void printSeries(const StepsResult& r) {
    for (const StepSeries& s : r.series) {
        std::printf("\n%s — %s of %s per step\n", sliceText(s).c_str(), r.aggregate.c_str(), r.metric.c_str());
        TextTable t({"step", "value", "95% interval", "values", "sequences", "median", "trimmed mean", "z", ""},
                    {true, true, false, true, true, true, true, true, false});
        for (const StepPointResult& p : s.steps) {
            std::string ci = "-";
            if (p.ci) {
                ci = "[";
                ci += human(p.ci->first);
                ci += ", ";
                ci += human(p.ci->second);
                ci += "]";
            }
            std::string mark;
            for (const StepFlag& f : s.flags)
                if (f.step == p.step)
                    mark = f.onset && f.spike ? "onset, spike" : f.onset ? "onset" : "spike";
            t.addRow({std::to_string(p.step), human(p.value ? *p.value : NAN), ci, std::to_string(p.n),
                      std::to_string(p.sequences), human(p.median ? *p.median : NAN),
                      human(p.trimmedMean ? *p.trimmedMean : NAN), human(p.z ? *p.z : NAN), mark});
        }
        std::printf("%s", t.render().c_str());
        const OnsetResult& test = s.test;
        if (!test.tested)
            std::printf("onset: not tested (%s)\n", test.reason.c_str());
        else if (s.onsetStep)
            std::printf("onset: step %lld (CUSUM %.3g > %.3g at step %lld; baseline: the first %zu steps, level %s)\n",
                        (long long)*s.onsetStep, test.statistic, test.threshold, (long long)*s.alarmStep, test.baseline,
                        human(test.level).c_str());
        else
            std::printf("onset: none (CUSUM %.3g ≤ %.3g; baseline: the first %zu steps, level %s)\n", test.statistic,
                        test.threshold, test.baseline, human(test.level).c_str());
        for (const StepFlag& f : s.flags) {
            if (f.sequences.empty() && f.tokens.empty())
                continue;
            std::printf("  step %lld%s:", (long long)f.step, f.onset ? " (onset)" : " (spike)");
            for (const auto& c : f.sequences)
                std::printf(" %s", printable(c.id).c_str());
            if (!f.tokens.empty()) {
                std::printf("%s worst tokens:", f.sequences.empty() ? "" : ";");
                for (const auto& c : f.tokens)
                    std::printf(" %s@%lld=%s", printable(c.id).c_str(), (long long)c.position, human(c.value).c_str());
            }
            std::printf("\n");
        }
    }
}

}  // namespace

int runSteps(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "A metric over training steps (SPEC 7): per step the aggregate with a 95% interval that treats\n"
        "sequences as the unit, the counts, the median and 10% trimmed mean; the onset of a sustained\n"
        "rise (a CUSUM whose false-alarm probability over the whole series is alpha), spikes, and the\n"
        "sequences and tokens behind each flagged step. The run may be a summary (kcx summarize).\n"
        "Exit codes: 0, 2 input or usage error.");
    p.addHelpOption();
    const QCommandLineOption runOpt("run", "The run or summary (given more than once: read as one).", "RUN");
    const QCommandLineOption metricOpt("metric", "Per-token or per-sequence metric (default abs_log_ratio).", "M",
                                       "abs_log_ratio");
    const QCommandLineOption aggOpt("aggregate", "SPEC 3 aggregate over a step's values (default mean).", "A", "mean");
    const QCommandLineOption sliceOpt("per-slice", "A series for every value of this slice key.", "KEY");
    const QCommandLineOption alphaOpt("alpha", "False-alarm probability of the onset test over all series (default 0.05).",
                                      "P", "0.05");
    const QCommandLineOption topOpt("top", "Sequences and tokens listed per flagged step (default 5).", "N", "5");
    const QCommandLineOption jsonOpt("json", "Write the SPEC 7 JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption clipOpt("ppo-clip", "The PPO clip c of clip_excess (default 0.2).", "C", "0.2");
    const QCommandLineOption threadsOpt("threads", "Worker threads (default: all cores).", "N", "0");
    const QCommandLineOption quietOpt("quiet", "No progress or table output.");
    p.addOptions({runOpt, metricOpt, aggOpt, sliceOpt, alphaOpt, topOpt, jsonOpt, clipOpt, threadsOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx steps --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(runOpt))
        return usageError("steps needs --run RUN (see kcx steps --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    MetricOptions mo;
    if (!readClipAndThreads(p, clipOpt, threadsOpt, mo.ppoClip, mo.threads))
        return 2;
    StepsOptions options;
    options.metric = p.value(metricOpt).toStdString();
    if (!findMetric(options.metric))
        return usageError("unknown metric '" + p.value(metricOpt) + "' (kcx metrics --help lists them)");
    std::string error;
    const auto agg = parseAggregate(p.value(aggOpt).toStdString(), &error);
    if (!agg)
        return usageError("--aggregate: " + QString::fromStdString(error));
    options.aggregate = *agg;
    options.perSlice = p.value(sliceOpt).toStdString();
    bool ok = false;
    options.alpha = p.value(alphaOpt).toDouble(&ok);
    if (!ok || !(options.alpha > 0 && options.alpha < 0.5))
        return usageError("--alpha needs a probability in (0, 0.5)");
    options.top = p.value(topOpt).toUInt(&ok);
    if (!ok)
        return usageError("--top needs a whole number >= 0");
    const bool quiet = p.isSet(quietOpt);
    const QStringList paths = p.values(runOpt);
    if (p.isSet(jsonOpt) && refuseOutputOverInput(p.value(jsonOpt), runInputs(paths)))
        return 2;
    const EvaluationData data = openRunsOrSummaries(paths, quiet);
    if (!data)
        return 2;
    StepsResult result;
    try {
        if (data.summary) {
            result = stepsOfSummary(*data.summary, options);
        } else {
            MetricEngine engine(data.run, mo);
            result = stepsOfRun(engine, options, terminalProgress("computing", quiet || p.value(jsonOpt) == "-"));
        }
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kcx: %s: %s\n", qPrintable(paths.join(" + ")), printable(e.what()).c_str());
        return 2;
    }
    if (p.isSet(jsonOpt) && !writeOutput(p.value(jsonOpt), stepsJson(result).dump(2) + "\n"))
        return 2;
    if (!quiet && p.value(jsonOpt) != "-") {
        std::printf("%s: %s of %s over %zu steps%s; interval: %s\n", qPrintable(paths.join(" + ")),
                    result.aggregate.c_str(), result.metric.c_str(),
                    result.series.empty() ? size_t(0) : result.series.front().steps.size(),
                    result.summary ? " (a summary)" : "", result.interval.c_str());
        if (result.sequencesWithoutStep)
            std::printf("%llu sequences have no step and are left out\n",
                        (unsigned long long)result.sequencesWithoutStep);
        printSeries(result);
    }
    return 0;
}

}  // namespace kcx::app
