"""Speed, flatness and memory of the simulator, as ratios against peers measured in the
same run (machines here are noisy; absolute times are only context).

    python3 benches/sim_speed.py            # cubiclab only: flatness and memory
    python3 benches/sim_speed.py --ns3      # also ns-3 3.44 (needs .ns3env, see README)
    python3 benches/sim_speed.py --against OTHER_PYTHON   # this build against another one
    python3 benches/sim_speed.py --fq-codel   # only FQ-CoDel against drop-tail (callgrind)
    python3 benches/sim_speed.py --flat       # only the flat cost of issue 28 (callgrind)

With ``--against``, OTHER_PYTHON is an interpreter that imports another build of cubiclab
(e.g. a virtual environment with the previous commit installed); each line runs in both,
alternately, best of ``--repeat`` runs each, and prints this build's speed as a ratio of
the other's (machines here are noisy: alternation and the best of several runs keep the
ratio fair).

Prints, per scenario, delivered data packets per wall second for cubiclab and ns-3 and
their ratio, the utilisation each measured, the cost per packet from 10 Mbps to 10 Gbps and
from 1 to 1000 flows, and peak memory of short and long runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT.parent / "shared" / "peers" / "ns3_dumbbell.py"


def cubiclab_run(rate_mbps, rtt_ms, flows, secs, alg="cubic", spacing=0.1, queue="droptail", jitter=None):
    """The ns-3 peer's dumbbell: flow i starts at `spacing` x i s (0.1 s), buffer one BDP in
    packets, access links folded into the RTT; `jitter`: the hosts' timing noise."""
    import cubiclab
    from cubiclab.scenario import Host

    sc = cubiclab.Scenario(
        name="bench", duration=f"{secs}s", start_jitter="0ms",
        bottleneck=cubiclab.Bottleneck(rate=f"{rate_mbps}Mbps", buffer="100%BDP", delay=f"{rtt_ms / 2 - 2}ms",
                                       queue=queue),
        flows=[cubiclab.FlowGroup(alg, count=flows, rtt=f"{rtt_ms}ms", start_spacing=f"{spacing}s")],
        record=cubiclab.Record(interval="1s"), host=Host(jitter=jitter),
    )
    t0 = time.perf_counter()
    r = cubiclab.simulate(sc)
    wall = time.perf_counter() - t0
    pkts = r.totals.delivered_bytes.sum() / 1448
    return {"util": r.summary["goodput_utilization"], "pkts": pkts, "wall": wall, "pps": pkts / wall,
            "events_per_pkt": r.summary["events"] / max(pkts, 1),
            "sent_per_pkt": float(r.totals.segments_sent.sum()) / max(pkts, 1)}


def parking_lot_run(hops, rate_mbps, secs):
    """A long CUBIC flow across `hops` links of `rate_mbps` with a CUBIC cross flow on each
    hop (hops = 1: the dumbbell with two flows): packets delivered times the hops each
    crossed, per wall second."""
    import cubiclab
    from cubiclab.topology import parking_lot

    sc = parking_lot(hops, link={"rate": f"{rate_mbps}Mbps", "buffer": "100%BDP"},
                     long=[{"algorithm": "cubic", "rtt": "40ms", "name": "long"}],
                     cross=[{"algorithm": "cubic", "rtt": "40ms"}], duration=f"{secs}s", start_jitter="0ms",
                     record={"interval": "1s"})
    t0 = time.perf_counter()
    r = cubiclab.simulate(sc)
    wall = time.perf_counter() - t0
    hop_pkts = float((r.totals.delivered_bytes / 1448 * r.totals.route.str.count(">").add(1)).sum())
    return {"hop_pkts": hop_pkts, "wall": wall, "hop_pps": hop_pkts / wall}


def flows_memory_mb(n, secs):
    """Peak RSS (MB) of a run of `n` long-lived CUBIC flows at 1 Gbit/s, and of the same
    interpreter with cubiclab imported and nothing run."""
    run = ("import cubiclab;"
           f"cubiclab.simulate(cubiclab.Scenario(duration='{secs}s', bottleneck=cubiclab.Bottleneck(rate='1Gbps'),"
           f"flows=[cubiclab.FlowGroup('cubic', count={n}, rtt='40ms')], record=cubiclab.Record(interval='1s')));"
           + _PEAK)
    idle = "import cubiclab;" + _PEAK
    rss = [int(subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, check=True)
               .stdout.strip().splitlines()[-1]) / 1024 for c in (run, idle)]
    return rss[0], rss[1]


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


# A process's peak RSS, read from its own memory map's high-water mark: `ru_maxrss` is kept
# across fork and exec, so a child of a big parent reports the parent's peak.
_PEAK = "print(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]))"


def peak_rss_mb(secs):
    code = ("import cubiclab;"
            f"cubiclab.simulate(cubiclab.Scenario(duration='{secs}s', bottleneck=cubiclab.Bottleneck(rate='100Mbps'),"
            "flows=[cubiclab.FlowGroup('cubic', count=4, rtt='40ms')], record=cubiclab.Record(interval='1s')));"
            + _PEAK)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024


LINES = [(100, 100, 2, 20), (100, 40, 8, 20), (1000, 40, 4, 5), (10, 40, 1, 60), (10000, 40, 1, 2),
         (1000, 40, 100, 10)]


def child_run(python: str, rate, rtt, n, secs, alg) -> dict:
    out = subprocess.run([python, __file__, "--child", str(rate), str(rtt), str(n), str(secs), "--alg", alg],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def instructions(python: str, rate, rtt, n, secs, alg, queue="droptail", spacing=0.1,
                 hops=0, jitter="off") -> tuple[int, float, dict]:
    """(instructions inside the simulator's event loop, delivered packets, the run's
    numbers) of one run, counted by callgrind: the same count on every run, whatever else
    the machine does. With `hops`, the run is `parking_lot_run`'s and the packets are
    packet-hops."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          # The event loop proper (run_until is inlined into it).
                          "--toggle-collect=cubiclab_sim::sim::Sim::run_until_or_events",
                          python, __file__, "--child", str(rate), str(rtt), str(n), str(secs), "--alg", alg,
                          "--queue", queue, "--spacing", str(spacing), "--hops", str(hops), "--jitter", jitter],
                         capture_output=True, text=True, check=True)
    count = int(re.search(r"Collected : (\d+)", out.stderr)[1])
    if count == 0:
        raise SystemExit(f"callgrind counted nothing in the event loop of {python}'s build (symbol renamed or inlined?)")
    run = json.loads(out.stdout.strip().splitlines()[-1])
    return count, run["pkts"], run


def against_instructions(other: str, alg: str):
    print(f"== this build against {other}: instructions per delivered packet (callgrind)")
    # The last line with the hosts' timing noise on ([host] jitter, as ensembles against the kernel run).
    for rate, rtt, n, secs, jitter in [(100, 40, 8, 2, "off"), (1000, 40, 4, 1, "off"), (1000, 40, 100, 1, "off"),
                                       (100, 40, 8, 2, "testbed")]:
        (a, pa, _), (b, pb, _) = (instructions(sys.executable, rate, rtt, n, secs, alg, jitter=jitter),
                                  instructions(other, rate, rtt, n, secs, alg, jitter=jitter))
        print(f"  {rate:5d} Mbps {rtt:3d} ms {n:3d} flows {secs:3d} s jitter {jitter:7s}: this {a / pa:7.0f}, other {b / pb:7.0f} "
              f"instructions/packet, ratio {(a / pa) / (b / pb):.3f} (same packets: {pa == pb})", flush=True)


def fq_codel_against_droptail(alg: str):
    print("== FQ-CoDel against drop-tail per packet (1 Gbps, 40 ms, 1000 flows started within 1 s, 2 s; "
          "issue 27 asks at most 1.5x), instructions per delivered packet (callgrind)", flush=True)
    cost = {}
    for queue in ("droptail", "fq_codel"):
        count, pkts, _ = instructions(sys.executable, 1000, 40, 1000, 2, alg, queue, spacing=0.001)
        cost[queue] = count / pkts
    print(f"  fq_codel {cost['fq_codel']:7.0f}, droptail {cost['droptail']:7.0f} instructions/packet: "
          f"fq_codel costs x{cost['fq_codel'] / cost['droptail']:.2f} per packet", flush=True)


def flat_instructions(alg: str):
    """Issue 28's flat cost in instructions per delivered packet, each ratio from runs of
    one invocation. Runs are short for callgrind (about a minute each), so each counts
    about 1.6 M packets: equal line time in packets at every rate, and flows that all
    start within the first 5 s of 20."""
    print("== flat cost, instructions per delivered packet (callgrind; issue 28 asks 10 Gbps >= 0.8x the best "
          "rate, 10,000 flows >= 0.8x one flow, 3 hops <= 1.3x the dumbbell per packet-hop)", flush=True)
    per_rate = {}
    for rate in (100, 1000, 10000):
        count, pkts, _ = instructions(sys.executable, rate, 40, 1, 1.6e6 * 1500 * 8 / (rate * 1e6), alg)
        per_rate[rate] = count / pkts
    best = min(per_rate.values())
    for rate, cost in per_rate.items():
        print(f"  {rate:6d} Mbps, 1 flow: {cost:6.0f} instructions/packet (speed x{best / cost:.2f} of the best rate)",
              flush=True)
    # Many flows sharing one buffer are another regime: more segments sent (retransmissions
    # of the drops) and more events (an ACK for every segment, loss recovery, timers) per
    # delivered packet; the cost per event separates the simulator's overhead from them.
    one = None
    for n in (1, 1000, 10000):
        count, pkts, run = instructions(sys.executable, 1000, 40, n, 20, alg, spacing=min(0.1, 5 / n))
        cost, per_event = count / pkts, count / pkts / run["events_per_pkt"]
        one = one or (cost, per_event)
        print(f"  {n:6d} flows, 1 Gbps: {cost:6.0f} instructions/packet (speed x{one[0] / cost:.2f} of one flow); "
              f"per packet {run['sent_per_pkt']:.2f} segments sent, {run['events_per_pkt']:.2f} events; "
              f"{per_event:4.0f} instructions/event (x{one[1] / per_event:.2f})", flush=True)
    dumbbell = None
    for hops in (1, 3):
        count, pkts, _ = instructions(sys.executable, 1000, 40, 0, 10, alg, hops=hops)
        dumbbell = dumbbell or count / pkts
        print(f"  parking lot, {hops} hop(s): {count / pkts:6.0f} instructions/packet-hop "
              f"(x{count / pkts / dumbbell:.2f} the dumbbell's)", flush=True)


def against(other: str, alg: str, repeat: int):
    print(f"== this build against {other} (best of {repeat}, alternating)")
    ratios = []
    for rate, rtt, n, secs in LINES:
        best = {"this": 0.0, "other": 0.0}
        for _ in range(repeat):
            for side, py in (("this", sys.executable), ("other", other)):
                best[side] = max(best[side], child_run(py, rate, rtt, n, secs, alg)["pps"])
        ratio = best["this"] / best["other"]
        ratios.append(ratio)
        print(f"  {rate:5d} Mbps {rtt:3d} ms {n:3d} flows {secs:3d} s: this {best['this'] / 1e6:6.2f} M pkt/s, "
              f"other {best['other'] / 1e6:6.2f} M pkt/s, ratio {ratio:.3f}", flush=True)
    print(f"  lowest ratio {min(ratios):.3f}, geometric mean {math.prod(ratios) ** (1 / len(ratios)):.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns3", action="store_true", help="also run the ns-3 peer")
    ap.add_argument("--alg", default="cubic")
    ap.add_argument("--against", metavar="PYTHON", help="compare with the cubiclab this interpreter imports")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--instructions", action="store_true",
                    help="with --against: compare instruction counts (valgrind) instead of wall time")
    ap.add_argument("--fq-codel", action="store_true", help="only FQ-CoDel against drop-tail (valgrind)")
    ap.add_argument("--flat", action="store_true", help="only the flat cost of issue 28 (valgrind)")
    ap.add_argument("--child", nargs=4, type=float, help=argparse.SUPPRESS)
    ap.add_argument("--queue", default="droptail", help=argparse.SUPPRESS)
    ap.add_argument("--spacing", type=float, default=0.1, help=argparse.SUPPRESS)
    ap.add_argument("--hops", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--jitter", default="off", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child and args.hops:
        rate, _, _, secs = args.child
        run = parking_lot_run(args.hops, int(rate), secs)
        print(json.dumps({"pkts": run["hop_pkts"], "pps": run["hop_pps"]}))
        return
    if args.child:
        rate, rtt, n, secs = args.child
        print(json.dumps(cubiclab_run(int(rate), rtt, int(n), secs, args.alg, args.spacing, args.queue, args.jitter)))
        return
    if args.fq_codel:
        fq_codel_against_droptail(args.alg)
        return
    if args.flat:
        flat_instructions(args.alg)
        return
    if args.against and args.instructions:
        against_instructions(args.against, args.alg)
        return
    if args.against:
        against(args.against, args.alg, args.repeat)
        return
    report = {}

    print("== against ns-3 (same dumbbell, same run)")
    ns3_alg = {"cubic": "TcpCubic", "reno": "TcpNewReno"}.get(args.alg, "TcpCubic")
    for rate, rtt, n, secs in [(100, 100, 2, 20), (100, 40, 8, 20), (1000, 40, 4, 5)]:
        c = cubiclab_run(rate, rtt, n, secs, args.alg)
        line = (f"{rate:5d} Mbps {rtt:3d} ms {n:2d} flows {secs:3d} s: cubiclab util {c['util']:.3f} "
                f"{c['pps'] / 1e6:6.2f} M pkt/s ({c['events_per_pkt']:.1f} events/pkt)")
        if args.ns3:
            p = ns3_run(rate, rtt, n, secs, ns3_alg)
            line += f" | ns-3 util {p['util']:.3f} {p['pps'] / 1e3:7.1f} k pkt/s | speed ratio {c['pps'] / p['pps']:7.0f}x"
            report[f"{rate}/{rtt}/{n}"] = {"cubiclab": c, "ns3": p}
        print(line, flush=True)

    print("== cost per packet against rate (1 flow, 40 ms; issue 28 asks 10 Gbps >= 0.8x the best rate)")
    # Each rate runs 8 M packets' worth of line time (at least 2 s), so that slow start is a
    # small part of every run (at 10 Gbps, 2 s was mostly slow start).
    pps = {}
    for rate in (10, 100, 1000, 10000):
        secs = max(2, min(200, int(8e6 * 1500 * 8 / (rate * 1e6))))
        pps[rate] = cubiclab_run(rate, 40, 1, secs, args.alg)["pps"]
    best = max(pps.values())
    for rate, v in pps.items():
        print(f"  {rate:6d} Mbps: {v / 1e6:6.2f} M pkt/s  (x{v / best:.2f} of the best rate)", flush=True)

    print("== cost per packet against flows (1 Gbps, 40 ms, all started within 5 s; issue 28 asks 10,000 flows "
          ">= 0.8x one flow)")
    base = None
    for n in (1, 10, 100, 1000, 10000):
        c = cubiclab_run(1000, 40, n, 20 if n < 1000 else 60, args.alg, spacing=min(0.1, 5 / n))
        base = base or c["pps"]
        print(f"  {n:5d} flows: {c['pps'] / 1e6:6.2f} M pkt/s  (x{c['pps'] / base:.2f} of 1 flow)", flush=True)

    print("== memory per flow: peak RSS of 10,000 long-lived flows at 1 Gbps, 30 s (issue 28: under 2 GB)")
    peak, idle = flows_memory_mb(10_000, 30)
    print(f"  {peak:.0f} MB peak, {idle:.0f} MB with nothing run: {(peak - idle) * 1024 / 10_000:.1f} KB per flow")

    print("== parking lot per packet-hop against the dumbbell (1 Gbps hops, 10 s; issue 28 asks 3 hops <= 1.3x)")
    one = parking_lot_run(1, 1000, 10)
    for hops in (2, 3):
        c = parking_lot_run(hops, 1000, 10)
        print(f"  {hops} hops: {c['hop_pps'] / 1e6:6.2f} M packet-hops/s, dumbbell {one['hop_pps'] / 1e6:6.2f}: "
              f"x{one['hop_pps'] / c['hop_pps']:.2f} the cost per packet-hop", flush=True)

    print("== BBR against CUBIC per packet (pacing, rate samples; issue 16 asks for at most 1.5x)")
    for rate, n in ((100, 1), (1000, 4)):
        c = cubiclab_run(rate, 40, n, 10, "cubic")
        b = cubiclab_run(rate, 40, n, 10, "bbr")
        print(f"  {rate:5d} Mbps {n} flows: bbr {b['pps'] / 1e6:6.2f} M pkt/s, cubic {c['pps'] / 1e6:6.2f} M pkt/s: "
              f"bbr costs x{c['pps'] / b['pps']:.2f} per packet ({b['events_per_pkt']:.1f} vs "
              f"{c['events_per_pkt']:.1f} events/pkt)", flush=True)

    fq_codel_against_droptail(args.alg)
    flat_instructions(args.alg)

    print("== memory: peak RSS of a 10 s and a 200 s run (4 flows, 100 Mbps)")
    a, b = peak_rss_mb(10), peak_rss_mb(200)
    print(f"  10 s: {a:.0f} MB   200 s: {b:.0f} MB   ratio {b / a:.2f} (bounded: ~1)")
    if os.environ.get("BENCH_JSON"):
        Path(os.environ["BENCH_JSON"]).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
