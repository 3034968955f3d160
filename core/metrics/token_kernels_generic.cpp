// The per-token log-prob kernels for the baseline instruction set (see token_kernels_fns.h).
#define KCX_TOKEN_ISA tok_generic
#define KCX_TOKEN_TABLE tokenKernelsGeneric
#define KCX_TOKEN_NAME "generic"
#include "core/metrics/token_kernels.h"
