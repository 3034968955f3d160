// Runtime choice of the per-token log-prob kernels by instruction set.
//
// token_kernels.h is compiled three times, as the full-logit row kernel is (see
// logit_row_fns.h): token_kernels_generic.cpp, token_kernels_avx2.cpp and
// token_kernels_avx512.cpp. The kernels are plain IEEE arithmetic with det::exp (no fused
// multiply-add, -ffp-contract=off) and every sum runs in the order the scalar code adds, so
// the three give the same doubles to the bit (tests/core/test_det_math.cpp): the choice
// changes the speed, never a printed number or a sign-off record.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kcx::detail {

// The per-token metrics of SPEC 2.1 that read only the sampled tokens' log-probs.
enum class TokenOp { LogRatio, AbsLogRatio, Ratio, ProbDiff, K1, K2, K3, Chi2, ClipExcess };
inline constexpr int kTokenOps = 9;

// out[i] = op(a[i], b[i]) for i < n; returns how many positions have an input or a result
// that is not finite (missing inputs are NaNs, so they count too): the caller sorts those
// out. `clip` is clip_excess's ε.
template <class TA, class TB>
using TokenOpFn = size_t (*)(const TA* a, const TB* b, size_t n, double clip, double* out);

// The run-level sums of one sequence (ess, log_ppl_diff, prob_pearson's means), added token
// by token in order, skipping positions whose inputs are missing or not finite.
struct RunSeqSums {
    double sw = 0, sw2 = 0, sp = 0, sq = 0, sumDiff = 0;
    uint64_t nw = 0, nPair = 0, miss = 0, nf = 0;
};
template <class TA, class TB>
using RunSeqFn = void (*)(const TA* a, const TB* b, size_t n, RunSeqSums* out);

// prob_pearson's second pass over one sequence: the centred cross and square sums, in order.
struct PearsonSums {
    double cov = 0, vp = 0, vq = 0;
};
template <class TA, class TB>
using PearsonSeqFn = void (*)(const TA* a, const TB* b, size_t n, double mp, double mq, PearsonSums* out);

template <class TA, class TB>
struct TokenKernelSet {
    TokenOpFn<TA, TB> op[kTokenOps];
    RunSeqFn<TA, TB> runSeq;
    PearsonSeqFn<TA, TB> pearsonSeq;
};

struct TokenKernels {
    const char* isa;
    TokenKernelSet<float, float> ff;
    TokenKernelSet<float, double> fd;
    TokenKernelSet<double, float> df;
    TokenKernelSet<double, double> dd;

    template <class TA, class TB>
    const TokenKernelSet<TA, TB>& of() const {
        if constexpr (sizeof(TA) == 4 && sizeof(TB) == 4) return ff;
        else if constexpr (sizeof(TA) == 4) return fd;
        else if constexpr (sizeof(TB) == 4) return df;
        else return dd;
    }
};

TokenKernels tokenKernelsGeneric();
TokenKernels tokenKernelsAvx2();     // only where the compiler targets x86-64
TokenKernels tokenKernelsAvx512();

// The widest kernels this CPU runs; KCX_ISA=generic|avx2|avx512 forces one (benchmarks).
const TokenKernels& tokenKernels();

}  // namespace kcx::detail
