// Elementary functions that give the same double on every machine (docs/signoff.md, "Same
// results on every machine").
//
// glibc picks exp, log, expm1, pow and what is built on them (log1p, tanh, erfc) by the CPU
// at run time: on a CPU with FMA it runs a variant compiled for it, and the two differ in the
// last bit for some inputs (run anything with GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA to
// see it). A sign-off record binds the results' exact doubles, so every number a result or a
// bound is made of is computed here instead: range reduction and polynomials in plain IEEE
// double arithmetic, each operation rounded once (the project builds with -ffp-contract=off,
// so no compiler fuses a multiply and an add on one CPU and not on another). Written without
// branches on the value, so a loop of them vectorises; vector lanes compute exactly what the
// scalar code does, so the generic, AVX2 and AVX-512 logit kernels agree to the bit.
//
// Accuracy (tests/core/test_det_math): exp, log and log1p within 1.5 ulp of the true value
// over their whole range, expm1 and tanh within 4 ulp, erfc within 1e-14 relative. The polynomials are truncated Taylor series whose coefficients
// are 1/n! and 2/(2n+1), rounded once.
//
// Everything lies in an anonymous namespace: each translation unit, including the logit
// kernels compiled for wider instruction sets (core/metrics/logit_row_fns.h), keeps its own
// copy, so the linker never hands code built for AVX-512 to the baseline path.
#pragma once

#include <bit>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kcx::det {
namespace {

inline double fromBits(uint64_t b) { return std::bit_cast<double>(b); }
inline uint64_t toBits(double d) { return std::bit_cast<uint64_t>(d); }

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kShift = 0x1.8p52;                // adding it rounds to an integer
constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;    // k * kLn2Hi is exact for |k| < 2^20
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;   // ln 2 - kLn2Hi
constexpr double kExpMax = 0x1.62e42fefa39efp+9;   // largest x with a finite exp(x)
constexpr double kExpMin = -0x1.74910d52d3052p+9;  // below it exp(x) rounds to 0

// 2^k for an integer-valued double k in [-1022, 1023].
inline double pow2(double k) { return fromBits((toBits(k + kShift) + 1023) << 52); }

// e^r - 1 - r for |r| <= ln2/2, over r^2: the Taylor series to r^13 / 13!, coefficient c
// of r^c being 1 / (c + 2)!, evaluated by Horner's rule from the highest term.
constexpr double kExpTail[12] = {0x1.0000000000000p-1,  0x1.5555555555555p-3,  0x1.5555555555555p-5,
                                 0x1.1111111111111p-7,  0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
                                 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
                                 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33};

inline double expTail(double r) {
    double p = r * kExpTail[11];
    for (int c = 10; c >= 1; --c)
        p = r * (kExpTail[c] + p);
    return kExpTail[0] + p;
}

// exp's range reduction: x = k ln2 + r with |r| <= ln2/2 (x clamped to the finite range).
inline double expReduce(double x, double& k) {
    const double xc = x > kExpMax ? kExpMax : (x < kExpMin ? kExpMin : x);
    k = (xc * kInvLn2 + kShift) - kShift;
    return (xc - k * kLn2Hi) - k * kLn2Lo;
}

// e^x from the reduction and the series: e^r times 2^k, in two steps when 2^k alone would
// leave the normal range.
inline double expScale(double x, double k, double r, double tail) {
    const double er = 1.0 + (r + r * r * tail);
    const double k2 = k > 1000 ? 1000.0 : (k < -1000 ? -1000.0 : 0.0);
    const double s2 = k > 1000 ? 0x1p1000 : (k < -1000 ? 0x1p-1000 : 1.0);
    double y = er * pow2(k - k2) * s2;
    y = x > kExpMax ? kInf : y;
    return x < kExpMin ? 0.0 : y;   // a NaN has come through as a NaN
}

// e^x.
inline double exp(double x) {
    double k;
    const double r = expReduce(x, k);
    return expScale(x, k, r, expTail(r));
}

// e^x on the lanes of a vector of the machine's width (GCC's vector extension; 8 doubles
// with AVX-512, 4 with AVX2, 2 otherwise): exp's operations in exp's order, lane by lane,
// so each lane is det::exp to the bit. Written as vector operations because the compiler
// vectorised the scalar code poorly (the logit kernel's exps ran 1.5x faster this way).
#if defined(__AVX512F__)
constexpr size_t kVecLanes = 8;
#elif defined(__AVX2__)
constexpr size_t kVecLanes = 4;
#else
constexpr size_t kVecLanes = 2;
#endif
typedef double VecD __attribute__((vector_size(8 * kVecLanes)));
typedef int64_t VecI __attribute__((vector_size(8 * kVecLanes)));

inline VecD splat(double c) { return VecD{} + c; }

inline VecD expTailV(VecD r) {
    VecD p = r * kExpTail[11];
    for (int c = 10; c >= 1; --c)
        p = r * (kExpTail[c] + p);
    return kExpTail[0] + p;
}

inline VecD expV(VecD x) {
    const VecD xc = x > kExpMax ? splat(kExpMax) : (x < kExpMin ? splat(kExpMin) : x);
    const VecD k = (xc * kInvLn2 + kShift) - kShift;
    const VecD r = (xc - k * kLn2Hi) - k * kLn2Lo;
    const VecD er = 1.0 + (r + r * r * expTailV(r));
    const VecD k2 = k > 1000 ? splat(1000.0) : (k < -1000 ? splat(-1000.0) : splat(0.0));
    const VecD s2 = k > 1000 ? splat(0x1p1000) : (k < -1000 ? splat(0x1p-1000) : splat(1.0));
    const VecI kb = (VecI)((k - k2) + kShift);   // pow2(k - k2), as in exp
    VecD y = er * (VecD)((kb + 1023) << 52) * s2;
    y = x > kExpMax ? splat(kInf) : y;
    return x < kExpMin ? splat(0.0) : y;
}

// expV for lanes that all lie in [-690, 690], where its clamps and its two-step scaling
// change nothing (|k| <= 996 < 1000; k - 0 and a product with 1 are exact): the same bits
// with a fifth fewer operations.
inline VecD expVInRange(VecD x) {
    const VecD k = (x * kInvLn2 + kShift) - kShift;
    const VecD r = (x - k * kLn2Hi) - k * kLn2Lo;
    const VecD er = 1.0 + (r + r * r * expTailV(r));
    const VecI kb = (VecI)(k + kShift);
    return er * (VecD)((kb + 1023) << 52);
}

// y[i] = exp(x[i]) for i < n, expV a vector at a time: det::exp to the bit in every lane.
// x and y hold n rounded up to whole vectors (the lanes past n are computed and unused).
inline void expMany(const double* x, double* y, size_t n) {
    for (size_t i = 0; i < n; i += kVecLanes) {
        VecD v;
        __builtin_memcpy(&v, x + i, sizeof v);
        v = expV(v);
        __builtin_memcpy(y + i, &v, sizeof v);
    }
}

// ln(1 + f) for f = m - 1, m in [sqrt(1/2), sqrt(2)): with s = f / (2 + f),
// ln(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R), R = sum 2 s^2n / (2n + 1).
inline double log1pReduced(double f) {
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double R = z * (0x1.5555555555555p-1 +
                          z * (0x1.999999999999ap-2 +
                               z * (0x1.2492492492492p-2 +
                                    z * (0x1.c71c71c71c71cp-3 +
                                         z * (0x1.745d1745d1746p-3 +
                                              z * (0x1.3b13b13b13b14p-3 +
                                                   z * (0x1.1111111111111p-3 +
                                                        z * (0x1.e1e1e1e1e1e1ep-4 +
                                                             z * (0x1.af286bca1af28p-4 +
                                                                  z * 0x1.8618618618618p-4)))))))));
    const double hfsq = 0.5 * f * f;
    return f - (hfsq - s * (hfsq + R));
}

// ln x. x = 2^k m with m in [sqrt(1/2), sqrt(2)), found with integer operations only.
inline double log(double x) {
    const bool sub = x < 0x1p-1022;   // subnormal (or zero, or negative: replaced below)
    const double xs = sub ? x * 0x1p52 : x;
    const uint64_t ix = toBits(xs);
    const uint64_t kb = (ix - 0x3fe6a09e667f3bcdULL + (1024ULL << 52)) >> 52;   // k + 1024
    const double m = fromBits(ix - ((kb - 1024) << 52));
    const double k = (fromBits(0x4330000000000000ULL | kb) - 0x1p52) - (sub ? 1076.0 : 1024.0);
    const double f = m - 1.0;
    double y = k * kLn2Hi + (log1pReduced(f) + k * kLn2Lo);
    y += x * 0.0;   // NaN when x is a NaN or infinite (no x != x test: it stops vectorising)
    y = x == 0 ? -kInf : y;
    y = x < 0 ? std::numeric_limits<double>::quiet_NaN() : y;
    return x == kInf ? kInf : y;
}

// ln(1 + x): the log of u = 1 + x, corrected by what rounding u lost.
inline double log1p(double x) {
    const double u = 1.0 + x;
    double y = log(u) + (x - (u - 1.0)) / (u == 0 ? 1.0 : u);
    y = x == -1.0 ? -kInf : y;
    y = x < -1.0 ? std::numeric_limits<double>::quiet_NaN() : y;
    return x == kInf ? kInf : y;   // a NaN has come through log(u) as a NaN
}

// e^x - 1: the series near 0 (to x^14 / 14!), e^x - 1 beyond ln2/2.
inline double expm1(double x) {
    const double t = 0x1.0000000000000p-1 +
                     x * (0x1.5555555555555p-3 +
                          x * (0x1.5555555555555p-5 +
                               x * (0x1.1111111111111p-7 +
                                    x * (0x1.6c16c16c16c17p-10 +
                                         x * (0x1.a01a01a01a01ap-13 +
                                              x * (0x1.a01a01a01a01ap-16 +
                                                   x * (0x1.71de3a556c734p-19 +
                                                        x * (0x1.27e4fb7789f5cp-22 +
                                                             x * (0x1.ae64567f544e4p-26 +
                                                                  x * (0x1.1eed8eff8d898p-29 +
                                                                       x * (0x1.6124613a86d09p-33 +
                                                                            x * 0x1.93974a8c07c9dp-37)))))))))));
    const double small = x + x * x * t;
    const double large = exp(x) - 1.0;
    return std::fabs(x) <= 0.3465735902799726 ? small : large;
}

// tanh x = (e^2x - 1) / (e^2x + 1), from expm1 so that small x keeps its digits.
inline double tanh(double x) {
    const double a = std::fabs(x);
    const double t = expm1(2.0 * (a > 22 ? 22.0 : a));
    const double y = a > 22 ? 1.0 : t / (t + 2.0);
    return x != x ? x : std::copysign(y, x);
}

// erfc x: 1 - erf x by erf's Taylor series below 1; above, the continued fraction
// erfc x = e^(-x^2) / sqrt(pi) / (x + (1/2) / (x + (2/2) / (x + (3/2) / ...))) evaluated
// from depth 300, with e^(-x^2) split so that x^2 is not rounded first. Not vectorised:
// it decides a handful of numbers per evaluation.
inline double erfc(double x) {
    if (x != x)
        return x;
    const double a = std::fabs(x);
    double y;
    if (a < 1.0) {
        double sum = 0, p = a;
        for (int n = 0; n < 40; ++n) {
            sum += p / double(2 * n + 1);
            p *= -a * a / double(n + 1);
        }
        y = 1.0 - 0x1.20dd750429b6dp+0 * sum;   // 2 / sqrt(pi)
    } else if (a > 27.3) {
        y = 0.0;   // below the smallest subnormal
    } else {
        double t = a;
        for (int n = 300; n > 0; --n)
            t = a + (0.5 * n) / t;
        const double ah = fromBits(toBits(a) & ~((uint64_t(1) << 27) - 1));   // ah^2 is exact
        y = exp(-ah * ah) * exp(-(a - ah) * (a + ah)) * 0x1.20dd750429b6dp-1 / t;   // 1 / sqrt(pi)
    }
    return x < 0 ? 2.0 - y : y;
}

}  // namespace
}  // namespace kcx::det
