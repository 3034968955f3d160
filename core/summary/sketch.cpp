#include "core/summary/sketch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/base/det_math.h"

namespace kcx {

namespace {
// γ = (1 + α)/(1 − α) and ln γ, computed once with det::log (same bits everywhere).
const double kGamma = (1 + kRelativeAccuracy) / (1 - kRelativeAccuracy);
const double kLnGamma = det::log(kGamma);
}  // namespace

namespace {

int32_t bucketByLog(double magnitude) { return int32_t(std::ceil(det::log(magnitude) / kLnGamma)); }

// log_γ of the mantissa at 4096 steps over [1, 2], and log_γ 2: a value's bucket read from its
// exponent and top 12 mantissa bits, unless a bucket edge falls within its step (then the log).
struct LogTable {
    static constexpr int kBits = 12;
    double step[(1 << kBits) + 1];
    double log2;
    LogTable() {
        for (int k = 0; k <= (1 << kBits); ++k)
            step[k] = det::log(1.0 + double(k) / double(1 << kBits)) / kLnGamma;
        log2 = det::log(2.0) / kLnGamma;
    }
};

}  // namespace

int32_t Sketch::bucketOf(double magnitude) {
    // ceil(log_γ x) for x = 2^e (1 + f): log_γ x lies in [e log_γ 2 + step[k], e log_γ 2 +
    // step[k+1]] for the top bits k of f. When one ceiling covers that whole interval (widened
    // by far more than any rounding here or in det::log), it is the bucket det::log gives;
    // else det::log decides. Same answer as bucketByLog, about ten times faster.
    static const LogTable table;
    const uint64_t bits = det::toBits(magnitude);
    const int e = int(bits >> 52);
    if (e == 0 || e >= 0x7ff)
        return bucketByLog(magnitude);   // subnormal (or not a finite positive number)
    const size_t k = size_t(bits >> (52 - LogTable::kBits)) & ((size_t(1) << LogTable::kBits) - 1);
    const double base = double(e - 1023) * table.log2;
    const double lo = std::ceil(base + table.step[k] - 1e-6), hi = std::ceil(base + table.step[k + 1] + 1e-6);
    if (lo == hi)
        return int32_t(lo);
    return bucketByLog(magnitude);
}

int32_t Sketch::bucketOfByLog(double magnitude) { return bucketByLog(magnitude); }

double Sketch::bucketValue(int32_t index) {
    return 2 * det::exp(double(index) * kLnGamma) / (kGamma + 1);
}

std::pair<double, double> Sketch::bucketBounds(int32_t index) {
    return {det::exp(double(index - 1) * kLnGamma), det::exp(double(index) * kLnGamma)};
}

void Sketch::Store::add(int32_t index, uint64_t n) {
    if (counts.empty()) {
        offset = index;
        counts.assign(1, 0);
    } else if (index < offset) {
        // Grow downwards with room to spare, so a run of falling values is not quadratic.
        const int32_t grow = std::max<int32_t>(offset - index, int32_t(counts.size() / 2 + 8));
        counts.insert(counts.begin(), size_t(grow), 0);
        offset -= grow;
    } else if (size_t(index - offset) >= counts.size()) {
        counts.resize(size_t(index - offset) + 1 + counts.size() / 2 + 8, 0);
    }
    counts[size_t(index - offset)] += n;
}

uint64_t Sketch::Store::total() const {
    uint64_t t = 0;
    for (uint64_t c : counts)
        t += c;
    return t;
}

void Sketch::Store::trim() {
    size_t a = 0, b = counts.size();
    while (a < b && counts[a] == 0)
        ++a;
    while (b > a && counts[b - 1] == 0)
        --b;
    if (a == b) {
        counts.clear();
        offset = 0;
        return;
    }
    counts = std::vector<uint64_t>(counts.begin() + long(a), counts.begin() + long(b));
    offset += int32_t(a);
}

void Sketch::add(double x) {
    if (x == 0) {
        ++zero_;
        return;
    }
    if (x > 0)
        pos_.add(bucketOf(x), 1);
    else
        neg_.add(bucketOf(-x), 1);
}

void Sketch::addBucket(bool negative, int32_t index, uint64_t n) {
    (negative ? neg_ : pos_).add(index, n);
}

void Sketch::setStore(bool negative, Store s) { (negative ? neg_ : pos_) = std::move(s); }

void Sketch::merge(const Sketch& o) {
    zero_ += o.zero_;
    for (size_t i = 0; i < o.pos_.counts.size(); ++i)
        if (o.pos_.counts[i])
            pos_.add(o.pos_.offset + int32_t(i), o.pos_.counts[i]);
    for (size_t i = 0; i < o.neg_.counts.size(); ++i)
        if (o.neg_.counts[i])
            neg_.add(o.neg_.offset + int32_t(i), o.neg_.counts[i]);
}

uint64_t Sketch::count() const { return pos_.total() + neg_.total() + zero_; }

double Sketch::valueAtRank(uint64_t r) const {
    // Ascending: negative store from its largest magnitude down, zeros, positive store up.
    for (size_t i = neg_.counts.size(); i-- > 0;) {
        if (r < neg_.counts[i])
            return -bucketValue(neg_.offset + int32_t(i));
        r -= neg_.counts[i];
    }
    if (r < zero_)
        return 0;
    r -= zero_;
    for (size_t i = 0; i < pos_.counts.size(); ++i) {
        if (r < pos_.counts[i])
            return bucketValue(pos_.offset + int32_t(i));
        r -= pos_.counts[i];
    }
    throw std::out_of_range("sketch rank beyond its count");
}

namespace {
// The smallest and largest value a bucket may hold, widened by a hair so that a value that
// det::log put in the bucket is never outside them.
std::pair<double, double> bucketSpan(int32_t index, bool negative) {
    auto [lo, hi] = Sketch::bucketBounds(index);
    lo *= 1 - 1e-9;
    hi *= 1 + 1e-9;
    return negative ? std::pair{-hi, -lo} : std::pair{lo, hi};
}
}  // namespace

std::pair<uint64_t, uint64_t> Sketch::countAbove(double level) const {
    // Buckets wholly above level count surely; one that may hold level may or may not.
    uint64_t sure = 0, maybe = 0;
    for (bool negative : {false, true}) {
        const Store& s = negative ? neg_ : pos_;
        for (size_t i = 0; i < s.counts.size(); ++i) {
            if (!s.counts[i])
                continue;
            auto [a, b] = bucketSpan(s.offset + int32_t(i), negative);
            if (a > level)
                sure += s.counts[i];
            else if (b > level)
                maybe += s.counts[i];
        }
    }
    if (0 > level)
        sure += zero_;
    return {sure, maybe};
}

std::pair<uint64_t, uint64_t> Sketch::countBelow(double level) const {
    uint64_t sure = 0, maybe = 0;
    for (bool negative : {false, true}) {
        const Store& s = negative ? neg_ : pos_;
        for (size_t i = 0; i < s.counts.size(); ++i) {
            if (!s.counts[i])
                continue;
            auto [a, b] = bucketSpan(s.offset + int32_t(i), negative);
            if (b < level)
                sure += s.counts[i];
            else if (a < level)
                maybe += s.counts[i];
        }
    }
    if (0 < level)
        sure += zero_;
    return {sure, maybe};
}

bool Sketch::operator==(const Sketch& o) const {
    Sketch a = *this, b = o;
    a.pos_.trim();
    a.neg_.trim();
    b.pos_.trim();
    b.neg_.trim();
    return a.zero_ == b.zero_ && a.pos_.offset == b.pos_.offset && a.pos_.counts == b.pos_.counts &&
           a.neg_.offset == b.neg_.offset && a.neg_.counts == b.neg_.counts;
}

}  // namespace kcx
