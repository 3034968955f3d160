// Large fresh arrays mapped in one call (issue 17): a per-token array of 50M doubles is
// 400 MB, and touching it the first time cost 100,000 page faults, one exception each.
#pragma once

#include <cstddef>
#include <vector>

namespace kcx {

// Maps [p, p + bytes) writable now, in one system call (Linux's MADV_POPULATE_WRITE,
// kernel 5.14 and later), for memory about to be written whole. Only for ranges of at
// least 4 MB; a no-op where the call does not exist or fails (the faults then come one by
// one, as before). Transparent huge pages were tried instead (MADV_HUGEPAGE): on this
// project's virtual machines a 2 MB page the host had not yet backed took longer than 512
// small ones, and the command's time became bimodal (0.2 or 0.9 s; docs/performance.md).
void prefault(void* p, size_t bytes);

// Off by default: the call holds the process's memory map while it maps, and a window
// thread that maps or unmaps meanwhile (an image, a large free) waits for it; beside a busy
// process that stalled the window's event loop 40 ms. Commands, which have no event loop,
// turn it on (app/common.cpp).
void setPrefaultLargeArrays(bool on);

// Reserves room for n values and maps it before anything touches it.
template <class T>
void reservePrefaulted(std::vector<T>& v, size_t n) {
    if (v.capacity() >= n)
        return;
    v.reserve(n);
    prefault(v.data(), v.capacity() * sizeof(T));
}

}  // namespace kcx
