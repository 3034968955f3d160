// Sign-off records (SPEC 6.4, docs/signoff.md): an Ed25519 signature by a reviewer over the
// hashes of a contract, a run and the canonical JSON of the evaluation's results.
#pragma once

#include <array>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/evaluate/evaluator.h"

namespace kcx {

// A sign-off input that cannot be read or is malformed. what() names the file and, for a
// record or key file, the key path ("signoff.json: reviewer: must be a string").
class SignoffError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Canonical JSON (docs/signoff.md): object keys sorted by their UTF-8 bytes, no whitespace,
// strings with minimal escaping, integers in decimal, other numbers in the shortest form
// that reads back to the same double (std::to_chars), -0 as 0, non-finite numbers as null.
std::string canonicalJson(const nlohmann::json& j);

// The part of evaluationJson(ev) a record binds: everything but prose (result "message",
// bound "title", "assumption", "input_name", "observed_name"), so rewording a message in a later KCX does not break
// old records, and but what numerical results carry for the reviewer alone ("ci",
// "confidence", "beyond": added after records were signed without them). Deterministic:
// the evaluation is (the bootstrap is seeded).
nlohmann::json signedResultsJson(const Evaluation& ev);
// Lower-case hex SHA-256 of canonicalJson(signedResultsJson(ev)).
std::string resultsSha256(const Evaluation& ev);

constexpr int kSignoffFormat = 1;

struct SignoffRecord {
    int format = kSignoffFormat;    // "kcx_signoff"
    std::string contractSha256;     // of the contract file's bytes
    std::string runSha256;          // of the run file's bytes
    std::string resultsSha256;      // resultsSha256(evaluation)
    std::string verdict;            // the evaluation's verdict (pass, fail, inconclusive)
    std::string stage;              // the stage evaluated (the contract's first by default)
    std::string action;             // the action at that stage
    std::string reviewer;
    std::string decision;           // approve | reject
    std::string comment;
    std::string time;               // UTC, "YYYY-MM-DDTHH:MM:SSZ"
    std::string kcxVersion;         // KCX_VERSION of the signing kcx
    std::string publicKey;          // 64 lower-case hex digits (32 bytes)
    std::string keyFingerprint;     // keyFingerprint(publicKey)
    std::string signature;          // 128 lower-case hex digits (64 bytes)
};

// The record as JSON; withSignature false gives the signed fields only.
nlohmann::json signoffJson(const SignoffRecord& r, bool withSignature = true);
// Parses and validates every field; throws SignoffError naming `source` and the key.
SignoffRecord signoffFromJson(const nlohmann::json& j, const std::string& source);
// The largest sign-off record and key file read (docs/reliability.md "Opening files").
inline constexpr uint64_t kMaxRecordBytes = uint64_t(16) << 20;
inline constexpr uint64_t kMaxKeyBytes = uint64_t(1) << 20;

// Reads a record file (signoffFromJson): a regular file of at most kMaxRecordBytes (a FIFO,
// a device or a larger file is refused before reading). Throws SignoffError.
SignoffRecord readSignoff(const std::string& path);
// Writes the record as indented JSON, atomically (core/base/safe_write.h); throws
// SignoffError.
void writeSignoff(const SignoffRecord& r, const std::string& path);

// The bytes signed: "kcx-signoff-v1\n" followed by canonicalJson(signoffJson(r, false)).
std::string signedBytes(const SignoffRecord& r);

struct SecretKey {
    std::array<unsigned char, 64> bytes{};   // libsodium's Ed25519 secret key (seed + public)
    std::string publicKeyHex;
    ~SecretKey();
};

// First 16 hex digits of the SHA-256 of the 32 public-key bytes (publicKeyHex decoded).
std::string keyFingerprint(const std::string& publicKeyHex);

// Writes a new key pair: `path` (private, mode 0600, never overwritten) and `path`.pub.
// Returns the public key in hex. Throws SignoffError.
std::string generateKeyPair(const std::string& path);
SecretKey readSecretKey(const std::string& path);
// Reads a public key file (KEY.pub); returns the key in hex. Throws SignoffError.
std::string readPublicKey(const std::string& path);

// Fills publicKey, keyFingerprint and signature from the key.
void signRecord(SignoffRecord& r, const SecretKey& key);
// True when the signature is valid over signedBytes(r) under r.publicKey and the
// fingerprint belongs to that key.
bool signatureValid(const SignoffRecord& r);

// The current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utcNow();

}  // namespace kcx
