"""The testbed: real kernel TCP through the user-space bottleneck emulator.

The runs need root, network namespaces and /dev/net/tun; where those are missing the tests
that need them skip, naming the reason. The checks that need no privileges run anywhere.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import cubiclab
from cubiclab import namespaces as netns
from cubiclab.kernel import tracing
from cubiclab.namespaces import KernelLabUnavailable
from cubiclab.scenario import WebGroup
from cubiclab.testbed import run as tbrun

REASON = tbrun.availability()
needs_root = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")


def _ours(prefix: str) -> list[str]:
    return [n for n in netns.list_namespaces() if n.startswith(prefix)]


def _scenario(**bottleneck) -> cubiclab.Scenario:
    return cubiclab.Scenario(duration="6s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms")],
                             bottleneck=cubiclab.Bottleneck(**bottleneck))


# ---- no privileges needed ---------------------------------------------------------------


def test_unknown_congestion_control_lists_the_kernels():
    available = tbrun.kernel_algorithms()
    sc = cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("tahoe", rtt="40ms")])
    with pytest.raises(ValueError) as e:
        tbrun.plan(sc)
    assert "flows[0].algorithm is 'tahoe'" in str(e.value)
    for name in available:
        assert name in str(e.value)


def test_web_processes_are_waited_for_until_the_runs_end():
    # The sender exits once its finite transfers are acknowledged, possibly long before the
    # run's end; the web processes run until the end. Each is given the time left to the
    # end plus WEB_EXIT_S: with the end 30 s ahead, at least 30 + 10 s (less the few
    # microseconds this test takes), never just WEB_EXIT_S.
    class Proc:
        def wait(self, timeout):
            self.timeout = timeout

    procs = [Proc(), Proc()]
    tbrun._wait_web(procs, time.monotonic_ns() + 30_000_000_000)
    assert all(30 + tbrun.WEB_EXIT_S - 1 < p.timeout <= 30 + tbrun.WEB_EXIT_S for p in procs)
    tbrun._wait_web(procs, time.monotonic_ns() - 5_000_000_000)  # a run whose end has passed
    assert all(p.timeout == tbrun.WEB_EXIT_S for p in procs)


def test_tcp_info_samples_are_streamed_to_a_file(tmp_path, monkeypatch):
    # The source appends its TCP_INFO samples to a CSV file in batches instead of keeping
    # them: with batches of 2, after 5 samples 4 are on disk and 1 in memory; closing writes
    # the last. Read back, the rows are the samples (a field the kernel's tcp_info lacks, None,
    # reads back as NaN).
    import importlib.util

    import pandas as pd

    spec = importlib.util.spec_from_file_location("_bulk", tbrun.BULK)
    bulk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bulk)
    monkeypatch.setattr(bulk._InfoLog, "BATCH", 2)
    width = len(bulk.INFO_COLUMNS)
    samples = [[1000 + k, k % 2] + [k] * (width - 3) + [None if k == 4 else 7] for k in range(5)]
    log = bulk._InfoLog(str(tmp_path / "info.csv"))
    for row in samples:
        log.add(row)
    assert (log.count, len(log.rows)) == (4, 1)
    log.close()
    got = pd.read_csv(tmp_path / "info.csv")
    assert list(got.columns) == bulk.INFO_COLUMNS and log.count == 5
    assert got.iloc[:4].astype("int64").values.tolist() == samples[:4]
    assert got.iloc[4, :-1].tolist() == samples[4][:-1] and np.isnan(got.iloc[4, -1])


def test_plan_follows_the_simulator_delays():
    # rtt 100 ms, bottleneck delay 10 ms one way: access = 100 - 20 = 80 ms, half each way,
    # so each direction carries 10 + 40 = 50 ms (crates/cubiclab-sim/src/sim.rs).
    if "cubic" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer cubic")
    sc = cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("cubic", rtt="100ms", count=2)],
                           bottleneck=cubiclab.Bottleneck(rate="10Mbps", delay="10ms"))
    p = tbrun.plan(sc)
    assert [(f["fwd_delay_ns"], f["rev_delay_ns"]) for f in p.flows] == [(50_000_000, 50_000_000)] * 2
    assert [f["port"] for f in p.flows] == [tbrun.BASE_PORT, tbrun.BASE_PORT + 1]
    with pytest.raises(ValueError, match="bound is 600"):
        tbrun.plan(sc.replace(duration="700s"))
    with pytest.raises(ValueError, match="params"):
        tbrun.plan(cubiclab.Scenario(flows=[cubiclab.FlowGroup("cubic", params={"beta": 717})]))


def test_receive_buffer_is_the_plans():
    # Forced (the default far above the BDP, or a pinned window's buffer), or None for the
    # kernel's autotuning within the scenario's tcp_rmem, set in the receiver's namespace.
    # A pinned 64 KB window forces ceil(65 536 x 256 / (2 x 160)) = 52 429 bytes: the
    # window 2 x 52 429 x 160 / 256 = 65 536 once the TUN path's ratio is measured.
    if "reno" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer reno")
    sc = cubiclab.Scenario(duration="2s", tcp_rmem="4096 131072 6291456",
                           flows=[cubiclab.FlowGroup("reno", rwnd="autotune"),
                                  cubiclab.FlowGroup("reno", rwnd="64KiB"), cubiclab.FlowGroup("reno")],
                           bottleneck=cubiclab.Bottleneck(rate="10Mbps", buffer="100packets"))
    p = tbrun.plan(sc)
    assert [f["rcvbuf"] for f in p.flows] == [None, 52_429, 8 << 20]
    assert p.receiver_sysctls == {"net.ipv4.tcp_rmem": "4096 131072 6291456"}


def _two_way_links() -> list:
    # Link a: 5 ms one way; link b: 10 ms.
    return [cubiclab.Link(name="a", rate="20Mbps", delay="5ms"), cubiclab.Link(name="b", rate="10Mbps", delay="10ms")]


def test_a_reverse_flows_ends_and_delays_are_swapped():
    # A reverse flow's data goes B to A: its sender runs in the receiver's namespace, and the
    # emulator's flow line gives the A-to-B way its ACKs' delay. Its data crosses link a's
    # reverse direction (5 ms, then its access delay: (40 - 5 - 10) / 2 = 12.5 ms), its ACKs
    # link b forward (10 + 12.5 ms): A to B 22.5 ms, B to A 17.5 ms. (The forward flow
    # crosses both links both ways: 15 ms of links and (40 - 30) / 2 = 5 ms of access each
    # way.) The emulator refuses a
    # route whose hops do not sum to its flow line's delay that way, so each flow line must
    # equal the sum of the route lines emulator_path writes for it.
    if "reno" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer reno")
    sc = cubiclab.Scenario(duration="2s", links=_two_way_links(), flows=[
        cubiclab.FlowGroup("reno", rtt="40ms", route=["a", "b"]),
        cubiclab.FlowGroup("reno", rtt="40ms", route=["a"], ack_route=["b"], direction="reverse", recovery="newreno",
                           rwnd="autotune")])
    with pytest.raises(ValueError, match="recovery"):
        tbrun.plan(sc)  # one recovery for all: a namespace-wide setting
    sc.flows[0].recovery = "newreno"
    p = tbrun.plan(sc)
    assert [(f["direction"], f["route"]) for f in p.flows] == [("forward", "a>b"), ("reverse", "a")]
    assert [(f["fwd_delay_ns"], f["rev_delay_ns"]) for f in p.flows] == [(20_000_000, 20_000_000),
                                                                          (22_500_000, 17_500_000)]
    routes = {}
    for line in p.compiled.path.splitlines():
        if line.startswith("route "):
            _, i, way, *hops = line.split()
            routes[int(i), way] = sum(int(h.split(":")[1]) for h in hops)
    assert routes == {(i, way): f[f"{way}_delay_ns"] for i, f in enumerate(p.flows) for way in ("fwd", "rev")}
    # Senders (no SACK) and receivers (an autotuned buffer within tcp_rmem) run on both sides.
    assert p.namespace_sysctls() == {ns: {"net.ipv4.tcp_sack": 0, "net.ipv4.tcp_rmem": "4096 131072 33554432"}
                                     for ns in ("sender", "receiver")}
    assert p.ways() == {"forward", "reverse"}
    # A reverse flow alone: its sender's settings where it sends from, its receiver's where
    # it receives.
    only = tbrun.plan(sc.replace(flows=sc.flows[1:]))
    assert only.namespace_sysctls() == {"sender": {"net.ipv4.tcp_rmem": "4096 131072 33554432"},
                                        "receiver": {"net.ipv4.tcp_sack": 0}}


def test_what_the_testbed_cannot_set_per_flow_is_refused():
    # A route metric rto_min below 200 ms also caps the delayed ACKs of the receivers on that
    # route (tcp_delack_max); with data both ways receivers share the senders' route.
    if "reno" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer reno")
    both = cubiclab.Scenario(duration="2s", min_rto="10ms", flows=[
        cubiclab.FlowGroup("reno"), cubiclab.FlowGroup("reno", direction="reverse")])
    with pytest.raises(ValueError, match="min_rto is 10 ms with data both ways"):
        tbrun.plan(both)
    assert tbrun.plan(both.replace(flows=both.flows[1:])).route_opts == {"rto_min": "10ms"}
    # Two ends in one namespace that need one setting two ways: the receiver's namespace
    # holds the forward flow's receiver (2) and the reverse flow's sender (1).
    p = tbrun.plan(both.replace(min_rto="200ms"))
    p.sender_sysctls, p.receiver_sysctls = {"net.ipv4.tcp_ecn": 1}, {"net.ipv4.tcp_ecn": 2}
    with pytest.raises(ValueError, match=r"receiver's namespace would need net\.ipv4\.tcp_ecn = 2 and 1"):
        p.namespace_sysctls()


def test_each_namespace_sets_tcp_ecn_from_its_senders_flows():
    # net.ipv4.tcp_ecn is per namespace: 1 (ask for ECN) where ECN flows send, 2 (Linux's
    # default: accept only) set where flows without it send; receivers listen, and accept
    # under either. A scenario without ECN sets nothing.
    rmem = {"net.ipv4.tcp_rmem": "4096 131072 33554432"}
    sc = cubiclab.Scenario(duration="2s", flows=[
        cubiclab.FlowGroup("cubic", ecn=True), cubiclab.FlowGroup("cubic", direction="reverse")])
    assert tbrun.plan(sc).namespace_sysctls() == {"sender": {**rmem, "net.ipv4.tcp_ecn": 1},
                                                  "receiver": {**rmem, "net.ipv4.tcp_ecn": 2}}
    plain = sc.replace(flows=[cubiclab.FlowGroup("cubic"), cubiclab.FlowGroup("cubic", direction="reverse")])
    assert tbrun.plan(plain).namespace_sysctls() == {"sender": rmem, "receiver": rmem}
    # A reverse ECN flow alone: its sender's namespace is the receiver's.
    only = tbrun.plan(sc.replace(flows=[cubiclab.FlowGroup("cubic", ecn=True, direction="reverse")]))
    assert only.namespace_sysctls() == {"sender": rmem, "receiver": {"net.ipv4.tcp_ecn": 1}}
    # Flows with and without ECN sending from one namespace cannot both have their way.
    mixed = sc.replace(flows=[cubiclab.FlowGroup("cubic", ecn=True), cubiclab.FlowGroup("cubic", ecn=False)])
    with pytest.raises(ValueError, match=r"forward flows with ecn = true and without it send from the sender's "):
        tbrun.plan(mixed)
    # A forward web session's client opens its connection from the receiver's side, where
    # a reverse ECN flow would make it ask for ECN too.
    web = sc.replace(flows=[cubiclab.FlowGroup("cubic", ecn=True, direction="reverse")],
                     web=[WebGroup(sessions=2, think="500ms", rtt="40ms", mean_size="10packets")])
    with pytest.raises(ValueError, match=r"receiver's namespace would need net\.ipv4\.tcp_ecn = 2 and 1"):
        tbrun.plan(web)


def test_a_testbed_plan_compiles_its_scenario_once(tmp_path, monkeypatch):
    # plan() compiles the scenario once and derives the flow plan, the emulator's path and
    # the web schedule from that one compiled form; the cache key and the run take it from
    # the plan. A reproduction plans each distinct run once (a run two entries share, too)
    # and hands the plan to the run.
    from cubiclab.experiments import testbed_backend
    from cubiclab.scenario import Scenario
    from cubiclab.sweep import Run
    from cubiclab.testbed.cache_key import kernel_run_key

    if "reno" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer reno")
    sc = cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("reno", count=2, rtt="40ms")],
                           bottleneck=cubiclab.Bottleneck(rate="10Mbps"),
                           web=[WebGroup(sessions=2, think="500ms", rtt="40ms", mean_size="10packets")])
    key = kernel_run_key(sc)  # compiles on its own, before counting starts
    compiled = []
    compile_ = Scenario.compile
    monkeypatch.setattr(Scenario, "compile", lambda self: compiled.append(self) or compile_(self))
    p = tbrun.plan(sc)
    assert compiled == [sc] and p.web and len(p.flows) == 2
    assert kernel_run_key(sc, p.compiled) == key and compiled == [sc]

    a, b = (Run(sc.replace(seed=seed)) for seed in (1, 2))
    a.key, b.key  # the simulator's cache keys compile too: made before counting
    compiled.clear()
    given = []

    def testbed(sc, planned=None, **kw):  # records the plan it is given instead of running
        given.append(planned)
        raise RuntimeError("not run here")

    monkeypatch.setattr(tbrun, "testbed", testbed)
    testbed_backend.run_all([[a, b], [a]], tmp_path, 600, log=None)
    assert compiled == [a.scenario, b.scenario]
    assert [x.scenario for x in given] == [a.scenario, b.scenario]


def test_without_root_a_clear_error(monkeypatch):
    available = tbrun.kernel_algorithms()
    if not available:
        pytest.skip("no /proc/sys/net/ipv4/tcp_available_congestion_control")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "root" in tbrun.availability()
    sc = cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup(available[0])])
    with pytest.raises(KernelLabUnavailable, match="root"):
        cubiclab.testbed(sc)


# ---- real runs -----------------------------------------------------------------------------


@needs_root
def test_rate_and_rtt_of_one_cubic_flow():
    rate, mss = 10e6, 1448
    res = cubiclab.testbed(_scenario(rate="10Mbps", buffer="100%BDP"))
    # Goodput counted by the receiving application after slow start: the wire carries
    # mss + 52 bytes per segment, so full use is 10 Mbit/s x 1448/1500 = 9.653 Mbit/s.
    steady = res.flows[res.flows.t > 1.0]
    goodput = steady.goodput_bps.mean()
    assert abs(goodput - rate * mss / (mss + 52)) < 0.10 * rate, goodput
    assert abs(steady.throughput_bps.mean() - rate) < 0.10 * rate
    info = res.info[res.info.t > 0.5]
    # The least RTT is the 40 ms path plus at most one 1500-byte serialization (1.2 ms);
    # allow 3 ms of scheduling on top.
    assert 40.0 <= info.min_rtt_us.min() / 1e3 <= 44.0
    # Every smoothed RTT lies between the path and the path plus a full buffer: 33 packets
    # (100% BDP = 50 kB / 1500 B) x 1.2 ms = 39.6 ms, plus the packet in service.
    assert info.rtt_us.min() / 1e3 >= 40.0
    assert info.rtt_us.max() / 1e3 <= 40.0 + 34 * 1.2 + 4.0
    # On average, the RTT is the path plus the emulator's mean queue (1.2 ms per packet,
    # one more in service) within a few ms: the queue the kernel sees is the one we report.
    q = res.link[res.link.t > 1.0].queue_packets.mean()
    assert abs(info[info.t > 1.0].rtt_us.mean() / 1e3 - (40.0 + 1.2 * (q + 1))) < 4.0
    # The emulator never held more than the buffer.
    assert res.summary["peak_queue_packets"] <= 33
    # Nothing was lost outside the emulator (it kept up).
    assert res.summary["drops_outside_emulator"] == 0
    assert res.summary["cwnd_source"] in ("tcp_probe", "tcp_info")
    assert len(res.cwnd) > 100 and (res.totals.cc_kernel == "cubic").all()
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


@needs_root
def test_random_loss_rate_is_reproduced():
    p = 0.01
    sc = cubiclab.Scenario(duration="4s", flows=[cubiclab.FlowGroup("reno", rtt="10ms")],
                           bottleneck=cubiclab.Bottleneck(rate="100Mbps", buffer="1000packets",
                                                          loss={"model": "bernoulli", "p": p}))
    res = cubiclab.testbed(sc, trace=False)
    e = res.summary["emulator"]
    n, k = e["fwd_tx_packets"], e["fwd_random_losses"]
    assert n > 1000
    # Binomial: k ~ B(n, p); 4 standard deviations.
    assert abs(k - n * p) < 4 * np.sqrt(n * p * (1 - p)), (n, k)
    # No buffer drops with a 1000-packet buffer, and the kernel retransmitted what was lost
    # (at least 90%: losses in the last RTT before the abortive close need not be).
    assert e["fwd_drops"] == 0
    assert res.totals.retransmits.sum() >= 0.9 * res.totals.random_losses.sum()
    # The link totals are the emulator's own counters, the simulator's table: one link, both
    # ways, its forward losses and bytes as above; the ACKs (reverse) lose nothing, and the
    # forward capacity is 100 Mbit/s x 4 s / 8 = 50 MB.
    t = res.link_totals.set_index("direction")
    assert list(t.name) == ["bottleneck", "bottleneck"] and set(res.link.link) == {0}
    assert t.loc["forward", "random_losses"] == k and t.loc["reverse", "random_losses"] == 0
    assert t.loc["forward", "tx_bytes"] >= res.link.tx_bytes.sum() > 0
    assert t.loc["forward", "capacity_bytes"] == 50_000_000
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


_UDP_RECEIVER = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((sys.argv[1], int(sys.argv[2]))); s.settimeout(2.0)
    print("ready", flush=True)
    got = []
    try:
        while True:
            got.append(s.recv(4096))
    except socket.timeout:
        pass
    print(len(got), sum(len(d) for d in got), len({d for d in got}), flush=True)
    snmp = open("/proc/net/snmp").read().splitlines()
    head, vals = [line.split()[1:] for line in snmp if line.startswith("Udp:")][:2]
    print(dict(zip(head, vals))["InCsumErrors"], flush=True)
""")


@needs_root
def test_udp_trains_cross_the_emulator_whole(tmp_path):
    # 50 UDP_SEGMENT sends of 20 datagrams of 1000 bytes: with UDP segmentation offload
    # the emulator reads each send as one packet (50 reads, 1000 arrivals), queues the
    # 1000 datagrams one by one, and writes trains the receiving kernel cuts back into
    # datagrams, with checksums it accepts (a wrong one is counted in InCsumErrors and
    # the datagram dropped). Every datagram's payload is distinct (its send and index),
    # so 1000 distinct datagrams of 1000 bytes arrive.
    from cubiclab.testbed.emu import Emulator, config_text
    from cubiclab.testbed.net import RECEIVER_IP, TunPath

    link = ('{"rate_bps": 100000000, "buffer": {"packets": 2000}, "queue": "droptail", "settings": {}, '
            '"loss": {"model": "none"}, "packet_bytes": 1500}')
    with TunPath() as net:
        cfg = config_text(netns_a=net.netns_path("sender"), tun_a="tb0", netns_b=net.netns_path("receiver"),
                          tun_b="tb0", netns_home=net.netns_path("emulator"), fwd_link=link, rev_link=link,
                          default_delay="1000000 1000000", max_duration_ns=60_000_000_000, sample_ns=100_000_000,
                          # Datagrams leave the link 80 us apart (1028 B at 100 Mbit/s): a loop
                          # that sleeps at least 200 us between deliveries finds two or more
                          # due each time, so it writes trains whatever the timer precision
                          # (without it, a loop woken on time for each wrote 1000, once in CI).
                          min_wait_ns=200_000)
        emu = Emulator(net.exec_args("emulator"), cfg, tmp_path)
        t_end = time.time() + 10
        while not (net.carrier("sender") and net.carrier("receiver")) and time.time() < t_end:
            time.sleep(0.02)
        rx = subprocess.Popen(net.exec_args("receiver") + [sys.executable, "-c", _UDP_RECEIVER, RECEIVER_IP, "46100"],
                              stdout=subprocess.PIPE, text=True)
        assert rx.stdout.readline().strip() == "ready"
        send = ("import socket, sys\n"
                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                "s.setsockopt(socket.IPPROTO_UDP, 103, 1000)\n"  # UDP_SEGMENT
                "s.connect((sys.argv[1], 46100))\n"
                "for k in range(50):\n"
                "    s.send(b''.join(bytes([k, i]) * 500 for i in range(20)))\n")
        subprocess.run(net.exec_args("sender") + [sys.executable, "-c", send, RECEIVER_IP], check=True, timeout=30)
        counts, csum_errors = rx.communicate(timeout=30)[0].split("\n")[:2]
        e = emu.stop().summary
    assert counts.split() == ["1000", "1000000", "1000"]
    assert csum_errors == "0"
    assert (e["fwd_reads"], e["fwd_arrivals"], e["fwd_delivered"], e["fwd_drops"]) == (50, 1000, 1000, 0)
    assert e["fwd_writes"] < 1000


_CHILD = textwrap.dedent("""
    import sys, cubiclab
    sc = cubiclab.Scenario(duration="20s", flows=[cubiclab.FlowGroup("cubic", rtt="20ms")],
                           bottleneck=cubiclab.Bottleneck(rate="5Mbps"))
    print("go", flush=True)
    cubiclab.testbed(sc, trace=True)
""")


def _start_child():
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "go"
    prefix = f"{netns.PREFIX}{child.pid}-"
    # The child may first wait for another process's kernel lab (one at a time per machine).
    t_end = time.time() + 180
    while len(_ours(prefix)) < 3 and time.time() < t_end:
        time.sleep(0.05)
    assert len(_ours(prefix)) == 3, "the testbed's namespaces did not appear"
    time.sleep(1.0)
    return child, prefix


@needs_root
def test_ctrl_c_removes_everything():
    child, prefix = _start_child()
    child.send_signal(signal.SIGINT)
    child.wait(20)
    assert not _ours(prefix)
    root = tracing.tracefs_root()
    if root is not None and (root / "instances").is_dir():
        assert not [d for d in (root / "instances").iterdir() if d.name.startswith(prefix)]


@needs_root
def test_cleanup_after_a_killed_run():
    child, prefix = _start_child()
    child.kill()
    child.wait(10)
    time.sleep(0.3)
    # Hold the kernel lab (the child's death released it) so that no other process's run
    # starts and, in its own start-up cleanup, removes the child's namespaces first.
    from cubiclab.namespaces import _LOCK

    _LOCK.acquire(log=None)
    try:
        gone = tbrun.cleanup()
    finally:
        _LOCK.release()
    assert not _ours(prefix)
    assert any(n.startswith(prefix) for n in gone["namespaces"])


@needs_root
def test_codel_holds_the_standing_queue_near_its_target():
    # One Reno flow into 1000 packets at 20 Mbit/s (0.6 ms per packet, BDP 100 packets at
    # 40 ms): drop-tail would let the queue grow toward 1000 packets (600 ms). Reno's slow
    # start has no HyStart, so it doubles past the BDP and builds a queue of ~100 packets
    # (60 ms) within one RTT; CoDel (the path crate's, as in the simulator) must drop while
    # the sojourn stays above its 5 ms target for 100 ms. (CUBIC's HyStart may leave slow
    # start below the BDP on a jittery machine and never build a standing queue in 6 s: a
    # CI run saw 0 drops.) The path crate's unit test bounds the late mean sojourn by 3
    # targets, 15 ms = 25 packets.
    sc = cubiclab.Scenario(duration="6s", flows=[cubiclab.FlowGroup("reno", rtt="40ms")],
                           bottleneck=cubiclab.Bottleneck(rate="20Mbps", buffer="1000packets", queue="codel"))
    res = cubiclab.testbed(sc, trace=False)
    q = res.link[res.link.t > 2.0].queue_packets.mean()
    assert q < 25, q
    assert res.summary["bottleneck_drops"] > 0
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


@needs_root
def test_web_sessions_request_the_simulators_objects():
    # Sessions both ways beside one long-lived flow. Each session draws its objects from
    # its own stream in the simulator's order, so the sizes it requests are the
    # simulator's; every completion takes at least two of the session's RTTs (handshake,
    # then the data and its acknowledgement).
    sc = cubiclab.Scenario(duration="6s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms")],
                           bottleneck=cubiclab.Bottleneck(rate="20Mbps"),
                           web=[WebGroup(sessions=8, direction="both", think="500ms", rtt="exp:40ms",
                                         mean_size="10packets")])
    res = cubiclab.testbed(sc, trace=False)
    sim = cubiclab.simulate(sc)
    assert len(res.web) > 10
    assert set(res.web.session) <= set(sim.web.session)
    for session, got in res.web.groupby("session"):
        want = list(sim.web[sim.web.session == session].bytes)
        n = min(len(want), len(got))
        assert list(got.bytes)[:n] == want[:n], session
    rtt_s = {len(tbrun.plan(sc).flows) + i: s["rtt_ns"] / 1e9 for i, s in enumerate(tbrun.plan(sc).web)}
    assert (res.web.fct_s >= res.web.session.map(rtt_s) * 2).all()
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


def test_reproduce_names_why_the_testbed_refuses_a_run():
    # `cubiclab reproduce --testbed` says why a run stays simulator-only: a rate above the
    # emulator's 1 Gbit/s, a duration above the bound the user can raise.
    from cubiclab.experiments.testbed_backend import why_not
    from cubiclab.sweep import Run

    if "cubic" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer cubic")

    def run(duration, rate):
        return Run(cubiclab.Scenario(duration=duration, flows=[cubiclab.FlowGroup("cubic", rtt="40ms")],
                                     bottleneck=cubiclab.Bottleneck(rate=rate)))

    assert "above the emulator's 1000 Mbit/s" in why_not(run("2s", "2500Mbps"), 600)
    assert "bound is 600" in why_not(run("700s", "10Mbps"), 600)
    assert why_not(run("700s", "10Mbps"), 800) is None


def test_the_rate_limit_reads_a_schedules_peak(tmp_path):
    # A schedule's steps start at 0 s and replace the fixed rate: 100 Mbit/s fixed with a
    # 1500 Mbit/s step asks 1500 of the emulator. A trace opportunity carries 1500 bytes, so
    # three in one millisecond are 3 x 1500 x 8 bits per ms = 36 Mbit/s.
    from cubiclab.experiments.testbed_backend import why_not
    from cubiclab.testbed.emu import peak_rate_bps
    from cubiclab.sweep import Run

    def bottleneck(schedule):
        return cubiclab.Bottleneck(rate="100Mbps", schedule=schedule)

    steps = bottleneck({"steps": [["0s", "50Mbps"], ["1s", "1500Mbps"]], "repeat": "2s"})
    sc = cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms")], bottleneck=steps)
    assert peak_rate_bps(sc.compile()["bottleneck"]) == 1_500_000_000
    assert "schedule's peak rate 1500 Mbit/s is above" in why_not(Run(sc), 600)
    (tmp_path / "link.trace").write_text("1\n2\n2\n2\n5\n")
    trace = cubiclab.traces.load_trace(str(tmp_path / "link.trace"))
    assert peak_rate_bps({"rate": 100_000_000, "schedule": trace}) == 36_000_000


def test_quick_mode_agreement_compares_the_side_of_the_tolerance():
    # Quick mode judges nothing ("indicative" on both sides): agreement is whether the
    # simulator's and the kernel's single values fall on the same side of the tolerance
    # (here Band 1 +- 0.2: 0.9 and 1.1 inside, 1.5 outside); a side that measured nothing
    # agrees with nothing.
    from cubiclab.experiments.base import Outcome
    from cubiclab.experiments.claims import Band, ClaimSpec, judge
    from cubiclab.experiments.testbed_backend import columns

    spec = ClaimSpec(id="c", quote="q", where="w", source="stated in text", paper="1", metric="m", unit="",
                     accept=Band(1.0, 0.2), rationale="r")

    def outcome(value):
        return Outcome(name="e", title="t", seed="000", figure="f", setup="s",
                       verdicts=[judge(spec, [] if value is None else [value], indicative=True)])

    sim = outcome(0.9)
    assert [(r["simulator_verdict"], r["kernel_verdict"], r["agree"]) for r in columns(sim, outcome(1.1))] == [
        ("indicative: inside", "indicative: inside", True)]
    assert columns(sim, outcome(1.5))[0]["agree"] is False
    assert columns(sim, outcome(None))[0]["agree"] is None


def test_reproduce_skips_an_entry_the_testbed_cannot_finish(tmp_path, monkeypatch):
    # An entry's analysis needs all its runs: one run above the emulator's rate keeps its
    # partner off the testbed too, but the partner, shared with another entry that the
    # testbed can take, runs once for that entry and is not named refused.
    from cubiclab.experiments import testbed_backend

    if "cubic" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer cubic")
    from cubiclab.sweep import Run

    def run(rate):
        return Run(cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms")],
                                     bottleneck=cubiclab.Bottleneck(rate=rate)))

    ok, fast, other = run("10Mbps"), run("2500Mbps"), run("20Mbps")
    ran = []

    def testbed(sc, **kw):  # records the call instead of running the kernel
        ran.append(sc)
        raise RuntimeError("not run here")

    monkeypatch.setattr(tbrun, "testbed", testbed)
    kr = testbed_backend.run_all([[ok, fast], [other]], tmp_path, 600, log=None)
    assert list(kr.refused) == [fast.key] and ran == [other.scenario] and list(kr.failed) == [other.key]
    kr = testbed_backend.run_all([[ok, fast], [ok]], tmp_path, 600, log=None)
    assert list(kr.refused) == [fast.key] and ran[1:] == [ok.scenario]


def test_a_testbed_budget_leaves_the_rest_pending(tmp_path, monkeypatch):
    # No run starts whose planned end (time spent so far + its 2 s) lies beyond the budget.
    # The (fake) testbed returns at once; the pause between runs is set to 1.5 s. Budget
    # 1 s: no 2 s run fits. Budget 3 s: the first fits (0 + 2), the second does not
    # (1.5 s of pause + 2 > 3) and its entry says how much of it is done.
    from cubiclab.experiments import testbed_backend
    from cubiclab.experiments.base import Outcome
    from cubiclab.sweep import Run

    if "cubic" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer cubic")

    def run(rate):
        return Run(cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms")],
                                     bottleneck=cubiclab.Bottleneck(rate=rate)))

    a, b = run("10Mbps"), run("20Mbps")
    ran = []

    def testbed(sc, **kw):  # records the call instead of running the kernel
        ran.append(sc)
        raise RuntimeError("not run here")

    monkeypatch.setattr(tbrun, "testbed", testbed)
    monkeypatch.setattr(testbed_backend, "LOCK_PAUSE_S", 1.5)
    kr = testbed_backend.run_all([[a], [b]], tmp_path, 600, log=None, budget_s=1.0)
    assert ran == [] and kr.pending == {a.key, b.key}
    kr = testbed_backend.run_all([[a], [b]], tmp_path, 600, log=None, budget_s=3.0)
    assert ran == [a.scenario] and kr.pending == {b.key}

    class Entry:
        def outcome(self, mode, error):
            return Outcome("e", "", "000", "", "", error=error)

    o = testbed_backend.kernel_outcome(Entry(), [b], kr, None, tmp_path)
    assert o.error.startswith("not wholly run on the kernel yet: 0 of 1 testbed runs done")
    assert o.evidence == "kernel testbed"


@needs_root
def test_reproduce_prints_the_projected_lab_time(tmp_path, monkeypatch):
    # Two 2 s runs of one entry: each its duration and SETUP_S (15 s) of set-up, with one
    # LOCK_PAUSE_S (2 s) between them: 2 x (2 + 15) + 2 = 36 s = 0.6 min.
    import io

    from cubiclab.experiments import testbed_backend
    from cubiclab.sweep import Run

    if "cubic" not in tbrun.kernel_algorithms():
        pytest.skip("this kernel does not offer cubic")
    runs = [Run(cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms")],
                                  bottleneck=cubiclab.Bottleneck(rate=rate))) for rate in ("10Mbps", "20Mbps")]
    monkeypatch.setattr(tbrun, "testbed", lambda sc, **kw: pytest.fail("no run within a budget of 0 s"))
    log = io.StringIO()
    testbed_backend.run_all([runs], tmp_path, 600, log=log, budget_s=0, names=["entry-a"])
    assert testbed_backend.lab_time_s(runs) == 36.0
    assert "2 testbed runs, 0.1 min of run time; projected lab time 0.6 min" in log.getvalue()
    assert "  entry-a: 2 runs, 0.6 min" in log.getvalue()


def test_one_kernel_lab_at_a_time():
    # A second process's kernel lab waits for the first to finish, and says whose run it
    # waits for: the child takes the lock, reports it, and writes "released" only just before
    # its exit drops the lock, so the parent can only hold it after that line.
    import io
    import subprocess
    import sys
    import tempfile

    from cubiclab.namespaces import _LOCK

    with tempfile.TemporaryDirectory() as d:
        mark = os.path.join(d, "mark")
        child = subprocess.Popen(
            [sys.executable, "-c",
             "import sys, time; from cubiclab.namespaces import _LOCK; _LOCK.acquire(log=None); "
             "print('locked', flush=True); time.sleep(0.5); "
             f"open({mark!r}, 'w').write('released')"],
            stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "locked"
        log = io.StringIO()
        _LOCK.acquire(log=log)
        try:
            assert open(mark).read() == "released"
            assert f"held by pid {child.pid}" in log.getvalue()
        finally:
            _LOCK.release()
        child.wait(10)


@needs_root
def test_pcap_of_what_the_emulator_forwards(tmp_path):
    # The capture holds every segment that left either link (super-packets cut into the
    # segments they stand for), with the kernels' own headers: counts match the emulator's
    # totals (no random loss here, which the tap is after), and each connection's ACKs
    # never acknowledge data that has not crossed.
    import dpkt

    from cubiclab.testbed.net import SENDER_IP

    rate, rtt = 20e6, 0.04
    path = tmp_path / "tb.pcap"
    sc = cubiclab.Scenario(duration="4s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms", count=2)],
                           bottleneck=cubiclab.Bottleneck(rate="20Mbps", buffer="100%BDP"),
                           record=cubiclab.Record(pcap=str(path)))
    res = cubiclab.testbed(sc, trace=False)
    e = res.summary["emulator"]
    with open(path, "rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == 101
        packets = [(ts, dpkt.ip.IP(buf)) for ts, buf in reader]
    sender = bytes(int(o) for o in SENDER_IP.split("."))
    fwd = [ip for _, ip in packets if ip.src == sender]
    assert (len(fwd), len(packets) - len(fwd)) == (e["fwd_tx_packets"], e["rev_tx_packets"])
    assert (e["fwd_pcap_records"], e["rev_pcap_records"]) == (e["fwd_tx_packets"], e["rev_tx_packets"])
    times = [ts for ts, _ in packets]
    assert times == sorted(times)
    # Segments, not super-packets: none above the 1500-byte MTU, and the bytes add up to
    # what the forward link serialized.
    assert max(ip.len for ip in fwd) <= 1500
    assert sum(ip.len for ip in fwd) == e["fwd_tx_bytes"]
    port_of_flow = [f["port"] for f in tbrun.plan(sc).flows]
    ports = set(port_of_flow)
    isn, sent_end, last_ack = {}, {}, {}
    for _, ip in packets:
        tcp = ip.data
        if not isinstance(tcp, dpkt.tcp.TCP):
            continue
        port = tcp.dport if ip.src == sender else tcp.sport
        assert port in ports
        if ip.src == sender:
            if tcp.flags & dpkt.tcp.TH_SYN:
                isn[port] = tcp.seq
                continue
            payload = ip.len - ip.hl * 4 - tcp.off * 4  # only the headers are captured
            end = (tcp.seq - isn[port] - 1 + payload) % 2**32
            sent_end[port] = max(sent_end.get(port, 0), end)
        elif tcp.flags & dpkt.tcp.TH_ACK and not tcp.flags & dpkt.tcp.TH_SYN and port in isn:
            # Relative to the SYN: byte 1 is the first of the payload.
            ack = (tcp.ack - isn[port] - 1) % 2**32
            assert last_ack.get(port, 0) <= ack <= sent_end.get(port, 0) + 1  # +1: a FIN
            last_ack[port] = ack
    assert sorted(last_ack) == sorted(ports)
    # The last ACK that crossed covers what the receiving application read, within a
    # bandwidth-delay product (20 Mbit/s x 40 ms = 100 kB: ACKs still on the way, data
    # received but not yet read when the run stopped).
    bdp = rate * rtt / 8
    for flow, delivered in zip(res.totals.flow, res.totals.delivered_bytes):
        assert abs(last_ack[port_of_flow[flow]] - delivered) <= bdp, (flow, last_ack, delivered)
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


@needs_root
def test_flows_open_in_the_order_of_their_start_times(tmp_path):
    # Whichever flow's SYN leaves first wins the first slow start (docs/agreement/README.md,
    # d02), so the sender opens its flows in the order of their start times, also when a
    # late wake-up finds several due (it used to open them in the flows' order): here the
    # second flow is due 0.1 ms before the first, and in every run its SYN crosses first.
    import dpkt

    from cubiclab.testbed.net import SENDER_IP

    sender = bytes(int(o) for o in SENDER_IP.split("."))
    for seed in range(3):
        path = tmp_path / f"start{seed}.pcap"
        sc = cubiclab.Scenario(duration="1s", seed=seed, start_jitter="0s",
                               flows=[cubiclab.FlowGroup("cubic", rtt="20ms", start="100us"),
                                      cubiclab.FlowGroup("reno", rtt="20ms")],
                               bottleneck=cubiclab.Bottleneck(rate="10Mbps", buffer="100%BDP"),
                               record=cubiclab.Record(pcap=str(path)))
        res = cubiclab.testbed(sc, trace=False)
        with open(path, "rb") as f:
            syns = [ip.data.dport for _, buf in dpkt.pcap.Reader(f) for ip in [dpkt.ip.IP(buf)]
                    if ip.src == sender and isinstance(ip.data, dpkt.tcp.TCP) and ip.data.flags & dpkt.tcp.TH_SYN]
        ports = [f["port"] for f in tbrun.plan(sc).flows]
        assert syns == [ports[1], ports[0]], (seed, syns, res.summary["flow_start_late_us"])
        assert all(late >= 0 for late in res.summary["flow_start_late_us"])


@needs_root
def test_a_rate_schedule_steps_the_delivered_rate():
    # bottleneck.schedule on the testbed: the emulator serializes at the schedule's rate
    # from the run's time 0 (cubiclab-path's Link::vary, as the simulator). With a queue
    # that never empties (two CUBIC flows, a 200-packet buffer: cwnd after a loss stays
    # above 0.7 x (200 + BDP) packets, more than the BDP of either rate), the link carries
    # exactly rate x time: bytes in (a, b] = rate x (b - a) / 8, within a packet at each end
    # and the interval records' own lateness (2% allows 10 ms at 20 Mbit/s).
    steps = [(0.0, 20e6), (2.0, 5e6), (4.0, 20e6)]
    sc = cubiclab.Scenario(duration="6s",
                           flows=[cubiclab.FlowGroup("cubic", rtt="40ms", count=2, start_spacing="0s")],
                           bottleneck=cubiclab.Bottleneck(rate="20Mbps", buffer="200packets",
                                                          schedule={"steps": [["0s", "20Mbps"], ["2s", "5Mbps"],
                                                                              ["4s", "20Mbps"]]}))
    res = cubiclab.testbed(sc, trace=False)
    link = res.link
    for a, b in [(1.0, 2.0), (2.5, 4.0), (4.5, 5.5)]:
        rate = next(r for t, r in reversed(steps) if t <= a)
        got = link[(link.t > a + 1e-9) & (link.t <= b + 1e-9)].tx_bytes.sum()
        want = rate * (b - a) / 8
        assert abs(got - want) <= 0.02 * want, (a, b, got, want)
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


@needs_root
def test_pcap_link_captures_the_named_link(tmp_path):
    # A flow across "a" (20 Mbit/s) then "b" (10 Mbit/s), and a cross flow on "a" alone:
    # capturing "b" shows only the long flow's data, and exactly the bytes the emulator's
    # link 1 serialized forward.
    import dpkt

    from cubiclab.testbed.net import SENDER_IP

    path = tmp_path / "b.pcap"
    sc = cubiclab.Scenario(duration="3s", links=[cubiclab.Link(name="a", rate="20Mbps"),
                                                 cubiclab.Link(name="b", rate="10Mbps")],
                           flows=[cubiclab.FlowGroup("cubic", rtt="40ms", route=["a", "b"]),
                                  cubiclab.FlowGroup("reno", rtt="40ms", route=["a"])],
                           record=cubiclab.Record(pcap=str(path), pcap_link="b"))
    res = cubiclab.testbed(sc, trace=False)
    e = res.summary["emulator"]
    sender = bytes(int(o) for o in SENDER_IP.split("."))
    with open(path, "rb") as f:
        fwd = [ip for _, buf in dpkt.pcap.Reader(f) if (ip := dpkt.ip.IP(buf)).src == sender]
    port_of_flow = [f["port"] for f in tbrun.plan(sc).flows]
    assert {ip.data.dport for ip in fwd} == {port_of_flow[0]}
    assert sum(ip.len for ip in fwd) == e["link1_fwd_tx_bytes"]


@needs_root
def test_a_reverse_flow_sends_from_the_receivers_side():
    # One CUBIC flow each way over one 20 Mbit/s link with 50 packets of buffer each way:
    # the reverse flow's sender runs in the receiver's namespace, its data crosses the
    # reverse direction, where the forward flow's ACKs queue behind it. Each way carries its
    # flow's data after the start-up, at most the link's payload rate (19.3 Mbit/s) and, with
    # the other flow's ACKs beside it and its own ACKs queued behind the other's data, at
    # least 40% of it (measured: 62-83% on both sides, the split between the flows varying
    # from run to run). Each flow's data is counted on the direction it crosses: its bytes
    # there are its delivered payload in 1500-byte packets (within the data in flight at
    # the end and its retransmissions).
    sc = cubiclab.Scenario(duration="4s", bottleneck=cubiclab.Bottleneck(rate="20Mbps", buffer="50packets",
                                                                         reverse_buffer="50packets"),
                           flows=[cubiclab.FlowGroup("cubic", rtt="40ms"),
                                  cubiclab.FlowGroup("cubic", rtt="40ms", direction="reverse")])
    res = cubiclab.testbed(sc)
    t = res.totals.set_index("flow")
    assert list(t.direction) == ["forward", "reverse"] and list(t.route) == ["bottleneck"] * 2
    assert (t.cc_kernel == "cubic").all() and set(res.cwnd.flow) == {0, 1}
    goodput = res.flows[res.flows.t > 1.0].groupby("flow").goodput_bps.mean()
    assert goodput.between(0.4 * 20e6 * 1448 / 1500, 20e6 * 1448 / 1500).all(), goodput
    on_link = res.flows.groupby("flow").throughput_bps.sum() * 0.1 / 8  # 100 ms records
    assert np.allclose(on_link / (t.delivered_bytes * 1500 / 1448), 1.0, atol=0.05), on_link
    # Each direction's bytes: its flow's data and the other flow's ACKs, within its capacity.
    lt = res.link_totals.set_index("direction")
    for way, flow in (("forward", 0), ("reverse", 1)):
        assert on_link[flow] < lt.loc[way, "tx_bytes"] <= lt.loc[way, "capacity_bytes"]
        assert t.loc[flow, "drops"] == ((res.drops.flow == flow) & (res.drops.direction == way)).sum()
    # Both ways carry each flow's path delay: its least RTT is its 40 ms and at most a
    # packet time (0.6 ms) and a few ms of scheduling more.
    assert (res.info.groupby("flow").min_rtt_us.min().between(40_000, 44_000)).all()
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


@needs_root
def test_a_parking_lot_carries_each_flow_over_its_route():
    # Links a (20 Mbit/s) and b (10 Mbit/s); a long CUBIC flow crosses both, a CUBIC flow a
    # alone, a Reno flow b alone. A flow's bytes are counted on every link it crosses (as
    # the simulator counts), so the long flow's are twice its delivered payload in
    # 1500-byte packets and a cross flow's once (within the data in flight at the end and
    # the retransmissions); each link is someone's bottleneck, busy after 1 s; drops on a
    # link are of the flows routed over it; and the link table is the simulator's: one
    # row per link per sample.
    sc = cubiclab.Scenario(duration="4s", links=[cubiclab.Link(name="a", rate="20Mbps", delay="5ms"),
                                                 cubiclab.Link(name="b", rate="10Mbps", delay="5ms")],
                           flows=[cubiclab.FlowGroup("cubic", rtt="40ms", route=["a", "b"]),
                                  cubiclab.FlowGroup("cubic", rtt="40ms", route=["a"]),
                                  cubiclab.FlowGroup("reno", rtt="40ms", route=["b"])])
    res = cubiclab.testbed(sc)
    t = res.totals.set_index("flow")
    assert list(t.route) == ["a>b", "a", "b"]
    on_link = res.flows.groupby("flow").throughput_bps.sum() * 0.1 / 8  # 100 ms records
    on_links = on_link / (t.delivered_bytes * 1500 / 1448)
    assert np.allclose(on_links, [2.0, 1.0, 1.0], rtol=0.05), on_links
    assert (res.link[res.link.t > 1.0].groupby("link").utilization.mean() > 0.9).all()
    routed = {0: {0, 1}, 1: {0, 2}}
    for (link, way), d in res.drops.groupby(["link", "direction"]):
        assert way == "reverse" or set(d.flow) <= routed[link], (link, set(d.flow))
    sim = cubiclab.simulate(sc)
    assert set(sim.link.columns) <= set(res.link.columns)
    assert len(res.link) == len(sim.link) == 2 * 40 and list(res.link.link) == list(sim.link.link)
    assert np.allclose(res.link.t, sim.link.t)
    assert not _ours(f"{netns.PREFIX}{os.getpid()}-")


@needs_root
def test_dctcp_under_step_marking_reacts_to_marks_on_both_sides():
    # DCTCP (its BPF port, the receiver's CE echo too) through a step marker of K = 20
    # packets at 20 Mbit/s, RTT 20 ms (BDP 35 packets), 100 packets of buffer: the queue
    # passes K every window, so data is marked CE and never dropped. Both sides negotiate
    # ECN, get marks and reduce (CWR) without a loss. On the kernel, the sender counts as
    # delivered-CE (tcpi_delivered_ce) exactly the segments the emulator marked: DCTCP's
    # receiver echoes each CE state as it changes (measured: 1601 and 1601 in 8 s, the
    # simulator 1795, reductions 59 and 59).
    from cubiclab.testbed import bpf

    if bpf.availability() or "dctcp" not in bpf.ports():
        pytest.skip(f"no dctcp BPF port here: {bpf.availability()}")
    sc = cubiclab.Scenario.load("scenarios/agreement/e03_dctcp_step_20M_20ms.toml").replace(duration="5s")
    sim, tb = cubiclab.simulate(sc), cubiclab.testbed(sc)
    for res in (sim, tb):
        t = res.totals.iloc[0]
        assert t.ecn and t.ce_marks > 100 and t.ecn_reductions > 10 and t.loss_events == 0, t
    t = tb.totals.iloc[0]
    assert t.cc_kernel.endswith("dctcp")
    assert abs(t.delivered_ce - t.ce_marks) <= 0.02 * t.ce_marks, t
    assert tb.summary["bottleneck_marks"] >= t.ce_marks and tb.summary["bottleneck_drops"] == 0
    # One run a side cannot judge agreement (the matrix's row e03 does, 10 runs a side); this
    # checks the simulator's known deviation stays what was measured. The simulator marks
    # more: where the ACK clock lands segments in the bottleneck's packet slot sets which
    # arrivals find K packets ahead, and the kernel's host turnaround moves that phase from
    # run to run and with load (docs/agreement/README.md, e05/e10). Measured, sim / kernel:
    # 5 s runs 1105 against 915-990 (x1.12-1.21) on a quiet and a loaded machine, 20 s
    # 4464 / 3833 (x1.165) quiet, the matrix's 20 s ensembles 4355 / 3981 (x1.09) at load 8-11.
    assert 1.0 <= sim.totals.ce_marks[0] / t.ce_marks <= 1.3
