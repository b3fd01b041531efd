"""Seed 004: Bao, Wong, Leung, "A Model for Steady State Throughput of TCP CUBIC". Figs. 3-7
come from the Markov model and its discrete-event validator (cubiclab.models); the C x RTT /
alpha invariance is checked on the model; the last entry runs the same CUBIC through the
packet simulator with Poisson random loss."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cubiclab.experiments import plotting
from cubiclab.experiments.base import Experiment, load_scenario, register, vary
from cubiclab.experiments.claims import MODEL_EVIDENCE, EXTENSION, FRACTION, MODEL, TEXT, Band, Above, Below, ClaimSpec
from cubiclab.models import figures as F

BAO = "C = 100 Mb/s, RTT = 100 ms, alpha = 1 Mb/s^3, beta = 0.5 (kept), N = 100 unless varied"


def _both(plot, outdir, stem, data):
    return [plot(path, data) for path in plotting.paths(outdir, stem)]


@register
class Fig3(Experiment):
    name = "s004-fig3"
    evidence = MODEL_EVIDENCE
    seed = "004"
    figure = "Fig. 3"
    title = "RMS error of the simulated stationary distribution against simulation length"
    setup = ("RMS error (Eq. 22) between the model's stationary distribution and the one counted by the paper's "
             "discrete-event validator after K loss events, N = 100 and 1000, lambda = 1/s; " + BAO +
             ". Mean over 5 validator seeds (coarse: 2 seeds, N = 100 and 300, K up to 1e4).")
    claims = (
        ClaimSpec("rms_falls_with_k", "The two curves show that when the simulation time is increased, the RMS error "
                  "will decrease.", "Sec. III-A, Fig. 3", TEXT, "decreases", "largest over N of log10(RMS at the "
                  "largest K / RMS at the smallest K)", "decades", Below(-0.5, 0.1),
                  "sampling error falls as 1/sqrt(K): two decades of K give one decade; at least half of that",
                  construction="both sides are cubiclab's (its solver of the chain, its discrete-event run of the "
                  "same chain, as s004-fig4's agree): a run that converges to the chain it samples checks the code"),
        ClaimSpec("rms_falls_with_n", "In addition, we notice that when the number of intervals N increases, the RMS "
                  "error becomes smaller.", "Sec. III-A, Fig. 3", TEXT, "smaller", "log10(RMS at the largest N / at "
                  "the smallest N), at the largest K", "decades", Below(0.0, 0.1),
                  "an ordering; Eq. 22 averages over N states, so the scale itself shrinks with N",
                  construction="Eq. 22 averages squared differences of N probabilities of about 1/N each: sampling "
                  "alone gives an RMS of about 1/sqrt(N K), smaller for larger N whatever the model's accuracy"),
    )

    def compute(self, mode, outdir):
        d = (F.bao_fig3_data(n_states=(100, 300), ks=[100, 1000, 10000], seeds=2, by_seed=True) if mode.coarse
             else F.bao_fig3_data(seeds=mode.seeds, by_seed=True))
        # the validator is random: one value per validator seed, judged as an ensemble
        per_seed = [self.claim_values(g) for _, g in d.groupby("seed")]
        vals = {c: [v[c] for v in per_seed] for c in per_seed[0]}
        mean = d.groupby(["n_states", "K"]).rms.agg(rms="mean", rms_std="std").reset_index()
        return vals, {"fig3": mean}, _both(F.plot_bao_fig3, outdir, "fig3", mean)

    @staticmethod
    def claim_values(d) -> dict:
        """The claims from one validator seed's RMS errors (columns n_states, K, rms)."""
        k = d.K.max()
        by_n = {n: g.sort_values("K") for n, g in d.groupby("n_states")}
        at_k = d[d.K == k].set_index("n_states").rms
        ns = sorted(at_k.index)
        return {"rms_falls_with_k": max(float(np.log10(g.rms.iloc[-1] / g.rms.iloc[0])) for g in by_n.values()),
                "rms_falls_with_n": float(np.log10(at_k[ns[-1]] / at_k[ns[0]]))}


@register
class Fig4(Experiment):
    name = "s004-fig4"
    evidence = MODEL_EVIDENCE
    seed = "004"
    figure = "Fig. 4"
    title = "Analytical and simulated normalized throughput against the random loss rate"
    setup = "Eq. 21 against the discrete-event validator (K = 1000 loss events), lambda 0.01-10/s; " + BAO + "."
    claims = (
        ClaimSpec("agree", "This figure shows that the analytical results and simulation results agree with each "
                  "other.", "Sec. III-A, Fig. 4", TEXT, "agree", "largest |analytical - simulated| normalized "
                  "throughput over lambda", "", Below(0.05, 0.02), "K = 1000 loss events leave a few % of sampling "
                  "noise: 0.05",
                  construction="both sides are cubiclab's: its solver of the chain against its own discrete-event "
                  "run of the same model, not the paper's simulation; agreement checks the code"),
    )

    def compute(self, mode, outdir):
        d = F.bao_fig4_data(lams=np.logspace(-2, 1, 5 if mode.coarse else 13), n_events=1000,
                            seeds=1 if mode.coarse else mode.seeds, by_seed=True)
        # the validator is random: one value per validator seed, judged as an ensemble
        agree = [float((g.analytical - g.simulated).abs().max()) for _, g in d.groupby("seed")]
        mean = d.groupby("loss_rate")[["analytical", "simulated"]].mean().reset_index()
        return {"agree": agree}, {"fig4": mean}, _both(F.plot_bao_fig4, outdir, "fig4", mean)


@register
class Fig5(Experiment):
    name = "s004-fig5"
    evidence = MODEL_EVIDENCE
    seed = "004"
    figure = "Fig. 5"
    title = "Normalized throughput against C x RTT for several loss rates"
    setup = "Eq. 21 with the capacity varied at RTT 100 ms, lambda 0.01, 0.1, 1/s; " + BAO + "."
    claims = (
        ClaimSpec("falls_with_bdp", "Fig. 5 also shows that if C·RTT increases, the normalized average throughput "
                  "decreases.", "Sec. III-B, Fig. 5", TEXT, "decreases", "largest step up of the throughput along "
                  "increasing C·RTT, any lambda", "", Below(1e-9, 1e-3), "non-increasing, to rounding"),
        ClaimSpec("random_loss_hurts_large_bdp", "Random packet loss reduces the normalized average throughput of "
                  "large bandwidth-delay product links more.", "Sec. III-B, Fig. 5", TEXT, "more for larger lambda",
                  "drop over the C·RTT range at lambda = 1 minus at lambda = 0.01", "", Above(0.05, 0.05),
                  "an ordering, 5 points of throughput"),
        ClaimSpec("never_one", "Results show that even when λ is very small, the normalized average throughput will "
                  "not attain 1.", "Sec. III-B, Fig. 5", TEXT, "< 1", "largest normalized throughput", "",
                  Below(0.999, 0.001), "congestion losses alone keep it below 1", bounds=FRACTION,
                  construction="an identity of the model: every state loses to congestion at the link's capacity, "
                  "so its throughput is below 1 for any lambda"),
    )

    def compute(self, mode, outdir):
        d = F.bao_fig5_data(bdps=np.logspace(5, 9, 5 if mode.coarse else 17))
        step = max(float(np.diff(g.sort_values("bdp").throughput.to_numpy()).max()) for _, g in d.groupby("loss_rate"))
        drop = {lam: float(g.sort_values("bdp").throughput.iloc[0] - g.sort_values("bdp").throughput.iloc[-1])
                for lam, g in d.groupby("loss_rate")}
        lams = sorted(drop)
        vals = {"falls_with_bdp": step, "random_loss_hurts_large_bdp": drop[lams[-1]] - drop[lams[0]],
                "never_one": float(d.throughput.max())}
        return vals, {"fig5": d}, _both(F.plot_bao_fig5, outdir, "fig5", d)


@register
class Fig6(Experiment):
    name = "s004-fig6"
    evidence = MODEL_EVIDENCE
    seed = "004"
    figure = "Fig. 6"
    title = "Normalized throughput against the window growth factor alpha"
    setup = "Eq. 21 with alpha varied 0.1-10 Mb/s^3, lambda 0.01, 0.1, 1/s; " + BAO + "."
    claims = (
        ClaimSpec("plus_806", "When λ = 1 s⁻¹, the average normalized throughput increases by about 806% when α grows "
                  "from 0.1 Mb/s to 10 Mb/s.", "Sec. III-B, Fig. 6", TEXT, "+806%", "gain from alpha 0.1 to 10 Mb/s "
                  "at lambda = 1", "%", Band(806, 40), "three significant figures of the same model: ± 5%"),
        ClaimSpec("small_lambda_little_gain", "In the figure, when λ = 0.01 s⁻¹, the normalized average throughput is "
                  "not improved much.", "Sec. III-B, Fig. 6", TEXT, "little gain", "gain at lambda = 0.01 over gain "
                  "at lambda = 1", "", Below(0.1, 0.05), "'not much' against +806%: under a tenth"),
        ClaimSpec("improves_with_alpha", "Results show that by moderately increasing α, the throughput performance "
                  "will improve.", "Sec. III-B, Fig. 6", TEXT, "increases with α", "smallest step of the normalized "
                  "throughput along increasing alpha (0.1-10 Mb/s), any lambda", "", Above(0.0, 1e-3),
                  "'will improve': every step up in alpha raises the throughput (an exact computation: any rise)"),
    )

    def compute(self, mode, outdir):
        alphas = np.logspace(5, 7, 5 if mode.coarse else 17)
        d = F.bao_fig6_data(alphas=alphas)
        gain = {lam: 100 * (g.set_index("alpha").throughput[alphas[-1]] / g.set_index("alpha").throughput[alphas[0]]
                            - 1) for lam, g in d.groupby("loss_rate")}
        step = min(float(np.diff(g.sort_values("alpha").throughput.to_numpy()).min()) for _, g in d.groupby("loss_rate"))
        return ({"plus_806": gain[1.0], "small_lambda_little_gain": gain[0.01] / gain[1.0],
                 "improves_with_alpha": step}, {"fig6": d},
                _both(F.plot_bao_fig6, outdir, "fig6", d))


@register
class Fig7(Experiment):
    name = "s004-fig7"
    evidence = MODEL_EVIDENCE
    seed = "004"
    figure = "Fig. 7"
    title = "Normalized throughput against the multiplicative decrease factor beta"
    setup = "Eq. 21 with beta (fraction kept) varied 0.5-0.9, lambda 0.01, 0.1, 1/s; " + BAO + "."
    claims = (
        ClaimSpec("plus_137", "When λ = 1 s⁻¹, the average normalized throughput increases by about 137% when β grows "
                  "from 0.5 to 0.9.", "Sec. III-B, Fig. 7", TEXT, "+137%", "gain from beta 0.5 to 0.9 at lambda = 1",
                  "%", Band(137, 7), "three significant figures of the same model: ± 5%"),
        ClaimSpec("small_lambda_less_gain", "When λ is small (e.g., λ = 0.01 s⁻¹), increasing β will bring less "
                  "throughput gain.", "Sec. III-B, Fig. 7", TEXT, "less gain", "gain at lambda = 1 minus at 0.01",
                  "%", Above(0.0, 5.0), "an ordering"),
        ClaimSpec("improves_with_beta", "Results show that by moderately increasing β, the throughput performance "
                  "will improve.", "Sec. III-B, Fig. 7", TEXT, "increases with β", "smallest step of the normalized "
                  "throughput along increasing beta (0.5-0.9), any lambda", "", Above(0.0, 1e-3),
                  "'will improve': every step up in beta raises the throughput (an exact computation: any rise)"),
    )

    def compute(self, mode, outdir):
        betas = np.round(np.arange(0.5, 0.901, 0.1 if mode.coarse else 0.05), 2)
        d = F.bao_fig7_data(betas=betas)
        gain = {lam: 100 * (g.set_index("beta").throughput[0.9] / g.set_index("beta").throughput[0.5] - 1)
                for lam, g in d.groupby("loss_rate")}
        step = min(float(np.diff(g.sort_values("beta").throughput.to_numpy()).min()) for _, g in d.groupby("loss_rate"))
        return ({"plus_137": gain[1.0], "small_lambda_less_gain": gain[1.0] - gain[0.01],
                 "improves_with_beta": step}, {"fig7": d},
                _both(F.plot_bao_fig7, outdir, "fig7", d))


@register
class Invariance(Experiment):
    name = "s004-invariance"
    evidence = MODEL_EVIDENCE
    seed = "004"
    figure = "Sec. III-B"
    title = "The normalized throughput depends on C x RTT / alpha only"
    setup = ("Eq. 21 at lambda = 1/s for (C, RTT, alpha) = (100 Mb/s, 100 ms, 1 Mb/s^3), (200 Mb/s, 100 ms, 2), "
             "(100 Mb/s, 200 ms, 2) and (50 Mb/s, 50 ms, 1): the first three share C x RTT / alpha = 10, the last "
             "has 2.5.")
    Q = ("Therefore, the normalized throughput depends on the value of C·RTT/α. The effect of an increase of "
         "bandwidth-delay product is equivalent to a decrease of the window growth factor")
    claims = (
        ClaimSpec("invariant", Q, "Sec. III-B", TEXT, "equal throughput", "largest |difference| of the normalized "
                  "throughput among the three settings with the same C·RTT/α", "", Below(1e-6, 1e-6),
                  "an identity of the model, to floating point",
                  construction="the model's equations depend on C, RTT and alpha only through C·RTT/alpha"),
        ClaimSpec("not_trivial", Q, "Sec. III-B", MODEL, "different C·RTT/α, different throughput",
                  "|difference| between the first setting and one with C·RTT/α 4 times smaller", "", Above(0.01, 0.01),
                  "the invariance must not come from a constant result", kind=EXTENSION),
    )

    def compute(self, mode, outdir):
        from cubiclab.models.markov import markov_model

        sets = [(100e6, 0.1, 1e6), (200e6, 0.1, 2e6), (100e6, 0.2, 2e6), (50e6, 0.05, 1e6)]
        x = [markov_model(c, r, a, 0.5, 1.0, 100).normalized_throughput for c, r, a in sets]
        d = pd.DataFrame(sets, columns=["capacity_bps", "rtt_s", "alpha"]).assign(throughput=x)
        return {"invariant": max(abs(v - x[0]) for v in x[1:3]), "not_trivial": abs(x[3] - x[0])}, {"invariance": d}, []


@register
class Packet(Experiment):
    name = "s004-packet"
    seed = "004"
    figure = "model vs packets"
    title = "The Markov model against packet-level simulation with Poisson random loss"
    setup = ("One CUBIC flow (cubic-2008 with beta 0.5 removed, c = alpha / (8 x 1500) packets/s^3, no TCP "
             "friendliness, no fast convergence), 100 Mbps, 100 ms, buffer 2% BDP, Poisson random loss of rate lambda "
             "on the bottleneck (cubiclab.models.bridge gives the mapping and the reasons they differ). Normalized "
             "throughput: goodput over the payload capacity in the measured window. The paper validated the model "
             "against its own discrete-event chain, not packets: these rows are extensions. Full mode's windows hold 10 "
             "random losses, 1000 s at the lowest rate (0.01 per second).")

    claim_runs = {f"agree_{lam:g}": {"loss_rate": lam} for lam in (0.01, 0.1, 1.0)}

    def lams(self, mode):
        return (0.01, 1.0) if mode.coarse else (0.01, 0.1, 1.0)

    @property
    def claims(self):
        from cubiclab.models.markov import markov_model

        out = []
        for lam in (0.01, 0.1, 1.0):
            m = markov_model(100e6, 0.1, 1e6, 0.5, lam, 100).normalized_throughput
            out.append(ClaimSpec(f"agree_{lam:g}", "This figure shows that the analytical results and simulation "
                                 "results agree with each other.", "Sec. III-A, Fig. 4", MODEL, f"model {m:.3f}",
                                 f"packet-level normalized throughput at lambda = {lam:g}/s", "",
                                 Band(round(m, 3), round(min(0.05, 0.25 * m), 3)),
                                 "the model's value ± 0.05, never more than a quarter of it", kind=EXTENSION,
                                 bounds=FRACTION))
        return tuple(out)

    def conditions(self, mode):
        sc = load_scenario("s004_bridge")
        out = []
        for lam in self.lams(mode):
            s = vary(sc)
            s.bottleneck.loss = {"model": "poisson", "rate": float(lam)}
            out.append((s, {"loss_rate": lam}))
        return out

    def per_run(self, run, res, t0, t1):
        g = res.flows[(res.flows.t > t0) & (res.flows.t <= t1)].goodput_bps.mean()
        return {"sim": g / (res.summary["rate_bps"] * 1448 / 1500)}

    def values(self, rows):
        return {f"agree_{lam:g}": float(r.sim) for lam, r in rows.set_index("loss_rate").iterrows()}

    def plot(self, frame, sweep, outdir):
        fig, axes = plotting.new(1, 1, width=6.5, height=4.2)
        plotting.curves(axes[0, 0], frame.assign(alg="cubic-2008"), "loss_rate", "sim")
        axes[0, 0].set_ylim(0, 1)
        return plotting.finish(fig, outdir, "packet", "Model against packets (cf. seed 004 Fig. 4)")
