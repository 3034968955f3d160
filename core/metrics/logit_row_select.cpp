// Picks the full-logit row kernel for this CPU (see logit_row_fns.h).
#include <cstdlib>
#include <cstring>

#include "core/metrics/logit_row_fns.h"

namespace kcx::detail {

namespace {
LogitRowFns choose() {
    const char* forced = std::getenv("KCX_ISA");
#if defined(__x86_64__) && defined(KCX_HAVE_ISA_KERNELS)
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    if (forced && std::strcmp(forced, "generic") == 0)
        return logitRowGeneric();
    if (forced && std::strcmp(forced, "avx2") == 0 && avx2)
        return logitRowAvx2();
    if (avx512 && !(forced && std::strcmp(forced, "avx2") == 0))
        return logitRowAvx512();
    if (avx2)
        return logitRowAvx2();
#else
    (void)forced;
#endif
    return logitRowGeneric();
}
}  // namespace

const LogitRowFns& logitRowFns() {
    static const LogitRowFns fns = choose();
    return fns;
}

}  // namespace kcx::detail
