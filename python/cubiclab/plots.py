"""Default plots (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cubiclab.io import atomic_path  # noqa: E402


def save(fig, path: Path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def plot_replay(frames: dict, path: Path, title: str = "") -> Path:
    """cwnd against time for each replayed algorithm."""
    fig, ax = plt.subplots(figsize=(9, 4))
    for name, df in frames.items():
        ax.plot(df.time_us / 1e6, df.cwnd, label=name, lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (segments)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
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
    ax.legend(loc="upper left")
    return save(fig, path)


def plot_throughput(results, path: Path) -> Path:
    """Goodput per flow (Mbit/s) and link utilisation against time."""
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for flow, d in results.flows.groupby("flow"):
        ax.plot(d.t, d.goodput_bps / 1e6, lw=0.7, label=f"{flow}: {d.group.iloc[0]}")
    ax.plot(results.link.t, results.link.utilization * results.summary["rate_bps"] / 1e6,
            color="k", lw=1, alpha=0.5, label="link")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Mbit/s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", ncol=2, loc="upper right")
    return save(fig, path)


def plot_queue(results, path: Path) -> Path:
    """Bottleneck queue (packets) and drops per interval."""
    fig, ax = plt.subplots(figsize=(10, 3.5))
    ax.plot(results.link.t, results.link.queue_packets, lw=0.8, label="queue (packets)")
    ax.bar(results.link.t, results.link.drops, width=results.link.t.diff().median() or 0.1,
           color="C3", alpha=0.5, label="drops per interval")
    ax.set_xlabel("time (s)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    return save(fig, path)


def plot_run(results, outdir: Path) -> list[Path]:
    outdir = Path(outdir)
    return [plot_cwnd(results, outdir / "cwnd.png"), plot_throughput(results, outdir / "throughput.png"),
            plot_queue(results, outdir / "queue.png")]
