// How long a test may wait for the window's background work: `ms` times KCX_TEST_WAIT_SCALE
// (tests/CMakeLists.txt sets it to the suite's time-limit scale: 6 under the sanitizers,
// where a 200,000-sequence load took 68 s on a busy 2-core machine).
#pragma once

#include <cmath>
#include <cstdlib>

namespace kcx::test {

inline int waitMs(int ms) {
    const char* s = std::getenv("KCX_TEST_WAIT_SCALE");
    const int scale = s ? std::atoi(s) : 1;
    return ms * (scale >= 1 && scale <= 100 ? scale : 1);
}

// True in the sanitizer suite (KCX_TEST_SHORT=1): a test that measures a rate over many seeds
// uses fewer there (its memory errors show on any seed; the rate is the regular suite's).
inline bool shortRun() {
    const char* s = std::getenv("KCX_TEST_SHORT");
    return s && s[0] == '1';
}

// The most of `n` independent events of probability p a test accepts: np + 3.3 √(np(1−p)),
// rounded down (a correct rate exceeds it with probability below 0.1 %).
inline int rateLimit(int n, double p) { return int(n * p + 3.3 * std::sqrt(n * p * (1 - p))); }

}  // namespace kcx::test
