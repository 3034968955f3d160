"""The run side of the contract reference: metric arrays from numpy_reference plus what
contracts need beyond them (slices, runtime, header, field presence). Written from SPEC 1
and 4 only.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_reference as nref          # noqa: E402
from contract_stats import ContractError  # noqa: E402

OK, MISSING, NONFINITE = nref.OK, nref.MISSING, nref.NONFINITE

TOKEN_FIELDS = {"tokens", "logp_train", "logp_inf", "topk_train", "topk_inf", "logits",
                "logits_train", "logits_inf", "text"}


def _text(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    return str(x)


# --------------------------------------------------------------------------------------
# The run: metric arrays from numpy_reference plus what contracts need beyond them
# (slices, runtime, header, field presence).

class RunData:
    def __init__(self, path, ppo_clip):
        self.path = path
        run = nref.read_run(path)
        self.run = run
        self.N, self.M = run.N, run.M
        self.lengths = np.diff(run.offsets)
        self.tok_seq = np.repeat(np.arange(self.N), self.lengths)
        self.tok_pos = np.arange(self.M) - run.offsets[self.tok_seq]
        tok = nref.token_metrics(run)
        tok["clip_excess"] = nref.logprob_metrics(run, clip=ppo_clip)["clip_excess"]
        self.tok = tok
        self.seq = nref.sequence_metrics(run, tok)
        self.per_run = nref.run_metrics(run, tok)
        if path.endswith(".safetensors"):
            self._extras_safetensors()
        else:
            self._extras_jsonl()

    # --- extras -------------------------------------------------------------------
    def _extras_jsonl(self):
        self.header = {}
        self.slices, self.runtime = [], []
        self.has_text, self.has_reward = [], {"train": [], "inf": []}
        first = True
        with nref._open_text(self.path) as f:
            for line in f:
                if not line.strip():
                    continue
                obj = json.loads(line)
                if first and "kcx_header" in obj:
                    first = False
                    self.header = obj["kcx_header"] or {}
                    continue
                first = False
                sl = obj.get("slices") or {}
                self.slices.append({k: _text(v) for k, v in sl.items() if v is not None})
                rt = obj.get("runtime")
                self.runtime.append(rt if isinstance(rt, dict) else None)
                self.has_text.append(obj.get("text") is not None)
                for k in ("train", "inf"):
                    self.has_reward[k].append(obj.get(f"reward_{k}") is not None)
        self.has_text = np.array(self.has_text, dtype=bool)
        self.has_reward = {k: np.array(v, dtype=bool) for k, v in self.has_reward.items()}

    def _extras_safetensors(self):
        t, meta = nref.read_safetensors_tensors(self.path)
        self.header = json.loads(meta["header"]) if "header" in meta else {}
        keys = json.loads(meta.get("slice_keys", "[]"))
        values = json.loads(meta.get("slice_values", "{}"))
        codes = t.get("slice_codes")
        self.slices = []
        for s in range(self.N):
            d = {}
            if codes is not None:
                for j, key in enumerate(keys):
                    c = int(codes[s, j])
                    if c >= 0:
                        d[key] = values[key][c]
            self.slices.append(d)
        rts = json.loads(meta["runtime"]) if "runtime" in meta else [None] * self.N
        self.runtime = [r if isinstance(r, dict) else None for r in rts]
        self.has_text = np.zeros(self.N, dtype=bool)
        self.has_reward = {k: np.full(self.N, f"reward_{k}" in t) for k in ("train", "inf")}

    # --- metric access ------------------------------------------------------------
    def level(self, metric):
        if metric in self.per_run:
            return "run"
        if metric in self.seq:
            return "sequence"
        if metric in self.tok:
            return "token"
        raise ContractError(f"unknown metric {metric!r}")

    def seq_mask(self, where, extra=None):
        """Sequences matching `where` (and slice key == value for extra=(key, value))."""
        mask = np.ones(self.N, dtype=bool)
        conds = []
        for key, want in (where or {}).items():
            allowed = {_text(v) for v in (want if isinstance(want, list) else [want])}
            conds.append((key, allowed))
        if extra is not None:
            conds.append((extra[0], {extra[1]}))
        if conds:
            for s in range(self.N):
                sl = self.slices[s]
                mask[s] = all(key in sl and sl[key] in allowed for key, allowed in conds)
        return mask

    def scope(self, metric, smask, positions):
        """(values, status, owning sequence) of the positions in scope."""
        lvl = self.level(metric)
        if lvl == "token":
            v, st = self.tok[metric]
            m = smask[self.tok_seq]
            if positions is not None:
                a, b = int(positions[0]), int(positions[1])
                m = m & (self.tok_pos >= a) & (self.tok_pos < b)
            return v[m], st[m], self.tok_seq[m]
        if lvl == "sequence":
            v, st = self.seq[metric]
            return v[smask], st[smask], np.arange(self.N)[smask]
        raise ContractError("per-run metric has no scope")

    def field_coverage(self, field, smask):
        """(present, total) of one observability field over the in-scope sequences."""
        tm = smask[self.tok_seq]
        run = self.run
        if field in TOKEN_FIELDS:
            total = int(tm.sum())
            if field == "tokens":
                present = np.ones(self.M, dtype=bool)
            elif field in ("logp_train", "logp_inf"):
                present = ~run.lp_missing[field[5:]]
            elif field in ("topk_train", "topk_inf"):
                tk = run.topk[field[5:]]
                present = (np.zeros(self.M, dtype=bool) if tk is None
                           else tk["present"] & ~tk["null"])
            elif field in ("logits_train", "logits_inf", "logits"):
                def rows(k):
                    p = np.zeros(self.M, dtype=bool)
                    lg = run.logits[k]
                    if lg is not None:
                        p[lg["rows"][~lg["null"]]] = True
                    return p
                if field == "logits":
                    present = rows("train") & rows("inf")
                else:
                    present = rows(field[7:])
            elif field == "text":
                present = self.has_text[self.tok_seq]
            return int((present & tm).sum()), total
        total = int(smask.sum())
        if field == "id":
            present = np.ones(self.N, dtype=bool)
        elif field in ("reward_train", "reward_inf"):
            present = self.has_reward[field[7:]]
        elif field == "runtime":
            present = np.array([r is not None for r in self.runtime], dtype=bool)
        elif field.startswith("runtime."):
            name = field[8:]
            present = np.array([r is not None and r.get(name) is not None
                                for r in self.runtime], dtype=bool)
        elif field.startswith("slices."):
            key = field[7:]
            present = np.array([key in sl for sl in self.slices], dtype=bool)
        else:
            raise ContractError(f"unknown field {field!r}")
        return int((present & smask).sum()), total
