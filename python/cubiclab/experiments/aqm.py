"""Today's queues (issue 27): three claims from outside the seeds about the queue disciplines
and the scalable congestion control cubiclab models from Linux 6.18.

- RFC 8290 (Hoeiland-Joergensen et al., 2018), FQ-CoDel: flow isolation, short queues, and
  the per-flow fairness its deficit round robin implies. Quoted from its abstract.
- Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (the algorithm RFC 8257 describes):
  the queue held near the marking threshold K without loss of throughput. Quoted from its
  Sections 3 and 3.3; the bands come from its own analysis (Eqs. 8-13).
- RFC 9332 (De Schepper, Briscoe, White, 2023), DualPI2: Classic and Scalable flows at
  roughly the same rate. Quoted from the abstract of draft-ietf-tsvwg-aqm-dualq-coupled-22,
  the draft that became RFC 9332 (the RFC's abstract no longer carries the sentence).

None of these is a seed: every row names its source (`seed = "outside"`). The Scalable flow
is Linux's DCTCP, which sends ECT(0) (this kernel cannot make a congestion control set
ECT(1) on data), classified as L4S by DualPI2's `any_ect` mask (`ecn_mask = "any_ect"`).
"""

from __future__ import annotations

import math

from cubiclab import metrics, units
from cubiclab.experiments import plotting
from cubiclab.experiments.base import Experiment, load_scenario, register, vary
from cubiclab.experiments.claims import (EXTENSION, FRACTION, LINK_UTILISATION, NONNEGATIVE, TEXT, Above, Band, Below,
                                         ClaimSpec, jain)
from cubiclab.experiments.common import group_means, select_row
from cubiclab.experiments.unstated import link_rate, rtt
from cubiclab.scenario import HEADER_BYTES

RFC8290 = "RFC 8290 (outside the seeds), abstract"
DCTCP_S3 = "Alizadeh et al., SIGCOMM 2010 (outside the seeds), Sec. 3"
DCTCP_S33 = "Alizadeh et al., SIGCOMM 2010 (outside the seeds), Sec. 3.3"
DUALQ = "draft-ietf-tsvwg-aqm-dualq-coupled-22 (became RFC 9332; outside the seeds), abstract"
SEED = "outside"
BULK = ("c20", "c40", "c80", "c160")


def queue_delay_ms(res, t0, t1) -> float:
    """The bottleneck's mean queueing delay over (t0, t1]: its mean backlog in bytes over its
    rate, ms."""
    d = res.link[(res.link.t > t0) & (res.link.t <= t1)]
    return float(d.queue_bytes.mean() * 8 / float(res.summary["rate_bps"]) * 1e3)


def added_delay_ms(res, group: str, t0, t1) -> float:
    """A group's mean smoothed RTT over (t0, t1] less its propagation RTT: the delay its
    packets (and their ACKs) met on the way, ms."""
    f = res.flows[(res.flows.t > t0) & (res.flows.t <= t1) & (res.flows.group == group)]
    t = res.totals
    base = float(t.rtt_ms[t.group.astype(str) == group].mean())
    return float(f.srtt_ms.mean() - base)


@register
class FqCoDelIsolation(Experiment):
    name = "x-fq-codel"
    seed = SEED
    figure = "RFC 8290"
    title = "FQ-CoDel: equal shares across RTTs, a low-rate flow isolated, short queues"
    setup = ("Four bulk CUBIC (Linux) flows with RTTs 20, 40, 80 and 160 ms and one low-rate CUBIC flow (RTT 40 ms, "
             "receive window pinned at 4 segments: about 1.2 Mbps), started together, 20 Mbps, behind FQ-CoDel "
             "(Linux's defaults: 1024 buckets, quantum 1514, CoDel 5 ms / 100 ms per flow, ECN on but no flow "
             "uses it) and, for contrast, behind drop-tail; both with a buffer (FQ-CoDel's packet limit) of one "
             "BDP of the 160 ms path, 267 packets. The claims are judged on the FQ-CoDel runs. The RFC states no "
             "rate, RTTs or flow count (unstated: the rate).")
    epoch_groups = BULK
    claim_runs = {c: {"queue": "fq_codel"} for c in ("per_flow_fairness", "low_rate_isolated", "queues_short",
                                                      "link_full")}
    unstated = (link_rate("20 Mbps"),)
    claims = (
        ClaimSpec("low_rate_isolated", "It provides isolation for low-rate traffic such as DNS, web, and "
                  "videoconferencing traffic.", RFC8290, TEXT, "the low-rate flow isolated",
                  "the low-rate flow's mean smoothed RTT less its 40 ms propagation RTT, under FQ-CoDel", "ms",
                  Below(5.0, 1.0), "'isolation': the low-rate flow does not wait behind the bulk flows' queues, so "
                  "the delay it meets stays below CoDel's 5 ms target, the standing queue each bulk flow is held to "
                  "(behind drop-tail it would wait behind the whole shared queue)", bounds=NONNEGATIVE),
        ClaimSpec("queues_short", "It improves utilisation across the networking fabric, especially for "
                  "bidirectional traffic, by keeping queue lengths short, and it can be implemented in a memory- and "
                  "CPU-efficient fashion across a wide range of hardware.", RFC8290, TEXT, "queues kept short",
                  "the bottleneck's mean queueing delay (mean backlog over the rate) under FQ-CoDel", "ms",
                  Below(15.0, 2.0), "'short': CoDel holds each flow's sojourn time near its 5 ms target, tolerating "
                  "more for up to an interval; three targets is short against the 160 ms of the drop-tail buffer",
                  bounds=NONNEGATIVE),
        ClaimSpec("link_full", "It improves utilisation across the networking fabric, especially for bidirectional "
                  "traffic, by keeping queue lengths short, and it can be implemented in a memory- and CPU-efficient "
                  "fashion across a wide range of hardware.", RFC8290, TEXT, "short queues at no cost to the link",
                  f"{LINK_UTILISATION} under FQ-CoDel", "", Above(0.95, 0.02), "a consequence: keeping queues short "
                  "does not idle the link (at least 95% of it used over the measured window)", kind=EXTENSION,
                  bounds=FRACTION),
        ClaimSpec("per_flow_fairness", "FQ-CoDel mixes packets from multiple flows and reduces the impact of "
                  "head-of-line blocking from bursty traffic.", RFC8290, TEXT, "equal shares whatever the RTT",
                  "Jain's index of the four bulk flows' goodputs (RTTs 20 to 160 ms) under FQ-CoDel", "",
                  Above(0.95, 0.02), "a consequence of mixing by flow: deficit round robin gives each backlogged "
                  "flow one quantum per round whatever its RTT, so the shares are near equal (0.95 allows shares "
                  "of 30/25/25/20%; drop-tail favours the short RTTs)", kind=EXTENSION, bounds=jain(4)),
    )

    def conditions(self, mode):
        sc = load_scenario("x_fq_codel")
        out = [(sc, {"queue": "fq_codel"})]
        tail = vary(sc)
        tail.bottleneck.queue = "droptail"
        out.append((tail, {"queue": "droptail"}))
        return out

    def per_run(self, run, res, t0, t1):
        g = group_means(res, t0, t1, column="goodput_bps")
        return {"jain": metrics.jain_index([g[b] for b in BULK]), **{f"{b}_bps": g[b] for b in BULK},
                "sparse_ms": added_delay_ms(res, "sparse", t0, t1), "queue_ms": queue_delay_ms(res, t0, t1),
                "util": metrics.link_utilization(res.link, t0, t1)}

    def values(self, rows):
        fq = select_row(rows, queue="fq_codel")
        return {"per_flow_fairness": fq.jain, "low_rate_isolated": fq.sparse_ms, "queues_short": fq.queue_ms,
                "link_full": fq.util}

    def plot(self, frame, sweep, outdir):
        f = frame.groupby("queue", observed=True).mean(numeric_only=True)
        fig, axes = plotting.new(2, 1, width=5.0, height=3.4)
        ax = axes[0, 0]
        for q, row in f.iterrows():
            ax.plot([20, 40, 80, 160], [row[f"{b}_bps"] / 1e6 for b in BULK], "o-", label=str(q))
        ax.set_xlabel("RTT of the bulk flow (ms)")
        ax.set_ylabel("goodput (Mbps)")
        ax.legend(fontsize="small")
        ax = axes[0, 1]
        ax.bar(list(f.index.astype(str)), f.sparse_ms)
        ax.set_ylabel("low-rate flow: RTT above propagation (ms)")
        return plotting.finish(fig, outdir, "fq_codel", "Four CUBIC flows and a low-rate one, 20 Mbps (cf. RFC 8290)")


def dctcp_sawtooth(rate_bps: float, rtt_s: float, k: float, n: int, wire_bytes: int) -> tuple[float, float]:
    """(Q_min, Q_max), packets: the queue's sawtooth for n synchronized DCTCP flows in
    Alizadeh et al.'s analysis: Q_max = K + N (Eq. 10), amplitude A = 1/2 sqrt(2N(C RTT + K))
    (Eq. 8), Q_min = Q_max - A (Eq. 11), C RTT in packets."""
    pipe = rate_bps * rtt_s / 8 / wire_bytes
    q_max = k + n
    return q_max - 0.5 * math.sqrt(2 * n * (pipe + k)), q_max


@register
class DctcpQueue(Experiment):
    name = "x-dctcp-queue"
    seed = SEED
    figure = "Alizadeh et al. (SIGCOMM 2010)"
    title = "DCTCP: the queue held near the marking threshold K, the link full"
    setup = ("Two DCTCP (Linux: g = 1/16) flows, RTT 10 ms, started together, 100 Mbps (C x RTT = 83 packets), a "
             "step-marking queue (an ECT arrival finding more than K packets waiting is marked CE), K = 12 packets "
             "(C x RTT / 7, the paper's lower bound, Eq. 13) and K = 40; buffer 200 packets. The mean queue (sampled "
             "every 20 ms) and the link's utilisation over the measured window. The paper's data-centre rates and "
             "RTTs are scaled down (unstated here: the rate).")
    unstated = (link_rate("100 Mbps"),)
    claim_runs = {"full_throughput_at_bdp_over_7": {"k": 12}, "queue_near_k": {"k": 40}}
    claims = (
        ClaimSpec("full_throughput_at_bdp_over_7", "In fact, as we verify in the next section, even with the worst "
                  "case assumption of synchronized flows used in this analysis, DCTCP can begin marking packets at "
                  "(1/7)th of the bandwidth-delay product without losing throughput.", DCTCP_S33, TEXT,
                  "no loss of throughput at K = C x RTT / 7", f"{LINK_UTILISATION} at K = 12 packets", "",
                  Above(0.95, 0.02), "'without losing throughput': the link busy at least 95% of the measured window "
                  "(the analysis keeps the queue's minimum K + N - A above 0 for K > C x RTT / 7, Eq. 13; 5% leaves "
                  "room for the delayed ACKs and the estimate's lag the analysis ignores)", bounds=FRACTION),
        ClaimSpec("queue_near_k", "To this end, DCTCP is designed to operate with small queue occupancies, without "
                  "loss of throughput.", DCTCP_S3, TEXT, "the queue held near K",
                  "the mean queue's place in the analysis' sawtooth at K = 40 packets: (mean - Q_min) / (Q_max - "
                  "Q_min), Q_max = K + N (Eq. 10), Q_min = Q_max - A (Eqs. 8, 11)", "", Band(0.5, 0.5),
                  "'small queue occupancies' as the paper's analysis makes them: the mean queue inside the sawtooth "
                  "it predicts around K (30.9 to 42 packets here), 0 at its trough and 1 at its peak; unsynchronized "
                  "flows oscillate less than the analysis' worst case, about its middle"),
        ClaimSpec("link_full_at_k40", "To this end, DCTCP is designed to operate with small queue occupancies, without "
                  "loss of throughput.", DCTCP_S3, TEXT, "and the link full", f"{LINK_UTILISATION} at K = 40 packets",
                  "", Above(0.95, 0.02), "'without loss of throughput', as at K = 12", kind=EXTENSION, bounds=FRACTION),
    )

    def conditions(self, mode):
        sc = load_scenario("x_dctcp_queue")
        out = []
        for k in (12, 40):
            s = vary(sc)
            s.bottleneck.step = {"threshold": f"{k}packets"}
            out.append((s, {"k": k}))
        return out

    def per_run(self, run, res, t0, t1):
        sc = run.scenario
        n = sum(g.count for g in sc.flows)
        lo, hi = dctcp_sawtooth(float(res.summary["rate_bps"]), units.parse_time_s(sc.flows[0].rtt, "rtt"),
                                run.tags["k"], n, sc.mss + HEADER_BYTES)
        d = res.link[(res.link.t > t0) & (res.link.t <= t1)]
        q = float(d.queue_packets.mean())
        return {"queue_pkts": q, "q_min": lo, "q_max": hi, "place": (q - lo) / (hi - lo),
                "util": metrics.link_utilization(res.link, t0, t1)}

    def values(self, rows):
        return {"full_throughput_at_bdp_over_7": select_row(rows, k=12).util,
                "queue_near_k": select_row(rows, k=40).place, "link_full_at_k40": select_row(rows, k=40).util}

    def plot(self, frame, sweep, outdir):
        fig, axes = plotting.new(2, 1, width=5.0, height=3.4)
        for ax, k in zip(axes[0], (12, 40)):
            res = plotting.first_run(sweep, k=k)
            ax.plot(res.link.t, res.link.queue_packets, lw=0.5)
            row = frame[frame.k == k].iloc[0]
            ax.axhline(k, color="k", ls=":", lw=0.8, label="K")
            ax.axhspan(row.q_min, row.q_max, color="C1", alpha=0.2, label="analysis")
            ax.set_xlabel("time (s)")
            ax.set_ylabel("queue (packets)")
            ax.set_title(f"K = {k}", fontsize="small")
            ax.legend(fontsize="small")
        return plotting.finish(fig, outdir, "dctcp_queue", "Two DCTCP flows, 100 Mbps, 10 ms (cf. Alizadeh et al.)")


@register
class DualPi2Balance(Experiment):
    name = "x-dualpi2-balance"
    seed = SEED
    figure = "RFC 9332"
    title = "DualPI2: a Classic (CUBIC) and a Scalable (DCTCP) flow at roughly the same rate"
    setup = ("One CUBIC (Linux) flow without ECN (Classic queue) and one DCTCP (Linux) flow (ECT(0), taken as L4S by "
             "the `any_ect` mask), RTT 40 ms for both, started together, behind DualPI2 (sch_dualpi2's defaults: "
             "coupling k = 2, target 15 ms, step 1 ms, classic_protection 10%), 40 Mbps and 20 Mbps, buffer 1000 "
             "packets. DCTCP's goodput over CUBIC's over the measured window. The agreement matrix's DualPI2 row "
             "(20 Mbps, 30 s) had been run before this entry was declared: DCTCP took 15% there.")
    unstated = (link_rate("40 Mbps and 20 Mbps"), rtt("40 ms for both flows"))
    claim_runs = {"rate_balance": {"rate_mbps": 40}, "rate_balance_20M": {"rate_mbps": 20}}
    claims = (
        ClaimSpec("rate_balance", "The coupling acts like a semi-permeable membrane: isolating the sub-millisecond "
                  "average queuing delay and zero congestion loss of L4S from Classic latency and loss; but pooling "
                  "the capacity between any combination of Scalable and Classic flows with roughly equivalent "
                  "throughput per flow.", DUALQ, TEXT, "roughly equal rates", "log2 of DCTCP's goodput over CUBIC's "
                  "at 40 Mbps", "", Band(0.0, 1.0), "'roughly equivalent': within a factor of 2 either way (the "
                  "coupling's p_C = (p_L / k)^2 equalises a Reno-friendly and a scalable response only "
                  "approximately; a single queue gives DCTCP most of the link)"),
        ClaimSpec("rate_balance_20M", "The coupling acts like a semi-permeable membrane: isolating the "
                  "sub-millisecond average queuing delay and zero congestion loss of L4S from Classic latency and "
                  "loss; but pooling the capacity between any combination of Scalable and Classic flows with roughly "
                  "equivalent throughput per flow.", DUALQ, TEXT, "(and at 20 Mbps)", "log2 of DCTCP's goodput over "
                  "CUBIC's at 20 Mbps, where the 1 ms step is under 2 packets", "", Band(0.0, 1.0),
                  "as at 40 Mbps: 'any combination' names no rate", kind=EXTENSION),
    )

    def conditions(self, mode):
        sc = load_scenario("x_dualpi2_balance")
        return [(vary(sc, rate=f"{r}Mbps"), {"rate_mbps": r}) for r in (40, 20)]

    def per_run(self, run, res, t0, t1):
        g = group_means(res, t0, t1, column="goodput_bps")
        return {"cubic_bps": g["cubic"], "dctcp_bps": g["dctcp"]}

    def values(self, rows):
        def balance(r):
            row = select_row(rows, rate_mbps=r)
            return math.log2(max(row.dctcp_bps, 1.0) / max(row.cubic_bps, 1.0))

        return {"rate_balance": balance(40), "rate_balance_20M": balance(20)}

    def plot(self, frame, sweep, outdir):
        fig, axes = plotting.new(1, 1, width=5.0, height=3.6)
        ax = axes[0, 0]
        f = frame.groupby("rate_mbps").mean(numeric_only=True)
        ax.bar([f"{r} Mbps" for r in f.index], f.dctcp_bps / (f.dctcp_bps + f.cubic_bps))
        ax.axhline(0.5, color="k", ls=":", lw=0.8)
        ax.set_ylabel("DCTCP's share of the two flows' goodput")
        return plotting.finish(fig, outdir, "dualpi2_balance", "CUBIC and DCTCP behind DualPI2, 40 ms (cf. RFC 9332)")
