"""Measurements over one run's Results that several entries share."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cubiclab import metrics, units


def seconds(value) -> float:
    return units.parse_time(value, "time") / 1e9


def duration_s(res) -> float:
    return float(res.summary["duration_s"])


def capacity(res) -> float:
    return float(res.summary["rate_bps"])


def flow_means(res, t0: float = 0.0, t1: float = math.inf, column: str = "throughput_bps") -> pd.Series:
    """Mean throughput (bits/s on the wire by default) of each flow over (t0, t1]."""
    return metrics.mean_throughput(res.flows, t0, t1, by="flow", column=column)


def group_means(res, t0: float = 0.0, t1: float = math.inf, column: str = "throughput_bps") -> dict:
    """Mean throughput of each flow group (the sum over its flows) over (t0, t1]."""
    s = metrics.mean_throughput(res.flows, t0, t1, by="group", column=column)
    return {str(k): float(v) for k, v in s.items()}


def group_flow_ids(res, group: str) -> list[int]:
    t = res.totals
    return [int(f) for f in t.flow[t.group.astype(str) == group]]


def shares(res, t0: float = 0.0, t1: float = math.inf) -> dict:
    """Fractions of the link per group, 'other' for traffic that is not a measured flow
    (background), 'unused' for the idle remainder."""
    g = group_means(res, t0, t1)
    cap = capacity(res)
    out = metrics.bandwidth_shares(g, cap)
    util = metrics.link_utilization(res.link, t0, t1)
    flows_total = sum(v for k, v in out.items() if k != "unused")
    out["other"] = max(0.0, util - flows_total)
    out["unused"] = max(0.0, 1.0 - util)
    out["utilization"] = util
    return out


def converged_after(res, ids, start: float, hold: float, tol: float = 0.2) -> float:
    """Seconds from `start` until the flows `ids` are within `tol` of their mean (10 s
    smoothing) for `hold` seconds on end (metrics.convergence_time): the catalog's one
    definition of convergence (staying in the band "to the end of the run" grows with the
    run's length); never counts as the run's remaining length (a lower bound)."""
    t, X = metrics.throughput_matrix(res.flows, "throughput_bps", ids)
    c = metrics.convergence_time(t, X, tol, start=start, smooth=10.0, hold=hold)
    return duration_s(res) - start if math.isnan(c) else c


def convergence(res, ids, start: float, hold: float) -> tuple[float, bool]:
    """`converged_after`, and whether the flows never converged (the time is then the rest
    of the run: a lower bound, which a claim takes as `claims.Censored`)."""
    c = converged_after(res, ids, start, hold)
    return c, c >= duration_s(res) - start


def loss_times(res, flow: int, timeouts: bool = False) -> np.ndarray:
    lo = res.losses
    if lo.empty:
        return np.array([])
    d = lo[lo.flow == flow]
    if not timeouts:
        d = d[~d.timeout.astype(bool)]
    return d.t.to_numpy(dtype=float)


def loss_events(res, flow: int) -> tuple[np.ndarray, np.ndarray]:
    """Times and windows (cwnd before the reduction) of a flow's congestion events that were
    not timeouts."""
    lo = res.losses
    if lo.empty:
        return np.array([]), np.array([])
    d = lo[(lo.flow == flow) & ~lo.timeout.astype(bool)]
    return d.t.to_numpy(dtype=float), d.cwnd.to_numpy(dtype=float)


def cwnd_trace(res, flow: int) -> tuple[np.ndarray, np.ndarray]:
    """The flow's cwnd samples: every change when recorded, else the interval samples."""
    df = res.cwnd if len(res.cwnd) else res.flows
    d = df[df.flow == flow]
    return d.t.to_numpy(dtype=float), d.cwnd.to_numpy(dtype=float)


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (NaN with fewer than two usable points)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def growth_per_rtt(algorithm: str, w: int, rtts: int = 3, rtt_ms: float = 100.0) -> float:
    """Packets per RTT an algorithm adds in congestion avoidance from a window of `w`
    (ssthresh = w, no loss yet), averaged over `rtts` round trips of one ACK per packet,
    through cubiclab.replay."""
    from cubiclab.replay import replay

    rows, t, cwnd = [], 0.0, float(w)
    for _ in range(rtts):  # one RTT's ACKs spread evenly over the RTT, at the window of its start
        n = int(cwnd)
        step = rtt_ms * 1000 / n
        rows += [(int(t + k * step), "ack", 1, int(rtt_ms * 1000)) for k in range(n)]
        t += rtt_ms * 1000
        cwnd *= 1.0 + 1.0 / max(cwnd, 1.0)  # a guess of the next window; only spacing depends on it
    trace = pd.DataFrame(rows, columns=["time_us", "event", "acked", "rtt_us"])
    out = replay(algorithm, trace, initial_cwnd=w, initial_ssthresh=w)
    return (float(out.cwnd.iloc[-1]) - w) / rtts


def select_row(rows: pd.DataFrame, **tags) -> pd.Series:
    """The one row of `rows` (one seed's runs) with these tags."""
    m = np.ones(len(rows), dtype=bool)
    for k, v in tags.items():
        m &= (rows[k] == v).to_numpy()
    if m.sum() != 1:
        raise KeyError(f"expected one run tagged {tags}, found {int(m.sum())}")
    return rows[m].iloc[0]


def plateau_in(res, flow, t0, t1) -> float:
    t, w = cwnd_trace_window(res, flow, t0, t1)
    return metrics.plateau_fraction(t, w, *loss_events_window(res, flow, t0, t1)) if t.size else math.nan


def cwnd_trace_window(res, flow, t0, t1):
    t, w = cwnd_trace(res, flow)
    keep = (t > t0) & (t <= t1)
    return t[keep], w[keep]


def loss_events_window(res, flow, t0, t1):
    t, w = loss_events(res, flow)
    keep = (t > t0) & (t <= t1)
    return t[keep], w[keep]
