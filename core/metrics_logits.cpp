// Full-logit metrics (SPEC 2.3): one pass over the rows computes all of them.
#include <Eigen/Core>
#include <cmath>

#include "core/metrics_kernels.h"
#include "core/parallel.h"

namespace kcx::detail {
namespace {

enum Idx { TV, KLPQ, KLQP, JS, MAXABS, DRIFT, HP, HQ, HDIFF, TOP1, kCount };
const char* kNames[kCount] = {"tv", "kl_train_inf", "kl_inf_train", "js", "max_abs_logit_diff",
                              "logit_drift", "entropy_train", "entropy_inf", "entropy_diff", kLogitTop1};

struct Scratch {
    Eigen::ArrayXd z, zq, p, q, lp, lq, m;
};

template <class T>
size_t firstArgmax(const T* x, size_t v) {
    size_t best = 0;
    for (size_t i = 1; i < v; ++i)
        if (x[i] > x[best])
            best = i;
    return best;
}

// Computes every metric of one row. Returns 0 when computed, 1 when the row holds a value
// that was not logged (JSON null: the row is missing), 2 when it holds a non-finite logit.
template <class TA, class TB>
int row(const TA* a, const TB* b, size_t v, Scratch& s, double out[kCount]) {
    using Eigen::ArrayXd;
    s.z = Eigen::Map<const Eigen::Array<TA, Eigen::Dynamic, 1>>(a, Eigen::Index(v)).template cast<double>();
    s.zq = Eigen::Map<const Eigen::Array<TB, Eigen::Dynamic, 1>>(b, Eigen::Index(v)).template cast<double>();
    if (!s.z.isFinite().all() || !s.zq.isFinite().all()) {
        for (size_t i = 0; i < v; ++i)
            if (isMissing(double(a[i])) || isMissing(double(b[i])))
                return 1;
        return 2;
    }
    // Stable log-softmax: subtract the max, accumulate the normaliser in double.
    const double mz = s.z.maxCoeff(), mq = s.zq.maxCoeff();
    s.p = (s.z - mz).exp();
    s.q = (s.zq - mq).exp();
    const double sz = s.p.sum(), sq = s.q.sum();
    s.p /= sz;
    s.q /= sq;
    s.lp = s.z - (mz + std::log(sz));
    s.lq = s.zq - (mq + std::log(sq));
    out[TV] = 0.5 * (s.p - s.q).abs().sum();
    out[KLPQ] = (s.p * (s.lp - s.lq)).sum();
    out[KLQP] = (s.q * (s.lq - s.lp)).sum();
    // JS with m = (p+q)/2; terms where m underflows to 0 contribute 0.
    s.m = 0.5 * (s.p + s.q);
    const ArrayXd logm = s.m.log();
    out[JS] = 0.5 * ((s.m > 0).select(s.p * (s.lp - logm), 0.0).sum() +
                     (s.m > 0).select(s.q * (s.lq - logm), 0.0).sum());
    const ArrayXd d = s.z - s.zq;
    const double dmax = d.maxCoeff(), dmin = d.minCoeff();
    out[MAXABS] = std::max(std::fabs(dmax), std::fabs(dmin));
    out[DRIFT] = 0.5 * (dmax - dmin);
    out[HP] = -(s.p * s.lp).sum();
    out[HQ] = -(s.q * s.lq).sum();
    out[HDIFF] = out[HQ] - out[HP];
    out[TOP1] = firstArgmax(a, v) == firstArgmax(b, v) ? 1.0 : 0.0;
    // Rounding can leave a divergence a hair below zero; they are non-negative by definition.
    for (int i : {TV, KLPQ, KLQP, JS})
        out[i] = std::max(out[i], 0.0);
    return 0;
}

}  // namespace

std::vector<MetricValues> logitMetrics(const Run& run, const MetricOptions& options,
                                       const Progress& progress) {
    const size_t m = run.tokenCount();
    std::vector<MetricValues> out(kCount);
    for (int k = 0; k < kCount; ++k) {
        out[k].name = kNames[k];
        out[k].level = MetricLevel::Token;
        out[k].values.assign(m, missingDouble());
    }
    const Logits& L = run.logits;
    const size_t rows = L.present() ? L.rows.size() : 0, v = size_t(L.vocab);
    const size_t chunks = std::clamp<size_t>(rows, 1, size_t(resolveThreads(options.threads)) * 16);
    ChunkProgress prog(progress, chunks);
    Counts counts;
    parallelChunks(rows, chunks, options.threads, [&](size_t, size_t b, size_t e) {
        Scratch scratch;
        uint64_t c = 0, miss = 0, nf = 0;
        double vals[kCount];
        for (size_t r = b; r < e; ++r) {
            int st = 0;
            L.train.visit([&](auto A) {
                L.inf.visit([&](auto B) { st = row(A.data(), B.data(), v, scratch, vals); }, r * v, v);
            }, r * v, v);
            const size_t t = size_t(L.rows[r]);
            if (st == 1) {
                ++miss;
                continue;
            }
            if (st == 2) {
                ++nf;
                for (int k = 0; k < kCount; ++k)
                    out[k].values[t] = nan();
                continue;
            }
            ++c;
            for (int k = 0; k < kCount; ++k)
                out[k].values[t] = vals[k];
        }
        counts.add(c, miss, nf);
        prog.done();
    });
    for (auto& o : out) {
        counts.into(o);
        o.missing += m - rows;
    }
    return out;
}

}  // namespace kcx::detail
