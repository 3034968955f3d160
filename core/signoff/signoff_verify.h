// Comparing a sign-off record with what is there now (SPEC 6.4, docs/signoff.md). The caller
// hashes the files and evaluates (it may already hold the run in memory); this says, check by
// check, what still matches and what differs, in the words `kcx verify` prints and the
// window's records panel shows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/signoff/signoff.h"
#include "core/signoff/trusted_keys.h"

namespace kcx {

struct SignoffNow {
    // Each optional is "not checked" when empty.
    std::optional<std::string> publicKeyHex;    // the key the record must be signed with (--pub)
    std::string publicKeyName;                  // how to name it, e.g. "alice.pub"
    TrustSource trust;                          // without --pub: the trusted signers (SPEC 6.4)
    std::optional<std::string> contractSha256;  // of the contract file now
    std::string contractName;                   // e.g. its path
    std::optional<std::string> runSha256;       // of the run file now
    std::string runName;
    std::optional<std::string> resultsSha256;   // resultsSha256(evaluation now, at r.stage)
    std::string verdict;                        // that evaluation's verdict
    std::optional<std::string> action;          // its action at r.stage (checked with the verdict)
    std::string resultsError;                   // set when it could not be evaluated at r.stage
};

struct SignoffCheck {
    std::string what;   // "record", "key", "contract", "run", "results"
    bool ok = false;
    std::string text;   // one line: why it matches, exactly what differs, or why it was not checked
    bool unchecked = false;   // (ok is false) it could not be checked: neither matches nor differs
};

struct SignoffVerification {
    std::vector<SignoffCheck> checks;   // record first, then key, contract, run, results
    // Every check made and passed, none left unchecked.
    bool verified() const;
    // The names of the checks that failed, in order ("contract, run"); not the unchecked.
    std::vector<std::string> differing() const;
    // The names of the checks that could not be made ("key").
    std::vector<std::string> unchecked() const;
    // The key check failed or could not be made: the signer is not a trusted one.
    bool untrustedSigner() const;
    std::string differingText() const;   // "contract, run" or empty
};

// Always checks the record's signature and its key: against now.publicKeyHex when set,
// else against now.trust (listed under the record's reviewer: ok; the reviewer listed with
// other keys: differs; not listed, or no list: unchecked). The files and results only where
// given.
SignoffVerification verifySignoff(const SignoffRecord& r, const SignoffNow& now);

// What an evaluation at a record's stage says, for SignoffNow: its results' hash, verdict and
// action at its stage; `error` when it could not be evaluated (the others empty).
struct EvaluatedNow {
    std::string resultsSha256, verdict, action, error;
};
EvaluatedNow evaluatedNow(const Evaluation& ev);
void applyEvaluated(SignoffNow& now, const EvaluatedNow& e);

// "alice approved at 2026-12-02T10:00:00Z (verdict fail, action at offline_ci: block_promotion)"
std::string describeSignoff(const SignoffRecord& r);

}  // namespace kcx
