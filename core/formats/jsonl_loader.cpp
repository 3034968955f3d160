// SPEC 1.1: JSON Lines runs. The text is split at line boundaries into chunks parsed in
// parallel straight into flat arrays; the chunks are then joined in order.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "core/base/errors.h"
#include "core/base/parallel.h"
#include "core/formats/json_scan.h"
#include "core/formats/jsonl_parts.h"
#include "core/formats/loader.h"

namespace kcx {
namespace {

using detail::ChunkRun;

struct TopkRows {
    std::vector<std::vector<int64_t>> ids;
    std::vector<std::vector<double>> logp;
};

void readTopk(JsonScanner& j, TopkRows& t, const char* field) {
    t.ids.clear();
    t.logp.clear();
    bool sawIds = false, sawLogp = false;
    j.object(field, [&](const std::string& key, size_t at) {
        if (key == "ids") {
            sawIds = true;
            j.array(field, [&] {
                t.ids.emplace_back();
                j.array(field, [&] { t.ids.back().push_back(j.integer("top-k id")); });
            });
        } else if (key == "logp") {
            sawLogp = true;
            j.array(field, [&] {
                t.logp.emplace_back();
                j.array(field, [&] { t.logp.back().push_back(j.numberOrMarker("top-k logp")); });
            });
        } else {
            j.failAt(at, std::string(field) + ": unknown key '" + key + "' (expected ids and logp)");
        }
    });
    if (!sawIds || !sawLogp)
        j.fail(std::string(field) + " needs both \"ids\" and \"logp\"");
}

// Sorts a row most likely first when it is not (SPEC 1.1); rows with gaps stay as written.
void sortRow(int32_t* ids, double* lp, size_t k) {
    bool sorted = true, finite = true;
    for (size_t i = 0; i < k; ++i) {
        finite = finite && std::isfinite(lp[i]);
        if (i && lp[i] > lp[i - 1])
            sorted = false;
    }
    if (sorted || !finite)
        return;
    std::vector<std::pair<double, int32_t>> row(k);
    for (size_t i = 0; i < k; ++i)
        row[i] = {lp[i], ids[i]};
    std::stable_sort(row.begin(), row.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < k; ++i) {
        lp[i] = row[i].first;
        ids[i] = row[i].second;
    }
}

// Parses one sequence line [begin, end) into the chunk.
void parseSequence(JsonScanner& j, ChunkRun& c, size_t lineBegin) {
    std::string id;
    bool haveId = false, haveTokens = false, haveTrain = false, haveInf = false;
    std::vector<int64_t> tokens;
    std::vector<double> lpTrain, lpInf;
    std::vector<std::string> text;
    bool haveText = false;
    TopkRows topk[2];
    bool haveTopk[2] = {false, false};
    std::vector<std::vector<double>> logits[2];
    std::vector<bool> logitNull[2];
    bool haveLogits[2] = {false, false};
    double reward[2] = {missingDouble(), missingDouble()};
    std::vector<std::pair<std::string, std::string>> slices;
    nlohmann::json runtime;
    std::optional<int64_t> step;
    size_t stepAt = 0;
    std::string tmp;
    size_t keyAt[16] = {};

    j.object("a sequence object", [&](const std::string& key, size_t at) {
        if (key == "id") {
            if (j.peek() != '"')
                j.fail("\"id\" must be a string");
            j.string(id);
            haveId = true;
        } else if (key == "tokens") {
            haveTokens = true;
            keyAt[0] = at;
            j.array("tokens", [&] {
                const int64_t t = j.integer("tokens");
                tokens.push_back(t);
            });
        } else if (key == "logp_train" || key == "logp_inf") {
            auto& v = key == "logp_train" ? lpTrain : lpInf;
            (key == "logp_train" ? haveTrain : haveInf) = true;
            keyAt[key == "logp_train" ? 1 : 2] = at;
            j.array(key.c_str(), [&] { v.push_back(j.numberOrMarker(key.c_str())); });
        } else if (key == "text") {
            haveText = true;
            keyAt[3] = at;
            j.array("text", [&] {
                j.string(tmp);
                text.push_back(tmp);
            });
        } else if (key == "topk_train" || key == "topk_inf") {
            const int w = key == "topk_inf";
            haveTopk[w] = true;
            keyAt[4 + w] = at;
            readTopk(j, topk[w], key.c_str());
        } else if (key == "logits_train" || key == "logits_inf") {
            const int w = key == "logits_inf";
            haveLogits[w] = true;
            keyAt[6 + w] = at;
            j.array(key.c_str(), [&] {
                logits[w].emplace_back();
                logitNull[w].push_back(j.literal("null"));   // a row that was not logged
                if (!logitNull[w].back())
                    j.array(key.c_str(), [&] { logits[w].back().push_back(j.numberOrMarker(key.c_str())); });
            });
        } else if (key == "reward_train" || key == "reward_inf") {
            reward[key == "reward_inf"] = j.numberOrMarker(key.c_str());
        } else if (key == "slices") {
            j.object("slices", [&](const std::string& k, size_t) {
                const char p = j.peek();
                if (p == '"') {
                    j.string(tmp);
                } else if (p == 'n' && j.literal("null")) {
                    return;   // unlabeled
                } else {
                    const auto [b, e] = j.skipValue();
                    if (j.text()[b] == '{' || j.text()[b] == '[')
                        j.failAt(b, "slice '" + k + "' must be a string");
                    tmp = std::string(j.text().substr(b, e - b));   // numbers and booleans as written
                }
                slices.emplace_back(k, tmp);
            });
        } else if (key == "step") {
            stepAt = at;
            step = j.integer("step");
            if (*step < 0)
                j.failAt(at, "\"step\" must be an integer >= 0 (SPEC 7), found " + std::to_string(*step));
        } else if (key == "runtime") {
            if (j.peek() != '{')
                j.fail("\"runtime\" must be an object");
            const auto [b, e] = j.skipValue();
            runtime = nlohmann::json::parse(j.text().substr(b, e - b));
        } else {
            j.skipValue();   // unknown keys are allowed in run files: writers add their own
        }
    });
    if (!j.atEnd())
        j.fail("unexpected text after the sequence object");

    const std::string who = haveId ? "sequence '" + id + "': " : "";
    if (!haveId)
        j.failAt(lineBegin, "missing required key \"id\"");
    if (!haveTokens)
        j.failAt(lineBegin, who + "missing required key \"tokens\"");
    if (!haveTrain)
        j.failAt(lineBegin, who + "missing required key \"logp_train\"");
    if (!haveInf)
        j.failAt(lineBegin, who + "missing required key \"logp_inf\"");
    const size_t T = tokens.size();
    if (T == 0)
        j.failAt(keyAt[0], who + "\"tokens\" is empty (a sequence needs T >= 1 tokens)");
    for (int64_t t : tokens)
        if (t < INT32_MIN || t > INT32_MAX)
            j.failAt(keyAt[0], who + "token id " + std::to_string(t) + " does not fit 32 bits");
    auto sameLength = [&](size_t n, const char* name, size_t at) {
        if (n != T)
            j.failAt(at, who + name + " has " + std::to_string(n) + " values but tokens has " + std::to_string(T));
    };
    sameLength(lpTrain.size(), "logp_train", keyAt[1]);
    sameLength(lpInf.size(), "logp_inf", keyAt[2]);
    if (haveText)
        sameLength(text.size(), "text", keyAt[3]);
    // The step is the slice "step" (run.h); a label of that name must agree with it.
    if (step) {
        const std::string label = std::to_string(*step);
        const auto it = std::find_if(slices.begin(), slices.end(), [](const auto& kv) { return kv.first == kStepKey; });
        if (it == slices.end())
            slices.emplace_back(kStepKey, label);
        else if (it->second != label)
            j.failAt(stepAt, who + "\"step\" is " + label + " but slices.step is '" + it->second + "'");
    }

    // Top-k: T rows of the same k, ids and logp of the same shape.
    const char* topkName[2] = {"topk_train", "topk_inf"};
    for (int w = 0; w < 2; ++w) {
        if (!haveTopk[w])
            continue;
        const auto& t = topk[w];
        const std::string name = topkName[w];
        sameLength(t.ids.size(), (name + ".ids").c_str(), keyAt[4 + w]);
        sameLength(t.logp.size(), (name + ".logp").c_str(), keyAt[4 + w]);
        const size_t k = t.ids[0].size();
        if (k == 0)
            j.failAt(keyAt[4 + w], who + name + " rows are empty (k must be >= 1)");
        for (size_t r = 0; r < T; ++r)
            if (t.ids[r].size() != k || t.logp[r].size() != k)
                j.failAt(keyAt[4 + w], who + name + " row " + std::to_string(r) + " has " +
                                           std::to_string(t.ids[r].size()) + " ids and " +
                                           std::to_string(t.logp[r].size()) + " log-probs; row 0 has k = " +
                                           std::to_string(k) + " (every row needs the same k)");
        if (c.topkK[w] == 0)
            c.topkK[w] = int(k), c.topkFirstAt[w] = keyAt[4 + w];
        else if (size_t(c.topkK[w]) != k)
            j.failAt(keyAt[4 + w], who + name + " has k = " + std::to_string(k) +
                                       " but an earlier sequence has k = " + std::to_string(c.topkK[w]));
    }
    // Full logits: T rows of V, both kernels alike.
    int64_t V = 0;
    for (int w = 0; w < 2; ++w) {
        if (!haveLogits[w])
            continue;
        const char* name = w ? "logits_inf" : "logits_train";
        sameLength(logits[w].size(), name, keyAt[6 + w]);
        for (size_t r = 0; r < T; ++r) {
            if (logitNull[w][r])
                continue;
            if (V == 0)
                V = int64_t(logits[w][r].size());
            if (int64_t(logits[w][r].size()) != V || V == 0)
                j.failAt(keyAt[6 + w], who + name + " row " + std::to_string(r) + " has " +
                                           std::to_string(logits[w][r].size()) + " entries, expected V = " +
                                           std::to_string(V));
        }
    }
    // Every full-logit metric needs both rows (SPEC 2.3): logits of one kernel alone are
    // checked, then left out, as are positions where either row is null.
    if (haveLogits[0] != haveLogits[1])
        V = 0;
    if (V) {
        if (c.vocab == 0)
            c.vocab = V;
        else if (c.vocab != V)
            j.failAt(keyAt[6], who + "logits have V = " + std::to_string(V) + " but an earlier sequence has V = " +
                                   std::to_string(c.vocab));
    }

    // Everything checked: append.
    const size_t base = c.tokens.size();
    c.ids.push_back(std::move(id));
    c.lineStarts.push_back(lineBegin);
    c.lengths.push_back(int64_t(T));
    for (size_t i = 0; i < T; ++i)
        c.tokens.push_back(int32_t(tokens[i]));
    c.lpTrain.insert(c.lpTrain.end(), lpTrain.begin(), lpTrain.end());
    c.lpInf.insert(c.lpInf.end(), lpInf.begin(), lpInf.end());
    c.hasText.push_back(haveText);
    for (size_t i = 0; i < T; ++i) {
        if (haveText)
            c.textPool += text[i];
        c.textEnds.push_back(c.textPool.size());
    }
    for (int w = 0; w < 2; ++w) {
        c.hasTopk[w].push_back(haveTopk[w]);
        if (!haveTopk[w])
            continue;
        const size_t k = size_t(c.topkK[w]);
        for (size_t r = 0; r < T; ++r) {
            const size_t at = c.topkIds[w].size();
            for (size_t q = 0; q < k; ++q) {
                const int64_t tid = topk[w].ids[r][q];
                if (tid < INT32_MIN || tid > INT32_MAX)
                    j.failAt(keyAt[4 + w], who + "top-k id does not fit 32 bits");
                c.topkIds[w].push_back(int32_t(tid));
                c.topkLogp[w].push_back(topk[w].logp[r][q]);
            }
            sortRow(c.topkIds[w].data() + at, c.topkLogp[w].data() + at, k);
        }
    }
    if (V)
        for (size_t r = 0; r < T; ++r) {
            if (logitNull[0][r] || logitNull[1][r])
                continue;
            c.logitRows.push_back(int64_t(base + r));
            c.logitsTrain.insert(c.logitsTrain.end(), logits[0][r].begin(), logits[0][r].end());
            c.logitsInf.insert(c.logitsInf.end(), logits[1][r].begin(), logits[1][r].end());
        }
    c.rewardTrain.push_back(reward[0]);
    c.rewardInf.push_back(reward[1]);
    c.haveReward[0] = c.haveReward[0] || !isMissing(reward[0]);
    c.haveReward[1] = c.haveReward[1] || !isMissing(reward[1]);
    c.slices.push_back(std::move(slices));
    c.runtime.push_back(std::move(runtime));
}

// Parses the lines in [begin, end), which start at a line boundary.
void parseChunk(std::string_view text, size_t begin, size_t end, bool first, ChunkRun& c, size_t maxLine) {
    size_t p = begin;
    while (p < end) {
        const char* nl = static_cast<const char*>(std::memchr(text.data() + p, '\n', end - p));
        const size_t lineEnd = nl ? size_t(nl - text.data()) : end;
        if (lineEnd - p > maxLine)
            throw ScanError{p, "line is longer than the limit of " + std::to_string(maxLine) + " bytes (KCX_MAX_LINE sets it)"};
        JsonScanner j(text, p, lineEnd);
        if (p == 0 && text.starts_with("\xEF\xBB\xBF"))
            j.failAt(0, "the file starts with a UTF-8 byte-order mark; save it without one (JSON Lines text has none)");
        if (!j.atEnd()) {
            if (j.peek() != '{')
                j.fail("expected a JSON object ('{') at the start of the line");
            // The header may only be the first object of the file.
            const bool header = first && c.ids.empty() && !c.sawHeader &&
                                text.substr(j.pos(), std::min<size_t>(64, lineEnd - j.pos())).find("\"kcx_header\"") !=
                                    std::string_view::npos;
            if (header) {
                j.object("the header line", [&](const std::string& key, size_t at) {
                    if (key != "kcx_header")
                        j.failAt(at, "the header line may only hold \"kcx_header\", found \"" + key + "\"");
                    if (j.peek() != '{')
                        j.fail("\"kcx_header\" must be an object");
                    const auto [b, e] = j.skipValue();
                    c.header = nlohmann::json::parse(text.substr(b, e - b));
                });
                if (!j.atEnd())
                    j.fail("unexpected text after the header object");
                c.sawHeader = true;
            } else {
                parseSequence(j, c, p);
            }
        }
        p = lineEnd + 1;
    }
}

}  // namespace

Run parseJsonl(std::string_view text, const std::string& name, const Progress& progress,
               const LoadOptions& options) {
    // Split at newlines into chunks of about 4 MB, parsed in parallel.
    std::vector<size_t> cuts{0};
    const size_t target = size_t(4) << 20;
    while (cuts.back() < text.size()) {
        size_t c = std::min(text.size(), cuts.back() + target);
        if (c < text.size()) {
            const void* nl = std::memchr(text.data() + c, '\n', text.size() - c);
            c = nl ? size_t(static_cast<const char*>(nl) - text.data()) + 1 : text.size();
        }
        cuts.push_back(c);
    }
    if (cuts.size() == 1)
        cuts.push_back(0);   // empty text: one empty chunk (fuzz_jsonl read past cuts here)
    const size_t chunks = cuts.size() - 1;
    std::vector<ChunkRun> parts(std::max<size_t>(chunks, 1));
    std::vector<std::optional<ScanError>> errors(parts.size());
    std::atomic<size_t> done{0};
    std::mutex progressMutex;
    parallelChunks(chunks, chunks, 0, [&](size_t c, size_t, size_t) {
        try {
            parseChunk(text, cuts[c], cuts[c + 1], c == 0, parts[c], options.maxLineBytes);
        } catch (const ScanError& e) {
            errors[c] = e;
        } catch (const nlohmann::json::exception& e) {   // incl. numbers beyond double in "runtime"
            errors[c] = ScanError{cuts[c], e.what()};
        }
        std::lock_guard lock(progressMutex);
        report(progress, 0.9 * double(++done) / double(chunks));
    });
    for (const auto& e : errors)   // the first error in file order
        if (e) {
            int64_t line, col;
            lineColumn(text, e->offset, line, col);
            throw InputError::atText(name, line, col, e->message);
        }
    return detail::joinChunks(parts, text, name);
}

}  // namespace kcx
