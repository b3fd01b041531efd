"""The kernel's ``bbr`` against cubiclab's, ACK by ACK.

A bulk ``bbr`` flow runs through the testbed (:mod:`cubiclab.testbed`: real Linux TCP
between namespaces, the emulated bottleneck with its propagation delay) while
``cubiclab-bpf probe-bbr`` records, at every ``tcp_probe`` of the socket (the top of
``tcp_rcv_established``, before ``tcp_ack``), ``struct bbr`` whole, the ``tcp_sock``
counters of ``tcp_rate.c``, cwnd, ``sk_pacing_rate``, ``tcp_wstamp_ns``, and the transmit
stamps of the packets holding the ACK's last byte and the last byte of its first SACK block
(crates/cubiclab-bpf/bpf/bbr_probe.bpf.c).
Record *k* is the socket before ACK *k*; record *k + 1* the socket after it.

The kernel does not keep the rate sample ``tcp_ack`` hands to ``bbr_main``; it is rebuilt
here as ``tcp_rate.c`` builds it, from the newest packet the ACK delivers (the one holding
byte ``ack_seq - 1``, or the newly SACKed one ending its first SACK block if sent later):
``prior_delivered`` and
``prior_mstamp`` from its ``tx`` stamp, the send phase from its departure time minus the
stamp's ``first_tx_mstamp``, the ACK phase from the ACK's ``tcp_mstamp`` (the new
``delivered_mstamp``) minus ``prior_mstamp``, the interval the longer, invalid below
``tcp_min_rtt()``; ``delivered`` is the new ``tp->delivered`` minus ``prior_delivered``;
``rtt_us`` is the ACK's time minus the packet's departure (``ca_rtt_us``). The replay
(:func:`cubiclab.replay`) then runs the library's ``bbr`` on those samples and on the
kernel's packets in flight and departure time, free-running: its window, pacing rate and
mode are its own, compared after every ACK with the kernel's; it is told the congestion
state each ACK left (``ca_state``: Recovery's packet conservation depends on it). Its random
PROBE_BW phase is the kernel's: the replay's seed is one whose draws give the phases the
kernel entered at.

What it cannot see: a packet SACKed by a block other than the first (several newly SACKed
ranges on one ACK), and timeouts (Loss is entered on the next ACK, not at the timer).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

#: ``TCPCB_SACKED_RETRANS | TCPCB_EVER_RETRANS``: the packet was retransmitted, so its
#: RTT is no sample (``tcp_clean_rtx_queue`` takes ``last_ackt`` from others only).
TCPCB_RETRANS = 0x02 | 0x80
#: ``TCPCB_SACKED_ACKED``: the packet was SACKed.
TCPCB_SACKED_ACKED = 0x01
#: ``enum tcp_ca_state`` as the replay trace spells it.
CA_STATES = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}
#: ``enum bbr_mode``.
MODES = {0: "STARTUP", 1: "DRAIN", 2: "PROBE_BW", 3: "PROBE_RTT"}
#: The flow the check runs: one bbr flow alone, 20 Mbit/s, 20 ms, a buffer of three BDPs
#: (STARTUP's queue stays below 2 BDP, so the flow is loss-free).
SCENARIO = {
    "name": "bbr-kernel-check",
    "duration": "4s",
    "bottleneck": {"rate": "20Mbps", "buffer": "300%BDP"},
    "flows": [{"algorithm": "bbr", "rtt": "20ms"}],
}


class BbrProbe:
    """``cubiclab-bpf probe-bbr FILE`` while the block runs; :attr:`records` afterwards."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.proc: subprocess.Popen | None = None
        self.records: pd.DataFrame | None = None
        self.lost = 0

    def __enter__(self) -> "BbrProbe":
        from cubiclab.testbed import bpf

        exe = bpf.binary()
        if exe is None:
            raise bpf.BpfUnavailable(f"the loader cubiclab-bpf is not built; {bpf.INSTALL}")
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([str(exe), "probe-bbr", str(self.path)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        if not line or "recording" not in json.loads(line):
            self.proc.wait()
            self.err.seek(0)
            raise RuntimeError(f"cubiclab-bpf probe-bbr could not attach: {self.err.read().strip()[-2000:]}")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.err.close()
        if exc[0] is None:
            self.records, self.lost = read_records(self.path)


def read_records(path: Path) -> tuple[pd.DataFrame, int]:
    """The probe's CSV and the number of records its ring buffer lost."""
    lines = Path(path).read_text().splitlines()
    lost = next((int(x.split()[2]) for x in lines if x.startswith("# lost ")), None)
    if lost is None:
        raise RuntimeError(f"{path}: the bbr probe did not finish (no '# lost' trailer)")
    return pd.read_csv(StringIO("\n".join(x for x in lines if not x.startswith("#")))), lost


def in_flight(r: pd.DataFrame) -> pd.Series:
    """``tcp_packets_in_flight()``: packets_out - (sacked_out + lost_out) + retrans_out."""
    return r.packets_out - (r.sacked_out + r.lost_out) + r.retrans_out


def to_trace(rec: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One socket's records (in order) as a replay trace, one row per ACK, and the
    kernel's state after each of those ACKs (the next record)."""
    before = rec.iloc[:-1].reset_index(drop=True)
    after = rec.iloc[1:].reset_index(drop=True)
    acked = (after.delivered - before.delivered).astype(np.int64)
    losses = (after.lost - before.lost).clip(lower=0).astype(np.int64)
    # The ACK's tcp_mstamp: the new delivered_mstamp when it delivered something.
    t = np.where(acked > 0, after.delivered_mstamp, before.time_ns // 1000).astype(np.int64)
    t = np.maximum.accumulate(t)
    # The newest packet this ACK delivered: the one holding its last cumulatively ACKed byte,
    # or the one holding the last byte of its first SACK block if that was newly SACKed
    # (TCPCB_SACKED_ACKED unset before the ACK) and sent later (tcp_skb_sent_after). A
    # packet SACKed before had its stamp used then (tx.delivered_mstamp zeroed).
    cum = (before.skb_mstamp_ns > 0) & (before.tx_delivered_mstamp > 0)
    sack = ((before.sack_skb_mstamp_ns > 0) & (before.sack_tx_delivered_mstamp > 0)
            & ((before.sack_skb_sacked & TCPCB_SACKED_ACKED) == 0))
    sack_newer = sack & (~cum | (before.sack_skb_mstamp_ns > before.skb_mstamp_ns)
                         | ((before.sack_skb_mstamp_ns == before.skb_mstamp_ns)
                            & (before.sack_skb_end_seq - before.skb_end_seq).astype(np.int32) > 0))

    def pick(col):
        return np.where(sack_newer, before["sack_" + col], before[col])

    found = (cum | sack) & (acked > 0)
    sent_us = pick("skb_mstamp_ns") // 1000
    tx_delivered, tx_delivered_mstamp = pick("tx_delivered"), pick("tx_delivered_mstamp")
    snd_us = sent_us - pick("tx_first_tx_mstamp")
    ack_us = t - tx_delivered_mstamp
    interval = np.maximum(snd_us, ack_us)
    delivered = (after.delivered - tx_delivered).astype(np.int64)
    # tcp_rate_gen: an interval shorter than tcp_min_rtt() is invalid (after this ACK's RTT
    # sample updated the minimum).
    interval = np.where(interval < after.min_rtt_us, -1, interval)
    # ca_rtt_us (tcp_clean_rtx_queue, tcp_ack_update_rtt): from the newest packet SACKed if
    # the ACK SACKed one, else the newest cumulatively ACKed, never a retransmitted one; when
    # neither gives one and snd_una advanced, from the timestamp echo in whole ms
    # (tcp_rtt_tsopt_us: tcp_mstamp in ms + tsoffset - TSecr, at least 1).
    sack_rtt = sack & ((before.sack_skb_sacked & TCPCB_RETRANS) == 0) & (acked > 0)
    cum_rtt = cum & ((before.skb_sacked & TCPCB_RETRANS) == 0) & (acked > 0)
    una_advanced = (after.snd_una - before.snd_una).astype(np.int64) % (1 << 32) != 0
    ts_ms = ((t // 1000 + before.tsoffset.astype(np.int64) - before.tsecr.astype(np.int64)) % (1 << 32)).clip(lower=1)
    rtt = np.where(sack_rtt, t - before.sack_skb_mstamp_ns // 1000,
                   np.where(cum_rtt, t - before.skb_mstamp_ns // 1000,
                            np.where(una_advanced & (before.tsecr > 0), ts_ms * 1000, -1)))
    pif = in_flight(before)
    # In flight when cong_control runs: the next record's, less what was sent after it on
    # this ACK (new segments, snd_nxt's advance in MSS, and retransmissions, total_retrans).
    sent_new = ((after.snd_nxt - before.snd_nxt).astype(np.int64) % (1 << 32) + after.mss // 2) // after.mss
    retransmitted = (after.total_retrans - before.total_retrans).clip(lower=0)
    in_flight_cc = (in_flight(after) - sent_new - retransmitted).clip(lower=0)
    trace = pd.DataFrame({
        "time_us": t,
        "event": "ack",
        "acked": acked.clip(lower=0),
        "rtt_us": rtt,
        "rs_prior_delivered": np.where(found, tx_delivered, 0),
        "rs_delivered": np.where(found, delivered, -1),
        "rs_interval_us": np.where(found, interval, -1),
        "rs_app_limited": np.where(found, pick("tx_app_limited"), 0),
        "losses": losses,
        "prior_in_flight": pif,
        "in_flight": in_flight_cc,
        "wstamp_ns": before.wstamp_ns,
        "delivered": after.delivered,
        "ca_state": after.ca_state.map(CA_STATES),
    })
    truth = pd.DataFrame({
        "time_us": t,
        "ca_state": after.ca_state,
        "sacked": (before.sacked_out > 0) | (after.sacked_out > 0),
        "cwnd": after.cwnd,
        "pacing_rate": after.pacing_rate,
        "mode": after.bbr_mode,
        "bw": after.bbr_bw,
        "min_rtt_us": after.bbr_min_rtt_us,
        "cycle_idx": after.bbr_cycle_idx,
        "pacing_gain": after.bbr_pacing_gain,
        "full_bw_reached": after.bbr_full_bw_reached,
    })
    return trace, truth


def entry_phases(rec: pd.DataFrame) -> list[int]:
    """The cycle phase of every PROBE_BW entry (a record in PROBE_BW after one that was not):
    ``bbr_reset_probe_bw_mode`` drew it and advanced once, and nothing else moves it on
    that ACK."""
    mode = rec.bbr_mode.to_numpy()
    idx = np.flatnonzero((mode[1:] == 2) & (mode[:-1] != 2)) + 1
    return [int(rec.bbr_cycle_idx.iloc[i]) for i in idx]


def find_seed(phases: list[int], tries: int = 1_000_000) -> int | None:
    """The smallest seed whose first draws enter PROBE_BW at `phases`."""
    from cubiclab import _core

    if not phases:
        return 0
    for seed in range(tries):
        if _core.bbr_entry_phases(seed, len(phases)) == phases:
            return seed
    return None


@dataclass
class BbrCheck:
    records: pd.DataFrame
    trace: pd.DataFrame
    table: pd.DataFrame
    seed: int | None
    phases: list[int]
    hz: int
    lost: int

    def shares(self, rows: pd.DataFrame | None = None) -> dict[str, float]:
        t = self.table if rows is None else rows
        n = max(len(t), 1)
        return {
            "cwnd": float(t.cwnd_ok.sum()) / n,
            "pacing_rate": float(t.pacing_ok.sum()) / n,
            "mode": float(t.mode_ok.sum()) / n,
            "all three": float((t.cwnd_ok & t.pacing_ok & t.mode_ok).sum()) / n,
        }

    def report(self) -> str:
        t = self.table
        open_ = t[(t.ca_state == 0) & ~t.sacked]
        lines = [
            "== bbr: kernel vs cubiclab replay, per ACK ==",
            f"{len(t)} ACKs recorded ({self.lost} lost by the probe); kernel HZ {self.hz}; "
            f"PROBE_BW entered at phase(s) {self.phases}, replay seed {self.seed}",
            f"kernel modes: " + ", ".join(f"{MODES[m]} {n}" for m, n in t["mode"].value_counts().sort_index().items()),
            f"ACKs outside Open or with SACK blocks (sample not rebuilt from the cumulative ACK): "
            f"{len(t) - len(open_)}",
        ]
        for label, rows in (("all ACKs", t), ("ACKs in Open without SACK", open_)):
            s = self.shares(rows)
            lines.append(f"{label}: " + ", ".join(f"{k} {v:.2%}" for k, v in s.items()))
        for col in ("bw", "min_rtt_us", "cycle_idx"):
            lines.append(f"  {col} equal after {float((t[col] == t['replay_' + col]).mean()):.2%} of ACKs")
        bad = t[~(t.cwnd_ok & t.pacing_ok & t.mode_ok)]
        if len(bad):
            cols = ["ack", "time_us", "mode", "replay_mode", "cwnd", "replay_cwnd", "pacing_rate",
                    "replay_pacing_rate", "bw", "replay_bw"]
            lines.append("first differing ACKs:")
            lines.append(bad[cols].head(12).to_string(index=False))
        return "\n".join(lines)


def check(rec: pd.DataFrame, hz: int, lost: int = 0) -> BbrCheck:
    """Replay one bbr socket's records and compare after every ACK."""
    from cubiclab.replay import replay

    rec = rec.sort_values("time_ns", kind="stable").reset_index(drop=True)
    trace, truth = to_trace(rec)
    phases = entry_phases(rec)
    seed = find_seed(phases)
    first = rec.iloc[0]
    df = replay("bbr", trace, params={"hz": hz}, mss=int(first.mss), seed=seed,
                handshake_rtt_us=int(first.bbr_min_rtt_us), start_us=int(first.bbr_ack_epoch_mstamp))
    table = truth.copy()
    table.insert(0, "ack", np.arange(len(table)))
    for col, var in (("cwnd", "cwnd"), ("pacing_rate", "pacing_rate"), ("mode", "mode"), ("bw", "bw"),
                     ("min_rtt_us", "min_rtt_us"), ("cycle_idx", "cycle_idx")):
        table["replay_" + col] = df[var].to_numpy().astype(np.int64)
    table["cwnd_ok"] = table.cwnd == table.replay_cwnd
    table["pacing_ok"] = table.pacing_rate == table.replay_pacing_rate
    table["mode_ok"] = table["mode"] == table.replay_mode
    return BbrCheck(rec, trace, table, seed, phases, hz, lost)


def run_check(scenario: dict | None = None) -> BbrCheck:
    """Run `scenario` (default :data:`SCENARIO`, one bbr flow) on the testbed with the probe
    attached, and check its bbr socket."""
    from cubiclab.kernel.check import measure_hz_and_phase
    from cubiclab.namespaces import kernel_lab_held
    from cubiclab.testbed import testbed

    hz = measure_hz_and_phase()[0]
    # The probe sees every bbr socket of the machine: attach it only once no other kernel
    # run can start.
    with tempfile.TemporaryDirectory(prefix="cubiclab-bbr-probe-") as d, kernel_lab_held():
        with BbrProbe(Path(d) / "bbr.csv") as probe:
            testbed(scenario or SCENARIO, trace=False)
        rec, lost = probe.records, probe.lost
    if lost:
        raise RuntimeError(f"the bbr probe lost {lost} records (ring buffer full); the check needs every ACK")
    if rec.empty:
        raise RuntimeError("the bbr probe recorded no ACK of a bbr socket")
    # The sender's socket: the one that delivers (the receiver's bbr socket sees the data
    # segments at its tcp_probe and delivers nothing).
    sport = rec.groupby("sport").delivered.max().idxmax()
    return check(rec[rec.sport == sport], hz, lost)
