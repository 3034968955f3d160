"""The statistics of the contract reference (SPEC 3, 4.2): type-7 quantiles, aggregates,
the Wilson bound, and the percentile bootstrap with the documented PRNG (xoshiro256**
seeded through splitmix64, docs/contracts.md). Written from SPEC and the docs only.
"""

import math
import statistics

import numpy as np


class ContractError(ValueError):
    """A contract (or a clause of it) that the reference cannot evaluate."""


def quantile_type7(sorted_x, q):
    """SPEC 3: h = (n-1)q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h])."""
    n = len(sorted_x)
    h = (n - 1) * q
    f = int(math.floor(h))
    if f >= n - 1:
        return float(sorted_x[n - 1])
    return float(sorted_x[f] + (h - f) * (sorted_x[f + 1] - sorted_x[f]))


def aggregate(kind, param, x):
    """SPEC 3 over the float64 array x (finite values). None when x is empty."""
    n = len(x)
    if n == 0:
        return None
    if kind == "max":
        return float(np.max(x))
    if kind == "min":
        return float(np.min(x))
    if kind == "mean":
        return float(math.fsum(x) / n)
    if kind == "sum":
        return float(math.fsum(x))
    if kind == "count":
        return float(n)
    if kind == "q":
        return quantile_type7(np.sort(x), param)
    if kind == "fabove":
        return float(np.count_nonzero(x > param)) / n
    if kind == "foutside":
        lo, hi = param
        return float(np.count_nonzero((x < lo) | (x > hi))) / n
    raise ContractError(kind)


def wilson_upper(k, n, c):
    """SPEC 4.2: one-sided Wilson score upper bound at confidence c."""
    z = statistics.NormalDist().inv_cdf(c)
    p = k / n
    z2 = z * z
    return (p + z2 / (2 * n) + z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))) / (
        1 + z2 / n)


def quantile_interval_ranks(n, q, confidence=0.95):
    """docs/metrics.md, "The interval of a quantile": 0-based ranks (lo, hi) of the order
    statistics that bound the population q-quantile, equal-tailed: lo the largest k in
    0..n-1 with P(B <= k) <= a, hi the smallest with P(B <= k) >= 1 - a, B ~ Binomial(n, q),
    a = (1 - confidence)/2; None for a side no rank achieves. Returns (lo, hi, borderline),
    borderline when a CDF value lies within 1e-9 of a cut (float rounding may decide).
    The CDF is the cumulative sum of exp(log pmf), log pmf from math.lgamma (the textbook
    formula; KCX walks pmf ratios instead)."""
    a = (1 - confidence) / 2
    if n == 0:
        return None, None, False
    if q <= 0:
        return None, 0, False
    if q >= 1:
        return n - 1, None, False
    ln = math.lgamma(n + 1)
    lq, lp = math.log(q), math.log1p(-q)
    logpmf = np.array([ln - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lq + (n - k) * lp
                       for k in range(n)])
    cdf = np.cumsum(np.exp(logpmf))
    below = np.nonzero(cdf <= a)[0]
    above = np.nonzero(cdf >= 1 - a)[0]
    lo = int(below[-1]) if len(below) else None
    hi = int(above[0]) if len(above) else None
    borderline = bool(np.any(np.abs(cdf - a) < 1e-9) or np.any(np.abs(cdf - (1 - a)) < 1e-9))
    return lo, hi, borderline


MASK64 = (1 << 64) - 1


def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


class Xoshiro256ss:
    """xoshiro256** seeded with four successive splitmix64 outputs from `seed`
    (docs/contracts.md, "The PRNG"); below(n) = high half of next() * n."""

    def __init__(self, seed):
        st = seed & MASK64
        self.s = []
        for _ in range(4):
            st, z = _splitmix64(st)
            self.s.append(z)

    def next(self):
        s0, s1, s2, s3 = self.s
        x = (s1 * 5) & MASK64
        result = ((((x << 7) | (x >> 57)) & MASK64) * 9) & MASK64
        t = (s1 << 17) & MASK64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & MASK64
        self.s = [s0, s1, s2, s3]
        return result

    def below(self, n):
        return (self.next() * n) >> 64


_BOOT_CACHE = {}


def _bootstrap(groups_sum, groups_cnt, resamples, seed, c):
    """Percentile bootstrap of the pooled mean over groups (sequences), drawn with the
    documented PRNG; -> (lo, hi, se)."""
    key = (groups_sum.tobytes(), groups_cnt.tobytes(), resamples, seed, c)
    if key in _BOOT_CACHE:
        return _BOOT_CACHE[key]
    g = len(groups_sum)
    rng = Xoshiro256ss(seed)
    idx = np.empty((resamples, g), dtype=np.int64)
    below = rng.below
    for b in range(resamples):
        idx[b] = [below(g) for _ in range(g)]
    sums = groups_sum[idx]
    cnts = groups_cnt[idx]
    means = np.array([math.fsum(row) for row in sums]) / cnts.sum(axis=1)
    srt = np.sort(means)
    lo = quantile_type7(srt, (1 - c) / 2)
    hi = quantile_type7(srt, (1 + c) / 2)
    out = (lo, hi, float(np.std(means)))
    _BOOT_CACHE[key] = out
    return out
