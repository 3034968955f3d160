// Plain C++ threads for the core (no Qt): split [0, n) into contiguous chunks.
#pragma once

#include <cstddef>
#include <functional>

namespace kcx {

int resolveThreads(int requested);   // 0 = hardware concurrency, at least 1

// Runs body(chunkIndex, begin, end) for `chunks` contiguous ranges covering [0, n) on up
// to `threads` threads; rethrows the first exception. Chunks are handed out in order.
void parallelChunks(size_t n, size_t chunks, int threads,
                    const std::function<void(size_t, size_t, size_t)>& body);

}  // namespace kcx
