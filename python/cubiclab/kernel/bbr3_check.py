"""The bbr3 BPF port against the library's bbr3, hook call by hook call, on the live kernel.

One bulk flow runs through the tbf path of :mod:`cubiclab.kernel.capture` with the port
registered for it and its hook log on (``cubiclab-bpf load --hooklog``: every hook call's
inputs, the kernel's rate sample included, and what the port left). ``cubiclab-bpf
replay-bbr3`` replays each call through the library's bbr3 on the same inputs, at the
kernel's HZ, and compares what each leaves (crates/cubiclab-bpf/src/bbr3_replay.rs).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cubiclab.kernel.capture import Capture, run_flow

#: bbr3.rs's ``enum Mode``, as the hook log numbers it.
MODES = {0: "STARTUP", 1: "DRAIN", 2: "PROBE_BW", 3: "PROBE_RTT"}
#: bbr3.rs's ``enum Phase`` (cycle_idx).
PHASES = {0: "UP", 1: "DOWN", 2: "CRUISE", 3: "REFILL"}


@dataclass
class Result:
    capture: Capture
    #: One entry per socket that ran the port (`cubiclab-bpf replay-bbr3`'s JSON lines).
    flows: list[dict]
    #: Hook records the ring buffer had no room for (then the replay is not exact).
    lost: int

    def acks(self, flow: dict) -> tuple[int, int]:
        """(matched, total) cong_control calls, the per-ACK hook, of `flow`."""
        c = flow["hooks"].get("cong_control", {"calls": 0, "matched": 0})
        return c["matched"], c["calls"]

    def report(self) -> str:
        lines = [(f"== bbr3 BPF port vs library bbr3, per hook call ({len(self.flows)} socket(s); "
                  f"{self.lost} records lost) ==")]
        for f in self.flows:
            m, n = self.acks(f)
            lines.append(f"socket {f['socket']}: ACKs (cong_control) {m}/{n} matched; "
                         + ", ".join(f"{k} {v['matched']}/{v['calls']}" for k, v in f["hooks"].items() if k != "cong_control"))
            lines.append("  modes per ACK: " + ", ".join(f"{MODES.get(int(k), k)} {v}" for k, v in f["modes"].items())
                         + "; PROBE_BW phases: " + ", ".join(f"{PHASES.get(int(k), k)} {v}" for k, v in f["phases"].items())
                         + f"; inflight_hi cut on {f['inflight_hi_cuts']} ACKs"
                         + f"; v3 sample fields from the history on {f['tx_found']} ACKs")
            if f["first_mismatch"]:
                lines.append(f"  first difference: {f['first_mismatch']}")
        return "\n".join(lines)


def run_check(seconds: float = 5.0, rate: str = "20mbit", limit_bytes: int = 120_000,
              params: dict | None = None, keep: Path | None = None) -> Result:
    """One flow and its replay; `keep`: a folder for the hook log (else a temporary one)."""
    from cubiclab.kernel.check import measure_hz_and_phase
    from cubiclab.testbed import bpf

    params = dict(params or {})
    hz = measure_hz_and_phase()[0]
    name = bpf.instance_name(0, "bbr3")
    with tempfile.TemporaryDirectory(prefix="cubiclab-hooklog-") as tmp:
        d = keep or tmp
        with bpf.Registered({name: ("bbr3", params)}, hooklog=Path(d)):
            cap = run_flow(name, seconds=seconds, rate=rate, limit_bytes=limit_bytes)
        lost = int((Path(d) / f"{name}.lost").read_text())
        kv = [f"{k}={v}" for k, v in {**params, "hz": hz}.items()]
        out = subprocess.run([str(bpf.binary()), "replay-bbr3", str(Path(d) / f"{name}.bin"), *kv],
                             capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"cubiclab-bpf replay-bbr3: {out.stderr.strip()}")
    return Result(cap, [json.loads(line) for line in out.stdout.splitlines() if line.strip()], lost)
