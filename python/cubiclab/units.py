"""Quantities with units, parsed once at the edge (CLI, scenario files) into plain numbers.

The project's internal units (DESIGN.md): rates in bits/s (int), times in ns (int),
sizes in bytes (int). Every parser takes the *field* name so that its ValueError names the
field and shows the accepted forms, e.g.::

    >>> parse_rate("100Mbps")
    100000000
    >>> parse_time("100ms")
    100000000
    >>> parse_time_s("0.1s")
    0.1
    >>> parse_size("64KB")
    64000
    >>> parse_size("100packets", mss=1500)
    150000
    >>> parse_percent("1.5%")
    0.015
    >>> parse_buffer("100%BDP", bdp_bytes=1_250_000)
    1250000

Conventions:
  * Rates: ``bps`` ``Kbps`` ``Mbps`` ``Gbps`` ``Tbps`` (also ``b/s``, ``bit/s``, ``Mbit/s``);
    decimal prefixes (1 Kbps = 1000 bit/s). A capital ``B`` means bytes: ``MBps`` / ``MB/s``
    is 8e6 bit/s. The prefix letter is case-insensitive except that ``bps``/``Bps`` differ.
  * Times: ``ns`` ``us`` (``µs``) ``ms`` ``s`` (also ``sec``), ``min``, ``h``.
  * Sizes: ``B`` ``KB`` ``MB`` ``GB`` (decimal), ``KiB`` ``MiB`` ``GiB`` (binary),
    ``packets`` / ``pkts`` / ``pkt`` (needs ``mss``, bytes per packet).
  * Percent: ``"1%"`` -> 0.01; a bare number is taken as a fraction (``"0.01"`` -> 0.01).
  * A bare number has a unit only if the caller passes ``default_unit``; otherwise it is
    an error (is "100" a rate of 100 bit/s or of 100 Mbit/s?).
  * Numbers may use exponents and underscores (``1e6``, ``1_000``); spaces between number
    and unit are allowed. Negative values, NaN and infinity are rejected.
  * Integer results are checked: one that does not fit the schema's 64-bit unsigned fields
    (more than 2^64 - 1 ns, bit/s or bytes) is refused with the largest value allowed.
"""

from __future__ import annotations

import math
import re

from cubiclab import _core

__all__ = [
    "parse_rate",
    "parse_time",
    "parse_time_s",
    "parse_size",
    "parse_percent",
    "parse_buffer",
    "format_rate",
    "format_time",
]

_NUM = r"[+-]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?"
_SPLIT = re.compile(rf"^\s*({_NUM})\s*([^\s\d].*?)?\s*$")

_RATE_FORMS = "e.g. '100Mbps', '1Gbps', '1.5 Kbps', '500bps', '10MB/s' (bytes), '2Mbit/s'"
_TIME_FORMS = "e.g. '100ms', '0.1s', '250us', '40000ns', '2min'"
_SIZE_FORMS = "e.g. '1500B', '64KB', '1MiB', '2MB', '100packets' (with an MSS)"
_PERCENT_FORMS = "e.g. '1%', '0.5 %', '0.01' (a fraction)"

#: The largest integer a rate (bit/s) or size (bytes) may have: the schema's u64.
U64_MAX = 2**64 - 1
#: The longest time (ns) the schema takes: 2^60 ns, so that the simulator's sums of times
#: stay inside u64.
MAX_TIME_NS = _core.MAX_TIME_NS
#: The same, as messages state it.
MAX_TIME_TEXT = f"ns (about {MAX_TIME_NS / 1e9 / 86400 / 365.25:.1f} years)"

_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}

_TIME_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "sec": 1_000_000_000,
    "secs": 1_000_000_000,
    "min": 60_000_000_000,
    "h": 3_600_000_000_000,
}

_SIZE_B = {
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}
_PACKETS = {"packet", "packets", "pkt", "pkts"}


def _split(text, field: str, forms: str) -> tuple[float, str]:
    """'100 Mbps' -> (100.0, 'Mbps'). Numbers (int/float) pass through with unit ''."""
    if isinstance(text, bool):
        raise ValueError(f"{field}: {text!r} is not a quantity; accepted forms: {forms}")
    if isinstance(text, (int, float)):
        value, unit = (float(text) if abs(text) < 2**1000 else math.inf), ""  # float(10**400) raises
    elif isinstance(text, str):
        m = _SPLIT.match(text)
        if not m:
            raise ValueError(f"{field}: cannot parse '{text}'; accepted forms: {forms}")
        value, unit = float(m.group(1).replace("_", "")), (m.group(2) or "")
    else:
        raise ValueError(f"{field}: {text!r} is not a quantity; accepted forms: {forms}")
    if not math.isfinite(value):
        raise ValueError(f"{field}: '{text}' is not a finite number; accepted forms: {forms}")
    if value < 0:
        raise ValueError(f"{field}: '{text}' is negative; it must be >= 0")
    return value, unit


def _bare(field: str, text, forms: str, default_unit: str | None) -> str:
    if default_unit is None:
        raise ValueError(f"{field}: '{text}' has no unit; accepted forms: {forms}")
    return default_unit


def checked_int(value: float, field: str, text, unit: str, largest: int = U64_MAX) -> int:
    """`value` (in `unit`) rounded to an integer, refused when it is not finite or above
    `largest`: float arithmetic on huge finite inputs ("1e300s" x 1e9) overflows to inf."""
    # Compared as floats, the limit is the largest float not above `largest` (2^64 - 1 itself
    # rounds up to 2^64): that one is accepted, and stated.
    most = float(largest)
    if most > largest:
        most = math.nextafter(most, 0.0)
    if not math.isfinite(value) or value > most:
        raise ValueError(f"{field}: '{text}' is too large; allowed: at most {int(most)} {unit}")
    return int(round(value))


def _rate_factor(unit: str) -> float | None:
    """Bits per second per unit, or None if the unit is not a rate."""
    u = unit.replace(" ", "")
    m = re.fullmatch(r"([kKmMgGtT]?)(bps|Bps|b/s|B/s|bit/s|bits/s|byte/s|bytes/s|Byte/s|Bytes/s)", u)
    if not m:
        return None
    prefix, base = m.group(1).lower(), m.group(2)
    bytes_ = base.startswith("B") or base.lower().startswith("byte")
    return _PREFIX[prefix] * (8 if bytes_ else 1)


def parse_rate(text, field: str = "rate", default_unit: str | None = None) -> int:
    """A rate such as '100Mbps' -> bits per second (int, rounded to the nearest bit/s)."""
    value, unit = _split(text, field, _RATE_FORMS)
    if not unit:
        unit = _bare(field, text, _RATE_FORMS, default_unit)
    factor = _rate_factor(unit)
    if factor is None:
        raise ValueError(f"{field}: unknown rate unit '{unit}' in '{text}'; accepted forms: {_RATE_FORMS}")
    return checked_int(value * factor, field, text, "bit/s")


def _time_factor(unit: str) -> int | None:
    return _TIME_NS.get(unit.strip())


def parse_time(text, field: str = "time", default_unit: str | None = None) -> int:
    """A duration such as '100ms' -> nanoseconds (int, rounded to the nearest ns)."""
    value, unit = _split(text, field, _TIME_FORMS)
    if not unit:
        unit = _bare(field, text, _TIME_FORMS, default_unit)
    factor = _time_factor(unit)
    if factor is None:
        raise ValueError(f"{field}: unknown time unit '{unit}' in '{text}'; accepted forms: {_TIME_FORMS}")
    return checked_int(value * factor, field, text, MAX_TIME_TEXT, largest=MAX_TIME_NS)


def parse_time_s(text, field: str = "time", default_unit: str | None = None) -> float:
    """A duration such as '100ms' -> seconds (float, not rounded to whole ns)."""
    value, unit = _split(text, field, _TIME_FORMS)
    if not unit:
        unit = _bare(field, text, _TIME_FORMS, default_unit)
    factor = _time_factor(unit)
    if factor is None:
        raise ValueError(f"{field}: unknown time unit '{unit}' in '{text}'; accepted forms: {_TIME_FORMS}")
    return value * factor / 1e9


def parse_size(text, field: str = "size", mss: int | None = None, default_unit: str | None = None) -> int:
    """A size such as '64KB' or '100packets' -> bytes (int). Packets need `mss` (bytes)."""
    value, unit = _split(text, field, _SIZE_FORMS)
    if not unit:
        unit = _bare(field, text, _SIZE_FORMS, default_unit)
    u = unit.strip()
    if u.lower() in _PACKETS:
        if mss is None or mss <= 0:
            raise ValueError(f"{field}: '{text}' is in packets; give the packet size (mss, bytes > 0) too")
        return checked_int(value * mss, field, text, "bytes")
    if u in ("b", "kb", "mb", "gb", "Kb", "Mb", "Gb"):
        raise ValueError(f"{field}: '{text}': a lowercase 'b' means bits; sizes are in bytes ({_SIZE_FORMS})")
    factor = _SIZE_B.get(u.lower())
    if factor is None:
        raise ValueError(f"{field}: unknown size unit '{unit}' in '{text}'; accepted forms: {_SIZE_FORMS}")
    return checked_int(value * factor, field, text, "bytes")


def parse_percent(text, field: str = "fraction") -> float:
    """'1%' -> 0.01, '0.01' -> 0.01 (a bare number is a fraction). Result in [0, 1]."""
    value, unit = _split(text, field, _PERCENT_FORMS)
    if unit.strip() == "%":
        value /= 100.0
    elif unit:
        raise ValueError(f"{field}: unknown unit '{unit}' in '{text}'; accepted forms: {_PERCENT_FORMS}")
    if value > 1:
        raise ValueError(f"{field}: '{text}' is more than 100%; allowed: 0 to 1 (0% to 100%)")
    return value


def parse_buffer(text, field: str = "buffer", bdp_bytes: int | None = None, mss: int | None = None) -> int:
    """A buffer size: '100%BDP' / '0.5BDP' / '2xBDP' (needs bdp_bytes), or any parse_size form.

    Returns bytes (int)."""
    if isinstance(text, str):
        m = re.fullmatch(rf"\s*({_NUM})\s*(%|x|\*)?\s*BDP\s*", text, flags=re.IGNORECASE)
        if m:
            if bdp_bytes is None:
                raise ValueError(f"{field}: '{text}' is relative to the BDP; the BDP is not known here")
            value = float(m.group(1).replace("_", ""))
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{field}: '{text}' must be a non-negative multiple of the BDP")
            if m.group(2) == "%":
                value /= 100.0
            elif m.group(2) is None and value > 1:  # '100BDP': a hundred BDPs, or one BDP missing its '%'?
                raise ValueError(f"{field}: '{text}' is ambiguous; write '{m.group(1)}%BDP' for {value:g}% of the "
                                 f"BDP or '{m.group(1)}xBDP' for {value:g} times it")
            return checked_int(value * bdp_bytes, field, text, "bytes")
    try:
        return parse_size(text, field, mss=mss)
    except ValueError as e:
        raise ValueError(f"{e}; or relative to the BDP: '100%BDP', '2xBDP'") from None


def format_rate(bps: float) -> str:
    """100_000_000 -> '100Mbps' (inverse of parse_rate for round numbers)."""
    for name, f in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3)):
        if abs(bps) >= f:
            return f"{bps / f:g}{name}"
    return f"{bps:g}bps"


def format_time(ns: float) -> str:
    """100_000_000 -> '100ms'."""
    for name, f in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= f:
            return f"{ns / f:g}{name}"
    return f"{ns:g}ns"
