"""`record.pcap`: the capture, read back by an independent reader (dpkt), agrees with the
run's own totals, and its TCP headers are consistent the way Wireshark's analysis needs."""

from __future__ import annotations

import dpkt
import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Record, Scenario

MSS = 1448
RATE = 20_000_000
RTT_S = 0.04


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("pcap") / "run.pcap"
    sc = Scenario(name="pcap", duration="10s", seed=3,
                  bottleneck=Bottleneck(rate="20Mbps", buffer="100%BDP"),
                  flows=[FlowGroup("cubic", rtt="40ms"), FlowGroup("reno", rtt="40ms", start="1s")],
                  record=Record(pcap=str(path)))
    res = cubiclab.simulate(sc)
    with open(path, "rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == 101  # LINKTYPE_RAW: IPv4 packets, no link header
        packets = [(ts, dpkt.ip.IP(buf)) for ts, buf in reader]
    return res, packets


def flow_of(ip) -> int:
    """Flow index from the address (10.1.f / 10.2.f, f in the last two octets)."""
    return int.from_bytes(ip.src[2:4] if ip.src[1] == 1 else ip.dst[2:4], "big")


def test_every_data_byte_that_left_the_bottleneck_is_captured(run):
    res, packets = run
    data = [ip for _, ip in packets if ip.src[1] == 1 and not ip.data.flags & dpkt.tcp.TH_SYN]
    # The forward link carries only these two flows' data (ACKs take the reverse link; no
    # random loss, no web sessions): the IP lengths add up to the bytes it serialized.
    assert sum(ip.len for ip in data) == res.summary["utilization"] * RATE * 10 / 8
    assert all(ip.len == MSS + 52 for ip in data)


def test_data_counts_match_the_totals(run):
    res, packets = run
    buffer = round(RATE * RTT_S / 8 / 1500)  # 100% BDP in packets
    for flow in (0, 1):
        t = res.totals.set_index("flow").loc[flow]
        captured = [ip.data for _, ip in packets
                    if flow_of(ip) == flow and ip.src[1] == 1 and not ip.data.flags & dpkt.tcp.TH_SYN]
        # Sent = captured (left the link) + dropped + still waiting at the end: at most a full
        # buffer and the packet in service.
        waiting = t.segments_sent - t.drops - len(captured)
        assert 0 <= waiting <= buffer + 1
        seqs = [tcp.seq for tcp in captured]
        assert all(s % MSS == 0 for s in seqs)
        # A sequence number seen again is a retransmission; every one the sender counted
        # crossed the link unless the buffer dropped it. (Drops can outnumber the
        # retransmissions: losses near the end still wait for RACK's reorder timer or a
        # probe, so the difference is signed.)
        again = len(seqs) - len(set(seqs))
        assert int(t.retransmits) - int(t.drops) <= again <= int(t.retransmits)


def test_acks_are_consistent(run):
    res, packets = run
    sent_end = {0: 0, 1: 0}  # highest data byte that has crossed the link, per flow
    last_ack = {0: 0, 1: 0}
    ts_recent = {(f, side): 0 for f in (0, 1) for side in (1, 2)}  # latest TSval per flow, per side
    sacks = 0
    for ts, ip in packets:
        tcp, flow = ip.data, flow_of(ip)
        opts = dict(dpkt.tcp.parse_opts(tcp.opts))
        # TSval is the capture time in milliseconds; TSecr echoes the latest TSval the other
        # side's packets carried across the tap (RFC 7323's TS.Recent), 0 before the first.
        ts_val, ts_ecr = (int.from_bytes(opts[dpkt.tcp.TCP_OPT_TIMESTAMP][i:i + 4], "big") for i in (0, 4))
        assert ts_val == int(ts * 1000 + 1e-6)
        side = ip.src[1]  # 1: the sender's packets, 2: the receiver's
        assert ts_ecr == ts_recent[flow, 3 - side]
        ts_recent[flow, side] = ts_val
        if tcp.flags & dpkt.tcp.TH_SYN:
            continue
        if ip.src[1] == 1:
            sent_end[flow] = max(sent_end[flow], tcp.seq + ip.len - 52)
            continue
        # The cumulative ACK never goes back and never covers data that has not crossed.
        assert last_ack[flow] <= tcp.ack <= sent_end[flow]
        last_ack[flow] = tcp.ack
        raw = opts.get(dpkt.tcp.TCP_OPT_SACK, b"")
        # Linux's pure ACK (tcp_options_write): 52 bytes with the timestamps, and with n SACK
        # blocks NOP NOP kind length + 8 n more; the simulator sends it at that size.
        assert ip.len == 52 + (4 + len(raw) if raw else 0)
        if raw:
            blocks = [(int.from_bytes(raw[i:i + 4], "big"), int.from_bytes(raw[i + 4:i + 8], "big"))
                      for i in range(0, len(raw), 8)]
            assert 1 <= len(blocks) <= 3
            # RFC 2883: a first block below the ACK or inside the second is a D-SACK.
            dsack = blocks[0][0] < tcp.ack or (len(blocks) > 1 and blocks[1][0] <= blocks[0][0]
                                                and blocks[0][1] <= blocks[1][1])
            for left, right in blocks[1 if dsack else 0:]:
                assert (right - left) % MSS == 0 and right > left > tcp.ack
            sacks += 1
    assert sacks > 0  # the runs lose packets, so the receivers SACK
    for flow in (0, 1):
        delivered = int(res.totals.set_index("flow").loc[flow, "delivered_bytes"])
        # The last ACK acknowledges what was delivered in order, less what arrived within the
        # last round trip (its ACK still on the way): at most rate x RTT.
        assert delivered - RATE * RTT_S / 8 <= last_ack[flow] <= delivered


def handshake(packets, flow):
    """(window scale, window) of a flow's SYN and of its SYN-ACK."""
    syns = [ip.data for _, ip in packets if flow_of(ip) == flow and ip.data.flags & dpkt.tcp.TH_SYN]
    assert len(syns) == 2
    return [(dict(dpkt.tcp.parse_opts(t.opts))[dpkt.tcp.TCP_OPT_WSCALE][0], t.win) for t in syns]


def ack_windows(packets, flow, scale):
    """(acknowledged byte, window in bytes) of each ACK of a flow (the window field << the
    SYN-ACK's scale)."""
    return [(ip.data.ack, ip.data.win << scale) for _, ip in packets
            if flow_of(ip) == flow and ip.src[1] == 2 and not ip.data.flags & dpkt.tcp.TH_SYN]


def test_handshake_and_acks_tell_the_advertised_window(run):
    _, packets = run
    for flow in (0, 1):
        # The SYN: the sender's default socket (Linux 6.18's tcp_rmem[2] 32 MiB): scale
        # ilog2(32 MiB) - 15 = 10, window 65 536 rounded down to advmss 1460 = 64 240.
        # The SYN-ACK: the receiver's forced buffer (no rwnd: 4 x (BDP + buffer) raised to
        # 8 MiB); the listener's lock limits the scale to its full space: ilog2(8 MiB) - 15
        # = 8; its first window 8 388 264 B, at most 65 535 unscaled.
        assert handshake(packets, flow) == [(10, 64_240), (8, 65_535)]
        # tcp_select_window: the window grows from 8 388 264 B (8 391 168 in units of 256)
        # by two segments per segment to 2 x 8 MiB x 160 / 256 = 10 485 760 B (rcv_window's
        # test), which the run reaches (it delivers far more than the 725 segments that
        # takes). Its right edge never moves back; with segments held out of order the
        # window itself shrinks as the edge holds and the ACK advances.
        acks = ack_windows(packets, flow, 8)
        edges = [ack + win for ack, win in acks]
        assert all(a <= b for a, b in zip(edges, edges[1:]))
        wins = [win for _, win in acks]
        assert wins[0] == 8_391_168 and max(wins) == 10_485_760
    data = [ip.data.win for _, ip in packets if ip.src[1] == 1 and not ip.data.flags & dpkt.tcp.TH_SYN]
    # The sender receives no data: its window stays at tcp_init_buffer_space's
    # min(64 240, 65 536 - 1460) = 64 076, aligned up to 1024: 64 512 = 63 << 10.
    assert set(data) == {63}


def test_a_pinned_window_is_advertised_without_a_scale(tmp_path):
    # rwnd = 64 KiB: SO_RCVBUF 52 429, full space 52 429 < 2^16, so the SYN-ACK announces
    # scale 0 and its first window 36 x 1448 = 52 128 B; once the first segment set the
    # scaling ratio the window is 65 536 B, which __tcp_select_window without a scale rounds
    # down to whole segments: 45 x 1448 = 65 160 B in every ACK after the first few.
    path = tmp_path / "pinned.pcap"
    sc = Scenario(duration="2s", seed=3, bottleneck=Bottleneck(rate="20Mbps"),
                  flows=[FlowGroup("cubic", rtt="40ms", rwnd="64KiB")], record=Record(pcap=str(path)))
    cubiclab.simulate(sc)
    with open(path, "rb") as f:
        packets = [(ts, dpkt.ip.IP(buf)) for ts, buf in dpkt.pcap.Reader(f)]
    assert handshake(packets, 0) == [(10, 64_240), (0, 52_128)]
    wins = [win for _, win in ack_windows(packets, 0, 0)]
    assert wins[0] >= 52_128 and wins[-1] == 65_160 and max(wins) == 65_160


def test_pcap_flows_captures_only_the_chosen_flows(tmp_path):
    path = tmp_path / "one.pcap"
    sc = Scenario(duration="3s", seed=3, bottleneck=Bottleneck(rate="20Mbps"),
                  flows=[FlowGroup("cubic", rtt="40ms", count=3)], record=Record(pcap=str(path), pcap_flows=[1]))
    res = cubiclab.simulate(sc)
    with open(path, "rb") as f:
        packets = [dpkt.ip.IP(buf) for _, buf in dpkt.pcap.Reader(f)]
    assert {flow_of(ip) for ip in packets} == {1}
    data = [ip for ip in packets if ip.src[1] == 1 and not ip.data.flags & dpkt.tcp.TH_SYN]
    t = res.totals.set_index("flow").loc[1]
    # Flow 1's data that left the link: all it sent but the drops and what still waits
    # (at most the buffer, 100% BDP = 67 packets, and the one in service).
    assert 0 <= t.segments_sent - t.drops - len(data) <= 68


def test_bad_pcap_paths_name_the_field(tmp_path):
    sc = Scenario(duration="1s", flows=[FlowGroup("reno")])
    with pytest.raises(ValueError, match="record.pcap"):
        cubiclab.simulate(sc.replace(record=Record(pcap="")))
    with pytest.raises(ValueError, match=r"record.pcap_flows\[1\] is 4; allowed: a long-lived flow index in \[0, 0\]"):
        sc.replace(record=Record(pcap="x.pcap", pcap_flows=[0, 4])).validate()
    with pytest.raises(ValueError, match="record.pcap_flows is set without record.pcap"):
        sc.replace(record=Record(pcap_flows=[0])).validate()
    with pytest.raises(ValueError, match="record.pcap: cannot create"):
        cubiclab.simulate(sc.replace(record=Record(pcap=str(tmp_path / "no" / "such" / "dir.pcap"))))


def test_cli_pcap(tmp_path):
    from cubiclab.cli import main

    out = tmp_path / "cli.pcap"
    assert main(["run", "--duration", "2s", "--out", str(tmp_path), "--quiet", "--no-plots", "--pcap", str(out)]) == 0
    with open(out, "rb") as f:
        assert sum(1 for _ in dpkt.pcap.Reader(f)) > 1000
    assert not list(tmp_path.glob("*.partial"))


def test_pcap_link_captures_the_named_link(tmp_path):
    # A flow across "a" (20 Mbit/s) then "b" (10 Mbit/s), and a cross flow on "a" alone.
    # Capturing "b" shows only the long flow's data, and every data byte b serialized; "a"
    # shows both flows.
    def captured(link: str | None):
        path = tmp_path / f"{link}.pcap"
        sc = Scenario(duration="3s", seed=3,
                      links=[cubiclab.Link(name="a", rate="20Mbps"), cubiclab.Link(name="b", rate="10Mbps")],
                      flows=[FlowGroup("cubic", rtt="40ms", route=["a", "b"]),
                             FlowGroup("reno", rtt="40ms", route=["a"])],
                      record=Record(pcap=str(path), pcap_link=link))
        res = cubiclab.simulate(sc)
        with open(path, "rb") as f:
            data = [ip for _, buf in dpkt.pcap.Reader(f) if (ip := dpkt.ip.IP(buf)).src[1] == 1
                    and not ip.data.flags & dpkt.tcp.TH_SYN]
        return res, data

    res, on_b = captured("b")
    assert {flow_of(ip) for ip in on_b} == {0}
    lt = res.link_totals.set_index(["name", "direction"])
    assert sum(ip.len for ip in on_b) == lt.loc[("b", "forward"), "tx_bytes"]
    _, on_a = captured(None)
    assert {flow_of(ip) for ip in on_a} == {0, 1}
    assert sum(ip.len for ip in on_a) == lt.loc[("a", "forward"), "tx_bytes"]
    with pytest.raises(ValueError, match=r'record.pcap_link is "c", not a link; allowed: "a", "b"'):
        Scenario(links=[cubiclab.Link(name="a"), cubiclab.Link(name="b")],
                 flows=[FlowGroup(route=["a"])], record=Record(pcap="x.pcap", pcap_link="c")).validate()
    with pytest.raises(ValueError, match="record.pcap_link is set without record.pcap"):
        Scenario(flows=[FlowGroup()], record=Record(pcap_link="bottleneck")).validate()
