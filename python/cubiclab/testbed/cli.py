"""`cubiclab testbed` and `cubiclab compare` (registered by cubiclab.cli.build_parser)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _load(args):
    from cubiclab.scenario import Scenario

    if not args.scenario:
        raise ValueError("a scenario file is needed (or --cleanup)")
    sc = Scenario.load(args.scenario)
    changes = {}
    if getattr(args, "seed", None) is not None:
        changes["seed"] = args.seed
    if getattr(args, "duration", None) is not None:
        changes["duration"] = args.duration
    return sc.replace(**changes) if changes else sc


def _unavailable(e) -> int:
    print(f"cubiclab: error: {e}", file=sys.stderr)
    return 3


def cmd_testbed(args) -> int:
    from cubiclab.namespaces import KernelLabUnavailable
    from cubiclab.plots import plot_run
    from cubiclab.testbed.run import cleanup, testbed

    if args.cleanup:
        from cubiclab.namespaces import availability

        reason = availability()
        if reason:
            return _unavailable(f"--cleanup {reason}")
        gone = cleanup()
        print(json.dumps(gone))
        return 0
    sc = _load(args)
    outdir = Path(args.out) / sc.name
    if sc.record.pcap is not None:  # a file name (Scenario.load checks it): into the run's folder
        outdir.mkdir(parents=True, exist_ok=True)
        sc.record.pcap = str(outdir / sc.record.pcap)
    if not args.json:
        print(f"cubiclab: testbed '{sc.name}' -> {outdir}", file=sys.stderr)
    try:
        res = testbed(sc, trace=not args.no_trace, max_duration=args.max_duration,
                      progress=not args.quiet and not args.json)
    except (KernelLabUnavailable, RuntimeError) as e:
        return _unavailable(e)
    res.save(outdir, args.format)
    if not args.no_plots:
        plot_run(res, outdir)
    s = res.summary
    if args.json:
        print(json.dumps(s, indent=2, default=str))
    else:
        e = s["emulator"]
        print(f"utilisation {s['utilization']:.3f} (goodput {s['goodput_utilization']:.3f}), loss events "
              f"{s['loss_events']}, bottleneck drops {s['bottleneck_drops']} (+{s['bottleneck_random_losses']} "
              f"random), peak queue {s['peak_queue_packets']} packets of {s['buffer']}; cwnd from {s['cwnd_source']}; "
              f"emulator lateness p50 {e.get('late_p50_us')} us, p99 {e.get('late_p99_us')} us")
        for g, share in s["group_shares"].items():
            print(f"  {g:12s} share {share:.3f}")
        print(f"wrote {outdir}")
    return 0


def cmd_compare(args) -> int:
    from cubiclab.namespaces import KernelLabUnavailable
    from cubiclab.testbed.compare import compare, format_table, write

    sc = _load(args)
    if args.runs != 1:
        if args.runs < 2 or (args.max_runs is not None and args.max_runs < args.runs):
            print(f"cubiclab: error: --runs {args.runs}, --max-runs {args.max_runs}: an ensemble needs 2 <= runs "
                  "<= max-runs", file=sys.stderr)
            return 2
        return _compare_ensemble(sc, args)
    outdir = Path(args.out) / sc.name
    if not args.json:
        print(f"cubiclab: compare '{sc.name}' (simulator and testbed) -> {outdir}", file=sys.stderr)
    try:
        c = compare(sc, progress=not args.quiet and not args.json, trace=not args.no_trace,
                    max_duration=args.max_duration)
    except (KernelLabUnavailable, RuntimeError) as e:
        return _unavailable(e)
    write(c, outdir, args.format, plots=not args.no_plots)
    if args.json:
        print(json.dumps(c.to_dict(), indent=2, default=float))
    else:
        print(format_table(c))
        print(f"wrote {outdir}")
    return 0


def _compare_ensemble(sc, args) -> int:
    from cubiclab.io import atomic_write_text
    from cubiclab.namespaces import KernelLabUnavailable
    from cubiclab.testbed.compare import compare_ensemble, format_ensemble

    outdir = Path(args.out) / sc.name
    try:
        c = compare_ensemble(sc, runs=args.runs, max_runs=args.max_runs, progress=not args.quiet and not args.json, trace=not args.no_trace,
                             max_duration=args.max_duration)
    except (KernelLabUnavailable, RuntimeError) as e:
        return _unavailable(e)
    atomic_write_text(outdir / "ensemble.json", json.dumps(c.to_dict(), indent=2, default=float) + "\n")
    print(json.dumps(c.to_dict(), indent=2, default=float) if args.json else format_ensemble(c))
    return 0


def _common(p) -> None:
    p.add_argument("--out", default="cubiclab-out", help="output folder (a subfolder per scenario)")
    p.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--seed", type=int)
    p.add_argument("--duration", help="override the duration, e.g. 30s")
    p.add_argument("--max-duration", type=float, default=600.0, help="refuse runs longer than this (s)")
    p.add_argument("--no-trace", action="store_true", help="no tcp_probe tracing (cwnd from TCP_INFO)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress line")


def _positive(v: str) -> int:
    import argparse

    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"'{v}' is not a number of runs; allowed: a whole number, at least 1")
    return n


def add_parsers(sub) -> None:
    from cubiclab.testbed.ensemble import STEP_RUNS

    t = sub.add_parser("testbed", help="run a scenario's flows on the real kernel through an emulated bottleneck "
                                       "(root)")
    t.add_argument("scenario", nargs="?", help="TOML scenario file")
    t.add_argument("--cleanup", action="store_true", help="remove namespaces and trace instances left by killed runs")
    _common(t)
    t.set_defaults(func=cmd_testbed)
    c = sub.add_parser("compare", help="run a scenario on the simulator and on the testbed, side by side (root)")
    c.add_argument("scenario", help="TOML scenario file")
    c.add_argument("--runs", type=_positive, default=1,
                   help="runs per side with seeds seed, seed+1, ...; 2 or more: per metric the difference of the "
                        "means (Welch 95%% interval) against its tolerance, agrees / differs / undecided, and the "
                        "ratio of the spreads (use 10 or more)")
    c.add_argument("--max-runs", type=_positive,
                   help=f"sequential: while a metric is undecided, {STEP_RUNS} more runs a side up to this many "
                        "(default: --runs)")
    _common(c)
    c.set_defaults(func=cmd_compare)
