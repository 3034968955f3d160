// Streamed chat completions as one side of an import (core/formats/import_shapes.h): the raw
// server-sent-event body vLLM, OpenAI and TGI send with stream=true, one "data: {chunk}"
// event per token or few tokens, ending with "data: [DONE]".
#include <map>
#include <set>

#include "core/formats/import_shapes.h"

namespace kcx::importshapes {
namespace {

struct Stream {
    ImportedRecord record;
    bool open = true;
    bool logprobs = false;    // a chunk carried log-probs
    std::string failed;       // an error event arrived while it was open
};

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

}  // namespace

bool looksLikeSse(std::string_view text) {
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos)
        return false;
    const std::string_view rest = text.substr(first);
    return rest.starts_with("data:") || rest.starts_with("event:");
}

void readSse(std::string_view text, const std::string& name, ImportedSide& side) {
    noteFormat(side, "openai-chat-stream");
    // Streams by chunk id, then choice index (n > 1 interleaves them), in order of first chunk.
    std::map<std::pair<std::string, int64_t>, size_t> index;
    std::vector<Stream> streams;
    std::map<std::string, std::set<int64_t>> choicesOf;
    int64_t lineNo = 0, lastData = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view line = trimmed(text.substr(pos, end - pos));
        pos = end + 1;
        ++lineNo;
        const importjson::Place at{name, lineNo};
        // Blank lines end an event; comments and the other SSE fields carry nothing to read.
        if (line.empty() || line.starts_with(":") || line.starts_with("event:") || line.starts_with("id:") ||
            line.starts_with("retry:"))
            continue;
        if (!line.starts_with("data:"))
            at.fail("not a server-sent event line (expected \"data: ...\", a blank line or \"data: [DONE]\")");
        lastData = lineNo;
        const size_t skip = line.size() > 5 && line[5] == ' ' ? 6 : 5;
        const std::string_view payload = line.substr(skip);
        if (payload == "[DONE]") {
            for (Stream& s : streams)
                s.open = false;
            continue;
        }
        const importjson::Place chunkAt{name, lineNo, int64_t(skip)};
        const Json chunk = importjson::parse(payload, chunkAt);
        if (!chunk.is_object())
            chunkAt.fail("expected a chat completion chunk (a JSON object)");
        if (chunk.contains("error") && !chunk["error"].is_null()) {   // the server gave up mid-stream
            const std::string why = errorText(chunk["error"]);
            bool any = false;
            for (Stream& s : streams)
                if (s.open) {
                    s.failed = why;
                    any = true;
                }
            if (!any)
                side.skipped.push_back({"(stream at line " + std::to_string(lineNo) + ")", lineNo, why});
            continue;
        }
        const Json& choices = importjson::member(chunk, "choices", chunkAt, "chunk");
        if (!choices.is_array())
            chunkAt.fail("\"choices\": expected an array");
        std::string id = chunk.contains("id") && chunk["id"].is_string() ? chunk["id"].get<std::string>() : "";
        if (id.empty())
            chunkAt.fail("chunk has no \"id\"");
        for (size_t i = 0; i < choices.size(); ++i) {
            const Json& c = choices[i];
            const int64_t choice =
                c.is_object() && c.contains("index") && c["index"].is_number_integer() ? c["index"].get<int64_t>()
                                                                                       : int64_t(i);
            const auto [it, fresh] = index.emplace(std::pair{id, choice}, streams.size());
            if (fresh) {
                streams.emplace_back();
                streams.back().record.id = id;
                streams.back().record.line = lineNo;
                choicesOf[id].insert(choice);
            }
            Stream& s = streams[it->second];
            if (!s.open)
                chunkAt.fail("a chunk of stream '" + id + "' (choice " + std::to_string(choice) +
                             ") after its \"data: [DONE]\"");
            if (c.is_object() && c.contains("logprobs") && c["logprobs"].is_object() &&
                c["logprobs"].contains("content") && !c["logprobs"]["content"].is_null()) {
                readChatEntries(c["logprobs"]["content"], s.record, chunkAt, "choices[].logprobs.content[]");
                s.logprobs = true;
            }
        }
    }
    for (const auto& [key, at] : index)
        if (choicesOf[key.first].size() > 1)
            streams[at].record.id.append(1, '#').append(std::to_string(key.second));
    for (const auto& [id, set] : choicesOf)
        if (set.size() > 1)
            ++side.choicesSplit;
    for (Stream& s : streams) {
        if (!s.failed.empty()) {   // whether [DONE] followed or not
            side.skipped.push_back({s.record.id, s.record.line, s.failed});
            continue;
        }
        if (s.open)
            importjson::Place{name, lastData}.fail("stream '" + s.record.id +
                                                   "' ends without \"data: [DONE]\" (the stream was cut short?)");
        if (!s.logprobs)
            importjson::Place{name, s.record.line}.fail("stream '" + s.record.id +
                                                        "' carries no log-probs (request with logprobs: true)");
        finishTop(s.record);
        side.records.push_back(std::move(s.record));
    }
}

}  // namespace kcx::importshapes
