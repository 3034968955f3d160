#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 60) on its corpus, one after another.
# Usage: fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]
# The checked-in seeds are in fuzz/seeds/TARGET; new inputs go to BUILD_DIR/corpus/TARGET,
# crashes to BUILD_DIR/findings/TARGET. Exits 1 if any target found something.
set -u
build="$1"; secs="${2:-60}"; shift; [ $# -gt 0 ] && shift
here="$(cd "$(dirname "$0")" && pwd)"
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(load_run safetensors jsonl contract signoff import)
status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"; findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  seeds="$here/seeds/$t"; [ -d "$seeds" ] || seeds="$here/seeds/load_run"
  log="$build/fuzz-$t.log"
  "$build/fuzz_$t" "$corpus" "$seeds" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
     -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  echo "fuzz_$t: exit $rc, ${execs:-?} executions in ${secs}s, $(ls "$findings" | wc -l) findings (log $log)"
  [ $rc -ne 0 ] && { status=1; grep -m3 -E "FINDING|ERROR|SUMMARY" "$log"; }
done
exit $status
