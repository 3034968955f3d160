// Summary files (issue 19, docs/summaries.md "The file"): the binary container read from a
// hand-encoded file built from the documentation alone, both containers read back, parts read
// on any number of threads, and every bad input an error naming the file and the place.
#include <QtTest/QTest>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>

#include "core/base/errors.h"
#include "core/formats/sniff.h"
#include "core/summary/summary.h"
#include "core/summary/summary_views.h"
#include "tests/support/summary_runs.h"
#include "tests/support/test_files.h"

using namespace kcx;
using test::makeRun;
using test::shardOf;

namespace {

std::string fileBytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string fileHeadBytes(const std::string& path, size_t n) { return fileBytes(path).substr(0, n); }

// The binary container as docs/summaries.md describes it, written by hand: LEB128 unsigned
// integers, zigzag signed ones, little-endian doubles, length-prefixed UTF-8 text.
struct Bytes {
    std::string b;
    Bytes& u(uint64_t v) {
        while (v >= 0x80) {
            b.push_back(char((v & 0x7f) | 0x80));
            v >>= 7;
        }
        b.push_back(char(v));
        return *this;
    }
    Bytes& s(int64_t v) { return u(v < 0 ? (uint64_t(-(v + 1)) << 1) | 1 : uint64_t(v) << 1); }
    Bytes& f(double d) {
        unsigned char x[8];
        std::memcpy(x, &d, 8);
        b.append(reinterpret_cast<char*>(x), 8);
        return *this;
    }
    Bytes& str(const std::string& t) {
        u(t.size());
        b += t;
        return *this;
    }
    // An exact sum of one 32-bit limb at index `low` (limb i weighs 2^(32 i - 1074)).
    Bytes& sum1(int low, uint32_t limb) { return s(1).u(uint64_t(low)).u(1).u(limb); }
};

// What the hand-made summary is made of; each bad input changes one thing.
struct HandMade {
    uint64_t version = 1;
    double accuracy = 0.01;
    uint64_t count = 2;
    uint32_t sumLimb = 3u << 16;              // 0.75 = 3 * 2^-2 = 3 * 2^16 * 2^(32*33 - 1074)
    uint64_t gap = 34;                        // empty buckets between the values' buckets
    std::string id = "seq-0";
    bool swapWorst = false;
    std::vector<std::string> metricTable{"abs_log_ratio"};
    uint64_t metricIndex = 0;
    std::vector<uint64_t> steps{3};           // one cell per entry (all tokens, all positions)
    std::string trailing;
};

// Bucket i holds (gamma^(i-1), gamma^i]: i = ceil(ln x / ln gamma), gamma = 1.01 / 0.99.
int32_t bucket(double x) { return int32_t(std::ceil(std::log(x) / std::log(1.01 / 0.99))); }

// One sequence "seq-0" of two tokens with abs_log_ratio 0.5 (position 1) and 0.25 (position 0).
std::string handMade(const HandMade& h) {
    Bytes o;
    o.b = std::string("\x89KCXSUM\n", 8);
    o.u(h.version).f(h.accuracy).u(5).f(0.2).u(0);
    const uint64_t cells = h.steps.size();
    o.u(1).str("r.jsonl").str(std::string(64, 'a')).u(cells).u(2 * cells);
    o.u(cells).u(2 * cells);                  // sequences, tokens
    o.u(0);                                   // no position buckets
    o.u(h.metricTable.size());
    for (const std::string& m : h.metricTable)
        o.str(m);
    o.u(cells);
    for (uint64_t step : h.steps) {
        o.u(step + 1).str("").u(0).u(1).u(2);
        o.u(0).u(0).u(0).u(0).u(0);           // run: pairs, ratios, missing, nonfinite, sequences
        for (int k = 0; k < 8; ++k)
            o.s(0);                           // run sums: zero
        o.u(1).u(h.metricIndex);
        o.u(h.count).u(0).u(0);
        o.sum1(33, h.sumLimb);                // sum 0.75
        o.sum1(33, 5u << 14);                 // sum of squares 0.3125 = 5 * 2^-4
        o.f(0.25).f(0.5);
        const int32_t lo = bucket(0.25), hi = bucket(0.5);
        QTest::qVerify(hi - lo - 1 == 34, "hi - lo", "", __FILE__, __LINE__);
        o.u(0).u(3).s(lo).u(1).u(0).u(h.gap).u(1).u(0);   // sketch: zeros, positive store, empty negative store
        o.u(1);                               // sequences
        o.sum1(33, 9u << 14);                 // sum of S_s^2: 0.5625 = 9 * 2^-4
        o.sum1(33, 1u << 20);                 // sum of n_s^2: 4 = 2^2
        o.sum1(33, 3u << 17);                 // sum of S_s n_s: 1.5 = 3 * 2^-1
        o.u(0).u(1).s(hi).u(1).u(0);          // sketch of sequence maxima: 0.5
        o.u(2);
        if (!h.swapWorst)
            o.f(0.5).str(h.id).s(1).s(int64_t(step)).f(0.25).str(h.id).s(0).s(int64_t(step));
        else
            o.f(0.25).str(h.id).s(0).s(int64_t(step)).f(0.5).str(h.id).s(1).s(int64_t(step));
    }
    o.b += h.trailing;
    return o.b;
}

}  // namespace

class TestSummaryIo : public QObject {
    Q_OBJECT

private slots:
    // The reader against a file written by hand from docs/summaries.md, figures checked by hand.
    void binaryFromTheDocumentation() {
        test::TempFiles files;
        const std::string path = files.writeGz("hand.kcxsum", handMade({}));
        QVERIFY(looksLikeSummary(path));
        const RunSummary s = readSummary(path);
        QCOMPARE(s.cells.size(), size_t(1));
        QCOMPARE(s.steps(), std::vector<int64_t>{3});
        QCOMPARE(s.tokens(), uint64_t(2));
        QCOMPARE(s.inputs.at(0).path, std::string("r.jsonl"));
        const CellData& d = s.cells.at(CellKey{3, "", "", -1});
        const MetricCell& m = d.metrics.at("abs_log_ratio");
        QCOMPARE(m.count, uint64_t(2));
        QCOMPARE(m.sum.value(), 0.75);
        QCOMPARE(m.sumSq.value(), 0.3125);
        QCOMPARE(m.mean(), 0.375);
        QCOMPARE(m.seqSumSq.value(), 0.5625);
        QCOMPARE(m.seqCountSq.value(), 4.0);
        QCOMPARE(m.seqSumCount.value(), 1.5);
        QCOMPARE(m.sketch.count(), uint64_t(2));
        QCOMPARE(*sketchQuantile(m, 1.0), 0.5);
        QCOMPARE(*sketchQuantile(m, 0.0), 0.25);
        // The lowest and highest ranks are the exact minimum and maximum, so the median of two
        // values is their mean; inside, a rank reads its bucket's value 2 gamma^i / (gamma + 1).
        QCOMPARE(*sketchQuantile(m, 0.5), 0.375);
        const double g = 1.01 / 0.99;
        for (auto [rank, x] : {std::pair{0, 0.25}, std::pair{1, 0.5}}) {
            const double want = 2 * std::pow(g, bucket(x)) / (g + 1);
            const double got = m.sketch.valueAtRank(uint64_t(rank));
            QVERIFY2(std::fabs(got - want) < 1e-12 * want, std::to_string(got).c_str());
            QVERIFY(std::fabs(got - x) <= 0.01 * x);
        }
        QCOMPARE(m.seqMax.count(), uint64_t(1));
        QCOMPARE(m.worst.size(), size_t(2));
        QCOMPARE(m.worst[0].value, 0.5);
        QCOMPARE(m.worst[0].position, int64_t(1));
        QCOMPARE(m.worst[1].id, std::string("seq-0"));
        QCOMPARE(m.worst[1].step, int64_t(3));
        QVERIFY(std::isnan(meanStandardError(m)));   // one sequence
        // The JSON container of the same summary spells the sum as docs/summaries.md says.
        QVERIFY2(summaryJsonText(s).find("\"sum\":[1,33,196608]") != std::string::npos, summaryJsonText(s).c_str());
        // What kcx writes reads back the same (its metric table names every metric).
        QVERIFY(parseSummary(summaryBinaryBytes(s), "again").cells == s.cells);
    }

    // A sketch read from the binary container stays packed in the file's bytes; every answer it
    // gives is the one of the dense sketch it was written from (dense sketches are checked
    // against the tokens in test_summary), and merging it into a dense one or adding to it
    // makes it dense with the same counts.
    void packedSketchesAnswerLikeDense() {
        auto run = makeRun(31, 120, 3);
        RunSummary s = summarizeRun(run);
        s.inputs = {{"r.jsonl", std::string(64, 'e'), run->sequenceCount(), run->tokenCount()}};
        const RunSummary back = parseSummary(summaryBinaryBytes(s), "packed");
        size_t packed = 0, negatives = 0;
        for (const auto& [key, cell] : s.cells)
            for (const auto& [name, m] : cell.metrics) {
                const MetricCell& r = back.cells.at(key).metrics.at(name);
                for (auto [written, read] : {std::pair{&m.sketch, &r.sketch}, std::pair{&m.seqMax, &r.seqMax}}) {
                    // kcx summarize packs its sketches too: merged into an empty one, dense.
                    Sketch denseCopy;
                    denseCopy.merge(*written);
                    QVERIFY(denseCopy.packed() == nullptr);
                    QVERIFY(written->count() == written->zeros() || written->packed() != nullptr);
                    const Sketch* dense = &denseCopy;
                    const uint64_t n = dense->count();
                    QCOMPARE(read->count(), n);
                    if (!n)
                        continue;
                    if (read->packed()) {
                        ++packed;
                        negatives += read->packed()->negTotal > 0;
                    }
                    for (uint64_t k = 0; k < n; k += 1 + n / 97)
                        QCOMPARE(read->valueAtRank(k), dense->valueAtRank(k));
                    QCOMPARE(read->valueAtRank(n - 1), dense->valueAtRank(n - 1));
                    for (double level : {0.0, -1e-3, 1e-3, dense->valueAtRank(n / 2), dense->valueAtRank(n - 1) * 0.999}) {
                        QVERIFY(read->countAbove(level) == dense->countAbove(level));
                        QVERIFY(read->countBelow(level) == dense->countBelow(level));
                    }
                    QVERIFY(*read == *dense);
                    Sketch merged = *read;   // packed, made dense by the merge
                    merged.merge(*dense);
                    Sketch twice = *dense;
                    twice.merge(*dense);
                    QVERIFY(merged == twice);
                    QVERIFY(merged.packed() == nullptr);
                    // Two packed sketches merge (densely); a dense one packs.
                    Sketch both = *read;
                    both.merge(*read);
                    QVERIFY(both == twice);
                    QCOMPARE(both.count(), 2 * n);
                    Sketch own = *dense;
                    own.pack();
                    QVERIFY(own == *dense);
                    QCOMPARE(own.count(), n);
                    QCOMPARE(own.valueAtRank(n / 3), dense->valueAtRank(n / 3));
                    Sketch added = *read;
                    added.add(-0.5);
                    Sketch addedDense = *dense;
                    addedDense.add(-0.5);
                    QVERIFY(added == addedDense);
                }
            }
        QVERIFY2(packed > 100 && negatives > 10, (std::to_string(packed) + " " + std::to_string(negatives)).c_str());
        // Totals over steps merge packed cells; written again, the same bytes.
        QVERIFY(back.total()->metrics == s.total()->metrics);
        QVERIFY(summaryBinaryBytes(back) == summaryBinaryBytes(s));
    }

    // Every bad input of the binary container: an error naming the file and the place.
    void badBinaryNamesFileAndPlace() {
        test::TempFiles files;
        auto err = [&](const std::function<void(HandMade&)>& edit) {
            HandMade h;
            edit(h);
            const std::string p = files.write("bad.kcxsum", handMade(h));
            return test::errorOf([&] { readSummary(p); });
        };
        auto expect = [&](const std::string& got, const char* place, const char* words) {
            QVERIFY2(got.find("bad.kcxsum") != std::string::npos, got.c_str());
            QVERIFY2(got.find(place) != std::string::npos, got.c_str());
            QVERIFY2(got.find(words) != std::string::npos, got.c_str());
        };
        QCOMPARE(err([](HandMade&) {}), std::string("(no error)"));
        expect(err([](HandMade& h) { h.version = 7; }), "kcx_summary", "version 7");
        expect(err([](HandMade& h) { h.accuracy = 0.02; }), "relative_accuracy", "0.01");
        expect(err([](HandMade& h) { h.count = 3; }), "cells[0].metrics.abs_log_ratio.sketch", "count says 3");
        expect(err([](HandMade& h) { h.sumLimb = 0; }), "cells[0].metrics.abs_log_ratio.sum", "canonical");
        expect(err([](HandMade& h) { h.gap = 0; }), "cells[0].metrics.abs_log_ratio.sketch.pos", "empty buckets");
        expect(err([](HandMade& h) { h.gap = 90000; }), "cells[0].metrics.abs_log_ratio.sketch.pos", "reach");
        expect(err([](HandMade& h) { h.id = "seq-\xff"; }), "cells[0].metrics.abs_log_ratio.worst[0]", "UTF-8");
        expect(err([](HandMade& h) { h.swapWorst = true; }), "cells[0].metrics.abs_log_ratio.worst[1]", "not in order");
        expect(err([](HandMade& h) { h.steps = {3, 3}; }), "cells[1]", "a second cell");
        expect(err([](HandMade& h) { h.steps = {3, 2}; }), "cells[1]", "not in order");
        expect(err([](HandMade& h) { h.metricIndex = 1; }), "cells[0].metrics", "metric indices");
        expect(err([](HandMade& h) { h.metricTable = {"nonsense"}; }), "metrics", "not a token or sequence metric");
        expect(err([](HandMade& h) { h.metricTable = {"abs_log_ratio", "abs_log_ratio"}; }), "metrics", "twice");
        expect(err([](HandMade& h) { h.trailing = "x"; }), "cells", "bytes after the last cell");
        // tv needs logits, tv_lower top-k or logits; the file's data flags say it had neither.
        expect(err([](HandMade& h) { h.metricTable = {"tv"}; }), "cells[0].metrics.tv", "no logits");
        expect(err([](HandMade& h) { h.metricTable = {"tv_lower"}; }), "cells[0].metrics.tv_lower", "no top-k or logits");
        // Cut anywhere: an error naming the file, never a crash or a summary.
        const std::string good = handMade({});
        for (size_t n = 0; n < good.size(); ++n) {
            const std::string p = files.write("cut.kcxsum", good.substr(0, n));
            const std::string e = test::errorOf([&] { readSummary(p); });
            QVERIFY2(e.find("cut.kcxsum") != std::string::npos && e.find("NOT AN") == std::string::npos, e.c_str());
        }
        // Any single byte changed: an error or a summary, never a crash or another exception.
        for (size_t i = 8; i < good.size(); ++i)
            for (unsigned char x : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
                std::string b = good;
                b[i] = char(x);
                const std::string e = test::errorOf([&] { parseSummary(b, "flip"); });
                QVERIFY2(e.find("NOT AN") == std::string::npos, e.c_str());
            }
    }

    // Both containers read back the same cells, compressed or not, and are recognised by content.
    void fileRoundTrip() {
        test::TempFiles files;
        auto run = makeRun(7, 50, 2);
        RunSummary s = summarizeRun(run);
        s.inputs = {{"r.jsonl", std::string(64, 'f'), run->sequenceCount(), run->tokenCount()}};
        const std::string path = files.path("r.kcxsum");
        writeSummary(s, path);
        QVERIFY(looksLikeSummary(path));
        QCOMPARE(fileHeadBytes(path, 2), std::string("\x1f\x8b"));   // gzip
        const RunSummary back = readSummary(path);
        QVERIFY(back.cells == s.cells);
        QVERIFY(back.inputs == s.inputs);
        QCOMPARE(summaryJsonText(back), summaryJsonText(s));
        // The binary container uncompressed, and the JSON one compressed and plain.
        const std::string raw = files.write("raw.kcxsum", summaryBinaryBytes(s));
        QCOMPARE(fileHeadBytes(raw, 8), std::string("\x89KCXSUM\n", 8));
        QVERIFY(looksLikeSummary(raw));
        QVERIFY(readSummary(raw).cells == s.cells);
        const std::string json = files.path("j.kcxsum");
        writeSummaryJson(s, json);
        QVERIFY(looksLikeSummary(json));
        QVERIFY(readSummary(json).cells == s.cells);
        const std::string plain = files.write("plain.json", summaryJsonText(s));
        QVERIFY(looksLikeSummary(plain));
        QVERIFY(readSummary(plain).cells == s.cells);
        // Equal summaries, equal files.
        const std::string again = files.path("again.kcxsum");
        writeSummary(back, again);
        QVERIFY(fileBytes(again) == fileBytes(path));
    }

    // kcx merge reads its parts on every worker thread: the same summary, to the byte, as
    // reading them one after another, on 1 to 7 threads; and on a clash or a bad part the
    // error names the first file in order that brings one, whatever the threads.
    void readingPartsOnAnyThreads() {
        test::TempFiles files;
        auto run = makeRun(12, 140, 3);
        const size_t cuts[] = {0, 9, 30, 31, 60, 85, 120, run->sequenceCount()};
        std::vector<std::string> paths;
        for (size_t k = 0; k + 1 < std::size(cuts); ++k) {
            const auto shard = shardOf(*run, cuts[k], cuts[k + 1]);
            RunSummary part = summarizeRun(shard);
            part.inputs = {{"p" + std::to_string(k) + ".jsonl", std::string(63, 'a') + char('0' + k),
                            shard->sequenceCount(), shard->tokenCount()}};
            paths.push_back(files.path("p" + std::to_string(k) + ".kcxsum"));
            writeSummary(part, paths.back());
        }
        const RunSummary whole = summarizeRun(run);
        const std::string inOrder = summaryJsonText(readSummaries(paths, 1));
        for (int threads : {2, 3, 7}) {
            const RunSummary got = readSummaries(paths, threads);
            QVERIFY(got.cells == whole.cells);
            QCOMPARE(got.inputs.size(), size_t(7));
            QCOMPARE(summaryJsonText(got), inOrder);
        }
        auto errorOf = [&](const std::vector<std::string>& ps, int threads) {
            try {
                readSummaries(ps, threads);
            } catch (const InputError& e) {
                return std::string(e.what());
            }
            return std::string("no error");
        };
        // Part 2 again at place 5 (a clash), and a cut file at place 6.
        std::vector<std::string> bad = paths;
        bad[5] = files.path("again.kcxsum");
        {
            RunSummary again = readSummary(paths[2]);
            writeSummary(again, bad[5]);
        }
        const std::string cut = files.write("cut.kcxsum", "{\"kcx_summary\": 1, \"cells\": [");
        bad[6] = cut;
        for (int threads : {1, 2, 3, 7}) {
            const std::string e = errorOf(bad, threads);
            QVERIFY2(e.find(bad[5]) != std::string::npos && e.find("twice") != std::string::npos, e.c_str());
            std::vector<std::string> onlyCut = paths;
            onlyCut[6] = cut;
            const std::string c = errorOf(onlyCut, threads);
            QVERIFY2(c.find(cut) != std::string::npos && c.find("twice") == std::string::npos, c.c_str());
        }
    }

    // Every bad input of the JSON container: an error naming the file and the place.
    // readPlainOrGzip (libdeflate, member by member): what zlib's gzread gave, checked against
    // texts written here with zlib, and a bomb refused before it is inflated past the limit.
    void gzipReadWhole() {
        test::TempFiles files;
        const std::string a = "first member\n", b = std::string(3000000, 'x') + "second";
        const std::string one = files.writeGz("one.gz", a);
        QCOMPARE(readPlainOrGzip(one), a);
        std::string gzA, gzB;
        {
            std::ifstream f(one, std::ios::binary);
            gzA.assign(std::istreambuf_iterator<char>(f), {});
            std::ifstream g(files.writeGz("two.gz", b), std::ios::binary);
            gzB.assign(std::istreambuf_iterator<char>(g), {});
        }
        // Two members: the last one's ISIZE (3,000,006) is not the whole, so the output grows.
        QCOMPARE(readPlainOrGzip(files.write("cat.gz", gzA + gzB)), a + b);
        QCOMPARE(readPlainOrGzip(files.write("cat2.gz", gzB + gzA)), b + a);
        // Bytes after the last member that start no other member are ignored, as gzread did.
        QCOMPARE(readPlainOrGzip(files.write("tail.gz", gzA + std::string(7, '\0'))), a);
        // Not gzip: the bytes as they are.
        QCOMPARE(readPlainOrGzip(files.write("plain.txt", "plain\n")), std::string("plain\n"));
        QCOMPARE(readPlainOrGzip(files.write("empty.txt", "")), std::string());
        // A member cut short, and a damaged one: errors naming the file and the member.
        const std::string cut = files.write("cut.gz", gzA + gzB.substr(0, gzB.size() / 2));
        std::string e = test::errorOf([&] { readPlainOrGzip(cut); });
        QVERIFY2(e.find("cut.gz") != std::string::npos && e.find("byte " + std::to_string(gzA.size())) != std::string::npos,
                 e.c_str());
        std::string bad = gzB;   // its CRC-32 (the trailer's first four bytes) no longer matches
        bad[bad.size() - 6] = char(bad[bad.size() - 6] ^ 0x55);
        e = test::errorOf([&] { readPlainOrGzip(files.write("bad.gz", bad)); });
        QVERIFY2(e.find("bad.gz") != std::string::npos && e.find("corrupt gzip") != std::string::npos, e.c_str());
        // Over the limit: 3,000,006 bytes inflated against a 1 MiB limit, plain or compressed.
        e = test::errorOf([&] { readPlainOrGzip(files.path("two.gz"), size_t(1) << 20, "summary"); });
        QVERIFY2(e.find("two.gz") != std::string::npos && e.find("larger than 1 MiB") != std::string::npos, e.c_str());
        e = test::errorOf([&] { readPlainOrGzip(files.write("big.txt", b), size_t(1) << 20, "summary"); });
        QVERIFY2(e.find("big.txt") != std::string::npos && e.find("more than a summary may be") != std::string::npos,
                 e.c_str());
        // Exactly at the limit is accepted.
        QCOMPARE(readPlainOrGzip(files.path("two.gz"), b.size(), "summary").size(), b.size());
    }

    // Members whose headers say their size (writeGzipMember: an extra field "KX") are
    // inflated all at once, and read as plain gzip by zlib. A size, length or ISIZE that does
    // not hold sends the file down the member-by-member path: the same text, or its error.
    void gzipMembersThatSayTheirSize() {
        test::TempFiles files;
        std::mt19937_64 rng(5);
        std::string text;
        while (text.size() < 700000)
            text += "token " + std::to_string(rng() % 1000) + (rng() % 7 ? " " : "\n");
        const std::vector<size_t> cuts = {100000, 250000, 251000, 600000};
        std::string gz;
        std::vector<size_t> memberAt;   // where each member begins in the file
        size_t from = 0;
        for (size_t i = 0; i <= cuts.size(); ++i) {
            memberAt.push_back(gz.size());
            const size_t to = i < cuts.size() ? cuts[i] : text.size();
            writeGzipMember(std::string_view(text).substr(from, to - from), 1, gz);
            from = to;
        }
        const std::string path = files.write("m.gz", gz);
        // zlib (any gzip reader) skips the field and joins the members.
        {
            gzFile f = gzopen(path.c_str(), "rb");
            QVERIFY(f);
            std::string z(text.size() + 10, '\0');
            const int n = gzread(f, z.data(), unsigned(z.size()));
            gzclose(f);
            QCOMPARE(z.substr(0, size_t(std::max(n, 0))), text);
        }
        uint64_t before = gzipParallelInflates();
        std::vector<size_t> starts;
        QCOMPARE(readPlainOrGzip(path, SIZE_MAX, "text", &starts), text);
        QCOMPARE(gzipParallelInflates(), before + 1);
        QCOMPARE(starts, cuts);
        // Equal text, equal bytes.
        std::string again;
        writeGzipMember(std::string_view(text).substr(0, cuts[0]), 1, again);
        QCOMPARE(again, gz.substr(0, memberAt[1]));
        // A member's stated size one off either way, far too large, or the file with bytes after
        // its last member: read member by member, the same text.
        const auto withSize = [&](size_t member, uint64_t size) {
            std::string b = gz;
            for (int i = 0; i < 8; ++i)
                b[memberAt[member] + 16 + size_t(i)] = char(size >> (8 * i));
            return b;
        };
        const uint64_t size2 = memberAt[3] - memberAt[2];
        int k = 0;
        for (const std::string& b : {withSize(2, size2 + 1), withSize(2, size2 - 1), withSize(2, uint64_t(1) << 62),
                                     withSize(0, 0), gz + std::string(5, '\0')}) {
            before = gzipParallelInflates();
            starts.clear();
            QCOMPARE(readPlainOrGzip(files.write("s" + std::to_string(k++) + ".gz", b), SIZE_MAX, "text", &starts), text);
            QCOMPARE(gzipParallelInflates(), before);
            QCOMPARE(starts, cuts);
        }
        // An ISIZE that lies: the member-by-member reader's error, naming the member's byte.
        std::string lie = gz;
        lie[memberAt[3] - 4] = char(lie[memberAt[3] - 4] ^ 1);   // member 2's ISIZE
        std::string e = test::errorOf([&] { readPlainOrGzip(files.write("lie.gz", lie)); });
        QVERIFY2(e.find("lie.gz") != std::string::npos && e.find("byte " + std::to_string(memberAt[2])) != std::string::npos,
                 e.c_str());
        // An ISIZE no member could reach (4 GB from a few KB): not believed, the same error.
        for (size_t member : {size_t(2), size_t(4)}) {
            std::string huge = gz;
            const size_t end = member + 1 < memberAt.size() ? memberAt[member + 1] : gz.size();
            for (int i = 1; i <= 4; ++i)
                huge[end - size_t(i)] = char(0xff);
            e = test::errorOf([&] { readPlainOrGzip(files.write("huge.gz", huge)); });
            QVERIFY2(e.find("huge.gz") != std::string::npos &&
                         e.find("byte " + std::to_string(memberAt[member])) != std::string::npos,
                     e.c_str());
        }
        // Over the limit, and exactly at it.
        e = test::errorOf([&] { readPlainOrGzip(path, text.size() - 1, "summary"); });
        QVERIFY2(e.find("m.gz") != std::string::npos && e.find("larger than") != std::string::npos, e.c_str());
        QCOMPARE(readPlainOrGzip(path, text.size(), "summary"), text);
    }

    // A binary summary read in pieces on several threads (many cells, several CPUs) is the
    // summary written and the one read in one piece; a fault in the last piece gives the
    // one-piece reading's error.
    void readingOneFileInPieces() {
        auto run = makeRun(21, 300, 6);
        RunSummary s = summarizeRun(run);
        s.inputs = {{"r.jsonl", std::string(64, 'b'), run->sequenceCount(), run->tokenCount()}};
        const auto bytes = std::make_shared<const std::string>(summaryBinaryBytes(s));
        QVERIFY(s.cells.size() > 200);
        setSummaryReadPieces(uint64_t(1) << 40, size_t(1) << 40, 4);   // one piece
        uint64_t before = summaryPiecesRead();
        const RunSummary one = parseSummaryBinary(bytes, "one.kcxsum");
        QCOMPARE(summaryPiecesRead(), before);
        QVERIFY(one.cells == s.cells);
        for (uint64_t cells : {1, 7, 50}) {
            setSummaryReadPieces(cells, 1, 4);
            before = summaryPiecesRead();
            const RunSummary pieces = parseSummaryBinary(bytes, "p.kcxsum");
            QCOMPARE(summaryPiecesRead(), before + 4);   // a piece a thread
            QVERIFY(pieces.cells == s.cells);
            QCOMPARE(summaryBinaryBytes(pieces), *bytes);
        }
        setSummaryReadPieces(7, 1, 4);
        const auto errorOf = [](const std::string& b) {
            return test::errorOf([&] { parseSummaryBinary(std::make_shared<const std::string>(b), "bad.kcxsum"); });
        };
        const auto errorInOnePiece = [&](const std::string& b) {
            setSummaryReadPieces(uint64_t(1) << 40, size_t(1) << 40, 4);
            const std::string e = errorOf(b);
            setSummaryReadPieces(7, 1, 4);
            return e;
        };
        for (const std::string& bad : {bytes->substr(0, bytes->size() - 3), *bytes + "x",
                                       bytes->substr(0, bytes->size() / 2)}) {
            const std::string e = errorOf(bad);
            QVERIFY2(e.find("bad.kcxsum") != std::string::npos && e.find("cells") != std::string::npos, e.c_str());
            QCOMPARE(e, errorInOnePiece(bad));
        }
        // Any damage reads the same in pieces as in one: 100 files, each with a few bytes
        // changed at seeded places, give the same error or the same summary either way.
        std::mt19937_64 rng(19);
        int errors = 0;
        for (int k = 0; k < 100; ++k) {
            std::string bad = *bytes;
            for (int j = 0, n = 1 + int(rng() % 3); j < n; ++j)
                bad[size_t(rng() % bad.size())] = char(rng());
            const auto read = [&](bool pieces) {
                setSummaryReadPieces(pieces ? 7 : uint64_t(1) << 40, pieces ? 1 : size_t(1) << 40, 4);
                try {
                    return summaryBinaryBytes(parseSummaryBinary(std::make_shared<const std::string>(bad), "m.kcxsum"));
                } catch (const InputError& e) {
                    ++errors;
                    return std::string("error: ") + e.what();
                }
            };
            QCOMPARE(read(true), read(false));
        }
        QVERIFY(errors > 100);   // most damage is caught (twice: once each way)
        setSummaryReadPieces(1024, size_t(8) << 20, 0);
    }

    // writeSummary begins a gzip member every few MiB of cells (here 2 KB), and a reader's
    // pieces begin where the members did, without a walk over the cells. Any offsets given
    // as members' starts, most of them inside a cell, give the same summary, or the same error
    // as the one-piece reading.
    void piecesBeginWhereMembersBegan() {
        auto run = makeRun(22, 300, 6);
        RunSummary s = summarizeRun(run);
        s.inputs = {{"r.jsonl", std::string(64, 'c'), run->sequenceCount(), run->tokenCount()}};
        const std::string want = summaryBinaryBytes(s);
        test::TempFiles files;
        const std::string path = files.path("m.kcxsum");
        setSummaryReadPieces(7, 2048, 4);
        writeSummary(s, path);
        std::vector<size_t> members;
        QCOMPARE(readPlainOrGzip(path, kMaxSummaryBytes, "summary", &members), want);   // the members join
        QVERIFY2(members.size() >= 16 && members.size() < want.size() / 2048, std::to_string(members.size()).c_str());
        for (size_t i = 1; i < members.size(); ++i)
            QVERIFY(members[i] - members[i - 1] >= 2048);
        uint64_t before = summaryPiecesRead();
        QCOMPARE(summaryBinaryBytes(readSummary(path)), want);
        QCOMPARE(summaryPiecesRead(), before + 16);   // four a thread, at most 16
        // Offsets anywhere: the same summary, read in pieces or (when a piece fails) in one.
        const auto bytes = std::make_shared<const std::string>(want);
        std::mt19937_64 rng(23);
        int inPieces = 0;
        for (int k = 0; k < 60; ++k) {
            std::vector<size_t> cuts;
            for (int j = 0, n = 1 + int(rng() % 5); j < n; ++j)
                cuts.push_back(size_t(rng() % want.size()));
            if (k % 3 == 0)   // some true starts among them
                cuts.insert(cuts.end(), members.begin(), members.begin() + std::min<size_t>(members.size(), 3));
            std::sort(cuts.begin(), cuts.end());
            before = summaryPiecesRead();
            QCOMPARE(summaryBinaryBytes(parseSummaryBinary(bytes, "c.kcxsum", cuts)), want);
            inPieces += summaryPiecesRead() > before;
        }
        QVERIFY(inPieces > 0 && inPieces < 60);   // both ways were taken
        // Damaged bytes: the same error or summary with the members' starts as in one piece.
        int errors = 0;
        for (int k = 0; k < 40; ++k) {
            std::string bad = want;
            bad[size_t(rng() % bad.size())] = char(rng());
            const auto read = [&](bool pieces) {
                setSummaryReadPieces(pieces ? 7 : uint64_t(1) << 40, pieces ? 2048 : size_t(1) << 40, 4);
                try {
                    return summaryBinaryBytes(
                        parseSummaryBinary(std::make_shared<const std::string>(bad), "d.kcxsum", members));
                } catch (const InputError& e) {
                    ++errors;
                    return std::string("error: ") + e.what();
                }
            };
            QCOMPARE(read(true), read(false));
        }
        QVERIFY(errors > 20);
        setSummaryReadPieces(1024, size_t(8) << 20, 0);
    }

    void badJsonNamesFileAndPlace() {
        test::TempFiles files;
        auto run = makeRun(8, 20, 1);
        RunSummary s = summarizeRun(run);
        s.inputs = {{"r.jsonl", std::string(64, 'f'), run->sequenceCount(), run->tokenCount()}};
        const nlohmann::json good = nlohmann::json::parse(summaryJsonText(s));
        auto err = [&](const std::function<void(nlohmann::json&)>& edit) {
            nlohmann::json j = good;
            edit(j);
            const std::string p = files.write("bad.kcxsum", j.dump());
            return test::errorOf([&] { readSummary(p); });
        };
        auto expect = [&](const std::string& got, const char* place, const char* words) {
            QVERIFY2(got.find("bad.kcxsum") != std::string::npos, got.c_str());
            QVERIFY2(got.find(place) != std::string::npos, got.c_str());
            QVERIFY2(got.find(words) != std::string::npos, got.c_str());
        };
        // Cell 0 is step 0, all sequences, all positions (the cells are sorted).
        expect(err([](auto& j) { j["kcx_summary"] = 2; }), "kcx_summary", "version 2");
        expect(err([](auto& j) { j["relative_accuracy"] = 0.02; }), "relative_accuracy", "0.01");
        expect(err([](auto& j) { j.erase("inputs"); }), "top level", "\"inputs\" is missing");
        expect(err([](auto& j) { j["inputs"][0]["sha256"] = "xyz"; }), "inputs[0].sha256", "hex");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["abs_log_ratio"]["count"] = 3; }),
               "cells[0].metrics.abs_log_ratio.sketch", "count says 3");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["abs_log_ratio"]["count"] = -3; }),
               "cells[0].metrics.abs_log_ratio.count", "whole number");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["abs_log_ratio"]["min"] = 1e9; }),
               "cells[0].metrics.abs_log_ratio", "min is above max");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["abs_log_ratio"]["sum"] = {1, 3, 0}; }),
               "cells[0].metrics.abs_log_ratio.sum", "canonical");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["abs_log_ratio"]["sum"] = {1, 3, 5000000000}; }),
               "cells[0].metrics.abs_log_ratio.sum[2]", "below 2^32");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["nonsense"] = j["cells"][0]["metrics"]["abs_log_ratio"]; }),
               "cells[0].metrics.nonsense", "not a token or sequence metric");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["abs_log_ratio"]["sketch"]["pos"][1] = {1, -1, 1}; }),
               "cells[0].metrics.abs_log_ratio.sketch.pos[1][1]", "empty buckets");
        expect(err([](auto& j) { j["cells"][0]["metrics"]["abs_log_ratio"]["sketch"]["pos"][0] = 99999; }),
               "cells[0].metrics.abs_log_ratio.sketch.pos", "what a double can reach");
        expect(err([](auto& j) {
                   auto& w = j["cells"][0]["metrics"]["abs_log_ratio"]["worst"];
                   std::swap(w[0], w[1]);
               }),
               "cells[0].metrics.abs_log_ratio.worst[1]", "not in order");
        expect(err([](auto& j) { j["cells"].push_back(j["cells"][0]); }), "cells[", "a second cell");
        expect(err([](auto& j) { j["cells"][0]["pos"] = "pos_1_2"; }), "cells[0].pos", "position bucket");
        expect(err([](auto& j) { j["cells"][0]["key"] = "task"; }), "cells[0]", "both null");
        expect(err([](auto& j) { j["cells"][0]["step"] = -4; }), "cells[0].step", ">= 0");
        expect(err([](auto& j) { j["tokens"] = 1; }), "sequences", "totals");
        expect(err([](auto& j) { j["inputs"][0]["tokens"] = 1; }), "inputs", "add up");
        // Not JSON, truncated gzip, too deep.
        const std::string text = files.write("t.kcxsum", "{\"kcx_summary\": 1, \"cells\": [");
        QVERIFY(test::errorOf([&] { readSummary(text); }).find("not valid JSON") != std::string::npos);
        // A number too large for a double (fuzz_summary's first finding: nlohmann throws
        // out_of_range, not parse_error).
        const std::string huge = files.write("huge.kcxsum", "{\"kcx_summary\": 1, \"ppo_clip\": 33e135844960}");
        const std::string he = test::errorOf([&] { readSummary(huge); });
        QVERIFY2(he.find("huge.kcxsum") != std::string::npos && he.find("not valid JSON") != std::string::npos, he.c_str());
        const std::string gz = files.writeGz("g.kcxsum", summaryJsonText(s));
        std::string bytes;
        {
            std::ifstream f(gz, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(f), {});
        }
        const std::string cut = files.write("cut.kcxsum", bytes.substr(0, bytes.size() / 2));
        const std::string e = test::errorOf([&] { readSummary(cut); });
        QVERIFY2(e.find("cut.kcxsum") != std::string::npos, e.c_str());
        const std::string deep = files.write("deep.kcxsum", "{\"kcx_summary\": 1, \"x\": " + std::string(100, '[') +
                                                                std::string(100, ']') + "}");
        QVERIFY(test::errorOf([&] { readSummary(deep); }).find("deeper") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestSummaryIo)
#include "test_summary_io.moc"
