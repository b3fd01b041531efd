"""Measure the real kernel's receive-window autotuning: how the window the receiver
advertises (``tcpi_snd_wnd`` at the sender) grows in the first round trips of a bulk flow
whose receiver leaves its buffer to the kernel (the namespace's default ``tcp_rmem``).

    sudo python scripts/rwnd_kernel.py [--seconds 3] [--case NAME] [--out docs/agreement/rwnd]

Runs Reno at 50 Mbit/s / 176 ms and at 10 Mbit/s / 100 ms, one after the other (one
testbed job at a time), prints the window per RTT and writes each run's TCP_INFO samples
(``t, cwnd, snd_wnd``) as CSV under ``--out``. Needs root and the testbed.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from cubiclab.testbed import testbed

CASES = {
    "reno_50M_176ms": ("50Mbps", "176ms", 0.176),
    "reno_10M_100ms": ("10Mbps", "100ms", 0.100),
}
MSS = 1448


def scenario(name: str, rate: str, rtt: str, seconds: float) -> dict:
    return {"name": f"rwnd-{name}", "duration": f"{seconds}s",
            "bottleneck": {"rate": rate, "buffer": "100%BDP"},
            "flows": [{"algorithm": "reno", "rtt": rtt, "rwnd": "autotune"}]}


def namespace_tcp_rmem() -> str:
    """tcp_rmem as a fresh network namespace starts with it (the testbed's receiver's)."""
    ns = "cubiclab-rwnd-probe"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        out = subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n", "net.ipv4.tcp_rmem"],
                             check=True, capture_output=True, text=True).stdout
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=True)
    return " ".join(out.split())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="length of each run (default 3)")
    ap.add_argument("--case", choices=sorted(CASES), action="append",
                    help="run only this case (repeatable; default all)")
    ap.add_argument("--out", default="docs/agreement/rwnd", help="directory for the CSV files")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"namespace tcp_rmem = {namespace_tcp_rmem()}")
    for name in args.case or CASES:
        rate, rtt, rtt_s = CASES[name]
        res = testbed(scenario(name, rate, rtt, args.seconds), trace=False, info_interval="5ms")
        info = res.info[res.info.flow == 0][["t", "snd_cwnd", "snd_wnd", "rtt_us"]]
        info = info[info.t >= 0].rename(columns={"snd_cwnd": "cwnd"})
        tmp = out / f"{name}.csv.tmp"
        info.to_csv(tmp, index=False)
        tmp.rename(out / f"{name}.csv")
        print(f"\n{name}: {rate}, RTT {rtt}; window at the end of each RTT")
        print(f"{'RTT':>4} {'t (s)':>7} {'cwnd':>6} {'snd_wnd (B)':>12} {'(pkts)':>7}")
        k = 1
        while k * rtt_s <= args.seconds:
            row = info[info.t <= k * rtt_s].tail(1)
            if len(row):
                r = row.iloc[0]
                print(f"{k:>4} {r.t:>7.3f} {int(r.cwnd):>6} {int(r.snd_wnd):>12} {r.snd_wnd / MSS:>7.1f}")
            k += 1


if __name__ == "__main__":
    main()
