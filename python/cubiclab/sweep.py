"""Sweeps: many simulations in parallel, each finished run cached, resumable, on local
cores or a Ray cluster.

A sweep is a list of `Run`s (a Scenario and tags that say what it varies). Each run's
cache key is a hash of its compiled scenario (every field in the simulator's integer
units, the seed included) and of the code that simulates it (cubiclab's version and a hash
of the compiled extension), so a changed simulator never serves stale results. A finished
run is written to ``<cache>/<key[:2]>/<key>/`` (Parquet tables, summary.json,
scenario.json) through a temporary folder renamed in one step: an interrupted sweep leaves
every finished run complete and nothing half-written, and the next call with the same runs
computes only what is missing. Identical runs in one sweep are simulated once.

    from cubiclab.sweep import Run, ensemble, run_sweep
    runs = [Run(sc.replace(seed=s), {"rtt": r}) for ...]        # or ensemble(sc, range(20))
    res = run_sweep(runs, cache="out/cache", jobs=None)          # all local cores
    res.frame(lambda r: {"util": r.summary["utilization"]})     # one row per run, with tags
    res.aggregate(fn, by=["rtt"])                                # mean/std/min/max over seeds

Ray: ``run_sweep(..., ray="auto")`` connects to a running cluster (``ray start --head``),
``ray="host:port"`` or ``"ray://host:10001"`` to a given one, ``ray="local"`` starts a
private local instance for this call. Needs ``pip install cubiclab[ray]``; results are
returned to this process and land in the same cache, so a sweep started locally can be
finished on a cluster and the other way round.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pandas as pd

from cubiclab.metrics import ci95_half_width
from cubiclab.io import atomic_dir
from cubiclab.results import Results
from cubiclab.scenario import Scenario

__all__ = ["Run", "ensemble", "run_key", "Cache", "SweepResult", "SweepError", "run_sweep", "code_version"]

_CODE_VERSION: str | None = None


def code_version() -> str:
    """cubiclab's version and a hash of the compiled simulator: part of every cache key."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        import cubiclab
        from cubiclab import _core

        h = hashlib.sha256()
        try:
            with open(_core.__file__, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        except (OSError, AttributeError, TypeError):
            h.update(b"unknown-core")
        _CODE_VERSION = f"{cubiclab.__version__}+{h.hexdigest()[:16]}"
    return _CODE_VERSION


def run_key(scenario: Scenario) -> str:
    """The cache key of a scenario: sha256 of its compiled form (which holds the seed) and
    the code version. The scenario's name is not part of it."""
    spec = scenario.compile()
    text = json.dumps({"spec": spec, "code": code_version()}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Run:
    """One simulation of a sweep: the scenario and tags naming what varies (for grouping
    and plotting). The seed is the scenario's."""

    scenario: Scenario
    tags: dict = field(default_factory=dict)
    _key: str | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        if self._key is None:
            self._key = run_key(self.scenario)
        return self._key

    @property
    def seed(self) -> int:
        return int(self.scenario.seed)


def ensemble(scenario: Scenario, seeds: Iterable[int], **tags) -> list[Run]:
    """The same scenario under several seeds: one Run per seed, tagged with `tags` and the
    seed."""
    return [Run(scenario.replace(seed=int(s)), {**tags, "seed": int(s)}) for s in seeds]


# ---- the cache ---------------------------------------------------------------------------


class Cache:
    """Finished runs on disk, one folder per key, each written atomically."""

    # Results' tables (flows, link, cwnd, rtt, losses, totals, web, ...): whatever this
    # build's Results holds besides the scenario and the summary.
    TABLES = tuple(f.name for f in fields(Results) if f.name not in ("scenario", "summary"))

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def has(self, key: str) -> bool:
        return (self.path(key) / "summary.json").is_file()

    def keys(self) -> list[str]:
        """Every finished run in the cache."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for d in self.root.iterdir() if d.is_dir() and not d.name.startswith(".")
                      for p in d.iterdir() if p.is_dir() and not p.name.startswith(".") and (p / "summary.json").is_file())

    def store(self, key: str, payload: dict) -> Path:
        """Write a payload (see `_payload`) under `key`, atomically; a run already present
        is kept as it is."""
        dest = self.path(key)
        if self.has(key):
            return dest
        with atomic_dir(dest) as tmp:
            for name, blob in payload["tables"].items():
                (tmp / f"{name}.parquet").write_bytes(blob)
            (tmp / "scenario.json").write_text(json.dumps(payload["scenario"], indent=1, default=str))
            # summary.json last: its presence marks a complete folder even for readers that
            # do not rely on the atomic rename.
            (tmp / "summary.json").write_text(json.dumps(payload["summary"], indent=1, default=str))
        return dest

    def load(self, key: str, scenario: Scenario | None = None) -> Results:
        d = self.path(key)
        if not self.has(key):
            raise KeyError(f"run {key[:12]} is not in the cache {self.root}")
        tables = {}
        for name in self.TABLES:
            p = d / f"{name}.parquet"
            tables[name] = pd.read_parquet(p) if p.exists() else pd.DataFrame()
        summary = json.loads((d / "summary.json").read_text())
        if scenario is None:
            scenario = Scenario.from_dict(json.loads((d / "scenario.json").read_text()))
        return Results(scenario, **tables, summary=summary)

    def clean_stale(self, older_than_s: float = 3600.0) -> int:
        """Remove temporary folders left by runs killed while writing (older than
        `older_than_s`, so a concurrent writer is not disturbed)."""
        n = 0
        if not self.root.is_dir():
            return 0
        now = time.time()
        for d in self.root.iterdir():
            if not d.is_dir():
                continue
            for p in d.iterdir():
                if p.name.startswith(".") and p.name.endswith(".tmp") and now - p.stat().st_mtime > older_than_s:
                    shutil.rmtree(p, ignore_errors=True)
                    n += 1
        return n


def _payload(res: Results) -> dict:
    tables = {}
    for name, df in res.tables().items():
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        tables[name] = buf.getvalue()
    return {"tables": tables, "summary": res.summary, "scenario": res.scenario.to_dict()}


def _simulate_payload(scenario_dict: dict) -> dict:
    """Worker: simulate one scenario (given as a plain dict) and return its payload."""
    from cubiclab.simulate import simulate

    return _payload(simulate(Scenario.from_dict(scenario_dict)))


# ---- results -----------------------------------------------------------------------------


class SweepError(RuntimeError):
    """Some runs failed; every other run is in the cache."""

    def __init__(self, failures: list[tuple[Run, BaseException]]):
        self.failures = failures
        lines = [f"{len(failures)} run(s) failed (the others are cached):"]
        for run, e in failures[:5]:
            lines.append(f"  {run.tags or run.scenario.name}: {type(e).__name__}: {e}")
        super().__init__("\n".join(lines))


@dataclass
class SweepResult:
    runs: list[Run]
    cache: Cache
    computed: int = 0
    cached: int = 0
    wall_s: float = 0.0
    failed: dict = field(default_factory=dict)  # key -> exception, with raise_errors=False

    def subset(self, runs: list[Run]) -> "SweepResult":
        """The same cache seen through some of the runs (e.g. one experiment's)."""
        return SweepResult(list(runs), self.cache, failed={k: e for k, e in self.failed.items()
                                                           if k in {r.key for r in runs}})

    def __len__(self) -> int:
        return len(self.runs)

    def results(self, i: int) -> Results:
        """The Results of run i, read from the cache."""
        run = self.runs[i]
        return self.cache.load(run.key, run.scenario)

    def items(self) -> Iterator[tuple[Run, Results]]:
        for i, run in enumerate(self.runs):
            yield run, self.results(i)

    def frame(self, fn: Callable[[Results], dict]) -> pd.DataFrame:
        """One row per run: its tags, its seed and whatever `fn(results)` returns (a dict
        of metrics)."""
        rows = []
        for run, res in self.items():
            rows.append({**run.tags, "seed": run.seed, **fn(res)})
        return pd.DataFrame(rows)

    def aggregate(self, fn: Callable[[Results], dict], by: list[str]) -> pd.DataFrame:
        """Seed ensembles: `frame(fn)` grouped by the tags `by`, with the mean, std (n-1),
        min and max of each metric over the runs of a group, and the half width of the mean's
        95 % confidence interval (Student's t, n-1 degrees of freedom: the mean +- metric_ci95;
        NaN for a single run): columns metric, metric_std, metric_min, metric_max,
        metric_ci95, and n."""
        df = self.frame(fn)
        metrics = [c for c in df.columns if c not in set(by) | {"seed"} and pd.api.types.is_numeric_dtype(df[c])]
        g = df.groupby(by, sort=False, dropna=False)
        out = g[metrics].mean()
        for suffix, agg in (("std", g[metrics].std(ddof=1)), ("min", g[metrics].min()), ("max", g[metrics].max())):
            out = out.join(agg.add_suffix(f"_{suffix}"))
        out["n"] = g.size()
        for m in metrics:
            out[f"{m}_ci95"] = [ci95_half_width(s, n) for s, n in zip(out[f"{m}_std"], out["n"])]
        return out.reset_index()


# ---- progress ----------------------------------------------------------------------------


class _Progress:
    """Runs done out of `total`, and the time left. Runs differ in cost by orders of magnitude
    (a catalog mixes 10-second runs at 10 Mbit/s with 500-second runs at 2.5 Gbit/s), so the
    estimate weighs each run by its `work` (planned bottleneck packets, what the simulator's
    cost follows) rather than counting runs: time left = work left x elapsed / work done."""

    def __init__(self, total: int, cached: int, enabled: bool, work: dict[str, float] | None = None,
                 stream=None):
        self.total, self.done, self.cached = total, cached, cached
        self.work = work or {}
        self.work_left, self.work_done = sum(self.work.values()), 0.0
        self.enabled = enabled and total > 0
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last = -1.0
        self.show(force=True)

    def tick(self, key: str | None = None):
        """One run finished (`key`: its key in `work`)."""
        self.done += 1
        w = self.work.get(key, 0.0)
        self.work_done += w
        self.work_left -= w
        self.show(force=self.done == self.total)

    def seconds_left(self, elapsed: float) -> float:
        """Time left at `elapsed` seconds; NaN before the first run finished."""
        if self.work_done > 0:
            return max(0.0, self.work_left) * elapsed / self.work_done
        new = self.done - self.cached
        return (self.total - self.done) * elapsed / new if new > 0 else math.nan

    def show(self, force=False):
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < (0.2 if self.tty else 10.0):
            return
        self.last = now
        el = now - self.t0
        left = self.seconds_left(el)
        width = 28
        fill = int(width * self.done / self.total)
        eta = "" if math.isnan(left) else f"  ~{_hms(left)} left"
        line = (f"[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} runs"
                f" ({self.cached} cached)  {_hms(el)}{eta}")
        print(("\r" + line + "  ") if self.tty else line, end="" if self.tty else "\n", file=self.stream, flush=True)

    def close(self):
        if self.enabled and self.tty:
            print(file=self.stream)


def _hms(s: float) -> str:
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


# ---- running -----------------------------------------------------------------------------


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run_sweep(runs: list[Run], cache: str | Path | Cache, jobs: int | None = None, ray: str | None = None,
              progress: bool = True, raise_errors: bool = True) -> SweepResult:
    """Simulate every run not yet in `cache`, in parallel, and return a SweepResult over all.

    jobs: worker processes (default: all local cores; 1 runs in this process). ray: None for
    local processes, else a Ray address ("auto", "local", "host:port", "ray://..."). Ctrl-C
    stops the sweep: finished runs stay cached and the next call resumes. A run that raises
    is reported in a SweepError after the others have finished (with raise_errors=False,
    in SweepResult.failed instead)."""
    cache = cache if isinstance(cache, Cache) else Cache(cache)
    t0 = time.perf_counter()
    cache.clean_stale()
    todo: dict[str, Run] = {}
    for run in runs:  # keys first: a bad scenario fails here, before anything runs
        if not cache.has(run.key):
            todo.setdefault(run.key, run)
    n_unique = len({r.key for r in runs})
    bar = _Progress(n_unique, n_unique - len(todo), progress,
                    work={key: run.scenario.bottleneck_packets() for key, run in todo.items()})
    failures: list[tuple[Run, BaseException]] = []
    try:
        if todo:
            if ray is not None:
                _run_ray(todo, cache, ray, bar, failures)
            elif (jobs or default_jobs()) <= 1 or len(todo) == 1:
                _run_inline(todo, cache, bar, failures)
            else:
                _run_pool(todo, cache, min(jobs or default_jobs(), len(todo)), bar, failures)
    finally:
        bar.close()
    if failures and raise_errors:
        raise SweepError(failures)
    return SweepResult(list(runs), cache, computed=len(todo) - len(failures), cached=n_unique - len(todo),
                       wall_s=time.perf_counter() - t0, failed={r.key: e for r, e in failures})


def _run_inline(todo, cache, bar, failures):
    for key, run in todo.items():
        try:
            payload = _simulate_payload(run.scenario.to_dict())
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - reported after the others
            failures.append((run, e))
            continue
        cache.store(key, payload)
        bar.tick(key)


def _run_pool(todo, cache, jobs, bar, failures):
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # fork: workers start at once and a user's script needs no `if __name__ == "__main__"`
    # guard (spawn and forkserver re-import the main module). Arrow re-creates its thread
    # pools after a fork.
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
    futures = {}
    try:
        for key, run in todo.items():
            futures[ex.submit(_simulate_payload, run.scenario.to_dict())] = key
        for fut in as_completed(futures):
            key = futures[fut]
            try:
                payload = fut.result()
            except KeyboardInterrupt:
                raise
            except Exception as e:  # noqa: BLE001
                failures.append((todo[key], e))
                continue
            cache.store(key, payload)
            bar.tick(key)
    except BaseException:
        for f in futures:
            f.cancel()
        procs = list(getattr(ex, "_processes", {}).values())
        ex.shutdown(wait=False, cancel_futures=True)
        for p in procs:  # do not wait for runs in progress: they are redone next time
            if p.is_alive():
                p.terminate()
        raise
    ex.shutdown(wait=True)


def _run_ray(todo, cache, address, bar, failures):
    try:
        import ray
    except ImportError:
        raise ValueError("--ray needs Ray: pip install 'cubiclab[ray]'") from None
    started = False
    if not ray.is_initialized():
        try:
            if address in ("local", "", None):
                ray.init(include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        except Exception as e:  # noqa: BLE001 - Ray raises several kinds
            raise ValueError(f"--ray {address}: could not start or reach Ray ({type(e).__name__}: {e}); "
                             f"'auto' needs a running cluster (ray start --head), 'local' starts one") from None
        started = True
    try:
        remote = ray.remote(_simulate_payload)
        pending = {remote.remote(run.scenario.to_dict()): key for key, run in todo.items()}
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                ref = done[0]
                key = pending.pop(ref)
                try:
                    payload = ray.get(ref)
                except Exception as e:  # noqa: BLE001
                    failures.append((todo[key], e))
                    continue
                cache.store(key, payload)
                bar.tick(key)
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
