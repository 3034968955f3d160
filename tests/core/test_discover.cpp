// Derived slice keys (core/metrics/derived_slices.h) in the contract language and the evaluator,
// and slice discovery (core/discover/discover.h) on runs built here with a planted divergent slice
// that no label names, and on runs without one (false discovery control over many seeds).
#include <QtTest/QTest>

#include <cmath>
#include <random>

#include "core/base/errors.h"
#include "core/contract/contract.h"
#include "core/discover/discover.h"
#include "core/evaluate/evaluator.h"
#include "core/metrics/derived_slices.h"
#include "tests/support/test_runs.h"

using namespace kcx;

namespace {

const std::vector<std::string> kTasks = {"math", "code", "chat", "prose"};
const std::vector<std::string> kLangs = {"en", "de", "fr"};

// A run of `n` sequences with lengths uniform in [lenLo, lenHi]. log ratio r ~ N(0, sigma)
// with sigma = 0.01 * exp(u_s), u_s ~ N(0, 0.2) a per-sequence effect; lp_inf independent
// of r. With `plant`, sigma is multiplied by `factor` for task=math at positions
// [1024, 4096) — a slice that no label names.
std::shared_ptr<Run> makeRun(uint64_t seed, size_t n, size_t lenLo, size_t lenHi, bool plant, double factor = 2.5) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> len(lenLo, lenHi);
    std::uniform_int_distribution<int> task(0, 3), lang(0, 2), batch(0, 3);
    std::normal_distribution<double> seqEffect(0, 0.2), noise(0, 1);
    std::exponential_distribution<double> surprisal(0.5);
    SliceTable slices;
    std::vector<nlohmann::json> runtime;
    std::vector<int64_t> off{0};
    std::vector<double> lpt, lpi;
    slices.keys = {"task", "lang"};
    slices.values = {kTasks, kLangs};
    for (size_t s = 0; s < n; ++s) {
        const int t = task(rng), l = lang(rng);
        slices.codes.push_back(t);
        slices.codes.push_back(l);
        runtime.push_back({{"batch_size", 8 << batch(rng)}});
        const size_t T = len(rng);
        const double sigma = 0.01 * std::exp(seqEffect(rng));
        for (size_t p = 0; p < T; ++p) {
            const bool in = plant && t == 0 && p >= 1024 && p < 4096;
            const double r = sigma * (in ? factor : 1.0) * noise(rng);
            const double li = -surprisal(rng);
            lpi.push_back(li);
            lpt.push_back(li + r);
        }
        off.push_back(int64_t(lpi.size()));
    }
    auto run = test::runFromFlat(std::move(off), std::move(lpt), std::move(lpi));
    run->slices = std::move(slices);
    run->runtime = std::move(runtime);
    run->checkInvariants();
    return run;
}

Discovery runDiscover(std::shared_ptr<const Run> run, int depth = 2, bool ranges = true) {
    MetricEngine engine(run);
    DiscoverOptions o;
    o.maxDepth = depth;
    o.positionRanges = o.stepRanges = ranges;
    o.maxFindings = 200;
    return discover(engine, o);
}

Contract parse(const std::string& text) { return parseContract(text, "c.yaml"); }

std::string parseError(const std::string& text) {
    try {
        parse(text);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

const std::string kHead = "kcx_contract: 1\nname: t\n";

}  // namespace

class TestDiscover : public QObject {
    Q_OBJECT
private slots:
    void bucketEdges() {
        QCOMPARE(positionBucket(0), 0);
        QCOMPARE(positionBucket(63), 0);
        QCOMPARE(positionBucket(64), 1);
        QCOMPARE(positionBucket(1023), 2);
        QCOMPARE(positionBucket(1024), 3);
        QCOMPARE(positionBucket(4095), 3);
        QCOMPARE(positionBucket(4096), 4);
        QCOMPARE(lengthBucket(64), 1);
        QCOMPARE(pInfBucket(std::log(0.5e-3)), 0);
        QCOMPARE(pInfBucket(std::log(1e-3) + 1e-12), 1);
        QCOMPARE(pInfBucket(std::log(0.05)), 2);
        QCOMPARE(pInfBucket(std::log(0.1)), 3);
        QCOMPARE(pInfBucket(0.0), 3);
        QCOMPARE(pInfBucket(NAN), -1);
        QCOMPARE(entropyBucket(0.05), 0);
        QCOMPARE(entropyBucket(1.0), 2);
        QCOMPARE(entropyBucket(3.0), 3);
        QCOMPARE(runtimeValueText(nlohmann::json(64)), std::string("64"));
        QCOMPARE(runtimeValueText(nlohmann::json(64.0)), std::string("64"));
        QCOMPARE(runtimeValueText(nlohmann::json(100.5)), std::string("r_64_128"));
        QCOMPARE(runtimeValueText(nlohmann::json("vllm")), std::string("vllm"));
    }

    void derivedCodesOfARun() {
        auto run = makeRun(1, 30, 50, 300, false);
        MetricEngine engine(run);
        DerivedSlices d(engine);
        const auto keys = d.available();
        QVERIFY(std::count(keys.begin(), keys.end(), "derived.pos_bucket"));
        QVERIFY(std::count(keys.begin(), keys.end(), "derived.runtime.batch_size"));
        QVERIFY(!std::count(keys.begin(), keys.end(), "derived.top1_agree"));   // no top-k, no logits
        const auto pos = d.get("derived.pos_bucket");
        const auto len = d.get("derived.len_bucket");
        const auto bs = d.get("derived.runtime.batch_size");
        QCOMPARE(bs->values, (std::vector<std::string>{"8", "16", "32", "64"}));   // numeric order
        for (size_t s = 0; s < run->sequenceCount(); ++s) {
            QCOMPARE(len->sequence[s], lengthBucket(run->seqLength(s)));
            QCOMPARE(bs->values[size_t(bs->sequence[s])], run->runtime[s]["batch_size"].dump());
            for (size_t i = run->seqBegin(s); i < run->seqEnd(s); ++i)
                QCOMPARE(int(pos->token[i]), positionBucket(i - run->seqBegin(s)));
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, d.get("derived.top1_agree"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, d.get("derived.nope"));
    }

    // per_slice and where on derived keys against the values summed here; labeled keys alone
    // go through the unchanged path.
    void evaluatorPerSliceAndWhere() {
        auto run = makeRun(2, 40, 50, 400, false);
        const Contract c = parse(kHead + R"(numerical:
  - id: A
    metric: abs_log_ratio
    aggregate: mean
    max: 1
    per_slice: derived.pos_bucket
  - id: B
    metric: abs_log_ratio
    aggregate: count
    max: 1e9
    where: {task: math, derived.p_inf_bucket: [p_lt_1e-3, p_ge_1e-1]}
  - id: C
    metric: seq_abs_log_ratio
    aggregate: count
    max: 1e9
    per_slice: derived.runtime.batch_size
statistical:
  - id: S
    metric: abs_log_ratio
    level: 0.02
    max: 0.5
    unit: sequence
    per_slice: derived.pos_bucket
)");
        const Evaluation ev = evaluateContract(c, run);
        std::vector<double> sum(5, 0), cnt(5, 0);
        double countB = 0;
        std::vector<double> seqsS(5, 0);
        std::map<std::string, double> countC;
        for (size_t s = 0; s < run->sequenceCount(); ++s) {
            std::vector<char> seen(5, 0);
            for (size_t i = run->seqBegin(s); i < run->seqEnd(s); ++i) {
                const int b = positionBucket(i - run->seqBegin(s));
                const double r = std::fabs(run->lpTrain[i] - run->lpInf[i]);
                sum[size_t(b)] += r;
                cnt[size_t(b)] += 1;
                seen[size_t(b)] = 1;
                const double p = std::exp(run->lpInf[i]);
                if (*run->slices.label(s, 0) == "math" && (p < 1e-3 || p >= 0.1))
                    countB += 1;
            }
            for (int b = 0; b < 5; ++b)
                seqsS[size_t(b)] += seen[size_t(b)];
            countC[run->runtime[s]["batch_size"].dump()] += 1;
        }
        size_t a = 0, cc = 0, st = 0;
        for (const Result& r : ev.results) {
            const auto& posValues = findDerivedKey("derived.pos_bucket")->values;
            if (r.clause == "A" && r.n > 0) {
                QVERIFY(r.slice);
                const size_t b = size_t(std::find(posValues.begin(), posValues.end(), r.slice->at("derived.pos_bucket")) -
                                        posValues.begin());
                QVERIFY(b <= 2);   // sequences are at most 400 long
                QCOMPARE(r.status, Status::Pass);
                QVERIFY(std::fabs(*r.observed - sum[b] / cnt[b]) < 1e-12);
                QCOMPARE(double(r.n), cnt[b]);
                ++a;
            } else if (r.clause == "B") {
                QCOMPARE(*r.observed, countB);
                QVERIFY(r.slice == std::nullopt);
            } else if (r.clause == "C") {
                QCOMPARE(*r.observed, countC.at(r.slice->at("derived.runtime.batch_size")));
                ++cc;
            } else if (r.clause == "S" && r.n > 0) {
                const std::string v = r.slice->at("derived.pos_bucket");
                const size_t b = v == "pos_0_64" ? 0 : v == "pos_64_256" ? 1 : 2;
                QCOMPARE(double(r.n), seqsS[b]);   // unit: sequence counts the sequences reaching the bucket
                ++st;
            }
        }
        QCOMPARE(a, size_t(3));   // pos_0_64, pos_64_256, pos_256_1024 have values; the rest are inconclusive
        QCOMPARE(cc, size_t(4));
        QCOMPARE(st, size_t(3));
        // Escalation sees derived labels like any other slice.
        QVERIFY(ev.verdict != Status::Error);
    }

    void contractErrors() {
        auto head = kHead + "numerical:\n  - id: A\n    metric: abs_log_ratio\n    aggregate: mean\n    max: 1\n";
        QVERIFY(parseError(head + "    per_slice: derived.pos_buckets\n").find("unknown derived slice key") !=
                std::string::npos);
        QVERIFY(parseError(head + "    where: {derived.p_inf_bucket: p_lt_0.001}\n")
                    .find("is not a value of 'derived.p_inf_bucket'") != std::string::npos);
        QVERIFY(parseError(kHead + "numerical:\n  - id: A\n    metric: length\n    aggregate: mean\n    max: 1\n"
                                   "    per_slice: derived.pos_bucket\n")
                    .find("per-token slice key") != std::string::npos);
        QVERIFY(parseError(kHead + "observability:\n  - id: O\n    require_fields: [logp_inf]\n"
                                   "    where: {derived.len_bucket: len_0_64}\n")
                    .find("require_fields") != std::string::npos);
        QCOMPARE(parseError(head + "    where: {derived.runtime.batch_size: 8, derived.len_bucket: len_0_64}\n"),
                 std::string());
        QCOMPARE(parseError(kHead + "numerical:\n  - id: A\n    metric: length\n    aggregate: mean\n    max: 1\n"
                                    "    per_slice: derived.len_bucket\n"),
                 std::string());
    }

    void benjaminiHochbergKnownValues() {
        // p = 0.01, 0.04, 0.03, 0.5 (m = 4): sorted 0.01 0.03 0.04 0.5 -> 0.04 0.06 0.0533 0.5,
        // then the running minimum from the top: 0.04, 0.0533, 0.0533, 0.5.
        const auto q = benjaminiHochberg({0.01, 0.04, 0.03, 0.5});
        QVERIFY(std::fabs(q[0] - 0.04) < 1e-15);
        QVERIFY(std::fabs(q[1] - 0.16 / 3) < 1e-15);
        QVERIFY(std::fabs(q[2] - 0.16 / 3) < 1e-15);
        QVERIFY(std::fabs(q[3] - 0.5) < 1e-15);
        QVERIFY(std::fabs(upperTailP(1.6448536269514722) - 0.05) < 1e-12);
    }

    // The planted slice (task=math, positions [1024, 4096)) ranks first, with the right
    // bounds, its numbers equal to the ones computed here, and a clause that catches it.
    void findsPlantedSlice_data() {
        QTest::addColumn<int>("depth");
        QTest::newRow("depth 2") << 2;
        QTest::newRow("depth 3") << 3;
    }
    void findsPlantedSlice() {
        QFETCH(int, depth);
        auto run = makeRun(7, 300, 600, 2600, true);
        // The fixed buckets alone here (the planted [1024, 4096) is one of them); with the
        // dyadic ranges, dyadicRangeInsideABucket.
        const Discovery d = runDiscover(run, depth, false);
        QVERIFY(!d.findings.empty());
        QVERIFY(d.tested > 50);
        const Finding& f = d.findings.front();
        QCOMPARE(f.conditions.size(), size_t(2));
        std::map<std::string, std::string> cond;
        for (const auto& c : f.conditions)
            cond[c.key] = c.value;
        QCOMPARE(cond["task"], std::string("math"));
        QCOMPARE(cond["derived.pos_bucket"], std::string("pos_1024_4096"));
        // Independent numbers: the slice's tokens, sequences and means.
        double sIn = 0, nIn = 0, sOut = 0, nOut = 0, seqs = 0;
        for (size_t s = 0; s < run->sequenceCount(); ++s) {
            bool any = false;
            for (size_t i = run->seqBegin(s); i < run->seqEnd(s); ++i) {
                const size_t p = i - run->seqBegin(s);
                const double r = std::fabs(run->lpTrain[i] - run->lpInf[i]);
                if (*run->slices.label(s, 0) == "math" && p >= 1024 && p < 4096)
                    sIn += r, nIn += 1, any = true;
                else
                    sOut += r, nOut += 1;
            }
            seqs += any;
        }
        QCOMPARE(double(f.nTokens), nIn);
        QCOMPARE(double(f.nSequences), seqs);
        QVERIFY(std::fabs(f.mean - sIn / nIn) < 1e-12);
        QVERIFY(std::fabs(f.restMean - sOut / nOut) < 1e-12);
        QVERIFY(f.effect > 0 && f.ciLo > 0 && f.ciLo < f.effect && f.effect < f.ciHi);
        QVERIFY(f.qValue <= d.q);
        QVERIFY(d.ciLevel > 0.95 && d.ciLevel < 1);
        // The true effect (1.5 * E|r| of the math sequences' mix) is inside the interval.
        QVERIFY(f.ratio > 2 && f.ratio < 3);
        // The ready-made clause: parses, and fails on this run.
        const Contract c = parse(kHead + "numerical:\n" + [&] {
            std::string s;
            for (const auto& line : QString::fromStdString(f.clause).split('\n'))
                if (!line.isEmpty())
                    s += "  " + line.toStdString() + "\n";
            return s;
        }());
        QCOMPARE(c.clauses.size(), size_t(1));
        const Evaluation ev = evaluateContract(c, run);
        QCOMPARE(ev.results.size(), size_t(1));
        QCOMPARE(ev.results[0].status, Status::Fail);
        QVERIFY(std::fabs(*ev.results[0].observed - f.mean) < 1e-12);
        // ... and passes where the slice behaves like the rest.
        QCOMPARE(evaluateContract(c, makeRun(7, 300, 600, 2600, false)).verdict, Status::Pass);
        // JSON shape.
        const auto j = discoveryJson(d);
        QCOMPARE(j["kcx"].get<int>(), 1);
        QCOMPARE(j["tested"].get<uint64_t>(), d.tested);
        QCOMPARE(j["findings"][0]["conditions"]["task"].get<std::string>(), std::string("math"));
        QCOMPARE(j["findings"][0]["ci"].size(), size_t(2));
    }

    // Issue 20: divergence confined to positions 16–31 of 40–64-token sequences of one task
    // sits inside the fixed bucket [0, 64) and is diluted there; the dyadic search names it,
    // with the multiple testing of every range counted, and its clause reproduces it. A rise
    // of one task from step 30 of 40 is found as "task=…, step ≥ s". (The findings are listed
    // up to 200 here: the hot range's crossings with the steps come first.)
    void dyadicRangeInsideABucket() {
        std::mt19937_64 rng(20);
        std::uniform_int_distribution<size_t> len(40, 64);
        std::normal_distribution<double> noise(0, 1);
        std::vector<int64_t> off{0};
        std::vector<double> lpt, lpi;
        SliceTable slices;
        slices.keys = {"task", "step"};
        slices.values = {{"code", "math"}, {}};
        for (int st = 0; st < 40; ++st)
            slices.values[1].push_back(std::to_string(st));
        for (size_t s = 0; s < 800; ++s) {
            const int task = int(s % 2), step = int(s / 20);
            slices.codes.push_back(task);
            slices.codes.push_back(step);
            const size_t T = len(rng);
            for (size_t p = 0; p < T; ++p) {
                const bool in = task == 0 && p >= 16 && p < 32;
                const bool late = task == 1 && step >= 30;
                const double r = 0.01 * (in ? 4 : late ? 3 : 1) * noise(rng);
                lpi.push_back(-1);
                lpt.push_back(-1 + r);
            }
            off.push_back(int64_t(lpi.size()));
        }
        auto run = test::runFromFlat(std::move(off), std::move(lpt), std::move(lpi));
        run->slices = std::move(slices);
        run->checkInvariants();
        const Discovery d = runDiscover(run, 2, true);
        QVERIFY(!d.findings.empty());
        // Every range was tested: more slices than the buckets alone give.
        const Discovery buckets = runDiscover(run, 2, false);
        QVERIFY2(d.tested > buckets.tested + 50, qPrintable(QString("%1 vs %2").arg(d.tested).arg(buckets.tested)));
        const Finding* range = nullptr;
        const Finding* late = nullptr;
        for (const Finding& f : d.findings) {
            bool math = false, steps = false;
            for (const auto& c : f.conditions) {
                if (c.positions && !range)
                    range = &f;
                math = math || (c.key == "task" && c.value == "math");
                steps = steps || !c.anyOf.empty();
            }
            if (math && steps && !late)
                late = &f;
        }
        QVERIFY(range);
        std::pair<int64_t, int64_t> where;
        std::string task;
        for (const auto& c : range->conditions) {
            if (c.positions)
                where = *c.positions;
            if (c.key == "task")
                task = c.value;
        }
        qInfo("range finding: positions [%lld, %lld) task '%s', effect %g, q %g", (long long)where.first,
              (long long)where.second, task.c_str(), range->effect, range->qValue);
        QVERIFY2(where.first >= 16 && where.second <= 32, range->clause.c_str());
        QVERIFY(task.empty() || task == "code");
        QVERIFY(range->clause.find("positions: [" + std::to_string(where.first) + ", " + std::to_string(where.second) + "]") !=
                std::string::npos);
        // The clause parses and fails on this run, observing the finding's mean.
        std::string body;
        for (const auto& line : QString::fromStdString(range->clause).split('\n'))
            if (!line.isEmpty())
                body += "  " + line.toStdString() + "\n";
        const Contract c = parse(kHead + "numerical:\n" + body);
        const Evaluation ev = evaluateContract(c, run);
        QCOMPARE(ev.results[0].status, Status::Fail);
        QVERIFY(std::fabs(*ev.results[0].observed - range->mean) < 1e-12);
        // The later steps of math: "task=math, step ≥ s" with s one of the places next to 30
        // (the places are steps 4, 9, …, 29, 34, 39).
        QVERIFY(late);
        std::string from, lateTask;
        for (const auto& c : late->conditions) {
            if (!c.anyOf.empty())
                from = c.value;
            if (c.key == "task")
                lateTask = c.value;
        }
        qInfo("step finding: step %s task '%s', effect %g, q %g", from.c_str(), lateTask.c_str(), late->effect,
              late->qValue);
        QCOMPARE(lateTask, std::string("math"));
        const int s0 = std::stoi(from.substr(from.find(' ') + 1));
        QVERIFY2(s0 == 29 || s0 == 34, from.c_str());
        QVERIFY(late->clause.find("\"step\": [\"" + std::to_string(s0) + "\"") != std::string::npos);
    }

    // No planted slice: under the global null, BH at q = 0.05 makes a run with any finding
    // happen with probability at most q (Benjamini-Hochberg under positive dependence). Over
    // 50 seeds the expected count is at most 2.5; we allow 6 (P[Binomial(50, 0.05) >= 7]
    // is about 1.2%, and the seeds are fixed, so the test is deterministic).
    void nothingOnNullRuns() {
        int withFindings = 0;
        uint64_t tested = 0;
        for (uint64_t seed = 100; seed < 150; ++seed) {
            const Discovery d = runDiscover(makeRun(seed, 120, 100, 1500, false));
            tested += d.tested;
            withFindings += !d.findings.empty();
            if (!d.findings.empty())
                qInfo("seed %llu: %zu findings, first q = %g", (unsigned long long)seed, d.findings.size(),
                      d.findings.front().qValue);
        }
        qInfo("null runs with findings: %d of 50 (%llu slices tested in all)", withFindings,
              (unsigned long long)tested);
        QVERIFY(withFindings <= 6);
    }

    void inputErrors() {
        auto run = makeRun(3, 20, 10, 20, false);
        MetricEngine engine(run);
        DiscoverOptions o;
        o.metric = "ess";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, discover(engine, o));
        o.metric = "tv";   // no logits
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, discover(engine, o));
        o.metric = "abs_log_ratio";
        o.keys = {"nope"};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, discover(engine, o));
        o.keys = {};
        o.maxDepth = 4;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, discover(engine, o));
    }
};

QTEST_GUILESS_MAIN(TestDiscover)
#include "test_discover.moc"
