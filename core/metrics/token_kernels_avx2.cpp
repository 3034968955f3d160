// The per-token log-prob kernels for AVX2 (see token_kernels_fns.h).
#define KCX_TOKEN_ISA tok_avx2
#define KCX_TOKEN_TABLE tokenKernelsAvx2
#define KCX_TOKEN_NAME "avx2"
#include "core/metrics/token_kernels.h"
