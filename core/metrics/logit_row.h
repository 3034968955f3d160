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

// Eight running maxima (or sums) of T, lane j for the entries i = j mod 8, like sum8's
// lanes, held in vectors of the machine's width (GCC's vector extension): one vector of
// eight where it fits, two or four narrower ones where it does not. Never wider than the
// machine: 64-byte vectors on AVX2 made the loop 40 % slower. The lanes are then taken in
// order 0..7, so every instruction set gives the same maximum, signed zeros included.
template <class T>
struct Lanes8 {
    static constexpr size_t L = std::min<size_t>(8, 8 * det::kVecLanes / sizeof(T));
    static constexpr size_t G = 8 / L;
    typedef T V __attribute__((vector_size(L * sizeof(T))));
    V acc[G];
    explicit Lanes8(T x) {
        for (size_t g = 0; g < G; ++g)
            acc[g] = V{} + x;
    }
    void max(const T* x) {
        for (size_t g = 0; g < G; ++g) {
            V xv;
            __builtin_memcpy(&xv, x + g * L, sizeof xv);
            acc[g] = xv > acc[g] ? xv : acc[g];
        }
    }
    void maxLane(size_t j, T x) { acc[j / L][j % L] = x > acc[j / L][j % L] ? x : acc[j / L][j % L]; }
    void addLane(size_t j, T x) { acc[j / L][j % L] += x; }
    T lane(size_t j) const { return acc[j / L][j % L]; }
    T max() const {
        T m = lane(0);
        for (size_t j = 1; j < 8; ++j)
            m = lane(j) > m ? lane(j) : m;
        return m;
    }
    T sum() const {
        T t = 0;
        for (size_t j = 0; j < 8; ++j)
            t += lane(j);
        return t;
    }
};

// Returns 0 when computed, 2 when a logit is not finite (the caller tells missing apart).
// `scratch` holds 2v doubles. JS costs a logarithm per entry, as much as the rest together,
// so it is computed only when asked for (out[kLogitJS] is left alone otherwise).
// Every operation is a plain IEEE operation on one entry (det::exp and det::log included),
// so the loops vectorise to any width with the same results; sums go through sum8.
template <bool WithJs, class TA, class TB>
static int logitRow(const TA* a, const TB* b, size_t v, double* scratch, double* out) {
    alignas(64) double t0[kBlock], t1[kBlock], t2[kBlock], t3[kBlock], t4[kBlock], t5[kBlock];

    // Pass 1, on the stored values: maxima and the range of the difference. A NaN or an
    // infinity makes `check` NaN (d * 0 is NaN exactly when d is not finite); only whether
    // it is finite matters. One loop per block over a and b, eight lanes at a time.
    TA maxA = a[0];
    TB maxB = b[0];
    double dmax = -INFINITY, dmin = INFINITY, check = 0;
    for (size_t i0 = 0; i0 < v; i0 += kBlock) {
        const size_t n = std::min(kBlock, v - i0);
        const TA* ab = a + i0;
        const TB* bb = b + i0;
        const double d0 = double(ab[0]) - double(bb[0]);
        Lanes8<TA> accA(ab[0]);
        Lanes8<TB> accB(bb[0]);
        Lanes8<double> accD(d0), accN(-d0), chk(0.0);
        using VD = Lanes8<double>::V;
        constexpr size_t L = Lanes8<double>::L;
        typedef TA VA __attribute__((vector_size(L * sizeof(TA))));
        typedef TB VB __attribute__((vector_size(L * sizeof(TB))));
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            accA.max(ab + i);
            accB.max(bb + i);
            for (size_t g = 0; g < Lanes8<double>::G; ++g) {
                VA xa;
                VB xb;
                __builtin_memcpy(&xa, ab + i + g * L, sizeof xa);
                __builtin_memcpy(&xb, bb + i + g * L, sizeof xb);
                const VD d = __builtin_convertvector(xa, VD) - __builtin_convertvector(xb, VD);
                const VD nd = -d;
                accD.acc[g] = d > accD.acc[g] ? d : accD.acc[g];
                accN.acc[g] = nd > accN.acc[g] ? nd : accN.acc[g];
                chk.acc[g] += d * 0.0;
            }
        }
        for (size_t j = 0; i + j < n; ++j) {
            const double d = double(ab[i + j]) - double(bb[i + j]);
            accA.maxLane(j, ab[i + j]);
            accB.maxLane(j, bb[i + j]);
            accD.maxLane(j, d);
            accN.maxLane(j, -d);
            chk.addLane(j, d * 0.0);
        }
        const TA ma = accA.max();
        const TB mb = accB.max();
        maxA = ma > maxA ? ma : maxA;
        maxB = mb > maxB ? mb : maxB;
        dmax = std::max(dmax, accD.max());
        dmin = std::min(dmin, -accN.max());
        check += chk.sum();
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
        // A vector of W lanes at a time, four side by side; the clamps of exp are left out
        // where all 4W values are in [-690, 690] (det::expVInRange: the same bits).
        size_t i = 0;
        constexpr size_t W = det::kVecLanes;
        for (; i + 2 * W <= n; i += 2 * W) {
            det::VecD x0, x1, x2, x3;
            __builtin_memcpy(&x0, t0 + i, sizeof x0);
            __builtin_memcpy(&x1, t0 + i + W, sizeof x0);
            __builtin_memcpy(&x2, t1 + i, sizeof x0);
            __builtin_memcpy(&x3, t1 + i + W, sizeof x0);
            const det::VecD lo01 = x0 < x1 ? x0 : x1, lo23 = x2 < x3 ? x2 : x3;
            const det::VecD hi01 = x0 > x1 ? x0 : x1, hi23 = x2 > x3 ? x2 : x3;
            const det::VecD lo = lo01 < lo23 ? lo01 : lo23, hi = hi01 > hi23 ? hi01 : hi23;
            bool inRange = true;
            for (size_t j = 0; j < W; ++j)
                inRange &= (lo[j] >= -690.0) & (hi[j] <= 690.0);
            det::VecD y0, y1, y2, y3;
            if (inRange) {
                y0 = det::expVInRange(x0), y1 = det::expVInRange(x1), y2 = det::expVInRange(x2), y3 = det::expVInRange(x3);
            } else {
                y0 = det::expV(x0), y1 = det::expV(x1), y2 = det::expV(x2), y3 = det::expV(x3);
            }
            __builtin_memcpy(e + i, &y0, sizeof x0);
            __builtin_memcpy(e + i + W, &y1, sizeof x0);
            __builtin_memcpy(f + i, &y2, sizeof x0);
            __builtin_memcpy(f + i + W, &y3, sizeof x0);
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
