"""A run's output is all or nothing (issue 18): SIGINT or SIGKILL while `cubiclab run` is
saving, against a folder holding an earlier run, leaves the earlier run whole and untouched
and nothing of the new one; the next run cleans what a killed one left and replaces the
folder whole.

The interrupted run is paused inside saving (after its second table) by a patched
`DataFrame.to_csv` that writes a marker and sleeps: the test waits for the marker, not for a
time, before it sends the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cubiclab.io import atomic_dir, clean_leftovers

SCENARIO = 'name = "run"\nduration = "{d}"\nseed = {seed}\n[[flows]]\nrtt = "40ms"\n[bottleneck]\nrate = "10Mbps"\n'

# Runs `cubiclab run`, pausing inside saving when CUBICLAB_PAUSE_MARKER is set.
# SIGINT is reset to Python's KeyboardInterrupt: a process started from a background job
# inherits SIGINT ignored (POSIX shells do that without job control), and Python then keeps
# it ignored, so the test would signal a process that sleeps through it.
DRIVER = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
import pandas as pd
marker = os.environ.get("CUBICLAB_PAUSE_MARKER")
if marker:
    original, calls = pd.DataFrame.to_csv, []
    def paused(self, *a, **kw):
        calls.append(1)
        if len(calls) == 3:
            open(marker, "w").close()
            time.sleep(60)
        return original(self, *a, **kw)
    pd.DataFrame.to_csv = paused
from cubiclab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def cubiclab_run(tmp_path: Path, seed: int, pause: Path | None = None) -> subprocess.Popen:
    scenario = tmp_path / f"s{seed}.toml"
    scenario.write_text(SCENARIO.format(d="500ms", seed=seed))
    env = dict(os.environ)
    if pause is not None:
        env["CUBICLAB_PAUSE_MARKER"] = str(pause)
    argv = [sys.executable, "-c", DRIVER, "run", str(scenario), "--out", str(tmp_path / "out"),
            "--format", "csv", "--no-plots", "--quiet"]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def leftovers(out: Path) -> list[str]:
    return [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture
def earlier_run(tmp_path):
    proc = cubiclab_run(tmp_path, seed=1)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    folder = tmp_path / "out" / "run"
    return folder, contents(folder)


def interrupt_while_saving(tmp_path: Path, sig: int) -> subprocess.Popen:
    marker = tmp_path / "saving"
    proc = cubiclab_run(tmp_path, seed=2, pause=marker)
    while not marker.exists():
        assert proc.poll() is None, proc.stderr.read()
        try:
            proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            pass
    proc.send_signal(sig)
    proc.wait(timeout=60)
    return proc


def test_sigint_while_saving_leaves_the_earlier_run(tmp_path, earlier_run):
    folder, before = earlier_run
    proc = interrupt_while_saving(tmp_path, signal.SIGINT)
    assert proc.returncode == 130
    assert "interrupted; nothing of this run was written" in proc.stderr.read()
    assert contents(folder) == before
    assert leftovers(tmp_path / "out") == []  # the interrupted writer removed its own


def test_sigkill_while_saving_leaves_the_earlier_run_and_the_next_run_cleans_up(tmp_path, earlier_run):
    folder, before = earlier_run
    proc = interrupt_while_saving(tmp_path, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert contents(folder) == before
    assert len(leftovers(tmp_path / "out")) == 1  # the killed writer's temporary folder
    rerun = cubiclab_run(tmp_path, seed=3)
    assert rerun.wait(timeout=120) == 0, rerun.stderr.read()
    assert leftovers(tmp_path / "out") == []
    after = contents(folder)
    assert after.keys() == before.keys() and after != before  # the new run, whole


def test_an_interrupted_first_run_leaves_nothing(tmp_path):
    proc = interrupt_while_saving(tmp_path, signal.SIGINT)
    assert proc.returncode == 130
    assert "(" + str(tmp_path / "out" / "run") + " is not created)" in proc.stderr.read()
    assert list((tmp_path / "out").iterdir()) == []


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_replacement_killed_between_its_two_renames_is_undone(tmp_path):
    # Where the file system cannot swap two folders, the old one is renamed aside into the
    # writer's temporary folder before the new one takes its name; a kill in between leaves
    # no folder at the name, and the next writer puts the old one back.
    target = tmp_path / "run"
    leftover = tmp_path / f".run.{dead_pid()}.abcdefgh.tmp"
    (leftover / "replaced").mkdir(parents=True)
    (leftover / "replaced" / "summary.json").write_text("{}")
    assert clean_leftovers(target) == [leftover]
    assert (target / "summary.json").read_text() == "{}"
    assert not leftover.exists()


def test_a_live_writers_temporaries_are_kept(tmp_path):
    mine = tmp_path / f".run.{os.getpid()}.abcdefgh.tmp"
    mine.mkdir()
    assert clean_leftovers(tmp_path / "run") == []
    assert mine.exists()


def test_replace_swaps_a_folder_whole(tmp_path):
    target = tmp_path / "run"
    with atomic_dir(target, replace=True) as tmp:
        (tmp / "a").write_text("1")
    with atomic_dir(target, replace=True) as tmp:
        (tmp / "b").write_text("2")
    assert contents(target) == {"b": b"2"}
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
