"""Run catalog entries: gather their simulations into one sweep (so all cores stay busy
across entries), then analyse each entry, write its figures (PNG, SVG), data (Parquet) and
verdicts (JSON), and the HTML report. `simulate_runs` is the one place runs are executed,
so that another backend (a testbed) can take the simulator's place."""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from cubiclab.experiments.base import CATALOG, Mode, Outcome, mode_named
from cubiclab.io import atomic_path, atomic_write_text, writable_folder
from cubiclab.provenance import provenance
from cubiclab.report import write_report
from cubiclab.sweep import CacheError, SweepResult, run_label, run_sweep


def default_cache(out: Path) -> Path:
    return Path(os.environ.get("CUBICLAB_CACHE", Path(out) / "cache"))


def check_output_places(out: Path, cache: str | Path | None) -> Path:
    """Create `out` and the cache folder and check that both can be written, before any
    work (ValueError naming the option otherwise); return the cache folder."""
    writable_folder(out, "--out")
    if cache:
        return writable_folder(cache, "--cache")
    return writable_folder(default_cache(out), "CUBICLAB_CACHE" if "CUBICLAB_CACHE" in os.environ else "--cache (default OUT/cache)")


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


def simulate_runs(runs, cache: Path, jobs: int | None, ray: str | None, progress: bool) -> SweepResult:
    """Execute the runs (the simulator, in local processes or on Ray), cached."""
    return run_sweep(runs, cache, jobs=jobs, ray=ray, progress=progress, raise_errors=False)


def reproduce(names: list[str] | None = None, mode: str | Mode = "full", seeds: int | None = None,
              budget_scale: float | None = None,
              out: str | Path = "cubiclab-out/reproduce", jobs: int | None = None, ray: str | None = None,
              cache: str | Path | None = None, progress: bool = True, report: bool = True,
              log=sys.stderr, testbed: bool = False, max_duration: float = 600.0,
              testbed_budget: float | None = None) -> list[Outcome]:
    """Run the named entries (all when None) in `mode` ("full", "quick" or "tiny"; `seeds`
    runs per condition, default the mode's; full mode's run budget times `budget_scale`)
    and return their Outcomes; figures, data, verdicts and report.html go under `out`. With `testbed`, the runs are also made on the
    real kernel (`experiments/testbed_backend.py`, each at most `max_duration` seconds, all
    within `testbed_budget` seconds of wall time if given) and
    each entry's folder gets kernel.json, `out` kernel.md: paper / simulator / kernel. `ray`
    (a Ray address) runs the simulations, and the kernel runs too, on a Ray cluster."""
    out = Path(out)
    m = mode if isinstance(mode, Mode) else mode_named(mode, seeds, budget_scale)
    exps = select(names)
    cache = check_output_places(out, cache)
    plans, all_runs = [], []
    for e in exps:
        try:
            runs = e.runs(m)
            for r in runs:
                r.key  # compiles the scenario: a bad one is reported for this entry only
            why = ""
        except ValueError as err:
            runs, why = [], f"could not build its scenarios: {err}"
        plans.append((e, why, runs))
        all_runs += runs
    if log and all_runs:
        distinct = {r.key: r for r in all_runs}
        packets = sum(r.scenario.bottleneck_packets() for r in distinct.values())
        capped = sum(bool(r.tags.get("capped")) for r in distinct.values())
        print(f"cubiclab: {len(exps)} entries, {len(distinct)} distinct simulations ({packets / 1e6:.0f} M bottleneck "
              f"packets, {capped} capped by the run budget), {m.name} mode, {m.seeds} seed(s) per point "
              f"(cache: {cache})", file=log)
    t_all, cpu_own, cpu_workers = time.perf_counter(), time.process_time(), _children_cpu_s()
    t0 = time.perf_counter()
    sweep = simulate_runs(all_runs, cache, jobs, ray, progress and bool(log))
    sim_wall = time.perf_counter() - t0
    if testbed:
        from cubiclab.experiments import testbed_backend

        runnable = [(e.name, runs) for e, why, runs in plans if not why]
        kernel_runs = testbed_backend.run_all([runs for _, runs in runnable], cache, max_duration, log,
                                              budget_s=testbed_budget, names=[name for name, _ in runnable], ray=ray)
        kernel_rows = []
    outcomes = []
    for e, why, runs in plans:
        edir = out / e.name
        t1 = time.perf_counter()
        sub = sweep.subset(runs) if runs else None
        if why:
            o = e.outcome(m, error=why)
        elif sub is not None and sub.failed:
            k, err = next(iter(sub.failed.items()))
            run = next(r for r in runs if r.key == k)
            o = e.outcome(m, error=f"{len(sub.failed)} of {len({r.key for r in runs})} simulation(s) failed; first: run {k[:12]} "
                                   f"({run_label(run)}): {type(err).__name__}: {err}")
        else:
            try:
                o = e.analyse(sub, m, edir)
            except CacheError as err:  # damaged after the sweep verified it (another process)
                o = e.outcome(m, error=str(err))
            except Exception as err:  # noqa: BLE001 - one entry's bug must not sink the report
                o = e.outcome(m, error=f"{type(err).__name__}: {err}")
                if log:
                    traceback.print_exc(file=log)
        o.runs = len(runs)
        o.wall_s = time.perf_counter() - t1 + (sim_wall * len(runs) / max(len(all_runs), 1))
        _write_data(edir, o)
        _write_verdicts(edir, o)
        outcomes.append(o)
        if testbed:
            ko = testbed_backend.kernel_outcome(e, runs, kernel_runs, m, edir)
            kernel_rows.append((o, ko, testbed_backend.write(edir, o, ko)))
        if log:
            counts = Counter(v.verdict for v in o.verdicts)
            status = f"error: {o.error}" if o.error else ", ".join(f"{n} {k}" for k, n in counts.items())
            print(f"  {e.name}: {status}", file=log)
    if testbed:
        atomic_write_text(out / "kernel.md", testbed_backend.markdown(kernel_rows))
        if log:
            print(f"cubiclab: paper / simulator / kernel in {out / 'kernel.md'}", file=log)
    if report:
        path = write_report(outcomes, out / "report.html", mode=m)
        if log:
            print(f"cubiclab: report {path}", file=log)
    if log:
        cpu = time.process_time() - cpu_own + _children_cpu_s() - cpu_workers
        print(f"cubiclab: {m.name} mode took {time.perf_counter() - t_all:.0f} s of wall time, {sim_wall:.0f} s of it "
              f"simulating, and {cpu:.0f} CPU s here and in local workers (cached runs cost none; a Ray cluster's "
              "are not counted)", file=log)
    return outcomes


def _children_cpu_s() -> float:
    """CPU seconds of this process's finished child processes (the local workers); 0 where
    the platform does not count them."""
    try:
        import resource
    except ImportError:  # Windows
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _write_data(edir: Path, o: Outcome):
    for name, df in o.data.items():
        with atomic_path(edir / f"{name}.parquet") as tmp:
            df.to_parquet(tmp, index=False)


def _write_verdicts(edir: Path, o: Outcome):
    doc = {**o.to_doc(edir.parent), "provenance": provenance()}
    atomic_write_text(edir / "claims.json", json.dumps(doc, indent=2, default=str) + "\n")
