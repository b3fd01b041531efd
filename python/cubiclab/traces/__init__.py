"""Link traces in Mahimahi's format, for `bottleneck.schedule = { trace = ... }`: one line
per delivery opportunity, the time in milliseconds from the start; each opportunity
carries one packet of up to 1500 bytes (so one line per millisecond is 12 Mbit/s), and
the trace repeats with the period of its last line.

A few generated traces ship with the package (`TRACES`); `generate(name)` rebuilds each
from its recipe, and the tests check the shipped files against it. Any Mahimahi trace file
works too: give its path.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from cubiclab import _core

HERE = Path(__file__).resolve().parent
PACKET_BITS = 1500 * 8


def _from_rates(rates_bps: np.ndarray) -> list[int]:
    """Opportunities for a rate given per millisecond: each ms gets the whole packets its
    rate has earned so far (the remainder carries over)."""
    credit, out = 0.0, []
    for ms, rate in enumerate(rates_bps, start=1):
        credit += rate / 1000 / PACKET_BITS
        whole = int(credit)
        credit -= whole
        out += [ms] * whole
    if not out or out[-1] != len(rates_bps):
        out.append(len(rates_bps))  # the period: the trace repeats after its last line
    return out


def _steps() -> np.ndarray:
    # 24 Mbit/s for 5 s, then 6 Mbit/s for 5 s.
    return np.r_[np.full(5000, 24e6), np.full(5000, 6e6)]


def _cellular() -> np.ndarray:
    # A rate that wanders between 2 and 24 Mbit/s around 10, a new value every 100 ms (a
    # mean-reverting walk in log scale, seeded), for 20 s: the shape of a cellular
    # downlink, not a measurement.
    rng = np.random.default_rng(17)
    mean, log_rate = np.log(10e6), [np.log(10e6)]
    for _ in range(199):
        log_rate.append(log_rate[-1] + 0.2 * (mean - log_rate[-1]) + rng.normal(0, 0.3))
    rate = np.exp(np.clip(log_rate, np.log(2e6), np.log(24e6)))
    return np.repeat(rate, 100)


def _outages() -> np.ndarray:
    # 12 Mbit/s with an outage of 300 ms every 3 s.
    period = np.full(3000, 12e6)
    period[2700:] = 0
    return np.tile(period, 3)


RECIPES = {
    "steps-24-6": (_steps, "24 Mbit/s for 5 s, 6 Mbit/s for 5 s, repeating"),
    "cellular": (_cellular, "2 to 24 Mbit/s around 10, a new rate every 100 ms (random walk), 20 s, repeating"),
    "outages": (_outages, "12 Mbit/s with a 300 ms outage every 3 s"),
}
#: The shipped traces: name -> what it is.
TRACES = {name: what for name, (_, what) in RECIPES.items()}


def generate(name: str) -> list[int]:
    """The opportunities (ms) of the shipped trace `name`, from its recipe."""
    return _from_rates(RECIPES[name][0]())


#: Whether reading a big trace prints its progress to stderr (the command line sets it
#: unless --quiet).
progress = False


def load_trace(name_or_path, where: str = "bottleneck.schedule.trace", folder: Path | None = None) -> dict:
    """The compiled schedule of a shipped trace by name, or of a Mahimahi trace file (a
    relative name is looked up in `folder`, the scenario file's, when given):
    ``{"kind": "trace", "file": ..., "digest": ...}``. The file must be a regular file; it is
    read once, streaming, in Rust (`cubiclab_path::schedule::trace`, where the format's
    meaning lives), into runs of equal opportunities per millisecond that must fit the run
    memory budget, and kept for the run (which finds it by the file and its digest)."""
    from cubiclab.io import open_input_file
    from cubiclab.suggest import suggestion

    if not isinstance(name_or_path, str) or not name_or_path:
        raise ValueError(f"{where} is {name_or_path!r}; allowed: a shipped trace ({', '.join(TRACES)}) "
                         "or the name of a Mahimahi trace file")
    if name_or_path in TRACES:
        path = HERE / f"{name_or_path}.trace"
    else:
        path = Path(name_or_path)
        if folder is not None and not path.is_absolute():
            path = Path(folder) / path
        if not os.path.lexists(path):
            raise ValueError(f"{where}: '{name_or_path}' is neither a shipped trace ({', '.join(TRACES)}) "
                             f"nor a file" + (f" in {folder}" if folder is not None and not Path(name_or_path).is_absolute() else "")
                             + suggestion(name_or_path, TRACES))
    fd = open_input_file(path, where)
    resolved = str(path.resolve())  # the name the run finds it by (and the kept trace's)
    try:
        shown = _Progress(path, os.fstat(fd).st_size) if progress else None
        try:
            digest, *_ = _core.read_trace(resolved, fd, shown)
        finally:
            if shown is not None:
                shown.end()
    except ValueError as e:
        raise ValueError(f"{where}: {path} {e}") from None
    finally:
        os.close(fd)
    return {"kind": "trace", "file": resolved, "digest": digest}


class _Progress:
    """The reading of a big trace on stderr, once a second after the first, in the line
    style of the simulation's progress."""

    def __init__(self, path: Path, size: int):
        self.path, self.size = path, size
        self.start = self.last = time.perf_counter()
        self.shown = False

    def __call__(self, done: int) -> None:
        now = time.perf_counter()
        if now - self.last >= 1.0:
            self.last, self.shown = now, True
            print(f"\r  reading trace {self.path.name}: {done / 1e6:8.1f} / {self.size / 1e6:.1f} MB  "
                  f"{done / 1e6 / (now - self.start):6.1f} MB/s", end="", file=sys.stderr)

    def end(self) -> None:
        if self.shown:
            print(file=sys.stderr)


def write_shipped() -> None:
    """Regenerate the shipped files (after changing a recipe)."""
    for name in TRACES:
        (HERE / f"{name}.trace").write_text("".join(f"{ms}\n" for ms in generate(name)))
