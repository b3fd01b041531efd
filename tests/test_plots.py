"""The run plots show what a reader expects: throughput measured at the bottleneck's
output (never above the link rate) and each group's share of the link."""

import pytest

import cubiclab
from cubiclab.plots import group_shares, plot_run, throughput_series
from cubiclab.scenario import default_scenario

WIRE = 1500  # bytes of a full segment on the wire (1448 + 52)


@pytest.fixture(scope="module")
def fig6():
    # The default run (seed 000 Fig. 6: 4 CUBIC + 4 SACK, 400 Mbit/s, 40 ms), first 5 s:
    # the flows start 1 s apart, so its first second has one flow of each group in slow start.
    return cubiclab.simulate(default_scenario().replace(duration="5s"))


def test_throughput_is_bounded_by_the_link(fig6):
    rate = fig6.summary["rate_bps"]
    tp = throughput_series(fig6, bin_s=1.0)
    # A bin holds the bytes that finished serialization in it: at most rate x 1 s, plus the
    # part of one packet started in the bin before (serialization is exact on average).
    per_bin = tp.groupby("t").throughput_bps.sum()
    assert per_bin.max() <= rate + WIRE * 8
    # Goodput is what overshoots: a SACK hole filled releases a window of in-order data at once.
    assert fig6.flows.goodput_bps.max() > rate


def test_throughput_adds_up_to_what_left_the_bottleneck(fig6):
    tp = throughput_series(fig6, bin_s=1.0)
    # Bins of 1 s over 5 s: their bits are every byte that left the forward link, which
    # carries only the long-lived flows' data here (no web sessions, ACKs go the other way).
    sent_bytes = (tp.throughput_bps * 1.0).sum() / 8
    tx_bytes = fig6.summary["utilization"] * fig6.summary["rate_bps"] * 5.0 / 8
    assert sent_bytes == pytest.approx(tx_bytes, rel=1e-9)
    assert sorted(tp.t.unique()) == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_group_shares(fig6):
    s = group_shares(fig6, bin_s=1.0)
    assert set(s.group) == {"cubic", "sack"}
    per_bin = s.groupby("t").share.sum()
    assert per_bin.max() <= 1 + WIRE * 8 / fig6.summary["rate_bps"]
    # From t = 4 s on, all four flows of each group have started (spacing 1 s, jitter < 10 ms).
    assert s[s.t == 5.0].flows.tolist() == [4, 4]


def test_plot_run_writes_three_figures(fig6, tmp_path):
    paths = plot_run(fig6, tmp_path)
    assert [p.name for p in paths] == ["cwnd.png", "throughput.png", "queue.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
