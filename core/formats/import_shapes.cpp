// One response of one side, in each shape the serving stacks write (core/formats/import_shapes.h;
// where each writer lives upstream: docs/formats.md and docs/research/stacks-round2.md).
#include "core/formats/import_shapes.h"

#include <algorithm>
#include <map>

#include "core/base/errors.h"
#include "core/formats/json_scan.h"

namespace kcx::importshapes {

using importjson::member;
using importjson::Place;
using importjson::text;

namespace {

// A log-prob: a number (vLLM's floor -9999.0 kept as read, importPair reads it),
// "NaN"/"Infinity"/"-Infinity", or null (missing).
double logprobOf(const Json& v, const Place& at, const char* what) {
    if (v.is_null())
        return missingDouble();
    if (v.is_number())
        return v.get<double>();
    if (v.is_string())
        if (const auto named = nonFiniteNamed(v.get_ref<const std::string&>()))
            return *named;
    at.fail(std::string(what) + ": expected a number or null, got " + v.dump());
}

// A token string; vLLM's "token_id:123" (return_tokens_as_token_ids) is an id, not text.
ImportedToken textToken(std::string s) {
    if (s.rfind("token_id:", 0) == 0 && s.size() > 9 && s.size() < 19 &&
        s.find_first_not_of("0123456789", 9) == std::string::npos)
        return {std::string(), std::stoll(s.substr(9)), false};
    return {std::move(s), -1, true};
}

const Json* arrayAt(const Json& o, const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_array() ? &o[key] : nullptr;
}

std::string rowCount(const char* where, size_t rows, size_t tokens) {
    return std::string(where) + " has " + std::to_string(rows) + " rows for " + std::to_string(tokens) + " tokens";
}

void readCompletions(const Json& lp, ImportedRecord& r, const Place& at) {
    const Json& toks = member(lp, "tokens", at, "choices[].logprobs");
    const Json& lps = member(lp, "token_logprobs", at, "choices[].logprobs");
    if (!toks.is_array() || !lps.is_array() || toks.size() != lps.size())
        at.fail("choices[].logprobs: tokens and token_logprobs must be arrays of equal length");
    for (size_t j = 0; j < toks.size(); ++j) {
        r.tokens.push_back(textToken(text(toks[j], at, "tokens[]")));
        r.logp.push_back(logprobOf(lps[j], at, "token_logprobs[]"));
    }
    if (const Json* top = arrayAt(lp, "top_logprobs")) {
        if (top->size() != toks.size())
            at.fail(rowCount("choices[].logprobs.top_logprobs", top->size(), toks.size()));
        for (const Json& row : *top) {
            r.top.emplace_back();
            if (row.is_null())
                continue;
            if (!row.is_object())
                at.fail("top_logprobs[]: expected an object {token: logprob} or null");
            for (const auto& [tok, v] : row.items())
                r.top.back().push_back({textToken(tok), logprobOf(v, at, "top logprob")});
        }
    }
    // Echo: the prompt comes first, and its first token never has a log-prob (an output
    // token always has one, if only vLLM's floor).
    r.withPrompt = r.withPrompt || (!lps.empty() && lps[0].is_null());
}

// SGLang: [logprob, token_id, text-or-null].
ImportedAlternative sglangTriple(const Json& t, const Place& at) {
    if (!t.is_array() || t.size() < 2 || !t[1].is_number_integer())
        at.fail("SGLang log-prob entry: expected [logprob, token_id, text], got " + t.dump());
    ImportedAlternative a;
    a.logp = logprobOf(t[0], at, "SGLang logprob");
    a.token.id = t[1].get<int64_t>();
    if (t.size() > 2 && t[2].is_string()) {
        a.token.text = t[2].get<std::string>();
        a.token.hasText = true;
    }
    return a;
}

void readSglang(const Json& meta, ImportedRecord& r, const Place& at) {
    const Json& out = member(meta, "output_token_logprobs", at, "meta_info");
    if (!out.is_array())
        at.fail("meta_info.output_token_logprobs: expected an array (request with return_logprob=true)");
    for (const Json& t : out) {
        ImportedAlternative a = sglangTriple(t, at);
        r.tokens.push_back(std::move(a.token));
        r.logp.push_back(a.logp);
    }
    if (const Json* top = arrayAt(meta, "output_top_logprobs")) {
        if (top->size() != out.size())
            at.fail(rowCount("meta_info.output_top_logprobs", top->size(), out.size()));
        for (const Json& row : *top) {
            r.top.emplace_back();
            if (row.is_null())
                continue;
            if (!row.is_array())
                at.fail("meta_info.output_top_logprobs[]: expected an array of [logprob, token_id, text] or null");
            for (const Json& t : row)
                r.top.back().push_back(sglangTriple(t, at));
        }
    }
}

// TGI: {id, text, logprob, special}.
ImportedAlternative tgiToken(const Json& t, const Place& at) {
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer())
        at.fail("details.tokens[]: expected {id, text, logprob, special}, got " + t.dump());
    return {{text(member(t, "text", at, "details.tokens[]"), at, "text"), t["id"].get<int64_t>(), true},
            logprobOf(member(t, "logprob", at, "details.tokens[]"), at, "logprob")};
}

// TGI /generate with details: the generated tokens; prefill (the prompt) is left out, and
// so are best_of_sequences (counted: only the returned sequence is compared).
void readTgi(const Json& details, ImportedRecord& r, ImportedSide& side, const Place& at) {
    const Json& toks = member(details, "tokens", at, "details");
    if (!toks.is_array())
        at.fail("details.tokens: expected an array");
    for (const Json& t : toks) {
        ImportedAlternative a = tgiToken(t, at);
        r.tokens.push_back(std::move(a.token));
        r.logp.push_back(a.logp);
    }
    if (const Json* top = arrayAt(details, "top_tokens")) {
        if (top->size() != toks.size())
            at.fail(rowCount("details.top_tokens", top->size(), toks.size()));
        for (const Json& row : *top) {
            if (!row.is_array())
                at.fail("details.top_tokens[]: expected an array of tokens");
            r.top.emplace_back();
            for (const Json& t : row)
                r.top.back().push_back(tgiToken(t, at));
        }
    }
    if (const Json* best = arrayAt(details, "best_of_sequences"))
        side.bestOfIgnored += best->size();
}

// The Responses API: every output_text part of every message, in order.
void readResponses(const Json& output, ImportedRecord& r, const Place& at) {
    bool any = false;
    for (const Json& item : output) {
        const Json* content = arrayAt(item, "content");
        if (!content || item.value("type", "") != "message")
            continue;
        for (const Json& part : *content) {
            if (!part.is_object() || part.value("type", "") != "output_text")
                continue;
            const Json& lp = member(part, "logprobs", at, "output[].content[]");
            if (!lp.is_array())
                at.fail("output[].content[].logprobs: expected an array (request with include: "
                        "[\"message.output_text.logprobs\"])");
            readChatEntries(lp, r, at, "output[].content[].logprobs[]");
            any = true;
        }
    }
    if (!any)
        at.fail("output[]: no message with output_text log-probs");
}

void readPlain(const Json& o, const char* key, ImportedRecord& r, const Place& at) {
    const Json& lps = o[key];
    if (!lps.is_array())
        at.fail(std::string("\"") + key + "\": expected an array");
    for (const Json& v : lps)
        r.logp.push_back(logprobOf(v, at, key));
    if (o.contains("tokens")) {
        const Json& toks = o["tokens"];
        if (!toks.is_array() || toks.size() != lps.size())
            at.fail(std::string("\"tokens\" must be an array as long as \"") + key + "\"");
        for (const Json& t : toks) {
            if (t.is_number_integer())
                r.tokens.push_back({std::string(), t.get<int64_t>(), false});
            else
                r.tokens.push_back(textToken(text(t, at, "tokens[]")));
        }
    }
    if (o.contains("text") && o["text"].is_array() && o["text"].size() == r.tokens.size()) {
        for (size_t j = 0; j < r.tokens.size(); ++j)
            if (o["text"][j].is_string()) {
                r.tokens[j].text = o["text"][j].get<std::string>();
                r.tokens[j].hasText = true;
            }
    }
}

// vLLM's prompt_logprobs: one entry per prompt token, entry 0 null, each a dict
// "token id" -> {logprob, rank, decoded_token} whose first key is the prompt's own token.
// The positions come before the output's, with their top-k rows left empty.
void prependPrompt(const Json& prompt, ImportedRecord& r, const Place& at) {
    if (!prompt.is_array())
        at.fail("prompt_logprobs: expected an array (one entry per prompt token)");
    ImportedRecord p;
    for (const Json& e : prompt) {
        ImportedToken t;
        double lp = missingDouble();
        if (!e.is_null()) {
            if (!e.is_object() || e.empty())
                at.fail("prompt_logprobs[]: expected {\"token id\": {logprob, rank, decoded_token}} or null, got " +
                        e.dump());
            const auto first = e.begin();
            const std::string& key = first.key();
            if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos)
                at.fail("prompt_logprobs[]: key \"" + key + "\" is not a token id");
            t.id = std::stoll(key);
            const Json& v = first.value();
            lp = logprobOf(member(v, "logprob", at, "prompt_logprobs[]"), at, "prompt logprob");
            if (v.contains("decoded_token") && v["decoded_token"].is_string()) {
                t.text = v["decoded_token"].get<std::string>();
                t.hasText = true;
            }
        }
        p.tokens.push_back(std::move(t));
        p.logp.push_back(lp);
    }
    if (!r.top.empty())
        r.top.insert(r.top.begin(), p.tokens.size(), {});
    r.tokens.insert(r.tokens.begin(), p.tokens.begin(), p.tokens.end());
    r.logp.insert(r.logp.begin(), p.logp.begin(), p.logp.end());
    r.withPrompt = true;
}

// One choice of a chat or completions response; `chatPrompt` is a chat response's
// top-level prompt_logprobs (completions carry theirs per choice).
void readChoice(const Json& c, const Json* chatPrompt, ImportedRecord& r, ImportedSide& side, const Place& at) {
    if (const Json* meta = c.contains("meta_info") && c["meta_info"].is_object() ? &c["meta_info"] : nullptr;
        meta && meta->contains("output_token_logprobs")) {
        noteFormat(side, "sglang");   // SGLang chat with return_meta_info: ids as well as text
        readSglang(*meta, r, at);
    } else {
        const Json& lp = member(c, "logprobs", at, "choices[]");
        if (lp.is_null())
            at.fail("choices[].logprobs is null (request with logprobs enabled)");
        if (lp.contains("content")) {
            noteFormat(side, "openai-chat");
            if (!lp["content"].is_null())
                readChatEntries(lp["content"], r, at, "logprobs.content[]");
        } else {
            noteFormat(side, "openai-completions");
            readCompletions(lp, r, at);
        }
    }
    finishTop(r);
    const Json* prompt = c.contains("prompt_logprobs") && !c["prompt_logprobs"].is_null() ? &c["prompt_logprobs"]
                                                                                         : chatPrompt;
    if (prompt && !r.withPrompt)   // with echo the prompt is already there
        prependPrompt(*prompt, r, at);
}

// Every choice; several become "ID#INDEX" (INDEX from choices[i].index, else i).
void readChoices(const Json& body, const ImportedRecord& base, ImportedSide& side, const Place& at) {
    const Json& ch = body["choices"];
    if (!ch.is_array() || ch.empty())
        at.fail("\"choices\" is empty");
    const Json* chatPrompt =
        body.contains("prompt_logprobs") && !body["prompt_logprobs"].is_null() ? &body["prompt_logprobs"] : nullptr;
    std::map<int64_t, size_t> seen;   // choice index -> position
    for (size_t i = 0; i < ch.size(); ++i) {
        const Json& c = ch[i];
        if (!c.is_object())
            at.fail("choices[" + std::to_string(i) + "]: expected an object");
        int64_t index = int64_t(i);
        if (c.contains("index") && !c["index"].is_null()) {
            if (!c["index"].is_number_integer())
                at.fail("choices[" + std::to_string(i) + "].index: expected an integer, got " + c["index"].dump());
            index = c["index"].get<int64_t>();
        }
        if (const auto [it, fresh] = seen.emplace(index, i); !fresh)
            at.fail("choices[" + std::to_string(i) + "].index " + std::to_string(index) + " repeats choices[" +
                    std::to_string(it->second) + "]");
        ImportedRecord r = base;
        if (ch.size() > 1)
            r.id.append(1, '#').append(std::to_string(index));
        readChoice(c, chatPrompt, r, side, at);
        side.records.push_back(std::move(r));
    }
    if (ch.size() > 1)
        ++side.choicesSplit;
}

// Why a response failed, or "" when it did not: an `error` that is not null (OpenAI batch,
// vLLM run_batch, an error response), a batch line whose `response` is null, has a status
// other than 2xx or no body.
std::string failure(const Json& line) {
    std::string why;
    if (line.contains("error") && !line["error"].is_null())
        why = errorText(line["error"]);
    if (!line.contains("response") || !why.empty())
        return why;
    const Json& resp = line["response"];
    if (resp.is_null())
        return "response is null";
    if (!resp.is_object())
        return {};
    if (resp.contains("status_code") && resp["status_code"].is_number_integer()) {
        const int64_t status = resp["status_code"].get<int64_t>();
        if (status < 200 || status > 299)
            return "HTTP " + std::to_string(status) +
                   (resp.contains("body") && !resp["body"].is_null() ? ": " + errorText(resp["body"]) : "");
    }
    if (resp.contains("body") && resp["body"].is_null())
        return "response has no body";
    return {};
}

std::string idOf(const Json& line) {
    for (const char* key : {"kcx_id", "custom_id", "id"})
        if (line.contains(key) && !line[key].is_null())
            return line[key].is_string() ? line[key].get<std::string>() : line[key].dump();
    return {};
}

// metadata -> slice labels; kcx_prompt_len (there or at top level) -> the prompt length.
void readMetadata(const Json& line, ImportedRecord& r, const Place& at) {
    const auto promptLength = [&](const Json& v) {
        if (!v.is_number_integer() || v.get<int64_t>() < 0)
            at.fail("kcx_prompt_len: expected a non-negative integer, got " + v.dump());
        r.promptLength = v.get<int64_t>();
    };
    if (line.contains("kcx_prompt_len"))
        promptLength(line["kcx_prompt_len"]);
    if (!line.contains("metadata") || !line["metadata"].is_object())
        return;
    for (const auto& [k, v] : line["metadata"].items()) {
        if (k == "kcx_prompt_len")
            promptLength(v);
        else if (!v.is_null())
            r.labels.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    }
}

void readResponse(const Json& line, ImportedSide& side, const Place& at) {
    if (!line.is_object())
        at.fail("expected a JSON object");
    ImportedRecord r;
    r.line = at.line;
    r.id = idOf(line);
    if (const std::string why = failure(line); !why.empty()) {
        side.skipped.push_back({r.id.empty() ? "(no id)" : r.id, at.line, why});
        return;
    }
    const Json& body = line.contains("response") && line["response"].is_object() && line["response"].contains("body")
                           ? line["response"]["body"]   // OpenAI / vLLM batch output
                           : line;
    readMetadata(line, r, at);
    if (body.contains("choices")) {
        if (r.id.empty())
            at.fail("record has no id (add \"kcx_id\" or \"id\")");
        readChoices(body, r, side, at);
        return;
    }
    if (body.contains("meta_info")) {
        noteFormat(side, "sglang");
        const Json& meta = body["meta_info"];
        if (r.id.empty() && meta.contains("id") && meta["id"].is_string())
            r.id = meta["id"].get<std::string>();
        readSglang(meta, r, at);
    } else if (body.contains("details") && body["details"].is_object()) {
        noteFormat(side, "tgi");
        readTgi(body["details"], r, side, at);
    } else if (const Json* output = arrayAt(body, "output")) {
        noteFormat(side, "openai-responses");
        readResponses(*output, r, at);
    } else {
        const char* key = nullptr;
        for (const char* k : {"logp_train", "logp_inf", "logp"})
            if (body.contains(k)) {
                key = k;
                break;
            }
        if (!key)
            at.fail("unknown record shape: expected \"choices\" (OpenAI chat/completions), \"meta_info\" (SGLang), "
                    "\"details\" (TGI), \"output\" (OpenAI Responses) or \"logp_train\"/\"logp_inf\"/\"logp\" arrays");
        noteFormat(side, "plain");
        readPlain(body, key, r, at);
    }
    finishTop(r);
    if (r.id.empty())
        at.fail("record has no id (add \"kcx_id\" or \"id\")");
    side.records.push_back(std::move(r));
}

// The offsets of the elements of the array `text` holds (text parsed already: only
// strings and nesting need following).
std::vector<size_t> elementStarts(std::string_view text) {
    std::vector<size_t> starts;
    int depth = 0;
    bool inString = false, expect = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        if (expect && depth == 1 && c != ']') {
            starts.push_back(i);
            expect = false;
        }
        if (c == '"')
            inString = true;
        else if (c == '[' || c == '{')
            expect = ++depth == 1;
        else if (c == ']' || c == '}')
            --depth;
        else if (c == ',' && depth == 1)
            expect = true;
    }
    return starts;
}

}  // namespace

void readChatEntries(const Json& entries, ImportedRecord& r, const Place& at, const char* where) {
    if (!entries.is_array())
        at.fail(std::string(where) + ": expected an array");
    for (const Json& e : entries) {
        r.tokens.push_back(textToken(text(member(e, "token", at, where), at, "token")));
        r.logp.push_back(logprobOf(member(e, "logprob", at, where), at, "logprob"));
        r.top.emplace_back();
        if (const Json* top = arrayAt(e, "top_logprobs"))
            for (const Json& a : *top)
                r.top.back().push_back({textToken(text(member(a, "token", at, "top_logprobs[]"), at, "token")),
                                        logprobOf(member(a, "logprob", at, "top_logprobs[]"), at, "top logprob")});
    }
}

std::string errorText(const Json& e) {
    if (e.is_string())
        return e.get<std::string>();
    if (e.is_object()) {
        if (e.contains("error") && e["error"].is_object())   // vLLM's ErrorResponse, OpenAI's error body
            return errorText(e["error"]);
        if (e.contains("message") && e["message"].is_string()) {
            const Json& code = e.contains("code") ? e["code"] : Json();
            return (code.is_string() ? code.get<std::string>() + ": " : code.is_null() ? "" : code.dump() + ": ") +
                   e["message"].get<std::string>();
        }
    }
    return e.dump();
}

void finishTop(ImportedRecord& r) {
    if (std::all_of(r.top.begin(), r.top.end(), [](const auto& row) { return row.empty(); }))
        r.top.clear();
}

void noteFormat(ImportedSide& side, const char* f) {
    if (std::find(side.formats.begin(), side.formats.end(), f) == side.formats.end())
        side.formats.push_back(f);
}

void readValue(const Json& v, std::string_view text, const Place& at, ImportedSide& side) {
    if (!v.is_array()) {
        readResponse(v, side, at);
        return;
    }
    const std::vector<size_t> starts = elementStarts(text);
    for (size_t i = 0; i < v.size(); ++i) {
        int64_t line = 0, column = 0;
        lineColumn(text, i < starts.size() ? starts[i] : 0, line, column);
        readResponse(v[i], side, Place{at.file, at.line + line - 1, (line == 1 ? at.column0 : 0) + column - 1});
    }
}

}  // namespace kcx::importshapes
