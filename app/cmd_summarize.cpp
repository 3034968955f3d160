// `kcx summarize` and `kcx merge` (SPEC 10, docs/summaries.md): runs reduced to summaries
// whose size does not grow with the tokens, and summaries of disjoint shards merged.
#include <QCommandLineParser>

#include <cstdio>
#include <unordered_set>

#include "app/commands.h"
#include "app/common.h"
#include "core/base/errors.h"
#include "core/base/printable.h"
#include "core/base/sha256.h"
#include "core/summary/summary.h"

namespace kcx::app {

namespace {

void sayError(const std::exception& e) { std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str()); }

QCommandLineOption jsonOption() {
    return QCommandLineOption("json",
                              "Write the JSON container (gzip-compressed) instead of the binary one: readable by any "
                              "tool, larger and slower to read (docs/summaries.md, \"The file\").");
}

void write(const RunSummary& s, const QCommandLineParser& p, const QCommandLineOption& out) {
    if (p.isSet("json"))
        writeSummaryJson(s, p.value(out).toStdString());
    else
        writeSummary(s, p.value(out).toStdString());
}

}  // namespace

int runSummarize(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Reduce runs (files, folders, shards) to a summary (SPEC 10, docs/summaries.md): per training step "
        "and slice value, for every metric the data support, exact counts, sums, minimum and maximum, a "
        "quantile sketch (1 % relative accuracy), per-sequence sums and the worst tokens. Several --run are "
        "summarised one after the other and merged: the same summary as merging their own summaries.");
    p.addHelpOption();
    const QCommandLineOption runOpt("run", "A run (any format kcx reads); give it once per shard.", "RUN");
    const QCommandLineOption outOpt("out", "The summary to write (conventionally .kcxsum).", "OUT");
    const QCommandLineOption clipOpt("ppo-clip", "The PPO clip c of clip_excess (default 0.2).", "C", "0.2");
    const QCommandLineOption threadsOpt("threads", "Worker threads (default: all cores).", "N", "0");
    const QCommandLineOption quietOpt("quiet", "No progress output.");
    p.addOptions({runOpt, outOpt, clipOpt, threadsOpt, quietOpt, jsonOption()});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx summarize --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(runOpt) || !p.isSet(outOpt))
        return usageError("summarize needs --run RUN and --out OUT (see kcx summarize --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    SummarizeOptions options;
    if (!readClipAndThreads(p, clipOpt, threadsOpt, options.ppoClip, options.threads))
        return 2;
    const bool quiet = p.isSet(quietOpt);
    const QStringList paths = p.values(runOpt);
    if (refuseOutputOverInput(p.value(outOpt), runInputs(paths)))
        return 2;
    for (int i = 0; i < paths.size(); ++i)
        for (int j = 0; j < i; ++j)
            if (paths[i] == paths[j])
                return usageError("--run " + paths[i] + " is given twice: its tokens would be counted twice");

    RunSummary total;
    std::unordered_set<std::string> ids;   // shards must be disjoint: no id in two of them
    bool first = true;
    for (const QString& path : paths) {
        if (looksLikeSummary(path.toStdString()))
            return usageError(path + " is already a summary: kcx merge combines summaries");
        auto hash = hashInBackground(path.toStdString());
        const auto run = openRun(path, quiet);
        if (!run)
            return 2;
        if (paths.size() > 1)
            for (const std::string& id : run->ids)
                if (!ids.insert(id).second) {
                    std::fprintf(stderr, "kcx: %s: the sequence id \"%s\" is also in an earlier --run; shards must "
                                         "be disjoint\n",
                                 qPrintable(path), kcx::printable(id).c_str());
                    return 2;
                }
        try {
            RunSummary s = summarizeRun(run, options, terminalProgress("summarising", quiet));
            s.inputs.push_back({path.toStdString(), hash.get(), run->sequenceCount(), run->tokenCount()});
            if (first)
                total = std::move(s);
            else
                total.merge(s);
            first = false;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kcx: %s: %s\n", qPrintable(path), kcx::printable(e.what()).c_str());
            return 2;
        }
    }
    try {
        write(total, p, outOpt);
    } catch (const std::exception& e) {
        sayError(e);
        return 2;
    }
    if (!quiet)
        std::fprintf(stderr, "kcx: %s: %llu sequences, %llu tokens, %zu steps, %zu cells\n", qPrintable(p.value(outOpt)),
                     (unsigned long long)total.sequences(), (unsigned long long)total.tokens(), total.steps().size(),
                     total.cells.size());
    return 0;
}

int runMerge(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Merge summaries of disjoint shards into one (SPEC 10). Merging is exact: any order and grouping "
        "gives the same file. A shard that is in two of the inputs is refused.");
    p.addHelpOption();
    const QCommandLineOption outOpt("out", "The merged summary to write.", "OUT");
    const QCommandLineOption threadsOpt("threads", "Parts read at once (default: all cores; the file is the same).",
                                        "N", "0");
    p.addOptions({outOpt, threadsOpt, jsonOption()});
    p.addPositionalArgument("IN", "Summaries to merge (kcx summarize's output, or earlier merges).", "IN.kcxsum...");
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx merge --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    const QStringList inputs = p.positionalArguments();
    if (inputs.isEmpty() || !p.isSet(outOpt))
        return usageError("merge needs IN.kcxsum... and --out OUT (see kcx merge --help)");
    bool ok = false;
    const int threads = p.value(threadsOpt).toInt(&ok);
    if (!ok || threads < 0)
        return usageError("--threads needs a whole number >= 0");
    std::vector<NamedInput> named;
    for (const QString& in : inputs)
        named.push_back({"summary", in.toStdString()});
    if (refuseOutputOverInput(p.value(outOpt), named))
        return 2;
    RunSummary* total = nullptr;
    try {
        total = &keptUntilExit(readSummaries(stdPaths(inputs), threads));
    } catch (const std::exception& e) {
        sayError(e);
        return 2;
    }
    try {
        write(*total, p, outOpt);
    } catch (const std::exception& e) {
        sayError(e);
        return 2;
    }
    return 0;
}

}  // namespace kcx::app
