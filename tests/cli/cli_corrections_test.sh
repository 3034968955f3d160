#!/usr/bin/env bash
# `kcx corrections` end to end (issue 21, SPEC 11): a hand-made run whose weights are
# 1, 3, 1/4 | e^0.1, e^-0.1 | 2.5 (and a null), with every figure worked out below; then a
# random run against numpy's own computation of every method's fractions, ESS, reward shares and
# step 4 (ρ and the bias bound with G and A_max from a contract), over the run and per step; refusals.
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

cat > bounds.yaml <<'Y'
kcx_contract: 1
name: bounds
bounds: {grad_norm: 2.0, advantage_max: 3.0}
numerical:
  - {id: N1, metric: abs_log_ratio, aggregate: max, max: 100}
Y
$py - <<'PY'
import json, numpy as np
rng = np.random.default_rng(21)
with open("run.jsonl", "w") as f:
    for i in range(200):
        T = int(rng.integers(5, 120))
        inf = -np.abs(rng.lognormal(-1, 1, T))
        r = rng.normal(0, 0.3 if i % 5 == 0 else 0.05, T)
        rec = {"id": f"s{i}", "tokens": [1] * T, "logp_train": (inf + r).tolist(), "logp_inf": inf.tolist(),
               "step": int(i % 4)}
        if i % 7 != 3:   # some sequences without a reward
            rec["reward_inf"] = float(rng.choice([-1.0, 0.0, 1.0, 0.5]))
        f.write(json.dumps(rec) + "\n")
PY
check random 0 "$kcx" corrections --run run.jsonl --json run.json --quiet --per-slice step --contract bounds.yaml
check table 0 "$kcx" corrections --run run.jsonl --method tis:1.5
contains table-tis out.txt "tis"
$py - <<'PY' > run.txt
import json, math, numpy as np
seqs = [json.loads(l) for l in open("run.jsonl")]
GA = 2.0 * 3.0
def expect(seqs):
    W = [np.exp(np.array(s["logp_train"]) - np.array(s["logp_inf"])) for s in seqs]
    R = [np.array(s["logp_train"]) - np.array(s["logp_inf"]) for s in seqs]
    rew = [s.get("reward_inf") for s in seqs]
    n, m = sum(len(w) for w in W), len(W)
    def ess(w):
        w = np.concatenate(w) if w else np.array([])
        return (w.sum() ** 2) / (len(w) * (w * w).sum())
    def pos_share(affected):
        with_r = [x for x, a in zip(rew, affected) if a and x is not None]
        return sum(1 for x in with_r if x > 0) / len(with_r) if with_r else None
    def rho(kept):   # kept: per sequence, the weights as used
        return max(np.abs(np.log(w)).max() for w in kept if len(w))
    want = {}
    C = 2.0
    kept = [np.minimum(w, C) for w in W]
    want["tis"] = dict(token_fraction=sum((w > C).sum() for w in W) / n, sequence_fraction=sum((w > C).any() for w in W) / m,
                       ess=ess(kept), rho=rho(kept), pg_bias=GA * math.expm1(rho(kept)),
                       truncated_mass=sum(np.maximum(w - C, 0).sum() for w in W) / n,
                       affected_positive_reward_share=pos_share([(w > C).any() for w in W]))
    A, B = 0.5, 2.0
    kept = [w[(w >= A) & (w <= B)] for w in W]
    hit = [((w < A) | (w > B)).any() for w in W]
    want["token_mask"] = dict(token_fraction=sum(((w < A) | (w > B)).sum() for w in W) / n, sequence_fraction=sum(hit) / m,
                              ess=ess(kept), rho=rho(kept), pg_bias=GA * math.expm1(rho(kept)),
                              affected_positive_reward_share=pos_share(hit))
    gA, gB = 0.99, 1.01
    drop = [not (gA <= np.exp(r.mean()) <= gB) for r in R]
    kept = [w for w, d in zip(W, drop) if not d]
    want["geo_mask"] = dict(token_fraction=sum(len(w) for w, d in zip(W, drop) if d) / n, sequence_fraction=sum(drop) / m,
                            ess=ess(kept), rho=rho(kept), pg_bias=GA * math.expm1(rho(kept)),
                            affected_positive_reward_share=pos_share(drop))
    rej = [((w < A) | (w > B)).any() for w in W]
    kept = [w for w, d in zip(W, rej) if not d]
    want["seq_reject"] = dict(token_fraction=sum(len(w) for w, d in zip(W, rej) if d) / n, sequence_fraction=sum(rej) / m,
                              ess=ess(kept), rho=rho(kept), pg_bias=GA * math.expm1(rho(kept)),
                              affected_positive_reward_share=pos_share(rej))
    top = dict(rho_before=max(np.abs(r).max() for r in R))
    top["pg_bias_before"] = GA * math.expm1(top["rho_before"])
    return want, top
j = json.load(open("run.json"))
bad = []
def compare(j, want, top, where):
    if [x["method"] for x in j["methods"]] != ["tis", "token_mask", "geo_mask", "seq_reject"]:
        bad.append(f"{where}: methods {[x['method'] for x in j['methods']]}")
    for k, w in top.items():
        if abs(j[k] - w) > 1e-12 * max(1, abs(w)):
            bad.append(f"{where} {k}: {j[k]} vs numpy {w}")
    for x in j["methods"]:
        for k, w in want[x["method"]].items():
            if w is None or x.get(k) is None:
                if w != x.get(k):
                    bad.append(f"{where} {x['method']} {k}: {x.get(k)} vs numpy {w}")
            elif abs(x[k] - w) > 1e-12 * max(1, abs(w)):
                bad.append(f"{where} {x['method']} {k}: {x[k]} vs numpy {w}")
want, top = expect(seqs)
compare(j, want, top, "run")
# the run must exercise every method, and the affected sequences' rewards must not all be one sign
if any(want[k]["token_fraction"] == 0 for k in want):
    bad.append(f"a method affects nothing: {want}")
if not 0 < want["token_mask"]["affected_positive_reward_share"] < 1:
    bad.append("the reward shares do not test anything")
if not j["pg_bias_absolute"] or j.get("reward_side") != "inf":
    bad.append(f"pg_bias_absolute {j['pg_bias_absolute']}, reward_side {j.get('reward_side')}")
# per step: steps 0..3 in order, each against numpy over that step's sequences alone
ps = j.get("per_slice", {})
if ps.get("key") != "step" or [g["value"] for g in ps.get("values", [])] != ["0", "1", "2", "3"]:
    bad.append(f"per_slice {ps.get('key')} {[g['value'] for g in ps.get('values', [])]}")
for g in ps.get("values", []):
    sub = [s for s in seqs if str(s["step"]) == g["value"]]
    if g["sequences"] != len(sub):
        bad.append(f"step {g['value']}: {g['sequences']} sequences vs {len(sub)}")
    want, top = expect(sub)
    compare(g, want, top, "step " + g["value"])
print("\n".join(bad) if bad else "agree")
PY
contains numpy run.txt "agree"
# The extensions the presets need, against numpy: tis:A,C clamps both sides; seq_tis:C weights
# every token of a sequence by min(exp(Σr), C); product_mask:A,B masks sequences whose exp(Σr)
# lies outside [A, B] (Σr clamped at ±20, as seq_ratio).
check extensions 0 "$kcx" corrections --run run.jsonl --method tis:0.5,2 --method seq_tis:1.5 --method product_mask:0.5,2 \
  --method seq_reject:0.7,inf --json ext.json --quiet
$py - <<'PY' > ext.txt
import json, math, numpy as np
seqs = [json.loads(l) for l in open("run.jsonl")]
R = [np.array(s["logp_train"]) - np.array(s["logp_inf"]) for s in seqs]
W = [np.exp(r) for r in R]
n, m = sum(len(w) for w in W), len(W)
def ess(ws):
    w = np.concatenate([x for x in ws if len(x)]) if ws else np.array([])
    return (w.sum() ** 2) / (len(w) * (w * w).sum())
want = {}
lo, hi = 0.5, 2.0
hit = [(w < lo) | (w > hi) for w in W]
kept = [np.clip(w, lo, hi) for w in W]
want["tis"] = dict(token_fraction=sum(h.sum() for h in hit) / n, sequence_fraction=sum(h.any() for h in hit) / m,
                   ess=ess(kept), rho=max(np.abs(np.log(k)).max() for k in kept),
                   truncated_mass=sum(np.maximum(w - hi, 0).sum() for w in W) / n)
C = 1.5
sr = [np.clip(r.sum(), -20, 20) for r in R]
cut = [math.exp(x) > C for x in sr]
used = [np.full(len(r), min(math.exp(x), C)) for r, x in zip(R, sr)]
want["seq_tis"] = dict(token_fraction=sum(len(r) for r, c in zip(R, cut) if c) / n, sequence_fraction=sum(cut) / m,
                       ess=ess(used), rho=max(abs(math.log(u[0])) for u in used),
                       truncated_mass=sum(len(r) * (math.exp(x) - C) for r, x, c in zip(R, sr, cut) if c) / n)
drop = [not (0.5 <= math.exp(x) <= 2.0) for x in sr]
kept = [w for w, d in zip(W, drop) if not d]
want["product_mask"] = dict(token_fraction=sum(len(w) for w, d in zip(W, drop) if d) / n, sequence_fraction=sum(drop) / m,
                            ess=ess(kept), rho=max(np.abs(np.log(w)).max() for w in kept))
rej = [(w < 0.7).any() for w in W]
kept = [w for w, d in zip(W, rej) if not d]
want["seq_reject"] = dict(token_fraction=sum(len(w) for w, d in zip(W, rej) if d) / n, sequence_fraction=sum(rej) / m,
                          ess=ess(kept))
j = json.load(open("ext.json"))
bad = []
for x in j["methods"]:
    for k, w in want[x["method"]].items():
        if abs(x[k] - w) > 1e-12 * max(1, abs(w)):
            bad.append(f"{x['method']} {k}: {x[k]} vs numpy {w}")
if j["methods"][3]["params"] != [0.7, "inf"]:
    bad.append(f"params {j['methods'][3]['params']}")
for k in want:
    if not 0 < want[k]["token_fraction"] < 1:
        bad.append(f"{k} does not test anything: {want[k]['token_fraction']}")
print("\n".join(bad) if bad else "agree")
PY
contains extensions-numpy ext.txt "agree"
# Every framework's preset runs; each method carries its setting, fidelity and a source with a
# commit; SkyRL's are the six its docs and config name.
for f in verl slime skyrl trl nemo-rl openrlhf prime-rl; do
  check "preset-$f" 0 "$kcx" corrections --run run.jsonl --preset $f --json preset-$f.json --quiet
done
$py - <<'PY' > presets.txt
import json, re
bad = []
for f in "verl slime skyrl trl nemo-rl openrlhf prime-rl".split():
    j = json.load(open(f"preset-{f}.json"))
    if j["preset"]["framework"] != f or not j["methods"]:
        bad.append(f"{f}: {j.get('preset')}")
    for m in j["methods"]:
        if not re.match(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40} \S+:\d", m.get("source", "")) or not m.get("fidelity") or not m.get("setting"):
            bad.append(f"{f} {m['method']}: {m.get('source')} {m.get('fidelity')}")
s = json.load(open("preset-skyrl.json"))
got = [(m["method"], m["params"]) for m in s["methods"]]
want = [("geo_mask", [0.99, 1.01]), ("tis", [2.0]), ("token_mask", [0.5, 2.0]), ("seq_reject", [0.0001, 100.0]),
        ("seq_tis", [5.0]), ("product_mask", [0.5, 2.0])]
if got != want:
    bad.append(f"skyrl {got}")
print("\n".join(bad) if bad else "agree")
PY
contains presets presets.txt "agree"
check preset-table 0 "$kcx" corrections --run run.jsonl --preset trl
contains preset-table-trl out.txt "vllm_importance_sampling_mode=sequence_mask"
check unknown-preset 2 "$kcx" corrections --run run.jsonl --preset deepspeed
contains unknown-preset-why err.txt "unknown framework 'deepspeed' (verl, slime"
check tis-order 2 "$kcx" corrections --run run.jsonl --method tis:3,2
check seq-tis-zero 2 "$kcx" corrections --run run.jsonl --method seq_tis:0
check product-order 2 "$kcx" corrections --run run.jsonl --method product_mask:2,1
check inf-first 2 "$kcx" corrections --run run.jsonl --method token_mask:inf,2
# `kcx metrics --as FRAMEWORK`: every figure against numpy's own reading of each framework's
# formula (docs/corrections.md "Framework names"), and the framework contract templates, whose
# clauses use the frameworks' names as aliases, against the same numbers.
for f in verl slime prime-rl nemo-rl trl skyrl openrlhf; do
  check "as-$f" 0 "$kcx" metrics --run run.jsonl --as $f --json as-$f.json --quiet
done
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for f in verl slime prime-rl nemo-rl; do
  "$kcx" check --contract "$src/resources/contracts/$f.yaml" --run run.jsonl --json tpl-$f.json --quiet >/dev/null 2>tpl-$f.err
  [ $? -le 1 ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL template $f"; cat tpl-$f.err; }
done
$py - <<'PY' > as.txt
import json, math, numpy as np
seqs = [json.loads(l) for l in open("run.jsonl")]
lt = [np.array(s["logp_train"]) for s in seqs]
li = [np.array(s["logp_inf"]) for s in seqs]
R = [a - b for a, b in zip(lt, li)]
r = np.concatenate(R); LT = np.concatenate(lt); LI = np.concatenate(li)
pt, pi = np.exp(LT), np.exp(LI)
k3 = np.exp(r) - r - 1
absr = np.abs(r)
want = {
  "verl": {
    "training/rollout_probs_diff_mean": np.abs(pt - pi).mean(),
    "training/rollout_probs_diff_max": np.abs(pt - pi).max(),
    "training/rollout_probs_diff_std": np.abs(pt - pi).std(ddof=1),
    "training/rollout_actor_probs_pearson_corr": np.corrcoef(pt, pi)[0, 1],
    "rollout_corr/kl": (-r).mean(),
    "rollout_corr/k3_kl": k3.mean(),
    "rollout_corr/chi2_token": np.exp(2 * np.clip(r, -20, 20)).mean() - 1,
    "rollout_corr/chi2_seq": np.mean([np.exp(2 * np.clip(x.sum(), -20, 20)) for x in R]) - 1,
    "rollout_corr/training_ppl": np.mean([np.exp(-x.mean()) for x in lt]),
    "rollout_corr/rollout_ppl": np.mean([np.exp(-x.mean()) for x in li]),
    "rollout_corr/log_ppl_diff": np.mean([b.mean() - a.mean() for a, b in zip(lt, li)]),
    "rollout_corr/log_ppl_abs_diff": np.mean([abs(x.mean()) for x in R]),
    "rollout_corr/ppl_ratio": np.mean([np.exp(-x.mean()) for x in R]),
    "rollout_corr/rollout_is_ratio_fraction_high": (np.exp(r) > 2).mean(),
  },
  "slime": {
    "train/train_rollout_logprob_abs_diff": np.mean([np.abs(x).mean() for x in R]),
    "train/train_rollout_logprob_abs_diff (--calculate-per-token-loss)": absr.mean(),
  },
  "prime-rl": {
    "mismatch_kl/all/mean": k3.mean(), "mismatch_kl/all/median": np.sort(k3)[(len(k3) - 1) // 2],
    "mismatch_kl/all/std": k3.std(ddof=1), "mismatch_kl/all/min": k3.min(), "mismatch_kl/all/max": k3.max(),
  },
  "nemo-rl": {
    "token_mult_prob_error": np.exp(absr).mean(),
    "gen_kl_error": (np.exp(r) - 1 - r).mean(),
    "policy_kl_error": (np.exp(-r) - 1 + r).mean(),
    "max_seq_mult_prob_error": max(np.exp(np.abs(x)).mean() for x in R),
    "mean_seq_mult_prob_error": np.mean([np.exp(np.abs(x)).mean() for x in R]),
    "min_seq_mult_prob_error": min(np.exp(np.abs(x)).mean() for x in R),
  },
  "trl": {"sampling/sampling_logp_difference/mean": absr.mean(), "sampling/sampling_logp_difference/max": absr.max()},
  "skyrl": {
    "policy/rollout_train_logprobs_abs_diff_mean": absr.mean(), "policy/rollout_train_logprobs_abs_diff_std": absr.std(ddof=1),
    "policy/rollout_train_logprobs_abs_diff_max": absr.max(), "policy/rollout_train_logprobs_abs_diff_min": absr.min(),
  },
  "openrlhf": {"vllm_kl": (LI - LT).mean()},
}
# NeMo-RL's JS: k3 of each side against the mixture M = (p_train + p_inf) / 2
logM = np.log(0.5 * pt + 0.5 * pi)
a, b = LT - logM, LI - logM
want["nemo-rl"]["js_divergence_error"] = (0.5 * (np.exp(a) - 1 - a) + 0.5 * (np.exp(b) - 1 - b)).mean()
bad = []
for f, figs in want.items():
    j = json.load(open(f"as-{f}.json"))
    got = {x["name"]: x["value"] for x in j["figures"]}
    if j["framework"] != f or set(got) != set(figs):
        bad.append(f"{f}: names {sorted(set(got) ^ set(figs))}")
    for k, w in figs.items():
        if k in got and not abs(got[k] - w) <= 1e-10 * max(1, abs(w)):
            bad.append(f"{f} {k}: {got[k]} vs numpy {w}")
    for x in j["figures"]:
        if "@" not in x["source"]:
            bad.append(f"{f} {x['name']}: no source")
# The templates: each clause written with a framework's name computes that framework's figure.
tpl = {"verl": {"V1": want["verl"]["training/rollout_probs_diff_mean"], "V3": want["verl"]["rollout_corr/kl"]},
       "slime": {"SL1": want["slime"]["train/train_rollout_logprob_abs_diff"]},
       "prime-rl": {"P1": want["prime-rl"]["mismatch_kl/all/mean"]},
       "nemo-rl": {"NR1": want["nemo-rl"]["gen_kl_error"]}}
for f, clauses in tpl.items():
    j = json.load(open(f"tpl-{f}.json"))
    res = {e["clause"]: e for e in j["results"]}
    if any(e["status"] == "error" for e in j["results"]):
        bad.append(f"template {f}: an error result")
    for c, w in clauses.items():
        if abs(res[c]["observed"] - w) > 1e-10 * max(1, abs(w)):
            bad.append(f"template {f} {c}: {res[c]['observed']} vs {w}")
print("\n".join(bad) if bad else "agree")
PY
contains framework-figures as.txt "agree"
check as-table 0 "$kcx" metrics --run run.jsonl --as prime-rl
contains as-table-name out.txt "mismatch_kl/all/mean"
contains as-table-source out.txt "PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64"
check as-unknown 2 "$kcx" metrics --run run.jsonl --as deepspeed
contains as-unknown-why err.txt "unknown framework 'deepspeed'"
check as-with-metrics 2 "$kcx" metrics --run run.jsonl --as verl --metrics k3
# Refusals.
check unknown 2 "$kcx" corrections --run run.jsonl --method clip:2
contains unknown-why err.txt "unknown correction 'clip'"
check no-params 2 "$kcx" corrections --run run.jsonl --method tis
check two-for-one 2 "$kcx" corrections --run run.jsonl --method seq_tis:1,2
check bad-bounds 2 "$kcx" corrections --run run.jsonl --method token_mask:2,0.5
contains bad-bounds-why err.txt "0 ≤ A ≤ B"
check not-number 2 "$kcx" corrections --run run.jsonl --method geo_mask:a,1
check no-run 2 "$kcx" corrections
check no-key 2 "$kcx" corrections --run run.jsonl --per-slice lang
contains no-key-why err.txt "no slice key 'lang' (its keys: step)"
check bad-contract 2 "$kcx" corrections --run run.jsonl --contract missing.yaml
contains bad-contract-why err.txt "missing.yaml"
check per-step-table 0 "$kcx" corrections --run run.jsonl --per-slice step
contains per-step-table-3 out.txt "step = 3:"
contains reward-column out.txt "affected with reward > 0"
check missing 2 "$kcx" corrections --run missing.jsonl
check over-input 2 "$kcx" corrections --run run.jsonl --json run.jsonl
finish
