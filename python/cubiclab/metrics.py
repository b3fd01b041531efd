"""Metrics of the seed papers, as pure functions over arrays and the DataFrames of
`cubiclab.Results`.

Each function says where its definition comes from. Throughputs are in any consistent unit
(the Results tables use bits/s); times are in seconds. Nothing here runs a simulation.

Seeds: 000 = Ha, Rhee, Xu 2008; 001 = Rhee, Xu 2005; 002 = Leith, Shorten, McCullagh 2007;
004 = Bao, Wong, Leung.

Fairness and shares
  * `jain_index`            Jain's fairness index (seed 001 Exp. 3, seed 002).
  * `throughput_ratio`      ratio of two flows' or groups' throughputs (seed 000 Figs. 8a, 9a).
  * `min_max_ratio`         the smallest over the largest throughput (seed 000 Fig. 8a).
  * `tcp_friendly_ratio`    long-term TCP over high-speed throughput (seed 001 Exps. 1-2,
                            seed 000 Figs. 10b-c).
  * `bandwidth_shares`      each group's fraction of the link (seed 000 Fig. 10a, Fig. 6).
  * `link_utilization`, `utilization`   delivered over capacity (seed 000 Figs. 6, 8b, 9b;
                            seed 002 "link utilisation").
Dynamics
  * `cov`, `cov_at_timescales`   coefficient of variation of throughput (seed 001 Exp. 3).
  * `convergence_time`      time to within 10 % / 20 % of the fair share (seed 002, seed 000
                            Fig. 4 "fair share within 200 seconds").
  * `congestion_epochs`     durations between congestion events (seed 000 Sec. 1, seed 002).
  * `epoch_shape`           where an epoch's growth happens: concave (CUBIC) or linear (TCP
                            mode), seed 000 Fig. 5.
  * `plateau_fraction`      time spent on a plateau near W_max (seed 000 Fig. 4).
Short flows
  * `flow_completion_times` completion time statistics per size class.
Helpers
  * `mean_throughput`, `throughput_matrix`, `mean_spread`.
  * `t_quantile`, `ci95_half_width`   Student's t and the 95 % confidence interval of a mean
                            over seeds (what `Sweep.aggregate` reports).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = [
    "jain_index",
    "throughput_ratio",
    "min_max_ratio",
    "tcp_friendly_ratio",
    "bandwidth_shares",
    "utilization",
    "link_utilization",
    "cov",
    "cov_at_timescales",
    "convergence_time",
    "congestion_epochs",
    "epoch_shape",
    "plateau_fraction",
    "flow_completion_times",
    "mean_throughput",
    "throughput_matrix",
    "mean_spread",
    "t_quantile",
    "ci95_half_width",
]


def _arr(x, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    if a.size == 0:
        raise ValueError(f"{name}: needs at least one value")
    if np.any(np.isnan(a)):
        raise ValueError(f"{name}: contains NaN")
    return a


# ---- fairness and shares -----------------------------------------------------------------


def jain_index(x) -> float:
    """Jain's fairness index (Jain, Chiu, Hawe 1984) of the allocations `x`:
    (sum x)^2 / (n * sum x^2). 1 when all are equal, 1/n when one takes everything.
    Seed 001 (Exp. 3) proposes it at several time scales; seed 002 uses it for fairness
    between like flows. All-zero input gives 1 (nobody is favoured)."""
    a = _arr(x, "jain_index")
    if np.any(a < 0):
        raise ValueError("jain_index: allocations must be >= 0")
    sq = float(np.sum(a * a))
    if sq == 0.0:
        return 1.0
    return float(np.sum(a)) ** 2 / (a.size * sq)


def throughput_ratio(a, b) -> float:
    """Mean throughput of `a` over the mean throughput of `b` (each a flow's value or an
    array of flows). Seed 000 Fig. 9a plots it for two flows of different RTTs (long-RTT
    flow over short-RTT flow); Fig. 8a for two flows of the same RTT."""
    ma, mb = float(np.mean(_arr(a, "a"))), float(np.mean(_arr(b, "b")))
    if mb == 0.0:
        return math.inf if ma > 0 else math.nan
    return ma / mb


def min_max_ratio(x) -> float:
    """Smallest over largest throughput among flows: seed 000 Fig. 8a's "throughput ratio
    between these two flows" as a fairness index in [0, 1] (1 = equal)."""
    a = _arr(x, "min_max_ratio")
    hi = float(a.max())
    return 1.0 if hi == 0.0 else float(a.min()) / hi


def tcp_friendly_ratio(tcp, high_speed) -> float:
    """Seed 001 Exps. 1 and 2 ("TCP friendly ratio"): the throughput of the long-term TCP
    (SACK) flows over that of the high-speed flows, as mean per-flow throughputs (so the
    numbers of flows need not match). 1 means the high-speed flows take no more than TCP."""
    return throughput_ratio(tcp, high_speed)


def bandwidth_shares(throughput_by_group: dict, capacity: float) -> dict:
    """Seed 000 Fig. 10a / Fig. 6: each group's throughput as a fraction of the link
    capacity (the plots' ``link_share``; a ``share`` is of what the flows delivered), plus
    "unused" = 1 - their sum (clipped at 0)."""
    if capacity <= 0:
        raise ValueError("bandwidth_shares: capacity must be > 0")
    out = {str(g): float(v) / capacity for g, v in throughput_by_group.items()}
    out["unused"] = max(0.0, 1.0 - sum(out.values()))
    return out


def utilization(bits: float, capacity_bps: float, seconds: float) -> float:
    """Delivered bits over what the link could carry in `seconds` (seed 000 Figs. 8b, 9b)."""
    if capacity_bps <= 0 or seconds <= 0:
        raise ValueError("utilization: capacity and duration must be > 0")
    return float(bits) / (capacity_bps * seconds)


def link_utilization(link: pd.DataFrame, t0: float = 0.0, t1: float = math.inf) -> float:
    """Mean of the per-interval bottleneck utilisation (`Results.link.utilization`) over the
    samples with t0 < t <= t1. The samples are of equal length, so the mean is the fraction
    of capacity used in that window."""
    d = link[(link.t > t0) & (link.t <= t1)]
    if d.empty:
        raise ValueError(f"link_utilization: no samples in ({t0}, {t1}]")
    return float(d.utilization.mean())


# ---- dynamics -----------------------------------------------------------------------------


def cov(x) -> float:
    """Coefficient of variation: population standard deviation over mean (seed 001 Exp. 3,
    after [9, 10, 11] there). NaN when the mean is 0."""
    a = _arr(x, "cov")
    m = float(a.mean())
    return float(a.std()) / m if m != 0 else math.nan


def cov_at_timescales(t, x, scales, t0: float | None = None) -> dict:
    """CoV of a throughput series at several time scales (seed 001 Exp. 3: "the
    coefficients of variance (CoV) of throughput"; it asks at which time scale stability
    should be judged, so we give several).

    `t` are the ends of equal sampling intervals, `x` the throughput in each. For a scale
    s, consecutive samples are averaged in non-overlapping bins of s seconds (only whole
    bins: s must be a multiple of the sampling interval, rounded to the nearest) and the
    CoV of the bin means is returned. `t0` drops samples up to t0 (warm-up)."""
    t = _arr(t, "t")
    x = _arr(x, "x")
    if t.size != x.size:
        raise ValueError("cov_at_timescales: t and x differ in length")
    if t0 is not None:
        keep = t > t0
        t, x = t[keep], x[keep]
    if t.size < 2:
        raise ValueError("cov_at_timescales: need at least two samples")
    dt = float(np.median(np.diff(t)))
    out = {}
    for s in scales:
        k = max(1, int(round(s / dt)))
        nb = x.size // k
        if nb < 2:
            out[s] = math.nan
            continue
        bins = x[: nb * k].reshape(nb, k).mean(axis=1)
        out[s] = cov(bins)
    return out


def _moving_average(x: np.ndarray, k: int) -> np.ndarray:
    """Trailing mean of the last k samples (fewer at the start)."""
    if k <= 1:
        return x.astype(float)
    c = np.cumsum(np.insert(x.astype(float), 0, 0.0, axis=0), axis=0)
    idx = np.arange(1, x.shape[0] + 1)
    lo = np.maximum(idx - k, 0)
    n = (idx - lo).reshape(-1, *([1] * (x.ndim - 1)))
    return (c[idx] - c[lo]) / n


def convergence_time(t, x, tolerance: float = 0.2, start: float | None = None,
                     smooth: float = 0.0, fair_share=None, hold: float | None = None) -> float:
    """Seconds from `start` until every flow's throughput stays within `tolerance` (0.1 or
    0.2 in seed 002's sense: within 10 % / 20 %) of the fair share, to the end of the run;
    with `hold` (seconds), until the first time it stays there for `hold` seconds.

    "To the end of the run" makes a late excursion (two flows' shares wandering across the
    band's edge in steady state) decide a convergence that happened long before, and the
    answer grow with the run's length; a sustained stretch of several congestion epochs
    says when the flows got there.

    `t`: sample times (s); `x`: samples as an array of shape (len(t), n_flows) (see
    `throughput_matrix`). The fair share at each sample is the mean of the flows (equal
    division of what they get together, which is robust to background traffic), unless
    `fair_share` (a number, e.g. capacity / n) is given. `smooth` seconds of trailing
    moving average are applied first (seed 002 averages over an ensemble; a single run
    needs some smoothing). `start` defaults to the first sample at which every flow is
    running (non-zero). Returns NaN if the flows never settle (with `hold`: never for
    that long), 0 if they are within the band from `start` on (for `hold` seconds)."""
    t = _arr(t, "t")
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[0] != t.size:
        raise ValueError("convergence_time: x must have one row per time")
    if x.shape[1] < 2 and fair_share is None:
        raise ValueError("convergence_time: needs two or more flows or a fair_share")
    if start is None:
        running = np.all(x > 0, axis=1)
        if not running.any():
            return math.nan
        start = float(t[np.argmax(running)])
    dt = float(np.median(np.diff(t))) if t.size > 1 else 1.0
    xs = _moving_average(x, max(1, int(round(smooth / dt))) if smooth > 0 else 1)
    share = xs.mean(axis=1, keepdims=True) if fair_share is None else np.full((t.size, 1), float(fair_share))
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = np.all(np.abs(xs - share) <= tolerance * share, axis=1) & (share[:, 0] > 0)
    after = t >= start
    ok_after = ok[after]
    t_after = t[after]
    if hold is not None:
        # the first sample that opens a run of in-band samples lasting `hold` seconds (to
        # the last in-band sample of the run; a sample stands for the interval it ends)
        opens = np.nonzero(ok_after & np.r_[True, ~ok_after[:-1]])[0]
        bad_after = np.r_[np.nonzero(~ok_after)[0], ok_after.size]
        for i in opens:
            last = bad_after[np.searchsorted(bad_after, i)] - 1
            if t_after[last] - t_after[i] + dt >= hold:
                return float(t_after[i] - start)
        return math.nan
    if ok_after.size == 0 or not ok_after[-1]:
        return math.nan
    bad = np.nonzero(~ok_after)[0]
    if bad.size == 0:
        return 0.0
    return float(t_after[bad[-1] + 1] - start)


def congestion_epochs(loss_times, include_timeouts: bool = True, timeouts=None) -> np.ndarray:
    """Durations between consecutive congestion events of one flow (seed 000 Sec. 1: "the
    real time between two consecutive congestion events ... a congestion epoch"; seed 002:
    epoch duration against BDP). `loss_times` are the event times (e.g. one flow's rows of
    `Results.losses`); with include_timeouts=False and a boolean `timeouts` array, epochs
    that end in a timeout are dropped."""
    t = np.sort(np.asarray(loss_times, dtype=float))
    d = np.diff(t)
    if not include_timeouts and timeouts is not None:
        to = np.asarray(timeouts, dtype=bool)[np.argsort(np.asarray(loss_times, dtype=float))]
        d = d[~to[1:]]
    return d


def _step_value(ts: np.ndarray, ws: np.ndarray, at) -> np.ndarray:
    """Value of the step function (ts, ws) (each value holds from its time on) at `at`."""
    i = np.searchsorted(ts, at, side="right") - 1
    return ws[np.clip(i, 0, ts.size - 1)]


def epoch_shape(t, cwnd, loss_times, min_growth: float = 2.0) -> np.ndarray:
    """For each congestion epoch of one flow, the share of its window growth that happens in
    the first half of the epoch: g1 / (g1 + g2), with the epoch running from the trough
    after a loss (smallest cwnd before the next loss) to the next loss, g1 the growth from
    the trough to the midpoint and g2 from the midpoint to the next loss.

    Seed 000 Fig. 5 distinguishes CUBIC's TCP-friendly mode (growth linear in time like
    TCP-SACK: 0.5) from its cubic, concave profile (fast then flat: for an epoch ending at
    the plateau, W(t) = W_max - C (K - t)^3 gives g1 / (g1 + g2) = 1 - 1/8 = 0.875).
    Convex (max probing) epochs give less than 0.5; epochs that rise to W_max, dwell there
    and probe beyond give about 0.6-0.7 (seed 000 Fig. 5b). Epochs that grow by fewer than
    `min_growth` segments are skipped. `t`, `cwnd`: the flow's cwnd samples (changes or
    intervals); `loss_times`: its congestion events."""
    ts = _arr(t, "t")
    ws = _arr(cwnd, "cwnd")
    order = np.argsort(ts, kind="stable")
    ts, ws = ts[order], ws[order]
    lt = np.sort(np.asarray(loss_times, dtype=float))
    out = []
    for a, b in zip(lt[:-1], lt[1:]):
        inside = (ts > a) & (ts < b)
        if inside.sum() < 3:
            continue
        tt, ww = ts[inside], ws[inside]
        k = int(np.argmin(ww))
        t_lo, w_lo = tt[k], ww[k]
        w_hi = float(_step_value(ts, ws, np.nextafter(b, -np.inf)))
        if w_hi - w_lo < min_growth or b <= t_lo:
            continue
        w_mid = float(_step_value(ts, ws, (t_lo + b) / 2))
        out.append((w_mid - w_lo) / (w_hi - w_lo))
    return np.asarray(out, dtype=float)


def plateau_fraction(t, cwnd, loss_times, loss_windows, band: float = 0.2, flat: float = 0.03,
                     span: float = 0.1) -> float:
    """Seed 000 Fig. 4: "the curves have plateaus around W_max, which is the window size at
    the time of the last packet loss event". Over the congestion epochs of one flow (from
    the trough after a loss to the next loss), the fraction of time the window is on a
    plateau: nearly flat (over a span of `span` x the epoch it changes by less than `flat`
    x the epoch's rise) and within `band` of W_max, the window at the loss that began the
    epoch (`loss_windows`, one per loss time; `band` 0.2 admits CUBIC's fast-convergence
    plateau at (1 + beta) / 2 = 0.85 W_max).

    Linear growth (TCP) is never flat: 0. A cubic epoch W = W_max - R (1 - s)^3 over
    normalised time s in [0, 1] that ends on its plateau changes by 3 R (1 - s)^2 x 0.1 over
    a tenth of the epoch, less than 0.03 R when 1 - s < sqrt(0.1): a fraction 0.32; epochs
    that dwell at W_max before probing (concave, flat, convex) give more. NaN without a whole
    epoch."""
    ts = _arr(t, "t")
    ws = _arr(cwnd, "cwnd")
    order = np.argsort(ts, kind="stable")
    ts, ws = ts[order], ws[order]
    lt = np.asarray(loss_times, dtype=float)
    lw = np.asarray(loss_windows, dtype=float)
    if lt.size != lw.size:
        raise ValueError("plateau_fraction: one loss window per loss time")
    o = np.argsort(lt)
    lt, lw = lt[o], lw[o]
    flat_n = total_n = 0
    for a, b, w_max in zip(lt[:-1], lt[1:], lw[:-1]):
        inside = (ts > a) & (ts < b)
        if inside.sum() < 2:
            continue
        tt, ww = ts[inside], ws[inside]
        k = int(np.argmin(ww))
        t_lo = tt[k]
        length = b - t_lo
        if length <= 0:
            continue
        grid = np.linspace(t_lo, b, 201)[:-1]
        half = span * length / 2
        lo_t = np.clip(grid - half, t_lo, None)
        hi_t = np.clip(grid + half, None, np.nextafter(b, -np.inf))
        w_grid = _step_value(ts, ws, grid)
        rise = float(w_grid.max() - w_grid.min())
        if rise <= 0:
            continue
        change = np.abs(_step_value(ts, ws, hi_t) - _step_value(ts, ws, lo_t)) * (2 * half / np.maximum(hi_t - lo_t,
                                                                                                          1e-12))
        on = (change < flat * rise) & (np.abs(w_grid - w_max) <= band * w_max)
        flat_n += int(on.sum())
        total_n += grid.size
    return flat_n / total_n if total_n else math.nan


# ---- short flows --------------------------------------------------------------------------


def flow_completion_times(sizes, fcts, bins=None) -> pd.DataFrame:
    """Completion-time statistics of short flows per size class: for each bin of `sizes`
    (edges `bins`; default: one class per decade), the count, mean, median and 95th
    percentile of `fcts` (s). Seed 002 ("two identical file transfers may have very
    different completion times") and the web background of seed 000 Sec. 6.1 motivate it.
    Flows that never completed (NaN) are counted in `unfinished` and left out of the
    statistics."""
    s = np.asarray(sizes, dtype=float)
    f = np.asarray(fcts, dtype=float)
    if s.size != f.size:
        raise ValueError("flow_completion_times: sizes and fcts differ in length")
    if s.size == 0:
        return pd.DataFrame(columns=["lo", "hi", "count", "unfinished", "mean", "median", "p95"])
    if bins is None:
        lo = math.floor(math.log10(max(s.min(), 1.0)))
        hi = math.ceil(math.log10(max(s.max(), 1.0)) + 1e-12)
        bins = 10.0 ** np.arange(lo, max(hi, lo + 1) + 1)
    bins = np.asarray(bins, dtype=float)
    rows = []
    for lo, hi in zip(bins[:-1], bins[1:]):
        m = (s >= lo) & (s < hi)
        done = f[m & ~np.isnan(f)]
        rows.append({
            "lo": lo, "hi": hi, "count": int(m.sum()), "unfinished": int((m & np.isnan(f)).sum()),
            "mean": float(done.mean()) if done.size else math.nan,
            "median": float(np.median(done)) if done.size else math.nan,
            "p95": float(np.percentile(done, 95)) if done.size else math.nan,
        })
    return pd.DataFrame(rows)


# ---- helpers over Results tables ----------------------------------------------------------


def mean_throughput(flows: pd.DataFrame, t0: float = 0.0, t1: float = math.inf, by: str = "flow",
                    column: str = "goodput_bps") -> pd.Series:
    """Mean of `column` per `by` (flow or group) over samples with t0 < t <= t1. For groups,
    the per-interval values are summed over the group's flows first (the group's
    throughput), then averaged."""
    d = flows[(flows.t > t0) & (flows.t <= t1)]
    if by == "flow":
        return d.groupby("flow", observed=True)[column].mean()
    per_t = d.groupby([by, "t"], observed=True)[column].sum()
    return per_t.groupby(level=0, observed=True).mean()


def throughput_matrix(flows: pd.DataFrame, column: str = "goodput_bps", flow_ids=None) -> tuple:
    """(t, X): the sample times and a (len(t), n_flows) array of `column`, one column per
    flow (in `flow_ids` order, default all flows by id); missing samples are 0."""
    p = flows.pivot_table(index="t", columns="flow", values=column, aggfunc="sum", observed=True).fillna(0.0)
    if flow_ids is not None:
        p = p.reindex(columns=list(flow_ids), fill_value=0.0)
    return p.index.to_numpy(dtype=float), p.to_numpy(dtype=float)


def mean_spread(values) -> dict:
    """Mean, standard deviation (n - 1), min, max and count of an ensemble of values (NaN
    ignored): what the catalog plots as a line with a band."""
    a = np.asarray(values, dtype=float)
    a = a[~np.isnan(a)]
    if a.size == 0:
        return {"mean": math.nan, "std": math.nan, "min": math.nan, "max": math.nan, "n": 0}
    return {"mean": float(a.mean()), "std": float(a.std(ddof=1)) if a.size > 1 else 0.0,
            "min": float(a.min()), "max": float(a.max()), "n": int(a.size)}


def _t_central(t: float, dof: int) -> float:
    """P(|T| < t) for Student's t with an integer `dof`: the finite sums of Abramowitz and
    Stegun 26.7.3 (odd dof) and 26.7.4 (even), in theta = atan(t / sqrt(dof))."""
    theta = math.atan(t / math.sqrt(dof))
    c2 = math.cos(theta) ** 2
    if dof % 2:  # 1 + (2/3) c^2 + (2*4)/(3*5) c^4 + ... up to c^(dof-3)
        term, total = 1.0, 1.0 if dof > 1 else 0.0
        for k in range(1, (dof - 1) // 2):
            term *= 2 * k / (2 * k + 1) * c2
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    term, total = 1.0, 1.0  # 1 + (1/2) c^2 + (1*3)/(2*4) c^4 + ... up to c^(dof-2)
    for k in range(1, dof // 2):
        term *= (2 * k - 1) / (2 * k) * c2
        total += term
    return math.sin(theta) * total


def t_quantile(p: float, dof: int) -> float:
    """The `p` quantile (0.5 < p < 1) of Student's t with `dof` degrees of freedom, by
    bisection of its distribution function (t_quantile(0.975, 1) = 12.706...)."""
    lo, hi = 0.0, 1.0
    while _t_central(hi, dof) < 2 * p - 1:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_central(mid, dof) < 2 * p - 1 else (lo, mid)
    return (lo + hi) / 2


def ci95_half_width(std: float, n: int) -> float:
    """Half the width of the 95 % confidence interval of a mean of `n` independent runs with
    sample standard deviation `std` (n - 1): t(0.975, n - 1) std / sqrt(n); NaN below 2 runs."""
    return t_quantile(0.975, n - 1) * std / math.sqrt(n) if n >= 2 else math.nan
