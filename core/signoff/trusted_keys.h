// Trusted signers (SPEC 6.4 v1.1, docs/signoff.md): a valid signature by an arbitrary key
// proves nothing, since anyone can make a key and type a reviewer's name. A record counts
// as verified only when its key is listed under its reviewer's name in a trusted-keys file:
// one signer a line, the reviewer's name, a tab, the 64-hex-digit Ed25519 public key (the
// `public_key` of a KEY.pub); `#` starts a comment; blank lines are ignored.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kcx {

struct TrustedKey {
    std::string reviewer;
    std::string publicKeyHex;   // 64 lower-case hex digits
    int line = 0;               // in the file, for messages
};

// Where a verification's trust comes from. `keys` empty (nullopt) means there is no list
// to check against: the key check is then "not checked", with `note` saying why.
struct TrustSource {
    std::optional<std::vector<TrustedKey>> keys;
    std::string name;   // the file, for messages
    std::string note;   // why there are no keys (set when `keys` is empty)
};

// Reads a trusted-keys file; throws SignoffError naming the file and line of a bad line
// (no tab, an empty name, a key that is not 64 hex digits). Files over 1 MiB are refused.
std::vector<TrustedKey> readTrustedKeys(const std::string& path);

// The file SPEC 6.4 names when no --trusted is given: $KCX_TRUSTED_KEYS, else
// ~/.config/kcx/trusted_keys ($HOME); empty when neither can be formed.
std::string defaultTrustedKeysPath();

// The trust for a verification: `explicitPath` (kcx verify --trusted) when given, else the
// default file. A file named explicitly (by the option or by KCX_TRUSTED_KEYS) must be
// readable (SignoffError); the default file may be missing (no keys, with a note saying
// where to list them).
TrustSource loadTrust(const std::string& explicitPath = {});

enum class KeyTrust {
    Trusted,     // listed under the reviewer's name
    OtherKey,    // the reviewer is listed, with other keys only
    Unknown,     // the reviewer is not listed at all
};
KeyTrust keyTrust(const std::vector<TrustedKey>& keys, const std::string& reviewer, const std::string& publicKeyHex);

// Adds "REVIEWER<TAB>KEY" to the file (creating it and its folder), keeping what is there;
// the file is replaced whole by a rename, so a reader never sees half of it. Refuses a name
// with a tab or a line break, and a key that is not 64 lower-case hex digits.
void addTrustedKey(const std::string& path, const std::string& reviewer, const std::string& publicKeyHex);

}  // namespace kcx
