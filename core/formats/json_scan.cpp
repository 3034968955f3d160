#include "core/formats/json_scan.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/formats/run.h"

namespace kcx {

namespace {
// 'text', built by appending (GCC 12 warns falsely on "'" + std::string, bug 105329).
std::string quoted(std::string_view text) {
    std::string q;
    q.reserve(text.size() + 2);
    q += '\'';
    q += text;
    q += '\'';
    return q;
}

std::string describe(std::string_view s, size_t p, size_t end) {
    if (p >= end)
        return "end of line";
    const char c = s[p];
    if (c < 32 || c > 126)
        return "byte 0x" + std::string(1, "0123456789abcdef"[(unsigned char)c >> 4]) +
               std::string(1, "0123456789abcdef"[c & 15]);
    // A number or a bare word is shown whole, so that "1.5" does not read as "1".
    size_t e = p;
    while (e < end && e - p < 24 && (std::isalnum((unsigned char)s[e]) || s[e] == '.' || s[e] == '-' || s[e] == '+'))
        ++e;
    if (e > p + 1)
        return quoted(s.substr(p, e - p));
    return std::string("'") + c + "'";
}

}  // namespace

size_t utf8Length(const unsigned char* p, size_t avail) {
    if (avail == 0)
        return 0;
    const unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t min;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;   // a continuation byte, an overlong lead (C0, C1) or beyond F4
    }
    if (avail < n)
        return 0;
    uint32_t cp = c & (0xFF >> (n + 1));
    for (size_t i = 1; i < n; ++i) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
        return 0;
    return n;
}

size_t firstInvalidUtf8(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (size_t i = 0; i < s.size();) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        const size_t n = utf8Length(p + i, s.size() - i);
        if (n == 0)
            return i;
        i += n;
    }
    return std::string_view::npos;
}

void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

bool DuplicateKeys::insert(const std::string& key) {
    if (many_.empty()) {
        if (std::find(few_.begin(), few_.end(), key) != few_.end())
            return false;
        few_.push_back(key);
        if (few_.size() > 16) {
            many_.insert(few_.begin(), few_.end());
            few_.clear();
        }
        return true;
    }
    return many_.insert(key).second;
}

void JsonScanner::expect(char c, const char* what) {
    if (!consume(c))
        fail(std::string("expected '") + c + "' " + what + ", found " + describe(s_, p_, end_));
}

bool JsonScanner::literal(std::string_view word) {
    skipWs();
    if (s_.substr(p_, word.size()) == word && p_ + word.size() <= end_) {
        p_ += word.size();
        return true;
    }
    return false;
}

void JsonScanner::string(std::string& out) {
    skipWs();
    if (p_ >= end_ || s_[p_] != '"')
        fail("expected a string, found " + describe(s_, p_, end_));
    ++p_;
    out.clear();
    size_t run = p_;
    for (;;) {
        if (p_ >= end_)
            failAt(run - 1, "unterminated string");
        const char c = s_[p_];
        if (c == '"') {
            out.append(s_.data() + run, p_ - run);
            ++p_;
            return;
        }
        if ((unsigned char)c < 0x20)
            fail("control character inside a string");
        if ((unsigned char)c >= 0x80) {
            const size_t n = utf8Length(reinterpret_cast<const unsigned char*>(s_.data() + p_), end_ - p_);
            if (n == 0) {
                char hex[8];
                std::snprintf(hex, sizeof hex, "0x%02X", unsigned((unsigned char)c));
                fail(std::string("invalid UTF-8 (byte ") + hex + ") inside a string: JSON text is UTF-8");
            }
            p_ += n;
            continue;
        }
        if (c != '\\') {
            ++p_;
            continue;
        }
        out.append(s_.data() + run, p_ - run);
        if (p_ + 1 >= end_)
            fail("unterminated escape");
        const char e = s_[p_ + 1];
        p_ += 2;
        switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
            auto hex4 = [&](uint32_t& v) {
                if (p_ + 4 > end_)
                    fail("truncated \\u escape");
                v = 0;
                for (int i = 0; i < 4; ++i) {
                    const char h = s_[p_ + size_t(i)];
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= uint32_t(h - '0');
                    else if (h >= 'a' && h <= 'f') v |= uint32_t(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v |= uint32_t(h - 'A' + 10);
                    else fail("bad hex digit in \\u escape");
                }
                p_ += 4;
            };
            uint32_t cp;
            hex4(cp);
            if (cp >= 0xD800 && cp < 0xDC00 && p_ + 1 < end_ && s_[p_] == '\\' && s_[p_ + 1] == 'u') {
                p_ += 2;
                uint32_t lo;
                hex4(lo);
                if (lo >= 0xDC00 && lo < 0xE000)
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                else
                    fail("unpaired surrogate in \\u escape");
            }
            if (cp >= 0xD800 && cp < 0xE000)   // a lone half of a pair has no UTF-8 form
                fail("unpaired surrogate in \\u escape");
            appendUtf8(out, cp);
            break;
        }
        default: fail(std::string("bad escape '\\") + e + "'");
        }
        run = p_;
    }
}

double JsonScanner::number() {
    skipWs();
    const size_t at = p_;
    if (p_ >= end_ || !(s_[p_] == '-' || (s_[p_] >= '0' && s_[p_] <= '9')))
        fail("expected a number, found " + describe(s_, p_, end_));
    if (s_[p_] == '-' && (p_ + 1 >= end_ || s_[p_ + 1] < '0' || s_[p_ + 1] > '9'))
        fail("expected a digit after '-'");
    double v;
    const auto r = std::from_chars(s_.data() + p_, s_.data() + end_, v);
    if (r.ec == std::errc::result_out_of_range) {
        // Out of double range: an overflow is infinite, an underflow is zero.
        size_t q = p_;
        while (q < end_ && (std::isdigit((unsigned char)s_[q]) || s_[q] == '-' || s_[q] == '+' ||
                            s_[q] == '.' || s_[q] == 'e' || s_[q] == 'E'))
            ++q;
        const std::string_view tok = s_.substr(p_, q - p_);
        const bool neg = tok[0] == '-';
        const size_t e = tok.find_first_of("eE");
        const bool tiny = e != std::string_view::npos && e + 1 < tok.size() && tok[e + 1] == '-';
        p_ = q;
        return tiny ? (neg ? -0.0 : 0.0)
                    : (neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
    }
    if (r.ec != std::errc())
        failAt(at, "malformed number");
    p_ = size_t(r.ptr - s_.data());
    return v;
}

double JsonScanner::numberOrMarker(const char* what) {
    const char c = peek();
    if (c == 'n') {
        if (literal("null"))
            return missingDouble();
    } else if (c == '"') {
        const size_t at = p_;
        std::string s;
        string(s);
        if (const auto v = nonFiniteNamed(s))
            return *v;
        failAt(at, std::string(what) + ": expected a number, null, \"NaN\", \"Infinity\" or \"-Infinity\", found \"" +
                       s + "\"");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        return number();
    }
    fail(std::string(what) + ": expected a number or null, found " + describe(s_, p_, end_));
}

int64_t JsonScanner::integer(const char* what) {
    skipWs();
    const size_t at = p_;
    int64_t v = 0;
    const auto r = std::from_chars(s_.data() + p_, s_.data() + end_, v);
    if (r.ec != std::errc() || (r.ptr < s_.data() + end_ && (*r.ptr == '.' || *r.ptr == 'e' || *r.ptr == 'E')))
        failAt(at, std::string(what) + ": expected an integer, found " + describe(s_, p_, end_));
    p_ = size_t(r.ptr - s_.data());
    return v;
}

std::pair<size_t, size_t> JsonScanner::skipValue(int depth) {
    if (depth > 256)
        fail("nesting deeper than 256 levels");
    const char c = peek();
    const size_t begin = p_;
    std::string tmp;
    if (c == '{') {
        object("object", [&](const std::string&, size_t) { skipValue(depth + 1); });
    } else if (c == '[') {
        array("array", [&] { skipValue(depth + 1); });
    } else if (c == '"') {
        string(tmp);
    } else if (c == 't' || c == 'f' || c == 'n') {
        if (!literal("true") && !literal("false") && !literal("null"))
            fail("expected a JSON value, found " + describe(s_, p_, end_));
    } else {
        number();
    }
    return {begin, p_};
}

std::optional<ScanError> firstDuplicateKey(std::string_view text) {
    try {
        JsonScanner j(text, 0, text.size());
        while (!j.atEnd())
            j.skipValue();
    } catch (const ScanError& e) {
        if (e.message.rfind("duplicate key", 0) == 0)
            return e;
    }
    return std::nullopt;
}

void lineColumn(std::string_view text, size_t offset, int64_t& line, int64_t& column) {
    offset = std::min(offset, text.size());
    line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i)
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    column = 1;
    for (size_t i = lineStart; i < offset; ++i)
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
            ++column;
}

std::optional<double> nonFiniteNamed(std::string_view s) {
    if (s == "NaN")
        return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity")
        return std::numeric_limits<double>::infinity();
    if (s == "-Infinity")
        return -std::numeric_limits<double>::infinity();
    return std::nullopt;
}

}  // namespace kcx
