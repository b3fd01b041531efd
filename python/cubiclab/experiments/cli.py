"""`cubiclab reproduce`: run catalog entries and write figures, data and the HTML report."""

from __future__ import annotations

import signal
import sys


def cmd_reproduce(args) -> int:
    from cubiclab.experiments import CATALOG, reproduce
    from cubiclab.experiments import tally

    if args.list:
        from cubiclab.experiments.base import PAPERS

        print(f"{len(CATALOG)} entries")
        for seed, paper in PAPERS.items():
            entries = [(name, e) for name, e in CATALOG.items() if e.seed == seed]
            if entries:
                print(f"seed {seed}: {paper}")
            for name, e in entries:
                print(f"  {name:26s} {e.figure:14s} {e.title} [{e.evidence}]")
        return 0
    if not args.all and not args.names:
        raise ValueError("name one or more entries, or --all (see --list)")
    if args.all and args.names:
        raise ValueError("give entry names or --all, not both")
    if args.testbed_budget is not None and args.testbed_budget <= 0:
        raise ValueError(f"--testbed-budget is {args.testbed_budget:g}; allowed: > 0 seconds")
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs is {args.jobs}; allowed: >= 1")
    mode = "quick" if args.quick else args.mode
    if args.budget_scale is not None and args.testbed:
        raise ValueError("--budget-scale lengthens the simulator's runs; drop --testbed (its runs are capped by "
                         "--max-duration)")
    if args.stability and args.sensitivity:
        raise ValueError("give --stability or --sensitivity, not both")
    if args.stability:
        return _stability(args, mode)
    if args.sensitivity:
        return _sensitivity(args, mode)
    # SIGTERM (a scheduler's time limit, `kill`) stops like Ctrl-C: the pool's workers are
    # ended and what finished stays cached.
    on_term = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        outcomes = reproduce(None if args.all else args.names, mode=mode, seeds=args.seeds,
                             budget_scale=args.budget_scale, out=args.out,
                             jobs=args.jobs, ray=args.ray, cache=args.cache, progress=not args.quiet,
                             log=None if args.quiet else sys.stderr, testbed=args.testbed,
                             max_duration=args.max_duration, testbed_budget=args.testbed_budget)
    except (KeyboardInterrupt, SystemExit) as e:
        # A signal during a testbed run arrives as SystemExit(128 + signal) from the run's
        # cleanup (cubiclab.namespaces), Ctrl-C elsewhere as KeyboardInterrupt.
        code = e.code if isinstance(e, SystemExit) else 130
        if not (isinstance(code, int) and code > 128):
            raise
        print("\ncubiclab: interrupted; finished simulations (and testbed runs) are cached, run the same command "
              "again to resume",
              file=sys.stderr)
        return code
    finally:
        signal.signal(signal.SIGTERM, on_term)
    for o in outcomes:
        if o.error and args.quiet:  # without the log, a failure still says what happened: one line
            print(f"cubiclab: {o.name}: error: {o.error}", file=sys.stderr)
        for v in o.verdicts:
            print(f"{o.name:22s} {v.verdict:14s} {v.spec.id:30s} paper {v.spec.paper} | ours {v.ours} "
                  f"({v.spec.accept}{' ' + v.spec.unit if v.spec.unit else ''}) [{v.spec.kind}]")
    counts = tally.count(tally.claim_docs(outcomes))
    for (evidence, row), n in counts.items():
        print(f"{evidence}, {row}: " + ", ".join(f"{k} {v}" for v, k in n.items()))
    print(f"headline: {tally.headline_text(counts)}")
    return 1 if any(o.error for o in outcomes) else 0


def _exit_on_signal(signum, frame):
    raise SystemExit(128 + signum)


def _stability(args, mode: str) -> int:
    from cubiclab.experiments.stability import stability

    if mode != "full" or args.testbed:
        raise ValueError("--stability reruns full mode on the simulator; drop --mode/--quick/--testbed")
    rows = stability(None if args.all else args.names, seeds=args.seeds, budget_scale=args.budget_scale, out=args.out,
                     jobs=args.jobs, ray=args.ray,
                     cache=args.cache, progress=not args.quiet, log=None if args.quiet else sys.stderr)
    for r in rows:
        if r["changes"]:
            print(f"{r['entry']:22s} {r['claim']:30s} {'FLIPS' if r['flips'] else 'moves'}: " +
                  "; ".join(f"{k} {v} ({r['ours'][k]})" for k, v in r["verdicts"].items()))
    n = sum(r["flips"] for r in rows)
    print(f"{n} of {len(rows)} claims flip between holds and does not hold "
          f"({sum(r['changes'] for r in rows)} change verdict at all, {sum(r['crosses'] for r in rows)} cross their "
          f"tolerance); table in {args.out}/stability.md")
    return 1 if n else 0


def _sensitivity(args, mode: str) -> int:
    from cubiclab.experiments.sensitivity import sensitivity, summary

    if args.testbed:
        raise ValueError("--sensitivity reruns the simulator; drop --testbed")
    rows = sensitivity(None if args.all else args.names, mode=mode, seeds=args.seeds, budget_scale=args.budget_scale,
                       out=args.out, jobs=args.jobs, ray=args.ray, cache=args.cache, progress=not args.quiet,
                       log=None if args.quiet else sys.stderr)
    for r in rows:
        print(f"{r['entry']:22s} {r['claim']:30s} {r['verdict']:14s} {summary(r)}")
    varied = [r for r in rows if r["varied"]]
    print(f"{sum(not r['robust'] for r in varied)} of {len(varied)} claims with unstated settings depend on one; "
          f"table in {args.out}/sensitivity.md")
    return 0


def add_parsers(sub) -> None:
    """Add the `reproduce` subcommand to `sub`."""
    r = sub.add_parser("reproduce", help="rerun the seed papers' experiments: figures, data, HTML report")
    r.add_argument("names", nargs="*", help="catalog entries (or prefixes, e.g. s000) to run")
    r.add_argument("--all", action="store_true", help="run every entry")
    r.add_argument("--mode", choices=("full", "quick", "tiny"), default="full",
                   help="full: ensembles and steady-state run lengths (verdicts); quick: one short run per point "
                        "(indicative); tiny: seconds, to check the pipeline")
    r.add_argument("--quick", action="store_true", help="same as --mode quick")
    r.add_argument("--seeds", type=int, default=None, help="runs per point (full mode: default 5, at least 2)")
    r.add_argument("--budget-scale", type=float, default=None, metavar="K",
                   help="full mode: multiply every entry's run budget (bottleneck packets and seconds a run may "
                        "last) by K >= 1 (the default budget caps no run of the catalog's plan; a run a budget "
                        "capped lengthens toward the plan's congestion epochs, and each capped claim's note gives "
                        "the K it needs and the CPU time)")
    r.add_argument("--list", action="store_true", help="show the catalog")
    r.add_argument("--stability", action="store_true",
                   help="rerun the entries (full mode) at twice the duration and with other seeds, and list every "
                        "claim whose verdict flips between holds and does not hold (stability.md in --out)")
    r.add_argument("--sensitivity", action="store_true",
                   help="rerun the entries at each value of each setting their paper leaves unstated (one at a "
                        "time) and say of every claim whether it is robust or depends on a setting "
                        "(sensitivity.md in --out)")
    r.add_argument("--out", default="cubiclab-out/reproduce", help="output folder (report.html, one folder per entry)")
    r.add_argument("--jobs", type=int, default=None, help="worker processes (default: all local cores)")
    r.add_argument("--ray", default=None, metavar="auto|local|ADDRESS",
                   help="run the simulations on Ray (pip install 'cubiclab[ray]'); with --testbed the kernel runs "
                        "too, one at a time on each node that can run the testbed (the others are named and refused)")
    r.add_argument("--cache", default=None, help="run cache (default: OUT/cache or $CUBICLAB_CACHE)")
    r.add_argument("--quiet", action="store_true", help="no progress output")
    r.add_argument("--testbed", action="store_true",
                   help="also run every entry's scenarios on the real kernel (root; real time, one run at a time): "
                        "kernel.md gives paper / simulator / kernel per claim")
    r.add_argument("--max-duration", type=float, default=600.0, metavar="SECONDS",
                   help="with --testbed: longest run the testbed takes (default 600 s)")
    r.add_argument("--testbed-budget", type=float, default=None, metavar="SECONDS",
                   help="with --testbed: start no testbed run that would end more than this long after the "
                        "first (finished runs are cached: the same command continues); entries not wholly run "
                        "say how many of their runs are done")
    r.set_defaults(func=cmd_reproduce)
