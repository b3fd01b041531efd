"""The settings a paper leaves unstated (experiments/unstated.py) and the reruns that vary
them (experiments/sensitivity.py)."""

import dataclasses
import json
from types import SimpleNamespace

import pytest

from cubiclab.experiments import CATALOG
from cubiclab.experiments.base import TINY, load_scenario
from cubiclab.experiments.claims import FAILS, HOLDS, INCONCLUSIVE
from cubiclab.experiments.sensitivity import choices, compare, sensitivity, summary
from cubiclab.experiments.unstated import (background, buffer, delay_reading, object_sizes, rate_of, rtt_of, start_gap,
                                           web_direction)


def test_each_setting_scales_its_own_number_in_its_own_unit():
    sc = load_scenario("s000_fig4")  # 2 flows 20 s apart, 246 ms, 100%BDP, web load 0.15 of mean 10 packets
    assert start_gap("").apply(sc, 2.0).flows[0].start_spacing == "40s"
    assert background("").apply(sc, 2.0).web[0].load == pytest.approx(0.30)
    assert object_sizes("").apply(sc, 0.1).web[0].mean_size == "1packets"  # 10 x 0.1
    assert object_sizes("").apply(sc, 10.0).web[0].mean_size == "100packets"
    assert delay_reading("").apply(sc, 2.0).flows[0].rtt == "492ms"  # 246 ms read as one way
    assert buffer("").apply(sc, 0.5).bottleneck.buffer == "50%BDP"  # a BDP-relative buffer stays relative
    packets = dataclasses.replace(sc.bottleneck, buffer="10packets")
    assert buffer("").apply(dataclasses.replace(sc, bottleneck=packets), 0.5).bottleneck.buffer == "5packets"
    assert web_direction("").apply(sc, "reverse").web[0].direction == "reverse"
    # the scenario itself is untouched
    assert (sc.flows[0].start_spacing, sc.web[0].load, sc.bottleneck.buffer) == ("20s", 0.15, "100%BDP")
    assert sc.web[0].direction == "both"


def test_rtt_of_changes_only_the_flows_at_that_rtt():
    sc = load_scenario("s002_two_flows")
    sc.flows[0].rtt, sc.flows[1].rtt = "200ms", "50ms"
    x = rtt_of("50ms", "").apply(sc, 2.0)
    assert [g.rtt for g in x.flows] == ["200ms", "100ms"]


def test_rate_of_changes_only_a_link_at_that_rate():
    sc = load_scenario("s003_cubic_tahoe")  # the blog's 2.64 Mbps link: a stated rate stays
    assert rate_of("50Mbps", "").apply(sc, 2.0).bottleneck.rate == "2.64Mbps"
    sc.bottleneck.rate = "50Mbps"
    assert rate_of("50Mbps", "").apply(sc, 0.5).bottleneck.rate == "25Mbps"
    assert sc.bottleneck.rate == "50Mbps"


def test_a_choice_changes_every_run_of_the_entry_and_nothing_else():
    e = CATALOG["s002-rtt-unfairness"]
    planned = e.runs(TINY)
    varied = e.runs(dataclasses.replace(TINY, choice=("rtt 50ms", 0.5)))
    assert [r.tags for r in varied] == [r.tags for r in planned]
    for p, v in zip(planned, varied):
        assert sorted(g.rtt for g in p.scenario.flows) == ["200ms", "50ms"]
        assert sorted(g.rtt for g in v.scenario.flows) == ["200ms", "25ms"]


def test_a_setting_the_entry_states_is_refused_naming_what_it_leaves_unstated():
    with pytest.raises(ValueError, match=r"'s002-rtt-unfairness' leaves no 'start' unstated; its unstated settings: "
                                         r"rtt 50ms"):
        CATALOG["s002-rtt-unfairness"].runs(dataclasses.replace(TINY, choice=("start", 2.0)))


def test_every_declared_setting_builds_valid_scenarios():
    # Each value of each entry's unstated settings compiles every run (a bad unit or a value
    # the validator refuses would stop the sensitivity reruns).
    n = 0
    for e in CATALOG.values():
        for u in e.unstated:
            for value in u.values:
                for r in e.runs(dataclasses.replace(TINY, choice=(u.key, value))):
                    assert r.key
                n += 1
    assert n >= 20


def _outcome(name, verdicts):
    # claims accepted in [0, 3]: a value of 4 lies outside
    accept = SimpleNamespace(lo=0.0, hi=3.0)
    return SimpleNamespace(name=name, verdicts=[
        SimpleNamespace(spec=SimpleNamespace(id=c, kind="paper claim", accept=accept), verdict=v, ours=o, mean=o, n=1,
                        inside=accept.lo <= o <= accept.hi)  # as claims.Verdict.inside
        for c, v, o in verdicts])


def test_a_claim_is_robust_only_when_no_value_changes_its_verdict():
    planned = [_outcome("e", [("a", HOLDS, 1.0), ("b", HOLDS, 2.0), ("c", FAILS, 3.0)]), _outcome("m", [("d", HOLDS, 0)])]
    varied = {"start=0.5x": ("start", [_outcome("e", [("a", HOLDS, 1.1), ("b", INCONCLUSIVE, 2.5), ("c", FAILS, 3)])]),
              "start=2x": ("start", [_outcome("e", [("a", HOLDS, 0.9), ("b", FAILS, 4.0), ("c", FAILS, 3)])]),
              "buffer=2x": ("buffer", [_outcome("e", [("a", HOLDS, 1.0), ("b", HOLDS, 2.0), ("c", HOLDS, 1)])])}
    rows = {r["claim"]: r for r in compare(planned, varied)}
    assert [summary(rows[c]) for c in "abcd"] == ["robust", "depends on start", "depends on buffer",
                                                  "no unstated setting"]
    assert rows["b"]["varied"]["start=2x"] == {"verdict": FAILS, "ours": 4.0, "inside": False}


def test_an_indicative_value_that_crosses_its_tolerance_depends_on_the_setting():
    # Quick mode's verdicts are all "indicative": a value moving from 2 (inside [0, 3]) to 4
    # (outside) is what changes; one moving from 1 to 2.5 (inside both) is robust.
    planned = [_outcome("e", [("a", "indicative", 2.0), ("b", "indicative", 1.0)])]
    varied = {"start=2x": ("start", [_outcome("e", [("a", "indicative", 4.0), ("b", "indicative", 2.5)])])}
    rows = {r["claim"]: r for r in compare(planned, varied)}
    assert (summary(rows["a"]), summary(rows["b"])) == ("depends on start", "robust")


def test_choices_group_the_entries_that_share_a_setting():
    got = choices([CATALOG["s000-fig4"], CATALOG["s000-fig8"], CATALOG["s003-cubic-tahoe"]])
    assert got[("start", 2.0)] == ("start=2x", ["s000-fig4", "s000-fig8"])
    assert got[("delay", 2.0)] == ("delay=2x", ["s003-cubic-tahoe"])


def test_sensitivity_end_to_end_writes_its_tables(tmp_path):
    rows = sensitivity(["s002-rtt-unfairness"], mode="tiny", out=tmp_path, jobs=1, progress=False, log=None)
    doc = json.loads((tmp_path / "sensitivity.json").read_text())
    assert doc == rows and [r["claim"] for r in rows] == ["start_dependent"]
    assert set(rows[0]["varied"]) == {"rtt 50ms=0.5x", "rtt 50ms=2x"}
    assert "claims with unstated settings depend on one" in (tmp_path / "sensitivity.md").read_text()
    report = (tmp_path / "report.html").read_text()
    assert "<th>robustness</th>" in report and f"unstated settings: {summary(rows[0])}" in report


def test_the_report_shows_what_the_reruns_said_of_each_claim(tmp_path):
    from cubiclab.report import robustness

    (tmp_path / "sensitivity.json").write_text(json.dumps([
        {"entry": "e", "claim": "a", "varied": {"start=2x": {}}, "robust": False, "depends_on": ["start"]}]))
    (tmp_path / "stability.json").write_text(json.dumps([
        {"entry": "e", "claim": "a", "flips": True, "changes": True, "crosses": True},
        {"entry": "e", "claim": "b", "flips": False, "changes": False, "crosses": False}]))
    assert robustness(tmp_path) == {
        ("e", "a"): "unstated settings: depends on start; 2x duration and other seeds: flips; crosses its tolerance",
        ("e", "b"): "2x duration and other seeds: stable"}
    assert robustness(tmp_path / "nothing-here") == {}
