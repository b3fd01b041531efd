"""Snapshot tests of whole runs: a change in what the simulator computes shows up here as a
diff that someone must accept (regenerate with CUBICLAB_UPDATE_SNAPSHOTS=1 and commit the
file, saying in the commit which behaviour changed and why).

Each snapshot holds the run's summary numbers and a digest of every table, so a refactor
that must not change behaviour (issue 11) is checked bit for bit."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario
from cubiclab.scenario import WebGroup
from cubiclab.scenario import Record  # noqa: E402

SNAPSHOTS = Path(__file__).parent / "snapshots" / "runs.json"

# Summary keys that depend on the machine, not on the simulation.
_WALL_KEYS = {"wall_s", "events_per_s", "packets_per_s"}


def _runs() -> dict[str, Scenario]:
    return {
        # seed 000 Fig. 6 in small: CUBIC against SACK, drop-tail, cwnd changes recorded.
        "droptail_cubic_reno": Scenario(
            duration="8s", seed=3, bottleneck=Bottleneck(rate="50Mbps", buffer="100%BDP"),
            flows=[FlowGroup("cubic", count=2, rtt="40ms", start_spacing="1s"),
                   FlowGroup("reno", rtt="80ms", name="sack")],
            record=Record(cwnd="changes", rtt_samples=True)),
        # RED with random loss on both directions and NewReno recovery.
        "red_loss_newreno": Scenario(
            duration="6s", seed=5,
            bottleneck=Bottleneck(rate="20Mbps", buffer="200%BDP", queue="red",
                                  red={"min_th": 10, "max_th": 40},
                                  loss={"model": "bernoulli", "p": 0.001},
                                  reverse_loss={"model": "gilbert", "p_gb": 0.01, "p_bg": 0.3,
                                                "loss_good": 0.0, "loss_bad": 0.2}),
            flows=[FlowGroup("bic", rtt="60ms"), FlowGroup("htcp", rtt="60ms", recovery="newreno")]),
        # CoDel with web sessions both ways and Poisson loss.
        "codel_web": Scenario(
            duration="6s", seed=7,
            bottleneck=Bottleneck(rate="30Mbps", buffer="300packets", queue="codel",
                                  loss={"model": "poisson", "rate": 2.0}),
            flows=[FlowGroup("cubic-2.0", rtt="50ms"), FlowGroup("highspeed", rtt="50ms", bytes="2MB")],
            web=[WebGroup(sessions=10, direction="both", think="1s", rtt="exp:40ms")]),
    }


def _digest(res) -> dict:
    out = {k: v for k, v in res.summary.items() if k not in _WALL_KEYS}
    for name, df in res.tables().items():
        # Columns in name order: the digest is of the values, not of the layout.
        df = df[sorted(df.columns)]
        out[f"table:{name}"] = hashlib.sha256(df.to_csv(index=False).encode()).hexdigest()[:16]
    return json.loads(json.dumps(out))


def test_whole_runs_match_their_snapshots():
    got = {name: _digest(cubiclab.simulate(sc)) for name, sc in _runs().items()}
    if os.environ.get("CUBICLAB_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    want = json.loads(SNAPSHOTS.read_text())
    for name in got:
        assert got[name] == want[name], f"run '{name}' differs from its snapshot"
