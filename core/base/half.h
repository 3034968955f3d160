// Decoding of 16- and 8-bit floating formats to float32 (exact: every value is representable).
#pragma once

#include <cstdint>

namespace kcx {

float halfToFloat(uint16_t h);      // IEEE binary16 (safetensors F16)
float bf16ToFloat(uint16_t b);      // bfloat16 (BF16)
float fp8e4m3ToFloat(uint8_t v);    // OCP FP8 E4M3 (F8_E4M3, "fn": no infinities, 0x7f/0xff NaN)
float fp8e5m2ToFloat(uint8_t v);    // OCP FP8 E5M2 (F8_E5M2, IEEE-like)

// Round-to-nearest-even encoders, used by the demo's simulated low-precision kernel.
uint16_t floatToBf16(float f);
uint16_t floatToHalf(float f);
uint8_t floatToFp8e4m3(float f);    // saturates to ±448
inline float roundBf16(float f) { return bf16ToFloat(floatToBf16(f)); }
inline float roundFp8e4m3(float f) { return fp8e4m3ToFloat(floatToFp8e4m3(f)); }

}  // namespace kcx
