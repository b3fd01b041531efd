#!/usr/bin/env python3
"""Per-ACK CPU cost of cubiclab's BPF congestion-control ports, from the kernel's own
per-program accounting.

Each port runs one bulk flow (the kernel check's 20 Mbit/s tbf bottleneck between
namespaces) with BPF run-time statistics on for its programs (`cubiclab-bpf load
--stats`: `run_time_ns` and `run_cnt` of `struct bpf_prog_info`). The kernel adds the time
spent inside each program, on the CPU that ran it; the ACK path runs with bottom halves
off, so it is not preempted and other load on the machine does not count in it (unlike
CPU time from /proc/stat), though cache and frequency effects do, hence rounds and medians.
The figure is nanoseconds per ACK (all hooks of the port, over the ACKs tcp_probe saw) and
per call of `cong_avoid`, printed as ratios to the first algorithm (all ports have the
same program shape: init, ssthresh, cong_avoid, set_state, undo_cwnd, pkts_acked).

The built-in `cubic` cannot be timed the same way here: this kernel refuses to load
fentry/fexit programs (EPERM for every kernel function tried: tcp_ack, cubictcp_cong_avoid,
tcp_reno_cong_avoid; tp_btf and struct_ops programs load), so no BPF timer can wrap
`cubictcp_cong_avoid`, and it has no kprobes. Not a timed test. Needs root.

    sudo python3 scripts/bpf_cost.py [--rounds 3] [--seconds 4] [--algorithms cubic-2.2 ...]
"""

import argparse
import statistics
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--algorithms", nargs="+")
    args = ap.parse_args()
    if args.rounds < 1 or not 0 < args.seconds <= 60:
        ap.error("--rounds must be at least 1 and --seconds in (0, 60]")
    from cubiclab.kernel.capture import availability, run_flow
    from cubiclab.testbed import bpf

    reason = availability() or bpf.availability()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    algs = args.algorithms or list(bpf.ports())
    unknown = [a for a in algs if a not in bpf.ports()]
    if unknown:
        ap.error(f"--algorithms: no BPF port of {', '.join(unknown)}; ported: {', '.join(bpf.ports())}")
    per_ack = {a: [] for a in algs}
    per_call = {a: [] for a in algs}
    for r in range(args.rounds):
        for alg in algs:
            name = bpf.instance_name(0, alg)
            reg = bpf.Registered({name: (alg, {})}, stats=True)
            with reg:
                cap = run_flow(name, seconds=args.seconds)
            progs = reg.stats[name]
            acks = int((cap.records.event == "probe").sum())
            total_ns = sum(p["run_time_ns"] for p in progs.values())
            ca = next(p for n, p in progs.items() if n.endswith("cong_avoid"))
            per_ack[alg].append(total_ns / acks)
            per_call[alg].append(ca["run_time_ns"] / max(ca["run_cnt"], 1))
            print(f"round {r + 1} {alg:10s} {acks} ACKs, {total_ns / acks:.1f} ns/ACK in the port, "
                  f"cong_avoid {per_call[alg][-1]:.1f} ns/call over {ca['run_cnt']} calls", file=sys.stderr)
    base_ack, base_call = statistics.median(per_ack[algs[0]]), statistics.median(per_call[algs[0]])
    print(f"{'algorithm':12s} {'ns/ACK':>8s} {'ratio':>7s} {'cong_avoid ns/call':>19s} {'ratio':>7s}   (medians of {args.rounds})")
    for alg in algs:
        a, c = statistics.median(per_ack[alg]), statistics.median(per_call[alg])
        print(f"{alg:12s} {a:8.1f} {a / base_ack:7.3f} {c:19.1f} {c / base_call:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
