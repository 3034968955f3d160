// A small, fast JSON scanner for the run loaders: it reads values straight into the run's
// arrays instead of building a document, and reports errors by byte offset (the loader
// turns the offset into line and column).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace kcx {

// Appends code point cp (at most 0x10FFFF, not a surrogate) as UTF-8.
void appendUtf8(std::string& out, uint32_t cp);
// The length of the well-formed UTF-8 sequence at p (1-4), or 0 when it is not one
// (overlong forms, surrogates and code points beyond 0x10FFFF are not).
size_t utf8Length(const unsigned char* p, size_t avail);
// The offset of the first byte that is not part of well-formed UTF-8; npos when none.
size_t firstInvalidUtf8(std::string_view s);

// The SPEC 1.1 names of non-finite values: "NaN", "Infinity", "-Infinity"; nullopt for
// any other string.
std::optional<double> nonFiniteNamed(std::string_view s);

struct ScanError {
    size_t offset;        // byte offset into the scanned text
    std::string message;
};

// The keys of one object so far: a short list, a hash set past 16 keys (hostile objects
// with millions of keys stay linear).
class DuplicateKeys {
public:
    bool insert(const std::string& key);   // false when the key was already there

private:
    std::vector<std::string> few_;
    std::unordered_set<std::string> many_;
};

class JsonScanner {
public:
    JsonScanner(std::string_view text, size_t begin, size_t end) : s_(text), p_(begin), end_(end) {}

    size_t pos() const { return p_; }
    void skipWs() {
        while (p_ < end_ && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\r' || s_[p_] == '\n'))
            ++p_;
    }
    bool atEnd() {
        skipWs();
        return p_ >= end_;
    }
    char peek() {
        skipWs();
        return p_ < end_ ? s_[p_] : '\0';
    }
    bool consume(char c) {
        if (peek() == c) {
            ++p_;
            return true;
        }
        return false;
    }
    void expect(char c, const char* what);
    [[noreturn]] void fail(const std::string& message) const { throw ScanError{p_, message}; }
    [[noreturn]] void failAt(size_t offset, const std::string& message) const {
        throw ScanError{offset, message};
    }

    // A JSON string; `out` receives the unescaped text.
    void string(std::string& out);
    // A JSON number as double. Fails on anything else.
    double number();
    // A log-prob slot: a number, null (returns the missing marker), or one of the strings
    // "NaN", "Infinity", "-Infinity". `what` names the field in errors.
    double numberOrMarker(const char* what);
    // An integer that fits int64 (token ids).
    int64_t integer(const char* what);
    bool literal(std::string_view word);   // true, false, null: consumes when it matches
    // Skips any JSON value, returning its extent [begin, end).
    std::pair<size_t, size_t> skipValue(int depth = 0);
    // Iterates `[ item, item, ... ]`; calls item() for each element.
    template <class F>
    void array(const char* what, F&& item) {
        expect('[', what);
        if (consume(']'))
            return;
        do {
            item();
        } while (consume(','));
        expect(']', what);
    }
    // Iterates `{ "key": value, ... }`; calls member(key, keyOffset) positioned at the value.
    // A key given twice is an error at the second one: readers would otherwise concatenate
    // arrays or keep the last scalar without a word (issue 16, case 8).
    template <class F>
    void object(const char* what, F&& member) {
        expect('{', what);
        if (consume('}'))
            return;
        std::string key;
        DuplicateKeys seen;
        do {
            skipWs();
            const size_t at = p_;
            if (peek() != '"')
                fail("expected a quoted key in " + std::string(what));
            string(key);
            if (!seen.insert(key))
                failAt(at, "duplicate key \"" + key + "\" in " + what + " (a key may appear once)");
            expect(':', "after an object key");
            member(key, at);
        } while (consume(','));
        expect('}', what);
    }
    std::string_view text() const { return s_; }

private:
    std::string_view s_;
    size_t p_, end_;
};

// For readers that parse with nlohmann/json (which keeps the last of two equal keys): the
// first key in `text` that repeats a key of its object, as a ScanError at the second key;
// nullopt when there is none, or when the scan stops first at anything else (a syntax
// error is left for the parser to report in its own words).
std::optional<ScanError> firstDuplicateKey(std::string_view text);

// Converts a byte offset into a 1-based line and column (columns count characters).
void lineColumn(std::string_view text, size_t offset, int64_t& line, int64_t& column);

}  // namespace kcx
