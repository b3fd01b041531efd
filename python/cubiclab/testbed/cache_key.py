"""The cache key of a kernel run: a hash of what the run uses, and nothing else.

A simulator run's key (:func:`cubiclab.sweep.run_key`) hashes the whole compiled extension,
so every rebuild files every cached run anew; that is right for the simulator, whose code
is the extension, but a kernel run uses only a few pieces of it. Its key hashes:

- the compiled scenario (every field in integer units, the seed included), less the
  simulator's model of the hosts' timing (`host`), which stands in for what the kernel
  does by itself;
- what the extension makes of it for the testbed, as values, not as code: the flow plan
  (names, start times with the seed's jitter, per-flow delays), the emulator's path
  configuration (rate, buffers, discipline, random loss and its seed) and the web
  sessions' schedule (object sizes and think times);
- the bytes of the emulator program that runs (which links the path crate), and of the
  BPF loader when a flow runs as a BPF port;
- the testbed's Python code (the run, its traffic processes, the conversion of what they
  record) and the kernel release.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from typing import TYPE_CHECKING

from cubiclab import _core
from cubiclab.scenario import Scenario

if TYPE_CHECKING:
    from cubiclab.testbed.run import Compiled

_PKG = Path(__file__).resolve().parents[1]
#: The Python files a kernel run executes (cubiclab.testbed.run and what it imports for
#: the run itself; compare.py, ensemble.py and cli.py only call it).
RUN_CODE = tuple(_PKG / p for p in (
    "testbed/run.py", "testbed/emu.py", "testbed/net.py", "testbed/results.py", "testbed/bpf.py",
    "endpoints/bulk.py", "endpoints/web.py", "namespaces.py", "kernel/tracing.py", "units.py"))


@lru_cache(maxsize=64)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    # Keyed by modification time and size too, so a file rebuilt in place is read again.
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes."""
    st = os.stat(path)
    return _digest(str(path), st.st_mtime_ns, st.st_size)


def code_fingerprint(uses_bpf: bool) -> dict:
    """What a kernel run executes besides the scenario: emulator, BPF loader (if used),
    the testbed's Python code and the kernel."""
    from cubiclab.testbed import bpf, emu

    program = emu.program()
    # Without a built binary the emulator is the extension's `_core.emulate`: then the
    # extension is what runs, and its bytes are what the key must follow.
    fp = {"emulator": file_digest(program if program else Path(_core.__file__)),
          "testbed": {p.relative_to(_PKG).as_posix(): file_digest(p) for p in RUN_CODE},
          "kernel": os.uname().release}
    if uses_bpf:
        loader = bpf.binary()
        fp["bpf_loader"] = file_digest(loader) if loader else None
    return fp


def kernel_run_key(scenario: Scenario, compiled: Compiled | None = None) -> str:
    """The cache key of `scenario` run on the testbed (see the module's docstring);
    `compiled`: the scenario's :func:`~cubiclab.testbed.run.compile_scenario`, if made."""
    from cubiclab.testbed.run import compile_scenario, kernel_algorithms

    c = compiled or compile_scenario(scenario)
    kernel_ccs = set(kernel_algorithms())
    uses_bpf = any(g.algorithm not in kernel_ccs for g in scenario.flows)
    spec = {k: v for k, v in c.spec.items() if k != "host"}
    made = {"spec": spec, "plan": c.flow_plan, "path": c.path, "web": c.web, "code": code_fingerprint(uses_bpf)}
    return hashlib.sha256(json.dumps(made, sort_keys=True, default=str).encode()).hexdigest()
