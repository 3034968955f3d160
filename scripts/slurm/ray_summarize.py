#!/usr/bin/env python3
"""Summarise a run too large for one machine on a Ray cluster (SPEC 10, issue 19).

The Ray equivalent of scripts/slurm/kcx-summarize-array: one Ray task per shard list runs
`kcx summarize --run P1 --run P2 ... --out OUTDIR/part-N.kcxsum` as a subprocess, and once
every task succeeded, `kcx merge OUTDIR/part-*.kcxsum --out OUTDIR/merged.kcxsum` runs on the
driver. Merging is commutative and associative, so the order the parts finish in does not
matter; paths are passed as written (kcx records them as given).

SHARDS is a file whose every non-blank line not starting with '#' is one task's
space-separated run paths, or a directory whose every entry (names sorted, hidden ones
skipped) is one shard and one task -- the same inputs as kcx-summarize-array. OUTDIR and
the shards must be on a file system every Ray node sees, and kcx at the same path on every
node. docs/summaries.md.

Ray is imported only when the tasks are submitted, so --help works without it.
Exit status: 0 done, 1 a task or the merge failed, 2 usage or input error.
"""
import argparse
import os
import shutil
import subprocess
import sys


def read_tasks(shards):
    """The shard lists, one per task, as lists of path strings."""
    if os.path.isdir(shards):
        names = sorted(n for n in os.listdir(shards) if not n.startswith("."))
        if not names:
            raise ValueError(f"shard directory '{shards}' is empty: no shard to summarise")
        return [[os.path.join(shards.rstrip("/") or "/", n)] for n in names]
    if not os.path.exists(shards):
        raise ValueError(f"shard list '{shards}' does not exist "
                         "(a file of shard lists or a directory of shards)")
    if not os.path.isfile(shards) or not os.access(shards, os.R_OK):
        raise ValueError(f"shard list '{shards}' is not a readable file")
    tasks = []
    with open(shards, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if words and not words[0].startswith("#"):
                tasks.append(words)
    if not tasks:
        raise ValueError(f"shard list '{shards}' is empty: no line names a shard")
    return tasks


def check_shards(tasks):
    for i, paths in enumerate(tasks):
        for p in paths:
            if os.path.isdir(p):
                ok = os.access(p, os.R_OK | os.X_OK)
            elif os.path.exists(p):
                ok = os.path.isfile(p) and os.access(p, os.R_OK)
            else:
                raise ValueError(f"task {i}: shard '{p}' does not exist")
            if not ok:
                raise ValueError(f"task {i}: shard '{p}' is not readable")


def summarize_cmd(kcx, paths, out, threads):
    cmd = [kcx, "summarize"]
    for p in paths:
        cmd += ["--run", p]
    # kcx uses every core by default; on a shared node only the CPUs Ray reserved.
    return cmd + ["--threads", str(threads), "--out", out]


def summarize_part(kcx, paths, out, threads=1):
    """One task's work (also the body of the Ray task): returns (out, exit code, stderr)."""
    r = subprocess.run(summarize_cmd(kcx, paths, out, threads), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return out, r.returncode, r.stderr


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Summarise shards of a run with kcx on a Ray cluster, then merge the parts "
                    "(the Ray equivalent of scripts/slurm/kcx-summarize-array).",
        epilog="Exit status: 0 done, 1 a task or the merge failed, 2 usage or input error.")
    ap.add_argument("shards", help="a shard list file (one task's space-separated run paths "
                                   "a line) or a directory of shards (one task each)")
    ap.add_argument("--out", required=True, help="output directory (parts and merged.kcxsum)")
    ap.add_argument("--kcx", default=shutil.which("kcx"),
                    help="the kcx to run, at the same path on every node (default: kcx on PATH)")
    ap.add_argument("--address", default=None,
                    help="the Ray cluster to join (ray.init(address=...); default: RAY_ADDRESS "
                         "or a local Ray)")
    ap.add_argument("--cpus", type=float, default=1.0, help="CPUs per summarize task, and its kcx --threads (default 1)")
    ap.add_argument("--memory", type=int, default=None,
                    help="bytes of memory to reserve per summarize task")
    ap.add_argument("--max-retries", type=int, default=0,
                    help="Ray retries of a task that failed by losing its node (default 0)")
    args = ap.parse_args(argv)

    try:
        tasks = read_tasks(args.shards)
        check_shards(tasks)
    except ValueError as e:
        print(f"ray_summarize: {e}", file=sys.stderr)
        return 2
    kcx = args.kcx
    if not kcx or not (os.path.isfile(kcx) and os.access(kcx, os.X_OK)):
        print(f"ray_summarize: kcx '{kcx}' is not an executable file (name it with --kcx)",
              file=sys.stderr)
        return 2
    kcx = os.path.abspath(kcx)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    if os.path.exists(os.path.join(out, "merged.kcxsum")) or any(
            n.startswith("part-") and n.endswith(".kcxsum") for n in os.listdir(out)):
        print(f"ray_summarize: output directory '{out}' holds the summaries of an earlier run; "
              "choose an empty one", file=sys.stderr)
        return 2

    import ray  # only now: --help and the input checks need no Ray

    ray.init(address=args.address)
    options = {"num_cpus": args.cpus, "max_retries": args.max_retries}
    if args.memory:
        options["memory"] = args.memory
    remote = ray.remote(summarize_part).options(**options)
    threads = max(1, int(args.cpus))
    refs = [remote.remote(kcx, paths, os.path.join(out, f"part-{i}.kcxsum"), threads)
            for i, paths in enumerate(tasks)]
    failed = 0
    parts = []
    for part, code, err in ray.get(refs):
        if code != 0:
            failed += 1
            print(f"ray_summarize: {os.path.basename(part)}: kcx summarize exited {code}: "
                  f"{err.strip()}", file=sys.stderr)
        else:
            parts.append(part)
    if failed:
        print(f"ray_summarize: {failed} of {len(tasks)} tasks failed; not merging",
              file=sys.stderr)
        return 1
    merged = os.path.join(out, "merged.kcxsum")
    r = subprocess.run([kcx, "merge", *parts, "--out", merged])
    if r.returncode != 0:
        print(f"ray_summarize: kcx merge exited {r.returncode}", file=sys.stderr)
        return 1
    print(merged)
    return 0


if __name__ == "__main__":
    sys.exit(main())
