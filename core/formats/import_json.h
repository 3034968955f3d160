// What the one-side readers share (core/formats/importers.h): parsing one JSON value with
// errors at its place in the file, and the small accessors that name a field when it is
// wrong. Internal to core/formats.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kcx::importjson {

// Where a JSON value starts in its file: errors read "FILE:LINE:COL: ...". `column0` is the
// column of the value's first character minus one (an array element after "[" or ", ").
struct Place {
    const std::string& file;
    int64_t line;
    int64_t column0 = 0;
    [[noreturn]] void fail(const std::string& msg) const;
};

// Objects keep their keys in file order (ordered_json): vLLM's prompt_logprobs names the
// scored token by its place, first in its dict.
//
// Parses `text` (one JSON value, maybe over several lines) starting at `at`. Bare NaN,
// Infinity and -Infinity (Python's json.dumps) become the strings "NaN", ... (SPEC 1.1); a
// key given twice, nesting past the depth limit and broken JSON are InputErrors at their
// line and column.
nlohmann::ordered_json parse(std::string_view text, const Place& at);

// Whether `text` is one complete JSON value (bare NaN/Infinity allowed), without errors.
bool isCompleteValue(std::string_view text);

// o[key], or an error "<where>: no "key"".
const nlohmann::ordered_json& member(const nlohmann::ordered_json& o, const char* key, const Place& at, const char* where);
// A string, or an error naming `what`.
std::string text(const nlohmann::ordered_json& v, const Place& at, const char* what);

}  // namespace kcx::importjson
