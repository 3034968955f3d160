#!/usr/bin/python3
"""Summaries at scale (issue 19, item 5): `kcx summarize` against the machine's read
bandwidth in the same run, its peak memory on a small and a ten times larger run, and a
simulated fleet (shards summarised one by one, then merged) with the sizes written down,
and the window opening a summary of --window-steps steps (settled: `kcx open --screenshot`).

    /usr/bin/python3 bench/summary_bench.py --kcx build/kcx [--dir /tmp/kcx-sum] \
        [--tokens 20000000] [--shards 100] [--shard-tokens 200000] [--rounds 3] \
        [--window-steps 1000] [--only-window]

Inputs (made once, seeded, not timed): log-prob safetensors runs of --tokens and
--tokens/10 float32 tokens with 10 steps and a 3-valued task label, and --shards shard runs
of --shard-tokens tokens each. The read bandwidth is a C-speed pass over the same file
(numpy sum over an mmap, page cache warm), timed interleaved with kcx. Prints
min/median/max wall seconds and peak resident sizes. No test runs this.
"""

import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import make_external_run as mk  # noqa: E402
from commands_bench import measured  # noqa: E402

READ = r"""
import mmap, sys
import numpy as np
with open(sys.argv[1], "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    a = np.frombuffer(m, dtype=np.uint8, count=len(m) // 8 * 8).view(np.uint64)
    print(int(a.sum(dtype=np.uint64)))
"""


def make_run(path, tokens, seed, id_prefix="s"):
    if os.path.exists(path):
        return
    rng = np.random.default_rng(seed)
    a = (-rng.exponential(0.6, tokens)).astype(np.float32)
    b = np.minimum(a + rng.normal(0.0, 2e-3, tokens).astype(np.float32), 0).astype(np.float32)
    n_seq = max(1, tokens // 2000)
    off = np.linspace(0, tokens, n_seq + 1).astype(np.int64)
    ids = [f"{id_prefix}{i:07d}" for i in range(n_seq)]
    steps = np.sort(rng.integers(0, 10, n_seq)).astype(np.int64)
    task = rng.integers(0, 3, n_seq).astype(np.int32)
    mk.write_safetensors(path, [("offsets", "I64", off),
                                ("tokens", "I32", rng.integers(0, 32000, tokens).astype(np.int32)),
                                ("logp_train", "F32", a), ("logp_inf", "F32", b),
                                ("step", "I64", steps), ("slice_codes", "I32", task.reshape(-1, 1))],
                         {"kcx": "1", "ids": json.dumps(ids),
                          "slice_keys": json.dumps(["task"]),
                          "slice_values": json.dumps({"task": ["chat", "code", "math"]})})


def make_steps_run(path, steps, seqs_per_step=6, tokens_per_seq=160):
    """A log-prob run of `steps` steps whose divergence grows with the step, a task label."""
    if os.path.exists(path):
        return
    rng = np.random.default_rng(1000 + steps)
    n_seq = steps * seqs_per_step
    tokens = n_seq * tokens_per_seq
    step_of = np.repeat(np.arange(steps, dtype=np.int64), seqs_per_step)
    a = (-rng.exponential(0.6, tokens)).astype(np.float32)
    scale = np.repeat(0.01 + 0.00005 * step_of, tokens_per_seq)
    b = (a - rng.normal(0.0, 1.0, tokens) * scale).astype(np.float32)
    off = np.arange(0, tokens + 1, tokens_per_seq, dtype=np.int64)
    mk.write_safetensors(path, [("offsets", "I64", off),
                                ("tokens", "I32", rng.integers(0, 32000, tokens).astype(np.int32)),
                                ("logp_train", "F32", a), ("logp_inf", "F32", b), ("step", "I64", step_of),
                                ("slice_codes", "I32", (np.arange(n_seq) % 3).astype(np.int32).reshape(-1, 1))],
                         {"kcx": "1", "ids": json.dumps([f"q{i:07d}" for i in range(n_seq)]),
                          "slice_keys": json.dumps(["task"]),
                          "slice_values": json.dumps({"task": ["chat", "code", "math"]})})


def window(a):
    """Opening a summary of many steps in the window, until it has settled."""
    run = os.path.join(a.dir, f"steps_{a.window_steps}.safetensors")
    make_steps_run(run, a.window_steps)
    summ = run + ".kcxsum"
    s_sum, m_sum = measured([a.kcx, "summarize", "--run", run, "--out", summ, "--quiet"])
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", KCX_NO_DIALOGS="1")
    shot = os.path.join(a.dir, "window.png")
    t_open, t_metrics, rss = [], [], 0
    for r in range(a.rounds):
        s, rss = measured([a.kcx, "open", summ, "--screenshot", shot, "--size", "1400x900"], env=env)
        t_open.append(s)
        s, _ = measured([a.kcx, "metrics", "--run", summ, "--metrics", "abs_log_ratio"])
        t_metrics.append(s)
    print(f"\nwindow: a summary of {a.window_steps} steps ({os.path.getsize(run) / 1e6:.0f} MB run, "
          f"{os.path.getsize(summ) / 1e6:.1f} MB summary); summarize {s_sum:.1f} s, peak RSS {m_sum / 1e6:.0f} MB")
    print(f"  kcx open --screenshot (settled): {stats(t_open)} s, peak RSS {rss / 1e6:.0f} MB")
    print(f"  kcx metrics on it (the read alone, mostly): {stats(t_metrics)} s")


def stats(xs):
    return f"{min(xs):.2f} / {statistics.median(xs):.2f} / {max(xs):.2f}"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--kcx", required=True)
    ap.add_argument("--dir", default="/tmp/kcx-sum")
    ap.add_argument("--tokens", type=int, default=20_000_000)
    ap.add_argument("--shards", type=int, default=100)
    ap.add_argument("--shard-tokens", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window-steps", type=int, default=1000)
    ap.add_argument("--only-window", action="store_true")
    a = ap.parse_args(argv)
    os.makedirs(a.dir, exist_ok=True)
    if a.only_window:
        print(f"machine: {platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()}")
        window(a)
        return
    big = os.path.join(a.dir, f"run_{a.tokens // 1_000_000}m.safetensors")
    small = os.path.join(a.dir, f"run_{a.tokens // 10_000_000}m.safetensors")
    make_run(big, a.tokens, 1)
    make_run(small, a.tokens // 10, 2)
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()}")
    for p in (big, small):   # page cache warm
        subprocess.run([sys.executable, "-c", READ, p], capture_output=True)
    out = os.path.join(a.dir, "out.kcxsum")
    t_kcx, t_read, rss = [], [], {}
    for r in range(a.rounds):
        s, m = measured([sys.executable, "-c", READ, big])
        t_read.append(s)
        s, m = measured([a.kcx, "summarize", "--run", big, "--out", out, "--quiet"])
        t_kcx.append(s)
        rss["big"] = m
        s, m = measured([a.kcx, "summarize", "--run", small, "--out", out + ".small", "--quiet"])
        rss["small"] = m
    size = os.path.getsize(big)
    print(f"\nsummarize {os.path.basename(big)} ({size / 1e6:.0f} MB, {a.tokens / 1e6:.0f}M tokens), "
          f"min / median / max over {a.rounds} rounds:")
    print(f"  kcx summarize      {stats(t_kcx)} s   {size / 1e9 / statistics.median(t_kcx):.3f} GB/s")
    print(f"  read (numpy mmap)  {stats(t_read)} s   {size / 1e9 / statistics.median(t_read):.3f} GB/s")
    print(f"  share of read bandwidth: {statistics.median(t_read) / statistics.median(t_kcx) * 100:.1f} %")
    print(f"  summary size {os.path.getsize(out) / 1e3:.0f} KB; peak RSS {rss['big'] / 1e6:.0f} MB "
          f"({a.tokens / 1e6:.0f}M tokens) vs {rss['small'] / 1e6:.0f} MB ({a.tokens / 1e7:.0f}M tokens)")

    # The fleet: shards summarised one by one (as array tasks would), then merged.
    fleet = os.path.join(a.dir, f"fleet_{a.shards}x{a.shard_tokens}")
    os.makedirs(fleet, exist_ok=True)
    shards = []
    for k in range(a.shards):
        p = os.path.join(fleet, f"shard{k:04d}.safetensors")
        make_run(p, a.shard_tokens, 100 + k, id_prefix=f"k{k}-")
        shards.append(p)
    t_parts = []
    for k, p in enumerate(shards):
        s, _ = measured([a.kcx, "summarize", "--run", p, "--out", p + ".kcxsum", "--quiet", "--threads", "1"])
        t_parts.append(s)
    parts = sorted(glob.glob(os.path.join(fleet, "*.kcxsum")))
    merged = os.path.join(a.dir, "fleet_merged.kcxsum")
    t_merge, t_cat, t_merge1 = [], [], []
    for r in range(a.rounds):
        s, m_merge = measured([a.kcx, "merge", *parts, "--out", merged])
        t_merge.append(s)
        s, _ = measured(["cat", *parts])
        t_cat.append(s)
        # The same merge reading one part at a time (what every merge did before 2026-12-06).
        s, _ = measured([a.kcx, "merge", *parts, "--threads", "1", "--out", merged + ".1"])
        t_merge1.append(s)
    psize = sum(os.path.getsize(p) for p in parts)
    print(f"\nfleet: {a.shards} shards x {a.shard_tokens / 1e6:.1f}M tokens "
          f"({sum(os.path.getsize(p) for p in shards) / 1e6:.0f} MB of runs)")
    print(f"  summarize per shard (1 thread): {stats(t_parts)} s; parts {psize / 1e6:.1f} MB in all, "
          f"{psize / len(parts) / 1e3:.0f} KB each")
    print(f"  merge all {len(parts)}: {stats(t_merge)} s, peak RSS {m_merge / 1e6:.0f} MB; reading them (cat): "
          f"{stats(t_cat)} s; merge / read = {statistics.median(t_merge) / max(statistics.median(t_cat), 1e-3):.0f}x")
    print(f"  merge all {len(parts)} with --threads 1: {stats(t_merge1)} s; the same bytes: "
          f"{open(merged, 'rb').read() == open(merged + '.1', 'rb').read()}")
    print(f"  merged summary: {os.path.getsize(merged) / 1e3:.0f} KB")
    window(a)


if __name__ == "__main__":
    main(sys.argv[1:])
