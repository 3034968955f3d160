#!/usr/bin/env bash
# The command line end to end (SPEC 6): exit codes, help, errors, the JSON of 6.2.
# Usage: cli_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"   # check, contains, py, pass/fail

check version 0 "$kcx" --version;            contains version out.txt "kcx 0."
check help 0 "$kcx" --help;                  contains help out.txt "metrics"
check metrics-help 0 "$kcx" metrics --help;  contains metrics-help out.txt "--per-token"
check demo-help 0 "$kcx" demo --help;        contains demo-help out.txt "--out"
check unknown-sub 2 "$kcx" frobnicate;       contains unknown-sub err.txt "unknown subcommand 'frobnicate'"
check no-run 2 "$kcx" metrics;               contains no-run err.txt "--run"
check bad-option 2 "$kcx" metrics --run x --bogus
check missing-file 2 "$kcx" metrics --run nope.jsonl;  contains missing-file err.txt "nope.jsonl"

# lp_train = log 1/2, lp_inf = log 1/4 at one token; a second token is not logged (null).
printf '%s\n' '{"kcx_header": {"kernels": {"train": {"name": "t"}, "inf": {"name": "i"}}}}' \
  '{"id": "a", "slices": {"task": "math"}, "tokens": [3, 4], "logp_train": [-0.6931471805599453, -1], "logp_inf": [-1.3862943611198906, null], "reward_train": 1, "reward_inf": 0.25}' > small.jsonl
check json 0 "$kcx" metrics --run small.jsonl --json m.json --quiet
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL json contents"; }
import json, math
j = json.load(open("m.json"))
assert j["kcx"] == 1 and j["run"]["sequences"] == 1 and j["run"]["tokens"] == 2
assert len(j["run"]["sha256"]) == 64
m = j["metrics"]
assert abs(m["log_ratio"]["mean"] - math.log(2)) < 1e-15, m["log_ratio"]
assert m["log_ratio"]["count"] == 1 and m["log_ratio"]["missing_count"] == 1
assert m["ratio"]["max"] == 2.0
assert m["reward_diff"]["mean"] == -0.75
assert m["tv"]["count"] == 0 and m["tv"]["missing_count"] == 2 and "mean" not in m["tv"]
assert m["seq_log_ratio"]["count"] == 0 and m["seq_log_ratio"]["missing_count"] == 1
assert m["length"]["max"] == 2
PY
check json-stdout 0 "$kcx" metrics --run small.jsonl --json -
$py -c 'import json,sys; json.load(open("out.txt"))' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL stdout is not pure JSON"; }
check table 0 "$kcx" metrics --run small.jsonl;  contains table out.txt "abs_log_ratio"
check choose 0 "$kcx" metrics --run small.jsonl --metrics k3,tv --json c.json --quiet
$py -c 'import json; m=json.load(open("c.json"))["metrics"]; assert sorted(m) == ["k3","tv"], m' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL --metrics"; }
check bad-metric 2 "$kcx" metrics --run small.jsonl --metrics k3,tvv;  contains bad-metric err.txt "unknown metric 'tvv'"
check per-token 0 "$kcx" metrics --run small.jsonl --metrics log_ratio,k2 --per-token pt.csv --quiet
contains per-token-header pt.csv "sequence,position,token,log_ratio,k2"
contains per-token-row pt.csv "a,0,3,0.69314718055994529,0.24022650695910069"
contains per-token-missing pt.csv "a,1,4,,"
# Ids a spreadsheet would run as formulas are neutralised; numbers stay numbers (issue 16).
printf '%s\n' '{"id": "=HYPERLINK(\"http://evil\",\"x\")", "tokens": [3], "logp_train": [-1], "logp_inf": [-1]}' \
  '{"id": "-7", "tokens": [3], "logp_train": [-1], "logp_inf": [-1]}' \
  '{"id": "@cmd", "tokens": [3], "logp_train": [-1], "logp_inf": [-1]}' > formula.jsonl
check per-token-formula 0 "$kcx" metrics --run formula.jsonl --metrics log_ratio --per-token f.csv --quiet
contains per-token-formula-id f.csv "\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\",0,3,0"
contains per-token-number-id f.csv "-7,0,3,0"
contains per-token-at-id f.csv "'@cmd,0,3,0"

printf '%s\n' '{"id": "a", "tokens": [1, 2], "logp_train": [-1, -2], "logp_inf": [-1]}' > short.jsonl
check length-mismatch 2 "$kcx" metrics --run short.jsonl
contains length-mismatch err.txt "short.jsonl:1:"
contains length-mismatch err.txt "sequence 'a': logp_inf has 1 values but tokens has 2"
: > empty.jsonl
check empty 2 "$kcx" metrics --run empty.jsonl;  contains empty err.txt "empty.jsonl"

# The demo: deterministic, and readable by the metrics command in both formats.
check demo 0 "$kcx" demo --out d1
check demo-again 0 "$kcx" demo --out d2
cmp -s d1/demo.jsonl d2/demo.jsonl && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL demo not deterministic"; }
check demo-metrics 0 "$kcx" metrics --run d1/demo.jsonl --json dj.json --quiet
check demo-metrics-st 0 "$kcx" metrics --run d1/demo.safetensors --json ds.json --quiet
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL demo metrics"; }
import json
a = json.load(open("dj.json"))["metrics"]; b = json.load(open("ds.json"))["metrics"]
assert a["log_ratio"]["count"] >= 50000, a["log_ratio"]
for name in ("tv", "tv_lower", "top1_agree", "reward_diff", "abs_log_ratio"):
    assert a[name]["count"] > 0, name
    assert a[name]["count"] == b[name]["count"], name
PY

# The window, offscreen (SPEC 6.3): a screenshot of the demo, of a run with a contract,
# and clear errors for what cannot be opened.
check open-help 0 "$kcx" open --help;        contains open-help out.txt "--screenshot"
check open-demo 0 "$kcx" open --screenshot shot-demo.png --size 1200x800
head -c 8 shot-demo.png | od -An -c | grep -q "P   N   G" && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL open-demo: not a PNG"; }
check open-run 0 "$kcx" open d1/demo.safetensors --contract d1/demo-contract.yaml --screenshot shot-run.png
[ -s shot-run.png ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL open-run: no screenshot"; }
check open-bad-run 2 "$kcx" open short.jsonl --screenshot shot-bad.png
contains open-bad-run err.txt "short.jsonl:1:"
check open-bad-size 2 "$kcx" open --size huge
# Without a display: help still prints, and the window says what to do instead of aborting.
check open-help-no-display 0 env -u QT_QPA_PLATFORM -u DISPLAY -u WAYLAND_DISPLAY "$kcx" open --help
contains open-help-no-display out.txt "--screenshot"
check open-no-display 2 env -u QT_QPA_PLATFORM -u DISPLAY -u WAYLAND_DISPLAY "$kcx" open
contains open-no-display err.txt "needs a display"

# Several --run read as one (issue 18): the second run is not silently the only one.
printf '%s\n' '{"id": "b", "step": 4, "tokens": [5], "logp_train": [-1.0], "logp_inf": [-1.5]}' > second.jsonl
check two-runs 0 "$kcx" metrics --run small.jsonl --run second.jsonl --metrics abs_log_ratio --json two.json --quiet
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL two-runs contents"; }
import json, math
j = json.load(open("two.json"))
assert j["run"]["sequences"] == 2 and j["run"]["tokens"] == 3, j["run"]
assert j["run"]["joined"] == ["small.jsonl", "second.jsonl"], j["run"]
m = j["metrics"]["abs_log_ratio"]
assert m["count"] == 2 and abs(m["mean"] - (math.log(2) + 0.5) / 2) < 1e-15, m
PY
# A prime-rl tree, two steps and two ranks, as one run; `step` as a slice key in a contract
# (per_slice and where). Step 3 has no STABLE marker: left out and said.
$py - <<'PY'
import json, os
for step, ranks in ((1, (0, 1)), (2, (0, 1)), (3, (0,))):
    d = f"tree/token_exports/step_{step}"; os.makedirs(d, exist_ok=True)
    for rank in ranks:
        with open(f"{d}/rank_{rank}.jsonl", "w") as f:
            # |lp_train - lp_inf| = 0.125 * step at the one response token
            f.write(json.dumps({"schema_version": 1, "step": step, "rank": rank, "export_sequence_idx": 0,
                                "token_ids": [1, 2], "loss_mask": [False, True],
                                "inference_logprobs": [0.0, -0.5], "trainer_logprobs": [-1.0, -0.5 - 0.125 * step]},
                               separators=(",", ":")) + "\n")
    if step < 3:
        open(f"{d}/STABLE", "w").close()
PY
cat > steps.yaml <<'EOF'
kcx_contract: 1
name: steps
numerical:
  - {id: S1, metric: abs_log_ratio, aggregate: max, max: 0.2, per_slice: step}
  - {id: S2, metric: abs_log_ratio, aggregate: max, max: 0.2, where: {step: [1]}}
EOF
check tree-check 1 "$kcx" check --contract steps.yaml --run tree --json steps.json
contains tree-check err.txt "left out 1 step folder(s) without the STABLE marker (still being written): tree/token_exports/step_3"
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL tree-check contents"; }
import json
j = json.load(open("steps.json"))
assert j["run"]["sequences"] == 4, j["run"]
per = {r["slice"]["step"]: r for r in j["results"] if r["clause"] == "S1"}
assert sorted(per) == ["1", "2"], per
assert per["1"]["status"] == "pass" and per["1"]["observed"] == 0.125, per["1"]
assert per["2"]["status"] == "fail" and per["2"]["observed"] == 0.25, per["2"]
s2 = [r for r in j["results"] if r["clause"] == "S2"][0]
assert s2["status"] == "pass" and s2["observed"] == 0.125 and s2["n"] == 2, s2
PY
check two-runs-same-id 2 "$kcx" metrics --run small.jsonl --run small.jsonl
contains two-runs-same-id err.txt "sequence id 'a' is also in small.jsonl"
check sign-two-runs 2 "$kcx" sign --contract c.yaml --run small.jsonl --run second.jsonl --key k --reviewer r --decision approve --out s.json
contains sign-two-runs err.txt "one --run"
# Files as a file manager passes them (packaging/kcx.desktop: kcx open %F): the contract by name.
check open-files 0 "$kcx" open d1/demo-contract.yaml d1/demo.safetensors --screenshot shot-files.png --size 1200x800
[ -s shot-files.png ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL open-files: no screenshot"; }
check open-bad-contract 2 "$kcx" open short.jsonl d1/demo.safetensors
contains open-bad-contract err.txt "two runs"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
