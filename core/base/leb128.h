// LEB128 variable-length integers, as the binary summary container writes them
// (docs/summaries.md, "The binary container"): 7 bits a byte, low first, the high bit set on
// every byte but the last; signed ones in zigzag form (0, -1, 1, -2, ... as 0, 1, 2, 3, ...).
// The checked reader, which names the place of a bad or cut number, is the summary reader's;
// readU here is for bytes that reader has already checked.
#pragma once

#include <cstdint>
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

}  // namespace kcx::leb128
