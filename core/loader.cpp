// Choosing a loader by content (SPEC 1).
#include "core/loader.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace kcx {

namespace {
// The first bytes of the file (fewer when it is shorter).
std::string head(const std::string& path, size_t n) {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f)
        throw InputError::inFile(path, std::string("cannot open: ") + std::strerror(errno));
    std::string s(n, '\0');
    s.resize(std::fread(s.data(), 1, n, f.get()));
    return s;
}

bool endsWith(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
}  // namespace

bool isGzipFile(const std::string& path) {
    const std::string h = head(path, 2);
    return h.size() == 2 && (unsigned char)h[0] == 0x1f && (unsigned char)h[1] == 0x8b;
}

Run loadRun(const std::string& path, const Progress& progress, const LoadOptions& options) {
    const std::string h = head(path, 16);
    if (h.size() >= 2 && (unsigned char)h[0] == 0x1f && (unsigned char)h[1] == 0x8b)
        return loadJsonl(path, progress, options);
    // safetensors: 8-byte little-endian header length, then a JSON object.
    if (h.size() >= 9 && h[8] == '{' && h[0] != '{')
        return loadSafetensors(path, progress);
    const size_t first = h.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && h[first] == '{')
        return loadJsonl(path, progress, options);
    if (endsWith(path, ".safetensors"))
        return loadSafetensors(path, progress);
    if (h.empty())
        throw InputError::inFile(path, "the file is empty");
    return loadJsonl(path, progress, options);
}

}  // namespace kcx
