// How long a test may wait for the window's background work: `ms` times KCX_TEST_WAIT_SCALE
// (tests/CMakeLists.txt sets it to the suite's time-limit scale: 6 under the sanitizers,
// where a 200,000-sequence load took 68 s on a busy 2-core machine).
#pragma once

#include <cstdlib>

namespace kcx::test {

inline int waitMs(int ms) {
    const char* s = std::getenv("KCX_TEST_WAIT_SCALE");
    const int scale = s ? std::atoi(s) : 1;
    return ms * (scale >= 1 && scale <= 100 ? scale : 1);
}

}  // namespace kcx::test
