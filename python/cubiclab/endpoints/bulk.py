"""The testbed's long-lived flows: a sink where their receivers run and a source where their
senders do (for forward flows the receiver's and the sender's namespaces; reverse flows
have a pair of their own the other way round).

Standalone (standard library only), run by ``ip netns exec``::

    python3 bulk.py sink CONFIG.json OUT.json
    python3 bulk.py source CONFIG.json OUT.json

CONFIG (written by :mod:`cubiclab.testbed.run`): ``host`` (the sink's address), ``epoch_ns``
(CLOCK_MONOTONIC time of t = 0), ``end_ns`` (the end of the run), ``tick_ns`` (sampling
period), ``rcvlowat`` (bytes waiting before the sink is woken), ``sink_fifo`` (the sink's
SCHED_FIFO priority, 0 for none), ``start_fifo`` (the source's SCHED_FIFO priority until its
last flow has opened, 0 for none), ``info_file`` (where the
source writes its TCP_INFO samples) and ``flows``: a list of ``{flow, port, cc, start_ns, stop_ns,
bytes, sndbuf, rcvbuf}`` (``flow``: its index in the run, which the samples and messages
name; ``rcvbuf`` null: the sink leaves the buffer to the kernel's autotuning; times
relative to the epoch; ``stop_ns``/``bytes`` may be null).

The sink accepts one connection per flow port and records the bytes received per flow (in
the order of ``flows``) at every tick. The source opens each flow at its start time with its congestion control set
per socket (``TCP_CONGESTION``, before connecting), flows due together in the order of their
start times (whichever flow's SYN leaves first wins the first slow start, so a late wake-up
must not reorder them), keeps its send buffer full (bulk,
cwnd-limited), samples ``TCP_INFO`` of every open socket at every tick, and ends each flow
at its stop time (or after its bytes are acknowledged, giving the flow completion time),
all flows at ``end_ns``, with an abortive close (RST) so that no queued data drains after
the run. Both print ``{"ready": true}`` once listening/started and write OUT at the end
(or on SIGTERM). The source's TCP_INFO samples go to ``info_file`` as CSV (columns
``INFO_COLUMNS``), appended in batches as the run goes, so that a long run's samples do
not accumulate in its memory (two flows sampled every 10 ms made ~10 MB a minute). Times
are CLOCK_MONOTONIC nanoseconds.
"""

import json
import os
import select
import signal
import socket
import struct
import sys
import time

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
SO_COOKIE = 57

# struct tcp_info (include/uapi/linux/tcp.h): the fields kept, by offset and format.
_INFO_FIELDS = (
    ("state", 0, "B"), ("ca_state", 1, "B"), ("retransmits", 2, "B"), ("backoff", 4, "B"), ("options", 5, "B"),
    ("rto_us", 8, "I"), ("snd_mss", 16, "I"), ("unacked", 24, "I"), ("sacked", 28, "I"),
    ("lost", 32, "I"), ("retrans", 36, "I"), ("rtt_us", 68, "I"), ("rttvar_us", 72, "I"),
    ("snd_ssthresh", 76, "I"), ("snd_cwnd", 80, "I"), ("total_retrans", 100, "I"),
    ("pacing_rate", 104, "Q"), ("bytes_acked", 120, "Q"), ("segs_out", 136, "I"),
    ("notsent_bytes", 144, "I"), ("min_rtt_us", 148, "I"), ("delivery_rate", 160, "Q"),
    # tcpi_delivered_ce: packets delivered that the receiver echoed CE for (in classic ECN,
    # those acknowledged by ACKs with ECE: `tcp_count_delivered`).
    ("delivered", 192, "I"), ("delivered_ce", 196, "I"), ("bytes_sent", 200, "Q"), ("bytes_retrans", 208, "Q"),
    # The receiver's advertised window as the sender last saw it, in bytes (tcpi_snd_wnd).
    ("snd_wnd", 228, "I"),
)
INFO_COLUMNS = ["t_ns", "flow"] + [f[0] for f in _INFO_FIELDS]
_UNACKED = [f[0] for f in _INFO_FIELDS].index("unacked")
_NOTSENT = [f[0] for f in _INFO_FIELDS].index("notsent_bytes")
_INFO_LEN = 232

_stop = []


def _on_term(*_):
    _stop.append(1)


def _now() -> int:
    return time.monotonic_ns()


def _sleep_until(t_ns: int) -> None:
    while not _stop:
        d = t_ns - _now()
        if d <= 0:
            return
        time.sleep(min(d / 1e9, 0.05))


def tcp_info(s: socket.socket) -> list:
    raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, _INFO_LEN)
    out = []
    for _, off, fmt in _INFO_FIELDS:
        size = struct.calcsize(fmt)
        out.append(struct.unpack_from(fmt, raw, off)[0] if off + size <= len(raw) else None)
    return out


def sink(cfg: dict, outfile: str) -> None:
    flows = cfg["flows"]
    if cfg.get("sink_fifo"):
        # The receiver ACKs every second segment only while less than SO_RCVLOWAT is unread
        # or its window's right edge advances (``__tcp_ack_snd_check``); the window here is
        # the buffer's free space, so until the sink reads, the receiver falls silent and
        # then ACKs everything at once. Above the emulator's priority the sink reads as soon
        # as it is woken, not after the emulator's threads, which run the kernels' TCP.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(cfg["sink_fifo"])))
    listeners = {}
    for i, f in enumerate(flows):
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # The plan's receive buffer: forced, so the kernel does not autotune it
        # (SOCK_RCVBUF_LOCK). With none, the kernel autotunes it from the namespace's
        # tcp_rmem, as for an application that never sets SO_RCVBUF.
        if f["rcvbuf"] is not None:
            ls.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, int(f["rcvbuf"]))
        # A congestion control with a receiver's half (DCTCP's ECE echo): the accepted
        # socket inherits the listener's.
        if f.get("receiver_cc"):
            ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["receiver_cc"].encode())
        ls.bind((cfg["host"], f["port"]))
        ls.listen(4)
        ls.setblocking(False)
        listeners[ls.fileno()] = (ls, i)
    print(json.dumps({"ready": True}), flush=True)
    conns = {}
    total = [0] * len(flows)
    first = [None] * len(flows)
    last = [None] * len(flows)
    samples = []
    tick = cfg["tick_ns"]
    next_tick = cfg["epoch_ns"] + tick
    end = cfg["end_ns"] + 2_000_000_000
    buf = bytearray(1 << 20)
    while not _stop and _now() < end:
        timeout = max(0.0, min(next_tick - _now(), 50_000_000) / 1e9)
        fds = list(listeners) + list(conns)
        try:
            ready, _, _ = select.select(fds, [], [], timeout)
        except InterruptedError:
            continue
        for fd in ready:
            if fd in listeners:
                ls, i = listeners[fd]
                try:
                    c, _ = ls.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, int(cfg.get("rcvlowat", 1)))
                conns[c.fileno()] = (c, i)
                continue
            c, i = conns[fd]
            while True:
                try:
                    n = c.recv_into(buf)
                except BlockingIOError:
                    break
                except (ConnectionResetError, OSError):
                    n = 0
                if n == 0:
                    del conns[fd]
                    c.close()
                    break
                t = _now()
                if first[i] is None:
                    first[i] = t
                last[i] = t
                total[i] += n
        now = _now()
        while now >= next_tick:
            samples.append([next_tick] + total)
            next_tick += tick
    samples.append([_now()] + total)
    with open(outfile, "w") as fh:
        json.dump({"samples": samples, "total": total, "first_ns": first, "last_ns": last}, fh)


class _Flow:
    def __init__(self, spec, cfg):
        self.i = spec["flow"]
        self.spec = spec
        self.port = spec["port"]
        self.start = cfg["epoch_ns"] + spec["start_ns"]
        self.stop = cfg["epoch_ns"] + spec["stop_ns"] if spec.get("stop_ns") is not None else None
        self.bytes = spec.get("bytes")
        self.sock = None
        self.state = "waiting"  # waiting, connecting, sending, draining, done
        self.sent = 0
        self.info = {}
        self.t_connected = None
        self.t_done = None
        self.fct_ns = None


def _abort(s: socket.socket) -> None:
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    s.close()


class _InfoLog:
    """TCP_INFO samples (rows of INFO_COLUMNS) appended to a CSV file in batches."""

    BATCH = 1000

    def __init__(self, path: str):
        self.fh = open(path, "w")
        self.fh.write(",".join(INFO_COLUMNS) + "\n")
        self.rows = []
        self.count = 0

    def add(self, row: list) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        # A field this kernel's tcp_info lacks (None) is an empty cell: NaN when read back.
        self.fh.write("".join(",".join("" if v is None else str(v) for v in r) + "\n" for r in self.rows))
        self.count += len(self.rows)
        self.rows.clear()

    def close(self) -> None:
        self.flush()
        self.fh.close()


def source(cfg: dict, outfile: str) -> None:
    flows = [_Flow(f, cfg) for f in cfg["flows"]]
    chunk = b"\0" * (256 << 10)
    tick = cfg["tick_ns"]
    end = cfg["end_ns"]
    next_tick = cfg["epoch_ns"]
    info_log = _InfoLog(cfg["info_file"])
    errors = []
    # Each flow's socket is made before the run, its congestion control set before connect
    # (so that the handshake's tcp_init_congestion_control runs it): at its start time only
    # connect() is left, which sends the SYN before it returns.
    for f in flows:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f.spec["cc"].encode())
        except OSError as e:
            errors.append(f"flow {f.i}: TCP_CONGESTION {f.spec['cc']!r}: {e}")
            f.state = "done"
            s.close()
            continue
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, int(f.spec["sndbuf"]))
        s.setblocking(False)
        f.sock = s
    # The flows still to open, by start time (the flows' order breaks ties): a wake-up late
    # past several start times opens them in this order, never in the flows' order.
    to_open = sorted((f for f in flows if f.state == "waiting"), key=lambda f: (f.start, f.i))
    if to_open and cfg.get("start_fifo"):
        # Until the last flow has opened, above every normal task (below the emulator): a
        # start is then late by a real-time wake-up's latency, not by other tasks' time slices.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(cfg["start_fifo"])))
    print(json.dumps({"ready": True}), flush=True)
    while not _stop:
        now = _now()
        if now >= end:
            break
        while to_open and now >= to_open[0].start:
            f = to_open.pop(0)
            f.info["t_open_ns"] = _now()
            try:
                f.sock.connect((cfg["host"], f.port))
            except BlockingIOError:
                pass
            f.state = "connecting"
            f.info["cookie"] = struct.unpack("Q", f.sock.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8))[0]
            if not to_open and cfg.get("start_fifo"):
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        for f in flows:
            if f.state in ("sending", "draining", "connecting") and f.stop is not None and now >= f.stop:
                _abort(f.sock)
                f.state, f.t_done = "done", now
        wfds = [f.sock for f in flows if f.state in ("connecting", "sending")]
        wake = min([next_tick, end] + [f.start for f in flows if f.state == "waiting"]
                   + [f.stop for f in flows if f.stop is not None and f.state != "done"])
        timeout = max(0.0, (wake - _now()) / 1e9)
        try:
            _, writable, _ = select.select([], wfds, [], min(timeout, 0.05))
        except InterruptedError:
            continue
        for s in writable:
            f = next(x for x in flows if x.sock is s)
            if f.state == "connecting":
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    errors.append(f"flow {f.i}: connect: {os.strerror(err)}")
                    s.close()
                    f.state = "done"
                    continue
                f.state = "sending"
                f.t_connected = _now()
                f.info["cc"] = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
                f.info["mss"] = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
                f.info["sport"] = s.getsockname()[1]
            try:
                # Filling the buffer gives way to a flow whose start has come.
                while not (to_open and _now() >= to_open[0].start):
                    if f.bytes is not None:
                        left = f.bytes - f.sent
                        if left <= 0:
                            s.shutdown(socket.SHUT_WR)
                            f.state = "draining"
                            break
                        n = s.send(chunk[: min(left, len(chunk))])
                    else:
                        n = s.send(chunk)
                    f.sent += n
            except BlockingIOError:
                pass
            except OSError as e:
                errors.append(f"flow {f.i}: send: {e}")
                f.state = "done"
        now = _now()
        for f in flows:
            if f.state == "draining":
                info = tcp_info(f.sock)
                # All data acknowledged (tcpi_unacked = 0, nothing unsent).
                if info[_UNACKED] == 0 and info[_NOTSENT] == 0:
                    f.fct_ns = now - f.start
                    f.t_done = now
                    info_log.add([now, f.i] + info)
                    _abort(f.sock)
                    f.state = "done"
        if now >= next_tick:
            for f in flows:
                if f.state in ("sending", "draining"):
                    try:
                        info_log.add([now, f.i] + tcp_info(f.sock))
                    except OSError:
                        pass
            next_tick += tick * max(1, (now - next_tick) // tick + 1)
        if all(f.state == "done" for f in flows) and all(f.start <= now for f in flows):
            break
    now = _now()
    for f in flows:
        if f.state == "waiting" and f.sock is not None:  # made, never opened
            f.sock.close()
        elif f.sock is not None and f.state != "done":
            try:
                info_log.add([now, f.i] + tcp_info(f.sock))
            except OSError:
                pass
            _abort(f.sock)
            f.t_done = now
    info_log.close()
    out = {
        "info_file": cfg["info_file"],
        "info_rows": info_log.count,
        "errors": errors,
        "flows": [dict(f.info, sent=f.sent, t_connected_ns=f.t_connected, t_done_ns=f.t_done, fct_ns=f.fct_ns)
                  for f in flows],
    }
    with open(outfile, "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, _on_term)
    role, cfgfile, outfile = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(cfgfile) as fh:
        config = json.load(fh)
    if role == "sink":
        sink(config, outfile)
    elif role == "source":
        source(config, outfile)
    else:
        sys.exit(f"unknown role {role!r}")
