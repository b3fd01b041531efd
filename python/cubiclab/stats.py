"""Intervals and the three verdicts they earn, for the catalog (:mod:`cubiclab.experiments.claims`)
and the agreement matrix (:mod:`cubiclab.testbed.ensemble`) alike.

An estimate's 95% interval is placed against the region a claim or a tolerance accepts
(:func:`verdict`): *holds* when it lies inside, *does not hold* when it lies wholly
outside, *inconclusive* when it straddles an edge (more runs would narrow it).

The intervals: a mean's (Student's t), the difference of two means (Welch: unequal
variances, Welch-Satterthwaite degrees of freedom) and the ratio of two standard deviations
(the F distribution of the ratio of two sample variances of normal samples). The quantiles
come from the regularized incomplete beta function (:func:`betainc`), so any degrees of
freedom are exact, fractional ones included. Only numpy besides the standard library:
scripts/agreement.py loads this file by path next to older builds of cubiclab.
"""

from __future__ import annotations

import math

import numpy as np

#: Where an interval lies against an accepted region.
HOLDS, FAILS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
#: Two-sided 95% intervals.
LEVEL = 0.95
# Seeds that move a value by less than this fraction of its claim's scale (or tolerance)
# sample nothing: the scenario has no randomness that reaches the metric (one flow alone,
# say), and a verdict says so rather than pass a zero-width interval off as an ensemble's.
ONE_TRAJECTORY = 0.01


def verdict(lo: float, hi: float, region_lo: float, region_hi: float) -> str:
    """HOLDS when [lo, hi] lies inside [region_lo, region_hi], FAILS when wholly outside it,
    else INCONCLUSIVE."""
    if region_lo <= lo and hi <= region_hi:
        return HOLDS
    if hi < region_lo or lo > region_hi:
        return FAILS
    return INCONCLUSIVE


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction
    (evaluated with the modified Lentz method) on the side of x where it converges fast."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300

    def guard(v: float) -> float:
        return v if abs(v) > tiny else tiny

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, 10_000):
        # The fraction's even and odd terms (d_2m and d_2m+1).
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 / guard(1.0 + num * d)
            c = guard(1.0 + num / c)
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def t_cdf(t: float, dof: float) -> float:
    """P(T <= t) for Student's t with `dof` degrees of freedom (any positive number)."""
    tail = 0.5 * betainc(dof / 2.0, 0.5, dof / (dof + t * t))
    return 1.0 - tail if t >= 0 else tail


def f_cdf(f: float, d1: float, d2: float) -> float:
    """P(F <= f) for the F distribution with (d1, d2) degrees of freedom."""
    return 0.0 if f <= 0 else betainc(d1 / 2.0, d2 / 2.0, d1 * f / (d1 * f + d2))


def _invert(cdf, p: float) -> float:
    """The x >= 0 with cdf(x) = p, for an increasing cdf on [0, inf) (bisection to the
    float's resolution)."""
    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return 0.5 * (lo + hi)


def t_quantile(p: float, dof: float) -> float:
    """Student's t quantile for p in (0.5, 1) (the upper one of a two-sided interval)."""
    if not 0.5 < p < 1.0 or not dof > 0:
        raise ValueError(f"t quantile: p is {p}, dof {dof}; allowed: 0.5 < p < 1, dof > 0")
    if math.isinf(dof):
        return _invert(lambda z: 0.5 * math.erfc(-z / math.sqrt(2.0)), p)
    return _invert(lambda t: t_cdf(t, dof), p)


def f_quantile(p: float, d1: float, d2: float) -> float:
    """The F distribution's quantile for p in (0, 1)."""
    if not 0.0 < p < 1.0 or not (d1 > 0 and d2 > 0):
        raise ValueError(f"F quantile: p is {p}, dof ({d1}, {d2}); allowed: 0 < p < 1, dof > 0")
    return _invert(lambda f: f_cdf(f, d1, d2), p)


def _finite(values) -> np.ndarray:
    a = np.asarray([math.nan if v is None else v for v in values], dtype=float)
    return a[np.isfinite(a)]


def _mean_var(v: np.ndarray) -> tuple[float, float]:
    return float(v.mean()), float(v.var(ddof=1)) if len(v) > 1 else math.nan


def mean_ci(values) -> tuple[float, float, int]:
    """Mean, half-width of its 95% interval (Student's t) and count of the finite values;
    the half-width is NaN for fewer than two values, 0 when they are all equal."""
    v = _finite(values)
    if not len(v):
        return math.nan, math.nan, 0
    m = float(v.mean())
    if len(v) == 1:
        return m, math.nan, 1
    return m, t_quantile(0.5 + LEVEL / 2, len(v) - 1) * float(v.std(ddof=1)) / math.sqrt(len(v)), len(v)


def welch(a, b) -> tuple[float, float, float, float]:
    """mean(a) - mean(b) with its 95% interval and the Welch-Satterthwaite degrees of
    freedom: (difference, lo, hi, dof). Needs two finite values a side (else NaNs); two
    constant samples give a zero-width interval (dof infinite)."""
    a, b = _finite(a), _finite(b)
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan, math.nan, math.nan
    (ma, va), (mb, vb) = _mean_var(a), _mean_var(b)
    sa, sb = va / len(a), vb / len(b)
    diff = ma - mb
    if sa + sb == 0:
        return diff, diff, diff, math.inf
    dof = (sa + sb) ** 2 / (sa * sa / (len(a) - 1) + sb * sb / (len(b) - 1))
    half = t_quantile(0.5 + LEVEL / 2, dof) * math.sqrt(sa + sb)
    return diff, diff - half, diff + half, dof


def sd_ratio(a, b) -> tuple[float, float, float]:
    """sd(a) / sd(b) with its 95% interval from the F distribution (normal samples):
    s_a^2 / s_b^2 divided by F(0.975; n_a - 1, n_b - 1) and multiplied by
    F(0.975; n_b - 1, n_a - 1), square-rooted. NaNs with fewer than two finite values a
    side or both sides constant; a constant `b` against a spread `a` gives infinity."""
    a, b = _finite(a), _finite(b)
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan, math.nan
    va, vb = _mean_var(a)[1], _mean_var(b)[1]
    if vb == 0:
        return (math.nan,) * 3 if va == 0 else (math.inf,) * 3
    q = 0.5 + LEVEL / 2
    r = va / vb
    lo = r / f_quantile(q, len(a) - 1, len(b) - 1)
    hi = r * f_quantile(q, len(b) - 1, len(a) - 1)
    return math.sqrt(r), math.sqrt(lo), math.sqrt(hi)
