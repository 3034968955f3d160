// Core benchmarks (issue 2, item 7), never run by CTest. Results go to docs/performance.md.
//
//   bench_core [--dir DIR] [--reps N]
//
// (a) sampled-log-prob metric + mean/max/p50/p99/p99.9 over 10M float32 tokens;
// (b) full-logit tv, kl and logit_drift (the whole full-logit pass) over 2,048 x 32,000
//     float32 rows per kernel;
// (c) opening a 10M-token safetensors run, parsing a 1M-token JSONL run.
// The inputs of (c) are DIR/bench_10m.safetensors and DIR/bench_1m.jsonl, written by
// `bench/numpy_bench.py --write-inputs DIR` so that numpy and KCX read the same bytes;
// when absent, this program writes equivalent files itself.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/formats/loader.h"
#include "core/formats/run_writer.h"
#include "core/metrics/metrics.h"

using namespace kcx;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

template <class F>
double median(int reps, F&& f) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        const auto a = Clock::now();
        f();
        t.push_back(seconds(a, Clock::now()));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

long rssKb() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stol(line.substr(6));
    return -1;
}

// Log-probs like a sampled policy: lp_train ~ -Exp(1), lp_inf = lp_train + N(0, 0.01).
std::shared_ptr<Run> syntheticRun(size_t tokens, size_t seqLen, uint64_t seed) {
    std::mt19937_64 rng(seed);
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
    for (size_t s = 0; s < n; ++s)
        run->ids.push_back(std::string("s").append(std::to_string(s)));   // not "s" + ...: GCC 12 -Wrestrict false positive
    run->offsets = Array<int64_t>(std::move(off));
    run->tokens = Array<int32_t>(std::vector<int32_t>(tokens, 7));
    run->lpTrain = Column(Array<float>(std::move(a)));
    run->lpInf = Column(Array<float>(std::move(b)));
    return run;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir = "/tmp/kcx-bench";
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
    }
    std::filesystem::create_directories(dir);
    std::printf("kcx bench_core: %u hardware threads, median of %d runs\n\n", std::thread::hardware_concurrency(), reps);

    // (a) one sampled-log-prob metric and its summary over 10M tokens.
    {
        const size_t M = 10'000'000;
        auto run = syntheticRun(M, 1000, 1);
        double metricOnly = 0;
        const double t = median(reps, [&] {
            MetricEngine engine(run);
            const auto a = Clock::now();
            const auto v = engine.get("abs_log_ratio");
            metricOnly = seconds(a, Clock::now());
            const Summary s = summarize(*v);
            if (!s.p999)
                std::abort();
        });
        std::printf("(a) abs_log_ratio + mean/min/max/p50/p99/p99.9, 10M float32 tokens: %.1f ms "
                    "(%.0f M tokens/s; the metric alone %.1f ms)\n",
                    t * 1e3, double(M) / t / 1e6, metricOnly * 1e3);
        const double t2 = median(reps, [&] {
            MetricEngine engine(run);
            for (const char* m : {"log_ratio", "ratio", "k3", "clip_excess"})
                summarize(*engine.get(m));
        });
        std::printf("    log_ratio, ratio, k3, clip_excess with summaries: %.1f ms (%.0f M tokens/s per metric)\n",
                    t2 * 1e3, 4 * double(M) / t2 / 1e6);
    }
    // (b) the full-logit pass over 2,048 x 32,000 float32 rows per kernel.
    {
        const size_t P = 2048, V = 32000;
        auto run = syntheticRun(P, 256, 2);
        std::mt19937_64 rng(3);
        std::normal_distribution<float> z(0.0f, 3.0f), d(0.0f, 0.02f);
        std::vector<float> lt(P * V), li(P * V);
        for (size_t i = 0; i < P * V; ++i) {
            lt[i] = z(rng);
            li[i] = lt[i] + d(rng);
        }
        std::vector<int64_t> rows(P);
        for (size_t i = 0; i < P; ++i)
            rows[i] = int64_t(i);
        run->logits.vocab = int64_t(V);
        run->logits.rows = Array<int64_t>(std::move(rows));
        run->logits.train = Column(Array<float>(std::move(lt)));
        run->logits.inf = Column(Array<float>(std::move(li)));
        const double t = median(reps, [&] {
            MetricEngine engine(run);
            engine.get("tv");   // computes tv, both KLs, drift, max |diff|, entropies, argmax together
        });
        const double tj = median(reps, [&] {
            MetricEngine engine(run);
            engine.get("js");   // the same pass with js (a logarithm per entry more)
        });
        const double bytes = 2.0 * double(P) * double(V) * 4;
        std::printf("(b) full-logit pass (tv, kl both ways, logit_drift, max_abs_logit_diff, entropies, top1), "
                    "2048 x 32000 x 2: %.1f ms (%.2f GB/s)\n    the same with js: %.1f ms (%.2f GB/s)\n",
                    t * 1e3, bytes / t / 1e9, tj * 1e3, bytes / tj / 1e9);
    }
    // (c) opening runs.
    {
        const std::string st = dir + "/bench_10m.safetensors", jl = dir + "/bench_1m.jsonl";
        if (!std::filesystem::exists(st)) {
            std::printf("    writing %s\n", st.c_str());
            writeSafetensors(*syntheticRun(10'000'000, 1000, 4), st, false);
        }
        if (!std::filesystem::exists(jl)) {
            std::printf("    writing %s\n", jl.c_str());
            auto r = syntheticRun(1'000'000, 2000, 5);
            writeJsonl(*r, jl);
        }
        const long before = rssKb();
        size_t tokens = 0;
        std::shared_ptr<Run> keep;
        const double tst = median(reps, [&] {
            keep = std::make_shared<Run>(loadSafetensors(st));
            tokens = keep->tokenCount();
        });
        // Touch every value once so the mapping is resident, then measure.
        MetricEngine e(keep);
        summarize(*e.get("log_ratio"));
        e.clear();
        const long after = rssKb();
        const double stBytes = double(std::filesystem::file_size(st));
        std::printf("(c) safetensors %zu tokens (%.0f MB): ready in %.1f ms; resident after touching it: %.0f MB "
                    "(%.2fx the file)\n", tokens, stBytes / 1e6, tst * 1e3, double(after - before) / 1024,
                    double(after - before) * 1024 / stBytes);
        keep.reset();
        const double jlBytes = double(std::filesystem::file_size(jl));
        size_t approx = 0;
        const double tj = median(reps, [&] {
            const Run r = loadJsonl(jl);
            tokens = r.tokenCount();
            approx = r.approxBytes();
        });
        std::printf("    JSONL %zu tokens (%.0f MB): %.1f ms (%.0f MB/s); %.1f bytes per token loaded\n", tokens,
                    jlBytes / 1e6, tj * 1e3, jlBytes / tj / 1e6, double(approx) / double(tokens));
    }
    return 0;
}
