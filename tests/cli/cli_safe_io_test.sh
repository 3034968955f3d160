#!/usr/bin/env bash
# Safe writes and reads from the command line (docs/reliability.md "Writing files",
# "Opening files"; issue 16 cases 3, 4, 7): an output that is an input is refused by name
# and the input is left as it was; a link planted at the old fixed temporary name is not
# followed; racing writers leave one whole file; FIFOs and devices given as inputs are
# refused at once (each wrapped in `timeout`, so a regression fails instead of hanging).
# Usage: cli_safe_io_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
py=/usr/bin/python3
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
check() {  # check NAME EXPECTED_EXIT COMMAND...   (run under timeout 10: 124 is a hang)
  local name="$1" want="$2"; shift 2
  timeout 10 "$@" >out.txt 2>err.txt </dev/null; local got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$name: exit $got, expected $want"; cat out.txt err.txt; fi
}
contains() {  # contains NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then ok; else bad "$1: '$3' not in $2:"; cat "$2"; fi
}
same() {  # same NAME FILE SHA256-BEFORE
  if [ "$(sha256sum <"$2")" = "$3" ]; then ok; else bad "$1: $2 changed"; fi
}
sum() { sha256sum <"$1"; }

check demo 0 "$kcx" demo --out demo
cp demo/demo.jsonl run.jsonl; cp demo/demo-contract.yaml contract.yaml
check keygen 0 "$kcx" keygen --out alice.key
key0=$(sum alice.key); run0=$(sum run.jsonl); contract0=$(sum contract.yaml)
sign=("$kcx" sign --contract contract.yaml --run run.jsonl --key alice.key --reviewer alice --decision approve)

# ---------------------------------------------------------------------------------------
# Outputs that are inputs: refused with exit 2, naming the role; the input unchanged.
# ---------------------------------------------------------------------------------------
check sign-out-key 2 "${sign[@]}" --out alice.key
contains sign-out-key err.txt "kcx: refusing to write alice.key: it is the input key alice.key"
same sign-out-key alice.key "$key0"
check sign-out-contract 2 "${sign[@]}" --out contract.yaml
contains sign-out-contract err.txt "refusing to write contract.yaml: it is the input contract contract.yaml"
check sign-out-run 2 "${sign[@]}" --out "$work/run.jsonl"
contains sign-out-run err.txt "refusing to write $work/run.jsonl: it is the input run run.jsonl"
ln -s alice.key key-link
check sign-out-key-link 2 "${sign[@]}" --out key-link
contains sign-out-key-link err.txt "refusing to write key-link: it is the input key alice.key"
same sign-out-key alice.key "$key0"

check check-json-run 2 "$kcx" check --contract contract.yaml --run run.jsonl --json run.jsonl
contains check-json-run err.txt "kcx: refusing to write run.jsonl: it is the input run run.jsonl"
check check-junit-contract 2 "$kcx" check --contract contract.yaml --run run.jsonl --junit contract.yaml
contains check-junit-contract err.txt "it is the input contract contract.yaml"
check metrics-per-token-run 2 "$kcx" metrics --run run.jsonl --per-token run.jsonl --quiet
contains metrics-per-token-run err.txt "refusing to write run.jsonl: it is the input run run.jsonl"
check convert-same 2 "$kcx" convert run.jsonl --out run.jsonl
contains convert-same err.txt "refusing to write run.jsonl: it is the input run run.jsonl"
ln run.jsonl hard.jsonl
check convert-hard-link 2 "$kcx" convert run.jsonl --out hard.jsonl
contains convert-hard-link err.txt "refusing to write hard.jsonl: it is the input run run.jsonl"
echo '{}' >inf.jsonl; echo '{}' >train.jsonl; inf0=$(sum inf.jsonl)
check import-out-inf 2 "$kcx" import --inf inf.jsonl --train train.jsonl --out inf.jsonl
contains import-out-inf err.txt "refusing to write inf.jsonl: it is the input inference side (--inf) inf.jsonl"
same import-out-inf inf.jsonl "$inf0"
check calibrate-out-good 2 "$kcx" calibrate --good run.jsonl --out run.jsonl --quiet
contains calibrate-out-good err.txt "it is the input run (--good) run.jsonl"
cp run.jsonl run.html   # runs are known by content: a run may be named like a report
check report-out-run 2 "$kcx" report --contract contract.yaml --run run.html --out run.html
contains report-out-run err.txt "refusing to write run.html: it is the input run run.html"
cmp -s run.jsonl run.html && ok || bad "report-out-run: run.html changed"
same inputs run.jsonl "$run0"
same inputs contract.yaml "$contract0"

# ---------------------------------------------------------------------------------------
# A link at the old fixed temporary name is not followed; the output a regular file. A
# link as the output itself is refused, naming it.
# ---------------------------------------------------------------------------------------
echo precious >victim.txt; victim0=$(sum victim.txt)
ln -s victim.txt out.safetensors.tmp
check convert-planted-link 0 "$kcx" convert run.jsonl --out out.safetensors --quiet
same convert-planted-link victim.txt "$victim0"
[ -f out.safetensors ] && [ ! -L out.safetensors ] && ok || bad "out.safetensors is not a regular file"
check convert-output-opens 0 "$kcx" metrics --run out.safetensors --quiet
ln -s victim.txt signoff.json.tmp
check sign-planted-link 0 "${sign[@]}" --out signoff.json
same sign-planted-link victim.txt "$victim0"
[ -f signoff.json ] && [ ! -L signoff.json ] && ok || bad "signoff.json is not a regular file"
ln -s victim.txt linked.safetensors
check convert-onto-link 2 "$kcx" convert run.jsonl --out linked.safetensors
contains convert-onto-link err.txt "linked.safetensors: is a symbolic link"
same convert-onto-link victim.txt "$victim0"
ls -a | grep -q 'kcx-tmp' && bad "temporary files left: $(ls -a | grep kcx-tmp)" || ok

# ---------------------------------------------------------------------------------------
# Racing writers: two signs to one --out, several times: always one whole record.
# ---------------------------------------------------------------------------------------
for i in 1 2 3 4 5; do
  "${sign[@]}" --comment "first $i" --out race.json >/dev/null 2>race1.txt & a=$!
  "${sign[@]}" --comment "second $i" --out race.json >/dev/null 2>race2.txt & b=$!
  wait $a; ra=$?; wait $b; rb=$?
  [ "$ra" = 0 ] && [ "$rb" = 0 ] && ok || { bad "race $i: exits $ra $rb"; cat race1.txt race2.txt; }
  $py -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["comment"] in ("first "+sys.argv[2], "second "+sys.argv[2])' \
    race.json "$i" && ok || bad "race $i: race.json is not one whole record"
done
check race-verifies 3 "$kcx" verify race.json --contract contract.yaml --run run.jsonl
[ "$(ls -a | grep -c 'kcx-tmp')" = 0 ] && ok || bad "temporaries left after the race"

# ---------------------------------------------------------------------------------------
# FIFOs and devices as inputs: refused at once by name, exit 2 (timeout would give 124).
# ---------------------------------------------------------------------------------------
mkfifo fifo
check fifo-run 2 "$kcx" check --contract contract.yaml --run fifo
contains fifo-run err.txt "fifo: is not a regular file (a FIFO)"
check fifo-contract 2 "$kcx" check --contract fifo --run run.jsonl
contains fifo-contract err.txt "fifo: is not a regular file (a FIFO)"
check fifo-record 2 "$kcx" verify fifo
contains fifo-record err.txt "fifo: is not a regular file (a FIFO)"
check fifo-key 2 "${sign[@]/alice.key/fifo}" --out s2.json
contains fifo-key err.txt "fifo: is not a regular file (a FIFO)"
check fifo-pub 2 "$kcx" verify signoff.json --pub fifo
contains fifo-pub err.txt "fifo: is not a regular file (a FIFO)"
check fifo-trusted 2 "$kcx" verify signoff.json --trusted fifo
contains fifo-trusted err.txt "fifo: is not a regular file (a FIFO)"
check fifo-metrics 2 "$kcx" metrics --run fifo
contains fifo-metrics err.txt "fifo: is not a regular file (a FIFO)"
check fifo-convert 2 "$kcx" convert fifo --out fifo-out.safetensors
contains fifo-convert err.txt "fifo: is not a regular file (a FIFO)"
check fifo-verify-run 2 "$kcx" verify signoff.json --contract contract.yaml --run fifo
contains fifo-verify-run err.txt "is not a regular file (a FIFO)"
check dev-zero 2 "$kcx" verify /dev/zero
contains dev-zero err.txt "kcx: /dev/zero: is not a regular file (a character device)"
check dev-zero-run 2 "$kcx" metrics --run /dev/zero
contains dev-zero-run err.txt "/dev/zero: is not a regular file (a character device)"
# An output that is a device or a pipe is written straight through, never renamed over
# (exit 1: the demo fails its contract).
check dev-null-out 1 "$kcx" check --contract contract.yaml --run run.jsonl --json /dev/null --quiet
[ -c /dev/null ] && ok || bad "/dev/null is no longer a device"
"$kcx" check --contract contract.yaml --run run.jsonl --json /dev/stdout --quiet | $py -c 'import json,sys; json.load(sys.stdin)' \
  && ok || bad "--json /dev/stdout into a pipe"
check dir-out 2 "$kcx" check --contract contract.yaml --run run.jsonl --json demo --quiet
contains dir-out err.txt "demo: is not a regular file (a directory)"

# A FIFO posing as a record beside the contract is never waited on.
mkfifo contract.fifo.signoff.json
check report-fifo-beside 0 "$kcx" report --contract contract.yaml --run run.jsonl --out report.html --quiet
[ -s report.html ] && ok || bad "report-fifo-beside: no report.html"
rm -f contract.fifo.signoff.json

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
