// The per-token log-prob kernels for AVX-512 F/DQ (see token_kernels_fns.h).
#define KCX_TOKEN_ISA tok_avx512
#define KCX_TOKEN_TABLE tokenKernelsAvx512
#define KCX_TOKEN_NAME "avx512"
#include "core/metrics/token_kernels.h"
