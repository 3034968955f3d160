// Full-logit metrics (SPEC 2.3): one pass over the rows computes all of them.
#include <cmath>
#include <memory>
#include <new>

#include "core/base/parallel.h"
#include "core/metrics/logit_row_fns.h"
#include "core/metrics/metrics_kernels.h"

namespace kcx::detail {
namespace {

struct AlignedDelete {
    void operator()(double* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

const char* kNames[kLogitCount] = {"tv", "kl_train_inf", "kl_inf_train", "js", "max_abs_logit_diff",
                                   "logit_drift", "entropy_train", "entropy_inf", "entropy_diff", kLogitTop1};

int callRow(const LogitRowKernels& f, const float* a, const float* b, size_t v, double* s, double* o) { return f.ff(a, b, v, s, o); }
int callRow(const LogitRowKernels& f, const float* a, const double* b, size_t v, double* s, double* o) { return f.fd(a, b, v, s, o); }
int callRow(const LogitRowKernels& f, const double* a, const float* b, size_t v, double* s, double* o) { return f.df(a, b, v, s, o); }
int callRow(const LogitRowKernels& f, const double* a, const double* b, size_t v, double* s, double* o) { return f.dd(a, b, v, s, o); }

// A row with a value that was not logged (JSON null) is missing, not non-finite.
template <class TA, class TB>
bool anyMissing(const TA* a, const TB* b, size_t v) {
    for (size_t i = 0; i < v; ++i)
        if (isMissing(double(a[i])) || isMissing(double(b[i])))
            return true;
    return false;
}

}  // namespace

std::vector<MetricValues> logitMetrics(const Run& run, const MetricOptions& options,
                                       const Progress& progress, bool withJs,
                                       const std::function<bool(const std::string&)>& keep) {
    const size_t m = run.tokenCount();
    std::vector<MetricValues> out(kLogitCount);
    bool kept[kLogitCount];
    for (int k = 0; k < kLogitCount; ++k) {
        out[k].name = kNames[k];
        out[k].level = MetricLevel::Token;
        kept[k] = (k != kLogitJS || withJs) && (!keep || keep(out[k].name));
        if (kept[k])
            out[k].values.assign(m, missingDouble());
    }
    const Logits& L = run.logits;
    const size_t rows = L.present() ? L.rows.size() : 0, v = size_t(L.vocab);
    const size_t chunks = std::clamp<size_t>(rows, 1, size_t(resolveThreads(options.threads)) * 16);
    ChunkProgress prog(progress, chunks);
    Counts counts;
    parallelChunks(rows, chunks, options.threads, [&](size_t, size_t b, size_t e) {
        const LogitRowKernels& fns = withJs ? logitRowFns().withJs : logitRowFns().plain;
        // 64-byte aligned for the vector loads; the sums' order does not depend on it.
        std::unique_ptr<double[], AlignedDelete> scratch(
            static_cast<double*>(::operator new[](2 * v * sizeof(double) + 64, std::align_val_t(64))));
        uint64_t c = 0, miss = 0, nf = 0;
        double vals[kLogitCount] = {};
        for (size_t r = b; r < e; ++r) {
            int st = 0;
            L.train.visit([&](auto A) {
                L.inf.visit([&](auto B) {
                    st = callRow(fns, A.data(), B.data(), v, scratch.get(), vals);
                    if (st == 2 && anyMissing(A.data(), B.data(), v))
                        st = 1;
                }, r * v, v);
            }, r * v, v);
            const size_t t = size_t(L.rows[r]);
            if (st == 1) {
                ++miss;
                continue;
            }
            if (st == 2) {
                ++nf;
                for (int k = 0; k < kLogitCount; ++k)
                    if (kept[k])
                        out[k].values[t] = nan();
                continue;
            }
            ++c;
            for (int k = 0; k < kLogitCount; ++k)
                if (kept[k])
                    out[k].values[t] = vals[k];
        }
        counts.add(c, miss, nf);
        prog.done();
    });
    for (auto& o : out) {
        counts.into(o);
        o.missing += m - rows;
    }
    std::vector<MetricValues> result;
    for (int k = 0; k < kLogitCount; ++k)
        if (kept[k])
            result.push_back(std::move(out[k]));
    return result;
}

}  // namespace kcx::detail
