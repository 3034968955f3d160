#include "core/base/prefault.h"

#include <atomic>
#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace kcx {

namespace {
std::atomic<bool> prefaultOn{false};
}  // namespace

void setPrefaultLargeArrays(bool on) { prefaultOn = on; }

void prefault(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    constexpr uintptr_t kPage = 4096;
    if (!p || bytes < (size_t(4) << 20))
        return;
    // madvise wants a page-aligned start: the whole pages inside the range.
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
    if (end <= begin)
        return;
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    if (prefaultOn)
        (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

}  // namespace kcx
