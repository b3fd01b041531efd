"""Ensembles for `cubiclab compare`: N runs on each side with different seeds, every
metric's mean with its 95% interval, and per metric a verdict.

A metric *agrees* when the two intervals overlap or the difference of the means is inside
the metric's tolerance (issue 13's targets): utilisation within 0.02, every flow's share
within 0.05, loss events and retransmissions within 20%, the slow-start peak (the window
at a flow's first loss) within 15%, the mean window within 10%.

This module needs only numpy: `scripts/agreement.py` also loads it by path next to an
older build of cubiclab, to measure that build's side with the same yardstick.
"""

from __future__ import annotations

import math

import numpy as np

#: metric -> (kind, tolerance): "abs" compares means directly, "rel" relative to the kernel's.
TOLERANCES = {
    "utilization": ("abs", 0.02),
    "share": ("abs", 0.05),
    "loss_events": ("rel", 0.20),
    "retransmits": ("rel", 0.20),
    "ss_peak": ("rel", 0.15),
    "cwnd_mean": ("rel", 0.10),
}

# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def cwnd_on_grid(res, flow: int, grid: np.ndarray) -> np.ndarray:
    """Flow `flow`'s cwnd (changes, else samples) held constant on `grid` (s); NaN before it starts."""
    d = res.cwnd[res.cwnd.flow == flow] if len(res.cwnd) else res.flows[res.flows.flow == flow]
    if not len(d):
        return np.full(len(grid), np.nan)
    t = d.t.to_numpy()
    idx = np.searchsorted(t, grid, side="right") - 1
    v = d.cwnd.to_numpy().astype(float)[np.clip(idx, 0, len(d) - 1)]
    return np.where(idx >= 0, v, np.nan)


def run_metrics(res) -> dict[str, float]:
    """The metrics of one run (simulator or testbed results, same shape): utilisation,
    loss events and retransmissions over all flows, and per flow `share[i]`, `ss_peak[i]`
    (cwnd at the flow's first loss) and `cwnd_mean[i]` (on a 10 ms grid from its start)."""
    duration = float(res.summary["duration_s"])
    t = res.totals.set_index("flow")
    delivered = float(t["delivered_bytes"].sum())
    out = {"utilization": float(res.summary["utilization"]), "loss_events": float(len(res.losses)),
           "retransmits": float(t["retransmits"].sum())}
    grid = np.arange(0.01, duration, 0.01)
    for flow, r in t.iterrows():
        out[f"share[{flow}]"] = float(r["delivered_bytes"] / delivered) if delivered else math.nan
        lo = res.losses[res.losses.flow == flow].sort_values("t")
        out[f"ss_peak[{flow}]"] = float(lo.cwnd.iloc[0]) if len(lo) else math.nan
        cw = cwnd_on_grid(res, flow, grid)
        out[f"cwnd_mean[{flow}]"] = float(np.nanmean(cw)) if np.isfinite(cw).any() else math.nan
    return out


def interval(values) -> tuple[float, float, float]:
    """Mean and 95% confidence interval (Student's t) of `values`, NaNs left out; a single
    value has a zero-width interval."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if not len(v):
        return math.nan, math.nan, math.nan
    m = float(v.mean())
    if len(v) < 2:
        return m, m, m
    half = _T95[min(len(v) - 1, len(_T95)) - 1] * float(v.std(ddof=1)) / math.sqrt(len(v))
    return m, m - half, m + half


def judge(metric: str, sim: list[float], kernel: list[float]) -> dict:
    """One metric of one scenario: both sides' intervals, the difference, and the verdict."""
    base = metric.split("[")[0]
    kind, tol = TOLERANCES[base]
    sm, slo, shi = interval(sim)
    km, klo, khi = interval(kernel)
    diff = sm - km
    if not (np.isfinite(sm) and np.isfinite(km)):
        agrees = not np.isfinite(sm) and not np.isfinite(km)  # e.g. no loss on either side
        rel = math.nan
    else:
        overlap = slo <= khi and klo <= shi
        rel = diff / km if km else (0.0 if diff == 0 else math.inf)
        inside = abs(diff) <= tol if kind == "abs" else abs(rel) <= tol
        agrees = bool(overlap or inside)
    return {"metric": metric, "sim_mean": sm, "sim_lo": slo, "sim_hi": shi, "kernel_mean": km,
            "kernel_lo": klo, "kernel_hi": khi, "diff": diff, "rel_diff": rel, "kind": kind,
            "tolerance": tol, "agrees": agrees, "n_sim": len(sim), "n_kernel": len(kernel)}


def compare_runs(sim_runs: list[dict], kernel_runs: list[dict]) -> list[dict]:
    """Judge every metric the runs share; order: scenario totals, then per flow."""
    keys = [k for k in sim_runs[0] if all(k in r for r in sim_runs + kernel_runs)]
    return [judge(k, [r[k] for r in sim_runs], [r[k] for r in kernel_runs]) for k in keys]
