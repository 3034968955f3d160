// The full-logit row kernel for the baseline instruction set.
#define KCX_LOGIT_ISA isa_generic
#define KCX_LOGIT_TABLE logitRowGeneric
#define KCX_LOGIT_NAME "generic"
#include "core/metrics/logit_row.h"
