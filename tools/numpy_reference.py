#!/usr/bin/python3
"""Independent numpy reference for KCX's metrics (SPEC sections 1, 2, 3 and 6.2).

This file knows only /work/shared/SPEC.md and the clarifications the project decided
where the SPEC is silent (listed below). It does not share code or semantics with the
C++ implementation: it is the outside observer that `tools/check_against_numpy.py`
compares `kcx metrics --json` against. It is also meant to be read as documentation of
the metric definitions, so it favours plain, literal numpy over speed.

Usage:
    numpy_reference.py RUN            # RUN = .jsonl, .jsonl.gz or .safetensors
prints the `kcx metrics --json` document (SPEC 6.2) for RUN.

    from numpy_reference import metrics
    doc = metrics("run.jsonl")        # same document as a dict

Decisions applied where the SPEC is silent (decided by the project lead):
  * Status of a value. Every metric value at a position/sequence is either a value, or
    *missing* (an input was not logged: JSON null, absent key, absent row), or
    *nonfinite* (an input is NaN/±Inf, or the result of finite inputs overflowed, e.g.
    ratio = exp(r) = inf). Missing wins over nonfinite. For every per-token metric
    count + missing_count + nonfinite_count = M (tokens); for per-sequence metrics = N.
  * clip_excess uses c = 0.2 (no contract is given to `kcx metrics`). It is computed
    from w = exp(r); if w overflows to +inf the indicator is still well defined (1).
  * Top-k rows are sorted by logp descending (stable) before use. A row with a null is
    missing, a row with a non-finite logp is nonfinite. 1-P and 1-Q are clamped at 0;
    0*log(0/x) = 0; 1-P > 0 with 1-Q == 0 gives kl_lower = +inf -> nonfinite.
  * Where both full-logit rows exist at a position the exact value wins: tv_lower := tv,
    kl_lower := kl_train_inf, top1_agree := (argmax z == argmax z', first index on
    ties). This includes the status: a non-finite logits row makes these nonfinite
    there even if the top-k rows are fine.
  * Full-logit metrics need both rows; absent -> missing, any null in a row -> missing,
    any non-finite -> nonfinite. entropy_diff = H(q) - H(p); js with m = (p+q)/2.
  * seq_* metrics need every r_t of the sequence (any missing -> missing, else any
    nonfinite -> nonfinite). seq_ratio = exp(clip(sum r, -20, 20)). reward_diff needs
    both rewards (absent/null -> missing, NaN -> nonfinite). length always exists.
    A sequence with no tokens (only expressible in safetensors) has no seq_* values
    (missing); its length is 0.
  * Per-run metrics: ess = (sum w)^2 / (n sum w^2) over the n tokens with finite w;
    prob_pearson over the tokens where prob_diff exists (both lp present and finite);
    log_ppl_diff = mean over sequences (with >= 1 token having both lp finite) of the
    mean over those tokens of (lp_inf - lp_train). Summary: count 1, every statistic and
    "value" equal to the value; missing/nonfinite counts are those of the tokens they
    consume (ratio for ess, prob_diff for prob_pearson, log_ratio for log_ppl_diff).
  * A metric with count 0 has count, missing_count, nonfinite_count and no statistics.
"""

import hashlib
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# --------------------------------------------------------------------------------------
# Names (SPEC 2), in SPEC order.

TOPK_METRICS = ["tv_lower", "kl_lower", "top1_agree"]
LOGIT_METRICS = ["tv", "kl_train_inf", "kl_inf_train", "js", "max_abs_logit_diff",
                 "logit_drift", "entropy_train", "entropy_inf", "entropy_diff"]
LOGPROB_METRICS = ["log_ratio", "abs_log_ratio", "ratio", "prob_diff", "k1", "k2", "k3",
                   "chi2", "clip_excess"]
SEQ_METRICS = ["seq_log_ratio", "seq_abs_log_ratio", "seq_max_abs_log_ratio",
               "seq_mean_abs_log_ratio", "seq_geo_ratio", "seq_ratio", "reward_diff",
               "length"]
RUN_METRICS = ["ess", "prob_pearson", "log_ppl_diff"]
ALL_METRICS = TOPK_METRICS + LOGIT_METRICS + LOGPROB_METRICS + SEQ_METRICS + RUN_METRICS

STAT_KEYS = ["count", "mean", "min", "max", "p50", "p99", "p99.9",
             "nonfinite_count", "missing_count"]

PPO_CLIP = 0.2            # SPEC 2.1 default c
SEQ_RATIO_CLAMP = 20.0    # SPEC 2.4: seq_ratio clamped in log space at +-20

# Status codes of one metric value.
OK, MISSING, NONFINITE = 0, 1, 2

from spec_run import (KERNELS, NONFINITE_STRINGS, Run, RunError, _open_text,  # noqa: E402,F401
                      read_jsonl, read_run, read_safetensors, read_safetensors_tensors)


# --------------------------------------------------------------------------------------
# SPEC 2: metric values. Each metric is a pair (values float64[n], status int8[n]);
# values are meaningful only where status == OK.

def _with_status(values, missing, nonfinite_input):
    """Status of computed values: missing inputs, else non-finite inputs or result."""
    status = np.full(values.shape, OK, dtype=np.int8)
    status[~np.isfinite(values)] = NONFINITE
    status[nonfinite_input] = NONFINITE
    status[missing] = MISSING
    return values, status


def logprob_metrics(run, clip=PPO_CLIP):
    """SPEC 2.1, from the sampled tokens' log-probs."""
    a, b = run.lp["train"], run.lp["inf"]
    missing = run.lp_missing["train"] | run.lp_missing["inf"]
    bad = ~np.isfinite(a) | ~np.isfinite(b)
    with np.errstate(all="ignore"):
        r = a - b                              # log of w = pi_train / pi_inf
        w = np.exp(r)
        vals = {
            "log_ratio": r,
            "abs_log_ratio": np.abs(r),
            "ratio": w,
            "prob_diff": np.abs(np.exp(a) - np.exp(b)),
            "k1": -r,
            "k2": 0.5 * r * r,
            "k3": (w - 1.0) - r,
            "chi2": w * w - 1.0,
            "clip_excess": ((w < 1.0 - clip) | (w > 1.0 + clip)).astype(np.float64),
        }
    return {name: _with_status(v, missing, bad) for name, v in vals.items()}


def _sorted_topk(tk):
    """Rows sorted by logp descending; stable, so equal logps keep their order."""
    order = np.argsort(-tk["logp"], axis=1, kind="stable")
    return (np.take_along_axis(tk["ids"], order, axis=1),
            np.take_along_axis(tk["logp"], order, axis=1))


def topk_metrics(run):
    """SPEC 2.2: certified lower bounds from the two kernels' top-k rows."""
    M = run.M
    tt, ti = run.topk["train"], run.topk["inf"]
    if tt is None or ti is None:
        out = {}
        for name in TOPK_METRICS:
            out[name] = (np.full(M, np.nan), np.full(M, MISSING, dtype=np.int8))
        return out
    ids_t, lp_t = _sorted_topk(tt)
    ids_i, lp_i = _sorted_topk(ti)
    for ids, tk in ((ids_t, tt), (ids_i, ti)):
        s = np.sort(ids[tk["present"]], axis=1)
        if np.any(s[:, 1:] == s[:, :-1]):
            raise RunError(f"{run.path}: a top-k row lists the same id twice")
    missing = ~tt["present"] | ~ti["present"] | tt["null"] | ti["null"]
    bad = ~np.all(np.isfinite(lp_t), axis=1) | ~np.all(np.isfinite(lp_i), axis=1)

    with np.errstate(all="ignore"):
        # same[m, i, j]: train's i-th id equals inf's j-th id at position m.
        same = ids_t[:, :, None] == ids_i[:, None, :]
        in_both = same.any(axis=2)                                   # [M, k_train]
        p = np.where(in_both, np.exp(lp_t), 0.0)                     # p_i, i in I
        lq_matched = np.where(same, lp_i[:, None, :], 0.0).sum(axis=2)
        q = np.where(in_both, np.exp(lq_matched), 0.0)               # q_i, i in I
        P, Q = p.sum(axis=1), q.sum(axis=1)
        rest_p = np.maximum(1.0 - P, 0.0)      # mass of the merged "other" outcome
        rest_q = np.maximum(1.0 - Q, 0.0)

        tv_lower = 0.5 * (np.abs(p - q).sum(axis=1) + np.abs(rest_p - rest_q))

        # sum_I p_i log(p_i/q_i), written as p_i (log p_i - log q_i); 0 log 0 = 0.
        kl_terms = np.where(in_both & (p > 0), p * (lp_t - lq_matched), 0.0)
        rest_term = np.where(rest_p == 0.0, 0.0,
                             np.where(rest_q == 0.0, np.inf,
                                      rest_p * np.log(rest_p / rest_q)))
        kl_lower = kl_terms.sum(axis=1) + rest_term

        top1 = (ids_t[:, 0] == ids_i[:, 0]).astype(np.float64)

    return {"tv_lower": _with_status(tv_lower, missing, bad),
            "kl_lower": _with_status(kl_lower, missing, bad),
            "top1_agree": _with_status(top1, missing, bad)}


def _log_softmax(z):
    """Row-wise log softmax, max-subtracted, in float64."""
    m = z.max(axis=1, keepdims=True)
    return z - (m + np.log(np.exp(z - m).sum(axis=1, keepdims=True)))


def exact_from_logits(z, zp):
    """SPEC 2.3 for finite logits rows z (train) and zp (inf), both float64 [P, V].
    Returns name -> float64[P]; also top1_agree."""
    lp, lq = _log_softmax(z), _log_softmax(zp)
    p, q = np.exp(lp), np.exp(lq)
    lm = np.logaddexp(lp, lq) - math.log(2.0)       # log of m = (p + q) / 2
    d = z - zp
    h_p = -(p * lp).sum(axis=1)
    h_q = -(q * lq).sum(axis=1)
    return {
        "tv": 0.5 * np.abs(p - q).sum(axis=1),
        "kl_train_inf": (p * (lp - lq)).sum(axis=1),
        "kl_inf_train": (q * (lq - lp)).sum(axis=1),
        "js": 0.5 * (p * (lp - lm)).sum(axis=1) + 0.5 * (q * (lq - lm)).sum(axis=1),
        "max_abs_logit_diff": np.abs(d).max(axis=1),
        "logit_drift": 0.5 * (d.max(axis=1) - d.min(axis=1)),
        "entropy_train": h_p,
        "entropy_inf": h_q,
        "entropy_diff": h_q - h_p,
        "top1_agree": (np.argmax(z, axis=1) == np.argmax(zp, axis=1)).astype(np.float64),
    }


def logit_metrics(run, chunk=256):
    """SPEC 2.3 at the positions where both kernels have a full-logits row.
    Returns (name -> (values[M], status[M]), positions that have both rows)."""
    M = run.M
    names = LOGIT_METRICS + ["top1_agree"]
    out = {n: (np.full(M, np.nan), np.full(M, MISSING, dtype=np.int8)) for n in names}
    lt, li = run.logits["train"], run.logits["inf"]
    if lt is None or li is None:
        return out, np.zeros(M, dtype=bool)
    if lt["vals"].shape[1] != li["vals"].shape[1]:
        raise RunError(f"{run.path}: logits_train and logits_inf differ in V")
    rows, it, ii = np.intersect1d(lt["rows"], li["rows"], return_indices=True)
    has_both = np.zeros(M, dtype=bool)
    has_both[rows] = True
    for start in range(0, len(rows), chunk):
        sl = slice(start, start + chunk)
        pos, z, zp = rows[sl], lt["vals"][it[sl]], li["vals"][ii[sl]]
        null = lt["null"][it[sl]] | li["null"][ii[sl]]
        bad = ~np.all(np.isfinite(z), axis=1) | ~np.all(np.isfinite(zp), axis=1)
        good = ~null & ~bad
        vals = {}
        if good.any():
            with np.errstate(all="ignore"):
                vals = exact_from_logits(z[good], zp[good])
        for n in names:
            v = np.full(len(pos), np.nan)
            if good.any():
                v[good] = vals[n]
            v, st = _with_status(v, null, bad)
            out[n][0][pos] = v
            out[n][1][pos] = st
    return out, has_both


def token_metrics(run):
    """All per-token metrics (SPEC 2.1-2.3) -> name -> (values[M], status[M])."""
    out = logprob_metrics(run)
    exact, has_logits = logit_metrics(run)
    for n in LOGIT_METRICS:
        out[n] = exact[n]
    # Top-k lower bounds, replaced by the exact value where both logits rows exist.
    lower = topk_metrics(run)
    for n, exact_name in (("tv_lower", "tv"), ("kl_lower", "kl_train_inf"),
                          ("top1_agree", "top1_agree")):
        v, st = lower[n][0].copy(), lower[n][1].copy()
        v[has_logits] = exact[exact_name][0][has_logits]
        st[has_logits] = exact[exact_name][1][has_logits]
        out[n] = (v, st)
    return out


def sequence_metrics(run, tok):
    """SPEC 2.4 -> name -> (values[N], status[N])."""
    N = run.N
    r, r_st = tok["log_ratio"]
    seq_names = SEQ_METRICS[:6]                 # the ones built from r_t
    vals = {n: np.full(N, np.nan) for n in SEQ_METRICS}
    stat = {n: np.full(N, OK, dtype=np.int8) for n in SEQ_METRICS}
    for s in range(N):
        a, b = run.offsets[s], run.offsets[s + 1]
        rs, st = r[a:b], r_st[a:b]
        vals["length"][s] = b - a
        if b == a or np.any(st == MISSING):
            for n in seq_names:
                stat[n][s] = MISSING
            continue
        if np.any(st == NONFINITE):
            for n in seq_names:
                stat[n][s] = NONFINITE
            continue
        total = rs.sum()
        with np.errstate(over="ignore"):
            v = {
                "seq_log_ratio": total,
                "seq_abs_log_ratio": abs(total),
                "seq_max_abs_log_ratio": np.abs(rs).max(),
                "seq_mean_abs_log_ratio": np.abs(rs).mean(),
                "seq_geo_ratio": np.exp(rs.mean()),
                "seq_ratio": np.exp(np.clip(total, -SEQ_RATIO_CLAMP, SEQ_RATIO_CLAMP)),
            }
        for n in seq_names:
            vals[n][s] = v[n]
            stat[n][s] = OK if np.isfinite(v[n]) else NONFINITE

    out = {n: (vals[n], stat[n]) for n in SEQ_METRICS}
    ra, rb = run.reward["train"], run.reward["inf"]
    missing = run.reward_missing["train"] | run.reward_missing["inf"]
    bad = ~np.isfinite(ra) | ~np.isfinite(rb)
    with np.errstate(all="ignore"):
        out["reward_diff"] = _with_status(rb - ra, missing, bad)
    return out


def run_metrics(run, tok):
    """SPEC 2.4a -> name -> (value or None, missing_count, nonfinite_count)."""
    out = {}

    # ess = (sum w)^2 / (n sum w^2) = 1 / mean((w / mean w)^2), over finite w.
    w, w_st = tok["ratio"]
    ok = w_st == OK
    n = int(ok.sum())
    ess = None
    if n:
        with np.errstate(all="ignore"):
            ess = w[ok].sum() ** 2 / (n * (w[ok] ** 2).sum())
    out["ess"] = (ess, _count(w_st, MISSING), _count(w_st, NONFINITE))

    # Over the tokens whose prob_diff exists: both lp present and finite.
    a, b = run.lp["train"], run.lp["inf"]
    _, p_st = tok["prob_diff"]
    ok = p_st == OK
    pearson = None
    if ok.sum() >= 2:
        x, y = np.exp(a[ok]), np.exp(b[ok])
        xc, yc = x - x.mean(), y - y.mean()
        den = math.sqrt((xc * xc).sum() * (yc * yc).sum())
        if den > 0:
            pearson = (xc * yc).sum() / den
    out["prob_pearson"] = (pearson, _count(p_st, MISSING), _count(p_st, NONFINITE))

    r, r_st = tok["log_ratio"]
    per_seq = []
    for s in range(run.N):
        sl = slice(run.offsets[s], run.offsets[s + 1])
        ok = r_st[sl] == OK
        if ok.any():
            per_seq.append((b[sl][ok] - a[sl][ok]).mean())
    out["log_ppl_diff"] = (float(np.mean(per_seq)) if per_seq else None,
                           _count(r_st, MISSING), _count(r_st, NONFINITE))
    return out


# --------------------------------------------------------------------------------------
# SPEC 3 / 6.2: summaries.

def _count(status, code):
    return int((status == code).sum())


def summarize(values, status):
    """Summary of one metric: statistics over the values that exist (SPEC 2.5, 3)."""
    v = values[status == OK]
    out = {"count": int(v.size)}
    if v.size:
        p50, p99, p999 = np.percentile(v, [50, 99, 99.9])   # linear = SPEC 3 type 7
        out.update({"mean": float(np.mean(v)), "min": float(v.min()),
                    "max": float(v.max()), "p50": float(p50), "p99": float(p99),
                    "p99.9": float(p999)})
    out["nonfinite_count"] = _count(status, NONFINITE)
    out["missing_count"] = _count(status, MISSING)
    return out


def summarize_scalar(value, missing_count, nonfinite_count):
    """Summary of a per-run metric: one value, or none."""
    if value is None or not np.isfinite(value):
        return {"count": 0, "nonfinite_count": nonfinite_count,
                "missing_count": missing_count}
    value = float(value)
    out = {"count": 1}
    for key in ("mean", "min", "max", "p50", "p99", "p99.9", "value"):
        out[key] = value
    out["nonfinite_count"] = nonfinite_count
    out["missing_count"] = missing_count
    return out


def compute(run):
    """name -> summary dict, for every metric of SPEC 2."""
    tok = token_metrics(run)
    seq = sequence_metrics(run, tok)
    per_run = run_metrics(run, tok)
    out = {}
    for name in ALL_METRICS:
        if name in per_run:
            out[name] = summarize_scalar(*per_run[name])
        elif name in seq:
            out[name] = summarize(*seq[name])
        else:
            out[name] = summarize(*tok[name])
    return out


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def metrics(path):
    """The `kcx metrics --json` document (SPEC 6.2) for the run at path."""
    run = read_run(path)
    return {"kcx": 1,
            "run": {"path": path, "sha256": _sha256(path), "sequences": run.N,
                    "tokens": run.M},
            "metrics": compute(run)}


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.split("Decisions")[0].strip())
        return 0 if len(argv) == 2 else 2
    try:
        doc = metrics(argv[1])
    except (RunError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    json.dump(doc, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
