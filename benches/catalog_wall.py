"""Wall time of the reproduction catalog on a given number of cores, and what dominates.

    python3 benches/catalog_wall.py                 # run quick mode; full mode estimated from it
    python3 benches/catalog_wall.py --full          # run both (full: an hour or more on 2 cores)
    python3 benches/catalog_wall.py --ray local     # spread the runs over Ray instead
    python3 benches/catalog_wall.py --us-per-packet 0.31   # no runs: full mode from a known cost

Prints, per mode, the number of simulations and the bottleneck packets they carry (the
simulator's cost is per packet), the entries that carry most of them, and the wall time:
measured for the modes run, and for full mode otherwise estimated as its packets times the
time per packet measured in quick mode (same machine, same cores), or with --us-per-packet
from a cost measured elsewhere (a full run's CPU seconds over its bottleneck packets, the
analysis included: 0.31 us for main at e796748, 3988 CPU s for 12.9e9), running nothing. It also counts the runs the budget caps: full
mode's plan caps none (tests/test_catalog.py). Each run uses a fresh cache, so nothing is
reused between modes or from earlier calls.

On a shared machine the wall time says more about the other users than about cubiclab, so
the CPU seconds are printed too: the workers' (the simulations, spread over the cores) and
this process's (the analysis and figures, serial). On idle cores the wall time is about
workers / cores + this process's."""

from __future__ import annotations

import argparse
import resource
import tempfile
import time


def planned(mode) -> tuple[int, dict, int]:
    """Simulations, planned bottleneck packets per entry and the runs the budget caps, of
    `mode`."""
    from cubiclab.experiments import CATALOG

    runs, packets, capped = 0, {}, 0
    for name, e in CATALOG.items():
        rs = e.runs(mode)
        runs += len({r.key for r in rs})
        packets[name] = sum(r.scenario.bottleneck_packets() for r in rs)
        capped += sum(bool(r.tags["capped"]) for r in rs)
    return runs, packets, capped


def _cpu(who) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def timed(mode, jobs: int, ray: str | None) -> tuple[float, float]:
    """(wall seconds, the wall seconds idle cores would take: workers' CPU / jobs + ours)."""
    from cubiclab.experiments import reproduce

    with tempfile.TemporaryDirectory() as out:
        t0, own0, workers0 = time.perf_counter(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
        reproduce(None, mode=mode, out=out, jobs=jobs, ray=ray, progress=False, log=None)
        wall = time.perf_counter() - t0
        own, workers = _cpu(resource.RUSAGE_SELF) - own0, _cpu(resource.RUSAGE_CHILDREN) - workers0
    print(f"{mode} mode: CPU {workers:.0f} s in the workers (simulations) + {own:.0f} s here (analysis, figures)")
    return wall, wall if ray else workers / jobs + own


def main() -> None:
    from cubiclab.experiments.base import FULL, QUICK

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--full", action="store_true", help="also run full mode (else estimate it)")
    ap.add_argument("--ray", default=None, help="a Ray address (auto, local, host:port) to run on instead")
    ap.add_argument("--us-per-packet", type=float, default=None,
                    help="run nothing: estimate full mode from this CPU cost per bottleneck packet (microseconds)")
    args = ap.parse_args()
    plans = {m.name: planned(m) for m in (QUICK, FULL)}
    for name, (runs, pk, capped) in plans.items():
        total = sum(pk.values())
        top = sorted(pk.items(), key=lambda kv: -kv[1])[:4]
        print(f"{name}: {runs} simulations, {total / 1e6:.0f} M bottleneck packets, {capped} runs capped by the "
              "budget; most: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top))
    f_pk = sum(plans["full"][1].values())
    if args.us_per_packet is not None:
        cpu = f_pk * args.us_per_packet * 1e-6
        idle = cpu / args.jobs
        print(f"full mode: about {cpu:.0f} CPU s at {args.us_per_packet:g} us per packet, {idle:.0f} s on {args.jobs} "
              f"idle cores ({idle / 3600:.2f} of the 60-minute budget)")
        return
    where = f"Ray ({args.ray})" if args.ray else f"{args.jobs} local cores"
    quick, quick_idle = timed("quick", args.jobs, args.ray)
    q_pk = sum(plans["quick"][1].values())
    print(f"quick mode: {quick:.0f} s wall on {where}; {quick_idle:.0f} s on idle cores "
          f"({quick_idle / 300:.2f} of the 5-minute budget)")
    if args.full:
        full, full_idle = timed("full", args.jobs, args.ray)
        print(f"full mode: {full:.0f} s wall on {where}; {full_idle:.0f} s on idle cores "
              f"({full_idle / 3600:.2f} of the 60-minute budget)")
    else:
        est = f_pk * quick_idle / q_pk
        print(f"full mode: about {est:.0f} s on {where}, idle (estimated: {f_pk / q_pk:.0f} times quick mode's "
              f"packets at quick mode's time per packet; {est / 3600:.2f} of the 60-minute budget)")


if __name__ == "__main__":
    main()
