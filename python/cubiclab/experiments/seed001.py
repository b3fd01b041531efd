"""Seed 001: Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant" (PFLDnet 2005).
Figs. 3-4 and Experiments 1-3, which ran in ns-2 with the original CUBIC (beta 0.8 kept,
C 0.4, Smax 160: our `cubic-2005`). The rivals are today's Linux modules (bic, highspeed,
scalable, htcp), not the 2005 ns-2 ones."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from cubiclab import metrics
from cubiclab.experiments import plotting
from cubiclab.experiments.base import Experiment, approx, at_most, check, mbps, ms, register, untested, vary
from cubiclab.experiments.common import duration_s, group_flow_ids, group_means, shares
from cubiclab.sweep import Run

NS2 = "The paper ran ns-2 with its own background traffic; ours is the cubiclab packet simulator"
HS5 = ("cubic-2005", "bic", "highspeed", "scalable", "htcp")


def spread_rtts(sc, factors=(0.95, 0.98, 1.02, 1.05)):
    """Split each flow group into one group per flow, with RTTs spread by `factors` around
    the group's RTT and starts `start_spacing` apart (seed 001: "their starting times and
    RTTs are slightly varied to reduce the phase effect")."""
    from cubiclab import units

    sc = copy.deepcopy(sc)
    out = []
    for g in sc.flows:
        rtt = units.parse_time(g.rtt, "rtt")
        start = units.parse_time(g.start, "start")
        spacing = units.parse_time(g.start_spacing, "start_spacing")
        for k in range(g.count):
            h = copy.deepcopy(g)
            h.count = 1
            h.rtt = f"{int(rtt * factors[k % len(factors)])}ns"
            h.start = f"{start + k * spacing}ns"
            h.start_spacing = "0s"
            out.append(h)
    sc.flows = out
    return sc


@register
class Fig3_4(Experiment):
    name = "s001-fig3-4"
    seed = "001"
    figure = "Figs. 3-4"
    title = "Two CUBIC and two TCP flows, 500 Mbps, 100 ms: utilisation and convergence"
    setup = ("Two CUBIC (cubic-2005: beta 0.8, C 0.4, Smax 160) and two TCP-SACK flows, 500 Mbps, RTT 100 ms, "
             "buffer 100% BDP, about 10% background web traffic both ways. The second CUBIC flow starts 20 s after "
             "the first (unstated). Shares are of the link after the first 10% of the run; convergence: both CUBIC "
             "flows' 10 s mean throughput within 20% of their mean, from the second one's start to the end.")
    algorithms = ("cubic-2005",)

    def runs(self, quick):
        sc = self.scenario("s001_fig3")
        return [Run(vary(sc, duration="300s" if quick else "600s"), {})]

    def analyse(self, sweep, quick, outdir):
        res = sweep.results(0)
        t0 = 0.1 * duration_s(res)
        sh = shares(res, t0)
        ids = group_flow_ids(res, "cubic")
        start2 = float(res.totals.set_index("flow").start_s[ids].max())
        t, X = metrics.throughput_matrix(res.flows, "throughput_bps", ids)
        conv = metrics.convergence_time(t, X, 0.2, start=start2, smooth=10.0)
        fig, axes = plotting.new(2, 1, width=6, height=4.2)
        labels = {"cubic": "CUBIC", "tcp": "TCP-SACK"}
        plotting.cwnd_axes(axes[0, 0], res, "(Fig. 3) first 100 s", labels=labels, t_max=100)
        plotting.cwnd_axes(axes[0, 1], res, "(Fig. 4) the whole run", labels=labels)
        figs = plotting.finish(fig, outdir, "fig3_4", "2 CUBIC + 2 TCP, 500 Mbps, 100 ms (cf. seed 001 Figs. 3-4)")
        has_bg = bool(getattr(res.scenario, "web", None))
        claims = [
            approx("utilization", "Total network utilisation is around 98%", 0.98, sh["utilization"], 0.03,
                   paper="≈ 98%", note=NS2 + ".", robust=True),
            approx("cubic_share", "The two CUBIC flows take about 78% of the bandwidth", 0.78, sh["cubic"], 0.08,
                   paper="≈ 78%", note=NS2 + "; the split depends on how much the background traffic takes."),
            approx("tcp_share", "The two TCP flows take 11%", 0.11, sh["tcp"], 0.06, paper="≈ 11%", note=NS2 + "."),
            (approx("background_share", "The background flows take around 9%", 0.09, sh["other"], 0.05,
                    paper="≈ 9%", note="Our web sessions are set to offer 10% of the link per direction.")
             if has_bg else untested("background_share", "The background flows take around 9%", "≈ 9%",
                                     "no background traffic in this build")),
            at_most("converge_220s", "The two CUBIC flows converge to a fair share around 220 s (s from the second "
                    "flow's start to within 20% for good)", "≈ 220 s", conv, 300.0,
                    note="The paper's start times are unstated; " + NS2 + "."),
        ]
        data = pd.DataFrame([{**sh, "convergence_20pct_s": conv}])
        return self.outcome(data={"fig3_4": data}, figures=figs, claims=claims)


@register
class Exp1_2(Experiment):
    name = "s001-exp1-2"
    seed = "001"
    figure = "Exps. 1-2 (Figs. 5-6)"
    title = "TCP-friendly ratio against bandwidth at 10 ms and 100 ms (CUBIC, BIC, HSTCP, STCP, HTCP)"
    setup = ("Four flows of a high-speed protocol against four TCP-SACK flows, RTTs spread ±5% around 10 ms "
             "(Exp. 1) or 100 ms (Exp. 2), bottleneck 20 Mbps - 1 Gbps, buffer 100% BDP, about 10% background "
             "web traffic. TCP-friendly ratio: mean TCP-SACK flow over mean high-speed flow, after the first 10% "
             "of the run. CUBIC is cubic-2005; BIC, HSTCP, STCP and HTCP are today's Linux modules.")
    algorithms = HS5

    def bws(self, quick):
        return (100, 500) if quick else (20, 50, 100, 200, 500, 1000)

    def runs(self, quick):
        sc = self.scenario("s001_friendliness")
        runs = []
        for rtt in (10, 100):
            dur = ("30s" if rtt == 10 else "60s") if quick else ("120s" if rtt == 10 else "300s")
            for alg in HS5:
                for bw in self.bws(quick):
                    s = vary(sc, rate=mbps(bw), rtt=ms(rtt), duration=dur, groups={"hs": {"algorithm": alg}})
                    runs.append(Run(spread_rtts(s), {"alg": alg, "rtt": rtt, "bw": bw}))
        return runs

    def analyse(self, sweep, quick, outdir):
        rows = []
        for run, res in sweep.items():
            t0 = 0.1 * duration_s(res)
            g = group_means(res, t0)
            rows.append({**run.tags, "ratio": metrics.tcp_friendly_ratio(g["sack"] / 4, g["hs"] / 4),
                         "utilization": metrics.link_utilization(res.link, t0)})
        d = pd.DataFrame(rows)
        fig, axes = plotting.new(2, 1, width=5.5, height=4.2)
        for i, rtt in enumerate((10, 100)):
            ax = axes[0, i]
            for alg, g in d[d.rtt == rtt].groupby("alg", sort=False):
                c, m, lab = plotting.style(alg)
                g = g.sort_values("bw")
                ax.plot(g.bw, g.ratio, marker=m, color=c, label=lab)
            plotting.log_ticks(ax, self.bws(quick))
            ax.set_xlabel("bottleneck bandwidth (Mbps)")
            ax.set_ylabel("TCP-friendly ratio (TCP / high-speed)")
            ax.set_title(f"Exp. {i + 1}: RTT ≈ {rtt} ms (Fig. {5 + i})")
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize="small")
        figs = plotting.finish(fig, outdir, "exp1_2", "TCP friendliness (cf. seed 001 Figs. 5-6)")
        p1 = d[d.rtt == 10].pivot(index="bw", columns="alg").ratio
        p2 = d[d.rtt == 100].pivot(index="bw", columns="alg").ratio
        lo, hi = min(p1.index), max(p1.index)
        mid = 100 if 100 in p1.index else lo
        drop = {a: p1[a][hi] / p1[a][mid] for a in ("bic", "highspeed", "scalable")}
        claims = [
            check("cubic_htcp_friendly_10ms", "Exp. 1 (10 ms): CUBIC and HTCP consistently give good TCP "
                  "friendliness (their lowest ratio over bandwidths)", "good at every bandwidth",
                  f"CUBIC {p1['cubic-2005'].min():.2f}, HTCP {p1.htcp.min():.2f}",
                  bool(min(p1["cubic-2005"].min(), p1.htcp.min()) >= 0.7), ">= 0.7 for both",
                  note="Linux HTCP today (with RTT scaling) or our cubic-2005 is less friendly than in the paper's "
                       "ns-2 runs; " + NS2 + ".", robust=True),
            check("others_drop_10ms", f"Exp. 1: from {mid} Mbps to {hi} Mbps the ratios of BIC, HSTCP and STCP drop "
                  "dramatically (ratio at the top over ratio at 100 Mbps)", "drop dramatically",
                  ", ".join(f"{a} ×{v:.2f}" for a, v in drop.items()), all(v < 0.75 for v in drop.values()),
                  "each below ×0.75", note="Today's Linux BIC/HSTCP/STCP against the 2005 ns-2 ones; " + NS2 + "."),
            check("stcp_worst_10ms", f"Exp. 1: Scalable TCP shows the worst TCP friendliness (at {hi} Mbps)",
                  "STCP worst", ", ".join(f"{a} {p1[a][hi]:.2f}" for a in HS5),
                  bool(p1.scalable[hi] <= p1.loc[hi].min() + 1e-12), "STCP's ratio is the smallest",
                  note=NS2 + "."),
            check("ratio_drops_100ms", "Exp. 2 (100 ms): the ratio drops quickly as bandwidth grows beyond 20 Mbps "
                  f"(ratio at {hi} below ratio at {lo} Mbps, every protocol)", "drops",
                  ", ".join(f"{a} {p2[a][lo]:.2f}→{p2[a][hi]:.2f}" for a in HS5),
                  all(p2[a][hi] < p2[a][lo] for a in HS5), "falls for each", note=NS2 + "."),
            check("cubic_best_100ms", "Exp. 2: overall CUBIC shows a better TCP-friendly ratio than the other "
                  "protocols (mean over bandwidths)", "CUBIC best",
                  ", ".join(f"{a} {p2[a].mean():.2f}" for a in HS5),
                  bool(p2["cubic-2005"].mean() >= p2.mean().max() - 1e-12), "CUBIC's mean is the largest",
                  note=NS2 + "; HTCP's RTT scaling in Linux today makes it gentler at 100 ms than in 2005."),
        ]
        return self.outcome(data={"exp1_2": d}, figures=figs, claims=claims)


@register
class Exp3(Experiment):
    name = "s001-exp3"
    seed = "001"
    figure = "Exp. 3 (Figs. 8-11)"
    title = "Stability: CoV of throughput, 4 high-speed flows (~220 ms) and 4 SACK flows (~20 ms), 2.5 Gbps"
    setup = ("Four high-speed flows at RTTs around 220 ms and four TCP-SACK flows around 20 ms over 2.5 Gbps, "
             "buffer 20% or 200% of the BDP, about 10% background web traffic. Stability: coefficient of variation "
             "of each high-speed flow's throughput at 1 s (and 5 s, 10 s) time scales, averaged over the four, "
             "after the first third of the run. Quick mode runs only the 20% buffer with CUBIC, STCP and HTCP.")
    algorithms = HS5

    def grid(self, quick):
        if quick:
            return ("cubic-2005", "scalable", "htcp"), (20,)
        return HS5, (20, 200)

    def runs(self, quick):
        sc = self.scenario("s001_stability")
        algs, bufs = self.grid(quick)
        runs = []
        for alg in algs:
            for b in bufs:
                s = vary(sc, buffer=f"{b}%BDP", duration="40s" if quick else "150s", groups={"hs": {"algorithm": alg}})
                runs.append(Run(spread_rtts(s), {"alg": alg, "buffer": b}))
        return runs

    def analyse(self, sweep, quick, outdir):
        scales = (1.0, 5.0) if quick else (1.0, 5.0, 10.0)
        rows = []
        traces = {}
        for run, res in sweep.items():
            t0 = duration_s(res) / 3
            covs = {s: [] for s in scales}
            for f in group_flow_ids(res, "hs"):
                d = res.flows[res.flows.flow == f]
                c = metrics.cov_at_timescales(d.t, d.throughput_bps, scales, t0=t0)
                for s in scales:
                    covs[s].append(c[s])
            row = {**run.tags, **{f"cov_{s:g}s": float(np.nanmean(v)) for s, v in covs.items()},
                   "utilization": metrics.link_utilization(res.link, t0)}
            rows.append(row)
            traces[(run.tags["alg"], run.tags["buffer"])] = res
        d = pd.DataFrame(rows)
        bufs = sorted(d.buffer.unique())
        fig, axes = plotting.new(len(bufs), 1, width=5.5, height=4.2)
        for i, b in enumerate(bufs):
            ax = axes[0, i]
            g = d[d.buffer == b]
            x = np.arange(len(g))
            for j, s in enumerate(scales):
                ax.bar(x + (j - (len(scales) - 1) / 2) * 0.25, g[f"cov_{s:g}s"], width=0.25, label=f"{s:g} s scale")
            ax.set_xticks(x)
            ax.set_xticklabels([plotting.style(a)[2] for a in g.alg], rotation=20)
            ax.set_ylabel("CoV of throughput (high-speed flows)")
            ax.set_title(f"buffer {b}% BDP (Fig. {10 if b == 20 else 11})")
            ax.grid(alpha=0.3, axis="y")
            ax.legend(fontsize="small")
        figs = plotting.finish(fig, outdir, "exp3_cov", "Stability over 2.5 Gbps (cf. seed 001 Figs. 10-11)")
        fig, axes = plotting.new(1, len(traces), width=10, height=2.6)
        for k, ((alg, b), res) in enumerate(sorted(traces.items())):
            ax = axes[k, 0]
            for f, dd in res.flows.groupby("flow"):
                grp = str(res.totals.group[res.totals.flow == f].iloc[0])
                ax.plot(dd.t, dd.throughput_bps / 1e6, lw=0.5, color="C3" if grp == "hs" else "k", alpha=0.8)
            ax.set_title(f"{plotting.style(alg)[2]}, buffer {b}% BDP (red: high-speed, black: SACK)", fontsize="small")
            ax.set_ylabel("Mbit/s")
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel("time (s)")
        figs += plotting.finish(fig, outdir, "exp3_throughput", "Throughput (cf. seed 001 Figs. 8-9)")
        claims = []
        for b in bufs:
            p = d[d.buffer == b].set_index("alg")["cov_1s"]
            cub = p["cubic-2005"]
            claims.append(check(f"cubic_stable_{b}", f"CUBIC shows good stability (buffer {b}% BDP): its CoV at 1 s "
                                f"is not above the median of the protocols", "CUBIC stable",
                                ", ".join(f"{a} {v:.3f}" for a, v in p.items()), bool(cub <= p.median() + 1e-12),
                                "<= median", note=NS2 + "."))
            unstable = [a for a in ("scalable", "htcp") if a in p.index]
            claims.append(check(f"stcp_htcp_unstable_{b}", f"STCP and HTCP have stability issues (buffer {b}% BDP): "
                                "their CoV above CUBIC's", "more oscillation than CUBIC",
                                ", ".join(f"{a} {p[a]:.3f}" for a in unstable) + f" vs CUBIC {cub:.3f}",
                                all(p[a] > cub for a in unstable), "each above CUBIC",
                                note="Linux HTCP and STCP today, and our background traffic, differ from the "
                                     "paper's ns-2 runs (which its authors said needed confirmation)."))
        if quick:
            claims.append(untested("buffer_200", "The same at 200% BDP", "CUBIC stable", "quick mode runs 20% only"))
        return self.outcome(data={"exp3": d}, figures=figs, claims=claims)
