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
    void add(double x);
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
    std::array<int64_t, kLimbs> limbs_{};
    uint32_t pending_ = 0;   // additions since the last carry propagation
    void normalize();
    // The normalized magnitude and sign (limbs in [0, 2^32)).
    std::array<int64_t, kLimbs> magnitude(int* sign) const;
};

}  // namespace kcx
