// The binary container of a summary (docs/summaries.md, "The file"): the same content as the
// JSON container, written as variable-length integers and raw doubles, read straight into the
// cells without a tree. A summary of 1,000 steps is 32 million sketch counts; as JSON each
// was a tree node and an allocation, here it is a byte or two.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <set>

#include "core/base/leb128.h"
#include "core/formats/json_scan.h"
#include "core/formats/sniff.h"
#include "core/summary/summary.h"
#include "core/summary/summary_binary_reader.h"
#include "core/summary/summary_check.h"

namespace kcx {

static_assert(std::endian::native == std::endian::little, "the binary summary writes doubles as they are in memory");

namespace {

class BinaryWriter {
public:
    void u(uint64_t v) { leb128::putU(out_, v); }
    void s(int64_t v) { leb128::putS(out_, v); }
    void f(double d) {
        char b[8];
        std::memcpy(b, &d, 8);
        out_.append(b, 8);
    }
    void str(const std::string& t) {
        u(t.size());
        out_ += t;
    }
    void raw(std::string_view t) { out_.append(t); }
    void sum(const ExactSum& x) {
        const ExactSum::Canonical c = x.canonical();
        s(c.sign);
        if (!c.sign)
            return;
        u(uint64_t(c.low));
        u(c.limbs.size());
        for (uint32_t l : c.limbs)
            u(l);
    }
    void sketch(const Sketch& k) { k.encode(out_); }
    std::string& bytes() { return out_; }

private:
    std::string out_;
};

void writeMetric(BinaryWriter& w, const MetricCell& m) {
    w.u(m.count);
    w.u(m.missing);
    w.u(m.nonfinite);
    if (!m.count)
        return;
    w.sum(m.sum);
    w.sum(m.sumSq);
    w.f(m.min);
    w.f(m.max);
    w.sketch(m.sketch);
    w.u(m.sequences);
    w.sum(m.seqSumSq);
    w.sum(m.seqCountSq);
    w.sum(m.seqSumCount);
    w.sketch(m.seqMax);
    w.u(m.worst.size());
    for (const WorstEntry& e : m.worst) {
        w.f(e.value);
        w.str(e.id);
        w.s(e.position);
        w.s(e.step);
    }
}

void writeRun(BinaryWriter& w, const RunSums& r) {
    for (uint64_t v : {r.pairs, r.ratios, r.missing, r.nonfinite, r.sequences})
        w.u(v);
    for (const ExactSum* x : {&r.sw, &r.sw2, &r.sp, &r.sq, &r.sp2, &r.sq2, &r.spq, &r.seqMeans})
        w.sum(*x);
}

// The metrics a summary may hold, by their index in the file's table: the token and sequence
// metrics of the catalogue, in its order.
std::vector<const MetricInfo*> cellMetrics() {
    std::vector<const MetricInfo*> out;
    for (const MetricInfo& info : metricCatalog())
        if (info.level != MetricLevel::Run)
            out.push_back(&info);
    return out;
}

}  // namespace

namespace summary_binary {

template <class Place>
MetricCell readMetric(BinaryReader& r, bool tokenLevel, const Place& place) {
    const auto at = [&](const char* field) { return [&place, field] { return place() + "." + field; }; };
    MetricCell m;
    m.count = r.u(at("count"));
    m.missing = r.u(at("missing"));
    m.nonfinite = r.u(at("nonfinite"));
    if (!m.count)
        return m;
    m.sum = r.sum(at("sum"));
    m.sumSq = r.sum(at("sum_sq"));
    m.min = r.finite(at("min"));
    m.max = r.finite(at("max"));
    m.sketch = r.sketch(at("sketch"));
    m.sequences = r.u(at("sequences"));
    m.seqSumSq = r.sum(at("seq_sum_sq"));
    m.seqCountSq = r.sum(at("seq_count_sq"));
    m.seqSumCount = r.sum(at("seq_sum_count"));
    m.seqMax = r.sketch(at("seq_max"));
    const uint64_t n = r.u(at("worst"));
    if (n > kWorstKept)
        r.fail(at("worst"), "expected 1 to " + std::to_string(kWorstKept) + " entries, at most count");
    m.worst.resize(size_t(n));
    for (size_t i = 0; i < n; ++i) {
        const auto p = [&] { return place() + ".worst[" + std::to_string(i) + "]"; };
        WorstEntry& e = m.worst[i];
        e.value = r.finite(p);
        e.id = r.str(p);
        e.position = r.s(p);
        e.step = r.s(p);
    }
    summary_check::metric(r.failer(), m, tokenLevel, place);
    return m;
}

uint64_t parseCells(BinaryReader& r, uint64_t first, uint64_t end, const CellTables& t,
                    std::map<CellKey, CellData>& cells, size_t until) {
    const std::vector<int>& pos = t.pos;
    const std::vector<const MetricInfo*>& metrics = t.metrics;
    uint64_t c = first;
    for (; c < end && r.offset() < until; ++c) {
        const std::string p = "cells[" + std::to_string(c) + "]";
        const auto here = [&] { return p; };
        CellKey key;
        const uint64_t step = r.u(here);
        if (step > uint64_t(INT64_MAX))
            r.fail([&] { return p + ".step"; }, "a step is a whole number >= 0 (null: no step)");
        key.step = int64_t(step) - 1;
        key.key = r.str(here);
        if (!key.key.empty()) {
            key.value = r.str(here);
            if (key.key == "derived.pos_bucket")
                r.fail([&] { return p + ".key"; }, "not a slice key a summary keeps");
        }
        const uint64_t pp = r.u(here);
        if (pp > pos.size())
            r.fail([&] { return p + ".pos"; }, "not a position bucket of derived.pos_bucket");
        key.pos = pp ? pos[size_t(pp - 1)] : -1;
        // In order (what the writer does): no cell twice, and each goes in at the end.
        if (!cells.empty() && !(cells.rbegin()->first < key))
            r.fail(here, cells.count(key) ? "a second cell for the same step, slice and position"
                                          : "the cells are not in order (step, key, value, position)");
        CellData d;
        d.sequences = r.u(here);
        d.tokens = r.u(here);
        const auto runAt = [&] { return p + ".run"; };
        for (uint64_t* v : {&d.run.pairs, &d.run.ratios, &d.run.missing, &d.run.nonfinite, &d.run.sequences})
            *v = r.u(runAt);
        summary_check::run(r.failer(), d.run, runAt);
        for (ExactSum* x : {&d.run.sw, &d.run.sw2, &d.run.sp, &d.run.sq, &d.run.sp2, &d.run.sq2, &d.run.spq,
                            &d.run.seqMeans})
            *x = r.sum(runAt);
        summary_check::cellCounts(r.failer(), d, here);
        const uint64_t nMetrics = r.u(here);
        if (nMetrics > metrics.size())
            r.fail([&] { return p + ".metrics"; }, "more metrics than the file names");
        uint64_t last = 0;
        for (uint64_t i = 0; i < nMetrics; ++i) {
            const uint64_t m = r.u([&] { return p + ".metrics"; });
            if (m >= metrics.size() || (i && m <= last))
                r.fail([&] { return p + ".metrics"; }, "metric indices must rise and name a metric of the file");
            last = m;
            const MetricInfo& info = *metrics[size_t(m)];
            const auto mp = [&] { return p + ".metrics." + info.name; };
            MetricCell cell = readMetric(r, info.level == MetricLevel::Token, mp);
            summary_check::metricCounts(r.failer(), d, info, cell, mp);
            if (lacksInputs(info, t.hasTopK, t.hasLogits)) {   // implied (RunSummary::metric): checked, not kept
                summary_check::lacking(r.failer(), d, info, cell, mp);
                continue;
            }
            d.metrics.emplace_hint(d.metrics.end(), info.name, std::move(cell));
        }
        cells.emplace_hint(cells.end(), std::move(key), std::move(d));
    }
    return c - first;
}

}  // namespace summary_binary

std::string summaryBinaryBytes(const RunSummary& s) { return summary_binary::bytesWithCuts(s, nullptr); }

std::string summary_binary::bytesWithCuts(const RunSummary& s, std::vector<size_t>* cuts) {
    BinaryWriter w;
    w.raw(kSummaryBinaryMagic);
    w.u(kSummaryVersion);
    w.f(kRelativeAccuracy);
    w.u(kWorstKept);
    w.f(s.ppoClip);
    w.u((s.hasTopK ? 1 : 0) | (s.hasLogits ? 2 : 0) | (s.hasRewards ? 4 : 0));
    w.u(s.inputs.size());
    for (const SummaryInput& i : s.inputs) {
        w.str(i.path);
        w.str(i.sha256);
        w.u(i.sequences);
        w.u(i.tokens);
    }
    w.u(s.sequences());
    w.u(s.tokens());
    const auto& pos = positionBucketNames();
    w.u(pos.size());
    for (const std::string& p : pos)
        w.str(p);
    const std::vector<const MetricInfo*> metrics = cellMetrics();
    w.u(metrics.size());
    for (const MetricInfo* m : metrics)
        w.str(m->name);
    w.u(s.cells.size());
    size_t lastCut = 0;
    const size_t every = std::max<size_t>(memberBytes(), 1);
    for (const auto& [key, cell] : s.cells) {
        if (cuts && w.bytes().size() - lastCut >= every)
            cuts->push_back(lastCut = w.bytes().size());
        w.u(uint64_t(key.step + 1));
        w.str(key.key);
        if (!key.key.empty())
            w.str(key.value);
        w.u(uint64_t(key.pos + 1));
        w.u(cell.sequences);
        w.u(cell.tokens);
        writeRun(w, cell.run);
        MetricCell implied;
        uint64_t n = 0;
        for (const MetricInfo* m : metrics)
            n += s.metric(cell, m->name, implied) != nullptr;
        w.u(n);
        for (size_t i = 0; i < metrics.size(); ++i)
            if (const MetricCell* m = s.metric(cell, metrics[i]->name, implied)) {
                w.u(i);
                writeMetric(w, *m);
            }
    }
    return std::move(w.bytes());
}

bool isSummaryBinary(std::string_view head) { return head.starts_with(kSummaryBinaryMagic); }

RunSummary parseSummaryBinary(std::shared_ptr<const std::string> bytes, const std::string& file,
                              const std::vector<size_t>& memberStarts) {
    using namespace summary_binary;
    if (bytes->size() > kMaxSummaryBytes)   // Sketch::Packed's offsets are 32-bit
        throw InputError::inFile(file, "the summary is larger than " + std::to_string(kMaxSummaryBytes >> 20) +
                                           " MiB; KCX refuses it");
    BinaryReader r(std::move(bytes), kSummaryBinaryMagic.size(), file);
    const auto at = [](const char* place) { return [place] { return std::string(place); }; };
    const uint64_t version = r.u(at("kcx_summary"));
    if (version != uint64_t(kSummaryVersion))
        r.fail(at("kcx_summary"), "version " + std::to_string(version) + " is not one this kcx reads (it reads " +
                                      std::to_string(kSummaryVersion) + ")");
    if (r.finite(at("relative_accuracy")) != kRelativeAccuracy)
        r.fail(at("relative_accuracy"), "this kcx reads summaries of relative accuracy 0.01 only");
    if (r.u(at("worst_kept")) != kWorstKept)
        r.fail(at("worst_kept"), "this kcx reads summaries that keep " + std::to_string(kWorstKept) + " worst entries");
    RunSummary s;
    s.ppoClip = r.finite(at("ppo_clip"));
    if (!(s.ppoClip > 0))
        r.fail(at("ppo_clip"), "must be positive");
    const uint64_t flags = r.u(at("data"));
    if (flags > 7)
        r.fail(at("data"), "unknown data flags");
    s.hasTopK = flags & 1;
    s.hasLogits = flags & 2;
    s.hasRewards = flags & 4;
    const uint64_t nInputs = r.u(at("inputs"));
    if (!nInputs)
        r.fail(at("inputs"), "expected a non-empty array of the summarised files");
    std::set<std::string> seen;
    for (uint64_t i = 0; i < nInputs; ++i) {
        const std::string p = "inputs[" + std::to_string(i) + "]";
        const auto here = [&] { return p; };
        SummaryInput in;
        in.path = r.str(here);
        in.sha256 = r.str(here);
        in.sequences = r.u(here);
        in.tokens = r.u(here);
        summary_check::input(r.failer(), in, p);
        if (!seen.insert(in.path).second)
            r.fail([&] { return p + ".path"; }, "the path is listed twice");
        s.inputs.push_back(std::move(in));
    }
    std::sort(s.inputs.begin(), s.inputs.end());
    const uint64_t sequences = r.u(at("sequences")), tokens = r.u(at("tokens"));
    // The file's position buckets and metric names, by index: each must be one this kcx knows.
    const auto& known = positionBucketNames();
    std::vector<int> pos;
    for (uint64_t i = 0, n = r.u(at("positions")); i < n; ++i) {
        const std::string name = r.str(at("positions"));
        auto it = std::find(known.begin(), known.end(), name);
        if (it == known.end())
            r.fail(at("positions"), "\"" + name + "\" is not a position bucket of derived.pos_bucket");
        if (std::find(pos.begin(), pos.end(), int(it - known.begin())) != pos.end())
            r.fail(at("positions"), "\"" + name + "\" is named twice");
        pos.push_back(int(it - known.begin()));
    }
    std::vector<const MetricInfo*> metrics;
    for (uint64_t i = 0, n = r.u(at("metrics")); i < n; ++i) {
        const std::string name = r.str(at("metrics"));
        const MetricInfo* info = findMetric(name);
        if (!info || info->level == MetricLevel::Run)
            r.fail(at("metrics"), "\"" + name + "\" is not a token or sequence metric of SPEC 2");
        if (std::find(metrics.begin(), metrics.end(), info) != metrics.end())
            r.fail(at("metrics"), "\"" + name + "\" is named twice");
        metrics.push_back(info);
    }
    const uint64_t nCells = r.u(at("cells"));
    const CellTables tables{pos, metrics, s.hasTopK, s.hasLogits};
    if (!parseCellsInParallel(r, nCells, tables, s.cells, memberStarts))
        parseCells(r, 0, nCells, tables, s.cells);
    if (!r.atEnd())
        r.fail(at("cells"), "bytes after the last cell (byte " + std::to_string(r.offset()) + ")");
    summary_check::totals(r.failer(), s, sequences, tokens);
    return s;
}

}  // namespace kcx
