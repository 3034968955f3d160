#!/usr/bin/env bash
# KCX_MAX_MEMORY is honest (issue 16, docs/reliability.md "Resource limits"): for four kinds
# of JSON Lines run (short numbers, long numbers, top-k, full logits) the memory the reader
# says a run needs is at least the peak resident size `kcx check` then reaches, and not
# more than 1.5 times it; a limit just above the estimate is accepted and one below it is
# refused up front. Before, the estimate was the text size: 3-6 times too small.
# Usage: cli_memory_test.sh KCX WORKDIR
set -u
kcx="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
exec /usr/bin/python3 - "$kcx" <<'PY'
import json, os, random, re, resource, subprocess, sys
kcx = sys.argv[1]
random.seed(16)
def write(kind, n):
    with open(f"{kind}.jsonl", "w") as f:
        for s in range(n):
            T = 200
            d = {"id": f"s{s}", "slices": {"task": "t%d" % (s % 5)},
                 "tokens": [random.randrange(100) for _ in range(T)]}
            short = kind == "short"
            d["logp_train"] = [-round(random.random(), 1) if short else -random.random() for _ in range(T)]
            d["logp_inf"] = [-round(random.random(), 1) if short else -random.random() for _ in range(T)]
            if kind == "topk":
                rows = {"ids": [[1, 2, 3, 4]] * T, "logp": [[-0.1, -1.5, -2, -3]] * T}
                d["topk_train"] = d["topk_inf"] = rows
            if kind == "logits":
                d["logits_train"] = [[0.5] * 32] * T
                d["logits_inf"] = [[0.25] * 32] * T
            f.write(json.dumps(d, separators=(",", ":")) + "\n")
with open("c.yaml", "w") as f:
    f.write("kcx_contract: 1\nname: mem\nnumerical:\n"
            "  - {id: N1, metric: abs_log_ratio, aggregate: p99, max: 1}\n")
units = {"bytes": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
def run(kind, limit=None):
    env = dict(os.environ)
    env.pop("KCX_MAX_MEMORY", None)
    if limit is not None:
        env["KCX_MAX_MEMORY"] = str(limit)
    return subprocess.run([kcx, "check", "--contract", "c.yaml", "--run", f"{kind}.jsonl"],
                          env=env, capture_output=True, text=True)
def peak(kind):
    # A fresh interpreter per measurement: RUSAGE_CHILDREN is the largest child so far.
    code = ("import resource,subprocess,sys; subprocess.run(sys.argv[1:], capture_output=True);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)")
    out = subprocess.run([sys.executable, "-c", code, kcx, "check", "--contract", "c.yaml",
                          "--run", f"{kind}.jsonl"], capture_output=True, text=True, env={
                              k: v for k, v in os.environ.items() if k != "KCX_MAX_MEMORY"})
    return int(out.stdout.strip())
fails = 0
def check(ok, what):
    global fails
    if not ok:
        fails += 1
        print("FAIL", what)
for kind, n in [("short", 10000), ("long", 3000), ("topk", 1500), ("logits", 400)]:
    write(kind, n)
    r = run(kind, "1M")
    m = re.search(r"needs about ([0-9.]+) (bytes|KB|MB|GB)", r.stderr)
    check(r.returncode == 2 and m is not None, f"{kind}: 1M not refused with an estimate: {r.returncode} {r.stderr}")
    if not m:
        continue
    need = float(m.group(1)) * units[m.group(2)]
    p = max(peak(kind), peak(kind))
    size = os.path.getsize(f"{kind}.jsonl")
    print(f"{kind}: text {size / 2**20:.1f} MiB, estimate {need / 2**20:.1f} MiB, peak {p / 2**20:.1f} MiB "
          f"({need / p:.2f}x)")
    check(p <= need, f"{kind}: peak {p} above the estimate {need}")
    check(need <= 1.5 * p, f"{kind}: estimate {need} more than 1.5x the peak {p}")
    ok = run(kind, int(need) + (1 << 20))
    check(ok.returncode in (0, 1), f"{kind}: refused under a limit above its estimate: {ok.stderr}")
    low = run(kind, int(need * 0.9))
    check(low.returncode == 2 and "needs about" in low.stderr and "KCX_MAX_MEMORY" in low.stderr,
          f"{kind}: accepted under 0.9x its estimate: {low.returncode} {low.stderr}")
print(f"memory: {fails} failed")
sys.exit(1 if fails else 0)
PY
