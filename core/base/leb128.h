// LEB128 variable-length integers, as the binary summary container writes them
// (docs/summaries.md, "The binary container"): 7 bits a byte, low first, the high bit set on
// every byte but the last; signed ones in zigzag form (0, -1, 1, -2, ... as 0, 1, 2, 3, ...).
// The checked reader, which names the place of a bad or cut number, is the summary reader's;
// readU here is for bytes that reader has already checked.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace kcx::leb128 {

inline void putU(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char(uint8_t(v) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}

inline uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
inline int64_t unzigzag(uint64_t z) { return int64_t(z >> 1) ^ -int64_t(z & 1); }

inline void putS(std::string& out, int64_t v) { putU(out, zigzag(v)); }

// Unchecked: `b` holds a whole number from `at` on.
inline uint64_t readU(const std::string& b, size_t& at) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        const uint8_t c = uint8_t(b[at++]);
        v |= uint64_t(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
}

// Eight numbers of one byte each, none of them zero, at `p` (8 readable bytes): the common
// case of a sketch store's counts (a zero starts a run of empty buckets, a byte with its high
// bit set continues a number). True, and the bytes in *word (the first lowest), when it holds.
// A byte b is in 1..127 exactly when neither b nor b − 1 has its high bit set; a borrow
// between bytes comes only from a zero byte, which is refused anyway.
inline bool eightSmall(const uint8_t* p, uint64_t* word) {
    constexpr uint64_t kOnes = 0x0101010101010101u, kHighs = 0x8080808080808080u;
    uint64_t v;
    std::memcpy(&v, p, 8);
    *word = v;
    return ((v | (v - kOnes)) & kHighs) == 0;
}

// The sum of a word's eight bytes (each below 128: at most 1,016).
inline uint64_t sumOfBytes(uint64_t v) {
    const uint64_t pairs = (v & 0x00ff00ff00ff00ffu) + ((v >> 8) & 0x00ff00ff00ff00ffu);
    return (pairs * 0x0001000100010001u) >> 48;
}

}  // namespace kcx::leb128
