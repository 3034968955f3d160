// The binary container of a summary (docs/summaries.md, "The file"): the same content as the
// JSON container, written as variable-length integers and raw doubles, read straight into the
// cells without a tree. A summary of 1,000 steps is 32 million sketch counts; as JSON each
// was a tree node and an allocation, here it is a byte or two.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <set>

#include "core/base/leb128.h"
#include "core/base/parallel.h"
#include "core/formats/json_scan.h"
#include "core/formats/sniff.h"
#include "core/summary/summary.h"
#include "core/summary/summary_check.h"

namespace kcx {

static_assert(std::endian::native == std::endian::little, "the binary summary writes doubles as they are in memory");

namespace {

class BinaryWriter {
public:
    void u(uint64_t v) { leb128::putU(out_, v); }
    void s(int64_t v) { leb128::putS(out_, v); }
    void f(double d) {
        char b[8];
        std::memcpy(b, &d, 8);
        out_.append(b, 8);
    }
    void str(const std::string& t) {
        u(t.size());
        out_ += t;
    }
    void raw(std::string_view t) { out_.append(t); }
    void sum(const ExactSum& x) {
        const ExactSum::Canonical c = x.canonical();
        s(c.sign);
        if (!c.sign)
            return;
        u(uint64_t(c.low));
        u(c.limbs.size());
        for (uint32_t l : c.limbs)
            u(l);
    }
    void sketch(const Sketch& k) {
        u(k.zeros());
        if (const Sketch::Packed* p = k.packed()) {   // read from a file: its bytes are the encoding
            const size_t end = Sketch::walkPacked(*p->bytes, p->neg, [](int32_t, uint64_t) {});
            out_.append(*p->bytes, p->pos, end - p->pos);
            return;
        }
        Sketch::encodeStore(out_, k.store(false));
        Sketch::encodeStore(out_, k.store(true));
    }
    std::string& bytes() { return out_; }

private:
    std::string out_;
};

void writeMetric(BinaryWriter& w, const MetricCell& m) {
    w.u(m.count);
    w.u(m.missing);
    w.u(m.nonfinite);
    if (!m.count)
        return;
    w.sum(m.sum);
    w.sum(m.sumSq);
    w.f(m.min);
    w.f(m.max);
    w.sketch(m.sketch);
    w.u(m.sequences);
    w.sum(m.seqSumSq);
    w.sum(m.seqCountSq);
    w.sum(m.seqSumCount);
    w.sketch(m.seqMax);
    w.u(m.worst.size());
    for (const WorstEntry& e : m.worst) {
        w.f(e.value);
        w.str(e.id);
        w.s(e.position);
        w.s(e.step);
    }
}

void writeRun(BinaryWriter& w, const RunSums& r) {
    for (uint64_t v : {r.pairs, r.ratios, r.missing, r.nonfinite, r.sequences})
        w.u(v);
    for (const ExactSum* x : {&r.sw, &r.sw2, &r.sp, &r.sq, &r.sp2, &r.sq2, &r.spq, &r.seqMeans})
        w.sum(*x);
}

// The metrics a summary may hold, by their index in the file's table: the token and sequence
// metrics of the catalogue, in its order.
std::vector<const MetricInfo*> cellMetrics() {
    std::vector<const MetricInfo*> out;
    for (const MetricInfo& info : metricCatalog())
        if (info.level != MetricLevel::Run)
            out.push_back(&info);
    return out;
}

// ---- reading ------------------------------------------------------------------------------

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

template <class Place>
MetricCell readMetric(BinaryReader& r, bool tokenLevel, const Place& place) {
    const auto at = [&](const char* field) { return [&place, field] { return place() + "." + field; }; };
    MetricCell m;
    m.count = r.u(at("count"));
    m.missing = r.u(at("missing"));
    m.nonfinite = r.u(at("nonfinite"));
    if (!m.count)
        return m;
    m.sum = r.sum(at("sum"));
    m.sumSq = r.sum(at("sum_sq"));
    m.min = r.finite(at("min"));
    m.max = r.finite(at("max"));
    m.sketch = r.sketch(at("sketch"));
    m.sequences = r.u(at("sequences"));
    m.seqSumSq = r.sum(at("seq_sum_sq"));
    m.seqCountSq = r.sum(at("seq_count_sq"));
    m.seqSumCount = r.sum(at("seq_sum_count"));
    m.seqMax = r.sketch(at("seq_max"));
    const uint64_t n = r.u(at("worst"));
    if (n > kWorstKept)
        r.fail(at("worst"), "expected 1 to " + std::to_string(kWorstKept) + " entries, at most count");
    m.worst.resize(size_t(n));
    for (size_t i = 0; i < n; ++i) {
        const auto p = [&] { return place() + ".worst[" + std::to_string(i) + "]"; };
        WorstEntry& e = m.worst[i];
        e.value = r.finite(p);
        e.id = r.str(p);
        e.position = r.s(p);
        e.step = r.s(p);
    }
    summary_check::metric(r.failer(), m, tokenLevel, place);
    return m;
}

// What every cell of a file is read against: its position buckets and metrics by index, and
// the data flags that decide which metrics a summary lacks.
struct CellTables {
    std::vector<int> pos;
    std::vector<const MetricInfo*> metrics;
    bool hasTopK = false, hasLogits = false;
};

// Cells [first, end) of the file, from the reader's place, into `cells` (each after the last).
void parseCells(BinaryReader& r, uint64_t first, uint64_t end, const CellTables& t, std::map<CellKey, CellData>& cells) {
    const std::vector<int>& pos = t.pos;
    const std::vector<const MetricInfo*>& metrics = t.metrics;
    for (uint64_t c = first; c < end; ++c) {
        const std::string p = "cells[" + std::to_string(c) + "]";
        const auto here = [&] { return p; };
        CellKey key;
        const uint64_t step = r.u(here);
        if (step > uint64_t(INT64_MAX))
            r.fail([&] { return p + ".step"; }, "a step is a whole number >= 0 (null: no step)");
        key.step = int64_t(step) - 1;
        key.key = r.str(here);
        if (!key.key.empty()) {
            key.value = r.str(here);
            if (key.key == "derived.pos_bucket")
                r.fail([&] { return p + ".key"; }, "not a slice key a summary keeps");
        }
        const uint64_t pp = r.u(here);
        if (pp > pos.size())
            r.fail([&] { return p + ".pos"; }, "not a position bucket of derived.pos_bucket");
        key.pos = pp ? pos[size_t(pp - 1)] : -1;
        // In order (what the writer does): no cell twice, and each goes in at the end.
        if (!cells.empty() && !(cells.rbegin()->first < key))
            r.fail(here, cells.count(key) ? "a second cell for the same step, slice and position"
                                          : "the cells are not in order (step, key, value, position)");
        CellData d;
        d.sequences = r.u(here);
        d.tokens = r.u(here);
        const auto runAt = [&] { return p + ".run"; };
        for (uint64_t* v : {&d.run.pairs, &d.run.ratios, &d.run.missing, &d.run.nonfinite, &d.run.sequences})
            *v = r.u(runAt);
        summary_check::run(r.failer(), d.run, runAt);
        for (ExactSum* x : {&d.run.sw, &d.run.sw2, &d.run.sp, &d.run.sq, &d.run.sp2, &d.run.sq2, &d.run.spq,
                            &d.run.seqMeans})
            *x = r.sum(runAt);
        summary_check::cellCounts(r.failer(), d, here);
        const uint64_t nMetrics = r.u(here);
        if (nMetrics > metrics.size())
            r.fail([&] { return p + ".metrics"; }, "more metrics than the file names");
        uint64_t last = 0;
        for (uint64_t i = 0; i < nMetrics; ++i) {
            const uint64_t m = r.u([&] { return p + ".metrics"; });
            if (m >= metrics.size() || (i && m <= last))
                r.fail([&] { return p + ".metrics"; }, "metric indices must rise and name a metric of the file");
            last = m;
            const MetricInfo& info = *metrics[size_t(m)];
            const auto mp = [&] { return p + ".metrics." + info.name; };
            MetricCell cell = readMetric(r, info.level == MetricLevel::Token, mp);
            summary_check::metricCounts(r.failer(), d, info, cell, mp);
            if (lacksInputs(info, t.hasTopK, t.hasLogits)) {   // implied (RunSummary::metric): checked, not kept
                summary_check::lacking(r.failer(), d, info, cell, mp);
                continue;
            }
            d.metrics.emplace_hint(d.metrics.end(), info.name, std::move(cell));
        }
        cells.emplace_hint(cells.end(), std::move(key), std::move(d));
    }
}

// Finds where cells begin without reading them into anything: the bounds are checked (a bad
// file ends the walk, and the file is then read in one piece, whose reader says what is wrong),
// nothing else is. Only for cutting a large file into pieces to read on several threads.
class CellSkipper {
public:
    CellSkipper(const std::string& bytes, size_t at)
        : begin_(reinterpret_cast<const uint8_t*>(bytes.data())), p_(begin_ + at), end_(begin_ + bytes.size()) {}
    bool ok() const { return ok_; }
    size_t offset() const { return size_t(p_ - begin_); }
    void cell() {
        u();                     // step
        if (skipText() && ok_)   // key, then its value
            skipText();
        for (int i = 0; i < 3 + 5 && ok_; ++i)   // pos, sequences, tokens, the run's five counts
            u();
        for (int i = 0; i < 8 && ok_; ++i)
            sum();
        const uint64_t n = u();
        if (n > 64)
            ok_ = false;
        for (uint64_t i = 0; i < n && ok_; ++i) {
            u();
            metric();
        }
    }

private:
    const uint8_t* begin_;
    const uint8_t* p_;
    const uint8_t* end_;
    bool ok_ = true;
    uint64_t u() {
        uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p_ == end_)
                break;
            const uint8_t b = *p_++;
            if (shift < 64)
                v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
        ok_ = false;
        p_ = end_;
        return 0;
    }
    void skip(uint64_t n) {
        if (n > uint64_t(end_ - p_)) {
            ok_ = false;
            p_ = end_;
        } else {
            p_ += n;
        }
    }
    bool skipText() {   // whether it was not empty
        const uint64_t n = u();
        skip(n);
        return n != 0;
    }
    void sum() {
        if (!u())   // sign 0
            return;
        u();
        const uint64_t n = u();
        if (n > uint64_t(ExactSum::kLimbs))
            ok_ = false;
        for (uint64_t i = 0; i < n && ok_; ++i)
            u();
    }
    void store() {
        const uint64_t entries = u();
        if (!entries)
            return;
        if (entries > uint64_t(end_ - p_))
            ok_ = false;
        u();
        for (uint64_t i = 0; i < entries && ok_; ++i)
            if (!u())
                u();
    }
    void sketch() {
        u();
        store();
        store();
    }
    void metric() {
        const uint64_t count = u();
        u();
        u();
        if (!count || !ok_)
            return;
        sum();
        sum();
        skip(16);
        sketch();
        u();
        sum();
        sum();
        sum();
        sketch();
        const uint64_t worst = u();
        if (worst > kWorstKept)
            ok_ = false;
        for (uint64_t i = 0; i < worst && ok_; ++i) {
            skip(8);
            skipText();
            u();
            u();
        }
    }
};

// A file of many cells is cut into as many pieces as there are threads (at least cellsAPiece
// cells and bytesAPiece bytes each, setSummaryReadPieces), found by CellSkipper, and each piece read on its own
// thread into a map of its own; the maps are then joined (each piece's keys come after the
// last piece's). A 1,000-step summary (34,000 cells, 78 MB) is read this way in about half
// the time on two cores. False, and nothing changed, when the file is too small, one thread
// is all there is, or anything is wrong: the caller then reads the cells in one piece, whose
// errors name the file and place as always.
std::atomic<uint64_t> cellsAPiece{1024};
std::atomic<size_t> bytesAPiece{size_t(8) << 20};
std::atomic<uint64_t> piecesRead{0};
std::atomic<int> pieceThreads{0};

bool parseCellsInParallel(BinaryReader& r, uint64_t nCells, const CellTables& t, std::map<CellKey, CellData>& cells) {
    const size_t bytes = r.remaining();
    const size_t pieces = std::min<size_t>({size_t(resolveThreads(pieceThreads)), size_t(nCells / std::max<uint64_t>(cellsAPiece, 1)),
                                            bytes / std::max<size_t>(bytesAPiece, 1), 16});
    if (pieces < 2)
        return false;
    // The pieces' first cells and byte offsets: equal numbers of cells each.
    std::vector<uint64_t> firstCell{0};
    std::vector<size_t> offset{r.offset()};
    CellSkipper skip(r.bytes(), r.offset());
    for (uint64_t c = 0; c < nCells && firstCell.size() < pieces; ++c) {
        if (c == firstCell.back() + nCells / pieces) {
            firstCell.push_back(c);
            offset.push_back(skip.offset());
        }
        skip.cell();
        if (!skip.ok())
            return false;
    }
    firstCell.push_back(nCells);
    std::vector<std::map<CellKey, CellData>> parts(pieces);
    std::vector<size_t> ends(pieces, 0);
    std::vector<char> failed(pieces, 0);
    parallelChunks(pieces, pieces, int(pieces), [&](size_t i, size_t, size_t) {
        try {
            BinaryReader piece = r.at(offset[i]);
            parseCells(piece, firstCell[i], firstCell[i + 1], t, parts[i]);
            ends[i] = piece.offset();
        } catch (...) {
            failed[i] = 1;
        }
    });
    for (size_t i = 0; i < pieces; ++i) {
        if (failed[i] || ends[i] != (i + 1 < pieces ? offset[i + 1] : ends.back()))
            return false;
        if (i && !parts[i - 1].empty() && !parts[i].empty() && !(parts[i - 1].rbegin()->first < parts[i].begin()->first))
            return false;
    }
    for (size_t i = 0; i < pieces; ++i)
        while (!parts[i].empty())
            cells.insert(cells.end(), parts[i].extract(parts[i].begin()));
    r.seek(ends.back());
    piecesRead += pieces;
    return true;
}

}  // namespace

void setSummaryReadPieces(uint64_t cells, size_t bytes, int threads) {
    cellsAPiece = cells;
    bytesAPiece = bytes;
    pieceThreads = threads;
}

uint64_t summaryPiecesRead() { return piecesRead; }

std::string summaryBinaryBytes(const RunSummary& s) {
    BinaryWriter w;
    w.raw(kSummaryBinaryMagic);
    w.u(kSummaryVersion);
    w.f(kRelativeAccuracy);
    w.u(kWorstKept);
    w.f(s.ppoClip);
    w.u((s.hasTopK ? 1 : 0) | (s.hasLogits ? 2 : 0) | (s.hasRewards ? 4 : 0));
    w.u(s.inputs.size());
    for (const SummaryInput& i : s.inputs) {
        w.str(i.path);
        w.str(i.sha256);
        w.u(i.sequences);
        w.u(i.tokens);
    }
    w.u(s.sequences());
    w.u(s.tokens());
    const auto& pos = positionBucketNames();
    w.u(pos.size());
    for (const std::string& p : pos)
        w.str(p);
    const std::vector<const MetricInfo*> metrics = cellMetrics();
    w.u(metrics.size());
    for (const MetricInfo* m : metrics)
        w.str(m->name);
    w.u(s.cells.size());
    for (const auto& [key, cell] : s.cells) {
        w.u(uint64_t(key.step + 1));
        w.str(key.key);
        if (!key.key.empty())
            w.str(key.value);
        w.u(uint64_t(key.pos + 1));
        w.u(cell.sequences);
        w.u(cell.tokens);
        writeRun(w, cell.run);
        MetricCell implied;
        uint64_t n = 0;
        for (const MetricInfo* m : metrics)
            n += s.metric(cell, m->name, implied) != nullptr;
        w.u(n);
        for (size_t i = 0; i < metrics.size(); ++i)
            if (const MetricCell* m = s.metric(cell, metrics[i]->name, implied)) {
                w.u(i);
                writeMetric(w, *m);
            }
    }
    return std::move(w.bytes());
}

bool isSummaryBinary(std::string_view head) { return head.starts_with(kSummaryBinaryMagic); }

RunSummary parseSummaryBinary(std::shared_ptr<const std::string> bytes, const std::string& file) {
    if (bytes->size() > kMaxSummaryBytes)   // Sketch::Packed's offsets are 32-bit
        throw InputError::inFile(file, "the summary is larger than " + std::to_string(kMaxSummaryBytes >> 20) +
                                           " MiB; KCX refuses it");
    BinaryReader r(std::move(bytes), kSummaryBinaryMagic.size(), file);
    const auto at = [](const char* place) { return [place] { return std::string(place); }; };
    const uint64_t version = r.u(at("kcx_summary"));
    if (version != uint64_t(kSummaryVersion))
        r.fail(at("kcx_summary"), "version " + std::to_string(version) + " is not one this kcx reads (it reads " +
                                      std::to_string(kSummaryVersion) + ")");
    if (r.finite(at("relative_accuracy")) != kRelativeAccuracy)
        r.fail(at("relative_accuracy"), "this kcx reads summaries of relative accuracy 0.01 only");
    if (r.u(at("worst_kept")) != kWorstKept)
        r.fail(at("worst_kept"), "this kcx reads summaries that keep " + std::to_string(kWorstKept) + " worst entries");
    RunSummary s;
    s.ppoClip = r.finite(at("ppo_clip"));
    if (!(s.ppoClip > 0))
        r.fail(at("ppo_clip"), "must be positive");
    const uint64_t flags = r.u(at("data"));
    if (flags > 7)
        r.fail(at("data"), "unknown data flags");
    s.hasTopK = flags & 1;
    s.hasLogits = flags & 2;
    s.hasRewards = flags & 4;
    const uint64_t nInputs = r.u(at("inputs"));
    if (!nInputs)
        r.fail(at("inputs"), "expected a non-empty array of the summarised files");
    std::set<std::string> seen;
    for (uint64_t i = 0; i < nInputs; ++i) {
        const std::string p = "inputs[" + std::to_string(i) + "]";
        const auto here = [&] { return p; };
        SummaryInput in;
        in.path = r.str(here);
        in.sha256 = r.str(here);
        in.sequences = r.u(here);
        in.tokens = r.u(here);
        summary_check::input(r.failer(), in, p);
        if (!seen.insert(in.path).second)
            r.fail([&] { return p + ".path"; }, "the path is listed twice");
        s.inputs.push_back(std::move(in));
    }
    std::sort(s.inputs.begin(), s.inputs.end());
    const uint64_t sequences = r.u(at("sequences")), tokens = r.u(at("tokens"));
    // The file's position buckets and metric names, by index: each must be one this kcx knows.
    const auto& known = positionBucketNames();
    std::vector<int> pos;
    for (uint64_t i = 0, n = r.u(at("positions")); i < n; ++i) {
        const std::string name = r.str(at("positions"));
        auto it = std::find(known.begin(), known.end(), name);
        if (it == known.end())
            r.fail(at("positions"), "\"" + name + "\" is not a position bucket of derived.pos_bucket");
        if (std::find(pos.begin(), pos.end(), int(it - known.begin())) != pos.end())
            r.fail(at("positions"), "\"" + name + "\" is named twice");
        pos.push_back(int(it - known.begin()));
    }
    std::vector<const MetricInfo*> metrics;
    for (uint64_t i = 0, n = r.u(at("metrics")); i < n; ++i) {
        const std::string name = r.str(at("metrics"));
        const MetricInfo* info = findMetric(name);
        if (!info || info->level == MetricLevel::Run)
            r.fail(at("metrics"), "\"" + name + "\" is not a token or sequence metric of SPEC 2");
        if (std::find(metrics.begin(), metrics.end(), info) != metrics.end())
            r.fail(at("metrics"), "\"" + name + "\" is named twice");
        metrics.push_back(info);
    }
    const uint64_t nCells = r.u(at("cells"));
    const CellTables tables{pos, metrics, s.hasTopK, s.hasLogits};
    if (!parseCellsInParallel(r, nCells, tables, s.cells))
        parseCells(r, 0, nCells, tables, s.cells);
    if (!r.atEnd())
        r.fail(at("cells"), "bytes after the last cell (byte " + std::to_string(r.offset()) + ")");
    summary_check::totals(r.failer(), s, sequences, tokens);
    return s;
}

}  // namespace kcx
