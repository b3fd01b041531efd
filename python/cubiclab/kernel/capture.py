"""Run a real bulk TCP flow through the testbed while tracing the sender's socket.

The two ends are plain Python sockets in subprocesses started with ``ip netns exec``; the
sender picks its congestion control with ``setsockopt(IPPROTO_TCP, TCP_CONGESTION)``
before connecting and keeps a send buffer far larger than its window, so that it is
cwnd-limited throughout (``tcp_is_cwnd_limited``): an app-limited sender would not grow
its window and could not be compared.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cubiclab import namespaces as _netns
from cubiclab.kernel.netns import Testbed
from cubiclab.namespaces import KernelLabUnavailable
from cubiclab.kernel import tracing as _tracing

ENDPOINTS = Path(__file__).with_name("_endpoints.py")


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
    #: (list of [start, end) byte ranges), tsval, data_len. None without a sniffer.
    acks: pd.DataFrame | None = None
    #: ACKs the sniffer's socket dropped (then `acks` is incomplete).
    ack_drops: int = 0


def _read_json_line(proc: subprocess.Popen, what: str, timeout: float) -> dict:
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout):
        raise RuntimeError(f"{what}: no answer within {timeout} s")
    line = proc.stdout.readline()
    if not line:
        err = proc.stderr.read() if proc.stderr else ""
        raise RuntimeError(f"{what} exited without answering: {err.strip()}")
    return json.loads(line)


def run_flow(
    cc: str = "cubic",
    seconds: float = 6.0,
    rate: str = "20mbit",
    limit_bytes: int = 120_000,
    port: int = 5201,
    sysctls: dict | None = None,
    ticks: bool = True,
) -> Capture:
    """Create the testbed, trace one bulk flow of `seconds` with congestion control `cc`,
    tear everything down, and return the records (see :func:`tracing.parse_trace`).

    `sysctls` maps ``(role, key)`` to a value set inside that namespace before the flow.
    Raises :class:`KernelLabUnavailable` when the machine cannot do this.
    """
    reason = availability()
    if reason:
        raise KernelLabUnavailable(reason)
    procs: list[subprocess.Popen] = []
    tmp = tempfile.TemporaryDirectory(prefix="cubiclab-kernel-")
    ackfile = Path(tmp.name) / "acks.jsonl"
    with tmp, Testbed(rate=rate, limit_bytes=limit_bytes) as tb:
        for (role, key), value in (sysctls or {}).items():
            tb.sysctl(role, key, value)
        try:
            sniffer = subprocess.Popen(
                tb.exec_args("sender") + [sys.executable, str(ENDPOINTS), "sniff", "s0", str(port), str(ackfile)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            procs.append(sniffer)
            _read_json_line(sniffer, "ACK sniffer", 10)
            with _tracing.TraceSession(port=port, ticks=ticks) as tr:
                srv = subprocess.Popen(
                    tb.exec_args("receiver") + [sys.executable, str(ENDPOINTS), "server", tb.receiver_ip, str(port)],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                )
                procs.append(srv)
                _read_json_line(srv, "receiver", 10)
                cli = subprocess.Popen(
                    tb.exec_args("sender")
                    + [sys.executable, str(ENDPOINTS), "client", tb.receiver_ip, str(port), cc, str(seconds)],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                )
                procs.append(cli)
                info = _read_json_line(cli, "sender", seconds + 30)
                cli.wait(10)
                srv.wait(10)
                records = tr.records()
            sniffer.terminate()
            sniffer.wait(10)
            acks, ack_drops = _read_acks(ackfile)
            qdisc = tb.qdisc_stats()
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
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
    df = pd.DataFrame(rows, columns=["time_us", "ack", "sacks", "tsval", "data_len"])
    return df, int(drops)
