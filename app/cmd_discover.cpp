// `kcx discover`: where in a run does divergence hide? (docs/slices.md) Exit 0 with or
// without findings, 2 on input or usage errors.
#include <QCommandLineParser>

#include <cstdio>

#include "core/base/printable.h"
#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/discover/discover.h"

namespace kcx::app {

namespace {

std::string conditionsText(const Finding& f) {
    std::string s;
    for (const auto& c : f.conditions)
        s += (s.empty() ? "" : ", ") + c.key + "=" + c.value;
    return s;
}

bool readCount(const QCommandLineParser& p, const QCommandLineOption& o, uint64_t& out) {
    if (!p.isSet(o))
        return true;
    bool ok = false;
    const qulonglong v = p.value(o).toULongLong(&ok);
    if (!ok) {
        usageError("--" + o.names().first() + " needs a whole number, found '" + p.value(o) + "'");
        return false;
    }
    out = v;
    return true;
}

}  // namespace

int runDiscover(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Search the run for slices whose divergence most exceeds the rest of the run: single\n"
        "conditions (labeled slice keys and derived ones, docs/slices.md) and their conjunctions,\n"
        "with the false discovery rate controlled over every slice tested (Benjamini-Hochberg).\n"
        "Exit codes: 0 (findings or none), 2 input or usage error.");
    p.addHelpOption();
    const QCommandLineOption runOpt("run", "The run: .jsonl, .jsonl.gz or .safetensors, a NumPy .npz, or a folder (given more than once: read as one run).", "RUN");
    const QCommandLineOption metricOpt("metric", "Per-token or per-sequence metric (default abs_log_ratio).", "M");
    const QCommandLineOption depthOpt("max-depth", "Conditions per slice: 1, 2 (default) or 3.", "D");
    const QCommandLineOption qOpt("q", "False discovery rate (default 0.05).", "Q");
    const QCommandLineOption minTokOpt("min-tokens", "Fewest values in a slice and in its rest (default 200).", "N");
    const QCommandLineOption minSeqOpt("min-sequences", "Fewest sequences in a slice and in its rest (default 20).",
                                       "N");
    const QCommandLineOption keysOpt("keys", "Comma-separated slice keys to search (default: all).", "K1,K2");
    const QCommandLineOption topOpt("top", "Findings to list (default 20).", "N");
    const QCommandLineOption jsonOpt("json", "Write the findings as JSON to a file, or '-' for stdout.", "OUT");
    const QCommandLineOption quietOpt("quiet", "Print nothing but errors.");
    p.addOptions({runOpt, metricOpt, depthOpt, qOpt, minTokOpt, minSeqOpt, keysOpt, topOpt, jsonOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx discover --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(runOpt))
        return usageError("discover needs --run RUN (see kcx discover --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    DiscoverOptions o;
    if (p.isSet(metricOpt))
        o.metric = p.value(metricOpt).toStdString();
    if (p.isSet(depthOpt)) {
        bool ok = false;
        o.maxDepth = p.value(depthOpt).toInt(&ok);
        if (!ok || o.maxDepth < 1 || o.maxDepth > 3)
            return usageError("--max-depth must be 1, 2 or 3, found '" + p.value(depthOpt) + "'");
    }
    if (p.isSet(qOpt)) {
        bool ok = false;
        o.q = p.value(qOpt).toDouble(&ok);
        if (!ok || !(o.q > 0 && o.q < 1))
            return usageError("--q must lie in (0, 1), found '" + p.value(qOpt) + "'");
    }
    uint64_t top = o.maxFindings;
    if (!readCount(p, minTokOpt, o.minTokens) || !readCount(p, minSeqOpt, o.minSequences) || !readCount(p, topOpt, top))
        return 2;
    o.maxFindings = size_t(top);
    if (p.isSet(keysOpt))
        for (const QString& k : p.value(keysOpt).split(',', Qt::SkipEmptyParts))
            o.keys.push_back(k.trimmed().toStdString());
    const bool quiet = p.isSet(quietOpt);
    const bool jsonToStdout = p.isSet(jsonOpt) && p.value(jsonOpt) == "-";
    if (p.isSet(jsonOpt) && refuseOutputOverInput(p.value(jsonOpt), runInputs(p.values(runOpt))))
        return 2;

    const auto run = openRuns(p.values(runOpt), quiet);
    if (!run)
        return 2;
    Discovery d;
    try {
        MetricEngine engine(run);
        d = discover(engine, o, terminalProgress("searching", quiet || jsonToStdout));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    if (p.isSet(jsonOpt)) {
        nlohmann::json j = discoveryJson(d);
        j["run"] = {{"path", run->path}, {"sequences", run->sequenceCount()}, {"tokens", run->tokenCount()}};
        if (!writeOutput(p.value(jsonOpt), j.dump(2) + "\n"))
            return 2;
    }
    if (quiet || jsonToStdout)
        return 0;
    std::printf("%s over %llu values of %llu sequences; %zu keys: ", d.metric.c_str(), (unsigned long long)d.tokens,
                (unsigned long long)d.sequences, d.keys.size());
    for (size_t i = 0; i < d.keys.size(); ++i)
        std::printf("%s%s", i ? ", " : "", d.keys[i].c_str());
    std::printf("\n");
    for (const auto& s : d.skipped)
        std::printf("  skipped %s\n", s.c_str());
    std::printf("%llu slices tested (support >= %llu values and %llu sequences, slice and rest); "
                "%llu significant at FDR q = %g, %llu of them no stronger than a parent slice.\n\n",
                (unsigned long long)d.tested, (unsigned long long)o.minTokens, (unsigned long long)o.minSequences,
                (unsigned long long)d.significant, d.q, (unsigned long long)d.subsumed);
    if (d.findings.empty()) {
        std::printf("No slice's divergence exceeds the rest of the run at FDR %g.\n", d.q);
        return 0;
    }
    TextTable t({"#", "slice", "values", "seqs", "mean", "rest", "effect", "ci", "ratio", "q"},
                {true, false, true, true, true, true, true, false, true, true});
    for (size_t i = 0; i < d.findings.size(); ++i) {
        const Finding& f = d.findings[i];
        t.addRow({std::to_string(i + 1), conditionsText(f), std::to_string(f.nTokens), std::to_string(f.nSequences),
                  human(f.mean), human(f.restMean), human(f.effect), "[" + human(f.ciLo) + ", " + human(f.ciHi) + "]",
                  human(f.ratio), human(f.qValue)});
    }
    std::printf("%s\nIntervals are %.4g%% (false-coverage-rate adjusted for the %llu selected of %llu tested).\n",
                t.render().c_str(), 100 * d.ciLevel, (unsigned long long)d.significant,
                (unsigned long long)d.tested);
    std::printf("\nA clause for the first finding (paste under 'numerical:'):\n%s", d.findings.front().clause.c_str());
    return 0;
}

}  // namespace kcx::app
