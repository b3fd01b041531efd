"""Library algorithms on the real kernel: cubiclab's BPF ports, registered for one run.

The kernel offers only what it has built in (``tcp_available_congestion_control``). For
a library algorithm with a BPF port (``cubiclab-bpf list``), :class:`Registered` starts
the ``cubiclab-bpf`` loader, which registers one ``struct_ops`` congestion control per
flow group under a name of its own (``clk<pid>_<group><tag>``, which no kernel module
uses), with the group's parameters; sockets choose it with ``TCP_CONGESTION`` like a
built-in one. Leaving the ``with`` block (normally, by an exception, or because this
process died: the loader watches its stdin and has a parent-death signal) unregisters
every name. :func:`cleanup` ends loaders that a killed run left behind. No kernel-wide
setting is changed.

The loader is the Rust binary of ``crates/cubiclab-bpf`` (``$CUBICLAB_BPF``, or the
workspace's ``target/release`` or ``target/debug``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from functools import lru_cache
from pathlib import Path

AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
#: One file per running loader, named by its pid: what --cleanup may end.
RUN_DIR = Path("/run/cubiclab-bpf")
PREFIX = "clk"
INSTALL = ("install clang, bpftool, libelf-dev and zlib1g-dev (Debian: apt-get install clang bpftool libelf-dev "
           "zlib1g-dev) and build the loader: cargo build --release -p cubiclab-bpf")


class BpfUnavailable(RuntimeError):
    """The BPF ports cannot be built or loaded here; the message says why and what to do."""


def binary() -> Path | None:
    env = os.environ.get("CUBICLAB_BPF")
    if env:
        return Path(env)
    root = Path(__file__).resolve().parents[3]
    for profile in ("release", "debug"):
        p = root / "target" / profile / "cubiclab-bpf"
        if p.exists():
            return p
    return None


@lru_cache(maxsize=1)
def _listing() -> dict:
    exe = binary()
    if exe is None:
        return {"ports": [], "build_problem": f"the loader cubiclab-bpf is not built; {INSTALL}"}
    out = subprocess.run([str(exe), "list"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def ports() -> dict[str, dict]:
    """Library name -> port description, for every algorithm with a BPF port."""
    return {p["algorithm"]: p for p in _listing()["ports"]}


def port_line(algorithm: str) -> str | None:
    """What `cubiclab algorithms` and the algorithms reference say of `algorithm`'s BPF port
    (None: it has none); BpfUnavailable when the loader is not built (its table is the one
    owner of which algorithms have a port)."""
    if binary() is None:
        raise BpfUnavailable(f"which algorithms have a BPF port: the loader cubiclab-bpf is not built; {INSTALL}")
    p = ports().get(algorithm)
    if p is None:
        return None
    twin = "" if p["exact_twin"] == algorithm else f", computing exactly what {p['exact_twin']} does"
    return f"BPF port{twin}" + (f"; {p['fixed_point']}" if p["fixed_point"] else "")


def availability() -> str | None:
    """None if BPF ports can be registered here, else exactly why not and what to do."""
    problem = _listing()["build_problem"]
    if problem:
        return f"the BPF ports were not built ({problem}); {INSTALL}"
    if os.geteuid() != 0:
        return "registering BPF congestion control needs root (CAP_BPF and CAP_NET_ADMIN)"
    if not Path("/sys/kernel/btf/vmlinux").exists():
        return "this kernel has no BTF (/sys/kernel/btf/vmlinux; needs CONFIG_DEBUG_INFO_BTF)"
    jit = Path("/proc/sys/net/core/bpf_jit_enable")
    if jit.exists() and jit.read_text().strip() == "0":
        return "the BPF JIT is off (net.core.bpf_jit_enable = 0); struct_ops needs it"
    return None


def registered() -> list[str]:
    """The congestion controls this kernel offers now, in its own order: built in, loaded
    as modules, and BPF ports registered (by this process's loaders or others')."""
    try:
        return AVAILABLE_CC.read_text().split()
    except OSError:
        return []


def instance_name(index: int, algorithm: str) -> str:
    """A name for flow group `index` of this process: at most 15 characters."""
    tag = ports()[algorithm]["tag"]
    return f"{PREFIX}{os.getpid():x}_{index}{tag}"[:15]


def check_flow(at: str, algorithm: str, params: dict, kernel: list[str]) -> bool:
    """Whether the flow group needs a BPF port (True) or runs a built-in one (False);
    ValueError naming `at` when neither can run it."""
    if algorithm in kernel and not params:
        return False
    if algorithm in ports():
        reason = availability()
        if reason:
            raise ValueError(f"{at}.algorithm '{algorithm}' runs as a BPF port, which cannot load here: {reason}. "
                             f"Without it the testbed runs the kernel's: {', '.join(kernel) or 'none'}")
        return True
    if algorithm in kernel:
        raise ValueError(f"{at}.params: the testbed runs the kernel's {algorithm}, whose parameters are module-wide "
                         f"(not per socket); remove them, or use a library algorithm with a BPF port: "
                         f"{', '.join(ports()) or 'none built'}")
    raise ValueError(f"{at}.algorithm is '{algorithm}'; this kernel offers: {', '.join(kernel) or 'none'}; "
                     f"BPF ports: {', '.join(ports()) or 'none built (' + (availability() or '') + ')'}")


class Registered:
    """Register `instances` (name -> (algorithm, params)) while the block runs.

    `watch`: a file to which the loader writes the per-ACK check's witness of these sockets
    (one row per ``tcp_probe`` BPF ran for, with the port log, and per congestion state
    change; crates/cubiclab-bpf/src/watch.rs), complete once the block has ended. See
    :func:`read_watch` and :func:`cubiclab.kernel.convert.port_inputs`.

    `stats`: keep the kernel's BPF run-time statistics on while the block runs (for these
    programs only; ``kernel.bpf_stats_enabled`` is not touched); afterwards :attr:`stats`
    maps instance -> program -> ``{"run_cnt", "run_time_ns"}``.

    `hooklog`: a folder to which the loader copies the hook log of each instance whose port
    keeps one (bbr3: every hook call's inputs and outputs, ``<name>.bin``, and ``<name>.lost``;
    crates/cubiclab-bpf/src/hooklog.rs), complete once the block has ended.
    """

    def __init__(self, instances: dict[str, tuple[str, dict]], watch: Path | None = None, stats: bool = False,
                 hooklog: Path | None = None):
        self.instances = instances
        self.watch = watch
        self.hooklog = hooklog
        self.want_stats = stats
        self.stats: dict | None = None
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Registered":
        if not self.instances:
            return self
        specs = []
        for name, (alg, params) in self.instances.items():
            kv = ",".join(f"{k}={v if isinstance(v, str) else repr(v)}" for k, v in sorted(params.items()))
            specs.append(f"{name}={alg}" + (f":{kv}" if kv else ""))
        opts = (["--watch", str(self.watch)] if self.watch is not None else []) + (["--stats"] if self.want_stats else [])
        opts += ["--hooklog", str(self.hooklog)] if self.hooklog is not None else []
        # stderr to a file: a refused program's verifier log can exceed a pipe's buffer, and
        # a loader blocked writing it would never answer on stdout.
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([str(binary()), "load", *opts, *specs], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True)
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        (RUN_DIR / str(self.proc.pid)).write_text(" ".join(self.instances))
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self._forget()
            self.err.seek(0)
            lines = self.err.read().strip().splitlines()
            self.err.close()
            # The loader's own message is last; the verifier's log before it can be long.
            err = "\n".join(lines[-20:])
            raise RuntimeError(f"cubiclab-bpf could not register {', '.join(self.instances)}: {err}")
        return self

    def _forget(self) -> None:
        if self.proc is not None:
            (RUN_DIR / str(self.proc.pid)).unlink(missing_ok=True)

    def __exit__(self, *exc) -> None:
        if self.proc is None:
            return
        try:
            # Closing stdin ends the loader; communicate closes it and collects the output.
            out = self.proc.communicate(timeout=10)[0]
            for line in out.splitlines():
                if line.startswith('{"stats"'):
                    self.stats = json.loads(line)["stats"]
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            self._forget()
            self.err.close()
        left = [n for n in self.instances if n in registered()]
        if left:
            raise RuntimeError(f"BPF congestion controls still registered after the run: {', '.join(left)}")


def read_watch(path: Path):
    """The witness file of :class:`Registered` as a DataFrame (its CSV columns) and the number
    of records it lost (ring buffer full)."""
    import pandas as pd

    lines = Path(path).read_text().splitlines()
    lost = next((int(x.split()[2]) for x in lines if x.startswith("# lost ")), None)
    if lost is None:
        raise RuntimeError(f"{path}: the BPF witness did not finish (no '# lost' trailer)")
    from io import StringIO

    return pd.read_csv(StringIO("\n".join(x for x in lines if not x.startswith("#")))), lost


def _runs_cubiclab(pid: int) -> bool:
    """Whether process `pid` imports cubiclab (a run that started a loader): its memory maps
    name the package's extension."""
    try:
        return "cubiclab" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def cleanup() -> dict:
    """End loaders left by killed runs (listed in RUN_DIR) and report what is still
    registered under this lab's prefix (nothing, once they are gone). The loader of a live
    run is left alone: ending it would pull the congestion control from under a running
    experiment."""
    ended = []
    if RUN_DIR.exists():
        for f in RUN_DIR.iterdir():
            pid = int(f.name) if f.name.isdigit() else 0
            try:
                names = f.read_text().split()
                alive = pid > 0 and Path(f"/proc/{pid}/comm").read_text().strip() == "cubiclab-bpf"
                # A live run is the loader's parent; an orphan was re-parented to a reaper.
                ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) if alive else 0
            except (OSError, ValueError, IndexError):  # the loader ended meanwhile
                alive, ppid, names = False, 0, []
            if alive and ppid > 1 and _runs_cubiclab(ppid):
                continue
            if alive:
                os.kill(pid, signal.SIGTERM)
                for _ in range(100):
                    if not Path(f"/proc/{pid}").exists():
                        break
                    time.sleep(0.05)
                ended.append({"pid": pid, "names": names})
            f.unlink(missing_ok=True)
    return {"loaders_ended": ended, "still_registered": [n for n in registered() if n.startswith(PREFIX)]}
