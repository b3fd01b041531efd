"""Where in the bottleneck's transmission slot a flow's segments arrive, and what it does to
a time-threshold marker (issue 27, row e05).

    python scripts/slot_phase.py sweep SCENARIO.toml --flow 1 --rtts 40ms,40.1ms,40.2ms [--seeds 4]
    python scripts/slot_phase.py testbed RUN.pcap EMU_DIR --port 47001

A segment sent on an ACK reaches the bottleneck one round trip after the segment that ACK
acknowledges left it, plus the two hosts' turnaround. While the link is busy its
departures fall on a grid of one packet time (0.6 ms for 1500 bytes at 20 Mbit/s), so the
arrival's offset in that grid is (RTT + turnaround) mod the packet time, and the wait
behind the packet in service (the "residual") follows from it. Under DualPI2's 1 ms step a
segment with one L4S packet ahead of it is marked only when the residual exceeds 0.4 ms,
so the share of marks, DCTCP's alpha and its window follow the phase.

* `sweep`: the simulator's ensemble (the testbed's host timing, as `scripts/agreement.py`
  runs it) at each of the given RTTs (set on every flow group): the flow's mean cwnd, its
  share and the run's CE marks. A few tenths of a millisecond move the phase through a
  whole slot.
* `testbed`: a kept testbed run (`cubiclab.testbed.run.testbed(..., keep_dir=D,
  io_trace=N)` with `[record] pcap`): each data segment of the flow whose receiver listens
  on `--port` (arrival: the emulator's read, `EMU_DIR/io.csv`; departure: the capture, the
  end of its transmission), the residual at its arrival (time to the next departure of any
  packet, when one follows within a packet time), and its CE share by how many of the
  flow's own segments were ahead of it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from link_pcap import read_pcap  # noqa: E402

MSS = 1448
#: IP ECN field value of a CE-marked packet.
CE = 3


def sweep(path: str, flow: int, rtts: list[str], seeds: int) -> str:
    import cubiclab
    from cubiclab.scenario import Scenario, as_on_testbed
    from cubiclab.testbed.ensemble import run_metrics

    base = as_on_testbed(Scenario.load(path))
    lines = [f"{'rtt':>8} {'cwnd_mean':>9} {'share':>6} {'CE marks':>8}  per seed cwnd_mean"]
    for rtt in rtts:
        sc = base.replace()
        for g in sc.flows:
            g.rtt = rtt
        ms = [run_metrics(cubiclab.simulate(sc.replace(seed=s))) for s in range(1, seeds + 1)]
        cw = [m[f"cwnd_mean[{flow}]"] for m in ms]
        lines.append(f"{rtt:>8} {np.mean(cw):9.2f} {np.mean([m[f'share[{flow}]'] for m in ms]):6.3f} "
                     f"{np.mean([m.get('ce_marks', np.nan) for m in ms]):8.0f}  " + " ".join(f"{x:.2f}" for x in cw))
    return "\n".join(lines)


def arrivals(pcap: str | Path, emu_dir: str | Path, port: int, from_s: float) -> tuple[pd.DataFrame, float]:
    """The data segments to `port` from `from_s` s after the first arrival: arrival and
    departure (ns), CE, the flow's segments ahead at arrival, and the residual (ms) to the
    next departure of any packet (NaN when none follows within a packet time); and the
    packet time (ms, the median gap between departures)."""
    pk = read_pcap(pcap)
    emu = Path(emu_dir)
    start = int(dict(line.split(" ", 1) for line in (emu / "summary.txt").read_text().splitlines())["start_ns"])
    io = pd.read_csv(emu / "io.csv")
    data = pk[(pk.payload > 0) & ((pk.dst & 0xFFFF) == port)]
    if data.empty:
        raise SystemExit(f"{pcap}: no data segments to port {port}")
    departures = np.sort(pk[pk.payload > 0].t.values)
    exit_at = dict(zip(data.seq, data.t))
    ce = dict(zip(data.seq, data.ecn == CE))
    lo, hi = int(data.seq.min()), int(data.seq.max())
    reads = io[(io.kind == "read") & (io.dir == 0) & (io.seq >= lo) & (io.seq <= hi)].sort_values("t_ns")
    rows = []
    for t, seq, n in zip(reads.t_ns - start, reads.seq, reads.segments):
        for i in range(n):
            s = (seq + i * MSS) & 0xFFFFFFFF
            if s in exit_at:
                rows.append((t, exit_at[s], ce[s]))
    a = pd.DataFrame(rows, columns=["arr", "dep", "ce"])
    a = a[a.arr >= a.arr.min() + from_s * 1e9].reset_index(drop=True)
    arr, dep = a.arr.values, a.dep.values
    a["ahead"] = [int(((arr[:j] <= arr[j]) & (dep[:j] > arr[j])).sum()) for j in range(len(a))]
    slot = float(np.median(np.diff(departures))) / 1e6
    nxt = np.searchsorted(departures, arr, side="right")
    res = np.full(len(a), np.nan)
    ok = nxt < len(departures)
    res[ok] = (departures[nxt[ok]] - arr[ok]) / 1e6
    a["residual"] = np.where(res <= slot, res, np.nan)
    return a, slot


def testbed(pcap: str, emu_dir: str, port: int, from_s: float) -> str:
    a, slot = arrivals(pcap, emu_dir, port, from_s)
    res = a.residual.dropna().values
    hist, _ = np.histogram(res, bins=np.linspace(0, slot, 7))
    lines = [f"{len(a)} segments; packet time {slot:.3f} ms",
             "residual at arrival (ms), share per sixth of a slot: "
             + " ".join(f"{h:.3f}" for h in hist / max(1, hist.sum()))
             + f"; mean {res.mean():.3f}",
             "CE share by the flow's segments ahead at arrival:"]
    for k, g in a.groupby("ahead"):
        lines.append(f"  {k}: {g.ce.mean():.3f} of {len(g)}")
    lines.append(f"CE share of all: {a.ce.mean():.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep")
    s.add_argument("scenario")
    s.add_argument("--flow", type=int, required=True)
    s.add_argument("--rtts", required=True, help="comma-separated, e.g. 40ms,40.1ms")
    s.add_argument("--seeds", type=int, default=4)
    t = sub.add_parser("testbed")
    t.add_argument("pcap")
    t.add_argument("emu_dir")
    t.add_argument("--port", type=int, required=True)
    t.add_argument("--from", dest="from_s", type=float, default=2.0, help="seconds after the first arrival")
    a = ap.parse_args(argv)
    if a.cmd == "sweep":
        print(sweep(a.scenario, a.flow, a.rtts.split(","), a.seeds))
    else:
        print(testbed(a.pcap, a.emu_dir, a.port, a.from_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
