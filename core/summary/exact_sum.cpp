#include "core/summary/exact_sum.h"

#include <bit>
#include <cmath>
#include <stdexcept>

namespace kcx {

namespace {
constexpr int64_t kBase = int64_t(1) << 32;
}  // namespace

ExactSum::Split ExactSum::split(double x) {
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

void ExactSum::normalize() {
    // Every limb but the top one into [0, 2^32); the top limb keeps the sign.
    for (int i = 0; i + 1 < kLimbs; ++i) {
        const int64_t carry = limbs_[i] >> 32;   // arithmetic shift: floor division
        limbs_[i] -= carry * kBase;
        limbs_[i + 1] += carry;
    }
    pending_ = 0;
}

void ExactSum::merge(const ExactSum& other) {
    ExactSum o = other;
    o.normalize();
    normalize();
    for (int i = 0; i < kLimbs; ++i)
        limbs_[i] += o.limbs_[i];
    pending_ = 1;
}

std::array<int64_t, ExactSum::kLimbs> ExactSum::magnitude(int* sign) const {
    ExactSum t = *this;
    t.normalize();
    auto m = t.limbs_;
    *sign = 0;
    if (m[kLimbs - 1] < 0) {
        *sign = -1;
        for (auto& l : m)
            l = -l;
        for (int i = 0; i + 1 < kLimbs; ++i) {
            const int64_t carry = m[i] >> 32;
            m[i] -= carry * kBase;
            m[i + 1] += carry;
        }
    } else {
        for (int i = kLimbs - 1; i >= 0; --i)
            if (m[i]) {
                *sign = 1;
                break;
            }
    }
    return m;
}

bool ExactSum::isZero() const {
    int sign;
    magnitude(&sign);
    return sign == 0;
}

double ExactSum::value() const {
    int sign;
    const auto m = magnitude(&sign);
    if (!sign)
        return 0;
    int top = kLimbs - 1;
    while (top > 0 && m[top] == 0)
        --top;
    // The top three limbs hold at least 65 significant bits; the rest only decide the last
    // rounding (a sticky bit keeps ties from rounding the wrong way).
    long double v = 0;
    for (int i = top; i >= 0 && i >= top - 2; --i)
        v = v * 4294967296.0L + (long double)m[i];
    bool sticky = false;
    for (int i = top - 3; i >= 0; --i)
        if (m[i]) {
            sticky = true;
            break;
        }
    if (sticky)
        v = std::nextafter(v, (long double)INFINITY);   // below the 64-bit mantissa's last place
    const int low = top >= 2 ? top - 2 : 0;
    const double d = double(std::ldexp(v, 32 * low - 1074));
    return sign < 0 ? -d : d;
}

ExactSum::Canonical ExactSum::canonical() const {
    Canonical c;
    const auto m = magnitude(&c.sign);
    if (!c.sign)
        return c;
    int lo = 0, hi = kLimbs - 1;
    while (m[lo] == 0)
        ++lo;
    while (m[hi] == 0)
        --hi;
    c.low = lo;
    for (int i = lo; i <= hi; ++i)
        c.limbs.push_back(uint32_t(m[i]));
    return c;
}

ExactSum ExactSum::fromCanonical(const Canonical& c) {
    ExactSum s;
    if (c.sign == 0) {
        if (!c.limbs.empty() || c.low != 0)
            throw std::invalid_argument("a zero sum has no limbs");
        return s;
    }
    if (c.sign != 1 && c.sign != -1)
        throw std::invalid_argument("the sign is not -1, 0 or 1");
    if (c.limbs.empty() || c.limbs.front() == 0 || c.limbs.back() == 0)
        throw std::invalid_argument("the limbs are not in canonical form (empty, or zero at an end)");
    if (c.low < 0 || c.low + int64_t(c.limbs.size()) > kLimbs)
        throw std::invalid_argument("the limbs lie outside the accumulator");
    for (size_t i = 0; i < c.limbs.size(); ++i)
        s.limbs_[c.low + i] = c.sign * int64_t(c.limbs[i]);
    s.pending_ = 1;
    return s;
}

bool ExactSum::operator==(const ExactSum& other) const {
    const Canonical a = canonical(), b = other.canonical();
    return a.sign == b.sign && a.low == b.low && a.limbs == b.limbs;
}

}  // namespace kcx
