#!/usr/bin/python3
"""Independent Python/numpy reference for KCX contract evaluation (SPEC section 4).

This file knows only /work/shared/SPEC.md (sections 1-4 and 6.1) and the project's
documented decisions in docs/contracts.md and docs/metrics.md. It does not share code
or semantics with the C++ evaluator: it is the outside observer that
`tools/check_contract_against_reference.py` compares `kcx check --json` against. The
metric values themselves (SPEC 2) come from tools/numpy_reference.py, which is an
independent implementation of SPEC 1-3 checked against `kcx metrics` on its own.

Usage:
    contract_reference.py --contract C.yaml --run RUN [--stage S]
prints a JSON document shaped like `kcx check --json` (SPEC 6.1): verdict, stage,
action, stages (the action at every stage) and one entry per result with clause,
family, metric, aggregate, status, observed, n, slice, action, and `upper`
(exceedance) or `ci` (mean test). Exit code as `kcx check`: 0 pass, 1 fail,
3 inconclusive, 2 on unreadable input.

    from contract_reference import evaluate
    doc = evaluate(contract_dict, "run.jsonl", stage=None)

The contract is read with PyYAML (YAML) or json (a text starting with `{`); it is
assumed to be valid (kcx's parser is what checks validity; this file checks little).

How SPEC 4 is read here, and the decisions taken where the SPEC is silent (each
following docs/contracts.md where that page decides it; "[reference]" marks choices this
file had to make itself and that the comparison script treats with care):

Scope
  * `where`: a sequence is in scope when, for every given key, it has that slice key and
    its value (as text) equals the given value or one of the given list. Numbers and
    booleans are compared as their text (docs/contracts.md).
  * `positions: [a, b)`: token positions a <= t < b within each sequence (per-token
    metrics only).
  * `per_slice: K`: one result per value of K among the in-scope sequences (those that
    match `where`); sequences without a label for K belong to no slice. [reference] A
    slice whose sequences have no values in scope still yields a result (inconclusive).
  * Values in scope are the metric values that exist (SPEC 2.5: missing and non-finite
    positions never enter an aggregate). Per-run metrics (ess, prob_pearson,
    log_ppl_diff) are one value for the whole run; `where`/`per_slice` do not apply
    to them (docs/contracts.md).
  * `clip_excess` uses c = bounds.ppo_clip of the contract (default 0.2).

Numerical
  * observed = aggregate (SPEC 3) over the values in scope; n = their count. Zero values
    -> inconclusive (SPEC 3), `count` included (docs/metrics.md). Otherwise pass when
    min <= observed <= max (bounds inclusive, like `u <= max` of SPEC 4.2).
  * pNN is the SPEC 3 type-7 formula, written out here (not np.percentile).
  * pNN, max and min also get `ci`, the 95 % order-statistic interval of docs/metrics.md
    ("The interval of a quantile": equal-tailed ranks from Binomial(n, q), q = 1 for max and
    0 for min, null for a side no rank bounds), and `beyond` = values > max plus values
    < min (docs/contracts.md). They never change the status.

Statistical, exceedance (SPEC 4.2)
  * unit token: n = values in scope, k = values > level (strictly). unit sequence:
    n = sequences with at least one value in scope, k = those with any value > level.
  * observed = p_hat = k/n; upper = one-sided Wilson upper bound with z = Phi^-1(c')
    (statistics.NormalDist); pass when upper <= max.
  * upper is capped at 1 (docs/contracts.md "Exceedance test").
  * min_samples compares with n in the clause's unit (docs/contracts.md: `unit` is
    "what one sample is"; so with unit: sequence, sequences are counted). A slice with n < min_samples, or
    with n = 0, is inconclusive and is not "tested". [reference] With min_samples 0 a
    slice with no values is still not tested (nothing to test).
  * bonferroni: c' = 1 - (1 - c)/m, m = number of tested slices of the clause (1 without
    per_slice); `correction: none` keeps c' = c.

Statistical, mean (SPEC 4.2; docs/contracts.md "Mean test", "The PRNG")
  * observed = the mean of the values in scope. Percentile bootstrap with `resamples`
    replicates that resample whole sequences (also for a per-sequence metric, whose
    sequences carry one value each): sequence u contributes (sum_u, count_u) of its
    values in scope; a replicate draws as many sequences as the group has, with
    replacement, and takes sum / count; the interval is the type-7 quantiles
    (1-c)/2 and (1+c)/2 of the replicate means. Pass when min <= lo and hi <= max.
  * The SPEC only asks for "a PRNG seeded by seed"; docs/contracts.md documents KCX's
    (xoshiro256** seeded by four splitmix64 outputs from `seed`, a draw below n is the
    high half of next()*n, each per_slice group restarts from `seed`, sequences in run
    order), and this file implements that description, so the interval can be compared
    exactly. `se` (the replicates' standard deviation) is reported as well, so a
    comparison can also judge only the cases far from the bounds, as the SPEC allows.
  * n = the number of values in scope and min_samples is compared with it (SPEC:
    "fewer values in a slice -> inconclusive"), also for a per-token metric whose
    bootstrap unit is the sequence.

Runtime
  * field: values = the per-sequence runtime.NAME values that are numbers (JSON
    booleans are not numbers); observed = aggregate, n = count. [reference] No sequence
    has the field as a number -> `error` (the clause cannot apply: SPEC 4.1 "an unknown
    field").
  * require_equal KEY: pass when header.kernels.train.KEY == header.kernels.inf.KEY
    (same JSON type and value), fail when both exist and differ. [reference] KEY absent
    on either side -> `error` (nothing to compare).
  * require {PATH: VALUE}: `train.`/`inf.` paths are read under header.kernels, other
    paths from the header root (docs/contracts.md). Pass when every PATH has VALUE with
    the same type (bool, number, string, null). [reference] A PATH that does not exist
    in the header -> `error`; a PATH whose value differs -> `fail`.

Observability
  * coverage: per-token fields (tokens, logp_train, logp_inf, topk_train, topk_inf,
    logits, logits_train, logits_inf, text) are counted over the tokens of the in-scope
    sequences, per-sequence fields (id, reward_*, runtime, runtime.NAME, slices.KEY) over
    the sequences (docs/contracts.md). A value is *present* when it was logged: JSON
    null or an absent key is not; "NaN"/"Infinity" is (SPEC 1.1: null counts against
    coverage, non-finite is counted elsewhere). In safetensors every stored value is
    present. [reference] A top-k row or logits row with a null entry is not present;
    `logits` needs both kernels' rows.
    observed = the lowest coverage among the fields, metric = that field, n = its
    denominator (the SPEC does not say what n is for coverage; the comparison does not
    compare it); pass when every coverage >= min_coverage. No in-scope sequences ->
    inconclusive (SPEC 4.1: no values).
  * non-finite: n = all in-scope positions (values + missing + non-finite; sequences for
    a per-sequence metric), observed = non-finite / n; pass when <= the limit.
    n = 0 -> inconclusive.

Escalation, verdict, actions (SPEC 4.1, docs/contracts.md "How a decision is made")
  * A pass result gets `pass`. For every other result the rules are tried in order for
    each stage; a rule with `stage` applies only to those stages; the first rule whose
    `when` holds (every given key matches; a list means any of) wins; `- default: A`
    matches anything. No matching rule -> `warn` (docs/contracts.md).
  * `when.slice` matches the result's slice labels: its per_slice value plus the
    clause's `where` keys that name a single value.
  * stage action = the strongest action among all results at that stage (`pass` when
    there are none). `stages` defaults to [offline_ci, shadow, canary, full]; the
    evaluated stage is the first unless one is given.
  * verdict = fail if any result failed, else inconclusive if any was inconclusive,
    else pass (SPEC 4.1). An `error` result counts like `inconclusive` for the verdict
    (docs/contracts.md, "Inconclusive, not pass").
"""

import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_reference as nref          # noqa: E402
from contract_run import TOKEN_FIELDS, RunData, _text  # noqa: E402,F401
from contract_stats import (MASK64, ContractError, Xoshiro256ss, _bootstrap, _splitmix64,  # noqa: E402,F401
                            aggregate, quantile_interval_ranks, quantile_type7, wilson_upper)

OK, MISSING, NONFINITE = nref.OK, nref.MISSING, nref.NONFINITE

ACTIONS = ["pass", "warn", "hold", "shadow_only", "route_to_reference",
           "block_promotion", "rollback"]
DEFAULT_STAGES = ["offline_ci", "shadow", "canary", "full"]
FAMILIES = ["numerical", "statistical", "runtime", "observability"]



# --------------------------------------------------------------------------------------
# Reading the contract.

def load_contract(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    if text.lstrip().startswith("{"):
        return json.loads(text)
    import yaml
    return yaml.safe_load(text)


def _num(x):
    """A number written plain or quoted (docs/contracts.md)."""
    if x is None:
        return None
    if isinstance(x, bool):
        raise ContractError(f"expected a number, got {x!r}")
    return float(x)


def parse_aggregate(a):
    """-> (kind, parameter, label). kind: max min mean sum count q fabove foutside."""
    if isinstance(a, dict):
        if len(a) != 1:
            raise ContractError(f"aggregate mapping must have one key: {a!r}")
        (k, v), = a.items()
        return _agg_kv(k.strip(), v)
    s = str(a).strip()
    if ":" in s:
        k, v = s.split(":", 1)
        v = v.strip()
        if k.strip() == "fraction_outside":
            v = json.loads(v)
        return _agg_kv(k.strip(), v)
    if s in ("max", "min", "mean", "sum", "count"):
        return (s, None, s)
    if s.startswith("p"):
        q = float(s[1:])
        if not 0.0 <= q <= 100.0:
            raise ContractError(f"bad percentile {s}")
        return ("q", q / 100.0, s)
    raise ContractError(f"unknown aggregate {a!r}")


def _agg_kv(k, v):
    if k == "fraction_above":
        return ("fabove", _num(v), f"fraction_above: {_num(v)!r}")
    if k == "fraction_outside":
        lo, hi = (_num(x) for x in v)
        return ("foutside", (lo, hi), f"fraction_outside: [{lo!r}, {hi!r}]")
    raise ContractError(f"unknown aggregate {k!r}")


# --------------------------------------------------------------------------------------
# Clauses.

def _result(clause, family, **kw):
    r = {"clause": clause["id"], "family": family,
         "severity": clause.get("severity", "error"), "slice": None,
         "observed": None, "n": 0}
    r.update(kw)
    return r


def _slices_of(data, clause, smask):
    """[(slice dict or None, sequence mask)] for a clause's per_slice key."""
    key = clause.get("per_slice")
    if key is None:
        return [(None, smask)]
    vals = sorted({data.slices[s][key] for s in np.nonzero(smask)[0]
                   if key in data.slices[s]})
    return [({key: v}, smask & data.seq_mask(None, (key, v))) for v in vals]


def _within(x, lo, hi):
    return (lo is None or x >= lo) and (hi is None or x <= hi)


def eval_numerical(data, c):
    kind, param, label = parse_aggregate(c["aggregate"])
    lo, hi = _num(c.get("min")), _num(c.get("max"))
    metric = c["metric"]
    base = dict(metric=metric, aggregate=label, min=lo, max=hi)
    if data.level(metric) == "run":
        value = data.per_run[metric][0]
        vals = np.array([value]) if value is not None and np.isfinite(value) else np.array([])
        out = [(None, vals)]
    else:
        smask = data.seq_mask(c.get("where"))
        out = []
        for sl, m in _slices_of(data, c, smask):
            v, st, _ = data.scope(metric, m, c.get("positions"))
            out.append((sl, v[st == OK]))
    results = []
    q = {"q": param, "max": 1.0, "min": 0.0}.get(kind)
    for sl, vals in out:
        obs = aggregate(kind, param, vals)
        if obs is None:
            status = "inconclusive"
        else:
            status = "pass" if _within(obs, lo, hi) else "fail"
        extra = {}
        if q is not None and obs is not None:
            srt = np.sort(vals)
            rlo, rhi, borderline = quantile_interval_ranks(len(srt), q)
            extra = dict(ci=[None if rlo is None else float(srt[rlo]),
                             None if rhi is None else float(srt[rhi])],
                         ci_borderline=borderline,
                         beyond=int(np.count_nonzero(srt > hi)) if hi is not None else 0)
            if lo is not None:
                extra["beyond"] += int(np.count_nonzero(srt < lo))
        results.append(_result(c, "numerical", slice=sl, observed=obs, n=len(vals),
                               status=status, **base, **extra))
    return results


def eval_statistical(data, c):
    metric = c["metric"]
    test = c.get("test", "exceedance")
    conf = _num(c.get("confidence", 0.95))
    min_samples = int(c.get("min_samples", 0))
    unit = c.get("unit", "token")
    lvl = data.level(metric)
    if lvl == "run":
        raise ContractError("statistical clause on a per-run metric")
    smask = data.seq_mask(c.get("where"))
    slices = _slices_of(data, c, smask)
    results = []
    if test == "exceedance":
        level, mx = _num(c["level"]), _num(c["max"])
        counts = []
        for sl, m in slices:
            v, st, owner = data.scope(metric, m, c.get("positions"))
            ok = st == OK
            v, owner = v[ok], owner[ok]
            if unit == "sequence":
                seqs = np.unique(owner)
                exceeding = np.unique(owner[v > level])
                n, k = len(seqs), len(exceeding)
            else:
                n, k = len(v), int(np.count_nonzero(v > level))
            counts.append((sl, n, k))
        tested = [n >= min_samples and n > 0 for _, n, _ in counts]
        m_tested = sum(tested)
        c_eff = conf
        if c.get("correction", "none") == "bonferroni" and m_tested > 0:
            c_eff = 1 - (1 - conf) / m_tested
        for (sl, n, k), t in zip(counts, tested):
            r = _result(c, "statistical", metric=metric, aggregate="exceedance", max=mx,
                        slice=sl, n=n, confidence=conf, confidence_used=c_eff, k=k)
            if n > 0:
                r["observed"] = k / n
            if not t:
                r["status"] = "inconclusive"
                r["upper"] = None
            else:
                u = min(1.0, wilson_upper(k, n, c_eff))
                r["upper"] = u
                r["status"] = "pass" if u <= mx else "fail"
            results.append(r)
        return results
    if test != "mean":
        raise ContractError(f"unknown test {test!r}")
    lo_b, hi_b = _num(c.get("min")), _num(c.get("max"))
    resamples = int(c.get("resamples", 2000))
    seed = int(c.get("seed", 0))
    for sl, m in slices:
        v, st, owner = data.scope(metric, m, c.get("positions"))
        ok = st == OK
        v, owner = v[ok], owner[ok]
        if lvl == "token":
            seqs, inv = np.unique(owner, return_inverse=True)
            gsum = np.array([math.fsum(v[inv == i]) for i in range(len(seqs))])
            gcnt = np.bincount(inv, minlength=len(seqs)).astype(np.float64) if len(v) \
                else np.array([])
        else:
            seqs = owner
            gsum, gcnt = v.copy(), np.ones(len(v))
        n = len(v)
        r = _result(c, "statistical", metric=metric, aggregate="mean", min=lo_b, max=hi_b,
                    slice=sl, n=n, n_sequences=len(seqs), confidence=conf)
        if len(v):
            r["observed"] = float(math.fsum(v) / len(v))
        if n == 0 or n < min_samples:
            r["status"] = "inconclusive"
            r["ci"] = None
        else:
            lo, hi, se = _bootstrap(gsum, gcnt, resamples, seed, conf)
            r["ci"] = [lo, hi]
            r["se"] = se
            r["status"] = "pass" if _within(lo, lo_b, hi_b) and _within(hi, lo_b, hi_b) \
                else "fail"
        results.append(r)
    return results


_MISSING = object()


def _header_path(header, path):
    parts = path.split(".")
    if parts[0] in ("train", "inf"):
        node = (header.get("kernels") or {})
    else:
        node = header
    for p in parts:
        if not isinstance(node, dict) or p not in node:
            return _MISSING
        node = node[p]
    return node


def _same_scalar(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return False


def eval_runtime(data, c):
    if "field" in c:
        kind, param, label = parse_aggregate(c["aggregate"])
        lo, hi = _num(c.get("min")), _num(c.get("max"))
        vals = []
        for rt in data.runtime:
            if rt is None:
                continue
            x = rt.get(c["field"])
            if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
                vals.append(float(x))
        vals = np.array(vals, dtype=np.float64)
        r = _result(c, "runtime", metric=c["field"], aggregate=label, min=lo, max=hi,
                    n=len(vals))
        if len(vals) == 0:
            r["status"] = "error"
        else:
            r["observed"] = aggregate(kind, param, vals)
            r["status"] = "pass" if _within(r["observed"], lo, hi) else "fail"
        return [r]
    if "require_equal" in c:
        key = c["require_equal"]
        kern = data.header.get("kernels") or {}
        a = (kern.get("train") or {}).get(key, _MISSING)
        b = (kern.get("inf") or {}).get(key, _MISSING)
        r = _result(c, "runtime", metric=key, aggregate="require_equal")
        if a is _MISSING or b is _MISSING:
            r["status"] = "error"
        else:
            same = _same_scalar(a, b) if not isinstance(a, (list, dict)) else a == b
            r["status"] = "pass" if same else "fail"
        return [r]
    req = c["require"]
    statuses, paths = [], []
    for path, want in req.items():
        got = _header_path(data.header, path)
        paths.append(path)
        if got is _MISSING:
            statuses.append("error")
        else:
            statuses.append("pass" if _same_scalar(got, want) else "fail")
    status = ("fail" if "fail" in statuses else "error" if "error" in statuses
              else "pass")
    return [_result(c, "runtime", metric=",".join(paths), aggregate="require",
                    status=status)]


def eval_observability(data, c):
    smask = data.seq_mask(c.get("where"))
    if "require_fields" in c:
        minc = _num(c.get("min_coverage", 1.0))
        covs = []
        for f in c["require_fields"]:
            present, total = data.field_coverage(f, smask)
            covs.append((present / total if total else None, f, total))
        r = _result(c, "observability", aggregate="coverage", min=minc)
        if any(cv is None for cv, _, _ in covs):
            r.update(status="inconclusive", metric=None)
            return [r]
        worst = min(cv for cv, _, _ in covs)
        worst_fields = [(f, t) for cv, f, t in covs if cv == worst]
        r.update(observed=worst, metric=worst_fields[0][0], n=worst_fields[0][1],
                 worst_fields=worst_fields, coverages={f: cv for cv, f, _ in covs},
                 status="pass" if all(cv >= minc for cv, _, _ in covs) else "fail")
        return [r]
    metric = c["metric"]
    limit = _num(c.get("max_nonfinite_fraction", 0.0))
    results = []
    for sl, m in _slices_of(data, c, smask):
        _, st, _ = data.scope(metric, m, c.get("positions"))
        n = len(st)
        r = _result(c, "observability", metric=metric, aggregate="nonfinite_fraction",
                    max=limit, slice=sl, n=n)
        if n == 0:
            r["status"] = "inconclusive"
        else:
            r["observed"] = int(np.count_nonzero(st == NONFINITE)) / n
            r["status"] = "pass" if r["observed"] <= limit else "fail"
        results.append(r)
    return results


# --------------------------------------------------------------------------------------
# Escalation and decision.

def _any_of(want, got):
    allowed = want if isinstance(want, list) else [want]
    return any(_text(a) == _text(got) for a in allowed)


def _labels(clause, result):
    labels = dict(result["slice"] or {})
    for key, v in (clause.get("where") or {}).items():
        if isinstance(v, list):
            if len(v) == 1:
                labels.setdefault(key, _text(v[0]))
        else:
            labels.setdefault(key, _text(v))
    return labels


def rule_matches(rule, clause, result, stage):
    when = rule.get("when") or {}
    for key, want in when.items():
        if key == "clause" and not _any_of(want, result["clause"]):
            return False
        if key == "family" and not _any_of(want, result["family"]):
            return False
        if key == "severity" and not _any_of(want, result["severity"]):
            return False
        if key == "status" and not _any_of(want, result["status"]):
            return False
        if key == "stage" and not _any_of(want, stage):
            return False
        if key == "slice":
            labels = _labels(clause, result)
            for sk, sv in want.items():
                if sk not in labels or not _any_of(sv, labels[sk]):
                    return False
    return True


def action_for(rules, clause, result, stage):
    if result["status"] == "pass":
        return "pass"
    for rule in rules:
        if "default" in rule:
            return rule["default"]
        if rule_matches(rule, clause, result, stage):
            return rule["action"]
    return "warn"


def evaluate(contract, run_path, stage=None, data=None):
    """The decision document (SPEC 6.1 shape) for a parsed contract and a run."""
    bounds = contract.get("bounds") or {}
    ppo_clip = _num(bounds.get("ppo_clip", 0.2))
    if data is None:
        data = RunData(run_path, ppo_clip)
    stages = contract.get("stages") or list(DEFAULT_STAGES)
    if stage is None:
        stage = stages[0]
    rules = contract.get("escalation") or []
    results, clause_of = [], []
    for family, fn in (("numerical", eval_numerical), ("statistical", eval_statistical),
                       ("runtime", eval_runtime), ("observability", eval_observability)):
        for c in contract.get(family) or []:
            for r in fn(data, c):
                results.append(r)
                clause_of.append(c)
    stage_actions = {}
    for st in stages:
        strongest = "pass"
        for r, c in zip(results, clause_of):
            a = action_for(rules, c, r, st)
            r.setdefault("actions", {})[st] = a
            if ACTIONS.index(a) > ACTIONS.index(strongest):
                strongest = a
        stage_actions[st] = strongest
    if stage not in stage_actions:
        raise ContractError(f"unknown stage {stage!r}")
    for r in results:
        r["action"] = r["actions"][stage]
    statuses = {r["status"] for r in results}
    verdict = "fail" if "fail" in statuses else \
        "inconclusive" if statuses & {"inconclusive", "error"} else "pass"
    return {"kcx": 1, "verdict": verdict, "stage": stage,
            "action": stage_actions[stage], "stages": stage_actions,
            "contract": {"name": contract.get("name"), "version": contract.get("version")},
            "run": {"path": run_path, "sequences": data.N, "tokens": data.M},
            "results": results}


EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--contract", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--stage")
    a = ap.parse_args(argv)
    try:
        doc = evaluate(load_contract(a.contract), a.run, a.stage)
    except (ContractError, nref.RunError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    json.dump(doc, sys.stdout, indent=1, default=float)
    print()
    return EXIT_CODES[doc["verdict"]]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
