// An exact sum of doubles: every finite double added in, with no rounding, so that adding
// in any order and merging partial sums in any grouping gives the same value to the bit.
// That is what makes summaries mergeable (docs/summaries.md): a shard's sum merged with
// another's equals the sum of both shards' values taken in one pass.
//
// The sum is a fixed-point integer over the whole double range (a "long accumulator" in
// Kulisch's sense): 67 signed 64-bit limbs of 32 bits each, limb i weighing 2^(32 i − 1074).
// A double is split into at most three 32-bit chunks and added limb by limb; the limbs'
// headroom takes 2^30 additions before carries must be propagated. Only the window of limbs
// the sum has touched is stored (a cell's values span a few limbs): a summary of many steps
// holds millions of sums, and 67 limbs each took 544 bytes a sum (2 GB for 1,000 steps). value() rounds the exact
// sum to a double (within one unit in the last place; the same double for the same sum).
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace kcx {

class ExactSum {
public:
    static constexpr int kLimbs = 67;

    // Adds a finite double (a non-finite one is the caller's to count; it is ignored here).
    [[gnu::always_inline]] void add(double x) { add(split(x)); }

    // A double cut into the limbs it adds to, once, for adding it to many sums.
    struct Split {
        int limb = -1;           // −1: nothing to add (zero or not finite)
        int64_t c0 = 0, c1 = 0, c2 = 0;   // signed chunks for limbs limb, limb+1, limb+2
    };
    [[gnu::always_inline]] static Split split(double x);
    [[gnu::always_inline]] void add(const Split& s) {
        if (s.limb < 0)
            return;
        if (s.limb < base_ || s.limb + 3 > base_ + int(limbs_.size()))
            cover(s.limb, s.limb + 2);
        int64_t* l = limbs_.data() + (s.limb - base_);
        l[0] += s.c0;
        l[1] += s.c1;
        l[2] += s.c2;
        if (++pending_ >= kNormalizeEvery)
            normalize();
    }
    void merge(const ExactSum& other);
    // The sum rounded to double.
    double value() const;
    bool isZero() const;

    // The canonical form: sign (+1, −1 or 0), the index of the lowest non-zero limb, and the
    // magnitude's 32-bit limbs from there up (the last one non-zero). Two equal sums have
    // the same canonical form.
    struct Canonical {
        int sign = 0;
        int low = 0;
        std::vector<uint32_t> limbs;
    };
    Canonical canonical() const;
    // Throws std::invalid_argument when the form is not canonical (a reader checks input).
    static ExactSum fromCanonical(const Canonical& c);
    // The same from the form's parts (the binary reader: its limbs straight from the bytes).
    static ExactSum fromCanonical(int sign, int low, const uint32_t* limbs, size_t n);

    bool operator==(const ExactSum& other) const;

private:
    static constexpr uint32_t kNormalizeEvery = 1u << 30;   // each limb takes < 2^33 per addition (merges too)
    std::vector<int64_t> limbs_;   // limbs_[i] is limb base_ + i; limbs outside are zero
    int base_ = 0;
    uint32_t pending_ = 0;   // additions since the last carry propagation
    void cover(int lo, int hi);   // widens the window to hold limbs lo..hi
    // Every limb but the top one into [0, 2^32), the top one into (−2^32, 2^32) (the window
    // grows upwards for the carries), so every limb has the same headroom again.
    void normalize();
    // The normalized magnitude (limbs in [0, 2^32), limbs_[i] is limb base_ + i) and sign.
    ExactSum magnitude(int* sign) const;
    int64_t limb(int i) const {
        return i >= base_ && i < base_ + int(limbs_.size()) ? limbs_[size_t(i - base_)] : 0;
    }
};

// Inline: it is on the path of every value a summary counts.
[[gnu::always_inline]] inline ExactSum::Split ExactSum::split(double x) {
    Split s;
    const uint64_t bits = std::bit_cast<uint64_t>(x);
    const int e = int((bits >> 52) & 0x7ff);
    if (e == 0x7ff)
        return s;   // not finite
    uint64_t mant = bits & ((uint64_t(1) << 52) - 1);
    int p;   // x = ±mant · 2^(p − 1074)
    if (e == 0) {
        if (mant == 0)
            return s;
        p = 0;
    } else {
        mant |= uint64_t(1) << 52;
        p = e - 1;
    }
    const unsigned __int128 v = (unsigned __int128)mant << (p & 31);   // < 2^85
    const int64_t sign = (bits >> 63) ? -1 : 1;
    s.limb = p >> 5;
    s.c0 = sign * int64_t(uint64_t(v) & 0xffffffffu);
    s.c1 = sign * int64_t(uint64_t(v >> 32) & 0xffffffffu);
    s.c2 = sign * int64_t(uint64_t(v >> 64));
    return s;
}

}  // namespace kcx
