"""Start and stop the bottleneck emulator (crates/cubiclab-emu) as a process of its own.

The emulator is the ``cubiclab-emu`` binary (``$CUBICLAB_EMU`` or this tree's release
build) or, without one, the Rust function ``cubiclab._core.emulate`` run in a fresh Python
process (:func:`program`). It runs inside
the emulator's namespace (so that namespace cleanup can kill it), stops when its standard
input reaches end of file (the parent closed the pipe or died), on SIGTERM/SIGINT, or at
its own time bound, and writes link.csv, flows.csv, events.csv and summary.txt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from cubiclab import _core


def program() -> Path | None:
    """The emulator binary a testbed run starts: ``$CUBICLAB_EMU``, else this source tree's
    release build of ``crates/cubiclab-emu`` (``cargo build --release -p cubiclab-emu``),
    else None: the extension's ``_core.emulate`` (the same code, linked into the
    simulator's extension). The binary comes first so that a kernel run's cache key
    (:mod:`cubiclab.testbed.cache_key`) hashes the emulator, not the whole extension."""
    env = os.environ.get("CUBICLAB_EMU")
    if env:
        return Path(env)
    built = Path(__file__).resolve().parents[3] / "target" / "release" / "cubiclab-emu"
    return built if built.is_file() else None


def command(config_path: Path) -> list[str]:
    """The command that runs the emulator on `config_path` (see :func:`program`)."""
    binary = program()
    if binary:
        return [str(binary), str(config_path)]
    return [sys.executable, "-c",
            "import sys; from cubiclab import _core; sys.stdout.write(_core.emulate(open(sys.argv[1]).read()))",
            str(config_path)]


def peak_rate_bps(bottleneck: dict) -> int:
    """The highest rate the compiled `bottleneck` asks of the emulator: its rate, or with a
    schedule the schedule's (`RateSchedule::peak_bps`: its highest step, or a trace's
    densest millisecond)."""
    sched = bottleneck.get("schedule")
    if not sched:
        return bottleneck["rate"]
    return _core.schedule_peak_bps(json.dumps(sched))


def min_wait_ns(rate_bps: int) -> int:
    """The emulator's shortest sleep at this rate (its ``min_wait_ns``). Above half a
    gigabit the kernels' work per write (the receiving TCP runs in the emulator's write)
    would take a whole core of this machine's two: deliver in batches at least 40 us
    apart, each segment up to that much late (docs/testbed/README.md, "Accuracy")."""
    return 40_000 if rate_bps > 500_000_000 else 0


def config_text(**kw) -> str:
    """`key value` lines; lists give repeated keys."""
    lines = []
    for k, v in kw.items():
        if v is None:
            continue
        for item in v if isinstance(v, list) else [v]:
            lines.append(f"{k} {item}")
    return "\n".join(lines) + "\n"


@dataclass
class EmuOutput:
    summary: dict
    link: pd.DataFrame
    flows: pd.DataFrame
    events: pd.DataFrame


def read_output(outdir: Path) -> EmuOutput:
    summary = {}
    p = outdir / "summary.txt"
    if p.exists():
        for line in p.read_text().splitlines():
            k, _, v = line.partition(" ")
            try:
                summary[k] = int(v)
            except ValueError:
                summary[k] = v

    def csv(name):
        f = outdir / name
        return pd.read_csv(f) if f.exists() else pd.DataFrame()

    return EmuOutput(summary, csv("link.csv"), csv("flows.csv"), csv("events.csv"))


class Emulator:
    """The running emulator process; :meth:`stop` ends it and returns its output."""

    def __init__(self, exec_prefix: list[str], config: str, workdir: Path):
        self.workdir = workdir
        self.outdir = workdir / "emu"
        cfg = workdir / "emu.cfg"
        cfg.write_text(config + f"out {self.outdir}\nctl_fd 0\n")
        self.proc = subprocess.Popen(exec_prefix + command(cfg), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def set_epoch(self, epoch_ns: int) -> None:
        """Put the interval records on the grid ``epoch_ns + k * sample`` (CLOCK_MONOTONIC)."""
        self.proc.stdin.write(f"epoch {epoch_ns}\n")
        self.proc.stdin.flush()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def error(self) -> str:
        try:
            _, err = self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            return ""
        return err.strip()

    def stop(self, timeout: float = 10) -> EmuOutput:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        err = self.proc.stderr.read() if self.proc.stderr else ""
        if self.proc.returncode not in (0, None) and not (self.outdir / "summary.txt").exists():
            raise RuntimeError(f"the emulator failed ({self.proc.returncode}): {err.strip()}")
        return read_output(self.outdir)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
