// Plain C++ threads for the core (no Qt): split [0, n) into contiguous chunks.
#pragma once

#include <cstddef>
#include <functional>

namespace kcx {

// `requested` when > 0; for 0, KCX_THREADS if set (1..1024), else the CPUs this process may
// run on (sched affinity), else hardware concurrency. No result depends on it (kReduceBlock).
int resolveThreads(int requested);

// Runs body(chunkIndex, begin, end) for `chunks` contiguous ranges covering [0, n) on up
// to `threads` threads; rethrows the first exception. Chunks are handed out in order.
void parallelChunks(size_t n, size_t chunks, int threads,
                    const std::function<void(size_t, size_t, size_t)>& body);

// Reductions (sums, means) split their values into blocks of kReduceBlock values, whatever
// the number of threads, and combine the blocks' results in block order: a sum is the same
// double on 1, 2 or 64 cores, so a signed record's results verify on any machine
// (docs/signoff.md, "Same results on every machine").
constexpr size_t kReduceBlock = size_t(1) << 16;
inline size_t reduceBlocks(size_t n) { return n <= kReduceBlock ? 1 : (n + kReduceBlock - 1) / kReduceBlock; }

}  // namespace kcx
