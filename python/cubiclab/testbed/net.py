"""The testbed's namespaces: sender and receiver joined only through the emulator.

::

    sender ns                      emulator ns                      receiver ns
    tb0 10.78.0.1  <-- TUN fd -->  cubiclab-emu  <-- TUN fd -->  tb0 10.78.0.2
    (peer 10.78.0.2)               (rate, buffer, delays, loss)      (peer 10.78.0.1)

Each TUN device is persistent (``ip tuntap add``) and lives in its namespace; the emulator
process, started in the emulator namespace, attaches to both (``TUNSETIFF`` after
``setns``). A packet the sender's stack routes to ``tb0`` is read by the emulator and, after
the emulated path, written to the receiver's ``tb0``, which hands it to the receiver's stack
as if it had arrived on a wire; the ACKs go back the same way. There is no other link: no
traffic can leave these namespaces, and nothing is created in the host's namespace.

Settings touched are those of the testbed's own namespaces (they die with them): IPv6 off
(so no router solicitations cross the emulator), ephemeral ports from 50000 up (clients'
ports never fall among the servers' ports, below 50000, by which the emulator tells flows
apart) and, on request, sysctls per namespace (``net.ipv4.tcp_sack``, ``tcp_rmem``, ...) and
route metrics (``initcwnd``, ``ssthresh``, ``rto_min``) of a namespace's route to the other.
Built with :mod:`cubiclab.namespaces`, as the per-ACK checks' tbf path is
(:mod:`cubiclab.kernel.tbf_path`); namespaces are named ``clk<pid>-tb<role>``, the kernel
lab's prefix, so that :func:`cubiclab.namespaces.cleanup` removes what a killed run left.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cubiclab.namespaces import Namespaces

SENDER_IP = "10.78.0.1"
RECEIVER_IP = "10.78.0.2"
DEV = "tb0"
#: Clients' ports; servers listen below.
EPHEMERAL_PORTS = (50000, 65000)


@dataclass
class TunPath(Namespaces):
    """Sender, emulator and receiver namespaces with a TUN device at each end.

    `mtu`: of both TUN devices (the scenario's mss + 52). `route_opts`: per namespace
    ("sender", "receiver"), extra metrics of its route to the other (e.g.
    ``{"sender": {"initcwnd": 4}}``). `sysctls`: per namespace, sysctls set in it.
    """

    mtu: int = 1500
    #: The TUN device's own queue, where packets wait until the emulator reads them: deep,
    #: so that a burst the sender's stack releases at once is not dropped there (the
    #: emulator reads in microseconds; only its own buffer should drop).
    txqueuelen: int = 10000
    tag: str = "tb"
    route_opts: dict = field(default_factory=dict)
    sysctls: dict = field(default_factory=dict)
    names: dict = field(default_factory=dict)
    roles = {"sender": "snd", "emulator": "emu", "receiver": "rcv"}

    def __post_init__(self) -> None:
        self._init_names(self.tag)

    def _build(self) -> None:
        for role, ip, peer in (("sender", SENDER_IP, RECEIVER_IP), ("receiver", RECEIVER_IP, SENDER_IP)):
            self.sysctl(role, "net.ipv6.conf.all.disable_ipv6", 1)
            self.sysctl(role, "net.ipv6.conf.default.disable_ipv6", 1)
            self.sysctl(role, "net.ipv4.ip_local_port_range", f"{EPHEMERAL_PORTS[0]} {EPHEMERAL_PORTS[1]}")
            self.tun(role, DEV, self.mtu, self.txqueuelen)
            self.address(role, DEV, f"{ip}/32", peer=f"{peer}/32")
        for role, sysctls in self.sysctls.items():
            for k, v in sysctls.items():
                self.sysctl(role, k, v)
        for role, route_opts in self.route_opts.items():
            if route_opts:
                peer = RECEIVER_IP if role == "sender" else SENDER_IP
                opts = [str(x) for kv in route_opts.items() for x in kv]
                self.ip(role, "route", "replace", f"{peer}/32", "dev", DEV, *opts)

    def device_drops(self, role: str) -> dict:
        """Packets the kernel dropped at the TUN device of `role` before the emulator read
        them (its qdisc and the device's own queue): losses the scenario did not ask for,
        which mean the emulator did not keep up."""
        import json as _json

        out = {"qdisc_drops": 0, "tx_dropped": 0}
        p = self.tc(role, "-s", "-j", "qdisc", "show", "dev", DEV, check=False)
        try:
            out["qdisc_drops"] = sum(int(q.get("drops", 0)) for q in _json.loads(p.stdout or "[]"))
        except ValueError:
            pass
        p = self.ip(role, "-s", "-j", "link", "show", DEV, check=False)
        try:
            stats = _json.loads(p.stdout or "[]")[0].get("stats64", {})
            out["tx_dropped"] = int(stats.get("tx", {}).get("dropped", 0))
        except (ValueError, IndexError):
            pass
        return out

    def carrier(self, role: str) -> bool:
        """Whether the TUN device of `role` has a reader attached (the emulator)."""
        out = self.ip(role, "link", "show", DEV, check=False).stdout
        return "NO-CARRIER" not in out and "LOWER_UP" in out
