// The full-logit row kernel for AVX2 + FMA (compiled with -mavx2 -mfma; see logit_row_fns.h).
#define KCX_LOGIT_ISA isa_avx2
#define KCX_LOGIT_TABLE logitRowAvx2
#define KCX_LOGIT_NAME "avx2"
#include "core/metrics/logit_row.h"
