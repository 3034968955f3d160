#include "core/base/unicode_nfc.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace kcx {

namespace {

std::u16string utf16Of(const std::string& text) {
    UErrorCode err = U_ZERO_ERROR;
    int32_t n = 0;
    u_strFromUTF8(nullptr, 0, &n, text.data(), int32_t(text.size()), &err);
    if (err != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(err))
        throw std::invalid_argument("not UTF-8");
    std::u16string out(size_t(n), u'\0');
    err = U_ZERO_ERROR;
    u_strFromUTF8(reinterpret_cast<UChar*>(out.data()), n, nullptr, text.data(), int32_t(text.size()), &err);
    if (U_FAILURE(err))
        throw std::invalid_argument("not UTF-8");
    return out;
}

std::string utf8Of(const std::u16string& text) {
    UErrorCode err = U_ZERO_ERROR;
    int32_t n = 0;
    const auto* src = reinterpret_cast<const UChar*>(text.data());
    u_strToUTF8(nullptr, 0, &n, src, int32_t(text.size()), &err);
    std::string out(size_t(n), '\0');
    err = U_ZERO_ERROR;
    u_strToUTF8(out.data(), n, nullptr, src, int32_t(text.size()), &err);
    if (U_FAILURE(err))
        throw std::invalid_argument("not UTF-16");
    return out;
}

const UNormalizer2* nfcInstance() {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFCInstance(&err);
    if (U_FAILURE(err))
        throw std::runtime_error(std::string("ICU has no NFC data: ") + u_errorName(err));
    return n;
}

std::u16string nfcNormalize(const std::u16string& s) {
    UErrorCode err = U_ZERO_ERROR;
    const auto* src = reinterpret_cast<const UChar*>(s.data());
    const int32_t n = unorm2_normalize(nfcInstance(), src, int32_t(s.size()), nullptr, 0, &err);
    std::u16string out(size_t(n), u'\0');
    err = U_ZERO_ERROR;
    unorm2_normalize(nfcInstance(), src, int32_t(s.size()), reinterpret_cast<UChar*>(out.data()), n, &err);
    if (U_FAILURE(err))
        throw std::runtime_error(std::string("NFC: ") + u_errorName(err));
    return out;
}

// The code points of UTF-16 text.
std::vector<uint32_t> codePointsOf(const std::u16string& s) {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < s.size(); ++i) {
        uint32_t c = s[i];
        if (c >= 0xD800 && c < 0xDC00 && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] < 0xE000)
            c = 0x10000 + ((c - 0xD800) << 10) + (s[++i] - 0xDC00);
        out.push_back(c);
    }
    return out;
}

std::string codePointName(uint32_t cp) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", unsigned(cp));
    return buf;
}

}  // namespace

std::string toNfc(const std::string& text) { return utf8Of(nfcNormalize(utf16Of(text))); }

std::optional<std::string> nfcProblem(const std::string& text) {
    const std::u16string s = utf16Of(text);
    UErrorCode err = U_ZERO_ERROR;
    if (unorm2_isNormalized(nfcInstance(), reinterpret_cast<const UChar*>(s.data()), int32_t(s.size()), &err) && U_SUCCESS(err))
        return std::nullopt;
    const auto from = codePointsOf(s), to = codePointsOf(nfcNormalize(s));
    size_t i = 0;
    while (i < from.size() && i < to.size() && from[i] == to[i])
        ++i;
    // The first character that NFC changes, and what it writes there.
    const std::string was = i < from.size() ? codePointName(from[i]) : std::string("the end");
    const std::string now = i < to.size() ? codePointName(to[i]) : std::string("nothing");
    return "character " + std::to_string(i + 1) + " (" + was + ") is " + now + " in normal form C";
}

}  // namespace kcx
