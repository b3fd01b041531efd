#!/usr/bin/env python3
"""Per-ACK CPU cost of cubiclab's BPF congestion control against the kernel's built-in
`cubic`, on the same flow (the kernel check's 20 Mbit/s tbf bottleneck between namespaces).

For each algorithm, in alternating rounds, one bulk flow runs and the machine's CPU time
(all CPUs: user, system, irq, softirq from /proc/stat; the ACKs are processed in softirq
and in the sender's system calls) is divided by the ACKs the sender's tcp_probe saw. The
flow's own traffic (sender, receiver, tracing, qdisc) is the same for every algorithm, so
the differences are the congestion control; other load on the machine adds noise, which
the median over rounds damps. Prints ratios to `cubic`, not a timed test. Needs root.

    sudo python3 scripts/bpf_cost.py [--rounds 3] [--seconds 4] [--algorithms cubic-2.2 ...]
"""

import argparse
import os
import statistics
import sys


def cpu_ticks() -> int:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    return v[0] + v[1] + v[2] + v[4] + v[5] + v[6]  # user nice system (not idle) iowait irq softirq


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--algorithms", nargs="+")
    args = ap.parse_args()
    from cubiclab.kernel.capture import availability, run_flow
    from cubiclab.testbed import bpf

    reason = availability() or bpf.availability()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    algs = args.algorithms or list(bpf.ports())
    hz = os.sysconf("SC_CLK_TCK")
    per_ack = {a: [] for a in ["cubic", *algs]}
    for r in range(args.rounds):
        for alg in per_ack:
            if alg == "cubic":
                t0 = cpu_ticks()
                cap = run_flow("cubic", seconds=args.seconds)
            else:
                name = bpf.instance_name(0, alg)
                with bpf.Registered({name: (alg, {})}):
                    t0 = cpu_ticks()
                    cap = run_flow(name, seconds=args.seconds)
            cpu_s = (cpu_ticks() - t0) / hz
            acks = int((cap.records.event == "probe").sum())
            per_ack[alg].append(cpu_s / acks * 1e6)
            print(f"round {r + 1} {alg:10s} {acks} ACKs, {cpu_s:.2f} CPU s, {per_ack[alg][-1]:.1f} us/ACK",
                  file=sys.stderr)
    base = statistics.median(per_ack["cubic"])
    print(f"{'algorithm':12s} {'us/ACK (median)':>16s} {'ratio to cubic':>15s}")
    for alg, v in per_ack.items():
        m = statistics.median(v)
        print(f"{alg:12s} {m:16.1f} {m / base:15.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
