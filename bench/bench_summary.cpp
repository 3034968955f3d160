// Where the time of reading a summary goes (issue 19): the phases of `kcx metrics` and the
// window on a summary, timed one by one over rounds. Built, never run by CTest.
//
//     build/bench_summary SUMMARY [--rounds N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/formats/sniff.h"
#include "core/summary/summary.h"

using namespace kcx;

namespace {
double seconds(std::chrono::steady_clock::time_point a) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_summary SUMMARY [--rounds N]\n");
        return 2;
    }
    const std::string path = argv[1];
    int rounds = 3;
    if (argc >= 4 && std::string(argv[2]) == "--rounds")
        rounds = std::atoi(argv[3]);
    for (int r = 0; r < rounds; ++r) {
        auto t = std::chrono::steady_clock::now();
        std::vector<size_t> members;   // where its gzip members began: pieces begin there
        auto bytes = std::make_shared<std::string>(readPlainOrGzip(path, kMaxSummaryBytes, "summary", &members));
        const double tRead = seconds(t);
        t = std::chrono::steady_clock::now();
        auto s = std::make_unique<RunSummary>(parseSummaryBinary(bytes, path, members));
        const double tParse = seconds(t);
        t = std::chrono::steady_clock::now();
        const auto all = s->total();
        const double tTotal = seconds(t);
        t = std::chrono::steady_clock::now();
        RunSummary m = *s;
        m.cells.clear();
        m.inputs.clear();
        m.merge(*s);
        const double tMerge = seconds(t);
        t = std::chrono::steady_clock::now();
        s.reset();
        const double tFree = seconds(t);
        std::printf("round %d: decompress %.3f s (%zu MB), parse %.3f s (%zu cells), total() %.3f s, "
                    "merge into empty %.3f s, free %.3f s\n",
                    r, tRead, bytes->size() >> 20, tParse, m.cells.size(), tTotal, tMerge, tFree);
    }
    return 0;
}
