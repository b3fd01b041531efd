"""The algorithm's state in a simulation (record.cc_state): each flow's algorithm variables
per interval, as the algorithm reports them, without changing the run."""

import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Record, Scenario


def run(cc_state: bool, *groups):
    return cubiclab.simulate(Scenario(duration="8s", bottleneck=Bottleneck(rate="10Mbps", buffer="100%BDP"),
                                      flows=list(groups), record=Record(cc_state=cc_state)))


@pytest.fixture(scope="module")
def pair():
    groups = (FlowGroup("cubic", rtt="40ms"), FlowGroup("bbr", rtt="40ms"))
    return run(False, *groups), run(True, *groups)


def test_off_by_default_and_the_run_unchanged(pair, tmp_path):
    off, on = pair
    assert off.cc_state.empty and "cc_state.csv" not in {p.name for p in off.write(tmp_path, "csv")}
    for name in ("flows", "link", "losses", "totals"):
        assert on.tables()[name].equals(off.tables()[name]), name


def test_a_row_per_variable_per_flow_per_interval(pair):
    on = pair[1]
    samples = on.flows.groupby("flow").size()
    per_flow = on.cc_state.groupby("flow", observed=True)["var"].nunique()
    assert (on.cc_state.groupby("flow").size() == samples * per_flow).all()
    assert on.cc_state.t.unique().tolist() == on.flows.t.unique().tolist()


def test_cubic_w_max_is_the_window_at_its_first_loss(pair):
    # tcp_cubic.c's bictcp_recalc_ssthresh: last_max_cwnd = cwnd at a loss (the first loss
    # has no earlier maximum, so fast convergence does not lower it); it holds until the next.
    on = pair[1]
    losses = on.losses[on.losses.flow == 0]
    first, second = losses.t.iloc[0], losses.t.iloc[1]
    wide = on.cc_state_wide(0)
    between = wide[(wide.t > first) & (wide.t < second)]
    assert len(between) and (between.last_max_cwnd == losses.cwnd.iloc[0]).all()


def test_bbr_min_rtt_and_mode(pair):
    # The propagation RTT is 40 ms: BBR's min_rtt (us) is at least that, and with a queue of
    # at most one BDP (40 ms) at most twice that; its mode is one of tcp_bbr.c's four.
    wide = pair[1].cc_state_wide(1)
    seen = wide[wide.min_rtt_us < 2**32 - 1]  # ~0U until the first sample
    assert len(seen) and (seen.min_rtt_us >= 40_000).all() and (seen.min_rtt_us <= 80_000 + 1_000).all()
    assert set(wide["mode"].unique()) <= {0, 1, 2, 3} and {"pacing_gain", "cwnd_gain", "bw"} <= set(wide.columns)


def test_cubic_k_is_in_1024ths_of_a_second(pair):
    # The units first-simulation.md reads the table in. tcp_cubic.c's bictcp_update: at an
    # epoch's start bic_K = cbrt(cube_factor (W_max - cwnd)), cube_factor = 2^40 / (41 x 10),
    # i.e. K = cbrt((W_max - cwnd) / C) seconds in units of 2^-10 s, C = 410 / 1024; the epoch
    # starts on the first ACK after recovery, where cwnd = ssthresh (tcp_end_cwnd_reduction).
    on = pair[1]
    wide = on.cc_state_wide(0).merge(on.flows[on.flows.flow == 0][["t", "ssthresh", "ca_state"]], on="t")
    epochs = wide[(wide.epoch_start > 0) & (wide.ca_state == "open") & (wide.last_max_cwnd > wide.ssthresh + 1)]
    assert len(epochs) > 5
    c = 410 / 1024
    low, high = (((epochs.last_max_cwnd - epochs.ssthresh + d) / c) ** (1 / 3) for d in (-1, 1))
    assert ((low <= epochs.K / 1024) & (epochs.K / 1024 <= high)).all()


def test_bbr_bw_gains_and_mode_in_the_kernels_units():
    # tcp_bbr.c: bw in packets per microsecond x 2^24 (BW_SCALE), gains x 256 (BBR_SCALE),
    # PROBE_BW (mode 2) cycling pacing gains 5/4, 3/4, 1. Alone on a 50 Mbit/s link of
    # 1500-byte packets, its bandwidth estimate is the link: 50e6 / (1500 x 8) packets/s.
    res = run(True, FlowGroup("bbr", rtt="40ms"))
    wide = res.cc_state_wide(0)
    probe_bw = wide[wide["mode"] == 2]
    assert len(probe_bw) > 10
    rate = 10e6 / (1500 * 8)  # run()'s bottleneck: 10 Mbit/s
    assert (probe_bw.bw * 1e6 / 2**24).to_numpy() == pytest.approx(rate, rel=1e-3)
    assert set(probe_bw.pacing_gain / 256) == {1.25, 0.75, 1.0} and set(probe_bw.cwnd_gain / 256) == {2.0}
    assert wide["mode"].iloc[0] == 0 and wide.pacing_gain.iloc[0] == 2885 * 256 // 1000 + 1  # STARTUP, high gain
