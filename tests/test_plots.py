"""The run plots show what a reader expects: throughput measured at the bottleneck's
output (never above the link rate), each group's share, axes with units, a colour per flow,
the steady state past slow start's peak, the rate a schedule offers; in bounded memory."""

import numpy as np
import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario, plots
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
    # share: of what the flows got, as the summary's (the groups' sum to 1 in every bin);
    # link_share: of the link's rate (at most 1, to the part of one packet a bin can hold).
    assert s.groupby("t").share.sum().to_numpy() == pytest.approx(1.0)
    assert s.groupby("t").link_share.sum().max() <= 1 + WIRE * 8 / fig6.summary["rate_bps"]
    # From t = 4 s on, all four flows of each group have started (spacing 1 s, jitter < 10 ms).
    assert s[s.t == 5.0].flows.tolist() == [4, 4]


def test_plot_run_writes_four_figures(fig6, tmp_path):
    paths = plot_run(fig6, tmp_path)
    assert [p.name for p in paths] == ["cwnd.png", "throughput.png", "queue.png", "rtt.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)


def axes_of(monkeypatch, plot, *args, **kw):
    """The figure `plot` draws (its file not written)."""
    drawn = {}
    monkeypatch.setattr(plots, "save", lambda fig, path: drawn.setdefault("fig", fig))
    plot(*args, **kw)
    return drawn["fig"]


def test_axes_have_units_and_drops_their_own_axis(fig6, monkeypatch):
    fig = axes_of(monkeypatch, plots.plot_queue, fig6, "q.png")
    assert [ax.get_ylabel() for ax in fig.axes] == ["queueing delay (ms)", "queue (packets)", "drops\nper 100 ms"]
    # Each label stays beside its own panel: the drops panel is short, and its one-line label
    # ran up into the queue's, the two printed over each other.
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        label, panel = ax.yaxis.label.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert panel.y0 - 1 <= label.y0 and label.y1 <= panel.y1 + 1, ax.get_ylabel()
    # 400 Mbit/s: a full queue of 100% BDP (40 ms) waits 40 ms; delay = bytes x 8 / rate.
    delay = fig.axes[0].lines[0].get_ydata()
    assert max(delay) == pytest.approx(fig6.link.queue_bytes.max() * 8 / 400e6 * 1e3)
    assert 39 < max(delay) <= 40.1
    fig = axes_of(monkeypatch, plots.plot_rtt, fig6, "r.png")
    assert fig.axes[0].get_ylabel() == "smoothed RTT (ms)"


def test_several_links_have_a_throughput_panel_per_link(monkeypatch):
    # A two-hop parking lot at 100 Mbit/s: queue.png gains a panel on top with each link's
    # throughput, its utilisation per interval times its rate (Mbit/s), one line per link,
    # named; a link carries at most its rate (plus the part of one packet an interval holds).
    from cubiclab.topology import parking_lot

    res = cubiclab.simulate(parking_lot(2, link={"rate": "100Mbps", "buffer": "100%BDP"},
                                        long=[{"algorithm": "cubic", "rtt": "40ms", "name": "long"}],
                                        cross=[{"algorithm": "cubic", "rtt": "40ms"}], duration="3s"))
    fig = axes_of(monkeypatch, plots.plot_queue, res, "q.png")
    assert [ax.get_ylabel() for ax in fig.axes] == ["throughput (Mbit/s)", "queueing delay (ms)", "queue (packets)",
                                                    "drops\nper 100 ms"]
    lines = fig.axes[0].lines
    assert [line.get_label() for line in lines] == ["hop1", "hop2"]
    for k, line in enumerate(lines):
        util = res.link[res.link.link == k].utilization.to_numpy()
        assert line.get_ydata() == pytest.approx(util * 100)
        assert max(line.get_ydata()) <= 100 * (1 + WIRE * 8 / (100e6 * 0.1))
    assert max(lines[0].get_ydata()) > 90


def test_a_colour_per_flow_and_the_steady_state_readable(fig6, monkeypatch):
    fig = axes_of(monkeypatch, plots.plot_cwnd, fig6, "c.png")
    ax = fig.axes[0]
    flows = [line for line in ax.lines if line.get_label().startswith("flow ")]
    assert len(flows) == 8 and len({line.get_color() for line in flows}) == 8
    # Slow start's peak is far above the steady state: the axis stops at 1.2 x the largest
    # 99th percentile after each flow's first loss, and the peak is marked and named.
    peak = fig6.flows.cwnd.max()
    after = [d.cwnd[d.t >= fig6.losses.t[fig6.losses.flow == f].min()].quantile(0.99)
             for f, d in fig6.flows.groupby("flow")]
    assert ax.get_ylim()[1] == pytest.approx(1.2 * max(after)) and ax.get_ylim()[1] < peak
    assert any(f"cwnd peak {peak:.0f} (clipped" in t.get_text() for t in ax.texts)
    full = axes_of(monkeypatch, plots.plot_cwnd, fig6, "c.png", scale="full").axes[0]
    assert full.get_ylim()[1] >= peak


def test_one_group_one_panel():
    res = cubiclab.simulate(Scenario(duration="3s", flows=[FlowGroup("reno", count=2, rtt="20ms")]))
    fig = {}
    import cubiclab.plots as p

    real = p.save
    p.save = lambda f, path: fig.setdefault("fig", f)
    try:
        p.plot_throughput(res, "t.png")
    finally:
        p.save = real
    assert len(fig["fig"].axes) == 1


def test_offered_rate_follows_the_schedule():
    # 50 Mbit/s for 1 s, then 5 Mbit/s for 1 s, repeating: the per-bin offered rate of 1 s
    # bins is each step's rate, and half a period bins average them.
    sc = Scenario(duration="4s", bottleneck=Bottleneck(rate="50Mbps", schedule={
        "steps": [["0s", "50Mbps"], ["1s", "5Mbps"]], "repeat": "2s"}), flows=[FlowGroup("cubic", rtt="20ms")])
    res = cubiclab.simulate(sc)
    assert plots.offered_rate(res, [1, 2, 3, 4], 1.0).tolist() == [50e6, 5e6, 50e6, 5e6]
    assert plots.offered_rate(res, [2, 4], 2.0).tolist() == [27.5e6, 27.5e6]
    s = group_shares(res, bin_s=1.0)
    assert (s.link_share <= 1 + WIRE * 8 / 5e6).all()


def test_thin_keeps_extremes_and_bounds_points():
    x = np.arange(1_000_000, dtype=float)
    y = np.sin(x / 1000)
    y[123_457] = 50.0  # a one-sample spike
    tx, ty = plots.thin(x, y, 4000)
    assert len(tx) <= 4000 and np.all(np.diff(tx) > 0)
    assert ty.max() == 50.0 and ty.min() == y.min()
    assert plots.thin(x[:100], y[:100], 4000)[0].tolist() == x[:100].tolist()


def test_plotting_memory_is_within_its_estimate(fig6, tmp_path):
    # The estimate the run's memory budget counts on (plot_memory_bytes) covers the peak
    # that tracemalloc sees numpy and pandas allocate while the four figures are drawn.
    import tracemalloc

    long = cubiclab.simulate(default_scenario().replace(duration="30s", record=cubiclab.Record(interval="10ms")))
    tracemalloc.start()
    plot_run(long, tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= plots.plot_memory_bytes(len(long.flows))


def test_drops_after_slow_start_readable(monkeypatch):
    # Slow start's drops (1285 packets in 100 ms here) flattened the steady state's bursts of
    # a few packets: the drops axis stops at 1.2 x the 99th percentile of the drops once every
    # flow has had its first loss, the larger peak clipped and named, as cwnd's.
    res = cubiclab.simulate(default_scenario().replace(duration="30s"))
    past = res.losses.groupby("flow").t.min().max()
    steady = res.link.drops[res.link.t >= past].quantile(0.99)
    ax = axes_of(monkeypatch, plots.plot_queue, res, "q.png").axes[2]
    assert 0 < steady and ax.get_ylim() == pytest.approx((0, 1.2 * steady))
    assert any(f"drops peak {res.link.drops.max():.0f} (clipped" in t.get_text() for t in ax.texts)
    full = axes_of(monkeypatch, plots.plot_queue, res, "q.png", scale="full").axes[2]
    assert full.get_ylim()[1] >= res.link.drops.max()


def test_marks_per_interval_beside_the_drops(monkeypatch):
    # A marking queue (CoDel with ecn) and two groups, one negotiating ECN: the link table
    # has both drops (the plain flow's) and CE marks (the ECN flow's) per interval. The drops
    # panel draws each as the table has it, one point per interval, marks dashed; a run
    # without marks (the drop-tail runs above) keeps the drops-only label.
    res = cubiclab.simulate(Scenario(
        duration="5s", bottleneck=Bottleneck(rate="20Mbps", buffer="200packets", queue="codel", codel={"ecn": True}),
        flows=[FlowGroup("cubic", rtt="40ms", ecn=True, name="ecn"), FlowGroup("cubic", rtt="40ms", name="plain")]))
    assert res.link.marks.sum() > 0 and res.link.drops.sum() > 0
    ax = axes_of(monkeypatch, plots.plot_queue, res, "q.png", scale="full").axes[2]
    assert ax.get_ylabel() == "drops, marks\nper 100 ms"
    solid, dashed = ([ln for ln in ax.get_lines() if ln.get_linestyle() == style] for style in ("-", "--"))
    assert len(solid) == len(dashed) == 1
    for line, column in ((solid[0], "drops"), (dashed[0], "marks")):
        assert list(line.get_xdata()) == list(res.link.t) and list(line.get_ydata()) == list(res.link[column])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["drops", "CE marks"]
