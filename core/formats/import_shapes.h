// The response shapes of one side of an import (core/formats/importers.h lists them):
// each reader turns one parsed response into records of an ImportedSide. Internal to
// core/formats; import_openai.cpp decides what a file is and calls these.
#pragma once

#include <string>
#include <string_view>

#include "core/formats/import_json.h"
#include "core/formats/importers.h"

namespace kcx::importshapes {

using Json = nlohmann::ordered_json;

// One response (an object), or an array of them (SGLang's batch /generate), that starts at
// `at`; `text` is the value's own text, used to place an array's elements. Appends records
// (one per choice), or a SkippedRecord for a failed request.
void readValue(const Json& v, std::string_view text, const importjson::Place& at, ImportedSide& side);

// A server-sent-event stream of chat completion chunks ("data: {...}" lines, blank lines,
// "data: [DONE]"): each stream (chunk id and choice index) becomes one record.
void readSse(std::string_view text, const std::string& name, ImportedSide& side);

// Whether `text` looks like a server-sent-event stream: its first non-blank line starts
// with "data:" or "event:".
bool looksLikeSse(std::string_view text);

// Appends chat-style log-prob entries {token, logprob, top_logprobs: [{token, logprob}]}
// (chat completions, their stream deltas, the Responses API) to r.
void readChatEntries(const Json& entries, ImportedRecord& r, const importjson::Place& at, const char* where);
// Drops r.top when no position has alternatives (the request asked for none).
void finishTop(ImportedRecord& r);
// An error as servers write it: a string, {message, code}, or {"error": {...}} around it.
std::string errorText(const Json& e);
// Notes a shape in side.formats once.
void noteFormat(ImportedSide& side, const char* f);

}  // namespace kcx::importshapes
