// Certified lower bounds from the two kernels' top-k lists (SPEC 2.2).
#include <algorithm>
#include <cmath>

#include "core/base/parallel.h"
#include "core/base/det_math.h"
#include "core/metrics/metrics_kernels.h"

namespace kcx::detail {
namespace {

struct Entry {
    int32_t id;
    double logp;
};

// Reads one top-k row; 0 usable, 1 missing, 2 non-finite. Sorted most likely first.
int readRow(const TopK& t, size_t pos, std::vector<Entry>& row) {
    const size_t k = size_t(t.k);
    row.resize(k);
    int state = 0;
    for (size_t j = 0; j < k; ++j) {
        const double lp = t.logp[pos * k + j];
        if (isMissing(lp))
            state = 1;
        else if (!std::isfinite(lp) && state == 0)
            state = 2;
        row[j] = {t.ids[pos * k + j], lp};
    }
    if (state == 0 && !std::is_sorted(row.begin(), row.end(),
                                      [](const Entry& x, const Entry& y) { return x.logp > y.logp; }))
        std::stable_sort(row.begin(), row.end(), [](const Entry& x, const Entry& y) { return x.logp > y.logp; });
    return state;
}

struct Bounds {
    double tv, kl, top1;
    bool klFinite;
};

Bounds bounds(const std::vector<Entry>& a, std::vector<Entry>& bById) {
    std::sort(bById.begin(), bById.end(), [](const Entry& x, const Entry& y) { return x.id < y.id; });
    double P = 0, Q = 0, sumAbs = 0, kl = 0;
    for (const Entry& e : a) {
        const auto it = std::lower_bound(bById.begin(), bById.end(), e.id,
                                         [](const Entry& x, int32_t id) { return x.id < id; });
        if (it == bById.end() || it->id != e.id)
            continue;
        const double p = det::exp(e.logp), q = det::exp(it->logp);
        P += p;
        Q += q;
        sumAbs += std::fabs(p - q);
        kl += p * (e.logp - it->logp);
    }
    const double restP = std::max(0.0, 1.0 - P), restQ = std::max(0.0, 1.0 - Q);
    Bounds out{0.5 * (sumAbs + std::fabs(restP - restQ)), kl, 0, true};
    // When the lists cover (almost) all the mass, 1 - P is rounding noise: a rest of at
    // most kRestNoise counts as zero, so 0 log(0/0) = 0 rather than an infinite bound.
    constexpr double kRestNoise = 1e-9;
    if (restP > kRestNoise || (restP > 0 && restQ > 0)) {
        if (restQ > 0)
            out.kl += restP * det::log(restP / restQ);
        else
            out.klFinite = false;
    }
    out.kl = std::max(out.kl, 0.0);
    return out;
}

}  // namespace

std::vector<MetricValues> topkMetrics(const Run& run, const MetricOptions& options, const MetricValues& tv,
                                      const MetricValues& kl, const MetricValues& logitTop1,
                                      const Progress& progress) {
    const size_t m = run.tokenCount();
    std::vector<MetricValues> out(3);
    const char* names[] = {"tv_lower", "kl_lower", "top1_agree"};
    for (int k = 0; k < 3; ++k) {
        out[k].name = names[k];
        out[k].level = MetricLevel::Token;
        out[k].values.assign(m, missingDouble());
    }
    const bool haveTopk = run.hasTopK();
    const Logits& L = run.logits;
    const size_t chunks = chunkCount(m, options.threads);
    ChunkProgress prog(progress, chunks);
    Counts cTv, cKl, cTop;
    parallelChunks(m, chunks, options.threads, [&](size_t, size_t b, size_t e) {
        std::vector<Entry> ra, rb;
        uint64_t n[3] = {0, 0, 0}, miss[3] = {0, 0, 0}, nf[3] = {0, 0, 0};
        size_t lr = L.present() ? size_t(std::lower_bound(L.rows.begin(), L.rows.end(), int64_t(b)) - L.rows.begin())
                                : 0;
        auto put = [&](int k, size_t i, double v) {
            out[k].values[i] = v;
            ++n[k];
        };
        for (size_t i = b; i < e; ++i) {
            bool hasRow = false;
            if (L.present() && lr < L.rows.size() && size_t(L.rows[lr]) == i) {
                hasRow = true;
                ++lr;
            }
            // The exact value wins (SPEC 2.4), a non-finite one too; a row with a value
            // that was not logged is no row, and top-k decides.
            if (hasRow && !isMissing(tv.values[i])) {
                if (std::isnan(tv.values[i])) {
                    for (int k = 0; k < 3; ++k) {
                        ++nf[k];
                        out[k].values[i] = nan();
                    }
                    continue;
                }
                put(0, i, tv.values[i]);
                put(1, i, kl.values[i]);
                put(2, i, logitTop1.values[i]);
                continue;
            }
            int st;
            if (!haveTopk) {
                st = 1;   // no top-k, and no usable logit row
            } else {
                const int sa = readRow(run.topkTrain, i, ra), sb = readRow(run.topkInf, i, rb);
                st = (sa == 1 || sb == 1) ? 1 : std::max(sa, sb);
            }
            if (st) {
                for (int k = 0; k < 3; ++k) {
                    (st == 1 ? miss[k] : nf[k])++;
                    if (st == 2)
                        out[k].values[i] = nan();
                }
                continue;
            }
            const double top1 = ra[0].id == rb[0].id ? 1.0 : 0.0;
            const Bounds bd = bounds(ra, rb);
            put(0, i, bd.tv);
            put(2, i, top1);
            if (bd.klFinite) {
                put(1, i, bd.kl);
            } else {
                ++nf[1];
                out[1].values[i] = nan();
            }
        }
        cTv.add(n[0], miss[0], nf[0]);
        cKl.add(n[1], miss[1], nf[1]);
        cTop.add(n[2], miss[2], nf[2]);
        prog.done();
    });
    cTv.into(out[0]);
    cKl.into(out[1]);
    cTop.into(out[2]);
    return out;
}

}  // namespace kcx::detail
