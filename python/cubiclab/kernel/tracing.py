"""Record the kernel's `tcp:tcp_probe` and `tcp:tcp_cong_state_set` tracepoints.

Facts this relies on (Linux 6.18, checked in the source):

* ``trace_tcp_probe(sk, skb)`` is the first statement of ``tcp_rcv_established()``
  (``net/ipv4/tcp_input.c``), before ``tcp_ack()``. A record therefore shows the socket
  *before* the ACK it was fired for: the state after ACK *i* is the one in record *i + 1*.
  Its fields (``include/trace/events/tcp.h``): ``snd_nxt, snd_una, snd_cwnd, ssthresh,
  snd_wnd, srtt (= tp->srtt_us >> 3, the smoothed RTT in us), rcv_wnd, data_len``. There is
  no per-ACK RTT sample and no SACK information.
* ``trace_tcp_cong_state_set(sk, state)`` is the first statement of ``tcp_set_ca_state()``
  and carries the *new* state (0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss).

The session works in its own tracefs instance (``instances/clk<pid>-<n>``): its own ring
buffer, ``trace_clock`` and event switches, so nothing global is changed. The clock is
``mono`` (``ktime_get_mono_fast_ns``, the clock of CLOCK_MONOTONIC), because on this kernel
the jiffy tick is aligned to multiples of TICK_NSEC on that clock
(``tick_init_jiffy_update``): ``jiffies = floor(mono / (10^9 / HZ)) + const``. That lets a
replay recover ``tcp_jiffies32`` from the timestamps with the right phase. (The
``uptime`` clock is jiffies converted to USER_HZ = 100, too coarse to use.)

When instances are unavailable the top-level buffer is used, and every setting changed
there (events, filters, ``trace_clock``, ``buffer_size_kb``) is restored afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from cubiclab.namespaces import PREFIX, pid_alive as _pid_alive

TRACEFS = Path("/sys/kernel/tracing")
EVENTS = ("tcp/tcp_probe", "tcp/tcp_cong_state_set")
TICK_EVENT = "timer/hrtimer_expire_entry"
CA_STATES = {0: "Open", 1: "Disorder", 2: "CWR", 3: "Recovery", 4: "Loss"}


def tracefs_root() -> Path | None:
    """The tracefs mount, mounting it if needed; None if impossible."""
    if (TRACEFS / "trace").exists():
        return TRACEFS
    if os.geteuid() == 0 and TRACEFS.is_dir():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True)
        if (TRACEFS / "trace").exists():
            return TRACEFS
    return None


def availability() -> str | None:
    """None if the tracepoints can be recorded here, else why not."""
    root = tracefs_root()
    if root is None:
        return "tracefs is not mounted at /sys/kernel/tracing and cannot be mounted"
    missing = [e for e in EVENTS if not (root / "events" / e / "enable").exists()]
    if missing:
        return f"this kernel lacks the tracepoints {', '.join(missing)}"
    return None


def cleanup_instances(prefix: str = PREFIX) -> list[str]:
    """Remove tracefs instances left by killed runs (``<prefix><pid>-*``, pid gone)."""
    root = tracefs_root()
    gone = []
    if root is None or not (root / "instances").is_dir():
        return gone
    for d in (root / "instances").iterdir():
        m = re.match(rf"^{prefix}(\d+)-", d.name)
        if m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            _disable_all(d)
            try:
                d.rmdir()
                gone.append(d.name)
            except OSError:
                pass
    return gone


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _disable_all(inst: Path) -> None:
    for e in EVENTS + (TICK_EVENT,):
        p = inst / "events" / e / "enable"
        if p.exists():
            try:
                _write(p, "0")
            except OSError:
                pass


@dataclass
class TraceSession:
    """Enable the two tracepoints, filtered on a TCP port, into a private buffer.

    Use as a context manager: on exit the events are disabled and the instance removed
    (or, without instances, the top-level settings restored). Read with :meth:`records`.
    """

    port: int
    buffer_kb: int = 32768
    clock: str = "mono"
    #: Also record the runs of the tick handler (``timer:hrtimer_expire_entry`` for
    #: ``tick_nohz_handler``): they show when jiffies were actually advanced.
    ticks: bool = False
    #: An event filter replacing ``dport == port`` (e.g. a port range).
    filter: str | None = None
    #: Raise when the ring buffer lost events; otherwise :attr:`lost` counts them.
    strict: bool = True
    lost: int = 0
    _dir: Path | None = None
    _instance: bool = False
    _saved: dict | None = None
    _text: str | None = None

    def __enter__(self) -> "TraceSession":
        root = tracefs_root()
        if root is None:
            raise RuntimeError("tracefs unavailable")
        cleanup_instances()
        name = f"{PREFIX}{os.getpid()}-{id(self) & 0xffff:x}"
        inst = root / "instances" / name
        try:
            inst.mkdir()
            self._dir, self._instance = inst, True
        except OSError:
            self._dir, self._instance = root, False
            self._saved = self._save(root)
        try:
            self._setup()
        except BaseException:
            self._teardown()
            raise
        return self

    def _save(self, d: Path) -> dict:
        saved = {
            "trace_clock": re.search(r"\[(\S+)\]", (d / "trace_clock").read_text()).group(1),
            "buffer_size_kb": (d / "buffer_size_kb").read_text().split()[0],
            "tracing_on": (d / "tracing_on").read_text().strip(),
        }
        for e in EVENTS:
            saved[e + "/enable"] = (d / "events" / e / "enable").read_text().strip()
            filt = (d / "events" / e / "filter").read_text().strip()
            saved[e + "/filter"] = "0" if filt == "none" else filt
        return saved

    def _setup(self) -> None:
        d = self._dir
        clocks = (d / "trace_clock").read_text()
        if self.clock not in clocks.replace("[", " ").replace("]", " ").split():
            raise RuntimeError(f"trace_clock '{self.clock}' not offered: {clocks.strip()}")
        _write(d / "tracing_on", "0")
        _write(d / "trace_clock", self.clock)
        _write(d / "buffer_size_kb", str(self.buffer_kb))
        _write(d / "trace", "")  # clear
        # sport/dport are the socket's own ports (host order): on the sender's socket the
        # destination is the server port, so this keeps the sender's records only.
        for e in EVENTS:
            _write(d / "events" / e / "filter", self.filter or f"dport == {self.port}")
            _write(d / "events" / e / "enable", "1")
        if self.ticks:
            _write(d / "events" / TICK_EVENT / "enable", "1")
        _write(d / "tracing_on", "1")

    def stop(self) -> str:
        """Stop recording and return the buffer's text (kept for :meth:`records`)."""
        if self._text is None and self._dir is not None:
            _write(self._dir / "tracing_on", "0")
            lost = self.lost = self.lost_events()
            self._text = (self._dir / "trace").read_text()
            if lost and self.strict:
                raise RuntimeError(f"the trace buffer lost {lost} events; raise buffer_kb")
        return self._text or ""

    def lost_events(self) -> int:
        n = 0
        for st in (self._dir / "per_cpu").glob("cpu*/stats"):
            for line in st.read_text().splitlines():
                k, _, v = line.partition(":")
                if k.strip() in ("overrun", "dropped events"):
                    n += int(v.split()[0])
        return n

    def _teardown(self) -> None:
        d = self._dir
        if d is None:
            return
        _disable_all(d)
        if self._instance:
            try:
                _write(d / "tracing_on", "0")
            except OSError:
                pass
            try:
                d.rmdir()
            except OSError:
                pass
        elif self._saved:
            for e in EVENTS:
                _write(d / "events" / e / "filter", self._saved[e + "/filter"])
                _write(d / "events" / e / "enable", self._saved[e + "/enable"])
            _write(d / "trace_clock", self._saved["trace_clock"])
            _write(d / "buffer_size_kb", self._saved["buffer_size_kb"])
            _write(d / "tracing_on", self._saved["tracing_on"])
        self._dir = None

    def __exit__(self, *exc) -> None:
        try:
            if self._text is None and self._dir is not None and exc[0] is None:
                self.stop()
        finally:
            self._teardown()

    def records(self) -> pd.DataFrame:
        return parse_trace(self.stop())


# "  python3-123  [001] ..s1.  1234.567890: tcp_probe: family=AF_INET src=... snd_cwnd=10 ..."
_LINE = re.compile(r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>\d+\.\d+):\s+(?P<ev>\w+):\s+(?P<body>.*)$")
_KV = re.compile(r"(\w+)=(\S+)")
_INT_FIELDS = ("data_len", "snd_cwnd", "ssthresh", "snd_wnd", "srtt", "rcv_wnd", "sport", "dport", "cong_state")
_HEX_FIELDS = ("snd_nxt", "snd_una")


def _port(addr: str | None) -> int | None:
    """The port of ``10.0.0.1:5201`` or ``[::1]:5201``."""
    if not addr or ":" not in addr:
        return None
    tail = addr.rsplit(":", 1)[1]
    return int(tail) if tail.isdigit() else None


def parse_trace(text: str) -> pd.DataFrame:
    """Parse trace text into one row per event.

    Columns: ``time_us`` (int, trace clock), ``event`` (``probe`` or ``state``), ``snd_nxt``,
    ``snd_una`` (u32 byte sequence numbers), ``cwnd``, ``ssthresh``, ``srtt_us``,
    ``snd_wnd``, ``data_len``, ``state`` (new CA state name for ``state`` rows), ``cpu``,
    ``sport``/``dport`` (the socket's own ports) and ``cookie`` (``sock_cookie``, probes).
    """
    rows = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None or m.group("ev") not in ("tcp_probe", "tcp_cong_state_set", "hrtimer_expire_entry"):
            continue
        kv = dict(_KV.findall(m.group("body")))
        sec, _, frac = m.group("ts").partition(".")
        t_us = int(sec) * 1_000_000 + int(frac.ljust(6, "0")[:6])
        row = {"time_us": t_us, "cpu": int(m.group("cpu"))}
        if m.group("ev") == "hrtimer_expire_entry":
            if kv.get("function") != "tick_nohz_handler":
                continue
            row["event"] = "tick"
            row["state"] = None
        elif m.group("ev") == "tcp_probe":
            row["event"] = "probe"
            for k in _HEX_FIELDS:
                row[k] = int(kv[k], 16)
            row["cwnd"] = int(kv["snd_cwnd"])
            row["ssthresh"] = int(kv["ssthresh"])
            row["srtt_us"] = int(kv["srtt"])
            row["snd_wnd"] = int(kv["snd_wnd"])
            row["data_len"] = int(kv["data_len"])
            row["state"] = None
            row["sport"] = _port(kv.get("src"))
            row["dport"] = _port(kv.get("dest"))
            row["cookie"] = int(kv["sock_cookie"], 16) if "sock_cookie" in kv else None
        else:
            row["event"] = "state"
            row["state"] = CA_STATES.get(int(kv["cong_state"]), kv["cong_state"])
            row["sport"] = int(kv["sport"]) if "sport" in kv else None
            row["dport"] = int(kv["dport"]) if "dport" in kv else None
        rows.append(row)
    cols = ["time_us", "event", "snd_nxt", "snd_una", "cwnd", "ssthresh", "srtt_us", "snd_wnd", "data_len", "state", "cpu",
            "sport", "dport", "cookie"]
    df = pd.DataFrame(rows, columns=cols)
    for c in ("snd_nxt", "snd_una", "cwnd", "ssthresh", "srtt_us", "snd_wnd", "data_len", "sport", "dport"):
        df[c] = df[c].astype("Int64")
    return df.sort_values("time_us", kind="stable").reset_index(drop=True)
