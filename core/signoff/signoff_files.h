// Signing and checking against files on disk, shared by `kcx sign`/`kcx verify` and the
// window: the record binds the bytes of the contract and run files, so both sides hash
// exactly those files and evaluate the contract as read from disk.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/errors.h"
#include "core/evaluate/evaluator_summary.h"
#include "core/formats/run.h"
#include "core/signoff/signoff.h"
#include "core/signoff/signoff_verify.h"

namespace kcx {

struct SignoffRequest {
    std::string contractPath, runPath;
    std::string reviewer, decision, comment;   // decision: approve | reject
    std::string stage;                         // empty = the contract's first
};

// The record for an evaluation (not yet signed: signRecord fills key and signature).
SignoffRecord makeSignoff(const Evaluation& ev, const std::string& contractSha256, const std::string& runSha256,
                          const SignoffRequest& request);

// Evaluates the contract file on `run` (the run or summary read from request.runPath; the
// caller may hold it already), hashes both files, signs with `key` and returns the record. Throws
// SignoffError or the loaders' errors with their messages; std::invalid_argument for a
// stage the contract does not have.
SignoffRecord signFiles(const SignoffRequest& request, const EvaluationData& run, const SecretKey& key,
                        const Progress& progress = {});

// Checks `r` against the contract and run files (either may be empty: not checked) and,
// when both are given, against the results of evaluating them now at the record's stage;
// the key against the default trusted signers (loadTrust()). `run` is the run or summary
// read from runPath. Throws for an unreadable contract, run or trusted-keys file.
SignoffVerification verifySignoffFiles(const SignoffRecord& r, const std::string& contractPath,
                                       const std::string& runPath, const EvaluationData& run,
                                       const Progress& progress = {});

// The records kept beside a contract: NAME.signoff.json and NAME.*.signoff.json for
// contract NAME.yaml (NAME.yml, NAME.json), sorted by file name.
std::vector<std::string> signoffsBeside(const std::string& contractPath);
// A free file name for a new record beside the contract: NAME.signoff.json if it does not
// exist, else NAME.<reviewer>.signoff.json (reviewer reduced to [A-Za-z0-9_-]), else
// NAME.<reviewer>.<n>.signoff.json.
std::string newSignoffPath(const std::string& contractPath, const std::string& reviewer);

}  // namespace kcx
