"""The testbed's background web sessions, one process per namespace (servers and clients).

Standalone (standard library only), run by ``ip netns exec``::

    python3 web.py CONFIG.json OUT.json

CONFIG (written by :mod:`cubiclab.testbed.run`): ``host`` (this namespace's address),
``peer`` (the other one's), ``epoch_ns`` (CLOCK_MONOTONIC time of t = 0), ``end_ns``,
``servers``: ``[{port, cc}]`` for the sessions whose server (the object's sender) lives
here, and ``clients``: ``[{port, first_request_ns, objects: [[bytes, think_ns], ...]}]`` for
those whose client lives here (times relative to the epoch).

A client requests its objects one after another, each over a new TCP connection: it
connects, sends the size (8 bytes), reads until the server closes, then thinks for the
object's think time. A server (congestion control set on its listening socket, which the
accepted connections inherit) sends that many bytes, shuts its side down and waits for the
client's close: that arrives once the client has read the last byte, so its time is when
the last byte was acknowledged, to within the client's reaction. OUT holds the clients'
``requests`` ``[port, index, t_request_ns, bytes]`` and the servers' ``done``
``[port, t_done_ns]`` (in order per port: the k-th done is the k-th request's), ``retries``
(connections refused or reset at connect and asked again) and ``errors`` (objects lost to a
broken connection; the session goes on). Everything open at ``end_ns`` is reset (RST), so
nothing drains after the run.
"""

import heapq
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
CHUNK = memoryview(bytes(1 << 20))
#: Connections refused or reset at connect, asked again, before the process gives up.
MAX_RETRIES = 1000

_stop = []


def _now() -> int:
    return time.monotonic_ns()


def _reset(s: socket.socket) -> None:
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    except OSError:
        pass


class Server:
    """One accepted connection: read the size, send that many bytes, wait for the close."""

    def __init__(self, port: int, conn: socket.socket):
        self.port, self.conn = port, conn
        self.request = b""
        self.left = None

    def on_event(self, sel, out) -> None:
        c = self.conn
        if self.left is None:
            data = c.recv(8 - len(self.request))
            if not data:
                self.close(sel)
                return
            self.request += data
            if len(self.request) == 8:
                self.left = struct.unpack("!Q", self.request)[0]
                sel.modify(c, selectors.EVENT_WRITE, self)
            return
        if self.left > 0:
            try:
                n = c.send(CHUNK[:min(self.left, len(CHUNK))])
            except BlockingIOError:
                return
            self.left -= n
            if self.left == 0:
                c.shutdown(socket.SHUT_WR)
                sel.modify(c, selectors.EVENT_READ, self)
            return
        if not c.recv(4096):  # the client's close: the last byte is acknowledged
            out["done"].append([self.port, _now()])
            self.close(sel)

    def close(self, sel) -> None:
        sel.unregister(self.conn)
        self.conn.close()


class Client:
    """One session: its objects in order, one connection each."""

    def __init__(self, spec: dict, peer: str, epoch: int):
        self.port, self.peer = spec["port"], peer
        self.objects = spec["objects"]
        self.index = 0
        self.due = epoch + spec["first_request_ns"]
        self.sock = None

    def start(self, sel, out) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        self.t_request = _now()
        s.connect_ex((self.peer, self.port))
        self.sock, self.sent = s, False
        sel.register(s, selectors.EVENT_WRITE, self)

    def on_event(self, sel, out, timers) -> None:
        s = self.sock
        if not self.sent:
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                # Refused: the server's process is not listening yet (a loaded machine
                # starts processes slowly); reset: the new connection met the remains of
                # an earlier one with the same ports. Either way, ask again shortly, as
                # the same request.
                sel.unregister(s)
                s.close()
                self.sock = None
                out["retries"] += 1
                if out["retries"] <= MAX_RETRIES:
                    self.due = _now() + 10_000_000
                    heapq.heappush(timers, (self.due, id(self), self))
                else:
                    out["errors"].append(f"port {self.port}: connect: {os.strerror(err)}")
                return
            size = self.objects[self.index][0]
            out["requests"].append([self.port, self.index, self.t_request, size])
            s.send(struct.pack("!Q", size))
            self.sent = True
            sel.modify(s, selectors.EVENT_READ, self)
            return
        while True:
            try:
                data = s.recv(1 << 20)
            except BlockingIOError:
                return
            if not data:
                break
        sel.unregister(s)
        s.close()
        self.sock = None
        think = self.objects[self.index][1]
        self.index += 1
        if self.index < len(self.objects):
            self.due = _now() + think
            heapq.heappush(timers, (self.due, id(self), self))


def main(cfg: dict, outfile: str) -> None:
    signal.signal(signal.SIGTERM, lambda *_: _stop.append(1))
    sel = selectors.DefaultSelector()
    out = {"requests": [], "done": [], "errors": [], "retries": 0}
    listeners = {}
    for sv in cfg["servers"]:
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit the listener's congestion control.
        ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, sv["cc"].encode())
        ls.bind((cfg["host"], sv["port"]))
        ls.listen(64)
        ls.setblocking(False)
        listeners[ls] = sv["port"]
        sel.register(ls, selectors.EVENT_READ, None)
    clients = [Client(c, cfg["peer"], cfg["epoch_ns"]) for c in cfg["clients"] if c["objects"]]
    timers = [(c.due, id(c), c) for c in clients]
    heapq.heapify(timers)
    print(json.dumps({"ready": True}), flush=True)
    end = cfg["end_ns"]
    while not _stop and _now() < end:
        now = _now()
        while timers and timers[0][0] <= now:
            heapq.heappop(timers)[2].start(sel, out)
        wake = min(timers[0][0] if timers else end, end, now + 50_000_000)
        for key, _ in sel.select(max(0.0, (wake - _now()) / 1e9)):
            if key.data is None:
                try:
                    conn, _ = key.fileobj.accept()
                except BlockingIOError:
                    continue
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ, Server(listeners[key.fileobj], conn))
            elif isinstance(key.data, Server):
                try:
                    key.data.on_event(sel, out)
                except (ConnectionError, OSError):
                    key.data.close(sel)
            else:
                try:
                    key.data.on_event(sel, out, timers)
                except (ConnectionError, OSError) as e:
                    # The object is lost (not recorded); the session goes on to its next.
                    out["errors"].append(f"port {key.data.port}: {e}")
                    c = key.data
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    c.sock = None
                    c.index += 1
                    if c.index < len(c.objects):
                        c.due = _now() + c.objects[c.index - 1][1]
                        heapq.heappush(timers, (c.due, id(c), c))
    for key in list(sel.get_map().values()):
        _reset(key.fileobj)
    with open(outfile, "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main(json.load(open(sys.argv[1])), sys.argv[2])
