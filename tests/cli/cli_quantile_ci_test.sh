#!/usr/bin/env bash
# `kcx check` on numerical quantiles (docs/contracts.md, docs/metrics.md "The interval of a
# quantile"): pNN, max and min results carry "ci", their distribution-free 95% interval,
# "confidence" and "beyond"; the table shows them; statuses follow SPEC 4 unchanged.
# Usage: cli_quantile_ci_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
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
# Numerical quantiles (pNN, max, min) carry "ci", their distribution-free 95% interval, and
# "beyond", the values above max plus below min (docs/contracts.md); other aggregates do
# not. Checked against order statistics and exact binomial sums (fractions) written here.
# ---------------------------------------------------------------------------------------
$py - <<'PY'
import json, random
rng = random.Random(4)
with open("quant.jsonl", "w") as f:
    f.write(json.dumps({"kcx_header": {"kernels": {"train": {"name": "t"}, "inf": {"name": "i"}}}}) + "\n")
    for s in range(3):
        lt = [round(-rng.uniform(0.1, 3), 5) for _ in range(40)]
        li = [min(-1e-5, round(x - rng.gauss(0, 0.05), 5)) for x in lt]
        f.write(json.dumps({"id": f"q{s}", "slices": {"task": "ab"[s % 2]}, "tokens": list(range(40)),
                            "logp_train": lt, "logp_inf": li}) + "\n")
PY
cat > quant.yaml <<'EOF'
kcx_contract: 1
name: quantile-intervals
numerical:
  - id: Q50
    metric: abs_log_ratio
    aggregate: p50
    min: 0.02
    max: 0.05
  - id: Q95
    metric: log_ratio
    aggregate: p95
    max: 0.05
    per_slice: task
  - id: Q999
    metric: abs_log_ratio
    aggregate: p99.9
    max: 0.1
  - id: QMAX
    metric: abs_log_ratio
    aggregate: max
    max: 0.1
  - id: QMIN
    metric: log_ratio
    aggregate: min
    min: -0.1
  - id: QMEAN
    metric: abs_log_ratio
    aggregate: mean
    max: 0.1
EOF
check quantile-json 1 "$kcx" check --contract quant.yaml --run quant.jsonl --json quant.json
contains quantile-table out.txt "95% interval"
contains quantile-table out.txt "beyond"
pycheck quantile-intervals quant.json quant.jsonl <<'PY'
import json, math, sys
from fractions import Fraction
j = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])][1:]
def values(metric, task=None):
    out = [a - b for r in rows if task in (None, r["slices"]["task"])
           for a, b in zip(r["logp_train"], r["logp_inf"])]
    return sorted(abs(x) for x in out) if metric == "abs_log_ratio" else sorted(out)
def ranks(n, q):
    """Equal-tailed: lo the largest k with P(B <= k) <= 1/40, hi the smallest with >= 39/40."""
    cdf, lo, hi = Fraction(0), None, None
    for k in range(n):
        cdf += math.comb(n, k) * q**k * (1 - q)**(n - k)
        if cdf <= Fraction(1, 40):
            lo = k
        if cdf >= Fraction(39, 40):
            hi = k
            break
    return lo, hi
Q = {"p50": Fraction(1, 2), "p95": Fraction(95, 100), "p99.9": Fraction(999, 1000),
     "max": Fraction(1), "min": Fraction(0)}
res = j["results"]
assert len(res) == 7, res
seen = set()
for e in res:
    if e["aggregate"] == "mean":
        assert "ci" not in e and "beyond" not in e and "confidence" not in e, e
        continue
    v = values(e["metric"], e["slice"]["task"] if e["slice"] else None)
    n = len(v)
    assert e["n"] == n, e
    lo, hi = ranks(n, Q[e["aggregate"]])
    want = [None if lo is None else v[lo], None if hi is None else v[hi]]
    assert e["ci"] == want, (e["clause"], e["slice"], e["ci"], want, (lo, hi))
    assert e["confidence"] == 0.95, e
    beyond = sum(x > e["max"] for x in v if "max" in e) + sum(x < e["min"] for x in v if "min" in e)
    assert e["beyond"] == beyond, (e["clause"], e["beyond"], beyond)
    ok = ("max" not in e or e["observed"] <= e["max"]) and ("min" not in e or e["observed"] >= e["min"])
    assert e["status"] == ("pass" if ok else "fail"), e        # the rule is unchanged
    seen.add((e["clause"], None if lo is None else "lo", None if hi is None else "hi"))
# Both kinds of side occur: p95 of 40 values (slice b) and p99.9 of 120 have no upper rank.
assert ("Q999", "lo", None) in seen and ("Q95", "lo", "hi") in seen and ("Q95", "lo", None) in seen, seen
assert ("QMAX", "lo", None) in seen and ("QMIN", None, "hi") in seen, seen
PY

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
