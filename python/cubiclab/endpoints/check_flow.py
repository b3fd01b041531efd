"""The per-ACK checks' bulk flow (both ends) and the sniffer of its ACKs, run inside the
namespaces by :meth:`cubiclab.namespaces.Namespaces.start`.

Standalone (standard library only) so that it runs as a plain script:

    python3 check_flow.py server HOST PORT
    python3 check_flow.py client HOST PORT CC SECONDS
    python3 check_flow.py sniff IFACE PORT OUTFILE

``sniff`` records every ACK that arrives on IFACE from PORT (ack number and SACK blocks)
until SIGTERM, then writes them as JSON lines to OUTFILE: the tracepoint has no SACK
information, and without it the segments an ACK newly delivers are unknown.

Each prints one JSON line with what the caller needs; times are CLOCK_MONOTONIC in
nanoseconds, the clock of the ``mono`` trace clock.
"""

import json
import struct
import socket
import sys
import time

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
BIG = 32 << 20
# Far above cwnd * truesize for any window these runs reach, small enough that the data
# still queued when the run stops is dropped at once by the abortive close.
SNDBUF = 4 << 20


def server(host: str, port: int, cc: str | None = None) -> None:
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if cc:
        # A congestion control with a receiver's half (DCTCP's ECE echo): the accepted
        # socket inherits the listener's.
        ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    # A large receive buffer: the receive window must never limit the sender.
    ls.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, BIG)
    ls.bind((host, port))
    ls.listen(1)
    print(json.dumps({"ready": True}), flush=True)
    ls.settimeout(30)
    conn, _ = ls.accept()
    buf = bytearray(1 << 20)
    total = 0
    while True:
        try:
            n = conn.recv_into(buf)
        except ConnectionResetError:
            break
        if n == 0:
            break
        total += n
    conn.close()
    print(json.dumps({"received": total}), flush=True)


def client(host: str, port: int, cc: str, seconds: float) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Chosen before connect, so the handshake's tcp_init_congestion_control runs it.
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    # A send buffer far above cwnd * MSS keeps data always queued: the sender stays
    # cwnd-limited (tcp_is_cwnd_limited) for the whole run.
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, SNDBUF)
    s.connect((host, port))
    got = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
    mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
    sport = s.getsockname()[1]
    chunk = b"\0" * (256 << 10)
    t0 = time.monotonic_ns()
    end = t0 + int(seconds * 1e9)
    sent = 0
    while time.monotonic_ns() < end:
        sent += s.send(chunk)
    t1 = time.monotonic_ns()
    # Abortive close (RST): the replay compares only up to t_stop, and draining the
    # queued data would only add an app-limited tail.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print(json.dumps({"cc": got, "mss": mss, "sport": sport, "t_start_ns": t0, "t_stop_ns": t1, "sent": sent}), flush=True)


ETH_P_IP = 0x0800
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6


def _tcp_ack_fields(frame: bytes, port: int):
    """(ack, sack_blocks, tsval, data_len, tsecr) of a TCP segment from `port`, else None."""
    if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0F) * 4
    if ip[9] != 6:
        return None
    tcp = ip[ihl:]
    sport, _dport, _seq, ack, off, flags = struct.unpack("!HHIIBB", tcp[:14])
    # Only ACKs that tcp_rcv_established() processes: not the SYN-ACK, not a RST.
    if sport != port or flags & 0x06 or not flags & 0x10:
        return None
    hlen = (off >> 4) * 4
    opts, i, sacks, tsval, tsecr = tcp[20:hlen], 0, [], None, None
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        ln = opts[i + 1] if i + 1 < len(opts) else 0
        if ln < 2:
            break
        if kind == 5:
            body = opts[i + 2 : i + ln]
            sacks = [list(struct.unpack("!II", body[k : k + 8])) for k in range(0, len(body) - 7, 8)]
        elif kind == 8 and ln == 10:
            tsval, tsecr = struct.unpack("!II", opts[i + 2 : i + 10])
        i += ln
    total = struct.unpack("!H", ip[2:4])[0]
    return ack, sacks, tsval, total - ihl - hlen, tsecr


def sniff(iface: str, port: int, outfile: str) -> None:
    import signal

    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, BIG)
    s.bind((iface, ETH_P_IP))
    s.settimeout(0.1)
    print(json.dumps({"ready": True}), flush=True)
    out = []
    while not stop:
        try:
            frame, addr = s.recvfrom(256)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] == PACKET_OUTGOING:
            continue
        f = _tcp_ack_fields(frame, port)
        if f is not None:
            out.append([time.monotonic_ns() // 1000, *f])
    packets, drops = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    with open(outfile, "w") as fh:
        fh.write(json.dumps({"drops": drops}) + "\n")
        for row in out:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "server":
        server(sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    elif role == "client":
        client(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]))
    elif role == "sniff":
        sniff(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(f"unknown role {role!r}")
