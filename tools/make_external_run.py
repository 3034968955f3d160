#!/usr/bin/python3
"""Write test runs the way another program that follows SPEC section 1 to the letter would.

    make_external_run.py --out DIR --seed S [--sequences N] [--vocab V]

writes into DIR
  ext.jsonl          SPEC 1.1: a {"kcx_header": ...} line, then one object per sequence.
                     Values are float64 printed with repr() (shortest round-trip form).
  ext.jsonl.gz       the same bytes, gzipped.
  ext.safetensors    SPEC 1.2, written by hand (struct + json + numpy), float32 values.

The JSONL run and the safetensors run are two *independent* runs drawn from the same
kind of model (the safetensors one is float32 and cannot say "missing"); compare each
file with its own reference, not with each other.

What the data look like (deliberately awkward where the SPEC allows it):
  * a toy model: for each position, train logits z over V ids, inf logits
    z' = z + noise + a per-position constant shift; the sampled token comes from
    softmax(z'); lp_train / lp_inf are the exact log-softmax values at that token.
    The noise is usually 1e-3..3e-2, for some sequences ~1e-7 (so float precision
    matters), for some 0.2..0.8, and for a few single tokens larger;
  * lengths 1..400 (one sequence of 1 token, one of 400);
  * top-k (k = 5) for most sequences, rows of the JSONL sometimes NOT sorted (the SPEC
    says readers sort them), and id sets that overlap without being identical;
  * full logits (T x V) for a few whole sequences, one of them without top-k, one with
    only logits_train, one with a "NaN" in a logits row (JSONL); in safetensors
    logits_rows holds those same kinds of positions plus a few scattered rows;
  * rewards for most sequences, absent / null / "NaN" for some;
  * slices task and lang (some unlabeled), runtime objects, per-token text with
    characters that need JSON escaping;
  * in the JSONL: null entries (missing) and "NaN", "Infinity", "-Infinity" strings in
    logp arrays and top-k rows; in the safetensors: NaN where a value is missing.
"""

import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np

TASKS = ["math", "code", "chat"]
LANGS = ["en", "de", "fr"]
TOPK = 5


# --------------------------------------------------------------------------------------
# The toy model.

def log_softmax(z):
    m = z.max(axis=1, keepdims=True)
    return z - (m + np.log(np.exp(z - m).sum(axis=1, keepdims=True)))


def noise_scale(rng):
    """Per-sequence size of the kernel difference."""
    u = rng.random()
    if u < 0.15:
        return 1e-7                              # nearly bit-identical kernels
    if u < 0.85:
        return 10 ** rng.uniform(-3.0, -1.5)     # the usual case
    return rng.uniform(0.2, 0.8)                 # a badly drifting kernel


def simulate(rng, T, V):
    """One sequence of the toy model: logits of both kernels, log-probs, sampled ids."""
    z = rng.standard_normal((T, V)) * 2.0
    peak = rng.integers(0, V, size=T)
    z[np.arange(T), peak] += rng.uniform(0.0, 8.0, size=T)     # confident positions
    noise = np.full((T, 1), noise_scale(rng))
    spikes = rng.random(T) < 0.02                               # a few bad tokens
    noise[spikes] = rng.uniform(0.5, 2.0, size=(spikes.sum(), 1))
    shift = rng.normal(0.0, 1.0, size=(T, 1))                   # softmax-invariant
    zp = z + noise * rng.standard_normal((T, V)) + shift
    lpt, lpi = log_softmax(z), log_softmax(zp)
    # sample y_t from softmax(z'), the serving kernel
    cdf = np.cumsum(np.exp(lpi), axis=1)
    u = rng.random((T, 1)) * cdf[:, -1:]
    y = np.minimum((cdf < u).sum(axis=1), V - 1)
    rows = np.arange(T)
    return dict(z=z, zp=zp, lpt_full=lpt, lpi_full=lpi, y=y,
                lp_train=lpt[rows, y], lp_inf=lpi[rows, y])


def topk_rows(rng, lp_full, k, swap_fraction):
    """The k most likely ids and their log-probs, most likely first. A few rows get their
    last entry replaced by an id from outside the top k (still with its true log-prob,
    so the row stays sorted): the two kernels' id sets then overlap but differ."""
    T, V = lp_full.shape
    ids = np.argsort(-lp_full, axis=1, kind="stable")[:, :k].copy()
    for t in np.nonzero(rng.random(T) < swap_fraction)[0]:
        outside = np.setdiff1d(np.arange(V), ids[t])
        ids[t, -1] = rng.choice(outside)
    logp = np.take_along_axis(lp_full, ids, axis=1)
    return ids, logp


# --------------------------------------------------------------------------------------
# Header, slices, runtime.

def make_header(seed, V, precision_inf):
    return {
        "kernels": {
            "train": {"name": "fsdp-autograd", "version": "2.4.1", "precision": "bf16",
                      "hardware": "H100-SXM", "weights_sha256": "ab" * 32,
                      "batch_invariant": True},
            "inf": {"name": "vllm", "version": "0.9.2", "precision": precision_inf,
                    "hardware": "L40S", "weights_sha256": "ab" * 32,
                    "batch_invariant": False, "tp": 2},
        },
        "model": {"name": "toy-model", "vocab": V, "layers": 2},
        "created": "2026-01-15T12:00:00Z",
        "source": f"tools/make_external_run.py --seed {seed}",
    }


def make_slices(rng, s):
    if s % 11 == 5:
        return None                                    # unlabeled sequence
    sl = {"task": TASKS[rng.integers(len(TASKS))]}
    if s % 7 != 3:
        sl["lang"] = LANGS[rng.integers(len(LANGS))]
    return sl


def make_runtime(rng, T):
    return {"latency_ms": round(float(rng.uniform(5, 900)), 3),
            "batch_size": int(rng.choice([1, 8, 32, 64, 128, 256])),
            "kernel_version": "v0.9.2+cu124",
            "tokens_per_s": round(T / rng.uniform(0.05, 3.0), 2)}


def sequence_length(rng, s, logits_seqs):
    if s == 0:
        return 1
    if s == 1:
        return 400
    if s in logits_seqs:
        return int(rng.integers(3, 26))               # keep full-logit sequences short
    return int(rng.integers(1, 401))


# --------------------------------------------------------------------------------------
# JSONL (SPEC 1.1), float64 values.

def _f(x):
    """A float64 as JSON: the value itself (json prints repr, which round-trips)."""
    return float(x)


def build_jsonl_run(seed, n_seq, V):
    rng = np.random.default_rng([seed, 1])
    both_logits = {2, 3, 4}       # 3 has no top-k; 4 has a "NaN" in a logits_inf row
    only_train_logits = {5}
    seqs = []
    for s in range(n_seq):
        T = sequence_length(rng, s, both_logits | only_train_logits)
        m = simulate(rng, T, V)
        obj = {"id": f"ext{seed}-{s:03d}"}
        slices = make_slices(rng, s)
        if slices is not None:
            obj["slices"] = slices
        obj["tokens"] = [int(y) for y in m["y"]]
        if s % 4 == 1:
            words = ["the", " x", "\u00e9t\u00e9", "\"q\"", "\\", "\n", "\u4e2d", "\t"]
            obj["text"] = [words[int(y) % len(words)] for y in m["y"]]
        lpt = [_f(x) for x in m["lp_train"]]
        lpi = [_f(x) for x in m["lp_inf"]]

        # Missing and non-finite sampled log-probs.
        def pos():
            return int(rng.integers(T))
        if s == 8:
            lpt[pos()] = None
        elif s == 9:
            a = pos()
            lpi[a] = None
            lpt[(a + 1) % T] = "NaN"          # missing wins over nonfinite for seq_*
        elif s == 10:
            lpt[pos()] = "NaN"
        elif s == 11:
            lpi[pos()] = "Infinity"
        elif s == 12:
            lpi[pos()] = "-Infinity"
        elif s == 13:
            a = pos()
            lpt[a] = None
            lpi[a] = None
            b = pos()
            lpt[b] = None
            lpi[b] = "NaN"                    # null and NaN at one position: missing
        elif s > 13 and rng.random() < 0.08:
            lpt[pos()] = None
        obj["logp_train"] = lpt
        obj["logp_inf"] = lpi

        # Top-k.
        has_topk = {"train": s not in (3, 6) and s % 10 != 9,
                    "inf": s not in (3, 6, 7) and s % 10 != 9}
        for k, lp_full in (("train", m["lpt_full"]), ("inf", m["lpi_full"])):
            if not has_topk[k]:
                continue
            ids, logp = topk_rows(rng, lp_full, TOPK, 0.05)
            ids = ids.tolist()
            logp = [[_f(x) for x in row] for row in logp]
            for t in range(T):                 # some rows deliberately out of order
                if rng.random() < 0.1:
                    perm = rng.permutation(TOPK)
                    ids[t] = [ids[t][j] for j in perm]
                    logp[t] = [logp[t][j] for j in perm]
            if s == 14 and k == "train":
                logp[pos()][2] = None
            if s == 14 and k == "inf":
                logp[pos()][1] = "NaN"
                logp[pos()][4] = "-Infinity"
            if s == 15 and k == "inf":
                logp[pos()][0] = "Infinity"
            obj[f"topk_{k}"] = {"ids": ids, "logp": logp}

        # Full logits for a few whole sequences.
        if s in both_logits or s in only_train_logits:
            obj["logits_train"] = [[_f(x) for x in row] for row in m["z"]]
        if s in both_logits:
            zi = [[_f(x) for x in row] for row in m["zp"]]
            if s == 4:
                zi[min(1, T - 1)][int(rng.integers(V))] = "NaN"
            obj["logits_inf"] = zi

        # Rewards.
        if s % 9 != 0:
            if s % 3 == 0:                       # binary task rewards
                rt = float(rng.random() < 0.6)
                ri = rt if rng.random() < 0.9 else 1.0 - rt
            else:
                rt = float(rng.random())
                ri = rt + float(rng.normal(0, 0.01))
            if s == 16:
                obj["reward_train"], obj["reward_inf"] = rt, None
            elif s == 17:
                obj["reward_train"], obj["reward_inf"] = "NaN", ri
            elif s == 19:
                obj["reward_train"] = rt
            else:
                obj["reward_train"], obj["reward_inf"] = rt, ri

        if s % 5 != 4:
            obj["runtime"] = make_runtime(rng, T)
        seqs.append(obj)
    return seqs


def write_jsonl(seqs, header, path):
    lines = [json.dumps({"kcx_header": header}, ensure_ascii=False)]
    lines += [json.dumps(obj, ensure_ascii=False, allow_nan=False) for obj in seqs]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    with gzip.open(path + ".gz", "wb") as f:
        f.write(data)


# --------------------------------------------------------------------------------------
# safetensors (SPEC 1.2), float32 values.

def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, dtype name, numpy array). The header is padded with
    spaces so that the byte buffer starts at an 8-byte aligned file offset; tensors are
    laid out back to back in the given order (I64 tensors first keeps every tensor
    aligned to its own item size, with no gaps, as the standard layout requires)."""
    np_dtype = {"I64": "<i8", "I32": "<i4", "F32": "<f4", "F64": "<f8"}
    header, blobs, offset = {}, [], 0
    for name, dtype, arr in tensors:
        blob = np.ascontiguousarray(arr, dtype=np_dtype[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = metadata
    hjson = json.dumps(header).encode("utf-8")
    hjson += b" " * ((-(8 + len(hjson))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for blob in blobs:
            f.write(blob)


def build_safetensors_run(seed, n_seq, V):
    rng = np.random.default_rng([seed, 2])
    logits_seqs = {2, 3, 4}
    lengths, sims = [], []
    for s in range(n_seq):
        T = sequence_length(rng, s, logits_seqs)
        lengths.append(T)
        sims.append(simulate(rng, T, V))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    M = int(offsets[-1])

    cat = lambda key: np.concatenate([m[key] for m in sims])
    tokens = cat("y").astype(np.int32)
    lp_train = cat("lp_train").astype(np.float32)
    lp_inf = cat("lp_inf").astype(np.float32)
    # Missing values cannot be null here: NaN (counted nonfinite), plus two infinities.
    lp_train[rng.choice(M, size=max(1, M // 800), replace=False)] = np.nan
    lp_inf[rng.choice(M, size=max(1, M // 1500), replace=False)] = np.nan
    if n_seq > 12:
        lp_inf[offsets[11] + (lengths[11] - 1) // 2] = np.inf
        lp_train[offsets[12]] = -np.inf

    topk = {}
    for k, key in (("train", "lpt_full"), ("inf", "lpi_full")):
        rows = [topk_rows(rng, m[key], TOPK, 0.05) for m in sims]
        ids = np.concatenate([r[0] for r in rows]).astype(np.int32)
        logp = np.concatenate([r[1] for r in rows]).astype(np.float32)
        bad = rng.choice(M, size=max(1, M // 2000), replace=False)
        logp[bad, rng.integers(TOPK, size=len(bad))] = np.nan
        topk[k] = (ids, logp)

    # Full logits: three whole short sequences plus a few scattered positions.
    rows = [np.arange(offsets[s], offsets[s + 1]) for s in sorted(logits_seqs) if s < n_seq]
    rows.append(rng.choice(M, size=min(M, 7), replace=False))
    logits_rows = np.unique(np.concatenate(rows)).astype(np.int64)
    seq_of = np.searchsorted(offsets, logits_rows, side="right") - 1
    lt = np.stack([sims[s]["z"][p - offsets[s]] for s, p in zip(seq_of, logits_rows)])
    li = np.stack([sims[s]["zp"][p - offsets[s]] for s, p in zip(seq_of, logits_rows)])
    lt, li = lt.astype(np.float32), li.astype(np.float32)
    if len(logits_rows) > 2:
        li[2, int(rng.integers(V))] = np.nan

    reward_train = rng.random(n_seq).astype(np.float32)
    reward_inf = (reward_train + rng.normal(0, 0.01, n_seq)).astype(np.float32)
    reward_inf[rng.random(n_seq) < 0.1] = np.nan         # not logged -> NaN

    slice_codes = np.stack([rng.integers(-1, len(TASKS), n_seq),
                            rng.integers(-1, len(LANGS), n_seq)], axis=1).astype(np.int32)
    ids = [f"st{seed}-{s:03d}" for s in range(n_seq)]
    runtime = [make_runtime(rng, T) for T in lengths]
    header = make_header(seed, V, "fp8_e4m3")
    metadata = {"kcx": "1", "ids": json.dumps(ids),
                "slice_keys": json.dumps(["task", "lang"]),
                "slice_values": json.dumps({"task": TASKS, "lang": LANGS}),
                "header": json.dumps(header), "runtime": json.dumps(runtime)}
    tensors = [
        ("offsets", "I64", offsets),
        ("logits_rows", "I64", logits_rows),
        ("tokens", "I32", tokens),
        ("logp_train", "F32", lp_train),
        ("logp_inf", "F32", lp_inf),
        ("topk_train_ids", "I32", topk["train"][0]),
        ("topk_train_logp", "F32", topk["train"][1]),
        ("topk_inf_ids", "I32", topk["inf"][0]),
        ("topk_inf_logp", "F32", topk["inf"][1]),
        ("logits_train", "F32", lt),
        ("logits_inf", "F32", li),
        ("reward_train", "F32", reward_train),
        ("reward_inf", "F32", reward_inf),
        ("slice_codes", "I32", slice_codes),
    ]
    return tensors, metadata


# --------------------------------------------------------------------------------------

def make(out, seed, n_seq=60, V=128):
    """Write ext.jsonl, ext.jsonl.gz and ext.safetensors into out; return their paths."""
    os.makedirs(out, exist_ok=True)
    jsonl = os.path.join(out, "ext.jsonl")
    write_jsonl(build_jsonl_run(seed, n_seq, V), make_header(seed, V, "bf16"), jsonl)
    st = os.path.join(out, "ext.safetensors")
    write_safetensors(st, *build_safetensors_run(seed, n_seq, V))
    return [jsonl, jsonl + ".gz", st]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--sequences", type=int, default=60)
    ap.add_argument("--vocab", type=int, default=128)
    a = ap.parse_args(argv)
    if a.sequences < 1 or a.vocab < TOPK + 1:
        ap.error(f"need --sequences >= 1 and --vocab >= {TOPK + 1}")
    for p in make(a.out, a.seed, a.sequences, a.vocab):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
