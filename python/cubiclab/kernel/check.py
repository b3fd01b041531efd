"""Record a real flow per algorithm, replay it, and report how well cubiclab matches.

Used by ``tests/test_kernel_cubic.py`` and ``scripts/kernel_cubic_check.py``.
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from cubiclab import _core
from cubiclab._core import TESTBED_HZ
from cubiclab.kernel.capture import Capture, run_flow
from cubiclab.kernel.compare import Comparison, compare
from cubiclab.kernel.convert import Converted, convert, inflight_share

#: How each algorithm is replayed. Reno's slow start is deterministic, so it is compared
#: from the first ACK. CUBIC is compared from where the kernel leaves slow start, seeded
#: with the kernel's cwnd and ssthresh there: HyStart decides on per-ACK RTT samples (the
#: tracepoint has only the smoothed RTT; the replay gets the delay_min bound on every ACK)
#: and on an ACK-train threshold of (delay_min + hystart_ack_delay) / 2, where
#: hystart_ack_delay depends on sk_pacing_rate, which the replay driver leaves at 0. The
#: replay from the first ACK did reproduce the kernel's HyStart exit in the runs tried,
#: but only because ACKs ~600 us apart put the first ACK past both thresholds at the same
#: place: not a check of HyStart. After the seed, everything is compared.
#: The BPF ports (run as cubiclab's own code inside the kernel) are compared from the first
#: ACK: none has Linux's HyStart, and their slow start is deterministic (HyStart++ of
#: ``cubic-rfc9438:hystart=hystart++`` decides on the RTT samples the port logged). Their jiffies are the
#: kernel's, so the replay runs at the kernel's HZ (measured by :func:`measure_hz_and_phase`).
SETUPS = {
    "reno": dict(seed="start", params={}),
    "cubic": dict(seed="ss_exit", params={"hz": TESTBED_HZ}),
}
BPF_SETUP = dict(seed="start", params={})
#: Parameters a port is registered and replayed with: cdg's port runs only without backoffs
#: (backoff_factor 0: a backoff calls tcp_enter_cwr, which BPF cannot call; ports.rs), so
#: the kernel checks the rest of CDG (gradients, HyStart, shadow window, delayed-ACK filter).
PORT_PARAMS = {"cdg": {"backoff_factor": 0}}
#: Ports whose init keeps what the handshake's pkts_acked saw (the SYN-ACK's tcp_ack runs it
#: before tcp_finish_connect runs init, for every port): their replay feeds it too. For the
#: others init clears it, or their checks predate the option.
HANDSHAKE_ACKED = ("cdg",)


def port_label(label: str) -> tuple[str, dict]:
    """A BPF port as the check names it: ``algorithm`` or ``algorithm:key=value,...`` (the
    loader's syntax, e.g. ``cubic-rfc9438:hystart=hystart++``), as (algorithm, params)."""
    name, _, rest = label.partition(":")
    params = dict(kv.split("=", 1) for kv in rest.split(",")) if rest else {}
    return name, params


@dataclass
class Result:
    algorithm: str
    capture: Capture
    converted: Converted
    comparison: Comparison
    seconds: float

    @property
    def losses(self) -> int:
        return int(self.converted.truth.entry.sum() + (self.converted.truth.timer != "").sum())

    def report(self) -> str:
        c, v, m = self.capture, self.converted, self.comparison
        lines = [
            f"== {self.algorithm}: kernel vs cubiclab replay ==",
            f"flow: {c.rate} tbf, queue {c.limit_bytes} B, MSS {c.mss}, {self.seconds:.1f} s; "
            f"{(c.records.event == 'probe').sum()} ACKs traced, {len(c.acks) if c.acks is not None else 0} captured "
            f"({c.ack_drops} dropped by the capture)",
            f"bottleneck: {_qdisc_summary(c.qdisc)}",
            f"loss events: {self.losses}; seeded at ACK {v.seed_index} ({v.seed_reason}) "
            f"with cwnd {v.initial_cwnd}, ssthresh {v.initial_ssthresh}",
            f"delay_min <= {v.delay_min_bound_us} us (from srtt steps in slow start); "
            f"usecs_to_jiffies(delay_min) {'is certainly 1' if v.delay_min_certain else 'is NOT certain'}",
            f"sender had a full window in flight after {inflight_share(v.truth):.1%} of compared ACKs",
            f"MATCH: {m.matched} / {m.compared} ACKs in Open = {m.share:.4%} (cwnd and ssthresh after every ACK)",
        ]
        for note in v.notes:
            lines.append(f"note: {note}")
        if m.compared - m.matched:
            lines.append("mismatches by cause: " + ", ".join(f"{k} {n}" for k, n in sorted(m.causes().items())))
            roots = m.mismatches()
            roots = roots[roots.cause != "inherited"]
            cols = ["probe", "time_us", "state_cc", "acked", "una_advance", "sack", "cwnd_before", "cwnd_after",
                    "replay_cwnd", "ssthresh_after", "replay_ssthresh", "cause"]
            lines.append("first ACK of each divergent run:")
            lines.append(roots[cols].head(40).to_string(index=False))
        return "\n".join(lines)


def _qdisc_summary(text: str) -> str:
    m = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", text or "")
    return f"{m.group(2)} packets sent, {m.group(3)} dropped" if m else "no qdisc statistics"


def run_check(
    algorithms=("reno", "cubic"),
    seconds: float = 5.0,
    rate: str = "20mbit",
    limit_bytes: int = 120_000,
    setups: dict | None = None,
) -> dict[str, Result]:
    """Trace one flow per algorithm and compare each with its replay."""
    from cubiclab.testbed import bpf

    setups = {**SETUPS, **(setups or {})}
    out = {}
    kernel_hz = None
    for alg in algorithms:
        seen, replayed, port = None, alg, None
        if alg in setups:
            s = setups[alg]
            cap = run_flow(alg, seconds=seconds, rate=rate, limit_bytes=limit_bytes)
        else:
            # A BPF port: registered for this flow only (with the label's parameters),
            # replayed at the kernel's HZ through the library algorithm that computes what
            # the port computes (the algorithm itself, or its fixed-point twin).
            port, given = port_label(alg)
            replayed = bpf.ports()[port]["exact_twin"]
            kernel_hz = kernel_hz or measure_hz_and_phase()[0]
            port_params = {**PORT_PARAMS.get(port, {}), **given}
            s = dict(BPF_SETUP, params={**BPF_SETUP["params"], **port_params, "hz": kernel_hz})
            if not any(p.name == "hz" for p in _specs(replayed)):
                s["params"].pop("hz")
            name = bpf.instance_name(0, port)
            # An algorithm that needs ECN negotiates it only with a receiver that runs it too.
            receiver = name if _core.algorithm_facts(port)["needs_ecn"] else None
            with tempfile.TemporaryDirectory(prefix="cubiclab-watch-") as d:
                witness = Path(d) / "seen.csv"
                with bpf.Registered({name: (port, port_params)}, watch=witness):
                    cap = run_flow(name, seconds=seconds, rate=rate, limit_bytes=limit_bytes, receiver_cc=receiver)
                seen, lost = bpf.read_watch(witness)
            if lost:
                raise RuntimeError(f"{alg}: the BPF witness lost {lost} records (ring buffer full); the check "
                                   "cannot tell which ACKs ran no BPF")
        conv = convert(cap.records, cap.mss, cap.t_stop_us, cap.acks, seed=s["seed"], bpf_seen=seen)
        hz = int(s["params"].get("hz", kernel_hz or TESTBED_HZ))
        cmp = compare(conv, replayed, s["params"], hz=hz, handshake_acked=port in HANDSHAKE_ACKED)
        out[alg] = Result(alg, cap, conv, cmp, seconds)
    return out


def _specs(algorithm: str):
    from cubiclab.algorithms import algorithms

    return next(a.params for a in algorithms() if a.name == algorithm)


def measure_hz_and_phase(samples: float = 0.3) -> tuple[int, int]:
    """Estimate the kernel's HZ, and how late jiffies tick relative to multiples of the
    tick period on CLOCK_MONOTONIC, from ``/proc/timer_list`` (``now at <ns>`` is printed
    before ``jiffies: <n>``).

    Returns (hz, lag_us): the largest ``CLOCK_MONOTONIC mod tick`` (signed, in us) at which
    the old jiffy was still seen. A value at or below 0 means every reading is consistent
    with jiffies ticking exactly at multiples of the tick period."""
    path = Path("/proc/timer_list")

    def read():
        s = path.read_text()
        return int(re.search(r"now at (\d+) nsecs", s).group(1)), int(re.search(r"\njiffies: (\d+)", s).group(1))

    t0, j0 = read()
    time.sleep(samples)
    t1, j1 = read()
    hz = int(round((j1 - j0) / ((t1 - t0) / 1e9) / 50.0) * 50) or 1
    tick = 1_000_000 // hz
    late = []
    prev = read()
    end = time.monotonic() + samples
    while time.monotonic() < end:
        cur = read()
        if cur[1] != prev[1]:
            x = (prev[0] // 1000) % tick
            late.append(x - tick if x > tick // 2 else x)
        prev = cur
    return hz, (max(late) if late else 0)
