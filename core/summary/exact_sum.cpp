#include "core/summary/exact_sum.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace kcx {

namespace {
constexpr int64_t kBase = int64_t(1) << 32;
}  // namespace

void ExactSum::cover(int lo, int hi) {
    if (limbs_.empty()) {
        base_ = lo;
        limbs_.assign(size_t(hi - lo + 1), 0);
        return;
    }
    const int top = base_ + int(limbs_.size()) - 1;
    const int nlo = std::min(lo, base_), nhi = std::max(hi, top);
    if (nlo == base_ && nhi == top)
        return;
    std::vector<int64_t> w(size_t(nhi - nlo + 1), 0);
    std::copy(limbs_.begin(), limbs_.end(), w.begin() + (base_ - nlo));
    limbs_ = std::move(w);
    base_ = nlo;
}

void ExactSum::normalize() {
    for (size_t i = 0; i + 1 < limbs_.size(); ++i) {
        const int64_t carry = limbs_[i] >> 32;   // arithmetic shift: floor division
        limbs_[i] -= carry * kBase;
        limbs_[i + 1] += carry;
    }
    while (!limbs_.empty() && (limbs_.back() <= -kBase || limbs_.back() >= kBase)) {
        const int64_t carry = limbs_.back() >> 32;
        limbs_.back() -= carry * kBase;
        limbs_.push_back(carry);
    }
    pending_ = 0;
}

void ExactSum::merge(const ExactSum& other) {
    if (other.limbs_.empty())
        return;
    // Each addition since a sum's last carry propagation moved a limb by less than 2^32, so
    // other's limbs are below 2^32 (other.pending_ + 1) and adding them counts as that many
    // additions here: no copy and no carry pass unless the headroom runs out (kcx merge sums
    // millions of these).
    if (other.pending_ >= kNormalizeEvery / 2) {
        ExactSum o = other;
        o.normalize();
        merge(o);
        return;
    }
    if (uint64_t(pending_) + other.pending_ + 1 >= kNormalizeEvery)
        normalize();
    cover(other.base_, other.base_ + int(other.limbs_.size()) - 1);
    for (size_t i = 0; i < other.limbs_.size(); ++i)
        limbs_[size_t(other.base_ - base_) + i] += other.limbs_[i];
    pending_ += other.pending_ + 1;
}

ExactSum ExactSum::magnitude(int* sign) const {
    ExactSum t = *this;
    t.normalize();
    auto& m = t.limbs_;
    *sign = 0;
    if (!m.empty() && m.back() < 0) {
        *sign = -1;
        for (auto& l : m)
            l = -l;
        for (size_t i = 0; i + 1 < m.size(); ++i) {
            const int64_t carry = m[i] >> 32;
            m[i] -= carry * kBase;
            m[i + 1] += carry;
        }
    } else {
        for (int64_t l : m)
            if (l) {
                *sign = 1;
                break;
            }
    }
    return t;
}

bool ExactSum::isZero() const {
    int sign;
    magnitude(&sign);
    return sign == 0;
}

double ExactSum::value() const {
    int sign;
    const ExactSum m = magnitude(&sign);
    if (!sign)
        return 0;
    int top = m.base_ + int(m.limbs_.size()) - 1;
    while (top > 0 && m.limb(top) == 0)
        --top;
    // The top three limbs hold at least 65 significant bits; the rest only decide the last
    // rounding (a sticky bit keeps ties from rounding the wrong way).
    long double v = 0;
    for (int i = top; i >= 0 && i >= top - 2; --i)
        v = v * 4294967296.0L + (long double)m.limb(i);
    bool sticky = false;
    for (int i = top - 3; i >= m.base_; --i)
        if (m.limb(i)) {
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
    const ExactSum m = magnitude(&c.sign);
    if (!c.sign)
        return c;
    size_t lo = 0, hi = m.limbs_.size() - 1;
    while (m.limbs_[lo] == 0)
        ++lo;
    while (m.limbs_[hi] == 0)
        --hi;
    c.low = m.base_ + int(lo);
    for (size_t i = lo; i <= hi; ++i)
        c.limbs.push_back(uint32_t(m.limbs_[i]));
    return c;
}

ExactSum ExactSum::fromCanonical(const Canonical& c) { return fromCanonical(c.sign, c.low, c.limbs.data(), c.limbs.size()); }

ExactSum ExactSum::fromCanonical(int sign, int low, const uint32_t* limbs, size_t n) {
    ExactSum s;
    if (sign == 0) {
        if (n != 0 || low != 0)
            throw std::invalid_argument("a zero sum has no limbs");
        return s;
    }
    if (sign != 1 && sign != -1)
        throw std::invalid_argument("the sign is not -1, 0 or 1");
    if (n == 0 || limbs[0] == 0 || limbs[n - 1] == 0)
        throw std::invalid_argument("the limbs are not in canonical form (empty, or zero at an end)");
    if (low < 0 || low + int64_t(n) > kLimbs)
        throw std::invalid_argument("the limbs lie outside the accumulator");
    s.base_ = low;
    s.limbs_.resize(n);
    for (size_t i = 0; i < n; ++i)
        s.limbs_[i] = sign * int64_t(limbs[i]);
    s.pending_ = 1;
    return s;
}

bool ExactSum::operator==(const ExactSum& other) const {
    const Canonical a = canonical(), b = other.canonical();
    return a.sign == b.sign && a.low == b.low && a.limbs == b.limbs;
}

}  // namespace kcx
