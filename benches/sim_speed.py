"""Speed, flatness and memory of the simulator, as ratios against peers measured in the
same run (machines here are noisy; absolute times are only context).

    python3 benches/sim_speed.py            # cubiclab only: flatness and memory
    python3 benches/sim_speed.py --ns3      # also ns-3 3.44 (needs .ns3env, see README)
    python3 benches/sim_speed.py --baseline DIR   # also an older build (a folder holding a
                                            # cubiclab package with its _core extension):
                                            # each line's speed as a ratio to it, same run

Prints, per scenario, delivered data packets per wall second for cubiclab and ns-3 and
their ratio, the utilisation each measured, the cost per packet from 10 Mbps to 10 Gbps and
from 1 to 1000 flows, and peak memory of short and long runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT.parent / "shared" / "peers" / "ns3_dumbbell.py"


def cubiclab_run(rate_mbps, rtt_ms, flows, secs, alg="cubic"):
    """The ns-3 peer's dumbbell: flow i starts at 0.1 i s, buffer one BDP in packets,
    access links folded into the RTT."""
    import cubiclab

    sc = cubiclab.Scenario(
        name="bench", duration=f"{secs}s", start_jitter="0ms",
        bottleneck=cubiclab.Bottleneck(rate=f"{rate_mbps}Mbps", buffer="100%BDP", delay=f"{rtt_ms / 2 - 2}ms"),
        flows=[cubiclab.FlowGroup(alg, count=flows, rtt=f"{rtt_ms}ms", start_spacing="0.1s")],
        record=cubiclab.Record(interval="1s"),
    )
    t0 = time.perf_counter()
    r = cubiclab.simulate(sc)
    wall = time.perf_counter() - t0
    pkts = r.totals.delivered_bytes.sum() / 1448
    return {"util": r.summary["goodput_utilization"], "pkts": pkts, "wall": wall, "pps": pkts / wall,
            "events_per_pkt": r.summary["events"] / max(pkts, 1)}


def timed(rate_mbps, rtt_ms, flows, secs, alg, baseline):
    """`cubiclab_run` here, and (best of two, interleaved) in the `baseline` build too when
    given: returns (this build's run, the baseline's or None)."""
    if not baseline:
        return cubiclab_run(rate_mbps, rtt_ms, flows, secs, alg), None
    env = dict(os.environ, PYTHONPATH=str(baseline))
    args = [sys.executable, __file__, "--one", json.dumps([rate_mbps, rtt_ms, flows, secs, alg])]
    best = {}
    for _ in range(2):
        out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
        b = json.loads(out.stdout.strip().splitlines()[-1])
        c = cubiclab_run(rate_mbps, rtt_ms, flows, secs, alg)
        best["b"] = b if b["pps"] > best.get("b", {"pps": 0})["pps"] else best["b"]
        best["c"] = c if c["pps"] > best.get("c", {"pps": 0})["pps"] else best["c"]
    return best["c"], best["b"]


def vs(c, b) -> str:
    return f" | x{c['pps'] / b['pps']:.2f} of baseline ({b['pps'] / 1e6:.2f} M pkt/s)" if b else ""


def ns3_run(rate_mbps, rtt_ms, flows, secs, alg="TcpCubic"):
    py = ROOT / ".ns3env" / "bin" / "python"
    if not py.exists():
        py = ROOT.parent / ".ns3env" / "bin" / "python"
    out = subprocess.run([str(py), str(PEER), str(rate_mbps), str(rtt_ms), str(flows), str(secs), alg],
                         capture_output=True, text=True, timeout=3600)
    m = re.search(r"run_wall=([\d.]+)s util=([\d.]+) data_pkts=(\d+) pkts_per_wall_s=(\d+)", out.stdout)
    if not m:
        raise RuntimeError(f"ns-3 peer failed: {out.stdout[-500:]} {out.stderr[-500:]}")
    return {"wall": float(m[1]), "util": float(m[2]), "pkts": int(m[3]), "pps": int(m[4])}


def peak_rss_mb(secs):
    code = ("import resource, cubiclab;"
            f"cubiclab.simulate(cubiclab.Scenario(duration='{secs}s', bottleneck=cubiclab.Bottleneck(rate='100Mbps'),"
            "flows=[cubiclab.FlowGroup('cubic', count=4, rtt='40ms')], record=cubiclab.Record(interval='1s')));"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns3", action="store_true", help="also run the ns-3 peer")
    ap.add_argument("--alg", default="cubic")
    ap.add_argument("--baseline", type=Path, help="folder with an older cubiclab build to compare against")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # one cubiclab_run, JSON in and out (baseline runs)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(cubiclab_run(*json.loads(args.one))))
        return
    report = {}

    print("== against ns-3 (same dumbbell, same run)")
    ns3_alg = {"cubic": "TcpCubic", "reno": "TcpNewReno"}.get(args.alg, "TcpCubic")
    for rate, rtt, n, secs in [(100, 100, 2, 20), (100, 40, 8, 20), (1000, 40, 4, 5)]:
        c, b = timed(rate, rtt, n, secs, args.alg, args.baseline)
        line = (f"{rate:5d} Mbps {rtt:3d} ms {n:2d} flows {secs:3d} s: cubiclab util {c['util']:.3f} "
                f"{c['pps'] / 1e6:6.2f} M pkt/s ({c['events_per_pkt']:.1f} events/pkt)" + vs(c, b))
        if args.ns3:
            p = ns3_run(rate, rtt, n, secs, ns3_alg)
            line += f" | ns-3 util {p['util']:.3f} {p['pps'] / 1e3:7.1f} k pkt/s | speed ratio {c['pps'] / p['pps']:7.0f}x"
            report[f"{rate}/{rtt}/{n}"] = {"cubiclab": c, "ns3": p}
        print(line, flush=True)

    print("== cost per packet against rate (1 flow, 40 ms): flat means the same pkt/s")
    base = None
    for rate in (10, 100, 1000, 10000):
        secs = max(2, min(200, int(2e6 * 1500 * 8 / (rate * 1e6))))
        c, b = timed(rate, 40, 1, secs, args.alg, args.baseline)
        base = base or c["pps"]
        print(f"  {rate:6d} Mbps: {c['pps'] / 1e6:6.2f} M pkt/s  (x{c['pps'] / base:.2f} of 10 Mbps)" + vs(c, b),
              flush=True)

    print("== cost per packet against flows (1 Gbps, 40 ms)")
    base = None
    for n in (1, 10, 100, 1000):
        c, b = timed(1000, 40, n, 20 if n < 1000 else 120, args.alg, args.baseline)
        base = base or c["pps"]
        print(f"  {n:5d} flows: {c['pps'] / 1e6:6.2f} M pkt/s  (x{c['pps'] / base:.2f} of 1 flow)" + vs(c, b),
              flush=True)

    print("== memory: peak RSS of a 10 s and a 200 s run (4 flows, 100 Mbps)")
    a, b = peak_rss_mb(10), peak_rss_mb(200)
    print(f"  10 s: {a:.0f} MB   200 s: {b:.0f} MB   ratio {b / a:.2f} (bounded: ~1)")
    if os.environ.get("BENCH_JSON"):
        Path(os.environ["BENCH_JSON"]).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
