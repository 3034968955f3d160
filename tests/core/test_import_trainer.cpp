// Trainer token exports (core/formats/import_trainer.h): JSON Lines records with token_ids,
// loss_mask and both kernels' log-probs, one file per step and rank, written here the way an
// RL trainer writes them; content sniffing of every JSON Lines shape (core/formats/sniff.h).
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/base/errors.h"
#include "core/formats/import_trainer.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"
#include "core/formats/sniff.h"
#include "core/metrics/metrics.h"
#include "tests/support/same_figures.h"
#include "tests/support/test_files.h"

using namespace kcx;
using test::compareFigures;
using test::le;
using test::errorOf;

namespace {

// Prompt positions carry whatever the trainer had there (null, vLLM's -9999.0, numbers);
// loss_mask 0 leaves them out. The second record takes step and rank from its file name.
const char* kStep2Rank0 =
    R"({"token_ids":[100,101,5,7,9],"loss_mask":[0,0,1,1,1],"inference_logprobs":[null,-9999.0,-0.25,-1.5,-2.0],)"
    R"("trainer_logprobs":[null,-0.1,-0.5,-1.25,-2.0],"entropy":[0,0,0.5,0.25,0.125],"advantages":[0,0,1,1,1],)"
    R"("step":2,"rank":0,"env_name":"math"})"
    "\n"
    R"({"token_ids":[100,3,4],"loss_mask":[0,1,1],"inference_logprobs":[-1.0,-0.375,null],)"
    R"("trainer_logprobs":[-1.0,-0.125,-3.0],"env_name":"code","advantages":0.5})"
    "\n";
const char* kStep2Rank1 =   // written gzip-compressed; the second record has no response token
    R"({"token_ids":[1,11],"loss_mask":[false,true],"inference_logprobs":[-9999.0,-0.75],"trainer_logprobs":[null,-1.0],)"
    R"("env_name":"math","step":2,"rank":1})"
    "\n\n"
    R"({"token_ids":[1,2],"loss_mask":[0,0],"inference_logprobs":[-1,-1],"trainer_logprobs":[-1,-1],"step":2,"rank":1})"
    "\n";
const char* kStep10Rank0 =   // Python's json.dumps writes bare NaN when the trainer did not map it to null
    R"({"id":"custom-1","token_ids":[8,9],"loss_mask":[1,1],"inference_logprobs":["NaN",-0.5],"trainer_logprobs":[-0.5,NaN]})"
    "\n";

// The same sequences as SPEC 1.1 JSON Lines.
const char* kJsonl =
    R"({"kcx_header":{"source":"hand-written"}})"
    "\n"
    R"({"id":"step_2_rank_0.jsonl:1","slices":{"env_name":"math","step":"2","rank":"0"},"tokens":[5,7,9],)"
    R"("logp_train":[-0.5,-1.25,-2.0],"logp_inf":[-0.25,-1.5,-2.0]})"
    "\n"
    R"({"id":"step_2_rank_0.jsonl:2","slices":{"env_name":"code","step":"2","rank":"0"},"tokens":[3,4],)"
    R"("logp_train":[-0.125,-3.0],"logp_inf":[-0.375,null]})"
    "\n"
    R"({"id":"step_2_rank_1.jsonl.gz:1","slices":{"env_name":"math","step":"2","rank":"1"},"tokens":[11],)"
    R"("logp_train":[-1.0],"logp_inf":[-0.75]})"
    "\n"
    R"({"id":"custom-1","slices":{"step":"10","rank":"0"},"tokens":[8,9],"logp_train":[-0.5,"NaN"],"logp_inf":["NaN",-0.5]})"
    "\n";

// Slice labels of every sequence as "key=value" strings, for comparing two runs.
std::vector<std::string> labels(const Run& r) {
    std::vector<std::string> out;
    for (size_t s = 0; s < r.sequenceCount(); ++s) {
        std::string l;
        for (const char* k : {"env_name", "step", "rank"}) {
            const int ki = r.slices.keyIndex(k);
            const std::string* v = ki < 0 ? nullptr : r.slices.label(s, size_t(ki));
            l += std::string(k) + "=" + (v ? *v : "-") + " ";
        }
        out.push_back(l);
    }
    return out;
}


}  // namespace

class TestImportTrainer : public QObject, private test::TempFiles {
    Q_OBJECT
    std::string exportDir() {
        write("export/step_2_rank_0.jsonl", kStep2Rank0);
        writeGz("export/step_2_rank_1.jsonl.gz", kStep2Rank1);
        write("export/step_10_rank_0.jsonl", kStep10Rank0);
        write("export/.hidden.jsonl", "not read");
        write("export/README.txt", "not read");
        return path("export");
    }

private slots:
    void directoryIsOneRun() {
        const std::string d = exportDir();
        const auto files = findTrainerExports(d).files;
        QCOMPARE(files.size(), size_t(3));
        QCOMPARE(std::filesystem::path(files[1]).filename().string(), std::string("step_2_rank_1.jsonl.gz"));
        QCOMPARE(std::filesystem::path(files[2]).filename().string(), std::string("step_10_rank_0.jsonl"));

        const Run r = loadRun(d);   // by content: a directory of export files
        QCOMPARE(r.ids, (std::vector<std::string>{"step_2_rank_0.jsonl:1", "step_2_rank_0.jsonl:2",
                                                  "step_2_rank_1.jsonl.gz:1", "custom-1"}));
        QCOMPARE(r.tokenCount(), size_t(8));
        QCOMPARE(r.tokens[0], 5);   // prompt tokens 100, 101 left out
        QCOMPARE(r.tokens[3], 3);
        QCOMPARE(r.lpInf[0], -0.25);
        QCOMPARE(r.lpTrain[2], -2.0);
        QVERIFY(isMissing(r.lpInf[4]));                         // null
        QCOMPARE(r.lpTrain[4], -3.0);
        QVERIFY(std::isnan(r.lpInf[6]) && !isMissing(r.lpInf[6]));   // "NaN": non-finite, not missing
        QVERIFY(std::isnan(r.lpTrain[7]) && !isMissing(r.lpTrain[7]));
        QCOMPARE(labels(r)[0], std::string("env_name=math step=2 rank=0 "));
        QCOMPARE(labels(r)[1], std::string("env_name=code step=2 rank=0 "));   // step, rank from the file name
        QCOMPARE(labels(r)[2], std::string("env_name=math step=2 rank=1 "));
        QCOMPARE(labels(r)[3], std::string("env_name=- step=10 rank=0 "));
        const auto& imp = r.header["import"];
        QCOMPARE(imp["records"].get<int>(), 5);
        QCOMPARE(imp["records_without_response"].get<int>(), 1);
        QCOMPARE(imp["prompt_tokens_left_out"].get<int>(), 6);
        QCOMPARE(imp["missing_inf"].get<int>(), 1);   // prompt positions do not count
        QCOMPARE(imp["missing_train"].get<int>(), 0);

        // The same data as SPEC 1.1 JSON Lines gives the same figures, metric by metric.
        const Run jsonl = loadRun(write("same.jsonl", kJsonl));
        QVERIFY(compareFigures(r, jsonl) > 0);
        QCOMPARE(labels(r), labels(jsonl));
        QCOMPARE(r.ids, jsonl.ids);
        // By hand: r = train - inf = -0.25, 0.25, 0 | 0.25, (missing) | -0.25 | (NaN), (NaN).
        MetricEngine e(std::make_shared<Run>(r));
        const Summary s = summarize(*e.get("abs_log_ratio"));
        QCOMPARE(s.count, uint64_t(5));
        QCOMPARE(s.missing, uint64_t(1));
        QCOMPARE(s.nonfinite, uint64_t(2));
        QCOMPARE(*s.mean, 0.2);
        QCOMPARE(*summarize(*e.get("log_ratio")).mean, 0.0);

        // kcx convert: native safetensors reopens with the same figures and slices.
        writeSafetensors(r, path("converted.safetensors"));
        const Run back = loadRun(path("converted.safetensors"));
        QVERIFY(compareFigures(r, back) > 0);
        QCOMPARE(labels(back), labels(r));

        // Files given one by one, in a chosen order, are one run too.
        const Run two = loadTrainerExports({{files[2], files[0]}, {"", ""}, {}}, files[2]);
        QCOMPARE(two.ids.front(), std::string("custom-1"));
        QCOMPARE(two.sequenceCount(), size_t(3));
    }

    // prime-rl's tree, verbatim from its writer (tests/data/stacks, src/prime_rl/trainer/rl/
    // token_export.py): token_exports/step_N/rank_R.jsonl, STABLE once a step is complete.
    // step_2 has no STABLE yet: left out and named. Ids come from step, rank and
    // export_sequence_idx, so two steps' "rank_0.jsonl:1" no longer collide.
    void primeRlTree() {
        namespace fs = std::filesystem;
        const fs::path src = fs::path(KCX_STACKS_DIR) / "primerl_token_exports";
        const fs::path root = fs::path(path("prime")) / "token_exports";
        fs::create_directories(root);
        fs::copy(src, root, fs::copy_options::recursive);
        // Rank 1 of step 1, and a third, finished step: step_1's records with another rank or step.
        auto copyAs = [&](const std::string& key, const std::string& value, const fs::path& to) {
            std::ifstream in(src / "step_1" / "rank_0.jsonl");
            std::string text((std::istreambuf_iterator<char>(in)), {});
            for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
                text.replace(at, key.size(), value);
            fs::create_directories(to.parent_path());
            std::ofstream(to) << text;
        };
        copyAs("\"rank\":0,", "\"rank\":1,", root / "step_1" / "rank_1.jsonl");
        copyAs("\"step\":1,", "\"step\":3,", root / "step_3" / "rank_0.jsonl");
        std::ofstream(root / "step_3" / "STABLE");
        const std::string tree = fs::path(path("prime")).string();   // the tree from above token_exports/
        QCOMPARE(int(sniffRun(tree).kind), int(RunKind::TrainerDirectory));
        const TrainerExports found = findTrainerExports(tree);
        QCOMPARE(found.files.size(), size_t(3));
        QCOMPARE(found.skipped.size(), size_t(1));
        QVERIFY(found.skipped[0].ends_with("token_exports/step_2"));

        const Run r = loadRun(tree);
        QCOMPARE(r.ids, (std::vector<std::string>{"step_1/rank_0/0", "step_1/rank_0/1", "step_1/rank_1/0",
                                                  "step_1/rank_1/1", "step_3/rank_0/0", "step_3/rank_0/1"}));
        // loss_mask [false,false,true,true,true]: the three response tokens, both kernels'
        // numbers as the fixture's README gives them.
        QCOMPARE(r.tokenCount(), size_t(18));
        QCOMPARE(r.tokens[0], 9906);
        QCOMPARE(r.tokens[2], 0);
        QCOMPARE(r.lpInf[0], -0.25);
        QCOMPARE(r.lpInf[1], -1.5);
        QCOMPARE(r.lpTrain[1], -1.25);
        QCOMPARE(r.lpTrain[2], -0.0625);
        QCOMPARE(r.steps(), (std::vector<int64_t>{1, 1, 1, 1, 3, 3}));
        QCOMPARE(labels(r)[2], std::string("env_name=hello-env step=1 rank=1 "));
        QCOMPARE(labels(r)[4], std::string("env_name=hello-env step=3 rank=0 "));
        QCOMPARE(r.header["import"]["steps_skipped"].size(), size_t(1));
        // |lp_train - lp_inf| by hand: 0.25, 0.25, 0.0625 per sequence.
        MetricEngine e(std::make_shared<Run>(r));
        QCOMPARE(*summarize(*e.get("abs_log_ratio")).mean, (0.25 + 0.25 + 0.0625) / 3);

        // Finished everywhere but nothing read: a clear error, not an empty run.
        // Converted, the steps and ranks stay (the step tensor, the rank slice).
        writeSafetensors(r, path("prime.safetensors"));
        const Run back = loadRun(path("prime.safetensors"));
        QCOMPARE(back.steps(), r.steps());
        QCOMPARE(labels(back), labels(r));

        fs::remove(root / "step_1" / "STABLE");
        fs::remove(root / "step_3" / "STABLE");
        fs::create_directories(root / "step_9");
        std::ofstream(root / "step_9" / "STABLE");
        QVERIFY(errorOf([&] { loadRun(tree); }).find("lacks the STABLE marker") != std::string::npos);
    }

    // NeMo-RL's train_data_step{N}.jsonl, verbatim (nemo_rl/algorithms/grpo.py): every value a
    // batch of one ([[...]]), generation_logprobs = inf, prev_logprobs = train, response where
    // token_loss_mask is 1; the step from the file name, ids step_N/idx.
    void nemoRlTrainData() {
        const std::string p = (std::filesystem::path(KCX_STACKS_DIR) / "nemorl_train_data_step3.jsonl").string();
        QCOMPARE(int(sniffRun(p).kind), int(RunKind::TrainerExport));
        const Run r = loadRun(p);
        QCOMPARE(r.ids, (std::vector<std::string>{"step_3/0", "step_3/1"}));
        QCOMPARE(r.tokenCount(), size_t(5));   // 3 + 2 response tokens (the pad token's mask is 0)
        QCOMPARE(r.tokens[3], 9906);
        QCOMPARE(r.lpInf[1], -1.5);
        QCOMPARE(r.lpTrain[1], -1.25);
        QCOMPARE(r.lpInf[4], -2.5);
        QCOMPARE(r.lpTrain[4], -2.0);
        QCOMPARE(r.steps(), (std::vector<int64_t>{3, 3}));

        // sample_loss_mask 0 leaves the sequence out, counted; two rows in a batch of one is an error.
        const Run masked = loadRun(write("train_data_step4.jsonl",
            R"({"token_ids":[[1,2]],"token_loss_mask":[[0,1]],"sample_loss_mask":[0.0],"generation_logprobs":[[0,-1]],"prev_logprobs":[[0,-1]],"idx":0})"
            "\n"
            R"({"token_ids":[[1,2]],"token_loss_mask":[[0,1]],"sample_loss_mask":[1.0],"generation_logprobs":[[0,-1]],"prev_logprobs":[[0,-2]],"idx":1})"
            "\n"));
        QCOMPARE(masked.ids, (std::vector<std::string>{"step_4/1"}));
        QCOMPARE(masked.header["import"]["records_sample_masked"].get<int>(), 1);
        const std::string two = errorOf([&] {
            loadRun(write("train_data_step5.jsonl",
                R"({"token_ids":[[1,2],[3,4]],"token_loss_mask":[[0,1]],"generation_logprobs":[[0,-1]],"prev_logprobs":[[0,-1]]})"
                "\n"));
        });
        QVERIFY2(two.find("train_data_step5.jsonl:1:") != std::string::npos && two.find("more than one row") != std::string::npos,
                 two.c_str());
    }

    // vLLM's -9999.0 is max(lp, -9999.0): a log-prob at or below the floor. It reads as -inf,
    // non-finite, counted as floored, never as missing (issue 18).
    void flooredIsNonFiniteNotMissing() {
        const Run r = loadRun(write("floor.jsonl",
            R"({"token_ids":[1,2,3],"loss_mask":[0,1,1],"inference_logprobs":[-9999.0,-9999.0,-0.5],"trainer_logprobs":[null,-0.25,-9999.0]})"
            "\n"));
        QCOMPARE(r.lpInf[0], -std::numeric_limits<double>::infinity());
        QCOMPARE(r.lpTrain[1], -std::numeric_limits<double>::infinity());
        QCOMPARE(r.header["import"]["floored_inf"].get<int>(), 1);   // the prompt's is not counted
        QCOMPARE(r.header["import"]["floored_train"].get<int>(), 1);
        QCOMPARE(r.header["import"]["missing_inf"].get<int>(), 0);
        MetricEngine e(std::make_shared<Run>(r));
        const Summary s = summarize(*e.get("abs_log_ratio"));
        QCOMPARE(s.nonfinite, uint64_t(2));
        QCOMPARE(s.missing, uint64_t(0));
    }

    void singleFileByContent() {
        // Any name; a kcx_header line first is skipped when sniffing.
        const std::string p = write("export.txt", std::string(R"({"kcx_header":{}})") + "\n" + kStep2Rank0);
        QCOMPARE(int(sniffRun(p).kind), int(RunKind::TrainerExport));
        const Run r = loadRun(p);
        QCOMPARE(r.sequenceCount(), size_t(2));
        QCOMPARE(r.ids[1], std::string("export.txt:3"));
        QVERIFY(r.slices.keyIndex("step") >= 0);
        QVERIFY(r.slices.label(1, size_t(r.slices.keyIndex("step"))) == nullptr);   // no step in the name
        const Run gz = loadRun(writeGz("export.gz", kStep2Rank0));
        QCOMPARE(gz.tokenCount(), size_t(5));
        // A long first record: token_ids fills many read chunks before loss_mask appears.
        std::string ids, mask, lps;
        for (int i = 0; i < 40000; ++i) {
            ids += (i ? "," : "") + std::to_string(100000 + i);
            mask += i ? ",1" : "1";
            lps += i ? ",-0.5" : "-0.5";
        }
        const std::string longRecord = "{\"token_ids\":[" + ids + "],\"loss_mask\":[" + mask +
                                       "],\"inference_logprobs\":[" + lps + "],\"trainer_logprobs\":[" + lps + "]}\n";
        QCOMPARE(int(sniffRun(write("long.jsonl", longRecord)).kind), int(RunKind::TrainerExport));
        QCOMPARE(loadRun(path("long.jsonl")).tokenCount(), size_t(40000));
    }

    void badRecordsNameFileLineAndField() {
        const std::string ok = R"({"token_ids":[1,2],"loss_mask":[0,1],"inference_logprobs":[-1,-1],"trainer_logprobs":[-1,-1]})";
        struct Case {
            std::string line, phrase, key;   // key: the column is that of this key
        };
        const std::vector<Case> cases = {
            {R"({"token_ids":[1,2,3],"loss_mask":[1,1,1],"inference_logprobs":[-1,-1,-1],"trainer_logprobs":[-1,-1]})",
             "\"trainer_logprobs\" has 2 entries but \"token_ids\" has 3", "\"trainer_logprobs\""},
            {R"({"token_ids":[1,2,3],"loss_mask":[1,1],"inference_logprobs":[-1,-1,-1],"trainer_logprobs":[-1,-1,-1]})",
             "\"loss_mask\" has 2 entries but \"token_ids\" has 3", "\"loss_mask\""},
            {R"({"token_ids":[1,2],"loss_mask":[1,1],"inference_logprobs":[-1,-1,-1],"trainer_logprobs":[-1,-1]})",
             "\"inference_logprobs\" has 3 entries", "\"inference_logprobs\""},
            {R"({"token_ids":[1,2],"loss_mask":[1,1],"inference_logprobs":[-1,-1],"trainer_logprobs":[-1,-1],"entropy":[1]})",
             "\"entropy\" has 1 entries", "\"entropy\""},
            {R"({"token_ids":[1,2],"inference_logprobs":[-1,-1],"trainer_logprobs":[-1,-1]})",
             "record has no \"loss_mask\"", ""},
            {R"({"token_ids":[1,2],"loss_mask":[1,1],"inference_logprobs":[-1,"x"],"trainer_logprobs":[-1,-1]})",
             "inference_logprobs: expected a number", "\"x\""},
            {R"({"token_ids":[1,2.5],"loss_mask":[1,1],"inference_logprobs":[-1,-1],"trainer_logprobs":[-1,-1]})",
             "token_ids: expected an integer", "2.5"},
            {R"({"token_ids":[1,3000000000],"loss_mask":[1,1],"inference_logprobs":[-1,-1],"trainer_logprobs":[-1,-1]})",
             "token id 3000000000 at position 1 does not fit in 32 bits", "\"token_ids\""},
            {R"({"token_ids":[1,2],"loss_mask":[1,1],"inference_logprobs":[-1,-1],"trainer_logprobs":[-1,-1],})",
             "expected a quoted key", "}"},
        };
        for (const Case& c : cases) {
            const std::string p = write("bad.jsonl", ok + "\n" + c.line + "\n");
            const std::string err = errorOf([&] { loadTrainerExport(p); });
            std::string where = p + ":2:";
            if (!c.key.empty())
                where += std::to_string(c.line.rfind(c.key) + 1) + ":";
            QVERIFY2(err.find(where) == 0, (err + "  [expected at " + where + "]").c_str());
            QVERIFY2(err.find(c.phrase) != std::string::npos, (err + "  [expected: " + c.phrase + "]").c_str());
        }
        // Duplicate ids across files name both places.
        write("dup/a.jsonl", R"({"id":"x","token_ids":[1],"loss_mask":[1],"inference_logprobs":[-1],"trainer_logprobs":[-1]})");
        write("dup/b.jsonl", "\n" + std::string(R"({"id":"x","token_ids":[1],"loss_mask":[1],"inference_logprobs":[-1],"trainer_logprobs":[-1]})"));
        std::string err = errorOf([&] { loadRun(path("dup")); });
        QVERIFY2(err.find(path("dup/b.jsonl") + ":2: duplicate id 'x' (first at " + path("dup/a.jsonl") + ":1)") == 0,
                 err.c_str());
        // Nothing but prompts.
        err = errorOf([&] {
            loadTrainerExport(write("prompts.jsonl", R"({"token_ids":[1],"loss_mask":[0],"inference_logprobs":[-1],"trainer_logprobs":[-1]})"));
        });
        QVERIFY2(err.find("none with a response token") != std::string::npos, err.c_str());
        // A directory without export files.
        std::filesystem::create_directories(path("nothing"));
        write("nothing/x.txt", "");
        err = errorOf([&] { loadTrainerExport(path("nothing")); });
        QVERIFY2(err.find("no .jsonl or .jsonl.gz files") != std::string::npos, err.c_str());
        // A truncated gzip export.
        const std::string gz = writeGz("cut.jsonl.gz", std::string(kStep2Rank0) + kStep2Rank0 + kStep2Rank0);
        std::string bytes;
        {
            std::ifstream f(gz, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(f), {});
        }
        err = errorOf([&] { loadRun(write("cut.jsonl.gz", bytes.substr(0, bytes.size() / 2))); });
        QVERIFY2(err.find(path("cut.jsonl.gz")) == 0, err.c_str());
    }

    void oneSidedDumpsPointToImport() {
        const std::string chat =
            R"({"id":"chatcmpl-1","kcx_id":"a","choices":[{"index":0,"logprobs":{"content":[{"token":"x","logprob":-0.5,"top_logprobs":[]}]}}]})";
        std::string err = errorOf([&] { loadRun(write("chat.jsonl", chat + "\n")); });
        QVERIFY2(err.find("OpenAI chat or completions") != std::string::npos && err.find("kcx import --inf") != std::string::npos,
                 err.c_str());
        const std::string sglang = R"({"text":"x","meta_info":{"id":"r","output_token_logprobs":[[-0.5,11,"x"]]},"kcx_id":"q"})";
        err = errorOf([&] { loadRun(writeGz("sglang.jsonl.gz", sglang + "\n")); });
        QVERIFY2(err.find("SGLang") != std::string::npos && err.find("kcx import") != std::string::npos, err.c_str());
        // Plain one-sided arrays: the SPEC 1.1 loader's error (with its place) and the hint.
        err = errorOf([&] { loadRun(write("train.jsonl", R"({"id":"a","tokens":[1,2],"logp_train":[-1,-2]})" "\n")); });
        QVERIFY2(err.find(path("train.jsonl") + ":1:1:") == 0 && err.find("\"logp_inf\"") != std::string::npos &&
                     err.find("kcx import") != std::string::npos,
                 err.c_str());
        // SPEC 1.1 stays SPEC 1.1, plain or gzip; a header line is not a record.
        const std::string spec = R"({"id":"a","tokens":[1],"logp_train":[-1],"logp_inf":[-1.5]})";
        QCOMPARE(int(sniffRun(writeGz("spec.jsonl.gz", std::string(R"({"kcx_header":{"source":"x"}})") + "\n" + spec)).kind),
                 int(RunKind::SpecJsonl));
        QCOMPARE(loadRun(path("spec.jsonl.gz")).lpInf[0], -1.5);
        QCOMPARE(classifyRecordKeys({"id", "tokens", "logp_train"}, false).kind, RunKind::SpecJsonl);   // cut short: no guess
        QCOMPARE(classifyRecordKeys({"token_ids", "loss_mask"}, false).kind, RunKind::TrainerExport);
        QVERIFY(naturalLess("step_2_rank_1.jsonl", "step_10_rank_0.jsonl"));
        QVERIFY(!naturalLess("step_10", "step_9"));
        QVERIFY(naturalLess("rank_01", "rank_1") != naturalLess("rank_1", "rank_01"));   // a total order
    }
};

QTEST_GUILESS_MAIN(TestImportTrainer)
#include "test_import_trainer.moc"
