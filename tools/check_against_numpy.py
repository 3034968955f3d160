#!/usr/bin/python3
"""Compare `kcx metrics --json` with the independent numpy reference.

    check_against_numpy.py --kcx PATH_TO_KCX --work DIR [--seeds 1,2]
    check_against_numpy.py --self-test

The first form
  1. runs the self-test below (a reference that fails its own hand-worked cases would
     make the comparison meaningless),
  2. writes test runs with tools/make_external_run.py into DIR/seed<S>/ for each seed
     (ext.jsonl, ext.jsonl.gz, ext.safetensors),
  3. runs `KCX metrics --run FILE --json -` on each file and compares, for every metric
     of SPEC 2, count, missing_count, nonfinite_count (exactly) and every statistic
     (mean, min, max, p50, p99, p99.9, and value for per-run metrics) with
     tools/numpy_reference.py, at relative tolerance 1e-6 (absolute 1e-12 near zero).
     It also compares run.sequences and run.tokens (one more item per file, "run").
It prints one line per mismatch and finally `N passed, M failed`, where N + M is the
number of compared (file, metric) items; it exits 1 on any mismatch.

--self-test checks the reference itself on tiny runs whose answers are worked out by
hand (closed forms for two-point distributions, identical kernels give zeros, a
constant logit shift gives logit_drift 0, missing/nonfinite bookkeeping, the type-7
quantile of SPEC 3, ...), plus properties on generated runs (count + missing +
nonfinite = M or N; top-k bounds never exceed the exact values; a run written as JSONL
and as safetensors with the same float32 values gives the same metrics).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_external_run as mk          # noqa: E402
import numpy_reference as ref          # noqa: E402

RTOL = 1e-6
ATOL = 1e-12
STATS = ["mean", "min", "max", "p50", "p99", "p99.9"]
COUNTS = ["count", "missing_count", "nonfinite_count"]


def close(a, b, rtol=RTOL, atol=ATOL):
    return abs(a - b) <= max(atol, rtol * max(abs(a), abs(b)))


# --------------------------------------------------------------------------------------
# Comparison with kcx.

def compare_metric(name, want, got):
    """Problems (strings) between the reference summary `want` and kcx's `got`."""
    if got is None:
        return ["missing from kcx output"]
    if not isinstance(got, dict):
        return [f"not an object: {got!r}"]
    problems = []
    for key in COUNTS:
        if got.get(key) != want[key]:
            problems.append(f"{key}: kcx {got.get(key)!r}, reference {want[key]}")
    if want["count"] == 0:
        extra = [k for k in STATS + ["value"] if got.get(k) is not None]
        if extra:
            problems.append(f"count 0 but kcx reports statistics {extra}")
        return problems
    keys = STATS + (["value"] if name in ref.RUN_METRICS else [])
    for key in keys:
        g = got.get(key)
        if isinstance(g, bool) or not isinstance(g, (int, float)):
            problems.append(f"{key}: kcx {g!r}, reference {want[key]!r}")
        elif not close(float(g), want[key]):
            problems.append(f"{key}: kcx {g!r}, reference {want[key]!r} "
                            f"(diff {float(g) - want[key]:.3g})")
    return problems


def run_kcx(kcx, path):
    """kcx's metrics document for path, or (None, reason)."""
    try:
        p = subprocess.run([kcx, "metrics", "--run", path, "--json", "-"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"could not run kcx: {e}"
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"kcx exited {p.returncode}: {' | '.join(err[:3])}"
    try:
        return json.loads(p.stdout.decode("utf-8")), None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return None, f"kcx output is not JSON: {e}"


def check_file(kcx, path):
    """Compare one file. Returns (passed, failed) item counts."""
    want = ref.metrics(path)
    got, why = run_kcx(kcx, path)
    items = ["run"] + ref.ALL_METRICS
    if got is None:
        print(f"FAIL {path}: {why} ({len(items)} items failed)")
        return 0, len(items)
    passed = failed = 0
    gm = got.get("metrics") if isinstance(got.get("metrics"), dict) else {}
    for name in items:
        if name == "run":
            gr = got.get("run") if isinstance(got.get("run"), dict) else {}
            problems = [f"{k}: kcx {gr.get(k)!r}, reference {want['run'][k]}"
                        for k in ("sequences", "tokens") if gr.get(k) != want["run"][k]]
        else:
            problems = compare_metric(name, want["metrics"][name], gm.get(name))
        for pr in problems:
            print(f"MISMATCH {path} {name}: {pr}")
        if problems:
            failed += 1
        else:
            passed += 1
    extra = sorted(set(gm) - set(ref.ALL_METRICS))
    if extra:
        print(f"note: {path}: kcx reports metrics beyond SPEC 2 (not compared): {extra}")
    return passed, failed


# --------------------------------------------------------------------------------------
# Self-test of the reference.

class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def eq(self, what, got, want, rtol=1e-12, atol=1e-15):
        ok = (got is not None and want is not None and
              (got == want or (isinstance(got, float) and isinstance(want, float) and
                               close(got, want, rtol, atol))))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"SELF-TEST FAIL {what}: got {got!r}, expected {want!r}")

    def true(self, what, cond):
        self.eq(what, bool(cond), True)


def _seq(sid, lp_train, lp_inf, **extra):
    obj = {"id": sid, "tokens": [1] * len(lp_train), "logp_train": lp_train,
           "logp_inf": lp_inf}
    obj.update(extra)
    return obj


def _metrics_of(tmp, name, seqs, header=True):
    path = os.path.join(tmp, name + ".jsonl")
    with open(path, "w") as f:
        if header:
            f.write(json.dumps({"kcx_header": {"kernels": {"train": {}, "inf": {}}}}) + "\n")
        for s in seqs:
            f.write(json.dumps(s) + "\n\n")        # blank lines are skipped
    return ref.metrics(path)["metrics"]


def self_test(verbose=True):
    c = Checks()
    ln = math.log
    with tempfile.TemporaryDirectory() as tmp:
        # 1. Identical kernels: every divergence is 0, ratios 1.
        lp = [ln(0.5), ln(0.25), -3.0]
        z = [[2.0, 1.0, -1.0, 0.5]] * 3
        tk = {"ids": [[0, 1]] * 3, "logp": [[ln(0.5), ln(0.3)]] * 3}
        m = _metrics_of(tmp, "identical", [
            _seq("a", lp, lp, topk_train=tk, topk_inf=tk, reward_train=1, reward_inf=1),
            _seq("b", lp, lp, topk_train=tk, topk_inf=tk, logits_train=z, logits_inf=z)])
        for n in ["tv_lower", "kl_lower", "tv", "kl_train_inf", "kl_inf_train", "js",
                  "max_abs_logit_diff", "logit_drift", "entropy_diff", "log_ratio",
                  "abs_log_ratio", "prob_diff", "k1", "k2", "k3", "chi2", "clip_excess",
                  "seq_log_ratio", "seq_abs_log_ratio", "seq_max_abs_log_ratio",
                  "seq_mean_abs_log_ratio", "reward_diff", "log_ppl_diff"]:
            c.eq(f"identical {n} max", abs(m[n]["max"]) + abs(m[n]["min"]), 0.0)
        for n in ["ratio", "top1_agree", "seq_geo_ratio", "seq_ratio", "ess",
                  "prob_pearson"]:
            c.eq(f"identical {n}", m[n]["min"], 1.0)
            c.eq(f"identical {n}", m[n]["max"], 1.0)
        c.eq("identical tv count", m["tv"]["count"], 3)
        c.eq("identical tv missing (positions without logits)", m["tv"]["missing_count"], 3)
        c.eq("identical tv_lower count (top-k or logits)", m["tv_lower"]["count"], 6)
        c.eq("identical reward_diff missing", m["reward_diff"]["missing_count"], 1)

        # 2. Two-point distributions: closed forms. z' also carries a shift of +3.
        p, q, shift = 0.7, 0.4, 3.0
        zt = [ln(p), ln(1 - p)]
        zi = [ln(q) + shift, ln(1 - q) + shift]
        m = _metrics_of(tmp, "twopoint", [_seq(
            "a", [ln(p)], [ln(q)], logits_train=[zt], logits_inf=[zi],
            # top-k rows that disagree with the logits (they would give tv_lower 0.2
            # and top1_agree 1): the exact values must win.
            topk_train={"ids": [[0]], "logp": [[ln(p)]]},
            topk_inf={"ids": [[0]], "logp": [[ln(0.5)]]})])
        kl_pq = p * ln(p / q) + (1 - p) * ln((1 - p) / (1 - q))
        kl_qp = q * ln(q / p) + (1 - q) * ln((1 - q) / (1 - p))
        m1, m2 = (p + q) / 2, 1 - (p + q) / 2
        js = 0.5 * (p * ln(p / m1) + (1 - p) * ln((1 - p) / m2)) + \
            0.5 * (q * ln(q / m1) + (1 - q) * ln((1 - q) / m2))
        h_p = -(p * ln(p) + (1 - p) * ln(1 - p))
        h_q = -(q * ln(q) + (1 - q) * ln(1 - q))
        d0, d1 = ln(p) - ln(q) - shift, ln(1 - p) - ln(1 - q) - shift
        expect = {"tv": abs(p - q), "kl_train_inf": kl_pq, "kl_inf_train": kl_qp,
                  "js": js, "entropy_train": h_p, "entropy_inf": h_q,
                  "entropy_diff": h_q - h_p, "max_abs_logit_diff": max(abs(d0), abs(d1)),
                  "logit_drift": 0.5 * abs(d0 - d1),
                  # exact values win over the top-k rows at this position:
                  "tv_lower": abs(p - q), "kl_lower": kl_pq, "top1_agree": 0.0}
        for n, v in expect.items():
            c.eq(f"two-point {n}", m[n]["mean"], v)

        # 3. A constant logit shift changes nothing but max_abs_logit_diff.
        z = [[0.3, -1.2, 2.5, 0.0, 1.1], [5.0, 4.0, -3.0, 0.0, 0.0]]
        zs = [[x + 5.0 for x in row] for row in z]
        m = _metrics_of(tmp, "shift", [_seq("a", [-1.0, -2.0], [-1.0, -2.0],
                                            logits_train=z, logits_inf=zs)])
        for n in ["logit_drift", "tv", "kl_train_inf", "kl_inf_train", "js",
                  "entropy_diff"]:
            c.eq(f"shift {n}", m[n]["max"], 0.0, atol=1e-14)
        c.eq("shift max_abs_logit_diff", m["max_abs_logit_diff"]["max"], 5.0)
        c.eq("shift top1_agree", m["top1_agree"]["min"], 1.0)

        # 4. Top-k by hand, with an unsorted train row: train {2: .5, 1: .3},
        #    inf {1: .4, 3: .3}. I = {1}, P = .3, Q = .4.
        m = _metrics_of(tmp, "topk", [_seq(
            "a", [-1.0], [-1.0],
            topk_train={"ids": [[1, 2]], "logp": [[ln(0.3), ln(0.5)]]},
            topk_inf={"ids": [[1, 3]], "logp": [[ln(0.4), ln(0.3)]]})])
        c.eq("topk tv_lower", m["tv_lower"]["mean"], 0.5 * (0.1 + abs(0.7 - 0.6)))
        c.eq("topk kl_lower", m["kl_lower"]["mean"], 0.3 * ln(0.3 / 0.4) + 0.7 * ln(0.7 / 0.6))
        c.eq("topk top1_agree (after sorting: 2 vs 1)", m["top1_agree"]["mean"], 0.0)
        c.eq("topk tv missing: no logits", m["tv"]["missing_count"], 1)

        # 5. Top-k edge cases: 1-P < 0 by rounding is clamped; 1-Q == 0 < 1-P gives
        #    kl_lower = inf (nonfinite); a null in a row is missing; ties keep order.
        m = _metrics_of(tmp, "topk_edges", [_seq(
            "a", [-1.0] * 5, [-1.0] * 5,
            topk_train={"ids": [[1, 2], [1, 2], [1, 2], [4, 7], [1, 2]],
                        "logp": [[ln(0.6), ln(0.4000001)], [ln(0.5), ln(0.1)],
                                 [ln(0.5), None], [ln(0.4), ln(0.4)],
                                 [ln(0.5), "NaN"]]},
            topk_inf={"ids": [[1, 2], [1, 2], [1, 2], [7, 4], [1, 2]],
                      "logp": [[ln(0.5), ln(0.5)], [0.0, -800.0], [ln(0.5), ln(0.5)],
                               [ln(0.4), ln(0.4)], [ln(0.5), ln(0.5)]]})])
        c.eq("topk edges count", m["kl_lower"]["count"], 2)
        c.eq("topk edges missing (null in a row)", m["kl_lower"]["missing_count"], 1)
        c.eq("topk edges nonfinite (1-Q = 0, and a NaN row)",
             m["kl_lower"]["nonfinite_count"], 2)
        c.eq("topk edges tv_lower nonfinite (NaN row only)",
             m["tv_lower"]["nonfinite_count"], 1)
        c.eq("topk clamp kl_lower", m["kl_lower"]["max"],
             0.6 * ln(0.6 / 0.5) + 0.4000001 * ln(0.4000001 / 0.5))
        c.eq("topk ties keep stored order: 4 vs 7", m["top1_agree"]["min"], 0.0)

        # 6. Per-token closed forms.
        a = [ln(0.5), ln(0.2), -1.0, -2.0]
        b = [ln(0.4), ln(0.2), -1.5, -2.0 + 0.15]     # w = 1.25, 1, e^.5, e^-.15
        m = _metrics_of(tmp, "tokens", [_seq("a", a, b)])
        r = [x - y for x, y in zip(a, b)]
        w = [math.exp(x) for x in r]
        forms = {"log_ratio": r, "abs_log_ratio": [abs(x) for x in r], "ratio": w,
                 "prob_diff": [abs(math.exp(x) - math.exp(y)) for x, y in zip(a, b)],
                 "k1": [-x for x in r], "k2": [0.5 * x * x for x in r],
                 "k3": [(wi - 1) - ri for wi, ri in zip(w, r)],
                 "chi2": [wi * wi - 1 for wi in w], "clip_excess": [1.0, 0.0, 1.0, 0.0]}
        for n, vals in forms.items():
            c.eq(f"per-token {n} mean", m[n]["mean"], sum(vals) / 4)
            c.eq(f"per-token {n} max", m[n]["max"], max(vals))
            c.eq(f"per-token {n} min", m[n]["min"], min(vals))
        c.eq("per-token k3 never negative", m["k3"]["min"] >= 0, True)
        total = sum(r)
        c.eq("seq_log_ratio", m["seq_log_ratio"]["mean"], total)
        c.eq("seq_abs_log_ratio", m["seq_abs_log_ratio"]["mean"], abs(total))
        c.eq("seq_max_abs_log_ratio", m["seq_max_abs_log_ratio"]["mean"],
             max(abs(x) for x in r))
        c.eq("seq_mean_abs_log_ratio", m["seq_mean_abs_log_ratio"]["mean"],
             sum(abs(x) for x in r) / 4)
        c.eq("seq_geo_ratio", m["seq_geo_ratio"]["mean"], math.exp(total / 4))
        c.eq("seq_ratio", m["seq_ratio"]["mean"], math.exp(total))
        c.eq("ess", m["ess"]["value"], sum(w) ** 2 / (4 * sum(x * x for x in w)))

        # 7. Missing / nonfinite bookkeeping, overflow, seq_ratio clamp.
        m = _metrics_of(tmp, "status", [
            _seq("a", [None, -1.0, "NaN", -2.0, None, -1.0],
                 [-1.0, None, -1.0, "Infinity", "NaN", -1.1]),
            _seq("b", [0.0, -1.0], [-800.0, -1.0]),           # r = 800: w overflows
            _seq("c", [-1.0], ["-Infinity"]),
            _seq("d", [-1.0, -1.0], [-13.0, -13.0])])          # sum r = 24 > 20
        c.eq("status log_ratio count", m["log_ratio"]["count"], 5)
        c.eq("status log_ratio missing", m["log_ratio"]["missing_count"], 3)
        c.eq("status log_ratio nonfinite", m["log_ratio"]["nonfinite_count"], 3)
        c.eq("status ratio count (exp(800) overflows)", m["ratio"]["count"], 4)
        c.eq("status ratio nonfinite", m["ratio"]["nonfinite_count"], 4)
        c.eq("status chi2 nonfinite", m["chi2"]["nonfinite_count"], 4)
        c.eq("status k3 nonfinite", m["k3"]["nonfinite_count"], 4)
        c.eq("status k2 max (finite at r = 800)", m["k2"]["max"], 0.5 * 800.0 ** 2)
        c.eq("status clip_excess count (w = inf is outside the band)",
             m["clip_excess"]["count"], 5)
        c.eq("status seq missing (a)", m["seq_log_ratio"]["missing_count"], 1)
        c.eq("status seq nonfinite (c)", m["seq_log_ratio"]["nonfinite_count"], 1)
        c.eq("status seq_ratio clamp at +20", m["seq_ratio"]["max"], math.exp(20.0))
        c.eq("status seq_log_ratio max", m["seq_log_ratio"]["max"], 800.0)
        c.eq("status length count", m["length"]["count"], 4)
        c.eq("status ess over finite w",
             m["ess"]["value"], (math.exp(0.1) + 1 + 2 * math.exp(12)) ** 2 /
             (4 * (math.exp(0.2) + 1 + 2 * math.exp(24))))
        c.eq("status ess missing", m["ess"]["missing_count"], 3)
        c.eq("status ess nonfinite", m["ess"]["nonfinite_count"], 4)
        c.eq("status prob_pearson nonfinite", m["prob_pearson"]["nonfinite_count"], 3)
        # log_ppl_diff: a -> tok 5 only (-0.1), b -> (-800, 0), d -> -12
        c.eq("status log_ppl_diff", m["log_ppl_diff"]["value"],
             (-0.1 + (-800.0 + 0.0) / 2 - 12.0) / 3)
        for n in ref.ALL_METRICS:
            s = m[n]
            total_n = 4 if n in ref.SEQ_METRICS else 11
            if n not in ref.RUN_METRICS:
                c.eq(f"status {n}: count + missing + nonfinite",
                     s["count"] + s["missing_count"] + s["nonfinite_count"], total_n)
        c.eq("status count-0 metric has no statistics", sorted(m["tv"]),
             ["count", "missing_count", "nonfinite_count"])

        # 8. Rewards.
        m = _metrics_of(tmp, "rewards", [
            _seq("a", [-1.0], [-1.0], reward_train=0.25, reward_inf=1),
            _seq("b", [-1.0], [-1.0], reward_train=0.5),
            _seq("c", [-1.0], [-1.0], reward_train=None, reward_inf=0.5),
            _seq("d", [-1.0], [-1.0], reward_train="NaN", reward_inf=0.5),
            _seq("e", [-1.0], [-1.0], reward_train="NaN"),
            _seq("f", [-1.0], [-1.0])])
        c.eq("reward_diff value", m["reward_diff"]["mean"], 0.75)
        c.eq("reward_diff missing", m["reward_diff"]["missing_count"], 4)
        c.eq("reward_diff nonfinite", m["reward_diff"]["nonfinite_count"], 1)

        # 9. Per-run closed forms: ess, Pearson, log_ppl_diff.
        m = _metrics_of(tmp, "perrun", [
            _seq("a", [0.0, ln(3.0)], [0.0, 0.0])])
        c.eq("ess of w = [1, 3]", m["ess"]["value"], 16.0 / 20.0)
        m = _metrics_of(tmp, "pearson", [
            _seq("a", [ln(0.1), ln(0.2), ln(0.3)], [ln(0.3), ln(0.1), ln(0.2)])])
        c.eq("prob_pearson = -0.5", m["prob_pearson"]["value"], -0.5)
        for key in ("count", "mean", "min", "max", "p50", "p99", "p99.9"):
            c.eq(f"per-run summary {key}", m["prob_pearson"][key],
                 1 if key == "count" else -0.5)
        m = _metrics_of(tmp, "ppl", [
            _seq("a", [-1.0, -2.0], [-1.5, -2.5]),
            _seq("b", [-1.0], [-0.8]),
            _seq("c", [None], [-0.8])])
        c.eq("log_ppl_diff", m["log_ppl_diff"]["value"], (-0.5 + 0.2) / 2)
        c.eq("log_ppl_diff missing", m["log_ppl_diff"]["missing_count"], 1)

        # 10. SPEC 3 type-7 quantiles, by hand, via length = [1, 2, 3, 4, 10].
        m = _metrics_of(tmp, "quantiles", [_seq(str(i), [-1.0] * n, [-1.0] * n)
                                           for i, n in enumerate([4, 1, 10, 3, 2])],
                        header=False)
        c.eq("length mean", m["length"]["mean"], 4.0)
        c.eq("length p50", m["length"]["p50"], 3.0)
        c.eq("length p99", m["length"]["p99"], 4.0 + 0.96 * 6.0)
        c.eq("length p99.9", m["length"]["p99.9"], 4.0 + 0.996 * 6.0)
        xs = np.random.default_rng(5).standard_normal(1001)
        srt = np.sort(xs)
        for q in (0.5, 0.99, 0.999):
            h = (len(srt) - 1) * q
            lo = math.floor(h)
            c.eq(f"numpy percentile is SPEC type 7 at {q}", float(np.percentile(xs, 100 * q)),
                 float(srt[lo] + (h - lo) * (srt[lo + 1] - srt[lo])))

        # 11. argmax ties: first index.
        m = _metrics_of(tmp, "argmax", [_seq(
            "a", [-1.0, -1.0], [-1.0, -1.0],
            logits_train=[[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            logits_inf=[[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])])
        c.eq("argmax ties: first index", m["top1_agree"]["mean"], 0.5)

        # 12. Generated runs: bookkeeping, bounds below exact values, gz = plain.
        paths = mk.make(os.path.join(tmp, "gen"), 11, n_seq=30, V=64)
        docs = [ref.metrics(p_) for p_ in paths]
        c.eq("jsonl.gz gives the same metrics as jsonl", docs[1]["metrics"],
             docs[0]["metrics"])
        for p_, d in zip(paths, docs):
            M, N = d["run"]["tokens"], d["run"]["sequences"]
            for n in ref.ALL_METRICS:
                if n in ref.RUN_METRICS:
                    continue
                s = d["metrics"][n]
                c.eq(f"{os.path.basename(p_)} {n}: count + missing + nonfinite",
                     s["count"] + s["missing_count"] + s["nonfinite_count"],
                     N if n in ref.SEQ_METRICS else M)
            # (float32 files round top-k log-probs and logits separately: ~1e-7 slack)
            slack = 1e-6 if p_.endswith(".safetensors") else 1e-12
            run = ref.read_run(p_)
            low = ref.topk_metrics(run)
            exact, has = ref.logit_metrics(run)
            for lname, ename in (("tv_lower", "tv"), ("kl_lower", "kl_train_inf")):
                both = (low[lname][1] == ref.OK) & (exact[ename][1] == ref.OK)
                gap = low[lname][0][both] - exact[ename][0][both]
                c.true(f"{os.path.basename(p_)} {lname} <= {ename} at {both.sum()} "
                       f"positions (max excess {gap.max() if gap.size else 0:.3g})",
                       both.sum() > 0 and np.all(gap <= slack))

        # 13. One run, written as JSONL (float32 values, repr of the float64 that holds
        #     them) and as safetensors (F32/F64 tensors): the same metrics.
        check_same_run_both_formats(c, os.path.join(tmp, "both"))

    if verbose or c.failed:
        print(f"self-test: {c.passed} checks passed, {c.failed} failed")
    return c.failed == 0


def check_same_run_both_formats(c, out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    lengths = [3, 1, 5, 4]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    M, V, K = int(offsets[-1]), 16, 3
    f32 = lambda a: np.asarray(a, dtype=np.float32)
    lpt = f32(-rng.random(M) * 3)
    lpi = f32(lpt + rng.normal(0, 1e-3, M))
    z = f32(rng.normal(0, 2, (M, V)))
    zp = f32(z + rng.normal(0, 0.05, (M, V)))
    lsm = lambda x: mk.log_softmax(x.astype(np.float64))
    ids_t = np.argsort(-z, axis=1)[:, :K].astype(np.int32)
    ids_i = np.argsort(-zp, axis=1)[:, :K].astype(np.int32)
    lk_t = f32(np.take_along_axis(lsm(z), ids_t, 1))
    lk_i = f32(np.take_along_axis(lsm(zp), ids_i, 1))
    rows = np.array([0, 1, 2, 8], dtype=np.int64)       # sequence 0 whole, one more
    rw_t, rw_i = f32(rng.random(4)), f32(rng.random(4))

    mk.write_safetensors(os.path.join(out, "r.safetensors"), [
        ("offsets", "I64", offsets), ("logits_rows", "I64", rows),
        ("logp_train", "F64", lpt.astype(np.float64)), ("logp_inf", "F32", lpi),
        ("tokens", "I32", ids_t[:, 0]),
        ("topk_train_ids", "I32", ids_t), ("topk_train_logp", "F32", lk_t),
        ("topk_inf_ids", "I32", ids_i), ("topk_inf_logp", "F32", lk_i),
        ("logits_train", "F32", z[rows]), ("logits_inf", "F32", zp[rows]),
        ("reward_train", "F32", rw_t), ("reward_inf", "F32", rw_i)],
        {"kcx": "1", "ids": json.dumps([f"s{i}" for i in range(4)])})

    # JSONL can only give logits per whole sequence: sequence 0 has them, and the
    # safetensors row 8 lies in sequence 2, so only the safetensors run has it.
    fl = lambda a: [float(x) for x in a]
    seqs = []
    for s in range(4):
        a, b = offsets[s], offsets[s + 1]
        obj = _seq(f"s{s}", fl(lpt[a:b]), fl(lpi[a:b]),
                   topk_train={"ids": ids_t[a:b].tolist(),
                               "logp": [fl(r) for r in lk_t[a:b]]},
                   topk_inf={"ids": ids_i[a:b].tolist(),
                             "logp": [fl(r) for r in lk_i[a:b]]},
                   reward_train=float(rw_t[s]), reward_inf=float(rw_i[s]))
        obj["tokens"] = [int(x) for x in ids_t[a:b, 0]]
        if s == 0:
            obj["logits_train"] = [fl(r) for r in z[a:b]]
            obj["logits_inf"] = [fl(r) for r in zp[a:b]]
        seqs.append(obj)
    mj = _metrics_of(out, "r", seqs)
    ms = ref.metrics(os.path.join(out, "r.safetensors"))["metrics"]
    logit_dependent = set(ref.LOGIT_METRICS) | {"tv_lower", "kl_lower", "top1_agree"}
    for n in ref.ALL_METRICS:
        if n not in logit_dependent:
            c.eq(f"jsonl = safetensors: {n}", mj[n], ms[n])
    c.eq("jsonl logits rows", mj["tv"]["count"], 3)
    c.eq("safetensors logits rows", ms["tv"]["count"], 4)


# --------------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kcx", help="path of the kcx executable")
    ap.add_argument("--work", help="directory for the generated runs")
    ap.add_argument("--seeds", default="1,2", help="comma-separated seeds (default 1,2)")
    ap.add_argument("--self-test", action="store_true",
                    help="only check the reference on hand-worked cases")
    a = ap.parse_args(argv)
    if a.self_test:
        return 0 if self_test() else 1
    if not a.kcx or not a.work:
        ap.error("--kcx and --work are required (or --self-test)")
    if not self_test(verbose=False):
        print("the numpy reference fails its self-test; not comparing")
        return 1
    passed = failed = 0
    for seed in (int(s) for s in a.seeds.split(",")):
        for path in mk.make(os.path.join(a.work, f"seed{seed}"), seed):
            p_, f_ = check_file(a.kcx, path)
            passed += p_
            failed += f_
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
