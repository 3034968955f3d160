// Large fresh arrays mapped in one call (issue 17): a per-token array of 50M doubles is
// 400 MB, and touching it the first time cost 100,000 page faults, one exception each.
#pragma once

#include <cstddef>
#include <vector>

namespace kcx {

// Asks for transparent huge pages for [p, p + bytes) (MADV_HUGEPAGE, as numpy does for its
// arrays of 4 MB and more) and, where turned on, maps the range writable now in one system
// call (Linux's MADV_POPULATE_WRITE, kernel 5.14 and later), for memory about to be written
// whole. Only for ranges of at least 4 MB; a no-op where the calls do not exist or fail.
// Huge pages: on 2026-12-03 a 2 MB page the host had not yet backed took longer than 512
// small ones on this project's virtual machines (a command took 0.2 or 0.9 s); on
// 2026-12-07 a small page's first touch cost 15 us there (1 GiB: 4.0 s; with huge pages
// 2.4 s the first time, 0.11 s after), and `kcx check` on 10M tokens went from 0.7 to
// 0.35 s with them (docs/performance.md).
void prefault(void* p, size_t bytes);

// Populating is off by default (huge pages are always asked for): the call holds the
// process's memory map while it maps, and a window thread that maps or unmaps meanwhile
// (an image, a large free) waits for it; beside a busy process that stalled the window's
// event loop 40 ms. Commands, which have no event loop, turn it on (app/common.cpp).
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
