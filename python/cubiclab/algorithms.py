"""The algorithm registry of the Rust library, as Python data: names, parameters, and each
algorithm's decrease and growth facts (``cubiclab-cc``'s ``facts`` module owns them)."""

from __future__ import annotations

from dataclasses import dataclass

from cubiclab import _core
from cubiclab.suggest import suggesting


@dataclass(frozen=True)
class Param:
    name: str
    default: float
    min: float
    max: float
    integer: bool
    #: The unit the algorithm reads the value in ("segments", "us", "Hz", "1/1024",
    #: "fraction kept", "fraction removed", "0/1", ...), from the Rust table.
    unit: str
    help: str
    #: Empty for a number. Else the names the parameter is given by (cubic's `hystart`:
    #: "off", "hystart", "hystart++"); `default`, `min` and `max` are then indices into it,
    #: and a number given is taken as an index.
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    reference: str
    params: tuple[Param, ...]
    #: The fraction of the window KEPT at the first congestion event (ssthresh / cwnd);
    #: None: no multiplicative decrease (bbr). Not a parameter: cubic's `beta` is the
    #: fraction kept in 1/1024, cubic-2008's the fraction removed.
    beta_kept: float | None
    #: (smallest, largest) kept fraction the rule can choose (htcp adapts it, highspeed's
    #: depends on the window); equal when fixed.
    beta_kept_bounds: tuple[float, float] | None
    #: highspeed: (largest cwnd of a row of its table, fraction kept) per row; else empty.
    beta_kept_by_window: tuple[tuple[int, float], ...]
    #: The growth law: "reno", "cubic", "bic", "highspeed", "scalable", "htcp", "bbr", "vegas", "westwood", "illinois", "veno", "hybla", "yeah", "lp", "nv", "cdg".
    growth: str
    #: The law's constants, e.g. cubic's {"c": segments/s^3, "reno_friendly": 0/1,
    #: "max_increase_per_s": segments/s (inf: no clamp)}.
    growth_constants: dict


def info(name: str, params: dict | None = None) -> AlgorithmInfo:
    """The registry entry `name` with its decrease and growth facts for `params` (defaults
    for the rest). Unknown names and bad parameters raise ValueError naming what is allowed."""
    with suggesting():
        f = _core.algorithm_facts(name, dict(params or {}))
    ref, specs = next((ref, specs) for n, ref, specs in _core.algorithms() if n == name)
    bounds = f["beta_kept_bounds"]
    return AlgorithmInfo(name, ref, tuple(Param(*p[:-1], tuple(p[-1])) for p in specs), f["beta_kept"],
                         None if bounds is None else tuple(bounds), tuple(map(tuple, f["beta_kept_by_window"])),
                         f["growth"], dict(f["growth_constants"]))


def algorithms() -> list[AlgorithmInfo]:
    """Every algorithm: its name, the source it follows, its settable parameters and its
    facts at the defaults."""
    return [info(name) for name, _, _ in _core.algorithms()]


def check_algorithm(name: str, params: dict | None = None) -> None:
    """Raise ValueError naming the problem if `name` or `params` are not accepted."""
    with suggesting():
        _core.check_algorithm(name, dict(params or {}))
