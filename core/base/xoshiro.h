// splitmix64 and the xoshiro256** step (Blackman and Vigna), the portable generators behind
// the bootstrap (core/evaluate/stats.h) and the demo (core/demo/demo_model.h): the standard
// library's distributions differ between implementations, these do not.
#pragma once

#include <cstdint>

namespace kcx {

// Advances `state` and returns the next splitmix64 output (used to seed xoshiro).
inline uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// One step of xoshiro256**: returns the output and advances the four state words.
inline uint64_t xoshiro256ssNext(uint64_t (&s)[4]) {
    auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
    const uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

}  // namespace kcx
