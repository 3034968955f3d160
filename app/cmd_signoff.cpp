// `kcx keygen`, `kcx sign`, `kcx verify` (SPEC 6.4, docs/signoff.md).
#include <QCommandLineParser>

#include <cstdio>
#include <optional>

#include "core/base/printable.h"
#include "app/commands.h"
#include "app/common.h"
#include "core/base/sha256.h"
#include "core/contract/contract.h"
#include "core/evaluate/evaluator.h"
#include "core/signoff/signoff.h"
#include "core/signoff/signoff_files.h"

namespace kcx::app {

namespace {

// A field for printf, escaped (shown(x).c_str(): the temporary lives until the end of the call).
std::string shown(std::string_view s) { return kcx::printable(s); }

}  // namespace

namespace {

// Parses; returns an exit code when the command is done (help or usage error).
std::optional<int> parse(QCommandLineParser& p, const QStringList& args, const char* name) {
    if (!p.parse(args))
        return usageError(p.errorText() + QString(" (see kcx %1 --help)").arg(name));
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    return std::nullopt;
}

// Loads the contract and the run and evaluates at `stage`; prints why and returns nothing
// on unreadable input. A stage the contract does not have throws std::invalid_argument.
std::optional<Evaluation> evaluateFiles(const QString& contractPath, const QString& runPath, const std::string& stage,
                                        Contract* contractOut = nullptr) {
    Contract contract;
    try {
        contract = loadContract(contractPath.toStdString());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return std::nullopt;
    }
    const EvaluationData run = openRunOrSummary(runPath, false);
    if (!run)
        return std::nullopt;
    EvaluateOptions options;
    options.stage = stage;
    Evaluation ev = evaluateContractOn(contract, run, options, terminalProgress("evaluating", false));
    if (contractOut)
        *contractOut = std::move(contract);
    return ev;
}

}  // namespace

int runKeygen(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription("Write a new Ed25519 key pair for signing off runs: KEY (private, mode 0600)\n"
                                "and KEY.pub (public). Never replaces an existing file.");
    p.addHelpOption();
    const QCommandLineOption outOpt("out", "The private key file; the public key goes to KEY.pub.", "KEY");
    p.addOption(outOpt);
    if (auto done = parse(p, args, "keygen"))
        return *done;
    if (!p.isSet(outOpt))
        return usageError("keygen needs --out KEY (see kcx keygen --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    const std::string path = p.value(outOpt).toStdString();
    try {
        const std::string pk = generateKeyPair(path);
        std::printf("wrote private key %s (mode 0600; keep it secret)\nwrote public key  %s.pub (fingerprint %s)\n",
                    path.c_str(), path.c_str(), keyFingerprint(pk).c_str());
    } catch (const SignoffError& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    return 0;
}

int runSign(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription("Evaluate a contract against a run and write a sign-off record: the SHA-256 of\n"
                                "the contract, the run and the results, the reviewer's decision, the time and\n"
                                "the kcx version, signed with an Ed25519 key (kcx keygen).");
    p.addHelpOption();
    const QCommandLineOption contractOpt("contract", "The contract (YAML or JSON).", "C");
    const QCommandLineOption runOpt("run", "The run: .jsonl, .jsonl.gz or .safetensors, or a summary (kcx summarize).", "RUN");
    const QCommandLineOption keyOpt("key", "The private key (kcx keygen).", "KEY");
    const QCommandLineOption reviewerOpt("reviewer", "Who signs off.", "NAME");
    const QCommandLineOption decisionOpt("decision", "approve or reject.", "approve|reject");
    const QCommandLineOption commentOpt("comment", "A comment, bound by the signature.", "TEXT");
    const QCommandLineOption stageOpt("stage", "The stage evaluated (default: the contract's first).", "S");
    const QCommandLineOption outOpt("out", "The record to write, or '-' for stdout.", "SIGNOFF.json");
    p.addOptions({contractOpt, runOpt, keyOpt, reviewerOpt, decisionOpt, commentOpt, stageOpt, outOpt});
    if (auto done = parse(p, args, "sign"))
        return *done;
    for (const auto* o : {&contractOpt, &runOpt, &keyOpt, &reviewerOpt, &decisionOpt, &outOpt})
        if (!p.isSet(*o))
            return usageError("sign needs --" + o->names().first() + " (see kcx sign --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    if (moreThanOneRun(p.values(runOpt), "sign"))
        return 2;
    const QString decision = p.value(decisionOpt);
    if (decision != "approve" && decision != "reject")
        return usageError("--decision must be approve or reject, not '" + decision + "'");
    if (p.value(reviewerOpt).trimmed().isEmpty())
        return usageError("--reviewer must not be empty");

    if (refuseOutputOverInput(p.value(outOpt), {{"key", p.value(keyOpt).toStdString()},
                                                {"contract", p.value(contractOpt).toStdString()},
                                                {"run", p.value(runOpt).toStdString()}}))
        return 2;

    SignoffRecord r;
    try {
        const SecretKey key = readSecretKey(p.value(keyOpt).toStdString());
        Contract contract;
        std::optional<Evaluation> ev;
        try {
            ev = evaluateFiles(p.value(contractOpt), p.value(runOpt), p.value(stageOpt).toStdString(), &contract);
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
            return 2;
        }
        if (!ev)
            return 2;
        SignoffRequest request;
        request.reviewer = p.value(reviewerOpt).toStdString();
        request.decision = decision.toStdString();
        request.comment = p.value(commentOpt).toStdString();
        r = makeSignoff(*ev, sha256File(p.value(contractOpt).toStdString()), sha256File(p.value(runOpt).toStdString()),
                        request);
        signRecord(r, key);
        if (!writeOutput(p.value(outOpt), signoffJson(r).dump(2) + "\n"))
            return 2;
        if (p.value(outOpt) != "-")
            std::printf("%s: %s %ss contract %s %s (verdict %s, action at %s: %s), key %s\n",
                        shown(p.value(outOpt).toStdString()).c_str(), shown(r.reviewer).c_str(), shown(r.decision).c_str(), shown(contract.name).c_str(),
                        shown(contract.version).c_str(), shown(r.verdict).c_str(), shown(r.stage).c_str(), shown(r.action).c_str(), shown(r.keyFingerprint).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    return 0;
}

int runVerify(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Check a sign-off record: its signature; that its key is trusted for its reviewer (--pub,\n"
        "else the trusted keys of --trusted, KCX_TRUSTED_KEYS or ~/.config/kcx/trusted_keys:\n"
        "one 'NAME<TAB>PUBLIC-KEY-HEX' a line); that the contract and run still hash to what was\n"
        "signed; and that evaluating them now gives the signed results.\n"
        "Exit codes: 0 verified (trusted key, contract and run given and unchanged), 1 something\n"
        "differs or the key is not the reviewer's trusted one (each named), 2 unreadable input,\n"
        "3 nothing differs but something could not be checked (an unknown signer, files not given).");
    p.addHelpOption();
    p.addPositionalArgument("SIGNOFF.json", "The record written by kcx sign.");
    const QCommandLineOption contractOpt("contract", "The contract that was signed.", "C");
    const QCommandLineOption runOpt("run", "The run (or summary) that was signed.", "RUN");
    const QCommandLineOption pubOpt("pub", "The public key the record must be signed with.", "KEY.pub");
    const QCommandLineOption trustedOpt("trusted", "The trusted signers (instead of KCX_TRUSTED_KEYS or "
                                                   "~/.config/kcx/trusted_keys).", "FILE");
    p.addOptions({contractOpt, runOpt, pubOpt, trustedOpt});
    if (auto done = parse(p, args, "verify"))
        return *done;
    if (p.positionalArguments().size() != 1)
        return usageError("verify needs exactly one SIGNOFF.json (see kcx verify --help)");
    if (moreThanOneRun(p.values(runOpt), "verify"))
        return 2;
    const std::string recordPath = p.positionalArguments().first().toStdString();

    SignoffRecord r;
    SignoffNow now;
    std::string pub, contractHash, runHash;
    try {
        r = readSignoff(recordPath);
        if (p.isSet(pubOpt))
            pub = readPublicKey(p.value(pubOpt).toStdString());
        else
            now.trust = loadTrust(p.value(trustedOpt).toStdString());
        if (p.isSet(contractOpt))
            contractHash = sha256File(p.value(contractOpt).toStdString());
        if (p.isSet(runOpt))
            runHash = sha256File(p.value(runOpt).toStdString());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    // Every field of the record is the record's author's text: printed escaped (printable.h),
    // so a reviewer name cannot add lines or hide the checks below.
    std::printf("%s: %s, kcx %s, key %s\n", shown(recordPath).c_str(), shown(describeSignoff(r)).c_str(), shown(r.kcxVersion).c_str(), shown(r.keyFingerprint).c_str());
    if (p.isSet(pubOpt)) {
        now.publicKeyHex = pub;
        now.publicKeyName = qPrintable(p.value(pubOpt));
    }
    if (p.isSet(contractOpt)) {
        now.contractSha256 = contractHash;
        now.contractName = qPrintable(p.value(contractOpt));
    }
    if (p.isSet(runOpt)) {
        now.runSha256 = runHash;
        now.runName = qPrintable(p.value(runOpt));
    }
    if (p.isSet(contractOpt) && p.isSet(runOpt)) {
        try {
            const auto ev = evaluateFiles(p.value(contractOpt), p.value(runOpt), r.stage);
            if (!ev)
                return 2;
            applyEvaluated(now, evaluatedNow(*ev));
        } catch (const std::invalid_argument& e) {
            now.resultsError = e.what();
        }
    }
    const SignoffVerification v = verifySignoff(r, now);
    for (const auto& c : v.checks)
        std::printf("%-8s %s: %s\n", c.ok ? "ok" : c.unchecked ? "UNCHECKED" : "DIFFERS", shown(c.what).c_str(), shown(c.text).c_str());
    std::vector<std::string> unchecked = v.unchecked();
    if (!p.isSet(contractOpt)) {
        std::printf("%-8s contract: not given (--contract)\n", "UNCHECKED");
        unchecked.push_back("contract");
    }
    if (!p.isSet(runOpt)) {
        std::printf("%-8s run: not given (--run)\n", "UNCHECKED");
        unchecked.push_back("run");
    }
    if (!(p.isSet(contractOpt) && p.isSet(runOpt))) {
        std::printf("%-8s results: not re-evaluated (needs both --contract and --run)\n", "UNCHECKED");
        unchecked.push_back("results");
    }
    auto joined = [](const std::vector<std::string>& names) {
        std::string list;
        for (const auto& d : names)
            list += (list.empty() ? "" : ", ") + d;
        return list;
    };
    const std::vector<std::string> differs = v.differing();
    if (!differs.empty()) {
        std::printf("NOT VERIFIED: %s differ%s from what was signed or trusted\n", shown(joined(differs)).c_str(),
                    differs.size() == 1 ? "s" : "");
        return 1;
    }
    if (!unchecked.empty()) {
        std::printf("NOT VERIFIED: nothing differs, but %s could not be checked\n", joined(unchecked).c_str());
        return 3;
    }
    std::printf("verified\n");
    return 0;
}

}  // namespace kcx::app
