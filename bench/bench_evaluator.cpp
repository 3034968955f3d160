// Incremental re-evaluation (issue 3, item 3), never run by CTest. docs/performance.md.
//
//   bench_evaluator [--tokens N] [--reps N]
//
// On a synthetic run of N tokens (default 10M) in 10 task slices: the first evaluation
// (metric arrays + groups), a changed threshold (max; and an exceedance level, which sorts
// once on the first drag step), and a changed filter/positions (rebuilds one clause).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/evaluate/evaluator.h"

using namespace kcx;
using Clock = std::chrono::steady_clock;

namespace {
double ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

std::shared_ptr<Run> syntheticRun(size_t tokens, size_t seqLen) {
    std::mt19937_64 rng(11);
    std::exponential_distribution<float> ex(1.0f);
    std::normal_distribution<float> noise(0.0f, 0.01f);
    std::vector<float> a(tokens), b(tokens);
    for (size_t i = 0; i < tokens; ++i) {
        a[i] = -ex(rng);
        b[i] = std::min(0.0f, a[i] + noise(rng));
    }
    auto run = std::make_shared<Run>();
    const size_t n = (tokens + seqLen - 1) / seqLen;
    std::vector<int64_t> off(n + 1);
    for (size_t s = 0; s <= n; ++s)
        off[s] = int64_t(std::min(tokens, s * seqLen));
    run->slices.keys = {"task"};
    run->slices.values = {{}};
    for (int t = 0; t < 10; ++t)
        run->slices.values[0].push_back("task" + std::to_string(t));
    for (size_t s = 0; s < n; ++s) {
        run->ids.push_back(std::string("s").append(std::to_string(s)));   // GCC 12 -Wrestrict false positive
        run->slices.codes.push_back(int32_t(s % 10));
    }
    run->offsets = Array<int64_t>(std::move(off));
    run->tokens = Array<int32_t>(std::vector<int32_t>(tokens, 7));
    run->lpTrain = Column(Array<float>(std::move(a)));
    run->lpInf = Column(Array<float>(std::move(b)));
    return run;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
    size_t tokens = 10'000'000;
    int reps = 21;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--tokens"))
            tokens = std::stoull(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
    }
    Contract c;
    Clause n;
    n.id = "N1";
    n.family = Family::Numerical;
    n.metric = "abs_log_ratio";
    n.aggregate = parseAggregate("p99.9");
    n.max = Threshold{0.05, {}};
    n.perSlice = "task";
    c.clauses.push_back(n);
    Clause s;
    s.id = "S1";
    s.family = Family::Statistical;
    s.metric = "abs_log_ratio";
    s.test = Clause::Test::Exceedance;
    s.level = Threshold{0.02, {}};
    s.max = Threshold{0.1, {}};
    s.perSlice = "task";
    s.correction = Clause::Correction::Bonferroni;
    c.clauses.push_back(s);

    auto engine = std::make_shared<MetricEngine>(syntheticRun(tokens, 1000));
    Evaluator ev(engine, c);
    auto t0 = Clock::now();
    ev.evaluate();
    std::printf("first evaluation of 2 per-slice clauses over %zu tokens, 10 slices: %.1f ms\n", tokens, ms(t0));

    std::vector<double> tMax, tLevel, tFilter;
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(0.01, 0.08);
    for (int i = 0; i < reps; ++i) {
        ev.setThreshold("N1", "max", u(rng));
        t0 = Clock::now();
        ev.evaluate();
        tMax.push_back(ms(t0));
    }
    for (int i = 0; i < reps; ++i) {
        ev.setThreshold("S1", "level", u(rng));
        t0 = Clock::now();
        ev.evaluate();
        tLevel.push_back(ms(t0));
    }
    for (int i = 0; i < std::max(3, reps / 4); ++i) {
        Clause changed = n;
        changed.positions = std::make_pair(int64_t(0), int64_t(100 + 100 * i));
        ev.replaceClause(changed);
        t0 = Clock::now();
        ev.evaluate();
        tFilter.push_back(ms(t0));
    }
    std::printf("changed max (re-decide N1): first %.1f ms (buckets N1's groups), then median %.3f ms, slowest %.3f ms\n", tMax.front(),
                median(std::vector<double>(tMax.begin() + 1, tMax.end())), *std::max_element(tMax.begin() + 1, tMax.end()));
    std::printf("changed exceedance level (re-decide S1 by binary search in its sorted groups): first %.1f ms, "
                "median %.3f ms\n", tLevel.front(), median(tLevel));
    std::printf("changed positions filter (rebuild N1's groups): median %.1f ms\n", median(tFilter));
    return 0;
}
