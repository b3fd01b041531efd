"""A bottleneck whose rate varies: rate steps and Mahimahi traces (`bottleneck.schedule`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario, _core, traces
from cubiclab.plots import throughput_series

PACKET_BITS = 1500 * 8


@pytest.mark.parametrize("name", list(traces.TRACES))
def test_shipped_traces_are_their_recipes(name):
    shipped = (traces.HERE / f"{name}.trace").read_text()
    assert shipped == "".join(f"{ms}\n" for ms in traces.generate(name))


def test_a_trace_offers_its_opportunities_per_ms(tmp_path):
    # 2 opportunities at each of 1..10 ms, 1 at each of 11..20 ms: 30 x 1500 B = 360,000
    # bits per 20 ms period; by 10 ms (the ones at 10 ms count after it) 9 x 2 = 18.
    path = tmp_path / "link.trace"
    path.write_text("".join(f"{ms}\n" * (2 if ms <= 10 else 1) for ms in range(1, 21)))
    sched = json.dumps(traces.load_trace(str(path)))
    assert _core.schedule_capacity_bits(sched, [10_000_000, 20_000_001, 1_000_000_000]) == [
        18 * PACKET_BITS, 30 * PACKET_BITS, 50 * 30 * PACKET_BITS]
    # The densest millisecond, 2 x 1500 B per ms: 24 Mbit/s.
    assert _core.schedule_peak_bps(sched) == 24_000_000


def test_a_changed_trace_file_is_noticed(tmp_path):
    path = tmp_path / "link.trace"
    path.write_text("1\n2\n")
    sched = traces.load_trace(str(path))
    path.write_text("1\n1\n2\n")
    with pytest.raises(ValueError, match="changed since the scenario was compiled"):
        _core.schedule_capacity_bits(json.dumps(sched), [0])


def test_steps_cap_the_throughput():
    # 20 Mbit/s for 5 s, then 5 Mbit/s: in each second the bytes leaving the bottleneck are
    # at most the second's rate (plus the packet that straddles the second's start).
    sc = Scenario(duration="10s", bottleneck=Bottleneck(rate="20Mbps", buffer="100%BDP",
                                                        schedule={"steps": [["0s", "20Mbps"], ["5s", "5Mbps"]]}),
                  flows=[FlowGroup("cubic", rtt="40ms")])
    res = cubiclab.simulate(sc)
    tp = throughput_series(res, bin_s=1.0).set_index("t").throughput_bps
    assert (tp[tp.index <= 5] <= 20e6 + PACKET_BITS).all()
    assert (tp[tp.index > 5] <= 5e6 + PACKET_BITS).all()
    # Capacity: 20 Mbit/s x 5 s + 5 Mbit/s x 5 s = 125 Mbit; utilisation is of that.
    tx_bits = res.summary["utilization"] * 125e6
    assert tx_bits == pytest.approx(tp.sum(), rel=1e-9)
    assert res.summary["utilization"] <= 1


def test_a_trace_outage_stops_the_link():
    # The shipped `outages` trace: 12 Mbit/s (one opportunity per ms) through 2.7 s, then no
    # opportunity until 3.0 s. The packet of the opportunity at exactly 2.7 s finishes after
    # the sample taken then, so the interval ending at 2.8 s has it (one packet of the one
    # opportunity it counts); the intervals ending at 2.9 and 3.0 s see nothing offered and
    # nothing leave.
    sc = Scenario(duration="4s", bottleneck=Bottleneck(rate="12Mbps", buffer="100%BDP", schedule={"trace": "outages"}),
                  flows=[FlowGroup("reno", rtt="40ms")])
    res = cubiclab.simulate(sc)
    link = res.link.set_index(res.link.t.round(3))
    assert link.loc[2.8, "utilization"] == 1.0
    assert np.isnan(link.loc[[2.9, 3.0], "utilization"]).all()
    flows = res.flows.set_index(res.flows.t.round(3))
    assert flows.loc[2.8, "throughput_bps"] == PACKET_BITS / 0.1
    assert (flows.loc[[2.9, 3.0], "throughput_bps"] == 0).all()
    # Before it, at most one packet per opportunity: 100 per 100 ms, 12 Mbit/s.
    assert flows.loc[flows.index <= 2.7, "throughput_bps"].max() <= 12e6


def test_a_trace_file(tmp_path):
    # Two opportunities every 2 ms: 12 Mbit/s, like one per ms.
    path = tmp_path / "link.trace"
    path.write_text("2\n2\n")
    sc = Scenario(duration="3s", bottleneck=Bottleneck(rate="12Mbps", buffer="100%BDP", schedule={"trace": str(path)}),
                  flows=[FlowGroup("reno", rtt="20ms")])
    res = cubiclab.simulate(sc)
    assert res.flows.throughput_bps.max() <= 12e6 + PACKET_BITS / 0.1


@pytest.mark.parametrize("schedule, message", [
    ({"steps": [["1s", "5Mbps"]]}, "bottleneck.schedule: the first step must start at 0 s"),
    ({"steps": [["0s", "5Mbps"], ["1s", "0Mbps"]]}, "last rate holds forever"),
    ({"steps": [["0s", "5Mbps"]], "repeat": "5Mbps"}, "bottleneck.schedule.repeat"),
    ({"steps": "fast"}, "bottleneck.schedule.steps"),
    ({"trace": "no-such-trace"}, "neither a shipped trace"),
    ({"steps": [["0s", "5Mbps"]], "trace": "cellular"}, "either steps"),
])
def test_bad_schedules_name_the_field(schedule, message):
    sc = Scenario(duration="1s", bottleneck=Bottleneck(schedule=schedule), flows=[FlowGroup("reno")])
    with pytest.raises(ValueError, match=message):
        cubiclab.simulate(sc)


def test_bad_trace_line(tmp_path):
    path = tmp_path / "bad.trace"
    path.write_text("1\n2.5\n")
    with pytest.raises(ValueError, match="line 2 is '2.5'"):
        traces.load_trace(str(path))
