"""The simulator and the testbed on the same scenario, side by side, with the differences
as numbers: one run each (:func:`compare`), or an ensemble of runs with different seeds on
each side and a verdict per metric (:func:`compare_ensemble`, see
:mod:`cubiclab.testbed.ensemble`).

Per flow: mean goodput, share, loss events (and their mean spacing), retransmissions, mean
and peak cwnd, mean smoothed RTT; over time, the cwnd traces are put on a common 10 ms grid
and their mean absolute difference is stated relative to the mean cwnd. Overall:
utilisation, goodput utilisation, bottleneck drops, Jain's fairness index; with ECN, per flow
and overall the CE marks its data got and its ECN reductions (entries into CWR).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cubiclab.io import atomic_write_text
from cubiclab.scenario import Scenario, as_on_testbed
from cubiclab.testbed.ensemble import FIRST_RUNS, compare_runs, cwnd_on_grid, run_metrics, runs_wanted


@dataclass
class Comparison:
    scenario: Scenario
    sim: object
    testbed: object
    flows: pd.DataFrame  # one row per flow, columns <metric>_sim, <metric>_testbed, diffs
    overall: dict

    def to_dict(self) -> dict:
        return {"scenario": self.scenario.name, "overall": self.overall,
                "flows": json.loads(self.flows.to_json(orient="records"))}


def _jain(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if len(x) and (x ** 2).sum() > 0 else float("nan")


def _per_flow(res, duration: float) -> pd.DataFrame:
    t = res.totals.set_index("flow")
    grid = np.arange(0.01, duration, 0.01)
    out = []
    delivered = float(t["delivered_bytes"].sum())
    for flow, r in t.iterrows():
        losses = res.losses[res.losses.flow == flow].t.to_numpy()
        cw = cwnd_on_grid(res, flow, grid)
        f = res.flows[res.flows.flow == flow]
        out.append({
            "flow": int(flow), "group": r["group"], "algorithm": r["algorithm"],
            "goodput_mbps": r["mean_goodput_bps"] / 1e6,
            "share": r["delivered_bytes"] / delivered if delivered else np.nan,
            "loss_events": int(len(losses)),
            "loss_interval_s": float(np.diff(losses).mean()) if len(losses) > 1 else np.nan,
            "retransmits": int(r["retransmits"]),
            "cwnd_mean": float(np.nanmean(cw)) if np.isfinite(cw).any() else np.nan,
            "cwnd_max": float(np.nanmax(cw)) if np.isfinite(cw).any() else np.nan,
            "srtt_ms": float(f.srtt_ms.mean()) if len(f) else np.nan,
            "ce_marks": int(r.get("ce_marks", 0)), "ecn_reductions": int(r.get("ecn_reductions", 0)),
        })
    return pd.DataFrame(out)


def compare(scenario: Scenario | str, progress: bool = False, **testbed_kw) -> Comparison:
    """Simulate `scenario` and run it on the testbed; return both and their differences."""
    from cubiclab.simulate import simulate
    from cubiclab.testbed.run import MAX_DURATION_S, plan, testbed

    if isinstance(scenario, str):
        scenario = Scenario.load(scenario)
    sc = scenario.replace()
    sc.record.cwnd = "changes"
    planned = plan(sc, testbed_kw.get("max_duration", MAX_DURATION_S))  # the testbed's checks first
    sim = simulate(sc)
    tb = testbed(sc, progress=progress, planned=planned, **testbed_kw)
    duration = sim.summary["duration_s"]
    a, b = _per_flow(sim, duration), _per_flow(tb, duration)
    m = a.merge(b, on=["flow", "group", "algorithm"], suffixes=("_sim", "_testbed"))
    for c in ("goodput_mbps", "cwnd_mean", "loss_events", "srtt_ms"):
        m[f"{c}_diff"] = m[f"{c}_testbed"] - m[f"{c}_sim"]
    m["share_diff"] = m["share_testbed"] - m["share_sim"]
    grid = np.arange(0.01, duration, 0.01)
    mad = []
    for flow in m.flow:
        x, y = cwnd_on_grid(sim, flow, grid), cwnd_on_grid(tb, flow, grid)
        ok = np.isfinite(x) & np.isfinite(y)
        mad.append(float(np.abs(x[ok] - y[ok]).mean() / max(y[ok].mean(), 1e-9)) if ok.any() else np.nan)
    m["cwnd_mean_abs_diff_rel"] = mad
    ss, ts = sim.summary, tb.summary
    overall = {
        "utilization_sim": ss["utilization"], "utilization_testbed": ts["utilization"],
        "goodput_utilization_sim": ss["goodput_utilization"], "goodput_utilization_testbed": ts["goodput_utilization"],
        "loss_events_sim": ss["loss_events"], "loss_events_testbed": ts["loss_events"],
        "bottleneck_drops_sim": ss["bottleneck_drops"], "bottleneck_drops_testbed": ts["bottleneck_drops"],
        "ce_marks_sim": int(m["ce_marks_sim"].sum()), "ce_marks_testbed": int(m["ce_marks_testbed"].sum()),
        "ecn_reductions_sim": int(m["ecn_reductions_sim"].sum()),
        "ecn_reductions_testbed": int(m["ecn_reductions_testbed"].sum()),
        "jain_sim": _jain(sim.totals.mean_goodput_bps), "jain_testbed": _jain(tb.totals.mean_goodput_bps),
        "group_shares_sim": ss["group_shares"], "group_shares_testbed": ts["group_shares"],
        "testbed_peak_queue_packets": ts["peak_queue_packets"], "buffer": ts["buffer"],
        "testbed_cwnd_source": ts["cwnd_source"],
        "emulator_late_p99_us": ts["emulator"].get("late_p99_us"),
        "emulator_late_max_ms": ts["emulator"].get("late_max_ns", 0) / 1e6,
    }
    return Comparison(scenario, sim, tb, m, overall)


@dataclass
class EnsembleComparison:
    scenario: Scenario
    sim_runs: list  # run_metrics() of each simulator run, seeds seed, seed + 1, ...
    kernel_runs: list  # the same for the testbed
    verdicts: pd.DataFrame  # one row per metric: both intervals, the difference's, the sd ratio's, verdicts
    sim: object = None  # the first run of each side, for pictures
    testbed: object = None

    @property
    def agrees(self) -> bool:
        """Every metric's mean agrees."""
        return bool(self.verdicts.agrees.all())

    def to_dict(self) -> dict:
        return {"scenario": self.scenario.name, "sim_runs": self.sim_runs, "kernel_runs": self.kernel_runs,
                "verdicts": json.loads(self.verdicts.to_json(orient="records"))}


def seeds(scenario: Scenario, runs: int) -> list[int]:
    """The seeds of an ensemble: the scenario's, then the next ones."""
    return [scenario.seed + k for k in range(runs)]


def compare_ensemble(scenario: Scenario | str, runs: int = FIRST_RUNS, max_runs: int | None = None,
                     progress: bool = False, kernel_runs: list | None = None, **testbed_kw) -> EnsembleComparison:
    """`runs` simulator and `runs` testbed runs of `scenario` with seeds `seed, seed + 1, ...`
    (start jitter and random loss differ; the simulator's hosts' timing noise and its
    receivers' reads are the testbed's unless the scenario sets them,
    :func:`cubiclab.scenario.as_on_testbed`), then, while a metric's mean is undecided, more
    runs a side up to `max_runs` (default `runs`: a fixed design; see
    :func:`cubiclab.testbed.ensemble.runs_wanted`); every metric judged on its mean and its
    spread. `kernel_runs` (metrics of earlier testbed runs) skips the testbed, and fixes the
    number of runs to theirs."""
    from cubiclab.simulate import simulate
    from cubiclab.testbed.run import MAX_DURATION_S, plan, testbed

    if isinstance(scenario, str):
        scenario = Scenario.load(scenario)
    max_runs = runs if max_runs is None else max_runs
    if runs < 2 or max_runs < runs:
        raise ValueError(f"runs is {runs}, max_runs {max_runs}; allowed: 2 <= runs <= max_runs "
                         "(an interval needs two runs a side)")
    sc = scenario.replace()
    sc.record.cwnd = "changes"
    sim_sc = as_on_testbed(sc)
    sim_first = tb_first = None
    sim_runs = []
    given = kernel_runs is not None
    if given:
        runs = max_runs = len(kernel_runs)
    else:
        # Every run's plan (the testbed's checks) before anything runs.
        max_duration = testbed_kw.get("max_duration", MAX_DURATION_S)
        plans = [plan(sc.replace(seed=seed), max_duration) for seed in seeds(sc, max_runs)]
        kernel_runs = []
    n = runs
    while True:
        for seed in seeds(sc, n)[len(sim_runs):]:
            res = simulate(sim_sc.replace(seed=seed))
            sim_first = sim_first or res
            sim_runs.append(run_metrics(res))
        if not given:
            for p in plans[len(kernel_runs):n]:
                res = testbed(p.scenario, progress=progress, planned=p, **testbed_kw)
                tb_first = tb_first or res
                kernel_runs.append(run_metrics(res))
        verdicts = compare_runs(sim_runs, kernel_runs)
        more = runs_wanted(verdicts, n, max_runs)
        if more == n:
            break
        n = more
    return EnsembleComparison(scenario, sim_runs, kernel_runs, pd.DataFrame(verdicts), sim_first, tb_first)


def format_ensemble(c: EnsembleComparison) -> str:
    """One line per metric: sim mean [95% interval] / kernel mean [interval]; the
    difference's interval and its verdict; the ratio of the standard deviations (sim /
    kernel) with its interval and its verdict."""
    lines = [f"{c.scenario.name}: {len(c.sim_runs)} simulator and {len(c.kernel_runs)} kernel runs; "
             "difference of the means (Welch 95%) against ± the tolerance, sd ratio (F 95%) against a factor 2"]
    for r in c.verdicts.to_dict("records"):
        lines.append(f"  {r['metric']:14s} sim {r['sim_mean']:10.3f} [{r['sim_lo']:.3f}, {r['sim_hi']:.3f}]"
                     f"  kernel {r['kernel_mean']:10.3f} [{r['kernel_lo']:.3f}, {r['kernel_hi']:.3f}]"
                     f"  diff [{r['diff_lo']:.3g}, {r['diff_hi']:.3g}] vs ±{r['band']:.3g} {r['verdict']:9s}"
                     f"  sd ratio {r['sd_ratio']:.2f} [{r['sd_ratio_lo']:.2f}, {r['sd_ratio_hi']:.2f}] {r['spread']}")
    return "\n".join(lines)


def plot_compare(c: Comparison, path: Path) -> Path:
    """cwnd overlaid (simulator dashed, testbed solid), goodput per flow, queue, shares."""
    import matplotlib.pyplot as plt

    from cubiclab.plots import save

    sim, tb = c.sim, c.testbed
    fig, axes = plt.subplots(4, 1, figsize=(11, 12), gridspec_kw={"height_ratios": [3, 2, 1.5, 1.2]})
    ax = axes[0]
    for flow in c.flows.flow:
        g = c.flows.loc[c.flows.flow == flow, "group"].iloc[0]
        col = f"C{flow % 10}"
        d = sim.cwnd[sim.cwnd.flow == flow]
        ax.plot(d.t, d.cwnd, color=col, lw=0.8, ls="--", alpha=0.8, drawstyle="steps-post", label=f"{flow} {g} sim")
        d = tb.cwnd[tb.cwnd.flow == flow]
        ax.plot(d.t, d.cwnd, color=col, lw=0.8, alpha=0.9, drawstyle="steps-post", label=f"{flow} {g} kernel")
        for res, mk in ((sim, "v"), (tb, "^")):
            lo = res.losses[res.losses.flow == flow]
            ax.plot(lo.t, lo.cwnd, mk, color=col, ms=4, alpha=0.8, ls="none")
    ax.set_ylabel("cwnd (packets)")
    ax.set_title(f"{c.scenario.name}: simulator (dashed, ▽ loss) vs Linux {tb.summary.get('kernel', '')} (solid, △ loss)")
    ax.legend(fontsize="small", ncol=2, loc="upper left")
    ax.grid(alpha=0.3)
    ax = axes[1]
    for flow in c.flows.flow:
        col = f"C{flow % 10}"
        d = sim.flows[sim.flows.flow == flow]
        ax.plot(d.t, d.goodput_bps / 1e6, color=col, ls="--", lw=0.8)
        d = tb.flows[tb.flows.flow == flow]
        ax.plot(d.t, d.goodput_bps / 1e6, color=col, lw=0.8)
    ax.set_ylabel("goodput (Mbit/s)")
    ax.grid(alpha=0.3)
    ax = axes[2]
    ax.plot(sim.link.t, sim.link.queue_packets, ls="--", lw=0.8, color="k", label="sim")
    ax.plot(tb.link.t, tb.link.queue_packets, lw=0.8, color="C3", label="testbed")
    ax.set_ylabel("queue (packets)")
    ax.set_xlabel("time (s)")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    ax = axes[3]
    x = np.arange(len(c.flows))
    ax.bar(x - 0.2, c.flows.share_sim, 0.4, label="sim", color="0.6")
    ax.bar(x + 0.2, c.flows.share_testbed, 0.4, label="testbed", color="C0")
    ax.set_xticks(x, [f"{r.flow} {r.group}" for r in c.flows.itertuples()])
    ax.set_ylabel("share")
    o = c.overall
    ax.set_title(f"utilisation sim {o['utilization_sim']:.3f} / testbed {o['utilization_testbed']:.3f}; "
                 f"loss events {o['loss_events_sim']} / {o['loss_events_testbed']}", fontsize="small")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return save(fig, path)


def write(c: Comparison, outdir: Path, fmt: str = "parquet", plots: bool = True) -> list[Path]:
    from cubiclab.plots import plot_run

    outdir = Path(outdir)
    written = c.sim.save(outdir / "sim", fmt) + c.testbed.save(outdir / "testbed", fmt)
    written.append(atomic_write_text(outdir / "compare.json", json.dumps(c.to_dict(), indent=2, default=float) + "\n"))
    written.append(atomic_write_text(outdir / "compare.csv", c.flows.to_csv(index=False)))
    if plots:
        written += plot_run(c.sim, outdir / "sim") + plot_run(c.testbed, outdir / "testbed")
        written.append(plot_compare(c, outdir / "compare.png"))
    return written


def format_table(c: Comparison) -> str:
    cols = [("goodput_mbps", "goodput Mb/s", "{:.3f}"), ("share", "share", "{:.3f}"),
            ("loss_events", "loss ev", "{:.0f}"), ("loss_interval_s", "loss gap s", "{:.2f}"),
            ("cwnd_mean", "mean cwnd", "{:.1f}"), ("cwnd_max", "max cwnd", "{:.0f}"), ("srtt_ms", "srtt ms", "{:.1f}")]
    lines = [f"{'flow':18s} " + " ".join(f"{h:>21s}" for _, h, _ in cols) + "   |cwnd diff|/cwnd"]
    for r in c.flows.to_dict("records"):
        cells = []
        for k, _, fmt in cols:
            a, b = r[f"{k}_sim"], r[f"{k}_testbed"]
            cells.append(f"{fmt.format(a):>10s}/{fmt.format(b):<10s}")
        lines.append(f"{str(r['flow']) + ' ' + str(r['group']):18s} " + " ".join(cells)
                     + f"   {r['cwnd_mean_abs_diff_rel']:.3f}")
    o = c.overall
    lines.append(f"(sim/testbed) utilisation {o['utilization_sim']:.3f}/{o['utilization_testbed']:.3f}, "
                 f"goodput {o['goodput_utilization_sim']:.3f}/{o['goodput_utilization_testbed']:.3f}, "
                 f"drops {o['bottleneck_drops_sim']}/{o['bottleneck_drops_testbed']}, "
                 f"loss events {o['loss_events_sim']}/{o['loss_events_testbed']}, "
                 f"Jain {o['jain_sim']:.3f}/{o['jain_testbed']:.3f}")
    if o["ce_marks_sim"] or o["ce_marks_testbed"] or o["ecn_reductions_sim"] or o["ecn_reductions_testbed"]:
        lines.append(f"(sim/testbed) CE marks {o['ce_marks_sim']}/{o['ce_marks_testbed']}, "
                     f"ECN reductions {o['ecn_reductions_sim']}/{o['ecn_reductions_testbed']}")
    return "\n".join(lines)
