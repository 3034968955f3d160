#!/usr/bin/python3
"""The numpy speed reference for docs/performance.md.

    /usr/bin/python3 bench/numpy_bench.py [--write-inputs DIR] [--repeats R]

What a careful numpy user would write for the same work KCX does, timed on this machine
(best of R repeats, inputs generated beforehand and not timed):

  a. logprob: 10M tokens of float32 lp_train / lp_inf: r = lp_train - lp_inf in float64,
     |r|, np.percentile(|r|, [50, 99, 99.9]), mean and max           -> tokens/s
  b. logits:  2,048 x 32,000 float32 logits per kernel: tv, kl(train||inf) and
     logit_drift per row, max-subtracted softmax in float64, in blocks of rows
                                                     -> GB/s of input (2*2048*32000*4 B)
  c. jsonl:   parse a 1M-token JSONL run (SPEC 1.1 keys id/tokens/logp_train/logp_inf,
     ~2,000 tokens per line) with the json module into numpy arrays  -> MB/s of file
  d. safetensors: open a 10M-token run and get its tensors with np.frombuffer over an
     mmap (seconds), and the same plus one pass over every tensor (pages really read;
     the file is in the page cache, having just been written)

--write-inputs DIR keeps the two input files there (bench_10m.safetensors with offsets,
tokens, logp_train, logp_inf as F32, and bench_1m.jsonl), so that the C++ benchmark can
open the very same files. The data are seeded (seed 20260115): the same on every run.
Prints one JSON object.
"""

import argparse
import json
import mmap
import os
import platform
import struct
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import make_external_run as mk        # noqa: E402  (the hand-written safetensors writer)

SEED = 20260115
TOKENS_A = 10_000_000
ROWS_B, VOCAB_B = 2048, 32000
TOKENS_C = 1_000_000
SEQ_LEN = 2000


def best_of(repeats, fn):
    """(best wall time in seconds, last result)."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def make_logprobs(rng, n):
    """Realistic per-token log-probs: mostly confident tokens, inf = train + small noise."""
    lp_train = (-rng.exponential(0.6, n)).astype(np.float32)
    lp_inf = (lp_train + rng.normal(0.0, 2e-3, n)).astype(np.float32)
    np.minimum(lp_inf, 0.0, out=lp_inf)
    return lp_train, lp_inf


def make_offsets(rng, n_tokens, mean_len):
    lengths = rng.integers(mean_len // 2, mean_len * 3 // 2 + 1,
                           size=n_tokens // mean_len + 10)
    ends = np.cumsum(lengths)
    ends = ends[ends < n_tokens]
    return np.concatenate([[0], ends, [n_tokens]]).astype(np.int64)


# --------------------------------------------------------------------------------------
# a. per-token log-prob metrics

def logprob_summary(lp_train, lp_inf):
    r = lp_train.astype(np.float64) - lp_inf.astype(np.float64)
    a = np.abs(r)
    p50, p99, p999 = np.percentile(a, [50, 99, 99.9])
    return {"mean": float(a.mean()), "max": float(a.max()), "p50": float(p50),
            "p99": float(p99), "p99.9": float(p999)}


# --------------------------------------------------------------------------------------
# b. full-logit metrics

def logit_metrics(z, zp, block=64):
    """tv, kl(train||inf), logit_drift per row; float64, max-subtracted softmax."""
    n = z.shape[0]
    tv, kl, drift = np.empty(n), np.empty(n), np.empty(n)
    for s in range(0, n, block):
        a = z[s:s + block].astype(np.float64)
        b = zp[s:s + block].astype(np.float64)
        a -= a.max(axis=1, keepdims=True)
        b -= b.max(axis=1, keepdims=True)
        lp = a - np.log(np.exp(a).sum(axis=1, keepdims=True))
        lq = b - np.log(np.exp(b).sum(axis=1, keepdims=True))
        p, q = np.exp(lp), np.exp(lq)
        tv[s:s + block] = 0.5 * np.abs(p - q).sum(axis=1)
        kl[s:s + block] = (p * (lp - lq)).sum(axis=1)
        d = z[s:s + block].astype(np.float64) - zp[s:s + block]
        drift[s:s + block] = 0.5 * (d.max(axis=1) - d.min(axis=1))
    return tv, kl, drift


# --------------------------------------------------------------------------------------
# c. JSONL

def write_jsonl(path, lp_train, lp_inf, tokens, offsets):
    with open(path, "w") as f:
        for s in range(len(offsets) - 1):
            a, b = offsets[s], offsets[s + 1]
            f.write(json.dumps({"id": f"b{s:05d}", "tokens": tokens[a:b].tolist(),
                                "logp_train": lp_train[a:b].tolist(),
                                "logp_inf": lp_inf[a:b].tolist()}) + "\n")


def parse_jsonl(path):
    tokens, lpt, lpi, lengths = [], [], [], []
    with open(path, "r") as f:
        for line in f:
            if not line.strip():
                continue
            obj = json.loads(line)
            tokens.append(np.array(obj["tokens"], dtype=np.int64))
            lpt.append(np.array(obj["logp_train"], dtype=np.float64))
            lpi.append(np.array(obj["logp_inf"], dtype=np.float64))
            lengths.append(len(obj["tokens"]))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return offsets, np.concatenate(tokens), np.concatenate(lpt), np.concatenate(lpi)


# --------------------------------------------------------------------------------------
# d. safetensors

def open_safetensors(path):
    """name -> np.frombuffer view over an mmap of the file (no copy)."""
    dtypes = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8"}
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    (n,) = struct.unpack("<Q", mm[:8])
    header = json.loads(bytes(mm[8:8 + n]))
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        dt = np.dtype(dtypes[info["dtype"]])
        out[name] = np.frombuffer(mm, dtype=dt, count=(e - b) // dt.itemsize,
                                  offset=8 + n + b).reshape(info["shape"])
    return out


def touch(tensors):
    return sum(float(np.sum(t, dtype=np.float64)) for t in tensors.values())


# --------------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-inputs", metavar="DIR",
                    help="write bench_10m.safetensors and bench_1m.jsonl here and keep them")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(SEED)
    result = {"numpy": np.__version__, "python": platform.python_version(),
              "cpus": os.cpu_count(), "repeats": a.repeats,
              "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE")}

    # a
    lp_train, lp_inf = make_logprobs(rng, TOKENS_A)
    t, summary = best_of(a.repeats, lambda: logprob_summary(lp_train, lp_inf))
    result["a_logprob"] = {"tokens": TOKENS_A, "seconds": round(t, 4),
                           "tokens_per_s": round(TOKENS_A / t), "abs_log_ratio": summary}

    # b
    z = (rng.standard_normal((ROWS_B, VOCAB_B), dtype=np.float32) * 2.5)
    zp = z + (rng.standard_normal((ROWS_B, VOCAB_B), dtype=np.float32) * 0.02)
    zp += rng.normal(0, 1, (ROWS_B, 1)).astype(np.float32)
    t, (tv, kl, drift) = best_of(a.repeats, lambda: logit_metrics(z, zp))
    nbytes = 2 * ROWS_B * VOCAB_B * 4
    result["b_logits"] = {"rows": ROWS_B, "vocab": VOCAB_B, "input_bytes": nbytes,
                          "seconds": round(t, 4), "GB_per_s": round(nbytes / t / 1e9, 3),
                          "rows_per_s": round(ROWS_B / t), "mean_tv": float(tv.mean()),
                          "mean_kl": float(kl.mean()), "max_logit_drift": float(drift.max())}
    del z, zp

    # inputs for c and d
    tokens = rng.integers(0, 32000, TOKENS_A).astype(np.int32)
    offsets = make_offsets(rng, TOKENS_A, SEQ_LEN)
    tmp = None
    if a.write_inputs:
        out_dir = a.write_inputs
        os.makedirs(out_dir, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory()
        out_dir = tmp.name
    st_path = os.path.join(out_dir, "bench_10m.safetensors")
    ids = [f"b{s:05d}" for s in range(len(offsets) - 1)]
    mk.write_safetensors(st_path, [("offsets", "I64", offsets), ("tokens", "I32", tokens),
                                   ("logp_train", "F32", lp_train),
                                   ("logp_inf", "F32", lp_inf)],
                         {"kcx": "1", "ids": json.dumps(ids),
                          "header": json.dumps({"source": "bench/numpy_bench.py",
                                                "kernels": {"train": {}, "inf": {}}})})
    c_off = offsets[offsets <= TOKENS_C]
    if c_off[-1] != TOKENS_C:
        c_off = np.append(c_off, TOKENS_C)
    jl_path = os.path.join(out_dir, "bench_1m.jsonl")
    write_jsonl(jl_path, lp_train, lp_inf, tokens, c_off)

    # c
    size = os.path.getsize(jl_path)
    t, parsed = best_of(a.repeats, lambda: parse_jsonl(jl_path))
    assert len(parsed[2]) == TOKENS_C
    result["c_jsonl"] = {"tokens": TOKENS_C, "lines": len(c_off) - 1, "bytes": size,
                         "seconds": round(t, 4), "MB_per_s": round(size / t / 1e6, 2),
                         "tokens_per_s": round(TOKENS_C / t)}

    # d
    size = os.path.getsize(st_path)
    t_open, tens = best_of(a.repeats, lambda: open_safetensors(st_path))
    assert tens["logp_inf"].shape == (TOKENS_A,)
    t_touch, _ = best_of(a.repeats, lambda: touch(open_safetensors(st_path)))
    t_full, _ = best_of(a.repeats, lambda: logprob_summary(
        *(lambda d: (d["logp_train"], d["logp_inf"]))(open_safetensors(st_path))))
    result["d_safetensors"] = {"tokens": TOKENS_A, "sequences": len(offsets) - 1,
                               "bytes": size, "open_frombuffer_seconds": round(t_open, 6),
                               "open_and_read_all_seconds": round(t_touch, 4),
                               "read_GB_per_s": round(size / t_touch / 1e9, 3),
                               "open_plus_a_seconds": round(t_full, 4)}
    if a.write_inputs:
        result["inputs"] = {"safetensors": st_path, "jsonl": jl_path}
    if tmp is not None:
        tmp.cleanup()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
