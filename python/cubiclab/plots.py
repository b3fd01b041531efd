"""Default plots (matplotlib), written to files: the figures of a run a paper can use
(axes with units, a colour per flow, the steady state readable past slow start's peak) in
time and memory bounded by the run's size (`plot_memory_bytes`).

Headless outside a notebook: the file-writing backend is chosen unless one was chosen
already (a notebook's inline backend, or MPLBACKEND), so importing this module in Jupyter
keeps its figures inline."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import matplotlib

if "ipykernel" not in sys.modules and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from cubiclab import _core  # noqa: E402
from cubiclab.io import atomic_path  # noqa: E402
from cubiclab.scenario import compiled_links  # noqa: E402

#: Points a line keeps at most: a figure 10 inches wide at 120 dpi has 1200 pixel columns,
#: and min/max decimation (`thin`) keeps each column's extremes, so nothing visible is lost.
MAX_POINTS = 4000
#: Bytes plotting needs per row of the largest table (flows): the per-flow copies of its
#: time and value columns and the binned throughput's intermediates (tracemalloc's peak grows
#: by 160 bytes a row from 0.1 to 1 M rows, tests/test_plots.py holds it under this), and
#: what a figure holds whatever the run's size (its thinned lines, the Agg canvas).
PLOT_BYTES_PER_ROW = 192
PLOT_FIXED_BYTES = 32 << 20


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
        ax.plot(df.t, df.cwnd, label=name, lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (segments)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _outside_legend(ax)
    return save(fig, path)


def _varies(results) -> bool:
    """Whether the run's bottleneck rate follows a schedule (`bottleneck.schedule`)."""
    return bool(compiled_links(results.scenario.compile())[0].get("schedule"))

def thin(x, y, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most `max_points` points of the line (x, y), x ascending: the smallest and the
    largest y of each of max_points / 2 buckets of consecutive points, in x order (min/max
    decimation), so spikes and dips survive; shorter lines are returned as they are."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    buckets = max_points // 2
    if len(x) <= max_points:
        return x, y
    edges = np.linspace(0, len(x), buckets + 1).astype(int)
    lo = np.minimum.reduceat(y, edges[:-1])
    hi = np.maximum.reduceat(y, edges[:-1])
    # The index of each bucket's min and max, to keep them in x order.
    keep = set()
    for a, b, mn, mx in zip(edges[:-1], edges[1:], lo, hi):
        seg = y[a:b]
        keep.add(a + int(np.argmax(seg == mn)))
        keep.add(a + int(np.argmax(seg == mx)))
    idx = np.fromiter(sorted(keep), dtype=int)
    return x[idx], y[idx]


def plot_memory_bytes(rows: int) -> int:
    """Memory the run's figures need beyond the Results, for a run whose flows table has
    `rows` rows: linear in the rows (the per-flow columns and binned intermediates) plus a
    fixed part (every drawn line is thinned to MAX_POINTS points)."""
    return PLOT_BYTES_PER_ROW * int(rows) + PLOT_FIXED_BYTES


def check_memory(sc) -> None:
    """Refuse, before the run, a scenario (a Scenario) whose run and figures together would
    outgrow the run memory budget: the simulator's estimate (``Scenario::memory_needs``)
    with the figures' `plot_memory_bytes`; the message names the key or option to change."""
    spec_json = sc.to_json()
    spec = json.loads(spec_json)
    rows = (spec["duration"] // spec["record"]["interval"] + 1) * sum(g["count"] for g in spec["flows"])
    what = (f"{rows} rows of the flows table x {PLOT_BYTES_PER_ROW} bytes and {PLOT_FIXED_BYTES >> 20} MiB "
            "for the figures")
    _core.check_memory(spec_json, [("plots", plot_memory_bytes(rows), what,
                                    "--no-plots, a larger record.interval or fewer flows")])


def _flow_styles(results) -> dict:
    """Per flow: its colour (one per flow), its group's line style, and its legend label."""
    totals = results.totals
    n = len(totals)
    groups = list(dict.fromkeys(totals["group"]))
    dashes = ["-", "--", ":", "-."]
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20" if n <= 20 else "viridis")
    styles = {}
    for i, (flow, group) in enumerate(zip(totals["flow"], totals["group"])):
        color = cmap(i) if n <= 20 else cmap(i / max(n - 1, 1))
        styles[int(flow)] = dict(color=color, ls=dashes[groups.index(group) % len(dashes)],
                                 label=f"flow {flow} ({group})" if n <= 20 else None)
    if n > 20:  # one legend entry per group (its line style); colours run along the flows
        for g in groups:
            first = int(totals.flow[totals.group == g].iloc[0])
            styles[first]["label"] = f"{g} (colours by flow)"
    return styles


def _thinned_note(fig, thinned: bool) -> None:
    if thinned:
        fig.text(0.0, -0.02, f"Lines thinned to at most {MAX_POINTS} points each (the minimum and maximum of "
                 "each bucket of samples kept).", fontsize="x-small", color="0.4", ha="left", va="top")


def _steady_limit(ax, series: dict, t_start: dict, scale: str, what: str) -> None:
    """The y-axis from 0 to 1.2 x the largest 99th percentile of each line after its
    `t_start` (its first loss: slow start's spike left out), the lines' larger values clipped
    and the highest marked; scale "full" shows everything, "log" a log axis."""
    if scale == "log":
        ax.set_yscale("log")
        return
    if scale != "steady":
        if scale != "full":
            raise ValueError(f"scale is '{scale}'; allowed: steady, full, log")
        return
    tops = [np.quantile(y[x >= t_start.get(k, -np.inf)], 0.99) for k, (x, y) in series.items()
            if np.any(x >= t_start.get(k, -np.inf))]
    if not tops:
        return
    top = 1.2 * max(tops)
    peak_key, (px, py) = max(series.items(), key=lambda kv: kv[1][1].max())
    if top <= 0 or py.max() <= top * 1.05:
        return
    ax.set_ylim(0, top)
    at = int(np.argmax(py))
    ax.plot([px[at]], [top], marker="^", color="k", ms=7, clip_on=False, zorder=5)
    ax.annotate(f"{what} peak {py.max():.0f} (clipped; scale='full' shows it)", (px[at], top),
                xytext=(6, -12), textcoords="offset points", fontsize="small")


def _first_losses(results) -> dict:
    return results.losses.groupby("flow").t.min().to_dict() if len(results.losses) else {}


def _per_flow_lines(ax, df, column: str, styles: dict, scale: float = 1.0) -> tuple[dict, bool]:
    """Each flow's `column` against t, thinned; returns the full lines and whether any was thinned."""
    lines, thinned = {}, False
    for flow, d in df.groupby("flow", observed=True):
        x, y = d.t.to_numpy(dtype=float), d[column].to_numpy(dtype=float) * scale
        lines[int(flow)] = (x, y)
        tx, ty = thin(x, y)
        thinned |= len(tx) < len(x)
        ax.plot(tx, ty, lw=0.8, drawstyle="steps-post", **styles[int(flow)])
    return lines, thinned


def plot_cwnd(results, path: Path, title: str | None = None, scale: str = "steady") -> Path:
    """cwnd against time, a colour per flow and a line style per group (seed 000 Figs. 4-6).
    `scale`: "steady" (the y-axis fits the steady state, slow start's peak clipped and
    marked), "full" or "log"."""
    df = results.cwnd if len(results.cwnd) else results.flows
    fig, ax = plt.subplots(figsize=(10, 4.5))
    lines, thinned = _per_flow_lines(ax, df, "cwnd", _flow_styles(results))
    _steady_limit(ax, lines, _first_losses(results), scale, "cwnd")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (segments)")
    ax.set_title(title or getattr(results.scenario, "name", ""))
    ax.grid(alpha=0.3)
    _outside_legend(ax, fontsize="small")
    _thinned_note(fig, thinned)
    return save(fig, path)


def plot_rtt(results, path: Path, scale: str = "steady") -> Path:
    """Each flow's smoothed RTT (ms) against time, with its propagation RTT dashed: the
    queueing delay it sees is the gap."""
    fig, ax = plt.subplots(figsize=(10, 4))
    styles = _flow_styles(results)
    lines, thinned = _per_flow_lines(ax, results.flows[results.flows.srtt_ms > 0], "srtt_ms", styles)
    for flow, rtt in zip(results.totals.flow, results.totals.rtt_ms):
        ax.axhline(rtt, color=styles[int(flow)]["color"], lw=0.6, ls=(0, (2, 4)), alpha=0.7)
    _steady_limit(ax, lines, _first_losses(results), scale, "RTT")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("smoothed RTT (ms)")
    ax.set_title("RTT per flow (thin dashes: propagation RTT)")
    ax.grid(alpha=0.3)
    _outside_legend(ax, fontsize="small")
    _thinned_note(fig, thinned)
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


def offered_rate(results, ends_s, width_s: float):
    """The bottleneck's rate in bits/s over each window (end - width_s, end] of `ends_s`:
    its rate, or under a schedule (rate steps or a trace) the capacity the schedule offered
    in the window (`cubiclab-path`'s RateSchedule, as the simulator serves it)."""
    first = compiled_links(results.scenario.compile())[0]
    ends = np.asarray(ends_s, dtype=float)
    if not first.get("schedule"):
        return np.full(len(ends), float(first["rate"]))
    to_ns = lambda s: [int(round(x * 1e9)) for x in s]  # noqa: E731
    cap = _core.schedule_capacity_bits
    schedule = json.dumps(first["schedule"])
    bits = np.asarray(cap(schedule, to_ns(ends))) - np.asarray(cap(schedule, to_ns(np.maximum(ends - width_s, 0))))
    return bits / width_s


def group_shares(results, bin_s: float = 1.0):
    """Each group's part of the bottleneck's output per bin. ``share``: of what all the
    flows got in the bin (the groups' shares sum to 1, as the summary's ``share``);
    ``link_share``: of what the link offered in the bin (its rate, or its schedule's
    capacity: NaN in an outage). Columns: t, group, share, link_share, flows (how many of the
    group's flows had sent anything by then)."""
    tp = throughput_series(results, bin_s)
    tp["all"] = tp.groupby("t").throughput_bps.transform("sum")
    started = tp[tp.throughput_bps > 0].groupby("flow").t.min()
    tp["active"] = tp.t >= tp.flow.map(started).fillna(float("inf"))
    g = tp.groupby(["t", "group"], observed=True).agg(bps=("throughput_bps", "sum"), all=("all", "first"),
                                                      flows=("active", "sum")).reset_index()
    offered = offered_rate(results, g.t.to_numpy(), bin_s)
    g["share"] = (g.bps / g.pop("all")).fillna(0.0)
    g["link_share"] = g.pop("bps") / np.where(offered > 0, offered, np.nan)
    return g[["t", "group", "share", "link_share", "flows"]]


def plot_throughput(results, path: Path, bin_s: float = 1.0) -> Path:
    """Each flow's throughput at the bottleneck's output (Mbit/s, mean per `bin_s`), a
    colour per flow, with all flows' total and the rate the link offered (its rate, or its
    schedule's, per bin); with several groups a second panel has each group's share of what
    the flows got."""
    tp = throughput_series(results, bin_s)
    groups = list(dict.fromkeys(results.totals["group"]))
    several = len(groups) > 1
    fig, axes = plt.subplots(1, 2 if several else 1, figsize=(13 if several else 10, 4.2), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2] if several else [1]})
    ax = axes[0, 0]
    styles = _flow_styles(results)
    thinned = False
    for flow, d in tp.groupby("flow"):
        x, y = thin(d.t, d.throughput_bps / 1e6)
        thinned |= len(x) < len(d)
        ax.plot(x, y, lw=0.8, alpha=0.85, **styles[int(flow)])
    total = tp.groupby("t").throughput_bps.sum()
    x, y = thin(total.index, total / 1e6)
    ax.plot(x, y, color="k", lw=1, alpha=0.6, label="all flows")
    offered = offered_rate(results, total.index.to_numpy(), bin_s)
    x, y = thin(total.index, offered / 1e6)
    ax.plot(x, y, color="k", lw=0.9, ls=":", drawstyle="steps-pre",
            label="link rate offered (schedule)" if _varies(results) else "link rate")
    ax.set_ylim(0, max(float(offered.max()), float(total.max()) if len(total) else 0.0) / 1e6 * 1.08 or None)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"throughput at the bottleneck (Mbit/s, {bin_s:g} s mean)")
    ax.set_title("per flow")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if several:
        ax2 = axes[0, 1]
        colors = {g: f"C{i}" for i, g in enumerate(groups)}
        for g, d in group_shares(results, bin_s).groupby("group", observed=True):
            n = int(d.flows.max())
            ax2.plot(d.t, d.share, lw=1.3, color=colors[g], label=f"share: {g} ({n} flow{'s' * (n != 1)})")
        ax2.set_ylim(0, 1.05)
        ax2.set_xlabel("time (s)")
        ax2.set_ylabel("share of what the flows got")
        ax2.set_title("per group")
        ax2.grid(alpha=0.3)
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    fig.tight_layout()
    # One legend for both panels, right of them.
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize="small")
    _thinned_note(fig, thinned)
    return save(fig, path)


def plot_queue(results, path: Path, scale: str = "steady") -> Path:
    """Per link of the path (the bottleneck alone on a dumbbell), three panels sharing the
    time axis: the queueing delay a packet arriving would wait (ms: the bytes queued at the
    link's rate, or at its schedule's rate over the interval), the queue in packets, and the
    congestion drops per interval on an axis of their own, with the CE marks per interval
    (dashed) beside them when the queue discipline marked any. `scale` is that axis's, as
    plot_cwnd's: "steady" fits the drops and marks after every flow's slow start (its first
    loss), the slow starts' peak clipped and marked; "full" or "log". With several links, a panel
    on top has each link's throughput (its utilisation times its rate, per interval; on a
    dumbbell throughput.png has the bottleneck's)."""
    link = results.link
    names = dict(zip(results.link_totals.link, results.link_totals.name)) if len(results.link_totals) else {}
    links = compiled_links(results.scenario.compile())
    several = len(links) > 1
    fig, axes = plt.subplots(3 + several, 1, figsize=(10, 6.5 + 2.2 * several), sharex=True,
                             gridspec_kw={"height_ratios": [2] * several + [2, 2, 1]})
    ax_t, (ax_d, ax_q, ax_x) = (axes[0] if several else None), axes[several:]
    thinned, drops = False, {}
    # Marks are drawn only when there are any: a drop-tail run's figure stays as it was.
    marked = bool(link.marks.sum()) if len(link) else False
    for i, (k, d) in enumerate(link.groupby("link", observed=True)):
        label = names.get(k, f"link {k}") if several else None
        interval = float(d.t.diff().median()) if len(d) > 1 else 0.1
        rate = (offered_rate(results, d.t.to_numpy(), interval) if k == 0 and _varies(results)
                else np.full(len(d), float(links[int(k)]["rate"])))
        delay_ms = d.queue_bytes.to_numpy() * 8 / np.where(rate > 0, rate, np.nan) * 1e3
        panels = [(ax_d, delay_ms), (ax_q, d.queue_packets.to_numpy()), (ax_x, d.drops.to_numpy())]
        if several:
            panels.insert(0, (ax_t, d.utilization.to_numpy() * rate / 1e6))
        for ax, y in panels:
            x, ty = thin(d.t, y)
            thinned |= len(x) < len(d)
            ax.plot(x, ty, lw=0.8, color=f"C{i}", label=label, drawstyle="steps-pre" if ax is ax_x else "default")
        ax_x.fill_between(x, ty, step="pre", color=f"C{i}", alpha=0.4)
        drops[k] = (d.t.to_numpy(dtype=float), d.drops.to_numpy(dtype=float))
        if marked:
            x, ty = thin(d.t, d.marks.to_numpy())
            ax_x.plot(x, ty, lw=0.8, color=f"C{i}", ls="--", drawstyle="steps-pre")
            drops[(k, "marks")] = (d.t.to_numpy(dtype=float), d.marks.to_numpy(dtype=float))
    first_losses = _first_losses(results)
    past_slow_start = max(first_losses.values()) if first_losses else np.inf
    _steady_limit(ax_x, drops, dict.fromkeys(drops, past_slow_start), scale, "drops and marks" if marked else "drops")
    ax_d.set_ylabel("queueing delay (ms)")
    ax_q.set_ylabel("queue (packets)")
    # On two lines: the drops panel is short, and a one-line label overran the queue's.
    ax_x.set_ylabel(f"drops{', marks' * marked}\nper {1e3 * float(link.t.diff()[link.t.diff() > 0].min()) if len(link) > 1 else 0:.0f} ms")
    if marked:
        ax_x.legend([Line2D([], [], color="0.3", lw=0.8), Line2D([], [], color="0.3", lw=0.8, ls="--")],
                    ["drops", "CE marks"], fontsize="x-small", loc="upper right")
    ax_x.set_xlabel("time (s)")
    for ax in axes:
        ax.grid(alpha=0.3)
        if ax.get_yscale() == "linear":
            ax.set_ylim(bottom=0)
    if several:
        ax_t.set_ylabel("throughput (Mbit/s)")
        _outside_legend(ax_t, fontsize="small")
    axes[0].set_title("throughput and queue per link" if several else "bottleneck queue")
    fig.align_ylabels(axes)
    _thinned_note(fig, thinned)
    return save(fig, path)


def plot_run(results, outdir: Path) -> list[Path]:
    """The standard figures of a run: cwnd.png, throughput.png (per flow, and per group
    with several groups), queue.png (queueing delay, queue, drops and any CE marks; with several links,
    each link's throughput too), rtt.png."""
    outdir = Path(outdir)
    return [plot_cwnd(results, outdir / "cwnd.png"), plot_throughput(results, outdir / "throughput.png"),
            plot_queue(results, outdir / "queue.png"), plot_rtt(results, outdir / "rtt.png")]
