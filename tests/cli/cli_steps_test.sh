#!/usr/bin/env bash
# `kcx steps` end to end (issue 20, SPEC 7): a run whose task=code divergence rises from
# step 24 of 40. numpy computes each step's mean and its interval over sequences (the ratio
# estimator's delta method) from the raw tokens; kcx's JSON must agree to 1e-9, report the
# onset in task=code within 2 steps and none in the other tasks, give the same from the
# run's summary, and refuse what it cannot answer (exit 2, saying why).
# Usage: cli_steps_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

$py - <<'PY'
import json, numpy as np
rng = np.random.default_rng(20)
with open("run.jsonl", "w") as f, open("nosteps.jsonl", "w") as g:
    for step in range(40):
        for i in range(12):
            task = ["code", "math", "chat"][i % 3]
            T = int(rng.integers(20, 60))
            sd = 0.03 if (task == "code" and step >= 24) else 0.01
            r = rng.normal(0.002 * rng.normal(), sd, T)
            train = -np.abs(rng.lognormal(-1, 1, T))
            rec = {"id": f"s{step}-{i}", "step": step, "slices": {"task": task}, "tokens": [1] * T,
                   "logp_train": train.tolist(), "logp_inf": (train - r).tolist()}
            f.write(json.dumps(rec) + "\n")
            del rec["step"]
            g.write(json.dumps(rec) + "\n")
PY
check steps 0 "$kcx" steps --run run.jsonl --per-slice task --json steps.json --quiet
check all 0 "$kcx" steps --run run.jsonl --json all.json --quiet
check table 0 "$kcx" steps --run run.jsonl --per-slice task
contains table-onset out.txt "onset: step 2"
contains table-none out.txt "onset: none"
check summarize 0 "$kcx" summarize --run run.jsonl --out run.kcxsum --quiet
check from-summary 0 "$kcx" steps --run run.kcxsum --per-slice task --json sum.json --quiet
$py - <<'PY' > verdict.txt
import json, math, numpy as np
recs = [json.loads(l) for l in open("run.jsonl")]
def series(task):
    out = []
    for step in range(40):
        S, N, vals = [], [], []
        for r in recs:
            if r["step"] != step or (task and r["slices"]["task"] != task):
                continue
            v = np.abs(np.array(r["logp_train"]) - np.array(r["logp_inf"]))
            S.append(v.sum()); N.append(len(v)); vals.extend(v)
        S, N = np.array(S), np.array(N)
        mu = S.sum() / N.sum(); m = len(S)
        se = math.sqrt(m / (m - 1) * ((S - mu * N) ** 2).sum()) / N.sum()
        out.append((step, mu, mu - 1.959963984540054 * se, mu + 1.959963984540054 * se, int(N.sum()), m,
                    float(np.median(vals))))
    return out
problems = []
def compare(got, want, where, sketch=False):
    for g, w in zip(got["steps"], want):
        if g["step"] != w[0] or g["n"] != w[4] or g["sequences"] != w[5]:
            problems.append(f"{where} step {w[0]}: counts {g['step']} {g['n']} {g['sequences']} vs {w}")
        for k, x in (("value", w[1]), ("median", w[6])):
            # A summary's median is read from its sketch: within 1 % (SPEC 10).
            if abs(g[k] - x) > (0.01 if sketch and k == "median" else 1e-9) * abs(x):
                problems.append(f"{where} step {w[0]}: {k} {g[k]} vs numpy {x}")
        if abs(g["ci"][0] - w[2]) > 1e-9 * w[1] or abs(g["ci"][1] - w[3]) > 1e-9 * w[1]:
            problems.append(f"{where} step {w[0]}: ci {g['ci']} vs numpy {w[2:4]}")
for name in ("steps.json", "sum.json"):
    j = json.load(open(name))
    if j["kcx"] != 1 or j["metric"] != "abs_log_ratio" or j["aggregate"] != "mean":
        problems.append(f"{name}: header {j['kcx']} {j['metric']} {j['aggregate']}")
    tasks = sorted(s["slice"]["task"] for s in j["series"])
    if tasks != ["chat", "code", "math"]:
        problems.append(f"{name}: series {tasks}")
    for s in j["series"]:
        t = s["slice"]["task"]
        compare(s, series(t), f"{name} {t}", sketch=name == "sum.json")
        onset = s["onset"]
        if t == "code" and (onset is None or not 24 <= onset["step"] <= 26):
            problems.append(f"{name}: code onset {onset}, planted at 24")
        if t != "code" and onset is not None:
            problems.append(f"{name}: {t} onset {onset}, none planted")
a = json.load(open("all.json"))
if a["series"][0]["slice"] is not None or len(a["series"]) != 1:
    problems.append("all.json: one series with slice null expected")
compare(a["series"][0], series(None), "all.json")
print("\n".join(problems) if problems else "agree")
PY
contains numpy verdict.txt "agree"
# What it cannot answer.
check no-steps 2 "$kcx" steps --run nosteps.jsonl
contains no-steps-why err.txt "no training steps"
check per-run 2 "$kcx" steps --run run.jsonl --metric ess
contains per-run-why err.txt "per-run metric"
check no-key 2 "$kcx" steps --run run.jsonl --per-slice language
contains no-key-why err.txt "no slice key 'language'"
check bad-metric 2 "$kcx" steps --run run.jsonl --metric nope
contains bad-metric-why err.txt "unknown metric 'nope'"
check bad-aggregate 2 "$kcx" steps --run run.jsonl --aggregate p200
check bad-alpha 2 "$kcx" steps --run run.jsonl --alpha 2
check no-run 2 "$kcx" steps
check over-input 2 "$kcx" steps --run run.jsonl --json run.jsonl
contains over-input-why err.txt "refusing to write"
check missing 2 "$kcx" steps --run missing.jsonl
check both 2 "$kcx" steps --run run.jsonl --run run.kcxsum
finish
