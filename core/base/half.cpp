// 16- and 8-bit floating formats: exact decoders, round-to-nearest-even encoders.
#include "core/base/half.h"

#include <bit>
#include <cmath>

namespace kcx {

namespace {

float fromBits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t toBits(float f) { return std::bit_cast<uint32_t>(f); }

// A value m * 2^e, built exactly (m small, e within float range for every caller).
float scaled(uint32_t m, int e) { return std::ldexp(float(m), e); }

// `v >> shift`, rounded to nearest, ties to even (shift in 1..31).
uint32_t shiftRoundEven(uint32_t v, int shift) {
    const uint32_t q = v >> shift;
    const uint32_t rest = v & ((uint32_t(1) << shift) - 1);
    const uint32_t half = uint32_t(1) << (shift - 1);
    return (rest > half || (rest == half && (q & 1))) ? q + 1 : q;
}

}  // namespace

float halfToFloat(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t man = h & 0x3ff;
    if (exp == 0x1f)   // infinity or NaN (payload kept)
        return fromBits(sign | 0x7f800000 | (man << 13));
    if (exp == 0) {    // zero or subnormal: man * 2^-24
        const float v = scaled(man, -24);
        return sign ? -v : v;
    }
    return fromBits(sign | ((exp + 112) << 23) | (man << 13));
}

float bf16ToFloat(uint16_t b) { return fromBits(uint32_t(b) << 16); }

float fp8e4m3ToFloat(uint8_t v) {
    const bool neg = v & 0x80;
    const uint32_t exp = (v >> 3) & 0xf;
    const uint32_t man = v & 0x7;
    float r;
    if (exp == 0xf && man == 0x7)
        r = std::nanf("");
    else if (exp == 0)
        r = scaled(man, -9);                     // subnormal: man/8 * 2^(1-7)
    else
        r = scaled(8 + man, int(exp) - 7 - 3);   // (1 + man/8) * 2^(exp-7)
    return neg ? -r : r;
}

float fp8e5m2ToFloat(uint8_t v) {
    const bool neg = v & 0x80;
    const uint32_t exp = (v >> 2) & 0x1f;
    const uint32_t man = v & 0x3;
    float r;
    if (exp == 0x1f)
        r = man ? std::nanf("") : INFINITY;
    else if (exp == 0)
        r = scaled(man, -16);                    // subnormal: man/4 * 2^(1-15)
    else
        r = scaled(4 + man, int(exp) - 15 - 2);  // (1 + man/4) * 2^(exp-15)
    return neg ? -r : r;
}

uint16_t floatToBf16(float f) {
    const uint32_t b = toBits(f);
    if (std::isnan(f))   // keep the sign and the top of the payload; force a quiet NaN
        return uint16_t((b >> 16) | 0x0040);
    // Overflow rounds into the infinity encoding, as it should.
    return uint16_t((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

uint16_t floatToHalf(float f) {
    const uint32_t b = toBits(f);
    const uint16_t sign = uint16_t((b >> 16) & 0x8000);
    const uint32_t abs = b & 0x7fffffff;
    const int e = int(abs >> 23);   // biased float exponent
    if (abs >= 0x7f800000)          // infinity or NaN
        return uint16_t(sign | (abs > 0x7f800000 ? 0x7e00 | ((abs >> 13) & 0x3ff) : 0x7c00));
    if (e >= 143)                   // 2^16 and above: infinity
        return uint16_t(sign | 0x7c00);
    const uint32_t man = (abs & 0x7fffff) | (e ? 0x800000 : 0);
    if (e < 113) {                  // below 2^-14: a half subnormal, man * 2^(e-126) units of 2^-24
        const int shift = 126 - (e ? e : 1);
        if (shift > 24)
            return sign;
        return uint16_t(sign | shiftRoundEven(man, shift));   // may round up to the smallest normal
    }
    // Normal: the carry of the rounding runs into the exponent (and up to infinity).
    const uint32_t h = (uint32_t(e - 112) << 10) | ((abs & 0x7fffff) >> 13);
    const uint32_t rest = abs & 0x1fff;
    const bool up = rest > 0x1000 || (rest == 0x1000 && (h & 1));
    return uint16_t(sign | (h + (up ? 1 : 0)));
}

uint8_t floatToFp8e4m3(float f) {
    const uint32_t b = toBits(f);
    const uint8_t sign = uint8_t((b >> 24) & 0x80);
    if (std::isnan(f))
        return uint8_t(sign | 0x7f);
    const uint32_t abs = b & 0x7fffffff;
    const int e = int(abs >> 23);
    if (e >= 136)                   // 2^9 and above (and infinity): saturate
        return uint8_t(sign | 0x7e);
    const uint32_t man = (abs & 0x7fffff) | (e ? 0x800000 : 0);
    uint32_t code;
    if (e < 121) {                  // below 2^-6: subnormal, man * 2^(e-141) units of 2^-9
        const int shift = 141 - (e ? e : 1);
        if (shift > 24)
            return sign;
        code = shiftRoundEven(man, shift);
    } else {
        const uint32_t c = (uint32_t(e - 120) << 3) | ((abs & 0x7fffff) >> 20);
        const uint32_t rest = abs & 0xfffff;
        const bool up = rest > 0x80000 || (rest == 0x80000 && (c & 1));
        code = c + (up ? 1 : 0);
    }
    if (code > 0x7e)                // past 448 (the NaN code): saturate
        code = 0x7e;
    return uint8_t(sign | code);
}

}  // namespace kcx
