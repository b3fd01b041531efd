"""scripts/link_pcap.py and scripts/slot_phase.py on captures written here, whose idle time,
drops, arrivals and marks are known."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("link_pcap", ROOT / "scripts" / "link_pcap.py")
link_pcap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(link_pcap)
sys.path.insert(0, str(ROOT / "scripts"))
_spec = importlib.util.spec_from_file_location("slot_phase", ROOT / "scripts" / "slot_phase.py")
slot_phase = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(slot_phase)

MSS = 1448
SLOT_NS = 1_200_000  # 1500 bytes at 10 Mbit/s


def packet(src: int, sport: int, seq: int, ack: int, payload: int, flags: int, ecn: int = 0) -> bytes:
    """IPv4 (20 bytes, no options) and TCP (20 bytes) headers only, lengths as on the wire;
    `ecn`: the IP ECN field."""
    total = 40 + payload
    ip = struct.pack(">BBHHHBBHII", 0x45, ecn, total, 0, 0, 64, 6, 0, src, 0x0A020000 | (src & 0xFFFF))
    tcp = struct.pack(">HHIIBBHHH", sport, 5201, seq, ack, 5 << 4, flags, 65535, 0, 0)
    return ip + tcp


def write(path: Path, records: list[tuple[int, bytes, int]]) -> None:
    """A microsecond pcap of raw IPv4: (time ns, headers, wire length) per record."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101)]
    for t, hdr, wire in records:
        out.append(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000 // 1000, len(hdr), wire))
        out.append(hdr)
    path.write_bytes(b"".join(out))


def test_idle_gaps_drops_and_push_share(tmp_path):
    # Flow A (10.1.0.0) sends segments 0..=7, 9 and 10 back to back (each departure one
    # slot after the last), 8 having been dropped; the link then idles 3 slots and 8 leaves
    # as a retransmission; flow B (10.1.0.1) sends 0 and 1 back to back after it. PSH on
    # A's 1 and 3 and B's 1: 3 of 13 segments. Departures are end-of-transmission times,
    # so a gap of one slot is no idle time: the one idle gap is 3 slots = 3.6 ms.
    a, b = 0x0A010000, 0x0A010001
    order = [(a, s, 8 if s in (1, 3) else 0) for s in (0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8)] + [(b, 0, 0), (b, 1, 8)]
    t, recs = 0, []
    for k, (src, seg, psh) in enumerate(order):
        t += SLOT_NS * (4 if k == 10 else 1)
        recs.append((t, packet(src, 10000, 1000 + seg * MSS, 1, MSS, 0x10 | psh), 1500))
    path = tmp_path / "x.pcap"
    write(path, recs)
    d = link_pcap.data_segments(link_pcap.read_pcap(path))
    assert len(d) == 13 and d.retx.sum() == 1
    gaps = link_pcap.idle_gaps(d, 10_000_000)
    assert sorted(gaps[gaps > 0].tolist()) == [3 * SLOT_NS]
    # The drop of A's 8 is dated by A's next first transmission (9, leaving at 9 slots)
    # less 6 slots: 3 slots, one cluster of one flow.
    dr = link_pcap.drops(d, 10_000_000)
    assert dr.t.tolist() == [3 * SLOT_NS] and dr.flow.nunique() == 1
    text = link_pcap.report(str(path), 10_000_000, 0.0)
    assert "1 retransmitted" in text and "by flows hit: 1: 1" in text
    assert f"data with PSH {3 / 13:.3f}" in text


def test_slot_phase_residuals_and_marks_by_segments_ahead(tmp_path):
    # One flow at 20 Mbit/s (1500 bytes: 0.6 ms a packet), its four segments leaving back to
    # back at 0.6, 1.2, 1.8 and 2.4 ms; the emulator read 0 and 1 together at 0 (one GSO
    # read), 2 at 0.95 ms and 3 at 1.85 ms. Ahead at arrival (arrived no later, not yet
    # left): 0 for segment 0, 1 for segment 1 (0 leaves at 0.6), 1 for 2 (1 leaves at 1.2),
    # 0 for 3 (2 left at 1.8). Residuals to the next departure: 0.6, 0.6, 0.25, 0.55 ms.
    # Segments 1 and 2 are CE: marked share 0 with none ahead, 1 with one.
    slot, src = 600_000, 0x0A010000
    recs = [((k + 1) * slot, packet(src, 10000, 1000 + k * MSS, 1, MSS, 0x10, 3 if k in (1, 2) else 2), 1500)
            for k in range(4)]
    write(tmp_path / "x.pcap", recs)
    emu = tmp_path / "emu"
    emu.mkdir()
    start = 5_000_000_000
    (emu / "summary.txt").write_text(f"start_ns {start}\noffload 1\n")
    reads = [(0, 2, 1000), (950_000, 1, 1000 + 2 * MSS), (1_850_000, 1, 1000 + 3 * MSS)]
    (emu / "io.csv").write_text("t_ns,dir,kind,segments,queue_packets,seq,ack,late_ns,dur_ns\n" + "".join(
        f"{start + t},0,read,{n},0,{seq},1,0,0\n" for t, n, seq in reads))
    a, packet_ms = slot_phase.arrivals(tmp_path / "x.pcap", emu, 5201, 0.0)
    assert packet_ms == 0.6
    assert a.ahead.tolist() == [0, 1, 1, 0]
    assert a.residual.round(6).tolist() == [0.6, 0.6, 0.25, 0.55]
    assert a.groupby("ahead").ce.mean().to_dict() == {0: 0.0, 1: 1.0}
