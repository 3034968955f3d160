#!/usr/bin/env bash
# `kcx replay` end to end (issue 20, SPEC 8): a run whose task=code divergence rises from
# step 10 of 20 and falls back at step 15. Each step is cut into its own file and checked with
# `kcx check`; Python applies SPEC 8's persist and until to those statuses (its own reading of
# the rules) and the replay's steps, actions and events must be exactly that. The same from a
# summary; exit codes for the last step; what replay refuses.
# Usage: cli_replay_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

$py - <<'PY'
import json, numpy as np
rng = np.random.default_rng(8)
with open("run.jsonl", "w") as f:
    for step in range(20):
        with open(f"step{step}.jsonl", "w") as g:
            for i in range(9):
                task = ["code", "math", "chat"][i % 3]
                T = 30
                sd = 0.05 if (task == "code" and 10 <= step < 15) else 0.01
                r = rng.normal(0, sd, T)
                train = -np.abs(rng.lognormal(-1, 1, T))
                rec = {"id": f"s{step}-{i}", "step": step, "slices": {"task": task}, "tokens": [1] * T,
                       "logp_train": train.tolist(), "logp_inf": (train - r).tolist()}
                f.write(json.dumps(rec) + "\n")
                g.write(json.dumps(rec) + "\n")
PY
cat > contract.yaml <<'YAML'
kcx_contract: 1
name: replay-test
numerical:
  - {id: N1, metric: abs_log_ratio, aggregate: max, max: 0.08, per_slice: task}
  - {id: N2, metric: abs_log_ratio, aggregate: mean, max: 0.02, severity: warn}
escalation:
  - when: {clause: N1, stage: [canary, full]}
    persist: {failures: 2, window: 3}
    until: {passes: 3}
    action: rollback
  - when: {clause: N1}
    persist: {failures: 3, window: 3}
    action: block_promotion
  - when: {severity: warn}
    action: hold
  - default: warn
YAML
for s in $(seq 0 19); do
  "$kcx" check --contract contract.yaml --run "step$s.jsonl" --json "check$s.json" --quiet
done
check replay 0 "$kcx" replay --contract contract.yaml --run run.jsonl --json replay.json --quiet
check table 0 "$kcx" replay --contract contract.yaml --run run.jsonl
contains table-event out.txt "rollback"
check summarize 0 "$kcx" summarize --run run.jsonl --out run.kcxsum --quiet
check from-summary 0 "$kcx" replay --contract contract.yaml --run run.kcxsum --json sum.json --quiet
$py - <<'PY' > verdict.txt
import json
stages = ["offline_ci", "shadow", "canary", "full"]
order = ["pass", "warn", "hold", "shadow_only", "route_to_reference", "block_promotion", "rollback"]
rules = [dict(clause="N1", stages={"canary", "full"}, persist=(2, 3), until=3, action="rollback"),
         dict(clause="N1", stages=None, persist=(3, 3), until=None, action="block_promotion"),
         dict(severity="warn", action="hold", persist=None, until=None, stages=None),
         dict(default=True, action="warn", persist=None, until=None, stages=None)]
checks = [json.load(open(f"check{s}.json")) for s in range(20)]
def when(rule, res, stage):
    if rule.get("default"): return True
    if "clause" in rule and res["clause"] != rule["clause"]: return False
    if "severity" in rule and res.get("severity", "error") != rule["severity"]: return False
    if rule["stages"] and stage not in rule["stages"]: return False
    return True
want_steps, want_events = [], []
for stage in stages:
    hist = {}; latched = {}; passrun = {}; prev = "pass"
    for s, c in enumerate(checks):
        results = c["results"]
        clauses = sorted({r["clause"] for r in results})
        cpass = {cl: all(r["status"] == "pass" for r in results if r["clause"] == cl) for cl in clauses}
        for cl in clauses:
            passrun[cl] = passrun.get(cl, 0) + 1 if cpass[cl] else 0
        now, carried = {}, {}
        for i, rule in enumerate(rules):
            if not (rule["persist"] or rule["until"]): continue
            for cl in clauses:
                raw = any(r["status"] != "pass" and r["clause"] == cl and when(rule, r, stage) for r in results)
                h = hist.setdefault((i, cl), []); h.append(raw)
                ok = raw and (not rule["persist"] or sum(h[-rule["persist"][1]:]) >= rule["persist"][0])
                now[(i, cl)] = ok
                if rule["until"]:
                    if latched.get((i, cl)):
                        if passrun[cl] >= rule["until"]: latched[(i, cl)] = False
                        else: carried[(i, cl)] = True
                    if not latched.get((i, cl)) and ok: latched[(i, cl)] = True
        strongest = "pass"
        for r in results:
            a = "pass" if r["status"] == "pass" else "warn"
            for i, rule in enumerate(rules):
                if rule.get("default"): hit = r["status"] != "pass"
                elif rule["persist"] or rule["until"]:
                    hit = carried.get((i, r["clause"]), False) or (now.get((i, r["clause"]), False) and r["status"] != "pass" and when(rule, r, stage))
                else: hit = r["status"] != "pass" and when(rule, r, stage)
                if hit: a = rule["action"]; break
            if order.index(a) > order.index(strongest): strongest = a
        if stage == stages[0]: want_steps.append({"step": s, "verdict": c["verdict"], "actions": {}})
        want_steps[s]["actions"][stage] = strongest
        if strongest != prev: want_events.append({"step": s, "stage": stage, "from": prev, "to": strongest})
        prev = strongest
want_events.sort(key=lambda e: e["step"])
problems = []
for name in ("replay.json", "sum.json"):
    j = json.load(open(name))
    got_steps = [{"step": x["step"], "verdict": x["verdict"], "actions": x["actions"]} for x in j["steps"]]
    if got_steps != want_steps:
        for g, w in zip(got_steps, want_steps):
            if g != w: problems.append(f"{name}: step {w['step']}: {g} vs {w}")
    if j["events"] != want_events:
        problems.append(f"{name}: events {j['events']} vs {want_events}")
    if j["contract"]["name"] != "replay-test" or len(j["contract"]["sha256"]) != 64:
        problems.append(f"{name}: contract {j['contract']}")
# the timeline must actually exercise the rules: a rollback at canary and a block at offline_ci
acts = {(w["actions"]["canary"], w["actions"]["offline_ci"]) for w in want_steps}
if not any(c == "rollback" for c, o in acts) or not any(o == "block_promotion" for c, o in acts):
    problems.append(f"the timeline does not exercise persist/until: {acts}")
print("\n".join(problems) if problems else "agree")
PY
contains timeline verdict.txt "agree"
# Exit codes follow the last step: cut the run at step 12 (failing) and check it exits 1.
head -n $((13 * 9)) run.jsonl > upto12.jsonl
check last-fails 1 "$kcx" replay --contract contract.yaml --run upto12.jsonl --quiet
# Refusals.
$py -c "
import json
for l in open('step0.jsonl'):
    r = json.loads(l); del r['step']; print(json.dumps(r))" > nosteps.jsonl
check no-steps 2 "$kcx" replay --contract contract.yaml --run nosteps.jsonl
contains no-steps-why err.txt "no training steps"
check no-contract 2 "$kcx" replay --run run.jsonl
check bad-contract 2 "$kcx" replay --contract run.jsonl --run run.jsonl
check over-input 2 "$kcx" replay --contract contract.yaml --run run.jsonl --json contract.yaml
check missing 2 "$kcx" replay --contract contract.yaml --run missing.jsonl
finish
