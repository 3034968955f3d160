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

namespace sketch_detail {

int32_t bucketByLog(double magnitude) { return int32_t(std::ceil(det::log(magnitude) / kLnGamma)); }

LogTable::LogTable() {
    for (int k = 0; k <= (1 << kBits); ++k)
        step[k] = det::log(1.0 + double(k) / double(1 << kBits)) / kLnGamma;
    log2 = det::log(2.0) / kLnGamma;
}

const LogTable kLogTable;   // after kLnGamma, in this file's order of initialisation

}  // namespace sketch_detail

using sketch_detail::bucketByLog;

int32_t Sketch::bucketOfByLog(double magnitude) { return bucketByLog(magnitude); }

double Sketch::bucketValue(int32_t index) {
    return 2 * det::exp(double(index) * kLnGamma) / (kGamma + 1);
}

std::pair<double, double> Sketch::bucketBounds(int32_t index) {
    return {det::exp(double(index - 1) * kLnGamma), det::exp(double(index) * kLnGamma)};
}

void Sketch::Store::grow(int32_t index, uint64_t n) {
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

void Sketch::Store::cover(int32_t lo, int32_t hi) {
    if (counts.empty()) {
        offset = lo;
        counts.assign(size_t(hi - lo) + 1, 0);
        return;
    }
    if (lo < offset) {
        const int32_t grow = std::max<int32_t>(offset - lo, int32_t(counts.size() / 2 + 8));
        counts.insert(counts.begin(), size_t(grow), 0);
        offset -= grow;
    }
    if (size_t(hi - offset) >= counts.size())
        counts.resize(size_t(hi - offset) + 1, 0);
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

void Sketch::addBucket(bool negative, int32_t index, uint64_t n) {
    if (packed_)
        unpack();
    (negative ? neg_ : pos_).add(index, n);
}

void Sketch::setStore(bool negative, Store s) {
    if (packed_)
        unpack();
    (negative ? neg_ : pos_) = std::move(s);
}

Sketch Sketch::fromPacked(uint64_t zeros, std::shared_ptr<const Packed> p) {
    Sketch k;
    k.zero_ = zeros;
    k.packed_ = std::move(p);
    return k;
}

Sketch::Store Sketch::store(bool negative) const {
    Store t;
    if (packed_) {
        bool first = true;
        walkPacked(*packed_->bytes, negative ? packed_->neg : packed_->pos, [&](int32_t index, uint64_t c) {
            if (first)
                t.offset = index;
            first = false;
            t.counts.resize(size_t(index - t.offset) + 1, 0);
            t.counts.back() = c;
        });
        return t;
    }
    t = negative ? neg_ : pos_;
    t.trim();
    return t;
}

void Sketch::unpack() {
    pos_ = store(false);
    neg_ = store(true);
    packed_.reset();
}

// f(index, count) over a store's non-empty buckets, ascending, whichever form it has.
template <class F>
void Sketch::forEachBucket(bool negative, F&& f) const {
    if (packed_) {
        walkPacked(*packed_->bytes, negative ? packed_->neg : packed_->pos, f);
        return;
    }
    const Store& s = negative ? neg_ : pos_;
    for (size_t i = 0; i < s.counts.size(); ++i)
        if (s.counts[i])
            f(s.offset + int32_t(i), s.counts[i]);
}

namespace {

// The first and one past the last non-zero count of a store (a == b: empty).
std::pair<size_t, size_t> nonZeroSpan(const Sketch::Store& t) {
    size_t a = 0, b = t.counts.size();
    while (a < b && t.counts[a] == 0)
        ++a;
    while (b > a && t.counts[b - 1] == 0)
        --b;
    return {a, b};
}

}  // namespace

void Sketch::encodeStore(std::string& out, const Store& t) {
    using leb128::putU;
    const auto [a, b] = nonZeroSpan(t);
    size_t entries = 0;
    for (size_t i = a; i < b; ++i)   // a count each, and one entry per run of empty buckets
        entries += t.counts[i] != 0 || t.counts[i - 1] != 0;
    putU(out, entries);
    if (!entries)
        return;
    leb128::putS(out, int64_t(t.offset) + int64_t(a));
    for (size_t i = a; i < b;) {
        if (t.counts[i]) {
            putU(out, t.counts[i++]);
            continue;
        }
        const size_t from = i;
        while (t.counts[i] == 0)
            ++i;
        putU(out, 0);
        putU(out, uint64_t(i - from));
    }
}

void Sketch::encode(std::string& out) const {
    leb128::putU(out, zero_);
    if (const Packed* p = packed_.get()) {   // read from a file: its bytes are the encoding
        const size_t end = walkPacked(*p->bytes, p->neg, [](int32_t, uint64_t) {});
        out.append(*p->bytes, p->pos, end - p->pos);
        return;
    }
    encodeStore(out, pos_);
    encodeStore(out, neg_);
}

void Sketch::pack() {
    if (packed_ || (pos_.empty() && neg_.empty()))
        return;
    // Encoded where it is (no trimmed copies), then copied once into bytes of its size.
    thread_local std::string scratch;
    scratch.clear();
    auto p = std::make_shared<Packed>();
    encodeStore(scratch, pos_);
    p->neg = uint32_t(scratch.size());
    encodeStore(scratch, neg_);
    const auto [pa, pb] = nonZeroSpan(pos_);
    const auto [na, nb] = nonZeroSpan(neg_);
    p->posTotal = pos_.total();
    p->negTotal = neg_.total();
    p->posLo = pos_.offset + int32_t(pa);
    p->posHi = pos_.offset + int32_t(pb) - 1;
    p->negLo = neg_.offset + int32_t(na);
    p->negHi = neg_.offset + int32_t(nb) - 1;
    if (pa == pb) {   // as a trimmed empty store says it
        p->posLo = 0;
        p->posHi = -1;
    }
    if (na == nb) {
        p->negLo = 0;
        p->negHi = -1;
    }
    p->bytes = std::make_shared<const std::string>(scratch);
    pos_ = {};
    neg_ = {};
    packed_ = std::move(p);
}

void Sketch::merge(const Sketch& o) {
    if (packed_)
        unpack();
    zero_ += o.zero_;
    // Room for the other's buckets first, then counts added without a bound check each.
    const auto into = [](Store& s) {
        return [&s](int32_t index, uint64_t c) { s.counts[size_t(index - s.offset)] += c; };
    };
    if (const Packed* p = o.packed_.get()) {
        if (p->posTotal) {
            pos_.cover(p->posLo, p->posHi);
            walkPacked(*p->bytes, p->pos, into(pos_));
        }
        if (p->negTotal) {
            neg_.cover(p->negLo, p->negHi);
            walkPacked(*p->bytes, p->neg, into(neg_));
        }
        return;
    }
    for (auto [from, to] : {std::pair{&o.pos_, &pos_}, std::pair{&o.neg_, &neg_}}) {
        if (from->counts.empty())
            continue;
        to->cover(from->offset, from->offset + int32_t(from->counts.size()) - 1);
        uint64_t* at = to->counts.data() + (from->offset - to->offset);
        for (size_t i = 0; i < from->counts.size(); ++i)
            at[i] += from->counts[i];
    }
}

uint64_t Sketch::count() const {
    if (packed_)
        return packed_->posTotal + packed_->negTotal + zero_;
    return pos_.total() + neg_.total() + zero_;
}

// The bucket holding 0-based rank k of a packed store's values, in ascending bucket order.
int32_t Sketch::packedBucketAtRank(bool negative, uint64_t k) const {
    int32_t bucket = 0;
    bool found = false;
    forEachBucket(negative, [&](int32_t index, uint64_t c) {
        if (found)
            return;
        if (k < c) {
            bucket = index;
            found = true;
        } else {
            k -= c;
        }
    });
    return bucket;
}

double Sketch::valueAtRank(uint64_t r) const {
    if (packed_) {
        // The negative store is in ascending magnitude: the rank from its other end.
        const uint64_t nNeg = packed_->negTotal;
        if (r < nNeg)
            return -bucketValue(packedBucketAtRank(true, nNeg - 1 - r));
        r -= nNeg;
        if (r < zero_)
            return 0;
        r -= zero_;
        if (r >= packed_->posTotal)
            throw std::out_of_range("sketch rank beyond its count");
        return bucketValue(packedBucketAtRank(false, r));
    }
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
    for (bool negative : {false, true})
        forEachBucket(negative, [&](int32_t index, uint64_t c) {
            auto [a, b] = bucketSpan(index, negative);
            if (a > level)
                sure += c;
            else if (b > level)
                maybe += c;
        });
    if (0 > level)
        sure += zero_;
    return {sure, maybe};
}

std::pair<uint64_t, uint64_t> Sketch::countBelow(double level) const {
    uint64_t sure = 0, maybe = 0;
    for (bool negative : {false, true})
        forEachBucket(negative, [&](int32_t index, uint64_t c) {
            auto [a, b] = bucketSpan(index, negative);
            if (b < level)
                sure += c;
            else if (a < level)
                maybe += c;
        });
    if (0 < level)
        sure += zero_;
    return {sure, maybe};
}

bool Sketch::operator==(const Sketch& o) const {
    if (zero_ != o.zero_)
        return false;
    for (bool negative : {false, true}) {
        const Store a = store(negative), b = o.store(negative);
        if (a.offset != b.offset || a.counts != b.counts)
            return false;
    }
    return true;
}

}  // namespace kcx
