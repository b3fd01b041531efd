"""What a capture of the bottleneck says about idle time and loss synchronisation.

    python scripts/link_pcap.py RUN.pcap [MORE.pcap ...] [--rate 10Mbps] [--from 3.5]

Reads the capture of what leaves the bottleneck (either side's: `cubiclab run --pcap`, or a
testbed run whose scenario sets `[record] pcap`; both are raw IPv4 with the timestamp of
each packet's end of transmission) and prints, from `--from` seconds after the first data
segment:

* idle: the time the forward link sent nothing, as a share of the span, and the gaps
  (each gap less one packet's transmission at `--rate`);
* drop clusters: a segment first seen as a retransmission never left the link before, so
  it was dropped (spurious retransmissions are not counted); its drop time is taken as the
  departure of the flow's next new segment less 6 packet times, and drops less than 15 ms
  apart form one cluster. How many flows each cluster hits is the synchronisation of the
  losses: drop-tail drops that hit every flow at once make every flow reduce at once;
* ACKs: the share acknowledging one, two or no new segments, and the share of data
  segments carrying PSH (Linux's receiver ACKs a full-sized PSH segment as soon as the
  application has read everything: `tcp_measure_rcv_mss` sets ICSK_ACK_PUSHED,
  `__tcp_cleanup_rbuf` sends the ACK).

Flows are told apart by address and port; the forward direction is the one carrying data.
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from cubiclab import units  # noqa: E402

PCAP_US = 0xA1B2C3D4
PCAP_NS = 0xA1B23C4D
LINKTYPE_RAW = 101
TCP_PSH = 0x08
TCP_SYN = 0x02
CLUSTER_NS = 15_000_000


def read_pcap(path: str | Path) -> pd.DataFrame:
    """One row per TCP packet: t (ns), src, dst (address << 16 | port), seq, ack, payload
    bytes, wire length, TCP flags, the IP header's ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0),
    3 CE)."""
    b = Path(path).read_bytes()
    if len(b) < 24:
        raise ValueError(f"{path}: not a pcap file (shorter than its header)")
    magic, = struct.unpack_from("<I", b, 0)
    if magic not in (PCAP_US, PCAP_NS):
        raise ValueError(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    if struct.unpack_from("<I", b, 20)[0] != LINKTYPE_RAW:
        raise ValueError(f"{path}: link type must be raw IPv4 ({LINKTYPE_RAW}), as both sides write")
    scale = 1 if magic == PCAP_NS else 1000
    rows = []
    off = 24
    while off + 16 <= len(b):
        sec, frac, incl, orig = struct.unpack_from("<IIII", b, off)
        p = b[off + 16:off + 16 + incl]
        off += 16 + incl
        ihl = (p[0] & 15) * 4
        total, = struct.unpack_from(">H", p, 2)
        src, dst = struct.unpack_from(">II", p, 12)
        sport, dport, seq, ack = struct.unpack_from(">HHII", p, ihl)
        doff = (p[ihl + 12] >> 4) * 4
        rows.append((sec * 1_000_000_000 + frac * scale, src << 16 | sport, dst << 16 | dport, seq, ack,
                     total - ihl - doff, orig, p[ihl + 13], p[1] & 3))
    return pd.DataFrame(rows, columns=["t", "src", "dst", "seq", "ack", "payload", "wire", "tcp_flags", "ecn"])


def data_segments(pkts: pd.DataFrame) -> pd.DataFrame:
    """The data segments in departure order, with `rel` (bytes from the flow's first
    segment) and `retx` (starts below what the flow sent before)."""
    d = pkts[pkts.payload > 0].sort_values("t", kind="stable").reset_index(drop=True)
    rel = np.zeros(len(d), np.int64)
    retx = np.zeros(len(d), bool)
    for _, idx in d.groupby("src").indices.items():
        s = (d.seq.values[idx].astype(np.int64) - int(d.seq.values[idx[0]])) % (1 << 32)
        end = s + d.payload.values[idx]
        high = np.maximum.accumulate(np.concatenate([[0], end[:-1]]))
        rel[idx] = s
        retx[idx] = s < high
    return d.assign(rel=rel, retx=retx)


def idle_gaps(d: pd.DataFrame, rate_bps: int) -> np.ndarray:
    """Idle time before each departure but the first (ns): the gap less its transmission."""
    tx = d.wire.values[1:] * 8 * 1_000_000_000 // rate_bps
    return np.diff(d.t.values) - tx


def drops(d: pd.DataFrame, rate_bps: int) -> pd.DataFrame:
    """Segments retransmitted that never left the link before: (t, flow) of each drop."""
    slot = 1500 * 8 * 1_000_000_000 // rate_bps
    rows = []
    for flow, g in d.groupby("src"):
        first = g[~g.retx]
        order = np.argsort(first.rel.values)
        rel, t = first.rel.values[order], first.t.values[order]
        seen = set(rel.tolist())
        for tr, s in zip(g.t.values[g.retx.values], g.rel.values[g.retx.values]):
            if s in seen:
                continue
            seen.add(s)
            i = np.searchsorted(rel, s)
            rows.append((t[i] - 6 * slot if i < len(rel) else tr, flow))
    return pd.DataFrame(rows, columns=["t", "flow"]).sort_values("t")


def clusters(dr: pd.DataFrame) -> pd.DataFrame:
    """Drops less than CLUSTER_NS apart form a cluster: its drops and flows hit."""
    c = np.concatenate([[0], np.cumsum(np.diff(dr.t.values) > CLUSTER_NS)]) if len(dr) else []
    return dr.assign(c=c).groupby("c").agg(drops=("flow", "size"), flows=("flow", "nunique"))


def ack_sizes(pkts: pd.DataFrame, mss: int) -> pd.Series:
    """Per pure ACK, the new segments it acknowledges (0: a duplicate)."""
    a = pkts[(pkts.payload == 0) & ((pkts["tcp_flags"].values & TCP_SYN) == 0)].sort_values("t", kind="stable")
    step = a.groupby("dst").ack.diff().dropna() % (1 << 32)
    return (step / mss).round().astype(int)


def report(path: str, rate_bps: int, from_s: float) -> str:
    pkts = read_pcap(path)
    d = data_segments(pkts)
    if d.empty:
        raise ValueError(f"{path}: no data segments")
    t0 = d.t.values[0] + int(from_s * 1e9)
    span = d.t.values[-1] - t0
    gaps = idle_gaps(d, rate_bps)[d.t.values[1:] >= t0]
    idle = gaps[gaps > 0]
    cl = clusters(drops(d, rate_bps).query("t >= @t0"))
    hit = cl.flows.value_counts().sort_index()
    mss = int(d.payload.max())
    late = pkts[pkts.t >= t0]
    acks = ack_sizes(late, mss).value_counts(normalize=True)
    psh = (late[late.payload > 0]["tcp_flags"].values & TCP_PSH).astype(bool).mean()
    lines = [
        f"{path}: {span / 1e9:.1f} s from {from_s:g} s, {len(d)} data segments, {int(d.retx.sum())} retransmitted",
        f"  idle {idle.sum() / span:.4f} of the time: {len(idle)} gaps, "
        f"{int((idle > 300_000).sum())} over 0.3 ms, longest {idle.max(initial=0) / 1e6:.2f} ms",
        f"  drop clusters {len(cl)} ({cl.drops.mean() if len(cl) else 0:.2f} drops each), by flows hit: "
        + ", ".join(f"{k}: {v}" for k, v in hit.items()),
        "  ACKs of " + ", ".join(f"{k}: {acks.get(k, 0):.3f}" for k in (0, 1, 2))
        + f" new segments; data with PSH {psh:.3f}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcap", nargs="+")
    ap.add_argument("--rate", default="10Mbps", help="the bottleneck's rate (default 10Mbps)")
    ap.add_argument("--from", dest="from_s", type=float, default=0.0,
                    help="seconds after the first data segment to start from (default 0)")
    a = ap.parse_args(argv)
    rate = units.parse_rate(a.rate, "--rate")
    for p in a.pcap:
        try:
            print(report(p, rate, a.from_s))
        except (OSError, ValueError) as e:
            print(f"link_pcap: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
