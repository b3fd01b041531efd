#!/usr/bin/env python3
"""Compare the running kernel's CUBIC (and Reno) with cubiclab's, ACK by ACK.

Runs a real bulk TCP flow per algorithm through a tbf bottleneck between network
namespaces, traces the sender's tcp_probe / tcp_cong_state_set tracepoints and captures
its ACKs, replays the ACKs through cubiclab, and prints the share of ACKs after which
cwnd and ssthresh match, with a classification of every mismatch. Needs root.

    sudo python3 scripts/kernel_cubic_check.py [--seconds 5] [--rate 20mbit]
        [--limit 120000] [--algorithms cubic reno] [--save DIR]

`bbr3` (a port with cong_control) is checked hook call by hook call on its own hook log
instead (cubiclab.kernel.bbr3_check; --save keeps the log).
"""

import argparse
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="length of each flow (default 5)")
    ap.add_argument("--rate", default="20mbit", help="bottleneck rate, tc syntax (default 20mbit)")
    ap.add_argument("--limit", type=int, default=120_000, help="bottleneck queue in bytes (default 120000)")
    ap.add_argument("--algorithms", nargs="+", default=["cubic", "reno"], help="kernel algorithms, or library algorithms with a BPF port (cubiclab-bpf list), "
                    "with parameters as algorithm:key=value,... (e.g. cubic-rfc9438:hystart=hystart++)")
    ap.add_argument("--save", type=Path, help="write records, ACKs, replay traces and tables here")
    args = ap.parse_args()
    if args.seconds <= 0 or args.seconds > 60:
        ap.error("--seconds must be in (0, 60]")

    from cubiclab.kernel.capture import availability
    from cubiclab.kernel.check import measure_hz_and_phase, run_check

    reason = availability()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    hz, lag = measure_hz_and_phase()
    print(f"kernel HZ {hz}; jiffies tick {'on' if lag <= 0 else f'up to {lag} us after'} multiples of "
          f"{1_000_000 // hz} us of CLOCK_MONOTONIC (the mono trace clock)")
    worst = 1.0
    for label in [a for a in args.algorithms if a.partition(":")[0] == "bbr3"]:
        from cubiclab.kernel.bbr3_check import run_check as run_bbr3
        from cubiclab.kernel.check import port_label

        keep = None
        if args.save:
            keep = args.save / label
            keep.mkdir(parents=True, exist_ok=True)
        r3 = run_bbr3(args.seconds, args.rate, args.limit, port_label(label)[1], keep=keep)
        print()
        print(r3.report())
        for f in r3.flows:
            worst = min(worst, *(h["matched"] / max(1, h["calls"]) for h in f["hooks"].values()))
    others = tuple(a for a in args.algorithms if a.partition(":")[0] != "bbr3")
    results = run_check(others, seconds=args.seconds, rate=args.rate, limit_bytes=args.limit) if others else {}
    for alg, r in results.items():
        print()
        print(r.report())
        worst = min(worst, r.comparison.share)
        if args.save:
            d = args.save / alg
            d.mkdir(parents=True, exist_ok=True)
            r.capture.records.to_csv(d / "kernel_records.csv", index=False)
            if r.capture.acks is not None:
                r.capture.acks.to_json(d / "acks.json", orient="records")
            r.converted.trace.to_csv(d / "replay_trace.csv", index=False)
            r.comparison.table.to_csv(d / "comparison.csv", index=False)
            print(f"saved to {d}")
    return 0 if worst >= 0.995 else 1


if __name__ == "__main__":
    sys.exit(main())
