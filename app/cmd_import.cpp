// `kcx import`: pair an inference log-prob dump with a training one into a native run;
// `kcx convert`: write any run kcx can open (SPEC 1.1/1.2, trainer token exports, NumPy
// .npz or .npy directories) as native safetensors (docs/formats.md).
#include <QCommandLineParser>

#include <cstdio>
#include <optional>

#include "core/base/printable.h"
#include "app/commands.h"
#include "app/common.h"
#include "core/base/errors.h"
#include "core/formats/import_trainer.h"
#include "core/formats/importers.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"
#include "core/formats/sniff.h"

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

// Failed requests left out of the import (batch output errors), with id, line and reason.
void listSkipped(const char* what, const std::string& path, const std::vector<SkippedRecord>& skipped) {
    if (skipped.empty())
        return;
    std::fprintf(stderr, "kcx: %zu failed request(s) in the %s file, left out:\n", skipped.size(), what);
    for (size_t i = 0; i < std::min(skipped.size(), kShown); ++i)
        std::fprintf(stderr, "  %s:%lld: %s: %s\n", kcx::printable(path).c_str(), (long long)skipped[i].line,
                     kcx::printable(skipped[i].id).c_str(), kcx::printable(skipped[i].reason).c_str());
    if (skipped.size() > kShown)
        std::fprintf(stderr, "  ... and %zu more\n", skipped.size() - kShown);
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
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return false;
    }
}

// A side given to --inf/--train that already holds both kernels: say what to do instead.
bool rejectWholeRun(const QString& path, const char* option) {
    Sniffed what;
    try {
        what = sniffRun(path.toStdString());
    } catch (const InputError&) {
        return false;   // readLogprobFile reports it
    }
    const char* kind = nullptr;
    switch (what.kind) {
    case RunKind::TrainerExport:
    case RunKind::TrainerDirectory: kind = "a trainer token export (both kernels' log-probs)"; break;
    case RunKind::Npz:
    case RunKind::NpyDirectory: kind = "NumPy arrays of a whole run"; break;
    case RunKind::Safetensors: kind = "a safetensors run"; break;
    default: return false;
    }
    std::fprintf(stderr, "kcx: %s (%s) holds %s, not one side; convert it instead: kcx convert %s --out RUN.safetensors\n",
                 qPrintable(path), option, kind, qPrintable(path));
    return true;
}

// Reads one or more inputs as one run (loadRuns: joined in the order given).
std::optional<Run> readRuns(const QStringList& inputs, bool bf16, bool quiet) {
    try {
        LoadOptions options;
        options.bf16 = bf16;
        const Progress progress = terminalProgress("loading", quiet);
        if (inputs.size() == 1)
            return loadRun(inputs.first().toStdString(), progress, options);
        std::vector<std::string> paths;
        for (const QString& in : inputs)
            paths.push_back(in.toStdString());
        return loadRuns(paths, progress, options);
    } catch (const InputError& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
    }
    return std::nullopt;
}

// What an importer recorded in the header (trainer exports): left-out and missing counts.
void printImportNotes(const Run& run) {
    const auto& h = run.header;
    if (!h.is_object() || !h.contains("import") || !h["import"].is_object() ||
        h["import"].value("format", "") != "trainer-export")
        return;
    const auto& i = h["import"];
    std::printf("trainer export: %zu file(s), %llu record(s) (%llu without response tokens, skipped), "
                "%llu prompt token(s) left out\n",
                i["files"].size(), (unsigned long long)i.value("records", 0ull),
                (unsigned long long)i.value("records_without_response", 0ull),
                (unsigned long long)i.value("prompt_tokens_left_out", 0ull));
    if (const auto masked = i.value("records_sample_masked", 0ull))
        std::printf("%llu record(s) with sample_loss_mask 0 (left out of the loss), skipped\n", (unsigned long long)masked);
    std::printf("missing log-probs (null): inf %llu, train %llu\n", (unsigned long long)i.value("missing_inf", 0ull),
                (unsigned long long)i.value("missing_train", 0ull));
    std::printf("floored log-probs (vLLM's -9999.0, read as -inf, non-finite): inf %llu, train %llu\n",
                (unsigned long long)i.value("floored_inf", 0ull), (unsigned long long)i.value("floored_train", 0ull));
}

// `kcx convert` and `kcx import IN...`: read, write, summarise.
int convertRuns(const QStringList& inputs, const QString& out, bool bf16, bool quiet) {
    std::vector<NamedInput> named;
    for (const QString& in : inputs)
        named.push_back({"run", in.toStdString()});
    if (refuseOutputOverInput(out, named))
        return 2;
    const auto run = readRuns(inputs, bf16, quiet);
    if (!run)
        return 2;
    if (!write(*run, out))
        return 2;
    if (!quiet) {
        std::printf("%s: %zu sequences, %zu tokens\n", qPrintable(out), run->sequenceCount(), run->tokenCount());
        printImportNotes(*run);
    }
    return 0;
}

}  // namespace

int runImport(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Pair an inference-side log-prob dump with a training-side one and write a native run.\n"
        "Each file is JSON Lines, one JSON document or a server-sent-event stream of: OpenAI chat or\n"
        "completions responses with logprobs (vLLM, SGLang, OpenAI; every choice, as ID#INDEX when\n"
        "there are several; batch output lines, failed requests left out and listed), the OpenAI\n"
        "Responses API, SGLang /generate output with return_logprob (one or an array), TGI /generate\n"
        "with details, or plain {\"id\", \"logp_train\"|\"logp_inf\"|\"logp\", \"tokens\"} arrays.\n"
        "Records pair by id, positions by order; both sides must have seen the same tokens.\n"
        "Files that already hold both sides (trainer token exports with token_ids/loss_mask, a\n"
        "directory of them, NumPy .npz or a directory of .npy) are given as IN... instead and\n"
        "written as they are, like kcx convert. See docs/formats.md.");
    p.addPositionalArgument("IN", "Without --inf/--train: runs to convert (trainer export files are joined).", "[IN...]");
    const QCommandLineOption infOpt("inf", "The inference side (.jsonl or .jsonl.gz).", "A.jsonl");
    const QCommandLineOption trainOpt("train", "The training side (.jsonl or .jsonl.gz).", "B.jsonl");
    const QCommandLineOption outOpt("out", "The run to write (.safetensors).", "RUN.safetensors");
    const QCommandLineOption allowOpt("allow-mismatch", "Drop records whose tokens differ instead of failing.");
    const QCommandLineOption strictOpt("strict", "Fail (exit 2) when a record is skipped (a failed request in a "
                                                 "batch output or stream) instead of leaving it out.");
    const QCommandLineOption quietOpt("quiet", "Only errors.");
    const QCommandLineOption bf16Opt("bf16", "NumPy input (IN...): read <u2/<V2 arrays as bfloat16 bits.");
    p.addOptions({infOpt, trainOpt, outOpt, allowOpt, strictOpt, quietOpt, bf16Opt});
    int code = 0;
    if (!parseOrHelp(p, args, "import", code))
        return code;
    const bool quiet = p.isSet(quietOpt);
    if (!p.positionalArguments().isEmpty()) {
        if (p.isSet(infOpt) || p.isSet(trainOpt))
            return usageError("give either --inf A --train B, or IN... (files that hold both sides), not both");
        if (!p.isSet(outOpt))
            return usageError("import needs --out RUN.safetensors (see kcx import --help)");
        return convertRuns(p.positionalArguments(), p.value(outOpt), p.isSet(bf16Opt), quiet);
    }
    if (!p.isSet(infOpt) || !p.isSet(trainOpt) || !p.isSet(outOpt))
        return usageError("import needs --inf A.jsonl --train B.jsonl --out RUN.safetensors, or IN... --out "
                          "RUN.safetensors (see kcx import --help)");
    if (refuseOutputOverInput(p.value(outOpt), {{"inference side (--inf)", p.value(infOpt).toStdString()},
                                                {"training side (--train)", p.value(trainOpt).toStdString()}}))
        return 2;
    if (rejectWholeRun(p.value(infOpt), "--inf") || rejectWholeRun(p.value(trainOpt), "--train"))
        return 2;
    ImportResult r;
    try {
        ImportOptions options;
        options.allowMismatch = p.isSet(allowOpt);
        const ImportedSide inf = readLogprobFile(p.value(infOpt).toStdString());
        const ImportedSide train = readLogprobFile(p.value(trainOpt).toStdString());
        r = importPair(inf, train, options);
    } catch (const InputError& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    listSkipped("inf", p.value(infOpt).toStdString(), r.skippedInf);
    listSkipped("train", p.value(trainOpt).toStdString(), r.skippedTrain);
    if (p.isSet(strictOpt) && !(r.skippedInf.empty() && r.skippedTrain.empty())) {
        std::fprintf(stderr, "kcx: --strict: %zu record(s) skipped; nothing written\n",
                     r.skippedInf.size() + r.skippedTrain.size());
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
        std::printf("missing log-probs (null): inf %zu, train %zu\n", r.missingInf, r.missingTrain);
        std::printf("floored log-probs (vLLM's -9999.0, read as -inf, non-finite): inf %zu, train %zu\n",
                    r.flooredInf, r.flooredTrain);
        if (r.skippedInf.size() + r.skippedTrain.size())
            std::printf("skipped (failed requests): inf %zu, train %zu\n", r.skippedInf.size(), r.skippedTrain.size());
        if (r.choicesSplit)
            std::printf("choices split: %zu response(s) with several choices, one record per choice (ID#INDEX)\n",
                        r.choicesSplit);
        if (r.promptInf + r.promptTrain)
            std::printf("prompt positions of scoring responses left out: inf %zu, train %zu\n", r.promptInf,
                        r.promptTrain);
        if (r.bestOfIgnored)
            std::printf("TGI best_of_sequences left out: %zu (only the returned sequence is compared)\n",
                        r.bestOfIgnored);
        if (r.missingTop)
            std::printf("top-k entries without a value (null or -9999.0), kept as missing entries: %zu\n",
                        r.missingTop);
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
    p.setApplicationDescription(
        "Write any run kcx can open as native safetensors: SPEC 1.1 JSON Lines (.jsonl, .jsonl.gz),\n"
        "safetensors, trainer token exports (a file, several files, or a directory of them: one run),\n"
        "NumPy .npz or a directory of .npy arrays. See docs/formats.md.");
    p.addPositionalArgument("IN", "The run to read (several: trainer export files, joined in order).", "IN...");
    const QCommandLineOption outOpt("out", "The run to write (.safetensors).", "RUN.safetensors");
    const QCommandLineOption bf16Opt("bf16", "NumPy input: read <u2/<V2 arrays as bfloat16 bits.");
    const QCommandLineOption quietOpt("quiet", "Only errors.");
    p.addOptions({outOpt, bf16Opt, quietOpt});
    int code = 0;
    if (!parseOrHelp(p, args, "convert", code))
        return code;
    if (p.positionalArguments().isEmpty() || !p.isSet(outOpt))
        return usageError("convert needs IN... --out RUN.safetensors (see kcx convert --help)");
    return convertRuns(p.positionalArguments(), p.value(outOpt), p.isSet(bf16Opt), p.isSet(quietOpt));
}

}  // namespace kcx::app
