// Pairing an inference side with a training side into one run (core/formats/importers.h).
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>

#include "core/base/errors.h"
#include "core/formats/importers.h"

namespace kcx {
namespace {

using nlohmann::json;

struct Pair {
    const ImportedRecord* inf;
    const ImportedRecord* train;
};

const ImportedToken* tokenAt(const ImportedRecord& r, size_t i) {
    return i < r.tokens.size() ? &r.tokens[i] : nullptr;
}

std::string describe(const ImportedToken* t) {
    if (!t)
        return "(no token)";
    std::string s;
    if (t->hasText)
        s = json(t->text).dump(-1, ' ', false, json::error_handler_t::replace);
    if (t->id >= 0)
        s += (s.empty() ? "id " : " (id ") + std::to_string(t->id) + (s.empty() ? "" : ")");
    return s;
}

// 1 same, 0 different, -1 cannot tell.
int sameToken(const ImportedToken* a, const ImportedToken* b) {
    if (!a || !b)
        return -1;
    if (a->id >= 0 && b->id >= 0)
        return a->id == b->id;
    if (a->hasText && b->hasText)
        return a->text == b->text;
    return -1;
}

// Compares one pair position by position; returns whether any position differed.
bool compare(const Pair& p, ImportResult& res) {
    const size_t ni = p.inf->logp.size(), nt = p.train->logp.size();
    bool bad = false;
    for (size_t i = 0; i < std::max(ni, nt); ++i) {
        const ImportedToken* a = tokenAt(*p.inf, i);
        const ImportedToken* b = tokenAt(*p.train, i);
        if (i >= ni || i >= nt) {
            res.mismatches.push_back({p.inf->id, i, i >= ni ? "(end)" : describe(a), i >= nt ? "(end)" : describe(b)});
            bad = true;
            continue;
        }
        const int same = sameToken(a, b);
        if (same < 0)
            ++res.uncheckedPositions;
        else if (same == 0) {
            res.mismatches.push_back({p.inf->id, i, describe(a), describe(b)});
            bad = true;
        }
    }
    return bad;
}

// The token a run position stores: the inf side's, completed from the train side.
ImportedToken merged(const Pair& p, size_t i) {
    ImportedToken t;
    const ImportedToken* a = tokenAt(*p.inf, i);
    const ImportedToken* b = tokenAt(*p.train, i);
    for (const ImportedToken* x : {a, b}) {
        if (!x)
            continue;
        if (t.id < 0)
            t.id = x->id;
        if (!t.hasText && x->hasText) {
            t.text = x->text;
            t.hasText = true;
        }
    }
    return t;
}

// A copy of r's positions [from, to).
const ImportedRecord* slice(const ImportedRecord& r, size_t from, size_t to, std::deque<ImportedRecord>& store) {
    ImportedRecord& s = store.emplace_back();
    s.id = r.id;
    s.line = r.line;
    s.labels = r.labels;
    const auto part = [&](const auto& v) { return v.empty() ? v : std::decay_t<decltype(v)>(v.begin() + from, v.begin() + to); };
    s.tokens = part(r.tokens);
    s.logp = part(r.logp);
    s.top = part(r.top);
    return &s;
}

// Where a scoring record's positions meet the other side's tokens: the suffix when it
// matches, else the last place they all match (no position differs, one at least equal).
size_t responseStart(const ImportedRecord& s, const ImportedRecord& other, const std::string& path) {
    const size_t n = s.logp.size(), m = other.logp.size();
    const auto matchesAt = [&](size_t off) {
        bool equal = false;
        for (size_t i = 0; i < m; ++i) {
            const int same = sameToken(tokenAt(s, off + i), tokenAt(other, i));
            if (same == 0)
                return false;
            equal = equal || same == 1;
        }
        return equal;
    };
    if (m <= n)
        for (size_t off = n - m + 1; off-- > 0;)
            if (matchesAt(off))
                return off;
    throw InputError::atText(path, s.line, 0,
                             "record '" + s.id + "' scores its prompt as well (prompt_logprobs or echo), and the " +
                                 "other side's " + std::to_string(m) + " tokens are not found among its " +
                                 std::to_string(n) + " positions; give the prompt length as \"kcx_prompt_len\" " +
                                 "(in \"metadata\" or at the top level)");
}

// Scoring responses (importers.h, ImportedRecord::withPrompt) keep only the positions the
// other side scored; the rest (the prompt) is left out and counted per side.
void dropPrompts(Pair& p, const std::string& infPath, const std::string& trainPath, ImportResult& res,
                 std::deque<ImportedRecord>& store) {
    const ImportedRecord* sides[2] = {p.inf, p.train};
    size_t* left[2] = {&res.promptInf, &res.promptTrain};
    const std::string* paths[2] = {&infPath, &trainPath};
    bool unknown[2] = {false, false};
    for (int k = 0; k < 2; ++k) {
        const ImportedRecord& r = *sides[k];
        unknown[k] = r.withPrompt && r.promptLength < 0;
        if (r.promptLength < 0)
            continue;
        if (size_t(r.promptLength) > r.logp.size())
            throw InputError::atText(*paths[k], r.line, 0,
                                     "record '" + r.id + "': kcx_prompt_len " + std::to_string(r.promptLength) +
                                         " is more than its " + std::to_string(r.logp.size()) + " positions");
        *left[k] += size_t(r.promptLength);
        sides[k] = slice(r, size_t(r.promptLength), r.logp.size(), store);
    }
    if (unknown[0] && unknown[1])
        throw InputError::atText(infPath, p.inf->line, 0,
                                 "record '" + p.inf->id + "': both sides score the prompt as well (prompt_logprobs or "
                                 "echo); give the prompt length as \"kcx_prompt_len\" on one side at least");
    for (int k = 0; k < 2; ++k)
        if (unknown[k]) {
            const ImportedRecord& r = *sides[k];
            const size_t m = sides[1 - k]->logp.size(), from = responseStart(r, *sides[1 - k], *paths[k]);
            *left[k] += r.logp.size() - m;
            sides[k] = slice(r, from, from + m, store);
        }
    p.inf = sides[0];
    p.train = sides[1];
}

// A log-prob of the run: vLLM's floor -9999.0 (max(lp, -9999.0)) is at or below it, read as
// -infinity and counted as floored; null stays missing and is counted as such.
double runLogprob(double v, size_t& missing, size_t& floored) {
    if (isMissing(v))
        ++missing;
    else if (v == kVllmPlaceholder) {
        ++floored;
        return -std::numeric_limits<double>::infinity();
    }
    return v;
}

class Vocabulary {
public:
    int32_t id(const ImportedToken& t) {
        const std::string key = t.hasText ? t.text : "<id " + std::to_string(t.id) + ">";
        const auto [it, fresh] = index_.emplace(key, int32_t(words_.size()));
        if (fresh)
            words_.push_back(key);
        return it->second;
    }
    const std::vector<std::string>& words() const { return words_; }
private:
    std::unordered_map<std::string, int32_t> index_;
    std::vector<std::string> words_;
};

bool allNativeIds(const std::vector<Pair>& pairs) {
    for (const Pair& p : pairs) {
        for (size_t i = 0; i < p.inf->logp.size(); ++i)
            if (merged(p, i).id < 0)
                return false;
        for (const ImportedRecord* r : {p.inf, p.train})
            for (const auto& row : r->top)
                for (const auto& a : row)
                    if (a.token.id < 0)
                        return false;
    }
    return true;
}

// Builds one side's top-k: rows sorted most likely first, k = the shortest non-empty row
// (longer rows keep their k most likely entries); positions without alternatives are missing.
TopK buildTopk(const std::vector<Pair>& pairs, bool trainSide, const std::function<int32_t(const ImportedToken&)>& idOf,
               size_t m, size_t& trimmed, size_t& missingTop) {
    size_t k = std::numeric_limits<size_t>::max();
    for (const Pair& p : pairs)
        for (const auto& row : (trainSide ? p.train : p.inf)->top)
            if (!row.empty())
                k = std::min(k, row.size());
    TopK t;
    if (k == std::numeric_limits<size_t>::max())
        return t;
    std::vector<int32_t> ids(m * k, -1);
    std::vector<double> lp(m * k, missingDouble());
    size_t at = 0;
    for (const Pair& p : pairs) {
        const ImportedRecord& r = trainSide ? *p.train : *p.inf;
        const size_t n = p.inf->logp.size();
        for (size_t i = 0; i < n; ++i, ++at) {
            if (i >= r.top.size() || r.top[i].empty())
                continue;
            // An entry without a value (null, or at vLLM's floor where it is no number to rank)
            // stays in its row as a missing entry: the row is missing, k is kept.
            std::vector<std::pair<double, int32_t>> row;
            for (const auto& a : r.top[i]) {
                const int32_t id = idOf(a.token);
                if (std::none_of(row.begin(), row.end(), [&](auto& e) { return e.second == id; }))
                    row.emplace_back(a.logp == kVllmPlaceholder ? missingDouble() : a.logp, id);
            }
            std::stable_sort(row.begin(), row.end(), [](auto& x, auto& y) {
                return !isMissing(x.first) && (isMissing(y.first) || x.first > y.first);
            });
            missingTop += size_t(std::count_if(row.begin(), row.begin() + std::ptrdiff_t(std::min(k, row.size())),
                                               [](auto& e) { return isMissing(e.first); }));
            if (row.size() > k)
                ++trimmed;
            for (size_t j = 0; j < std::min(k, row.size()); ++j) {
                ids[at * k + j] = row[j].second;
                lp[at * k + j] = row[j].first;
            }
        }
    }
    t.k = int(k);
    t.ids = Array<int32_t>(std::move(ids));
    t.logp = Column(Array<double>(std::move(lp)));
    return t;
}

void buildSlices(const std::vector<Pair>& pairs, SliceTable& st) {
    std::vector<std::map<std::string, int32_t>> codeOf;
    auto keyIndex = [&](const std::string& k) {
        int i = st.keyIndex(k);
        if (i < 0) {
            st.keys.push_back(k);
            st.values.emplace_back();
            codeOf.emplace_back();
            i = int(st.keys.size()) - 1;
        }
        return size_t(i);
    };
    std::vector<std::vector<std::pair<size_t, int32_t>>> perSeq(pairs.size());
    for (size_t s = 0; s < pairs.size(); ++s)
        for (const ImportedRecord* r : {pairs[s].inf, pairs[s].train})
            for (const auto& [k, v] : r->labels) {
                const size_t ki = keyIndex(k);
                if (std::any_of(perSeq[s].begin(), perSeq[s].end(), [&](auto& e) { return e.first == ki; }))
                    continue;   // the inf side's label wins
                const auto [it, fresh] = codeOf[ki].emplace(v, int32_t(st.values[ki].size()));
                if (fresh)
                    st.values[ki].push_back(v);
                perSeq[s].emplace_back(ki, it->second);
            }
    st.codes.assign(pairs.size() * st.keys.size(), -1);
    for (size_t s = 0; s < pairs.size(); ++s)
        for (const auto& [ki, code] : perSeq[s])
            st.codes[s * st.keys.size() + ki] = code;
}

}  // namespace

ImportResult importPair(const ImportedSide& inf, const ImportedSide& train, const ImportOptions& options) {
    ImportResult res;
    std::unordered_map<std::string, const ImportedRecord*> trainById;
    for (const auto& r : train.records)
        trainById.emplace(r.id, &r);
    std::unordered_map<std::string, bool> infIds;
    std::vector<Pair> pairs;
    for (const auto& r : inf.records) {
        infIds.emplace(r.id, true);
        const auto it = trainById.find(r.id);
        if (it == trainById.end())
            res.onlyInf.push_back(r.id);
        else
            pairs.push_back({&r, it->second});
    }
    for (const auto& r : train.records)
        if (!infIds.count(r.id))
            res.onlyTrain.push_back(r.id);
    res.paired = pairs.size();
    res.skippedInf = inf.skipped;
    res.skippedTrain = train.skipped;
    res.choicesSplit = inf.choicesSplit + train.choicesSplit;
    res.bestOfIgnored = inf.bestOfIgnored + train.bestOfIgnored;
    std::deque<ImportedRecord> sliced;   // scoring records without their prompt
    for (Pair& p : pairs)
        dropPrompts(p, inf.path, train.path, res, sliced);

    std::vector<Pair> kept;
    for (const Pair& p : pairs) {
        if (p.inf->tokens.empty() && p.train->tokens.empty())
            throw InputError::atText(inf.path, p.inf->line, 0,
                                     "record '" + p.inf->id + "': neither side names its tokens "
                                     "(add \"tokens\" to at least one side)");
        if (compare(p, res))
            ++res.mismatchedRecords;
        else
            kept.push_back(p);
    }
    if (res.mismatchedRecords && !options.allowMismatch) {
        res.failed = true;
        return res;
    }
    res.droppedRecords = res.mismatchedRecords;

    Run& run = res.run;
    size_t m = 0;
    std::vector<int64_t> offsets{0};
    for (const Pair& p : kept)
        offsets.push_back(int64_t(m += p.inf->logp.size()));
    const bool native = allNativeIds(kept);
    res.vocabularyIds = !native;
    Vocabulary vocab;
    std::function<int32_t(const ImportedToken&)> idOf = [&](const ImportedToken& t) -> int32_t {
        if (!native)
            return vocab.id(t);
        if (t.id > std::numeric_limits<int32_t>::max())
            throw InputError::inFile(inf.path, "token id " + std::to_string(t.id) + " does not fit in 32 bits");
        return int32_t(t.id);
    };
    std::vector<int32_t> tokens;
    std::vector<double> lpInf, lpTrain;
    tokens.reserve(m);
    bool anyText = false;
    std::vector<ImportedToken> mergedTokens;
    mergedTokens.reserve(m);
    for (const Pair& p : kept)
        for (size_t i = 0; i < p.inf->logp.size(); ++i) {
            mergedTokens.push_back(merged(p, i));
            anyText = anyText || mergedTokens.back().hasText;
            tokens.push_back(idOf(mergedTokens.back()));
            lpInf.push_back(runLogprob(p.inf->logp[i], res.missingInf, res.flooredInf));
            lpTrain.push_back(runLogprob(p.train->logp[i], res.missingTrain, res.flooredTrain));
            if (!native)   // alternatives enter the vocabulary right after their position's token
                for (const ImportedRecord* r : {p.inf, p.train})
                    if (i < r->top.size())
                        for (const auto& a : r->top[i])
                            vocab.id(a.token);
        }
    for (const Pair& p : kept) {
        run.ids.push_back(p.inf->id);
    }
    run.offsets = Array<int64_t>(std::move(offsets));
    run.tokens = Array<int32_t>(std::move(tokens));
    run.lpInf = Column(Array<double>(std::move(lpInf)));
    run.lpTrain = Column(Array<double>(std::move(lpTrain)));
    run.topkInf = buildTopk(kept, false, idOf, m, res.topkRowsTrimmed, res.missingTop);
    run.topkTrain = buildTopk(kept, true, idOf, m, res.topkRowsTrimmed, res.missingTop);
    res.topkInf = run.topkInf.k;
    res.topkTrain = run.topkTrain.k;
    if (anyText) {
        run.textOffsets.reserve(m + 1);
        run.textOffsets.push_back(0);
        for (const auto& t : mergedTokens) {
            run.textPool += t.text;
            run.textOffsets.push_back(run.textPool.size());
        }
    }
    buildSlices(kept, run.slices);
    res.vocabularySize = vocab.words().size();
    json imp = {{"inf", {{"path", inf.path}, {"formats", inf.formats}}},
                {"train", {{"path", train.path}, {"formats", train.formats}}},
                {"token_ids", native ? "native" : "vocabulary"},
                {"missing_inf", res.missingInf},
                {"missing_train", res.missingTrain},
                {"floored_inf", res.flooredInf},
                {"floored_train", res.flooredTrain},
                {"topk_entries_missing", res.missingTop},
                {"prompt_left_out_inf", res.promptInf},
                {"prompt_left_out_train", res.promptTrain},
                {"choices_split", res.choicesSplit},
                {"best_of_ignored", res.bestOfIgnored}};
    json skipped = json::array();
    for (const auto& [side, list] : {std::pair{"inf", &inf.skipped}, std::pair{"train", &train.skipped}})
        for (const SkippedRecord& k : *list)
            skipped.push_back({{"side", side}, {"id", k.id}, {"line", k.line}, {"reason", k.reason}});
    imp["skipped"] = std::move(skipped);
    if (!native)
        imp["vocabulary"] = vocab.words();
    run.header = {{"source", "kcx import"}, {"import", imp}};
    run.checkInvariants();
    return res;
}

}  // namespace kcx
