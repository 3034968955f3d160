// The full-logit row kernel (SPEC 2.3): every metric of one pair of rows in three passes
// over the row, with the transcendental work (2 exp + 1 log per entry) done on blocks that
// stay in the L1 cache. Included once per instruction set by logit_row_*.cpp, each of which
// names the namespace, the exported table and Eigen itself apart (see logit_row_fns.h).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>

#include "core/metrics/logit_row_fns.h"

namespace kcx::detail {
namespace KCX_LOGIT_ISA {

constexpr size_t kBlock = 512;

template <class T>
static inline size_t firstIndexOf(const T* x, size_t v, T value) {
    for (size_t i = 0; i < v; ++i)
        if (x[i] == value)
            return i;
    return 0;
}

// Returns 0 when computed, 2 when a logit is not finite (the caller tells missing apart).
// `scratch` holds 2v doubles. JS costs a logarithm per entry, as much as the rest together,
// so it is computed only when asked for (out[kLogitJS] is left alone otherwise).
template <bool WithJs, class TA, class TB>
static int logitRow(const TA* a, const TB* b, size_t v, double* scratch, double* out) {
    using Eigen::Index;
    using Block = Eigen::Array<double, Eigen::Dynamic, 1, 0, kBlock, 1>;   // on the stack
    using MapA = Eigen::Map<const Eigen::Array<TA, Eigen::Dynamic, 1>>;
    using MapB = Eigen::Map<const Eigen::Array<TB, Eigen::Dynamic, 1>>;
    using MapD = Eigen::Map<Eigen::Array<double, Eigen::Dynamic, 1>>;

    // Pass 1, on the stored values: maxima and the range of the difference. A NaN or an
    // infinity shows up as a non-finite maximum or sum.
    const MapA za(a, Index(v));
    const MapB zb(b, Index(v));
    const TA maxA = za.maxCoeff();
    const TB maxB = zb.maxCoeff();
    double dmax = -INFINITY, dmin = INFINITY, check = 0;
    for (size_t i0 = 0; i0 < v; i0 += kBlock) {
        const Index n = Index(std::min(kBlock, v - i0));
        Block zd = za.segment(Index(i0), n).template cast<double>();
        Block d = zd - zb.segment(Index(i0), n).template cast<double>();
        dmax = std::max(dmax, d.maxCoeff());
        dmin = std::min(dmin, d.minCoeff());
        check += d.sum();
    }
    if (!std::isfinite(double(maxA)) || !std::isfinite(double(maxB)) || !std::isfinite(check))
        return 2;
    const double mz = double(maxA), mq = double(maxB);

    // Pass 2: the unnormalised probabilities and their sums.
    double sz = 0, sq = 0;
    for (size_t i0 = 0; i0 < v; i0 += kBlock) {
        const Index n = Index(std::min(kBlock, v - i0));
        MapD e(scratch + i0, n), f(scratch + v + i0, n);
        Block x = za.segment(Index(i0), n).template cast<double>();
        x -= mz;
        e = x.exp();
        x = zb.segment(Index(i0), n).template cast<double>();
        x -= mq;
        f = x.exp();
        sz += e.sum();
        sq += f.sum();
    }
    const double lzp = mz + std::log(sz), lzq = mq + std::log(sq);   // lp = z - lzp, lq = z' - lzq
    const double iz = 1.0 / sz, iq = 1.0 / sq;

    // Pass 3: everything that needs the normalised values; sums of e and f are scaled once.
    double tv = 0, klpq = 0, klqp = 0, js = 0, hp = 0, hq = 0;
    for (size_t i0 = 0; i0 < v; i0 += kBlock) {
        const Index n = Index(std::min(kBlock, v - i0));
        const MapD e(scratch + i0, n), f(scratch + v + i0, n);
        const Block lp = za.segment(Index(i0), n).template cast<double>() - lzp;
        const Block lq = zb.segment(Index(i0), n).template cast<double>() - lzq;
        tv += (e * iz - f * iq).abs().sum();
        klpq += (e * (lp - lq)).sum();
        klqp += (f * (lq - lp)).sum();
        hp -= (e * lp).sum();
        hq -= (f * lq).sum();
        if constexpr (WithJs) {
            // m = (p+q)/2; where m underflows to 0 both terms are 0.
            const Block m = 0.5 * (e * iz + f * iq);
            const Block lm = m.log();
            js += (m > 0).select(e * iz * (lp - lm) + f * iq * (lq - lm), 0.0).sum();
        }
    }
    out[kLogitTV] = std::max(0.5 * tv, 0.0);
    out[kLogitKLPQ] = std::max(klpq * iz, 0.0);
    out[kLogitKLQP] = std::max(klqp * iq, 0.0);
    if constexpr (WithJs)
        out[kLogitJS] = std::max(0.5 * js, 0.0);
    out[kLogitMAXABS] = std::max(std::fabs(dmax), std::fabs(dmin));
    out[kLogitDRIFT] = 0.5 * (dmax - dmin);
    out[kLogitHP] = hp * iz;
    out[kLogitHQ] = hq * iq;
    out[kLogitHDIFF] = out[kLogitHQ] - out[kLogitHP];
    out[kLogitTOP1] = firstIndexOf(a, v, maxA) == firstIndexOf(b, v, maxB) ? 1.0 : 0.0;
    return 0;
}

}  // namespace KCX_LOGIT_ISA

// The table this translation unit exports.
LogitRowFns KCX_LOGIT_TABLE() {
    using namespace KCX_LOGIT_ISA;
    return {KCX_LOGIT_NAME,
            {&logitRow<false, float, float>, &logitRow<false, float, double>, &logitRow<false, double, float>,
             &logitRow<false, double, double>},
            {&logitRow<true, float, float>, &logitRow<true, float, double>, &logitRow<true, double, float>,
             &logitRow<true, double, double>}};
}

}  // namespace kcx::detail
