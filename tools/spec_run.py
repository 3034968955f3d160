"""SPEC 1 runs read with numpy alone: JSON Lines (plain or gzip) and safetensors, into one
`Run` of flat arrays. Written from SPEC 1 only, independently of KCX's readers; the metric
reference (numpy_reference.py) and the contract reference build on it.
"""

import gzip
import json
import math
import mmap
import struct

import numpy as np

KERNELS = ("train", "inf")

class RunError(ValueError):
    """The file does not follow SPEC 1."""


# --------------------------------------------------------------------------------------
# The run, independent of its file format.

class Run:
    """All that the metrics need, as flat numpy arrays over the run's M tokens.

    offsets[N+1]                 sequence s = tokens offsets[s] .. offsets[s+1]-1
    lp[k], lp_missing[k]         float64[M], bool[M] for k in ("train", "inf")
    topk[k]                      None, or dict(present bool[M], null bool[M],
                                 ids int64[M,K], logp float64[M,K]) (rows as stored)
    logits[k]                    None, or dict(rows int64[P], vals float64[P,V],
                                 null bool[P])
    reward[k], reward_missing[k] float64[N], bool[N]
    """

    def __init__(self):
        self.path = None
        self.ids = []
        self.offsets = None
        self.lp = {}
        self.lp_missing = {}
        self.topk = {"train": None, "inf": None}
        self.logits = {"train": None, "inf": None}
        self.reward = {}
        self.reward_missing = {}

    @property
    def N(self):
        return len(self.offsets) - 1

    @property
    def M(self):
        return int(self.offsets[-1])


# --------------------------------------------------------------------------------------
# SPEC 1.1: JSON Lines.

NONFINITE_STRINGS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _number(x, where):
    """One JSON number of a numeric field -> (float, is_missing)."""
    if x is None:
        return math.nan, True
    if isinstance(x, bool):
        raise RunError(f"{where}: expected a number, got {x!r}")
    if isinstance(x, (int, float)):
        return float(x), False
    if isinstance(x, str) and x in NONFINITE_STRINGS:
        return NONFINITE_STRINGS[x], False
    raise RunError(f"{where}: expected a number, null or 'NaN'/'Infinity'/'-Infinity', "
                   f"got {x!r}")


def _numbers(values, where):
    """A JSON array of numbers -> (float64 array, bool array of missing)."""
    if not isinstance(values, list):
        raise RunError(f"{where}: expected an array")
    pairs = [_number(x, f"{where}[{i}]") for i, x in enumerate(values)]
    vals = np.array([v for v, _ in pairs], dtype=np.float64)
    missing = np.array([m for _, m in pairs], dtype=bool)
    return vals, missing


def _matrix(rows, T, where):
    """A T x V array of arrays -> (float64[T,V], bool[T] any-null per row)."""
    if not isinstance(rows, list) or len(rows) != T:
        raise RunError(f"{where}: expected {T} rows")
    vals, nulls = [], []
    width = None
    for t, row in enumerate(rows):
        v, m = _numbers(row, f"{where}[{t}]")
        if width is None:
            width = len(v)
        if len(v) != width or width < 1:
            raise RunError(f"{where}[{t}]: expected {width} columns, got {len(v)}")
        vals.append(v)
        nulls.append(m.any())
    return np.array(vals, dtype=np.float64).reshape(T, width), np.array(nulls, dtype=bool)


def _open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, "r", encoding="utf-8")


def read_jsonl(path):
    """Read a SPEC 1.1 run. Returns a Run."""
    run = Run()
    run.path = path
    lengths = []
    lp = {k: [] for k in KERNELS}
    lpm = {k: [] for k in KERNELS}
    topk_rows = {k: [] for k in KERNELS}       # per sequence: None or (ids, logp, null)
    logit_rows = {k: [] for k in KERNELS}      # per sequence: None or (vals, null)
    reward = {k: [] for k in KERNELS}
    seen_ids = set()
    first_object = True
    with _open_text(path) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue                          # SPEC 1.1: blank lines are skipped
            where = f"{path}:{lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise RunError(f"{where}: {e}") from None
            if not isinstance(obj, dict):
                raise RunError(f"{where}: expected an object")
            if first_object and "kcx_header" in obj:
                first_object = False
                continue                          # SPEC 1.3: optional header line
            first_object = False
            for key in ("id", "tokens", "logp_train", "logp_inf"):
                if key not in obj:
                    raise RunError(f"{where}: missing required key {key!r}")
            sid = obj["id"]
            if not isinstance(sid, str) or sid in seen_ids:
                raise RunError(f"{where}: id must be a unique string, got {sid!r}")
            seen_ids.add(sid)
            where = f"{where} (id {sid})"
            tokens = obj["tokens"]
            if not isinstance(tokens, list) or len(tokens) < 1 or not all(
                    isinstance(x, int) and not isinstance(x, bool) for x in tokens):
                raise RunError(f"{where}: tokens must be a non-empty array of int")
            T = len(tokens)
            run.ids.append(sid)
            lengths.append(T)
            for k in KERNELS:
                v, m = _numbers(obj[f"logp_{k}"], f"{where} logp_{k}")
                if len(v) != T:
                    raise RunError(f"{where}: logp_{k} has {len(v)} values, expected {T}")
                lp[k].append(v)
                lpm[k].append(m)

                tk = obj.get(f"topk_{k}")
                if tk is None:
                    topk_rows[k].append(None)
                else:
                    if not isinstance(tk, dict) or "ids" not in tk or "logp" not in tk:
                        raise RunError(f"{where}: topk_{k} must be {{ids, logp}}")
                    ids = tk["ids"]
                    if (not isinstance(ids, list) or len(ids) != T or
                            not all(isinstance(r, list) for r in ids)):
                        raise RunError(f"{where}: topk_{k}.ids must have {T} rows")
                    kk = len(ids[0])
                    if kk < 1 or any(len(r) != kk for r in ids) or not all(
                            isinstance(x, int) and not isinstance(x, bool)
                            for r in ids for x in r):
                        raise RunError(f"{where}: topk_{k}.ids: rows of {kk} ints expected")
                    logp, null = _matrix(tk["logp"], T, f"{where} topk_{k}.logp")
                    if logp.shape[1] != kk:
                        raise RunError(f"{where}: topk_{k}.logp has {logp.shape[1]} "
                                       f"columns, ids have {kk}")
                    topk_rows[k].append((np.array(ids, dtype=np.int64), logp, null))

                lg = obj.get(f"logits_{k}")
                if lg is None:
                    logit_rows[k].append(None)
                else:
                    logit_rows[k].append(_matrix(lg, T, f"{where} logits_{k}"))

                if f"reward_{k}" in obj:
                    reward[k].append(_number(obj[f"reward_{k}"], f"{where} reward_{k}"))
                else:
                    reward[k].append((math.nan, True))

    if not lengths:
        raise RunError(f"{path}: no sequences")
    run.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    M = run.M
    for k in KERNELS:
        run.lp[k] = np.concatenate(lp[k])
        run.lp_missing[k] = np.concatenate(lpm[k])
        run.reward[k] = np.array([v for v, _ in reward[k]], dtype=np.float64)
        run.reward_missing[k] = np.array([m for _, m in reward[k]], dtype=bool)

        # Top-k: one k per kernel over the run; positions without rows are not present.
        ks = {r[0].shape[1] for r in topk_rows[k] if r is not None}
        if len(ks) > 1:
            raise RunError(f"{path}: topk_{k} has different k in different sequences")
        if ks:
            kk = ks.pop()
            present = np.zeros(M, dtype=bool)
            null = np.zeros(M, dtype=bool)
            ids = np.zeros((M, kk), dtype=np.int64)
            logp = np.full((M, kk), np.nan)
            for s, r in enumerate(topk_rows[k]):
                if r is None:
                    continue
                a, b = run.offsets[s], run.offsets[s + 1]
                present[a:b] = True
                ids[a:b], logp[a:b], null[a:b] = r
            run.topk[k] = dict(present=present, null=null, ids=ids, logp=logp)

        # Full logits: the token indices that have a row.
        vs = {r[0].shape[1] for r in logit_rows[k] if r is not None}
        if len(vs) > 1:
            raise RunError(f"{path}: logits_{k} has different V in different sequences")
        if vs:
            rows, vals, null = [], [], []
            for s, r in enumerate(logit_rows[k]):
                if r is None:
                    continue
                rows.append(np.arange(run.offsets[s], run.offsets[s + 1]))
                vals.append(r[0])
                null.append(r[1])
            run.logits[k] = dict(rows=np.concatenate(rows).astype(np.int64),
                                 vals=np.concatenate(vals), null=np.concatenate(null))
    return run


# --------------------------------------------------------------------------------------
# SPEC 1.2: safetensors.

ST_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "BF16", "I64": "<i8",
             "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}
ST_ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2,
               "I8": 1, "U8": 1, "BOOL": 1}


def read_safetensors_tensors(path):
    """Map a safetensors file; return (tensors: name -> numpy array view, metadata).

    Every shape and offset is checked against the file size before any data is
    touched; overlapping tensors are rejected."""
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    size = len(mm)
    if size < 8:
        raise RunError(f"{path}: byte 0: file shorter than the 8-byte header length")
    (hlen,) = struct.unpack("<Q", mm[:8])
    if hlen > size - 8:
        raise RunError(f"{path}: byte 0: header length {hlen} exceeds the file")
    try:
        header = json.loads(bytes(mm[8:8 + hlen]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RunError(f"{path}: byte 8: bad header JSON: {e}") from None
    base = 8 + hlen
    metadata = header.pop("__metadata__", None) or {}
    tensors, spans = {}, []
    for name, info in header.items():
        dtype = info.get("dtype")
        shape = info.get("shape")
        begin, end = info.get("data_offsets", (None, None))
        if dtype not in ST_DTYPES:
            raise RunError(f"{path}: tensor {name}: unsupported dtype {dtype!r}")
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if not (0 <= begin <= end <= size - base):
            raise RunError(f"{path}: tensor {name}: data_offsets out of the file")
        if end - begin != count * ST_ITEMSIZE[dtype]:
            raise RunError(f"{path}: tensor {name}: {end - begin} bytes for shape {shape}")
        spans.append((begin, end, name))
        if dtype == "BF16":
            raw = np.frombuffer(mm, dtype="<u2", count=count, offset=base + begin)
            arr = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            arr = np.frombuffer(mm, dtype=ST_DTYPES[dtype], count=count,
                                offset=base + begin)
        tensors[name] = arr.reshape(shape)
    spans.sort()
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise RunError(f"{path}: tensors {n0} and {n1} overlap")
    return tensors, metadata


def read_safetensors(path):
    """Read a SPEC 1.2 run. Returns a Run. (Missing values cannot be expressed in
    safetensors: every stored value is present; NaN counts as nonfinite.)"""
    t, meta = read_safetensors_tensors(path)
    for name in ("offsets", "tokens", "logp_train", "logp_inf"):
        if name not in t:
            raise RunError(f"{path}: missing tensor {name!r}")
    run = Run()
    run.path = path
    offsets = t["offsets"].astype(np.int64)
    if offsets.ndim != 1 or len(offsets) < 2 or offsets[0] != 0 or np.any(
            np.diff(offsets) < 0):
        raise RunError(f"{path}: offsets must be [N+1], start at 0, non-decreasing")
    run.offsets = offsets
    N, M = run.N, run.M
    if t["tokens"].shape != (M,):
        raise RunError(f"{path}: tokens must have shape [{M}]")
    run.ids = json.loads(meta["ids"]) if "ids" in meta else [str(i) for i in range(N)]
    if len(run.ids) != N:
        raise RunError(f"{path}: metadata ids has {len(run.ids)} entries, expected {N}")
    for k in KERNELS:
        lp = t[f"logp_{k}"]
        if lp.shape != (M,):
            raise RunError(f"{path}: logp_{k} must have shape [{M}]")
        run.lp[k] = lp.astype(np.float64)
        run.lp_missing[k] = np.zeros(M, dtype=bool)

        if f"topk_{k}_ids" in t or f"topk_{k}_logp" in t:
            ids, logp = t.get(f"topk_{k}_ids"), t.get(f"topk_{k}_logp")
            if ids is None or logp is None or ids.ndim != 2 or ids.shape[0] != M or \
                    logp.shape != ids.shape:
                raise RunError(f"{path}: topk_{k}_ids/logp must both be [{M}, k]")
            run.topk[k] = dict(present=np.ones(M, dtype=bool), null=np.zeros(M, dtype=bool),
                               ids=ids.astype(np.int64), logp=logp.astype(np.float64))

        if f"logits_{k}" in t:
            if "logits_rows" not in t:
                raise RunError(f"{path}: logits_{k} without logits_rows")
            rows = t["logits_rows"].astype(np.int64)
            vals = t[f"logits_{k}"]
            if vals.ndim != 2 or vals.shape[0] != len(rows):
                raise RunError(f"{path}: logits_{k} must be [{len(rows)}, V]")
            if len(rows) and (rows.min() < 0 or rows.max() >= M or
                              len(np.unique(rows)) != len(rows)):
                raise RunError(f"{path}: logits_rows must be distinct indices in [0, {M})")
            run.logits[k] = dict(rows=rows, vals=vals.astype(np.float64),
                                 null=np.zeros(len(rows), dtype=bool))

        if f"reward_{k}" in t:
            if t[f"reward_{k}"].shape != (N,):
                raise RunError(f"{path}: reward_{k} must have shape [{N}]")
            run.reward[k] = t[f"reward_{k}"].astype(np.float64)
            run.reward_missing[k] = np.zeros(N, dtype=bool)
        else:
            run.reward[k] = np.full(N, np.nan)
            run.reward_missing[k] = np.ones(N, dtype=bool)
    return run


def read_run(path):
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    if path.endswith(".jsonl") or path.endswith(".jsonl.gz"):
        return read_jsonl(path)
    raise RunError(f"{path}: expected .jsonl, .jsonl.gz or .safetensors")
