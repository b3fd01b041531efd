#!/usr/bin/env python3
"""Compare the running kernel's bbr with cubiclab's, ACK by ACK.

Runs one bulk bbr flow through the testbed (real Linux TCP, the emulated bottleneck with
its propagation delay) while `cubiclab-bpf probe-bbr` records the socket at every ACK,
rebuilds each ACK's rate sample as tcp_rate.c does, replays the library's bbr on them and
prints the share of ACKs after which cwnd, sk_pacing_rate and the mode match
(cubiclab.kernel.bbr_check). Needs root and the built loader.

    sudo python3 scripts/kernel_bbr_check.py [--rate 20Mbps] [--rtt 20ms]
        [--buffer 300%BDP] [--seconds 4] [--save DIR]
"""

import argparse
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", default="20Mbps", help="bottleneck rate (default 20Mbps)")
    ap.add_argument("--rtt", default="20ms", help="the flow's RTT (default 20ms)")
    ap.add_argument("--buffer", default="300%BDP", help="bottleneck buffer (default 300%%BDP: no loss)")
    ap.add_argument("--seconds", type=float, default=4.0, help="length of the flow (default 4)")
    ap.add_argument("--save", type=Path, help="write the probe's records, the replay trace and the table here")
    args = ap.parse_args()
    if not 0 < args.seconds <= 60:
        ap.error("--seconds must be in (0, 60]")

    from cubiclab.kernel.bbr_check import SCENARIO, run_check

    scenario = {**SCENARIO, "duration": f"{args.seconds}s",
                "bottleneck": {"rate": args.rate, "buffer": args.buffer},
                "flows": [{"algorithm": "bbr", "rtt": args.rtt}]}
    r = run_check(scenario)
    print(r.report())
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        r.records.to_csv(args.save / "kernel_records.csv", index=False)
        r.trace.to_csv(args.save / "replay_trace.csv", index=False)
        r.table.to_csv(args.save / "comparison.csv", index=False)
        print(f"saved to {args.save}")
    return 0 if r.shares()["all three"] >= 0.995 else 1


if __name__ == "__main__":
    sys.exit(main())
