"""The catalog on the real kernel (`cubiclab reproduce --testbed`): the runs an entry needs,
run again as Linux TCP through the testbed's emulator, analysed by the entry's own
`analyse`, and set beside the simulator's claims as a third column.

A run the testbed cannot take is named with the reason (a rate above the emulator's limit,
an algorithm this kernel does not offer, a duration above the bound the user can raise with
``--max-duration``, anything else :func:`cubiclab.testbed.plan` refuses). Finished runs are
cached apart from the simulator's (``<cache>/testbed``), each under a key of what the kernel
run uses (:mod:`cubiclab.testbed.cache_key`: a rebuilt extension keeps them), so an
interrupted reproduction resumes where it stopped. Each run has its own time bound and
removes its namespaces on every exit path (:mod:`cubiclab.testbed.run`).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cubiclab.experiments.base import Outcome
from cubiclab.experiments.claims import INDICATIVE, KERNEL, NOT_MEASURED
from cubiclab.io import atomic_write_text
from cubiclab.sweep import Cache, Run, SweepResult, _payload, run_label

#: Above this the emulator's rate is not trusted (docs/testbed/README.md, "Accuracy").
MAX_RATE_BPS = 1_000_000_000
#: Seconds between two testbed runs of a reproduction, for other processes waiting for the
#: kernel lab (see `run_all`).
LOCK_PAUSE_S = 2.0
#: Lab time a testbed run takes besides its duration (namespaces, emulator and traffic
#: processes started, the run's time origin 1.5-3 s ahead, the results read back): 7-19 s
#: in the 23 Nov 2026 kernel runs that did not wait for the lab, at load 5-13
#: (docs/testbed/lab-time.md).
SETUP_S = 15.0


@dataclass
class KernelRuns:
    """The testbed's side of a reproduction: its cache and, per run (by its simulator key),
    why the testbed cannot run it, whether it failed or is pending, and its kernel-run
    cache key."""

    cache: Cache
    #: Simulator key -> the kernel run's cache key (`cache_key.kernel_run_key`).
    kernel_key: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)
    failed: dict = field(default_factory=dict)
    #: Runs not started because the time budget ran out (scenario keys).
    pending: set = field(default_factory=set)


def plan_run(run: Run, max_duration: float):
    """``(plan, None)``: the testbed's plan of `run` (its scenario compiled once, for the
    cache key and the run alike); ``(None, why)`` if the testbed cannot run it."""
    from cubiclab.scenario import compiled_links
    from cubiclab.testbed.emu import peak_rate_bps
    from cubiclab.testbed.run import plan

    try:
        p = plan(run.scenario, max_duration)
    except ValueError as e:
        return None, str(e)
    for link in compiled_links(p.spec):
        rate = peak_rate_bps(link)
        if rate > MAX_RATE_BPS:
            kind = "schedule's peak rate" if link.get("schedule") else "rate"
            what = f"{link.get('name', 'bottleneck')} {kind}"
            return None, f"{what} {rate / 1e6:g} Mbit/s is above the emulator's {MAX_RATE_BPS / 1e6:g} Mbit/s"
    return p, None


def why_not(run: Run, max_duration: float) -> str | None:
    """None if the testbed can run `run`, else why not."""
    return plan_run(run, max_duration)[1]


def _lab_time(durations_s) -> float:
    durations_s = list(durations_s)
    return sum(d + SETUP_S for d in durations_s) + LOCK_PAUSE_S * max(0, len(durations_s) - 1)


def lab_time_s(runs) -> float:
    """Projected lab time of `runs` one after another: each one's duration, its set-up and
    the pause between runs."""
    return _lab_time(r.scenario.compile()["duration"] / 1e9 for r in runs)


def _duration_text(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 7200 else f"{s / 60:.1f} min"


def run_all(entries: list[list[Run]], cache_root: Path, max_duration: float, log=sys.stderr,
            budget_s: float | None = None, names: list[str] | None = None, ray: str | None = None) -> KernelRuns:
    """Run on the testbed every run of `entries` (one list of runs per entry) not yet in its
    cache, one after another (each needs the whole machine), entry by entry; an entry with a
    run the testbed cannot take is not run at all (its analysis needs every run). With
    `budget_s`, no run starts whose planned end (its duration after the time spent so far)
    lies beyond the budget: those are left pending. Ctrl-C stops, and the next call
    resumes. Before the first run it prints the projected lab time, per entry with
    `names` (one per entry). With `ray` (a Ray address), the runs go to the cluster's nodes
    that can take them, one at a time each (:mod:`cubiclab.experiments.testbed_ray`)."""
    from cubiclab.testbed.cache_key import kernel_run_key
    from cubiclab.testbed.run import testbed

    kr = KernelRuns(Cache(Path(cache_root) / "testbed"))
    planned = {}  # run key -> plan_run(run): each scenario compiled once, shared runs included
    todo: dict[str, Run] = {}
    per_entry = []  # (name, the runs this entry adds to todo)
    for name, runs in zip(names or [None] * len(entries), entries):
        before = len(todo)
        for r in runs:
            if r.key not in planned:
                planned[r.key] = plan_run(r, max_duration)
        # Only the run the testbed cannot take is named refused (another entry may share
        # its partners and need them); `kernel_outcome` refuses the whole entry from it.
        reasons = {r.key: why for r in runs if (why := planned[r.key][1])}
        kr.refused.update(reasons)
        if not reasons:
            for r in runs:
                if r.key not in kr.kernel_key:
                    kr.kernel_key[r.key] = kernel_run_key(r.scenario, planned[r.key][0].compiled)
                if r.key not in todo and kr.cache.must_compute(kr.kernel_key[r.key], f"kernel run of {run_label(r)}"):
                    todo[r.key] = r
        per_entry.append((name, list(todo)[before:]))

    def duration_s(key: str) -> float:
        return planned[key][0].spec["duration"] / 1e9

    if log and todo:
        total_s = sum(map(duration_s, todo))
        lab_s = _lab_time(map(duration_s, todo))
        print(f"cubiclab: {len(todo)} testbed runs, {_duration_text(total_s)} of run time; projected lab time "
              f"{_duration_text(lab_s)} (with {SETUP_S:g} s of set-up a run; cache: {kr.cache.root})", file=log)
        for name, keys in per_entry:
            if name and keys:
                print(f"  {name}: {len(keys)} runs, {_duration_text(_lab_time(map(duration_s, keys)))}", file=log)
        if budget_s is None and lab_s > 3600:
            print("cubiclab: --testbed-budget SECONDS runs what fits in that time; the same command continues",
                  file=log)
    if ray is not None and todo:
        from cubiclab.experiments import testbed_ray

        testbed_ray.run(todo, kr, duration_s, ray, max_duration, log, budget_s)
        return kr
    t_all = time.monotonic()
    for i, (key, run) in enumerate(todo.items()):
        if i:
            # Each run takes the kernel-lab lock and drops it at its end; a process waiting
            # for the lock is woken then, but this process, still on the CPU, would take it
            # again first. A pause lets another engineer's run in between ours.
            time.sleep(LOCK_PAUSE_S)
        planned_s = duration_s(key)
        if budget_s is not None and time.monotonic() - t_all + planned_s > budget_s:
            kr.pending = set(list(todo)[i:])
            if log:
                print(f"cubiclab: the testbed budget of {budget_s:g} s leaves {len(kr.pending)} run(s) for the next "
                      f"call", file=log)
            break
        t0 = time.monotonic()
        try:
            res = testbed(run.scenario, trace=False, max_duration=max_duration, planned=planned[key][0])
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - one run's failure must not sink the others
            kr.failed[key] = e
            if log:
                print(f"  testbed run {i + 1}/{len(todo)} failed: {type(e).__name__}: {e}", file=log)
            continue
        kr.cache.store(kr.kernel_key[key], _payload(res))
        if log:
            print(f"  testbed run {i + 1}/{len(todo)} done in {time.monotonic() - t0:.0f} s", file=log)
    return kr


def kernel_outcome(entry, runs: list[Run], kr: KernelRuns, mode, edir: Path) -> Outcome:
    """The entry analysed on the kernel's runs (its evidence the kernel testbed), or an
    outcome whose error says why it could not be."""
    o = _kernel_outcome(entry, runs, kr, mode, edir)
    o.evidence = KERNEL
    return o


def _kernel_outcome(entry, runs: list[Run], kr: KernelRuns, mode, edir: Path) -> Outcome:
    """The entry analysed on the kernel's runs, or an outcome whose error says why it could
    not be."""
    refused = [kr.refused[r.key] for r in runs if r.key in kr.refused]
    if refused:
        return entry.outcome(mode, error=f"the testbed cannot run it: {refused[0]}")
    pending = {r.key for r in runs} & kr.pending
    if pending:
        n = len({r.key for r in runs})
        return entry.outcome(mode, error=f"not wholly run on the kernel yet: {n - len(pending)} of {n} testbed runs "
                             "done within the time budget (--testbed-budget); the same command continues")
    failed = [kr.failed[r.key] for r in runs if r.key in kr.failed]
    if failed:
        return entry.outcome(mode, error=f"{len(failed)} testbed run(s) failed; first: {failed[0]}")
    if not runs:
        return entry.outcome(mode, error="it has no runs (its claims come from models, not experiments)")
    kernel_runs = [Run(r.scenario, r.tags, _key=kr.kernel_key[r.key]) for r in runs]
    return entry.analyse(SweepResult(kernel_runs, kr.cache), mode, edir / "kernel")


def verdict_label(v) -> str:
    """A verdict as the three columns show it. Quick and tiny modes judge nothing
    ("indicative"), so there the label carries the side of the tolerance the one value
    falls on: without it every quick-mode claim would "agree"."""
    if v.verdict == INDICATIVE and v.n:
        a = v.spec.accept
        return f"indicative: {'inside' if a.lo <= v.mean <= a.hi else 'outside'}"
    return v.verdict


def columns(sim: Outcome, kernel: Outcome) -> list[dict]:
    """Per claim of the simulator's outcome: the paper's value, the simulator's and the
    kernel's, the verdict on each, and whether the two agree."""
    by_id = {v.spec.id: v for v in kernel.verdicts}
    rows = []
    for v in sim.verdicts:
        k = by_id.get(v.spec.id)
        measured = k is not None and NOT_MEASURED not in (v.verdict, k.verdict)
        rows.append({
            "id": v.spec.id, "quote": v.spec.quote, "paper": v.spec.paper, "tolerance": str(v.spec.accept),
            "simulator": v.ours, "simulator_verdict": verdict_label(v),
            "kernel": k.ours if k else "n/a",
            "kernel_verdict": verdict_label(k) if k else (kernel.error or "not tested"),
            # Agreement: both sides reach the same verdict (in quick mode: the same side of
            # the tolerance); unknown where either side measured nothing.
            "agree": verdict_label(k) == verdict_label(v) if measured else None,
        })
    return rows


def write(edir: Path, sim: Outcome, kernel: Outcome) -> list[dict]:
    """Write ``kernel.json`` (the three columns) into the entry's folder; return the rows."""
    rows = columns(sim, kernel)
    doc = {"name": sim.name, "kernel_error": kernel.error, "claims": rows}
    atomic_write_text(edir / "kernel.json", json.dumps(doc, indent=2) + "\n")
    return rows


def markdown(results: list[tuple[Outcome, Outcome, list[dict]]]) -> str:
    """All entries' claims as one table: paper / simulator / kernel."""
    out = ["| entry | claim | paper | simulator | kernel | agree |", "|---|---|---|---|---|---|"]
    for sim, kernel, rows in results:
        if not rows:
            out.append(f"| {sim.name} | – | – | {sim.error or '-'} | {kernel.error or '-'} | |")
        for r in rows:
            agree = {True: "yes", False: "no", None: ""}[r["agree"]]
            out.append(f"| {sim.name} | {r['id']} | {r['paper']} | {r['simulator']} ({r['simulator_verdict']}) "
                       f"| {r['kernel']} ({r['kernel_verdict']}) | {agree} |")
    return "\n".join(out) + "\n"
