// `kcx metrics`: every divergence metric of a run, summarised (SPEC 6, 6.2).
#include <QCommandLineParser>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/base/errors.h"
#include "core/base/printable.h"
#include "core/base/csv_cell.h"
#include "core/base/sha256.h"
#include "core/corrections/frameworks.h"
#include "core/metrics/metrics.h"
#include "core/summary/summary.h"

namespace kcx::app {

int usageError(const QString& message) {
    std::fprintf(stderr, "kcx: %s\n", qPrintable(message));
    return 2;
}

namespace {

void sayErrorText(const char* what) { std::fprintf(stderr, "kcx: %s\n", kcx::printable(what).c_str()); }

nlohmann::json summaryJson(const MetricValues& v, const Summary& s) {
    nlohmann::json j;
    j["count"] = s.count;
    if (s.count) {
        j["mean"] = *s.mean;
        j["min"] = *s.min;
        j["max"] = *s.max;
        j["p50"] = *s.p50;
        j["p99"] = *s.p99;
        j["p99.9"] = *s.p999;
        if (v.level == MetricLevel::Run)
            j["value"] = v.values[0];
    }
    j["nonfinite_count"] = s.nonfinite;
    j["missing_count"] = s.missing;
    j["level"] = levelName(v.level);
    return j;
}

bool writePerTokenCsv(const QString& path, const Run& run,
                      const std::vector<std::shared_ptr<const MetricValues>>& metrics) {
    std::optional<AtomicOutputStream> out;   // written whole or not at all
    try {
        out.emplace(path.toStdString());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return false;
    }
    std::ostream& f = *out;
    f << "sequence,position,token";
    std::vector<const MetricValues*> tok;
    for (const auto& m : metrics)
        if (m->level == MetricLevel::Token) {
            tok.push_back(m.get());
            f << ',' << m->name;
        }
    f << '\n';
    char buf[40];
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        // Quoted (RFC 4180) and, when a spreadsheet would run it as a formula, neutralised.
        const std::string id = csvTextCell(run.ids[s]);
        for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
            f << id << ',' << (i - run.seqBegin(s)) << ',' << run.tokens[i];
            for (const MetricValues* m : tok) {
                f << ',';
                const double v = m->values[i];
                if (!std::isnan(v)) {
                    std::snprintf(buf, sizeof buf, "%.17g", v);
                    f << buf;
                }
            }
            f << '\n';
        }
    }
    return out->commit();
}

// `kcx metrics` on summaries (SPEC 10): counts, means, minima and maxima exact; quantiles
// from the sketch, within 1 % (relative) of the order statistics they interpolate between.
int metricsOfSummaries(const QStringList& paths, const std::vector<std::string>& names, const QString& jsonOut,
                       bool quiet) {
    RunSummary* read = nullptr;
    try {
        read = &keptUntilExit(readSummaries(stdPaths(paths)));
    } catch (const std::exception& e) {
        sayErrorText(e.what());
        return 2;
    }
    const RunSummary& sum = *read;
    const std::optional<CellData> all = sum.total();
    nlohmann::json metricsJson = nlohmann::json::object();
    TextTable table({"metric", "level", "count", "mean", "min", "max", "p50~", "p99~", "p99.9~", "nonfinite", "missing"},
                    {false, false, true, true, true, true, true, true, true, true, true});
    auto opt = [](const std::optional<double>& x) { return human(x ? *x : NAN); };
    for (const std::string& name : names) {
        const MetricInfo& info = *findMetric(name);
        nlohmann::json j;
        Summary s;
        if (info.level == MetricLevel::Run) {
            const RunSums r = all ? all->run : RunSums{};
            const double v = name == "ess" ? essOf(r) : name == "prob_pearson" ? probPearsonOf(r) : logPplDiffOf(r);
            s.missing = r.missing;
            s.nonfinite = name == "ess" ? r.nonfinite : r.nonfinite - (r.pairs - r.ratios);
            if (std::isfinite(v)) {
                s.count = 1;
                s.mean = s.min = s.max = s.p50 = s.p99 = s.p999 = v;
            }
        } else if (all) {
            MetricCell implied;
            if (const MetricCell* m = sum.metric(*all, name, implied)) {
                const MetricCell& c = *m;
                s.count = c.count;
                s.missing = c.missing;
                s.nonfinite = c.nonfinite;
                if (c.count) {
                    s.mean = c.mean();
                    s.min = c.min;
                    s.max = c.max;
                    s.p50 = sketchQuantile(c, 0.5);
                    s.p99 = sketchQuantile(c, 0.99);
                    s.p999 = sketchQuantile(c, 0.999);
                }
            }
        }
        MetricValues shell;   // the level, and a run metric's value, as summaryJson reads them
        shell.level = info.level;
        shell.values = {s.mean ? *s.mean : NAN};
        j = summaryJson(shell, s);
        if (s.count && info.level != MetricLevel::Run)
            j["quantile_relative_error"] = kRelativeAccuracy;
        metricsJson[name] = std::move(j);
        table.addRow({name, levelName(info.level), std::to_string(s.count), opt(s.mean), opt(s.min), opt(s.max),
                      opt(s.p50), opt(s.p99), opt(s.p999), std::to_string(s.nonfinite), std::to_string(s.missing)});
    }
    if (!jsonOut.isEmpty()) {
        nlohmann::json j;
        j["kcx"] = 1;
        nlohmann::json inputs = nlohmann::json::array();
        for (const SummaryInput& in : sum.inputs)
            inputs.push_back({{"path", in.path}, {"sha256", in.sha256}, {"sequences", in.sequences}, {"tokens", in.tokens}});
        std::string hash;
        try {
            if (paths.size() == 1)
                hash = sha256File(paths.first().toStdString());
            else
                hash = hashInBackground(paths).get();
        } catch (const std::exception& e) {
            sayErrorText(e.what());
            return 2;
        }
        j["run"] = {{"path", paths.join(" + ").toStdString()},
                    {"sha256", hash},
                    {"sequences", sum.sequences()},
                    {"tokens", sum.tokens()},
                    {"summary", {{"relative_accuracy", kRelativeAccuracy}, {"steps", sum.steps().size()},
                                 {"inputs", std::move(inputs)}}}};
        j["metrics"] = std::move(metricsJson);
        if (!writeOutput(jsonOut, j.dump(2) + "\n"))
            return 2;
    }
    if (!quiet && jsonOut != "-")
        std::printf("%s (summary of %zu inputs): %llu sequences, %llu tokens; ~ quantiles from the sketch, within 1 %% "
                    "(relative)\n\n%s",
                    qPrintable(paths.join(" + ")), sum.inputs.size(), (unsigned long long)sum.sequences(),
                    (unsigned long long)sum.tokens(), table.render().c_str());
    return 0;
}

// `kcx metrics --as FRAMEWORK`: the framework's own names and formulas (core/corrections/frameworks).
int metricsAs(const QStringList& paths, const std::string& framework, const QString& json, bool quiet, bool conflicting) {
    const auto names = frameworkNames();
    if (std::find(names.begin(), names.end(), framework) == names.end()) {
        std::string known;
        for (const std::string& n : names)
            known += (known.empty() ? "" : ", ") + n;
        return usageError("--as: unknown framework '" + QString::fromStdString(framework) + "' (" +
                          QString::fromStdString(known) + ")");
    }
    if (conflicting)
        return usageError("--as prints the framework's own figures; it does not combine with --metrics or --per-token");
    for (const QString& path : paths)
        if (looksLikeSummary(path.toStdString()))
            return usageError("--as needs the run itself: the frameworks' formulas read every token");
    if (!json.isEmpty() && refuseOutputOverInput(json, runInputs(paths)))
        return 2;
    const auto run = openRuns(paths, quiet);
    if (!run)
        return 2;
    const auto figures = frameworkFigures(*run, framework);
    if (!json.isEmpty() && !writeOutput(json, frameworkFiguresJson(framework, figures).dump(2) + "\n"))
        return 2;
    if (!quiet && json != "-") {
        TextTable t({"name", "value", "formula", "in KCX"}, {false, true, false, false});
        for (const FrameworkFigure& f : figures)
            t.addRow({f.name, human(f.value), f.formula, f.kcx.empty() ? "-" : f.kcx});
        std::printf("%s as %s computes it:\n\n%s\nSources:\n", qPrintable(paths.join(" + ")), framework.c_str(), t.render().c_str());
        std::string last;
        for (const FrameworkFigure& f : figures)
            if (f.source != last) {
                std::printf("  %s\n", printable(f.source).c_str());
                last = f.source;
            }
    }
    return 0;
}

}  // namespace

int runMetrics(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription("Compute every divergence metric of SPEC 2 that the run's data supports, "
                                "and print count, mean, min, max, p50, p99, p99.9 and the non-finite and "
                                "missing counts of each.");
    p.addHelpOption();
    const QCommandLineOption runOpt("run", "The run: .jsonl, .jsonl.gz or .safetensors, a NumPy .npz, or a folder (given more than once: read as one run).", "RUN");
    const QCommandLineOption metricsOpt("metrics", "Only these metrics (comma-separated names).", "m1,m2");
    const QCommandLineOption perTokenOpt("per-token", "Also write every per-token value to a CSV file.", "OUT.csv");
    const QCommandLineOption jsonOpt("json", "Write the SPEC 6.2 JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption clipOpt("ppo-clip", "The PPO clip c of clip_excess (default 0.2).", "C", "0.2");
    const QCommandLineOption threadsOpt("threads", "Worker threads (default: all cores).", "N", "0");
    const QCommandLineOption quietOpt("quiet", "No progress or table output.");
    const QCommandLineOption asOpt("as",
                                   "The run's figures under a framework's own metric names and formulas, read from its code "
                                   "(verl, slime, prime-rl, nemo-rl, trl, skyrl, openrlhf; docs/corrections.md). With --json, "
                                   "that framework's figures instead of SPEC 6.2's.",
                                   "FRAMEWORK");
    p.addOptions({runOpt, metricsOpt, perTokenOpt, jsonOpt, clipOpt, threadsOpt, quietOpt, asOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx metrics --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(runOpt))
        return usageError("metrics needs --run RUN (see kcx metrics --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    MetricOptions options;
    if (!readClipAndThreads(p, clipOpt, threadsOpt, options.ppoClip, options.threads))
        return 2;
    if (p.isSet(asOpt))
        return metricsAs(p.values(runOpt), p.value(asOpt).toLower().toStdString(), p.isSet(jsonOpt) ? p.value(jsonOpt) : QString(),
                         p.isSet(quietOpt), p.isSet(metricsOpt) || p.isSet(perTokenOpt));

    std::vector<std::string> names;
    if (p.isSet(metricsOpt)) {
        for (const QString& n : p.value(metricsOpt).split(',', Qt::SkipEmptyParts)) {
            if (!findMetric(n.trimmed().toStdString())) {
                QString known;
                for (const auto& m : metricCatalog())
                    known += QString::fromStdString(m.name) + " ";
                return usageError("unknown metric '" + n.trimmed() + "'; known metrics: " + known.trimmed());
            }
            names.push_back(n.trimmed().toStdString());
        }
    } else {
        for (const auto& m : metricCatalog())
            names.push_back(m.name);
    }
    const bool quiet = p.isSet(quietOpt);
    const QStringList paths = p.values(runOpt);
    int summaries = 0;
    for (const QString& path : paths)
        summaries += looksLikeSummary(path.toStdString()) ? 1 : 0;
    if (summaries) {
        if (summaries != paths.size())
            return usageError("--run takes runs or summaries, not both (kcx summarize turns a run into a summary)");
        if (p.isSet(perTokenOpt))
            return usageError("--per-token needs the run itself: a summary keeps no per-token values");
        if (p.isSet(jsonOpt) && refuseOutputOverInput(p.value(jsonOpt), runInputs(paths)))
            return 2;
        return metricsOfSummaries(paths, names, p.isSet(jsonOpt) ? p.value(jsonOpt) : QString(), quiet);
    }
    for (const auto* o : {&perTokenOpt, &jsonOpt})
        if (p.isSet(*o) && refuseOutputOverInput(p.value(*o), runInputs(paths)))
            return 2;
    const auto run = openRuns(paths, quiet);
    if (!run)
        return 2;

    std::future<std::string> runHash;
    if (p.isSet(jsonOpt))
        runHash = hashInBackground(paths);
    MetricEngine engine(run, options);
    std::vector<std::shared_ptr<const MetricValues>> values;
    nlohmann::json metricsJson = nlohmann::json::object();
    TextTable table({"metric", "level", "count", "mean", "min", "max", "p50", "p99", "p99.9", "nonfinite", "missing"},
                    {false, false, true, true, true, true, true, true, true, true, true});
    const Progress progress = terminalProgress("computing", quiet || p.value(jsonOpt) == "-");
    // Without --per-token only the summaries are needed: one array at a time, released once
    // summarised, and none at all for a token metric whose inputs the run lacks (all of its
    // M values are missing). Before, every array stayed to the end, NaN arrays included: 15x
    // the file's size on a log-prob-only run (issue 17).
    const bool perToken = p.isSet(perTokenOpt);
    // prob_pearson's pass gives ess and log_ppl_diff too: asked first, the three cost one.
    if (std::find(names.begin(), names.end(), "prob_pearson") != names.end())
        engine.get("prob_pearson");
    for (size_t i = 0; i < names.size(); ++i) {
        const MetricInfo& info = *findMetric(names[i]);
        const bool lacks = lacksInputs(info, run->hasTopK(), run->hasLogits());
        std::shared_ptr<const MetricValues> v;
        std::optional<Summary> streamed;
        if (!lacks && !perToken && info.level == MetricLevel::Token) {
            // Summarised as it is computed, block by block: no array at all (issue 17).
            streamed = engine.summary(names[i]);
            auto shell = std::make_shared<MetricValues>();
            shell->name = names[i];
            shell->level = info.level;
            v = std::move(shell);
        } else if (lacks && !perToken) {
            auto none = std::make_shared<MetricValues>();
            none->name = names[i];
            none->level = MetricLevel::Token;
            none->missing = run->tokenCount();
            v = std::move(none);
        } else {
            v = engine.get(names[i]);
        }
        if (perToken)
            values.push_back(v);
        const Summary s = streamed ? *streamed : summarize(*v, options.threads);
        metricsJson[names[i]] = summaryJson(*v, s);
        auto opt = [](const std::optional<double>& x) { return human(x ? *x : NAN); };
        table.addRow({names[i], levelName(v->level), std::to_string(s.count), opt(s.mean), opt(s.min), opt(s.max),
                      opt(s.p50), opt(s.p99), opt(s.p999), std::to_string(s.nonfinite), std::to_string(s.missing)});
        if (!perToken) {
            v.reset();   // the engine's is then the last reference: it reuses the array
            engine.release(names[i]);
        }
        if (progress)
            progress(double(i + 1) / double(names.size()));
    }
    if (p.isSet(perTokenOpt) && !writePerTokenCsv(p.value(perTokenOpt), *run, values))
        return 2;
    if (p.isSet(jsonOpt)) {
        nlohmann::json j;
        j["kcx"] = 1;
        j["run"] = {{"path", run->path},
                    {"sha256", runHash.get()},
                    {"sequences", run->sequenceCount()},
                    {"tokens", run->tokenCount()}};
        if (paths.size() > 1)   // the runs read as one; sha256 is that of their list (docs/formats.md)
            j["run"]["joined"] = run->header.value("joined", nlohmann::json::array());
        j["metrics"] = std::move(metricsJson);
        if (!writeOutput(p.value(jsonOpt), j.dump(2) + "\n"))
            return 2;
    }
    if (!quiet && p.value(jsonOpt) != "-") {
        std::printf("%s: %zu sequences, %zu tokens\n\n%s", qPrintable(paths.join(" + ")), run->sequenceCount(), run->tokenCount(),
                    table.render().c_str());
    }
    return 0;
}

}  // namespace kcx::app
