#!/usr/bin/python3
"""False-alarm rates and power of `kcx diagnose` over many seeds (issue 21; docs/corrections.md).

For every setting, generates runs with tests/support/mismatch_runs.py (noise only, or one known
cause), runs `kcx diagnose --json -` on each, and counts how often each cause is reported and how
far the estimate lands from the truth. Usage:
  bench/diagnose_rates.py KCX [--seeds N] [--jobs J] [--only NAME]
"""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "tests", "support", "mismatch_runs.py")

# (name, cause, generator options, the cause that should be found or None, its true estimate)
SETTINGS = [
    ("noise σ=0.01, top-8", "noise", ["--sigma", "0.01"], None, None),
    ("noise σ=0.05, top-8", "noise", ["--sigma", "0.05"], None, None),
    ("noise σ=0.2, top-8", "noise", ["--sigma", "0.2"], None, None),
    ("noise σ=0.5, top-8", "noise", ["--sigma", "0.5"], None, None),
    ("noise on both sides σ=0.3, top-8", "noise", ["--sigma", "0.3", "--train-sigma", "0.3"], None, None),
    ("noise on both sides σ=0.3, logits", "noise", ["--sigma", "0.3", "--train-sigma", "0.3", "--logits", "--no-topk", "--sequences", "20"], None, None),
    ("noise σ=0.2, 2,000 sequences", "noise", ["--sigma", "0.2", "--sequences", "2000", "--min-len", "10", "--max-len", "30"], None, None),
    ("noise σ=0.2, top-20", "noise", ["--sigma", "0.2", "--k", "20"], None, None),
    ("noise σ=0.2, top-2", "noise", ["--sigma", "0.2", "--k", "2"], None, None),
    ("noise σ=0.2, logits", "noise", ["--sigma", "0.2", "--logits", "--no-topk", "--sequences", "20"], None, None),
    ("noise σ=0.2, sampled only", "noise", ["--sigma", "0.2", "--no-topk"], None, None),
    ("noise σ=0.2, 200 short sequences", "noise", ["--sigma", "0.2", "--sequences", "200", "--min-len", "6", "--max-len", "12"], None, None),
    ("noise σ=0.2, 8 sequences", "noise", ["--sigma", "0.2", "--sequences", "8"], None, None),
    ("temperature 0.8, top-8", "temperature:0.8", [], "temperature", 0.8),
    ("temperature 0.95, top-8", "temperature:0.95", [], "temperature", 0.95),
    ("temperature 0.8, noise σ=0.5 both sides", "temperature:0.8", ["--sigma", "0.5", "--train-sigma", "0.5"], "temperature", 0.8),
    ("temperature 1.2, logits", "temperature:1.2", ["--logits", "--no-topk", "--sequences", "20"], "temperature", 1.2),
    ("renormalised top-16, top-8", "renorm_topk:16", [], "renormalization", None),
    ("renormalised top-16, top-20", "renorm_topk:16", ["--k", "20"], "renormalization", None),
    ("offset 0.05, top-8", "offset:0.05", [], "constant_offset", 0.05),
    ("offset 0.01, sampled only", "offset:0.01", ["--no-topk", "--sigma", "0.01"], "constant_offset", 0.01),
    ("shift 1", "shift:1", [], "misalignment", 1),
    ("shift 2", "shift:2", [], "misalignment", 2),
    ("drift σ(1+t/16)", "drift:16", [], "position_drift", None),
]


def one(kcx, setting, seed, tmp):
    name, cause, opts, _, _ = setting
    out = os.path.join(tmp, f"{abs(hash(name)) % 10**8}_{seed}.jsonl")
    subprocess.run([sys.executable, GEN, cause, out, "--seed", str(seed)] + opts, check=True)
    r = subprocess.run([kcx, "diagnose", "--run", out, "--json", "-", "--quiet"], capture_output=True, text=True, check=True)
    os.unlink(out)
    return [(f["cause"], f["estimate"]) for f in json.loads(r.stdout)["findings"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kcx")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only")
    a = ap.parse_args()
    settings = [s for s in SETTINGS if not a.only or a.only in s[0]]
    print(f"{'setting':40} {'runs':>5}  reported (share of runs)        estimate of the true cause: median |error|, max |error|")
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(a.jobs) as ex:
        for s in settings:
            results = list(ex.map(lambda seed: one(a.kcx, s, seed, tmp), range(a.seeds)))
            counts = {}
            errs = []
            for fs in results:
                for c, est in fs:
                    counts[c] = counts.get(c, 0) + 1
                    if c == s[3] and s[4] is not None and est is not None:
                        errs.append(abs(est - s[4]))
            rep = ", ".join(f"{c} {n / a.seeds:.2f}" for c, n in sorted(counts.items())) or "nothing"
            err = ""
            if errs:
                errs.sort()
                err = f"{errs[len(errs) // 2]:.4f}, {errs[-1]:.4f}"
            print(f"{s[0]:40} {a.seeds:5}  {rep:32} {err}", flush=True)


if __name__ == "__main__":
    main()
