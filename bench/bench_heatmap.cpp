// Heatmap benchmark (issue 4), never run by CTest. Results go to docs/performance.md.
//
//   bench_heatmap [--reps N] [--tokens M]
//
// A 10M-token run of 5,000 sequences (lengths 1,000-3,000) in 10 slice values: the index
// per row mode, a full grid rebuild (every row and position into 1,600 x 900 cells), a
// rebin after a pan or zoom, a threshold change for "share above", and colouring the
// indexed image. Budget: a full grid in at most 100 ms on 2 cores.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>

#include "core/heatmap/heatmap.h"
#include "ui/heatmap/heatmap_render.h"

using namespace kcx;
using Clock = std::chrono::steady_clock;

namespace {

double cpuMs() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

// Median wall time in ms; *cpu gets the median CPU time of all threads (on a loaded
// machine, CPU time / cores is what the wall time would be on an idle one).
template <class F>
double medianMs(int reps, F&& f, double* cpu = nullptr) {
    std::vector<double> t, c;
    for (int i = 0; i < reps; ++i) {
        const auto a = Clock::now();
        const double c0 = cpuMs();
        f();
        c.push_back(cpuMs() - c0);
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    std::sort(c.begin(), c.end());
    if (cpu)
        *cpu = c[c.size() / 2];
    return t[t.size() / 2];
}

struct Data {
    std::shared_ptr<Run> run;
    std::shared_ptr<MetricValues> values;
};

// |log ratio|-like values that grow with position, 1% missing.
Data syntheticRun(size_t tokens, size_t sequences, uint64_t seed) {
    std::mt19937_64 rng(seed);
    Data d{std::make_shared<Run>(), std::make_shared<MetricValues>()};
    std::vector<size_t> len(sequences);
    size_t total = 0;
    for (auto& l : len)
        total += l = 1000 + rng() % 2001;
    std::vector<int64_t> off{0};
    size_t sum = 0;
    for (size_t s = 0; s < sequences; ++s) {   // scale the lengths to `tokens` in all
        sum += len[s];
        off.push_back(int64_t(sum * tokens / total));
        d.run->ids.push_back(std::string("seq-").append(std::to_string(s)));
        d.run->slices.codes.push_back(int32_t(rng() % 10));
    }
    d.run->slices.keys = {"task"};
    d.run->slices.values.resize(1);
    for (int v = 0; v < 10; ++v)
        d.run->slices.values[0].push_back("task-" + std::to_string(v));
    d.run->offsets = Array<int64_t>(off);
    d.run->tokens = Array<int32_t>(std::vector<int32_t>(tokens, 1));
    auto& v = d.values->values;
    v.resize(tokens);
    std::exponential_distribution<double> ex(1.0);
    for (size_t s = 0; s < sequences; ++s)
        for (int64_t i = off[s]; i < off[s + 1]; ++i)
            v[size_t(i)] = rng() % 100 == 0 ? missingDouble() : 1e-3 * ex(rng) * (1 + double(i - off[s]) / 1000);
    d.values->name = "abs_log_ratio";
    d.values->count = tokens;
    return d;
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 7;
    size_t tokens = 10'000'000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--tokens"))
            tokens = size_t(std::atoll(argv[i + 1]));
    }
    std::printf("kcx bench_heatmap: %u hardware threads, median of %d runs\n", std::thread::hardware_concurrency(),
                reps);
    const Data d = syntheticRun(tokens, 5000, 42);
    std::printf("run: %zu tokens, %zu sequences, longest %zu, 10 slice values\n\n", d.run->tokenCount(),
                d.run->sequenceCount(), d.run->maxLength());
    const size_t W = 1600, H = 900;
    const struct {
        const char* name;
        HeatmapRowSpec spec;
    } modes[] = {{"all sequences", {HeatmapRows::AllSequences, "", ""}},
                 {"slice values", {HeatmapRows::SliceValues, "task", ""}},
                 {"sequences of one slice", {HeatmapRows::SequencesOfSlice, "task", "task-3"}}};
    for (const auto& m : modes) {
        std::shared_ptr<const HeatmapIndex> ix;
        double cpu = 0;
        const double build = medianMs(reps, [&] { ix = HeatmapIndex::build(d.run, d.values, m.spec); }, &cpu);
        std::printf("%s (%zu rows): index %.1f ms (cpu %.1f ms)\n", m.name, ix->rowCount(), build, cpu);
        const size_t rows = ix->rowCount(), len = ix->maxLength();
        for (auto a : {HeatmapAggregate::Mean, HeatmapAggregate::Max, HeatmapAggregate::ShareAbove}) {
            HeatmapRequest q{0, rows, H, 0, len, W, a, 0.004};
            double fullCpu = 0;
            const double full = medianMs(reps, [&] { computeGrid(*ix, q); }, &fullCpu);
            // Dragging the threshold: "share above" recounts; mean and max keep their values
            // (the view only re-marks the cached grid).
            q.threshold = 0.005;
            const double thr = a == HeatmapAggregate::ShareAbove ? medianMs(reps, [&] { computeGrid(*ix, q); }) : 0;
            // Zoomed to positions [1000, 1400) and a tenth of the rows, panned by 10 positions.
            q = {rows / 10, rows / 10 + std::max<size_t>(1, rows / 10), H, 1000, 1400, W, a, 0.004};
            size_t shift = 0;
            const double pan = medianMs(reps, [&] {
                shift = (shift + 10) % 200;
                q.pos0 = 1000 + shift;
                q.pos1 = 1400 + shift;
                computeGrid(*ix, q);
            });
            std::printf("  %-11s full grid %5.1f ms (cpu %5.1f) | zoomed pan %5.2f ms", aggregateName(a), full, fullCpu, pan);
            if (a == HeatmapAggregate::ShareAbove)
                std::printf(" | new threshold %5.1f ms", thr);
            std::printf("\n");
        }
        {
            // A clause's p99.9 (what the window shows for a quantile clause), widened so a
            // cell holds ~1,000 values.
            HeatmapRequest q{0, rows, H, 0, len, W, HeatmapAggregate::Quantile, 0.004, 0.999};
            q.fewBelow = 1000;
            q.widenForFew = true;
            double qCpu = 0;
            const double qMs = medianMs(reps, [&] { computeGrid(*ix, q); }, &qCpu);
            std::printf("  p99.9       full grid %5.1f ms (cpu %5.1f)\n", qMs, qCpu);
        }
        const HeatmapGrid g = computeGrid(*ix, {0, rows, H, 0, len, W, HeatmapAggregate::Mean, 0.004});
        const auto [lo, hi] = ui::colourRange(g, ui::ColourScale{});
        const ui::LevelMapper levels(lo, hi, false);
        const double img = medianMs(reps, [&] { ui::renderHeatmap(g, QSize(int(W), int(H)), levels, ui::ColourMap::Viridis); });
        std::printf("  colouring the %zu x %zu indexed image: %.1f ms\n\n", W, H, img);
    }
    return 0;
}
