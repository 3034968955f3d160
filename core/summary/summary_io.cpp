// Summary files (docs/summaries.md): gzip-compressed JSON with keys in a fixed order, so that
// equal summaries are equal files. Reading checks every field and names its place.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/base/errors.h"
#include "core/base/json_depth.h"
#include "core/base/parallel.h"
#include "core/base/safe_write.h"
#include "core/formats/sniff.h"
#include "core/metrics/derived_slices.h"
#include "core/summary/summary.h"
#include "core/summary/summary_binary_reader.h"
#include "core/summary/summary_check.h"

namespace kcx {

namespace {

using ojson = nlohmann::ordered_json;


ojson sumJson(const ExactSum& s) {
    const ExactSum::Canonical c = s.canonical();
    if (!c.sign)
        return 0;
    ojson a = ojson::array({c.sign, c.low});
    for (uint32_t l : c.limbs)
        a.push_back(l);
    return a;
}

ojson storeJson(const Sketch::Store& t) {   // trimmed
    // A run of k > 1 empty buckets is written -k (sketches of data with gaps stay small).
    ojson counts = ojson::array();
    for (size_t i = 0; i < t.counts.size();) {
        size_t k = i;
        while (k < t.counts.size() && t.counts[k] == 0)
            ++k;
        if (k - i >= 2) {
            counts.push_back(-int64_t(k - i));
            i = k;
        } else {
            counts.push_back(t.counts[i]);
            ++i;
        }
    }
    return ojson::array({t.offset, std::move(counts)});
}

ojson sketchJson(const Sketch& s) {
    ojson j = ojson::object();
    j["zero"] = s.zeros();
    j["pos"] = storeJson(s.store(false));
    j["neg"] = storeJson(s.store(true));
    return j;
}

ojson metricJson(const MetricCell& m) {
    ojson j = ojson::object();
    j["count"] = m.count;
    j["missing"] = m.missing;
    j["nonfinite"] = m.nonfinite;
    if (!m.count)
        return j;
    j["sum"] = sumJson(m.sum);
    j["sum_sq"] = sumJson(m.sumSq);
    j["min"] = m.min;
    j["max"] = m.max;
    j["sketch"] = sketchJson(m.sketch);
    j["sequences"] = m.sequences;
    j["seq_sum_sq"] = sumJson(m.seqSumSq);
    j["seq_count_sq"] = sumJson(m.seqCountSq);
    j["seq_sum_count"] = sumJson(m.seqSumCount);
    j["seq_max"] = sketchJson(m.seqMax);
    ojson w = ojson::array();
    for (const WorstEntry& e : m.worst)
        w.push_back(ojson::array({e.value, e.id, e.position, e.step}));
    j["worst"] = std::move(w);
    return j;
}

ojson runJson(const RunSums& r) {
    ojson j = ojson::object();
    j["pairs"] = r.pairs;
    j["ratios"] = r.ratios;
    j["missing"] = r.missing;
    j["nonfinite"] = r.nonfinite;
    j["sequences"] = r.sequences;
    j["sw"] = sumJson(r.sw);
    j["sw2"] = sumJson(r.sw2);
    j["sp"] = sumJson(r.sp);
    j["sq"] = sumJson(r.sq);
    j["sp2"] = sumJson(r.sp2);
    j["sq2"] = sumJson(r.sq2);
    j["spq"] = sumJson(r.spq);
    j["seq_means"] = sumJson(r.seqMeans);
    return j;
}

// ---- reading ------------------------------------------------------------------------------

class SummaryReader {
public:
    explicit SummaryReader(std::string file) : file_(std::move(file)), failer_{file_} {}
    [[noreturn]] void fail(const std::string& place, const std::string& message) const {
        throw InputError(file_, place, message);
    }
    const summary_check::Failer& failer() const { return failer_; }
    const nlohmann::json& field(const nlohmann::json& obj, const std::string& place, const char* key) const {
        auto it = obj.find(key);
        if (it == obj.end())
            fail(place, std::string("\"") + key + "\" is missing");
        return *it;
    }
    uint64_t count(const nlohmann::json& v, const std::string& place) const {
        if (!v.is_number_unsigned())
            fail(place, "expected a whole number >= 0");
        return v.get<uint64_t>();
    }
    int64_t integer(const nlohmann::json& v, const std::string& place) const {
        if (!v.is_number_integer())
            fail(place, "expected a whole number");
        return v.get<int64_t>();
    }
    double finite(const nlohmann::json& v, const std::string& place) const {
        if (!v.is_number())
            fail(place, "expected a number");
        const double d = v.get<double>();
        if (!std::isfinite(d))
            fail(place, "expected a finite number");
        return d;
    }
    std::string text(const nlohmann::json& v, const std::string& place) const {
        if (!v.is_string())
            fail(place, "expected a string");
        return v.get<std::string>();
    }
    ExactSum sum(const nlohmann::json& v, const std::string& place) const {
        if (v.is_number_integer() && v.get<int64_t>() == 0)
            return {};
        if (!v.is_array() || v.size() < 3)
            fail(place, "expected 0 or an exact sum [sign, low, limb, ...]");
        ExactSum::Canonical c;
        c.sign = int(integer(v[0], place + "[0]"));
        c.low = int(std::clamp<int64_t>(integer(v[1], place + "[1]"), -1, 1000));
        for (size_t i = 2; i < v.size(); ++i) {
            const uint64_t l = count(v[i], place + "[" + std::to_string(i) + "]");
            if (l > 0xffffffffu)
                fail(place + "[" + std::to_string(i) + "]", "a limb must be below 2^32");
            c.limbs.push_back(uint32_t(l));
        }
        try {
            return ExactSum::fromCanonical(c);
        } catch (const std::invalid_argument& e) {
            fail(place, e.what());
        }
    }
    void store(const nlohmann::json& v, const std::string& place, Sketch& sk, bool negative) const {
        if (!v.is_array() || v.size() != 2 || !v[1].is_array())
            fail(place, "expected [offset, [counts...]]");
        const int64_t offset = integer(v[0], place + "[0]");
        const auto& counts = v[1];
        using summary_check::kReach;
        summary_check::storeReach(failer_, offset, 0, [&] { return place; });
        if (!counts.empty() && (!counts.front().is_number_unsigned() || counts.front() == 0 ||
                                !counts.back().is_number_unsigned() || counts.back() == 0))
            fail(place, "a store starts and ends with a non-zero count");
        if (counts.empty() && offset != 0)
            fail(place, "an empty store has offset 0");
        // Built at its final size (one allocation): a summary of many steps holds millions of
        // stores, and growing each bucket by bucket left half of them slack.
        Sketch::Store st;
        st.offset = counts.empty() ? 0 : int32_t(offset);
        int64_t index = offset;
        bool lastWasGap = false;
        for (size_t pass = 0; pass < 2; ++pass) {
            index = offset;
            lastWasGap = false;
            for (size_t i = 0; i < counts.size(); ++i) {
                if (counts[i].is_number_integer() && counts[i].get<int64_t>() < 0) {
                    const int64_t gap = -counts[i].get<int64_t>();
                    if (pass == 0 && (gap < 2 || lastWasGap))
                        fail(place + "[1][" + std::to_string(i) + "]",
                             "a run of empty buckets is -k with k >= 2, between counts");
                    index += gap;
                    lastWasGap = true;
                } else {
                    if (pass == 0)
                        (void)count(counts[i], place + "[1][" + std::to_string(i) + "]");
                    else
                        st.counts[size_t(index - offset)] = counts[i].get<uint64_t>();
                    ++index;
                    lastWasGap = false;
                }
                if (pass == 0 && index > kReach + 1)
                    fail(place + "[1][" + std::to_string(i) + "]", "bucket indices outside what a double can reach");
            }
            if (pass == 0)
                st.counts.assign(size_t(index - offset), 0);
        }
        sk.setStore(negative, std::move(st));
    }
    Sketch sketch(const nlohmann::json& v, const std::string& place) const {
        if (!v.is_object())
            fail(place, "expected a sketch object {zero, pos, neg}");
        Sketch s;
        s.addZero(count(field(v, place, "zero"), place + ".zero"));
        store(field(v, place, "pos"), place + ".pos", s, false);
        store(field(v, place, "neg"), place + ".neg", s, true);
        return s;
    }
    MetricCell metric(const nlohmann::json& v, const std::string& place, bool tokenLevel) const {
        if (!v.is_object())
            fail(place, "expected an object");
        MetricCell m;
        m.count = count(field(v, place, "count"), place + ".count");
        m.missing = count(field(v, place, "missing"), place + ".missing");
        m.nonfinite = count(field(v, place, "nonfinite"), place + ".nonfinite");
        if (!m.count) {
            if (v.size() != 3)
                fail(place, "a metric with no value has only count, missing and nonfinite");
            return m;
        }
        m.sum = sum(field(v, place, "sum"), place + ".sum");
        m.sumSq = sum(field(v, place, "sum_sq"), place + ".sum_sq");
        m.min = finite(field(v, place, "min"), place + ".min");
        m.max = finite(field(v, place, "max"), place + ".max");
        m.sketch = sketch(field(v, place, "sketch"), place + ".sketch");
        m.sequences = count(field(v, place, "sequences"), place + ".sequences");
        m.seqSumSq = sum(field(v, place, "seq_sum_sq"), place + ".seq_sum_sq");
        m.seqCountSq = sum(field(v, place, "seq_count_sq"), place + ".seq_count_sq");
        m.seqSumCount = sum(field(v, place, "seq_sum_count"), place + ".seq_sum_count");
        m.seqMax = sketch(field(v, place, "seq_max"), place + ".seq_max");
        const auto& w = field(v, place, "worst");
        if (!w.is_array() || w.size() > kWorstKept)
            fail(place + ".worst", "expected 1 to " + std::to_string(kWorstKept) + " entries, at most count");
        for (size_t i = 0; i < w.size(); ++i) {
            const std::string p = place + ".worst[" + std::to_string(i) + "]";
            if (!w[i].is_array() || w[i].size() != 4)
                fail(p, "expected [value, id, position, step]");
            m.worst.push_back({finite(w[i][0], p + "[0]"), text(w[i][1], p + "[1]"), integer(w[i][2], p + "[2]"),
                               integer(w[i][3], p + "[3]")});
        }
        summary_check::metric(failer_, m, tokenLevel, [&] { return place; });
        return m;
    }
    RunSums run(const nlohmann::json& v, const std::string& place) const {
        if (!v.is_object())
            fail(place, "expected an object");
        RunSums r;
        r.pairs = count(field(v, place, "pairs"), place + ".pairs");
        r.ratios = count(field(v, place, "ratios"), place + ".ratios");
        r.missing = count(field(v, place, "missing"), place + ".missing");
        r.nonfinite = count(field(v, place, "nonfinite"), place + ".nonfinite");
        r.sequences = count(field(v, place, "sequences"), place + ".sequences");
        summary_check::run(failer_, r, [&] { return place; });
        r.sw = sum(field(v, place, "sw"), place + ".sw");
        r.sw2 = sum(field(v, place, "sw2"), place + ".sw2");
        r.sp = sum(field(v, place, "sp"), place + ".sp");
        r.sq = sum(field(v, place, "sq"), place + ".sq");
        r.sp2 = sum(field(v, place, "sp2"), place + ".sp2");
        r.sq2 = sum(field(v, place, "sq2"), place + ".sq2");
        r.spq = sum(field(v, place, "spq"), place + ".spq");
        r.seqMeans = sum(field(v, place, "seq_means"), place + ".seq_means");
        return r;
    }

private:
    std::string file_;
    summary_check::Failer failer_;
};

// Level 1: a summary of 1,000 steps (82 MB of binary) compresses to 27 MB in 1.3 s, against
// 22 MB in 4.5 s at zlib's default level 6; kcx summarize and kcx merge write one each time.
// The text gzip-compressed, a new member beginning at each of `cuts` (ascending offsets).
std::string gzipBytes(const std::string& text, int level, const std::vector<size_t>& cuts = {}) {
    std::string out;
    size_t from = 0;
    for (size_t cut : cuts) {
        writeGzipMember(std::string_view(text).substr(from, cut - from), level, out);
        from = cut;
    }
    writeGzipMember(std::string_view(text).substr(from), level, out);
    return out;
}

}  // namespace

std::string summaryJsonText(const RunSummary& s) {
    ojson j = ojson::object();
    j["kcx_summary"] = kSummaryVersion;
    j["relative_accuracy"] = kRelativeAccuracy;
    j["worst_kept"] = kWorstKept;
    j["ppo_clip"] = s.ppoClip;
    j["data"] = {{"topk", s.hasTopK}, {"logits", s.hasLogits}, {"rewards", s.hasRewards}};
    ojson inputs = ojson::array();
    for (const SummaryInput& i : s.inputs)
        inputs.push_back({{"path", i.path}, {"sha256", i.sha256}, {"sequences", i.sequences}, {"tokens", i.tokens}});
    j["inputs"] = std::move(inputs);
    j["sequences"] = s.sequences();
    j["tokens"] = s.tokens();
    ojson cells = ojson::array();
    for (const auto& [key, cell] : s.cells) {
        ojson c = ojson::object();
        c["step"] = key.step < 0 ? ojson(nullptr) : ojson(key.step);
        c["key"] = key.key.empty() ? ojson(nullptr) : ojson(key.key);
        c["value"] = key.key.empty() ? ojson(nullptr) : ojson(key.value);
        c["pos"] = key.pos < 0 ? ojson(nullptr) : ojson(positionBucketNames()[size_t(key.pos)]);
        c["sequences"] = cell.sequences;
        c["tokens"] = cell.tokens;
        c["run"] = runJson(cell.run);
        ojson metrics = ojson::object();
        MetricCell implied;
        for (const MetricInfo& info : metricCatalog())   // catalogue order
            if (const MetricCell* m = s.metric(cell, info.name, implied))
                metrics[info.name] = metricJson(*m);
        c["metrics"] = std::move(metrics);
        cells.push_back(std::move(c));
    }
    j["cells"] = std::move(cells);
    return j.dump() + "\n";
}

void writeSummary(const RunSummary& s, const std::string& path) {
    // A member for every 8 MiB of cells or so: a reader learns where cells begin there
    // without walking them, and reads the pieces on several threads (parseSummaryBinary).
    std::vector<size_t> cuts;
    const std::string bytes = summary_binary::bytesWithCuts(s, &cuts);
    writeFileAtomically(path, gzipBytes(bytes, 1, cuts));
}

void writeSummaryJson(const RunSummary& s, const std::string& path) {
    writeFileAtomically(path, gzipBytes(summaryJsonText(s), 6));
}

namespace {

// One cell of "cells", checked and added to the summary.
void readCell(const SummaryReader& r, const nlohmann::json& c, const std::string& p, RunSummary& s) {
    const auto& pos = positionBucketNames();
    if (!c.is_object())
        r.fail(p, "expected an object");
    CellKey key;
    const auto& step = r.field(c, p, "step");
    if (!step.is_null()) {
        key.step = r.integer(step, p + ".step");
        if (key.step < 0)
            r.fail(p + ".step", "a step is a whole number >= 0 (null: no step)");
    }
    const auto& k = r.field(c, p, "key");
    const auto& v = r.field(c, p, "value");
    if (k.is_null() != v.is_null())
        r.fail(p, "key and value are both null (all sequences) or both strings");
    if (!k.is_null()) {
        key.key = r.text(k, p + ".key");
        key.value = r.text(v, p + ".value");
        if (key.key.empty() || key.key == "derived.pos_bucket")
            r.fail(p + ".key", "not a slice key a summary keeps");
    }
    const auto& ps = r.field(c, p, "pos");
    if (!ps.is_null()) {
        const std::string name = r.text(ps, p + ".pos");
        auto it = std::find(pos.begin(), pos.end(), name);
        if (it == pos.end())
            r.fail(p + ".pos", "not a position bucket of derived.pos_bucket");
        key.pos = int(it - pos.begin());
    }
    if (s.cells.count(key))
        r.fail(p, "a second cell for the same step, slice and position");
    CellData d;
    d.sequences = r.count(r.field(c, p, "sequences"), p + ".sequences");
    d.tokens = r.count(r.field(c, p, "tokens"), p + ".tokens");
    d.run = r.run(r.field(c, p, "run"), p + ".run");
    summary_check::cellCounts(r.failer(), d, [&] { return p; });
    const auto& ms = r.field(c, p, "metrics");
    if (!ms.is_object())
        r.fail(p + ".metrics", "expected an object");
    for (auto it = ms.begin(); it != ms.end(); ++it) {
        const MetricInfo* info = findMetric(it.key());
        const std::string mp = p + ".metrics." + it.key();
        if (!info || info->level == MetricLevel::Run)
            r.fail(mp, "not a token or sequence metric of SPEC 2");
        MetricCell m = r.metric(it.value(), mp, info->level == MetricLevel::Token);
        summary_check::metricCounts(r.failer(), d, *info, m, [&] { return mp; });
        if (s.lacks(*info)) {   // implied (RunSummary::metric): checked, not kept
            summary_check::lacking(r.failer(), d, *info, m, [&] { return mp; });
            continue;
        }
        d.metrics.emplace(it.key(), std::move(m));
    }
    s.cells.emplace(std::move(key), std::move(d));
}

}  // namespace

RunSummary parseSummary(const std::string& text, const std::string& file) {
    if (std::string_view(text).starts_with(kSummaryBinaryMagic))
        return parseSummaryBinary(std::make_shared<const std::string>(text), file);
    SummaryReader r(file);
    if (size_t at = jsonDepthExceeded(text); at != std::string::npos)
        throw InputError::atByte(file, at, jsonDepthMessage());
    // The cells are read as the parser finishes each one and then dropped from the tree, so
    // that a summary of many steps never stands in memory twice (a whole tree of 220 MB of
    // JSON took 5 GB). A cell's error waits until the header is checked: a summary of another
    // version is reported as such, not as its first odd cell.
    RunSummary s;
    std::string topKey;
    bool inCells = false;
    size_t cellIndex = 0;
    std::exception_ptr cellError;
    auto onEvent = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) -> bool {
        using E = nlohmann::json::parse_event_t;
        if (depth == 1 && event == E::key)
            topKey = parsed.get<std::string>();
        else if (depth == 1 && event == E::array_start)
            inCells = topKey == "cells";
        else if (depth == 1 && event == E::array_end)
            inCells = false;
        else if (inCells && depth == 2 && event == E::object_end) {
            const std::string p = "cells[" + std::to_string(cellIndex++) + "]";
            if (!cellError) {
                try {
                    readCell(r, parsed, p, s);
                } catch (const InputError&) {
                    cellError = std::current_exception();
                }
            }
            return false;   // dropped from the tree
        } else if (inCells && depth == 2 && (event == E::value || event == E::array_end))
            ++cellIndex;     // not a cell object: reported below, and the indices stay right
        return true;
    };
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text, onEvent);
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError::atByte(file, e.byte, "not valid JSON: " + std::string(e.what()));
    } catch (const nlohmann::json::exception& e) {   // a number out of range (406), found by fuzz_summary
        throw InputError::inFile(file, "not valid JSON: " + std::string(e.what()));
    }
    if (!j.is_object() || !j.contains("kcx_summary"))
        r.fail("top level", "not a KCX summary (no \"kcx_summary\" key)");
    if (j["kcx_summary"] != kSummaryVersion)
        r.fail("kcx_summary", "version " + j["kcx_summary"].dump() + " is not one this kcx reads (it reads " +
                                  std::to_string(kSummaryVersion) + ")");
    if (r.finite(r.field(j, "top level", "relative_accuracy"), "relative_accuracy") != kRelativeAccuracy)
        r.fail("relative_accuracy", "this kcx reads summaries of relative accuracy 0.01 only");
    if (r.count(r.field(j, "top level", "worst_kept"), "worst_kept") != kWorstKept)
        r.fail("worst_kept", "this kcx reads summaries that keep " + std::to_string(kWorstKept) + " worst entries");
    s.ppoClip = r.finite(r.field(j, "top level", "ppo_clip"), "ppo_clip");
    if (!(s.ppoClip > 0))
        r.fail("ppo_clip", "must be positive");
    const auto& data = r.field(j, "top level", "data");
    for (const char* k : {"topk", "logits", "rewards"})
        if (!r.field(data, "data", k).is_boolean())
            r.fail(std::string("data.") + k, "expected true or false");
    s.hasTopK = data["topk"];
    s.hasLogits = data["logits"];
    s.hasRewards = data["rewards"];
    const auto& inputs = r.field(j, "top level", "inputs");
    if (!inputs.is_array() || inputs.empty())
        r.fail("inputs", "expected a non-empty array of the summarised files");
    std::set<std::string> seen;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string p = "inputs[" + std::to_string(i) + "]";
        if (!inputs[i].is_object())
            r.fail(p, "expected an object");
        SummaryInput in{r.text(r.field(inputs[i], p, "path"), p + ".path"),
                        r.text(r.field(inputs[i], p, "sha256"), p + ".sha256"),
                        r.count(r.field(inputs[i], p, "sequences"), p + ".sequences"),
                        r.count(r.field(inputs[i], p, "tokens"), p + ".tokens")};
        summary_check::input(r.failer(), in, p);
        if (!seen.insert(in.path).second)
            r.fail(p + ".path", "the path is listed twice");
        s.inputs.push_back(std::move(in));
    }
    std::sort(s.inputs.begin(), s.inputs.end());
    const auto& cells = r.field(j, "top level", "cells");
    if (!cells.is_array())
        r.fail("cells", "expected an array");
    if (cellError)
        std::rethrow_exception(cellError);
    // What is left in the array was not an object (cells were read and dropped).
    if (!cells.empty())
        r.fail("cells", "expected an array of cell objects; found " + std::string(cells[0].type_name()));
    summary_check::totals(r.failer(), s, r.count(r.field(j, "top level", "sequences"), "sequences"),
                          r.count(r.field(j, "top level", "tokens"), "tokens"));
    return s;
}

RunSummary readSummary(const std::string& path) {
    // Read whole (a summary's size does not grow with the tokens), up to a cap that keeps a
    // gzip bomb from taking the machine's memory.
    std::vector<size_t> members;
    auto bytes = std::make_shared<std::string>(readPlainOrGzip(path, kMaxSummaryBytes, "summary", &members));
    if (std::string_view(*bytes).starts_with(kSummaryBinaryMagic))
        return parseSummaryBinary(std::move(bytes), path, members);   // its sketches keep the bytes
    return parseSummary(*bytes, path);
}

namespace {

// Parts whose heads are merged (RunSummary::mergeHead) wait, this many at most, to have
// their cells merged into the total key by key across them (mergeCells): the total's cells
// stay in cache while every part of the batch is added to them.
constexpr size_t kMergeBatch = 8;

// Parts [b, e) read in order and merged, each checked against the total as soon as it is
// read: the error a bad part or a clash gives names the same file whatever the machine.
RunSummary readAndMerge(const std::vector<std::string>& paths, size_t b, size_t e) {
    RunSummary total;
    std::vector<RunSummary> batch;
    for (size_t i = b; i < e; ++i) {
        RunSummary s = readSummary(paths[i]);
        if (i == b) {
            total = std::move(s);
            continue;
        }
        try {
            if (total.mergeHead(s)) {
                batch.push_back(std::move(s));
            } else {
                total.mergeCells(batch);
                batch.clear();
                total.merge(s);
            }
        } catch (const std::invalid_argument& err) {
            throw InputError::inFile(paths[i], err.what());
        }
        if (batch.size() == kMergeBatch || i + 1 == e) {
            total.mergeCells(batch);
            batch.clear();
        }
    }
    return total;
}

RunSummary readSummariesInOrder(const std::vector<std::string>& paths) { return readAndMerge(paths, 0, paths.size()); }

}  // namespace

// Parsing dominates (the JSON of every part), so the parts are read on every worker thread,
// each merging a contiguous run of them into its own total; the totals are then merged in
// order. Merging is associative and commutative to the byte (test_summary), so the result is
// the one of reading in order. On any error the parts are read again in order, so that the
// message is the one the sequential reading gives (the first bad part or clash).
RunSummary readSummaries(const std::vector<std::string>& paths, int threads) {
    const size_t workers = std::min<size_t>(size_t(resolveThreads(threads)), paths.size());
    if (workers <= 1)
        return readSummariesInOrder(paths);
    std::vector<RunSummary> totals(workers);
    std::vector<char> failed(workers, 0);
    parallelChunks(paths.size(), workers, int(workers), [&](size_t c, size_t b, size_t e) {
        try {
            totals[c] = readAndMerge(paths, b, e);
        } catch (...) {
            failed[c] = 1;
        }
    });
    if (std::find(failed.begin(), failed.end(), 1) != failed.end())
        return readSummariesInOrder(paths);
    try {
        for (size_t c = 1; c < workers; ++c)
            totals[0].merge(totals[c]);
    } catch (const std::exception&) {
        return readSummariesInOrder(paths);
    }
    return std::move(totals[0]);
}

bool looksLikeSummary(const std::string& path) {
    try {
        return sniffRun(path).kind == RunKind::Summary;
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace kcx
