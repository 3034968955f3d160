#include "core/signoff/trusted_keys.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/errors.h"
#include "core/base/safe_open.h"
#include "core/base/safe_write.h"
#include "core/signoff/signoff.h"

namespace kcx {
namespace {

constexpr uint64_t kMaxTrustedFile = uint64_t(1) << 20;

bool isKeyHex(const std::string& s) {
    if (s.size() != 64)
        return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

std::string trimmed(const std::string& s) {
    const size_t b = s.find_first_not_of(" \r");
    if (b == std::string::npos)
        return {};
    return s.substr(b, s.find_last_not_of(" \r") - b + 1);
}

}  // namespace

static std::string readTrustedFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw SignoffError(path + ": cannot open the trusted keys file (" + std::strerror(errno) + ")");
    try {   // a regular file of at most 1 MiB, refused before reading otherwise
        return readRegularFile(path, kMaxTrustedFile, "trusted keys file");
    } catch (const InputError& e) {
        throw SignoffError(std::string(e.what()) + " (the trusted keys file)");
    }
}

std::vector<TrustedKey> readTrustedKeys(const std::string& path) {
    std::istringstream in(readTrustedFile(path));
    std::vector<TrustedKey> keys;
    std::string raw;
    for (int line = 1; std::getline(in, raw); ++line) {
        const std::string text = trimmed(raw.substr(0, raw.find('#')));
        if (text.empty())
            continue;
        const std::string where = path + ":" + std::to_string(line) + ": ";
        const size_t tab = text.find('\t');
        if (tab == std::string::npos)
            throw SignoffError(where + "expected the reviewer's name, a tab, and the 64-hex-digit public key");
        TrustedKey k{trimmed(text.substr(0, tab)), trimmed(text.substr(tab + 1)), line};
        if (k.reviewer.empty())
            throw SignoffError(where + "the reviewer's name is empty");
        if (!isKeyHex(k.publicKeyHex))
            throw SignoffError(where + "the public key must be 64 lower-case hex digits (the public_key of a KEY.pub)");
        keys.push_back(std::move(k));
    }
    return keys;
}

std::string defaultTrustedKeysPath() {
    if (const char* env = std::getenv("KCX_TRUSTED_KEYS"); env && *env)
        return env;
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.config/kcx/trusted_keys";
    return {};
}

TrustSource loadTrust(const std::string& explicitPath) {
    TrustSource t;
    const char* env = std::getenv("KCX_TRUSTED_KEYS");
    const bool named = !explicitPath.empty() || (env && *env);
    t.name = explicitPath.empty() ? defaultTrustedKeysPath() : explicitPath;
    if (t.name.empty()) {
        t.note = "no trusted keys (give --pub KEY.pub or --trusted FILE; no HOME for ~/.config/kcx/trusted_keys)";
        return t;
    }
    std::error_code ec;
    if (!named && !std::filesystem::exists(t.name, ec)) {
        t.note = "no trusted keys: " + t.name + " does not exist (list the signer's name and public key there, "
                 "or give --pub KEY.pub or --trusted FILE)";
        return t;
    }
    t.keys = readTrustedKeys(t.name);
    return t;
}

KeyTrust keyTrust(const std::vector<TrustedKey>& keys, const std::string& reviewer, const std::string& publicKeyHex) {
    bool listed = false;
    for (const TrustedKey& k : keys)
        if (k.reviewer == reviewer) {
            if (k.publicKeyHex == publicKeyHex)
                return KeyTrust::Trusted;
            listed = true;
        }
    return listed ? KeyTrust::OtherKey : KeyTrust::Unknown;
}

void addTrustedKey(const std::string& path, const std::string& reviewer, const std::string& publicKeyHex) {
    if (reviewer.empty() || reviewer.find_first_of("\t\r\n#") != std::string::npos)
        throw SignoffError(path + ": a reviewer's name in the trusted keys file cannot be empty or hold a tab, a line "
                                  "break or '#'");
    if (!isKeyHex(publicKeyHex))
        throw SignoffError(path + ": the public key must be 64 lower-case hex digits");
    std::string before;
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
        readTrustedKeys(path);   // refuse to extend a file that is not one
        before = readTrustedFile(path);
        if (!before.empty() && before.back() != '\n')
            before += '\n';
    } else {
        before = "# KCX trusted signers (SPEC 6.4): reviewer name, a tab, the Ed25519 public key.\n";
    }
    const std::filesystem::path target(path);
    if (target.has_parent_path())
        std::filesystem::create_directories(target.parent_path(), ec);
    try {   // whole or not at all, never through a link (core/base/safe_write.h)
        writeFileAtomically(path, before + reviewer + '\t' + publicKeyHex + '\n');
    } catch (const InputError& e) {
        throw SignoffError(std::string(e.what()) + " (the trusted keys file)");
    }
}

}  // namespace kcx
