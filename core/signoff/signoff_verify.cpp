#include "core/signoff/signoff_verify.h"

namespace kcx {

bool SignoffVerification::verified() const {
    for (const auto& c : checks)
        if (!c.ok)
            return false;
    return true;
}

std::vector<std::string> SignoffVerification::differing() const {
    std::vector<std::string> out;
    for (const auto& c : checks)
        if (!c.ok && !c.unchecked)
            out.push_back(c.what);
    return out;
}

std::vector<std::string> SignoffVerification::unchecked() const {
    std::vector<std::string> out;
    for (const auto& c : checks)
        if (c.unchecked)
            out.push_back(c.what);
    return out;
}

bool SignoffVerification::untrustedSigner() const {
    for (const auto& c : checks)
        if (c.what == "key" && !c.ok)
            return true;
    return false;
}

std::string SignoffVerification::differingText() const {
    std::string s;
    for (const auto& d : differing())
        s += (s.empty() ? "" : ", ") + d;
    return s;
}

SignoffVerification verifySignoff(const SignoffRecord& r, const SignoffNow& now) {
    SignoffVerification v;
    auto add = [&](bool ok, const char* what, std::string okText, std::string badText) {
        v.checks.push_back({what, ok, ok ? std::move(okText) : std::move(badText)});
    };
    add(signatureValid(r), "record", "the signature is valid over every field",
        "the signature is not valid over the record's fields (the record was changed after signing)");
    if (now.publicKeyHex) {
        const std::string& q = now.publicKeyName;
        add(*now.publicKeyHex == r.publicKey, "key", q + " is the key that signed (fingerprint " + r.keyFingerprint + ")",
            q + " (fingerprint " + keyFingerprint(*now.publicKeyHex) + ") is not the key in the record (fingerprint " +
                r.keyFingerprint + ")");
    } else if (!now.trust.keys) {
        v.checks.push_back({"key", false, "not checked: " + now.trust.note, true});
    } else {
        const std::string fp = "key " + r.keyFingerprint;
        switch (keyTrust(*now.trust.keys, r.reviewer, r.publicKey)) {
        case KeyTrust::Trusted:
            add(true, "key", fp + " is trusted for \"" + r.reviewer + "\" (" + now.trust.name + ")", "");
            break;
        case KeyTrust::OtherKey: {
            std::string listed;
            for (const TrustedKey& k : *now.trust.keys)
                if (k.reviewer == r.reviewer)
                    listed += (listed.empty() ? "" : ", ") + keyFingerprint(k.publicKeyHex);
            add(false, "key", "", fp + " is not the trusted key of \"" + r.reviewer + "\" (" + now.trust.name +
                                      " lists " + listed + ")");
            break;
        }
        case KeyTrust::Unknown:
            v.checks.push_back({"key", false,
                                "not checked: " + now.trust.name + " lists no key for \"" + r.reviewer + "\" (" + fp +
                                    " is not a trusted signer)",
                                true});
            break;
        }
    }
    auto file = [&](const std::optional<std::string>& hash, const std::string& name, const std::string& signedHash,
                    const char* what) {
        if (!hash)
            return;
        add(*hash == signedHash, what, name + " is the file that was signed",
            name + " has changed since it was signed (sha256 " + *hash + ", signed " + signedHash + ")");
    };
    file(now.contractSha256, now.contractName, r.contractSha256, "contract");
    file(now.runSha256, now.runName, r.runSha256, "run");
    if (!now.resultsError.empty()) {
        add(false, "results", "", "cannot evaluate at the signed stage: " + now.resultsError);
    } else if (now.resultsSha256) {
        add(*now.resultsSha256 == r.resultsSha256, "results", "evaluating now gives the signed results",
            "evaluating now gives different results (verdict " + now.verdict + ", signed " + r.verdict + "; sha256 " +
                *now.resultsSha256 + ", signed " + r.resultsSha256 + ")");
        // The record's own verdict and action are its signer's words: they must be what the
        // evaluation says, or a validly signed record could state "pass" over a failure.
        if (now.action) {
            const bool same = now.verdict == r.verdict && *now.action == r.action;
            add(same, "verdict", "the record's verdict and action are the evaluation's (" + r.verdict + ", " + r.action + ")",
                "the record states verdict " + r.verdict + ", action at " + r.stage + ": " + r.action +
                    "; evaluating gives " + now.verdict + ", " + *now.action);
        }
    }
    return v;
}

EvaluatedNow evaluatedNow(const Evaluation& ev) {
    EvaluatedNow e;
    e.resultsSha256 = resultsSha256(ev);
    e.verdict = statusName(ev.verdict);
    const auto it = ev.stageActions.find(ev.stage);
    e.action = actionName(it == ev.stageActions.end() ? Action::Pass : it->second);
    return e;
}

void applyEvaluated(SignoffNow& now, const EvaluatedNow& e) {
    if (!e.error.empty()) {
        now.resultsError = e.error;
        return;
    }
    now.resultsSha256 = e.resultsSha256;
    now.verdict = e.verdict;
    now.action = e.action;
}

std::string describeSignoff(const SignoffRecord& r) {
    return r.reviewer + (r.decision == "approve" ? " approved" : " rejected") + " at " + r.time + " (verdict " +
           r.verdict + ", action at " + r.stage + ": " + r.action + ")";
}

}  // namespace kcx
