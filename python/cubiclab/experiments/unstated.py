"""What a paper leaves unstated, and how the catalog varies it.

An entry's scenario fixes settings its paper never gives (when the second flow starts, how
much background traffic, how large its objects are, how "delay" is read, a buffer). Each
entry lists them as `Unstated` choices with a declared range; `cubiclab reproduce
--sensitivity` reruns the entry at every value of every choice (experiments/sensitivity.py)
and reports each verdict as robust or as depending on the choices that change it.

A choice is applied to every scenario the entry runs, after the entry built it, so the entry's
own grid (its tags, its measurement) is unchanged: only the unstated setting moves."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Callable

from cubiclab.scenario import Scenario
from cubiclab.units import format_rate, parse_percent, parse_rate, parse_time_s


@dataclass(frozen=True)
class Unstated:
    """One setting a paper does not state. `key` names it in reports ("depends on key"),
    `chosen` says what the catalog takes and why, `values` are the alternatives run beside
    it (factors or settings `apply` understands), `apply(scenario, value)` returns the
    scenario with that value."""

    key: str
    chosen: str
    values: tuple
    apply: Callable[[Scenario, object], Scenario]

    def label(self, value) -> str:
        return f"{self.key}={value:g}x" if isinstance(value, float) else f"{self.key}={value}"


def _copy(sc: Scenario) -> Scenario:
    return copy.deepcopy(sc)


def _scale_start(sc: Scenario, k: float) -> Scenario:
    """Every later start (a group's `start` and its `start_spacing`) times k."""
    sc = _copy(sc)
    for g in sc.flows:
        g.start = f"{parse_time_s(g.start, 'start') * k:g}s"
        g.start_spacing = f"{parse_time_s(g.start_spacing, 'start_spacing') * k:g}s"
    return sc


def _scale_background(sc: Scenario, k: float) -> Scenario:
    """Every web group's offered load (or its session count) times k."""
    sc = _copy(sc)
    for w in sc.web:
        if w.load is not None:
            w.load = min(1.0, parse_percent(w.load, "load") * k)
        if w.sessions is not None:
            w.sessions = max(1, round(w.sessions * k))
    return sc


def _scaled(text, k: float, field: str) -> str:
    """A quantity with its unit times k, in its own unit ('100%BDP' -> '50%BDP', '10packets'
    -> '5packets', packets rounded, at least one): a packet limit stays a packet limit."""
    m = re.fullmatch(r"\s*([0-9][0-9_.]*(?:e[+-]?[0-9]+)?)\s*(.*)", str(text), flags=re.IGNORECASE)
    if not m:
        raise ValueError(f"{field}: '{text}' is not a number with a unit; the choice scales the number")
    value, unit = float(m.group(1).replace("_", "")) * k, m.group(2)
    return f"{max(1, round(value))}{unit}" if "packet" in unit.lower() else f"{value:g}{unit}"


def _scale_objects(sc: Scenario, k: float) -> Scenario:
    """Every web group's mean object size times k."""
    sc = _copy(sc)
    for w in sc.web:
        w.mean_size = _scaled(w.mean_size, k, "mean_size")
    return sc


def _scale_rtt(sc: Scenario, k: float) -> Scenario:
    """Every long-lived flow group's RTT times k (e.g. 2: a 'delay' read as one way)."""
    sc = _copy(sc)
    for g in sc.flows:
        g.rtt = f"{parse_time_s(g.rtt, 'rtt') * k * 1e3:g}ms"
    return sc


def _scale_rate(sc: Scenario, k: float) -> Scenario:
    """The bottleneck rate times k (a "%BDP" buffer follows it, a packet limit stays)."""
    sc = _copy(sc)
    sc.bottleneck.rate = format_rate(parse_rate(sc.bottleneck.rate, "rate") * k)
    return sc


def _scale_buffer(sc: Scenario, k: float) -> Scenario:
    """The bottleneck buffer times k, in its own unit."""
    sc = _copy(sc)
    sc.bottleneck.buffer = _scaled(sc.bottleneck.buffer, k, "buffer")
    return sc


def start_gap(chosen: str, values=(0.5, 2.0)) -> Unstated:
    return Unstated("start", chosen, values, _scale_start)


def background(chosen: str, values=(0.5, 2.0)) -> Unstated:
    return Unstated("background", chosen, values, _scale_background)


def object_sizes(chosen: str, values=(0.1, 10.0)) -> Unstated:
    return Unstated("object sizes", chosen, values, _scale_objects)


def delay_reading(chosen: str, values=(2.0,)) -> Unstated:
    return Unstated("delay", chosen, values, _scale_rtt)


def link_rate(chosen: str, values=(0.5, 2.0)) -> Unstated:
    return Unstated("rate", chosen, values, _scale_rate)


def rtt(chosen: str, values=(0.5, 2.0)) -> Unstated:
    """Every long-lived flow group's RTT times each value (the RTT a paper never gives)."""
    return Unstated("rtt", chosen, values, _scale_rtt)


def buffer(chosen: str, values=(0.5, 2.0)) -> Unstated:
    return Unstated("buffer", chosen, values, _scale_buffer)


def rtt_of(rtt: str, chosen: str, values=(0.5, 2.0)) -> Unstated:
    """The RTT of the flow groups whose RTT is `rtt` (one flow's RTT the paper does not give)
    times each value."""
    want = parse_time_s(rtt, "rtt")

    def apply(sc: Scenario, k: float) -> Scenario:
        sc = _copy(sc)
        for g in sc.flows:
            if abs(parse_time_s(g.rtt, "rtt") - want) < 1e-9:
                g.rtt = f"{want * k * 1e3:g}ms"
        return sc

    return Unstated(f"rtt {rtt}", chosen, values, apply)


def rate_of(rate: str, chosen: str, values=(0.5, 2.0)) -> Unstated:
    """The bottleneck's rate, when it is `rate` (a link rate the paper does not give; an
    entry whose other links' rates are stated keeps those), times each value. A buffer in
    BDP follows the rate; one in packets stays."""
    want = parse_rate(rate, "rate")

    def apply(sc: Scenario, k: float) -> Scenario:
        sc = _copy(sc)
        if parse_rate(sc.bottleneck.rate, "rate") == want:
            sc.bottleneck.rate = f"{want * k / 1e6:g}Mbps"
        return sc

    return Unstated(f"rate {rate}", chosen, values, apply)


def web_direction(chosen: str, values=("forward", "reverse")) -> Unstated:
    """Which way every web group's objects travel (a direction the paper does not give)."""

    def apply(sc: Scenario, direction: str) -> Scenario:
        sc = _copy(sc)
        for w in sc.web:
            w.direction = direction
        return sc

    return Unstated("web direction", chosen, values, apply)
