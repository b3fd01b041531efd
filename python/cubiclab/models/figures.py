"""Reproductions of the model figures of the seed papers: data as DataFrames, plots as PNG.

  * ``ha_fig3_*``   seed 000 (Ha, Rhee, Xu 2008) Fig. 3: response functions of standard TCP,
                    HSTCP and CUBIC (Eq. 6 with the TCP-friendly max), RTT 10 ms and 100 ms.
  * ``bao_fig3_*``  seed 004 (Bao, Wong, Leung) Fig. 3: RMS error (Eq. 22) of the simulated
                    stationary distribution against the model, versus K, for two N.
  * ``bao_fig4_*``  Fig. 4: analytical and simulated normalized throughput versus lambda.
  * ``bao_fig5_*``  Fig. 5: normalized throughput versus C*RTT for several lambda.
  * ``bao_fig6_*``  Fig. 6: normalized throughput versus alpha for several lambda.
  * ``bao_fig7_*``  Fig. 7: normalized throughput versus beta for several lambda.

The papers do not print their axis ranges; the defaults below cover the quantities their
text quotes (alpha 0.1-10 Mb/s, beta 0.5-0.9, lambda 0.01-1 /s, K up to 1e5).
Defaults of seed 004: C = 100 Mb/s, RTT = 100 ms, alpha = 1e6 bits/s^3, beta = 0.5, N = 100.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cubiclab.models.markov import markov_model
from cubiclab.models.response import cubic_window, hstcp_window, mathis_window
from cubiclab.models.validate import rms_error, simulate_chain

__all__ = [
    "ha_fig3_data",
    "plot_ha_fig3",
    "bao_fig3_data",
    "plot_bao_fig3",
    "bao_fig4_data",
    "plot_bao_fig4",
    "bao_fig5_data",
    "plot_bao_fig5",
    "bao_fig6_data",
    "plot_bao_fig6",
    "bao_fig7_data",
    "plot_bao_fig7",
    "reproduce_all",
]

BAO = dict(capacity=100e6, rtt=0.1, alpha=1e6, beta=0.5)
LAMBDAS = (0.01, 0.1, 1.0)


def _x(**kw) -> float:
    return markov_model(**{**BAO, "loss_rate": 1.0, "n_states": 100, **kw}).normalized_throughput


# ---- seed 000, Fig. 3 -------------------------------------------------------------------


def ha_fig3_data(p=None, rtts=(0.01, 0.1), c: float = 0.4, decrease: float = 0.2) -> pd.DataFrame:
    """Average window (segments) of TCP (Mathis), HSTCP (RFC 3649) and CUBIC (Eq. 5 with
    the TCP-friendly max) against p, for each RTT. Long format: rtt, p, tcp, hstcp, cubic."""
    p = np.logspace(-8, -2, 61) if p is None else np.asarray(p, dtype=float)
    frames = []
    for rtt in rtts:
        frames.append(
            pd.DataFrame(
                {
                    "rtt": rtt,
                    "p": p,
                    "tcp": mathis_window(p),
                    "hstcp": hstcp_window(p),
                    "cubic": cubic_window(p, rtt, c, decrease, tcp_friendly=True),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def plot_ha_fig3(path, data: pd.DataFrame | None = None) -> Path:
    from cubiclab.plots import plt, save

    data = ha_fig3_data() if data is None else data
    rtts = sorted(data.rtt.unique())
    fig, axes = plt.subplots(1, len(rtts), figsize=(5 * len(rtts), 4), squeeze=False)
    for ax, rtt, tag in zip(axes[0], rtts, "abcdefgh"):
        d = data[data.rtt == rtt]
        ax.loglog(d.p, d.tcp, "k-", label="Standard TCP")
        ax.loglog(d.p, d.hstcp, "b--", label="HSTCP")
        ax.loglog(d.p, d.cubic, "r-.", label="CUBIC")
        ax.set_xlabel("loss rate p")
        ax.set_ylabel("average window (segments)")
        ax.set_title(f"({tag}) RTT = {rtt * 1000:g} ms")
        ax.grid(alpha=0.3, which="both")
        ax.legend()
    fig.suptitle("Response functions (seed 000 Fig. 3)")
    return save(fig, path)


# ---- seed 004, Figs. 3-7 ------------------------------------------------------------------


def bao_fig3_data(n_states=(100, 1000), ks=None, seeds: int = 5, loss_rate: float = 1.0,
                  by_seed: bool = False) -> pd.DataFrame:
    """RMS error (Eq. 22) against K for each N, averaged over `seeds` runs (seed 0..seeds-1).

    One run of max(ks) events per seed; the error at K uses its first K events.
    Columns: n_states, K, rms (mean), rms_std; with `by_seed`, one row per seed instead:
    n_states, K, seed, rms."""
    ks = np.unique(np.logspace(2, 5, 13).astype(int)) if ks is None else np.asarray(ks, dtype=int)
    runs = [simulate_chain(**BAO, loss_rate=loss_rate, n_events=int(ks.max()), seed=s) for s in range(seeds)]
    rows = []
    for n in n_states:
        pi = markov_model(**BAO, loss_rate=loss_rate, n_states=n).pi
        for k in ks:
            errs = [rms_error(pi, r.distribution(n, int(k))) for r in runs]
            if by_seed:
                rows += [{"n_states": n, "K": int(k), "seed": s, "rms": float(e)} for s, e in enumerate(errs)]
            else:
                rows.append({"n_states": n, "K": int(k), "rms": float(np.mean(errs)), "rms_std": float(np.std(errs))})
    return pd.DataFrame(rows)


def plot_bao_fig3(path, data: pd.DataFrame | None = None) -> Path:
    from cubiclab.plots import plt, save

    data = bao_fig3_data() if data is None else data
    fig, ax = plt.subplots(figsize=(6, 4))
    for n, d in data.groupby("n_states"):
        ax.loglog(d.K, d.rms, "o-", label=f"N = {n}")
    ax.set_xlabel("total simulation time K (loss events)")
    ax.set_ylabel("RMS error")
    ax.set_title("RMS error vs K (seed 004 Fig. 3)")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    return save(fig, path)


def bao_fig4_data(lams=None, n_states: int = 100, n_events: int = 1000, seeds: int = 1,
                  by_seed: bool = False) -> pd.DataFrame:
    """Analytical (Eq. 21) and simulated normalized throughput against lambda.
    Columns: loss_rate, analytical, simulated (mean over seeds); with `by_seed`, one row per
    seed instead, with a seed column."""
    lams = np.logspace(-2, 1, 13) if lams is None else np.asarray(lams, dtype=float)
    rows = []
    for lam in lams:
        analytical = _x(loss_rate=lam, n_states=n_states)
        sims = [simulate_chain(**BAO, loss_rate=lam, n_events=n_events, seed=s).normalized_throughput
                for s in range(seeds)]
        if by_seed:
            rows += [{"loss_rate": lam, "seed": s, "analytical": analytical, "simulated": float(x)}
                     for s, x in enumerate(sims)]
        else:
            rows.append({"loss_rate": lam, "analytical": analytical, "simulated": float(np.mean(sims))})
    return pd.DataFrame(rows)


def plot_bao_fig4(path, data: pd.DataFrame | None = None) -> Path:
    from cubiclab.plots import plt, save

    data = bao_fig4_data() if data is None else data
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogx(data.loss_rate, data.analytical, "k-", label="analytical")
    ax.semilogx(data.loss_rate, data.simulated, "ro", label="simulation")
    ax.set_xlabel("random loss rate λ (1/s)")
    ax.set_ylabel("normalized throughput")
    ax.set_ylim(0, 1)
    ax.set_title("Throughput vs λ (seed 004 Fig. 4)")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    return save(fig, path)


def _sweep(name: str, values, lams, make) -> pd.DataFrame:
    rows = [{name: v, "loss_rate": lam, "throughput": make(v, lam)} for lam in lams for v in values]
    return pd.DataFrame(rows)


def bao_fig5_data(bdps=None, lams=LAMBDAS) -> pd.DataFrame:
    """Throughput against C*RTT (bits; RTT fixed at 100 ms, C varied) for each lambda.
    Columns: bdp, loss_rate, throughput."""
    bdps = np.logspace(5, 9, 17) if bdps is None else np.asarray(bdps, dtype=float)
    return _sweep("bdp", bdps, lams, lambda b, lam: _x(capacity=b / BAO["rtt"], loss_rate=lam))


def bao_fig6_data(alphas=None, lams=LAMBDAS) -> pd.DataFrame:
    """Throughput against alpha (bits/s^3) for each lambda. Columns: alpha, loss_rate, throughput."""
    alphas = np.logspace(5, 7, 17) if alphas is None else np.asarray(alphas, dtype=float)
    return _sweep("alpha", alphas, lams, lambda a, lam: _x(alpha=a, loss_rate=lam))


def bao_fig7_data(betas=None, lams=LAMBDAS) -> pd.DataFrame:
    """Throughput against beta (fraction kept) for each lambda. Columns: beta, loss_rate, throughput."""
    betas = np.round(np.arange(0.1, 0.951, 0.05), 2) if betas is None else np.asarray(betas, dtype=float)
    return _sweep("beta", betas, lams, lambda b, lam: _x(beta=b, loss_rate=lam))


def _plot_sweep(path, data, xcol, xlabel, title, logx=True, xscale=1.0) -> Path:
    from cubiclab.plots import plt, save

    fig, ax = plt.subplots(figsize=(6, 4))
    for lam, d in data.groupby("loss_rate"):
        (ax.semilogx if logx else ax.plot)(d[xcol] * xscale, d.throughput, "o-", ms=3, label=f"λ = {lam:g} /s")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("normalized throughput")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    return save(fig, path)


def plot_bao_fig5(path, data: pd.DataFrame | None = None) -> Path:
    data = bao_fig5_data() if data is None else data
    return _plot_sweep(path, data, "bdp", "C·RTT (Mb)", "Throughput vs C·RTT (seed 004 Fig. 5)", xscale=1e-6)


def plot_bao_fig6(path, data: pd.DataFrame | None = None) -> Path:
    data = bao_fig6_data() if data is None else data
    return _plot_sweep(path, data, "alpha", "window growth factor α (Mb/s³)", "Throughput vs α (seed 004 Fig. 6)",
                       xscale=1e-6)


def plot_bao_fig7(path, data: pd.DataFrame | None = None) -> Path:
    data = bao_fig7_data() if data is None else data
    return _plot_sweep(path, data, "beta", "β (fraction kept at a loss)", "Throughput vs β (seed 004 Fig. 7)",
                       logx=False)


def reproduce_all(outdir, quick: bool = False) -> dict:
    """Compute every figure's data, write <name>.csv and <name>.png into outdir.

    quick=True uses fewer points and seeds (for tests and smoke runs). Returns
    {name: png path}."""
    from cubiclab.io import atomic_write_text

    outdir = Path(outdir)
    if quick:
        jobs = {
            "ha_fig3": (ha_fig3_data(p=np.logspace(-8, -2, 13)), plot_ha_fig3),
            "bao_fig3": (bao_fig3_data(n_states=(100,), ks=[100, 1000], seeds=2), plot_bao_fig3),
            "bao_fig4": (bao_fig4_data(lams=[0.01, 1.0], n_events=200), plot_bao_fig4),
            "bao_fig5": (bao_fig5_data(bdps=[1e6, 1e7], lams=(1.0,)), plot_bao_fig5),
            "bao_fig6": (bao_fig6_data(alphas=[1e5, 1e7], lams=(1.0,)), plot_bao_fig6),
            "bao_fig7": (bao_fig7_data(betas=[0.5, 0.9], lams=(1.0,)), plot_bao_fig7),
        }
    else:
        jobs = {
            "ha_fig3": (ha_fig3_data(), plot_ha_fig3),
            "bao_fig3": (bao_fig3_data(), plot_bao_fig3),
            "bao_fig4": (bao_fig4_data(), plot_bao_fig4),
            "bao_fig5": (bao_fig5_data(), plot_bao_fig5),
            "bao_fig6": (bao_fig6_data(), plot_bao_fig6),
            "bao_fig7": (bao_fig7_data(), plot_bao_fig7),
        }
    out = {}
    for name, (df, plot) in jobs.items():
        atomic_write_text(outdir / f"{name}.csv", df.to_csv(index=False))
        out[name] = plot(outdir / f"{name}.png", df)
    return out
