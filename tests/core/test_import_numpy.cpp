// NumPy runs (core/formats/import_numpy.h): .npy headers of versions 1-3, the dtypes numpy writes,
// .npz archives stored (np.savez) and deflated (np.savez_compressed) with the ZIP64 local
// headers numpy's zipfile writes, directories of .npy files, and every way such a file can
// be broken. All bytes are assembled here, independent of numpy and of the reader.
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/base/errors.h"
#include "core/base/half.h"
#include "core/formats/import_numpy.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"
#include "core/metrics/metrics.h"
#include "tests/support/same_figures.h"
#include "tests/support/test_files.h"

using namespace kcx;
using test::compareFigures;
using test::le;
using test::errorOf;

namespace {

// ---- .npy ---------------------------------------------------------------------------------------

std::string shapeTuple(const std::vector<uint64_t>& shape) {
    std::string s = "(";   // appended piecewise: GCC 12 warns falsely on "(" + std::string (bug 105329)
    for (size_t i = 0; i < shape.size(); ++i)
        s.append(i ? ", " : "").append(std::to_string(shape[i]));
    return s.append(shape.size() == 1 ? ",)" : ")");
}

// An .npy file as numpy.save writes it: magic, version, header length, the dict padded with
// spaces and a newline so that the data starts at a multiple of 64.
std::string npy(const std::string& descr, const std::vector<uint64_t>& shape, const std::string& data, int major = 1,
                bool fortran = false) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shapeTuple(shape) + ", }";
    const size_t pre = major == 1 ? 10 : 12;
    while ((pre + dict.size() + 1) % 64)
        dict += ' ';
    dict += '\n';
    std::string s = "\x93NUMPY";
    s += char(major);
    s += char(0);
    if (major == 1)
        s += le<uint16_t>({uint16_t(dict.size())});
    else
        s += le<uint32_t>({uint32_t(dict.size())});
    return s + dict + data;
}

std::string utf32(const std::vector<std::string>& strings, size_t width) {
    std::string s;
    for (const auto& str : strings) {   // ASCII only here
        for (size_t i = 0; i < width; ++i)
            s += le<uint32_t>({i < str.size() ? uint32_t((unsigned char)str[i]) : 0u});
    }
    return s;
}

// ---- .npz ---------------------------------------------------------------------------------------
struct Entry {
    std::string name, data;
    bool deflate = false;
    uint16_t method = 0;   // overrides when non-zero (unsupported methods)
};

std::string deflateRaw(const std::string& in) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, uLong(in.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// A ZIP archive. With zip64Local every local header carries 0xFFFFFFFF sizes and a ZIP64
// extra field, as Python's zipfile writes members opened with force_zip64 (numpy.savez);
// with zip64End the directory is found through a ZIP64 end record and locator.
std::string zipOf(const std::vector<Entry>& entries, bool zip64Local = true, bool zip64End = false) {
    std::string out, central;
    for (const Entry& e : entries) {
        const std::string body = e.deflate ? deflateRaw(e.data) : e.data;
        const uint32_t crc = uint32_t(crc32(0, reinterpret_cast<const Bytef*>(e.data.data()), uInt(e.data.size())));
        const uint16_t method = e.method ? e.method : e.deflate ? 8 : 0;
        const uint32_t offset = uint32_t(out.size());
        out += le<uint32_t>({0x04034b50});
        out += le<uint16_t>({uint16_t(zip64Local ? 45 : 20), 0, method, 0, 0x21});
        out += le<uint32_t>({crc, zip64Local ? 0xFFFFFFFFu : uint32_t(body.size()),
                             zip64Local ? 0xFFFFFFFFu : uint32_t(e.data.size())});
        out += le<uint16_t>({uint16_t(e.name.size()), uint16_t(zip64Local ? 20 : 0)});
        out += e.name;
        if (zip64Local) {
            out += le<uint16_t>({1, 16});
            out += le<uint64_t>({e.data.size(), body.size()});
        }
        out += body;
        central += le<uint32_t>({0x02014b50});
        central += le<uint16_t>({45, uint16_t(zip64Local ? 45 : 20), 0, method, 0, 0x21});
        central += le<uint32_t>({crc, uint32_t(body.size()), uint32_t(e.data.size())});
        central += le<uint16_t>({uint16_t(e.name.size()), 0, 0, 0, 0});
        central += le<uint32_t>({0, offset});
        central += e.name;
    }
    const uint64_t cdOffset = out.size();
    out += central;
    if (zip64End) {
        const uint64_t z = out.size();
        out += le<uint32_t>({0x06064b50});
        out += le<uint64_t>({44});
        out += le<uint16_t>({45, 45});
        out += le<uint32_t>({0, 0});
        out += le<uint64_t>({entries.size(), entries.size(), central.size(), cdOffset});
        out += le<uint32_t>({0x07064b50, 0});
        out += le<uint64_t>({z});
        out += le<uint32_t>({1});
    }
    out += le<uint32_t>({0x06054b50});
    out += le<uint16_t>({0, 0});
    const uint16_t n = zip64End ? 0xFFFF : uint16_t(entries.size());
    out += le<uint16_t>({n, n});
    out += le<uint32_t>({uint32_t(central.size()), zip64End ? 0xFFFFFFFFu : uint32_t(cdOffset)});
    out += le<uint16_t>({0});
    return out;
}

// ---- the run used throughout ----------------------------------------------------------------------
// Three sequences; every value is exact in binary. log_ratio = train - inf:
//   a: -0.25, 0.25, 0   b: 0.25, NaN (inf is NaN)   c: -0.25
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<Entry> runEntries(bool deflate, bool withMetadata = true) {
    std::vector<Entry> e = {
        {"offsets.npy", npy("<i8", {4}, le<int64_t>({0, 3, 5, 6}))},
        {"tokens.npy", npy("<i4", {6}, le<int32_t>({5, 7, 9, 3, 4, 11}))},
        {"logp_train.npy", npy("<f8", {6}, le<double>({-0.5, -1.25, -2.0, -0.125, -3.0, -1.0}))},
        {"logp_inf.npy", npy("<f8", {6}, le<double>({-0.25, -1.5, -2.0, -0.375, kNaN, -0.75}))},
        {"topk_train_ids.npy", npy("<i4", {6, 2}, le<int32_t>({5, 1, 7, 2, 9, 3, 3, 1, 4, 2, 11, 0}))},
        {"topk_train_logp.npy",
         npy("<f8", {6, 2}, le<double>({-0.5, -1.0, -1.25, -1.5, -2.0, -2.25, -0.125, -2.5, -3.0, -3.5, -1.0, -1.25}))},
        {"topk_inf_ids.npy", npy("<i4", {6, 2}, le<int32_t>({5, 1, 7, 2, 9, 3, 3, 1, 4, 2, 11, 0}))},
        {"topk_inf_logp.npy",
         npy("<f8", {6, 2}, le<double>({-0.25, -2.0, -1.5, -1.75, -2.0, -2.5, -0.375, -1.5, -1.0, -3.0, -0.75, -1.0}))},
        {"reward_train.npy", npy("<f8", {3}, le<double>({1.0, 0.0, 0.5}))},
        {"reward_inf.npy", npy("<f8", {3}, le<double>({1.0, 0.5, 0.5}))},
        {"notes.txt", "members that are not .npy are ignored"},
    };
    if (withMetadata) {
        e.push_back({"ids.npy", npy("<U1", {3}, utf32({"a", "b", "c"}, 1))});
        e.push_back({"slice_keys.npy", npy("<U4", {1}, utf32({"task"}, 4))});
        const std::string values = R"({"task": ["math", "code"]})";
        e.push_back({"slice_values.npy", npy("<U" + std::to_string(values.size()), {}, utf32({values}, values.size()))});
        e.push_back({"slice_codes.npy", npy("<i4", {3, 1}, le<int32_t>({0, 1, -1}))});
    }
    for (auto& x : e)
        x.deflate = deflate;
    return e;
}

// The same run as SPEC 1.1 JSON Lines.
const char* kJsonl =
    R"({"id":"a","slices":{"task":"math"},"tokens":[5,7,9],"logp_train":[-0.5,-1.25,-2.0],"logp_inf":[-0.25,-1.5,-2.0],)"
    R"("topk_train":{"ids":[[5,1],[7,2],[9,3]],"logp":[[-0.5,-1.0],[-1.25,-1.5],[-2.0,-2.25]]},)"
    R"("topk_inf":{"ids":[[5,1],[7,2],[9,3]],"logp":[[-0.25,-2.0],[-1.5,-1.75],[-2.0,-2.5]]},"reward_train":1.0,"reward_inf":1.0})"
    "\n"
    R"({"id":"b","slices":{"task":"code"},"tokens":[3,4],"logp_train":[-0.125,-3.0],"logp_inf":[-0.375,"NaN"],)"
    R"("topk_train":{"ids":[[3,1],[4,2]],"logp":[[-0.125,-2.5],[-3.0,-3.5]]},)"
    R"("topk_inf":{"ids":[[3,1],[4,2]],"logp":[[-0.375,-1.5],[-1.0,-3.0]]},"reward_train":0.0,"reward_inf":0.5})"
    "\n"
    R"({"id":"c","tokens":[11],"logp_train":[-1.0],"logp_inf":[-0.75],)"
    R"("topk_train":{"ids":[[11,0]],"logp":[[-1.0,-1.25]]},"topk_inf":{"ids":[[11,0]],"logp":[[-0.75,-1.0]]},)"
    R"("reward_train":0.5,"reward_inf":0.5})"
    "\n";

}  // namespace

class TestImportNumpy : public QObject, private test::TempFiles {
    Q_OBJECT
    // One broken member in an otherwise good archive; returns the error.
    std::string brokenMember(const std::string& member, const std::string& bytes, bool deflate = false,
                             const LoadOptions& options = {}) {
        auto e = runEntries(deflate);
        for (auto& x : e)
            if (x.name == member)
                x.data = bytes;
        const std::string p = write("broken.npz", zipOf(e));
        return errorOf([&] { loadRun(p, {}, options); });
    }

private slots:
    void storedAndDeflatedMatchJsonl() {
        const Run jsonl = loadRun(write("run.jsonl", kJsonl));
        // Named without a telling extension: found by content.
        const Run stored = loadRun(write("stored.data", zipOf(runEntries(false))));
        const Run deflated = loadRun(write("deflated.data", zipOf(runEntries(true))));
        const Run zip64 = loadRun(write("zip64.npz", zipOf(runEntries(true), true, true)));
        const Run plainZip = loadRun(write("plain.npz", zipOf(runEntries(false), false)));
        for (const Run* r : {&stored, &deflated, &zip64, &plainZip}) {
            QCOMPARE(r->ids, (std::vector<std::string>{"a", "b", "c"}));
            QCOMPARE(r->tokenCount(), size_t(6));
            QCOMPARE(r->tokens[5], 11);
            QCOMPARE(r->lpTrain[4], -3.0);
            QVERIFY(std::isnan(r->lpInf[4]) && !isMissing(r->lpInf[4]));
            QCOMPARE(r->topkInf.k, 2);
            QCOMPARE(*r->slices.label(1, 0), std::string("code"));
            QVERIFY(r->slices.label(2, 0) == nullptr);
            QCOMPARE(compareFigures(jsonl, *r) > 0, true);
        }
        // By hand: |r| = 0.25, 0.25, 0, 0.25, (NaN), 0.25 -> 5 values, mean 0.2, one non-finite.
        MetricEngine e(std::make_shared<Run>(deflated));
        const Summary s = summarize(*e.get("abs_log_ratio"));
        QCOMPARE(s.count, uint64_t(5));
        QCOMPARE(s.nonfinite, uint64_t(1));
        QCOMPARE(*s.mean, 0.2);
        QCOMPARE(*s.max, 0.25);
        QCOMPARE(*s.min, 0.0);
        QCOMPARE(*summarize(*e.get("log_ratio")).mean, 0.0);
        QCOMPARE(*summarize(*e.get("reward_diff")).mean, 0.5 / 3);
        QCOMPARE(summarize(*e.get("length")).count, uint64_t(3));
        // kcx convert: the native safetensors reopens with the same figures.
        writeSafetensors(deflated, path("converted.safetensors"));
        const Run back = loadRun(path("converted.safetensors"));
        QVERIFY(compareFigures(deflated, back) > 0);
        QCOMPARE(back.ids, deflated.ids);
    }

    void withoutMetadataSequencesAreNumbered() {
        const Run r = loadNpz(write("bare.npz", zipOf(runEntries(false, false))));
        QCOMPARE(r.ids, (std::vector<std::string>{"0", "1", "2"}));
        QVERIFY(r.slices.keys.empty());
        // Integer ids are written in decimal; JSON text in a 0-d string works for any entry.
        auto e = runEntries(false, false);
        e.push_back({"ids.npy", npy("<i8", {3}, le<int64_t>({10, 20, 30}))});
        const std::string header = R"({"kernels":{"inf":{"precision":"fp8_e4m3"}}})";
        e.push_back({"header.npy", npy("|S" + std::to_string(header.size()), {}, header)});
        const Run r2 = loadNpz(write("ints.npz", zipOf(e)));
        QCOMPARE(r2.ids[2], std::string("30"));
        QCOMPARE(r2.header["kernels"]["inf"]["precision"].get<std::string>(), std::string("fp8_e4m3"));
    }

    // Issue 16, case 5: a 53 KB .npz whose header member holds 10^6-deep JSON crashed the
    // reader (a recursive copy of the tree). It is refused before parsing, naming the member.
    void refusesDeepJsonInMembers() {
        const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
        for (const bool deflate : {false, true}) {
            auto e = runEntries(deflate, false);
            e.push_back({"header.npy", npy("|S" + std::to_string(deep.size()), {}, deep), deflate});
            const std::string path = write("deep.npz", zipOf(e));
            const std::string what = errorOf([&] { loadNpz(path); });
            QVERIFY2(what.find(path + ": byte ") == 0, what.c_str());
            QVERIFY2(what.find("member 'header.npy'") != std::string::npos, what.c_str());
            QVERIFY2(what.find("'header' is JSON nested deeper than 64 levels, at character 65") != std::string::npos,
                     what.c_str());
        }
        // The same in a 0-d unicode string.
        auto e = runEntries(false, false);
        const std::string obj = "{\"a\":" + std::string(5000, '{');
        e.push_back({"slice_values.npy", npy("<U" + std::to_string(obj.size()), {}, utf32({obj}, obj.size()))});
        const std::string path = write("deepu.npz", zipOf(e));
        const std::string what = errorOf([&] { loadNpz(path); });
        QVERIFY2(what.find("'slice_values' is JSON nested deeper than 64 levels") != std::string::npos, what.c_str());
    }

    // Issue 16, case 8: an .npy header length of 0 gets a message that says so.
    void zeroHeaderLength() {
        const std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + le<uint16_t>({0}) + le<int64_t>({0, 3, 5, 6});
        const std::string what = brokenMember("offsets.npy", bytes);
        QVERIFY2(what.find("member 'offsets.npy': header length is 0") != std::string::npos, what.c_str());
        QVERIFY2(what.find("broken.npz: byte ") != std::string::npos, what.c_str());
    }

    void versionsAndDtypes() {
        // Versions 1, 2 and 3; tokens as |u1 and |b1, log-probs as <f4 and <f2.
        auto e = runEntries(false, false);
        e[0].data = npy("<i8", {4}, le<int64_t>({0, 3, 5, 6}), 2);
        e[1].data = npy("|u1", {6}, std::string("\x05\x07\x09\x03\x04\x0b", 6), 3);
        e[2].data = npy("<f4", {6}, le<float>({-0.5f, -1.25f, -2.0f, -0.125f, -3.0f, -1.0f}));
        e[3].data = npy("<f2", {6}, le<uint16_t>({0xB400, 0xBE00, 0xC000, 0xB600, 0x7E00, 0xBA00}));
        const Run r = loadRun(write("dtypes.npz", zipOf(e)));
        QCOMPARE(r.tokens[5], 11);
        QCOMPARE(r.lpTrain[1], -1.25);
        QCOMPARE(r.lpInf[0], -0.25);
        QCOMPARE(r.lpInf[1], -1.5);
        QCOMPARE(r.lpInf[5], -0.75);
        QVERIFY(std::isnan(r.lpInf[4]));
        // The same figures as the float64 run: every value is exact in half precision.
        const Run jsonl = loadRun(write("run2.jsonl", kJsonl));
        MetricEngine a(std::make_shared<Run>(r)), b(std::make_shared<Run>(jsonl));
        QCOMPARE(*summarize(*a.get("abs_log_ratio")).mean, *summarize(*b.get("abs_log_ratio")).mean);

        e[1].data = npy("|b1", {6}, std::string("\x01\x00\x01\x01\x00\x01", 6));
        QCOMPARE(loadRun(write("bool.npz", zipOf(e))).tokens[1], 0);

        // bfloat16 as <u2 or <V2: rejected with a hint, read with --bf16.
        for (const char* descr : {"<u2", "<V2"}) {
            e[3].data = npy(descr, {6}, le<uint16_t>({0xBE80, 0xBFC0, 0xC000, 0xBEC0, 0x7FC0, 0xBF40}));
            const std::string p = write("bf16.npz", zipOf(e));
            const std::string err = errorOf([&] { loadRun(p); });
            QVERIFY2(err.find("member 'logp_inf.npy'") != std::string::npos && err.find("--bf16") != std::string::npos &&
                         err.find("byte ") != std::string::npos,
                     err.c_str());
            LoadOptions bf16;
            bf16.bf16 = true;
            const Run b16 = loadRun(p, {}, bf16);
            QCOMPARE(b16.lpInf[0], -0.25);
            QCOMPARE(b16.lpInf[1], -1.5);
            QCOMPARE(b16.lpInf[5], -0.75);
        }

        // parseNpyHeader directly: version, shape, where the data starts.
        for (int major : {1, 2, 3}) {
            const std::string bytes = npy("<f8", {2, 3}, std::string(48, '\0'), major);
            const NpyHeader h = parseNpyHeader(bytes, [](uint64_t o, const std::string& m) {
                return InputError::atByte("x.npy", o, m);
            });
            QCOMPARE(h.major, major);
            QCOMPARE(h.elements, uint64_t(6));
            QCOMPARE(h.itemSize, uint64_t(8));
            QCOMPARE(h.dataOffset % 64, uint64_t(0));
            QCOMPARE(h.shape, (std::vector<uint64_t>{2, 3}));
        }
    }

    void fortranOrder() {
        auto e = runEntries(false, false);
        e[2].data = npy("<f8", {6}, le<double>({-0.5, -1.25, -2.0, -0.125, -3.0, -1.0}), 1, true);   // 1-D: same layout
        QCOMPARE(loadRun(write("f1.npz", zipOf(e))).lpTrain[1], -1.25);
        const std::string err = brokenMember(
            "topk_train_ids.npy", npy("<i4", {6, 2}, le<int32_t>({5, 1, 7, 2, 9, 3, 3, 1, 4, 2, 11, 0}), 1, true));
        QVERIFY2(err.find("fortran_order") != std::string::npos && err.find("member 'topk_train_ids.npy'") != std::string::npos,
                 err.c_str());
    }

    void badMembersNameFileMemberAndPlace() {
        struct Case {
            const char* member;
            std::string bytes;
            const char* phrase;
        };
        std::string hugeHeader = "\x93NUMPY";
        hugeHeader += char(2);
        hugeHeader += char(0);
        hugeHeader += le<uint32_t>({0x7fffffff});
        hugeHeader += std::string(64, ' ');
        const std::vector<Case> cases = {
            {"tokens.npy", "hello, not numpy", "\\x93NUMPY"},
            {"tokens.npy", npy("<c8", {6}, std::string(48, '\0')), "unsupported dtype '<c8'"},
            {"tokens.npy", npy("<i4", {4294967296ull, 4294967296ull, 16}, ""), "element count overflow"},
            {"tokens.npy", hugeHeader, "exceeds the limit of 1 MB"},
            {"tokens.npy", npy("<i4", {6}, le<int32_t>({5, 7})), "truncated"},
            {"tokens.npy", std::string("\x93NUMPY\x04\x00", 8) + "xxxxxxxx", "format version 4.0"},
            {"tokens.npy", npy("|O", {6}, "pickle"), "pickled"},
            {"logp_inf.npy", npy(">f8", {6}, std::string(48, '\0')), "big-endian"},
            {"logp_inf.npy", npy("<f8", {5}, le<double>({-1, -1, -1, -1, -1})), "should be [6]"},
            {"logp_inf.npy", npy("<U4", {6}, std::string(96, '\0')), "holds strings"},
            {"topk_inf_logp.npy", npy("<f8", {6, 3}, std::string(144, '\0')), "differs from 'topk_inf_ids'"},
            {"offsets.npy", npy("<i8", {4}, le<int64_t>({0, 3, 2, 6})), "decreases at index 2"},
            {"ids.npy", npy("<U1", {2}, utf32({"a", "b"}, 1)), "'ids' has 2 entries"},
            {"ids.npy", npy("<U1", {3}, utf32({"a", "a", "b"}, 1)), "duplicate sequence id 'a'"},
            {"slice_values.npy", npy("<U3", {}, utf32({"{no"}, 3)), "not valid JSON"},
            {"slice_codes.npy", npy("<i4", {3, 1}, le<int32_t>({0, 5, -1})), "out of range"},
        };
        for (bool deflate : {false, true})
            for (const Case& c : cases) {
                const std::string err = brokenMember(c.member, c.bytes, deflate);
                QVERIFY2(err.find(path("broken.npz")) == 0, err.c_str());
                QVERIFY2(err.find(c.phrase) != std::string::npos, (err + "  [expected: " + c.phrase + "]").c_str());
                QVERIFY2(err.find(std::string("'") + c.member + "'") != std::string::npos, err.c_str());
                QVERIFY2(err.find("byte ") != std::string::npos, err.c_str());   // the place
            }
        // The dict itself: a structured dtype, a key numpy does not write, no shape.
        for (const auto& [dict, phrase] :
             std::vector<std::pair<std::string, std::string>>{{"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", "structured"},
                                                              {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", "unexpected key 'x'"},
                                                              {"{'descr': '<f4', 'fortran_order': False}", "lacks 'shape'"},
                                                              {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,)}", "True or False"}}) {
            std::string b = "\x93NUMPY";
            b += char(1);
            b += char(0);
            b += le<uint16_t>({uint16_t(dict.size() + 1)});
            b += dict + "\n" + std::string(24, '\0');
            const std::string err = brokenMember("logp_train.npy", b);
            QVERIFY2(err.find(phrase) != std::string::npos && err.find("byte ") != std::string::npos, err.c_str());
        }
    }

    void brokenArchives() {
        const std::string good = zipOf(runEntries(true));
        // Not a run: np.savez(f, a, b) names members arr_0, arr_1.
        const std::string p1 = write("positional.npz", zipOf({{"arr_0.npy", npy("<f8", {1}, le<double>({1}))}}));
        std::string err = errorOf([&] { loadRun(p1); });
        QVERIFY2(err.find("no member 'offsets.npy'") != std::string::npos && err.find("arr_0") != std::string::npos,
                 err.c_str());
        // An unsupported compression method (bzip2).
        auto e = runEntries(false);
        e[2].method = 12;
        err = errorOf([&] { loadRun(write("bzip2.npz", zipOf(e))); });
        QVERIFY2(err.find("compression method 12") != std::string::npos && err.find("logp_train.npy") != std::string::npos,
                 err.c_str());
        // A flipped byte inside a deflated member: corrupt data or a CRC mismatch, never a crash.
        const size_t at = good.find("logp_train.npy") + 14 + 20 + 40;
        std::string flipped = good;
        flipped[at] = char(flipped[at] ^ 0x55);
        err = errorOf([&] { loadRun(write("flipped.npz", flipped)); });
        QVERIFY2(err.find(path("flipped.npz") + ": byte ") == 0 && err.find("logp_train.npy") != std::string::npos,
                 err.c_str());
        // Truncated anywhere (every length near both ends, every 7th in between; writing files
        // is the slow part): each gives an InputError naming the file, never a crash.
        for (size_t n = 0; n < good.size(); n += (n < 64 || n + 64 > good.size()) ? 1 : 7) {
            const std::string p = write("cut.npz", good.substr(0, n));
            err = errorOf([&] { loadNpz(p); });
            QVERIFY2(err.find(p) == 0, (std::to_string(n) + ": " + err).c_str());
        }
        err = errorOf([&] { loadRun(write("cut2.npz", good.substr(0, good.size() - 30))); });
        QVERIFY2(err.find("truncated") != std::string::npos, err.c_str());
        // A member whose declared size is beyond what deflate can produce (a zip bomb).
        std::string bomb = zipOf({{"offsets.npy", npy("<i8", {4}, le<int64_t>({0, 3, 5, 6})), true}}, false);
        const size_t cd = bomb.find(std::string("PK\x01\x02", 4));
        const uint32_t huge = 0xF0000000u;
        std::memcpy(&bomb[cd + 24], &huge, 4);
        err = errorOf([&] { loadRun(write("bomb.npz", bomb)); });
        QVERIFY2(err.find("more than deflate can produce") != std::string::npos, err.c_str());
        // Byte-string ids must be UTF-8 text, as every id and label in KCX is.
        err = brokenMember("ids.npy", npy("|S2", {3}, std::string("a\xff" "bb" "cc", 6)));
        QVERIFY2(err.find("member 'ids.npy'") != std::string::npos && err.find("invalid UTF-8") != std::string::npos,
                 err.c_str());
        // Deflated members are inflated into memory: beyond the limit the archive is refused
        // before anything is inflated, saying why; stored members are mapped, not counted.
        const std::string packed = write("packed.npz", zipOf(runEntries(true)));
        uint64_t inflated = 0;
        for (const auto& e : runEntries(true))
            if (e.name.ends_with(".npy"))
                inflated += e.data.size();
        LoadOptions tight;
        tight.maxMemoryBytes = inflated - 1;
        err = errorOf([&] { loadRun(packed, {}, tight); });
        QVERIFY2(err.find(packed + ": ") == 0 && err.find("KCX_MAX_MEMORY") != std::string::npos &&
                     err.find("np.savez") != std::string::npos,
                 err.c_str());
        tight.maxMemoryBytes = inflated;
        QCOMPARE(loadRun(packed, {}, tight).sequenceCount(), loadRun(packed).sequenceCount());
        tight.maxMemoryBytes = 1;
        QVERIFY(loadRun(write("stored.npz", zipOf(runEntries(false))), {}, tight).sequenceCount() > 0);
        // A stored member whose data would run past the end of the file (sizes from the directory).
        std::string longer = zipOf(runEntries(false), false);
        const size_t cd2 = longer.find(std::string("PK\x01\x02", 4));
        const uint32_t big = 0x10000000u;
        std::memcpy(&longer[cd2 + 20], &big, 4);
        std::memcpy(&longer[cd2 + 24], &big, 4);
        err = errorOf([&] { loadRun(write("short.npz", longer)); });
        QVERIFY2(err.find(path("short.npz") + ": byte ") == 0 && err.find("member 'offsets.npy'") != std::string::npos &&
                     err.find("truncated") != std::string::npos,
                 err.c_str());
    }

    void npyDirectory() {
        const std::string d = path("arrays");
        for (const Entry& x : runEntries(false))
            if (x.name.size() > 4 && x.name.compare(x.name.size() - 4, 4, ".npy") == 0)
                write("arrays/" + x.name, x.data);
        const Run r = loadRun(d);
        QCOMPARE(r.ids, (std::vector<std::string>{"a", "b", "c"}));
        QVERIFY(compareFigures(r, loadRun(write("run3.jsonl", kJsonl))) > 0);
        // One .npy alone is not a run.
        std::string err = errorOf([&] { loadRun(d + "/tokens.npy"); });
        QVERIFY2(err.find("single .npy") != std::string::npos, err.c_str());
        // A truncated array names its own file and the offset.
        write("arrays/logp_inf.npy", npy("<f8", {6}, le<double>({-0.25, -1.5})));
        err = errorOf([&] { loadRun(d); });
        QVERIFY2(err.find(d + "/logp_inf.npy: byte 128: truncated") == 0, err.c_str());
        // A directory with neither arrays nor exports.
        std::filesystem::create_directories(path("empty"));
        err = errorOf([&] { loadRun(path("empty")); });
        QVERIFY2(err.find("offsets.npy") != std::string::npos, err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestImportNumpy)
#include "test_import_numpy.moc"
