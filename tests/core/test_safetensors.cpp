// The safetensors loader (SPEC 1.2, 1.4). The writers are tested in test_run_writer.cpp, the
// half-precision codecs in test_half.cpp. Files are assembled byte by byte here, so the
// loader is checked against the format, not against our own writer.
#include <QtTest/QTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "core/base/errors.h"
#include "core/base/half.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"
#include "tests/support/test_files.h"

using namespace kcx;
using test::le;
using nlohmann::json;

namespace {

// ---- building safetensors files ------------------------------------------------------------
std::string u8(std::initializer_list<int> values) {
    std::string s;
    for (int v : values)
        s += char(uint8_t(v));
    return s;
}

struct Spec {
    std::string name, dtype;
    std::vector<uint64_t> shape;
    std::string bytes;
    json offsets = nullptr;   // overrides the computed data_offsets when set
    size_t align = 8;         // where the data starts within the buffer
};

struct Built {
    std::string bytes;
    std::map<std::string, uint64_t> at;   // absolute file offset of each tensor's data
};

// 8-byte length, header JSON padded with spaces to a multiple of 8, then the buffer.
Built build(const std::vector<Spec>& specs, const json& meta = nullptr) {
    json header = json::object();
    std::string buffer;
    std::map<std::string, uint64_t> rel;
    for (const Spec& s : specs) {
        while (buffer.size() % s.align)
            buffer += '\0';
        rel[s.name] = buffer.size();
        header[s.name] = {{"dtype", s.dtype},
                          {"shape", s.shape},
                          {"data_offsets", s.offsets.is_null() ? json{buffer.size(), buffer.size() + s.bytes.size()}
                                                               : s.offsets}};
        buffer += s.bytes;
    }
    if (!meta.is_null())
        header["__metadata__"] = meta;
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    Built b;
    const uint64_t n = text.size();
    b.bytes = le<uint64_t>({n}) + text + buffer;
    for (auto& [name, r] : rel)
        b.at[name] = 8 + n + r;
    return b;
}

std::string writeTemp(const std::string& name, const std::string& bytes) {
    static QTemporaryDir dir;
    const std::string path = (dir.path() + "/" + QString::fromStdString(name)).toStdString();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
}

// A valid two-sequence run exercising every tensor and the narrow float formats.
std::vector<Spec> goodSpecs() {
    return {
        {"offsets", "I64", {3}, le<int64_t>({0, 3, 5})},
        {"tokens", "I32", {5}, le<int32_t>({5, 6, 7, 8, 9})},
        {"logp_train", "F32", {5}, le<float>({-0.5f, -1.25f, -0.125f, -2.0f, -3.0f})},
        // bf16: 1.0, -2.0, -0.5, -0.25, 0
        {"logp_inf", "BF16", {5}, le<uint16_t>({0x3F80, 0xC000, 0xBF00, 0xBE80, 0x0000})},
        {"topk_train_ids", "I32", {5, 2}, le<int32_t>({5, 1, 6, 2, 7, 3, 8, 4, 9, 5})},
        // f16: 1.0, 0.333251953125 (0x3555), -1.0, 2^-24 (smallest subnormal), 65504, ...
        {"topk_train_logp", "F16", {5, 2},
         le<uint16_t>({0x3C00, 0x3555, 0xBC00, 0x0001, 0x7BFF, 0x0000, 0x3C00, 0x3C00, 0x3C00, 0x3C00})},
        {"topk_inf_ids", "I64", {5, 2}, le<int64_t>({5, 1, 6, 2, 7, 3, 8, 4, 9, 5})},
        // e4m3: 1.0 (0x38), 0.5 (0x30), 448 (0x7E), -1.0 (0xB8), 2^-9 (0x01), ...
        {"topk_inf_logp", "F8_E4M3", {5, 2}, u8({0x38, 0x30, 0x7E, 0xB8, 0x01, 0x00, 0x38, 0x38, 0x38, 0x38})},
        {"logits_rows", "I64", {2}, le<int64_t>({1, 3})},
        {"logits_train", "F8_E4M3", {2, 3}, u8({0x38, 0x7E, 0x01, 0xB8, 0x30, 0x00})},
        // e5m2: 1.0 (0x3C), -2.0 (0xC0), +inf (0x7C), 2^-16 (0x01), 0, 2.0 (0x40)
        {"logits_inf", "F8_E5M2", {2, 3}, u8({0x3C, 0xC0, 0x7C, 0x01, 0x00, 0x40})},
        {"reward_train", "F64", {2}, le<double>({1.5, missingDouble()})},
        {"reward_inf", "F32", {2}, le<float>({0.25f, std::numeric_limits<float>::quiet_NaN()})},
        {"slice_codes", "I32", {2, 1}, le<int32_t>({0, -1})},
    };
}

json goodMeta() {
    return {{"kcx", "1"},
            {"ids", R"(["a", "b"])"},
            {"slice_keys", R"(["task"])"},
            {"slice_values", R"({"task": ["math"]})"},
            {"header", R"({"kernels": {"train": {"precision": "bf16"}, "inf": {"precision": "fp8_e4m3"}}})"},
            {"runtime", R"([{"batch_size": 8}, {"latency_ms": 1.5}])"},
            {"format", "pt"}};
}

Spec* findSpec(std::vector<Spec>& specs, const std::string& name) {
    for (Spec& s : specs)
        if (s.name == name)
            return &s;
    return nullptr;
}
void removeSpec(std::vector<Spec>& specs, const std::string& name) {
    std::erase_if(specs, [&](const Spec& s) { return s.name == name; });
}

// The load must fail with an InputError naming the file, a byte offset, and `phrase`.
bool failsWith(const std::string& fileName, const std::string& bytes, const std::string& phrase,
               std::string* whatOut = nullptr) {
    const std::string path = writeTemp(fileName, bytes);
    try {
        loadSafetensors(path);
        qWarning("%s: loaded without error", fileName.c_str());
        return false;
    } catch (const InputError& e) {
        const std::string w = e.what();
        if (whatOut)
            *whatOut = w;
        const bool ok = w.find(path) != std::string::npos && w.find("byte ") != std::string::npos &&
                        w.find(phrase) != std::string::npos;
        if (!ok)
            qWarning("%s: unexpected message: %s (wanted '%s')", fileName.c_str(), w.c_str(), phrase.c_str());
        return ok;
    } catch (const std::exception& e) {
        qWarning("%s: wrong exception type: %s", fileName.c_str(), e.what());
        return false;
    }
}


template <class T>
std::vector<T> vec(const Array<T>& a) { return std::vector<T>(a.begin(), a.end()); }

}  // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
private slots:
    // ---- loading ----------------------------------------------------------------------------
    void loadsEveryTensor() {
        const Built b = build(goodSpecs(), goodMeta());
        const std::string path = writeTemp("good.safetensors", b.bytes);
        const Run run = loadSafetensors(path);
        QCOMPARE(run.path, path);
        QCOMPARE(run.ids, (std::vector<std::string>{"a", "b"}));
        QCOMPARE(vec(run.offsets), (std::vector<int64_t>{0, 3, 5}));
        QCOMPARE(vec(run.tokens), (std::vector<int32_t>{5, 6, 7, 8, 9}));
        QCOMPARE(run.lpTrain[1], -1.25);
        // BF16 decoded to float32.
        QVERIFY(run.lpInf.type() == Column::Type::F32);
        QCOMPARE(run.lpInf[0], 1.0);
        QCOMPARE(run.lpInf[1], -2.0);
        QCOMPARE(run.lpInf[2], -0.5);
        QCOMPARE(run.lpInf[3], -0.25);
        // F16.
        QCOMPARE(run.topkTrain.k, 2);
        QCOMPARE(run.topkTrain.logp[0], 1.0);
        QCOMPARE(run.topkTrain.logp[1], 0.333251953125);
        QCOMPARE(run.topkTrain.logp[2], -1.0);
        QCOMPARE(run.topkTrain.logp[3], std::ldexp(1.0, -24));
        QCOMPARE(run.topkTrain.logp[4], 65504.0);
        QCOMPARE(run.topkTrain.ids[3], 2);
        // I64 ids narrowed, F8_E4M3 decoded.
        QCOMPARE(run.topkInf.ids[9], 5);
        QCOMPARE(run.topkInf.logp[0], 1.0);
        QCOMPARE(run.topkInf.logp[1], 0.5);
        QCOMPARE(run.topkInf.logp[2], 448.0);
        QCOMPARE(run.topkInf.logp[3], -1.0);
        QCOMPARE(run.topkInf.logp[4], std::ldexp(1.0, -9));
        // Logits: E4M3 and E5M2.
        QVERIFY(run.hasLogits());
        QCOMPARE(run.logits.vocab, int64_t(3));
        QCOMPARE(vec(run.logits.rows), (std::vector<int64_t>{1, 3}));
        QCOMPARE(run.logits.train[1], 448.0);
        QCOMPARE(run.logits.train[3], -1.0);
        QCOMPARE(run.logits.inf[0], 1.0);
        QCOMPARE(run.logits.inf[1], -2.0);
        QVERIFY(std::isinf(run.logits.inf[2]) && run.logits.inf[2] > 0);
        QCOMPARE(run.logits.inf[3], std::ldexp(1.0, -16));
        QCOMPARE(run.logits.inf[5], 2.0);
        // Rewards: missing stays missing, NaN stays NaN.
        QCOMPARE(run.rewardTrain[0], 1.5);
        QVERIFY(isMissing(run.rewardTrain[1]));
        QCOMPARE(run.rewardInf[0], 0.25);
        QVERIFY(std::isnan(run.rewardInf[1]) && !isMissing(run.rewardInf[1]));
        // Slices, header, runtime.
        QCOMPARE(run.slices.keys, std::vector<std::string>{"task"});
        QCOMPARE(*run.slices.label(0, 0), std::string("math"));
        QVERIFY(run.slices.label(1, 0) == nullptr);
        QCOMPARE(run.header["kernels"]["inf"]["precision"].get<std::string>(), std::string("fp8_e4m3"));
        QCOMPARE(run.runtime.size(), size_t(2));
        QCOMPARE(run.runtime[1]["latency_ms"].get<double>(), 1.5);
        QVERIFY(!run.hasText());
    }

    void float32IsZeroCopy() {
        const Built b = build(goodSpecs(), goodMeta());
        const std::string path = writeTemp("zerocopy.safetensors", b.bytes);
        const Run run = loadSafetensors(path);
        QVERIFY(run.lpTrain.type() == Column::Type::F32);
        QCOMPARE(run.lpTrain[0], -0.5);
        // The column reads the mapped file: a change to the file (in place) shows through.
        {
            std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(std::streamoff(b.at.at("logp_train")));
            const float v = -7.5f;
            f.write(reinterpret_cast<const char*>(&v), sizeof v);
        }
        QCOMPARE(run.lpTrain[0], -7.5);
        QCOMPARE(run.tokens[0], 5);   // and tokens are a view too (unchanged bytes)
    }

    void misalignedFloat32IsCopied() {
        auto specs = goodSpecs();
        // A 1-byte tensor first, then logp_train at buffer offset 1: not 4-aligned.
        findSpec(specs, "logp_train")->align = 1;
        specs.insert(specs.begin() + 2, Spec{"pad", "U8", {1}, u8({0})});
        const Built b = build(specs, goodMeta());
        QVERIFY(b.at.at("logp_train") % 4 != 0);
        const std::string path = writeTemp("misaligned.safetensors", b.bytes);
        const Run run = loadSafetensors(path);
        QCOMPARE(run.lpTrain[1], -1.25);
        {
            std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(std::streamoff(b.at.at("logp_train")));
            const float v = -7.5f;
            f.write(reinterpret_cast<const char*>(&v), sizeof v);
        }
        QCOMPARE(run.lpTrain[0], -0.5);   // a copy: the file change does not show
    }

    void int64TokensAreNarrowed() {
        auto specs = goodSpecs();
        *findSpec(specs, "tokens") = {"tokens", "I64", {5}, le<int64_t>({5, 6, 7, 8, -9})};
        const Run run = loadSafetensors(writeTemp("i64tokens.safetensors", build(specs, goodMeta()).bytes));
        QCOMPARE(run.tokens[4], -9);
        *findSpec(specs, "tokens") = {"tokens", "I64", {5}, le<int64_t>({5, 6, 7, int64_t(1) << 40, 9})};
        std::string what;
        QVERIFY(failsWith("bigtoken.safetensors", build(specs, goodMeta()).bytes, "does not fit 32 bits", &what));
        QVERIFY(what.find("sequence 'b'") != std::string::npos);
    }

    void idsDefaultToIndices() {
        auto meta = goodMeta();
        meta.erase("ids");
        meta.erase("kcx");
        const Run run = loadSafetensors(writeTemp("noids.safetensors", build(goodSpecs(), meta).bytes));
        QCOMPARE(run.ids, (std::vector<std::string>{"0", "1"}));
    }

    void minimalFile() {
        std::vector<Spec> specs = {
            {"offsets", "I64", {2}, le<int64_t>({0, 1})},
            {"tokens", "I32", {1}, le<int32_t>({42})},
            {"logp_train", "F64", {1}, le<double>({-0.5})},
            {"logp_inf", "F32", {1}, le<float>({-0.25f})},
        };
        const Run run = loadSafetensors(writeTemp("minimal.safetensors", build(specs).bytes));
        QCOMPARE(run.ids, std::vector<std::string>{"0"});
        QVERIFY(run.lpTrain.type() == Column::Type::F64);
        QCOMPARE(run.lpTrain[0], -0.5);
        QVERIFY(!run.hasTopK() && !run.hasLogits() && !run.hasRewards() && run.header.is_null());
        QVERIFY(run.runtime.empty() && run.slices.keys.empty());
    }

    void cancels() {
        const std::string path = writeTemp("cancel.safetensors", build(goodSpecs(), goodMeta()).bytes);
        QVERIFY_THROWS_EXCEPTION(Cancelled, loadSafetensors(path, [](double f) { return f < 0.2; }));
        int calls = 0;
        loadSafetensors(path, [&](double) { return ++calls > 0; });
        QVERIFY(calls >= 2);
    }

    // ---- rejecting bad files ------------------------------------------------------------------
    void rejectsBadContainers() {
        QVERIFY(failsWith("empty.safetensors", "", "empty"));
        QVERIFY(failsWith("short.safetensors", "\x05\0\0\0\0", "truncated"));
        QVERIFY(failsWith("pastend.safetensors", le<uint64_t>({1000}) + "{}          ", "past the end of the file"));
        QVERIFY(failsWith("huge.safetensors", le<uint64_t>({uint64_t(1) << 40}) + "{}", "100,000,000 bytes"));
        // safetensors' own limit is 100,000,000 bytes, not 100 MiB: one byte over is refused
        // before anything is read (the file itself is short; the limit is checked first).
        QVERIFY(failsWith("limit.safetensors", le<uint64_t>({100'000'001}) + "{}", "exceeds the limit"));
        // A header length of 0 says so (it read "not valid JSON").
        std::string zero;
        QVERIFY(failsWith("zero.safetensors", le<uint64_t>({0}) + "{}", "header length is 0", &zero));
        QVERIFY2(zero.find("byte 0: ") != std::string::npos, zero.c_str());
        std::string what;
        QVERIFY(failsWith("notjson.safetensors", le<uint64_t>({8}) + "{not jso", "not valid JSON", &what));
        QVERIFY2(what.find("byte 10") != std::string::npos, what.c_str());   // 8 + where the parser gave up (the "o")
        QVERIFY(failsWith("array.safetensors", le<uint64_t>({8}) + "[1,2,3] ", "JSON object"));
        // fuzz_safetensors' finding: a number beyond double is valid JSON syntax; it escaped
        // as json::out_of_range instead of an InputError naming the file.
        QVERIFY(failsWith("hugenum.safetensors", le<uint64_t>({14}) + "{\"a\": 7e99999}", "cannot be read"));
    }

    // Hugging Face's reader (safetensors/src/tensor.rs): tensors of dtypes KCX does not read
    // may sit beside the run's when nothing uses them (U16, U32, U64, F8_E8M0, C64, F4, F6_*),
    // checked for size and overlap all the same; the run's own tensors must be SPEC 1.2's;
    // the last tensor's data ends the file.
    void followsHuggingFacesRules() {
        auto specs = goodSpecs();
        specs.push_back({"extra_u32", "U32", {2}, le<uint32_t>({7, 8})});
        specs.push_back({"extra_u64", "U64", {1}, le<uint64_t>({9})});
        specs.push_back({"scales_e8m0", "F8_E8M0", {3}, u8({127, 128, 129})});
        specs.push_back({"packed_f4", "F4", {4}, u8({0x12, 0x34})});   // 4 x 4 bits = 2 bytes
        const Run r = loadSafetensors(writeTemp("extras.safetensors", build(specs, goodMeta()).bytes));
        QCOMPARE(r.sequenceCount(), size_t(2));
        QCOMPARE(r.tokenCount(), size_t(5));

        std::string what;
        auto odd = goodSpecs();
        odd.push_back({"packed_f4", "F4", {3}, u8({0x12, 0x30})});   // 12 bits: not whole bytes
        QVERIFY(failsWith("f4odd.safetensors", build(odd, goodMeta()).bytes, "does not fill whole bytes"));
        auto wrongSize = goodSpecs();
        wrongSize.push_back({"extra_u32", "U32", {3}, le<uint32_t>({7, 8})});
        QVERIFY(failsWith("u32size.safetensors", build(wrongSize, goodMeta()).bytes, "size mismatch", &what));
        QVERIFY(what.find("of U32 needs 12") != std::string::npos);
        auto unknown = goodSpecs();
        unknown.push_back({"extra", "Q4_K", {1}, u8({1})});
        QVERIFY(failsWith("q4k.safetensors", build(unknown, goodMeta()).bytes, "unknown dtype 'Q4_K'"));

        // A tensor the run reads in a dtype it does not: named, with the dtype.
        auto used = goodSpecs();
        removeSpec(used, "tokens");
        used.push_back({"tokens", "U32", {5}, le<uint32_t>({1, 2, 3, 4, 5})});
        QVERIFY(failsWith("usedu32.safetensors", build(used, goodMeta()).bytes, "'tokens' has dtype U32", &what));

        // Trailing bytes after the last tensor: refused, at the first of them.
        const Built good = build(goodSpecs(), goodMeta());
        QVERIFY(failsWith("trailing.safetensors", good.bytes + "junk", "4 byte(s) after the last tensor", &what));
        QVERIFY2(what.find("byte " + std::to_string(good.bytes.size()) + ":") != std::string::npos, what.c_str());
    }

    void rejectsBadTensorEntries() {
        std::string what;
        auto specs = goodSpecs();
        findSpec(specs, "tokens")->offsets = json{0, 100000};
        QVERIFY(failsWith("range.safetensors", build(specs, goodMeta()).bytes, "out of range", &what));
        QVERIFY(what.find("'tokens'") != std::string::npos);

        specs = goodSpecs();
        const Built good = build(specs, goodMeta());
        // Point logp_inf into logp_train's bytes (bf16 [5] = 10 bytes; logp_train has 20).
        const uint64_t trainAt = good.at.at("logp_train") - good.at.at("offsets");
        findSpec(specs, "logp_inf")->offsets = json{trainAt + 4, trainAt + 14};
        QVERIFY(failsWith("overlap.safetensors", build(specs, goodMeta()).bytes, "overlap", &what));
        QVERIFY(what.find("'logp_train'") != std::string::npos && what.find("'logp_inf'") != std::string::npos);

        specs = goodSpecs();
        findSpec(specs, "tokens")->shape = {4};
        QVERIFY(failsWith("size.safetensors", build(specs, goodMeta()).bytes, "size mismatch"));

        specs = goodSpecs();
        findSpec(specs, "logp_inf")->dtype = "Q7";
        QVERIFY(failsWith("dtype.safetensors", build(specs, goodMeta()).bytes, "unknown dtype 'Q7'", &what));
        QVERIFY(what.find("'logp_inf'") != std::string::npos);

        specs = goodSpecs();
        specs.push_back({"huge", "F32", {uint64_t(1) << 40, uint64_t(1) << 40}, "", json{0, 0}});
        QVERIFY(failsWith("overflow.safetensors", build(specs, goodMeta()).bytes, "overflow"));

        specs = goodSpecs();
        findSpec(specs, "tokens")->offsets = json{"0", "20"};
        QVERIFY(failsWith("offtype.safetensors", build(specs, goodMeta()).bytes, "data_offsets"));

        const std::string dup = R"({"tokens": {"dtype": "I32", "shape": [0], "data_offsets": [0, 0]}, "tokens": {"dtype": "I32", "shape": [0], "data_offsets": [0, 0]}})";
        QVERIFY(failsWith("dupname.safetensors", le<uint64_t>({dup.size()}) + dup, "twice"));
    }

    void rejectsRunViolations() {
        std::string what;
        auto specs = goodSpecs();
        removeSpec(specs, "tokens");
        QVERIFY(failsWith("notokens.safetensors", build(specs, goodMeta()).bytes, "missing required tensor 'tokens'"));

        // Offsets: three sequences without ids (named "0", "1", "2").
        auto meta = goodMeta();
        meta.erase("ids");
        meta.erase("slice_keys");
        meta.erase("slice_values");
        meta.erase("runtime");
        auto three = [&](std::initializer_list<int64_t> offsets) {
            auto s = goodSpecs();
            removeSpec(s, "slice_codes");
            removeSpec(s, "reward_train");
            removeSpec(s, "reward_inf");
            *findSpec(s, "offsets") = {"offsets", "I64", {4}, le<int64_t>(offsets)};
            return build(s, meta).bytes;
        };
        QVERIFY(failsWith("decreasing.safetensors", three({0, 4, 3, 5}), "decreases at index 2", &what));
        QVERIFY(what.find("sequence '1'") != std::string::npos);
        QVERIFY(failsWith("overrun.safetensors", three({0, 2, 7, 5}), "runs past the 5 tokens", &what));
        QVERIFY(failsWith("shortlast.safetensors", three({0, 2, 3, 4}), "M = offsets[N]"));
        QVERIFY(failsWith("start.safetensors", three({1, 2, 3, 5}), "expected 0"));

        specs = goodSpecs();
        *findSpec(specs, "topk_train_logp") = {"topk_train_logp", "F32", {5, 3}, std::string(60, '\0')};
        QVERIFY(failsWith("topk.safetensors", build(specs, goodMeta()).bytes, "differs from 'topk_train_ids'"));
        specs = goodSpecs();
        removeSpec(specs, "topk_inf_logp");
        QVERIFY(failsWith("topkhalf.safetensors", build(specs, goodMeta()).bytes, "come together"));

        specs = goodSpecs();
        *findSpec(specs, "logits_inf") = {"logits_inf", "F32", {2, 4}, std::string(32, '\0')};
        QVERIFY(failsWith("vocab.safetensors", build(specs, goodMeta()).bytes, "V mismatch"));
        specs = goodSpecs();
        *findSpec(specs, "logits_rows") = {"logits_rows", "I64", {2}, le<int64_t>({3, 1})};
        QVERIFY(failsWith("rows.safetensors", build(specs, goodMeta()).bytes, "ascending"));
        *findSpec(specs, "logits_rows") = {"logits_rows", "I64", {2}, le<int64_t>({1, 5})};
        QVERIFY(failsWith("rowrange.safetensors", build(specs, goodMeta()).bytes, "outside the tokens"));

        meta = goodMeta();
        meta["ids"] = R"(["a", "a"])";
        QVERIFY(failsWith("dupids.safetensors", build(goodSpecs(), meta).bytes, "duplicate sequence id 'a'"));
        meta["ids"] = R"(["a"])";
        QVERIFY(failsWith("fewids.safetensors", build(goodSpecs(), meta).bytes, "describes 2 sequences"));
        meta = goodMeta();
        meta["kcx"] = "2";
        QVERIFY(failsWith("version.safetensors", build(goodSpecs(), meta).bytes, "metadata 'kcx'"));
        meta = goodMeta();
        meta["header"] = "{oops";
        QVERIFY(failsWith("metajson.safetensors", build(goodSpecs(), meta).bytes, "metadata 'header' is not valid JSON"));

        specs = goodSpecs();
        *findSpec(specs, "slice_codes") = {"slice_codes", "I32", {2, 1}, le<int32_t>({0, 3})};
        QVERIFY(failsWith("code.safetensors", build(specs, goodMeta()).bytes, "out of range", &what));
        QVERIFY(what.find("sequence 'b'") != std::string::npos && what.find("'task'") != std::string::npos);

        specs = goodSpecs();
        findSpec(specs, "tokens")->dtype = "F32";
        QVERIFY(failsWith("floattokens.safetensors", build(specs, goodMeta()).bytes, "not an integer type"));
        specs = goodSpecs();
        findSpec(specs, "logp_train")->dtype = "I32";
        QVERIFY(failsWith("intlogp.safetensors", build(specs, goodMeta()).bytes, "not a floating type"));
        specs = goodSpecs();
        *findSpec(specs, "logp_inf") = {"logp_inf", "F32", {4}, std::string(16, '\0')};
        QVERIFY(failsWith("shortlogp.safetensors", build(specs, goodMeta()).bytes, "should be [5]"));
    }

    // Damaged files (every truncation, random byte flips) load or fail with InputError: no
    // crash, no other exception.
    void damagedFilesNeverCrash() {
        const std::string good = build(goodSpecs(), goodMeta()).bytes;
        auto tryLoad = [](const std::string& bytes) {
            const std::string path = writeTemp("damaged.safetensors", bytes);
            try {
                loadSafetensors(path);
            } catch (const InputError&) {
            }
        };
        for (size_t n = 0; n < good.size(); n += 5)
            tryLoad(good.substr(0, n));
        uint64_t state = 12345;
        auto next = [&] {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            return state >> 33;
        };
        for (int round = 0; round < 500; ++round) {
            std::string bytes = good;
            const int flips = 1 + int(next() % 4);
            for (int f = 0; f < flips; ++f)
                bytes[next() % bytes.size()] = char(next() & 0xff);
            tryLoad(bytes);
        }
        // A deeply nested header.
        const std::string deep(1 << 20, '[');
        tryLoad(le<uint64_t>({deep.size()}) + deep);
    }

    // Issue 16, case 5: JSON nested 10^6 deep inside a metadata string ran the stack out
    // (nlohmann copies and serialises trees recursively). It is refused before it becomes a
    // tree, at the metadata key, with the limit named.
    void refusesDeepJson() {
        const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
        for (const char* key : {"header", "ids", "runtime", "slice_values"}) {
            json meta = goodMeta();
            meta[key] = deep;
            std::string what;
            QVERIFY(failsWith(std::string("deep_") + key + ".safetensors", build(goodSpecs(), meta).bytes,
                              "metadata '" + std::string(key) + "' is JSON nested deeper than 64 levels", &what));
            QVERIFY2(what.find("at character 65 of its value") != std::string::npos, what.c_str());
        }
        // 64 levels are fine (the value is then refused for what it is, not for its depth).
        json meta = goodMeta();
        meta["runtime"] = std::string(64, '[') + std::string(64, ']');
        std::string what;
        QVERIFY(failsWith("deep64.safetensors", build(goodSpecs(), meta).bytes, "runtime", &what));
        QVERIFY2(what.find("deeper than") == std::string::npos, what.c_str());
        // Valid JSON nested deep in the header itself, beside the tensors.
        std::string header = "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
        QVERIFY(failsWith("deephead.safetensors", le<uint64_t>({header.size()}) + header,
                          "the header is JSON nested deeper than 64 levels", &what));
        QVERIFY2(what.find("byte " + std::to_string(8 + 6 + 63)) != std::string::npos, what.c_str());
        // Brackets inside strings do not count.
        meta = goodMeta();
        meta["header"] = "{\"note\": \"" + std::string(1000, '[') + "\"}";
        QVERIFY(loadSafetensors(writeTemp("brackets.safetensors", build(goodSpecs(), meta).bytes)).header.is_object());
    }

};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
