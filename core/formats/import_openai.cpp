// Reading one side of an import: OpenAI chat/completions log-prob responses, SGLang's
// native /generate output and plain arrays, one JSON object per line (core/formats/importers.h).
#include <zlib.h>

#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/base/errors.h"
#include "core/base/json_depth.h"
#include "core/formats/importers.h"
#include "core/formats/json_scan.h"
#include "core/formats/sniff.h"

namespace kcx {
namespace {

using nlohmann::json;


struct LineContext {
    const std::string& file;
    int64_t line;
    [[noreturn]] void fail(const std::string& msg) const { throw InputError::atText(file, line, 0, msg); }
};

// Python's json.dumps writes NaN, Infinity and -Infinity bare; nlohmann::json does not read
// them. Outside strings they become the strings "NaN", "Infinity", "-Infinity" (SPEC 1.1);
// `inserted` records where quotes were added, to map error columns back.
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

json parseLine(std::string_view text, const LineContext& at) {
    if (const size_t deep = jsonDepthExceeded(text); deep != std::string_view::npos) {
        int64_t line = 0, column = 0;
        lineColumn(text, deep, line, column);
        throw InputError::atText(at.file, at.line, column, jsonDepthMessage());
    }
    std::vector<size_t> inserted;
    const bool bare = text.find("NaN") != std::string_view::npos || text.find("Infinity") != std::string_view::npos;
    const std::string fixed = bare ? quoteNonFinite(text, inserted) : std::string(text);
    // nlohmann keeps the last of two equal keys: a repeated key is an error at the second.
    if (const auto dup = firstDuplicateKey(fixed)) {
        size_t off = dup->offset, shift = 0;   // undo the quotes added before it
        for (size_t pos : inserted)
            if (pos + shift < off)
                ++shift;
        off -= std::min(off, shift);
        int64_t line = 0, column = 0;
        lineColumn(text, off, line, column);
        throw InputError::atText(at.file, at.line, column, dup->message);
    }
    try {
        return json::parse(fixed);
    } catch (const json::parse_error& e) {
        // e.byte is 1-based in the parsed text; undo the quotes added before it.
        size_t col = e.byte;
        size_t shift = 0;
        for (size_t pos : inserted)
            if (pos + shift < col)
                ++shift;
        col -= std::min(col - 1, shift);
        std::string msg = e.what();
        const auto cut = msg.find("parse error");
        if (cut != std::string::npos)
            msg = msg.substr(cut);
        throw InputError::atText(at.file, at.line, int64_t(std::max<size_t>(col, 1)), "broken JSON: " + msg);
    } catch (const json::exception& e) {
        // Valid syntax the reader cannot hold, e.g. a number beyond double's range
        // ("1e999"); found by fuzz_import.
        throw InputError::atText(at.file, at.line, 1, std::string("unreadable JSON: ") + e.what());
    }
}

// A log-prob: number, "NaN"/"Infinity"/"-Infinity", null or -9999.0 (missing).
double logprobOf(const json& v, const LineContext& at, const char* what, size_t& missing) {
    if (v.is_null()) {
        ++missing;
        return missingDouble();
    }
    if (v.is_number()) {
        const double d = v.get<double>();
        if (d == kVllmPlaceholder) {
            ++missing;
            return missingDouble();
        }
        return d;
    }
    if (v.is_string())
        if (const auto named = nonFiniteNamed(v.get_ref<const std::string&>()))
            return *named;
    at.fail(std::string(what) + ": expected a number or null, got " + v.dump());
}

const json& member(const json& o, const char* key, const LineContext& at, const char* where) {
    if (!o.is_object() || !o.contains(key))
        at.fail(std::string(where) + ": no \"" + key + "\"");
    return o[key];
}

std::string textOf(const json& v, const LineContext& at, const char* what) {
    if (!v.is_string())
        at.fail(std::string(what) + ": expected a string, got " + v.dump());
    return v.get<std::string>();
}

// A token string; vLLM's "token_id:123" (return_tokens_as_token_ids) is an id, not text.
ImportedToken textToken(std::string s) {
    if (s.rfind("token_id:", 0) == 0 && s.size() > 9 && s.size() < 19 &&
        s.find_first_not_of("0123456789", 9) == std::string::npos)
        return {std::string(), std::stoll(s.substr(9)), false};
    return {std::move(s), -1, true};
}

// Keeps an alternative unless its log-prob is missing (counted).
void addAlternative(std::vector<ImportedAlternative>& row, ImportedToken t, double lp, size_t& missingTop) {
    if (isMissing(lp)) {
        ++missingTop;
        return;
    }
    row.push_back({std::move(t), lp});
}

void readChat(const json& lp, ImportedRecord& r, ImportedSide& side, const LineContext& at) {
    const json& content = lp["content"];
    if (content.is_null())
        return;
    if (!content.is_array())
        at.fail("choices[0].logprobs.content: expected an array");
    bool anyTop = false;
    for (const json& e : content) {
        r.tokens.push_back(textToken(textOf(member(e, "token", at, "logprobs.content[]"), at, "token")));
        r.logp.push_back(logprobOf(member(e, "logprob", at, "logprobs.content[]"), at, "logprob", side.missing));
        r.top.emplace_back();
        if (e.contains("top_logprobs") && e["top_logprobs"].is_array()) {
            anyTop = anyTop || !e["top_logprobs"].empty();
            size_t counted = 0;   // addAlternative counts missing alternatives
            for (const json& a : e["top_logprobs"])
                addAlternative(r.top.back(), textToken(textOf(member(a, "token", at, "top_logprobs[]"), at, "token")),
                               logprobOf(member(a, "logprob", at, "top_logprobs[]"), at, "top logprob", counted),
                               side.missingTop);
        }
    }
    if (!anyTop)
        r.top.clear();
}

void readCompletions(const json& lp, ImportedRecord& r, ImportedSide& side, const LineContext& at) {
    const json& toks = member(lp, "tokens", at, "choices[0].logprobs");
    const json& lps = member(lp, "token_logprobs", at, "choices[0].logprobs");
    if (!toks.is_array() || !lps.is_array() || toks.size() != lps.size())
        at.fail("choices[0].logprobs: tokens and token_logprobs must be arrays of equal length");
    for (size_t j = 0; j < toks.size(); ++j) {
        r.tokens.push_back(textToken(textOf(toks[j], at, "tokens[]")));
        r.logp.push_back(logprobOf(lps[j], at, "token_logprobs[]", side.missing));
    }
    if (lp.contains("top_logprobs") && lp["top_logprobs"].is_array()) {
        const json& top = lp["top_logprobs"];
        if (top.size() != toks.size())
            at.fail("choices[0].logprobs.top_logprobs has " + std::to_string(top.size()) + " rows for " +
                    std::to_string(toks.size()) + " tokens");
        for (const json& row : top) {
            r.top.emplace_back();
            if (row.is_null())
                continue;
            if (!row.is_object())
                at.fail("top_logprobs[]: expected an object {token: logprob} or null");
            size_t counted = 0;   // addAlternative counts missing alternatives
            for (const auto& [tok, v] : row.items())
                addAlternative(r.top.back(), textToken(tok), logprobOf(v, at, "top logprob", counted),
                               side.missingTop);
        }
    }
}

// SGLang: [logprob, token_id, text-or-null].
ImportedAlternative sglangTriple(const json& t, ImportedSide& side, const LineContext& at, bool top) {
    size_t counted = 0;   // addAlternative counts missing alternatives
    if (!t.is_array() || t.size() < 2 || !t[1].is_number_integer())
        at.fail("SGLang log-prob entry: expected [logprob, token_id, text], got " + t.dump());
    ImportedAlternative a;
    a.logp = logprobOf(t[0], at, "SGLang logprob", top ? counted : side.missing);
    a.token.id = t[1].get<int64_t>();
    if (t.size() > 2 && t[2].is_string()) {
        a.token.text = t[2].get<std::string>();
        a.token.hasText = true;
    }
    return a;
}

void readSglang(const json& meta, ImportedRecord& r, ImportedSide& side, const LineContext& at) {
    const json& out = member(meta, "output_token_logprobs", at, "meta_info");
    if (!out.is_array())
        at.fail("meta_info.output_token_logprobs: expected an array (request with return_logprob=true)");
    for (const json& t : out) {
        ImportedAlternative a = sglangTriple(t, side, at, false);
        r.tokens.push_back(std::move(a.token));
        r.logp.push_back(a.logp);
    }
    if (meta.contains("output_top_logprobs") && meta["output_top_logprobs"].is_array()) {
        const json& top = meta["output_top_logprobs"];
        if (top.size() != out.size())
            at.fail("meta_info.output_top_logprobs has " + std::to_string(top.size()) + " rows for " +
                    std::to_string(out.size()) + " tokens");
        for (const json& row : top) {
            r.top.emplace_back();
            if (row.is_null())
                continue;
            for (const json& t : row) {
                ImportedAlternative a = sglangTriple(t, side, at, true);
                addAlternative(r.top.back(), std::move(a.token), a.logp, side.missingTop);
            }
        }
    }
}

void readPlain(const json& o, const char* key, ImportedRecord& r, ImportedSide& side, const LineContext& at) {
    const json& lps = o[key];
    if (!lps.is_array())
        at.fail(std::string("\"") + key + "\": expected an array");
    for (const json& v : lps)
        r.logp.push_back(logprobOf(v, at, key, side.missing));
    if (o.contains("tokens")) {
        const json& toks = o["tokens"];
        if (!toks.is_array() || toks.size() != lps.size())
            at.fail(std::string("\"tokens\" must be an array as long as \"") + key + "\"");
        for (const json& t : toks) {
            if (t.is_number_integer())
                r.tokens.push_back({std::string(), t.get<int64_t>(), false});
            else
                r.tokens.push_back(textToken(textOf(t, at, "tokens[]")));
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

void noteFormat(ImportedSide& side, const char* f) {
    for (const auto& s : side.formats)
        if (s == f)
            return;
    side.formats.push_back(f);
}

ImportedRecord parseRecord(const json& line, ImportedSide& side, const LineContext& at) {
    if (!line.is_object())
        at.fail("expected a JSON object");
    const json* body = &line;
    if (line.contains("response") && line["response"].is_object() && line["response"].contains("body"))
        body = &line["response"]["body"];   // OpenAI batch output
    ImportedRecord r;
    r.line = at.line;
    for (const char* key : {"kcx_id", "custom_id", "id"})
        if (line.contains(key) && !line[key].is_null()) {
            r.id = line[key].is_string() ? line[key].get<std::string>() : line[key].dump();
            break;
        }
    if (body->contains("choices")) {
        const json& ch = (*body)["choices"];
        if (!ch.is_array() || ch.empty())
            at.fail("\"choices\" is empty");
        const json& lp = member(ch[0], "logprobs", at, "choices[0]");
        if (lp.is_null())
            at.fail("choices[0].logprobs is null (request with logprobs enabled)");
        if (lp.contains("content")) {
            noteFormat(side, "openai-chat");
            readChat(lp, r, side, at);
        } else {
            noteFormat(side, "openai-completions");
            readCompletions(lp, r, side, at);
        }
    } else if (line.contains("meta_info")) {
        noteFormat(side, "sglang");
        const json& meta = line["meta_info"];
        if (r.id.empty() && meta.contains("id") && meta["id"].is_string())
            r.id = meta["id"].get<std::string>();
        readSglang(meta, r, side, at);
    } else {
        const char* key = nullptr;
        for (const char* k : {"logp_train", "logp_inf", "logp"})
            if (line.contains(k)) {
                key = k;
                break;
            }
        if (!key)
            at.fail("unknown record shape: expected \"choices\" (OpenAI), \"meta_info\" (SGLang) or "
                    "\"logp_train\"/\"logp_inf\"/\"logp\" arrays");
        noteFormat(side, "plain");
        readPlain(line, key, r, side, at);
    }
    if (r.id.empty())
        at.fail("record has no id (add \"kcx_id\" or \"id\")");
    if (line.contains("metadata") && line["metadata"].is_object())
        for (const auto& [k, v] : line["metadata"].items())
            if (!v.is_null())
                r.labels.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    return r;
}

}  // namespace

ImportedSide parseLogprobJsonl(std::string_view text, const std::string& name) {
    ImportedSide side;
    side.path = name;
    std::unordered_map<std::string, int64_t> seen;
    int64_t lineNo = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos)
            continue;
        const LineContext at{name, lineNo};
        ImportedRecord r = parseRecord(parseLine(line, at), side, at);
        const auto [it, fresh] = seen.emplace(r.id, lineNo);
        if (!fresh)
            at.fail("duplicate id '" + r.id + "' (first at line " + std::to_string(it->second) + ")");
        side.records.push_back(std::move(r));
    }
    return side;
}

ImportedSide readLogprobFile(const std::string& path) {
    const std::string bytes = readPlainOrGzip(path);
    return parseLogprobJsonl(bytes, path);
}

}  // namespace kcx
