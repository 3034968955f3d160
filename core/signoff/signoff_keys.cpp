// Ed25519 keys (libsodium), signing and checking sign-off records (docs/signoff.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sodium.h>

#include "core/base/errors.h"
#include "core/base/safe_open.h"
#include "core/base/safe_write.h"
#include "core/base/json_depth.h"
#include "core/base/sha256.h"
#include "core/formats/json_scan.h"
#include "core/signoff/signoff.h"

namespace kcx {

namespace {

void initSodium() {
    if (sodium_init() < 0)
        throw SignoffError("libsodium could not be initialised");
}

std::string toHex(const unsigned char* d, size_t n) {
    std::string s(2 * n + 1, '\0');
    sodium_bin2hex(s.data(), s.size(), d, n);
    s.pop_back();
    return s;
}

// Decodes exactly n bytes of lower-case hex; false on any other input.
bool fromHex(const std::string& hex, unsigned char* out, size_t n) {
    if (hex.size() != 2 * n || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
        return false;
    size_t len = 0;
    return sodium_hex2bin(out, n, hex.data(), hex.size(), nullptr, &len, nullptr) == 0 && len == n;
}

nlohmann::json readJsonFile(const std::string& path, const char* what) {
    std::string text;
    try {   // a regular file of at most 1 MiB: a FIFO or a device is refused before reading
        text = readRegularFile(path, kMaxKeyBytes, what);
    } catch (const InputError& e) {
        throw SignoffError(e.what());
    }
    if (const size_t deep = jsonDepthExceeded(text); deep != std::string::npos)
        throw SignoffError(path + ": byte " + std::to_string(deep) + ": not a kcx " + std::string(what) + " (" +
                           jsonDepthMessage() + ")");
    if (const auto dup = firstDuplicateKey(text))
        throw SignoffError(path + ": byte " + std::to_string(dup->offset) + ": not a kcx " + std::string(what) + " (" +
                           dup->message + ")");
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
        throw SignoffError(path + ": not a kcx " + std::string(what) + " (not valid JSON)");
    }
}

std::string hexField(const nlohmann::json& j, const std::string& path, const char* key, size_t digits) {
    auto it = j.find(key);
    if (it == j.end())
        throw SignoffError(path + ": " + key + ": missing");
    if (!it->is_string() || it->get_ref<const std::string&>().size() != digits ||
        it->get_ref<const std::string&>().find_first_not_of("0123456789abcdef") != std::string::npos)
        throw SignoffError(path + ": " + key + ": must be " + std::to_string(digits) + " lower-case hex digits");
    return it->get<std::string>();
}

void checkType(const nlohmann::json& j, const std::string& path, const char* type) {
    if (!j.is_object())
        throw SignoffError(path + ": a kcx key file must be a JSON object");
    auto k = j.find("kcx_key");
    if (k == j.end() || !k->is_number_integer() || k->get<int64_t>() != 1)
        throw SignoffError(path + ": kcx_key: must be 1");
    auto t = j.find("type");
    if (t == j.end() || !t->is_string() || t->get<std::string>() != type)
        throw SignoffError(path + ": type: must be \"" + std::string(type) + "\"" +
                           (std::strcmp(type, "ed25519-public") == 0 ? " (pass KEY.pub, not the private KEY)" : ""));
}

// Creates `path` (never replacing a file) whole: written to a unique temporary beside it,
// flushed, then linked to its name only if that name is still free (core/base/safe_write.h).
void writeNew(const std::string& path, const std::string& bytes, mode_t mode) {
    try {
        AtomicWriter w(path, mode);
        w.write(bytes);
        w.commit(false);
    } catch (const InputError& e) {
        throw SignoffError(e.what());
    }
}

}  // namespace

SecretKey::~SecretKey() { sodium_memzero(bytes.data(), bytes.size()); }

std::string keyFingerprint(const std::string& publicKeyHex) {
    unsigned char pk[crypto_sign_PUBLICKEYBYTES];
    if (!fromHex(publicKeyHex, pk, sizeof pk))
        throw SignoffError("not an Ed25519 public key: " + publicKeyHex);
    return sha256Hex(std::string_view(reinterpret_cast<const char*>(pk), sizeof pk)).substr(0, 16);
}

std::string generateKeyPair(const std::string& path) {
    initSodium();
    const std::string pubPath = path + ".pub";
    struct stat st;
    for (const auto& p : {path, pubPath})
        if (::lstat(p.c_str(), &st) == 0)
            throw SignoffError(p + ": already exists; kcx keygen never replaces a key");
    unsigned char pk[crypto_sign_PUBLICKEYBYTES];
    SecretKey sk;
    crypto_sign_keypair(pk, sk.bytes.data());
    const std::string pkHex = toHex(pk, sizeof pk);
    std::string secret = nlohmann::json{{"kcx_key", 1},
                                        {"type", "ed25519-secret"},
                                        {"secret_key", toHex(sk.bytes.data(), sk.bytes.size())},
                                        {"public_key", pkHex}}
                             .dump(2) +
                         "\n";
    try {
        writeNew(path, secret, kPrivateMode);
    } catch (...) {
        sodium_memzero(secret.data(), secret.size());
        throw;
    }
    sodium_memzero(secret.data(), secret.size());
    const nlohmann::json pub = {
        {"kcx_key", 1}, {"type", "ed25519-public"}, {"public_key", pkHex}, {"fingerprint", keyFingerprint(pkHex)}};
    writeNew(pubPath, pub.dump(2) + "\n", kOutputMode);
    return pkHex;
}

SecretKey readSecretKey(const std::string& path) {
    initSodium();
    try {   // a FIFO or a device is named as such, not as a key with the wrong mode
        requireRegularFile(path);
    } catch (const InputError& e) {
        throw SignoffError(e.what());
    }
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
        throw SignoffError(path + ": private key readable by others (mode " + mode + "); chmod 600 " + path);
    }
    nlohmann::json j = readJsonFile(path, "private key");
    checkType(j, path, "ed25519-secret");
    std::string skHex = hexField(j, path, "secret_key", 128);
    const std::string pkHex = hexField(j, path, "public_key", 64);
    SecretKey sk;
    const bool ok = fromHex(skHex, sk.bytes.data(), sk.bytes.size());
    sodium_memzero(skHex.data(), skHex.size());
    j["secret_key"].get_ref<std::string&>().assign(128, '0');
    unsigned char pk[crypto_sign_PUBLICKEYBYTES];
    if (!ok || crypto_sign_ed25519_sk_to_pk(pk, sk.bytes.data()) != 0 || toHex(pk, sizeof pk) != pkHex)
        throw SignoffError(path + ": secret_key: does not belong to public_key");
    sk.publicKeyHex = pkHex;
    return sk;
}

std::string readPublicKey(const std::string& path) {
    const nlohmann::json j = readJsonFile(path, "public key");
    checkType(j, path, "ed25519-public");
    std::string pk = hexField(j, path, "public_key", 64);
    if (j.contains("fingerprint") && hexField(j, path, "fingerprint", 16) != keyFingerprint(pk))
        throw SignoffError(path + ": fingerprint: does not belong to public_key");
    return pk;
}

void signRecord(SignoffRecord& r, const SecretKey& key) {
    initSodium();
    r.publicKey = key.publicKeyHex;
    r.keyFingerprint = keyFingerprint(key.publicKeyHex);
    const std::string msg = signedBytes(r);
    unsigned char sig[crypto_sign_BYTES];
    crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(msg.data()), msg.size(),
                         key.bytes.data());
    r.signature = toHex(sig, sizeof sig);
}

bool signatureValid(const SignoffRecord& r) {
    initSodium();
    unsigned char pk[crypto_sign_PUBLICKEYBYTES], sig[crypto_sign_BYTES];
    if (!fromHex(r.publicKey, pk, sizeof pk) || !fromHex(r.signature, sig, sizeof sig))
        return false;
    if (keyFingerprint(r.publicKey) != r.keyFingerprint)
        return false;
    const std::string msg = signedBytes(r);
    return crypto_sign_verify_detached(sig, reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), pk) == 0;
}

}  // namespace kcx
