#include "core/signoff/signoff_files.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/base/sha256.h"
#include "core/contract/contract.h"
#include "core/evaluate/evaluator.h"

namespace kcx {

namespace fs = std::filesystem;

SignoffRecord makeSignoff(const Evaluation& ev, const std::string& contractSha256, const std::string& runSha256,
                          const SignoffRequest& request) {
    SignoffRecord r;
    r.contractSha256 = contractSha256;
    r.runSha256 = runSha256;
    r.resultsSha256 = resultsSha256(ev);
    r.verdict = statusName(ev.verdict);
    r.stage = ev.stage;
    r.action = actionName(ev.action);
    r.reviewer = request.reviewer;
    r.decision = request.decision;
    r.comment = request.comment;
    r.time = utcNow();
    r.kcxVersion = KCX_VERSION;
    return r;
}

SignoffRecord signFiles(const SignoffRequest& request, const EvaluationData& run, const SecretKey& key,
                        const Progress& progress) {
    if (request.decision != "approve" && request.decision != "reject")
        throw SignoffError("the decision must be approve or reject, not '" + request.decision + "'");
    if (request.reviewer.empty())
        throw SignoffError("the reviewer must not be empty");
    const Contract contract = loadContract(request.contractPath);
    EvaluateOptions options;
    options.stage = request.stage;
    const Evaluation ev = evaluateContractOn(contract, run, options, progress);
    SignoffRecord r = makeSignoff(ev, sha256File(request.contractPath), sha256File(request.runPath), request);
    signRecord(r, key);
    return r;
}

SignoffVerification verifySignoffFiles(const SignoffRecord& r, const std::string& contractPath,
                                       const std::string& runPath, const EvaluationData& run,
                                       const Progress& progress) {
    SignoffNow now;
    now.trust = loadTrust();
    if (!contractPath.empty()) {
        now.contractSha256 = sha256File(contractPath);
        now.contractName = contractPath;
    }
    if (!runPath.empty()) {
        now.runSha256 = sha256File(runPath);
        now.runName = runPath;
    }
    if (!contractPath.empty() && !runPath.empty() && run) {
        const Contract contract = loadContract(contractPath);
        EvaluateOptions options;
        options.stage = r.stage;
        try {
            applyEvaluated(now, evaluatedNow(evaluateContractOn(contract, run, options, progress)));
        } catch (const std::invalid_argument& e) {
            now.resultsError = e.what();
        }
    }
    return verifySignoff(r, now);
}

namespace {
// "dir/NAME" for dir/NAME.yaml (.yml, .json); the path itself for other names.
std::string stem(const std::string& contractPath) {
    const fs::path p(contractPath);
    const std::string ext = p.extension().string();
    if (ext == ".yaml" || ext == ".yml" || ext == ".json")
        return (p.parent_path() / p.stem()).string();
    return contractPath;
}
}  // namespace

std::vector<std::string> signoffsBeside(const std::string& contractPath) {
    const fs::path base(stem(contractPath));
    const std::string name = base.filename().string();
    const fs::path dir = base.has_parent_path() ? base.parent_path() : fs::path(".");
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string f = it->path().filename().string();
        const bool exact = f == name + ".signoff.json";
        const bool tagged = f.size() > name.size() + 14 && f.compare(0, name.size() + 1, name + ".") == 0 &&
                            f.ends_with(".signoff.json");
        if ((exact || tagged) && it->is_regular_file(ec))
            out.push_back(it->path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string newSignoffPath(const std::string& contractPath, const std::string& reviewer) {
    const std::string base = stem(contractPath);
    std::string first = base + ".signoff.json";
    if (!fs::exists(first))
        return first;
    std::string tag;
    for (char c : reviewer)
        tag += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    if (tag.empty())
        tag = "review";
    std::string path = base + "." + tag + ".signoff.json";
    for (int n = 2; fs::exists(path); ++n)
        path = base + "." + tag + "." + std::to_string(n) + ".signoff.json";
    return path;
}

}  // namespace kcx
