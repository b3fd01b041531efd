"""A testbed run as the simulator's :class:`cubiclab.results.Results`.

Sources, all on CLOCK_MONOTONIC and shown relative to the run's epoch (t = 0 s):

* the emulator: per interval and link direction the queue (instantaneous and peak), drops,
  random losses, CE marks and bytes sent, and per flow and direction bytes sent, drops,
  random losses and CE-marked segments delivered (a flow's are those of the direction its
  data goes; ``totals.ce_marks``); every drop with its flow, link, direction and TCP
  sequence number;
* the sinks: bytes received per flow every ``info_interval`` (goodput);
* the sources: ``TCP_INFO`` of every socket every ``info_interval`` (cwnd, ssthresh,
  smoothed RTT, delivery rate, retransmissions, CA state, whether ECN was negotiated
  (``tcpi_options``: ``totals.ecn``), ``tcpi_delivered_ce``: ``totals.delivered_ce``);
* the trace (if tracefs is usable): ``tcp:tcp_probe`` for every ACK of the testbed's sender
  sockets (told apart from other sockets by ``sock_cookie``) and ``tcp:tcp_cong_state_set``
  (by the flow's port, the sending socket's destination; its entries into CWR are
  ``totals.ecn_reductions``, as the simulator counts them). A probe shows the socket
  *before* the ACK it fires for, and its ``ssthresh`` is ``tcp_current_ssthresh()`` (at
  least 3/4 cwnd in Open); ``flows.ssthresh`` comes from ``TCP_INFO`` (``tp->snd_ssthresh``).

Tables as the simulator's (``flows``, ``link``: one row per link per interval, forward;
``cwnd``, ``rtt``, ``losses``, ``totals`` with each flow's direction and route, ``web``: one
row per completed background object, from the web processes' time stamps,
``link_totals``) plus ``info`` (every TCP_INFO sample) and ``drops`` (the emulator's drop
events). ``rtt`` holds the smoothed RTT (``tcpi_rtt``) per sample, not per ACK.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cubiclab.results import CA_STATES, INFINITE_SSTHRESH, Results
from cubiclab.scenario import compiled_links

_STATE_CODES = {"Open": 0, "Disorder": 1, "CWR": 2, "Recovery": 3, "Loss": 4}
#: ``tcpi_options``: ECN negotiated (include/uapi/linux/tcp.h).
TCPI_OPT_ECN = 8


@dataclass(repr=False)  # Results' short repr
class TestbedResults(Results):
    __test__ = False  # not a pytest class
    info: pd.DataFrame = field(default_factory=pd.DataFrame)
    drops: pd.DataFrame = field(default_factory=pd.DataFrame)

    def tables(self) -> dict[str, pd.DataFrame]:
        t = super().tables()
        t["info"] = self.info
        t["drops"] = self.drops
        return t


def _ssthresh(x):
    x = pd.Series(x, dtype="float64")
    return x.where(x < INFINITE_SSTHRESH)


def build_results(plan, epoch: int, emu, source: dict, sink: dict, records, trace_lost: int,
                  trace_reason: str | None, wall_s: float, web: pd.DataFrame) -> TestbedResults:
    spec = plan.spec
    nflows = len(plan.flows)
    groups = [f["group"] for f in plan.flows]
    algs = [f["algorithm"] for f in plan.flows]
    links = compiled_links(spec)
    # The first link stands for the bottleneck where one rate is needed (as in the simulator).
    rate = links[0]["rate"]
    iv_ns = spec["record"]["interval"]
    iv = iv_ns / 1e9
    duration_ns = spec["duration"]
    duration = duration_ns / 1e9

    # ---- TCP_INFO samples
    # Streamed to a file by the sender (its ``info_file``), read back by the run while its
    # folder exists.
    info = source["info"]
    info.insert(0, "t", (info.pop("t_ns") - epoch) / 1e9)
    info["ca_state"] = pd.Categorical.from_codes(info["ca_state"].clip(0, 4).astype(int), CA_STATES)
    info = info.sort_values(["t", "flow"], kind="stable").reset_index(drop=True)

    # ---- trace: cwnd per ACK, loss events
    cookies = {f.get("cookie"): i for i, f in enumerate(source["flows"]) if f.get("cookie") is not None}
    # A sending socket's destination is its flow's port, whichever side it sends from (its
    # own port may be another side's too).
    ports = {f["port"]: i for i, f in enumerate(plan.flows)}
    traced = records is not None and len(records) > 0
    if traced:
        rec = records.copy()
        rec["t"] = (rec["time_us"] * 1000 - epoch) / 1e9
        probes = rec[rec.event == "probe"].copy()
        if probes["cookie"].notna().any():
            probes["flow"] = probes["cookie"].map(cookies)
        else:
            probes["flow"] = probes["dport"].map(ports)
        probes = probes[probes["flow"].notna()]
        cwnd = pd.DataFrame({
            "t": probes["t"].to_numpy(), "flow": probes["flow"].astype(int).to_numpy(),
            "cwnd": probes["cwnd"].astype(int).to_numpy(),
            "ssthresh": _ssthresh(probes["ssthresh"].astype("float64")).to_numpy(),
            "srtt_us": probes["srtt_us"].astype("float64").to_numpy(),
        })
        states = rec[rec.event == "state"].copy()
        states["flow"] = states["dport"].map(ports)
        states = states[states["flow"].notna()]
        states["flow"] = states["flow"].astype(int)
        loss_rows = []
        cwr_entries: dict[int, int] = {}
        for flow, st in states.groupby("flow"):
            prev = "Open"
            pf = cwnd[cwnd.flow == flow]
            for r in st.itertuples():
                if r.state in ("Recovery", "Loss") and prev != r.state:
                    before = pf[pf.t <= r.t]
                    c = int(before.cwnd.iloc[-1]) if len(before) else math.nan
                    loss_rows.append({"t": r.t, "flow": flow, "cwnd": c, "timeout": r.state == "Loss"})
                cwr_entries[flow] = cwr_entries.get(flow, 0) + (r.state == "CWR" and prev != "CWR")
                prev = r.state
        losses = pd.DataFrame(loss_rows, columns=["t", "flow", "cwnd", "timeout"])
    else:
        cwnd = pd.DataFrame({"t": info["t"], "flow": info["flow"], "cwnd": info["snd_cwnd"],
                             "ssthresh": _ssthresh(info["snd_ssthresh"]), "srtt_us": info["rtt_us"].astype(float)})
        loss_rows = []
        cwr_entries = {}
        for flow, d in info.groupby("flow"):
            prev = "open"
            for r in d.itertuples():
                s = str(r.ca_state)
                if s in ("recovery", "loss") and s != prev:
                    loss_rows.append({"t": r.t, "flow": flow, "cwnd": int(r.snd_cwnd), "timeout": s == "loss"})
                # Samples see only the CWR states that last across one (a lower bound).
                cwr_entries[flow] = cwr_entries.get(flow, 0) + (s == "cwr" and prev != "cwr")
                prev = s
        losses = pd.DataFrame(loss_rows, columns=["t", "flow", "cwnd", "timeout"])
    cwnd = cwnd.sort_values(["t", "flow"], kind="stable").reset_index(drop=True)
    losses = losses.sort_values("t", kind="stable").reset_index(drop=True)

    # ---- interval grid: interval k ends at (k + 1) * iv
    n_iv = int(duration_ns // iv_ns)
    grid = (np.arange(n_iv) + 1) * iv

    # The emulator's link records, forward (the simulator's link table): one row per link per
    # interval.
    el = emu.link[emu.link["dir"] == 0].copy() if len(emu.link) else emu.link
    if len(el):
        el["t"] = (el["t_ns"] - epoch) / 1e9
        el = el[(el.t > 1e-9) & (el.t <= duration + 1e-9)]
        el = el.set_index([np.round(el.t / iv).astype(int), "link"])
    k = np.arange(n_iv) + 1
    cols = ("queue_packets", "queue_bytes", "max_queue_packets", "max_queue_bytes", "drops", "marks",
            "random_losses", "tx_bytes")
    parts = []
    for j, lk in enumerate(links):
        part = pd.DataFrame({"t": grid, "link": j})
        for c in cols:
            part[c] = (el[c].reindex(pd.MultiIndex.from_arrays([k, np.full(n_iv, j)])).fillna(0).astype(int).to_numpy()
                       if len(el) else 0)
        part["utilization"] = part["tx_bytes"] * 8 / (lk["rate"] * iv)
        parts.append(part)
    link = pd.concat(parts).sort_values(["t", "link"], kind="stable").reset_index(drop=True)

    # Per-flow interval rows; the emulator's counts are those of the direction its data goes
    # (0: forward).
    ef = emu.flows.copy()
    if len(ef):
        ef["k"] = np.round((ef["t_ns"] - epoch) / iv_ns).astype(int)
        ef = ef.set_index(["k", "dir", "flow"])
    rows = []
    for i in range(nflows):
        d = info[info.flow == i]
        data_dir = int(plan.flows[i]["direction"] != "forward")
        t_recv, recv_bytes = sink["received"][i] or ([], [])
        recv = (np.interp(grid, (np.asarray(t_recv, dtype="float64") - epoch) / 1e9, recv_bytes) if len(t_recv)
                else np.zeros(n_iv))
        recv_prev = np.concatenate([[0.0], recv[:-1]])
        t_info = d["t"].to_numpy()
        idx = np.searchsorted(t_info, grid, side="right") - 1
        has = idx >= 0
        idx = np.clip(idx, 0, max(len(d) - 1, 0))
        def col(c, default=np.nan):
            if len(d) == 0:
                return np.full(n_iv, default)
            v = d[c].to_numpy()[idx].astype("float64")
            return np.where(has, v, default)
        retr = col("total_retrans", 0)
        retr_prev = np.concatenate([[0.0], retr[:-1]])
        ca = d["ca_state"].cat.codes.to_numpy()[idx] if len(d) else np.zeros(n_iv, dtype=int)
        def emu_col(c):
            if not len(ef):
                return np.zeros(n_iv)
            at = pd.MultiIndex.from_arrays([k, np.full(n_iv, data_dir), np.full(n_iv, i)])
            return ef[c].reindex(at).fillna(0).to_numpy()
        rows.append(pd.DataFrame({
            "t": grid, "flow": i, "cwnd": col("snd_cwnd", 0), "ssthresh": _ssthresh(col("snd_ssthresh")).to_numpy(),
            "throughput_bps": emu_col("tx_bytes") * 8 / iv, "goodput_bps": (recv - recv_prev) * 8 / iv,
            "drops": emu_col("drops").astype(int), "random_losses": emu_col("random_losses").astype(int),
            "retransmits": np.maximum(retr - retr_prev, 0).astype(int),
            "ca_state": pd.Categorical.from_codes(np.where(has, ca, 0).astype(int), CA_STATES),
            "group": groups[i], "algorithm": algs[i], "srtt_ms": col("rtt_us") / 1e3,
            "delivery_rate_bps": col("delivery_rate") * 8,
        }))
    flows = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    if len(flows):
        flows = flows.sort_values(["t", "flow"], kind="stable").reset_index(drop=True)
        flows["cwnd"] = flows["cwnd"].astype(int)
        flows["group"] = pd.Categorical(flows["group"])
        flows["algorithm"] = pd.Categorical(flows["algorithm"])

    rtt = pd.DataFrame({"t": info["t"], "flow": info["flow"], "rtt_ms": info["rtt_us"] / 1e3})

    # Drop events.
    ev = emu.events.copy()
    if len(ev):
        ev.insert(0, "t", (ev.pop("t_ns") - epoch) / 1e9)
        ev["direction"] = np.where(ev.pop("dir") == 0, "forward", "reverse")
        ev["kind"] = np.where(ev["kind"] == 0, "buffer", "random")
        ev["flow"] = ev["flow"].where(ev["flow"] < nflows, -1)

    # Totals. CE marks: the segments the emulator delivered marked, up to the run's end
    # (the record at epoch + duration covers its last interval).
    em = emu.flows[emu.flows["t_ns"] <= epoch + duration_ns + iv_ns // 2] if "marks" in emu.flows else None
    last = info.groupby("flow").last() if len(info) else pd.DataFrame()
    tot = []
    total_recv = sink["total"]
    for i, f in enumerate(plan.flows):
        so = source["flows"][i]
        lr = last.loc[i] if i in last.index else None
        fl = losses[losses.flow == i]
        start_s = f["start_ns"] / 1e9
        active = max((min(duration_ns, f["stop_ns"] or duration_ns) - f["start_ns"]) / 1e9, 1e-9)
        fct = so.get("fct_ns")
        fd = ev[(ev.flow == i) & (ev.direction == f["direction"])] if len(ev) else ev
        tot.append({
            "flow": i, "group": f["group"], "algorithm": f["algorithm"], "direction": f["direction"],
            "route": f["route"],
            "segments_sent": int(lr["segs_out"]) if lr is not None else 0,
            "retransmits": int(lr["total_retrans"]) if lr is not None else 0,
            "timeouts": int(fl["timeout"].sum()), "loss_events": int(len(fl)),
            "drops": int((fd["kind"] == "buffer").sum()) if len(fd) else 0,
            "random_losses": int((fd["kind"] == "random").sum()) if len(fd) else 0,
            "delivered_bytes": int(total_recv[i]), "rtt_ms": f["rtt_ns"] / 1e6, "start_s": start_s,
            "fct_s": fct / 1e9 if fct else math.nan,
            "ecn": bool(lr is not None and int(lr["options"]) & TCPI_OPT_ECN),
            "ecn_reductions": int(cwr_entries.get(i, 0)),
            "ce_marks": int(em.loc[(em["dir"] == int(f["direction"] != "forward")) & (em["flow"] == i), "marks"].sum())
            if em is not None else 0,
            "delivered_ce": int(lr["delivered_ce"]) if lr is not None else 0,
            "mean_goodput_bps": total_recv[i] * 8 / active,
            "sport": so.get("sport"), "cc_kernel": so.get("cc"), "mss": so.get("mss"),
        })
    totals = pd.DataFrame(tot)
    if len(flows) == 0:
        flows = pd.DataFrame(columns=["t", "flow", "cwnd", "ssthresh", "throughput_bps", "goodput_bps", "drops",
                                      "retransmits", "ca_state", "group", "algorithm", "srtt_ms"])
    scenario = plan.scenario
    res = TestbedResults(scenario, flows, link, cwnd, rtt, losses, totals, web, info=info, drops=ev,
                         link_totals=_link_totals(spec, emu.summary, duration))
    s = emu.summary
    delivered = float(totals["delivered_bytes"].sum()) if len(totals) else 0.0
    # Goodput through the first link's forward direction: the flows whose data crosses it.
    first = links[0].get("name") or "bottleneck"
    through = [t.direction == "forward" and first in t.route.split(">") for t in totals.itertuples()]
    through_first = float(totals.loc[through, "delivered_bytes"].sum()) if len(totals) else 0.0
    by_group = totals.groupby("group")["delivered_bytes"].sum() if len(totals) else {}
    # Utilisation over the run: bytes that left the first link within [0, duration].
    tx = float(link.loc[link.link == 0, "tx_bytes"].sum())
    res.summary = {
        "scenario": getattr(scenario, "name", "scenario"),
        "source": "testbed",
        "kernel": os.uname().release,
        "duration_s": duration,
        "rate_bps": rate,
        "utilization": tx * 8 / (rate * duration),
        "goodput_utilization": through_first * 8 / (rate * duration),
        "flows": [
            {
                "flow": int(r.flow), "group": r.group, "algorithm": r.algorithm, "rtt_ms": float(r.rtt_ms),
                "mean_throughput_bps": float(r.mean_goodput_bps),
                "share": float(r.delivered_bytes / delivered) if delivered else 0.0,
                "loss_events": int(r.loss_events), "timeouts": int(r.timeouts), "retransmits": int(r.retransmits),
            }
            for r in totals.itertuples()
        ],
        "group_shares": {str(g): float(v / delivered) if delivered else 0.0 for g, v in dict(by_group).items()},
        "loss_events": int(len(losses)),
        "bottleneck_drops": int(s.get("fwd_drops", 0)),
        "bottleneck_random_losses": int(s.get("fwd_random_losses", 0)),
        "bottleneck_marks": int(s.get("fwd_marks", 0)),
        "bottleneck_packets": int(s.get("fwd_tx_packets", 0)),
        "peak_queue_packets": int(s.get("fwd_peak_queue_packets", 0)),
        "peak_queue_bytes": int(s.get("fwd_peak_queue_bytes", 0)),
        "buffer": " ".join(f"{n} {kind}" for kind, n in compiled_links(spec)[0]["buffer"].items()),
        "emulator": s,
        "cwnd_source": "tcp_probe" if traced else "tcp_info",
        "trace": trace_reason or "ok",
        "trace_lost_events": int(trace_lost),
        "web_objects": int(len(web)),
        "web_mean_fct_s": float(web.fct_s.mean()) if len(web) else None,
        "wall_s": wall_s,
    }
    return res


def _link_totals(spec: dict, summary: dict, duration: float) -> pd.DataFrame:
    """Every link direction over the run, as the simulator's ``link_totals``, from the
    emulator's ``linkK_{fwd,rev}_*`` counters (over its whole run, the handshakes before the
    flows' time 0 included). Capacity is the rate over the run; with a schedule it is what
    the emulator does not count, so NaN."""
    rows = []
    for k, link in enumerate(compiled_links(spec)):
        for way, direction in (("fwd", "forward"), ("rev", "reverse")):
            key = f"link{k}_{way}"
            rows.append({
                "link": k, "name": link.get("name") or "bottleneck", "direction": direction,
                "tx_bytes": int(summary.get(f"{key}_tx_bytes", 0)),
                "capacity_bytes": math.nan if link.get("schedule") and direction == "forward"
                else link["rate"] * duration / 8,
                "drops": int(summary.get(f"{key}_drops", 0)),
                "random_losses": int(summary.get(f"{key}_random_losses", 0)),
                "marks": int(summary.get(f"{key}_marks", 0)),
            })
    return pd.DataFrame(rows)
