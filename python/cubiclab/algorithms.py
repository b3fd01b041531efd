"""The algorithm registry of the Rust library, as Python data."""

from __future__ import annotations

from dataclasses import dataclass

from cubiclab import _core


@dataclass(frozen=True)
class Param:
    name: str
    default: float
    min: float
    max: float
    integer: bool
    help: str


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    reference: str
    params: tuple[Param, ...]


def algorithms() -> list[AlgorithmInfo]:
    """Every algorithm: its name, the source it follows, and its settable parameters."""
    return [
        AlgorithmInfo(name, ref, tuple(Param(*p) for p in params))
        for name, ref, params in _core.algorithms()
    ]


def check_algorithm(name: str, params: dict | None = None) -> None:
    """Raise ValueError naming the problem if `name` or `params` are not accepted."""
    _core.check_algorithm(name, dict(params or {}))
