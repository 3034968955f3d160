// Sign-off records: JSON form, validation of every field, reading and writing.
#include "core/signoff/signoff.h"

#include "core/base/errors.h"
#include "core/base/safe_open.h"
#include "core/base/safe_write.h"
#include "core/base/json_depth.h"
#include "core/formats/json_scan.h"

#include <ctime>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>

namespace kcx {

nlohmann::json signoffJson(const SignoffRecord& r, bool withSignature) {
    nlohmann::json j = {
        {"kcx_signoff", r.format},
        {"contract_sha256", r.contractSha256},
        {"run_sha256", r.runSha256},
        {"results_sha256", r.resultsSha256},
        {"verdict", r.verdict},
        {"stage", r.stage},
        {"action", r.action},
        {"reviewer", r.reviewer},
        {"decision", r.decision},
        {"comment", r.comment},
        {"time", r.time},
        {"kcx_version", r.kcxVersion},
        {"public_key", r.publicKey},
        {"key_fingerprint", r.keyFingerprint},
    };
    if (withSignature)
        j["signature"] = r.signature;
    return j;
}

namespace {

bool isHex(const std::string& s, size_t n) {
    return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

struct RecordFields {
    const nlohmann::json& j;
    const std::string& source;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw SignoffError(source + ": " + key + ": " + what);
    }
    const nlohmann::json& at(const char* key) const {
        auto it = j.find(key);
        if (it == j.end())
            fail(key, "missing");
        return *it;
    }
    std::string str(const char* key) const {
        const auto& v = at(key);
        if (!v.is_string())
            fail(key, std::string("must be a string, not ") + v.type_name());
        return v.get<std::string>();
    }
    std::string hex(const char* key, size_t digits) const {
        std::string s = str(key);
        if (!isHex(s, digits))
            fail(key, "must be " + std::to_string(digits) + " lower-case hex digits, not \"" + s + "\"");
        return s;
    }
    std::string nonEmpty(const char* key) const {
        std::string s = str(key);
        if (s.empty())
            fail(key, "must not be empty");
        return s;
    }
    std::string oneOf(const char* key, std::initializer_list<const char*> allowed) const {
        std::string s = str(key), list;
        for (const char* a : allowed) {
            if (s == a)
                return s;
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        fail(key, "must be one of " + list + ", not \"" + s + "\"");
    }
};

const std::set<std::string> kKeys = {"kcx_signoff", "contract_sha256", "run_sha256", "results_sha256",
                                      "verdict", "stage", "action", "reviewer", "decision", "comment", "time",
                                      "kcx_version", "public_key", "key_fingerprint", "signature"};

bool validTime(const std::string& t) {
    static const std::regex re(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)");
    if (!std::regex_match(t, re))
        return false;
    std::tm tm{};
    std::istringstream in(t);
    in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
    if (in.fail())
        return false;
    std::tm copy = tm;
    const time_t secs = timegm(&copy);   // normalises out-of-range fields: compare back
    return secs != time_t(-1) && copy.tm_mday == tm.tm_mday && copy.tm_mon == tm.tm_mon &&
           copy.tm_hour == tm.tm_hour && copy.tm_min == tm.tm_min && copy.tm_sec == tm.tm_sec;
}

}  // namespace

SignoffRecord signoffFromJson(const nlohmann::json& j, const std::string& source) {
    if (!j.is_object())
        throw SignoffError(source + ": a sign-off record must be a JSON object, not " + std::string(j.type_name()));
    for (const auto& [k, v] : j.items())
        if (!kKeys.count(k))
            throw SignoffError(source + ": " + k + ": unknown key in a sign-off record");
    const RecordFields f{j, source};
    SignoffRecord r;
    const auto& fmt = f.at("kcx_signoff");
    if (!fmt.is_number_integer() || fmt.get<int64_t>() != kSignoffFormat)
        f.fail("kcx_signoff", "must be " + std::to_string(kSignoffFormat) + " (this kcx reads format " +
                                  std::to_string(kSignoffFormat) + "), not " + fmt.dump());
    r.format = kSignoffFormat;
    r.contractSha256 = f.hex("contract_sha256", 64);
    r.runSha256 = f.hex("run_sha256", 64);
    r.resultsSha256 = f.hex("results_sha256", 64);
    r.verdict = f.oneOf("verdict", {"pass", "fail", "inconclusive"});
    r.stage = f.nonEmpty("stage");
    r.action = f.oneOf("action", {"pass", "warn", "hold", "shadow_only", "route_to_reference", "block_promotion",
                                  "rollback"});
    r.reviewer = f.nonEmpty("reviewer");
    r.decision = f.oneOf("decision", {"approve", "reject"});
    r.comment = f.str("comment");
    r.time = f.str("time");
    if (!validTime(r.time))
        f.fail("time", "must be a UTC time \"YYYY-MM-DDTHH:MM:SSZ\", not \"" + r.time + "\"");
    r.kcxVersion = f.nonEmpty("kcx_version");
    r.publicKey = f.hex("public_key", 64);
    r.keyFingerprint = f.hex("key_fingerprint", 16);
    r.signature = f.hex("signature", 128);
    return r;
}

SignoffRecord readSignoff(const std::string& path) {
    std::string text;
    try {   // a regular file of at most 16 MiB: a FIFO or /dev/zero is refused before reading
        text = readRegularFile(path, kMaxRecordBytes, "sign-off record");
    } catch (const InputError& e) {
        throw SignoffError(e.what());
    }
    if (const size_t deep = jsonDepthExceeded(text); deep != std::string::npos)
        throw SignoffError(path + ": byte " + std::to_string(deep) + ": not a sign-off record (" +
                           jsonDepthMessage() + ")");
    if (const auto dup = firstDuplicateKey(text))   // nlohmann would keep the last silently
        throw SignoffError(path + ": byte " + std::to_string(dup->offset) + ": " + dup->message);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {   // syntax, or a number beyond double (fuzz_signoff)
        throw SignoffError(path + ": not valid JSON (" + e.what() + ")");
    }
    return signoffFromJson(j, path);
}

void writeSignoff(const SignoffRecord& r, const std::string& path) {
    // A unique temporary beside, renamed over (core/base/safe_write.h): a reader never sees
    // half a record, and a link planted beside is never followed.
    try {
        writeFileAtomically(path, signoffJson(r).dump(2) + "\n");
    } catch (const InputError& e) {
        throw SignoffError(e.what());
    }
}

std::string signedBytes(const SignoffRecord& r) {
    return "kcx-signoff-v1\n" + canonicalJson(signoffJson(r, false));
}

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace kcx
