"""Results that survive their accidents (issue 33): a damaged or partial cache is healed and
named, never read as empty; a reproduction killed by SIGKILL leaves no process and releases
its caller's pipes, one stopped by SIGINT or SIGTERM ends within seconds, and either resumes
to the same claims; two reproductions share a cache; bad output places are refused before
any work. Each test compares with an undisturbed run of one small entry in tiny mode (six
runs of a few seconds in all).

Kill points are drawn from a seeded RNG and are counts of finished runs, which the tests
wait for by polling the cache; the driver slows each simulation down by a fixed pause so
that a kill finds runs still in progress whatever the machine's speed."""

from __future__ import annotations

import importlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cubiclab.cli import main
from cubiclab.experiments import reproduce
from cubiclab.scenario import default_scenario
from cubiclab.sweep import Cache, run_sweep

ENTRY = "s000-fig5"  # six runs in tiny mode


@pytest.fixture
def rng(request):
    """Random choices (a victim run, a kill point) seeded by the test's name."""
    return random.Random(f"issue 33 {request.node.name}")

# `cubiclab reproduce` with each simulation made `CUBICLAB_TEST_PAUSE` seconds longer (the
# workers are forked, so they inherit the patch). SIGINT is reset to KeyboardInterrupt: a
# process started from a background job inherits it ignored.
DRIVER = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from cubiclab import sweep
pause = float(os.environ.get("CUBICLAB_TEST_PAUSE", "0"))
if pause:
    simulate = sweep._simulate_payload
    def slow(scenario):
        time.sleep(pause)
        return simulate(scenario)
    sweep._simulate_payload = slow
from cubiclab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def start(out: Path, cache: Path, pause: float = 0.0) -> subprocess.Popen:
    """`cubiclab reproduce ENTRY --mode tiny --jobs 2 --quiet` in a session of its own (its
    process group holds it and its workers)."""
    env = {k: v for k, v in os.environ.items() if k != "CUBICLAB_CACHE"}
    env["CUBICLAB_TEST_PAUSE"] = str(pause)
    argv = [sys.executable, "-c", DRIVER, "reproduce", ENTRY, "--mode", "tiny", "--jobs", "2", "--quiet",
            "--out", str(out), "--cache", str(cache)]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out, err


def verdicts(outcomes) -> list[tuple]:
    return [(o.name, o.error, v.spec.id, v.verdict, v.ours) for o in outcomes for v in o.verdicts]


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory):
    """The entry's claims as the command prints them, its verdicts, and its cache."""
    base = tmp_path_factory.mktemp("undisturbed")
    code, out, err = finish(start(base / "out", base / "cache"))
    assert code == 0 and err == "", err
    outcomes = reproduce([ENTRY], mode="tiny", out=base / "again", cache=base / "cache", jobs=1, progress=False,
                         log=None)
    return out, verdicts(outcomes), base / "cache"


def damage(path: Path, how: str):
    blob = path.read_bytes()
    if how == "delete":
        path.unlink()
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    else:  # corrupt: the same length, the middle bytes flipped
        mid = len(blob) // 2
        path.write_bytes(blob[:mid] + bytes(b ^ 0xFF for b in blob[mid:mid + 8]) + blob[mid + 8:])


@pytest.mark.parametrize("how", ["truncate", "empty", "delete", "corrupt"])
@pytest.mark.parametrize("name", ["flows.parquet", "link.parquet", "summary.json", "scenario.json", "manifest.json"])
def test_a_damaged_cached_file_is_named_and_recomputed(undisturbed, rng, tmp_path, capsys, name, how):
    _, expected, cache = undisturbed
    shutil.copytree(cache, tmp_path / "cache")
    keys = Cache(tmp_path / "cache").keys()
    victim = rng.choice(keys)
    damage(Cache(tmp_path / "cache").path(victim) / name, how)
    # A run without a manifest is one from before manifests: whole and readable, it is kept
    # and given one; anything else is named and recomputed.
    legacy = (name, how) == ("manifest.json", "delete")
    outcomes = reproduce([ENTRY], mode="tiny", out=tmp_path / "out", cache=tmp_path / "cache", jobs=1,
                         progress=False, log=None)
    assert verdicts(outcomes) == expected
    lines = capsys.readouterr().err.splitlines()
    if legacy:
        assert lines == [] and (Cache(tmp_path / "cache").path(victim) / name).is_file()
    else:
        assert len(lines) == 1 and victim[:12] in lines[0] and name in lines[0] and "recomputing" in lines[0], lines
    assert all(Cache(tmp_path / "cache").verify(k) is None for k in keys)  # healed


def test_a_run_from_before_manifests_is_recomputed_if_partial(undisturbed, rng, tmp_path, capsys):
    _, expected, cache = undisturbed
    shutil.copytree(cache, tmp_path / "cache")
    victim = rng.choice(Cache(tmp_path / "cache").keys())
    for name in ("manifest.json", "rtt.parquet"):
        (Cache(tmp_path / "cache").path(victim) / name).unlink()
    outcomes = reproduce([ENTRY], mode="tiny", out=tmp_path / "out", cache=tmp_path / "cache", jobs=1,
                         progress=False, log=None)
    assert verdicts(outcomes) == expected
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "rtt.parquet" in lines[0] and "recomputing" in lines[0], lines
    assert Cache(tmp_path / "cache").verify(victim) is None


def test_half_a_cache_gives_the_same_claims(undisturbed, rng, tmp_path, capsys):
    _, expected, cache = undisturbed
    keys = Cache(cache).keys()
    half = rng.sample(keys, len(keys) // 2)
    partial = rng.choice([k for k in keys if k not in half])  # a run copied in part, as an interrupted rsync
    for k in half + [partial]:
        shutil.copytree(Cache(cache).path(k), Cache(tmp_path / "cache").path(k))
    files = sorted(Cache(tmp_path / "cache").path(partial).iterdir())
    for f in files[: len(files) // 2]:
        f.unlink()
    outcomes = reproduce([ENTRY], mode="tiny", out=tmp_path / "out", cache=tmp_path / "cache", jobs=2,
                         progress=False, log=None)
    assert verdicts(outcomes) == expected
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and partial[:12] in lines[0], lines  # the missing runs are simply computed


def test_a_failed_run_is_named_in_one_line_under_quiet(undisturbed, rng, tmp_path, capsys, monkeypatch):
    from cubiclab import sweep

    _, _, cache = undisturbed
    victim = rng.choice(Cache(cache).keys())
    simulate = sweep._simulate_payload

    def failing(scenario):
        if sweep.Run(sweep.Scenario.from_dict(scenario)).key == victim:
            raise ValueError("a failure of this run")
        return simulate(scenario)

    monkeypatch.setattr(sweep, "_simulate_payload", failing)
    assert main(["reproduce", ENTRY, "--mode", "tiny", "--jobs", "2", "--quiet", "--out", str(tmp_path / "out"),
                 "--cache", str(tmp_path / "cache")]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"cubiclab: {ENTRY}: error: 1 of 6 simulation(s) failed; first: run {victim[:12]} (")
    assert lines[0].endswith("): ValueError: a failure of this run")
    assert "(error)" in (tmp_path / "out" / "report.html").read_text()


def test_a_worker_killed_fails_its_run_only(tmp_path, monkeypatch):
    from cubiclab import sweep

    runs = sweep.ensemble(default_scenario().replace(duration="1s"), range(4))
    simulate = sweep._simulate_payload

    def dies(scenario):  # as an out-of-memory kill of one worker
        if scenario["seed"] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return simulate(scenario)

    monkeypatch.setattr(sweep, "_simulate_payload", dies)
    res = run_sweep(runs, tmp_path, jobs=2, progress=False, raise_errors=False)
    assert res.computed == 3 and [str(e) for e in res.failed.values()] == [
        f"the worker process died (exit code {-signal.SIGKILL})"]


def live_members(pgid: int) -> list[int]:
    """The processes of group `pgid` that still run: a zombie has ended (and is waiting
    for whoever adopted it to collect its status)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (comm)"
        except (OSError, IndexError):
            continue  # ended meanwhile
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def group_gone(pgid: int, timeout: float = 10.0) -> bool:
    """Poll until no process of the group `pgid` runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not live_members(pgid):
            return True
        time.sleep(0.05)
    return False


def wait_for_runs(proc: subprocess.Popen, cache: Path, n: int):
    deadline = time.monotonic() + 120
    while len(Cache(cache).keys()) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the reproduction made no progress"
        time.sleep(0.02)


def leftovers(cache: Path) -> list[Path]:
    return [p for d in cache.iterdir() for p in d.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_stopped_reproduction_ends_whole_and_resumes(undisturbed, rng, tmp_path, sig):
    expected, _, _ = undisturbed
    # Runs finished when the signal comes (of six, two at a time); at least one, so that the
    # command has set its handlers.
    n = rng.randrange(1, 5)
    proc = start(tmp_path / "out", tmp_path / "cache", pause=0.3)
    wait_for_runs(proc, tmp_path / "cache", n)
    t0 = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # Ctrl-C in a terminal reaches the whole group
    else:
        os.kill(proc.pid, sig)  # SIGKILL: the workers must go by themselves
    # communicate() returns once every holder of the pipes has gone.
    code, out, err = finish(proc, timeout=30)
    assert time.monotonic() - t0 < 10
    assert group_gone(proc.pid), f"processes of the reproduction remain after {signal.Signals(sig).name}"
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
    else:
        assert code == 128 + sig and out == "" and "interrupted" in err and "Traceback" not in err, err
    done = Cache(tmp_path / "cache").keys()
    assert len(done) >= n and all(Cache(tmp_path / "cache").verify(k) is None for k in done)
    code, out, err = finish(start(tmp_path / "out", tmp_path / "cache"))
    assert (code, out, err) == (0, expected, "")
    assert leftovers(tmp_path / "cache") == []


def test_two_reproductions_share_one_cache(undisturbed, tmp_path):
    expected, _, _ = undisturbed
    procs = [start(tmp_path / f"out{i}", tmp_path / "cache", pause=0.2) for i in range(2)]
    for proc in procs:
        assert finish(proc) == (0, expected, "")
    cache = Cache(tmp_path / "cache")
    keys = cache.keys()
    assert len(keys) == 6 and all(cache.verify(k) is None for k in keys)
    assert leftovers(tmp_path / "cache") == []


@pytest.mark.parametrize("argv", [
    ["run", "--out", "{file}"], ["run", "--out", "{file}/sub"], ["run", "--out", "/proc/cubiclab-out"],
    ["run", "--out", "{dir}/out"],  # where the run's own folder is a file
    ["demo", "--out", "{file}"], ["demo", "--out", "/proc/cubiclab-out"],
    ["reproduce", ENTRY, "--mode", "tiny", "--out", "{file}"],
    ["reproduce", ENTRY, "--mode", "tiny", "--out", "{dir}/out", "--cache", "{file}"],
    ["reproduce", ENTRY, "--mode", "tiny", "--out", "{dir}/out", "--cache", "/proc/cubiclab-cache"],
])
def test_a_bad_output_place_is_refused_before_any_work(tmp_path, capsys, monkeypatch, argv):
    def no_work(*a, **kw):
        raise AssertionError("work started before the output place was checked")

    for module, name in (("cubiclab.simulate", "simulate"), ("cubiclab.replay", "replay"),
                         ("cubiclab.experiments.runner", "simulate_runs")):
        monkeypatch.setattr(importlib.import_module(module), name, no_work)
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / default_scenario().name).write_text("not a folder")
    argv = [a.format(file=tmp_path / "file", dir=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("cubiclab: error: --") and "folder" in err[0], err
    assert (tmp_path / "file").read_text() == "not a folder"
    assert (tmp_path / "out" / default_scenario().name).read_text() == "not a folder"


def test_a_failing_cache_write_ends_the_pool_and_says_why(tmp_path, capsys, monkeypatch):
    import multiprocessing

    from cubiclab import sweep

    stored = []
    store = sweep.Cache.store

    def full_disk(self, key, payload):
        stored.append(key)
        if len(stored) == 2:
            raise OSError(28, "No space left on device", str(self.path(key)))
        return store(self, key, payload)

    monkeypatch.setattr(sweep.Cache, "store", full_disk)
    monkeypatch.delenv("CUBICLAB_CACHE", raising=False)
    assert main(["reproduce", ENTRY, "--mode", "tiny", "--jobs", "2", "--quiet", "--out", str(tmp_path / "out")]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cubiclab: error: [Errno 28] No space left on device"), lines
    assert multiprocessing.active_children() == []  # the workers were ended and collected
    assert len(Cache(tmp_path / "out" / "cache").keys()) == 1
