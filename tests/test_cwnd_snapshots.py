"""Snapshot tests of whole cwnd traces: every change of cwnd and ssthresh of a few short
runs, checked in as CSV under tests/snapshots/cwnd/. Any change in the sender's or the
receiver's behaviour (recovery, PRR, timeouts, ACK policy, the algorithms) shows up as a
diff, printed from its first differing line, that someone must accept: regenerate with
CUBICLAB_UPDATE_SNAPSHOTS=1 and say in the commit which behaviour changed and why."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario
from cubiclab.scenario import Record

DIR = Path(__file__).parent / "snapshots" / "cwnd"


def _runs() -> dict[str, Scenario]:
    rec = Record(cwnd="changes", interval="1s")
    return {
        # Slow start, HyStart, recovery with PRR, CUBIC's growth: one flow, one BDP.
        "cubic_10M_100ms": Scenario(duration="6s", seed=1, bottleneck=Bottleneck(rate="10Mbps", buffer="100%BDP"),
                                    flows=[FlowGroup("cubic", rtt="100ms")], record=rec),
        # CUBIC against Reno through a shallow buffer: losses every few rounds.
        "cubic_reno_20M_40ms_shallow": Scenario(
            duration="4s", seed=2, bottleneck=Bottleneck(rate="20Mbps", buffer="20%BDP"),
            flows=[FlowGroup("cubic", rtt="40ms"), FlowGroup("reno", rtt="40ms")], record=rec),
        # Twelve flows into a 3-packet buffer: windows of a few segments, tail loss probes,
        # RACK's reorder timer and timeouts (two in this run; eight flows have none since
        # the probes), Loss state, backoff.
        "timeouts_12x_10M_20ms": Scenario(
            duration="3s", seed=3, bottleneck=Bottleneck(rate="10Mbps", buffer="3packets"),
            flows=[FlowGroup("cubic", count=12, rtt="20ms", start_spacing="0.2s")], record=rec),
    }


def _trace(res) -> str:
    c = res.cwnd
    lines = ["t_ns,flow,cwnd,ssthresh"]
    for t, f, w, s in zip(c.t, c.flow, c.cwnd, c.ssthresh):
        lines.append(f"{round(t * 1e9)},{f},{w},{'' if s != s else int(s)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(_runs()))
def test_cwnd_trace_matches_its_snapshot(name):
    got = _trace(cubiclab.simulate(_runs()[name]))
    path = DIR / f"{name}.csv"
    if os.environ.get("CUBICLAB_UPDATE_SNAPSHOTS") == "1":
        DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
    want = path.read_text()
    if got != want:
        diff = list(difflib.unified_diff(want.splitlines(), got.splitlines(), "snapshot", "now", n=2, lineterm=""))
        pytest.fail(f"cwnd trace of '{name}' differs from {path.name} ({len(diff)} diff lines):\n"
                    + "\n".join(diff[:40]))
