// Reading a large binary summary in pieces, one a thread (docs/summaries.md, "The file"):
// CellSkipper finds where the pieces begin, each is read by parseCells on its own
// thread, and the maps are joined. Any fault gives up, and the file is read in one piece.
#include <atomic>

#include "core/base/parallel.h"
#include "core/summary/summary_binary_reader.h"

namespace kcx {
namespace summary_binary {
namespace {

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
// cells and bytesAPiece bytes each, setSummaryReadPieces), found by CellSkipper, and each
// piece read on its own thread into a map of its own; the maps are then joined (each piece's keys come after the
// last piece's). A 1,000-step summary (34,000 cells, 78 MB) is read this way in about half
// the time on two cores. False, and nothing changed, when the file is too small, one thread
// is all there is, or anything is wrong: the caller then reads the cells in one piece, whose
// errors name the file and place as always.
std::atomic<uint64_t> cellsAPiece{1024};
std::atomic<size_t> bytesAPiece{size_t(8) << 20};
std::atomic<uint64_t> piecesRead{0};
std::atomic<int> pieceThreads{0};

}  // namespace

size_t memberBytes() { return bytesAPiece; }

bool parseCellsInParallel(BinaryReader& r, uint64_t nCells, const CellTables& t, std::map<CellKey, CellData>& cells,
                          const std::vector<size_t>& cuts) {
    const size_t bytes = r.remaining();
    const size_t threads = size_t(resolveThreads(pieceThreads));
    const size_t most = std::min<size_t>({size_t(nCells / std::max<uint64_t>(cellsAPiece, 1)),
                                          bytes / std::max<size_t>(bytesAPiece, 1), 16});
    // From the members' starts, four pieces a thread, handed out in order: the pieces take
    // unequal times (one of two took 0.16 s longer), and a thread that is done takes the next.
    // From a walk, one a thread: the walk goes as far as the last piece's start.
    const bool fromCuts = std::any_of(cuts.begin(), cuts.end(), [&](size_t c) { return c > r.offset(); });
    const size_t pieces = std::min(most, fromCuts ? 4 * threads : threads);
    if (pieces < 2 || threads < 2)
        return false;
    // Where the pieces begin: their byte offsets, and their first cells when known. From the
    // gzip members' starts inside the cells, those nearest equal shares of the bytes; else
    // found by a walk over the cells, equal numbers of cells each.
    std::vector<size_t> offset{r.offset()};
    std::vector<uint64_t> firstCell{0};
    const size_t cellsEnd = r.offset() + bytes;
    std::vector<size_t> inside;
    for (size_t c : cuts)
        if (c > r.offset() && c < cellsEnd && (inside.empty() || c > inside.back()))
            inside.push_back(c);
    if (!inside.empty()) {
        for (size_t i = 1; i < pieces; ++i) {
            const size_t want = r.offset() + bytes / pieces * i;
            auto it = std::lower_bound(inside.begin(), inside.end(), want);
            if (it == inside.end() || (it != inside.begin() && want - *(it - 1) < *it - want))
                --it;
            if (*it > offset.back())
                offset.push_back(*it);
        }
        if (offset.size() < 2)
            return false;
    } else {
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
    }
    const size_t n = offset.size();
    const bool counted = firstCell.size() == n;   // else each piece reads to its end offset
    std::vector<std::map<CellKey, CellData>> parts(n);
    std::vector<size_t> ends(n, 0);
    std::vector<uint64_t> read(n, 0);
    std::vector<char> failed(n, 0);
    parallelChunks(n, n, int(std::min(n, threads)), [&](size_t i, size_t, size_t) {
        try {
            BinaryReader piece = r.at(offset[i]);
            const size_t until = i + 1 < n ? offset[i + 1] : cellsEnd;
            if (counted)
                read[i] = parseCells(piece, firstCell[i], i + 1 < n ? firstCell[i + 1] : nCells, t, parts[i]);
            else
                read[i] = parseCells(piece, 0, nCells, t, parts[i], until);
            ends[i] = piece.offset();
        } catch (...) {
            failed[i] = 1;
        }
    });
    uint64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        // Each piece ends where the next begins (so each began where a cell does), and the
        // last where the one-piece reading would (counted: after nCells cells; else at the end).
        if (failed[i] || ends[i] != (i + 1 < n ? offset[i + 1] : counted ? ends.back() : cellsEnd))
            return false;
        if (i && !parts[i - 1].empty() && !parts[i].empty() && !(parts[i - 1].rbegin()->first < parts[i].begin()->first))
            return false;
        total += read[i];
    }
    if (total != nCells)
        return false;
    for (size_t i = 0; i < n; ++i)
        while (!parts[i].empty())
            cells.insert(cells.end(), parts[i].extract(parts[i].begin()));
    r.seek(ends.back());
    piecesRead += n;
    return true;
}

}  // namespace summary_binary

void setSummaryReadPieces(uint64_t cells, size_t bytes, int threads) {
    summary_binary::cellsAPiece = cells;
    summary_binary::bytesAPiece = bytes;
    summary_binary::pieceThreads = threads;
}

uint64_t summaryPiecesRead() { return summary_binary::piecesRead; }

}  // namespace kcx
