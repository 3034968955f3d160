#!/usr/bin/python3
"""Runs with a known cause of training-inference mismatch, for `kcx diagnose` (issue 21).

Every position draws training logits z ~ N(0, s²) over V ids with a per-position scale s in
[0.5, 4] (confident and uncertain positions), and the inference side's logits
z' = z + N(0, σ²) (kernel noise; with --train-sigma the training side gets its own noise
too). Then the cause is applied to the inference side and the
token is sampled from the inference side's final distribution, as an RL rollout does:

  noise            nothing more
  temperature:T    p_inf = softmax(z' / T)
  renorm_topk:K    p_inf = softmax(z') kept on its top K ids and renormalised
  offset:C         the inference log-probs are reported C nats low (r = lp_train − lp_inf + C)
  shift:S          the inference side's log-probs and top-k belong to the token S places later
  drift:G          σ grows with position: σ_t = σ (1 + t / G)

Usage: mismatch_runs.py CAUSE OUT [--seed S] [--sequences N] [--vocab V] [--k K]
                        [--sigma σ] [--train-sigma σ] [--min-len A] [--max-len B] [--logits] [--no-topk]
"""
import argparse
import json

import numpy as np


def log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def num(x):
    if np.isfinite(x):
        return float(x)
    return "-Infinity" if x < 0 else ("Infinity" if x > 0 else "NaN")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cause")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sequences", type=int, default=60)
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--sigma", type=float, default=0.05)
    ap.add_argument("--train-sigma", type=float, default=0.0)
    ap.add_argument("--min-len", type=int, default=20)
    ap.add_argument("--max-len", type=int, default=80)
    ap.add_argument("--logits", action="store_true")
    ap.add_argument("--no-topk", action="store_true")
    a = ap.parse_args()
    name, _, arg = a.cause.partition(":")
    p = float(arg) if arg else None
    rng = np.random.default_rng(a.seed)
    V, k = a.vocab, a.k
    with open(a.out, "w") as f:
        for s in range(a.sequences):
            T = int(rng.integers(a.min_len, a.max_len + 1))
            L = T + (int(p) if name == "shift" else 0)
            scale = rng.uniform(0.5, 4.0, size=(L, 1))
            z = rng.normal(0, 1, size=(L, V)) * scale
            sigma = a.sigma * (1 + np.arange(L)[:, None] / p) if name == "drift" else a.sigma
            zi = z + rng.normal(0, 1, size=(L, V)) * sigma
            if a.train_sigma > 0:
                z = z + rng.normal(0, 1, size=(L, V)) * a.train_sigma
            if name == "temperature":
                zi = zi / p
            lt, li = log_softmax(z), log_softmax(zi)
            if name == "renorm_topk":
                K = int(p)
                cut = -np.sort(-li, axis=1)[:, K - 1:K]
                li = np.where(li >= cut, li, -np.inf)
                li = log_softmax(li)
            probs = np.exp(li)
            tok = np.array([rng.choice(V, p=row / row.sum()) for row in probs])
            lpt = lt[np.arange(L), tok]
            lpi = li[np.arange(L), tok]
            ti = np.argsort(-lt, axis=1, kind="stable")[:, :k]
            ii = np.argsort(-li, axis=1, kind="stable")[:, :k]
            tlp = np.take_along_axis(lt, ti, axis=1)
            ilp = np.take_along_axis(li, ii, axis=1)
            if name == "offset":
                lpi = lpi - p
                ilp = ilp - p
            if name == "shift":
                S = int(p)
                lpi, ii, ilp = lpi[S:], ii[S:], ilp[S:]
                tok, lpt, ti, tlp = tok[:T], lpt[:T], ti[:T], tlp[:T]
                zi_rows, z_rows = zi[S:], z[:T]
            else:
                zi_rows, z_rows = zi, z
            rec = {"id": f"s{s}", "tokens": tok[:T].tolist(),
                   "logp_train": [num(x) for x in lpt[:T]], "logp_inf": [num(x) for x in lpi[:T]]}
            if not a.no_topk:
                rec["topk_train"] = {"ids": ti[:T].tolist(), "logp": [[num(x) for x in r] for r in tlp[:T]]}
                rec["topk_inf"] = {"ids": ii[:T].tolist(), "logp": [[num(x) for x in r] for r in ilp[:T]]}
            if a.logits:
                zi_out = np.where(np.isfinite(li), zi, -np.inf) if name == "renorm_topk" else zi_rows
                rec["logits_train"] = [[round(float(x), 6) for x in r] for r in z_rows[:T]]
                rec["logits_inf"] = [[num(round(float(x), 6)) for x in r] for r in zi_out[:T]]
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
