"""Run catalog entries: gather their simulations into one sweep (so all cores stay busy
across entries), then analyse each entry, write its figures (PNG, SVG), data (Parquet) and
claims (JSON), and the HTML report."""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

from cubiclab.experiments.base import CATALOG, Outcome
from cubiclab.io import atomic_path, atomic_write_text
from cubiclab.report import write_report
from cubiclab.sweep import run_sweep


def default_cache(out: Path) -> Path:
    return Path(os.environ.get("CUBICLAB_CACHE", Path(out) / "cache"))


def select(names: list[str] | None) -> list:
    if not names:
        return list(CATALOG.values())
    out = []
    for n in names:
        matches = [e for k, e in CATALOG.items() if k == n] or [e for k, e in CATALOG.items() if k.startswith(n)]
        if not matches:
            raise ValueError(f"no catalog entry '{n}'; `cubiclab reproduce --list` shows them")
        out += [m for m in matches if m not in out]
    return out


def reproduce(names: list[str] | None = None, quick: bool = False, out: str | Path = "cubiclab-out/reproduce",
              jobs: int | None = None, ray: str | None = None, cache: str | Path | None = None,
              progress: bool = True, report: bool = True, log=sys.stderr, testbed: bool = False,
              max_duration: float = 600.0) -> list[Outcome]:
    """Run the named entries (all when None) and return their Outcomes; figures, data,
    claims and report.html go under `out`. With `testbed`, the runs are also made on the
    real kernel (`experiments/testbed_backend.py`, each at most `max_duration` seconds) and
    each entry's folder gets kernel.json, `out` kernel.md: paper / simulator / kernel."""
    out = Path(out)
    cache = Path(cache) if cache else default_cache(out)
    exps = select(names)
    plans = []
    all_runs = []
    for e in exps:
        e.caveats = []
        why = e.missing()
        runs = []
        if not why:
            try:
                runs = e.runs(quick)
                for r in runs:
                    r.key  # compiles the scenario: a bad one is reported for this entry only
            except ValueError as err:
                why = f"could not build its scenarios: {err}"
                runs = []
        plans.append((e, why, runs))
        all_runs += runs
    if log and all_runs:
        n = len({r.key for r in all_runs})
        print(f"cubiclab: {len(exps)} entries, {n} distinct simulations (cache: {cache})", file=log)
    t0 = time.perf_counter()
    sweep = run_sweep(all_runs, cache, jobs=jobs, ray=ray, progress=progress and bool(log), raise_errors=False)
    sim_wall = time.perf_counter() - t0
    if testbed:
        from cubiclab.experiments import testbed_backend

        kernel_runs = testbed_backend.run_all([r for _, why, runs in plans if not why for r in runs], cache,
                                              max_duration, log)
        kernel_rows = []
    outcomes = []
    for e, why, runs in plans:
        edir = out / e.name
        if why:
            o = e.outcome(skipped=why)
            if log:
                print(f"  {e.name}: skipped ({why})", file=log)
            outcomes.append(o)
            _write_claims(edir, o)
            continue
        sub = sweep.subset(runs)
        t1 = time.perf_counter()
        if sub.failed:
            k, err = next(iter(sub.failed.items()))
            o = e.outcome(error=f"{len(sub.failed)} simulation(s) failed; first: {type(err).__name__}: {err}",
                          runs=len(runs))
        else:
            try:
                o = e.analyse(sub, quick, edir)
            except Exception as err:  # noqa: BLE001 - one entry's bug must not sink the report
                o = e.outcome(error=f"{type(err).__name__}: {err}", runs=len(runs))
                if log:
                    traceback.print_exc(file=log)
        o.runs = len(runs)
        o.wall_s = time.perf_counter() - t1 + (sim_wall * len(runs) / max(len(all_runs), 1))
        _write_data(edir, o)
        _write_claims(edir, o)
        outcomes.append(o)
        if testbed:
            ko = testbed_backend.kernel_outcome(e, runs, kernel_runs, quick, edir)
            kernel_rows.append((o, ko, testbed_backend.write(edir, o, ko)))
        if log:
            h = sum(c.holds is True for c in o.claims)
            f = sum(c.holds is False for c in o.claims)
            status = f"error: {o.error}" if o.error else f"{h} hold, {f} do not"
            print(f"  {e.name}: {status}", file=log)
    if testbed:
        atomic_write_text(out / "kernel.md", testbed_backend.markdown(kernel_rows))
        if log:
            print(f"cubiclab: paper / simulator / kernel in {out / 'kernel.md'}", file=log)
    if report:
        from cubiclab.experiments.base import features

        extra = ("Each claim is a statement of the paper, made measurable as its row says; 'paper' is the "
                 "paper's value, 'ours' what the simulation gives, 'tolerance' what counts as agreement. The "
                 "papers measured testbeds (seeds 000, 002), ns-2 (001) or their own models (003, 004); we run "
                 "one packet simulator with the algorithm versions named in each setup. Simulator features in "
                 f"this build: {', '.join(sorted(features())) or 'none beyond drop-tail'}.")
        path = write_report(outcomes, out / "report.html", quick=quick, extra=extra)
        if log:
            print(f"cubiclab: report {path}", file=log)
    return outcomes


def _write_data(edir: Path, o: Outcome):
    for name, df in o.data.items():
        with atomic_path(edir / f"{name}.parquet") as tmp:
            df.to_parquet(tmp, index=False)


def _write_claims(edir: Path, o: Outcome):
    doc = {"name": o.name, "seed": o.seed, "figure": o.figure, "title": o.title, "skipped": o.skipped,
           "error": o.error, "caveats": o.caveats, "claims": [c.to_dict() for c in o.claims],
           "figures": [str(p) for p in o.figures]}
    atomic_write_text(edir / "claims.json", json.dumps(doc, indent=2) + "\n")
