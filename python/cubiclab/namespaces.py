"""The kernel lab's one namespace and endpoint layer: network namespaces (naming, the
machine-wide lock, teardown on every exit path, cleanup of what killed runs left), the
links and addresses inside them (veth pairs, TUN devices, routes, qdiscs), their sysctls,
and the endpoint processes started in them (the standalone programs of
:mod:`cubiclab.endpoints`). Shared by the two ways cubiclab runs the real Linux TCP stack,
each of which only says which namespaces and links it wants:

- :mod:`cubiclab.kernel` (per-ACK checks): one flow through a ``tbf`` router
  (:class:`cubiclab.kernel.tbf_path.TbfPath`), traced ACK by ACK, to check that an
  algorithm of cubiclab's computes what the kernel's computes. Use it to validate an
  algorithm.
- :mod:`cubiclab.testbed`: a whole scenario (many flows, per-flow RTTs, the scenario's
  buffer, queue discipline and random loss) through the user-space emulator
  (:class:`cubiclab.testbed.net.TunPath`), with results in the simulator's shape. Use it
  to compare the simulator with the kernel on an experiment.

Every namespace is named ``clk<pid>-<tag><role>``: the pid says whose it is, so
:func:`cleanup` can remove those of runs that are gone, and nothing is ever created outside
them.

Kernel runs measure timing (emulator lateness, ACK clocks, HyStart's delay samples) on a
machine they share, so one process at a time holds the kernel lab: :meth:`Namespaces.open`
takes an exclusive ``flock`` on :data:`LOCK_PATH` and another process's run waits, saying
whose run it waits for. The kernel drops the lock when its holder exits, however it exits.
"""

from __future__ import annotations

import abc
import atexit
import fcntl
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
from pathlib import Path

PREFIX = "clk"
_NAME_RE = re.compile(rf"^{PREFIX}(\d+)-")
#: The machine-wide kernel-lab lock (see the module's docstring).
LOCK_PATH = "/run/cubiclab-kernel-lab.lock"


class _MachineLock:
    """Exclusive, per-process re-entrant hold of :data:`LOCK_PATH`: nested kernel labs in one
    process (a testbed run inside an ensemble) take it once."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self._depth = 0

    def acquire(self, log=sys.stderr) -> None:
        if self._depth == 0:
            fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "another process"
                if log:
                    print(f"cubiclab: waiting for the kernel lab, held by {holder}", file=log, flush=True)
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} ({' '.join(sys.argv)[:200]})\n".encode(), 0)
            self._fd = fd
        self._depth += 1

    def release(self) -> None:
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


_LOCK = _MachineLock()


class kernel_lab_held:
    """Hold the kernel lab for a block (re-entrant: runs inside take it again for free), for
    what must cover a whole run, such as a machine-wide probe attached before it starts."""

    def __enter__(self) -> "kernel_lab_held":
        _LOCK.acquire()
        return self

    def __exit__(self, *exc) -> None:
        _LOCK.release()


class KernelLabUnavailable(RuntimeError):
    """The machine cannot run kernel experiments (not root, no ip, no namespaces...)."""


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command (iproute2, tc, sysctl); with `check`, raise RuntimeError naming it if it fails."""
    p = subprocess.run(list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def availability(tun: bool = False) -> str | None:
    """None if namespaces (with `tun`: and TUN devices in them) can be used here, else the
    reason they cannot."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, tc, tracefs)"
    if shutil.which("ip") is None or shutil.which("tc") is None:
        return "iproute2 ('ip' and 'tc') is not installed"
    if tun and not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing (no TUN support)"
    probe = f"{PREFIX}{os.getpid()}-probe"
    p = run("ip", "netns", "add", probe, check=False)
    if p.returncode != 0:
        return f"cannot create a network namespace: {p.stderr.strip()}"
    try:
        if tun:
            p = run("ip", "-n", probe, "tuntap", "add", "mode", "tun", "name", "probe", check=False)
            if p.returncode != 0:
                return f"cannot create a TUN device in a namespace: {p.stderr.strip()}"
    finally:
        run("ip", "netns", "del", probe, check=False)
    return None


def list_namespaces(prefix: str = PREFIX) -> list[str]:
    """Names of the network namespaces that start with `prefix`."""
    p = run("ip", "netns", "list", check=False)
    names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    return [n for n in names if n.startswith(prefix)]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_netns_pids(ns: str) -> None:
    p = run("ip", "netns", "pids", ns, check=False)
    for tok in p.stdout.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass


def _delete_netns(ns: str) -> None:
    _kill_netns_pids(ns)
    run("ip", "netns", "del", ns, check=False)


def cleanup(prefix: str = PREFIX, include_live: bool = False) -> list[str]:
    """Delete namespaces named ``<prefix><pid>-*`` left by runs whose process is gone
    (all of them with `include_live`). Returns the names deleted."""
    gone = []
    for ns in list_namespaces(prefix):
        m = _NAME_RE.match(ns)
        if m is None:
            continue
        pid = int(m.group(1))
        if include_live or (pid != os.getpid() and not pid_alive(pid)):
            _delete_netns(ns)
            gone.append(ns)
    return gone


def _read_json_line(proc: subprocess.Popen, what: str, timeout: float) -> dict:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout):
        raise RuntimeError(f"{what}: no answer within {timeout} s")
    line = proc.stdout.readline()
    if not line:
        err = proc.stderr.read() if proc.stderr else ""
        raise RuntimeError(f"{what} exited without answering: {err.strip()}")
    return json.loads(line)


class Namespaces(abc.ABC):
    """A set of namespaces named ``clk<pid>-<tag><role>``, built by :meth:`_build` and torn
    down on every exit path: context manager, ``atexit``, SIGTERM/SIGINT/SIGHUP, with the
    endpoint processes started in them (:meth:`start`). Subclasses set ``roles`` and
    implement ``_build`` with :meth:`veth`, :meth:`tun`, :meth:`address`, :meth:`ip`,
    :meth:`tc` and :meth:`sysctl`; :meth:`close` is idempotent."""

    #: role -> suffix of the namespace name
    roles: dict = {}

    def _init_names(self, tag: str) -> None:
        base = f"{PREFIX}{os.getpid()}-{tag}"
        self.names = {role: base + suffix for role, suffix in self.roles.items()}
        self._up = False
        self._old_handlers = {}
        self._procs: list[subprocess.Popen] = []

    def exec_args(self, role: str) -> list[str]:
        """The command prefix that runs a program inside the namespace of `role`."""
        return ["ip", "netns", "exec", self.names[role]]

    def netns_path(self, role: str) -> str:
        return f"/var/run/netns/{self.names[role]}"

    def open(self):
        reason = availability()
        if reason:
            raise KernelLabUnavailable(reason)
        _LOCK.acquire()
        cleanup()
        self._install_handlers()
        self._up = True
        try:
            for ns in self.names.values():
                run("ip", "netns", "add", ns)
                run("ip", "-n", ns, "link", "set", "lo", "up")
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    @abc.abstractmethod
    def _build(self) -> None:
        """Create this lab's links, addresses and qdiscs inside the namespaces."""

    # --- what _build makes inside the namespaces (it dies with them) --------------------

    def sysctl(self, role: str, key: str, value) -> None:
        """Set a per-namespace sysctl (it dies with the namespace: nothing to restore)."""
        run(*self.exec_args(role), "sysctl", "-q", "-w", f"{key}={value}")

    def ip(self, role: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """``ip`` run on the namespace of `role`."""
        return run("ip", "-n", self.names[role], *args, check=check)

    def tc(self, role: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """``tc`` run on the namespace of `role`."""
        return run("tc", "-n", self.names[role], *args, check=check)

    def veth(self, role_a: str, dev_a: str, role_b: str, dev_b: str) -> None:
        """A veth pair, `dev_a` in the namespace of `role_a`, `dev_b` in that of `role_b`.
        Both ends are created directly inside the namespaces: no name ever exists in the
        host's, so concurrent runs cannot collide."""
        run("ip", "link", "add", dev_a, "netns", self.names[role_a], "type", "veth",
            "peer", "name", dev_b, "netns", self.names[role_b])

    def tun(self, role: str, dev: str, mtu: int, txqueuelen: int) -> None:
        """A persistent TUN device in the namespace of `role`, for a process to attach to."""
        self.ip(role, "tuntap", "add", "mode", "tun", "name", dev)
        self.ip(role, "link", "set", dev, "mtu", str(mtu), "txqueuelen", str(txqueuelen))

    def address(self, role: str, dev: str, cidr: str, peer: str | None = None) -> None:
        """Give `dev` the address `cidr` (point to point with `peer`, if given) and bring it up."""
        self.ip(role, "addr", "add", cidr, *(("peer", peer) if peer else ()), "dev", dev)
        self.ip(role, "link", "set", dev, "up")

    # --- endpoint processes ----------------------------------------------------------

    def start(self, role: str, program: Path, *args, what: str, timeout: float = 10) -> tuple[subprocess.Popen, dict]:
        """Run the standalone endpoint `program` (see :mod:`cubiclab.endpoints`) with `args`
        in the namespace of `role`; return it and its first output line (JSON: that it is
        ready, or its report), read within `timeout` s. :meth:`close` kills it if it is
        still running then."""
        proc = subprocess.Popen(self.exec_args(role) + [sys.executable, str(program), *map(str, args)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._procs.append(proc)
        return proc, _read_json_line(proc, what, timeout)

    def close(self) -> None:
        if not self._up:
            return
        self._up = False
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self._procs.clear()
        for ns in self.names.values():
            _delete_netns(ns)
        self._restore_handlers()
        _LOCK.release()

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
