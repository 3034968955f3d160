// An exact sum of doubles: every finite double added in, with no rounding, so that adding
// in any order and merging partial sums in any grouping gives the same value to the bit.
// That is what makes summaries mergeable (docs/summaries.md): a shard's sum merged with
// another's equals the sum of both shards' values taken in one pass.
//
// The sum is a fixed-point integer over the whole double range (a "long accumulator" in
// Kulisch's sense): 67 signed 64-bit limbs of 32 bits each, limb i weighing 2^(32 i − 1074).
// A double is split into at most three 32-bit chunks and added limb by limb; the limbs'
// headroom takes 2^31 additions before carries must be propagated. value() rounds the exact
// sum to a double (within one unit in the last place; the same double for the same sum).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kcx {

class ExactSum {
public:
    static constexpr int kLimbs = 67;

    // Adds a finite double (a non-finite one is the caller's to count; it is ignored here).
    void add(double x) { add(split(x)); }

    // A double cut into the limbs it adds to, once, for adding it to many sums.
    struct Split {
        int limb = -1;           // −1: nothing to add (zero or not finite)
        int64_t c0 = 0, c1 = 0, c2 = 0;   // signed chunks for limbs limb, limb+1, limb+2
    };
    static Split split(double x);
    void add(const Split& s) {
        if (s.limb < 0)
            return;
        limbs_[s.limb] += s.c0;
        limbs_[s.limb + 1] += s.c1;
        limbs_[s.limb + 2] += s.c2;
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

    bool operator==(const ExactSum& other) const;

private:
    static constexpr uint32_t kNormalizeEvery = 1u << 30;   // each limb takes < 2^33 per addition (merges too)
    std::array<int64_t, kLimbs> limbs_{};
    uint32_t pending_ = 0;   // additions since the last carry propagation
    void normalize();
    // The normalized magnitude and sign (limbs in [0, 2^32)).
    std::array<int64_t, kLimbs> magnitude(int* sign) const;
};

}  // namespace kcx
