#!/usr/bin/env bash
# `kcx summarize` and `kcx merge` end to end (issue 19, SPEC 10): a run cut into 8 shards,
# summarised shard by shard and merged in two groupings, is byte for byte the one-process
# summary; `kcx metrics` on it agrees with numpy on the raw tokens (counts exact, means to
# 1e-9, quantiles within 1 % of the order statistics type 7 interpolates between); bad input.
# Usage: cli_summary_test.sh KCX WORKDIR [quick]
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# 8 shards: 16 sequences each, steps 0-9, a task label, a few null and NaN log-probs.
$py - <<'PY'
import json, numpy as np
rng = np.random.default_rng(19)
for k in range(8):
    with open(f"s{k}.jsonl", "w") as f:
        for i in range(16):
            T = int(rng.integers(1, 300))
            train = -np.abs(rng.lognormal(-1, 1.5, T))
            r = rng.lognormal(-5, 2, T) * rng.choice([-1, 1], T)
            inf = (train - r).tolist()
            if rng.random() < 0.2:
                inf[int(rng.integers(T))] = None
            if rng.random() < 0.1:
                inf[int(rng.integers(T))] = "NaN"
            f.write(json.dumps({"id": f"k{k}-{i}", "step": int(rng.integers(10)),
                                "slices": {"task": ["code", "math", "chat"][i % 3]},
                                "tokens": [1] * T, "logp_train": train.tolist(), "logp_inf": inf}) + "\n")
PY
runs=(); for k in 0 1 2 3 4 5 6 7; do runs+=(--run "s$k.jsonl"); done
check one 0 "$kcx" summarize "${runs[@]}" --out one.kcxsum --quiet
for k in 0 1 2 3 4 5 6 7; do check "part$k" 0 "$kcx" summarize --run "s$k.jsonl" --out "p$k.kcxsum" --quiet; done
check merge-a 0 "$kcx" merge p0.kcxsum p1.kcxsum p2.kcxsum p3.kcxsum p4.kcxsum p5.kcxsum p6.kcxsum p7.kcxsum --out a.kcxsum
# quick (the sanitizer suite, where each merge parses its parts under ASan): the one grouping.
if [ "${3:-}" = quick ]; then
  cp a.kcxsum b.kcxsum
else
  check merge-b1 0 "$kcx" merge p6.kcxsum p2.kcxsum p4.kcxsum --out b1.kcxsum
  check merge-b2 0 "$kcx" merge p7.kcxsum p1.kcxsum --out b2.kcxsum
  check merge-b3 0 "$kcx" merge b2.kcxsum p5.kcxsum b1.kcxsum p0.kcxsum --out b3.kcxsum
  check merge-b 0 "$kcx" merge p3.kcxsum b3.kcxsum --out b.kcxsum
  # The parts read one at a time give the same bytes as read on every core.
  check merge-a1 0 "$kcx" merge p0.kcxsum p1.kcxsum p2.kcxsum p3.kcxsum p4.kcxsum p5.kcxsum p6.kcxsum p7.kcxsum --threads 1 --out a1.kcxsum
  if cmp -s a.kcxsum a1.kcxsum; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL merge --threads 1 differs"; fi
  check merge-threads-bad 2 "$kcx" merge p0.kcxsum p1.kcxsum --threads -1 --out x.kcxsum
  contains merge-threads-bad-says err.txt "--threads"
  # --json writes the JSON container (gzip): a tool reads it, and kcx reads the same figures.
  check merge-json 0 "$kcx" merge a.kcxsum --json --out j.kcxsum
  check metrics-json-container 0 "$kcx" metrics --run j.kcxsum --json sumj.json
  check metrics-binary-container 0 "$kcx" metrics --run a.kcxsum --json suma.json
  $py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL the JSON container"; }
import gzip, json
j = json.load(gzip.open("j.kcxsum"))
assert list(j)[0] == "kcx_summary" and j["tokens"] > 0, list(j)[:3]
assert open("a.kcxsum", "rb").read(2) == b"\x1f\x8b" and gzip.open("a.kcxsum").read(8) == b"\x89KCXSUM\n"
a, b = json.load(open("suma.json")), json.load(open("sumj.json"))
assert a["metrics"] == b["metrics"] and a["run"]["tokens"] == b["run"]["tokens"]
PY
fi
for f in a b; do
  if cmp -s one.kcxsum "$f.kcxsum"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $f.kcxsum differs from one.kcxsum"; fi
done
check metrics-raw 0 "$kcx" metrics "${runs[@]}" --json raw.json --quiet
check metrics-sum 0 "$kcx" metrics --run b.kcxsum --json sum.json
contains metrics-sum-table out.txt "quantiles from the sketch"
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL summary metrics against numpy"; }
import json, math, numpy as np
recs = [json.loads(l) for k in range(8) for l in open(f"s{k}.jsonl")]
def arr(v):
    return np.array([np.nan if x is None else float(x) for x in v])
a = np.concatenate([arr(r["logp_train"]) for r in recs]); b = np.concatenate([arr(r["logp_inf"]) for r in recs])
ok = np.isfinite(a) & np.isfinite(b)
r = a[ok] - b[ok]
vals = {"log_ratio": r, "abs_log_ratio": np.abs(r), "k2": 0.5 * r * r}
s = json.load(open("sum.json")); raw = json.load(open("raw.json"))
assert s["run"]["tokens"] == len(a) == raw["run"]["tokens"], s["run"]
assert s["run"]["sequences"] == 128
assert s["run"]["summary"]["relative_accuracy"] == 0.01
assert len(s["run"]["summary"]["inputs"]) == 8
missing = sum(x is None for rec in recs for x in rec["logp_inf"])
nonfinite = sum(x == "NaN" for rec in recs for x in rec["logp_inf"])
for name, v in vals.items():
    m = s["metrics"][name]
    assert m["count"] == len(v), (name, m["count"], len(v))
    assert m["missing_count"] == missing and m["nonfinite_count"] == nonfinite, (name, m)
    exact = math.fsum(v) / len(v)
    assert abs(m["mean"] - exact) <= 1e-9 * abs(exact), (name, m["mean"], exact)
    assert m["min"] == v.min() and m["max"] == v.max(), name
    x = np.sort(v)
    for key, q in (("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)):
        h = (len(x) - 1) * q; lo = int(math.floor(h)); hi = min(lo + 1, len(x) - 1)
        want_lo, want_hi = x[lo] - 0.01 * abs(x[lo]), x[hi] + 0.01 * abs(x[hi])
        assert want_lo <= m[key] <= want_hi, (name, key, m[key], x[lo], x[hi])
        # and the raw run's own figure is the exact type 7
        assert abs(raw["metrics"][name][key] - np.quantile(v, q)) <= 1e-12 * abs(np.quantile(v, q)) + 1e-300
# sequence metric: length over all 128 sequences, exact
L = np.array([len(rec["tokens"]) for rec in recs], float)
m = s["metrics"]["length"]
assert m["count"] == 128 and m["mean"] == L.mean() and m["max"] == L.max(), m
# a metric the data cannot support: listed with count 0, every token missing
assert s["metrics"]["tv"]["count"] == 0 and s["metrics"]["tv"]["missing_count"] == len(a)
PY

# sign, verify and report take a summary where they take a run (SPEC 10): the record binds
# the summary file; the report's table over steps counts what numpy counts per step.
cat > c.yaml <<'EOF'
kcx_contract: 1
name: sum
version: "1"
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: mean
    max: 1.0
    per_slice: task
EOF
check keygen 0 "$kcx" keygen --out key
check sign-summary 0 "$kcx" sign --contract c.yaml --run b.kcxsum --key key --reviewer ann --decision approve --out b.signoff.json
check verify-summary 0 "$kcx" verify b.signoff.json --contract c.yaml --run b.kcxsum --pub key.pub
contains verify-summary-says out.txt "verified"
check verify-other-grouping 0 "$kcx" verify b.signoff.json --contract c.yaml --run a.kcxsum --pub key.pub
check verify-raw 1 "$kcx" verify b.signoff.json --contract c.yaml --run s0.jsonl --pub key.pub
contains verify-raw-says out.txt "DIFFERS  run"
check report-summary 0 "$kcx" report --contract c.yaml --run b.kcxsum --out r.html --quiet
contains report-summary-kind r.html "(a summary, SPEC 10)"
contains report-summary-input r.html "s7.jsonl"
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL the report's steps against numpy"; }
import json, re, collections
html = open("r.html").read()
rows = re.findall(r'<tr><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>', html[html.index('id="steps"'):])
want = collections.Counter(); seqs = collections.Counter()
for k in range(8):
    for l in open(f"s{k}.jsonl"):
        r = json.loads(l)
        n = sum(1 for a, b in zip(r["logp_train"], r["logp_inf"]) if b is not None and b != "NaN")
        want[r["step"]] += n; seqs[r["step"]] += 1 if n else 0
got = {int(s): (int(c), int(q)) for s, c, q in rows}
assert got == {s: (want[s], seqs[s]) for s in want}, (got, want)
PY

# Bad input: each an exit 2 that names the file.
check merge-twice 2 "$kcx" merge p0.kcxsum a.kcxsum --out twice.kcxsum
contains merge-twice-says err.txt "count it twice"
check same-run-twice 2 "$kcx" summarize --run s0.jsonl --run s0.jsonl --out x.kcxsum
contains same-run-twice-says err.txt "given twice"
cp s1.jsonl s1copy.jsonl
check overlapping-shards 2 "$kcx" summarize --run s1.jsonl --run s1copy.jsonl --out x.kcxsum
contains overlapping-shards-says err.txt "also in an earlier --run"
check summarize-a-summary 2 "$kcx" summarize --run a.kcxsum --out x.kcxsum
contains summarize-a-summary-says err.txt "already a summary"
check check-on-summary 2 "$kcx" discover --run a.kcxsum
contains check-on-summary-says err.txt "a.kcxsum: is a KCX summary"
check per-token 2 "$kcx" metrics --run a.kcxsum --per-token x.csv
check mixed 2 "$kcx" metrics --run a.kcxsum --run s0.jsonl
contains mixed-says err.txt "not both"
head -c 2000 a.kcxsum > cut.kcxsum
check truncated 2 "$kcx" metrics --run cut.kcxsum
contains truncated-says err.txt "cut.kcxsum"
check merge-truncated 2 "$kcx" merge cut.kcxsum p1.kcxsum --out y.kcxsum
contains merge-truncated-says err.txt "cut.kcxsum"
if [ ! -e y.kcxsum ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL a failed merge left y.kcxsum"; fi
check merge-over-input 2 "$kcx" merge p0.kcxsum p1.kcxsum --out p1.kcxsum
check merge-nothing 2 "$kcx" merge --out z.kcxsum
check summarize-help 0 "$kcx" summarize --help
contains summarize-help-says out.txt "--out"
finish
