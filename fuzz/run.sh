#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 60) on its corpus, one after another.
# Usage: fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]
# The checked-in seeds are in fuzz/seeds/TARGET; new inputs go to BUILD_DIR/corpus/TARGET,
# crashes to BUILD_DIR/findings/TARGET. Prints, per target, the executions, the processor
# time used and the findings of this run. Exits 1 if any target found something.
set -u
build="$1"; secs="${2:-60}"; shift; [ $# -gt 0 ] && shift
here="$(cd "$(dirname "$0")" && pwd)"
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(load_run safetensors jsonl contract signoff import summary)
status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"; findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  seeds="$here/seeds/$t"; [ -d "$seeds" ] || seeds="$here/seeds/load_run"
  log="$build/fuzz-$t.log"
  stamp="$build/fuzz-$t.started"; : > "$stamp"
  TIMEFORMAT='%U %S'
  cpu=$( { time "$build/fuzz_$t" "$corpus" "$seeds" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
       -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1; echo "rc=$?" >"$log.rc"; } 2>&1 )
  rc=$(sed -n 's/^rc=//p' "$log.rc")
  cpu=$(echo "$cpu" | awk '{printf "%.0f", $1 + $2}')
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  new=$(find "$findings" -type f -newer "$stamp" | wc -l)
  echo "fuzz_$t: exit $rc, ${execs:-?} executions in ${secs} s, ${cpu} CPU-seconds, $new new findings, corpus $(ls "$corpus" | wc -l) inputs (log $log)"
  if [ "$rc" != 0 ] || [ "$new" -ne 0 ]; then
    status=1
    grep -m5 -E "ERROR|SUMMARY|what\(\)|deadly signal" "$log"
    find "$findings" -type f -newer "$stamp"
  fi
done
exit $status
