"""Default plots (matplotlib), written to files.

Headless outside a notebook: the file-writing backend is chosen unless one was chosen
already (a notebook's inline backend, or MPLBACKEND), so importing this module in Jupyter
keeps its figures inline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

if "ipykernel" not in sys.modules and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cubiclab.io import atomic_path  # noqa: E402


def save(fig, path: Path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _outside_legend(ax, **kw) -> None:
    """The legend to the right of the axes, where it hides no data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)


def plot_replay(frames: dict, path: Path, title: str = "") -> Path:
    """cwnd against time for each replayed algorithm."""
    fig, ax = plt.subplots(figsize=(9, 4))
    for name, df in frames.items():
        ax.plot(df.time_us / 1e6, df.cwnd, label=name, lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (segments)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _outside_legend(ax)
    return save(fig, path)


def plot_cwnd(results, path: Path, title: str | None = None) -> Path:
    """cwnd against time per flow, in the style of seed 000 Figs. 4-6."""
    df = results.cwnd if len(results.cwnd) else results.flows
    fig, ax = plt.subplots(figsize=(10, 4.5))
    groups = results.totals.set_index("flow")["group"]
    colors = {g: f"C{i}" for i, g in enumerate(dict.fromkeys(groups))}
    for flow, d in df.groupby("flow"):
        g = groups[flow]
        ax.plot(d.t, d.cwnd, lw=0.8, color=colors[g], alpha=0.85,
                label=g if flow == groups[groups == g].index[0] else None,
                drawstyle="steps-post")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (packets)")
    ax.set_title(title or getattr(results.scenario, "name", ""))
    ax.grid(alpha=0.3)
    _outside_legend(ax)
    return save(fig, path)


def throughput_series(results, bin_s: float = 1.0):
    """Each flow's throughput at the bottleneck's output, in bits/s per bin of `bin_s`
    seconds: the flow's bytes that finished serialization on the bottleneck in the bin
    (retransmissions included), so no flow exceeds the link rate. (Goodput, the payload
    that became in order at the receiver, is not bounded by it: filling a hole releases
    a window's worth at once.) Columns: t (end of the bin, s), flow, group, throughput_bps."""
    f = results.flows
    interval = float(f.t.diff()[f.t.diff() > 0].min()) if len(f) > 1 else bin_s
    per_bin = max(1, round(bin_s / interval))
    step = per_bin * interval
    # Interval k covers (t_k - interval, t_k]; bin b gathers the intervals ending in (b*step, (b+1)*step].
    b = ((f.t - 1e-9) // step).astype(int)
    bits = f.throughput_bps * interval
    out = (bits.groupby([b, f.flow]).sum() / step).rename("throughput_bps").reset_index()
    out.columns = ["bin", "flow", "throughput_bps"]
    out["t"] = ((out.pop("bin") + 1) * step).round(9)
    groups = results.totals.set_index("flow")["group"]
    out["group"] = groups.reindex(out.flow).to_numpy()
    return out[["t", "flow", "group", "throughput_bps"]]


def _varies(results) -> bool:
    """Whether the run's bottleneck rate follows a schedule (`bottleneck.schedule`)."""
    return bool(getattr(getattr(results.scenario, "bottleneck", None), "schedule", None))


def group_shares(results, bin_s: float = 1.0):
    """Each group's share of the bottleneck per bin: the group's throughput at the
    bottleneck's output over the link rate (with a rate schedule, over all flows'
    throughput in the bin: their shares of what they got). Columns: t, group, share, flows
    (how many of the group's flows had sent anything by then)."""
    tp = throughput_series(results, bin_s)
    rate = tp.groupby("t").throughput_bps.transform("sum") if _varies(results) else results.summary["rate_bps"]
    tp["of"] = rate
    started = tp[tp.throughput_bps > 0].groupby("flow").t.min()
    tp["active"] = tp.t >= tp.flow.map(started).fillna(float("inf"))
    g = tp.groupby(["t", "group"], observed=True).agg(bps=("throughput_bps", "sum"), of=("of", "first"),
                                                      flows=("active", "sum"))
    g = g.reset_index()
    g["share"] = (g.pop("bps") / g.pop("of")).fillna(0.0)
    return g[["t", "group", "share", "flows"]]


def plot_throughput(results, path: Path, bin_s: float = 1.0) -> Path:
    """Two panels: each flow's throughput at the bottleneck's output (Mbit/s, mean per
    `bin_s`) with the link's total, and each group's share of the link over time."""
    tp = throughput_series(results, bin_s)
    shares = group_shares(results, bin_s)
    rate = results.summary["rate_bps"]
    groups = list(dict.fromkeys(results.totals["group"]))
    colors = {g: f"C{i}" for i, g in enumerate(groups)}
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    first = set()
    for flow, d in tp.groupby("flow"):
        g = d.group.iloc[0]
        ax.plot(d.t, d.throughput_bps / 1e6, lw=0.8, color=colors[g], alpha=0.8,
                label=None if g in first else f"{g} (one line per flow)")
        first.add(g)
    total = tp.groupby("t").throughput_bps.sum()
    ax.plot(total.index, total / 1e6, color="k", lw=1, alpha=0.6, label="all flows")
    if not _varies(results):
        ax.axhline(rate / 1e6, color="k", lw=0.8, ls=":", label="link rate")
        ax.set_ylim(0, rate / 1e6 * 1.08)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"throughput at the bottleneck (Mbit/s, {bin_s:g} s mean)")
    ax.set_title("per flow")
    ax.grid(alpha=0.3)
    for g, d in shares.groupby("group", observed=True):
        n = int(d.flows.max())
        ax2.plot(d.t, d.share, lw=1.3, color=colors[g], label=f"{g} ({n} flow{'s' * (n != 1)})")
    ax2.set_ylim(0, 1.05)
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("share of what the flows got" if _varies(results) else "share of the link")
    ax2.set_title("per group")
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    # One legend for both panels, right of them.
    handles, labels = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    fig.legend(handles + h2, labels + [f"share: {x}" for x in l2], loc="upper left", bbox_to_anchor=(1.0, 0.95),
               fontsize="small")
    return save(fig, path)


def plot_queue(results, path: Path) -> Path:
    """Bottleneck queue (packets) and drops per interval."""
    fig, ax = plt.subplots(figsize=(10, 3.5))
    ax.plot(results.link.t, results.link.queue_packets, lw=0.8, label="queue (packets)")
    ax.bar(results.link.t, results.link.drops, width=results.link.t.diff().median() or 0.1,
           color="C3", alpha=0.5, label="drops per interval")
    ax.set_xlabel("time (s)")
    ax.grid(alpha=0.3)
    _outside_legend(ax)
    return save(fig, path)


def plot_run(results, outdir: Path) -> list[Path]:
    """The standard figures of a run: cwnd.png, throughput.png (per flow and per group),
    queue.png."""
    outdir = Path(outdir)
    return [plot_cwnd(results, outdir / "cwnd.png"), plot_throughput(results, outdir / "throughput.png"),
            plot_queue(results, outdir / "queue.png")]
