"""Figure helpers for the catalog: every figure is written as PNG and SVG (PNG alone in
tiny mode, the test suite's pipeline check, where drawing would take most of its time)."""

from __future__ import annotations

import contextlib
import contextvars
from pathlib import Path

import numpy as np

from cubiclab.plots import plt, save

# One colour and marker per protocol, as in the papers' legends.
STYLE = {
    "cubic": ("C3", "o", "CUBIC"),
    "cubic-2.0": ("C3", "o", "CUBIC 2.0"),
    "cubic-2005": ("C3", "o", "CUBIC (2005)"),
    "cubic-2008": ("C3", "o", "CUBIC (2008)"),
    "cubic-rfc9438": ("C3", "o", "CUBIC (RFC 9438)"),
    "bic": ("C0", "s", "BIC-TCP"),
    "highspeed": ("C2", "^", "HSTCP"),
    "scalable": ("C4", "v", "STCP"),
    "htcp": ("C1", "D", "HTCP"),
    "reno": ("k", "x", "TCP-SACK"),
    "tahoe": ("C0", "+", "Tahoe"),
}


FORMATS = contextvars.ContextVar("catalog_figure_formats", default=("svg", "png"))


@contextlib.contextmanager
def formats(names: tuple[str, ...]):
    """Write the catalog's figures in `names` (file suffixes) inside this block."""
    token = FORMATS.set(tuple(names))
    try:
        yield
    finally:
        FORMATS.reset(token)


def paths(outdir: Path, stem: str) -> list[Path]:
    """The files a figure `stem` is written to, one per format in use."""
    return [Path(outdir) / f"{stem}.{f}" for f in FORMATS.get()]


def style(alg: str) -> tuple[str, str, str]:
    return STYLE.get(alg, ("C7", ".", alg))


def new(ncols: int = 1, nrows: int = 1, width: float = 5.5, height: float = 4.0, **kw):
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, **kw)
    return fig, axes


def finish(fig, outdir: Path, stem: str, title: str | None = None) -> list[Path]:
    """Write `fig` as <stem>.svg and <stem>.png in `outdir` (the formats in use; atomically)
    and close it."""
    from cubiclab.io import atomic_path

    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = paths(outdir, stem)
    for path in out:
        if path.suffix != ".png":  # save() closes the figure: the PNG goes last
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format=path.suffix.lstrip("."), bbox_inches="tight")
    png = [p for p in out if p.suffix == ".png"]
    if png:
        save(fig, png[0])
    else:
        plt.close(fig)
    return out


def line_band(ax, x, mean, lo=None, hi=None, **kw):
    """A line with markers and, when given, a shaded band (ensemble spread)."""
    x = np.asarray(x, dtype=float)
    (ln,) = ax.plot(x, mean, **kw)
    if lo is not None and hi is not None:
        ax.fill_between(x, lo, hi, color=ln.get_color(), alpha=0.18, lw=0)
    return ln


def cwnd_axes(ax, res, title: str = "", labels: dict | None = None, t_max: float | None = None, lw: float = 0.8,
              per_flow: bool = False):
    """cwnd of each flow against time (seed 000 Figs. 4-6 style), coloured by group (or by
    flow with per_flow)."""
    df = res.cwnd if len(res.cwnd) else res.flows
    groups = res.totals.set_index("flow")["group"]
    colours = {}
    seen = set()
    algs = res.totals.set_index("flow")["algorithm"].astype(str)
    group_algs = {str(g): set(algs[groups == g]) for g in set(groups)}
    by_alg = not per_flow and len({next(iter(a)) for a in group_algs.values()}) == len(group_algs) and all(
        len(a) == 1 for a in group_algs.values())
    for flow, d in df.groupby("flow"):
        g = f"flow {flow + 1}" if per_flow else str(groups[flow])
        c = colours.setdefault(g, style(algs[flow])[0] if by_alg else f"C{len(colours) * 3 % 10}")
        lab = None
        if g not in seen:
            seen.add(g)
            lab = (labels or {}).get(g, g)
        ax.plot(d.t, d.cwnd, lw=lw, color=c, alpha=0.85, label=lab, drawstyle="steps-post")
    if t_max is not None:
        ax.set_xlim(0, t_max)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (packets)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")


def log_ticks(ax, values, axis: str = "x"):
    """A log axis labelled at `values` only (no minor-tick clutter)."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter, NullLocator

    a = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    a.set_major_locator(FixedLocator(list(values)))
    a.set_major_formatter(FixedFormatter([f"{v:g}" for v in values]))
    a.set_minor_locator(NullLocator())
    a.set_minor_formatter(NullFormatter())



def curves(ax, frame, x: str, y: str, by: str = "alg", logx: bool = True, **kw):
    """Per value of `by`: the mean of `y` over seeds against `x`, with the seeds' min-max
    band (the paper's protocols in their colours)."""
    g = frame.groupby([by, x], sort=False)[y].agg(["mean", "min", "max"]).reset_index()
    for key, d in g.groupby(by, sort=False):
        d = d.sort_values(x)
        c, m, lab = style(str(key))
        multi = bool((d["max"] - d["min"]).abs().max() > 0)
        line_band(ax, d[x], d["mean"], d["min"] if multi else None, d["max"] if multi else None, marker=m, color=c,
                  label=lab, **kw)
    if logx:
        log_ticks(ax, sorted(frame[x].unique()))
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")


def first_run(sweep, **tags):
    """The Results of the first run (lowest seed) whose tags match `tags`."""
    for i, run in enumerate(sweep.runs):
        if all(run.tags.get(k) == v for k, v in tags.items()):
            return sweep.results(i)
    raise KeyError(f"no run tagged {tags}")
