// The per-token log-prob kernels (SPEC 2.1, and the run-level sums of 2.4a). Included once
// per instruction set by token_kernels_*.cpp, each of which names the namespace and the
// exported table apart (see token_kernels_fns.h). Like logit_row.h, this code uses no
// inline library function the linker could merge with the baseline's copy: raw pointers,
// compiler builtins and det_math (itself translation-unit local).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "core/base/det_math.h"
#include "core/metrics/token_kernels_fns.h"

namespace kcx::detail {
namespace KCX_TOKEN_ISA {

// The "missing" NaNs of core/formats/run.h (kMissingBits32/64; token_kernels_select.cpp
// checks they are the same).
static inline bool missingValue(float x) { return std::bit_cast<uint32_t>(x) == 0x7fc0dea1U; }
static inline bool missingValue(double x) { return std::bit_cast<uint64_t>(x) == 0x7ff80000000dead1ULL; }

// 0 usable, 1 missing, 2 not finite (as metrics_logprob.cpp's inputState).
template <class TA, class TB>
static inline int stateOf(TA a, TB b) {
    if (missingValue(a) || missingValue(b))
        return 1;
    if (!__builtin_isfinite(a) || !__builtin_isfinite(b))
        return 2;
    return 0;
}

template <TokenOp op>
static inline double apply(double r, double a, double b, double clip) {
    if constexpr (op == TokenOp::LogRatio) return r;
    else if constexpr (op == TokenOp::AbsLogRatio) return __builtin_fabs(r);
    else if constexpr (op == TokenOp::Ratio) return det::exp(r);
    else if constexpr (op == TokenOp::ProbDiff) return __builtin_fabs(det::exp(a) - det::exp(b));
    else if constexpr (op == TokenOp::K1) return -r;
    else if constexpr (op == TokenOp::K2) return 0.5 * r * r;
    else if constexpr (op == TokenOp::K3) return det::expm1(r) - r;
    else if constexpr (op == TokenOp::Chi2) { const double w = det::exp(r); return w * w - 1.0; }
    else { const double w = det::exp(r); return (w < 1.0 - clip || w > 1.0 + clip) ? 1.0 : 0.0; }
}

// Two loops: GCC vectorises the first (det::exp included) only without the count.
template <TokenOp op, class TA, class TB>
static size_t tokenOp(const TA* A, const TB* B, size_t n, double clip, double* out) {
    constexpr double kMax = 0x1.fffffffffffffp+1023;
    for (size_t i = 0; i < n; ++i) {
        const double a = A[i], b = B[i];
        out[i] = apply<op>(a - b, a, b, clip);
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const double a = A[i], b = B[i], v = out[i];
        bad += !(__builtin_fabs(a) <= kMax) | !(__builtin_fabs(b) <= kMax) | !(__builtin_fabs(v) <= kMax);
    }
    return bad;
}

constexpr size_t kRunBlock = 256;

// The exps of a block first (they vectorise), then the sums in token order (they cannot:
// each is one running sum, and reordering it would change the result's last bits).
template <class TA, class TB>
static void runSeq(const TA* A, const TB* B, size_t n, RunSeqSums* o) {
    RunSeqSums p = *o;
    double w[kRunBlock], ea[kRunBlock], eq[kRunBlock];
    for (size_t b0 = 0; b0 < n; b0 += kRunBlock) {
        const size_t m = n - b0 < kRunBlock ? n - b0 : kRunBlock;
        const TA* a = A + b0;
        const TB* b = B + b0;
        for (size_t i = 0; i < m; ++i) {
            const double x = a[i], q = b[i];
            w[i] = det::exp(x - q);
            ea[i] = det::exp(x);
            eq[i] = det::exp(q);
        }
        for (size_t i = 0; i < m; ++i) {
            const int st = stateOf(a[i], b[i]);
            if (st) {
                (st == 1 ? p.miss : p.nf)++;
                continue;
            }
            const double x = a[i], q = b[i];
            ++p.nPair;
            p.sumDiff += q - x;
            p.sp += ea[i];
            p.sq += eq[i];
            if (__builtin_isfinite(w[i])) {
                ++p.nw;
                p.sw += w[i];
                p.sw2 += w[i] * w[i];
            } else {
                ++p.nf;
            }
        }
    }
    *o = p;
}

template <class TA, class TB>
static void pearsonSeq(const TA* A, const TB* B, size_t n, double mp, double mq, PearsonSums* o) {
    PearsonSums s = *o;
    double dp[kRunBlock], dq[kRunBlock];
    for (size_t b0 = 0; b0 < n; b0 += kRunBlock) {
        const size_t m = n - b0 < kRunBlock ? n - b0 : kRunBlock;
        const TA* a = A + b0;
        const TB* b = B + b0;
        for (size_t i = 0; i < m; ++i) {
            dp[i] = det::exp(double(a[i])) - mp;
            dq[i] = det::exp(double(b[i])) - mq;
        }
        for (size_t i = 0; i < m; ++i) {
            if (stateOf(a[i], b[i]))
                continue;
            s.cov += dp[i] * dq[i];
            s.vp += dp[i] * dp[i];
            s.vq += dq[i] * dq[i];
        }
    }
    *o = s;
}

template <class TA, class TB>
static TokenKernelSet<TA, TB> kernelSet() {
    return {{&tokenOp<TokenOp::LogRatio, TA, TB>, &tokenOp<TokenOp::AbsLogRatio, TA, TB>,
             &tokenOp<TokenOp::Ratio, TA, TB>, &tokenOp<TokenOp::ProbDiff, TA, TB>,
             &tokenOp<TokenOp::K1, TA, TB>, &tokenOp<TokenOp::K2, TA, TB>, &tokenOp<TokenOp::K3, TA, TB>,
             &tokenOp<TokenOp::Chi2, TA, TB>, &tokenOp<TokenOp::ClipExcess, TA, TB>},
            &runSeq<TA, TB>,
            &pearsonSeq<TA, TB>};
}

}  // namespace KCX_TOKEN_ISA

TokenKernels KCX_TOKEN_TABLE() {
    using namespace KCX_TOKEN_ISA;
    return {KCX_TOKEN_NAME, kernelSet<float, float>(), kernelSet<float, double>(), kernelSet<double, float>(),
            kernelSet<double, double>()};
}

}  // namespace kcx::detail
