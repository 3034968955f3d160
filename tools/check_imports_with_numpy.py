#!/usr/bin/python3
"""Write runs the way numpy and an RL trainer write them; compare with SPEC 1.1 JSON Lines.

    check_imports_with_numpy.py --kcx PATH_TO_KCX --work DIR [--seed S]

For one generated run (ids, slices, tokens, both kernels' log-probs with some NaN, top-k,
rewards) it writes, with numpy itself:
  - savez.npz (numpy.savez: stored members), savez_compressed.npz (deflated), npy_dir/
    (numpy.save, one NAME.npy per tensor), all float64, against ref.jsonl (SPEC 1.1);
  - f32.npz (log-probs as float32) against ref_f32.jsonl (the same float32 values);
  - bf16.npz (logp_inf as bfloat16 bits in <u2, read with --bf16) against ref_bf16.jsonl;
and, as an RL trainer writes them, trainer/ (one step_S_rank_R.jsonl[.gz] per step and
rank: token_ids with prompt tokens, loss_mask, inference_logprobs with vLLM's -9999.0 and
null, trainer_logprobs, entropy, advantages, env_name) against ref_trainer.jsonl.

For each it compares `kcx metrics --json` of the input (files directly; every input also
through `kcx convert` to native safetensors) with that of its reference, every count and
statistic exactly (the references hold the same float32 / bfloat16 values as float64), plus
the sequence and token counts. It also checks that broken inputs exit 2 with an error naming
the file: a truncated .npz, bf16 words without --bf16, a lone .npy. Prints one line per
mismatch and `N passed, M failed`; exits 1 on any failure.
"""

import argparse
import gzip
import json
import math
import os
import subprocess
import sys

import numpy as np


def jnum(x):
    """A float for SPEC 1.1: NaN as the string "NaN", missing (None) as null."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def make_run(seed):
    rng = np.random.default_rng(seed)
    n = 40
    lengths = rng.integers(1, 30, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    m = int(offsets[-1])
    tokens = rng.integers(0, 50000, m).astype(np.int32)
    lp_inf = -rng.exponential(1.0, m)
    lp_train = lp_inf + rng.normal(0, 0.05, m)
    lp_inf[rng.choice(m, 3, replace=False)] = np.nan
    k = 4
    topk_ids = np.stack([rng.choice(50000, k, replace=False) for _ in range(m)]).astype(np.int32)
    topk_inf = -np.sort(rng.exponential(1.0, (m, k)), axis=1)
    topk_train = np.sort(topk_inf + rng.normal(0, 0.05, (m, k)), axis=1)[:, ::-1]
    tasks = ["math", "code", "chat"]
    codes = rng.integers(-1, 3, n).astype(np.int32)
    return dict(ids=[f"seq-{i}" for i in range(n)], offsets=offsets, tokens=tokens, logp_train=lp_train,
                logp_inf=lp_inf, topk_ids=topk_ids, topk_train=topk_train, topk_inf=topk_inf,
                reward_train=rng.random(n), reward_inf=rng.random(n), tasks=tasks, codes=codes)


def write_ref(path, r, lp_train, lp_inf, topk_train, topk_inf):
    with open(path, "w") as f:
        f.write(json.dumps({"kcx_header": {"source": "check_imports_with_numpy.py"}}) + "\n")
        for s, sid in enumerate(r["ids"]):
            a, b = int(r["offsets"][s]), int(r["offsets"][s + 1])
            rec = {"id": sid, "tokens": r["tokens"][a:b].tolist(),
                   "logp_train": [jnum(x) for x in lp_train[a:b]], "logp_inf": [jnum(x) for x in lp_inf[a:b]],
                   "topk_train": {"ids": r["topk_ids"][a:b].tolist(), "logp": [[jnum(x) for x in row] for row in topk_train[a:b]]},
                   "topk_inf": {"ids": r["topk_ids"][a:b].tolist(), "logp": [[jnum(x) for x in row] for row in topk_inf[a:b]]},
                   "reward_train": float(r["reward_train"][s]), "reward_inf": float(r["reward_inf"][s])}
            if r["codes"][s] >= 0:
                rec["slices"] = {"task": r["tasks"][r["codes"][s]]}
            f.write(json.dumps(rec) + "\n")


def arrays(r, lp_train, lp_inf, topk_train, topk_inf):
    return dict(offsets=r["offsets"], tokens=r["tokens"], logp_train=lp_train, logp_inf=lp_inf,
                topk_train_ids=r["topk_ids"], topk_inf_ids=r["topk_ids"], topk_train_logp=topk_train,
                topk_inf_logp=topk_inf, reward_train=r["reward_train"], reward_inf=r["reward_inf"],
                ids=np.array(r["ids"]), slice_keys=np.array(["task"]),
                slice_values=np.array(json.dumps({"task": r["tasks"]})), slice_codes=r["codes"][:, None])


def to_bf16_bits(x):
    """Round float64 to bfloat16 (nearest even) and return the 16-bit words and their values."""
    f = np.asarray(x, np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    rounded[np.isnan(f)] = 0x7FC0
    back = (rounded.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return rounded, back


def write_trainer(work, r, rng):
    """One file per (step, rank), as a trainer writes them; returns the reference records."""
    os.makedirs(os.path.join(work, "trainer"), exist_ok=True)
    refs = []
    n = len(r["ids"])
    per_file = [list(range(i, n, 6)) for i in range(6)]
    for f, seqs in enumerate(per_file):
        step, rank = f // 2 + 1, f % 2
        name = f"step_{step}_rank_{rank}.jsonl" + (".gz" if f == 3 else "")
        lines = []
        for line, s in enumerate(seqs, start=1):
            a, b = int(r["offsets"][s]), int(r["offsets"][s + 1])
            prompt = rng.integers(0, 50000, int(rng.integers(1, 6))).tolist()
            inf = [None if math.isnan(x) else float(x) for x in r["logp_inf"][a:b]]
            if b - a > 2:
                inf[1] = None                      # a response log-prob the engine did not give
            train = [float(x) for x in r["logp_train"][a:b]]
            t = len(prompt) + b - a
            rec = {"token_ids": prompt + r["tokens"][a:b].tolist(),
                   "loss_mask": [0] * len(prompt) + [1] * (b - a),
                   "inference_logprobs": [-9999.0] + [None] * (len(prompt) - 1) + inf,
                   "trainer_logprobs": [None] * len(prompt) + train,
                   "entropy": rng.random(t).tolist(), "advantages": [float(r["reward_train"][s])] * t,
                   "env_name": r["tasks"][s % 3]}
            if f % 3 == 0:                          # step and rank from the file name otherwise
                rec["step"], rec["rank"] = step, rank
            lines.append(json.dumps(rec))
            refs.append({"id": f"{name}:{line}", "slices": {"env_name": r["tasks"][s % 3], "step": str(step), "rank": str(rank)},
                         "tokens": r["tokens"][a:b].tolist(), "logp_train": train, "logp_inf": [jnum(x) for x in inf]})
        text = "\n".join(lines) + "\n"
        path = os.path.join(work, "trainer", name)
        if name.endswith(".gz"):
            with gzip.open(path, "wt") as out:
                out.write(text)
        else:
            with open(path, "w") as out:
                out.write(text)
    # The directory reads files in natural order: step_1_rank_0, step_1_rank_1, step_2_rank_0, ...
    order = sorted(refs, key=lambda x: (int(x["slices"]["step"]), int(x["slices"]["rank"])))
    with open(os.path.join(work, "ref_trainer.jsonl"), "w") as out:
        for rec in order:
            out.write(json.dumps(rec) + "\n")


def kcx_metrics(kcx, path):
    p = subprocess.run([kcx, "metrics", "--run", path, "--json", "-", "--quiet"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=300)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace").strip()
    return json.loads(p.stdout), None


def kcx_convert(kcx, path, out, extra=()):
    p = subprocess.run([kcx, "convert", *extra, path, "--out", out, "--quiet"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=300)
    return p.returncode, p.stderr.decode(errors="replace").strip()


def same(a, b, exact):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if exact or isinstance(a, int) and isinstance(b, int):
            return a == b
        return abs(a - b) <= max(1e-300, 1e-12 * max(abs(a), abs(b)))
    return a == b


def compare(label, got, want, exact):
    problems = []
    for key in ("sequences", "tokens"):
        if got["run"][key] != want["run"][key]:
            problems.append(f"run.{key}: {got['run'][key]} != {want['run'][key]}")
    for name, w in want["metrics"].items():
        g = got["metrics"].get(name)
        if g is None:
            problems.append(f"{name}: missing")
            continue
        for stat in sorted(set(w) | set(g)):
            if not same(g.get(stat), w.get(stat), exact):
                problems.append(f"{name}.{stat}: {g.get(stat)!r} != {w.get(stat)!r}")
    for p in problems:
        print(f"FAIL {label}: {p}")
    return not problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kcx", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    r = make_run(args.seed)
    rng = np.random.default_rng(args.seed + 1)

    write_ref(os.path.join(work, "ref.jsonl"), r, r["logp_train"], r["logp_inf"], r["topk_train"], r["topk_inf"])
    a64 = arrays(r, r["logp_train"], r["logp_inf"], r["topk_train"], r["topk_inf"])
    np.savez(os.path.join(work, "savez.npz"), **a64)
    np.savez_compressed(os.path.join(work, "savez_compressed.npz"), **a64)
    os.makedirs(os.path.join(work, "npy_dir"), exist_ok=True)
    for name, a in a64.items():
        np.save(os.path.join(work, "npy_dir", name + ".npy"), a)

    f32 = {k: np.asarray(r[k], np.float32) for k in ("logp_train", "logp_inf", "topk_train", "topk_inf")}
    write_ref(os.path.join(work, "ref_f32.jsonl"), r, *(f32[k].astype(np.float64) for k in ("logp_train", "logp_inf", "topk_train", "topk_inf")))
    np.savez(os.path.join(work, "f32.npz"), **arrays(r, f32["logp_train"], f32["logp_inf"], f32["topk_train"], f32["topk_inf"]))

    bits, back = to_bf16_bits(r["logp_inf"])
    write_ref(os.path.join(work, "ref_bf16.jsonl"), r, r["logp_train"], back, r["topk_train"], r["topk_inf"])
    np.savez_compressed(os.path.join(work, "bf16.npz"), **arrays(r, r["logp_train"], bits, r["topk_train"], r["topk_inf"]))

    write_trainer(work, r, rng)

    # input, reference, exact, convert options, read directly. Directories are compared
    # through `kcx convert` only: `metrics --json` hashes the run path (sha256File), which
    # does not read directories yet.
    cases = [
        ("savez.npz", "ref.jsonl", True, (), True),
        ("savez_compressed.npz", "ref.jsonl", True, (), True),
        ("npy_dir", "ref.jsonl", True, (), False),
        ("f32.npz", "ref_f32.jsonl", True, (), True),
        ("bf16.npz", "ref_bf16.jsonl", True, ("--bf16",), False),
        ("trainer", "ref_trainer.jsonl", True, (), False),
        ("trainer/step_1_rank_0.jsonl", None, True, (), True),
    ]
    passed = failed = 0

    def check(ok):
        nonlocal passed, failed
        passed += ok
        failed += not ok

    refs = {}
    for name, ref, exact, opts, direct in cases:
        path = os.path.join(work, name)
        if ref is None:   # a single trainer file: its own conversion must agree with it
            got, err = kcx_metrics(args.kcx, path)
            want = got
        else:
            if ref not in refs:
                refs[ref], err = kcx_metrics(args.kcx, os.path.join(work, ref))
                if err:
                    print(f"FAIL {ref}: {err}")
                    return 1
            want = refs[ref]
            if direct:
                got, err = kcx_metrics(args.kcx, path)
                check(err is None and compare(name, got, want, exact))
                if err:
                    print(f"FAIL {name}: {err}")
        out = os.path.join(work, name.replace("/", "_") + ".safetensors")
        code, err = kcx_convert(args.kcx, path, out, opts)
        if code != 0:
            print(f"FAIL convert {name}: {err}")
            check(False)
            continue
        got, err = kcx_metrics(args.kcx, out)
        check(err is None and want is not None and compare("convert " + name, got, want, exact))

    # Broken inputs: exit 2, the error names the file.
    whole = open(os.path.join(work, "savez_compressed.npz"), "rb").read()
    for cut in (10, len(whole) // 3, len(whole) // 2, len(whole) - 30, len(whole) - 1):
        path = os.path.join(work, f"cut_{cut}.npz")
        with open(path, "wb") as f:
            f.write(whole[:cut])
        p = subprocess.run([args.kcx, "metrics", "--run", path, "--quiet"], capture_output=True, timeout=60)
        ok = p.returncode == 2 and p.stderr.decode().startswith("kcx: " + path)
        if not ok:
            print(f"FAIL truncated {cut}: exit {p.returncode}: {p.stderr.decode().strip()}")
        check(ok)
    for path, phrase in ((os.path.join(work, "bf16.npz"), "--bf16"),
                         (os.path.join(work, "npy_dir", "tokens.npy"), "single .npy")):
        p = subprocess.run([args.kcx, "metrics", "--run", path, "--quiet"], capture_output=True, timeout=60)
        err = p.stderr.decode()
        ok = p.returncode == 2 and err.startswith("kcx: " + path) and phrase in err
        if not ok:
            print(f"FAIL {path}: exit {p.returncode}: {err.strip()}")
        check(ok)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
