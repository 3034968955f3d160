#include "core/signoff/trusted_keys.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/signoff/signoff.h"

namespace kcx {
namespace {

constexpr std::uintmax_t kMaxTrustedFile = 1 << 20;

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

std::vector<TrustedKey> readTrustedKeys(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
        throw SignoffError(path + ": cannot open the trusted keys file");
    if (!std::filesystem::is_regular_file(status))
        throw SignoffError(path + ": the trusted keys file is not a regular file");
    if (std::filesystem::file_size(path, ec) > kMaxTrustedFile)
        throw SignoffError(path + ": the trusted keys file is larger than 1 MiB");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw SignoffError(path + ": cannot open the trusted keys file");
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
        std::ifstream in(path, std::ios::binary);
        std::ostringstream all;
        all << in.rdbuf();
        before = all.str();
        if (!before.empty() && before.back() != '\n')
            before += '\n';
    } else {
        before = "# KCX trusted signers (SPEC 6.4): reviewer name, a tab, the Ed25519 public key.\n";
    }
    const std::filesystem::path target(path);
    if (target.has_parent_path())
        std::filesystem::create_directories(target.parent_path(), ec);
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << before << reviewer << '\t' << publicKeyHex << '\n';
        out.flush();
        if (!out) {
            std::filesystem::remove(tmp, ec);
            throw SignoffError(path + ": cannot write the trusted keys file");
        }
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw SignoffError(path + ": cannot write the trusted keys file");
    }
}

}  // namespace kcx
