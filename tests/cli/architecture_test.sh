#!/usr/bin/env bash
# The layering of docs/architecture.md (scripts/check_architecture.py): the tree passes,
# and a copy of it with each kind of breach planted fails, naming the file and line.
set -euo pipefail
src="$1"; work="$2"
check="$src/scripts/check_architecture.py"
python3 "$check" "$src"

plant() {   # plant DESCRIPTION EXPECTED-MESSAGE COMMAND...: a fresh copy, one breach, must fail
  local what="$1" expect="$2"; shift 2
  rm -rf "$work"; mkdir -p "$work"
  cp -r "$src/core" "$src/ui" "$work/"
  (cd "$work" && "$@")
  if out=$(python3 "$check" "$work"); then
    echo "FAIL: $what was not caught"; exit 1
  fi
  grep -qF -- "$expect" <<<"$out" || { echo "FAIL: $what: expected '$expect' in:"; echo "$out"; exit 1; }
  echo "ok: $what"
}
plant "formats including the evaluator" "core/formats/run.h:1: core/formats may not include core/evaluate/evaluator.h" \
  sed -i '1i #include "core/evaluate/evaluator.h"' core/formats/run.h
plant "a Qt header in core" "core/base/errors.h:1: core/ includes the Qt header QString" \
  sed -i '1i #include <QString>' core/base/errors.h
plant "core including ui" "core/metrics/metrics.h:1: core/ includes ui/session/session.h from a layer above it" \
  sed -i '1i #include "ui/session/session.h"' core/metrics/metrics.h
plant "a view including the window" "ui/charts/chart_data.h:1: ui/charts may not include ui/window/main_window.h" \
  sed -i '1i #include "ui/window/main_window.h"' ui/charts/chart_data.h
plant "a loose source" "core/loose.cpp:1: a source loose at the top of core/" touch core/loose.cpp
plant "an unlisted source" "ui/heatmap/extra.cpp:1: not listed in ui/heatmap/CMakeLists.txt" touch ui/heatmap/extra.cpp
echo "architecture: all breaches caught"
