"""Topology presets (cubiclab.topology): a parking lot expands into links hop1..hopK, long
flows across all of them and cross groups one hop each; and it runs."""

from __future__ import annotations

import pytest

import cubiclab
from cubiclab import FlowGroup, Link, Scenario
from cubiclab.scenario import WebGroup
from cubiclab.topology import parking_lot

TOML = """
duration = "6s"
[topology]
preset = "parking-lot"
hops = 3
link = { rate = "20Mbps", buffer = "50packets" }
hop_links = [{}, { rate = "10Mbps" }, { queue = "red" }]
[[topology.cross]]
algorithm = "reno"
rtt = "20ms"
[[topology.cross]]
name = "side"
algorithm = "cubic"
rtt = "30ms"
on = [2]
[[topology.cross_web]]
sessions = 2
think = "1s"
rtt = "20ms"
on = [1, 3]
[[flows]]
algorithm = "cubic"
rtt = "60ms"
"""


def test_a_parking_lot_expands_into_links_and_routes(tmp_path):
    p = tmp_path / "lot.toml"
    p.write_text(TOML)
    sc = Scenario.load(p)
    assert sc.bottleneck == cubiclab.Bottleneck()
    assert [(x.name, x.rate, x.queue, x.buffer) for x in sc.links] == [
        ("hop1", "20Mbps", "droptail", "50packets"), ("hop2", "10Mbps", "droptail", "50packets"),
        ("hop3", "20Mbps", "red", "50packets")]
    # The long group crosses every hop; "reno" is repeated on each, "side" only on hop 2.
    assert [(g.name, g.route) for g in sc.flows] == [
        (None, ["hop1", "hop2", "hop3"]), ("reno@hop1", ["hop1"]), ("reno@hop2", ["hop2"]),
        ("reno@hop3", ["hop3"]), ("side@hop2", ["hop2"])]
    assert [(g.name, g.route) for g in sc.web] == [("web0@hop1", ["hop1"]), ("web0@hop3", ["hop3"])]


def test_a_parking_lot_runs_with_each_flow_on_its_hops():
    sc = parking_lot(2, link=Link(rate="10Mbps", buffer="50packets"),
                     long=[FlowGroup("cubic", rtt="40ms", name="long")],
                     cross=[FlowGroup("reno", rtt="20ms")], duration="8s")
    res = cubiclab.simulate(sc)
    t = res.totals.set_index("group")
    assert dict(t["route"]) == {"long": "hop1>hop2", "reno@hop1": "hop1", "reno@hop2": "hop2"}
    lt = res.link_totals
    assert list(zip(lt["name"], lt["direction"])) == [
        ("hop1", "forward"), ("hop1", "reverse"), ("hop2", "forward"), ("hop2", "reverse")]
    # Each hop carries the long flow and its own cross flow, and no more than its rate
    # allows: 10 Mbit/s x 8 s = 10 MB of 1500-byte packets, 1448 payload bytes each
    # (9.65 MB of payload); both flows on a hop together deliver at most that.
    cap = 10e6 * 8 / 8 * 1448 / 1500
    for hop in ("hop1", "hop2"):
        assert t.loc["long", "delivered_bytes"] + t.loc[f"reno@{hop}", "delivered_bytes"] <= cap
    fwd = lt[lt["direction"] == "forward"]
    assert (fwd["tx_bytes"] <= 10e6 * 8 / 8).all() and (fwd["tx_bytes"] > 0.5 * 10e6).all()


@pytest.mark.parametrize("change, message", [
    ({"preset": "ring"}, "topology.preset is 'ring'; allowed: 'dumbbell', 'parking-lot'"),
    ({"hops": 0}, "topology.hops is 0; allowed: an integer in [1, 16]"),
    ({"hops": 17}, "topology.hops is 17; allowed: an integer in [1, 16]"),
    ({"hop_links": [{}]}, "topology.hop_links must be a list of 2 tables"),
    ({"link": {"name": "x"}}, "topology.link.name: the preset names its links"),
    ({"cross": [{"on": [3]}]}, "topology.cross[0].on is [3]; allowed: a list of distinct hops in [1, 2]"),
    ({"cross": [{"route": ["hop1"]}]}, "topology.cross[0].route: a cross group crosses one hop"),
    ({"ring": 1}, "topology: unknown key 'ring' for preset 'parking-lot'"),
])
def test_bad_presets_are_refused_naming_the_key(change, message):
    topo = {"preset": "parking-lot", "hops": 2, **change}
    with pytest.raises(ValueError) as e:
        Scenario.from_dict({"topology": topo, "flows": [{}]})
    assert message in str(e.value)


def test_a_preset_and_a_path_are_not_both_given():
    with pytest.raises(ValueError, match=r"bottleneck: a scenario gives its path one way"):
        Scenario.from_dict({"topology": {"preset": "dumbbell"}, "bottleneck": {}, "flows": [{}]})


def test_the_dumbbell_preset_is_the_bottleneck():
    a = Scenario.from_dict({"topology": {"preset": "dumbbell", "link": {"rate": "20Mbps"}},
                            "flows": [{"algorithm": "reno"}], "duration": "2s"})
    b = Scenario.from_dict({"bottleneck": {"rate": "20Mbps"}, "flows": [{"algorithm": "reno"}], "duration": "2s"})
    assert a.compile() == b.compile()


def test_web_cross_groups_take_their_hop():
    sc = parking_lot(2, cross_web=[WebGroup(sessions=2, think="1s", rtt="20ms")],
                     long=[FlowGroup("cubic", rtt="40ms")], duration="2s")
    assert [(g.name, g.route) for g in sc.web] == [("web0@hop1", ["hop1"]), ("web0@hop2", ["hop2"])]
