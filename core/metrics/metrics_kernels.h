// The metric engine's computational kernels (internal to core/).
#pragma once

#include <functional>
#include <string>

#include <atomic>
#include <string_view>
#include <vector>

#include "core/metrics/metrics.h"

namespace kcx::detail {

// Name under which the full-logit pass caches argmax agreement for top1_agree.
inline constexpr const char* kLogitTop1 = "__top1_logits";

// One per-token metric from the sampled-token log-probs (SPEC 2.1), written into `buffer`
// (a released array, reused so its pages need not be mapped and zeroed again).
MetricValues logprobMetric(const Run& run, std::string_view name, const MetricOptions& options,
                           const Progress& progress, std::vector<double> buffer = {});
// The summary of a per-token log-prob metric, its values recomputed block by block on every
// pass instead of stored (the same numbers as summarize(logprobMetric(...))).
Summary logprobSummary(const Run& run, std::string_view name, const MetricOptions& options);
// Whether a metric is a per-token log-prob one cheaper recomputed on each of the summary's
// 3-4 passes than stored once: those without an exp (log_ratio, abs_log_ratio, k1, k2).
// Those with one cost more recomputed, measured on 20M tokens: five of them 0.64 s
// streamed, 0.44 s stored, the array reused from one to the next.
bool logprobStreams(std::string_view name);
// All per-sequence metrics (SPEC 2.4) in one pass.
std::vector<MetricValues> sequenceMetrics(const Run& run, const MetricOptions& options,
                                          const Progress& progress);
// The per-run metrics (SPEC 2.4a), each a single value.
// The run-level metrics from one pass: ess and log_ppl_diff, and prob_pearson (a second
// pass) when `pearson`.
std::vector<MetricValues> runMetrics(const Run& run, bool pearson, const MetricOptions& options,
                                     const Progress& progress);
// All full-logit metrics (SPEC 2.3) in one pass over the logit rows, plus kLogitTop1;
// js only when `withJs` (it costs as much as all the others together). With `keep`, only
// the metrics it accepts are stored and returned (each is M doubles).
std::vector<MetricValues> logitMetrics(const Run& run, const MetricOptions& options,
                                       const Progress& progress, bool withJs,
                                       const std::function<bool(const std::string&)>& keep = {});
// tv_lower, kl_lower, top1_agree (SPEC 2.2); exact logit values win where they exist.
std::vector<MetricValues> topkMetrics(const Run& run, const MetricOptions& options,
                                      const MetricValues& tv, const MetricValues& kl,
                                      const MetricValues& logitTop1, const Progress& progress);

// Thread-safe progress reporting from worker chunks.
class ChunkProgress {
public:
    ChunkProgress(const Progress& p, size_t chunks) : progress_(p), chunks_(chunks) {}
    void done();   // throws Cancelled when asked to stop
private:
    const Progress& progress_;
    size_t chunks_;
    std::atomic<size_t> done_{0};
};

// Number of chunks for n items: enough for balance and progress, not too small.
size_t chunkCount(size_t n, int threads);

// Counts of one pass, summed over chunks.
struct Counts {
    std::atomic<uint64_t> count{0}, missing{0}, nonfinite{0};
    void add(uint64_t c, uint64_t m, uint64_t nf) {
        count += c;
        missing += m;
        nonfinite += nf;
    }
    void into(MetricValues& v) const {
        v.count = count;
        v.missing = missing;
        v.nonfinite = nonfinite;
    }
};

inline double nan() { return std::numeric_limits<double>::quiet_NaN(); }

}  // namespace kcx::detail
