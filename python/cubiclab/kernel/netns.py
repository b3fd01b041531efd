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

Every object lives in namespaces named ``clk<pid>-<role>``; deleting the namespaces deletes
the veths and the qdisc with them. :class:`Testbed` tears down on every exit path (context
manager, ``atexit``, SIGTERM/SIGINT/SIGHUP), and :func:`cleanup` removes what killed runs
left behind (namespaces whose pid is no longer alive).
"""

from __future__ import annotations

import abc
import atexit
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field

PREFIX = "clk"
_NAME_RE = re.compile(rf"^{PREFIX}(\d+)-")


class KernelLabUnavailable(RuntimeError):
    """The machine cannot run kernel experiments (not root, no ip, no namespaces...)."""


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def availability() -> str | None:
    """None if namespaces can be used here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, tc, tracefs)"
    if shutil.which("ip") is None or shutil.which("tc") is None:
        return "iproute2 ('ip' and 'tc') is not installed"
    probe = f"{PREFIX}{os.getpid()}-probe"
    p = _run("ip", "netns", "add", probe, check=False)
    if p.returncode != 0:
        return f"cannot create a network namespace: {p.stderr.strip()}"
    _run("ip", "netns", "del", probe, check=False)
    return None


def list_namespaces(prefix: str = PREFIX) -> list[str]:
    """Names of the network namespaces that start with `prefix`."""
    p = _run("ip", "netns", "list", check=False)
    names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    return [n for n in names if n.startswith(prefix)]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_netns_pids(ns: str) -> None:
    p = _run("ip", "netns", "pids", ns, check=False)
    for tok in p.stdout.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass


def _delete_netns(ns: str) -> None:
    _kill_netns_pids(ns)
    _run("ip", "netns", "del", ns, check=False)


def cleanup(prefix: str = PREFIX, include_live: bool = False) -> list[str]:
    """Delete namespaces named ``<prefix><pid>-*`` left by runs whose process is gone
    (all of them with `include_live`). Returns the names deleted."""
    gone = []
    for ns in list_namespaces(prefix):
        m = _NAME_RE.match(ns)
        if m is None:
            continue
        pid = int(m.group(1))
        if include_live or (pid != os.getpid() and not _pid_alive(pid)):
            _delete_netns(ns)
            gone.append(ns)
    return gone


class Namespaces(abc.ABC):
    """A set of namespaces named ``clk<pid>-<tag><role>``, built by :meth:`_build` and torn
    down on every exit path: context manager, ``atexit``, SIGTERM/SIGINT/SIGHUP. Subclasses
    set ``roles`` and implement ``_build``; :meth:`close` is idempotent."""

    #: role -> suffix of the namespace name
    roles: dict = {}

    def _init_names(self, tag: str) -> None:
        base = f"{PREFIX}{os.getpid()}-{tag}"
        self.names = {role: base + suffix for role, suffix in self.roles.items()}
        self._up = False
        self._old_handlers = {}

    def exec_args(self, role: str) -> list[str]:
        """The command prefix that runs a program inside the namespace of `role`."""
        return ["ip", "netns", "exec", self.names[role]]

    def netns_path(self, role: str) -> str:
        return f"/var/run/netns/{self.names[role]}"

    def open(self):
        reason = availability()
        if reason:
            raise KernelLabUnavailable(reason)
        cleanup()
        self._install_handlers()
        self._up = True
        try:
            for ns in self.names.values():
                _run("ip", "netns", "add", ns)
                _run("ip", "-n", ns, "link", "set", "lo", "up")
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    @abc.abstractmethod
    def _build(self) -> None:
        """Create this lab's links, addresses and qdiscs inside the namespaces."""

    def sysctl(self, role: str, key: str, value) -> None:
        """Set a per-namespace sysctl (it dies with the namespace: nothing to restore)."""
        _run("ip", "netns", "exec", self.names[role], "sysctl", "-q", "-w", f"{key}={value}")

    def close(self) -> None:
        if not self._up:
            return
        self._up = False
        for ns in self.names.values():
            _delete_netns(ns)
        self._restore_handlers()

    # --- every exit path -------------------------------------------------------------

    def _install_handlers(self) -> None:
        atexit.register(self.close)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            try:
                old = signal.getsignal(sig)
                signal.signal(sig, self._on_signal)
                self._old_handlers[sig] = old
            except ValueError:  # not the main thread: atexit and __exit__ still apply
                pass

    def _restore_handlers(self) -> None:
        for sig, old in self._old_handlers.items():
            try:
                signal.signal(sig, old)
            except ValueError:
                pass
        self._old_handlers.clear()
        try:
            atexit.unregister(self.close)
        except Exception:
            pass

    def _on_signal(self, signum, frame) -> None:
        old = self._old_handlers.get(signum)
        self.close()
        if callable(old):
            old(signum, frame)
        else:
            raise SystemExit(128 + signum)

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()


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
        _run("ip", "link", "add", "s0", "netns", s, "type", "veth", "peer", "name", "r0", "netns", r)
        _run("ip", "link", "add", "r1", "netns", r, "type", "veth", "peer", "name", "d0", "netns", d)
        _run("ip", "-n", s, "addr", "add", f"{self.sender_ip}/24", "dev", "s0")
        _run("ip", "-n", r, "addr", "add", "10.77.1.2/24", "dev", "r0")
        _run("ip", "-n", r, "addr", "add", "10.77.2.2/24", "dev", "r1")
        _run("ip", "-n", d, "addr", "add", f"{self.receiver_ip}/24", "dev", "d0")
        for ns, dev in ((s, "s0"), (r, "r0"), (r, "r1"), (d, "d0")):
            _run("ip", "-n", ns, "link", "set", dev, "up")
        _run("ip", "-n", s, "route", "add", "default", "via", "10.77.1.2")
        _run("ip", "-n", d, "route", "add", "default", "via", "10.77.2.2")
        _run("ip", "netns", "exec", r, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
        _run("tc", "-n", r, "qdisc", "add", "dev", "r1", "root", "tbf", "rate", self.rate,
             "burst", str(self.burst_bytes), "limit", str(self.limit_bytes))

    def qdisc_stats(self) -> str:
        return _run("tc", "-s", "-n", self.router, "qdisc", "show", "dev", "r1", check=False).stdout
