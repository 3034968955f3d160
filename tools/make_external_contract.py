#!/usr/bin/python3
"""Write contracts for a run the way another program that follows SPEC section 4 would.

    make_external_contract.py --run RUN --out DIR [--seed S]

writes into DIR, for each contract NAME below, NAME.yaml (PyYAML's safe_dump, not
KCX's writer) and NAME.json (the same keys as JSON), and prints their paths:

  mixed         every clause family and shape: numerical (every aggregate form, where
                with a value and with a list, positions, per_slice, per-token, per-
                sequence and per-run metrics, top-k and full-logit metrics, clip_excess
                with a contract ppo_clip), statistical (exceedance per token and per
                sequence, Bonferroni and none, min_samples that leaves one slice
                inconclusive, bootstrap mean tests far from their bounds), runtime
                (field aggregates, require_equal, require on kernels and model),
                observability (coverage of per-token and per-sequence fields, with
                where; non-finite fractions with where/positions/per_slice), and an
                escalation policy with clause, slice, family, severity, status and stage
                rules and a default. A mix of pass, fail and inconclusive.
  all_pass      only clauses that pass: verdict pass, exit 0.
  inconclusive  passing and inconclusive clauses, no failures: exit 3; rules by status
                and stage, no default (unmatched results get `warn`).
  no_policy     failures and no escalation list at all.
  stages        custom `stages` and rules that differ by stage (check --stage S).
  errors        clauses that cannot apply to this run (a runtime field no sequence
                has, a header path or kernel key that does not exist).

Thresholds are placed relative to the run's own metric values (read with
tools/numpy_reference.py), far from the observed values, so that a clause's outcome
does not hinge on rounding: "pass" thresholds sit well beyond the value, "fail" ones
well inside, per-slice thresholds halfway between two slices' values. The seed varies
the choices (ppo_clip, confidences, which slice, multipliers).

As a module: make(run_path, out_dir, seed) -> {name: (yaml_path, json_path)}.
"""

import argparse
import json
import os
import sys

import numpy as np
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract_reference as cref      # noqa: E402  (run reading only: slices, runtime)

OK = cref.OK


# --------------------------------------------------------------------------------------
# Looking at the run.

class Look:
    """Quick facts about a run for choosing thresholds."""

    def __init__(self, path, ppo_clip):
        self.d = cref.RunData(path, ppo_clip)
        d = self.d
        keys = {}
        for sl in d.slices:
            for k, v in sl.items():
                keys.setdefault(k, set()).add(v)
        # slice keys with at least two values, most values first
        self.keys = sorted((k for k in keys if len(keys[k]) >= 2),
                           key=lambda k: (-len(keys[k]), k))
        self.values = {k: sorted(v) for k, v in keys.items()}
        self.rt_numeric = sorted({k for r in d.runtime if r for k, v in r.items()
                                  if isinstance(v, (int, float)) and not isinstance(v, bool)})

    def values_of(self, metric, where=None, positions=None):
        if self.d.level(metric) == "run":
            v = self.d.per_run[metric][0]
            return np.array([] if v is None else [v])
        m = self.d.seq_mask(where)
        v, st, _ = self.d.scope(metric, m, positions)
        return v[st == OK]

    def per_slice(self, metric, key, fn, where=None):
        out = {}
        for val in self.values[key]:
            m = self.d.seq_mask(where, (key, val))
            v, st, _ = self.d.scope(metric, m, None)
            v = v[st == OK]
            if len(v):
                out[val] = fn(v)
        return out

    def count_tokens(self, metric, key, where=None):
        return self.per_slice(metric, key, len, where)

    def runtime_values(self, field):
        return np.array([r[field] for r in self.d.runtime if r and isinstance(
            r.get(field), (int, float)) and not isinstance(r.get(field), bool)], dtype=float)


def between(sorted_vals):
    """A threshold halfway between the two middle distinct values (some pass, some fail)."""
    u = sorted(set(float(x) for x in sorted_vals))
    if len(u) < 2:
        return None
    i = len(u) // 2
    return (u[i - 1] + u[i]) / 2


def above(x, factor=2.0):
    """A bound comfortably above x."""
    return float(x + abs(x) * (factor - 1.0) + 1e-3)


def below(x, factor=2.0):
    return float(x - abs(x) * (factor - 1.0) - 1e-3)


# --------------------------------------------------------------------------------------
# The contracts.

def header_facts(look):
    h = look.d.header or {}
    kern = h.get("kernels") or {}
    tr, inf = kern.get("train") or {}, kern.get("inf") or {}
    equal = sorted(k for k in tr if k in inf and tr[k] == inf[k]
                   and not isinstance(tr[k], (dict, list)))
    differ = sorted(k for k in tr if k in inf and tr[k] != inf[k]
                    and not isinstance(tr[k], (dict, list)))
    model = {k: v for k, v in (h.get("model") or {}).items()
             if isinstance(v, (str, int, float, bool))}
    return tr, inf, equal, differ, model


def mixed(look, rng, clip):
    d = look.d
    k1 = look.keys[0]
    k2 = look.keys[1] if len(look.keys) > 1 else look.keys[0]
    v1 = look.values[k1]
    pick = v1[int(rng.integers(len(v1)))]
    two = [v1[0], v1[-1]]
    num = []

    alr = look.values_of("abs_log_ratio")
    p999 = np.percentile(alr, 99.9)
    num.append({"id": "N-p999-fail", "metric": "abs_log_ratio", "aggregate": "p99.9",
                "max": float(p999 * 0.5), "description": "a tail that is too heavy"})
    num.append({"id": "N-p50-pass", "metric": "abs_log_ratio", "aggregate": "p50.5",
                "max": above(np.percentile(alr, 50.5)), "severity": "warn"})
    means = look.per_slice("abs_log_ratio", k1, np.mean)
    num.append({"id": "N-mean-slices", "metric": "abs_log_ratio", "aggregate": "mean",
                "max": between(means.values()), "per_slice": k1})
    lr = look.values_of("log_ratio", {k1: pick}, [0, 50])
    frac = float(np.mean((lr < -0.01) | (lr > 0.01))) if len(lr) else 0.5
    num.append({"id": "N-outside-where", "metric": "log_ratio",
                "aggregate": {"fraction_outside": [-0.01, 0.01]},
                "max": min(1.0, above(frac, 1.5)) if rng.random() < 0.5 else below(frac, 1.5),
                "where": {k1: pick}, "positions": [0, 50]})
    num.append({"id": "N-k3-list", "metric": "k3", "aggregate": "mean",
                "max": above(np.mean(look.values_of("k3", {k1: two})), 3.0),
                "where": {k1: two}, "severity": "info"})
    sq = look.per_slice("seq_abs_log_ratio", k2, lambda v: np.percentile(v, 90))
    num.append({"id": "N-seq-p90", "metric": "seq_abs_log_ratio", "aggregate": "p90",
                "min": 0, "max": between(sq.values()), "per_slice": k2})
    rd = look.values_of("reward_diff")
    if len(rd):
        fa = float(np.mean(rd > 0.0))
        num.append({"id": "N-reward-above", "metric": "reward_diff",
                    "aggregate": "fraction_above: 0.0", "max": above(fa, 1.5)})
    num.append({"id": "N-ess", "metric": "ess", "aggregate": "min",
                "min": float(min(0.999, look.values_of("ess")[0] + 0.05))})
    num.append({"id": "N-pearson", "metric": "prob_pearson", "aggregate": "max",
                "min": 0.3})
    num.append({"id": "N-ppl", "metric": "log_ppl_diff", "aggregate": "mean",
                "min": -1.0, "max": 1.0})
    for metric, agg in (("tv_lower", "p99"), ("kl_lower", "max"), ("top1_agree", "mean"),
                        ("tv", "max"), ("logit_drift", "p90"), ("js", "sum"),
                        ("entropy_diff", "min"), ("kl_inf_train", "mean")):
        v = look.values_of(metric)
        if not len(v):
            continue
        x = cref.aggregate(*cref.parse_aggregate(agg)[:2], v)
        c = {"id": f"N-{metric}", "metric": metric, "aggregate": agg}
        if metric == "top1_agree":
            c["min"] = below(x, 1.1) if rng.random() < 0.5 else min(1.0, above(x, 1.05))
        elif metric == "entropy_diff":
            c["min"] = below(x)
        else:
            c["max"] = above(x) if rng.random() < 0.6 else below(x, 1.5)
        num.append(c)
    ce = look.values_of("clip_excess")
    num.append({"id": "N-clip", "metric": "clip_excess", "aggregate": "mean",
                "max": float(np.mean(ce) * (0.5 if rng.random() < 0.5 else 2.0) + 1e-4),
                "per_slice": k1, "where": {k2: look.values[k2]}})
    num.append({"id": "N-count", "metric": "length", "aggregate": "count",
                "min": float(d.N + 1000)})
    num.append({"id": "N-length-min", "metric": "length", "aggregate": "min", "min": 1})
    num.append({"id": "N-k1-sum", "metric": "k1", "aggregate": "sum",
                "min": -1e9, "max": 1e9})
    num.append({"id": "N-p0-p100", "metric": "k2", "aggregate": "p100",
                "max": above(np.max(look.values_of("k2")))})
    num.append({"id": "N-empty", "metric": "tv", "aggregate": "max", "max": 1.0,
                "positions": [100000, 100010], "severity": "warn"})
    num.append({"id": "N-chi2-p0", "metric": "chi2", "aggregate": "p0", "min": -1.0})

    stat = []
    toks = look.count_tokens("abs_log_ratio", k1)
    ns = sorted(toks.values())
    ms = int((ns[0] + ns[1]) // 2) if len(ns) > 1 else ns[0] + 1
    level = float(np.percentile(alr, 90))
    share = float(np.mean(alr > level))
    stat.append({"id": "S-tok-bonf", "metric": "abs_log_ratio", "test": "exceedance",
                 "level": level, "max": float(share * 1.3), "per_slice": k1,
                 "min_samples": ms, "correction": "bonferroni",
                 "confidence": float(rng.choice([0.9, 0.95, 0.99]))})
    stat.append({"id": "S-tok-none", "metric": "abs_log_ratio", "level": 0.05,
                 "max": 0.5, "per_slice": k2, "correction": "none",
                 "where": {k1: v1[:2]}, "positions": [1, 300]})
    stat.append({"id": "S-seq-unit", "metric": "abs_log_ratio", "test": "exceedance",
                 "level": level, "max": 0.3, "unit": "sequence", "per_slice": k1,
                 "correction": "bonferroni", "severity": "critical"})
    seqs_per_slice = look.per_slice("abs_log_ratio", k1, lambda v: 1)
    nseq = {val: int(np.sum(look.d.seq_mask(None, (k1, val)))) for val in seqs_per_slice}
    stat.append({"id": "S-seq-minsamples", "metric": "abs_log_ratio", "level": level,
                 "max": 0.9, "unit": "sequence", "per_slice": k1,
                 "min_samples": int(max(nseq.values()) + 1),
                 "description": "fewer sequences than min_samples, more tokens"})
    sm = look.values_of("seq_max_abs_log_ratio")
    stat.append({"id": "S-seq-metric", "metric": "seq_max_abs_log_ratio",
                 "level": float(np.median(sm)), "max": 0.8, "unit": "sequence",
                 "confidence": 0.9})
    stat.append({"id": "S-topk", "metric": "tv_lower", "level": 0.01, "max": 0.2,
                 "min_samples": 10})
    if len(rd):
        stat.append({"id": "S-mean-reward", "metric": "reward_diff", "test": "mean",
                     "min": -1.0, "max": 1.0, "seed": int(rng.integers(1 << 62)),
                     "resamples": 1000})
    lrm = float(np.mean(look.values_of("log_ratio")))
    stat.append({"id": "S-mean-fail", "metric": "log_ratio", "test": "mean",
                 "min": lrm + 1.0, "max": lrm + 2.0, "seed": 7})
    stat.append({"id": "S-mean-slices", "metric": "abs_log_ratio", "test": "mean",
                 "max": 5.0, "per_slice": k1, "confidence": 0.99,
                 "resamples": 500, "seed": 0})
    stat.append({"id": "S-mean-minvalues", "metric": "k1", "test": "mean", "min": -100,
                 "max": 100, "min_samples": d.N + 1, "resamples": 300,
                 "description": "more values than min_samples, fewer sequences"})
    stat.append({"id": "S-mean-inconclusive", "metric": "k2", "test": "mean",
                 "max": 1.0, "min_samples": d.M + 1})

    rt = []
    numeric = look.rt_numeric
    if numeric:
        f0 = "batch_size" if "batch_size" in numeric else numeric[0]
        rt.append({"id": "R-max-pass", "field": f0, "aggregate": "max",
                   "max": above(np.max(look.runtime_values(f0)))})
        f1 = "latency_ms" if "latency_ms" in numeric else numeric[-1]
        lv = look.runtime_values(f1)
        rt.append({"id": "R-p90-fail", "field": f1, "aggregate": "p90",
                   "max": float(np.median(lv)), "severity": "warn"})
        f2 = numeric[int(rng.integers(len(numeric)))]
        rt.append({"id": "R-mean", "field": f2, "aggregate": "mean", "min": 0})
        rt.append({"id": "R-frac", "field": f0, "aggregate": {"fraction_above": 8},
                   "max": 0.5})
    tr, inf, equal, differ, model = header_facts(look)
    if equal:
        rt.append({"id": "R-eq-pass", "require_equal": equal[0]})
    if differ:
        rt.append({"id": "R-eq-fail", "require_equal": "name" if "name" in differ
                   else differ[0], "severity": "critical"})
    if "batch_invariant" in inf:
        rt.append({"id": "R-req-inf", "require": {"inf.batch_invariant": True}})
    if "batch_invariant" in tr:
        rt.append({"id": "R-req-train", "require": {"train.batch_invariant":
                                                    tr["batch_invariant"]}})
    if model:
        req = {f"model.{k}": v for k, v in list(model.items())[:2]}
        rt.append({"id": "R-req-model", "require": req})

    obs = [
        {"id": "O-cov-pass", "require_fields": ["id", "tokens", "logp_train", "logp_inf"],
         "min_coverage": 0.9},
        {"id": "O-cov-fail", "require_fields": [f"slices.{k1}", "reward_inf", "runtime",
                                                "topk_train"], "min_coverage": 0.995},
        {"id": "O-cov-where", "require_fields": ["topk_train", "topk_inf", "reward_train"],
         "min_coverage": 0.5, "where": {k1: pick}},
        {"id": "O-cov-logits", "require_fields": ["logits", "logits_train", "logits_inf"],
         "min_coverage": 0.0},
        {"id": "O-cov-default", "require_fields": ["runtime." + (numeric[0] if numeric
                                                                 else "batch_size")]},
        {"id": "O-nf-slices", "metric": "log_ratio", "max_nonfinite_fraction": 0.0,
         "per_slice": k1},
        {"id": "O-nf-pos", "metric": "tv_lower", "max_nonfinite_fraction": 0.01,
         "where": {k2: look.values[k2][0]}, "positions": [0, 200]},
        {"id": "O-nf-seq", "metric": "seq_log_ratio", "max_nonfinite_fraction": 0.05},
        {"id": "O-nf-kl", "metric": "kl_lower"},
    ]

    esc = [
        {"when": {"clause": ["R-eq-fail", "R-req-inf"], "stage": ["canary", "full"]},
         "action": "rollback"},
        {"when": {"clause": "N-mean-slices", "slice": {k1: pick}},
         "action": "route_to_reference"},
        {"when": {"slice": {k1: pick}, "family": "numerical"}, "action": "shadow_only"},
        {"when": {"status": "inconclusive", "stage": ["offline_ci", "shadow"]},
         "action": "hold"},
        {"when": {"family": "observability", "severity": "error"}, "action": "hold"},
        {"when": {"severity": ["warn", "info"]}, "action": "warn"},
        {"when": {"severity": "critical", "stage": "full"}, "action": "rollback"},
        {"when": {"severity": ["error", "critical"], "status": "fail"},
         "action": "block_promotion"},
        {"default": "shadow_only"},
    ]
    rng.shuffle(esc[1:3])
    return {"kcx_contract": 1, "name": "external-mixed",
            "version": "ext.1", "description": "written by make_external_contract.py",
            "owner": "outside",
            "bounds": {"ppo_clip": clip, "reward_range": [0, 1]},
            "numerical": num, "statistical": stat, "runtime": rt,
            "observability": obs, "escalation": esc}


def all_pass(look, rng, clip):
    k1 = look.keys[0]
    alr = look.values_of("abs_log_ratio")
    c = {"kcx_contract": 1, "name": "external-all-pass", "version": "1",
         "bounds": {"ppo_clip": clip},
         "numerical": [
             {"id": "P1", "metric": "abs_log_ratio", "aggregate": "max",
              "max": above(np.max(alr))},
             {"id": "P2", "metric": "length", "aggregate": "mean", "min": 1,
              "per_slice": k1},
             {"id": "P3", "metric": "prob_diff", "aggregate": {"fraction_above": 2.0},
              "max": 0.0}],
         "statistical": [
             {"id": "P4", "metric": "abs_log_ratio", "level": float(np.max(alr)) + 1.0,
              "max": 0.01, "per_slice": k1, "correction": "bonferroni"}],
         "runtime": [], "observability": [
             {"id": "P5", "require_fields": ["tokens", "id"]}],
         "escalation": [{"default": "rollback"}],
         "stages": ["offline_ci", "full"]}
    _, _, equal, _, _ = header_facts(look)
    if equal:
        c["runtime"].append({"id": "P6", "require_equal": equal[0]})
    return c


def inconclusive(look, rng, clip):
    k1 = look.keys[0]
    return {"kcx_contract": 1, "name": "external-inconclusive",
            "numerical": [
                {"id": "I1", "metric": "length", "aggregate": "max", "min": 1},
                {"id": "I2", "metric": "tv", "aggregate": "p99", "max": 1.0,
                 "positions": [5000, 6000]}],
            "statistical": [
                {"id": "I3", "metric": "abs_log_ratio", "level": 100.0, "max": 0.5,
                 "per_slice": k1, "min_samples": int(look.d.M + 1)},
                {"id": "I4", "metric": "k1", "test": "mean", "min": -100, "max": 100,
                 "min_samples": look.d.M + 1, "severity": "info"}],
            "observability": [
                {"id": "I5", "require_fields": ["logp_train"], "min_coverage": 0.5,
                 "where": {k1: "no-such-slice-value"}},
                {"id": "I6", "metric": "log_ratio", "max_nonfinite_fraction": 0.1,
                 "positions": [100000, 100001]}],
            "escalation": [
                {"when": {"status": "inconclusive", "stage": "canary"}, "action": "hold"},
                {"when": {"clause": "I4", "stage": "full"}, "action": "rollback"}]}


def no_policy(look, rng, clip):
    alr = look.values_of("abs_log_ratio")
    return {"kcx_contract": 1, "name": "external-no-policy",
            "numerical": [
                {"id": "F1", "metric": "abs_log_ratio", "aggregate": "max",
                 "max": float(np.max(alr) / 2), "severity": "critical"},
                {"id": "F2", "metric": "abs_log_ratio", "aggregate": "min", "min": 0}],
            "observability": [
                {"id": "F3", "require_fields": ["reward_train", "reward_inf"],
                 "min_coverage": 1.0}]}


def stages(look, rng, clip):
    k1 = look.keys[0]
    alr = look.values_of("abs_log_ratio")
    means = look.per_slice("abs_log_ratio", k1, np.mean)
    return {"kcx_contract": 1, "name": "external-stages",
            "stages": ["ci", "staging", "prod"],
            "numerical": [
                {"id": "G1", "metric": "abs_log_ratio", "aggregate": "mean",
                 "max": between(means.values()), "per_slice": k1, "severity": "warn"},
                {"id": "G2", "metric": "abs_log_ratio", "aggregate": "p99",
                 "max": float(np.percentile(alr, 99) / 3)},
                {"id": "G3", "metric": "tv", "aggregate": "max", "max": 1,
                 "positions": [100000, 100001]}],
            "escalation": [
                {"when": {"stage": "ci"}, "action": "warn"},
                {"when": {"stage": "staging", "severity": "warn"}, "action": "hold"},
                {"when": {"stage": "prod", "status": "fail"}, "action": "rollback"},
                {"when": {"status": ["inconclusive", "error"]},
                 "action": "route_to_reference"}]}


def errors(look, rng, clip):
    return {"kcx_contract": 1, "name": "external-errors",
            "numerical": [{"id": "E0", "metric": "length", "aggregate": "min", "min": 1}],
            "runtime": [
                {"id": "E1", "field": "no_such_runtime_field", "aggregate": "max",
                 "max": 1},
                {"id": "E2", "require_equal": "no_such_kernel_key"},
                {"id": "E3", "require": {"model.no_such_key": 1}},
                {"id": "E4", "require": {"inf.no_such_key": "x"}}],
            "escalation": [{"when": {"status": "error"}, "action": "hold"}]}


CONTRACTS = {"mixed": mixed, "all_pass": all_pass, "inconclusive": inconclusive,
             "no_policy": no_policy, "stages": stages, "errors": errors}


def _plain(x):
    """numpy scalars -> Python scalars, recursively (for yaml/json)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def make(run_path, out, seed=0):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng([seed, 4])
    clip = float(rng.choice([0.1, 0.2, 0.3]))
    look = Look(run_path, clip)
    written = {}
    for name, fn in CONTRACTS.items():
        doc = _plain(fn(look, rng, clip))
        y = os.path.join(out, name + ".yaml")
        j = os.path.join(out, name + ".json")
        with open(y, "w", encoding="utf-8") as f:
            f.write(f"# {name}: written by tools/make_external_contract.py --seed {seed}\n")
            f.write(f"# for {os.path.basename(run_path)}\n")
            yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=None,
                           allow_unicode=True, width=100)
        with open(j, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, allow_nan=False)
            f.write("\n")
        written[name] = (y, j)
    return written


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    for y, j in make(a.run, a.out, a.seed).values():
        print(y)
        print(j)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
