#!/usr/bin/env bash
# A sign-off record verifies on another machine (issue 16, docs/signoff.md "Same results on
# every machine"): the demo run, with full logits, top-k and log-probs, is signed here and
# verified as if on machines with another instruction set and core count:
#   KCX_ISA=generic|avx2   the logit kernel of an older CPU (core/metrics/logit_row_fns.h);
#   GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX2,-FMA   glibc's libm as on a CPU without
#                          FMA (its exp/log/pow differ from the FMA variants in the last bit);
#   KCX_THREADS=1|3|16     another core count.
# `kcx check --json` must also write the same bytes under each, so every number agrees.
# Usage: cli_any_machine_test.sh KCX WORKDIR [quick]
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
export HOME="$work/home"; mkdir -p "$HOME"
export KCX_TRUSTED_KEYS="$work/none"
unset KCX_ISA KCX_THREADS GLIBC_TUNABLES

"$kcx" demo --out demo >/dev/null 2>demo.err || { cat demo.err; echo "FAIL demo"; exit 1; }
run=demo/demo.safetensors; contract=demo/demo-contract.yaml
"$kcx" keygen --out alice.key >/dev/null 2>&1 || { echo "FAIL keygen"; exit 1; }
"$kcx" sign --contract "$contract" --run "$run" --key alice.key --reviewer alice --decision approve \
  --out rec.signoff.json >/dev/null 2>sign.err || { cat sign.err; echo "FAIL sign"; exit 1; }
"$kcx" check --contract "$contract" --run "$run" --json here.json >/dev/null 2>&1
[ -s here.json ] && ok || bad "check --json wrote nothing"
# The run must exercise what differs between machines: full logits and the exp-based metrics.
grep -q '"logit_drift"\|"tv"' here.json && ok || bad "the demo contract has no full-logit clause"

# A second run where glibc's choice matters: 200,000 log-probs through exp, expm1 and log
# (ratio, k3, chi2, prob_diff means; tv from top-k) at full precision.
/usr/bin/python3 - <<'PY'
import json, random
random.seed(16)
with open("lp.jsonl", "w") as f:
    for s in range(2000):
        T = 100
        a = [-random.expovariate(0.7) for _ in range(T)]
        b = [x + random.gauss(0, 0.05) for x in a]
        ids = [[1, 2] for _ in range(T)]
        ka = [[x, x - 1.5] for x in a]
        kb = [[x, x - 1.4] for x in b]
        f.write(json.dumps({"id": f"s{s}", "slices": {"task": "math" if s % 2 else "code"},
                            "tokens": [1] * T, "logp_train": a, "logp_inf": b,
                            "topk_train": {"ids": ids, "logp": ka},
                            "topk_inf": {"ids": ids, "logp": kb}}) + "\n")
PY
cat > lp.yaml <<'YAML'
kcx_contract: 1
name: any-machine
numerical:
  - {id: R1, metric: ratio, aggregate: mean, max: 2}
  - {id: R2, metric: k3, aggregate: mean, max: 1}
  - {id: R3, metric: chi2, aggregate: mean, max: 1, per_slice: task}
  - {id: R4, metric: prob_diff, aggregate: p99, max: 1}
  - {id: R5, metric: kl_lower, aggregate: mean, max: 1}
YAML
"$kcx" sign --contract lp.yaml --run lp.jsonl --key alice.key --reviewer alice --decision approve \
  --out lp.signoff.json >/dev/null 2>sign2.err || { cat sign2.err; echo "FAIL sign lp"; exit 1; }
"$kcx" check --contract lp.yaml --run lp.jsonl --json lp-here.json >/dev/null 2>&1
[ -s lp-here.json ] && ok || bad "check --json on lp.jsonl wrote nothing"

machines=(
  "KCX_ISA=generic"
  "KCX_ISA=avx2"
  "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX2,-FMA"
  "KCX_THREADS=1"
  "KCX_THREADS=3"
  "KCX_THREADS=16"
  "KCX_ISA=generic KCX_THREADS=1 GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX2,-FMA"
)
# quick (the sanitizer suite): the two most different of them.
[ "${3:-}" = quick ] && machines=("${machines[6]}" "${machines[5]}")
i=0
for m in "${machines[@]}"; do
  i=$((i+1))
  env $m "$kcx" verify rec.signoff.json --contract "$contract" --run "$run" --pub alice.key.pub \
    >v$i.txt 2>&1
  rc=$?
  if [ $rc = 0 ]; then ok; else bad "verify under '$m': exit $rc, expected 0"; cat v$i.txt; fi
  env $m "$kcx" check --contract "$contract" --run "$run" --json there$i.json >/dev/null 2>&1
  if cmp -s here.json there$i.json; then ok; else
    bad "check --json under '$m' differs:"; diff <(tr ',' '\n' <here.json) <(tr ',' '\n' <there$i.json) | head -8
  fi
  env $m "$kcx" verify lp.signoff.json --contract lp.yaml --run lp.jsonl --pub alice.key.pub >w$i.txt 2>&1
  rc=$?
  if [ $rc = 0 ]; then ok; else bad "verify lp under '$m': exit $rc, expected 0"; cat w$i.txt; fi
  env $m "$kcx" check --contract lp.yaml --run lp.jsonl --json lp-there$i.json >/dev/null 2>&1
  if cmp -s lp-here.json lp-there$i.json; then ok; else
    bad "check --json on lp.jsonl under '$m' differs:"; diff <(tr ',' '\n' <lp-here.json) <(tr ',' '\n' <lp-there$i.json) | head -8
  fi
done

echo "any_machine: $pass passed, $fail failed"
[ $fail = 0 ]
