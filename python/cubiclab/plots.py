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
