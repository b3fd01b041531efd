"""A three-namespace dumbbell with a rate-limited bottleneck, and its teardown.

::

    sender ns            router ns                         receiver ns
    s0 10.77.1.1 ---- r0 10.77.1.2   r1 10.77.2.2 [tbf] ---- d0 10.77.2.1

The bottleneck is a ``tbf`` on the router's egress toward the receiver, not on the
sender's own interface: a qdisc on the sender's device would hold the sender's skbs, and
TCP Small Queues (``tcp_small_queue_check``) would then throttle the sender instead of
the queue dropping packets, leaving the flow neither lossy nor cwnd-limited. On the router
the skbs are orphaned when they leave the sender's veth, so the queue fills and drops.
The tbf ``burst`` is two packets, which also makes tbf segment the sender's TSO skbs
(``tbf_segment``), so the queue drops single segments as a router would.

This kernel has no netem, so the path has no propagation delay: the RTT is the veth
latency (tens of microseconds) plus the queueing delay, up to ``limit / rate``.

Every object lives in the lab's own namespaces (:mod:`cubiclab.namespaces`); deleting them
deletes the veths and the qdisc with them, on every exit path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cubiclab.namespaces import Namespaces, run


@dataclass
class Testbed(Namespaces):
    """Sender, router and receiver namespaces with a tbf bottleneck.

    `rate` is tc syntax ("20mbit"); `limit_bytes` is the tbf queue; `burst_bytes` its
    bucket. Use as a context manager; :meth:`close` is idempotent.
    """

    rate: str = "20mbit"
    limit_bytes: int = 120_000
    burst_bytes: int = 3028
    tag: str = ""
    sender_ip: str = "10.77.1.1"
    receiver_ip: str = "10.77.2.1"
    names: dict = field(default_factory=dict)
    roles = {"sender": "snd", "router": "rtr", "receiver": "rcv"}

    def __post_init__(self) -> None:
        self._init_names(self.tag)

    @property
    def sender(self) -> str:
        return self.names["sender"]

    @property
    def router(self) -> str:
        return self.names["router"]

    @property
    def receiver(self) -> str:
        return self.names["receiver"]

    def _build(self) -> None:
        s, r, d = self.sender, self.router, self.receiver
        # Both ends are created directly inside the namespaces: no name ever exists in
        # the root namespace, so concurrent runs cannot collide.
        run("ip", "link", "add", "s0", "netns", s, "type", "veth", "peer", "name", "r0", "netns", r)
        run("ip", "link", "add", "r1", "netns", r, "type", "veth", "peer", "name", "d0", "netns", d)
        run("ip", "-n", s, "addr", "add", f"{self.sender_ip}/24", "dev", "s0")
        run("ip", "-n", r, "addr", "add", "10.77.1.2/24", "dev", "r0")
        run("ip", "-n", r, "addr", "add", "10.77.2.2/24", "dev", "r1")
        run("ip", "-n", d, "addr", "add", f"{self.receiver_ip}/24", "dev", "d0")
        for ns, dev in ((s, "s0"), (r, "r0"), (r, "r1"), (d, "d0")):
            run("ip", "-n", ns, "link", "set", dev, "up")
        run("ip", "-n", s, "route", "add", "default", "via", "10.77.1.2")
        run("ip", "-n", d, "route", "add", "default", "via", "10.77.2.2")
        run("ip", "netns", "exec", r, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
        run("tc", "-n", r, "qdisc", "add", "dev", "r1", "root", "tbf", "rate", self.rate,
             "burst", str(self.burst_bytes), "limit", str(self.limit_bytes))

    def qdisc_stats(self) -> str:
        return run("tc", "-s", "-n", self.router, "qdisc", "show", "dev", "r1", check=False).stdout
