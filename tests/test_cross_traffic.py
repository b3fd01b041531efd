"""Cross traffic, random loss and queue disciplines, run through the whole simulator."""

import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario
from cubiclab.scenario import WebGroup


def web_only(load=0.15, seconds=600, seed=3):
    return Scenario(name="load", seed=seed, duration=f"{seconds}s",
                    bottleneck=Bottleneck(rate="100Mbps", buffer="100%BDP"), flows=[],
                    web=[WebGroup(sessions=50, load=load, direction="forward", mean_size="10packets",
                                  shape=1.2, rtt="exp:50ms")])


def test_background_load_reaches_its_target():
    # 50 sessions of Pareto(1.2) objects, mean 10 packets, asked for 15% of 100 Mbps: the
    # think time is set to 50 x 15000 B x 8 / (0.15 x 100 Mbps) minus two RTTs ~ 0.3 s.
    # Over 600 s (about 70,000 objects) the delivered load must be within 10% of 0.15.
    r = cubiclab.simulate(web_only())
    assert r.summary["web_forward_load"] == pytest.approx(0.15, rel=0.10)
    assert r.summary["web_objects"] > 50_000
    # Flow completion times: any object needs the handshake RTT plus at least one RTT; RTTs
    # are exponential with mean 50 ms, floored at 2 x 10 ms + 1 ms: every FCT is above 42 ms.
    # The largest 1% of objects (over 100 packets) need several more rounds of slow start.
    assert r.web.fct_s.min() > 0.042
    small = r.web[r.web.bytes <= r.web.bytes.quantile(0.1)].fct_s.median()
    big = r.web[r.web.bytes >= r.web.bytes.quantile(0.99)].fct_s.median()
    assert big > 2 * small


def test_poisson_loss_events_count():
    # Poisson loss at 2 events/s for 200 s on a busy link: lambda T = 400, sd 20.
    sc = Scenario(name="poisson", duration="200s", flows=[FlowGroup("cubic", rtt="40ms")],
                  bottleneck=Bottleneck(rate="20Mbps", buffer="100%BDP", loss={"model": "poisson", "rate": 2.0}))
    r = cubiclab.simulate(sc)
    assert abs(r.summary["bottleneck_random_losses"] - 400) < 4 * 20
    assert r.totals.random_losses.iloc[0] == r.summary["bottleneck_random_losses"]


def test_bernoulli_loss_fraction():
    # p = 1%: random losses over packets sent through the link within 4 binomial sd.
    sc = Scenario(name="bern", duration="60s", flows=[FlowGroup("reno", rtt="40ms")],
                  bottleneck=Bottleneck(rate="10Mbps", buffer="100%BDP", loss={"model": "bernoulli", "p": 0.01}))
    r = cubiclab.simulate(sc)
    n = r.totals.segments_sent.iloc[0] - r.totals.drops.iloc[0]
    k = r.totals.random_losses.iloc[0]
    assert abs(k - 0.01 * n) < 4 * (n * 0.01 * 0.99) ** 0.5


def test_codel_keeps_the_standing_queue_near_target():
    # One CUBIC flow into a 1000-packet buffer: drop-tail lets the queue stand at hundreds
    # of ms; CoDel (target 5 ms, interval 100 ms) holds the mean queueing delay near 5 ms
    # while the link stays nearly full.
    def run(queue):
        sc = Scenario(name=queue, duration="60s", flows=[FlowGroup("cubic", rtt="40ms")],
                      bottleneck=Bottleneck(rate="20Mbps", buffer="1000packets", queue=queue))
        r = cubiclab.simulate(sc)
        late = r.link[r.link.t > 10]
        return (late.queue_bytes * 8 / 20e6).mean(), late.utilization.mean()
    dt_delay, _ = run("droptail")
    codel_delay, codel_util = run("codel")
    assert dt_delay > 0.1
    assert codel_delay < 3 * 0.005
    assert codel_util > 0.9


def test_step_marks_no_packet_that_is_not_ect():
    # The step marker (DCTCP's K) only marks ECT packets and drops none below the buffer's
    # limit; with hosts that send no ECT a run is the drop-tail run, packet for packet.
    # Its threshold is read as a buffer is: packets, a size, or a share of the BDP.
    def run(queue, threshold="20packets"):
        return cubiclab.simulate(Scenario(
            name=queue, duration="10s", flows=[FlowGroup("cubic", rtt="40ms", count=2)],
            bottleneck=Bottleneck(rate="20Mbps", buffer="100packets", queue=queue, step={"threshold": threshold})))
    step, droptail = run("step"), run("droptail")
    assert step.totals.drops.iloc[0] > 0
    assert step.link.equals(droptail.link) and step.totals.equals(droptail.totals)
    sc = Scenario(flows=[FlowGroup(rtt="40ms")], bottleneck=Bottleneck(rate="20Mbps", step={"threshold": "50%BDP"}))
    # 50% of 20 Mbit/s x 40 ms = 50 kB, in 1500-byte packets: 33.3, rounded to 33.
    assert sc.compile()["bottleneck"]["step"] == {"threshold": {"packets": 33}}
    sc = Scenario(flows=[FlowGroup(rtt="40ms")], bottleneck=Bottleneck(step={"threshold": "30KB"}))
    assert sc.compile()["bottleneck"]["step"] == {"threshold": {"bytes": 30_000}}


@pytest.mark.parametrize("queue, table", [
    ("red", {"red": {"ecn": True}}), ("codel", {"codel": {"ecn": True}}), ("fq_codel", {}),
])
def test_marking_queues_mark_ect_flows_and_drop_the_others(queue, table):
    # RED and CoDel with ecn = true, and FQ-CoDel (ECN on, as Linux's): a flow that
    # negotiated ECN is marked where a flow that did not is dropped. Every mark is of a
    # packet that leaves the link (RED marks arrivals it queues, CoDel and FQ-CoDel marks
    # departures), so with no other loss the receivers see exactly the link's marks.
    def run(ecn):
        return cubiclab.simulate(Scenario(
            name=queue, duration="10s", flows=[FlowGroup("cubic", rtt="40ms", count=2, ecn=ecn)],
            bottleneck=Bottleneck(rate="20Mbps", buffer="200packets", queue=queue, **table)))
    marked, dropped = run(True), run(False)
    assert marked.link.marks.sum() > 10
    assert marked.link_totals.marks.iloc[0] == marked.link.marks.sum() == marked.totals.ce_marks.sum()
    assert marked.totals.ecn_reductions.sum() > 0
    assert dropped.link.marks.sum() == 0 and dropped.link.drops.sum() > 10
    assert marked.link.drops.sum() < dropped.link.drops.sum()


@pytest.mark.parametrize("queue", ["fq_codel", "codel"])
def test_ce_threshold_marks_ect_flows_only(queue):
    # ce_threshold (codel_dequeue's last step, which sch_codel and sch_fq_codel share): an
    # ECT packet that waited more than the threshold leaves marked, whatever CoDel decided;
    # a Not-ECT one never is, so without ECN hosts a run is the run without the threshold,
    # packet for packet. With ECN hosts (and CoDel's `ecn` on, fq_codel's default) a 1 ms
    # threshold, far below CoDel's 5 ms target, marks more than CoDel alone, and the
    # receivers see the link's marks (but for one still on its way at the end).
    def run(ecn, **table):
        return cubiclab.simulate(Scenario(
            name="ce", duration="10s", flows=[FlowGroup("cubic", rtt="40ms", count=2, ecn=ecn)],
            bottleneck=Bottleneck(rate="20Mbps", buffer="200packets", queue=queue, **{queue: {"ecn": True, **table}})))
    plain, threshold = run(False), run(False, ce_threshold="1ms")
    assert plain.link.drops.sum() > 10 and threshold.link.marks.sum() == 0
    assert threshold.link.equals(plain.link) and threshold.totals.equals(plain.totals)
    codel, marked = run(True), run(True, ce_threshold="1ms")
    assert marked.link.marks.sum() > codel.link.marks.sum() > 0
    assert marked.link_totals.marks.iloc[0] == marked.link.marks.sum()
    assert marked.link.marks.sum() - marked.totals.ce_marks.sum() in (0, 1)
    sc = Scenario(flows=[FlowGroup(rtt="40ms")], bottleneck=Bottleneck(**{queue: {"ce_threshold": "1ms"}}))
    assert sc.compile()["bottleneck"][queue] == {"ce_threshold": 1_000_000}


def test_fq_codel_shares_the_link_between_rtts():
    # FQ-CoDel puts each flow in its own bucket and serves the backlogged ones the same
    # bytes per round (deficit round robin, RFC 8290 Sec. 4.2): two CUBIC flows of 20 and
    # 80 ms share 20 Mbit/s about equally, where drop-tail favours the short RTT.
    def shares(queue):
        r = cubiclab.simulate(Scenario(
            name=queue, duration="40s", seed=2,
            flows=[FlowGroup("cubic", rtt="20ms", name="short"), FlowGroup("cubic", rtt="80ms", name="long")],
            bottleneck=Bottleneck(rate="20Mbps", buffer="200packets", queue=queue)))
        late = r.flows[r.flows.t > 10].groupby("group", observed=True).throughput_bps.mean()
        return late["long"] / late["short"]
    assert 0.8 < shares("fq_codel") < 1.25
    assert shares("droptail") < shares("fq_codel")


def test_red_drops_early():
    # RED (min 5, max 15 packets, max_p 0.1) keeps the average queue between its thresholds
    # for one Reno flow, far below the 200-packet buffer a drop-tail queue would fill.
    sc = Scenario(name="red", duration="60s", flows=[FlowGroup("reno", rtt="40ms")],
                  bottleneck=Bottleneck(rate="20Mbps", buffer="200packets", queue="red",
                                        red={"min_th": 5, "max_th": 15, "max_p": 0.1}))
    r = cubiclab.simulate(sc)
    q = r.link[r.link.t > 10].queue_packets.mean()
    assert 2 < q < 30, q


def test_seed002_high_utilisation_with_200_web_sessions():
    # Seed 002: two CUBIC flows at 250 Mbps / 200 ms sharing the link with 200 web sessions
    # (both directions) still use the link well. Utilisation after the first 20 s > 0.9.
    sc = Scenario(name="s002", duration="100s", bottleneck=Bottleneck(rate="250Mbps", buffer="100%BDP"),
                  flows=[FlowGroup("cubic", count=2, rtt="200ms", start_spacing="1s")],
                  web=[WebGroup(sessions=200, direction="both", mean_size="10packets", think="10s", rtt="exp:50ms")])
    r = cubiclab.simulate(sc)
    assert r.link[r.link.t > 20].utilization.mean() > 0.9
    assert r.summary["web_objects"] > 500


@pytest.mark.parametrize("web, message", [
    (WebGroup(shape=1.0), "shape"),
    (WebGroup(load=1.0), "load"),
    (WebGroup(direction="up"), "direction"),
])
def test_bad_web_input(web, message):
    with pytest.raises(ValueError, match=message):
        cubiclab.simulate(Scenario(duration="1s", flows=[FlowGroup("reno")], web=[web]))


@pytest.mark.parametrize("bottleneck, message", [
    (Bottleneck(loss={"model": "bernoulli", "p": 1.0}), r"loss.p"),
    (Bottleneck(loss={"model": "poisson", "rate": -1}), r"loss.rate"),
    (Bottleneck(loss={"model": "gauss"}), r"loss.model"),
    (Bottleneck(queue="red", red={"min_th": 20, "max_th": 10}), "min_th"),
    (Bottleneck(queue="fq"), "bottleneck.queue"),
    (Bottleneck(queue="fq_codel", fq_codel={"quantum": 100}), r"bottleneck.fq_codel.quantum is 100; allowed: 256 to"),
    (Bottleneck(fq_codel={"flows": 0}), r"bottleneck.fq_codel.flows is 0; allowed: 1 to 65536"),
    (Bottleneck(fq_codel={"drop_batch": 0}), r"bottleneck.fq_codel.drop_batch"),
    (Bottleneck(fq_codel={"memory_limit": 2**32}), r"bottleneck.fq_codel.memory_limit .*allowed: 1 to 2147483648"),
    (Bottleneck(fq_codel={"target": "0ms"}), r"bottleneck.fq_codel.target"),
    (Bottleneck(fq_codel={"limit": 100}), r"bottleneck.fq_codel.*limit"),
    (Bottleneck(fq_codel={"ce_threshold": "0ms"}),
     r"bottleneck.fq_codel.ce_threshold is 0 ns; allowed: unset \(off, the default\) or 1 ns to"),
    (Bottleneck(fq_codel={"ce_threshold": "-1ms"}), r"bottleneck.fq_codel.ce_threshold: '-1ms' is negative"),
    (Bottleneck(fq_codel={"ce_threshold": "soon"}), r"bottleneck.fq_codel.ce_threshold: cannot parse 'soon'"),
    (Bottleneck(codel={"ce_threshold": "0ms"}),
     r"bottleneck.codel.ce_threshold is 0 ns; allowed: unset \(off, the default\) or 1 ns to"),
    (Bottleneck(red={"nodrop": True}),
     r"bottleneck.red.nodrop is true; allowed: true only with bottleneck.red.ecn = true"),
    (Bottleneck(codel={"ecn": "yes"}), r"bottleneck.codel.ecn"),
])
def test_bad_impairments(bottleneck, message):
    with pytest.raises(ValueError, match=message):
        cubiclab.simulate(Scenario(duration="1s", flows=[FlowGroup("reno")], bottleneck=bottleneck))
