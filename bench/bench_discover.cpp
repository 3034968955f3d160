// Slice discovery at scale (never run by CTest; docs/performance.md).
//
//   bench_discover [--tokens N] [--depth D] [--threads T]
//
// A synthetic run of N tokens (default 10M) in sequences of 200-1,800 tokens with ten
// slice keys: five labels (task 8 values, lang 6, source 10, dataset 12, difficulty 4) and
// five derived keys (position, length, p_inf buckets, runtime batch_size and
// kernel_version). A slice is planted: task=t3 at positions [1024, 4096) diverges twice as
// much. Times the metric, the derived codes and the search (depth 2, then 3).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/discover/discover.h"
#include "core/metrics/derived_slices.h"

using namespace kcx;
using Clock = std::chrono::steady_clock;

namespace {
double ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

std::shared_ptr<Run> syntheticRun(size_t tokens) {
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<size_t> len(200, 1800);
    std::exponential_distribution<float> ex(0.5f);
    std::normal_distribution<float> noise(0.0f, 0.01f);
    auto run = std::make_shared<Run>();
    const std::vector<std::pair<std::string, int>> labels = {
        {"task", 8}, {"lang", 6}, {"source", 10}, {"dataset", 12}, {"difficulty", 4}};
    for (const auto& [k, n] : labels) {
        run->slices.keys.push_back(k);
        std::vector<std::string> v;
        for (int i = 0; i < n; ++i)
            v.push_back(k.substr(0, 1) + std::to_string(i));
        run->slices.values.push_back(v);
    }
    std::vector<float> a, b;
    a.reserve(tokens);
    b.reserve(tokens);
    std::vector<int64_t> off{0};
    while (a.size() < tokens) {
        const size_t T = std::min(len(rng), tokens - a.size());
        int task = 0;
        for (size_t k = 0; k < labels.size(); ++k) {
            const int c = int(rng() % uint64_t(labels[k].second));
            run->slices.codes.push_back(c);
            if (k == 0)
                task = c;
        }
        run->ids.push_back(std::string("s").append(std::to_string(run->ids.size())));
        run->runtime.push_back({{"batch_size", 8 << (rng() % 6)}, {"kernel_version", std::string("v").append(std::to_string(rng() % 3))}});
        for (size_t p = 0; p < T; ++p) {
            const float lp = -ex(rng);
            const float scale = task == 3 && p >= 1024 ? 2.0f : 1.0f;
            a.push_back(lp + scale * noise(rng));
            b.push_back(lp);
        }
        off.push_back(int64_t(a.size()));
    }
    run->offsets = Array<int64_t>(off);
    run->tokens = Array<int32_t>(std::vector<int32_t>(a.size(), 1));
    run->lpTrain = Column(Array<float>(std::move(a)));
    run->lpInf = Column(Array<float>(std::move(b)));
    run->checkInvariants();
    return run;
}
}  // namespace

int main(int argc, char** argv) {
    size_t tokens = 10'000'000;
    int depth = 3, threads = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--tokens"))
            tokens = std::stoull(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--depth"))
            depth = std::stoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--threads"))
            threads = std::stoi(argv[i + 1]);
    }
    auto t0 = Clock::now();
    auto run = syntheticRun(tokens);
    std::printf("synthetic run: %zu tokens, %zu sequences (%.0f ms to build)\n", run->tokenCount(),
                run->sequenceCount(), ms(t0));
    MetricOptions mo;
    mo.threads = threads;
    MetricEngine engine(run, mo);
    t0 = Clock::now();
    engine.get("abs_log_ratio");
    std::printf("abs_log_ratio: %.0f ms\n", ms(t0));
    t0 = Clock::now();
    DerivedSlices derived(engine);
    for (const auto& k : derived.available())
        derived.get(k);
    std::printf("derived codes (%zu keys, standalone): %.0f ms\n", derived.available().size(), ms(t0));
    for (int d = 1; d <= depth; ++d) {
        DiscoverOptions o;
        o.maxDepth = d;
        o.threads = threads;
        t0 = Clock::now();
        const Discovery r = discover(engine, o);
        std::printf("depth %d: %.0f ms (derived codes included), %zu keys, %llu slices tested, %llu significant, "
                    "%zu findings\n",
                    d, ms(t0), r.keys.size(), (unsigned long long)r.tested, (unsigned long long)r.significant,
                    r.findings.size());
        if (!r.findings.empty()) {
            std::string c;
            for (const auto& x : r.findings[0].conditions)
                c += x.key + "=" + x.value + " ";
            std::printf("  first: %s effect %.4g [%.4g, %.4g] q %.3g\n", c.c_str(), r.findings[0].effect,
                        r.findings[0].ciLo, r.findings[0].ciHi, r.findings[0].qValue);
        }
    }
    return 0;
}
