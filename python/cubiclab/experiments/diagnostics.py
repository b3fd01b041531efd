"""What a run did, measured over its window: the numbers a verdict that does not hold is
explained with, and the sentence built from them (no fixed sentences)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cubiclab import metrics
from cubiclab.scenario import compiled_links


def sync_share(times, flows, gap: float) -> float:
    """Share of drop episodes that hit several flows at once: events of all flows (`times`,
    `flows`: the queue's drops, `queue_drops`) are grouped into bursts where consecutive
    events are less than `gap` seconds apart (one RTT: one drop episode of a drop-tail
    queue); the share of bursts that involve two flows or more. NaN without events."""
    t = np.asarray(times, dtype=float)
    f = np.asarray(flows)
    if t.size == 0:
        return math.nan
    o = np.argsort(t, kind="stable")
    t, f = t[o], f[o]
    burst = np.concatenate([[0], np.cumsum(np.diff(t) >= gap)])
    per = pd.DataFrame({"b": burst, "f": f}).groupby("b").f.nunique()
    return float((per >= 2).mean())


def queue_drops(flows: pd.DataFrame, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """Where and when a buffer dropped each flow's data (the bottleneck's, on a one-link path):
    (sample times, flow indices) of the samples in (t0, t1] in which a flow lost packets
    there (the flows table's `drops`). A sender learns of a drop one feedback delay later, and flows of
    different RTTs (or behind a full buffer) learn of one drop episode up to an RTT apart:
    the queue is where a synchronised loss is synchronised."""
    d = flows[(flows.t > t0) & (flows.t <= t1) & (flows.drops > 0)]
    return d.t.to_numpy(dtype=float), d.flow.to_numpy()


def epoch_cv(times, flows) -> float:
    """How regular the congestion epochs are: the coefficient of variation (sd over mean) of
    the times between a flow's successive congestion events, over every flow's intervals
    pooled. 0 when every epoch lasts the same (a deterministic loss process); NaN with
    fewer than two intervals."""
    d = pd.DataFrame({"t": np.asarray(times, dtype=float), "f": np.asarray(flows)})
    gaps = d.sort_values("t", kind="stable").groupby("f").t.diff().dropna().to_numpy()
    if gaps.size < 2 or gaps.mean() <= 0:
        return math.nan
    return float(gaps.std() / gaps.mean())


def run_diagnostics(res, t0: float, t1: float) -> dict:
    """Loss synchronisation, the regularity of the epochs, timeouts, recovery episodes, window at loss, queue occupancy
    and whether the measured flows converged (Jain's index over the window and the largest
    change of a flow's share between the window's halves)."""
    lo = res.losses
    lo = lo[(lo.t > t0) & (lo.t <= t1)] if len(lo) else lo
    to = lo.timeout.astype(bool) if len(lo) else pd.Series([], dtype=bool)
    rec = lo[~to] if len(lo) else lo
    rtt = float(res.totals.rtt_ns.max()) / 1e9 if "rtt_ns" in res.totals else float(res.totals.rtt_ms.max()) / 1e3
    # one drop episode: drops at the queue less than an RTT apart, each dated to its sample
    # (up to one sampling interval late)
    dropped_t, dropped_f = queue_drops(res.flows, t0, t1)
    compiled = res.scenario.compile()
    sample_s = compiled["record"]["interval"] / 1e9
    link = res.link[(res.link.t > t0) & (res.link.t <= t1)]
    buf = compiled_links(compiled)[0]["buffer"]
    buf_pkts = buf.get("packets", buf.get("bytes", 0) / (res.scenario.mss + 52))
    fm = metrics.mean_throughput(res.flows, t0, t1, by="flow", column="throughput_bps")
    mid = (t0 + t1) / 2
    a = metrics.mean_throughput(res.flows, t0, mid, by="flow", column="throughput_bps")
    b = metrics.mean_throughput(res.flows, mid, t1, by="flow", column="throughput_bps")
    share_a, share_b = a / max(a.sum(), 1e-12), b / max(b.sum(), 1e-12)
    return {
        "sync_share": sync_share(dropped_t, dropped_f, rtt + sample_s),
        "epoch_cv": epoch_cv(rec.t, rec.flow),
        "timeouts": int(to.sum()),
        "recoveries": int(len(rec)),
        "cwnd_at_loss": float(rec.cwnd.median()) if len(rec) else math.nan,
        "queue_fill": float(link.queue_packets.mean() / buf_pkts) if len(link) and buf_pkts else math.nan,
        "jain": metrics.jain_index(fm.to_numpy()) if len(fm) else math.nan,
        "share_shift": float((share_b - share_a).abs().max()) if len(a) and len(b) else math.nan,
        "window_s": t1 - t0,
    }


def describe(d: dict) -> str:
    """One sentence from a (mean) diagnostics dict."""
    if not math.isfinite(d.get("window_s", math.nan)):
        return "no run of this claim to measure."
    parts = []
    if math.isfinite(d.get("sync_share", math.nan)):
        parts.append(f"{100 * d['sync_share']:.0f}% of drop episodes hit several flows at once")
    parts.append(f"{d.get('recoveries', 0):.0f} fast recoveries and {d.get('timeouts', 0):.0f} timeouts in "
                 f"{d.get('window_s', 0):.0f} s")
    if math.isfinite(d.get("cwnd_at_loss", math.nan)):
        parts.append(f"median window at loss {d['cwnd_at_loss']:.0f} packets")
    if math.isfinite(d.get("queue_fill", math.nan)):
        parts.append(f"queue {100 * d['queue_fill']:.0f}% full on average")
    if math.isfinite(d.get("jain", math.nan)):
        conv = ("the flows' shares still moved by up to {:.0f} points between the window's halves"
                .format(100 * d["share_shift"]) if d.get("share_shift", 0) > 0.05 else "the flows' shares were steady")
        parts.append(f"Jain's index {d['jain']:.2f}, {conv}")
    return "; ".join(parts) + "."
