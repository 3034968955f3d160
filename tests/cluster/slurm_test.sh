#!/usr/bin/env bash
# The Slurm path of SPEC 10 end to end (issue 19): brings up a private one-node Slurm
# cluster (munged, slurmctld, slurmd; no systemd, no accounting, everything under one temp
# dir), submits scripts/slurm/kcx-summarize-array on 8 shard runs, waits for the array and
# its dependent merge, and checks the merged summary is byte-identical to one
# `kcx summarize` of the same shard paths in one process. docs/summaries.md.
#
# Usage: slurm_test.sh KCX SOURCE_DIR
# Needs root (slurmd runs jobs as their users) and Debian's slurm-wlm and munge
# (packaging/debian-packages.txt); without them it exits 77, CTest's SKIP_RETURN_CODE.
# Never touches a daemon it did not start: it stops its own by PID on exit, and stays off
# /run/munge, /etc/munge and /etc/slurm (own key, socket, config, spool, ports).
# KCX_SLURM_TEST_KEEP=1 keeps the temp dir (logs, config) for a look afterwards.
set -uo pipefail
skip_code=77
kcx="${1:?usage: slurm_test.sh KCX SOURCE_DIR}"
src="${2:?usage: slurm_test.sh KCX SOURCE_DIR}"
submit="$src/scripts/slurm/kcx-summarize-array"
py=/usr/bin/python3
export PATH="$PATH:/usr/sbin:/sbin"
t_start=$(date +%s)

skip() { echo "SKIP: $*"; exit $skip_code; }
[ "$(id -u)" -eq 0 ] || skip "needs root: slurmd must run as root to start jobs"
for b in munged munge slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
  command -v "$b" >/dev/null || skip "'$b' is not installed (Debian's slurm-wlm and munge: packaging/debian-packages.txt)"
done
[ -x "$kcx" ] || { echo "FAIL [setup]: kcx '$kcx' is not executable"; exit 1; }
[ -x "$submit" ] || { echo "FAIL [setup]: '$submit' is not executable"; exit 1; }

# A Slurm job environment around this test (CI on a cluster) must not steer the clients.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^SLURM_' || true)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/kcx-slurm.XXXXXX")" || { echo "FAIL [setup]: mktemp"; exit 1; }
chmod 755 "$tmp"   # munged wants its socket's directories searchable by everyone
conf="$tmp/etc/slurm.conf"
step="setup"
munged_pid="" slurmctld_pid="" slurmd_pid=""

# --- Stopping what this test started, whatever happens. ----------------------------------
stop_pid() {  # stop_pid NAME PID: TERM, up to 10 s grace, then KILL; reaps it
  local name="$1" pid="$2" i
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "cleanup: $name ($pid) ignored SIGTERM for 10 s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  return 0
}
our_strays() {  # processes carrying this test's SLURM_CONF: slurmstepd and job steps
  local e pid
  for e in /proc/[0-9]*/environ; do
    pid="${e#/proc/}"; pid="${pid%/environ}"
    [ "$pid" != "$$" ] && [ "$pid" != "$BASHPID" ] || continue
    { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf" && echo "$pid"
  done
}
cleanup() {
  local rc=$? pid
  trap - EXIT INT TERM
  if [ -n "$slurmctld_pid" ] && kill -0 "$slurmctld_pid" 2>/dev/null; then
    timeout 10 scancel --quiet --user=root 2>/dev/null || true
  fi
  stop_pid slurmd "$slurmd_pid"
  stop_pid slurmctld "$slurmctld_pid"
  # slurmstepd daemonises away from slurmd; it and its job carry our SLURM_CONF.
  for pid in $(our_strays); do kill -KILL "$pid" 2>/dev/null; done
  stop_pid munged "$munged_pid"
  if [ "${KCX_SLURM_TEST_KEEP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

dump_logs() {
  local f
  for f in "$tmp"/munge/munged.log "$tmp"/log/slurmctld.log "$tmp"/log/slurmd.log \
      "$tmp"/log/*.out "$tmp"/out*/logs/*; do
    [ -s "$f" ] || continue
    echo "----- ${f#$tmp/} (last 40 lines)"; tail -n 40 "$f"
  done
}
fail() {
  echo "FAIL [$step]: $*"
  if [ -n "$slurmctld_pid" ] && kill -0 "$slurmctld_pid" 2>/dev/null; then
    echo "----- sinfo"; timeout 5 sinfo -N -l 2>&1
    echo "----- squeue"; timeout 5 squeue -o '%i %j %T %r' 2>&1
    echo "----- scontrol show job"; timeout 5 scontrol -o show job 2>&1
  fi
  dump_logs
  exit 1
}
note() { echo "slurm_test: $*"; }
wait_for() {  # wait_for SECONDS WHAT COMMAND...: polls every 0.5 s
  local secs="$1" what="$2" i; shift 2
  for i in $(seq 1 $((secs * 2))); do "$@" && return 0; sleep 0.5; done
  fail "timed out after ${secs} s waiting for $what"
}

# --- The submit script's input errors (no daemon needed). -------------------------------
step="input errors"
mkdir -p "$tmp/bad" && : >"$tmp/bad/empty.list" && mkfifo "$tmp/bad/fifo"
printf '# only a comment\n\n' >"$tmp/bad/comment.list"
printf '%s\n' "$tmp/bad/empty.list" "$tmp/bad/nope.jsonl" >"$tmp/bad/missing.list"
printf '%s\n' "$tmp/bad/fifo" >"$tmp/bad/fifo.list"
expect_2() {  # expect_2 NAME TEXT ARGS...: exit 2 and TEXT in stderr
  local name="$1" text="$2" rc; shift 2
  "$submit" "$@" >"$tmp/bad/out" 2>"$tmp/bad/err"; rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2 ($(cat "$tmp/bad/err"))"
  grep -qF -- "$text" "$tmp/bad/err" || fail "$name: '$text' not in: $(cat "$tmp/bad/err")"
}
expect_2 "no SHARDS" "no SHARDS given" --out "$tmp/bad/o" --kcx "$kcx"
expect_2 "missing list" "does not exist" "$tmp/bad/none.list" --out "$tmp/bad/o" --kcx "$kcx"
expect_2 "empty list" "is empty" "$tmp/bad/empty.list" --out "$tmp/bad/o" --kcx "$kcx"
expect_2 "comment-only list" "is empty" "$tmp/bad/comment.list" --out "$tmp/bad/o" --kcx "$kcx"
mkdir -p "$tmp/bad/emptydir"
expect_2 "empty directory" "is empty" "$tmp/bad/emptydir" --out "$tmp/bad/o" --kcx "$kcx"
expect_2 "missing shard" "shard '$tmp/bad/nope.jsonl' does not exist" "$tmp/bad/missing.list" --out "$tmp/bad/o" --kcx "$kcx"
expect_2 "unreadable shard" "is not a readable file" "$tmp/bad/fifo.list" --out "$tmp/bad/o" --kcx "$kcx"
expect_2 "unknown option" "unknown option" --frobnicate
note "input errors: exit 2 with a message for each"

# --- 8 shard runs (SPEC 1.1 JSONL, distinct ids, 3 steps, 2 slices). --------------------
step="shards"
mkdir -p "$tmp/shards"
"$py" - "$tmp/shards" <<'EOF' || fail "writing the shard runs"
import json, sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(19)
for s in range(1, 9):
    with open(f"{out}/s{s}.jsonl", "w") as f:
        for i in range(40):
            T = int(rng.integers(4, 24))
            lp_t = -rng.gamma(1.5, 0.6, T)
            lp_i = lp_t + rng.normal(0, 0.02 * s, T)
            rec = {"id": f"shard{s}-seq{i}", "step": int(i % 3) * 10,
                   "slices": {"task": ["math", "code"][i % 2]},
                   "tokens": [int(x) for x in rng.integers(0, 32000, T)],
                   "logp_train": [float(x) for x in lp_t],
                   "logp_inf": [float(x) for x in lp_i]}
            f.write(json.dumps(rec) + "\n")
EOF
shard_paths=()
for s in 1 2 3 4 5 6 7 8; do shard_paths+=("$tmp/shards/s$s.jsonl"); done
runs=(); for p in "${shard_paths[@]}"; do runs+=(--run "$p"); done

expect_2 "missing kcx" "is not an executable file" "$tmp/shards" --out "$tmp/bad/o" --kcx "$tmp/bad/none"
expect_2 "kcx without summarize" "has no summarize subcommand" "$tmp/shards" --out "$tmp/bad/o" --kcx /bin/false
# A directory is one task per entry, in name order, paths as "DIR/ENTRY".
step="dry run"
"$submit" "$tmp/shards" --out "$tmp/dry" --kcx "$kcx" --dry-run >"$tmp/dry.txt" 2>&1 \
  || fail "--dry-run: $(cat "$tmp/dry.txt")"
printf '%s\n' "${shard_paths[@]}" | cmp -s - "$tmp/dry/tasks.list" || fail "tasks.list of the shard directory: $(cat "$tmp/dry/tasks.list")"
grep -q -- '--array=0-7 ' "$tmp/dry.txt" || fail "--dry-run does not submit --array=0-7: $(cat "$tmp/dry.txt")"

# --- munged: own key, socket, pid, log and seed. -----------------------------------------
step="munged"
mkdir -p "$tmp/munge-key" "$tmp/munge" "$tmp/etc" "$tmp/log" "$tmp/state" "$tmp/spool"
chmod 700 "$tmp/munge-key"; chmod 755 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge-key/munge.key" bs=1024 count=1 status=none || fail "writing the munge key"
chmod 400 "$tmp/munge-key/munge.key"
sock="$tmp/munge/munge.socket"
munged --foreground --force --socket="$sock" --key-file="$tmp/munge-key/munge.key" \
  --log-file="$tmp/munge/munged.log" --pid-file="$tmp/munge/munged.pid" \
  --seed-file="$tmp/munge/munged.seed" >"$tmp/log/munged.out" 2>&1 &
munged_pid=$!
munge_ok() { kill -0 "$munged_pid" 2>/dev/null || fail "munged exited"; munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; }
wait_for 15 "munged to answer on $sock" munge_ok
note "munged up (pid $munged_pid)"

# --- slurm.conf: one node, this machine, no accounting, unusual free ports. -------------
step="slurm.conf"
host="$(hostname -s)"
port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
ctl_port=""
for try in $(seq 1 20); do
  p=$((21000 + RANDOM % 20000))
  if port_free "$p" && port_free $((p + 1)); then ctl_port=$p; break; fi
done
[ -n "$ctl_port" ] || fail "no two free adjacent ports found"
node_line="$(slurmd -C 2>/dev/null | grep '^NodeName=')" || fail "slurmd -C printed no NodeName line"
# slurmd -C names the node by its host name; run it at 127.0.0.1 so no DNS is needed.
cat >"$conf" <<EOF
# Written by tests/cluster/slurm_test.sh: a one-node cluster private to this test.
ClusterName=kcxtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctl_port
SlurmdPort=$((ctl_port + 1))
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
ReturnToService=2
MinJobAge=600
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=kcx Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$conf"

# --- slurmctld and slurmd in the foreground (-D), in the background of this shell. ------
step="slurmctld"
slurmctld -D -i >"$tmp/log/slurmctld.out" 2>&1 &
slurmctld_pid=$!
ctl_ok() { kill -0 "$slurmctld_pid" 2>/dev/null || fail "slurmctld exited"; scontrol ping 2>/dev/null | grep -q 'is UP'; }
wait_for 30 "slurmctld to answer scontrol ping" ctl_ok
note "slurmctld up (pid $slurmctld_pid, port $ctl_port)"
step="slurmd"
slurmd -D -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
node_idle() {
  kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd exited"
  [ "$(sinfo -h -n "$host" -o %T 2>/dev/null)" = idle ]
}
wait_for 60 "node $host to be idle in sinfo" node_idle
note "slurmd up (pid $slurmd_pid), node $host idle"

# --- Two submissions at once: the shard directory (8 tasks, one shard each) and a list
# file grouping the same paths into 5 tasks (several --run read as one run in a task).
step="submit"
printf '%s\n' "# grouped: the merge must not care" \
  "${shard_paths[0]} ${shard_paths[1]}" "${shard_paths[2]}" \
  "${shard_paths[3]} ${shard_paths[4]} ${shard_paths[5]}" "" "${shard_paths[6]}" "${shard_paths[7]}" \
  >"$tmp/grouped.list"
submit_array() {  # submit_array LABEL SHARDS OUTDIR: sets array_id, merge_id
  "$submit" "$2" --out "$3" --kcx "$kcx" --time 5 --cpus 1 --job-name "kcx-$1" >"$tmp/submit-$1.txt" 2>&1 \
    || fail "kcx-summarize-array ($1): $(cat "$tmp/submit-$1.txt")"
  local w1 w2
  read -r w1 array_id w2 merge_id <"$tmp/submit-$1.txt"
  [ "$w1" = array ] && [ "$w2" = merge ] && [[ "$array_id" =~ ^[0-9]+$ ]] && [[ "$merge_id" =~ ^[0-9]+$ ]] \
    || fail "kcx-summarize-array ($1) printed '$(cat "$tmp/submit-$1.txt")', not 'array ID merge ID'"
  note "submitted $1: array $array_id merge $merge_id"
}
submit_array dir "$tmp/shards" "$tmp/out"; dir_ids=("$array_id" "$merge_id")
submit_array grouped "$tmp/grouped.list" "$tmp/out-grouped"; grouped_ids=("$array_id" "$merge_id")

step="jobs"
jobs_done() {  # no record of any of the four jobs is still pending or running
  local recs
  recs="$(for j in "${dir_ids[@]}" "${grouped_ids[@]}"; do scontrol -o show job "$j" 2>/dev/null; done)"
  [ -n "$recs" ] || fail "scontrol knows none of the jobs"
  ! grep -qE 'JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING)' <<<"$recs"
}
wait_for 240 "the arrays and the merges to finish" jobs_done
check_jobs() {  # check_jobs LABEL ARRAY_ID MERGE_ID NTASKS: every task and the merge COMPLETED, exit 0
  local label="$1" aid="$2" mid="$3" n="$4" a rec state code
  scontrol -o show job "$aid" >"$tmp/$label.array.jobs" 2>&1
  scontrol -o show job "$mid" >"$tmp/$label.merge.jobs" 2>&1
  for a in $(seq 0 $((n - 1))); do
    rec="$(grep -E "ArrayJobId=$aid ArrayTaskId=$a " "$tmp/$label.array.jobs")" \
      || fail "$label: no record of array task $a: $(cat "$tmp/$label.array.jobs")"
    state="$(grep -oE 'JobState=[A-Z_]+' <<<"$rec")"; code="$(grep -oE ' ExitCode=[0-9:]+' <<<"$rec")"
    [ "$state" = JobState=COMPLETED ] && [ "$code" = " ExitCode=0:0" ] || fail "$label: array task $a: $state$code"
  done
  [ "$(grep -c "ArrayJobId=$aid " "$tmp/$label.array.jobs")" -eq "$n" ] \
    || fail "$label: not $n array tasks: $(cat "$tmp/$label.array.jobs")"
  state="$(grep -oE 'JobState=[A-Z_]+' "$tmp/$label.merge.jobs")"; code="$(grep -oE ' ExitCode=[0-9:]+' "$tmp/$label.merge.jobs")"
  [ "$state" = JobState=COMPLETED ] && [ "$code" = " ExitCode=0:0" ] || fail "$label: merge job $mid: $state$code"
  note "$label: array tasks 0-$((n - 1)) and the merge COMPLETED, exit 0"
}
check_jobs dir "${dir_ids[@]}" 8
check_jobs grouped "${grouped_ids[@]}" 5

# --- The merged summary against one process. --------------------------------------------
step="compare"
"$kcx" summarize "${runs[@]}" --out "$tmp/one.kcxsum" >"$tmp/one.txt" 2>&1 || fail "kcx summarize in one process: $(cat "$tmp/one.txt")"
for label in dir grouped; do
  o="$tmp/out"; [ $label = dir ] || o="$tmp/out-$label"
  [ -s "$o/merged.kcxsum" ] || fail "no $o/merged.kcxsum"
  cmp "$o/merged.kcxsum" "$tmp/one.kcxsum" || fail "$label: the merged summary differs from the one-process summary"
done
note "both merged.kcxsum byte-identical to one kcx summarize of the 8 shards ($(stat -c %s "$tmp/one.kcxsum") bytes)"
out="$tmp/out"
step="metrics"
"$kcx" metrics --run "$out/merged.kcxsum" --json - >"$tmp/merged.metrics.json" 2>"$tmp/m1.err" || fail "kcx metrics on the merged summary: $(cat "$tmp/m1.err")"
"$kcx" metrics --run "$tmp/one.kcxsum" --json - >"$tmp/one.metrics.json" 2>"$tmp/m2.err" || fail "kcx metrics on the one-process summary: $(cat "$tmp/m2.err")"
# The JSON names the file it read ("path"); with that one string swapped, the same bytes.
sed "s|$out/merged.kcxsum|$tmp/one.kcxsum|g" "$tmp/merged.metrics.json" >"$tmp/merged.metrics.renamed.json"
cmp "$tmp/merged.metrics.renamed.json" "$tmp/one.metrics.json" \
  || fail "kcx metrics --json differs between the merged and the one-process summary (beyond the file's path)"
note "kcx metrics --json of both summaries identical (but for the file's path)"
note "passed in $(( $(date +%s) - t_start )) s"
