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
