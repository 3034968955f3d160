// The binary summary reader's parts that reading in pieces shares (summary_binary.cpp reads
// a file, summary_binary_pieces.cpp cuts a large one into pieces read on several threads).
// Private to core/summary.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/leb128.h"
#include "core/formats/json_scan.h"
#include "core/summary/summary.h"
#include "core/summary/summary_check.h"

namespace kcx::summary_binary {

class BinaryReader {
public:
    // Reads from `start` (after the magic); places name bytes of the whole file.
    BinaryReader(std::shared_ptr<const std::string> bytes, size_t start, const std::string& file)
        : bytes_(std::move(bytes)), begin_(reinterpret_cast<const uint8_t*>(bytes_->data())), p_(begin_ + start),
          end_(begin_ + bytes_->size()), fail_{file} {}

    const summary_check::Failer& failer() const { return fail_; }
    size_t offset() const { return size_t(p_ - begin_); }
    bool atEnd() const { return p_ == end_; }
    size_t remaining() const { return size_t(end_ - p_); }
    const std::string& bytes() const { return *bytes_; }
    // A reader of the same file from `offset` on (a piece of parseCellsInParallel).
    BinaryReader at(size_t offset) const { return BinaryReader(bytes_, offset, fail_.file); }
    void seek(size_t offset) { p_ = begin_ + offset; }

    template <class Place>
    [[noreturn]] void fail(const Place& place, const std::string& message) const {
        fail_(place(), message);
    }
    template <class Place>
    [[noreturn]] void ended(const Place& place) const {
        fail_(place(), "the data end early (byte " + std::to_string(offset()) + ")");
    }

    template <class Place>
    uint64_t u(const Place& place) {
        uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            if (p_ == end_)
                ended(place);
            const uint8_t b = *p_++;
            if (shift == 63 && b > 1)
                fail(place, "a number does not fit 64 bits (byte " + std::to_string(offset() - 1) + ")");
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
    }
    template <class Place>
    int64_t s(const Place& place) {
        const uint64_t z = u(place);
        return leb128::unzigzag(z);
    }
    template <class Place>
    double f(const Place& place) {
        if (end_ - p_ < 8)
            ended(place);
        double d;
        std::memcpy(&d, p_, 8);
        p_ += 8;
        return d;
    }
    template <class Place>
    double finite(const Place& place) {
        const double d = f(place);
        if (!std::isfinite(d))
            fail(place, "expected a finite number");
        return d;
    }
    template <class Place>
    std::string str(const Place& place) {
        const uint64_t n = u(place);
        if (n > uint64_t(end_ - p_))
            ended(place);
        std::string t(reinterpret_cast<const char*>(p_), size_t(n));
        if (firstInvalidUtf8(t) != std::string::npos)
            fail(place, "the text is not valid UTF-8");
        p_ += n;
        return t;
    }
    template <class Place>
    ExactSum sum(const Place& place) {
        const int64_t sign = s(place);
        if (!sign)
            return {};
        const int sg = int(std::clamp<int64_t>(sign, -2, 2));
        const int low = int(std::min<uint64_t>(u(place), 1000));
        const uint64_t n = u(place);
        if (n > uint64_t(end_ - p_))
            ended(place);
        if (n > uint64_t(ExactSum::kLimbs))   // (fromCanonical says why)
            fail(place, "the limbs lie outside the accumulator");
        uint32_t limbs[ExactSum::kLimbs];
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t l = u(place);
            if (l > 0xffffffffu)
                fail(place, "a limb must be below 2^32");
            limbs[i] = uint32_t(l);
        }
        try {
            return ExactSum::fromCanonical(sg, low, limbs, size_t(n));
        } catch (const std::invalid_argument& e) {
            fail(place, e.what());
        }
    }
    // Checks a store's encoding and returns the number of values it holds; the bytes stay
    // where they are (Sketch::Packed).
    template <class Place>
    uint64_t store(const Place& place, int32_t* lo, int32_t* hi) {
        const uint64_t entries = u(place);
        if (!entries)
            return 0;
        if (entries > uint64_t(end_ - p_))
            ended(place);
        const int64_t offset = s(place);
        summary_check::storeReach(fail_, offset, 0, place);
        int64_t index = 0;
        uint64_t total = 0;
        bool lastWasGap = false;
        for (uint64_t i = 0; i < entries; ++i) {
            const uint64_t c = u(place);
            if (c) {
                if (total + c < total)
                    fail(place, "the counts add up to more than 2^64");
                total += c;
                ++index;
                lastWasGap = false;
                continue;
            }
            const uint64_t k = u(place);
            if (k == 0 || lastWasGap || i == 0 || i + 1 == entries)
                fail(place, "a run of empty buckets is 0 then k >= 1, between counts");
            if (k > uint64_t(2 * kReach))
                fail(place, "bucket indices outside what a double can reach");
            index += int64_t(k);
            lastWasGap = true;
        }
        summary_check::storeReach(fail_, offset, index, place);
        *lo = int32_t(offset);
        *hi = int32_t(offset + index - 1);
        return total;
    }
    template <class Place>
    Sketch sketch(const Place& place) {
        const uint64_t zeros = u([&] { return place() + ".zero"; });
        Sketch::Packed* p = nextPacked();
        p->pos = uint32_t(offset());   // the file is below kMaxSummaryBytes (4 GB)
        p->posTotal = store([&] { return place() + ".pos"; }, &p->posLo, &p->posHi);
        p->neg = uint32_t(offset());
        p->negTotal = store([&] { return place() + ".neg"; }, &p->negLo, &p->negHi);
        if (zeros + p->posTotal < zeros || zeros + p->posTotal + p->negTotal < zeros + p->posTotal)
            fail(place, "the counts add up to more than 2^64");
        if (!p->posTotal && !p->negTotal) {   // nothing to keep
            Sketch k;
            k.addZero(zeros);
            return k;
        }
        p->bytes = bytes_;
        ++packedUsed_;
        return Sketch::fromPacked(zeros, std::shared_ptr<const Sketch::Packed>(packed_, p));
    }

private:
    static constexpr int64_t kReach = summary_check::kReach;
    // Packed sketches come from blocks of kPackedBlock, each shared by its sketches (one
    // allocation a block instead of one a sketch: a 1,000-step summary holds 620,000 of them).
    static constexpr size_t kPackedBlock = 4096;
    std::shared_ptr<std::vector<Sketch::Packed>> packed_;
    size_t packedUsed_ = 0;
    Sketch::Packed* nextPacked() {
        if (!packed_ || packedUsed_ == packed_->size()) {
            packed_ = std::make_shared<std::vector<Sketch::Packed>>(kPackedBlock);
            packedUsed_ = 0;
        }
        Sketch::Packed* p = &(*packed_)[packedUsed_];
        *p = Sketch::Packed();
        return p;
    }
    std::shared_ptr<const std::string> bytes_;
    const uint8_t* begin_;
    const uint8_t* p_;
    const uint8_t* end_;
    summary_check::Failer fail_;
};

// What every cell of a file is read against: its position buckets and metrics by index, and
// the data flags that decide which metrics a summary lacks.
struct CellTables {
    std::vector<int> pos;
    std::vector<const MetricInfo*> metrics;
    bool hasTopK = false, hasLogits = false;
};

// Cells [first, end) of the file, from the reader's place, into `cells` (each after the last),
// stopping early where a cell would begin at or past byte `until`; how many it read. Cells
// are named cells[first], cells[first + 1], ... in errors.
uint64_t parseCells(BinaryReader& r, uint64_t first, uint64_t end, const CellTables& t,
                    std::map<CellKey, CellData>& cells, size_t until = SIZE_MAX);

// Reads the file's nCells cells in pieces on several threads when it is large enough
// (setSummaryReadPieces) and nothing is wrong; false, and nothing changed, otherwise: the
// caller then reads them in one piece (parseCells), whose errors name the file and place.
// `cuts`: byte offsets where the file's gzip members began (summaryBinaryFile writes one at a
// cell every memberBytes()); pieces begin there when there are any inside the cells, instead of
// where a walk over the cells finds them. An offset that is not where a cell begins fails the
// piece before it (it then does not end there), and the file is read in one piece.
bool parseCellsInParallel(BinaryReader& r, uint64_t nCells, const CellTables& t, std::map<CellKey, CellData>& cells,
                          const std::vector<size_t>& cuts);

// The writer's side: the bytes, and in `cuts` (when not null) the offsets of the cells at which
// a new gzip member begins: the first cell after every memberBytes() of bytes, the least bytes
// a piece is read in (setSummaryReadPieces: 8 MiB unless set).
size_t memberBytes();
std::string bytesWithCuts(const RunSummary& s, std::vector<size_t>* cuts);

}  // namespace kcx::summary_binary
