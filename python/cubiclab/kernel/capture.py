"""Run a real bulk TCP flow through the tbf path (:mod:`cubiclab.kernel.tbf_path`) while
tracing the sender's socket.

The two ends are plain Python sockets in endpoint processes
(:mod:`cubiclab.endpoints`, ``check_flow.py``) started in the namespaces; the sender picks its congestion control with ``setsockopt(IPPROTO_TCP, TCP_CONGESTION)``
before connecting and keeps a send buffer far larger than its window, so that it is
cwnd-limited throughout (``tcp_is_cwnd_limited``): an app-limited sender would not grow
its window and could not be compared.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cubiclab import namespaces as _netns
from cubiclab.endpoints import CHECK_FLOW
from cubiclab.kernel import tracing as _tracing
from cubiclab.kernel.tbf_path import SENDER_DEV, TbfPath
from cubiclab.namespaces import KernelLabUnavailable


def availability() -> str | None:
    """None if a capture can run on this machine, else the reason it cannot."""
    return _netns.availability() or _tracing.availability()


@dataclass
class Capture:
    """A recorded flow: the parsed trace and what the endpoints reported."""

    cc: str
    records: pd.DataFrame
    mss: int
    t_start_us: int
    t_stop_us: int
    rate: str
    limit_bytes: int
    qdisc: str = ""
    info: dict = field(default_factory=dict)
    #: ACKs seen arriving at the sender: time_us (CLOCK_MONOTONIC), ack, sacks
    #: (list of [start, end) byte ranges), tsval, data_len, tsecr. None without a sniffer.
    acks: pd.DataFrame | None = None
    #: ACKs the sniffer's socket dropped (then `acks` is incomplete).
    ack_drops: int = 0


def run_flow(
    cc: str = "cubic",
    seconds: float = 6.0,
    rate: str = "20mbit",
    limit_bytes: int = 120_000,
    port: int = 5201,
    sysctls: dict | None = None,
    ticks: bool = True,
    receiver_cc: str | None = None,
) -> Capture:
    """Build the tbf path, trace one bulk flow of `seconds` with congestion control `cc`,
    tear everything down, and return the records (see :func:`tracing.parse_trace`).

    `sysctls` maps ``(role, key)`` to a value set inside that namespace before the flow.
    `receiver_cc`: the receiver's congestion control, for one with a receiver's half
    (DCTCP's ECE echo; its ECN handshake needs it on both ends); None: the default.
    Raises :class:`KernelLabUnavailable` when the machine cannot do this.
    """
    reason = availability()
    if reason:
        raise KernelLabUnavailable(reason)
    tmp = tempfile.TemporaryDirectory(prefix="cubiclab-kernel-")
    ackfile = Path(tmp.name) / "acks.jsonl"
    with tmp, TbfPath(rate=rate, limit_bytes=limit_bytes) as net:
        for (role, key), value in (sysctls or {}).items():
            net.sysctl(role, key, value)
        sniffer, _ = net.start("sender", CHECK_FLOW, "sniff", SENDER_DEV, port, ackfile, what="ACK sniffer")
        with _tracing.TraceSession(port=port, ticks=ticks) as tr:
            srv, _ = net.start("receiver", CHECK_FLOW, "server", net.receiver_ip, port,
                               *([receiver_cc] if receiver_cc else []), what="receiver")
            cli, info = net.start("sender", CHECK_FLOW, "client", net.receiver_ip, port, cc, seconds,
                                   what="sender", timeout=seconds + 30)
            cli.wait(10)
            srv.wait(10)
            records = tr.records()
        sniffer.terminate()
        sniffer.wait(10)
        acks, ack_drops = _read_acks(ackfile)
        qdisc = net.qdisc_stats()
    if info.get("cc") != cc:
        raise RuntimeError(f"the sender runs '{info.get('cc')}', not '{cc}'")
    # Tracepoints are machine-wide: another namespace's flow to the same port (another run
    # on this machine) passes the port filter too. Keep this sender's socket only.
    sock = records.event.isin(["probe", "state"])
    records = records[~sock | (records.sport == int(info["sport"]))].reset_index(drop=True)
    return Capture(
        cc=cc,
        records=records,
        mss=int(info["mss"]),
        t_start_us=int(info["t_start_ns"]) // 1000,
        t_stop_us=int(info["t_stop_ns"]) // 1000,
        rate=rate,
        limit_bytes=limit_bytes,
        qdisc=qdisc,
        info=info,
        acks=acks,
        ack_drops=ack_drops,
    )


def _read_acks(path: Path) -> tuple[pd.DataFrame, int]:
    lines = path.read_text().splitlines()
    drops = json.loads(lines[0])["drops"] if lines else 0
    rows = [json.loads(x) for x in lines[1:]]
    df = pd.DataFrame(rows, columns=["time_us", "ack", "sacks", "tsval", "data_len", "tsecr"])
    return df, int(drops)
