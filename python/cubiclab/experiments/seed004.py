"""Seed 004: Bao, Wong, Leung, "A Model for Steady State Throughput of TCP CUBIC". Figs. 3-7
come from the Markov model and its discrete-event validator (cubiclab.models); the last entry
runs the same CUBIC through the packet simulator with Poisson random loss."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cubiclab.experiments import plotting
from cubiclab.experiments.base import Experiment, approx, at_most, check, register, vary
from cubiclab.models import figures as F
from cubiclab.sweep import Run

BAO = "C = 100 Mb/s, RTT = 100 ms, alpha = 1 Mb/s^3, beta = 0.5 (kept), N = 100 unless varied"


def _both(plot, outdir, stem, data):
    return [plot(outdir / f"{stem}.png", data), plot(outdir / f"{stem}.svg", data)]


@register
class Fig3(Experiment):
    name = "s004-fig3"
    seed = "004"
    figure = "Fig. 3"
    title = "RMS error of the simulated stationary distribution against simulation length"
    setup = ("RMS error (Eq. 22) between the model's stationary distribution and the one counted by the paper's "
             "discrete-event validator after K loss events, N = 100 and 1000, lambda = 1/s; " + BAO +
             ". Mean over 5 seeds (quick: 2 seeds, N = 100 and 300, K up to 1e4).")

    def analyse(self, sweep, quick, outdir):
        if quick:
            d = F.bao_fig3_data(n_states=(100, 300), ks=[100, 1000, 10000], seeds=2)
        else:
            d = F.bao_fig3_data()
        figs = _both(F.plot_bao_fig3, outdir, "fig3", d)
        ns = sorted(d.n_states.unique())
        dec = all(g.sort_values("K").rms.iloc[-1] < g.sort_values("K").rms.iloc[0] for _, g in d.groupby("n_states"))
        kmax = d.K.max()
        at_k = d[d.K == kmax].set_index("n_states").rms
        claims = [
            check("rms_falls_with_k", "When the simulation time is increased, the RMS error decreases", "decreases",
                  "; ".join(f"N={n}: {g.sort_values('K').rms.iloc[0]:.4f}→{g.sort_values('K').rms.iloc[-1]:.4f}"
                            for n, g in d.groupby("n_states")), dec, "last < first for each N", robust=True),
            check("rms_falls_with_n", f"When N increases the RMS error becomes smaller (at K = {kmax})", "smaller",
                  ", ".join(f"N={n}: {at_k[n]:.5f}" for n in ns), bool(at_k[ns[-1]] < at_k[ns[0]]), "larger N lower",
                  note="Eq. 22 averages over N states: with more states each probability is smaller, so the RMS "
                       "scale itself changes with N.", robust=True),
        ]
        return self.outcome(data={"fig3": d}, figures=figs, claims=claims)


@register
class Fig4(Experiment):
    name = "s004-fig4"
    seed = "004"
    figure = "Fig. 4"
    title = "Analytical and simulated normalized throughput against the random loss rate"
    setup = "Eq. 21 against the discrete-event validator (K = 1000 loss events), lambda 0.01-10/s; " + BAO + "."

    def analyse(self, sweep, quick, outdir):
        d = F.bao_fig4_data(lams=np.logspace(-2, 1, 5 if quick else 13), n_events=1000, seeds=1 if quick else 3)
        figs = _both(F.plot_bao_fig4, outdir, "fig4", d)
        gap = float((d.analytical - d.simulated).abs().max())
        claims = [at_most("agree", "The analytical and simulation results agree with each other (largest absolute "
                          "difference in normalized throughput)", "agree (figure)", gap, 0.05, robust=True,
                          note="K = 1000 loss events leaves sampling noise.")]
        return self.outcome(data={"fig4": d}, figures=figs, claims=claims)


@register
class Fig5(Experiment):
    name = "s004-fig5"
    seed = "004"
    figure = "Fig. 5"
    title = "Normalized throughput against C x RTT for several loss rates"
    setup = "Eq. 21 with the capacity varied at RTT 100 ms, lambda 0.01, 0.1, 1/s; " + BAO + "."

    def analyse(self, sweep, quick, outdir):
        d = F.bao_fig5_data(bdps=np.logspace(5, 9, 5 if quick else 17))
        figs = _both(F.plot_bao_fig5, outdir, "fig5", d)
        mono = all(np.all(np.diff(g.sort_values("bdp").throughput.to_numpy()) <= 1e-9) for _, g in d.groupby("loss_rate"))
        drop = {lam: float(g.sort_values("bdp").throughput.iloc[0] - g.sort_values("bdp").throughput.iloc[-1])
                for lam, g in d.groupby("loss_rate")}
        lams = sorted(drop)
        claims = [
            check("falls_with_bdp", "If C x RTT increases, the normalized average throughput decreases", "decreases",
                  "monotone" if mono else "not monotone", mono, "non-increasing for each lambda", robust=True),
            check("random_loss_hurts_large_bdp", "Random loss reduces the throughput of large-BDP links more (drop from "
                  "the smallest to the largest C x RTT, by lambda)", "more for larger lambda",
                  ", ".join(f"λ={lam:g}: {drop[lam]:.2f}" for lam in lams), bool(drop[lams[-1]] > drop[lams[0]]),
                  "larger drop at the largest lambda", robust=True),
            at_most("never_one", "Even when lambda is very small the normalized throughput does not attain 1",
                    "< 1", float(d.throughput.max()), 0.999, robust=True),
        ]
        return self.outcome(data={"fig5": d}, figures=figs, claims=claims)


@register
class Fig6(Experiment):
    name = "s004-fig6"
    seed = "004"
    figure = "Fig. 6"
    title = "Normalized throughput against the window growth factor alpha"
    setup = "Eq. 21 with alpha varied 0.1-10 Mb/s^3, lambda 0.01, 0.1, 1/s; " + BAO + "."

    def analyse(self, sweep, quick, outdir):
        alphas = np.logspace(5, 7, 5 if quick else 17)
        d = F.bao_fig6_data(alphas=alphas)
        figs = _both(F.plot_bao_fig6, outdir, "fig6", d)
        g1 = d[d.loss_rate == 1.0].set_index("alpha").throughput
        g001 = d[d.loss_rate == 0.01].set_index("alpha").throughput
        gain = 100 * (g1[alphas[-1]] / g1[alphas[0]] - 1)
        gain_small = 100 * (g001[alphas[-1]] / g001[alphas[0]] - 1)
        claims = [
            approx("plus_806", "At lambda = 1/s the throughput grows by about 806% when alpha goes from 0.1 to 10 Mb/s",
                   806, gain, 806 * 0.05, paper="+806%", unit="%", robust=True),
            check("small_lambda_little_gain", "When lambda = 0.01/s the throughput is not improved much",
                  "little gain", f"+{gain_small:.0f}% (vs +{gain:.0f}% at λ = 1)", bool(gain_small < gain / 10),
                  "under a tenth of the λ = 1 gain", robust=True),
        ]
        return self.outcome(data={"fig6": d}, figures=figs, claims=claims)


@register
class Fig7(Experiment):
    name = "s004-fig7"
    seed = "004"
    figure = "Fig. 7"
    title = "Normalized throughput against the multiplicative decrease factor beta"
    setup = "Eq. 21 with beta (fraction kept) varied 0.5-0.9, lambda 0.01, 0.1, 1/s; " + BAO + "."

    def analyse(self, sweep, quick, outdir):
        betas = np.round(np.arange(0.5, 0.901, 0.1 if quick else 0.05), 2)
        d = F.bao_fig7_data(betas=betas)
        figs = _both(F.plot_bao_fig7, outdir, "fig7", d)
        g1 = d[d.loss_rate == 1.0].set_index("beta").throughput
        g001 = d[d.loss_rate == 0.01].set_index("beta").throughput
        gain = 100 * (g1[0.9] / g1[0.5] - 1)
        gain_small = 100 * (g001[0.9] / g001[0.5] - 1)
        claims = [
            approx("plus_137", "At lambda = 1/s the throughput grows by about 137% when beta goes from 0.5 to 0.9",
                   137, gain, 137 * 0.05, paper="+137%", unit="%", robust=True),
            check("small_lambda_little_gain", "When lambda is small (0.01/s) increasing beta brings less gain",
                  "less gain", f"+{gain_small:.0f}% (vs +{gain:.0f}%)", bool(gain_small < gain), "smaller", robust=True),
        ]
        return self.outcome(data={"fig7": d}, figures=figs, claims=claims)


@register
class Packet(Experiment):
    name = "s004-packet"
    seed = "004"
    figure = "model vs packets"
    title = "The Markov model against packet-level simulation with Poisson random loss"
    setup = ("One CUBIC flow (cubic-2008 with beta 0.5 removed, c = alpha / (8 x 1500) packets/s^3, no TCP "
             "friendliness, no fast convergence), 100 Mbps, 100 ms, buffer 2% BDP, Poisson random loss of rate "
             "lambda on the bottleneck (cubiclab.models.bridge gives the mapping and the reasons they differ). "
             "Normalized throughput: goodput after 20 s over the payload capacity; ensembles of 3 seeds "
             "(quick: 1). The paper validated the model against its own discrete-event chain, not packets.")
    algorithms = ("cubic-2008",)
    needs = ("loss",)

    def lams(self, quick):
        return (0.01, 0.1, 1.0) if quick else (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)

    def runs(self, quick):
        sc = self.scenario("s004_bridge")
        runs = []
        for lam in self.lams(quick):
            s = vary(sc, duration="300s" if quick else "600s")
            s.bottleneck.loss = {"model": "poisson", "rate": float(lam)}
            for seed in ([1] if quick else [1, 2, 3]):
                runs.append(Run(vary(s, seed=seed), {"loss_rate": lam}))
        return runs

    def analyse(self, sweep, quick, outdir):
        from cubiclab.models.markov import markov_model

        rows = []
        for run, res in sweep.items():
            g = res.flows[res.flows.t > 20].goodput_bps.mean()
            rows.append({**run.tags, "seed": run.seed, "sim": g / (res.summary["rate_bps"] * 1448 / 1500)})
        runs = pd.DataFrame(rows)
        d = runs.groupby("loss_rate").sim.agg(["mean", "std", "min", "max"]).reset_index()
        d["model"] = [markov_model(100e6, 0.1, 1e6, 0.5, lam, 100).normalized_throughput for lam in d.loss_rate]
        fig, axes = plotting.new(1, 1, width=6.5, height=4.2)
        ax = axes[0, 0]
        ax.plot(d.loss_rate, d.model, "o-", label="Markov model (Eq. 21)")
        plotting.line_band(ax, d.loss_rate, d["mean"], d["min"], d["max"], marker="s", ls="--",
                           label="packet simulation")
        ax.set_xscale("log")
        ax.set_xlabel("random loss rate λ (1/s)")
        ax.set_ylabel("normalized throughput")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3, which="both")
        ax.legend()
        figs = plotting.finish(fig, outdir, "packet", "Model against packets (cf. seed 004 Fig. 4)")
        claims = []
        for _, r in d.iterrows():
            lam = r.loss_rate
            note = ("At this rate the windows are too small for three duplicate ACKs: the packet flow waits for "
                    "retransmission timeouts, which the model does not have (see cubiclab.models.bridge)."
                    if lam >= 1 else "Packets come in whole segments with delayed ACKs and a recovery phase; the "
                    "model is a fluid (see cubiclab.models.bridge).")
            claims.append(approx(f"agree_{lam:g}", f"The model gives the packet-level throughput at λ = {lam:g}/s "
                                 "(the paper: analytical and simulated results agree)", float(r.model),
                                 float(r["mean"]), 0.05, paper=f"model {r.model:.3f}", note=note,
                                 robust=bool(lam <= 0.1)))
        d = d.rename(columns={"mean": "sim"})
        return self.outcome(data={"packet": d, "packet_runs": runs}, figures=figs, claims=claims)
