// Parsing one JSON value of a one-side dump with errors at their place (core/formats/import_json.h).
#include "core/formats/import_json.h"

#include <algorithm>
#include <vector>

#include "core/base/errors.h"
#include "core/base/json_depth.h"
#include "core/formats/json_scan.h"

namespace kcx::importjson {
namespace {

using json = nlohmann::ordered_json;

// Python's json.dumps writes NaN, Infinity and -Infinity bare; nlohmann::json does not read
// them. Outside strings they become the strings "NaN", "Infinity", "-Infinity" (SPEC 1.1);
// `inserted` records where quotes were added, to map error offsets back.
std::string quoteNonFinite(std::string_view s, std::vector<size_t>& inserted) {
    std::string out;
    out.reserve(s.size() + 16);
    bool inString = false;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (inString) {
            out += c;
            if (c == '\\' && i + 1 < s.size())
                out += s[++i];
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"')
            inString = true;
        for (std::string_view w : {std::string_view("-Infinity"), std::string_view("Infinity"), std::string_view("NaN")}) {
            if (s.substr(i, w.size()) == w) {
                inserted.push_back(i);
                out += '"';
                out += w;
                out += '"';
                inserted.push_back(i + w.size());
                i += w.size() - 1;
                goto next;
            }
        }
        out += c;
    next:;
    }
    return out;
}

// An offset in the quoted text back to the original: undo the quotes added before it.
size_t unquoted(size_t offset, const std::vector<size_t>& inserted) {
    size_t shift = 0;
    for (size_t pos : inserted)
        if (pos + shift < offset)
            ++shift;
    return offset - std::min(offset, shift);
}

[[noreturn]] void failAtOffset(std::string_view text, size_t offset, const Place& at, const std::string& msg) {
    int64_t line = 0, column = 0;
    lineColumn(text, offset, line, column);
    throw InputError::atText(at.file, at.line + line - 1, line == 1 ? column + at.column0 : column, msg);
}

}  // namespace

void Place::fail(const std::string& msg) const { throw InputError::atText(file, line, 0, msg); }

json parse(std::string_view text, const Place& at) {
    if (const size_t deep = jsonDepthExceeded(text); deep != std::string_view::npos)
        failAtOffset(text, deep, at, jsonDepthMessage());
    std::vector<size_t> inserted;
    const bool bare = text.find("NaN") != std::string_view::npos || text.find("Infinity") != std::string_view::npos;
    const std::string fixed = bare ? quoteNonFinite(text, inserted) : std::string(text);
    // nlohmann keeps the last of two equal keys: a repeated key is an error at the second.
    if (const auto dup = firstDuplicateKey(fixed))
        failAtOffset(text, unquoted(dup->offset, inserted), at, dup->message);
    try {
        return json::parse(fixed);
    } catch (const json::parse_error& e) {
        // e.byte is 1-based in the parsed text: the character it stopped at.
        std::string msg = e.what();
        const auto cut = msg.find("parse error");
        if (cut != std::string::npos)
            msg = msg.substr(cut);
        failAtOffset(text, unquoted(std::max<size_t>(e.byte, 1) - 1, inserted), at, "broken JSON: " + msg);
    } catch (const json::exception& e) {
        // Valid syntax the reader cannot hold, e.g. a number beyond double's range
        // ("1e999"); found by fuzz_import.
        throw InputError::atText(at.file, at.line, at.column0 + 1, std::string("unreadable JSON: ") + e.what());
    }
}

bool isCompleteValue(std::string_view text) {
    if (jsonDepthExceeded(text) != std::string_view::npos)
        return false;
    std::vector<size_t> inserted;
    return json::accept(quoteNonFinite(text, inserted));
}

const json& member(const json& o, const char* key, const Place& at, const char* where) {
    if (!o.is_object() || !o.contains(key))
        at.fail(std::string(where) + ": no \"" + key + "\"");
    return o[key];
}

std::string text(const json& v, const Place& at, const char* what) {
    if (!v.is_string())
        at.fail(std::string(what) + ": expected a string, got " + v.dump());
    return v.get<std::string>();
}

}  // namespace kcx::importjson
