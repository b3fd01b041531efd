"""PIE and DualPI2 through the whole simulator: the example scenarios under scenarios/
run with `cubiclab run`, the queues hold the delay near their target with marks for the
ECN flows and drops for the others, and bad settings are refused before the run."""

import json
from pathlib import Path

import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario, cli

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_example_scenarios_run(path, tmp_path, capsys):
    # Every example scenario at the top of scenarios/ runs through the command line (for
    # a few seconds: the run, not the result, is the check here).
    assert cli.main(["run", str(path), "--out", str(tmp_path), "--duration", "3s", "--no-plots", "--quiet",
                     "--json"]) == 0
    assert json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["pie", "dualpi2"])
def test_the_delay_stays_near_the_target_with_marks_for_ecn_and_drops_for_the_others(name):
    # Both aim at 15 ms of queueing delay in a 1000- (10000-) packet buffer that drop-tail
    # would let stand at hundreds of ms. The ECN flow's packets are marked (PIE while its
    # probability is at most 10%, DualPI2's Classic queue with p'^2), the plain flow's
    # dropped.
    sc = Scenario.load(SCENARIOS / f"{name}.toml")
    r = cubiclab.simulate(sc)
    late = r.link[r.link.t > 5]
    delay = (late.queue_bytes * 8 / 20e6).mean()
    assert 0.01 < delay < 0.02, delay
    assert late.utilization.mean() > 0.9
    t = r.totals.set_index("group")
    assert t.loc["ecn", "ce_marks"] > 0 and t.loc["ecn", "drops"] == 0
    assert t.loc["plain", "ce_marks"] == 0 and t.loc["plain", "drops"] > 0


def test_the_ecn_mask_decides_which_queue_takes_dctcps_ect0():
    # DCTCP sends ECT(0). With the default mask (l4s_ect) that is Classic: PI2 holds the
    # queue near its 15 ms target with p'^2 marks. With any_ect it is L4S: the 1 ms step
    # marks it, and the queue stays under a millisecond.
    def delay_s(mask):
        sc = Scenario(name=mask, duration="10s", flows=[FlowGroup("dctcp", rtt="40ms")],
                      bottleneck=Bottleneck(rate="20Mbps", buffer="1000packets", queue="dualpi2",
                                            dualpi2={"ecn_mask": mask}))
        late = cubiclab.simulate(sc).link.query("t > 3")
        return (late.queue_bytes * 8 / 20e6).mean()

    assert 0.01 < delay_s("l4s_ect") < 0.02
    assert delay_s("any_ect") < 0.001


@pytest.mark.parametrize("table, message", [
    ({"pie": {"alpha": 33}}, r"bottleneck\.pie\.alpha is 33; allowed: 0 to 32"),
    ({"pie": {"tupdate": "0ms"}}, r"bottleneck\.pie\.tupdate is 0; it must be > 0"),
    ({"dualpi2": {"alpha": 0.001}}, r"bottleneck\.dualpi2\.alpha is 0\.001; allowed: 1/256 to"),
    ({"dualpi2": {"coupling_factor": 0}}, r"bottleneck\.dualpi2\.coupling_factor is 0; allowed: 1 to 255"),
    ({"dualpi2": {"classic_protection": 101}}, r"bottleneck\.dualpi2\.classic_protection is 101; allowed: 0 to 100"),
    ({"dualpi2": {"drop_early": True}}, r"bottleneck\.dualpi2"),
    ({"dualpi2": {"ecn_mask": "ect1"}}, r"bottleneck\.dualpi2\.ecn_mask: unknown variant `ect1`; allowed: `l4s_ect` or `any_ect`"),
])
def test_bad_settings_are_refused_naming_the_key(table, message):
    queue = next(iter(table))
    with pytest.raises(ValueError, match=message):
        cubiclab.simulate(Scenario(duration="1s", flows=[FlowGroup("reno")],
                                   bottleneck=Bottleneck(queue=queue, **table)))
