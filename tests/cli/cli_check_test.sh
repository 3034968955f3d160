#!/usr/bin/env bash
# `kcx check` end to end (SPEC 4, 6, 6.1): exit codes, error messages, the JSON of 6.1, the
# JUnit XML, --stage, --quiet, and the example contracts against the demo run.
# Usage: cli_check_test.sh KCX WORKDIR SOURCE_DIR
set -u
kcx="$1"; work="$2"; src="$3"
contracts="$src/resources/contracts"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
py=/usr/bin/python3
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
check() {  # check NAME EXPECTED_EXIT COMMAND...
  local name="$1" want="$2"; shift 2
  "$@" >out.txt 2>err.txt; local got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$name: exit $got, expected $want"; cat out.txt err.txt; fi
}
contains() {  # contains NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then ok; else bad "$1: '$3' not in $2:"; cat "$2"; fi
}
pycheck() {  # pycheck NAME ARGS... (the script on stdin; fails on any exception)
  local name="$1"; shift
  if $py - "$@" >py.txt 2>&1; then ok; else bad "$name"; cat py.txt; fi
}

# ---------------------------------------------------------------------------------------
# A small run whose numbers are known exactly. Log-ratios r = lp_train - lp_inf:
#   a (math):  r = log 2, 0, 1/3-ish  -> the largest |r| of the run is log 2 at a[0]
#   b (math):  r = 0.1, -0.05
#   c (code):  r = -0.25, 0.5, 0.01
# ---------------------------------------------------------------------------------------
printf '%s\n' \
  '{"kcx_header": {"kernels": {"train": {"name": "t", "weights_sha256": "abc", "batch_invariant": true}, "inf": {"name": "i", "weights_sha256": "abc", "batch_invariant": false}}}}' \
  '{"id": "a", "slices": {"task": "math"}, "tokens": [1, 2, 3], "logp_train": [-0.6931471805599453, -1.5, -0.4], "logp_inf": [-1.3862943611198906, -1.5, -0.7333333333333333], "reward_train": 1, "reward_inf": 0.5, "runtime": {"batch_size": 4, "latency_ms": 120.5}}' \
  '{"id": "b", "slices": {"task": "math"}, "tokens": [4, 5], "logp_train": [-2.0, -0.3], "logp_inf": [-2.1, -0.25], "reward_train": 0, "reward_inf": 0, "runtime": {"batch_size": 8, "latency_ms": 300}}' \
  '{"id": "c", "slices": {"task": "code"}, "tokens": [6, 7, 8], "logp_train": [-1.0, -0.5, -3.0], "logp_inf": [-0.75, -1.0, -3.01], "reward_train": 0.25, "reward_inf": 0.25, "runtime": {"batch_size": 2, "latency_ms": 80}}' \
  > small.jsonl

# A contract every clause of which passes on small.jsonl.
cat > pass.yaml <<'EOF'
kcx_contract: 1
name: small-pass
version: "1.0"
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    max: 1.0
  - id: N2
    metric: abs_log_ratio
    aggregate: max
    max: 1.0
    per_slice: task
runtime:
  - id: R1
    require_equal: weights_sha256
  - id: R2
    field: batch_size
    aggregate: max
    max: 8
observability:
  - id: O1
    require_fields: [logp_train, logp_inf, slices.task]
EOF

# One failing clause (log 2 > 0.5), one inconclusive one, the rest pass.
cat > fail.yaml <<'EOF'
kcx_contract: 1
name: small-fail
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    max: 0.5
  - id: N2
    metric: abs_log_ratio
    aggregate: max
    max: 1.0
statistical:
  - id: S1
    metric: abs_log_ratio
    level: 0.2
    max: 0.5
    min_samples: 100
escalation:
  - when: {status: fail, stage: full}
    action: rollback
  - when: {status: fail}
    action: hold
  - default: warn
EOF

# Only inconclusive: too few samples for min_samples, and nothing fails.
cat > inconclusive.yaml <<'EOF'
kcx_contract: 1
name: small-inconclusive
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    max: 1.0
statistical:
  - id: S1
    metric: abs_log_ratio
    level: 0.2
    max: 0.01
    per_slice: task
    min_samples: 1000
EOF

check pass 0 "$kcx" check --contract pass.yaml --run small.jsonl
contains pass-verdict out.txt "verdict: pass"
check fail 1 "$kcx" check --contract fail.yaml --run small.jsonl
contains fail-verdict out.txt "verdict: fail"
contains fail-table out.txt "fail"
check inconclusive 3 "$kcx" check --contract inconclusive.yaml --run small.jsonl
contains inconclusive-verdict out.txt "verdict: inconclusive"
contains inconclusive-why out.txt "fewer than min_samples 1000"
# A clause that cannot apply (a slice key the run does not have) is status error; the
# verdict is then inconclusive, never pass.
cat > error.yaml <<'EOF'
kcx_contract: 1
name: small-error
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    max: 1.0
    where: {language: en}
EOF
check error-status 3 "$kcx" check --contract error.yaml --run small.jsonl
contains error-status out.txt "error"
# The same contract written as JSON gives the same verdict.
$py -c 'import json; json.dump({"kcx_contract": 1, "name": "j", "numerical": [{"id": "N1", "metric": "abs_log_ratio", "aggregate": "max", "max": 0.5}]}, open("c.json", "w"))'
check json-contract 1 "$kcx" check --contract c.json --run small.jsonl

# ---------------------------------------------------------------------------------------
# Exit code 2: input and usage errors, with messages that say where.
# ---------------------------------------------------------------------------------------
check check-help 0 "$kcx" check --help;   contains check-help out.txt "--stage"
check usage-no-contract 2 "$kcx" check --run small.jsonl;  contains usage-no-contract err.txt "--contract"
check usage-no-run 2 "$kcx" check --contract pass.yaml;    contains usage-no-run err.txt "--run"
check usage-bad-option 2 "$kcx" check --contract pass.yaml --run small.jsonl --bogus
check usage-extra-arg 2 "$kcx" check --contract pass.yaml --run small.jsonl extra
check usage-two-stdout 2 "$kcx" check --contract pass.yaml --run small.jsonl --json - --junit -
check missing-contract 2 "$kcx" check --contract nope.yaml --run small.jsonl
contains missing-contract err.txt "nope.yaml"
check missing-run 2 "$kcx" check --contract pass.yaml --run nope.jsonl
contains missing-run err.txt "nope.jsonl"
printf '%s\n' '{"id": "a", "tokens": [1], "logp_train": [-1], "logp_inf": [-1]}' '{"id": "b", "tokens": [1], "logp_train": [-1' > broken.jsonl
check unreadable-run 2 "$kcx" check --contract pass.yaml --run broken.jsonl
contains unreadable-run err.txt "broken.jsonl:2:"
printf 'not a safetensors file' > broken.safetensors
check unreadable-safetensors 2 "$kcx" check --contract pass.yaml --run broken.safetensors
contains unreadable-safetensors err.txt "broken.safetensors"
check unknown-stage 2 "$kcx" check --contract fail.yaml --run small.jsonl --stage nowhere
contains unknown-stage err.txt "nowhere"

# A misspelt key: the message names the key, the suggestion and file:line:col.
cat > typo.yaml <<'EOF'
kcx_contract: 1
name: typo
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    maximum: 0.5
EOF
check typo 2 "$kcx" check --contract typo.yaml --run small.jsonl
contains typo-place err.txt "typo.yaml:7:5:"
contains typo-key err.txt "'maximum'"
contains typo-suggestion err.txt "did you mean 'max'"

# min above max.
cat > minmax.yaml <<'EOF'
kcx_contract: 1
name: minmax
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    min: 0.5
    max: 0.2
EOF
check min-above-max 2 "$kcx" check --contract minmax.yaml --run small.jsonl
contains min-above-max err.txt "minmax.yaml:"
contains min-above-max err.txt "'min' (0.5) is above 'max' (0.2)"

# A clause id used twice (across families).
cat > dup.yaml <<'EOF'
kcx_contract: 1
name: dup
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    max: 1
runtime:
  - id: N1
    require_equal: weights_sha256
EOF
check duplicate-id 2 "$kcx" check --contract dup.yaml --run small.jsonl
contains duplicate-id err.txt "dup.yaml:9:"
contains duplicate-id err.txt "duplicate clause id 'N1'"

# An unknown metric, with the nearest name.
cat > metric.yaml <<'EOF'
kcx_contract: 1
name: metric
numerical:
  - id: N1
    metric: abs_log_ration
    aggregate: max
    max: 1
EOF
check unknown-metric 2 "$kcx" check --contract metric.yaml --run small.jsonl
contains unknown-metric err.txt "metric.yaml:5:13:"
contains unknown-metric err.txt "unknown metric 'abs_log_ration'"
contains unknown-metric err.txt "did you mean 'abs_log_ratio'"

# Not a contract at all.
printf 'kcx_contract: 1\nname: [unclosed\n' > syntax.yaml
check yaml-syntax 2 "$kcx" check --contract syntax.yaml --run small.jsonl
contains yaml-syntax err.txt "syntax.yaml:"
# An output that cannot be written.
check unwritable-json 2 "$kcx" check --contract pass.yaml --run small.jsonl --json no/such/dir/out.json
contains unwritable-json err.txt "no/such/dir/out.json"

# ---------------------------------------------------------------------------------------
# --json: the SPEC 6.1 schema, checked by a program that knows only the SPEC.
# ---------------------------------------------------------------------------------------
cat > schema.yaml <<'EOF'
kcx_contract: 1
name: schema
version: "2.5"
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    max: 0.5
  - id: N2
    metric: abs_log_ratio
    aggregate: max
    max: 1.0
    per_slice: task
  - id: N3
    metric: abs_log_ratio
    aggregate: {fraction_above: 0.2}
    max: 0.5
    where: {task: code}
statistical:
  - id: S1
    metric: abs_log_ratio
    test: exceedance
    level: 0.2
    max: 0.9
    per_slice: task
    confidence: 0.9
  - id: S2
    metric: log_ratio
    test: mean
    min: -1
    max: 1
    resamples: 500
    seed: 11
  - id: S3
    metric: abs_log_ratio
    level: 0.2
    max: 0.9
    per_slice: task
    min_samples: 2
    correction: bonferroni
runtime:
  - id: R1
    require_equal: weights_sha256
  - id: R2
    require: {inf.batch_invariant: true}
  - id: R3
    field: latency_ms
    aggregate: max
    max: 250
observability:
  - id: O1
    require_fields: [logp_train, logp_inf, reward_train]
    min_coverage: 0.99
escalation:
  - when: {clause: R2}
    action: route_to_reference
  - when: {status: fail}
    action: block_promotion
  - default: warn
EOF
check json-file 1 "$kcx" check --contract schema.yaml --run small.jsonl --json r.json --quiet
[ -s out.txt ] && bad "--quiet --json FILE printed on stdout" || ok
check json-stdout 1 "$kcx" check --contract schema.yaml --run small.jsonl --json -
pycheck json-schema r.json out.txt schema.yaml small.jsonl <<'PY'
import json, hashlib, math, sys
from statistics import NormalDist
path, stdout_path, contract_path, run_path = sys.argv[1:5]
j = json.load(open(path))
# --json - writes exactly the same document to stdout, and nothing else.
assert json.load(open(stdout_path)) == j, "stdout JSON differs from the file"

def num(x): return isinstance(x, (int, float)) and not isinstance(x, bool)
def numornull(x): return x is None or num(x)

for key in ("kcx", "verdict", "stage", "action", "contract", "run", "results", "bounds"):
    assert key in j, key
assert j["kcx"] == 1
assert j["verdict"] == "fail"
assert j["stage"] == "offline_ci"
actions = ["pass", "warn", "hold", "shadow_only", "route_to_reference", "block_promotion", "rollback"]
assert j["action"] in actions
c = j["contract"]
assert c["name"] == "schema" and c["version"] == "2.5"
assert c["sha256"] == hashlib.sha256(open(contract_path, "rb").read()).hexdigest()
r = j["run"]
assert r["path"].endswith("small.jsonl")
assert r["sha256"] == hashlib.sha256(open(run_path, "rb").read()).hexdigest()
assert r["sequences"] == 3 and r["tokens"] == 8
assert isinstance(r["sequences"], int) and isinstance(r["tokens"], int)

res = j["results"]
assert isinstance(res, list) and res
for e in res:
    for key in ("clause", "family", "metric", "aggregate", "status", "observed", "n", "action", "slice"):
        assert key in e, (key, e)
    assert isinstance(e["clause"], str) and isinstance(e["metric"], str) and isinstance(e["aggregate"], str)
    assert e["family"] in ("numerical", "statistical", "runtime", "observability"), e
    assert e["status"] in ("pass", "fail", "inconclusive", "error"), e
    assert e["action"] in actions, e
    assert numornull(e["observed"]), e
    assert isinstance(e["n"], int) and e["n"] >= 0, e
    assert e["slice"] is None or (isinstance(e["slice"], dict) and
        all(isinstance(k, str) and isinstance(v, str) for k, v in e["slice"].items())), e
    for k in ("max", "min", "upper"):
        if k in e: assert num(e[k]), (k, e)
    if e["status"] == "pass": assert e["action"] == "pass", e
    else: assert e["action"] != "pass", e

by = {}
for e in res:
    by.setdefault(e["clause"], []).append(e)
assert sorted(by) == ["N1", "N2", "N3", "O1", "R1", "R2", "R3", "S1", "S2", "S3"], sorted(by)

# Exact values, recomputed from the run: numbers must round-trip a double.
rows = [json.loads(l) for l in open(run_path)][1:]
absr = {row["id"]: [abs(a - b) for a, b in zip(row["logp_train"], row["logp_inf"])] for row in rows}
task = {row["id"]: row["slices"]["task"] for row in rows}
allv = [v for vs in absr.values() for v in vs]
n1, = by["N1"]
assert n1["observed"] == max(allv), (n1["observed"], max(allv))
assert n1["observed"] == math.log(2) and n1["max"] == 0.5 and n1["n"] == 8
assert n1["status"] == "fail" and n1["action"] == "block_promotion" and n1["slice"] is None
# per_slice: one entry per slice value, with a slice object.
n2 = {e["slice"]["task"]: e for e in by["N2"]}
assert sorted(n2) == ["code", "math"], by["N2"]
for t, e in n2.items():
    vals = [v for s, vs in absr.items() if task[s] == t for v in vs]
    assert e["slice"] == {"task": t} and e["observed"] == max(vals) and e["n"] == len(vals), e
    assert e["status"] == "pass"
# where: no slice object; a share that needs all 17 digits.
n3, = by["N3"]
assert n3["slice"] is None and n3["n"] == 3
assert n3["observed"] == 2 / 3, repr(n3["observed"])
assert n3["status"] == "fail"

# Statistical: exceedance entries carry "upper" (the one-sided Wilson bound, SPEC 4.2).
def wilson(k, n, c):
    z = NormalDist().inv_cdf(c); p = k / n
    return (p + z*z/(2*n) + z*math.sqrt(p*(1-p)/n + z*z/(4*n*n))) / (1 + z*z/n)
for e in by["S1"]:
    t = e["slice"]["task"]
    vals = [v for s, vs in absr.items() if task[s] == t for v in vs]
    k = sum(v > 0.2 for v in vals)
    assert "upper" in e and num(e["upper"]), e
    assert e["n"] == len(vals) and e["observed"] == k / len(vals), e
    assert abs(e["upper"] - wilson(k, len(vals), 0.9)) < 1e-12, (e["upper"], wilson(k, len(vals), 0.9))
    assert e["max"] == 0.9
    assert e["status"] == ("pass" if e["upper"] <= 0.9 else "fail")
# Mean test: "ci" is [lo, hi] around the mean, inside [min, max] for a pass.
s2, = by["S2"]
assert "ci" in s2 and isinstance(s2["ci"], list) and len(s2["ci"]) == 2 and all(map(num, s2["ci"])), s2
lo, hi = s2["ci"]
assert lo <= s2["observed"] <= hi, s2
assert s2["min"] == -1 and s2["max"] == 1 and s2["status"] == "pass"
r1, = by["R1"]; r2, = by["R2"]; r3, = by["R3"]; o1, = by["O1"]
assert r1["status"] == "pass" and r1["family"] == "runtime"
assert r2["status"] == "fail" and r2["action"] == "route_to_reference"
assert r3["observed"] == 300 and r3["max"] == 250 and r3["status"] == "fail"
assert o1["status"] == "pass" and o1["family"] == "observability"
assert j["action"] == "block_promotion"

b = j["bounds"]
assert isinstance(b, list)
for e in b:
    for key in ("step", "input", "bound", "observed", "vacuous"):
        assert key in e, (key, e)
    assert isinstance(e["step"], str) and isinstance(e["vacuous"], bool)
    assert numornull(e["input"]) and numornull(e["bound"]) and numornull(e["observed"]), e
PY

# Bonferroni (SPEC 4.2): m = the slices with at least min_samples values, here both (3 and
# 5 values >= 2), so c = 1 - (1 - 0.95)/2 = 0.975 for each.
pycheck bonferroni-min-samples r.json small.jsonl <<'PY'
import json, math, sys
from statistics import NormalDist
j = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])][1:]
def wilson(k, n, c):
    z = NormalDist().inv_cdf(c); p = k / n
    return (p + z*z/(2*n) + z*math.sqrt(p*(1-p)/n + z*z/(4*n*n))) / (1 + z*z/n)
s3 = [e for e in j["results"] if e["clause"] == "S3"]
assert len(s3) == 2, s3
for e in s3:
    vals = [abs(a - b) for row in rows if row["slices"]["task"] == e["slice"]["task"]
            for a, b in zip(row["logp_train"], row["logp_inf"])]
    k = sum(v > 0.2 for v in vals)
    want = wilson(k, len(vals), 0.975)
    assert abs(e["upper"] - want) < 1e-12, \
        ("slice %s: upper %r, expected %r at confidence 0.975; kcx used confidence %r"
         % (e["slice"], e["upper"], want, e.get("confidence")))
PY

# The bootstrap is reproducible: the same seed gives the same document.
check json-again 1 "$kcx" check --contract schema.yaml --run small.jsonl --json r2.json --quiet
cmp -s r.json r2.json && ok || bad "check --json is not reproducible"

# ---------------------------------------------------------------------------------------
# --junit: one testcase per result; failures state observed against threshold.
# ---------------------------------------------------------------------------------------
check junit 1 "$kcx" check --contract schema.yaml --run small.jsonl --junit r.xml --json rj.json --quiet
pycheck junit-xml r.xml rj.json <<'PY'
import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
res = json.load(open(sys.argv[2]))["results"]
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
assert len(suites) == 1, suites
suite = suites[0]
cases = suite.findall("testcase")
assert len(cases) == len(res), (len(cases), len(res))
assert int(suite.get("tests")) == len(res)
nfail = sum(e["status"] == "fail" for e in res)
assert int(suite.get("failures")) == nfail == sum(c.find("failure") is not None for c in cases)
assert int(suite.get("skipped")) == sum(e["status"] == "inconclusive" for e in res)
for c, e in zip(cases, res):
    assert c.get("name").startswith(e["clause"]), (c.get("name"), e["clause"])
    if e["slice"]:
        for k, v in e["slice"].items():
            assert f"{k}={v}" in c.get("name"), c.get("name")
    f = c.find("failure")
    assert (f is not None) == (e["status"] == "fail"), (c.get("name"), e["status"])
    if f is not None:
        m = f.get("message")
        assert m, c.get("name")
        if e["observed"] is not None:
            assert "observed" in m and "threshold" in m, m
            assert ("%.6g" % e["observed"]) in m or str(e["observed"]) in m, (m, e["observed"])
            limit = e.get("max", e.get("min"))
            assert ("%g" % limit) in m, (m, limit)
n1 = [c for c in cases if c.get("name") == "N1"][0].find("failure").get("message")
assert "observed 0.693147" in n1 and "<= 0.5" in n1, n1
r2 = [c for c in cases if c.get("name") == "R2"][0].find("failure").get("message")
assert "true" in r2 and "false" in r2, r2          # what was required against what was found
PY
check junit-stdout 1 "$kcx" check --contract schema.yaml --run small.jsonl --junit -
$py -c 'import sys, xml.etree.ElementTree as ET; ET.parse("out.txt")' && ok || bad "--junit - is not pure XML"

# ---------------------------------------------------------------------------------------
# --stage picks the stage whose action is reported; the verdict (and exit code) stay.
# ---------------------------------------------------------------------------------------
check stage-default 1 "$kcx" check --contract fail.yaml --run small.jsonl --json s0.json
contains stage-default out.txt "action at offline_ci: hold"
check stage-full 1 "$kcx" check --contract fail.yaml --run small.jsonl --stage full --json s1.json
contains stage-full out.txt "action at full: rollback"
pycheck stage-json s0.json s1.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert (a["stage"], a["action"]) == ("offline_ci", "hold"), (a["stage"], a["action"])
assert (b["stage"], b["action"]) == ("full", "rollback"), (b["stage"], b["action"])
assert a["verdict"] == b["verdict"] == "fail"
fa = [e for e in a["results"] if e["status"] == "fail"]
fb = [e for e in b["results"] if e["status"] == "fail"]
assert [e["action"] for e in fa] == ["hold"] and [e["action"] for e in fb] == ["rollback"], (fa, fb)
PY

# ---------------------------------------------------------------------------------------
# --quiet: nothing on stdout, whatever the verdict; the exit code still says it.
# ---------------------------------------------------------------------------------------
for c in pass:0 fail:1 inconclusive:3; do
  check "quiet-${c%:*}" "${c#*:}" "$kcx" check --contract "${c%:*}.yaml" --run small.jsonl --quiet
  [ -s out.txt ] && bad "quiet-${c%:*}: stdout not empty" || ok
done
check quiet-error 2 "$kcx" check --contract typo.yaml --run small.jsonl --quiet
[ -s out.txt ] && bad "quiet-error: stdout not empty" || ok
[ -s err.txt ] && ok || bad "quiet-error: the error must still be printed"

# ---------------------------------------------------------------------------------------
# The demo: it writes its contract, and the example contracts give a mix of outcomes.
# ---------------------------------------------------------------------------------------
check demo 0 "$kcx" demo --out demo
[ -f demo/demo-contract.yaml ] && ok || bad "kcx demo did not write demo-contract.yaml"
cmp -s demo/demo-contract.yaml "$contracts/demo.yaml" && ok || bad "demo-contract.yaml differs from resources/contracts/demo.yaml"
contains demo-stdout out.txt "demo-contract.yaml"
for c in demo/demo-contract.yaml "$contracts/fp8_rl_rollouts.yaml" "$contracts/serving_canary.yaml"; do
  name=$(basename "$c" .yaml)
  check "example-$name" 1 "$kcx" check --contract "$c" --run demo/demo.jsonl --json "$name.json" --junit "$name.xml"
  pycheck "example-$name-mix" "$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
st = [e["status"] for e in j["results"]]
for s in ("pass", "fail", "inconclusive"):
    assert s in st, "no %s result: %s" % (s, st)
assert "error" not in st, [e for e in j["results"] if e["status"] == "error"]
assert j["verdict"] == "fail"
PY
done
# The same contract against the same data in safetensors gives the same results.
check demo-safetensors 1 "$kcx" check --contract demo/demo-contract.yaml --run demo/demo.safetensors --json st.json
pycheck demo-safetensors-same demo-contract.json st.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
# (per-slice results may come in another order: slice values are listed in order of first
# appearance in JSONL, in the file's slice_values order in safetensors)
key = lambda e: (e["clause"], json.dumps(e["slice"], sort_keys=True))
ra, rb = sorted(a["results"], key=key), sorted(b["results"], key=key)
assert ra == rb, [(x, y) for x, y in zip(ra, rb) if x != y][:2]
assert a["run"]["tokens"] == b["run"]["tokens"] and a["run"]["sequences"] == b["run"]["sequences"]
PY

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
