// The checks every summary reader makes on what it decoded (docs/summaries.md, "The file").
// The JSON and the binary containers decode differently and check the same things, with the
// same places and words, here. A place is built only when a check fails (a summary of many
// steps has a million metric cells): `place` is a callable returning it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/base/errors.h"
#include "core/summary/summary.h"

namespace kcx::summary_check {

// A bucket index is ceil(log(x)/log γ) for a double x: |index| < 40,000.
inline constexpr int64_t kReach = 40000;

struct Failer {
    std::string file;
    [[noreturn]] void operator()(const std::string& place, const std::string& message) const {
        throw InputError(file, place, message);
    }
};

// A store's buckets, offset..offset+span−1, within what a double can reach.
template <class Place>
void storeReach(const Failer& fail, int64_t offset, int64_t span, const Place& place) {
    if (offset < -kReach || offset > kReach || offset + span > kReach + 1)
        fail(place(), "bucket indices outside what a double can reach");
}

// One metric of a cell, decoded whole.
template <class Place>
void metric(const Failer& fail, const MetricCell& m, bool tokenLevel, const Place& place) {
    if (!m.count)
        return;
    if (m.min > m.max)
        fail(place(), "min is above max");
    if (m.sketch.count() != m.count)
        fail(place() + ".sketch", "the sketch holds " + std::to_string(m.sketch.count()) + " values, count says " +
                                      std::to_string(m.count));
    if (m.sequences == 0 || m.sequences > m.count || (!tokenLevel && m.sequences != m.count))
        fail(place() + ".sequences", "does not fit count (a value belongs to a sequence)");
    if (m.seqMax.count() != m.sequences)
        fail(place() + ".seq_max", "the sketch of sequence maxima does not hold one value per sequence");
    if (m.worst.empty() || m.worst.size() > kWorstKept || m.worst.size() > m.count)
        fail(place() + ".worst", "expected 1 to " + std::to_string(kWorstKept) + " entries, at most count");
    for (size_t i = 0; i < m.worst.size(); ++i) {
        const WorstEntry& e = m.worst[i];
        const auto p = [&] { return place() + ".worst[" + std::to_string(i) + "]"; };
        if (e.value < m.min || e.value > m.max)
            fail(p(), "the value lies outside [min, max]");
        if (e.position < -1 || e.step < -1 || (tokenLevel != (e.position >= 0)))
            fail(p(), "position and step are -1 or a position or step");
        if (i && !worseThan(m.worst[i - 1], e))
            fail(p(), "the worst entries are not in order (largest |value| first) or repeat");
    }
    if (m.worst.size() < std::min<uint64_t>(kWorstKept, m.count))
        fail(place() + ".worst", "fewer entries than the cell's values allow");
}

template <class Place>
void run(const Failer& fail, const RunSums& r, const Place& place) {
    if (r.ratios > r.pairs || r.sequences > r.pairs)
        fail(place(), "ratios and sequences cannot exceed pairs");
}

// A cell's counts against its tokens and sequences (its metrics each checked by metric()).
template <class Place>
void cellCounts(const Failer& fail, const CellData& d, const Place& place) {
    if (d.run.pairs + d.run.missing > d.tokens)
        fail(place() + ".run", "more pairs than tokens");
}

template <class Place>
void metricCounts(const Failer& fail, const CellData& d, const MetricInfo& info, const MetricCell& m,
                  const Place& place) {
    const bool token = info.level == MetricLevel::Token;
    if (m.count + m.missing + m.nonfinite > (token ? d.tokens : d.sequences))
        fail(place(), "more values than the cell has " + std::string(token ? "tokens" : "sequences"));
}

// A metric the data give no input for (lacksInputs) counts every token of its cell missing.
template <class Place>
void lacking(const Failer& fail, const CellData& d, const MetricInfo& info, const MetricCell& m,
                    const Place& place) {
    if (m.count || m.nonfinite || m.missing != d.tokens)
        fail(place(), "the summary's data have no " + std::string(info.needs == "logits" ? "logits" : "top-k or logits") +
                          " (its \"data\" flags), so every token of the cell is missing for " + info.name);
}

inline void input(const Failer& fail, const SummaryInput& in, const std::string& place) {
    if (in.sha256.size() != 64 || in.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
        fail(place + ".sha256", "expected 64 lower-case hex digits");
}

// The totals a file states against its cells and its inputs.
inline void totals(const Failer& fail, const RunSummary& s, uint64_t sequences, uint64_t tokens) {
    const auto [cellSeq, cellTok] = s.sequencesAndTokens();   // one walk: 34,000 cells at 1,000 steps
    if (sequences != cellSeq || tokens != cellTok)
        fail("sequences", "the totals do not match the cells of all sequences");
    uint64_t inSeq = 0, inTok = 0;
    for (const SummaryInput& in : s.inputs) {
        inSeq += in.sequences;
        inTok += in.tokens;
    }
    if (inSeq != cellSeq || inTok != cellTok)
        fail("inputs", "the inputs' sequences and tokens do not add up to the summary's");
}

}  // namespace kcx::summary_check
