// `kcx import`: pair an inference log-prob dump with a training one into a native run;
// `kcx convert`: write any run kcx can open as native safetensors (docs/formats.md).
#include <QCommandLineParser>

#include <cstdio>

#include "app/commands.h"
#include "app/common.h"
#include "core/errors.h"
#include "core/importers.h"
#include "core/loader.h"
#include "core/run_writer.h"

namespace kcx::app {
namespace {

constexpr size_t kShown = 20;   // mismatches and one-sided ids listed before "... and N more"

void listIds(const char* what, const std::vector<std::string>& ids) {
    if (ids.empty())
        return;
    std::fprintf(stderr, "kcx: %zu record id(s) only in the %s file:", ids.size(), what);
    for (size_t i = 0; i < std::min(ids.size(), kShown); ++i)
        std::fprintf(stderr, " %s", ids[i].c_str());
    if (ids.size() > kShown)
        std::fprintf(stderr, " ... and %zu more", ids.size() - kShown);
    std::fprintf(stderr, "\n");
}

void listMismatches(const ImportResult& r) {
    for (size_t i = 0; i < std::min(r.mismatches.size(), kShown); ++i) {
        const auto& m = r.mismatches[i];
        std::fprintf(stderr, "  record %s, position %zu: inf %s, train %s\n", m.id.c_str(), m.position, m.inf.c_str(),
                     m.train.c_str());
    }
    if (r.mismatches.size() > kShown)
        std::fprintf(stderr, "  ... and %zu more\n", r.mismatches.size() - kShown);
}

bool parseOrHelp(QCommandLineParser& p, const QStringList& args, const char* name, int& code) {
    p.addHelpOption();
    if (!p.parse(args)) {
        code = usageError(p.errorText() + " (see kcx " + name + " --help)");
        return false;
    }
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        code = 0;
        return false;
    }
    return true;
}

bool write(const Run& run, const QString& out) {
    try {
        writeSafetensors(run, out.toStdString());
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", e.what());
        return false;
    }
}

}  // namespace

int runImport(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Pair an inference-side log-prob dump with a training-side one and write a native run.\n"
        "Each file is JSON Lines: OpenAI chat or completions responses with logprobs (vLLM, SGLang,\n"
        "OpenAI), SGLang /generate output with return_logprob, or plain {\"id\", \"logp_train\"|\n"
        "\"logp_inf\"|\"logp\", \"tokens\"} arrays. Records pair by id, positions by order; both\n"
        "sides must have seen the same tokens. See docs/formats.md.");
    const QCommandLineOption infOpt("inf", "The inference side (.jsonl or .jsonl.gz).", "A.jsonl");
    const QCommandLineOption trainOpt("train", "The training side (.jsonl or .jsonl.gz).", "B.jsonl");
    const QCommandLineOption outOpt("out", "The run to write (.safetensors).", "RUN.safetensors");
    const QCommandLineOption allowOpt("allow-mismatch", "Drop records whose tokens differ instead of failing.");
    const QCommandLineOption quietOpt("quiet", "Only errors.");
    p.addOptions({infOpt, trainOpt, outOpt, allowOpt, quietOpt});
    int code = 0;
    if (!parseOrHelp(p, args, "import", code))
        return code;
    if (!p.isSet(infOpt) || !p.isSet(trainOpt) || !p.isSet(outOpt))
        return usageError("import needs --inf A.jsonl --train B.jsonl --out RUN.safetensors (see kcx import --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    const bool quiet = p.isSet(quietOpt);
    ImportResult r;
    try {
        ImportOptions options;
        options.allowMismatch = p.isSet(allowOpt);
        const ImportedSide inf = readLogprobFile(p.value(infOpt).toStdString());
        const ImportedSide train = readLogprobFile(p.value(trainOpt).toStdString());
        r = importPair(inf, train, options);
    } catch (const InputError& e) {
        std::fprintf(stderr, "kcx: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", e.what());
        return 2;
    }
    listIds("inf", r.onlyInf);
    listIds("train", r.onlyTrain);
    if (!r.ok()) {
        std::fprintf(stderr, "kcx: the two sides saw different tokens: %zu mismatched position(s) in %zu record(s)\n",
                     r.mismatches.size(), r.mismatchedRecords);
        listMismatches(r);
        std::fprintf(stderr, "kcx: nothing written; --allow-mismatch drops those records instead\n");
        return 2;
    }
    if (r.droppedRecords) {
        std::fprintf(stderr, "kcx: dropped %zu record(s) whose tokens differ (%zu position(s)):\n", r.droppedRecords,
                     r.mismatches.size());
        listMismatches(r);
    }
    if (r.run.sequenceCount() == 0) {
        std::fprintf(stderr, "kcx: no record is present on both sides with the same tokens; nothing written\n");
        return 2;
    }
    if (!write(r.run, p.value(outOpt)))
        return 2;
    if (!quiet) {
        std::printf("%s: %zu sequences, %zu tokens (%zu paired, %zu dropped, %zu only inf, %zu only train)\n",
                    qPrintable(p.value(outOpt)), r.run.sequenceCount(), r.run.tokenCount(), r.paired,
                    r.droppedRecords, r.onlyInf.size(), r.onlyTrain.size());
        std::printf("missing log-probs (null or -9999.0): inf %zu, train %zu\n", r.missingInf, r.missingTrain);
        std::printf("top-k: inf k=%d, train k=%d", r.topkInf, r.topkTrain);
        if (r.topkRowsTrimmed)
            std::printf(" (%zu longer rows cut to k)", r.topkRowsTrimmed);
        std::printf("\ntoken ids: %s\n", r.vocabularyIds
                                             ? qPrintable(QString("from a vocabulary of %1 token strings (header "
                                                                  "import.vocabulary)").arg(r.vocabularySize))
                                             : "as given by the files");
        if (r.uncheckedPositions)
            std::printf("%zu position(s) could not be compared (one side gave no token)\n", r.uncheckedPositions);
    }
    return 0;
}

int runConvert(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription("Write any run kcx can open (.jsonl, .jsonl.gz, .safetensors) as native safetensors.");
    p.addPositionalArgument("IN", "The run to read.");
    const QCommandLineOption outOpt("out", "The run to write (.safetensors).", "RUN.safetensors");
    const QCommandLineOption quietOpt("quiet", "Only errors.");
    p.addOptions({outOpt, quietOpt});
    int code = 0;
    if (!parseOrHelp(p, args, "convert", code))
        return code;
    if (p.positionalArguments().size() != 1 || !p.isSet(outOpt))
        return usageError("convert needs IN --out RUN.safetensors (see kcx convert --help)");
    const auto run = openRun(p.positionalArguments().first(), p.isSet(quietOpt));
    if (!run)
        return 2;
    if (!write(*run, p.value(outOpt)))
        return 2;
    if (!p.isSet(quietOpt))
        std::printf("%s: %zu sequences, %zu tokens\n", qPrintable(p.value(outOpt)), run->sequenceCount(),
                    run->tokenCount());
    return 0;
}

}  // namespace kcx::app
