"""The emulator's path of several links: what `_core.emulator_path` writes for it and how the
testbed's flow lines line up with its routes. No privileges needed."""

from __future__ import annotations

import json

from cubiclab import FlowGroup, Link, Scenario, _core
from cubiclab.testbed import run as tbrun


def parking_lot() -> Scenario:
    # docs/tutorials/several-links.md: a long flow across two 5 ms links, a cross flow on each.
    return Scenario(
        name="parking-lot", duration="5s", seed=3,
        links=[Link(name="left", rate="20Mbps", delay="5ms"), Link(name="right", rate="10Mbps", delay="5ms")],
        flows=[FlowGroup("cubic", rtt="60ms", route=["left", "right"], name="long"),
               FlowGroup("reno", rtt="60ms", route=["left"], name="cross-left"),
               FlowGroup("reno", rtt="60ms", route=["right"], name="cross-right")],
    )


def lines(text: str, key: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(key + " ")]


def test_each_link_and_route_is_written_with_the_simulators_streams_and_delays():
    text = _core.emulator_path(parking_lot().to_json())
    # Link 0 as a path of one link writes it; link 1 with streams (1 << 16) | dir.
    assert json.loads(lines(text, "fwd_link")[0])["rate_bps"] == 20_000_000
    (fwd, rev) = lines(text, "link")
    assert fwd.startswith("1 fwd 65536 ") and rev.startswith("1 rev 65537 ")
    assert json.loads(fwd.split(" ", 3)[3])["rate_bps"] == 10_000_000
    # The long flow: 60 ms less 10 ms of links each way leaves 40 ms of access delay, half
    # after each way's last link: data 5 ms after left, 5 + 20 ms after right; its ACKs
    # back across right, then left. A cross flow: 60 - 5 - 5 = 50 ms of access, 25 each way.
    assert lines(text, "route") == [
        "0 fwd 0:5000000 1:25000000", "0 rev 1:5000000 0:25000000",
        "1 fwd 0:30000000", "1 rev 0:30000000",
        "2 fwd 1:30000000", "2 rev 1:30000000",
    ]


def test_the_testbeds_flow_lines_are_numbered_as_the_routes():
    # The emulator checks that route I's delays sum to flow line I's: the testbed writes its
    # flow lines in the plan's order, as emulator_path numbers the routes.
    sc = parking_lot()
    p = tbrun.plan(sc)
    routes = [r.split() for r in lines(_core.emulator_path(sc.to_json()), "route")]
    for i, f in enumerate(p.flows):
        for way, delay in (("fwd", f["fwd_delay_ns"]), ("rev", f["rev_delay_ns"])):
            (hops,) = [r[2:] for r in routes if r[:2] == [str(i), way]]
            assert sum(int(h.split(":")[1]) for h in hops) == delay


def test_a_path_of_one_link_writes_no_routes():
    text = _core.emulator_path(Scenario(duration="2s", flows=[FlowGroup("cubic", rtt="40ms")]).to_json())
    assert [line.split()[0] for line in text.splitlines()] == ["fwd_link", "rev_link", "seed"]
