#!/usr/bin/python3
"""What a user feels (issue 17, item 5): whole `kcx` commands against a hand-tuned numpy
script doing the same work, interleaved in one run, with the peak memory of each.

    /usr/bin/python3 bench/commands_bench.py --kcx build/kcx [--dir /tmp/kcx-cmd] \
        [--tokens 20000000] [--rounds 3] [--only NAME,...] [--window build/bench_window]

Inputs (made once into --dir, seeded, not timed): a log-prob run of --tokens float32
tokens (offsets/tokens/logp_train/logp_inf safetensors, 12 bytes per token) and a logits
run of 2,048 x 32,000 float32 logits per kernel. Each case runs the kcx command and its
numpy equivalent as separate processes (the page cache warm: every input is read once
before the rounds), alternating, --rounds times. For each it prints min/median/max wall
seconds, the peak resident size (RUSAGE_CHILDREN of a fresh interpreter per process, the
same as `/usr/bin/time -v`), and the speed-up of kcx over numpy (numpy median / kcx
median). A plain C-speed read of the logits file (numpy sum over an mmap) is timed as
well, for the logit kernel's share of the read bandwidth. No test runs this.

The numpy side is what a careful user would write: float32 arrays mapped in place,
np.partition for the order statistics (type-7 interpolation by hand), float64 only where
the sums need it; hashlib for the run's SHA-256 where kcx hashes it (--json).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_external_run as mk  # noqa: E402

ROWS, VOCAB = 2048, 32000
JSONL_TOKENS = 2_000_000

# The numpy programs, run as `python3 -c PROGRAM PATH`. Each prints what it computed so the
# work cannot be skipped.
NP_COMMON = r"""
import json, mmap, struct, sys, hashlib
import numpy as np
def open_st(path):
    f = open(path, "rb")
    n = struct.unpack("<Q", f.read(8))[0]
    h = json.loads(f.read(n)); h.pop("__metadata__", None)
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    dt = {"F32": np.float32, "I64": np.int64, "I32": np.int32}
    return {k: np.frombuffer(m, dtype=dt[v["dtype"]], count=int(np.prod(v["shape"])),
                             offset=8 + n + v["data_offsets"][0]).reshape(v["shape"])
            for k, v in h.items()}
def q7(sorted_part_fn, a, qs):
    # type-7 quantiles by selection: the two order statistics around each h
    n = a.size; out = []
    ks = []
    for q in qs:
        h = (n - 1) * q; lo = int(np.floor(h)); ks += [lo, min(lo + 1, n - 1)]
    p = np.partition(a, sorted(set(ks)))
    for q in qs:
        h = (n - 1) * q; lo = int(np.floor(h)); hi = min(lo + 1, n - 1)
        out.append(float(p[lo] + (h - lo) * (p[hi] - p[lo])))
    return out
def summary(a):
    return [float(a.mean(dtype=np.float64)), float(a.max())] + q7(None, a, [0.5, 0.99, 0.999])
"""

NP_ABS = NP_COMMON + r"""
t = open_st(sys.argv[1])
r = np.abs(t["logp_train"] - t["logp_inf"])
print(summary(r))
"""

NP_ABS_HASH = NP_COMMON + r"""
t = open_st(sys.argv[1])
r = np.abs(t["logp_train"] - t["logp_inf"])
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    while True:
        b = f.read(1 << 22)
        if not b: break
        h.update(b)
print(summary(r), h.hexdigest())
"""

# Every metric a log-prob-only run supports (docs/metrics.md), each summarised.
NP_ALL = NP_COMMON + r"""
t = open_st(sys.argv[1])
a, b = t["logp_train"], t["logp_inf"]
off = t["offsets"]
r = a - b
out = []
out.append(summary(r))                         # log_ratio
out.append(summary(np.abs(r)))                 # abs_log_ratio
w = np.exp(r); out.append(summary(w))          # ratio
out.append(summary(np.abs(np.exp(a) - np.exp(b))))   # prob_diff
out.append(summary(-r))                        # k1
out.append(summary(0.5 * r * r))               # k2
out.append(summary(np.expm1(r) - r))           # k3
out.append(summary(w * w - 1))                 # chi2
out.append(summary(((w < 0.8) | (w > 1.2)).astype(np.float32)))   # clip_excess
s = np.add.reduceat(r.astype(np.float64), off[:-1])   # per-sequence sums
ln = np.diff(off)
out.append(summary(s)); out.append(summary(np.abs(s)))
out.append(summary(np.exp(s / ln))); out.append(summary(np.exp(np.clip(s, -20, 20))))
out.append(summary(np.maximum.reduceat(np.abs(r), off[:-1])))
out.append(summary(np.add.reduceat(np.abs(r).astype(np.float64), off[:-1]) / ln))
# the run-level ones: ess, prob_pearson, log_ppl_diff
w64 = w.astype(np.float64)
out.append(w64.sum() ** 2 / (w64.size * (w64 * w64).sum()))
out.append(np.corrcoef(np.exp(a.astype(np.float64)), np.exp(b.astype(np.float64)))[0, 1])
out.append(float((np.add.reduceat((b - a).astype(np.float64), off[:-1]) / ln).mean()))
print(len(out))
"""

# A JSON Lines run (SPEC 1.1) parsed by Python's json module into numpy arrays, then the
# same summary as NP_ABS: what a user without kcx would write.
NP_JSONL = NP_COMMON + r"""
a, b = [], []
with open(sys.argv[1]) as f:
    for line in f:
        d = json.loads(line)
        a.extend(d["logp_train"]); b.extend(d["logp_inf"])
a = np.asarray(a, np.float64); b = np.asarray(b, np.float64)
print(summary(np.abs(a - b)))
"""

NP_LOGITS = NP_COMMON + r"""
t = open_st(sys.argv[1])
z, zp = t["logits_train"], t["logits_inf"]
tv = np.empty(z.shape[0]); kl = np.empty(z.shape[0]); dr = np.empty(z.shape[0])
B = 64
for s in range(0, z.shape[0], B):
    x = z[s:s+B]; y = zp[s:s+B]
    xm = x - x.max(axis=1, keepdims=True); ym = y - y.max(axis=1, keepdims=True)
    ex = np.exp(xm); ey = np.exp(ym)
    sx = ex.sum(axis=1, keepdims=True, dtype=np.float64); sy = ey.sum(axis=1, keepdims=True, dtype=np.float64)
    p = ex / sx; q = ey / sy
    tv[s:s+B] = 0.5 * np.abs(p - q).sum(axis=1, dtype=np.float64)
    lp = xm - np.log(sx); lq = ym - np.log(sy)
    kl[s:s+B] = (p * (lp - lq)).sum(axis=1, dtype=np.float64)
    d = x - y
    dr[s:s+B] = 0.5 * (d.max(axis=1) - d.min(axis=1))
print(summary(tv), summary(kl), summary(dr))
"""

NP_READ = NP_COMMON + r"""
t = open_st(sys.argv[1])
print(float(t["logits_train"].sum(dtype=np.float64) + t["logits_inf"].sum(dtype=np.float64)))
"""

CHECK_CONTRACT = """kcx_contract: 1
name: bench
numerical:
  - {id: N1, metric: abs_log_ratio, aggregate: p99.9, max: 1}
statistical:
  - {id: S1, metric: abs_log_ratio, test: exceedance, level: 0.05, max: 0.01}
"""


def measured(cmd, env=None):
    """(wall seconds, peak resident bytes) of one process, run from a fresh interpreter so
    that RUSAGE_CHILDREN holds that process alone."""
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.perf_counter()\n"
             "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
             "t = time.perf_counter() - t\n"
             "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, p.returncode)\n"
             "sys.stderr.write(p.stderr.decode(errors='replace')[-400:])\n")
    out = subprocess.run([sys.executable, "-c", probe] + cmd, capture_output=True, text=True, env=env)
    parts = out.stdout.split()
    if len(parts) != 3:
        raise RuntimeError(f"{cmd}: {out.stderr}")
    secs, rss, rc = float(parts[0]), int(parts[1]), int(parts[2])
    if rc not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {rc}: {out.stderr}")
    return secs, rss


def make_inputs(d, tokens):
    os.makedirs(d, exist_ok=True)
    lp = os.path.join(d, f"logprobs_{tokens // 1_000_000}m.safetensors")
    if not os.path.exists(lp):
        rng = np.random.default_rng(20261205)
        a = (-rng.exponential(0.6, tokens)).astype(np.float32)
        b = np.minimum(a + rng.normal(0.0, 2e-3, tokens).astype(np.float32), 0).astype(np.float32)
        n_seq = tokens // 2000
        off = np.linspace(0, tokens, n_seq + 1).astype(np.int64)
        ids = [f"s{i:06d}" for i in range(n_seq)]
        mk.write_safetensors(lp, [("offsets", "I64", off),
                                  ("tokens", "I32", rng.integers(0, 32000, tokens).astype(np.int32)),
                                  ("logp_train", "F32", a), ("logp_inf", "F32", b)],
                             {"kcx": "1", "ids": json.dumps(ids)})
    lg = os.path.join(d, "logits_2048x32000.safetensors")
    if not os.path.exists(lg):
        rng = np.random.default_rng(20261206)
        z = rng.normal(0, 3, (ROWS, VOCAB)).astype(np.float32)
        zp = (z + rng.normal(0, 0.02, (ROWS, VOCAB))).astype(np.float32)
        lpt = np.full(ROWS, -0.5, np.float32)
        mk.write_safetensors(lg, [("offsets", "I64", np.array([0, ROWS], np.int64)),
                                  ("logits_rows", "I64", np.arange(ROWS, dtype=np.int64)),
                                  ("tokens", "I32", np.zeros(ROWS, np.int32)),
                                  ("logp_train", "F32", lpt), ("logp_inf", "F32", lpt),
                                  ("logits_train", "F32", z), ("logits_inf", "F32", zp)],
                             {"kcx": "1", "ids": json.dumps(["row-block"])})
    jl = os.path.join(d, f"logprobs_{JSONL_TOKENS // 1_000_000}m.jsonl")
    if not os.path.exists(jl):
        # Full-precision floats, as a trainer's json.dumps or vLLM's JSON writes them.
        rng = np.random.default_rng(20261207)
        with open(jl, "w") as f:
            for s in range(JSONL_TOKENS // 1000):
                a = -rng.exponential(0.6, 1000)
                b = np.minimum(a + rng.normal(0.0, 2e-3, 1000), 0)
                f.write(json.dumps({"id": f"s{s}", "tokens": rng.integers(0, 32000, 1000).tolist(),
                                    "logp_train": a.tolist(), "logp_inf": b.tolist()},
                                   separators=(",", ":")) + "\n")
    contract = os.path.join(d, "check.yaml")
    with open(contract, "w") as f:
        f.write(CHECK_CONTRACT)
    return lp, lg, jl, contract


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kcx", required=True)
    ap.add_argument("--dir", default="/tmp/kcx-cmd")
    ap.add_argument("--tokens", type=int, default=20_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--window", default="", help="bench_window: the window's settle time against kcx check "
                    "on its 10M-token run, and its event-loop stalls beside a CPU hog")
    a = ap.parse_args(argv)
    kcx = os.path.abspath(a.kcx)
    lp, lg, jl, contract = make_inputs(a.dir, a.tokens)
    py = sys.executable
    jout = os.path.join(a.dir, "out.json")
    cases = [
        ("abs_log_ratio", [kcx, "metrics", "--run", lp, "--metrics", "abs_log_ratio"], [py, "-c", NP_ABS, lp]),
        ("every metric", [kcx, "metrics", "--run", lp], [py, "-c", NP_ALL, lp]),
        ("logits tv/kl/drift", [kcx, "metrics", "--run", lg, "--metrics", "tv,kl_train_inf,logit_drift"],
         [py, "-c", NP_LOGITS, lg]),
        ("abs_log_ratio --json", [kcx, "metrics", "--run", lp, "--metrics", "abs_log_ratio", "--json", jout],
         [py, "-c", NP_ABS_HASH, lp]),
        ("check p99.9 + exceedance", [kcx, "check", "--contract", contract, "--run", lp], None),
        ("read the logits (C speed)", None, [py, "-c", NP_READ, lg]),
        ("JSON Lines abs_log_ratio", [kcx, "metrics", "--run", jl, "--metrics", "abs_log_ratio"],
         [py, "-c", NP_JSONL, jl]),
        ("JSON Lines check", [kcx, "check", "--contract", contract, "--run", jl], None),
    ]
    if a.only:
        keep = set(a.only.split(","))
        cases = [c for c in cases if c[0] in keep]
    # Warm the page cache.
    for path in (lp, lg, jl):
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    load = os.getloadavg()
    times = {c[0]: {"kcx": [], "numpy": [], "kcx_rss": 0, "numpy_rss": 0} for c in cases}
    for r in range(a.rounds):
        for name, kcmd, ncmd in cases:
            for side, cmd in (("kcx", kcmd), ("numpy", ncmd)):
                if cmd is None:
                    continue
                t, rss = measured(cmd)
                times[name][side].append(t)
                times[name][side + "_rss"] = max(times[name][side + "_rss"], rss)
    sizes = {lp: os.path.getsize(lp), lg: os.path.getsize(lg), jl: os.path.getsize(jl)}
    print(f"# {platform.node()}: {os.cpu_count()} CPUs, load {load[0]:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after; {a.rounds} rounds, interleaved")
    print(f"# log-prob run {a.tokens:,} tokens, {sizes[lp] / 1e6:.0f} MB; logits run {sizes[lg] / 1e6:.0f} MB; "
          f"JSON Lines run {JSONL_TOKENS:,} tokens, {sizes[jl] / 1e6:.0f} MB")
    print("| work | kcx s (min/med/max) | kcx peak | numpy s (min/med/max) | numpy peak | kcx speed-up |")
    print("|---|---|---|---|---|---|")
    def fmt(v):
        return f"{min(v):.2f} / {statistics.median(v):.2f} / {max(v):.2f}" if v else "—"
    for name, kcmd, ncmd in cases:
        t = times[name]
        up = (statistics.median(t["numpy"]) / statistics.median(t["kcx"])) if t["kcx"] and t["numpy"] else None
        file = next(f for f in (lg, jl, lp) if (kcmd and f in kcmd) or (ncmd and f in ncmd))
        kpk = f"{t['kcx_rss'] / 1e6:.0f} MB ({t['kcx_rss'] / sizes[file]:.2f}x file)" if t["kcx"] else "—"
        npk = f"{t['numpy_rss'] / 1e6:.0f} MB" if t["numpy"] else "—"
        print(f"| {name} | {fmt(t['kcx'])} | {kpk} | {fmt(t['numpy'])} | {npk} | "
              f"{'%.2fx' % up if up else '—'} |")
    if a.window:
        window_part(os.path.abspath(a.window), kcx, a.dir, a.rounds)


def window_part(bench, kcx, d, rounds):
    """Issue 17's window targets: a 10M-token run settled within 1.5x `kcx check` on it
    (interleaved, the window's time from opening the run to verdicts and heatmap drawn,
    without the stall probe), and the longest event-loop stall while a CPU hog keeps one
    core busy (during the load and first evaluation, and during 30 threshold edits)."""
    import re
    wd = os.path.join(d, "window")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run = [bench, "--dir", wd, "--edits", "0", "--no-probe"]
    subprocess.run(run, env=env, capture_output=True)   # writes the run once
    check = [kcx, "check", "--run", os.path.join(wd, "window_10m.safetensors"),
             "--contract", os.path.join(wd, "window.yaml")]
    settle, chk = [], []
    for _ in range(rounds):
        out = subprocess.run(run, env=env, capture_output=True, text=True).stdout
        settle.append(float(re.search(r"heatmap at 10M tokens: ([0-9.]+) ms", out).group(1)) / 1e3)
        chk.append(measured(check)[0])
    fmt = lambda v: f"{min(v):.2f} / {statistics.median(v):.2f} / {max(v):.2f}"
    print("\n| window, 10M tokens | window settled s | `kcx check` s | ratio (medians) | target |")
    print("|---|---|---|---|---|")
    print(f"| open run + contract until verdicts and heatmap drawn | {fmt(settle)} | {fmt(chk)} | "
          f"{statistics.median(settle) / statistics.median(chk):.2f}x | <= 1.5x |")
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        time.sleep(0.5)
        load_st, later_st, edit_st, paint = [], [], [], []
        for _ in range(rounds):
            out = subprocess.run([bench, "--dir", wd, "--edits", "30"], env=env, capture_output=True, text=True).stdout
            st = [float(x) for x in re.findall(r"longest event-loop stall ([0-9.]+) ms", out)]
            load_st.append(st[0])
            edit_st.append(st[1])
            later_st.append(float(re.search(r"longest event-loop stall until then ([0-9.]+) ms", out).group(1)))
            paint.append(float(re.search(r"first painted in ([0-9.]+) ms", out).group(1)))
    finally:
        hog.kill()
    print(f"| longest event-loop stall beside a CPU hog, load + first evaluation (ms) | {fmt(load_st)} | | | <= 30 |")
    print(f"| the same until the diagnosis and corrections are drawn too (ms) | {fmt(later_st)} | | | <= 30 |")
    print(f"| longest event-loop stall beside a CPU hog, 30 threshold edits (ms) | {fmt(edit_st)} | | | <= 30 |")
    print(f"| the window's first paint beside the hog, before the run is opened (ms) | {fmt(paint)} | | | |")


if __name__ == "__main__":
    main(sys.argv[1:])
