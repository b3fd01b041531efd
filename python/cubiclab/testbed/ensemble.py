"""Ensembles for `cubiclab compare` and the agreement matrix: N runs on each side with
different seeds, and per metric a verdict on the difference of the means and on the spread.

The difference of the means (simulator less kernel) gets its 95% interval (Welch, unequal
variances); the metric *agrees* when the whole interval lies inside ± the metric's
tolerance, *differs* when it lies wholly outside, and is *undecided* otherwise: the
catalog's three verdicts (:func:`cubiclab.stats.verdict`), "holds" read as "agrees". The
tolerances (issue 13's targets): utilisation 0.02, every flow's share 0.05, loss events and
retransmissions 20%, the slow-start peak (the window at a flow's first loss) 15%, the mean
window 10%, with ECN the CE marks and ECN reductions (entries into CWR) 20%, the relative
ones of the kernel's mean.

The spread is judged the same way: the ratio of the standard deviations (simulator over
kernel) with its 95% interval from the F distribution, against a factor of
:data:`SPREAD_FACTOR` either way; spreads that both stay under 1% of the tolerance
(`ONE_TRAJECTORY`, as in the catalog: each side is one trajectory) agree whatever their
ratio.

How many runs: :data:`FIRST_RUNS` a side, then :data:`STEP_RUNS` more a side while a
metric's mean is undecided, up to :data:`MAX_RUNS` (:func:`runs_wanted`).

This module needs only numpy and :mod:`cubiclab.stats`: `scripts/agreement.py` also loads
both by path next to an older build of cubiclab, to measure that build's side with the
same yardstick.
"""

from __future__ import annotations

import math

import numpy as np

from cubiclab.stats import FAILS, HOLDS, INCONCLUSIVE, ONE_TRAJECTORY, mean_ci, sd_ratio, verdict, welch

#: metric -> (kind, tolerance): "abs" compares means directly, "rel" relative to the kernel's.
TOLERANCES = {
    "utilization": ("abs", 0.02),
    "share": ("abs", 0.05),
    "loss_events": ("rel", 0.20),
    "retransmits": ("rel", 0.20),
    "ss_peak": ("rel", 0.15),
    "cwnd_mean": ("rel", 0.10),
    "ce_marks": ("rel", 0.20),
    "ecn_reductions": ("rel", 0.20),
}
#: The matrix's words for the three verdicts.
AGREES, DIFFERS, UNDECIDED = "agrees", "differs", "undecided"
WORDS = {HOLDS: AGREES, FAILS: DIFFERS, INCONCLUSIVE: UNDECIDED}
#: The spreads agree when the ratio of the standard deviations lies within this factor.
SPREAD_FACTOR = 2.0
#: The sequential design: a first batch a side, more while a mean is undecided, a cap.
FIRST_RUNS, STEP_RUNS, MAX_RUNS = 10, 5, 20


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
    (cwnd at the flow's first loss) and `cwnd_mean[i]` (on a 10 ms grid from its start);
    where a flow negotiated ECN, CE marks and ECN reductions over all flows."""
    duration = float(res.summary["duration_s"])
    t = res.totals.set_index("flow")
    delivered = float(t["delivered_bytes"].sum())
    out = {"utilization": float(res.summary["utilization"]), "loss_events": float(len(res.losses)),
           "retransmits": float(t["retransmits"].sum())}
    if "ecn" in t and t["ecn"].any():
        out["ce_marks"] = float(t["ce_marks"].sum())
        out["ecn_reductions"] = float(t["ecn_reductions"].sum())
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
    m, half, n = mean_ci(values)
    half = 0.0 if n == 1 else half
    return m, m - half, m + half


def judge(metric: str, sim: list[float], kernel: list[float]) -> dict:
    """One metric of one scenario: both sides' means and intervals, the difference with its
    Welch interval against ± the tolerance, the ratio of the standard deviations with its
    F interval against a factor of SPREAD_FACTOR, and the verdict of each."""
    base = metric.split("[")[0]
    kind, tol = TOLERANCES[base]
    sm, slo, shi = interval(sim)
    km, klo, khi = interval(kernel)
    diff, dlo, dhi, dof = welch(sim, kernel)
    ratio, rlo, rhi = sd_ratio(sim, kernel)
    band = tol if kind == "abs" else tol * abs(km)
    if not (np.isfinite(sm) or np.isfinite(km)):
        verdict_mean = AGREES  # e.g. no loss on either side
    elif not (np.isfinite(sm) and np.isfinite(km)):
        verdict_mean = DIFFERS  # a value on one side only
    elif not np.isfinite(dlo):
        verdict_mean = UNDECIDED  # fewer than two values on a side
    else:
        verdict_mean = WORDS[verdict(dlo, dhi, -band, band)]
    finite = [np.asarray(x, dtype=float) for x in (sim, kernel)]
    ranges = [float(np.ptp(x[np.isfinite(x)])) if np.isfinite(x).any() else 0.0 for x in finite]
    if max(ranges) < ONE_TRAJECTORY * band or max(ranges) == 0:
        verdict_spread = AGREES  # neither side's seeds move it: one trajectory each
    elif math.isnan(rlo):
        verdict_spread = UNDECIDED
    else:
        verdict_spread = WORDS[verdict(rlo, rhi, 1 / SPREAD_FACTOR, SPREAD_FACTOR)]
    rel = (sm - km) / km if km else (0.0 if sm == km else math.inf)
    return {"metric": metric, "sim_mean": sm, "sim_lo": slo, "sim_hi": shi, "kernel_mean": km,
            "kernel_lo": klo, "kernel_hi": khi, "diff": sm - km, "diff_lo": dlo, "diff_hi": dhi, "dof": dof,
            "rel_diff": rel, "kind": kind, "tolerance": tol, "band": band, "verdict": verdict_mean,
            "agrees": verdict_mean == AGREES, "sd_ratio": ratio, "sd_ratio_lo": rlo, "sd_ratio_hi": rhi,
            "spread": verdict_spread, "n_sim": len(sim), "n_kernel": len(kernel)}


def compare_runs(sim_runs: list[dict], kernel_runs: list[dict]) -> list[dict]:
    """Judge every metric the runs share; order: scenario totals, then per flow."""
    keys = [k for k in sim_runs[0] if all(k in r for r in sim_runs + kernel_runs)]
    return [judge(k, [r[k] for r in sim_runs], [r[k] for r in kernel_runs]) for k in keys]


def runs_wanted(verdicts: list[dict], runs: int, max_runs: int = MAX_RUNS, step: int = STEP_RUNS) -> int:
    """Runs a side the sequential design asks for once `runs` a side are judged
    (`verdicts`): `runs` when every mean is decided or the cap `max_runs` is reached, else
    `step` more (at most up to the cap)."""
    if runs >= max_runs or all(v["verdict"] != UNDECIDED for v in verdicts):
        return runs
    return min(runs + step, max_runs)
