// The metric engine (SPEC 2): per-token, per-sequence and per-run divergence metrics.
//
// A MetricEngine is built once per run and computes each metric on first use, in
// parallel over sequences, caching the value arrays (metrics that share a pass over the
// data, like the full-logit ones, are computed and cached together). Value arrays hold
// NaN where a position or sequence has no value; the reason is counted.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/run.h"

namespace kcx {

enum class MetricLevel { Token, Sequence, Run };

struct MetricInfo {
    std::string name;
    MetricLevel level;
    std::string needs;        // "logprobs", "topk", "logits", "topk|logits", "rewards", "tokens"
    std::string description;
};

// Every metric of SPEC 2, in the order of the spec.
const std::vector<MetricInfo>& metricCatalog();
const MetricInfo* findMetric(std::string_view name);
const char* levelName(MetricLevel level);

struct MetricOptions {
    double ppoClip = 0.2;     // c of clip_excess (contract bounds.ppo_clip)
    int threads = 0;          // 0 = std::thread::hardware_concurrency()
};

struct MetricValues {
    std::string name;
    MetricLevel level = MetricLevel::Token;
    // M (token), N (sequence) or 1 (run). No value is NaN: missingDouble() (run.h) where
    // the inputs were missing, any other NaN where they were non-finite.
    std::vector<double> values;
    uint64_t count = 0;           // values that exist
    uint64_t missing = 0;         // inputs not logged (null) or absent from the data
    uint64_t nonfinite = 0;       // inputs present but NaN/Inf, or a non-finite result
    bool supported() const { return count > 0; }
};

// count, mean, min, max and the quantiles p50, p99, p99.9 (numpy type 7) over the values
// that exist. Statistics are absent (nullopt) when count is 0.
struct Summary {
    uint64_t count = 0, missing = 0, nonfinite = 0;
    std::optional<double> mean, min, max, p50, p99, p999;
};
Summary summarize(const MetricValues& values, int threads = 0);
// The same over values that may be computed block by block (quantile.h); count, when given,
// is the mean's divisor (else the values that are not NaN). Missing and non-finite counts
// are the caller's to fill in.
struct ValueSource;
Summary summarize(const ValueSource& values, int threads = 0, std::optional<uint64_t> count = {});

class DerivedSlices;   // core/metrics/derived_slices.h

class MetricEngine {
public:
    explicit MetricEngine(std::shared_ptr<const Run> run, MetricOptions options = {});
    ~MetricEngine();
    const Run& run() const { return *run_; }
    const MetricOptions& options() const { return options_; }

    // Computes (or returns the cached) values of a metric. Throws std::invalid_argument
    // for an unknown name; Cancelled when progress asks to stop (nothing is cached then).
    std::shared_ptr<const MetricValues> get(std::string_view name, const Progress& progress = {});

    // Max and mean over a metric's finite values, computed once per metric (the bound
    // chain asks on every evaluation, and a threshold drag must not rescan 10M values).
    struct Moments {
        uint64_t n = 0;          // finite values
        double mean = 0, max = 0;
    };
    Moments moments(std::string_view name, const Progress& progress = {});

    // Lean: the engine serves one pass of questions (kcx check, sign, report) and keeps no
    // array it computed only for moments(): the bound chain's inputs are then computed and
    // dropped one at a time instead of piling up in the cache (8 bytes a token each).
    void setLean(bool lean = true) { lean_ = lean; }

    // The summary of one metric: a cheap per-token log-prob metric that is not cached is
    // recomputed block by block on every pass and never stored (kcx metrics without
    // --per-token); anything else is summarised from get().
    Summary summary(std::string_view name, const Progress& progress = {});

    // Drops cached arrays (memory) — they are recomputed on demand.
    void clear();
    // Hands a metric's values over to the caller, who may then change them (a one-shot
    // evaluation compacts them in place instead of copying 8 bytes a token): computed if
    // needed, and dropped from the cache. Empty when someone else still holds the array
    // (the caller then reads it through get()).
    std::optional<MetricValues> take(std::string_view name, const Progress& progress = {});

    // Drops one metric's cached array (a caller that has summarised it and needs it no
    // more: `kcx metrics` without --per-token keeps one array at a time).
    void release(std::string_view name);

    // The run's derived slice keys (derived.pos_bucket, ...), computed on first use and
    // shared by everything that reads this engine: evaluator, discovery, heatmap.
    DerivedSlices& derived();

private:
    std::shared_ptr<const Run> run_;
    MetricOptions options_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<MetricValues>, std::less<>> cache_;
    // The array of the last released metric nobody else held, reused by the next per-token
    // metric: its pages are already mapped (a fresh 160 MB array costs more in page faults
    // and zeroing than the metric costs to compute).
    std::vector<double> spare_;
    std::map<std::string, std::shared_ptr<std::mutex>, std::less<>> computing_;   // one per metric asked
    bool lean_ = false;
    std::map<std::string, Moments, std::less<>> moments_;
    std::unique_ptr<DerivedSlices> derived_;
    void computeGroup(std::string_view name, const Progress& progress);
};

}  // namespace kcx
