"""Scenarios: the dumbbell, its bottleneck and its flow groups, from Python or TOML.

A scenario file (every key optional except ``flows``)::

    name = "fig6"
    duration = "120s"
    seed = 1
    start_jitter = "10ms"       # each flow starts up to this much after its start time
    mss = 1448                  # payload bytes; packets are mss + 52 bytes on the wire

    [bottleneck]
    rate = "400Mbps"
    delay = "5ms"               # one-way; default: a quarter of the smallest flow RTT
    buffer = "100%BDP"          # or "500packets", "2MB"; BDP = rate x the largest flow RTT
    reverse_buffer = "100%BDP"

    [[flows]]
    algorithm = "cubic"
    count = 4
    rtt = "40ms"                # two-way propagation delay of each flow
    start = "0s"
    start_spacing = "1s"        # flow k of the group starts k x spacing later
    # stop = "100s" | bytes = "10MB" | recovery = "sack" | "newreno"
    # delayed_ack = true | initial_cwnd = 10 | initial_ssthresh = 100 | rwnd = "16MB"
    [flows.params]
    beta = 717

    [record]
    interval = "100ms"
    cwnd = "interval"           # or "changes": every change of cwnd/ssthresh
    rtt_samples = false

Every value is checked before anything runs; a bad one raises ValueError naming its field
and what is allowed.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from cubiclab import units
from cubiclab.algorithms import check_algorithm

HEADER_BYTES = 52  # IPv4 + TCP + timestamps: 1448 + 52 = 1500 bytes on the wire
ACK_BYTES = 64


@dataclass
class Bottleneck:
    rate: str | int = "100Mbps"
    delay: str | int | None = None
    buffer: str | int = "100%BDP"
    reverse_buffer: str | int = "100%BDP"


@dataclass
class FlowGroup:
    algorithm: str = "cubic"
    count: int = 1
    rtt: str | int = "40ms"
    start: str | int = "0s"
    start_spacing: str | int = "0s"
    stop: str | int | None = None
    bytes: str | int | None = None
    params: dict = field(default_factory=dict)
    recovery: str = "sack"
    delayed_ack: bool = True
    initial_cwnd: int = 10
    initial_ssthresh: int | None = None
    rwnd: str | int | None = None
    name: str | None = None


@dataclass
class Record:
    interval: str | int = "100ms"
    cwnd: str = "interval"
    rtt_samples: bool = False


@dataclass
class Scenario:
    flows: list[FlowGroup] = field(default_factory=list)
    bottleneck: Bottleneck = field(default_factory=Bottleneck)
    duration: str | int = "60s"
    seed: int = 1
    start_jitter: str | int = "10ms"
    mss: int = 1448
    min_rto: str | int = "200ms"
    record: Record = field(default_factory=Record)
    name: str = "scenario"

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: dict, where: str = "scenario") -> "Scenario":
        d = dict(d)
        _check_keys(d, cls, where)
        kw = {}
        for k, v in d.items():
            if k == "bottleneck":
                _expect(v, dict, f"{where}.bottleneck")
                _check_keys(v, Bottleneck, f"{where}.bottleneck")
                kw[k] = Bottleneck(**v)
            elif k == "record":
                _expect(v, dict, f"{where}.record")
                _check_keys(v, Record, f"{where}.record")
                kw[k] = Record(**v)
            elif k == "flows":
                _expect(v, list, f"{where}.flows")
                groups = []
                for i, g in enumerate(v):
                    _expect(g, dict, f"{where}.flows[{i}]")
                    _check_keys(g, FlowGroup, f"{where}.flows[{i}]")
                    groups.append(FlowGroup(**g))
                kw[k] = groups
            else:
                kw[k] = v
        return cls(**kw)

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """Read a TOML scenario file."""
        p = Path(path)
        if not p.exists():
            raise ValueError(f"scenario file '{p}' does not exist")
        try:
            data = tomllib.loads(p.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{p}: not valid TOML: {e}") from None
        sc = cls.from_dict(data, where=p.name)
        if "name" not in data:
            sc.name = p.stem
        return sc

    def to_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes) -> "Scenario":
        """A copy with top-level fields changed (e.g. ``seed=2``)."""
        sc = copy.deepcopy(self)
        for k, v in changes.items():
            if not hasattr(sc, k):
                raise ValueError(f"scenario has no field '{k}'")
            setattr(sc, k, v)
        return sc

    # ---- compilation to the simulator's integer units ----------------------------
    def compile(self) -> dict:
        """Check every field and return the simulator's flat spec (bits/s, ns, bytes)."""
        if not self.flows:
            raise ValueError("flows: a scenario needs at least one flow group")
        wire = _int(self.mss, "mss", 1, 65000) + HEADER_BYTES
        b = self.bottleneck
        rate = units.parse_rate(b.rate, "bottleneck.rate")
        if rate <= 0:
            raise ValueError(f"bottleneck.rate is '{b.rate}'; it must be > 0")
        duration = units.parse_time(self.duration, "duration")
        if duration <= 0:
            raise ValueError(f"duration is '{self.duration}'; it must be > 0")
        flows = []
        rtts = []
        for i, g in enumerate(self.flows):
            at = f"flows[{i}]"
            if not isinstance(g.algorithm, str):
                raise ValueError(f"{at}.algorithm must be a string")
            try:
                check_algorithm(g.algorithm, g.params)
            except ValueError as e:
                raise ValueError(f"{at}: {e}") from None
            count = _int(g.count, f"{at}.count", 1, 100_000)
            rtt = units.parse_time(g.rtt, f"{at}.rtt")
            if rtt <= 0:
                raise ValueError(f"{at}.rtt is '{g.rtt}'; it must be > 0")
            rtts.append(rtt)
            start = units.parse_time(g.start, f"{at}.start")
            spacing = units.parse_time(g.start_spacing, f"{at}.start_spacing")
            stop = None if g.stop is None else units.parse_time(g.stop, f"{at}.stop")
            nbytes = None if g.bytes is None else units.parse_size(g.bytes, f"{at}.bytes", mss=self.mss)
            if g.recovery not in ("sack", "newreno"):
                raise ValueError(f"{at}.recovery is '{g.recovery}'; allowed: sack, newreno")
            if not isinstance(g.delayed_ack, bool):
                raise ValueError(f"{at}.delayed_ack must be true or false")
            rwnd = (1 << 30) if g.rwnd is None else max(1, units.parse_size(g.rwnd, f"{at}.rwnd", mss=self.mss) // self.mss)
            for k in range(count):
                flows.append({
                    "group": g.name or (f"{g.algorithm}#{i}" if _dup_alg(self.flows, g) else g.algorithm),
                    "algorithm": g.algorithm,
                    "params": {str(n): float(v) for n, v in g.params.items()},
                    "rtt_ns": rtt,
                    "start_ns": start + k * spacing,
                    "stop_ns": stop,
                    "bytes": nbytes,
                    "recovery": g.recovery,
                    "ack_every": 2 if g.delayed_ack else 1,
                    "delack_timeout_ns": 40_000_000,
                    "rwnd": min(rwnd, (1 << 31) - 1),
                    "initial_cwnd": _int(g.initial_cwnd, f"{at}.initial_cwnd", 1, 1 << 30),
                    "initial_ssthresh": None if g.initial_ssthresh is None
                    else _int(g.initial_ssthresh, f"{at}.initial_ssthresh", 2, 1 << 30),
                })
        delay = min(rtts) // 4 if b.delay is None else units.parse_time(b.delay, "bottleneck.delay")
        for i, g in enumerate(self.flows):
            if rtts[i] < 2 * delay:
                raise ValueError(
                    f"flows[{i}].rtt is '{g.rtt}', smaller than twice the bottleneck delay "
                    f"({delay / 1e6:g} ms one way); allowed: rtt >= {2 * delay / 1e6:g} ms")
        bdp_bytes = rate * max(rtts) // 8 // 1_000_000_000
        buf_kind, buf = _buffer(b.buffer, "bottleneck.buffer", bdp_bytes, wire)
        rbuf_kind, rbuf = _buffer(b.reverse_buffer, "bottleneck.reverse_buffer", bdp_bytes, wire)
        rec = self.record
        if rec.cwnd not in ("interval", "changes"):
            raise ValueError(f"record.cwnd is '{rec.cwnd}'; allowed: interval, changes")
        interval = units.parse_time(rec.interval, "record.interval")
        if interval <= 0:
            raise ValueError("record.interval must be > 0")
        return {
            "seed": _int(self.seed, "seed", 0, 2**63),
            "duration_ns": duration,
            "mss": int(self.mss),
            "header_bytes": HEADER_BYTES,
            "ack_bytes": ACK_BYTES,
            "rate_bps": rate,
            "delay_ns": delay,
            "buffer_kind": buf_kind,
            "buffer": buf,
            "reverse_buffer_kind": rbuf_kind,
            "reverse_buffer": rbuf,
            "flows": flows,
            "sample_interval_ns": interval,
            "start_jitter_ns": units.parse_time(self.start_jitter, "start_jitter"),
            "min_rto_ns": units.parse_time(self.min_rto, "min_rto"),
            "record_cwnd_changes": rec.cwnd == "changes",
            "record_rtt_samples": bool(rec.rtt_samples),
        }


def _dup_alg(groups, g) -> bool:
    return sum(1 for x in groups if x.algorithm == g.algorithm) > 1


def _buffer(value, fieldname, bdp_bytes, wire) -> tuple[str, int]:
    """Buffers in packets when given in packets or as a fraction of the BDP (rounded to
    whole packets, at least one), else in bytes."""
    if isinstance(value, str) and "bdp" in value.lower():
        n = round(units.parse_buffer(value, fieldname, bdp_bytes=bdp_bytes) / wire)
        if n < 1:
            raise ValueError(f"{fieldname} is '{value}', less than one packet; it must be > 0")
        return "packets", n
    if isinstance(value, str) and any(value.strip().lower().endswith(u) for u in ("packets", "packet", "pkts", "pkt")):
        n = round(units.parse_size(value, fieldname, mss=1))
        if n < 1:
            raise ValueError(f"{fieldname} is '{value}'; it must be > 0")
        return "packets", n
    n = units.parse_size(value, fieldname)
    if n < wire:
        raise ValueError(f"{fieldname} is '{value}'; it must hold at least one packet ({wire} bytes)")
    return "bytes", n


def _int(v, name, lo, hi) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not (lo <= v <= hi):
        raise ValueError(f"{name} is {v!r}; allowed: an integer in [{lo}, {hi}]")
    return v


def _expect(v, typ, where):
    if not isinstance(v, typ):
        raise ValueError(f"{where} must be a {'table' if typ is dict else 'list of tables'}")


def _check_keys(d: dict, cls, where: str):
    allowed = [f.name for f in fields(cls)]
    for k in d:
        if k not in allowed:
            raise ValueError(f"{where}: unknown key '{k}'; allowed: {', '.join(allowed)}")


def default_scenario() -> Scenario:
    """The built-in default: seed 000 Fig. 6 — 4 CUBIC and 4 SACK flows, 400 Mbps,
    40 ms, a buffer of 100% BDP."""
    return Scenario(
        name="fig6-default",
        duration="120s",
        bottleneck=Bottleneck(rate="400Mbps", buffer="100%BDP"),
        flows=[
            FlowGroup(algorithm="cubic", count=4, rtt="40ms", start_spacing="1s", name="cubic"),
            FlowGroup(algorithm="reno", count=4, rtt="40ms", start_spacing="1s", name="sack"),
        ],
    )
