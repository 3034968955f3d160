#include "core/base/parallel.h"

#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kcx {

namespace {
// KCX_THREADS when set to a count in [1, 1024]; else the CPUs this process may run on (a
// Slurm job or `taskset` gets its share, not the node's); else hardware concurrency.
int defaultThreads() {
    if (const char* env = std::getenv("KCX_THREADS")) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (end != env && *end == 0 && n >= 1 && n <= 1024)
            return int(n);
    }
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    return std::max(1, int(std::thread::hardware_concurrency()));
}
}  // namespace

int resolveThreads(int requested) {
    if (requested > 0)
        return requested;
    static const int threads = defaultThreads();
    return threads;
}

void parallelChunks(size_t n, size_t chunks, int threads,
                    const std::function<void(size_t, size_t, size_t)>& body) {
    chunks = std::max<size_t>(1, std::min(chunks, std::max<size_t>(n, 1)));
    const size_t workers = std::min<size_t>(size_t(resolveThreads(threads)), chunks);
    std::atomic<size_t> next{0};
    std::exception_ptr error;
    std::mutex errorMutex;
    auto work = [&] {
        for (;;) {
            const size_t c = next.fetch_add(1);
            if (c >= chunks)
                return;
            {
                std::lock_guard lock(errorMutex);
                if (error)
                    return;
            }
            try {
                body(c, n * c / chunks, n * (c + 1) / chunks);
            } catch (...) {
                std::lock_guard lock(errorMutex);
                if (!error)
                    error = std::current_exception();
                return;
            }
        }
    };
    if (workers <= 1) {
        work();
    } else {
        std::vector<std::thread> pool;
        for (size_t i = 1; i < workers; ++i)
            pool.emplace_back(work);
        work();
        for (auto& t : pool)
            t.join();
    }
    if (error)
        std::rethrow_exception(error);
}

}  // namespace kcx
