// Importing log-prob dumps (core/formats/importers.h, kcx import): the OpenAI chat and completions
// shapes, SGLang's native output and plain arrays, written here as the servers write them.
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <cmath>
#include <fstream>
#include <limits>

#include "core/base/errors.h"
#include "core/formats/importers.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"

using namespace kcx;

namespace {

// A chat completion line as vLLM's OpenAI server writes it (logprobs=true, top_logprobs=2).
std::string chatLine(const std::string& id, const std::vector<std::string>& toks, const std::vector<std::string>& lps,
                     const std::string& extra = "") {
    std::string s = R"({"id":"chatcmpl-x","kcx_id":")" + id + R"(","object":"chat.completion",)" + extra +
                    R"("choices":[{"index":0,"message":{"role":"assistant","content":"..."},"logprobs":{"content":[)";
    for (size_t j = 0; j < toks.size(); ++j) {
        if (j)
            s += ",";
        s += R"({"token":")" + toks[j] + R"(","logprob":)" + lps[j] + R"(,"bytes":[65],"top_logprobs":[)" +
             R"({"token":")" + toks[j] + R"(","logprob":)" + (lps[j] == "null" ? "-0.5" : lps[j]) +
             R"(},{"token":"zz","logprob":-7.25}]})";
    }
    return s + R"(]},"finish_reason":"stop"}]})";
}

std::string plainLine(const std::string& id, const std::vector<std::string>& toks, const std::vector<double>& lps) {
    std::string s = R"({"id":")" + id + R"(","tokens":[)";
    for (size_t j = 0; j < toks.size(); ++j)
        s.append(j ? ",\"" : "\"").append(toks[j]).append("\"");
    s += R"(],"logp_train":[)";
    for (size_t j = 0; j < lps.size(); ++j) {
        char b[40];
        std::snprintf(b, sizeof b, "%s%.17g", j ? "," : "", lps[j]);
        s += b;
    }
    return s + "]}";
}

std::string expectError(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

class TestImporters : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const char* name) { return (dir_.path() + "/" + name).toStdString(); }
    std::string write(const char* name, const std::string& text) {
        std::ofstream(path(name), std::ios::binary) << text;
        return path(name);
    }

private slots:
    void chatAgainstPlain() {
        const std::string inf =
            chatLine("a", {"He", "llo", "!"}, {"-0.25", "-1.5", "-0.0009765625"},
                     R"("metadata":{"task":"math","lang":"en"},)") + "\n" +
            chatLine("b", {"Hi"}, {"-0.125"}, R"("metadata":{"task":"code"},)") + "\n";
        const std::string train = plainLine("b", {"Hi"}, {-0.1234567890123}) + "\n" +
                                  plainLine("a", {"He", "llo", "!"}, {-0.3, -1.25, -0.001}) + "\n";
        const auto r = importPair(parseLogprobJsonl(inf, "inf.jsonl"), parseLogprobJsonl(train, "train.jsonl"));
        QVERIFY(r.ok());
        const Run& run = r.run;
        QCOMPARE(run.sequenceCount(), size_t(2));
        QCOMPARE(run.ids[0], std::string("a"));   // the inf file's order
        QCOMPARE(run.tokenCount(), size_t(4));
        QCOMPARE(run.lpInf[0], -0.25);
        QCOMPARE(run.lpInf[2], -0.0009765625);
        QCOMPARE(run.lpTrain[1], -1.25);
        QCOMPARE(run.lpTrain[2], -0.001);
        QCOMPARE(run.lpTrain[3], -0.1234567890123);
        // Vocabulary ids in order of first appearance; alternatives after their position.
        QVERIFY(r.vocabularyIds);
        QCOMPARE(run.tokens[0], 0);                       // "He"
        QCOMPARE(run.tokens[1], 2);                       // "llo" ("zz" took 1)
        QCOMPARE(run.tokenText(1), std::string_view("llo"));
        QCOMPARE(run.header["import"]["vocabulary"][1].get<std::string>(), std::string("zz"));
        QCOMPARE(run.topkInf.k, 2);
        QVERIFY(!run.topkTrain.present());
        QCOMPARE(run.topkInf.ids[2], 2);                  // most likely first
        QCOMPARE(run.topkInf.ids[3], 1);
        QCOMPARE(run.topkInf.logp[3], -7.25);
        const int task = run.slices.keyIndex("task");
        QVERIFY(task >= 0);
        QCOMPARE(*run.slices.label(0, size_t(task)), std::string("math"));
        QCOMPARE(*run.slices.label(1, size_t(task)), std::string("code"));
        QVERIFY(run.slices.label(1, size_t(run.slices.keyIndex("lang"))) == nullptr);
    }

    // fuzz_import's finding: "22e2222" is valid JSON but beyond double; it was an unexpected
    // exception, now an InputError naming file and line.
    void hugeNumberNamesFileAndLine() {
        const std::string text = "{\"id\": \"a\", \"logp_inf\": [-1]}\n{\"id\": \"b\", \"logp_inf\": [22e2222]}\n";
        try {
            parseLogprobJsonl(text, "inf.jsonl");
            QFAIL("22e2222 was accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).rfind("inf.jsonl:2:", 0) == 0, e.what());
        }
    }

    void completionsShape() {
        const std::string inf =
            R"({"id":"cmpl-1","kcx_id":"s1","choices":[{"text":"ab","index":0,"logprobs":{"tokens":["a","b","c"],)"
            R"("token_logprobs":[null,-0.5,-9999.0],"top_logprobs":[null,{"b":-0.5,"x":-2.0},{"c":-0.75,"y":-1.0,"q":-3.0}],)"
            R"("text_offset":[0,1,2]}}]})"
            "\n";
        const std::string train = R"({"id":"s1","tokens":["a","b","c"],"logp_train":[-0.1,-0.6,-0.7]})"
                                  "\n";
        const ImportedSide side = parseLogprobJsonl(inf, "inf.jsonl");
        QCOMPARE(side.formats.front(), std::string("openai-completions"));
        const auto r = importPair(side, parseLogprobJsonl(train, "train.jsonl"));
        QVERIFY(r.ok());
        QVERIFY(isMissing(r.run.lpInf[0]));
        QCOMPARE(r.run.lpInf[1], -0.5);
        // vLLM's floor: at or below -9999, a non-finite number, not missing.
        QCOMPARE(r.run.lpInf[2], -std::numeric_limits<double>::infinity());
        QCOMPARE(r.missingInf, size_t(1));
        QCOMPARE(r.flooredInf, size_t(1));
        // Uneven top-k: k = the shortest non-empty row; the longer row keeps its 2 best.
        QCOMPARE(r.run.topkInf.k, 2);
        QCOMPARE(r.topkRowsTrimmed, size_t(1));
        QVERIFY(isMissing(r.run.topkInf.logp[0]));        // no alternatives at position 0
        QCOMPARE(r.run.topkInf.logp[4], -0.75);            // position 2: c, then y; q cut
        QCOMPARE(r.run.topkInf.logp[5], -1.0);
        QCOMPARE(r.run.topkInf.logp[2], -0.5);
        QCOMPARE(r.run.topkInf.logp[3], -2.0);
    }

    void sglangNative() {
        const std::string inf =
            R"({"text":"xy","meta_info":{"id":"req-9","finish_reason":{"type":"stop"},"prompt_tokens":3,)"
            R"("output_token_logprobs":[[-0.5,11,"x"],[null,12,"y"],[-0.25,13,null]],)"
            R"("output_top_logprobs":[[[-0.5,11,"x"],[-1.5,40,"w"]],[[-0.1,12,"y"],[-2.5,41,null]],[[-0.25,13,null]]]},)"
            R"("kcx_id":"q1","metadata":{"task":"chat"}})"
            "\n";
        const std::string train = R"({"id":"q1","tokens":[11,12,13],"logp_train":[-0.5,-0.125,-0.375]})"
                                  "\n";
        const auto r = importPair(parseLogprobJsonl(inf, "s.jsonl"), parseLogprobJsonl(train, "t.jsonl"));
        QVERIFY(r.ok());
        QVERIFY(!r.vocabularyIds);                        // SGLang gives ids
        QCOMPARE(r.run.tokens[2], 13);
        QVERIFY(isMissing(r.run.lpInf[1]));
        QCOMPARE(r.run.lpTrain[2], -0.375);
        QCOMPARE(r.run.topkInf.k, 1);
        QCOMPARE(r.run.topkInf.ids[1], 12);
        QCOMPARE(r.run.tokenText(0), std::string_view("x"));
        QCOMPARE(*r.run.slices.label(0, 0), std::string("chat"));
    }

    void vllmTokenIdsCompareWithTrainerIds() {
        // vLLM with return_tokens_as_token_ids: "token_id:N" strings are ids.
        const std::string inf = chatLine("v", {"token_id:7", "token_id:9"}, {"-0.5", "-1"}) + "\n";
        const std::string train = R"({"id":"v","tokens":[7,8],"logp_train":[-0.5,-1]})"
                                  "\n";
        auto r = importPair(parseLogprobJsonl(inf, "i"), parseLogprobJsonl(train, "t"));
        QVERIFY(!r.ok());
        QCOMPARE(r.mismatches.size(), size_t(1));
        QCOMPARE(r.mismatches[0].inf, std::string("id 9"));
        QCOMPARE(r.mismatches[0].train, std::string("id 8"));
        const std::string inf2 = R"({"kcx_id":"v","choices":[{"logprobs":{"content":[{"token":"token_id:7","logprob":-0.5,)"
                                 R"("top_logprobs":[{"token":"token_id:7","logprob":-0.5},{"token":"token_id:3","logprob":-2}]}]}}]})";
        r = importPair(parseLogprobJsonl(inf2, "i"), parseLogprobJsonl(R"({"id":"v","tokens":[7],"logp_train":[-0.25]})", "t"));
        QVERIFY(r.ok());
        QVERIFY(!r.vocabularyIds);
        QCOMPARE(r.run.tokens[0], 7);
        QCOMPARE(r.run.topkInf.ids[1], 3);
        QVERIFY(!r.run.hasText());
    }

    void misalignedSidesNameRecordPositionAndTokens() {
        const std::string inf = chatLine("r1", {"a", "b", "c", "d"}, {"-1", "-1", "-1", "-1"}) + "\n" +
                                chatLine("r2", {"a"}, {"-1"}) + "\n" + chatLine("r3", {"a", "b"}, {"-1", "-1"}) + "\n";
        const std::string train = plainLine("r1", {"a", "b", "c", "X"}, {-1, -1, -1, -1}) + "\n" +
                                  plainLine("r2", {"a"}, {-1}) + "\n" + plainLine("r3", {"a"}, {-1}) + "\n" +
                                  plainLine("r4", {"a"}, {-1}) + "\n";
        const auto a = parseLogprobJsonl(inf, "inf.jsonl");
        const auto b = parseLogprobJsonl(train, "train.jsonl");
        const auto r = importPair(a, b);
        QVERIFY(!r.ok());
        QCOMPARE(r.mismatches.size(), size_t(2));
        QCOMPARE(r.mismatchedRecords, size_t(2));
        QCOMPARE(r.mismatches[0].id, std::string("r1"));
        QCOMPARE(r.mismatches[0].position, size_t(3));
        QCOMPARE(r.mismatches[0].inf, std::string("\"d\""));
        QCOMPARE(r.mismatches[0].train, std::string("\"X\""));
        QCOMPARE(r.mismatches[1].id, std::string("r3"));
        QCOMPARE(r.mismatches[1].train, std::string("(end)"));
        QCOMPARE(r.onlyTrain, std::vector<std::string>{"r4"});
        QCOMPARE(r.run.sequenceCount(), size_t(0));
        ImportOptions allow;
        allow.allowMismatch = true;
        const auto d = importPair(a, b, allow);
        QVERIFY(d.ok());
        QCOMPARE(d.droppedRecords, size_t(2));
        QCOMPARE(d.run.sequenceCount(), size_t(1));
        QCOMPARE(d.run.ids[0], std::string("r2"));
    }

    void onlyOneSide() {
        const auto r = importPair(parseLogprobJsonl(chatLine("x", {"a"}, {"-1"}) + "\n" + chatLine("y", {"a"}, {"-1"}),
                                                    "i"),
                                  parseLogprobJsonl(plainLine("y", {"a"}, {-2}) + "\n" + plainLine("z", {"a"}, {-2}), "t"));
        QVERIFY(r.ok());
        QCOMPARE(r.onlyInf, std::vector<std::string>{"x"});
        QCOMPARE(r.onlyTrain, std::vector<std::string>{"z"});
        QCOMPARE(r.run.sequenceCount(), size_t(1));
        QCOMPARE(r.run.lpTrain[0], -2.0);
        // A train side without tokens: positions are counted as unchecked, not compared.
        const auto u = importPair(parseLogprobJsonl(chatLine("y", {"a", "b"}, {"-1", "-1"}), "i"),
                                  parseLogprobJsonl(R"({"id":"y","logp_train":[-1.5,-0.5]})", "t"));
        QVERIFY(u.ok());
        QCOMPARE(u.uncheckedPositions, size_t(2));
        QCOMPARE(u.run.lpTrain[1], -0.5);
    }

    void nullsAndNonFinite() {
        const std::string inf = chatLine("n", {"a", "b", "c"}, {"null", "-9999.0", "NaN"}) + "\n";
        const std::string train = R"({"id":"n","tokens":["a","b","c"],"logp_train":[-Infinity,null,"Infinity"]})"
                                  "\n";
        const auto r = importPair(parseLogprobJsonl(inf, "i"), parseLogprobJsonl(train, "t"));
        QVERIFY(r.ok());
        QCOMPARE(r.missingInf, size_t(1));
        QCOMPARE(r.flooredInf, size_t(1));
        QCOMPARE(r.missingTrain, size_t(1));
        QCOMPARE(r.flooredTrain, size_t(0));
        QVERIFY(isMissing(r.run.lpInf[0]));
        QCOMPARE(r.run.lpInf[1], -std::numeric_limits<double>::infinity());   // -9999.0: floored
        QCOMPARE(r.run.header["import"]["floored_inf"].get<int>(), 1);
        QCOMPARE(r.run.header["import"]["missing_inf"].get<int>(), 1);
        QVERIFY(std::isnan(r.run.lpInf[2]) && !isMissing(r.run.lpInf[2]));
        QVERIFY(std::isinf(r.run.lpTrain[0]) && r.run.lpTrain[0] < 0);
        QVERIFY(isMissing(r.run.lpTrain[1]));
        QVERIFY(std::isinf(r.run.lpTrain[2]));
    }

    void brokenJsonNamesFileLineColumn() {
        const std::string text = chatLine("a", {"a"}, {"-1"}) + "\n\n" + R"({"id":"b","logp":[-1, -2,]})" + "\n";
        const std::string e = expectError([&] { parseLogprobJsonl(text, "bad.jsonl"); });
        QVERIFY2(e.rfind("bad.jsonl:3:26: broken JSON", 0) == 0, e.c_str());
        const std::string e2 = expectError([&] { parseLogprobJsonl(R"({"id":"x","v":NaN,})", "nan.jsonl"); });
        QVERIFY2(e2.rfind("nan.jsonl:1:19:", 0) == 0, e2.c_str());   // column in the original text
        const std::string e3 = expectError([&] { parseLogprobJsonl(R"({"logp":[1]})", "noid.jsonl"); });
        QVERIFY2(e3.find("noid.jsonl:1: record has no id") == 0, e3.c_str());
        const std::string e4 = expectError([&] { parseLogprobJsonl("{\"id\":\"a\",\"logp\":[1]}\n{\"id\":\"a\",\"logp\":[1]}", "d"); });
        QVERIFY2(e4.find("d:2: duplicate id 'a' (first at line 1)") == 0, e4.c_str());
        const std::string e5 = expectError([&] { parseLogprobJsonl(R"({"id":"q","foo":1})", "u"); });
        QVERIFY2(e5.find("u:1: unknown record shape") == 0, e5.c_str());
        const std::string e6 = expectError([&] { readLogprobFile(path("does-not-exist.jsonl")); });
        QVERIFY2(e6.find("cannot open") != std::string::npos, e6.c_str());
    }

    // Issue 16, case 5: `kcx import` metadata nested ~52k deep crashed (a recursive copy of
    // the parsed line). The line is refused before parsing, at the bracket past the limit.
    void deepJsonIsRefusedAtItsPlace() {
        const std::string deep = std::string(52000, '[') + std::string(52000, ']');
        const std::string line2 = chatLine("b", {"a"}, {"-1"}, R"("usage":{"x":)" + deep + "},");
        const std::string text = chatLine("a", {"a"}, {"-1"}) + "\n" + line2 + "\n";
        const std::string e = expectError([&] { parseLogprobJsonl(text, "deep.jsonl"); });
        // "usage" opens level 2, so the 63rd bracket of `deep` opens level 65 (columns are 1-based).
        const size_t col = line2.find(R"("x":)") + 4 + 62 + 1;
        QVERIFY2(e.rfind("deep.jsonl:2:" + std::to_string(col) + ": JSON nested deeper than 64 levels", 0) == 0,
                 e.c_str());
        // A key twice: nlohmann kept the last; now an error at the second (columns in the
        // line as written, before bare NaN is quoted for the parser).
        const std::string dupLine = R"({"id":"d","logp":[NaN, -1],"logp":[-2, -3]})";
        const std::string d = expectError([&] { parseLogprobJsonl(dupLine, "dup.jsonl"); });
        QVERIFY2(d.rfind("dup.jsonl:1:" + std::to_string(dupLine.rfind(R"("logp")") + 1) + ": duplicate key \"logp\"", 0) == 0,
                 d.c_str());
        // Brackets inside strings are text.
        const std::string ok = chatLine("a", {std::string(200, '[')}, {"-1"}) + "\n";
        QCOMPARE(parseLogprobJsonl(ok, "ok.jsonl").records.size(), size_t(1));
    }

    void roundTripThroughSafetensors() {
        const std::string inf = write("inf.jsonl", chatLine("a", {"x", "y"}, {"-0.1", "-2.5"}, R"("metadata":{"t":"m"},)") +
                                                       "\n" + chatLine("b", {"z"}, {"null"}) + "\n");
        const std::string train = write("train.jsonl", plainLine("a", {"x", "y"}, {-0.30000000000000004, -2.25}) +
                                                           "\n" + plainLine("b", {"z"}, {-0.7}) + "\n");
        const auto r = importPair(readLogprobFile(inf), readLogprobFile(train));
        QVERIFY(r.ok());
        writeSafetensors(r.run, path("run.safetensors"));
        const Run back = loadRun(path("run.safetensors"));
        QCOMPARE(back.ids, r.run.ids);
        QCOMPARE(back.tokenCount(), size_t(3));
        QCOMPARE(back.lpTrain[0], -0.30000000000000004);
        QCOMPARE(back.lpInf[1], -2.5);
        QVERIFY(isMissing(back.lpInf[2]));
        QCOMPARE(back.tokens[2], r.run.tokens[2]);
        QCOMPARE(back.tokenText(2), std::string_view("z"));
        QCOMPARE(back.topkInf.k, 2);
        QCOMPARE(back.topkInf.logp[1], -7.25);
        QCOMPARE(*back.slices.label(0, 0), std::string("m"));
        QCOMPARE(back.header["import"]["token_ids"].get<std::string>(), std::string("vocabulary"));
    }
};

QTEST_GUILESS_MAIN(TestImporters)
#include "test_importers.moc"
