// Picks the full-logit row kernel and the per-token log-prob kernels for this CPU (see
// logit_row_fns.h and token_kernels_fns.h).
#include <cstdlib>
#include <cstring>

#include "core/formats/run.h"
#include "core/metrics/logit_row_fns.h"
#include "core/metrics/token_kernels_fns.h"

namespace kcx::detail {

// token_kernels.h spells the "missing" NaNs out; they must be run.h's.
static_assert(kMissingBits32 == 0x7fc0dea1U && kMissingBits64 == 0x7ff80000000dead1ULL);

namespace {
enum class Isa { Generic, Avx2, Avx512 };

Isa chooseIsa() {
    const char* forced = std::getenv("KCX_ISA");
#if defined(__x86_64__) && defined(KCX_HAVE_ISA_KERNELS)
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    if (forced && std::strcmp(forced, "generic") == 0)
        return Isa::Generic;
    if (forced && std::strcmp(forced, "avx2") == 0 && avx2)
        return Isa::Avx2;
    if (avx512)
        return Isa::Avx512;
    if (avx2)
        return Isa::Avx2;
#else
    (void)forced;
#endif
    return Isa::Generic;
}

Isa isa() {
    static const Isa chosen = chooseIsa();
    return chosen;
}
}  // namespace

const LogitRowFns& logitRowFns() {
    static const LogitRowFns fns = [] {
#if defined(__x86_64__) && defined(KCX_HAVE_ISA_KERNELS)
        if (isa() == Isa::Avx512)
            return logitRowAvx512();
        if (isa() == Isa::Avx2)
            return logitRowAvx2();
#endif
        return logitRowGeneric();
    }();
    return fns;
}

const TokenKernels& tokenKernels() {
    static const TokenKernels fns = [] {
#if defined(__x86_64__) && defined(KCX_HAVE_ISA_KERNELS)
        if (isa() == Isa::Avx512)
            return tokenKernelsAvx512();
        if (isa() == Isa::Avx2)
            return tokenKernelsAvx2();
#endif
        return tokenKernelsGeneric();
    }();
    return fns;
}

}  // namespace kcx::detail
