// The JSONL loader (SPEC 1.1, 1.4): values land where they belong, and every bad input
// is rejected with the file, the line and column, and what was expected.
#include <QtTest/QTest>

#include <cmath>
#include <fstream>

#include <zlib.h>

#include "core/base/errors.h"
#include "core/formats/loader.h"
#include "core/metrics/metrics.h"

using namespace kcx;

namespace {
const std::string kGood =
    R"({"kcx_header": {"kernels": {"train": {"name": "fsdp", "precision": "bf16"}, "inf": {"name": "vllm", "precision": "fp8_e4m3"}}}})"
    "\n"
    R"({"id": "a", "slices": {"task": "math", "lang": "en"}, "tokens": [5, 6, 7], "text": ["x", "\u00e9", "z"], "logp_train": [-0.5, -1.25, -2.0], "logp_inf": [-0.25, null, "NaN"], "reward_train": 1, "reward_inf": 0.5, "runtime": {"batch_size": 8, "kernel_version": "v1"}})"
    "\n\n"
    R"({"id": "b", "slices": {"task": "code"}, "tokens": [1, 2], "logp_train": [-1e-3, "-Infinity"], "logp_inf": [-2e-3, -1], "topk_train": {"ids": [[1, 9], [2, 3]], "logp": [[-0.1, -3], [-5, -0.2]]}, "topk_inf": {"ids": [[1, 4], [3, 2]], "logp": [[-0.2, -2], [-0.3, -0.4]]}, "logits_train": [[1, 2, 3], [0, 0, 0]], "logits_inf": [[1, 2, 4], [0, 1, 0]], "extra_key_from_a_writer": {"ignored": true}})"
    "\n";

std::string writeTemp(const QString& name, const std::string& bytes) {
    static QTemporaryDir dir;
    const std::string path = (dir.path() + "/" + name).toStdString();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}
}  // namespace

class TestJsonl : public QObject {
    Q_OBJECT
private slots:
    void loadsEveryField() {
        const Run run = parseJsonl(kGood, "good.jsonl");
        QCOMPARE(run.sequenceCount(), size_t(2));
        QCOMPARE(run.tokenCount(), size_t(5));
        QCOMPARE(run.ids[0], std::string("a"));
        QCOMPARE(run.offsets[1], int64_t(3));
        QCOMPARE(run.tokens[4], 2);
        QCOMPARE(run.header["kernels"]["inf"]["precision"].get<std::string>(), std::string("fp8_e4m3"));
        QCOMPARE(run.lpTrain[1], -1.25);
        QVERIFY(isMissing(run.lpInf[1]));                       // null is missing ...
        QVERIFY(std::isnan(run.lpInf[2]) && !isMissing(run.lpInf[2]));   // ... "NaN" is not
        QVERIFY(std::isinf(run.lpTrain[4]) && run.lpTrain[4] < 0);
        QCOMPARE(run.lpTrain[3], -1e-3);                        // float64 storage: exact
        QCOMPARE(run.tokenText(1), std::string_view("\xc3\xa9"));
        QCOMPARE(run.tokenText(3), std::string_view(""));       // sequence without text
        // Slices: keys in first-seen order, codes per sequence, -1 where unlabeled.
        QCOMPARE(run.slices.keys, (std::vector<std::string>{"task", "lang"}));
        QCOMPARE(*run.slices.label(1, 0), std::string("code"));
        QVERIFY(run.slices.label(1, 1) == nullptr);
        QCOMPARE(run.rewardInf[0], 0.5);
        QVERIFY(isMissing(run.rewardTrain[1]));
        QCOMPARE(run.runtime[0]["batch_size"].get<int>(), 8);
        // Top-k: sequence a has none (missing rows); sequence b's second train row is sorted.
        QCOMPARE(run.topkTrain.k, 2);
        QVERIFY(isMissing(run.topkTrain.logp[0]));
        QCOMPARE(run.topkTrain.ids[2 * 4 + 0], 3);
        QCOMPARE(run.topkTrain.logp[2 * 4 + 0], -0.2);
        QCOMPARE(run.topkTrain.ids[2 * 4 + 1], 2);
        // Logits for sequence b's two tokens (flat indices 3 and 4).
        QCOMPARE(run.logits.vocab, int64_t(3));
        QCOMPARE(run.logits.rows.size(), size_t(2));
        QCOMPARE(run.logits.rows[0], int64_t(3));
        QCOMPARE(run.logits.inf[2], 4.0);
    }

    void gzipAndPlainAgree() {
        const std::string plain = writeTemp("g.jsonl", kGood);
        const std::string gzPath = (QString::fromStdString(plain) + ".gz").toStdString();
        gzFile gz = gzopen(gzPath.c_str(), "wb");
        gzwrite(gz, kGood.data(), unsigned(kGood.size()));
        gzclose(gz);
        const Run a = loadRun(plain), b = loadRun(gzPath);
        QCOMPARE(b.tokenCount(), a.tokenCount());
        for (size_t i = 0; i < a.tokenCount(); ++i) {
            QCOMPARE(b.tokens[i], a.tokens[i]);
            QVERIFY(b.lpTrain[i] == a.lpTrain[i] || (std::isnan(a.lpTrain[i]) && std::isnan(b.lpTrain[i])));
        }
    }

    void memorySizes_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qulonglong>("bytes");   // 0 = rejected
        QTest::newRow("bytes") << "1073741824" << qulonglong(1073741824);
        QTest::newRow("K") << "4K" << qulonglong(4096);
        QTest::newRow("M") << "512M" << qulonglong(512) * 1024 * 1024;
        QTest::newRow("GB") << "8GB" << (qulonglong(8) << 30);
        QTest::newRow("GiB lower") << "8gib" << (qulonglong(8) << 30);
        QTest::newRow("T") << "2T" << (qulonglong(2) << 40);
        QTest::newRow("empty") << "" << qulonglong(0);
        QTest::newRow("unit only") << "G" << qulonglong(0);
        QTest::newRow("fraction") << "1.5G" << qulonglong(0);
        QTest::newRow("junk") << "8 apples" << qulonglong(0);
        QTest::newRow("negative") << "-1" << qulonglong(0);
        QTest::newRow("overflow") << "99999999999T" << qulonglong(0);
    }
    void memorySizes() {
        QFETCH(QString, text);
        QFETCH(qulonglong, bytes);
        const auto v = parseMemorySize(text.toStdString());
        if (bytes == 0)
            QVERIFY(!v);
        else
            QCOMPARE(qulonglong(*v), bytes);
    }

    // A JSON Lines run larger than KCX may hold is refused up front (plain) or as soon as
    // its text passes half the limit (gzip), saying so and what to do; a safetensors run
    // is mapped and opens whatever the limit.
    void runLargerThanTheMemoryLimit() {
        const std::string plain = writeTemp("big.jsonl", kGood);
        LoadOptions small;
        small.maxMemoryBytes = 100;   // bytes; the file is about 1 KB
        try {
            loadRun(plain, {}, small);
            QFAIL("a run over the memory limit loaded");
        } catch (const InputError& e) {
            const QString m = e.what();
            QVERIFY2(m.startsWith(QString::fromStdString(plain) + ":") && m.contains("KCX_MAX_MEMORY") &&
                         m.contains("100 bytes") && m.contains("kcx convert"),
                     e.what());
        }
        const std::string gzPath = writeTemp("big.jsonl.gz", "");
        gzFile gz = gzopen(gzPath.c_str(), "wb");
        gzwrite(gz, kGood.data(), unsigned(kGood.size()));
        gzclose(gz);
        try {
            loadRun(gzPath, {}, small);
            QFAIL("a gzip run over the memory limit loaded");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("gzip") && QString(e.what()).contains("KCX_MAX_MEMORY"), e.what());
        }
        // The limit is for the whole process (about 40 MB before any run; kProcessBytes).
        LoadOptions enough;
        enough.maxMemoryBytes = uint64_t(64) << 20;
        QCOMPARE(loadRun(plain, {}, enough).tokenCount(), size_t(5));
        QCOMPARE(loadRun(gzPath, {}, enough).tokenCount(), size_t(5));
        // The environment variable, malformed: named.
        qputenv("KCX_MAX_MEMORY", "lots");
        try {
            memoryLimit();
            QFAIL("KCX_MAX_MEMORY=lots accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).startsWith("KCX_MAX_MEMORY:"), e.what());
        }
        qputenv("KCX_MAX_MEMORY", "2K");
        QCOMPARE(memoryLimit(), uint64_t(2048));
        qunsetenv("KCX_MAX_MEMORY");
        QVERIFY(memoryLimit() > uint64_t(1) << 20);   // 80% of this machine's memory
    }

    // KCX_MAX_LINE sets the longest line the command line and the window accept; an
    // unknown key nested 300 levels deep is refused, naming line and column.
    void lineLimitAndNesting() {
        const std::string path = writeTemp("lines.jsonl", kGood);
        qputenv("KCX_MAX_LINE", "100");
        try {
            loadRun(path);
            QFAIL("a line over KCX_MAX_LINE loaded");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("longer than the limit of 100 bytes (KCX_MAX_LINE"), e.what());
        }
        qputenv("KCX_MAX_LINE", "a lot");
        try {
            loadRun(path);
            QFAIL("KCX_MAX_LINE=a lot accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).startsWith("KCX_MAX_LINE:"), e.what());
        }
        qunsetenv("KCX_MAX_LINE");
        QCOMPARE(loadRun(path).tokenCount(), size_t(5));
        const std::string deep = "{\"id\": \"a\", \"tokens\": [1], \"logp_train\": [-1], \"logp_inf\": [-1], \"x\": " +
                                 std::string(300, '[') + std::string(300, ']') + "}\n";
        try {
            loadRun(writeTemp("deep.jsonl", deep));
            QFAIL("300 levels of nesting loaded");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("deep.jsonl:1:") && QString(e.what()).contains("nesting deeper than 256"), e.what());
        }
    }

    // fuzz_jsonl's finding: empty text read past the chunk table (ASan). Now a clear error
    // or an empty run, never a crash.
    // JSON text is UTF-8: a stray byte in an id or label, or a lone surrogate escape, is an
    // error at its line and column, not bytes that later break JSON output or reports.
    void invalidUtf8IsAnError() {
        const std::string line = R"("tokens": [1], "logp_train": [-1], "logp_inf": [-1.5]})";
        const auto errorOf = [](const std::string& text) -> std::string {
            try {
                parseJsonl(text, "u.jsonl");
            } catch (const InputError& e) {
                return e.what();
            }
            return "(no error)";
        };
        std::string err = errorOf("{\"id\": \"a\xff\", " + line + "\n");
        QVERIFY2(err.rfind("u.jsonl:1:", 0) == 0 && err.find("invalid UTF-8 (byte 0xFF)") != std::string::npos, err.c_str());
        err = errorOf("{\"id\": \"a\", " + line + "\n{\"id\": \"b\", \"slices\": {\"task\": \"m\xc3\"}, " + line + "\n");
        QVERIFY2(err.rfind("u.jsonl:2:", 0) == 0 && err.find("invalid UTF-8") != std::string::npos, err.c_str());
        err = errorOf("{\"id\": \"\\udc00\", " + line + "\n");
        QVERIFY2(err.find("unpaired surrogate") != std::string::npos, err.c_str());
        err = errorOf("{\"id\": \"\\ud800x\", " + line + "\n");
        QVERIFY2(err.find("unpaired surrogate") != std::string::npos, err.c_str());
        // Real multi-byte text, raw and escaped, passes through unchanged.
        const Run r = parseJsonl("{\"id\": \"\xc3\xa9\xe2\x88\xa7\xf0\x9f\x98\x80\", \"slices\": {\"lang\": \"\\u00e9\\ud83d\\ude00\"}, " +
                                     line + "\n",
                                 "ok.jsonl");
        QCOMPARE(r.ids[0], std::string("\xc3\xa9\xe2\x88\xa7\xf0\x9f\x98\x80"));
        QCOMPARE(r.slices.values[0][0], std::string("\xc3\xa9\xf0\x9f\x98\x80"));
    }

    void emptyTextIsSafe() {
        try {
            const Run r = parseJsonl("", "empty.jsonl");
            QCOMPARE(r.tokenCount(), size_t(0));
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).startsWith("empty.jsonl"), e.what());
        }
    }

    // Issue 16, case 8: bytes after the end of the gzip stream were ignored (zlib's gzread
    // stops there). Now an error at the byte where they start; another gzip member there
    // (cat a.gz b.gz) is read on.
    void trailingDataAfterGzipIsAnError() {
        const std::string a = "{\"id\": \"a\", \"tokens\": [1], \"logp_train\": [-1], \"logp_inf\": [-1]}\n";
        const std::string b = "{\"id\": \"b\", \"tokens\": [2], \"logp_train\": [-1], \"logp_inf\": [-2]}\n";
        auto gzBytes = [&](const std::string& text) {
            const std::string p = writeTemp("m.jsonl.gz", "");
            gzFile gz = gzopen(p.c_str(), "wb");
            gzwrite(gz, text.data(), unsigned(text.size()));
            gzclose(gz);
            std::ifstream in(p, std::ios::binary);
            return std::string((std::istreambuf_iterator<char>(in)), {});
        };
        const std::string ga = gzBytes(a), gb = gzBytes(b);
        const Run both = loadRun(writeTemp("two.jsonl.gz", ga + gb));
        QCOMPARE(both.ids, (std::vector<std::string>{"a", "b"}));
        for (const std::string& tail : {std::string("garbage"), std::string(512, '\0'), std::string("\x1f")}) {
            const std::string path = writeTemp("tail.jsonl.gz", ga + tail);
            try {
                loadRun(path);
                QFAIL("trailing data after gzip was ignored");
            } catch (const InputError& e) {
                const std::string want = path + ": byte " + std::to_string(ga.size()) + ": " +
                                         std::to_string(tail.size()) + " bytes of trailing data after the end of the gzip stream";
                QVERIFY2(std::string(e.what()) == want, e.what());
            }
        }
    }

    void truncatedGzipIsAnError() {
        std::string big;
        for (int i = 0; i < 2000; ++i)
            big += "{\"id\": \"s" + std::to_string(i) + "\", \"tokens\": [1], \"logp_train\": [-1], \"logp_inf\": [-1]}\n";
        const std::string path = writeTemp("t.jsonl.gz", "");
        gzFile gz = gzopen(path.c_str(), "wb");
        gzwrite(gz, big.data(), unsigned(big.size()));
        gzclose(gz);
        std::ifstream in(path, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        writeTemp("t.jsonl.gz", bytes.substr(0, bytes.size() / 2));
        try {
            loadRun(path);
            QFAIL("a truncated gzip file loaded");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("t.jsonl.gz"), e.what());
        }
    }

    void badInput_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("where");     // "line:col" expected in the message
        QTest::addColumn<QString>("phrase");    // what the message must say
        const QString ok = R"({"id": "s", "tokens": [1, 2], "logp_train": [-1, -2], "logp_inf": [-1, -2]})";
        QTest::newRow("empty file") << "" << "" << "empty";
        QTest::newRow("blank lines only") << "\n\n  \n" << "" << "empty";
        QTest::newRow("header only") << R"({"kcx_header": {}})" "\n" << "" << "no sequences";
        QTest::newRow("broken json") << ok + "\n" + R"({"id": "t", "tokens": [1, 2 "logp_train": [-1]})"
                                     << ":2:29:" << "expected ']'";
        QTest::newRow("not an object") << "[1, 2]" << ":1:1:" << "JSON object";
        QTest::newRow("missing tokens") << R"({"id": "s", "logp_train": [-1], "logp_inf": [-1]})"
                                        << ":1:1:" << "missing required key \"tokens\"";
        QTest::newRow("missing id") << R"({"tokens": [1], "logp_train": [-1], "logp_inf": [-1]})" << ":1:1:"
                                    << "missing required key \"id\"";
        QTest::newRow("missing logp_inf") << R"({"id": "s", "tokens": [1], "logp_train": [-1]})" << ":1:1:"
                                          << "\"logp_inf\"";
        QTest::newRow("length mismatch") << R"({"id": "q7", "tokens": [1, 2], "logp_train": [-1, -2], "logp_inf": [-1]})"
                                         << ":1:" << "sequence 'q7': logp_inf has 1 values but tokens has 2";
        QTest::newRow("duplicate id") << ok + "\n" + ok << ":2:1:" << "duplicate sequence id 's' (first used on line 1)";
        QTest::newRow("uneven topk") << R"({"id": "u", "tokens": [1, 2], "logp_train": [-1, -2], "logp_inf": [-1, -2], "topk_train": {"ids": [[1, 2], [3]], "logp": [[-1, -2], [-3]]}})"
                                     << ":1:" << "row 1 has 1 ids";
        QTest::newRow("topk k changes") << R"({"id": "u", "tokens": [1], "logp_train": [-1], "logp_inf": [-1], "topk_inf": {"ids": [[1, 2]], "logp": [[-1, -2]]}})"
                                           "\n"
                                           R"({"id": "v", "tokens": [1], "logp_train": [-1], "logp_inf": [-1], "topk_inf": {"ids": [[1]], "logp": [[-1]]}})"
                                        << ":2:" << "earlier sequence has k = 2";
        QTest::newRow("float token") << R"({"id": "f", "tokens": [1.5], "logp_train": [-1], "logp_inf": [-1]})"
                                     << ":1:24:" << "expected an integer, found '1.5'";
        QTest::newRow("bad marker string") << R"({"id": "m", "tokens": [1], "logp_train": ["nan"], "logp_inf": [-1]})"
                                           << ":1:" << "\"NaN\", \"Infinity\"";
        QTest::newRow("bare NaN") << R"({"id": "m", "tokens": [1], "logp_train": [NaN], "logp_inf": [-1]})" << ":1:"
                                  << "expected a number or null";
        QTest::newRow("empty tokens") << R"({"id": "e", "tokens": [], "logp_train": [], "logp_inf": []})" << ":1:"
                                      << "T >= 1";
        QTest::newRow("logits V mismatch") << R"({"id": "l", "tokens": [1], "logp_train": [-1], "logp_inf": [-1], "logits_train": [[1, 2]], "logits_inf": [[1, 2, 3]]})"
                                           << ":1:" << "expected V = 2";
        QTest::newRow("logits row not an array") << R"({"id": "l", "tokens": [1], "logp_train": [-1], "logp_inf": [-1], "logits_train": [3], "logits_inf": [[1]]})"
                                                 << ":1:" << "logits_train";
        QTest::newRow("id not string") << R"({"id": 3, "tokens": [1], "logp_train": [-1], "logp_inf": [-1]})" << ":1:"
                                       << "\"id\" must be a string";
        QTest::newRow("trailing garbage") << ok + " x" << ":1:" << "unexpected text after";
        QTest::newRow("unterminated string") << "{\"id\": \"abc" << ":1:" << "unterminated string";
        QTest::newRow("late header") << ok + "\n" + R"({"kcx_header": {}})" << ":2:" << "missing required key";
        // Duplicate keys (issue 16, case 8): arrays were concatenated, scalars last-wins.
        // Each is an error at the second key.
        QTest::newRow("duplicate tokens") << R"({"id": "s", "tokens": [1], "logp_train": [-1, -2], "logp_inf": [-1, -2], "tokens": [2]})"
                                          << ":1:74:" << "duplicate key \"tokens\" in a sequence object";
        QTest::newRow("duplicate logp") << R"({"id": "s", "tokens": [1], "logp_train": [-1], "logp_train": [-5], "logp_inf": [-1]})"
                                        << ":1:48:" << "duplicate key \"logp_train\"";
        QTest::newRow("duplicate id key") << ok + "\n" + R"({"id": "a", "id": "b", "tokens": [1], "logp_train": [-1], "logp_inf": [-1]})"
                                          << ":2:13:" << "duplicate key \"id\"";
        QTest::newRow("duplicate slice") << R"({"id": "s", "slices": {"task": "a", "task": "b"}, "tokens": [1], "logp_train": [-1], "logp_inf": [-1]})"
                                         << ":1:37:" << "duplicate key \"task\" in slices";
        QTest::newRow("duplicate in runtime") << R"({"id": "s", "tokens": [1], "logp_train": [-1], "logp_inf": [-1], "runtime": {"a": 1, "b": {"c": 1, "c": 2}}})"
                                              << ":1:100:" << "duplicate key \"c\"";
        QTest::newRow("duplicate header key") << R"({"kcx_header": {"x": 1}, "kcx_header": {}})" "\n" + ok
                                              << ":1:26:" << "duplicate key \"kcx_header\"";
        // A byte-order mark is named as such (it read "expected a JSON object").
        QTest::newRow("bom") << QString(QChar(0xFEFF)) + ok << ":1:1:"
                             << "the file starts with a UTF-8 byte-order mark; save it without one";
    }
    void badInput() {
        QFETCH(QString, text);
        QFETCH(QString, where);
        QFETCH(QString, phrase);
        const std::string bytes = text.toStdString();
        const std::string path = writeTemp("bad.jsonl", bytes);
        try {
            loadRun(path);
            QFAIL("bad input was accepted");
        } catch (const InputError& e) {
            const QString msg = e.what();
            QVERIFY2(msg.startsWith(QString::fromStdString(path)), qPrintable(msg));
            QVERIFY2(where.isEmpty() || msg.contains(where), qPrintable(msg));
            QVERIFY2(msg.contains(phrase), qPrintable(msg));
        }
    }

    // Full logits: a null row is a position that was not logged, a null inside a row makes
    // that row missing, and logits of one kernel alone are accepted but give no row (every
    // SPEC 2.3 metric needs both).
    void partialLogits() {
        const std::string text =
            R"({"id": "a", "tokens": [1, 2, 3], "logp_train": [-1, -2, -3], "logp_inf": [-1, -2, -3], )"
            R"("logits_train": [[0, 0], null, [0, 1]], "logits_inf": [[0, 0], [1, 0], [0, null]]})" "\n"
            R"({"id": "b", "tokens": [4], "logp_train": [-1], "logp_inf": [-1], "logits_inf": [[5, 6]]})" "\n";
        const auto run = std::make_shared<Run>(parseJsonl(text, "partial.jsonl"));
        QCOMPARE(run->logits.vocab, int64_t(2));
        QCOMPARE(run->logits.rows.size(), size_t(2));     // positions 0 and 2; 1 has a null row
        QCOMPARE(run->logits.rows[0], int64_t(0));
        QCOMPARE(run->logits.rows[1], int64_t(2));
        QVERIFY(isMissing(run->logits.inf[3]));
        MetricEngine engine(run);
        const MetricValues& tv = *engine.get("tv");
        QCOMPARE(tv.values[0], 0.0);                      // identical rows
        QVERIFY(isMissing(tv.values[1]) && isMissing(tv.values[2]) && isMissing(tv.values[3]));
        QCOMPARE(tv.count, uint64_t(1));
        QCOMPARE(tv.missing, uint64_t(3));
        QCOMPARE(tv.nonfinite, uint64_t(0));
    }

    // A file of many lines is split into chunks parsed in parallel: errors still name the
    // right line, and the sequences come out in file order.
    void manyChunks() {
        std::string big;
        const int n = 120000;
        for (int i = 0; i < n; ++i)
            big += "{\"id\": \"s" + std::to_string(i) + "\", \"tokens\": [" + std::to_string(i) +
                   ", 1], \"logp_train\": [-1, -2], \"logp_inf\": [-1.5, -2]}\n";
        QVERIFY(big.size() > (size_t(8) << 20));
        const Run run = parseJsonl(big, "big.jsonl");
        QCOMPARE(run.sequenceCount(), size_t(n));
        QCOMPARE(run.tokens[2 * 54321], 54321);
        QCOMPARE(run.ids[54321], std::string("s54321"));
        const std::string bad = big + "{\"id\": \"s7\", \"tokens\": [1], \"logp_train\": [-1], \"logp_inf\": [-1]}\n";
        try {
            parseJsonl(bad, "big.jsonl");
            QFAIL("duplicate accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains(":" + QString::number(n + 1) + ":1:"), e.what());
            QVERIFY2(QString(e.what()).contains("line 8)"), e.what());
        }
    }

    void lineLimit() {
        LoadOptions o;
        o.maxLineBytes = 40;
        try {
            parseJsonl(kGood, "x.jsonl", {}, o);
            QFAIL("an over-long line was accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("longer than the limit"), e.what());
        }
    }

    void cancel() {
        bool threw = false;
        try {
            parseJsonl(kGood, "x.jsonl", [](double) { return false; });
        } catch (const Cancelled&) {
            threw = true;
        }
        QVERIFY(threw);
    }
};

QTEST_GUILESS_MAIN(TestJsonl)
#include "test_jsonl.moc"
