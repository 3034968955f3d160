#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ (docs/reliability.md), for CTest and CI.
# Usage: scripts/fuzz_suite.sh build DIR             configure and build them with clang-14
#        scripts/fuzz_suite.sh run DIR SECS TARGET   run one target for SECS on its corpus
# CTest runs `fuzz_build`, then `fuzz_TARGET` for 60 s each.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
step="$1"; dir="$2"
case "$step" in
build)
  cxx=$(command -v clang++-14 || command -v clang++ || true)
  if [ -z "$cxx" ]; then
    echo "fuzz: clang++-14 is not installed (scripts/setup.sh installs it: packaging/debian-packages.txt)" >&2
    exit 1
  fi
  cmake -S "$here" -B "$dir" -G Ninja -DKCX_FUZZ=ON -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$dir"
  ;;
run)
  exec bash "$here/fuzz/run.sh" "$dir" "$3" "$4"
  ;;
*)
  echo "usage: $0 build DIR | run DIR SECS TARGET" >&2; exit 2 ;;
esac
