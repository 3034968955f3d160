#!/usr/bin/env bash
# `kcx report` end to end on the demo (docs/report.md): the HTML and the PDF are written
# (without a display), a sign-off record beside the contract is listed as verified and as
# stale after the contract changes, and the exit codes: 0 written, 2 input or usage error.
# Usage: cli_report_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
check() {  # check NAME EXPECTED_EXIT COMMAND...
  local name="$1" want="$2"; shift 2
  "$@" >out.txt 2>err.txt; local got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$name: exit $got, expected $want"; cat out.txt err.txt; fi
}
contains() {  # contains NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then ok; else bad "$1: '$3' not in $2:"; head -c 2000 "$2"; echo; fi
}
lacks() {  # lacks NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then bad "$1: '$3' in $2"; else ok; fi
}

check help 0 "$kcx" report --help
contains help out.txt "--out"
check demo 0 "$kcx" demo --out demo
cp demo/demo.jsonl run.jsonl; cp demo/demo-contract.yaml contract.yaml

# HTML and PDF, with no display and no QT_QPA_PLATFORM: report picks offscreen itself.
check html 0 env -u QT_QPA_PLATFORM -u DISPLAY -u WAYLAND_DISPLAY "$kcx" report --contract contract.yaml --run run.jsonl --out report.html
contains html-says out.txt "wrote report.html"
contains html report.html "<!DOCTYPE html>"
for id in N1 N2 N3 N4 S1 S2 S3 R1 R2 O1; do contains "html-$id" report.html "<b>$id</b>"; done
contains html-verdict report.html ">FAIL</span>"
contains html-image report.html "data:image/png;base64,"
contains html-no-records report.html "No sign-off records"
lacks html-external report.html "https://"
check pdf 0 "$kcx" report --contract contract.yaml --run run.jsonl --out report.pdf --stage canary --quiet
[ "$(head -c 4 report.pdf)" = "%PDF" ] && ok || bad "report.pdf does not start with %PDF"
[ "$(stat -c %s report.pdf)" -gt 50000 ] && ok || bad "report.pdf is only $(stat -c %s report.pdf) bytes"
[ ! -s out.txt ] && ok || bad "--quiet printed: $(cat out.txt)"
if command -v pdftotext >/dev/null; then
  pdftotext report.pdf report.txt
  for id in N1 S1 R1 O1; do contains "pdf-$id" report.txt "$id"; done
  contains pdf-stage report.txt "canary (evaluated)"
fi

# A sign-off record beside the contract: verified; stale once the contract changes.
check keygen 0 "$kcx" keygen --out alice.key
# Only a trusted signer's record is "verified" (SPEC 6.4): Alice's key is listed.
export HOME="$work/home" KCX_TRUSTED_KEYS="$work/trusted_keys"
printf 'Alice\t%s\n' "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["public_key"])' alice.key.pub)" \
  >"$KCX_TRUSTED_KEYS"
check sign 0 "$kcx" sign --contract contract.yaml --run run.jsonl --key alice.key --reviewer "Alice" \
  --decision approve --out contract.signoff.json
check signed 0 "$kcx" report --contract contract.yaml --run run.jsonl --out signed.html
contains signed signed.html "<b>verified</b>"
contains signed-file signed.html "contract.signoff.json"
cp contract.yaml edited.yaml; cp contract.signoff.json edited.signoff.json
sed -i '1s/^#/# edited:/' edited.yaml
check stale 0 "$kcx" report --contract edited.yaml --run run.jsonl --out stale.html
contains stale stale.html "<b>stale: contract differs</b>"
# --signoff names a record elsewhere; the same record twice is listed once.
mkdir -p records; cp contract.signoff.json records/alice.json
check given 0 "$kcx" report --contract contract.yaml --run run.jsonl --out given.html --signoff records/alice.json \
  --signoff contract.signoff.json
[ "$(grep -o '<b>verified</b>' given.html | wc -l)" = 2 ] && ok || bad "given.html: expected 2 verified records"
# Mallory's key under Alice's name: a valid signature, and an untrusted signer.
check keygen-mallory 0 "$kcx" keygen --out mallory.key
check sign-forged 0 "$kcx" sign --contract contract.yaml --run run.jsonl --key mallory.key --reviewer "Alice" \
  --decision approve --out records/forged.json
check forged 0 "$kcx" report --contract contract.yaml --run run.jsonl --out forged.html --signoff records/forged.json
contains forged forged.html "<b>untrusted signer</b>"

# Input and usage errors: exit 2, naming the file.
check ext 2 "$kcx" report --contract contract.yaml --run run.jsonl --out report.txt
contains ext err.txt "report.txt"
check no-run 2 "$kcx" report --contract contract.yaml --run missing.jsonl --out x.html
contains no-run err.txt "missing.jsonl"
[ ! -e x.html ] && ok || bad "x.html written for a missing run"
check no-contract 2 "$kcx" report --contract missing.yaml --run run.jsonl --out x.html
contains no-contract err.txt "missing.yaml"
check no-out 2 "$kcx" report --contract contract.yaml --run run.jsonl
check bad-stage 2 "$kcx" report --contract contract.yaml --run run.jsonl --out x.html --stage nowhere
check bad-metric 2 "$kcx" report --contract contract.yaml --run run.jsonl --out x.html --metric reward_diff
check bad-signoff 2 "$kcx" report --contract contract.yaml --run run.jsonl --out x.html --signoff missing.signoff.json
contains bad-signoff err.txt "missing.signoff.json"
check no-dir 2 "$kcx" report --contract contract.yaml --run run.jsonl --out no/such/dir/r.html
contains no-dir err.txt "no/such/dir/r.html"

echo "cli_report: $pass passed, $fail failed"
[ "$fail" = 0 ]
