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


#: The largest trace file read: 64 MiB, about 8 million delivery opportunities.
MAX_TRACE_BYTES = 64 << 20


def load_trace(name_or_path, where: str = "bottleneck.schedule.trace", folder: Path | None = None) -> list[int]:
    """The opportunities (ms) of a shipped trace by name, or of a Mahimahi trace file (a
    relative name is looked up in `folder`, the scenario file's, when given). The file must
    be a regular file of at most MAX_TRACE_BYTES; it is read at once and parsed in one pass,
    in Rust (`cubiclab_path::schedule::parse_mahimahi`, where the format's meaning lives)."""
    from cubiclab.io import read_input_file
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
    raw = read_input_file(path, where, limit=MAX_TRACE_BYTES)
    try:
        return _core.parse_mahimahi(raw)
    except ValueError as e:
        raise ValueError(f"{where}: {path} {e}") from None


def write_shipped() -> None:
    """Regenerate the shipped files (after changing a recipe)."""
    for name in TRACES:
        (HERE / f"{name}.trace").write_text("".join(f"{ms}\n" for ms in generate(name)))
