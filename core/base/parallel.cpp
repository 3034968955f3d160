#include "core/base/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kcx {

int resolveThreads(int requested) {
    if (requested > 0)
        return requested;
    return std::max(1, int(std::thread::hardware_concurrency()));
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
