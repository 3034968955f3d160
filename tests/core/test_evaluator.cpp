// The contract evaluator (SPEC 4.1, 4.2) against values worked out in the test.
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/evaluate/evaluation_json.h"
#include "core/evaluate/evaluator.h"
#include "core/evaluate/stats.h"
#include "tests/support/test_runs.h"

using namespace kcx;

namespace {

// Two slices: "math" sequences 0,1 and "code" sequence 2; |r| values chosen by hand.
//   s0 (math): r = 0.1, 0.5, 0.05     s1 (math): r = 0.3, 0.02     s2 (code): r = 0.01, 0.02, 0.03, 0.9
std::shared_ptr<Run> smallRun() {
    const std::vector<std::vector<double>> r = {{0.1, 0.5, 0.05}, {0.3, 0.02}, {0.01, 0.02, 0.03, 0.9}};
    auto run = test::runFromRatios(r);
    run->slices.keys = {"task"};
    run->slices.values = {{"math", "code"}};
    run->slices.codes = {0, 0, 1};
    run->header = nlohmann::json::parse(
        R"({"kernels": {"train": {"weights_sha256": "ab", "batch_invariant": true}, "inf": {"weights_sha256": "ab", "batch_invariant": false}}})");
    run->runtime = {{{"batch_size", 8}}, {{"batch_size", 64}}, {{"batch_size", 32}}};
    run->rewardTrain = {1, 0.5, missingDouble()};
    run->rewardInf = {0.75, 0.5, 0.5};
    return run;
}

Evaluation eval(const Contract& c, const std::string& stage = "") {
    EvaluateOptions o;
    o.stage = stage;
    return evaluateContract(c, smallRun(), o);
}

const Result& find(const Evaluation& ev, const std::string& id, const std::string& slice = "") {
    for (const auto& r : ev.results)
        if (r.clause == id && (slice.empty() || (r.slice && r.slice->begin()->second == slice)))
            return r;
    qFatal("no result %s", id.c_str());
}

// Wilson's one-sided upper bound written out from SPEC 4.2 with z given as a number.
double wilson(double k, double n, double z) {
    const double p = k / n;
    return (p + z * z / (2 * n) + z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n);
}

// A statistical clause: the share of abs_log_ratio values above `level` is at most `max`,
// at 95 % confidence.
Clause exceedance(const std::string& id, double level, double max) {
    Clause s;
    s.id = id;
    s.family = Family::Statistical;
    s.metric = "abs_log_ratio";
    s.test = Clause::Test::Exceedance;
    s.level = Threshold{level, {}};
    s.max = Threshold{max, {}};
    s.confidence = Threshold{0.95, {}};
    return s;
}
}  // namespace

class TestEvaluator : public QObject {
    Q_OBJECT
private slots:
    void normalQuantileKnownValues() {
        QVERIFY(std::fabs(normalQuantile(0.95) - 1.6448536269514722) < 1e-14);
        QVERIFY(std::fabs(normalQuantile(0.975) - 1.959963984540054) < 1e-14);
        QVERIFY(std::fabs(normalQuantile(0.999) - 3.090232306167813) < 1e-13);
        QVERIFY(std::fabs(normalQuantile(1e-10) + 6.361340902404056) < 1e-11);
    }

    void numericalWholeAndPerSlice() {
        Contract c;
        c.clauses.push_back(test::maxClause("N1", "abs_log_ratio", "max", 0.6));
        Clause per = test::maxClause("N2", "abs_log_ratio", "mean", 0.2);
        per.perSlice = "task";
        c.clauses.push_back(per);
        Clause pos = test::maxClause("N3", "abs_log_ratio", "max", 0.2);
        pos.positions = std::make_pair(int64_t(0), int64_t(1));   // first token of each sequence
        c.clauses.push_back(pos);
        const Evaluation ev = eval(c);
        const Result& n1 = find(ev, "N1");
        QVERIFY(std::fabs(*n1.observed - 0.9) < 1e-12);
        QCOMPARE(n1.status, Status::Fail);
        QVERIFY(std::fabs(*n1.margin - (0.6 - 0.9)) < 1e-12);
        QCOMPARE(n1.n, uint64_t(9));
        // math mean = (0.1+0.5+0.05+0.3+0.02)/5 = 0.194; code mean = 0.96/4 = 0.24.
        QVERIFY(std::fabs(*find(ev, "N2", "math").observed - 0.194) < 1e-12);
        QCOMPARE(find(ev, "N2", "math").status, Status::Pass);
        QVERIFY(std::fabs(*find(ev, "N2", "code").observed - 0.24) < 1e-12);
        QCOMPARE(find(ev, "N2", "code").status, Status::Fail);
        QVERIFY(std::fabs(*find(ev, "N3").observed - 0.3) < 1e-12);    // firsts: 0.1, 0.3, 0.01
        QCOMPARE(ev.verdict, Status::Fail);
    }

    void emptyScopeIsInconclusive() {
        Contract c;
        Clause n = test::maxClause("N1", "abs_log_ratio", "max", 0.6);
        n.positions = std::make_pair(int64_t(10), int64_t(20));   // past every sequence
        c.clauses.push_back(n);
        Clause w = test::maxClause("N2", "tv", "mean", 0.1);                // no logits in the run
        c.clauses.push_back(w);
        const Evaluation ev = eval(c);
        QCOMPARE(find(ev, "N1").status, Status::Inconclusive);
        QCOMPARE(find(ev, "N2").status, Status::Inconclusive);
        QCOMPARE(ev.verdict, Status::Inconclusive);
        Clause bad = test::maxClause("N3", "abs_log_ratio", "max", 1);
        bad.where.anyOf["lang"] = {"en"};
        c.clauses = {bad};
        QCOMPARE(find(eval(c), "N3").status, Status::Error);
    }

    void exceedanceWilsonAndBonferroni() {
        Contract c;
        Clause s = exceedance("S1", 0.2, 0.9);
        c.clauses.push_back(s);
        s.id = "S2";
        s.perSlice = "task";
        s.correction = Clause::Correction::Bonferroni;
        c.clauses.push_back(s);
        s.id = "S3";
        s.perSlice.clear();
        s.correction = Clause::Correction::None;
        s.unit = Clause::Unit::Sequence;
        c.clauses.push_back(s);
        s.id = "S4";
        s.unit = Clause::Unit::Token;
        s.minSamples = 10;
        c.clauses.push_back(s);
        const Evaluation ev = eval(c);
        const Result& s1 = find(ev, "S1");   // above 0.2: 0.5, 0.3, 0.9 -> 3 of 9
        QCOMPARE(*s1.observed, 3.0 / 9);
        QVERIFY(std::fabs(*s1.upper - wilson(3, 9, 1.6448536269514722)) < 1e-12);
        QCOMPARE(s1.status, Status::Pass);
        // Two slices tested: confidence 1 - 0.05/2 = 0.975.
        const Result& math = find(ev, "S2", "math");   // 2 of 5
        QVERIFY(std::fabs(*math.upper - wilson(2, 5, 1.959963984540054)) < 1e-12);
        QCOMPARE(*math.confidence, 0.975);
        // Sequences exceeding: every sequence has a value above 0.2 -> 3 of 3.
        QCOMPARE(*find(ev, "S3").observed, 1.0);
        QCOMPARE(find(ev, "S3").status, Status::Fail);   // upper bound 1 > 0.9
        QCOMPARE(find(ev, "S4").status, Status::Inconclusive);   // 9 < min_samples 10
    }

    void meanTestIsReproducible() {
        Contract c;
        Clause s;
        s.id = "S1";
        s.family = Family::Statistical;
        s.metric = "abs_log_ratio";
        s.test = Clause::Test::Mean;
        s.min = Threshold{0.0, {}};
        s.max = Threshold{0.5, {}};
        s.seed = 7;
        s.resamples = 500;
        c.clauses.push_back(s);
        const Result a = find(eval(c), "S1"), b = find(eval(c), "S1");
        QCOMPARE(a.ci->first, b.ci->first);
        QCOMPARE(a.ci->second, b.ci->second);
        QVERIFY(std::fabs(*a.observed - 1.93 / 9) < 1e-12);
        // Resampling whole sequences: every replicate's ratio mean lies between the extreme
        // sequence means, 0.32/2 = 0.16 and 0.96/4 = 0.24.
        QVERIFY(a.ci->first >= 0.16 - 1e-12 && a.ci->second <= 0.24 + 1e-12);
        QVERIFY(a.ci->first <= *a.observed && *a.observed <= a.ci->second);
        c.clauses[0].seed = 8;
        const Result d = find(eval(c), "S1");
        QVERIFY(d.ci->first != a.ci->first || d.ci->second != a.ci->second);
        c.clauses[0].metric = "reward_diff";   // per sequence: -0.25 and 0 (s2 has no train reward)
        c.clauses[0].min = Threshold{-0.01, {}};
        const Result rd = find(eval(c), "S1");
        QCOMPARE(*rd.observed, -0.125);
        QCOMPARE(rd.status, Status::Fail);
    }

    void runtimeAndObservability() {
        Contract c;
        Clause r;
        r.id = "R1";
        r.family = Family::Runtime;
        r.field = "batch_size";
        r.aggregate = parseAggregate("max");
        r.max = Threshold{32, {}};
        c.clauses.push_back(r);
        Clause eq;
        eq.id = "R2";
        eq.family = Family::Runtime;
        eq.requireEqual = "weights_sha256";
        c.clauses.push_back(eq);
        Clause req;
        req.id = "R3";
        req.family = Family::Runtime;
        req.require = {{"inf.batch_invariant", true}};
        c.clauses.push_back(req);
        Clause o;
        o.id = "O1";
        o.family = Family::Observability;
        o.requireFields = {"logp_train", "reward_train", "slices.task"};
        o.minCoverage = Threshold{0.9, {}};
        c.clauses.push_back(o);
        const Evaluation ev = eval(c);
        QCOMPARE(*find(ev, "R1").observed, 64.0);
        QCOMPARE(find(ev, "R1").status, Status::Fail);
        QCOMPARE(find(ev, "R2").status, Status::Pass);
        QCOMPARE(find(ev, "R3").status, Status::Fail);
        QCOMPARE(*find(ev, "O1").observed, 2.0 / 3);     // reward_train is missing for s2
        QCOMPARE(find(ev, "O1").metric, std::string("reward_train"));
        QCOMPARE(find(ev, "O1").status, Status::Fail);
    }

    void escalationFirstRuleWinsPerStage() {
        Contract c;
        Clause n = test::maxClause("N1", "abs_log_ratio", "max", 0.6);
        n.severity = Severity::Warn;
        c.clauses.push_back(n);
        Clause p = test::maxClause("N2", "abs_log_ratio", "mean", 0.2);
        p.perSlice = "task";
        c.clauses.push_back(p);
        EscalationRule canary;
        canary.stages = {"canary", "full"};
        canary.action = Action::Rollback;
        EscalationRule math;   // N2's code slice fails; this rule names math, so it does not apply
        math.clauses = {"N2"};
        math.slice.anyOf["task"] = {"math"};
        math.action = Action::RouteToReference;
        EscalationRule code;
        code.clauses = {"N2"};
        code.slice.anyOf["task"] = {"code"};
        code.action = Action::BlockPromotion;
        EscalationRule dflt;
        dflt.isDefault = true;
        dflt.action = Action::Hold;
        c.escalation = {canary, math, code, dflt};
        const Evaluation ev = eval(c);
        QCOMPARE(ev.stage, std::string("offline_ci"));
        QCOMPARE(find(ev, "N1").action, Action::Hold);
        QCOMPARE(find(ev, "N2", "code").action, Action::BlockPromotion);
        QCOMPARE(find(ev, "N2", "math").action, Action::Pass);
        QCOMPARE(ev.action, Action::BlockPromotion);
        QCOMPARE(ev.stageActions.at("shadow"), Action::BlockPromotion);
        QCOMPARE(ev.stageActions.at("canary"), Action::Rollback);
        QCOMPARE(eval(c, "full").action, Action::Rollback);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, eval(c, "prod"));
        c.escalation.clear();   // no rule: a failure warns
        QCOMPARE(eval(c).action, Action::Warn);
    }

    // Beside a quantile (pNN, max, min): its 95 % interval x(l)..x(u) and the values beyond
    // the thresholds, for the reviewer; the status is SPEC 4's rule on the observed value.
    void quantileIntervalAndBeyond() {
        // smallRun's nine |r| as the metric computes them, sorted: 0.01 0.02 0.02 0.03 0.05
        // 0.1 0.3 0.5 0.9. For n = 9, q = 0.5: P(B <= 1) = 10/512 <= 0.025 < P(B <= 2) =
        // 46/512 and P(B <= 7) = 502/512 >= 0.975 > P(B <= 6) = 466/512: ranks 1 and 7.
        std::vector<double> x;
        for (double r : {0.1, 0.5, 0.05, 0.3, 0.02, 0.01, 0.02, 0.03, 0.9})
            x.push_back(std::fabs(-1.0 - (-1.0 - r)));
        std::sort(x.begin(), x.end());
        const double inf = INFINITY;
        Contract c;
        c.clauses.push_back(test::maxClause("N1", "abs_log_ratio", "p50", 0.2));
        Clause both = test::maxClause("N2", "abs_log_ratio", "p50", 0.4);
        both.min = Threshold{0.025, {}};
        c.clauses.push_back(both);
        c.clauses.push_back(test::maxClause("N3", "abs_log_ratio", "max", 0.6));
        Clause lowest = test::maxClause("N4", "abs_log_ratio", "min", 1);
        lowest.max.reset();
        lowest.min = Threshold{0.015, {}};
        c.clauses.push_back(lowest);
        c.clauses.push_back(test::maxClause("N5", "abs_log_ratio", "mean", 0.2));
        c.clauses.push_back(test::maxClause("N6", "abs_log_ratio", "fraction_above: 0.2", 0.5));
        Clause per = test::maxClause("N7", "abs_log_ratio", "p99.9", 0.2);
        per.perSlice = "task";
        c.clauses.push_back(per);
        const Evaluation ev = eval(c);
        const Result& n1 = find(ev, "N1");
        QCOMPARE(*n1.observed, x[4]);
        QCOMPARE(n1.status, Status::Pass);
        QVERIFY(n1.ci == std::make_pair(x[1], x[7]));
        QCOMPARE(*n1.confidence, 0.95);
        QCOMPARE(*n1.beyond, uint64_t(3));              // 0.3, 0.5, 0.9 above 0.2
        QCOMPARE(*find(ev, "N2").beyond, uint64_t(5));  // 0.5, 0.9 above 0.4; 0.01, 0.02, 0.02 below 0.025
        QCOMPARE(find(ev, "N2").status, Status::Pass);
        // max: the sample's maximum bounds the population's from below; nothing from above.
        const Result& n3 = find(ev, "N3");
        QVERIFY(n3.ci == std::make_pair(x[8], inf));
        QCOMPARE(*n3.beyond, uint64_t(1));
        QCOMPARE(n3.status, Status::Fail);
        const Result& n4 = find(ev, "N4");
        QVERIFY(n4.ci == std::make_pair(-inf, x[0]));
        QCOMPARE(*n4.beyond, uint64_t(1));              // 0.01 below 0.015
        QCOMPARE(n4.status, Status::Fail);
        for (const char* id : {"N5", "N6"}) {           // not quantiles: nothing added
            QVERIFY(!find(ev, id).ci && !find(ev, id).beyond && !find(ev, id).confidence);
            QVERIFY(!resultJson(find(ev, id)).contains("ci") && !resultJson(find(ev, id)).contains("beyond"));
        }
        // p99.9 of five values: no upper rank; the lower one is the slice's maximum (P(B <= 4)
        // = 1 - 0.999^5 = 0.005 <= 0.025).
        const Result& math = find(ev, "N7", "math");
        QVERIFY(math.ci == std::make_pair(std::fabs(-1.0 - (-1.0 - 0.5)), inf));
        QCOMPARE(*math.beyond, uint64_t(2));            // 0.5, 0.3
        QCOMPARE(*find(ev, "N7", "code").beyond, uint64_t(1));
        // In the JSON an unbounded side is null.
        const nlohmann::json j = resultJson(math);
        QVERIFY(j["ci"].is_array() && j["ci"].size() == 2 && j["ci"][1].is_null());
        QCOMPARE(j["ci"][0].get<double>(), math.ci->first);
        QCOMPARE(j["beyond"].get<uint64_t>(), uint64_t(2));
        QCOMPARE(j["confidence"].get<double>(), 0.95);
        QCOMPARE(resultJson(n4)["ci"][0].is_null(), true);
    }

    // A dragged max or min: the count follows every level (from the second level on it comes
    // from bucketed values), the interval stays, and every step equals a fresh evaluation.
    void beyondFollowsADrag() {
        std::mt19937_64 rng(8);
        std::lognormal_distribution<double> logn(-4, 1);
        std::vector<std::vector<double>> r(40, std::vector<double>(250));
        for (auto& seq : r)
            for (double& v : seq)
                v = logn(rng) * (rng() % 2 ? 1 : -1);
        auto run = test::runFromRatios(r);
        run->slices.keys = {"task"};
        run->slices.values = {{"a", "b"}};
        for (size_t s = 0; s < r.size(); ++s)
            run->slices.codes.push_back(int32_t(s % 2));
        std::vector<std::vector<double>> vals(2);   // log_ratio per slice, as the metric computes it
        for (size_t s = 0; s < r.size(); ++s)
            for (double v : r[s])
                vals[s % 2].push_back(-1.0 - (-1.0 - v));
        Contract c;
        Clause n = test::maxClause("N1", "log_ratio", "p99", 0.05);
        n.min = Threshold{-0.05, {}};
        n.perSlice = "task";
        c.clauses.push_back(n);
        Evaluator e(std::make_shared<MetricEngine>(run), c);
        const Evaluation first = e.evaluate();
        QCOMPARE(first.results.size(), size_t(2));
        std::uniform_real_distribution<double> u(0, 0.1);
        for (int step = 0; step < 80; ++step) {
            const bool max = step % 3 != 0;
            double level = max ? u(rng) : -u(rng);
            if (step % 7 == 0)   // exactly a value: ties
                level = vals[0][size_t(step) * 31 % vals[0].size()];
            e.setThreshold("N1", max ? "max" : "min", level);
            const Evaluation ev = e.evaluate();
            const Evaluation direct = evaluateContract(e.contract(), run);
            const double hi = e.contract().clauses[0].max->value, lo = e.contract().clauses[0].min->value;
            for (size_t g = 0; g < 2; ++g) {
                const auto want = uint64_t(std::count_if(vals[g].begin(), vals[g].end(),
                                                         [&](double v) { return v > hi || v < lo; }));
                QCOMPARE(*ev.results[g].beyond, want);
                QVERIFY(ev.results[g].beyond == direct.results[g].beyond);
                QVERIFY(ev.results[g].ci == first.results[g].ci);
                QCOMPARE(ev.results[g].status, direct.results[g].status);
                QCOMPARE(*ev.results[g].observed, *first.results[g].observed);
            }
        }
    }

    // Issue 17: a one-shot evaluation (kcx check) no longer sorts what an exceedance test
    // counts; the window's evaluator still does, for its drags. Both count the same: over
    // level drags, token and sequence units, each equals a count by hand.
    void exceedanceCountsWithAndWithoutTheSort() {
        std::mt19937_64 rng(23);
        std::normal_distribution<double> noise(0, 0.05);
        std::vector<std::vector<double>> r(40, std::vector<double>(25));
        std::vector<double> abs, seqMax;
        for (auto& seq : r) {
            double mx = 0;
            for (double& v : seq) {
                v = std::round(noise(rng) * 1000) / 1000;   // ties
                abs.push_back(std::fabs(-1.0 - (-1.0 - v)));   // as the metric computes it
                mx = std::max(mx, abs.back());
            }
            seqMax.push_back(mx);
        }
        auto run = test::runFromRatios(r);
        Contract c;
        Clause s = exceedance("S1", 0.05, 0.5);
        c.clauses.push_back(s);
        s.id = "S2";
        s.unit = Clause::Unit::Sequence;
        c.clauses.push_back(s);
        Evaluator window(std::make_shared<MetricEngine>(run), c);
        window.evaluate();
        for (int step = 0; step < 30; ++step) {
            const double level = step % 5 == 0 ? abs[size_t(step) * 13 % abs.size()] : std::fabs(noise(rng)) * 2;
            window.setThreshold("S1", "level", level);
            window.setThreshold("S2", "level", level);
            const Evaluation a = window.evaluate();
            const Evaluation b = evaluateContract(window.contract(), run);
            const auto above = [&](const std::vector<double>& v) {
                return double(std::count_if(v.begin(), v.end(), [&](double x) { return x > level; }));
            };
            QCOMPARE(*find(a, "S1").observed, above(abs) / double(abs.size()));
            QCOMPARE(*find(b, "S1").observed, above(abs) / double(abs.size()));
            QCOMPARE(*find(a, "S2").observed, above(seqMax) / double(seqMax.size()));
            QCOMPARE(*find(b, "S2").observed, above(seqMax) / double(seqMax.size()));
            QCOMPARE(*find(a, "S1").upper, *find(b, "S1").upper);
            QCOMPARE(find(a, "S2").status, find(b, "S2").status);
        }
    }

    // Issue 17: the window's first evaluation of an exceedance test on tokens counts the
    // values above the level without copying them. Each figure equals a one-shot evaluation
    // (which copies) and a count by hand: per slice, within `where` and `positions`, with
    // missing and non-finite values; after a `max` edit (still counted), a level edit (the
    // values are copied then) and back to the first level.
    void exceedanceCountedFirstEqualsOneShot() {
        std::mt19937_64 rng(41);
        std::normal_distribution<double> noise(0, 0.05);
        std::vector<std::vector<double>> r(60);
        for (size_t s = 0; s < r.size(); ++s) {
            r[s].resize(10 + s % 7);
            for (double& v : r[s])
                v = std::round(noise(rng) * 1000) / 1000;
        }
        auto run = test::runFromRatios(r);
        // Tokens 3 of every fifth sequence: no inference log-prob (missing); token 4 of
        // every seventh: NaN (non-finite).
        std::vector<double> inf(run->lpInf.size());
        for (size_t i = 0; i < inf.size(); ++i)
            inf[i] = run->lpInf[i];
        for (size_t s = 0; s < r.size(); ++s) {
            if (s % 5 == 0)
                inf[run->seqBegin(s) + 3] = missingDouble();
            if (s % 7 == 0)
                inf[run->seqBegin(s) + 4] = std::nan("");
        }
        run->lpInf = Column(Array<double>(std::move(inf)));
        run->slices.keys = {"task", "split"};
        run->slices.values = {{"a", "b", "c"}, {"x", "y"}};
        run->slices.codes.clear();
        for (size_t s = 0; s < r.size(); ++s) {
            run->slices.codes.push_back(int32_t(s % 3));
            run->slices.codes.push_back(int32_t(s % 4 == 0));
        }
        run->checkInvariants();
        // The first level is a value of the data (sequence 1, position 2, in scope): ties.
        const double tie = std::fabs(run->lpTrain[run->seqBegin(1) + 2] - run->lpInf[run->seqBegin(1) + 2]);
        QVERIFY(tie > 0);
        Contract c;
        Clause s1 = exceedance("S1", tie, 0.4);
        s1.perSlice = "task";
        s1.where.anyOf["split"] = {"x"};
        s1.positions = std::pair<int64_t, int64_t>{1, 12};
        c.clauses.push_back(s1);
        Evaluator window(std::make_shared<MetricEngine>(run), c);
        auto byHand = [&](const std::string& task, double level, uint64_t& n, uint64_t& above) {
            n = above = 0;
            for (size_t s = 0; s < r.size(); ++s) {
                if (run->slices.values[0][size_t(s % 3)] != task || s % 4 == 0)
                    continue;
                for (size_t t = 1; t < std::min<size_t>(12, r[s].size()); ++t) {
                    const double v = std::fabs(run->lpTrain[run->seqBegin(s) + t] - run->lpInf[run->seqBegin(s) + t]);
                    if (std::isnan(v))
                        continue;
                    ++n;
                    above += v > level;
                }
            }
        };
        auto same = [&](double level) {
            const Evaluation a = window.evaluate();
            const Evaluation b = evaluateContract(window.contract(), run);
            QCOMPARE(a.results.size(), size_t(3));
            QCOMPARE(b.results.size(), a.results.size());
            for (size_t i = 0; i < a.results.size(); ++i) {
                const Result &x = a.results[i], &y = b.results[i];
                QCOMPARE(x.n, y.n);
                QCOMPARE(*x.observed, *y.observed);
                QCOMPARE(*x.upper, *y.upper);
                QCOMPARE(x.status, y.status);
                QCOMPARE(x.message, y.message);
                uint64_t n = 0, above = 0;
                byHand(x.slice->at("task"), level, n, above);
                QCOMPARE(x.n, n);
                QCOMPARE(*x.observed, double(above) / double(n));
            }
        };
        same(tie);
        window.setThreshold("S1", "max", 0.2);
        same(tie);
        window.setThreshold("S1", "level", 0.06);
        same(0.06);
        window.setThreshold("S1", "level", tie);
        same(tie);
    }

    // Tightening `max` never turns a fail into a pass; re-deciding equals a fresh evaluation.
    void tighteningAndIncremental() {
        std::mt19937_64 rng(5);
        std::uniform_real_distribution<double> u(0, 1);
        for (int trial = 0; trial < 200; ++trial) {
            Contract c;
            const char* aggs[] = {"max", "mean", "p50", "p99", "fraction_above: 0.04"};
            Clause n = test::maxClause("N1", "abs_log_ratio", aggs[trial % 5], u(rng));
            if (trial % 2)
                n.perSlice = "task";
            c.clauses.push_back(n);
            auto engine = std::make_shared<MetricEngine>(smallRun());
            Evaluator e(engine, c);
            const Evaluation before = e.evaluate();
            const double tighter = n.max->value * u(rng);
            e.setThreshold("N1", "max", tighter);
            const Evaluation after = e.evaluate();
            Contract fresh = c;
            fresh.clauses[0].max->value = tighter;
            const Evaluation direct = eval(fresh);
            for (size_t i = 0; i < before.results.size(); ++i) {
                if (before.results[i].status == Status::Fail)
                    QCOMPARE(after.results[i].status, Status::Fail);
                QCOMPARE(after.results[i].status, direct.results[i].status);
                QCOMPARE(after.results[i].margin.has_value(), direct.results[i].margin.has_value());
                QVERIFY(after.results[i].beyond == direct.results[i].beyond);
                QVERIFY(after.results[i].ci == direct.results[i].ci);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestEvaluator)
#include "test_evaluator.moc"
