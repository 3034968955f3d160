// Summaries (SPEC 10, docs/summaries.md): a run reduced to what the metrics, the contract
// and the window ask of it, per training step and slice value, in a size that does not grow
// with the number of tokens; and merged, exactly, with the summaries of other shards.
//
// A summary is a set of cells. A cell is one step (or none) × one scope: all tokens, one
// value of a slice key (labelled keys, and the derived keys of docs/slices.md), optionally
// crossed with one position bucket (the heatmap's slices × positions). For every metric of
// SPEC 2, a cell holds exact counts (values, missing, non-finite), exact sums of the values
// and their squares (ExactSum), the minimum and maximum, a quantile sketch (Sketch, 1 %
// relative accuracy), per-sequence sums for intervals that treat sequences as the unit, a
// sketch of each sequence's maximum (the exceedance test's `unit: sequence`) and the few
// worst tokens or sequences with their ids. Every part merges exactly, so any order and
// grouping of merges gives the same summary, byte for byte once written.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/formats/run.h"
#include "core/metrics/metrics.h"
#include "core/summary/exact_sum.h"
#include "core/summary/sketch.h"

namespace kcx {

inline constexpr int kSummaryVersion = 1;
inline constexpr size_t kWorstKept = 5;     // worst tokens / sequences kept per cell and metric

// One of the worst values of a cell: ranked by |value|, ties by id then position.
struct WorstEntry {
    double value = 0;
    std::string id;        // the sequence's id
    int64_t position = -1; // the token's position in its sequence; −1 for a sequence metric
    int64_t step = -1;
    bool operator==(const WorstEntry&) const = default;
};
bool worseThan(const WorstEntry& a, const WorstEntry& b);
// The same for an entry not made yet (kcx summarize: most values do not enter).
bool worseThan(double value, int64_t step, const std::string& id, int64_t position, const WorstEntry& b);

struct MetricCell {
    uint64_t count = 0, missing = 0, nonfinite = 0;
    ExactSum sum, sumSq;
    double min = 0, max = 0;            // meaningful when count > 0
    Sketch sketch;
    // Per sequence (token metrics; for sequence metrics each sequence is its own value):
    // sequences with a value here, Σ S_s², Σ n_s², Σ S_s n_s where S_s and n_s are a
    // sequence's sum and count of values in the cell, and a sketch of each sequence's max.
    uint64_t sequences = 0;
    ExactSum seqSumSq, seqCountSq, seqSumCount;
    Sketch seqMax;
    std::vector<WorstEntry> worst;      // at most kWorstKept, worst first

    void add(double v);                 // a finite value (count, sums, min/max, sketch)
    // A value prepared once for the many cells it goes to (the bucket, the sums' limbs).
    struct Prepared {
        double v = 0;
        int sign = 0;
        int32_t bucket = 0;
        ExactSum::Split s1, s2;
        explicit Prepared(double x);
    };
    void add(const Prepared& p);
    void offerWorst(const WorstEntry& e);
    void merge(const MetricCell& o);
    void pack() {          // both sketches into bytes of their own (Sketch::pack)
        sketch.pack();
        seqMax.pack();
    }
    double mean() const { return count ? sum.value() / double(count) : 0; }
    bool operator==(const MetricCell&) const;
};

// Inline: on the path of every value kcx summarize counts.
inline MetricCell::Prepared::Prepared(double x)
    : v(x), sign(x > 0 ? 1 : x < 0 ? -1 : 0), bucket(x != 0 ? Sketch::bucketOf(std::fabs(x)) : 0),
      s1(ExactSum::split(x)), s2(ExactSum::split(x * x)) {}

inline void MetricCell::add(double v) { add(Prepared(v)); }

inline void MetricCell::add(const Prepared& p) {
    if (count == 0) {
        min = max = p.v;
    } else {
        min = std::min(min, p.v);
        max = std::max(max, p.v);
    }
    ++count;
    sum.add(p.s1);
    sumSq.add(p.s2);
    sketch.addPrepared(p.sign, p.bucket);
}

// The sums behind the per-run metrics (SPEC 2.4a) over a cell's tokens.
struct RunSums {
    uint64_t pairs = 0;        // tokens with both log-probs finite
    uint64_t ratios = 0;       // of those, tokens whose ratio w is finite
    uint64_t missing = 0, nonfinite = 0;
    uint64_t sequences = 0;    // sequences with at least one pair
    ExactSum sw, sw2;          // Σ w, Σ w²  (ess)
    ExactSum sp, sq, sp2, sq2, spq;   // Σ p, Σ q, Σ p², Σ q², Σ p q over pairs (prob_pearson)
    ExactSum seqMeans;         // Σ over sequences of mean_t (lp_inf − lp_train) (log_ppl_diff)
    void merge(const RunSums& o);
    bool operator==(const RunSums&) const;
};

// A cell's place. Keys and values are names; "" means "all" (no key) and pos −1 "all
// positions". step −1 means the sequences that have no step.
struct CellKey {
    int64_t step = -1;
    std::string key, value;
    int pos = -1;              // index of derived.pos_bucket's values, or −1
    auto operator<=>(const CellKey&) const = default;
};

struct CellData {
    uint64_t sequences = 0, tokens = 0;
    std::map<std::string, MetricCell> metrics;   // by metric name (token and sequence metrics)
    RunSums run;
    void merge(const CellData& o);
    bool operator==(const CellData&) const;
};

struct SummaryInput {
    std::string path, sha256;
    uint64_t sequences = 0, tokens = 0;
    auto operator<=>(const SummaryInput&) const = default;
};

// A token metric a summary's data give no input for (one of top-k or logits when the data
// had neither, one of logits when they had none). No cell keeps an entry for it: it would only
// count every token of the cell missing (a 1,000-step summary of log-probs alone held 440,000
// such entries, 45 % of its memory once read). RunSummary::metric gives that entry; the files
// still write it (the same bytes), and the readers check it and leave it out.
bool lacksInputs(const MetricInfo& info, bool hasTopK, bool hasLogits);

struct RunSummary {
    double ppoClip = 0.2;
    std::vector<SummaryInput> inputs;            // sorted
    std::map<CellKey, CellData> cells;
    // What the shards carried (the same on every shard, like a joined run requires).
    bool hasTopK = false, hasLogits = false, hasRewards = false;

    bool lacks(const MetricInfo& info) const { return lacksInputs(info, hasTopK, hasLogits); }
    // A cell's entry for a metric: its own; for a metric the summary lacks inputs for, `implied`
    // set to all of the cell's tokens missing; nullptr when the cell has none.
    const MetricCell* metric(const CellData& d, const std::string& name, MetricCell& implied) const;

    void merge(const RunSummary& o);             // throws std::invalid_argument when they clash
    // merge() in two halves, for many parts merged cell by cell (kcx merge's batches):
    // mergeHead(o) does merge's checks (it throws as merge would) and takes o's inputs, when
    // o's data (top-k, logits) are this summary's; false, and nothing done, when they are not
    // (then merge(o)). mergeCells then adds the cells of parts whose heads were merged, key
    // by key across them, so that each merged cell takes all their contributions while it is
    // in cache. The result is merge's for each part in order.
    bool mergeHead(const RunSummary& o);
    void mergeCells(const std::vector<RunSummary>& parts);
    uint64_t sequences() const;                  // from the step cells of scope "all"
    uint64_t tokens() const;
    std::pair<uint64_t, uint64_t> sequencesAndTokens() const;   // both, in one walk over the cells
    std::vector<int64_t> steps() const;          // ascending; −1 (no step) first when present
    // The cell over every step for a scope (merged from the step cells); nullopt when none.
    std::optional<CellData> total(const std::string& key = "", const std::string& value = "", int pos = -1) const;

private:
    // merge's checks and everything but o's cells; returns the metrics `o` lacks inputs for
    // and the result does not (o's cells count their tokens missing for them).
    std::vector<std::string> takeHead(const RunSummary& o);
};

// Reduces a run. The run's inputs (paths and hashes) are the caller's to fill in.
// A run of more tokens than blockTokens is summarised block by block of whole sequences and the
// blocks' summaries merged (exactly: the same summary), and a mapped file's pages of a block
// are dropped once it is done: memory does not grow with the run. 0: the run at once.
struct SummarizeOptions {
    double ppoClip = 0.2;
    int threads = 0;
    size_t blockTokens = size_t(1) << 21;
};
RunSummary summarizeRun(std::shared_ptr<const Run> run, const SummarizeOptions& options = {},
                        const Progress& progress = {});

// Per-run metrics from their sums (NaN when they have no value).
double essOf(const RunSums& s);
double probPearsonOf(const RunSums& s);
double logPplDiffOf(const RunSums& s);

// The names of the position buckets, by CellKey::pos (derived.pos_bucket's values).
const std::vector<std::string>& positionBucketNames();

// The type-7 quantile (SPEC 3) read from a cell's sketch, clamped to [min, max]; exact at
// q = 0 and q = 1.
std::optional<double> sketchQuantile(const MetricCell& c, double q);

// Files (docs/summaries.md, "The file"). writeSummary writes the binary container,
// gzip-compressed; writeSummaryJson the JSON one (readable by any tool, slower to read).
// readSummary accepts either, compressed or not, and checks everything (InputError with file
// and place).
inline constexpr size_t kMaxSummaryBytes = size_t(4) << 30;   // uncompressed
void writeSummary(const RunSummary& s, const std::string& path);
void writeSummaryJson(const RunSummary& s, const std::string& path);
std::string summaryJsonText(const RunSummary& s);
std::string summaryBinaryBytes(const RunSummary& s);   // uncompressed
RunSummary readSummary(const std::string& path);
// Several summaries read and merged (kcx merge, and --run S1 --run S2 of metrics and check):
// the same summary as reading them in order, on `threads` workers (0: the CPUs this process
// may use); a clash between them (the same input twice, different clips) is an InputError
// naming the file that brought it, the first in order.
RunSummary readSummaries(const std::vector<std::string>& paths, int threads = 0);
// Uncompressed bytes of either container, told by the binary one's first bytes.
RunSummary parseSummary(const std::string& bytes, const std::string& file);
// The binary container; the summary's sketches keep `bytes` (Sketch::Packed). `memberStarts`:
// where the file's gzip members after the first began in `bytes` (readPlainOrGzip); a large
// summary is read in pieces that begin there (writeSummary begins a member at a cell every
// 8 MiB). Any offsets give the same summary or the same error.
RunSummary parseSummaryBinary(std::shared_ptr<const std::string> bytes, const std::string& file,
                              const std::vector<size_t>& memberStarts = {});
// A binary summary of many cells is read in pieces on several threads (the same summary as
// reading it in one piece; any error is the one-piece reading's): pieces of at least `cells`
// cells and `bytes` bytes, 1,024 and 8 MiB unless set, on `threads` (0: the CPUs this process
// may use, resolveThreads). writeSummary begins a gzip member every `bytes` of cells, where
// pieces can begin. Tests set them low.
void setSummaryReadPieces(uint64_t cells, size_t bytes, int threads = 0);
uint64_t summaryPiecesRead();   // pieces read that way since the process began
// True when the file is a summary: the binary container, or JSON whose first key is
// "kcx_summary"; either may be gzip-compressed.
bool looksLikeSummary(const std::string& path);

}  // namespace kcx
