"""Links and routes from Python and TOML: one link written as ``links`` runs as the
``bottleneck`` shorthand does, bit for bit; a route of two links loads both; bad routes are
refused naming the group and the link."""

from __future__ import annotations

import pandas as pd
import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Link, Scenario
from cubiclab.scenario import WebGroup


def _shorthand() -> Scenario:
    return Scenario(duration="3s", seed=4, bottleneck=Bottleneck(rate="20Mbps", buffer="100%BDP", queue="red"),
                    flows=[FlowGroup("cubic", rtt="40ms"), FlowGroup("reno", rtt="60ms")],
                    web=[WebGroup(sessions=4, direction="both", think="500ms", rtt="exp:40ms")])


def test_one_link_in_links_runs_as_the_bottleneck():
    a = cubiclab.simulate(_shorthand())
    sc = _shorthand()
    sc.links = [Link(name="edge", rate="20Mbps", buffer="100%BDP", queue="red")]
    sc.bottleneck = Bottleneck()
    for g in [*sc.flows, *sc.web]:
        g.route = ["edge"]
    b = cubiclab.simulate(sc)
    for name, df in a.tables().items():
        other = b.tables()[name]
        # The link's name, and each flow's route by it, are all that differ.
        named = {"link_totals": "name", "totals": "route"}.get(name)
        if named:
            assert list(df[named]) == ["bottleneck"] * 2 and list(other[named]) == ["edge"] * 2
            df, other = df.drop(columns=named), other.drop(columns=named)
        pd.testing.assert_frame_equal(df, other, obj=name)
    wall = {"wall_s", "events_per_s", "packets_per_s"}
    assert {k: v for k, v in a.summary.items() if k not in wall} == {k: v for k, v in b.summary.items() if k not in wall}


def test_a_two_link_route_from_toml(tmp_path):
    path = tmp_path / "two.toml"
    path.write_text("""
duration = "4s"
[[links]]
name = "access"
rate = "40Mbps"
delay = "5ms"
[[links]]
name = "core"
rate = "10Mbps"
delay = "10ms"
[[flows]]
algorithm = "cubic"
rtt = "40ms"
route = ["access", "core"]
[[flows]]
algorithm = "reno"
rtt = "40ms"
route = ["core"]
""")
    res = cubiclab.simulate(Scenario.load(path))
    t = res.link_totals.set_index(["name", "direction"])
    # The core link (10 Mbit/s, both flows) is the one that fills: over 4 s it carries at
    # most 10e6 x 4 / 8 = 5 MB, and the access link only the CUBIC flow's share of that.
    core = t.loc[("core", "forward")]
    assert core.capacity_bytes == 10_000_000 * 4 // 8
    assert 0 < t.loc[("access", "forward")].tx_bytes < core.tx_bytes <= core.capacity_bytes
    # Samples: one row per link per interval (40 intervals of 100 ms).
    assert list(res.link.groupby("link").size()) == [40, 40]


@pytest.mark.parametrize("edit, message", [
    (lambda sc: setattr(sc.flows[0], "route", ["access", "nowhere"]),
     'flows[0].route[1] is "nowhere", not a link; allowed: "access", "core"'),
    (lambda sc: setattr(sc.flows[0], "route", None),
     "flows[0].route is missing; a path of 2 links needs each group's route"),
    (lambda sc: setattr(sc, "bottleneck", Bottleneck(rate="1Gbps")),
     "bottleneck: a scenario gives its path either as bottleneck (one link) or as links, not both"),
    (lambda sc: setattr(sc.links[1], "name", None), "links[1].name is missing"),
])
def test_bad_paths_are_refused_naming_the_key(edit, message):
    sc = Scenario(duration="1s", links=[Link(name="access", rate="40Mbps"), Link(name="core", rate="10Mbps")],
                  flows=[FlowGroup("cubic", rtt="40ms", route=["access", "core"])])
    sc.validate()
    edit(sc)
    with pytest.raises(ValueError) as e:
        sc.validate()
    assert str(e.value).startswith(message)
