// Metrics from the sampled-token log-probs: per token (SPEC 2.1), per sequence (2.4)
// and per run (2.4a).
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "core/base/prefault.h"
#include "core/base/parallel.h"
#include "core/base/det_math.h"
#include "core/metrics/metrics_kernels.h"
#include "core/metrics/quantile.h"
#include "core/metrics/token_kernels_fns.h"

namespace kcx::detail {

void ChunkProgress::done() {
    const size_t d = ++done_;
    if (!progress_)
        return;
    static std::mutex m;   // callbacks are serialised
    std::lock_guard lock(m);
    report(progress_, double(d) / double(chunks_));
}

size_t chunkCount(size_t n, int threads) {
    const size_t byWork = n / 32768 + 1;
    return std::clamp<size_t>(byWork, 1, size_t(resolveThreads(threads)) * 16);
}

namespace {

TokenOp opOf(std::string_view name) {
    static const std::pair<std::string_view, TokenOp> ops[] = {
        {"log_ratio", TokenOp::LogRatio}, {"abs_log_ratio", TokenOp::AbsLogRatio}, {"ratio", TokenOp::Ratio},
        {"prob_diff", TokenOp::ProbDiff}, {"k1", TokenOp::K1}, {"k2", TokenOp::K2}, {"k3", TokenOp::K3},
        {"chi2", TokenOp::Chi2}, {"clip_excess", TokenOp::ClipExcess}};
    for (auto [n, op] : ops)
        if (n == name)
            return op;
    throw std::invalid_argument("not a log-prob metric: " + std::string(name));
}

// Visits both log-prob columns over [b, b+n) with their storage types.
template <class F>
void visitPair(const Run& run, size_t b, size_t n, F&& f) {
    run.lpTrain.visit([&](auto a) { run.lpInf.visit([&](auto q) { f(a, q); }, b, n); }, b, n);
}

// The state of one position's inputs: 0 usable, 1 missing, 2 non-finite.
template <class TA, class TB>
inline int inputState(TA a, TB b) {
    if (isMissing(a) || isMissing(b))
        return 1;
    if (!std::isfinite(a) || !std::isfinite(b))
        return 2;
    return 0;
}

// One chunk of a per-token metric: the kernel for this CPU computes every position and
// counts those whose inputs or result are not finite (missing is a NaN); only when there
// are any are they sorted out here.
template <class TA, class TB>
void tokenChunk(TokenOp op, std::span<const TA> A, std::span<const TB> B, double* out, double clip,
                uint64_t& count, uint64_t& missing, uint64_t& nonfinite) {
    const size_t bad = tokenKernels().of<TA, TB>().op[int(op)](A.data(), B.data(), A.size(), clip, out);
    count += A.size() - bad;
    if (!bad)
        return;
    constexpr double kMax = std::numeric_limits<double>::max();
    for (size_t i = 0; i < A.size(); ++i) {
        const double a = A[i], b = B[i];
        if (std::fabs(a) <= kMax && std::fabs(b) <= kMax && std::fabs(out[i]) <= kMax)
            continue;
        const int state = inputState(A[i], B[i]);
        if (state == 1) {
            out[i] = missingDouble();
            ++missing;
        } else {
            out[i] = nan();   // a non-finite input, or a finite one whose result overflows
            ++nonfinite;
        }
    }
}

}  // namespace

MetricValues logprobMetric(const Run& run, std::string_view name, const MetricOptions& options,
                           const Progress& progress, std::vector<double> buffer) {
    const TokenOp op = opOf(name);
    MetricValues out;
    out.name = std::string(name);
    out.level = MetricLevel::Token;
    const size_t m = run.tokenCount();
    out.values = std::move(buffer);
    reservePrefaulted(out.values, m);
    out.values.resize(m);   // every entry is written below
    const size_t chunks = chunkCount(m, options.threads);
    ChunkProgress prog(progress, chunks);
    Counts counts;
    parallelChunks(m, chunks, options.threads, [&](size_t, size_t b, size_t e) {
        uint64_t c = 0, miss = 0, nf = 0;
        visitPair(run, b, e - b, [&](auto A, auto B) {
            tokenChunk(op, A, B, out.values.data() + b, options.ppoClip, c, miss, nf);
        });
        counts.add(c, miss, nf);
        prog.done();
    });
    counts.into(out);
    return out;
}

bool logprobStreams(std::string_view name) {
    return name == "log_ratio" || name == "abs_log_ratio" || name == "k1" || name == "k2";
}

Summary logprobSummary(const Run& run, std::string_view name, const MetricOptions& options) {
    const TokenOp op = opOf(name);
    ValueSource src;
    src.size = run.tokenCount();
    std::vector<uint64_t> missing(src.blocks(), 0), nonfinite(src.blocks(), 0);
    src.fill = [&](size_t k, size_t b, size_t e, double* out) {
        uint64_t c = 0, m = 0, nf = 0;
        visitPair(run, b, e - b, [&](auto A, auto B) { tokenChunk(op, A, B, out, options.ppoClip, c, m, nf); });
        missing[k] = m;   // the same on every pass over block k
        nonfinite[k] = nf;
    };
    Summary s = summarize(src, options.threads);
    for (size_t k = 0; k < missing.size(); ++k) {
        s.missing += missing[k];
        s.nonfinite += nonfinite[k];
    }
    return s;
}

std::vector<MetricValues> sequenceMetrics(const Run& run, const MetricOptions& options,
                                          const Progress& progress) {
    static const char* names[] = {"seq_log_ratio", "seq_abs_log_ratio", "seq_max_abs_log_ratio",
                                  "seq_mean_abs_log_ratio", "seq_geo_ratio", "seq_ratio"};
    constexpr size_t kSeq = 6;
    const size_t n = run.sequenceCount();
    std::vector<MetricValues> out(kSeq + 2);
    for (size_t j = 0; j < kSeq; ++j)
        out[j].name = names[j];
    out[kSeq].name = "reward_diff";
    out[kSeq + 1].name = "length";
    for (auto& v : out) {
        v.level = MetricLevel::Sequence;
        v.values.assign(n, missingDouble());
    }
    const size_t chunks = std::min<size_t>(n ? n : 1, chunkCount(run.tokenCount(), options.threads));
    ChunkProgress prog(progress, chunks);
    Counts seqCounts;
    parallelChunks(n, chunks, options.threads, [&](size_t, size_t b, size_t e) {
        uint64_t c = 0, miss = 0, nf = 0;
        for (size_t s = b; s < e; ++s) {
            const size_t t0 = run.seqBegin(s), len = run.seqLength(s);
            double sum = 0, maxAbs = 0, sumAbs = 0;
            int worst = 0;   // 1 missing beats 2 non-finite: a sequence with a gap is missing
            visitPair(run, t0, len, [&](auto A, auto B) {
                for (size_t i = 0; i < len; ++i) {
                    const int st = inputState(A[i], B[i]);
                    if (st == 1)
                        worst = 1;
                    else if (st == 2 && worst == 0)
                        worst = 2;
                    if (st)
                        continue;
                    const double r = double(A[i]) - double(B[i]);
                    sum += r;
                    sumAbs += std::fabs(r);
                    maxAbs = std::max(maxAbs, std::fabs(r));
                }
            });
            out[kSeq + 1].values[s] = double(len);
            if (worst || len == 0) {
                (worst == 2 ? nf : miss)++;
                if (worst == 2)
                    for (size_t j = 0; j < kSeq; ++j)
                        out[j].values[s] = nan();
                continue;
            }
            ++c;
            const double vals[kSeq] = {sum, std::fabs(sum), maxAbs, sumAbs / double(len),
                                       det::exp(sum / double(len)), det::exp(std::clamp(sum, -20.0, 20.0))};
            for (size_t j = 0; j < kSeq; ++j)
                out[j].values[s] = vals[j];
        }
        seqCounts.add(c, miss, nf);
        prog.done();
    });
    for (size_t j = 0; j < kSeq; ++j) {
        seqCounts.into(out[j]);
        // seq_geo_ratio may overflow for extreme mean log-ratios.
        for (double& v : out[j].values)
            if (std::isinf(v)) {
                v = nan();
                --out[j].count;
                ++out[j].nonfinite;
            }
    }
    // reward_diff: both rewards present and finite.
    MetricValues& rd = out[kSeq];
    for (size_t s = 0; s < n; ++s) {
        const double a = run.rewardTrain.empty() ? missingDouble() : run.rewardTrain[s];
        const double b = run.rewardInf.empty() ? missingDouble() : run.rewardInf[s];
        const int st = inputState(a, b);
        if (st) {
            (st == 1 ? rd.missing : rd.nonfinite)++;
            if (st == 2)
                rd.values[s] = nan();
        }
        else {
            rd.values[s] = b - a;
            ++rd.count;
        }
    }
    out[kSeq + 1].count = n;
    return out;
}

std::vector<MetricValues> runMetrics(const Run& run, bool pearson, const MetricOptions& options,
                                     const Progress& progress) {
    const size_t n = run.sequenceCount();
    // Per-sequence partial sums, combined in order so the result does not depend on threads.
    struct Part : RunSeqSums {
        double seqMean = 0;
    };
    std::vector<Part> parts(n);
    const size_t chunks = std::min<size_t>(n ? n : 1, chunkCount(run.tokenCount(), options.threads));
    ChunkProgress prog(progress, pearson ? chunks * 2 : chunks);
    parallelChunks(n, chunks, options.threads, [&](size_t, size_t b, size_t e) {
        for (size_t s = b; s < e; ++s) {
            Part& p = parts[s];
            visitPair(run, run.seqBegin(s), run.seqLength(s), [&](auto A, auto B) {
                using TA = typename decltype(A)::value_type;
                using TB = typename decltype(B)::value_type;
                tokenKernels().of<TA, TB>().runSeq(A.data(), B.data(), A.size(), &p);
            });
            p.seqMean = p.nPair ? p.sumDiff / double(p.nPair) : 0;
        }
        prog.done();
    });
    Part all;
    uint64_t seqs = 0;
    double sumSeqMeans = 0;
    for (const Part& p : parts) {
        all.sw += p.sw;
        all.sw2 += p.sw2;
        all.sp += p.sp;
        all.sq += p.sq;
        all.nw += p.nw;
        all.nPair += p.nPair;
        all.miss += p.miss;
        all.nf += p.nf;
        if (p.nPair) {
            ++seqs;
            sumSeqMeans += p.seqMean;
        }
    }
    auto result = [&](const char* name, double value, uint64_t nonfinite) {
        MetricValues out;
        out.name = name;
        out.level = MetricLevel::Run;
        out.missing = all.miss;
        out.nonfinite = nonfinite;
        out.values = {value};
        out.count = std::isfinite(value) ? 1 : 0;
        return out;
    };
    std::vector<MetricValues> out;
    // ess: nonfinite includes ratios that overflowed; the others do not care about them.
    out.push_back(result("ess", all.nw && all.sw2 > 0 ? all.sw * all.sw / (double(all.nw) * all.sw2) : nan(), all.nf));
    out.push_back(result("log_ppl_diff", seqs ? sumSeqMeans / double(seqs) : nan(), all.nf - (all.nPair - all.nw)));
    if (!pearson)
        return out;
    double value = nan();
    if (all.nPair >= 2) {
        // Second pass around the means, for accuracy.
        const double mp = all.sp / double(all.nPair), mq = all.sq / double(all.nPair);
        std::vector<double> cov(n, 0), vp(n, 0), vq(n, 0);
        parallelChunks(n, chunks, options.threads, [&](size_t, size_t b, size_t e) {
            for (size_t s = b; s < e; ++s) {
                PearsonSums sums;
                visitPair(run, run.seqBegin(s), run.seqLength(s), [&](auto A, auto B) {
                    using TA = typename decltype(A)::value_type;
                    using TB = typename decltype(B)::value_type;
                    tokenKernels().of<TA, TB>().pearsonSeq(A.data(), B.data(), A.size(), mp, mq, &sums);
                });
                cov[s] = sums.cov;
                vp[s] = sums.vp;
                vq[s] = sums.vq;
            }
            prog.done();
        });
        double c = 0, a = 0, b = 0;
        for (size_t s = 0; s < n; ++s) {
            c += cov[s];
            a += vp[s];
            b += vq[s];
        }
        if (a > 0 && b > 0)
            value = c / std::sqrt(a * b);
    }
    out.push_back(result("prob_pearson", value, all.nf - (all.nPair - all.nw)));
    return out;
}

}  // namespace kcx::detail
