// The run writers (SPEC 1.1 JSON Lines plain and gzip, SPEC 1.2 safetensors): a run with
// every optional part, a missing value, NaNs and signed zeros written and read back, with
// missing and NaN told apart.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/base/errors.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"

using namespace kcx;
using nlohmann::json;

namespace {

std::string writeTemp(const std::string& name, const std::string& bytes) {
    static QTemporaryDir dir;
    const std::string path = (dir.path() + "/" + QString::fromStdString(name)).toStdString();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
}

// ---- comparing values: missing, NaN and signed zero are told apart ---------------------------
bool same(double a, double b) {
    if (isMissing(a) || isMissing(b))
        return isMissing(a) && isMissing(b);
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}
// `b` came back through float32 (or its shortest text form): it must be the same float.
bool sameAsFloat(double a, double b) {
    if (isMissing(a) || isMissing(b) || std::isnan(a) || std::isnan(b))
        return same(a, b);
    return float(a) == float(b) && std::signbit(a) == std::signbit(b);
}
bool sameColumn(const Column& a, const Column& b, bool viaFloat) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        const bool viaF32 = viaFloat || a.type() == Column::Type::F32;
        if (!(viaF32 ? sameAsFloat(a[i], b[i]) : same(a[i], b[i]))) {
            qWarning("column differs at %zu: %.17g vs %.17g", i, a[i], b[i]);
            return false;
        }
    }
    return true;
}
template <class T>
std::vector<T> vec(const Array<T>& a) { return std::vector<T>(a.begin(), a.end()); }

Column f64(std::vector<double> v) { return Column(Array<double>(std::move(v))); }
Column f32(std::vector<float> v) { return Column(Array<float>(std::move(v))); }

// A run with every optional part, a missing value and a NaN, built in code.
Run makeRun() {
    const double miss = missingDouble(), nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const float missF = missingFloat(), nanF = std::numeric_limits<float>::quiet_NaN();
    Run r;
    r.header = json::parse(R"({"kernels": {"train": {"name": "fsdp", "precision": "bf16"},
                                         "inf": {"name": "vllm", "precision": "fp8_e4m3", "batch_invariant": false}},
                              "model": {"name": "tiny"}, "created": "2026-01-01", "source": "test"})");
    r.ids = {"s0", "s\"1\"", "s2"};
    r.offsets = Array<int64_t>(std::vector<int64_t>{0, 3, 5, 9});
    r.tokens = Array<int32_t>(std::vector<int32_t>{10, 11, 12, 20, 21, 30, 31, -1, 2147483647});
    r.lpTrain = f64({-0.1, -1e-300, miss, -2.5, nan, -inf, -1.0 / 3.0, -0.0, -1e-7});
    r.lpInf = f32({-0.1f, -1e-30f, -0.5f, missF, -2.5f, nanF, -1.0f / 3.0f, 0.0f, -1e-7f});
    r.topkTrain.k = 2;
    r.topkTrain.ids = Array<int32_t>(std::vector<int32_t>{10, 1, 11, 2, 12, 3, 20, 4, 21, 5,  // s0, s1
                                                          -1, -1, -1, -1, -1, -1, -1, -1});   // s2 absent
    r.topkTrain.logp = f64({-0.1, -2.3, -1e-300, -9.75, -0.2, -0.3, -0.01, -5.0, -0.5, -0.6,
                            miss, miss, miss, miss, miss, miss, miss, miss});
    r.topkInf.k = 2;
    r.topkInf.ids = Array<int32_t>(std::vector<int32_t>{10, 1, 11, 2, 12, 3, 20, 4, 21, 5, 30, 6, 31, 7, 1, 8, 2, 9});
    r.topkInf.logp = f32({-0.1f, -2.3f, -0.2f, -9.75f, -0.2f, -0.3f, -0.01f, -5.0f, -0.5f, -0.6f,
                          -0.1f, -0.2f, -0.1f, -0.2f, -0.7f, missF, -0.7f, -0.8f});
    // Logits for all of s1 (tokens 3, 4) and one token of s2 (6).
    r.logits.rows = Array<int64_t>(std::vector<int64_t>{3, 4, 6});
    r.logits.vocab = 3;
    r.logits.train = f64({1.0, 2.5, -3.0, 0.1, 0.2, 0.3, 7.0, miss, 8.0});
    r.logits.inf = f32({1.0f, 2.5f, -3.0f, 0.1f, nanF, 0.3f, 7.0f, 8.0f, 9.0f});
    r.rewardTrain = {1.0, miss, 0.5};
    r.rewardInf = {0.75, nan, 0.0};
    r.slices.keys = {"task", "lang"};
    r.slices.values = {{"math", "code"}, {"en"}};
    r.slices.codes = {0, 0, 1, -1, -1, -1};
    r.runtime = {json{{"batch_size", 8}}, json{{"latency_ms", 12.5}, {"kernel_version", "v2"}}, json::object()};
    const std::vector<std::string> text = {"a", "b\n", "\"q\"", "\xc3\xa9", "", "x\ty", "\x01", "z", "w"};
    r.textOffsets.push_back(0);
    for (const auto& t : text) {
        r.textPool += t;
        r.textOffsets.push_back(r.textPool.size());
    }
    r.checkInvariants();
    return r;
}

void compareRuns(const Run& a, const Run& b, bool viaFloat) {
    QCOMPARE(b.ids, a.ids);
    QCOMPARE(vec(b.offsets), vec(a.offsets));
    QCOMPARE(vec(b.tokens), vec(a.tokens));
    QVERIFY(sameColumn(a.lpTrain, b.lpTrain, viaFloat));
    QVERIFY(sameColumn(a.lpInf, b.lpInf, viaFloat));
    for (auto [ta, tb] : {std::pair{&a.topkTrain, &b.topkTrain}, std::pair{&a.topkInf, &b.topkInf}}) {
        QCOMPARE(tb->k, ta->k);
        QCOMPARE(vec(tb->ids), vec(ta->ids));
        QVERIFY(sameColumn(ta->logp, tb->logp, viaFloat));
    }
    QCOMPARE(b.rewardTrain.size(), a.rewardTrain.size());
    QCOMPARE(b.rewardInf.size(), a.rewardInf.size());
    for (size_t s = 0; s < a.rewardTrain.size(); ++s) {
        QVERIFY((viaFloat ? sameAsFloat : same)(a.rewardTrain[s], b.rewardTrain[s]));
        QVERIFY((viaFloat ? sameAsFloat : same)(a.rewardInf[s], b.rewardInf[s]));
    }
    // Slices by label (codes may be numbered differently).
    QCOMPARE(b.slices.keys, a.slices.keys);
    for (size_t s = 0; s < a.sequenceCount(); ++s)
        for (size_t k = 0; k < a.slices.keys.size(); ++k) {
            const std::string* la = a.slices.label(s, k);
            const std::string* lb = b.slices.label(s, k);
            QCOMPARE(lb == nullptr, la == nullptr);
            if (la)
                QCOMPARE(*lb, *la);
        }
    QVERIFY(b.runtime == a.runtime);
    QVERIFY2(b.header == a.header, b.header.dump().c_str());
    QCOMPARE(b.hasText(), a.hasText());
    for (size_t i = 0; i < a.tokenCount(); ++i)
        QCOMPARE(b.tokenText(i), a.tokenText(i));
}

}  // namespace

class TestRunWriter : public QObject {
    Q_OBJECT
private slots:
    // ---- writing and reading back ---------------------------------------------------------------
    void safetensorsRoundTrip() {
        const Run run = makeRun();
        const std::string path = writeTemp("roundtrip.safetensors", "");
        writeSafetensors(run, path, true);
        const Run back = loadSafetensors(path);
        compareRuns(run, back, false);
        QVERIFY(back.lpTrain.type() == Column::Type::F64);
        QVERIFY(back.lpInf.type() == Column::Type::F32);
        QCOMPARE(vec(back.logits.rows), vec(run.logits.rows));
        QVERIFY(sameColumn(run.logits.train, back.logits.train, false));
        QVERIFY(sameColumn(run.logits.inf, back.logits.inf, false));
        QCOMPARE(back.slices.codes, run.slices.codes);
        QVERIFY(!QFile::exists(QString::fromStdString(path + ".tmp")));

        // The file follows the reference layout: header a multiple of 8, tensors gap-free.
        std::ifstream in(path, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        uint64_t n;
        std::memcpy(&n, bytes.data(), 8);
        QCOMPARE(n % 8, uint64_t(0));
        const json header = json::parse(bytes.substr(8, n));
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        for (const auto& [name, t] : header.items())
            if (name != "__metadata__") {
                ranges.emplace_back(t["data_offsets"][0].get<uint64_t>(), t["data_offsets"][1].get<uint64_t>());
                const std::string dt = t["dtype"];
                const uint64_t size = dt == "F64" || dt == "I64" ? 8 : dt == "U8" ? 1 : 4;
                QCOMPARE(ranges.back().first % size, uint64_t(0));
            }
        std::sort(ranges.begin(), ranges.end());
        QCOMPARE(ranges.front().first, uint64_t(0));
        for (size_t i = 1; i < ranges.size(); ++i)
            QCOMPARE(ranges[i].first, ranges[i - 1].second);
        QCOMPARE(ranges.back().second, uint64_t(bytes.size()) - 8 - n);

        // As float32 only.
        writeSafetensors(run, path, false);
        const Run narrow = loadSafetensors(path);
        compareRuns(run, narrow, true);
        QVERIFY(narrow.lpTrain.type() == Column::Type::F32);
        QVERIFY(sameColumn(run.logits.train, narrow.logits.train, true));
    }

    void jsonlRoundTrip_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("plain") << "roundtrip.jsonl";
        QTest::newRow("gzip") << "roundtrip.jsonl.gz";
    }
    void jsonlRoundTrip() {
        QFETCH(QString, name);
        const Run run = makeRun();
        const std::string path = writeTemp(name.toStdString(), "");
        writeJsonl(run, path);
        QVERIFY(!QFile::exists(QString::fromStdString(path + ".tmp")));
        if (name.endsWith(".gz")) {
            std::ifstream in(path, std::ios::binary);
            QCOMPARE(in.get(), 0x1f);
            QCOMPARE(in.get(), 0x8b);
        }
        const Run back = loadJsonl(path);
        compareRuns(run, back, false);
        // JSONL logits cover whole sequences; positions without a row go out as null
        // rows, so s2's lone row survives the trip too.
        QCOMPARE(vec(back.logits.rows), (std::vector<int64_t>{3, 4, 6}));
        QCOMPARE(back.logits.vocab, int64_t(3));
        for (size_t i = 0; i < 9; ++i) {
            QVERIFY(same(run.logits.train[i], back.logits.train[i]));
            QVERIFY(sameAsFloat(run.logits.inf[i], back.logits.inf[i]));
        }
        // Missing and NaN stay apart.
        QVERIFY(isMissing(back.lpTrain[2]));
        QVERIFY(std::isnan(back.lpTrain[4]) && !isMissing(back.lpTrain[4]));
        QVERIFY(isMissing(back.lpInf[3]));
        QVERIFY(std::isnan(back.lpInf[5]) && !isMissing(back.lpInf[5]));
        QVERIFY(isMissing(back.rewardTrain[1]));
        QVERIFY(std::isnan(back.rewardInf[1]) && !isMissing(back.rewardInf[1]));
        QCOMPARE(back.lpTrain[1], -1e-300);
        QCOMPARE(back.lpTrain[6], -1.0 / 3.0);
    }

    // SPEC 7: a sequence's step is the JSON Lines `step` key and the safetensors `step`
    // tensor, and the slice key "step" inside KCX; it survives JSONL -> safetensors -> JSONL,
    // a sequence without one stays without one, and bad steps are errors at their place.
    void stepsSurviveEveryFormat() {
        const std::string text =
            R"({"id":"a","step":2,"slices":{"task":"math"},"tokens":[1,2],"logp_train":[-0.5,-1.0],"logp_inf":[-0.25,-1.5]})" "\n"
            R"({"id":"b","step":10,"tokens":[3],"logp_train":[-2.0],"logp_inf":[-1.0]})" "\n"
            R"({"id":"c","tokens":[4],"logp_train":[-0.125],"logp_inf":[-0.25]})" "\n";
        const Run run = loadJsonl(writeTemp("steps.jsonl", text));
        QCOMPARE(run.steps(), (std::vector<int64_t>{2, 10, -1}));
        QVERIFY(run.slices.keyIndex("step") >= 0);
        const std::string st = writeTemp("steps.safetensors", "");
        writeSafetensors(run, st);
        {   // the file holds a `step` tensor [N] of I64 and no slice key "step"
            std::ifstream in(st, std::ios::binary);
            uint64_t n = 0;
            in.read(reinterpret_cast<char*>(&n), 8);
            std::string header(n, '\0');
            in.read(header.data(), std::streamsize(n));
            const json h = json::parse(header);
            QCOMPARE(h["step"]["dtype"].get<std::string>(), std::string("I64"));
            QVERIFY(h["step"]["shape"] == json::array({3}));
            QCOMPARE(h["__metadata__"]["slice_keys"].get<std::string>(), std::string(R"(["task"])"));
        }
        const Run back = loadSafetensors(st);
        QCOMPARE(back.steps(), (std::vector<int64_t>{2, 10, -1}));
        QCOMPARE(*back.slices.label(0, size_t(back.slices.keyIndex("task"))), std::string("math"));
        const std::string again = writeTemp("steps-again.jsonl", "");
        writeJsonl(back, again);
        QCOMPARE(loadJsonl(again).steps(), (std::vector<int64_t>{2, 10, -1}));
        std::ifstream in(again);
        std::string first;
        std::getline(in, first);
        QVERIFY2(first.find(R"("step":2)") != std::string::npos && first.find(R"("step":"2")") == std::string::npos,
                 first.c_str());

        auto error = [](const std::string& name, const std::string& line) {
            try {
                loadJsonl(writeTemp(name, line + "\n"));
            } catch (const InputError& e) {
                return std::string(e.what());
            }
            return std::string("no error");
        };
        const std::string neg = error("neg.jsonl", R"({"id":"a","step":-1,"tokens":[1],"logp_train":[0],"logp_inf":[0]})");
        QVERIFY2(neg.find("neg.jsonl:1:") != std::string::npos && neg.find(">= 0") != std::string::npos, neg.c_str());
        const std::string frac = error("frac.jsonl", R"({"id":"a","step":1.5,"tokens":[1],"logp_train":[0],"logp_inf":[0]})");
        QVERIFY2(frac.find("frac.jsonl:1:") != std::string::npos, frac.c_str());
        const std::string clash = error("clash.jsonl",
            R"({"id":"a","step":3,"slices":{"step":"4"},"tokens":[1],"logp_train":[0],"logp_inf":[0]})");
        QVERIFY2(clash.find("slices.step is '4'") != std::string::npos, clash.c_str());
    }

    // `--run A --run B`: one run, sequences in order, slice keys the union, ids unique.
    void runsReadAsOne() {
        const std::string a = writeTemp("join-a.jsonl",
            R"({"id":"a","step":1,"slices":{"task":"math"},"tokens":[1],"logp_train":[-0.5],"logp_inf":[-0.25]})" "\n");
        const std::string b = writeTemp("join-b.jsonl",
            R"({"id":"b","slices":{"lang":"en"},"tokens":[2,3],"logp_train":[-1.0,-2.0],"logp_inf":[-1.5,-2.0]})" "\n");
        const std::string bSt = writeTemp("join-b.safetensors", "");
        writeSafetensors(loadJsonl(b), bSt);
        const Run r = loadRuns({a, bSt});
        QCOMPARE(r.ids, (std::vector<std::string>{"a", "b"}));
        QCOMPARE(r.tokenCount(), size_t(3));
        QCOMPARE(r.offsets[1], int64_t(1));
        QCOMPARE(r.lpInf[1], -1.5);
        QCOMPARE(r.lpTrain[2], -2.0);
        QCOMPARE(r.steps(), (std::vector<int64_t>{1, -1}));
        QCOMPARE(*r.slices.label(0, size_t(r.slices.keyIndex("task"))), std::string("math"));
        QVERIFY(r.slices.label(1, size_t(r.slices.keyIndex("task"))) == nullptr);
        QCOMPARE(*r.slices.label(1, size_t(r.slices.keyIndex("lang"))), std::string("en"));
        QCOMPARE(r.header["joined"].size(), size_t(2));
        try {
            loadRuns({a, a});
            QFAIL("a run joined to itself");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("sequence id 'a' is also in") != std::string::npos, e.what());
        }
    }

    void writerReportsIoErrors() {
        const Run run = makeRun();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, writeJsonl(run, "/nonexistent-dir/x.jsonl"));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, writeSafetensors(run, "/nonexistent-dir/x.safetensors"));
    }

};

QTEST_GUILESS_MAIN(TestRunWriter)
#include "test_run_writer.moc"
