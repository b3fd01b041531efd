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
    queue = "droptail"          # or "red", "codel"
    red = { min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, gentle = true }  # packets
    codel = { target = "5ms", interval = "100ms" }
    loss = { model = "bernoulli", p = 0.001 }   # or poisson (rate per s), gilbert (p_gb, p_bg,
                                                # loss_good, loss_bad); random loss, forward
    # reverse_loss = { ... }                    # the same on the reverse direction

    [[web]]                     # background web sessions (seed 000 Sec. 6.1, seed 002)
    sessions = 50               # with `load`, the think time is set to reach it
    load = 0.15                 # fraction of the bottleneck, per direction (optional)
    direction = "both"          # "forward", "reverse", "both" (sessions split evenly)
    mean_size = "10packets"     # Pareto mean object size
    shape = 1.2                 # Pareto shape, > 1
    max_size = 1000             # sizes capped at this many times the mean (mean kept)
    think = "10s"               # exponential mean think time (set from `load` if given)
    rtt = "exp:50ms"            # exponential per session (or a fixed "40ms")
    algorithm = "reno"

    [[flows]]
    algorithm = "cubic"
    count = 4
    rtt = "40ms"                # two-way propagation delay of each flow
    start = "0s"
    start_spacing = "1s"        # flow k of the group starts k x spacing later
    # stop = "100s" | bytes = "10MB" | recovery = "sack" | "newreno"
    # delayed_ack = true | ack_every = 2 | delack_timeout = "40ms"
    # initial_cwnd = 10 | initial_ssthresh = 100 | rwnd = "16MB"
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
    queue: str = "droptail"
    red: dict = field(default_factory=dict)
    codel: dict = field(default_factory=dict)
    loss: dict | None = None
    reverse_loss: dict | None = None


@dataclass
class WebGroup:
    sessions: int | None = None
    load: float | None = None
    direction: str = "both"
    mean_size: str | int = "10packets"
    shape: float = 1.2
    max_size: float = 1000.0
    think: str | int | None = None
    rtt: str | int = "exp:50ms"
    algorithm: str = "reno"
    params: dict = field(default_factory=dict)
    recovery: str = "sack"
    name: str | None = None


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
    ack_every: int = 2
    delack_timeout: str | int = "40ms"
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
    web: list[WebGroup] = field(default_factory=list)
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
            elif k in ("flows", "web"):
                cls_ = FlowGroup if k == "flows" else WebGroup
                _expect(v, list, f"{where}.{k}")
                groups = []
                for i, g in enumerate(v):
                    _expect(g, dict, f"{where}.{k}[{i}]")
                    _check_keys(g, cls_, f"{where}.{k}[{i}]")
                    groups.append(cls_(**g))
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
        if not self.flows and not self.web:
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
            delack = units.parse_time(g.delack_timeout, f"{at}.delack_timeout")
            if delack <= 0:
                raise ValueError(f"{at}.delack_timeout must be > 0")
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
                    "ack_every": _int(g.ack_every, f"{at}.ack_every", 1, 64) if g.delayed_ack else 1,
                    "delack_timeout_ns": delack,
                    "rwnd": min(rwnd, (1 << 31) - 1),
                    "initial_cwnd": _int(g.initial_cwnd, f"{at}.initial_cwnd", 1, 1 << 30),
                    "initial_ssthresh": None if g.initial_ssthresh is None
                    else _int(g.initial_ssthresh, f"{at}.initial_ssthresh", 2, 1 << 30),
                })
        if not rtts:
            rtts = [units.parse_time("40ms")]
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
            "queue": _queue(b),
            "loss": _loss(b.loss, "bottleneck.loss"),
            "reverse_loss": _loss(b.reverse_loss, "bottleneck.reverse_loss"),
            "web": [w for i, g in enumerate(self.web) for w in _web(g, i, rate, delay, wire, self.mss)],
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


def _queue(b: Bottleneck) -> dict:
    if b.queue == "droptail":
        return {"kind": "droptail"}
    if b.queue == "red":
        allowed = {"min_th", "max_th", "max_p", "w_q", "gentle"}
        _check_dict_keys(b.red, allowed, "bottleneck.red")
        r = {"min_th": 5.0, "max_th": 15.0, "max_p": 0.1, "w_q": 0.002, "gentle": True, **b.red}
        out = {"kind": "red", "gentle": bool(r["gentle"])}
        for k in ("min_th", "max_th", "max_p", "w_q"):
            out[k] = _num(r[k], f"bottleneck.red.{k}")
        if not 0 <= out["min_th"] < out["max_th"]:
            raise ValueError(f"bottleneck.red: min_th ({out['min_th']}) must be >= 0 and below max_th ({out['max_th']})")
        if not 0 < out["max_p"] <= 1:
            raise ValueError(f"bottleneck.red.max_p is {out['max_p']}; allowed: (0, 1]")
        if not 0 < out["w_q"] <= 1:
            raise ValueError(f"bottleneck.red.w_q is {out['w_q']}; allowed: (0, 1]")
        return out
    if b.queue == "codel":
        _check_dict_keys(b.codel, {"target", "interval"}, "bottleneck.codel")
        c = {"target": "5ms", "interval": "100ms", **b.codel}
        t = units.parse_time(c["target"], "bottleneck.codel.target")
        i = units.parse_time(c["interval"], "bottleneck.codel.interval")
        if t <= 0 or i <= 0:
            raise ValueError("bottleneck.codel: target and interval must be > 0")
        return {"kind": "codel", "target_ns": t, "interval_ns": i}
    raise ValueError(f"bottleneck.queue is '{b.queue}'; allowed: droptail, red, codel")


_LOSS_KEYS = {"none": set(), "bernoulli": {"p"}, "poisson": {"rate"},
              "gilbert": {"p_gb", "p_bg", "loss_good", "loss_bad"}}


def _loss(spec: dict | None, where: str) -> dict | None:
    if spec is None:
        return None
    if not isinstance(spec, dict) or "model" not in spec:
        raise ValueError(f"{where} must be a table with 'model' = one of {', '.join(_LOSS_KEYS)}")
    model = spec["model"]
    if model not in _LOSS_KEYS:
        raise ValueError(f"{where}.model is '{model}'; allowed: {', '.join(_LOSS_KEYS)}")
    _check_dict_keys(spec, _LOSS_KEYS[model] | {"model"}, where)
    out = {"model": model}
    for k in _LOSS_KEYS[model]:
        if k not in spec:
            raise ValueError(f"{where}: model '{model}' needs '{k}'")
        v = _num(spec[k], f"{where}.{k}")
        if k == "rate":
            if v < 0:
                raise ValueError(f"{where}.rate is {v}; allowed: >= 0 loss events per second")
        elif k in ("p", "loss_good") and not 0 <= v < 1:
            raise ValueError(f"{where}.{k} is {v}; allowed: [0, 1)")
        elif not 0 <= v <= 1:
            raise ValueError(f"{where}.{k} is {v}; allowed: [0, 1]")
        out[k] = v
    return out


def _web(g: "WebGroup", i: int, rate: int, delay: int, wire: int, mss: int) -> list[dict]:
    """One spec per direction. With a target `load`, the think time (or, if only the think
    time is given, the session count) is set so that sessions x mean size / (think + about
    two RTTs of transfer) equals load x rate on the wire."""
    at = f"web[{i}]"
    check_algorithm(g.algorithm, g.params)
    if g.direction not in ("forward", "reverse", "both"):
        raise ValueError(f"{at}.direction is '{g.direction}'; allowed: forward, reverse, both")
    shape = _num(g.shape, f"{at}.shape")
    if shape <= 1:
        raise ValueError(f"{at}.shape is {shape}; allowed: > 1 (at or below 1 the Pareto mean is infinite)")
    cap = _num(g.max_size, f"{at}.max_size")
    if cap <= 1:
        raise ValueError(f"{at}.max_size is {cap}; allowed: > 1 (a multiple of the mean size)")
    size = units.parse_size(g.mean_size, f"{at}.mean_size", mss=mss)
    if size <= 0:
        raise ValueError(f"{at}.mean_size must be > 0")
    rtt_text = g.rtt
    kind = "fixed"
    if isinstance(rtt_text, str) and rtt_text.strip().lower().startswith("exp:"):
        kind, rtt_text = "exp", rtt_text.split(":", 1)[1]
    rtt = units.parse_time(rtt_text, f"{at}.rtt")
    if kind == "fixed" and rtt < 2 * delay:
        raise ValueError(f"{at}.rtt is '{g.rtt}', smaller than twice the bottleneck delay")
    if g.recovery not in ("sack", "newreno"):
        raise ValueError(f"{at}.recovery is '{g.recovery}'; allowed: sack, newreno")
    dirs = ["forward", "reverse"] if g.direction == "both" else [g.direction]
    total = g.sessions
    if total is not None:
        total = _int(total, f"{at}.sessions", len(dirs), 1_000_000)
    think = None if g.think is None else units.parse_time(g.think, f"{at}.think")
    if think is not None and think <= 0:
        raise ValueError(f"{at}.think must be > 0")
    wire_size = size * wire / mss
    busy = 2 * max(rtt, 2 * delay) / 1e9  # handshake and a short transfer, seconds
    if g.load is not None:
        load = _num(g.load, f"{at}.load")
        if not 0 < load < 1:
            raise ValueError(f"{at}.load is {load}; allowed: 0 < load < 1 (a fraction of the bottleneck)")
        if total is None and think is not None:
            per_dir = max(1, round(load * rate * (think / 1e9 + busy) / (8 * wire_size)))
            total = per_dir * len(dirs)
        else:
            total = total or 50 * len(dirs)
            per_dir = total // len(dirs)
            think_s = per_dir * 8 * wire_size / (load * rate) - busy
            if think_s <= 0.001:
                raise ValueError(f"{at}: {per_dir} sessions cannot offer only {load:g} of the link; use fewer sessions")
            think = int(think_s * 1e9)
    total = total or 50 * len(dirs)
    think = think or 10_000_000_000
    per = total // len(dirs)
    return [{
        "group": g.name or f"web{i}",
        "sessions": per, "direction": d, "mean_size_bytes": size, "shape": shape, "max_size_ratio": cap,
        "think_ns": think, "rtt_kind": kind, "rtt_ns": rtt, "algorithm": g.algorithm,
        "params": {str(k): float(v) for k, v in g.params.items()}, "recovery": g.recovery,
    } for d in dirs]


def _num(v, name) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{name} is {v!r}; expected a number")
    return float(v)


def _check_dict_keys(d: dict, allowed: set, where: str):
    for k in d:
        if k not in allowed:
            raise ValueError(f"{where}: unknown key '{k}'; allowed: {', '.join(sorted(allowed))}")


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
