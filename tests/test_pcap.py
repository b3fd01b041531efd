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
        if dpkt.tcp.TCP_OPT_SACK in opts:
            raw = opts[dpkt.tcp.TCP_OPT_SACK]
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


def test_handshake_tells_the_window_scale(run):
    _, packets = run
    syns = [ip.data for _, ip in packets if ip.data.flags & dpkt.tcp.TH_SYN]
    assert len(syns) == 4  # SYN and SYN-ACK per flow
    assert all(dict(dpkt.tcp.parse_opts(t.opts))[dpkt.tcp.TCP_OPT_WSCALE] == b"\x0e" for t in syns)


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
