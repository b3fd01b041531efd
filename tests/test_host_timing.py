"""The hosts' timing noise model (`[host] jitter`, crates/cubiclab-sim/src/sim/host.rs):
off by default and bit-identical without it, drawn from the seed when on, the measured
delays added to a flow's round trip, a host's packets kept in order."""

from __future__ import annotations

import pytest

import cubiclab
from cubiclab._core import TESTBED_HZ
from cubiclab.scenario import Host, Scenario, WebGroup, as_on_testbed, with_host_timing


def one_flow(jitter=None, window="2packets", seconds=10) -> Scenario:
    # Two segments a round trip at 10 Mbit/s (1.2 ms apart), immediate ACKs, no queue: every
    # packet reaches a host that has been idle for over a millisecond.
    return Scenario(duration=f"{seconds}s", bottleneck=cubiclab.Bottleneck(rate="10Mbps"),
                    flows=[cubiclab.FlowGroup("reno", rtt="20ms", rwnd=window, delayed_ack=False)],
                    record=cubiclab.Record(rtt_samples=True), host=Host(jitter=jitter))


def test_off_by_default_and_compiled_as_before():
    sc = one_flow()
    assert "host" not in sc.compile() and "host" not in one_flow("off").compile()
    assert sc.to_json() == one_flow("off").to_json()
    assert one_flow("testbed").compile()["host"] == {"jitter": "testbed"}


def test_ensembles_turn_it_on_unless_the_scenario_says():
    assert with_host_timing(one_flow()).host.jitter == "testbed"
    assert with_host_timing(one_flow("off")).host.jitter == "off"
    sc = one_flow()
    with_host_timing(sc).record.cwnd = "changes"  # a copy: the caller's scenario is untouched
    assert sc.host.jitter is None and sc.record.cwnd == "interval"


def test_ensembles_against_the_kernel_read_as_the_testbeds_sink():
    # sink_rcvlowat: a quarter of a flow's share of 10 Mbit/s per 10 ms sample, one flow:
    # 10e6 x 0.01 / 8 / 4 = 3125 bytes; compiled in bytes (packets of the MSS); a scenario's own value is kept.
    on = as_on_testbed(one_flow())
    assert (on.host.jitter, on.host.read_lowat) == ("testbed", "3125B")
    assert on.compile()["host"] == {"jitter": "testbed", "read_lowat": 3125, "sack_compression": True}
    assert as_on_testbed(one_flow().replace(host=Host(read_lowat="2packets"))).compile()["host"]["read_lowat"] == 2 * 1448
    assert with_host_timing(one_flow()).host.read_lowat is None  # the catalog's ensembles: reads per segment


def test_sack_compression_is_off_unless_asked_and_on_against_the_kernel():
    # Left out or false: compiled as before (the catalog's 2.6 hosts had none); ensembles
    # against the kernel (6.18) turn it on, a scenario's own value kept; the catalog's
    # ensembles (with_host_timing) leave it off.
    assert "host" not in one_flow().replace(host=Host(sack_compression=False)).compile()
    assert one_flow().replace(host=Host(sack_compression=True)).compile()["host"] == {"sack_compression": True}
    assert as_on_testbed(one_flow()).host.sack_compression is True
    assert as_on_testbed(one_flow().replace(host=Host(sack_compression=False))).host.sack_compression is False
    assert with_host_timing(one_flow()).host.sack_compression is None
    with pytest.raises(ValueError, match="sack_compression.*boolean"):
        one_flow().replace(host=Host(sack_compression="yes")).compile()


def test_ensembles_against_the_kernel_run_jiffy_clocks_at_the_kernels_hz():
    # An algorithm declaring `hz` (its clock is the kernel's jiffies: westwood, cubic, ...)
    # runs at the testbed kernel's CONFIG_HZ, as its module or BPF port does there; one
    # without (reno) and a group's own `hz` are left alone; the catalog's ensembles too.
    sc = Scenario(flows=[cubiclab.FlowGroup("westwood"), cubiclab.FlowGroup("reno"),
                         cubiclab.FlowGroup("cubic", params={"hz": 1000})],
                  web=[WebGroup(algorithm="cubic", sessions=2)])
    on = as_on_testbed(sc)
    assert [g.params for g in on.flows] == [{"hz": TESTBED_HZ}, {}, {"hz": 1000}] and TESTBED_HZ == 250
    assert on.web[0].params == {"hz": TESTBED_HZ}
    assert [g.params for g in with_host_timing(sc).flows] == [{}, {}, {"hz": 1000}]
    assert sc.flows[0].params == {}  # a copy


def test_sack_compression_sends_fewer_acks_in_recovery():
    # 0.5% random loss at 20 Mbit/s, 50 ms: with data held out of order the receiver sends
    # the first three duplicate ACKs of a hole, then one per 1.1 ms timer (min(1 ms, RTT/20)
    # + 100 us slack) where segments arrive 0.6 ms apart; in order, ACKs are as before. So
    # the same data takes fewer ACKs (the reverse link's bytes: x0.88 here), and off runs
    # as unset.
    sc = Scenario(duration="10s", bottleneck=cubiclab.Bottleneck(rate="20Mbps", buffer="100%BDP",
                                                              loss={"model": "bernoulli", "p": 0.005}),
                  flows=[cubiclab.FlowGroup("reno", rtt="50ms")])
    runs = [cubiclab.simulate(sc.replace(host=Host(sack_compression=v))) for v in (None, False, True)]
    assert runs[0].flows.equals(runs[1].flows)
    per_segment = [r.link_totals.tx_bytes.iloc[1] / r.link_totals.tx_bytes.iloc[0] for r in runs]
    assert per_segment[2] < 0.97 * per_segment[0]
    # Without SACK (NewReno; the testbed turns tcp_sack off) Linux sends every duplicate ACK.
    newreno = sc.replace(flows=[cubiclab.FlowGroup("reno", rtt="50ms", recovery="newreno")])
    off, on = (cubiclab.simulate(newreno.replace(host=Host(sack_compression=v))) for v in (None, True))
    assert off.flows.equals(on.flows) and off.link_totals.equals(on.link_totals)


def test_reads_once_per_segment_are_the_default_and_fewer_reads_fewer_acks():
    # A read per segment (any read_lowat up to one MSS) runs exactly as unset; reads every
    # 5 segments (6250 B) ACK a PSH segment alone only when a read follows it, so fewer ACKs
    # cross the reverse link (measured on the kernel, 10 s of this flow: 5883 ACKs at this
    # SO_RCVLOWAT, 6046 at 625 B).
    sc = Scenario(duration="5s", bottleneck=cubiclab.Bottleneck(rate="20Mbps", buffer="100%BDP"),
                  flows=[cubiclab.FlowGroup("cubic", rtt="40ms")])
    acks = [cubiclab.simulate(sc.replace(host=Host(read_lowat=v))) for v in (None, "1448B", "6250B")]
    reverse = [r.link_totals.tx_bytes.iloc[1] for r in acks]
    assert acks[0].flows.equals(acks[1].flows) and reverse[0] == reverse[1]
    assert reverse[2] < 0.97 * reverse[0]


def test_a_bad_value_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="host.*jitter.*(off|testbed)"):
        cubiclab.simulate(one_flow("kernel"))
    with pytest.raises(ValueError, match="host: unknown key 'jiter'"):
        Scenario.from_dict({"flows": [{}], "host": {"jiter": "testbed"}})


def test_the_round_trip_grows_by_both_hosts_delays():
    # The model's tables for a host idle 1 ms or more (host.rs, RECEIVER_US[2], SENDER_US[2]),
    # means of the piecewise-linear quantile functions, sum over the table's intervals of
    # (p_i - p_i-1) (d_i-1 + d_i) / 2: receiver 120.19 us, sender 109.26 us; together 229.4 us,
    # moved by the run's shifts, seed 1's -3.484 and -10.665 us (host.rs, SEED_1_SHIFTS):
    # 215.3 us. Every RTT sample is the propagation RTT plus serialisation (off) plus both
    # delays (on); 900 samples, the delays' sd about 60 us: the mean is within ~3 us.
    off, on = cubiclab.simulate(one_flow()), cubiclab.simulate(one_flow("testbed"))
    excess_us = 1000 * (on.rtt.rtt_ms.mean() - off.rtt.rtt_ms.mean())
    assert excess_us == pytest.approx(229.4 - 3.484 - 10.665, abs=4)
    assert off.rtt.rtt_ms.min() == 21.241  # 20 ms + 2 x 1.2 ms (two segments) + an ACK's 41 us


def test_draws_come_from_the_seed():
    a, b, c = (cubiclab.simulate(one_flow("testbed", window="30packets").replace(seed=seed)) for seed in (3, 3, 4))
    assert a.rtt.equals(b.rtt) and not a.rtt.rtt_ms.equals(c.rtt.rtt_ms)
    # No drops (30 packets fit the path: 17 in flight, 17 in the buffer), so nothing is retransmitted.
    assert (a.totals.drops.sum(), a.totals.retransmits.sum()) == (0, 0)


def test_the_per_run_part_is_measured_as_the_run_means_spread(monkeypatch):
    # scripts/host_timing.py --dir D1 D2 ...: runs whose delays are one sample x shifted by
    # c_k (the receiver's) and by -2 c_k (the sender's). Each run's mean less the pooled mean
    # is c_k - mean(c) (-2 of it for the sender); the within-run sd is x's; the between-run
    # sd is sqrt(var(c) - var(x) / n) (the run means' variance less what n draws of x give
    # it); the sides' run means correlate by -1.
    import importlib.util
    from pathlib import Path

    import numpy as np

    spec = importlib.util.spec_from_file_location("host_timing", Path(__file__).parents[1] / "scripts" / "host_timing.py")
    ht = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ht)
    x = np.random.default_rng(1).gamma(4.0, 25.0, 4000)  # about the measured delays: mean 100 us, sd 50 us
    shift = {"r1": -12.0, "r2": 3.0, "r3": 9.0, "r4": 0.0}
    monkeypatch.setattr(ht, "delays", lambda f, cut, flow=None: {"receiver": x + shift[f.name],
                                                                   "sender": x - 2 * shift[f.name]})
    runs, parts = ht.per_run([Path(k) for k in shift], cut_us=5000.0)
    c = np.array(list(shift.values()))
    receiver = runs[runs.side == "receiver"]
    assert list(receiver.d_mean) == pytest.approx(c - c.mean(), abs=0.051)  # rounded to 0.1 us
    assert list(runs[runs.side == "sender"].d_mean) == pytest.approx(-2 * (c - c.mean()), abs=0.051)
    r, s = parts.iloc[0], parts.iloc[1]
    assert r.within_sd_us == pytest.approx(x.std(ddof=1), abs=0.051)
    assert r.between_sd_us == pytest.approx(np.sqrt(c.var(ddof=1) - x.var(ddof=1) / len(x)), abs=0.051)
    assert s.between_sd_us == pytest.approx(np.sqrt(4 * c.var(ddof=1) - x.var(ddof=1) / len(x)), abs=0.051)
    assert r.corr_receiver_sender == -1.0
