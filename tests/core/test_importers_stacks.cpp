// One side of an import in each serving stack's own shape (issue 18), read from the verbatim
// example files in tests/data/stacks/ (how each was made: its README and
// docs/research/stacks-round2.md). Every file holds the same tokens and log-probs:
//   Hello  inf -0.25  (alternative Hi -2.0)        train -0.5
//   world  inf -1.5   (alternative there -0.5)      train -1.25
//   !      inf -0.125 (alternative . -2.25)         train -0.0625
// so each shape, paired with the same train side, must give the figures of one SPEC 1.1 run
// written here by hand.
#include <QtTest/QTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/formats/importers.h"
#include "core/formats/loader.h"
#include "core/formats/sniff.h"
#include "core/metrics/metrics.h"
#include "tests/support/same_figures.h"
#include "tests/support/test_files.h"

using namespace kcx;
using kcx::test::errorOf;

namespace {

std::string stack(const char* name) { return (std::filesystem::path(KCX_STACKS_DIR) / name).string(); }

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The file's text with `insert` put right after its first "{" (an id for shapes that carry
// none, as docs/formats.md tells to add when dumping).
std::string withAfterBrace(const std::string& text, const std::string& insert) {
    std::string s = text;
    s.insert(s.find('{') + 1, insert);
    return s;
}

// The train side for one record `id`: the trainer's scores of the same tokens.
std::string trainSide(const std::string& id, const std::string& tokens) {
    return R"({"id":")" + id + R"(","tokens":)" + tokens + R"(,"logp_train":[-0.5,-1.25,-0.0625]})" "\n";
}

// The same numbers as SPEC 1.1, with the inference side's top-2 sorted by hand; `ids` maps
// Hello, Hi, world, there, !, . to token ids.
std::string specRun(const int (&ids)[6]) {
    const auto n = [&](int i) { return std::to_string(ids[i]); };
    return R"({"id":"s","tokens":[)" + n(0) + "," + n(2) + "," + n(4) +
           R"(],"logp_train":[-0.5,-1.25,-0.0625],"logp_inf":[-0.25,-1.5,-0.125],"topk_inf":{"ids":[[)" + n(0) + "," +
           n(1) + "],[" + n(3) + "," + n(2) + "],[" + n(4) + "," + n(5) +
           R"(]],"logp":[[-0.25,-2.0],[-0.5,-1.5],[-0.125,-2.25]]}})" "\n";
}
// Llama-3 ids (the files' own), and the ids a vocabulary of token strings gives (importPair:
// first appearance, the sampled token then the alternatives).
constexpr int kLlama[6] = {9906, 13347, 1917, 1070, 0, 13};
constexpr int kVocabulary[6] = {0, 1, 2, 3, 4, 5};

}  // namespace

class TestImportersStacks : public QObject {
    Q_OBJECT
    test::TempFiles files_;

    // The pair must hold the three tokens above and agree with the SPEC run figure by figure.
    void checkAgainstSpec(const ImportResult& r, const int (&ids)[6]) {
        QVERIFY(r.ok());
        QCOMPARE(r.run.tokenCount(), size_t(3));
        QCOMPARE(r.run.lpInf[1], -1.5);
        QCOMPARE(r.run.lpTrain[2], -0.0625);
        QCOMPARE(r.run.topkInf.k, 2);
        QCOMPARE(r.run.topkInf.ids[2], ids[3]);   // " there" (-0.5) before " world" (-1.5)
        const Run spec = loadRun(files_.write("spec.jsonl", specRun(ids)));
        QVERIFY(test::compareFigures(r.run, spec) > 0);
        // By hand: |lp_train - lp_inf| = 0.25, 0.25, 0.0625.
        MetricEngine e(std::make_shared<Run>(r.run));
        QCOMPARE(*summarize(*e.get("abs_log_ratio")).mean, (0.25 + 0.25 + 0.0625) / 3);
    }

    ImportResult pair(const std::string& infText, const std::string& name, const std::string& train) {
        return importPair(parseLogprobJsonl(infText, name), parseLogprobJsonl(train, "train.jsonl"));
    }

private slots:
    // TGI /generate with details: ids given, prefill (the prompt) left out.
    void tgiGenerate() {
        const auto r = pair(withAfterBrace(slurp(stack("tgi_generate_details.json")), R"("kcx_id":"t1",)"), "tgi.json",
                            trainSide("t1", "[9906,1917,0]"));
        checkAgainstSpec(r, kLlama);
        QVERIFY(!r.vocabularyIds);
        QCOMPARE(r.run.header["import"]["inf"]["formats"][0].get<std::string>(), std::string("tgi"));
        QCOMPARE(r.bestOfIgnored, size_t(0));
    }

    // SGLang batch /generate: one JSON array of responses, ids from meta_info.id.
    void sglangBatchArray() {
        const ImportedSide side = readLogprobFile(stack("sglang_batch_generate.json"));
        QCOMPARE(side.records.size(), size_t(2));
        QCOMPARE(side.records[1].id, std::string("kcx-rid-1"));
        QCOMPARE(side.records[1].tokens[1].id, int64_t(0));
        QCOMPARE(side.records[1].logp[1], -0.125);
        const auto r = importPair(side, parseLogprobJsonl(R"({"id":"kcx-rid-0","tokens":[9906,1917],"logp_train":[-0.5,-1.25]})"
                                                          "\n"
                                                          R"({"id":"kcx-rid-1","tokens":[1917,0],"logp_train":[-1.25,-0.0625]})",
                                                          "t"));
        QVERIFY(r.ok());
        QCOMPARE(r.run.tokenCount(), size_t(4));
        QCOMPARE(r.run.lpInf[2], -1.5);
        QCOMPARE(r.run.topkInf.ids[2 * 2 + 1], 1917);   // row 2 (" world" sampled): " there" first
        // The same array on one JSON Lines line reads the same.
        const std::string oneLine = slurp(stack("sglang_batch_generate.json")) + "\n";
        QCOMPARE(parseLogprobJsonl(oneLine, "l.jsonl").records.size(), size_t(2));
    }

    // SGLang chat with return_meta_info: meta_info's triples give the ids.
    void sglangChatMetaInfo() {
        checkAgainstSpec(pair(slurp(stack("sglang_chat_meta_info.json")), "sglang.json",
                              trainSide("kcx-rid-2", "[9906,1917,0]")),
                         kLlama);
    }

    // The OpenAI Responses API, pretty-printed over many lines.
    void openaiResponses() {
        const auto r = pair(slurp(stack("openai_responses_logprobs.json")), "resp.json",
                            trainSide("resp_kcx0001", R"(["Hello"," world","!"])"));
        checkAgainstSpec(r, kVocabulary);
        QVERIFY(r.vocabularyIds);
    }

    // A vLLM chat stream: the four chunks' deltas become one record.
    void sseStream() {
        const ImportedSide side = readLogprobFile(stack("sse_vllm_chat_stream.txt"));
        QCOMPARE(side.records.size(), size_t(1));
        QCOMPARE(side.records[0].id, std::string("chatcmpl-kcx0005"));
        checkAgainstSpec(importPair(side, parseLogprobJsonl(trainSide("chatcmpl-kcx0005", R"(["Hello"," world","!"])"), "t")),
                         kVocabulary);
    }

    // n = 2: one record per choice, ID#INDEX, paired choice by choice.
    void everyChoice() {
        const std::string text = slurp(stack("vllm_chat_n2.jsonl"));
        const std::string first = text.substr(0, text.find('\n') + 1);
        const ImportedSide side = parseLogprobJsonl(first, "n2.jsonl");
        QCOMPARE(side.choicesSplit, size_t(1));
        QCOMPARE(side.records.size(), size_t(2));
        QCOMPARE(side.records[1].id, std::string("chatcmpl-kcx0002#1"));
        const auto r = importPair(side, parseLogprobJsonl(trainSide("chatcmpl-kcx0002#0", R"(["Hello"," world","!"])") +
                                                              R"({"id":"chatcmpl-kcx0002#1","tokens":["Hello"," there","!"],"logp_train":[-0.5,-0.75,-0.0625]})",
                                                          "t"));
        QVERIFY(r.ok());
        QCOMPARE(r.paired, size_t(2));
        QCOMPARE(r.choicesSplit, size_t(1));
        QCOMPARE(r.run.ids[1], std::string("chatcmpl-kcx0002#1"));
        QCOMPARE(r.run.lpInf[4], -0.5);    // " there" of choice 1
        QCOMPARE(r.run.lpTrain[4], -0.75);
        QCOMPARE(r.run.header["import"]["choices_split"].get<int>(), 1);
        // The second response asked for no log-probs: an error at its line.
        const std::string e = errorOf([&] { readLogprobFile(stack("vllm_chat_n2.jsonl")); });
        QVERIFY2(e.find("vllm_chat_n2.jsonl:2: choices[].logprobs is null") != std::string::npos, e.c_str());
        // The single-choice files keep their plain ids (above); a repeated index is an error.
        std::string twice = first;
        twice.replace(twice.find(R"("index":1)"), 9, R"("index":0)");
        const std::string r2 = errorOf([&] { parseLogprobJsonl(twice, "twice.jsonl"); });
        QVERIFY2(r2.find("twice.jsonl:1: choices[1].index 0 repeats choices[0]") == 0, r2.c_str());
    }

    // Failed requests of a batch are left out and named; the rest imports.
    void batchFailures() {
        const ImportedSide openai = readLogprobFile(stack("openai_batch_output_with_failure.jsonl"));
        QCOMPARE(openai.records.size(), size_t(1));
        QCOMPARE(openai.skipped.size(), size_t(2));
        QCOMPARE(openai.skipped[0].id, std::string("request-2"));
        QCOMPARE(openai.skipped[0].line, int64_t(2));
        QCOMPARE(openai.skipped[0].reason,
                 std::string("batch_expired: This request could not be executed before the completion window expired."));
        QCOMPARE(openai.skipped[1].reason, std::string("HTTP 400: integer_above_max_value: Invalid 'top_logprobs': "
                                                       "integer above maximum value."));
        const ImportedSide vllm = readLogprobFile(stack("vllm_run_batch_output_with_failure.jsonl"));
        QCOMPARE(vllm.records.size(), size_t(1));
        QCOMPARE(vllm.skipped.size(), size_t(2));
        QCOMPARE(vllm.skipped[0].reason,
                 std::string("400: Requested sample logprobs of 50, which is greater than max allowed: 20"));
        QCOMPARE(vllm.skipped[1].id, std::string("request-3"));
        QCOMPARE(vllm.skipped[1].reason, std::string("Request must not be sent in stream mode"));
        const auto r = importPair(vllm, parseLogprobJsonl(trainSide("request-1", R"(["Hello"," world","!"])"), "t"));
        QVERIFY(r.ok());
        QCOMPARE(r.skippedInf.size(), size_t(2));
        const auto& skipped = r.run.header["import"]["skipped"];
        QCOMPARE(skipped.size(), size_t(2));
        QCOMPARE(skipped[1]["id"].get<std::string>(), std::string("request-3"));
        QCOMPARE(skipped[1]["line"].get<int>(), 3);
        QCOMPARE(skipped[1]["side"].get<std::string>(), std::string("inf"));
        // vLLM's chat for request-1 is the sampled-first order; the figures are the same.
        checkAgainstSpec(r, kVocabulary);
    }

    // vLLM's floor in a top-k row: that entry is missing, the row keeps its k (2), and the
    // sampled -9999.0 is -inf: non-finite for the metrics, not missing.
    void floorKeepsK() {
        const std::string inf =
            R"({"id":"f","choices":[{"index":0,"logprobs":{"content":[)"
            R"({"token":"a","logprob":-0.5,"top_logprobs":[{"token":"a","logprob":-0.5},{"token":"z","logprob":-9999.0}]},)"
            R"({"token":"b","logprob":-9999.0,"top_logprobs":[{"token":"c","logprob":-0.25},{"token":"b","logprob":-9999.0}]},)"
            R"({"token":"c","logprob":-1.0,"top_logprobs":[{"token":"c","logprob":-1.0},{"token":"a","logprob":-2.0}]}]}}]})";
        const auto r = pair(inf, "f.json", R"({"id":"f","tokens":["a","b","c"],"logp_train":[-0.5,-2.0,-1.0]})");
        QVERIFY(r.ok());
        QCOMPARE(r.run.topkInf.k, 2);
        QCOMPARE(r.missingTop, size_t(2));
        QCOMPARE(r.flooredInf, size_t(1));
        QCOMPARE(r.missingInf, size_t(0));
        QCOMPARE(r.run.topkInf.logp[0], -0.5);
        QVERIFY(isMissing(r.run.topkInf.logp[1]));      // z at the floor
        QCOMPARE(r.run.topkInf.logp[2], -0.25);          // c, then b at the floor
        QVERIFY(isMissing(r.run.topkInf.logp[3]));
        QCOMPARE(r.run.topkInf.logp[5], -2.0);           // row 3 whole
        MetricEngine e(std::make_shared<Run>(r.run));
        const Summary s = summarize(*e.get("abs_log_ratio"));
        QCOMPARE(s.nonfinite, uint64_t(1));
        QCOMPARE(s.missing, uint64_t(0));
        QCOMPARE(*s.mean, 0.0);   // a and c agree; b is the non-finite one
    }

    // vLLM chat with prompt_logprobs: the prompt (BOS, "Hi") comes first; the train side's
    // tokens are found as the suffix, the two prompt positions left out and counted.
    void promptLogprobs() {
        const std::string text = slurp(stack("vllm_chat_prompt_logprobs.json"));
        const ImportedSide side = parseLogprobJsonl(text, "p.json");
        QCOMPARE(side.records[0].logp.size(), size_t(5));
        QCOMPARE(side.records[0].tokens[1].id, int64_t(13347));   // the first key, though rank 2
        QCOMPARE(side.records[0].logp[1], -3.5);
        const auto r = importPair(side, parseLogprobJsonl(trainSide("chatcmpl-kcx0001", R"(["Hello"," world","!"])"), "t"));
        QCOMPARE(r.promptInf, size_t(2));
        checkAgainstSpec(r, kVocabulary);
        QCOMPARE(r.run.header["import"]["prompt_left_out_inf"].get<int>(), 2);
        // Tokens that are not there: an error naming the record.
        const std::string e = errorOf([&] {
            importPair(side, parseLogprobJsonl(trainSide("chatcmpl-kcx0001", R"(["Hello","!","!"])"), "t"));
        });
        QVERIFY2(e.find("p.json:1: record 'chatcmpl-kcx0001' scores its prompt as well") == 0, e.c_str());
        // A train side without tokens cannot be matched; kcx_prompt_len says where the response starts.
        const std::string noTokens = R"({"id":"chatcmpl-kcx0001","logp_train":[-0.5,-1.25,-0.0625]})";
        QVERIFY(errorOf([&] { importPair(side, parseLogprobJsonl(noTokens, "t")); }).find("kcx_prompt_len") !=
                std::string::npos);
        const auto given = importPair(parseLogprobJsonl(withAfterBrace(text, R"("kcx_prompt_len":2,)"), "p.json"),
                                      parseLogprobJsonl(noTokens, "t"));
        QVERIFY(given.ok());
        QCOMPARE(given.promptInf, size_t(2));
        QCOMPARE(given.run.lpInf[0], -0.25);
        const std::string negative = errorOf([&] { parseLogprobJsonl(withAfterBrace(text, R"("kcx_prompt_len":-1,)"), "n.json"); });
        QVERIFY2(negative.find("n.json:1: kcx_prompt_len: expected a non-negative integer") == 0, negative.c_str());
    }

    // Completions with echo=true: prompt and output in one logprobs, the first one null.
    void completionsEcho() {
        const auto r = pair(slurp(stack("vllm_completions_echo.json")), "echo.json",
                            trainSide("cmpl-kcx0004", R"(["Hello"," world","!"])"));
        QCOMPARE(r.promptInf, size_t(1));   // <|begin_of_text|>
        QCOMPARE(r.missingInf, size_t(0));  // its null is the prompt's, left out
        checkAgainstSpec(r, kVocabulary);
    }

    // Files of other tools are named, with the way to convert them (docs/formats.md).
    void foreignFormatsAreNamed() {
        std::string torch = std::string("PK\3\4") + std::string(22, '\0') + std::string("\x10\0\0\0", 4) + "archive/data.pkl";
        torch += std::string(64, 'x');
        const struct {
            const char* name;
            std::string bytes;
            const char* says;
        } cases[] = {
            {"slime.pt", torch, "a PyTorch file (torch.save"},
            {"dataproto.pkl", std::string("\x80\x04\x95\x10\0\0\0\0\0\0\0}", 12), "a Python pickle"},
            {"trl.parquet", std::string("PAR1") + std::string(40, '\1') + "PAR1", "a Parquet file"},
            {"t.arrow", std::string("ARROW1\0\0", 8) + std::string(40, '\1'), "an Arrow IPC file"},
            {"t.feather", std::string("FEA1") + std::string(40, '\1'), "a Feather v1 file"},
        };
        for (const auto& c : cases) {
            const std::string path = files_.write(c.name, c.bytes);
            QCOMPARE(int(sniffRun(path).kind), int(RunKind::Foreign));
            for (const std::string& e : {errorOf([&] { loadRun(path); }), errorOf([&] { readLogprobFile(path); })}) {
                QVERIFY2(e.find(std::string(c.name) + ": is " + c.says) != std::string::npos, e.c_str());
                QVERIFY2(e.find("docs/formats.md") != std::string::npos, e.c_str());
            }
        }
        // A Parquet magic only at the start is not Parquet; another ZIP is still .npz.
        QVERIFY(sniffRun(files_.write("half.parquet", "PAR1" + std::string(40, '\1'))).kind != RunKind::Foreign);
        std::string zip = torch;
        zip.replace(30, 16, "offsets.npy.....");
        QCOMPARE(int(sniffRun(files_.write("z.npz", zip)).kind), int(RunKind::Npz));
    }

    // Every file cut at every byte is read or refused with an InputError (a file being
    // written, a download cut short): never another exception, a crash or a hang.
    void everyPrefixIsReadOrRefused() {
        for (const char* name : {"sse_vllm_chat_stream.txt", "sglang_batch_generate.json", "tgi_generate_details.json",
                                 "openai_responses_logprobs.json", "vllm_chat_prompt_logprobs.json",
                                 "vllm_completions_echo.json", "vllm_chat_n2.jsonl", "openai_batch_output_with_failure.jsonl",
                                 "vllm_run_batch_output_with_failure.jsonl", "sglang_chat_meta_info.json"}) {
            const std::string text = slurp(stack(name));
            for (size_t n = 0; n <= text.size(); ++n) {
                const std::string e = errorOf([&] {
                    const ImportedSide side = parseLogprobJsonl(std::string_view(text).substr(0, n), "cut");
                    ImportOptions allow;
                    allow.allowMismatch = true;
                    importPair(side, side, allow);
                });
                QVERIFY2(e.rfind("NOT AN InputError", 0) != 0, (std::string(name) + " cut at " + std::to_string(n) + ": " + e).c_str());
            }
        }
    }

    // Opened as a run, each stack's file says it is one side and how to pair it.
    void oneSideFilesSayWhatTheyAre() {
        for (const char* name : {"sse_vllm_chat_stream.txt", "sglang_batch_generate.json", "tgi_generate_details.json",
                                 "openai_responses_logprobs.json", "vllm_chat_prompt_logprobs.json"}) {
            QCOMPARE(int(sniffRun(stack(name)).kind), int(RunKind::OneSide));
            const std::string e = errorOf([&] { loadRun(stack(name)); });
            QVERIFY2(e.find("holds one kernel's log-probs only") != std::string::npos &&
                         e.find("kcx import --inf") != std::string::npos,
                     e.c_str());
        }
    }

    // Bad input is an error at its place: file, line and (where the parser gives it) column.
    void badInputAtItsPlace() {
        const std::string responses = slurp(stack("openai_responses_logprobs.json"));
        // Truncated in the middle of the document (line 30 of the pretty-printed file).
        size_t cut = 0;
        for (int i = 0; i < 29; ++i)
            cut = responses.find('\n', cut) + 1;
        const std::string e1 = errorOf([&] { parseLogprobJsonl(responses.substr(0, cut + 6), "cut.json"); });
        QVERIFY2(e1.find("cut.json:30:") == 0 && e1.find("broken JSON") != std::string::npos, e1.c_str());

        const std::string sse = slurp(stack("sse_vllm_chat_stream.txt"));
        const size_t third = sse.find("data:", sse.find("data:", sse.find("data:") + 1) + 1);   // line 5
        const std::string e2 = errorOf([&] { parseLogprobJsonl(sse.substr(0, third + 80), "mid.sse"); });
        QVERIFY2(e2.find("mid.sse:5:") == 0 && e2.find("broken JSON") != std::string::npos, e2.c_str());
        const std::string e3 = errorOf([&] { parseLogprobJsonl(sse.substr(0, sse.find("data: [DONE]")), "nodone.sse"); });
        QVERIFY2(e3.find("nodone.sse:7: stream 'chatcmpl-kcx0005' ends without \"data: [DONE]\"") == 0, e3.c_str());
        const std::string e4 = errorOf([&] { parseLogprobJsonl(sse + "data: " + sse.substr(6, sse.find('\n') - 6), "after.sse"); });
        QVERIFY2(e4.find("after.sse:11:") == 0 && e4.find("after its \"data: [DONE]\"") != std::string::npos, e4.c_str());
        const std::string e5 = errorOf([&] { parseLogprobJsonl("data: [DONE]\nhello\n", "junk.sse"); });
        QVERIFY2(e5.find("junk.sse:2: not a server-sent event line") == 0, e5.c_str());
        // An error event mid-stream: that stream is skipped and named.
        const std::string failed = sse.substr(0, sse.find("data: [DONE]")) +
                                   R"(data: {"error":{"message":"engine died","code":500}})" "\n\ndata: [DONE]\n";
        const ImportedSide f = parseLogprobJsonl(failed, "err.sse");
        QCOMPARE(f.records.size(), size_t(0));
        QCOMPARE(f.skipped.size(), size_t(1));
        QCOMPARE(f.skipped[0].id, std::string("chatcmpl-kcx0005"));
        QCOMPARE(f.skipped[0].reason, std::string("500: engine died"));

        // Wrong types and unequal lengths, in the shapes above.
        const std::string tgi = withAfterBrace(slurp(stack("tgi_generate_details.json")), R"("kcx_id":"t",)");
        std::string badLp = tgi;
        badLp.replace(badLp.find(R"("logprob":-1.5)"), 14, R"("logprob":"x")");
        const std::string e6 = errorOf([&] { parseLogprobJsonl(badLp, "tgi.json"); });
        QVERIFY2(e6.find("tgi.json:1: logprob: expected a number or null, got \"x\"") == 0, e6.c_str());
        std::string shortTop = tgi;
        shortTop.replace(shortTop.find(",[{\"id\":0,"), 1, "]}}");
        shortTop.resize(shortTop.find("]}}") + 3);
        const std::string e7 = errorOf([&] { parseLogprobJsonl(shortTop, "tgi2.json"); });
        QVERIFY2(e7.find("tgi2.json:1: details.top_tokens has 2 rows for 3 tokens") == 0, e7.c_str());
        const std::string e8 = errorOf([&] { parseLogprobJsonl("[\n  {\"meta_info\": {}},\n  3\n]\n", "arr.json"); });
        QVERIFY2(e8.find("arr.json:2: meta_info: no \"output_token_logprobs\"") == 0, e8.c_str());
        const std::string e9 = errorOf([&] { parseLogprobJsonl("[{\"id\":\"a\",\"logp\":[1]},\n 3]\n", "arr2.json"); });
        QVERIFY2(e9.find("arr2.json:2: expected a JSON object") == 0, e9.c_str());
        const std::string e10 = errorOf([&] {
            parseLogprobJsonl(R"({"id":"r","output":[{"type":"message","content":[{"type":"refusal"}]}]})", "r.json");
        });
        QVERIFY2(e10.find("r.json:1: output[]: no message with output_text log-probs") == 0, e10.c_str());
        std::string badKey = slurp(stack("vllm_chat_prompt_logprobs.json"));
        badKey.replace(badKey.find(R"("13347")"), 7, R"("Hi")");
        const std::string e11 = errorOf([&] { parseLogprobJsonl(badKey, "pk.json"); });
        QVERIFY2(e11.find("pk.json:1: prompt_logprobs[]: key \"Hi\" is not a token id") == 0, e11.c_str());
    }
};

QTEST_GUILESS_MAIN(TestImportersStacks)
#include "test_importers_stacks.moc"
