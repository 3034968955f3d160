#!/usr/bin/env bash
# `kcx corrections` end to end (issue 21, SPEC 11): a hand-made run whose weights are
# 1, 3, 1/4 | e^0.1, e^-0.1 | 2.5 (and a null), with every figure worked out below; then a
# random run against numpy's own computation of every method's fractions and ESS; refusals.
# Usage: cli_corrections_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

$py - <<'PY'
import json, math
rows = [("s0", [0.0, math.log(3), -math.log(4)]), ("s1", [0.1, -0.1]), ("s2", [math.log(2.5), None])]
with open("hand.jsonl", "w") as f:
    for i, r in rows:
        inf = [-2.0] * len(r)
        train = [None if x is None else -2.0 + x for x in r]
        f.write(json.dumps({"id": i, "tokens": [1] * len(r), "logp_train": train, "logp_inf": inf}) + "\n")
PY
check hand 0 "$kcx" corrections --run hand.jsonl --method tis:2 --method token_mask:0.5,2 --method geo_mask:0.9,1.1 \
  --method seq_reject:0.5,2 --json hand.json --quiet
$py - <<'PY' > hand.txt
import json, math
j = json.load(open("hand.json"))
def ess(w): return sum(w) ** 2 / (len(w) * sum(x * x for x in w))
e = math.exp
# 6 tokens with both log-probs, 3 sequences.
want = {
  # tis:2: 3 and 2.5 truncated (2 of 6 tokens, s0 and s2); weights 1, 2, 1/4, e^.1, e^-.1, 2
  "tis": (2 / 6, 2 / 3, ess([1, 2, 0.25, e(0.1), e(-0.1), 2])),
  # token_mask [0.5, 2]: 3, 1/4 and 2.5 masked; kept 1, e^.1, e^-.1
  "token_mask": (3 / 6, 2 / 3, ess([1, e(0.1), e(-0.1)])),
  # geo_mask [0.9, 1.1]: s0's (3/4)^(1/3) = 0.909 and s1's 1 stay; s2's 2.5 goes (1 token)
  "geo_mask": (1 / 6, 1 / 3, ess([1, 3, 0.25, e(0.1), e(-0.1)])),
  # seq_reject [0.5, 2]: s0 (3 and 1/4) and s2 (2.5) go: 4 tokens; s1 stays
  "seq_reject": (4 / 6, 2 / 3, ess([e(0.1), e(-0.1)])),
}
bad = []
if j["tokens"] != 6 or j["sequences"] != 3 or j["kcx"] != 1:
    bad.append(f"counts {j['tokens']} {j['sequences']}")
for m in j["methods"]:
    tf, sf, es = want[m["method"]]
    for k, w in (("token_fraction", tf), ("sequence_fraction", sf), ("ess", es)):
        if abs(m[k] - w) > 1e-12:
            bad.append(f"{m['method']} {k}: {m[k]} vs {w}")
print("\n".join(bad) if bad else "agree")
PY
contains hand-figures hand.txt "agree"

$py - <<'PY'
import json, numpy as np
rng = np.random.default_rng(21)
with open("run.jsonl", "w") as f:
    for i in range(200):
        T = int(rng.integers(5, 120))
        inf = -np.abs(rng.lognormal(-1, 1, T))
        r = rng.normal(0, 0.3 if i % 5 == 0 else 0.05, T)
        f.write(json.dumps({"id": f"s{i}", "tokens": [1] * T, "logp_train": (inf + r).tolist(),
                            "logp_inf": inf.tolist()}) + "\n")
PY
check random 0 "$kcx" corrections --run run.jsonl --json run.json --quiet
check table 0 "$kcx" corrections --run run.jsonl --method tis:1.5
contains table-tis out.txt "tis"
$py - <<'PY' > run.txt
import json, numpy as np
seqs = [json.loads(l) for l in open("run.jsonl")]
W = [np.exp(np.array(s["logp_train"]) - np.array(s["logp_inf"])) for s in seqs]
R = [np.array(s["logp_train"]) - np.array(s["logp_inf"]) for s in seqs]
n, m = sum(len(w) for w in W), len(W)
def ess(w):
    w = np.concatenate(w) if w else np.array([])
    return (w.sum() ** 2) / (len(w) * (w * w).sum())
want = {}
C = 2.0
want["tis"] = (sum((w > C).sum() for w in W) / n, sum((w > C).any() for w in W) / m, ess([np.minimum(w, C) for w in W]))
A, B = 0.5, 2.0
want["token_mask"] = (sum(((w < A) | (w > B)).sum() for w in W) / n, sum(((w < A) | (w > B)).any() for w in W) / m,
                      ess([w[(w >= A) & (w <= B)] for w in W]))
gA, gB = 0.99, 1.01
drop = [not (gA <= np.exp(r.mean()) <= gB) for r in R]
want["geo_mask"] = (sum(len(w) for w, d in zip(W, drop) if d) / n, sum(drop) / m, ess([w for w, d in zip(W, drop) if not d]))
rej = [((w < A) | (w > B)).any() for w in W]
want["seq_reject"] = (sum(len(w) for w, d in zip(W, rej) if d) / n, sum(rej) / m, ess([w for w, d in zip(W, rej) if not d]))
j = json.load(open("run.json"))
bad = []
if [x["method"] for x in j["methods"]] != ["tis", "token_mask", "geo_mask", "seq_reject"]:
    bad.append(f"methods {[x['method'] for x in j['methods']]}")
for x in j["methods"]:
    tf, sf, es = want[x["method"]]
    for k, w in (("token_fraction", tf), ("sequence_fraction", sf), ("ess", es)):
        if abs(x[k] - w) > 1e-12 * max(1, abs(w)):
            bad.append(f"{x['method']} {k}: {x[k]} vs numpy {w}")
# the run must exercise every method
if any(want[k][0] == 0 for k in want):
    bad.append(f"a method affects nothing: {want}")
print("\n".join(bad) if bad else "agree")
PY
contains numpy run.txt "agree"
# Refusals.
check unknown 2 "$kcx" corrections --run run.jsonl --method clip:2
contains unknown-why err.txt "unknown correction 'clip'"
check no-params 2 "$kcx" corrections --run run.jsonl --method tis
check two-for-one 2 "$kcx" corrections --run run.jsonl --method tis:1,2
check bad-bounds 2 "$kcx" corrections --run run.jsonl --method token_mask:2,0.5
contains bad-bounds-why err.txt "0 ≤ A ≤ B"
check not-number 2 "$kcx" corrections --run run.jsonl --method geo_mask:a,1
check preset 2 "$kcx" corrections --run run.jsonl --preset verl
check no-run 2 "$kcx" corrections
check missing 2 "$kcx" corrections --run missing.jsonl
check over-input 2 "$kcx" corrections --run run.jsonl --json run.jsonl
finish
