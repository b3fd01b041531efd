import json
import subprocess
import sys

import pytest

import cubiclab
from cubiclab import FlowGroup, Scenario, Bottleneck


def small(**kw):
    base = dict(
        name="t",
        duration="20s",
        bottleneck=Bottleneck(rate="20Mbps", buffer="100%BDP"),
        flows=[FlowGroup("reno", count=1, rtt="40ms")],
    )
    base.update(kw)
    return Scenario(**base)


def test_single_reno_flow_fills_the_link():
    # With a buffer of one BDP, Reno's window halves to exactly the BDP after each loss,
    # so the queue never quite empties: utilisation near 1 (goodput adds the 1448/1500
    # payload ratio = 0.965).
    r = cubiclab.simulate(small(duration="60s"))
    util = r.link.utilization[r.link.t > 10].mean()
    assert util > 0.98
    assert r.summary["goodput_utilization"] == pytest.approx(r.summary["utilization"] * 1448 / 1500, abs=0.02)
    assert set(r.flows.columns) >= {"t", "flow", "cwnd", "ssthresh", "goodput_bps", "throughput_bps", "group"}


def test_same_seed_is_bit_identical_and_seed_changes_it():
    sc = small(flows=[FlowGroup("reno", count=2, rtt="40ms")], start_jitter="20ms")
    a, b = cubiclab.simulate(sc), cubiclab.simulate(sc)
    assert a.flows.equals(b.flows)
    c = cubiclab.simulate(sc.replace(seed=7))
    assert not a.flows.equals(c.flows)


def test_toml_round_trip_and_unknown_key(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('duration = "3s"\n[bottleneck]\nrate = "10Mbps"\n[[flows]]\nalgorithm = "reno"\nrtt = "30ms"\n')
    r = cubiclab.simulate(str(p))
    assert r.summary["scenario"] == "s"
    p.write_text('duration = "3s"\nrtts = 4\n[[flows]]\nalgorithm = "reno"\n')
    with pytest.raises(ValueError, match="unknown key 'rtts'"):
        cubiclab.simulate(str(p))


@pytest.mark.parametrize("change, message", [
    (dict(flows=[FlowGroup("cubik")]), "unknown algorithm 'cubik'"),
    (dict(bottleneck=Bottleneck(rate="0Mbps")), "bottleneck.rate"),
    (dict(bottleneck=Bottleneck(rate="10 Mbsp")), "bottleneck.rate"),
    (dict(bottleneck=Bottleneck(buffer="0packets")), "bottleneck.buffer"),
    (dict(bottleneck=Bottleneck(delay="30ms")), r"flows\[0\].rtt"),
    (dict(flows=[FlowGroup("reno", params={"beta": 1})]), "unknown parameter 'beta'"),
    (dict(duration="-1s"), "duration"),
])
def test_bad_input_names_the_field(change, message):
    with pytest.raises(ValueError, match=message):
        cubiclab.simulate(small(**change))


def test_cli_run_json_and_exit_codes(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('duration = "2s"\n[bottleneck]\nrate = "10Mbps"\n[[flows]]\nalgorithm = "reno"\nrtt = "30ms"\n')
    out = subprocess.run([sys.executable, "-m", "cubiclab.cli", "run", str(p), "--json", "--out", str(tmp_path / "o"),
                          "--no-plots", "--format", "csv"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert 0.5 < s["utilization"] <= 1.0 and s["flows"][0]["share"] == 1.0
    assert (tmp_path / "o" / "s" / "flows.csv").exists()
    p.write_text('[bottleneck]\nrate = "fast"\n[[flows]]\nalgorithm = "reno"\n')
    bad = subprocess.run([sys.executable, "-m", "cubiclab.cli", "run", str(p)], capture_output=True, text=True)
    assert bad.returncode == 2 and "bottleneck.rate" in bad.stderr
    assert not (tmp_path / "o" / "s" / "nothing").exists()


def test_finite_transfer_records_completion_time():
    # 1 MB over an idle 100 Mbps, 20 ms path: slow start from 10 segments doubles each RTT
    # (691 segments need 6-7 rounds with delayed ACKs) plus one RTT of handshake-free start
    # and the serialisation of 1 MB (0.08 s): well under 0.5 s, and above 0.1 s.
    r = cubiclab.simulate(small(duration="2s", bottleneck=Bottleneck(rate="100Mbps"),
                                flows=[FlowGroup("reno", rtt="20ms", bytes="1MB")], start_jitter="0ms"))
    fct = r.totals.fct_s.iloc[0]
    assert 0.1 < fct < 0.5, fct
    assert r.totals.delivered_bytes.iloc[0] >= 1_000_000
