#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (docs/reliability.md).
# Usage: scripts/sanitizer_suite.sh build DIR     configure and build the sanitizer build in DIR
#        scripts/sanitizer_suite.sh test DIR      run its CTest suite, offscreen, leaks checked
# CTest runs both steps (tests `sanitizer_build`, `sanitizer_suite`), so CI runs them.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
step="$1"; dir="$2"
case "$step" in
build)
  # -O1 keeps the suite's run time reasonable; no recovery, so a UBSan report fails the test.
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g"
  cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DKCX_CI_EXTRAS=OFF -DKCX_BENCH=OFF -DKCX_TEST_TIMEOUT_SCALE=6 >/dev/null
  cmake --build "$dir"
  ;;
test)
  export QT_QPA_PLATFORM=offscreen
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
  export LSAN_OPTIONS="suppressions=$here/tests/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  ctest --test-dir "$dir" --output-on-failure
  ;;
*)
  echo "usage: $0 build|test DIR" >&2; exit 2 ;;
esac
