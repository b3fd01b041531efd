"""Wall time of the reproduction catalog on a given number of cores, and what dominates.

    python3 benches/catalog_wall.py                 # run quick mode; full mode estimated from it
    python3 benches/catalog_wall.py --full          # run both (full: an hour or more on 2 cores)
    python3 benches/catalog_wall.py --ray local     # spread the runs over Ray instead

Prints, per mode, the number of simulations and the bottleneck packets they carry (the
simulator's cost is per packet), the entries that carry most of them, and the wall time:
measured for the modes run, and for full mode otherwise estimated as its packets times the
wall time per packet measured in quick mode (same machine, same cores). Each run uses a
fresh cache, so nothing is reused between modes or from earlier calls."""

from __future__ import annotations

import argparse
import tempfile
import time


def planned(mode) -> tuple[int, dict]:
    """Simulations and planned bottleneck packets per entry of `mode`."""
    from cubiclab.experiments import CATALOG

    runs, packets = 0, {}
    for name, e in CATALOG.items():
        rs = e.runs(mode)
        runs += len({r.key for r in rs})
        packets[name] = sum(r.scenario.compile()["bottleneck"]["rate"] / 12000 * r.scenario.compile()["duration"] / 1e9
                            for r in rs)
    return runs, packets


def timed(mode, jobs: int, ray: str | None) -> float:
    from cubiclab.experiments import reproduce

    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        reproduce(None, mode=mode, out=out, jobs=jobs, ray=ray, progress=False, log=None)
        return time.perf_counter() - t0


def main() -> None:
    from cubiclab.experiments.base import FULL, QUICK

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--full", action="store_true", help="also run full mode (else estimate it)")
    ap.add_argument("--ray", default=None, help="a Ray address (auto, local, host:port) to run on instead")
    args = ap.parse_args()
    plans = {m.name: planned(m) for m in (QUICK, FULL)}
    for name, (runs, pk) in plans.items():
        total = sum(pk.values())
        top = sorted(pk.items(), key=lambda kv: -kv[1])[:4]
        print(f"{name}: {runs} simulations, {total / 1e6:.0f} M bottleneck packets; most: " +
              ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top))
    where = f"Ray ({args.ray})" if args.ray else f"{args.jobs} local cores"
    quick = timed("quick", args.jobs, args.ray)
    q_pk = sum(plans["quick"][1].values())
    print(f"quick mode: {quick:.0f} s wall on {where} ({quick / 300:.2f} of the 5-minute budget)")
    f_pk = sum(plans["full"][1].values())
    if args.full:
        full = timed("full", args.jobs, args.ray)
        print(f"full mode: {full:.0f} s wall on {where} ({full / 3600:.2f} of the 60-minute budget)")
    else:
        est = f_pk * quick / q_pk
        print(f"full mode: about {est:.0f} s wall on {where} (estimated: {f_pk / q_pk:.0f} times quick mode's "
              f"packets at quick mode's wall time per packet; {est / 3600:.2f} of the 60-minute budget)")


if __name__ == "__main__":
    main()
