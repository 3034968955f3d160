#include "core/base/sha256.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

#include <openssl/evp.h>

#include "core/base/errors.h"
#include "core/base/safe_open.h"

namespace kcx {

static std::string sha256ToHex(const unsigned char* d, size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s(n * 2, '0');
    for (size_t i = 0; i < n; ++i) {
        s[2 * i] = digits[d[i] >> 4];
        s[2 * i + 1] = digits[d[i] & 15];
    }
    return s;
}

namespace {
// OpenSSL's libcrypto: it runs SHA-256 on the SHA-NI instructions where the CPU has them,
// about three times libsodium's portable code (issue 17; libsodium still does Ed25519).
struct Sha256 {
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
    Sha256() {
        if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
            throw std::runtime_error("SHA-256: libcrypto cannot start a digest");
    }
    void update(const void* data, size_t n) {
        if (EVP_DigestUpdate(ctx.get(), data, n) != 1)
            throw std::runtime_error("SHA-256: libcrypto failed");
    }
    std::string hex() {
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        if (EVP_DigestFinal_ex(ctx.get(), out, &n) != 1 || n != 32)
            throw std::runtime_error("SHA-256: libcrypto failed");
        return sha256ToHex(out, n);
    }
};
}  // namespace

std::string sha256Hex(std::string_view bytes) {
    Sha256 h;
    h.update(bytes.data(), bytes.size());
    return h.hex();
}

std::string sha256File(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        // A run kept as a directory (NumPy arrays, a tree of trainer exports): the hash of
        // its listing, "PATH\0SHA256\n" per regular file at any depth, PATH relative to the
        // directory with '/' between folders, in byte order (a flat directory: its names).
        std::vector<std::string> names;
        std::filesystem::recursive_directory_iterator it(path, ec), end;
        for (; !ec && it != end; it.increment(ec))
            if (it->is_regular_file(ec))
                names.push_back(it->path().lexically_relative(path).generic_string());
        if (ec)
            throw std::runtime_error(path + ": cannot list for hashing: " + ec.message());
        std::sort(names.begin(), names.end());
        std::string listing;
        for (const auto& n : names)
            listing += n + '\0' + sha256File((std::filesystem::path(path) / n).string()) + '\n';
        return sha256Hex(listing);
    }
    int fd = -1;
    try {
        fd = openRegularFile(path);   // a FIFO or /dev/zero is refused, never read forever
    } catch (const InputError& e) {
        throw std::runtime_error(std::string(e.what()) + " (hashing)");
    }
    std::unique_ptr<FILE, int (*)(FILE*)> f(::fdopen(fd, "rb"), &std::fclose);
    if (!f) {
        ::close(fd);
        throw std::runtime_error(path + ": cannot open for hashing");
    }
    Sha256 h;
    std::vector<unsigned char> buf(1 << 20);
    size_t got;
    while ((got = std::fread(buf.data(), 1, buf.size(), f.get())) > 0)
        h.update(buf.data(), got);
    if (std::ferror(f.get()))
        throw std::runtime_error(path + ": read error while hashing");
    return h.hex();
}

}  // namespace kcx
