"""CUBIC against BBR (issue 16): four experiments from papers outside the seeds, on Linux's
own algorithms (`cubic`, and `bbr`: BBR v1 as `tcp_bbr.c` ships it).

- Cao et al., "When to use and when not to use BBR: An empirical analysis and evaluation
  study", IMC 2019: BBR against CUBIC over buffers from 0.1 to 10 BDP (the crossover), and
  each alone under random loss (BBR's goodput flat up to a "cliff point", CUBIC's falling).
- Ware et al., "Modeling BBR's Interactions with Loss-Based Congestion Control", IMC 2019: one
  BBR flow against 1 to 16 CUBIC flows, BBR's share set by its in-flight cap.
- Hock, Bless, Zitterbart, "Experimental Evaluation of BBR Congestion Control", ICNP 2017:
  two BBR flows with different RTTs, the longer one getting more.

The quotes of Cao et al. are from their abstract; those of Ware et al. and Hock et al. are
their findings as we know them, worded as close to the papers as we can without the text at
hand (each row says so). None of these papers is a seed: every row names its paper.
"""

from __future__ import annotations

from cubiclab.experiments import plotting
from cubiclab.experiments.base import Experiment, load_scenario, register, vary
from cubiclab.experiments.claims import EXTENSION, NONNEGATIVE, RECALLED, TEXT, Above, Below, ClaimSpec
from cubiclab.experiments.common import group_means, select_row
from cubiclab.experiments.unstated import buffer, rate_of, rtt_of

CAO = "Cao et al., IMC 2019 (outside the seeds), abstract"
WARE = "Ware et al., IMC 2019 (outside the seeds), findings as recalled"
HOCK = "Hock, Bless, Zitterbart, ICNP 2017 (outside the seeds), findings as recalled"
SEED = "outside"
MSS_BITS = 1448 * 8


def goodput(res, t0, t1) -> dict:
    return group_means(res, t0, t1, column="goodput_bps")


def retransmitted(res, t0, t1) -> dict:
    """Per group: segments retransmitted over (t0, t1] per segment delivered."""
    f = res.flows[(res.flows.t > t0) & (res.flows.t <= t1)]
    out = {}
    for g, d in f.groupby("group", observed=True):
        delivered = d.goodput_bps.mean() * (t1 - t0) * d.flow.nunique() / MSS_BITS
        out[str(g)] = float(d.retransmits.sum() / delivered) if delivered > 0 else float("nan")
    return out


def bbr_share(row) -> float:
    """BBR's fraction of what the flows together delivered."""
    return row.bbr_bps / (row.bbr_bps + row.cubic_bps)


@register
class BbrCubicBuffers(Experiment):
    name = "x-bbr-cubic-buffers"
    # each paper claim also judged with BBRv3 in place of BBR v1 (issue 29)
    variants = ("bbr3",)
    seed = SEED
    figure = "Cao et al. (IMC 2019)"
    title = "BBR against CUBIC over buffers from 0.1 to 10 BDP: the crossover"
    setup = ("One BBR (Linux v1) and one CUBIC (Linux) flow, 20 Mbps, RTT 40 ms for both (BDP 69 packets), drop-tail "
             "buffer from 0.1 to 10 BDP (0.1, 1, 10 in quick mode). BBR's share of the two flows' goodput over the "
             "measured window; and, each alone at 0.1 BDP, their retransmissions per delivered segment.")
    # The abstract gives neither the link nor the RTT (the buffer is the swept axis).
    unstated = (rate_of("20Mbps", "a 20 Mbps bottleneck"), rtt_of("40ms", "both flows at 40 ms"),)
    claim_runs = {"bbr_wins_shallow": {"buffer_bdp": 0.1, "who": "both"},
                  "cubic_wins_deep": {"buffer_bdp": 10.0, "who": "both"},
                  "bbr_retransmits_more_shallow": {"buffer_bdp": 0.1}}
    claims = (
        ClaimSpec("bbr_wins_shallow", "We find that BBR is well suited for networks with shallow buffers, despite its "
                  "high retransmissions, whereas existing loss-based algorithms are better suited for deep buffers.",
                  CAO, TEXT, "BBR ahead in shallow buffers", "BBR's share of the two flows' goodput at 0.1 BDP, minus "
                  "one half", "", Above(0.1, 0.05), "an ordering: BBR ahead by at least 10 points of the pair's "
                  "goodput, beyond a tie within the ensemble's noise"),
        ClaimSpec("cubic_wins_deep", "We find that BBR is well suited for networks with shallow buffers, despite its "
                  "high retransmissions, whereas existing loss-based algorithms are better suited for deep buffers.",
                  CAO, TEXT, "CUBIC ahead in deep buffers", "BBR's share of the two flows' goodput at 10 BDP, minus "
                  "one half", "", Below(-0.1, 0.05), "an ordering: CUBIC ahead by at least 10 points"),
        ClaimSpec("bbr_retransmits_more_shallow", "We find that BBR is well suited for networks with shallow buffers, "
                  "despite its high retransmissions, whereas existing loss-based algorithms are better suited for deep "
                  "buffers.", CAO, TEXT, "BBR retransmits more", "BBR's retransmissions per delivered segment over "
                  "CUBIC's at 0.1 BDP", "", Above(2.0, 1.0), "'high retransmissions': at least twice CUBIC's",
                  kind=EXTENSION, bounds=NONNEGATIVE),
    )

    def conditions(self, mode):
        sc = load_scenario("x_bbr_cubic_buffers")
        buffers = (0.1, 1.0, 10.0) if mode.coarse else (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0)
        out = [(vary(sc, buffer=f"{b * 100:g}%BDP"), {"buffer_bdp": b, "who": "both"}) for b in buffers]
        for who in ("bbr", "cubic"):
            alone = vary(sc, buffer="10%BDP")
            alone.flows = [g for g in alone.flows if g.name == who]
            out.append((alone, {"buffer_bdp": 0.1, "who": who}))
        return out

    def per_run(self, run, res, t0, t1):
        g, r = goodput(res, t0, t1), retransmitted(res, t0, t1)
        nan = float("nan")
        return {"bbr_bps": g.get("bbr", nan), "cubic_bps": g.get("cubic", nan), "bbr_retx": r.get("bbr", nan),
                "cubic_retx": r.get("cubic", nan)}

    def values(self, rows):
        shallow, deep = select_row(rows, buffer_bdp=0.1, who="both"), select_row(rows, buffer_bdp=10.0, who="both")
        bbr_alone, cubic_alone = select_row(rows, who="bbr"), select_row(rows, who="cubic")
        return {"bbr_wins_shallow": bbr_share(shallow) - 0.5, "cubic_wins_deep": bbr_share(deep) - 0.5,
                "bbr_retransmits_more_shallow": bbr_alone.bbr_retx / max(cubic_alone.cubic_retx, 1e-6)}

    def plot(self, frame, sweep, outdir):
        frame = frame[frame.who == "both"]
        f = frame.assign(share=frame.bbr_bps / (frame.bbr_bps + frame.cubic_bps), alg="bbr")
        fig, axes = plotting.new(2, 1, width=5.0, height=3.6)
        plotting.curves(axes[0, 0], f, "buffer_bdp", "share")
        axes[0, 0].axhline(0.5, color="k", lw=0.6, ls=":")
        axes[0, 0].set_ylabel("BBR's share of the goodput")
        axes[0, 0].set_xlabel("buffer (BDP)")
        long = frame.melt(id_vars=["buffer_bdp", "seed"], value_vars=["bbr_retx", "cubic_retx"], var_name="alg",
                          value_name="retx")
        long["alg"] = long.alg.str.replace("_retx", "")
        plotting.curves(axes[0, 1], long, "buffer_bdp", "retx")
        axes[0, 1].set_ylabel("retransmissions per delivered segment (together)")
        axes[0, 1].set_xlabel("buffer (BDP)")
        return plotting.finish(fig, outdir, "bbr_cubic_buffers", "BBR against CUBIC, 20 Mbps, 40 ms (cf. Cao et al.)")


@register
class BbrVsNCubic(Experiment):
    name = "x-bbr-vs-n-cubic"
    # each paper claim also judged with BBRv3 in place of BBR v1 (issue 29)
    variants = ("bbr3",)
    seed = SEED
    figure = "Ware et al. (IMC 2019)"
    title = "One BBR flow against 1 to 16 CUBIC flows: BBR's share set by its in-flight cap"
    setup = ("One BBR (Linux v1) flow and N CUBIC (Linux) flows, N = 1, 2, 4, 8, 16 (1, 4, 16 in quick mode), all "
             "started together, 40 Mbps, RTT 40 ms (BDP 138 packets), a four-BDP drop-tail buffer. BBR's fraction of "
             "the link over the measured window.")
    # Recalled findings: the link, the RTT and the buffer are ours (N is the swept axis).
    unstated = (rate_of("40Mbps", "a 40 Mbps bottleneck"), rtt_of("40ms", "every flow at 40 ms"),
                buffer("four BDPs of drop-tail buffer"),)
    claim_runs = {"link_share_flat": {}, "link_share_above_fair": {"n_cubic": 16}}
    claims = (
        ClaimSpec("link_share_flat", "BBR's share of the bottleneck is set by its in-flight cap and is nearly independent "
                  "of the number of competing loss-based (CUBIC) flows.", WARE, RECALLED, "nearly flat in N",
                  "largest minus smallest of BBR's link share (its bytes over the link's capacity) over N", "", Below(0.15, 0.05),
                  "'nearly independent': BBR's fraction moves by less than 15 points from 1 to 16 CUBIC flows (a fair "
                  "share would fall from 50% to 6%)"),
        ClaimSpec("link_share_above_fair", "BBR's share of the bottleneck is set by its in-flight cap and is nearly "
                  "independent of the number of competing loss-based (CUBIC) flows.", WARE, RECALLED,
                  "far above a fair share at N = 16", "BBR's fraction of the link against 16 CUBIC flows over its "
                  "fair share 1/17", "", Above(2.0, 0.5), "a consequence: a flat share is many fair shares when N is "
                  "large", kind=EXTENSION, bounds=NONNEGATIVE),
    )

    def conditions(self, mode):
        sc = load_scenario("x_bbr_vs_n_cubic")
        ns = (1, 4, 16) if mode.coarse else (1, 2, 4, 8, 16)
        return [(vary(sc, groups={"cubic": {"count": n}}), {"n_cubic": n}) for n in ns]

    def per_run(self, run, res, t0, t1):
        g = goodput(res, t0, t1)
        rate = float(res.summary["rate_bps"])
        return {"bbr_frac": g["bbr"] / rate, "cubic_frac": g["cubic"] / rate}

    def values(self, rows):
        frac = rows.set_index("n_cubic").bbr_frac
        return {"link_share_flat": float(frac.max() - frac.min()), "link_share_above_fair": float(frac.loc[16] * 17)}

    def plot(self, frame, sweep, outdir):
        f = frame.assign(alg="bbr")
        fig, axes = plotting.new(1, 1, width=5.0, height=3.6)
        ax = axes[0, 0]
        plotting.curves(ax, f, "n_cubic", "bbr_frac")
        ns = sorted(frame.n_cubic.unique())
        ax.plot(ns, [1 / (n + 1) for n in ns], "k:", lw=0.8, label="fair share 1/(N+1)")
        ax.set_xlabel("CUBIC flows N")
        ax.set_ylabel("BBR's fraction of the link")
        ax.legend(fontsize="small")
        return plotting.finish(fig, outdir, "bbr_vs_n_cubic", "One BBR against N CUBIC, 40 Mbps, 40 ms, 4 BDP "
                                                              "(cf. Ware et al.)")


@register
class BbrRttUnfairness(Experiment):
    name = "x-bbr-rtt-unfairness"
    # each paper claim also judged with BBRv3 in place of BBR v1 (issue 29)
    variants = ("bbr3",)
    seed = SEED
    figure = "Hock et al. (ICNP 2017)"
    title = "Two BBR flows with different RTTs: the longer one gets more"
    setup = ("Two BBR (Linux v1) flows, RTT 10 ms and 50 ms, started together, 20 Mbps, drop-tail buffer of one and of "
             "four BDPs of the 50 ms path (83 and 333 packets). The 50 ms flow's share of the two flows' goodput.")
    # Recalled findings: the link and the short flow's RTT are ours (the buffer is the swept axis).
    unstated = (rate_of("20Mbps", "a 20 Mbps bottleneck"), rtt_of("10ms", "the short flow at 10 ms"),)
    claim_runs = {"long_rtt_wins_deep": {"buffer_bdp": 4.0}, "long_rtt_wins_one_bdp": {"buffer_bdp": 1.0}}
    claims = (
        ClaimSpec("long_rtt_wins_deep", "BBR flows with a longer RTT get a larger share of the bottleneck than "
                  "competing BBR flows with a shorter RTT, especially with large buffers.", HOCK, RECALLED,
                  "the 50 ms flow ahead", "the 50 ms flow's share of the two flows' goodput with four BDPs of buffer, "
                  "minus one half", "", Above(0.1, 0.05), "an ordering, by at least 10 points (loss-based flows "
                  "would favour the 10 ms flow instead)"),
        ClaimSpec("long_rtt_wins_one_bdp", "BBR flows with a longer RTT get a larger share of the bottleneck than "
                  "competing BBR flows with a shorter RTT, especially with large buffers.", HOCK, RECALLED,
                  "(weaker with one BDP)", "the 50 ms flow's share with one BDP of buffer, minus one half", "",
                  Above(0.0, 0.05), "the direction only: the paper says the effect is strongest in large buffers",
                  kind=EXTENSION),
    )

    def conditions(self, mode):
        sc = load_scenario("x_bbr_rtt_unfairness")
        return [(vary(sc, buffer=f"{b * 100:g}%BDP"), {"buffer_bdp": b}) for b in (1.0, 4.0)]

    def per_run(self, run, res, t0, t1):
        g = goodput(res, t0, t1)
        return {"short_bps": g["short"], "long_bps": g["long"]}

    def values(self, rows):
        def long_share(b):
            r = select_row(rows, buffer_bdp=b)
            return r.long_bps / (r.long_bps + r.short_bps) - 0.5

        return {"long_rtt_wins_deep": long_share(4.0), "long_rtt_wins_one_bdp": long_share(1.0)}

    def plot(self, frame, sweep, outdir):
        fig, axes = plotting.new(2, 1, width=5.0, height=3.4)
        for ax, b in zip(axes[0], (1.0, 4.0)):
            plotting.cwnd_axes(ax, plotting.first_run(sweep, buffer_bdp=b), f"buffer {b:g} BDP of the 50 ms path",
                               lw=0.6, per_flow=True)
        return plotting.finish(fig, outdir, "bbr_rtt_unfairness", "BBR at 10 ms and 50 ms, 20 Mbps (cf. Hock et al.)")


@register
class BbrRandomLoss(Experiment):
    name = "x-bbr-random-loss"
    # each paper claim also judged with BBRv3 in place of BBR v1 (issue 29)
    variants = ("bbr3",)
    seed = SEED
    figure = "Cao et al. (IMC 2019)"
    title = "BBR and CUBIC alone under random loss: BBR flat up to a cliff, CUBIC falling"
    setup = ("One flow alone, BBR (Linux v1) or CUBIC (Linux), 20 Mbps, RTT 40 ms, one BDP of drop-tail buffer, "
             "Bernoulli random loss of 0, 0.1, 1, 2, 5, 10, 20 and 30% (0, 2, 10, 30% in quick mode) on the "
             "bottleneck. Goodput over the measured window, as a fraction of the link.")
    # The abstract gives neither the link, the RTT nor the buffer (the loss rate is the swept axis).
    unstated = (rate_of("20Mbps", "a 20 Mbps bottleneck"), rtt_of("40ms", "the flow at 40 ms"),
                buffer("one BDP of drop-tail buffer"),)
    claim_runs = {"bbr_flat": {"alg": "bbr"}, "cubic_collapses": {"alg": "cubic"}, "bbr_cliff": {"alg": "bbr"}}
    claims = (
        ClaimSpec("bbr_flat", "Finally, we demonstrate the existence of a loss rate \"cliff point\" beyond which "
                  "BBR's goodput drops abruptly.", CAO, TEXT, "flat below the cliff", "BBR's goodput at 2% random "
                  "loss over its goodput without loss", "", Above(0.8, 0.05), "below the cliff point BBR ignores "
                  "random loss: it keeps at least 80% of its lossless goodput", bounds=NONNEGATIVE),
        ClaimSpec("cubic_collapses", "Finally, we demonstrate the existence of a loss rate \"cliff point\" beyond "
                  "which BBR's goodput drops abruptly.", CAO, TEXT, "CUBIC collapses under loss (not stated)",
                  "CUBIC's goodput at 2% random loss over its goodput without loss", "", Below(0.3, 0.05),
                  "the abstract's cliff is BBR's; CUBIC's goodput under the same random loss is the contrast its "
                  "sentence implies, stated nowhere in it: an extension. A loss-based window at 2% loss is a few "
                  "packets: below 30% of the link (the Mathis rate, 1.22 MSS / (RTT sqrt p), is 2.5 Mbps here)",
                  kind=EXTENSION, bounds=NONNEGATIVE),
        ClaimSpec("bbr_cliff", "Finally, we demonstrate the existence of a loss rate \"cliff point\" beyond which "
                  "BBR's goodput drops abruptly.", CAO, TEXT, "a cliff", "BBR's goodput at 30% random loss over its "
                  "goodput at 10%", "", Below(0.5, 0.1), "'drops abruptly': less than half between 10% and 30% "
                  "(Linux BBR v1 treats more than 20% loss as a policer, LT_LOSS_THRESH = 50/256)", bounds=NONNEGATIVE),
    )

    def conditions(self, mode):
        sc = load_scenario("x_bbr_random_loss")
        losses = (0.0, 0.02, 0.10, 0.30) if mode.coarse else (0.0, 0.001, 0.01, 0.02, 0.05, 0.10, 0.20, 0.30)
        out = []
        for alg in ("bbr", "cubic"):
            for p in losses:
                s = vary(sc, groups={"flow": {"algorithm": alg}})
                s.bottleneck.loss = {"model": "bernoulli", "p": p} if p else None
                out.append((s, {"alg": alg, "loss": p}))
        return out

    def per_run(self, run, res, t0, t1):
        return {"frac": goodput(res, t0, t1)["flow"] / float(res.summary["rate_bps"])}

    def values(self, rows):
        def frac(alg, p):
            return select_row(rows, alg=alg, loss=p).frac

        return {"bbr_flat": frac("bbr", 0.02) / frac("bbr", 0.0),
                "cubic_collapses": frac("cubic", 0.02) / frac("cubic", 0.0),
                "bbr_cliff": frac("bbr", 0.30) / max(frac("bbr", 0.10), 1e-9)}

    def plot(self, frame, sweep, outdir):
        f = frame.assign(loss_pct=(frame.loss * 100).where(frame.loss > 0, 0.01))
        fig, axes = plotting.new(1, 1, width=5.5, height=3.8)
        ax = axes[0, 0]
        plotting.curves(ax, f, "loss_pct", "frac")
        ax.set_xlabel("random loss (%; 0 drawn at 0.01)")
        ax.set_ylabel("goodput / link rate")
        return plotting.finish(fig, outdir, "bbr_random_loss", "BBR and CUBIC alone under random loss, 20 Mbps, "
                                                               "40 ms (cf. Cao et al.)")
