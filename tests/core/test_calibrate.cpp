// Contract calibration (core/discover/calibrate.h): thresholds from a trusted run, checked both
// ways on runs built here — it passes its good run, fails a bad one, and says so when a
// bad run cannot be told from the good one.
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/contract/contract.h"
#include "core/discover/calibrate.h"
#include "tests/support/test_runs.h"

using namespace kcx;

namespace {

// n sequences of lengths in [200, 1500]; r ~ N(0, 0.01 * scale), times `factor` for
// task=math at positions [1024, 4096) (the bad run's planted slice).
std::shared_ptr<Run> makeRun(uint64_t seed, size_t n, double factor) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> len(200, 1500);
    std::uniform_int_distribution<int> task(0, 3);
    std::normal_distribution<double> seqEffect(0, 0.2), noise(0, 1);
    std::exponential_distribution<double> surprisal(0.5);
    SliceTable slices;
    std::vector<nlohmann::json> runtime;
    std::vector<int64_t> off{0};
    std::vector<double> lpt, lpi;
    slices.keys = {"task"};
    slices.values = {{"math", "code", "chat", "prose"}};
    for (size_t s = 0; s < n; ++s) {
        const int t = task(rng);
        slices.codes.push_back(t);
        const size_t T = len(rng);
        const double sigma = 0.01 * std::exp(seqEffect(rng));
        for (size_t p = 0; p < T; ++p) {
            const bool in = t == 0 && p >= 1024 && p < 4096;
            const double li = -surprisal(rng);
            lpi.push_back(li);
            lpt.push_back(li + sigma * (in ? factor : 1.0) * noise(rng));
        }
        off.push_back(int64_t(lpi.size()));
    }
    auto run = test::runFromFlat(std::move(off), std::move(lpt), std::move(lpi));
    run->slices = std::move(slices);
    run->runtime = std::move(runtime);
    run->checkInvariants();
    return run;
}

// numpy's default (type 7) quantile, written out.
double quantile7(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double h = double(v.size() - 1) * q;
    const size_t lo = size_t(std::floor(h));
    return lo + 1 < v.size() ? v[lo] + (h - double(lo)) * (v[lo + 1] - v[lo]) : v[lo];
}

}  // namespace

class TestCalibrate : public QObject {
    Q_OBJECT
private slots:
    void separatesGoodFromBad() {
        auto good = makeRun(1, 300, 1.0);
        auto bad = makeRun(2, 300, 4.0);
        CalibrateOptions o;
        const Calibration cal = calibrate(good, {bad}, o);
        QVERIFY2(cal.goodPasses(), cal.yaml.c_str());
        QVERIFY(cal.badFails(0));
        QVERIFY(cal.separates());
        // The text is a contract the parser reads back, with the thresholds computed here.
        const Contract back = parseContract(cal.yaml, "calibrated.yaml");
        QCOMPARE(back.clauses.size(), cal.contract.clauses.size());
        std::vector<double> r;
        for (size_t i = 0; i < good->tokenCount(); ++i)
            r.push_back(std::fabs(good->lpTrain[i] - good->lpInf[i]));
        const double p999 = quantile7(r, 0.999);
        const Clause* n1 = back.find("N1");
        QVERIFY(n1);
        QCOMPARE(n1->metric, std::string("abs_log_ratio"));
        QCOMPARE(n1->aggregate->text, std::string("p99.9"));
        QVERIFY(n1->max->value >= p999 * 1.1);
        QVERIFY(n1->max->value <= p999 * 1.1 * (1 + 1e-3));
        // Clause by clause: the abs_log_ratio tail catches the bad run, and nothing fails on the good one.
        bool tailCatches = false;
        for (const auto& row : cal.table) {
            QCOMPARE(row.good, Status::Pass);
            if (row.clause == "N1")
                tailCatches = row.bad[0] == Status::Fail;
        }
        QVERIFY(tailCatches);
        QVERIFY(cal.yaml.find("stages: [offline_ci, shadow, canary, full]") != std::string::npos);
        QVERIFY(cal.yaml.find("block_promotion") != std::string::npos);
    }

    // A "bad" run from the same kernels (another sample) cannot be told apart: reported.
    void reportsRunsItCannotTellApart() {
        auto good = makeRun(3, 300, 1.0);
        auto same = makeRun(4, 300, 1.0);
        auto bad = makeRun(5, 300, 4.0);
        CalibrateOptions o;
        o.margin = 0.25;
        const Calibration cal = calibrate(good, {same, bad}, o);
        QVERIFY(cal.goodPasses());
        QVERIFY(!cal.badFails(0));
        QVERIFY(cal.badFails(1));
        QVERIFY(!cal.separates());
        for (const auto& row : cal.table)
            QVERIFY(row.bad[0] != Status::Fail);
    }

    // per_slice: one threshold per clause, the worst slice's, so every slice of the good run passes.
    void perSliceUsesTheWorstSlice() {
        auto good = makeRun(6, 300, 1.0);
        auto bad = makeRun(7, 300, 4.0);
        CalibrateOptions o;
        o.perSlice = "task";
        o.metrics = {"abs_log_ratio"};
        const Calibration cal = calibrate(good, {bad}, o);
        QVERIFY(cal.separates());
        QCOMPARE(cal.clauses.size(), size_t(2));   // tail and mean
        size_t slices = 0;
        bool mathCaught = false;
        for (const auto& row : cal.table) {
            if (row.clause.rfind("N", 0) != 0)
                continue;
            ++slices;
            QCOMPARE(row.good, Status::Pass);
            if (row.slice == "task=math")
                mathCaught = mathCaught || row.bad[0] == Status::Fail;
        }
        QCOMPARE(slices, size_t(8));
        QVERIFY(mathCaught);
        // The derived keys work as well.
        o.perSlice = "derived.pos_bucket";
        const Calibration byPos = calibrate(good, {bad}, o);
        QVERIFY(byPos.separates());
    }

    void inputErrors() {
        auto good = makeRun(8, 20, 1.0);
        CalibrateOptions o;
        o.quantile = 1.5;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, calibrate(good, {}, o));
        o = {};
        o.margin = -1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, calibrate(good, {}, o));
        o = {};
        o.perSlice = "nope";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, calibrate(good, {}, o));
        o = {};
        o.metrics = {"length"};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, calibrate(good, {}, o));
        // Metrics the data cannot support are left out, with a note.
        const Calibration cal = calibrate(good, {}, CalibrateOptions{});
        QVERIFY(cal.goodPasses());
        QVERIFY(cal.separates());   // no bad runs: passing the good run is all there is to show
        QVERIFY(std::any_of(cal.notes.begin(), cal.notes.end(),
                            [](const std::string& n) { return n.rfind("tv:", 0) == 0; }));
    }
};

QTEST_GUILESS_MAIN(TestCalibrate)
#include "test_calibrate.moc"
