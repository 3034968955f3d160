// The full-logit row kernel for AVX-512 F/DQ (see logit_row_fns.h).
#define KCX_LOGIT_ISA isa_avx512
#define KCX_LOGIT_TABLE logitRowAvx512
#define KCX_LOGIT_NAME "avx512"
#include "core/metrics/logit_row.h"
