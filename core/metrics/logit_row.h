// The full-logit row kernel (SPEC 2.3): every metric of one pair of rows in three passes
// over the row, with the transcendental work (2 exp + 1 log per entry) done on blocks that
// stay in the L1 cache. Included once per instruction set by logit_row_*.cpp, each of which
// names the namespace and the exported table apart (see logit_row_fns.h). All three give
// the same doubles to the bit (tests/core/test_det_math.cpp), so a sign-off record does
// not depend on the CPU that made it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/base/det_math.h"
#include "core/metrics/logit_row_fns.h"

namespace kcx::detail {
namespace KCX_LOGIT_ISA {

constexpr size_t kBlock = 512;
constexpr size_t kExpLanes = 32;   // exps whose series run side by side (det::expN)

// The first i with x[i] == value: 64 entries at a time are tested without a branch (that
// loop vectorises), and only the block that holds it is searched one by one.
template <class T>
static inline size_t firstIndexOf(const T* x, size_t v, T value) {
    constexpr size_t kScan = 64;
    size_t i0 = 0;
    for (; i0 + kScan <= v; i0 += kScan) {
        int any = 0;
        for (size_t i = 0; i < kScan; ++i)
            any |= x[i0 + i] == value;
        if (any)
            break;
    }
    for (size_t i = i0; i < v; ++i)
        if (x[i] == value)
            return i;
    return 0;
}

// The sum of x[0..n) in one fixed order, whatever the vector width: eight running sums
// (sum j takes the entries i = j mod 8), added pairwise at the end. A vector unit of 2, 4 or
// 8 lanes holds the eight sums in its lanes and adds exactly what the scalar code adds, so
// every instruction set gives the same double (docs/signoff.md).
static inline double sum8(const double* x, size_t n) {
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; ++j)
            acc[j] += x[i + j];
    for (size_t j = 0; i + j < n; ++j)
        acc[j] += x[i + j];
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

// The largest of x[0..n), n > 0, in eight lanes like sum8; exact in any order unless x holds
// a NaN (the kernel then reports the row as not finite).
template <class T>
static inline T max8(const T* x, size_t n) {
    T acc[8];
    for (size_t j = 0; j < 8; ++j)
        acc[j] = x[0];
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; ++j)
            acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
    for (size_t j = 0; i + j < n; ++j)
        acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
    T m = acc[0];
    for (size_t j = 1; j < 8; ++j)
        m = acc[j] > m ? acc[j] : m;
    return m;
}

// Returns 0 when computed, 2 when a logit is not finite (the caller tells missing apart).
// `scratch` holds 2v doubles. JS costs a logarithm per entry, as much as the rest together,
// so it is computed only when asked for (out[kLogitJS] is left alone otherwise).
// Every operation is a plain IEEE operation on one entry (det::exp and det::log included),
// so the loops vectorise to any width with the same results; sums go through sum8.
template <bool WithJs, class TA, class TB>
static int logitRow(const TA* a, const TB* b, size_t v, double* scratch, double* out) {
    alignas(64) double t0[kBlock], t1[kBlock], t2[kBlock], t3[kBlock], t4[kBlock], t5[kBlock];

    // Pass 1, on the stored values: maxima and the range of the difference. A NaN or an
    // infinity makes `check` NaN (d * 0 is NaN exactly when d is not finite); without one,
    // maxima do not depend on the order they are taken in.
    // The maxima of a and b are taken block by block, while each block is in the cache.
    TA maxA = a[0];
    TB maxB = b[0];
    double dmax = -INFINITY, dmin = INFINITY, check = 0;
    for (size_t i0 = 0; i0 < v; i0 += kBlock) {
        const size_t n = std::min(kBlock, v - i0);
        for (size_t i = 0; i < n; ++i) {
            const double d = double(a[i0 + i]) - double(b[i0 + i]);
            t0[i] = d;
            t1[i] = -d;
            t2[i] = d * 0.0;
        }
        const TA ma = max8(a + i0, n);
        const TB mb = max8(b + i0, n);
        maxA = ma > maxA ? ma : maxA;
        maxB = mb > maxB ? mb : maxB;
        dmax = std::max(dmax, max8(t0, n));
        dmin = std::min(dmin, -max8(t1, n));
        check += sum8(t2, n);
    }
    if (!std::isfinite(double(maxA)) || !std::isfinite(double(maxB)) || !std::isfinite(check))
        return 2;
    const double mz = double(maxA), mq = double(maxB);

    // Pass 2: the unnormalised probabilities and their sums.
    double sz = 0, sq = 0;
    for (size_t i0 = 0; i0 < v; i0 += kBlock) {
        const size_t n = std::min(kBlock, v - i0);
        double* e = scratch + i0;
        double* f = scratch + v + i0;
        for (size_t i = 0; i < n; ++i) {
            t0[i] = double(a[i0 + i]) - mz;
            t1[i] = double(b[i0 + i]) - mq;
        }
        size_t i = 0;
        for (; i + kExpLanes <= n; i += kExpLanes) {
            det::expN<kExpLanes>(t0 + i, e + i);
            det::expN<kExpLanes>(t1 + i, f + i);
        }
        for (; i < n; ++i) {
            e[i] = det::exp(t0[i]);
            f[i] = det::exp(t1[i]);
        }
        sz += sum8(e, n);
        sq += sum8(f, n);
    }
    const double lzp = mz + det::log(sz), lzq = mq + det::log(sq);   // lp = z - lzp, lq = z' - lzq
    const double iz = 1.0 / sz, iq = 1.0 / sq;

    // Pass 3: everything that needs the normalised values; sums of e and f are scaled once.
    double tv = 0, klpq = 0, klqp = 0, js = 0, hp = 0, hq = 0;
    for (size_t i0 = 0; i0 < v; i0 += kBlock) {
        const size_t n = std::min(kBlock, v - i0);
        const double* e = scratch + i0;
        const double* f = scratch + v + i0;
        for (size_t i = 0; i < n; ++i) {
            const double lp = double(a[i0 + i]) - lzp;
            const double lq = double(b[i0 + i]) - lzq;
            t0[i] = std::fabs(e[i] * iz - f[i] * iq);
            t1[i] = e[i] * (lp - lq);
            t2[i] = f[i] * (lq - lp);
            t3[i] = e[i] * lp;
            t4[i] = f[i] * lq;
            if constexpr (WithJs) {
                // m = (p+q)/2; where m underflows to 0 both terms are 0.
                const double p = e[i] * iz, q = f[i] * iq;
                const double m = 0.5 * (p + q);
                const double lm = det::log(m);
                t5[i] = m > 0 ? p * (lp - lm) + q * (lq - lm) : 0.0;
            }
        }
        tv += sum8(t0, n);
        klpq += sum8(t1, n);
        klqp += sum8(t2, n);
        hp -= sum8(t3, n);
        hq -= sum8(t4, n);
        if constexpr (WithJs)
            js += sum8(t5, n);
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
