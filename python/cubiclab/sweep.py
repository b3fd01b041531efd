"""Sweeps: many simulations in parallel, each finished run cached, resumable, on local
cores or a Ray cluster.

A sweep is a list of `Run`s (a Scenario and tags that say what it varies). Each run's
cache key is a hash of its compiled scenario (every field in the simulator's integer
units, the seed included) and of the code that simulates it (cubiclab's version and a hash
of the compiled extension), so a changed simulator never serves stale results. A finished
run is written to ``<cache>/<key[:2]>/<key>/`` (Parquet tables, summary.json,
scenario.json, and manifest.json with every file's size and checksum) through a temporary
folder renamed in one step: an interrupted sweep leaves every finished run complete and
nothing half-written, and the next call with the same runs computes only what is missing.
A cached run whose manifest does not verify (a file lost, truncated or altered) is
recomputed and replaced, with one line on stderr saying so. Identical runs in one sweep are
simulated once. Local workers end with the sweep, however it ends.

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

from cubiclab.io import atomic_dir, atomic_write_text, writable_folder
from cubiclab.metrics import ci95_half_width
from cubiclab.results import Results
from cubiclab.scenario import Scenario

__all__ = ["Run", "ensemble", "run_key", "Cache", "CacheError", "SweepResult", "SweepError", "run_sweep", "code_version"]

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
    spec = _without_trace_files(scenario.compile())
    text = json.dumps({"spec": spec, "code": code_version()}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _without_trace_files(spec):
    """The compiled scenario with each trace named by its digest alone: the digest of its
    opportunities owns what the run computes, and where the file lies (another install's
    copy of a shipped trace, a moved folder) does not."""
    if isinstance(spec, dict):
        if spec.get("kind") == "trace" and "digest" in spec:
            return {k: v for k, v in spec.items() if k != "file"}
        return {k: _without_trace_files(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_without_trace_files(v) for v in spec]
    return spec


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


class CacheError(ValueError):
    """A cached run that cannot be read as it was stored (missing, damaged or partial)."""


class Cache:
    """Finished runs on disk, one folder per key, each written atomically and described by
    a manifest that lets a reader tell a whole run from a damaged one.

    A run's folder holds its tables (Parquet), summary.json, scenario.json and, written
    last, manifest.json: the key, the build (`code_version`) and every other file's size
    and sha256. A run counts as cached only if its manifest verifies; `verify` says why one
    does not, `store` replaces such a run whole. Any process or machine may store into a
    shared cache: a run appears by one rename, and of two writers of the same run the
    second keeps the first's copy."""

    # Results' tables (flows, link, cwnd, rtt, losses, totals, web, ...): whatever this
    # build's Results holds besides the scenario and the summary.
    TABLES = tuple(f.name for f in fields(Results) if f.name not in ("scenario", "summary"))
    MANIFEST = "manifest.json"
    FORMAT = 1  # of the manifest; another value does not verify

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self._verified: dict[str, int] = {}  # key -> manifest mtime_ns when it last verified

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def has(self, key: str) -> bool:
        return self.verify(key) is None

    def verify(self, key: str) -> str | None:
        """None if the run `key` is cached whole; else why not ("not cached" when there is
        no folder, otherwise what is missing or damaged)."""
        d = self.path(key)
        try:
            stamp = (d / self.MANIFEST).stat().st_mtime_ns
        except OSError:
            if not d.exists():
                return "not cached"
            try:
                stamp = self._adopt(key)
            except CacheError as e:
                return str(e)
        if self._verified.get(key) == stamp:
            return None
        try:
            manifest = self._manifest(key)
            for name in manifest["files"]:
                self._read(key, manifest, name)
        except CacheError as e:
            return str(e)
        self._verified[key] = stamp
        return None

    def must_compute(self, key: str, label: str) -> bool:
        """True if run `key` is to be computed: not cached, or cached but not whole, which
        one line on stderr says (`label` names the run for a reader) before it is redone and
        `store` replaces it."""
        why = self.verify(key)
        if why not in (None, "not cached"):
            print(f"cubiclab: {why}; recomputing run {key[:12]} ({label})", file=sys.stderr)
        return why is not None

    def keys(self) -> list[str]:
        """Every run in the cache with a manifest (`verify` checks it)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for d in self.root.iterdir() if d.is_dir() and not d.name.startswith(".")
                      for p in d.iterdir() if p.is_dir() and not p.name.startswith(".") and (p / self.MANIFEST).is_file())

    def store(self, key: str, payload: dict) -> Path:
        """Write a payload (see `_payload`) under `key` in one step; a run already cached
        whole is kept as it is, one that does not verify is replaced."""
        dest = self.path(key)
        if self.has(key):
            return dest
        files = {f"{name}.parquet": blob for name, blob in payload["tables"].items()}
        files["scenario.json"] = json.dumps(payload["scenario"], indent=1, default=str).encode()
        files["summary.json"] = json.dumps(payload["summary"], indent=1, default=str).encode()
        manifest = self._describe(key, files)
        with atomic_dir(dest, replace=dest.exists()) as tmp:
            for name, blob in files.items():
                (tmp / name).write_bytes(blob)
            (tmp / self.MANIFEST).write_text(json.dumps(manifest, indent=1))
        self._verified.pop(key, None)
        return dest

    def load(self, key: str, scenario: Scenario | None = None) -> Results:
        """The Results of run `key`, each file checked against the manifest as it is read;
        CacheError if the run is not cached whole."""
        manifest = self._manifest(key)
        tables = {name: pd.read_parquet(io.BytesIO(self._read(key, manifest, f"{name}.parquet")))
                  if f"{name}.parquet" in manifest["files"] else pd.DataFrame() for name in self.TABLES}
        summary = json.loads(self._read(key, manifest, "summary.json"))
        if scenario is None:
            scenario = Scenario.from_dict(json.loads(self._read(key, manifest, "scenario.json")))
        return Results(scenario, **tables, summary=summary)

    def _adopt(self, key: str) -> int:
        """Give a manifest to a run stored before manifests were (summary.json, written last,
        marked it whole) if every file it must hold is there and reads; return the
        manifest's mtime_ns. Kernel runs keep their keys across builds and cost lab time:
        they are kept rather than redone."""
        d = self.path(key)
        where = f"cached run {key[:12]} in {self.root}"
        names = [f"{name}.parquet" for name in self.TABLES] + ["scenario.json", "summary.json"]
        files = {}
        for name in names:
            try:
                files[name] = blob = (d / name).read_bytes()
                if name.endswith(".json"):
                    json.loads(blob)
                else:
                    pd.read_parquet(io.BytesIO(blob))
            except FileNotFoundError:
                raise CacheError(f"{where}: {self.MANIFEST} is missing, and so is {name}") from None
            except Exception as e:  # noqa: BLE001 - whatever a damaged file raises
                raise CacheError(f"{where}: {self.MANIFEST} is missing and {name} is unreadable "
                                 f"({type(e).__name__})") from None
        try:
            atomic_write_text(d / self.MANIFEST, json.dumps(self._describe(key, files), indent=1))
            return (d / self.MANIFEST).stat().st_mtime_ns
        except OSError as e:
            raise CacheError(f"{where}: {self.MANIFEST} is missing and cannot be written ({e.strerror})") from None

    @classmethod
    def _describe(cls, key: str, files: dict[str, bytes]) -> dict:
        """The manifest of run `key` made of `files` (name -> bytes)."""
        return {"format": cls.FORMAT, "key": key, "code": code_version(),
                "files": {name: {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}
                          for name, blob in files.items()}}

    def _manifest(self, key: str) -> dict:
        where = f"cached run {key[:12]} in {self.root}"
        try:
            manifest = json.loads((self.path(key) / self.MANIFEST).read_bytes())
        except FileNotFoundError:
            raise CacheError(f"{where}: not cached" if not self.path(key).exists()
                             else f"{where}: {self.MANIFEST} is missing") from None
        except (OSError, ValueError) as e:
            raise CacheError(f"{where}: {self.MANIFEST} is unreadable ({e})") from None
        if not (isinstance(manifest, dict) and manifest.get("format") == self.FORMAT and manifest.get("key") == key
                and isinstance(manifest.get("files"), dict)
                and {"summary.json", "scenario.json"} <= set(manifest["files"])):
            raise CacheError(f"{where}: {self.MANIFEST} does not describe this run")
        return manifest

    def _read(self, key: str, manifest: dict, name: str) -> bytes:
        """The bytes of file `name` of run `key`, checked against `manifest`."""
        where = f"cached run {key[:12]} in {self.root}: {name}"
        expected = manifest["files"].get(name)
        if not isinstance(expected, dict):
            raise CacheError(f"{where} is not described by {self.MANIFEST}")
        try:
            blob = (self.path(key) / name).read_bytes()
        except FileNotFoundError:
            raise CacheError(f"{where} is missing") from None
        except OSError as e:
            raise CacheError(f"{where} is unreadable ({e.strerror})") from None
        if len(blob) != expected.get("bytes"):
            raise CacheError(f"{where} has {len(blob)} bytes; its manifest says {expected.get('bytes')}")
        if hashlib.sha256(blob).hexdigest() != expected.get("sha256"):
            raise CacheError(f"{where} does not match its checksum")
        return blob

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


def run_label(run: Run) -> str:
    """A run as a reader knows it: its scenario's name and seed."""
    return f"{run.scenario.name}, seed {run.seed}"


# ---- results -----------------------------------------------------------------------------


class SweepError(RuntimeError):
    """Some runs failed; every other run is in the cache."""

    def __init__(self, failures: list[tuple[Run, BaseException]]):
        self.failures = failures
        lines = [f"{len(failures)} run(s) failed (the others are cached):"]
        for run, e in failures[:5]:
            lines.append(f"  run {run.key[:12]} ({run_label(run)}): {type(e).__name__}: {e}")
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
    writable_folder(cache.root, "cache")
    cache.clean_stale()
    todo: dict[str, Run] = {}
    for run in runs:  # keys first: a bad scenario fails here, before anything runs
        if run.key not in todo and cache.must_compute(run.key, run_label(run)):
            todo[run.key] = run
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
    """Simulate `todo` in `jobs` worker processes, one run at a time each over its own pipe.
    The workers end with this process however it ends: killed with it by the kernel
    (`_die_with_parent`), or killed here when it stops early (an exception, Ctrl-C, SIGTERM);
    only this process writes the cache, so a killed worker leaves nothing half-written."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    # fork: workers start at once and a user's script needs no `if __name__ == "__main__"`
    # guard (spawn and forkserver re-import the main module). Arrow re-creates its thread
    # pools after a fork.
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    queue = list(todo.items())
    busy: dict = {}  # connection -> (worker process, key of the run it simulates)
    workers = []

    def start_worker():
        mine, theirs = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(theirs, os.getpid()), daemon=True)
        proc.start()
        theirs.close()  # the worker's end: once the worker is gone, recv() here sees EOF
        workers.append(proc)
        return mine, proc

    def give(conn, proc):
        if queue:
            key, run = queue.pop(0)
            conn.send(run.scenario.to_dict())
            busy[conn] = (proc, key)
        else:
            conn.close()

    try:
        for _ in range(jobs):
            give(*start_worker())
        while busy:
            for conn in wait(list(busy)):
                proc, key = busy.pop(conn)
                try:
                    ok, value = conn.recv()
                except (EOFError, OSError):  # the worker died (killed, out of memory)
                    proc.join(1.0)
                    failures.append((todo[key], RuntimeError(f"the worker process died (exit code {proc.exitcode})")))
                    conn.close()
                    if queue:
                        give(*start_worker())
                    continue
                if ok:
                    cache.store(key, value)
                    bar.tick(key)
                else:
                    failures.append((todo[key], value))
                give(conn, proc)
    finally:
        for proc in workers:  # do not wait for runs in progress: they are redone next time
            if proc.is_alive():
                proc.kill()
        for proc in workers:
            proc.join()


def _worker(conn, parent: int):
    """A pool worker: simulate each scenario received on `conn` and send back (True,
    payload) or (False, the exception), until the pool closes the pipe."""
    import signal

    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops the pool
    while True:
        try:
            scenario = conn.recv()
        except EOFError:
            return
        try:
            reply = (True, _simulate_payload(scenario))
        except Exception as e:  # noqa: BLE001 - the parent reports it with the run
            reply = (False, e)
        try:
            conn.send(reply)
        except Exception:  # noqa: BLE001 - an exception that cannot be pickled
            conn.send((False, RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int):
    """Have the kernel kill this process when its parent ends (Linux PR_SET_PDEATHSIG),
    else a thread that watches for the parent to go; exit at once if it is already gone
    (it may end between the fork and here)."""
    import ctypes
    import signal
    import threading

    try:
        armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (AttributeError, OSError):
        armed = False
    if os.getppid() != parent:
        os._exit(1)
    if not armed:
        def watch():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()


def ray_connect(address: str | None) -> bool:
    """Join the Ray cluster at `address` ("local" or None starts one here) unless this
    process already has; True if it joined now (the caller then shuts it down)."""
    try:
        import ray
    except ImportError:
        raise ValueError("--ray needs Ray: pip install 'cubiclab[ray]'") from None
    if ray.is_initialized():
        return False
    try:
        if address in ("local", "", None):
            # "local" names a new instance: a bare ray.init() would join whatever
            # RAY_ADDRESS or /tmp/ray/ray_current_cluster names, stale or not.
            ray.init(address="local", include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - Ray raises several kinds
        raise ValueError(f"--ray {address}: could not start or reach Ray ({type(e).__name__}: {e}); "
                         f"'auto' needs a running cluster (ray start --head), 'local' starts one") from None
    return True


def _run_ray(todo, cache, address, bar, failures):
    started = ray_connect(address)
    import ray

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
