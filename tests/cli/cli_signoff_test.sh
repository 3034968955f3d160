#!/usr/bin/env bash
# `kcx keygen`, `kcx sign`, `kcx verify` end to end (SPEC 6.4, docs/signoff.md) on the demo:
# key file modes, the private key never printed, what verify names when something differs,
# and trusted signers (SPEC 6.4 v1.1): exit 0 only for a trusted key with both files given.
# Usage: cli_signoff_test.sh KCX WORKDIR SIGNED_BEFORE_DIR
set -u
kcx="$1"; work="$2"; before="$3"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
py=/usr/bin/python3
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
check() {  # check NAME EXPECTED_EXIT COMMAND...  (all output is also kept in all.txt)
  local name="$1" want="$2"; shift 2
  "$@" >out.txt 2>err.txt; local got=$?
  cat out.txt err.txt >>all.txt
  if [ "$got" = "$want" ]; then ok; else bad "$name: exit $got, expected $want"; cat out.txt err.txt; fi
}
contains() {  # contains NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then ok; else bad "$1: '$3' not in $2:"; cat "$2"; fi
}
lacks() {  # lacks NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then bad "$1: '$3' in $2"; else ok; fi
}
: >all.txt
# Trusted signers come from KCX_TRUSTED_KEYS or ~/.config/kcx/trusted_keys: keep both here.
export HOME="$work/home"; mkdir -p "$HOME"
export KCX_TRUSTED_KEYS="$work/trusted_keys"
pubhex() { $py -c 'import json,sys; print(json.load(open(sys.argv[1]))["public_key"])' "$1"; }

# ---------------------------------------------------------------------------------------
# keygen: KEY private with mode 0600, KEY.pub public; never replaces a file.
# ---------------------------------------------------------------------------------------
for c in keygen sign verify; do check "$c-help" 0 "$kcx" "$c" --help; contains "$c-help" out.txt "Usage"; done
check keygen 0 "$kcx" keygen --out alice.key
[ -f alice.key ] && [ -f alice.key.pub ] && ok || bad "keygen did not write alice.key and alice.key.pub"
[ "$(stat -c %a alice.key)" = 600 ] && ok || bad "private key mode $(stat -c %a alice.key), expected 600"
check keygen-again 2 "$kcx" keygen --out alice.key
contains keygen-again err.txt "already exists"
check keygen-other 0 "$kcx" keygen --out mallory.key
check keygen-usage 2 "$kcx" keygen
secret=$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["secret_key"])' alice.key)
[ ${#secret} = 128 ] && ok || bad "secret_key is not 128 hex digits"
lacks secret-in-pub alice.key.pub "${secret:0:64}"

# ---------------------------------------------------------------------------------------
# sign the demo, verify it.
# ---------------------------------------------------------------------------------------
check demo 0 "$kcx" demo --out demo
cp demo/demo.jsonl run.jsonl; cp demo/demo-contract.yaml contract.yaml
check sign 0 "$kcx" sign --contract contract.yaml --run run.jsonl --key alice.key --reviewer "Alice Example" \
  --decision approve --comment "fp8 drift accepted for canary" --out signoff.json
$py - signoff.json contract.yaml run.jsonl <<'PY' >py.txt 2>&1 && ok || { bad "record fields"; cat py.txt; }
import hashlib, json, re, sys
r = json.load(open(sys.argv[1]))
want = {"kcx_signoff", "contract_sha256", "run_sha256", "results_sha256", "verdict", "stage", "action", "reviewer",
        "decision", "comment", "time", "kcx_version", "public_key", "key_fingerprint", "signature"}
assert set(r) == want, set(r) ^ want
assert r["contract_sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert r["run_sha256"] == hashlib.sha256(open(sys.argv[3], "rb").read()).hexdigest()
assert r["reviewer"] == "Alice Example" and r["decision"] == "approve"
assert r["comment"] == "fp8 drift accepted for canary"
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["time"]), r["time"]
assert r["key_fingerprint"] == hashlib.sha256(bytes.fromhex(r["public_key"])).hexdigest()[:16]
assert len(r["signature"]) == 128 and r["stage"] == "offline_ci"
PY
# A valid signature alone proves nothing: no trusted key and no files is 3, saying what.
check verify-nothing-trusted 2 "$kcx" verify signoff.json
contains verify-nothing-trusted err.txt "trusted_keys: cannot open the trusted keys file"
unset KCX_TRUSTED_KEYS   # the default file, ~/.config/kcx/trusted_keys, may be missing
check verify-no-trust 3 "$kcx" verify signoff.json --contract contract.yaml --run run.jsonl
contains verify-no-trust out.txt "Alice Example approved at"
contains verify-no-trust out.txt "UNCHECKED key: not checked: no trusted keys: $HOME/.config/kcx/trusted_keys does not exist"
contains verify-no-trust out.txt "ok       results: evaluating now gives the signed results"
contains verify-no-trust out.txt "NOT VERIFIED: nothing differs, but key could not be checked"
[ "$(tail -n 1 out.txt)" != verified ] && ok || bad "verify-no-trust: printed verified"
mkdir -p "$HOME/.config/kcx"
printf '# reviewers\nAlice Example\t%s\n' "$(pubhex alice.key.pub)" >"$HOME/.config/kcx/trusted_keys"
check verify 0 "$kcx" verify signoff.json --contract contract.yaml --run run.jsonl
contains verify out.txt "ok       key: key "
contains verify out.txt "is trusted for \"Alice Example\" ($HOME/.config/kcx/trusted_keys)"
contains verify out.txt "verified"
check verify-no-files 3 "$kcx" verify signoff.json
contains verify-no-files out.txt "UNCHECKED contract: not given (--contract)"
contains verify-no-files out.txt "NOT VERIFIED: nothing differs, but contract, run, results could not be checked"
export KCX_TRUSTED_KEYS="$work/trusted_keys"
cp "$HOME/.config/kcx/trusted_keys" "$KCX_TRUSTED_KEYS"
check verify-all 0 "$kcx" verify signoff.json --contract contract.yaml --run run.jsonl --pub alice.key.pub
contains verify-all out.txt "results: evaluating now gives the signed results"
contains verify-all out.txt "verified"
check sign-stage 0 "$kcx" sign --contract contract.yaml --run run.jsonl --key alice.key --reviewer Bob \
  --decision reject --stage full --out full.json
# Bob is nobody's trusted signer, whatever key signed.
check verify-stage 3 "$kcx" verify full.json --contract contract.yaml --run run.jsonl
contains verify-stage out.txt "Bob rejected at"
contains verify-stage out.txt "action at full:"
contains verify-stage out.txt "lists no key for \"Bob\""
check verify-stage-pub 0 "$kcx" verify full.json --contract contract.yaml --run run.jsonl --pub alice.key.pub
# Mallory signs as Alice with her own key: a valid signature, by the wrong key (exit 1).
check sign-as-alice 0 "$kcx" sign --contract contract.yaml --run run.jsonl --key mallory.key \
  --reviewer "Alice Example" --decision approve --out forged.json
check forged 1 "$kcx" verify forged.json --contract contract.yaml --run run.jsonl
contains forged out.txt "ok       record: the signature is valid"
contains forged out.txt "DIFFERS  key: key "
contains forged out.txt "is not the trusted key of \"Alice Example\""
contains forged out.txt "NOT VERIFIED: key differs"
# --trusted names another file; a missing or malformed one is unreadable input (2).
printf 'Alice Example\t%s\n' "$(pubhex mallory.key.pub)" >mallory_trusts
check forged-trusted 0 "$kcx" verify forged.json --contract contract.yaml --run run.jsonl --trusted mallory_trusts
check trusted-missing 2 "$kcx" verify signoff.json --trusted nothing.txt
contains trusted-missing err.txt "nothing.txt: cannot open the trusted keys file"
printf '# ok\nAlice Example %s\n' "$(pubhex alice.key.pub)" >spaces_not_tab
check trusted-no-tab 2 "$kcx" verify signoff.json --trusted spaces_not_tab
contains trusted-no-tab err.txt "spaces_not_tab:2: expected the reviewer's name, a tab"
printf 'Alice Example\tABCD\n' >short_key
check trusted-short-key 2 "$kcx" verify signoff.json --trusted short_key
contains trusted-short-key err.txt "short_key:1: the public key must be 64 lower-case hex digits"
check sign-bad-decision 2 "$kcx" sign --contract contract.yaml --run run.jsonl --key alice.key --reviewer Bob \
  --decision maybe --out x.json
check sign-pub-as-key 2 "$kcx" sign --contract contract.yaml --run run.jsonl --key alice.key.pub --reviewer Bob \
  --decision approve --out x.json
[ -e x.json ] && bad "sign wrote a record after an error" || ok

# ---------------------------------------------------------------------------------------
# What verify names when something differs (exit 1).
# ---------------------------------------------------------------------------------------
sed '0,/max: 0.3/s//max: 0.35/' contract.yaml >edited.yaml
cmp -s contract.yaml edited.yaml && bad "sed did not change the threshold" || ok
check contract-edited 1 "$kcx" verify signoff.json --contract edited.yaml --run run.jsonl
contains contract-edited out.txt "DIFFERS  contract: edited.yaml has changed since it was signed"
contains contract-edited out.txt "DIFFERS  results:"
contains contract-edited out.txt "NOT VERIFIED: contract, results differ"
lacks contract-edited out.txt "DIFFERS  run"

# One byte of the run: a digit in the second sequence's first log-prob.
$py - run.jsonl edited.jsonl <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
i = re.search(r'"logp_train":\s*\[', lines[2]).end()
while not lines[2][i].isdigit() or lines[2][i] == "0": i += 1
lines[2] = lines[2][:i] + str(int(lines[2][i]) % 9 + 1) + lines[2][i + 1:]
open(sys.argv[2], "w").write("\n".join(lines))
PY
[ "$(cmp -l run.jsonl edited.jsonl | wc -l)" = 1 ] && ok || bad "the edited run differs in more than one byte"
check run-edited 1 "$kcx" verify signoff.json --run edited.jsonl
contains run-edited out.txt "DIFFERS  run: edited.jsonl has changed since it was signed"
lacks run-edited out.txt "DIFFERS  record"
check run-edited-both 1 "$kcx" verify signoff.json --contract contract.yaml --run edited.jsonl
contains run-edited-both out.txt "DIFFERS  run"
lacks run-edited-both out.txt "DIFFERS  contract"

sed 's/"decision": "approve"/"decision": "reject"/' signoff.json >flipped.json
cmp -s signoff.json flipped.json && bad "sed did not flip the decision" || ok
check record-flipped 1 "$kcx" verify flipped.json --contract contract.yaml --run run.jsonl
contains record-flipped out.txt "DIFFERS  record: the signature is not valid"
lacks record-flipped out.txt "DIFFERS  contract"

check wrong-pub 1 "$kcx" verify signoff.json --pub mallory.key.pub
contains wrong-pub out.txt "DIFFERS  key: mallory.key.pub"
contains wrong-pub out.txt "is not the key in the record"
lacks wrong-pub out.txt "DIFFERS  record"

# ---------------------------------------------------------------------------------------
# Unreadable or malformed input (exit 2), named with the file and the key.
# ---------------------------------------------------------------------------------------
check missing-record 2 "$kcx" verify nothing.json
contains missing-record err.txt "nothing.json"
cp signoff.json unreadable.json; chmod 000 unreadable.json
if [ "$(id -u)" != 0 ]; then check unreadable-record 2 "$kcx" verify unreadable.json; fi
mkdir dir.json
check directory-record 2 "$kcx" verify dir.json
contains directory-record err.txt "dir.json"
echo '{"kcx_signoff": 1' >truncated.json
check truncated-record 2 "$kcx" verify truncated.json
contains truncated-record err.txt "truncated.json: not valid JSON"
$py -c 'import json,sys; r=json.load(open(sys.argv[1])); r["reviewer"]=7; json.dump(r, open(sys.argv[2], "w"))' \
  signoff.json typed.json
check malformed-record 2 "$kcx" verify typed.json
contains malformed-record err.txt "typed.json: reviewer: must be a string"
check missing-contract 2 "$kcx" verify signoff.json --contract nothing.yaml
check pub-is-private 2 "$kcx" verify signoff.json --pub alice.key
check verify-usage 2 "$kcx" verify

# ---------------------------------------------------------------------------------------
# A record signed by kcx before numerical results carried "ci", "confidence" and "beyond"
# (the quantile's interval; signed_before_ci/, its private key thrown away): the results
# hash leaves those out, so the record still verifies, while check --json writes them.
# ---------------------------------------------------------------------------------------
check signed-before 0 "$kcx" verify "$before/before.signoff.json" --contract "$before/contract.yaml" \
  --run "$before/run.jsonl" --pub "$before/signer.pub"
contains signed-before out.txt "evaluating now gives the signed results"
check signed-before-check 1 "$kcx" check --contract "$before/contract.yaml" --run "$before/run.jsonl" \
  --json before.json --quiet
if $py - before.json <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
quantiles = [r for r in res if r["family"] == "numerical" and r["aggregate"] != "mean"]
assert len(quantiles) == 5, quantiles
assert all("ci" in r and "beyond" in r and r["confidence"] == 0.95 for r in quantiles), quantiles
assert any(r["ci"][1] is None for r in quantiles), quantiles     # p90 of 24 values: no upper side
EOF
then ok; else bad "signed-before-check: the numerical quantiles lack ci/beyond"; fi

# Issue 16: a reviewer name with a newline, ESC sequences and a bidi override cannot make
# verify print a fake "ok … verified" line or hide the real ones: it is printed escaped.
evil=$(printf 'Mallory\nok       key: trusted signer\nverified\033[8m\xe2\x80\xae')
check sign-evil-name 0 "$kcx" sign --contract contract.yaml --run run.jsonl --key alice.key --reviewer "$evil" \
  --decision approve --out evil.signoff.json
"$kcx" verify evil.signoff.json --contract contract.yaml --run run.jsonl >evil.txt 2>&1
if grep -q $'\033' evil.txt; then bad "verify-evil: an ESC byte reached the terminal"; cat -v evil.txt; else ok; fi
if grep -q $'\xe2\x80\xae' evil.txt; then bad "verify-evil: a bidi override reached the terminal"; else ok; fi
if grep -qx 'verified.*' evil.txt; then bad "verify-evil: a line reading 'verified' was printed"; cat -v evil.txt; else ok; fi
contains verify-evil-escaped evil.txt 'Mallory\nok       key: trusted signer\nverified\x1b[8m\u{202E}'
rm -f evil.signoff.json

# The private key never appeared in anything kcx printed.
lacks secret-printed all.txt "${secret:0:32}"
lacks secret-printed all.txt "${secret:32:32}"   # the seed; the rest is the public key

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
