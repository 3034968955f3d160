// Runtime choice of the full-logit row kernel by instruction set.
//
// logit_row.h is compiled three times: logit_row_generic.cpp (the baseline x86-64 or any
// other target), logit_row_avx2.cpp (-mavx2 -mfma) and logit_row_avx512.cpp (AVX-512 F/DQ).
// Each defines its own table; logitRowFns() picks the best one the CPU runs. The three give
// the same doubles to the bit: the kernel is plain IEEE arithmetic with det::exp/det::log
// (core/base/det_math.h) and sums in a fixed order, built with -ffp-contract=off, so the
// choice changes the speed and never a result (docs/signoff.md). To keep code built for a
// wider instruction set out of the baseline path, the kernel and det_math live in
// translation-unit-local namespaces (nothing the linker could merge with the baseline's
// copies) and the wide units use no other inline library code.
#pragma once

#include <cstddef>

namespace kcx::detail {

enum LogitIdx {
    kLogitTV, kLogitKLPQ, kLogitKLQP, kLogitJS, kLogitMAXABS, kLogitDRIFT, kLogitHP, kLogitHQ, kLogitHDIFF,
    kLogitTOP1, kLogitCount
};

// Returns 0 when computed, 2 when a logit is not finite. `scratch` holds 2v doubles.
template <class TA, class TB>
using LogitRowFn = int (*)(const TA* a, const TB* b, size_t v, double* scratch, double* out);

struct LogitRowKernels {
    LogitRowFn<float, float> ff;
    LogitRowFn<float, double> fd;
    LogitRowFn<double, float> df;
    LogitRowFn<double, double> dd;
};

struct LogitRowFns {
    const char* isa;
    LogitRowKernels plain;   // every metric but js
    LogitRowKernels withJs;  // every metric
};

LogitRowFns logitRowGeneric();
LogitRowFns logitRowAvx2();     // only where the compiler targets x86-64
LogitRowFns logitRowAvx512();

// The widest kernel this CPU runs; KCX_ISA=generic|avx2|avx512 forces one (benchmarks).
const LogitRowFns& logitRowFns();

}  // namespace kcx::detail
