"""The per-ACK checks' path: sender, router and receiver namespaces joined by veth pairs, with
a ``tbf`` bottleneck on the router.

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
latency (tens of microseconds) plus the queueing delay, up to ``limit / rate``. A per-ACK
check needs no more: the replay is fed the kernel's own ACKs and RTT samples, whatever the
path; what it needs is a cwnd-limited flow that loses packets every few seconds, all inside
the kernel (no user-space process between the sender and the queue). To run the kernel on
a scenario's path (delays, discipline, random loss), use :mod:`cubiclab.testbed`, whose
:class:`~cubiclab.testbed.net.TunPath` puts the emulator in the middle.

Built with :mod:`cubiclab.namespaces`; deleting the namespaces deletes the veths and the
qdisc with them, on every exit path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cubiclab.namespaces import Namespaces

#: The sender's device, where the check's sniffer reads the ACKs.
SENDER_DEV = "s0"


@dataclass
class TbfPath(Namespaces):
    """Sender, router and receiver namespaces with a tbf bottleneck on the router.

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

    def _build(self) -> None:
        self.veth("sender", SENDER_DEV, "router", "r0")
        self.veth("router", "r1", "receiver", "d0")
        self.address("sender", SENDER_DEV, f"{self.sender_ip}/24")
        self.address("router", "r0", "10.77.1.2/24")
        self.address("router", "r1", "10.77.2.2/24")
        self.address("receiver", "d0", f"{self.receiver_ip}/24")
        self.ip("sender", "route", "add", "default", "via", "10.77.1.2")
        self.ip("receiver", "route", "add", "default", "via", "10.77.2.2")
        self.sysctl("router", "net.ipv4.ip_forward", 1)
        self.tc("router", "qdisc", "add", "dev", "r1", "root", "tbf", "rate", self.rate,
                "burst", str(self.burst_bytes), "limit", str(self.limit_bytes))

    def qdisc_stats(self) -> str:
        return self.tc("router", "-s", "qdisc", "show", "dev", "r1", check=False).stdout
