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
    queue = "droptail"          # or "red", "codel", "step", "fq_codel", "pie", "dualpi2"
    red = { min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002, gentle = true, ecn = false }  # packets
                                # ecn: mark ECT packets instead of dropping (harddrop = true:
                                # still drop above the ramp, as tc red harddrop; nodrop =
                                # true, with ecn: queue Not-ECT packets instead of dropping)
    codel = { target = "5ms", interval = "100ms", ecn = false }  # ecn: mark ECT packets;
                                # ce_threshold = "1ms": mark ECT packets that waited longer
    step = { threshold = "20packets" }  # mark ECT arrivals finding more than this waiting
                                        # (DCTCP's K; or a size, "30KB"); nothing dropped
    fq_codel = { flows = 1024, quantum = 1514, ecn = true, drop_batch = 64 }  # Linux's defaults;
                                # also target, interval, memory_limit (bytes); the buffer is
                                # its limit (Linux's: buffer = "10240packets")
    dualpi2 = { ecn_mask = "l4s_ect" }  # ECT(1)/CE is L4S; "any_ect": ECT(0) too (Linux's
                                        # DCTCP sends ECT(0)); also target, step_thresh, ...
    loss = { model = "bernoulli", p = 0.001 }   # or poisson (rate per s), gilbert (p_gb, p_bg,
                                                # loss_good, loss_bad); random loss, forward
    # reverse_loss = { ... }                    # the same on the reverse direction
    # schedule = { steps = [["0s", "50Mbps"], ["10s", "5Mbps"]], repeat = "20s" }
    # schedule = { trace = "cellular" }         # forward rate over time: rate steps, or a
    #                                           # Mahimahi trace (a shipped name or a file)

    # A path of several links instead of [bottleneck] (each with the keys of [bottleneck]
    # and a name; a delay left out is a quarter of the smallest flow RTT over the links of
    # the longest route):
    # [[links]]
    # name = "a"
    # rate = "100Mbps"
    # [[links]]
    # name = "b"
    # rate = "50Mbps"
    # ... and in each [[flows]] / [[web]] group: route = ["a", "b"] (the links its data
    # crosses, in order; its ACKs come back across their reverse directions, or across
    # ack_route = [...] in a flow group). With one link, route may be left out. Or a preset,
    # [topology] preset = "parking-lot", hops = 3 (see cubiclab.topology). A flow
    # group with direction = "reverse" sends its data back along its route instead, on the
    # links' reverse directions, where the other flows' ACKs queue behind it.

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
    # initial_cwnd = 10 | initial_ssthresh = 100 | rwnd = "16MB" | rwnd = "autotune"
    # ecn = true                # RFC 3168 ECN (Linux tcp_ecn = 1); dctcp has it anyway
    [flows.params]
    beta = 717

    [host]
    jitter = "testbed"          # the hosts' timing noise measured on the kernel testbed, drawn
                                # from the seed; "off" for exact runs. Unset: off, except in
                                # ensembles against the kernel (compare --runs, the agreement
                                # matrix), which turn it on
    read_lowat = "6250B"        # bytes waiting before a receiving application reads
                                # (SO_RCVLOWAT): a full-sized PSH segment is ACKed at once only
                                # at a read. Unset: a read per segment, except in ensembles
                                # against the kernel, which set the testbed sink's
    sack_compression = true     # receivers hold duplicate ACKs past the third and send one
                                # per min(1 ms, RTT/20) (Linux 4.18+). Unset: off (the seed
                                # papers' 2.6 hosts), except in ensembles against the kernel

    [record]
    interval = "100ms"
    cwnd = "interval"           # or "changes": every change of cwnd/ssthresh
    rtt_samples = false
    cc_state = false            # each flow's algorithm state every interval (the cc_state table)
    pcap = "run.pcap"           # every packet leaving the bottleneck, for Wireshark/tcptrace
    pcap_flows = [0, 2]         # only these long-lived flows (default: every packet)
    pcap_link = "b"             # with [[links]]: the link captured, both ways (default: the first)

Every value is checked before anything runs; a bad one raises ValueError naming its field
and what is allowed.
"""

from __future__ import annotations

import copy
import math
import json
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: the same parser, published as tomli
    import tomli as tomllib
import dataclasses
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass, make_dataclass
from pathlib import Path

import numpy as np

from cubiclab import _core, units
from cubiclab.suggest import did_you_mean, keywords_suggested, suggesting

HEADER_BYTES = _core.HEADER_BYTES  # IPv4 + TCP + timestamps: 1448 + 52 = 1500 bytes on the wire
MAX_FLOWS = _core.MAX_FLOWS  # flows and web sessions in one run, all groups together
#: A buffer left out: the bandwidth-delay product.
_BUFFER_DEFAULT = "100%BDP"


@dataclass
class _Link:
    rate: str = "100Mbps"
    delay: str | None = None
    buffer: str = _BUFFER_DEFAULT
    reverse_buffer: str = _BUFFER_DEFAULT
    queue: str = "droptail"
    loss: dict | None = None
    reverse_loss: dict | None = None
    schedule: dict | None = None


def _discipline_keys() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The queue disciplines' settings tables (``red``, ``codel``, ``step``, ``fq_codel``,
    from the Rust schema's ``QueueSettings``, flattened into each link): per table, its keys
    that are times in ns, set by default or not (``Table::times``, ``Table::optional_times``;
    a file gives them as "5ms"), and its keys holding a ``Limit``, which are sizes (a file
    gives them as "20packets", "30KB" or "10%BDP", as a buffer). Rust owns them, so a new
    discipline needs nothing here."""
    schema = json.loads(_core.scenario_schema())["definitions"]
    times, sizes = {}, {}
    for name in _core.DISCIPLINE_TABLES:
        prop = schema["DuplexLink"]["properties"][name]
        ref = prop.get("allOf", [prop])[0].get("$ref", "").rsplit("/", 1)[-1]
        settings = schema[ref]["properties"] if ref in schema else {}
        times[name] = {k.split(".", 1)[1] for k in _core.DISCIPLINE_TIMES if k.split(".", 1)[0] == name}
        sizes[name] = {k for k, v in settings.items() if v.get("allOf", [v])[0].get("$ref", "").endswith("/Limit")}
    return times, sizes


DISCIPLINE_TIMES, DISCIPLINE_SIZES = _discipline_keys()
#: The queue disciplines' settings tables, as ``QueueSettings`` declares them.
DISCIPLINE_TABLES = list(_core.DISCIPLINE_TABLES)
Bottleneck = make_dataclass(
    "Bottleneck", [(name, dict, field(default_factory=dict)) for name in DISCIPLINE_TABLES], bases=(_Link,),
    namespace={"__doc__": "The shared link: rate, one-way delay, buffers, queue discipline (with one settings "
                          f"table per discipline: {', '.join(DISCIPLINE_TABLES)}) and random loss."})
Bottleneck.__module__ = __name__
Bottleneck = keywords_suggested(Bottleneck)

Link = make_dataclass(
    "Link", [("name", "str | None", None)], bases=(Bottleneck,),
    namespace={"__doc__": "One link of a path of several ([[links]]): a name its routes use, and the keys "
                          "of Bottleneck."})
Link.__module__ = __name__
Link = keywords_suggested(Link)


@keywords_suggested
@dataclass
class WebGroup:
    sessions: int | None = None
    load: float | None = None
    direction: str = "both"
    mean_size: str = "10packets"
    shape: float = 1.2
    max_size: float = 1000.0
    think: str | None = None
    rtt: str = "exp:50ms"
    algorithm: str = "reno"
    params: dict = field(default_factory=dict)
    recovery: str = "sack"
    name: str | None = None
    #: The links its sessions cross, left to right (forward sessions send data that way).
    route: list[str] | None = None


@keywords_suggested
@dataclass
class FlowGroup:
    algorithm: str = "cubic"
    count: int = 1
    rtt: str = "40ms"
    start: str = "0s"
    start_spacing: str = "0s"
    stop: str | None = None
    bytes: str | None = None
    params: dict = field(default_factory=dict)
    recovery: str = "sack"
    delayed_ack: bool = True
    ack_every: int = 2
    delack_timeout: str = "40ms"
    initial_cwnd: int = 10
    initial_ssthresh: int | None = None
    rwnd: str | None = None
    name: str | None = None
    #: The links its data crosses, in order (needed when the path has several links).
    route: list[str] | None = None
    #: The links its ACKs cross, in the order they cross them, the other way from its data;
    #: default: the data's links backwards.
    ack_route: list[str] | None = None
    #: "forward": data along its route; "reverse": data back along it, on the links' reverse
    #: directions, where it meets the other flows' ACKs (a congested reverse path).
    direction: str = "forward"
    #: ECN (RFC 3168) as Linux's ``net.ipv4.tcp_ecn = 1`` asks for it: data leaves ECT(0), a
    #: queue's CE mark comes back as ECE, and the sender reduces its window once per window
    #: of data (CWR). Default off, as Linux's client side. An algorithm that needs ECN
    #: (``dctcp``) negotiates it whatever this says, and refuses ``False``.
    ecn: bool | None = None


@keywords_suggested
@dataclass
class Host:
    #: The hosts' timing noise: "testbed" or "off"; None: off, but turned on by ensembles
    #: against the kernel (:func:`with_host_timing`).
    jitter: str | None = None
    #: Bytes waiting in a receiving socket before its application reads them (SO_RCVLOWAT),
    #: a size; a receiver ACKs a full-sized PSH segment at once only at a read. None: a read
    #: at each segment, but ensembles against the kernel set the testbed sink's
    #: (:func:`with_host_timing`).
    read_lowat: str | None = None
    #: Whether receivers compress SACKs as Linux 4.18+ does (duplicate ACKs past the third of
    #: one hole held, one sent per min(1 ms, RTT/20)). None: off, but ensembles against the
    #: kernel turn it on (:func:`as_on_testbed`).
    sack_compression: bool | None = None


#: What ensembles against the kernel set an unset `host.jitter` to.
ENSEMBLE_JITTER = "testbed"


@keywords_suggested
@dataclass
class Record:
    interval: str = "100ms"
    cwnd: str = "interval"
    rtt_samples: bool = False
    cc_state: bool = False
    pcap: str | None = None
    pcap_flows: list[int] | None = None
    #: The link whose two directions the capture holds, by name; None: the first.
    pcap_link: str | None = None


@keywords_suggested
@dataclass
class Scenario:
    flows: list[FlowGroup] = field(default_factory=list)
    bottleneck: Bottleneck = field(default_factory=Bottleneck)
    #: A path of several links instead of the bottleneck (each a Link with its name).
    links: list[Link] = field(default_factory=list)
    web: list[WebGroup] = field(default_factory=list)
    duration: str = "60s"
    seed: int = 1
    start_jitter: str = "10ms"
    mss: int = 1448
    min_rto: str = "200ms"
    #: The receivers' net.ipv4.tcp_rmem, "min default max" (e.g. "4096 131072 32MB") or a
    #: list of three sizes; None: Linux 6.18's 4096 131072 33554432. Used by flows with
    #: rwnd = "autotune" and by web sessions.
    tcp_rmem: str | list | None = None
    host: Host = field(default_factory=Host)
    record: Record = field(default_factory=Record)
    name: str = "scenario"

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: dict, where: str | None = None) -> "Scenario":
        """A scenario from tables in the file's layout; unknown keys and misplaced tables are
        refused naming their path, after `where` (a file name) if given. Units and ranges are
        checked by `compile` and `validate`."""
        if where is not None:
            try:
                return cls.from_dict(d)
            except ValueError as e:
                raise ValueError(f"{where}: {e}") from None
        if not isinstance(d, dict):
            raise ValueError(f"scenario must be a table; got {type(d).__name__}")
        if "topology" in d:
            from cubiclab.topology import expand  # it builds on this module

            d = expand(d)
        _check_keys(d, cls, "scenario")
        kw = dict(d)
        for key, group in (("flows", FlowGroup), ("web", WebGroup), ("links", Link)):
            if key in kw:
                kw[key] = _groups(kw[key], group, key)
        for key, table in (("bottleneck", Bottleneck), ("host", Host), ("record", Record)):
            if key in kw:
                kw[key] = _table(kw[key], table, key)
        return _typed(cls(**kw), cls, "")

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """Read a TOML scenario file."""
        from cubiclab.io import read_input_file

        p = Path(path)
        raw = read_input_file(path, "scenario file", limit=MAX_SCENARIO_BYTES)
        try:
            text = raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is not TOML
        except UnicodeDecodeError as e:
            raise ValueError(f"{p}: not UTF-8 text (byte {e.start}: {raw[e.start:e.start + 1]!r}); "
                             "a scenario file is TOML in UTF-8") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{p}: not valid TOML: {e}") from None
        except RecursionError:
            raise ValueError(f"{p}: not valid TOML: values nested too deeply") from None
        sc = cls.from_dict(data, where=str(p))
        if "name" not in data:
            sc.name = p.stem
        pcap = sc.record.pcap if isinstance(sc.record, Record) else None
        if isinstance(pcap, str) and not _is_file_name(pcap):
            raise ValueError(f"{p}: record.pcap is {pcap!r}; allowed: a file name without folders, not starting "
                             "with '.' (it is written into the run's output folder)")
        if isinstance(pcap, str) and pcap.lower().endswith(_RESULT_SUFFIXES):
            raise ValueError(f"{p}: record.pcap is {pcap!r}; allowed: a name the run's own files do not take "
                             f"(not ending {', '.join(_RESULT_SUFFIXES)}: tables, summary.json and plots land in "
                             "the same folder and would overwrite the capture), e.g. 'run.pcap'")
        sc._folder = p.resolve().parent  # the folder its trace files are named from
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

    # ---- compilation to the schema's base units ------------------------------------
    def compile(self) -> dict:
        """Parse units and solve web loads, and return the scenario in the layout of the
        one schema (``cubiclab-sim``'s ``Scenario``: the same keys, values in bits/s, ns and
        bytes). Range checks are the schema's: ``simulate`` and ``plan`` run them, once, in
        Rust. A value that is not a unit of the right kind, or a Python object of the wrong
        type, is refused here, naming its key."""
        sc = _typed(self, Scenario, "")
        flows_in = _groups(sc.flows, FlowGroup, "flows")
        web_in = _groups(sc.web, WebGroup, "web")
        b = _table(sc.bottleneck, Bottleneck, "bottleneck")
        links_in = _groups(sc.links, Link, "links")
        if links_in and b != Bottleneck():
            raise ValueError("bottleneck: a scenario gives its path either as bottleneck (one link) or as links, "
                             "not both")
        # The path as (key path, link): the shorthand's one link, or each of `links`.
        path = [(f"links[{k}]", link) for k, link in enumerate(links_in)] or [("bottleneck", b)]
        rec = _table(sc.record, Record, "record")
        host = _table(sc.host, Host, "host")
        if isinstance(sc.mss, bool) or not isinstance(sc.mss, int) or sc.mss < 1:
            # Sizes in packets and the BDP are computed from it here; the schema checks its range.
            raise ValueError(f"mss is {sc.mss!r}; allowed: a positive integer (bytes)")
        rates = [units.parse_rate(link.rate, f"{at}.rate") for at, link in path]
        flows, rtts = [], []
        for i, g in enumerate(flows_in):
            at = f"flows[{i}]"
            rtt = units.parse_time(g.rtt, f"{at}.rtt")
            rtts.append(rtt)
            flows.append({
                "name": g.name, "algorithm": g.algorithm, "params": g.params, "count": g.count, "rtt": rtt,
                "start": units.parse_time(g.start, f"{at}.start"),
                "start_spacing": units.parse_time(g.start_spacing, f"{at}.start_spacing"),
                "stop": None if g.stop is None else units.parse_time(g.stop, f"{at}.stop"),
                "bytes": None if g.bytes is None else units.parse_size(g.bytes, f"{at}.bytes", mss=sc.mss),
                "recovery": g.recovery, "delayed_ack": g.delayed_ack, "ack_every": g.ack_every,
                "delack_timeout": units.parse_time(g.delack_timeout, f"{at}.delack_timeout"),
                "initial_cwnd": g.initial_cwnd, "initial_ssthresh": g.initial_ssthresh,
                "rwnd": _rwnd(g.rwnd, f"{at}.rwnd", sc.mss),
                # Left out when forward, the schema's default, so that forward-only scenarios
                # compile (and cache) as before.
                **({} if g.direction == "forward" else {"direction": g.direction}),
                **{key: getattr(g, key) for key in ("route", "ack_route") if getattr(g, key) is not None},
                **({} if g.ecn is None else {"ecn": g.ecn}),  # its type checked by _typed
            })
        positive_rtts = [r for r in rtts if r > 0] or [units.parse_time("40ms")]
        # A delay left out: a quarter of the smallest RTT, shared by the links of the longest route.
        hops = max((len(g.route) for g in [*flows_in, *web_in] if isinstance(g.route, list)), default=1)
        delays = [min(positive_rtts) // (4 * hops) if link.delay is None else units.parse_time(link.delay, f"{at}.delay")
                  for at, link in path]
        wire = sc.mss + HEADER_BYTES
        # Each link's BDP at the largest RTT (a negative rate gets none: the schema refuses it).
        compiled = [
            _link(link, at, rate, delay, _core.bdp_bytes(max(rate, 0), max(positive_rtts)), wire,
                  getattr(self, "_folder", None))
            for (at, link), rate, delay in zip(path, rates, delays)]
        if links_in:
            for (at, link), c in zip(path, compiled):
                c["name"] = link.name
        names = [getattr(link, "name", "bottleneck") for _, link in path]

        def web_path(g) -> tuple[int, int]:
            """The rate (the slowest link's) and one-way delay of a web group's route."""
            # The schema refuses unknown names; until then they are left out here.
            route = [names.index(n) for n in g.route if n in names] if isinstance(g.route, list) else []
            route = route or [0]
            return min(rates[k] for k in route), sum(delays[k] for k in route)

        return {
            "seed": sc.seed,
            "duration": units.parse_time(sc.duration, "duration"),
            "mss": sc.mss,
            "start_jitter": units.parse_time(sc.start_jitter, "start_jitter"),
            "min_rto": units.parse_time(sc.min_rto, "min_rto"),
            **({} if sc.tcp_rmem is None else {"tcp_rmem": _tcp_rmem(sc.tcp_rmem, sc.mss)}),
            # Left out when off, so that scenarios without the models compile as before them.
            **({} if host.jitter in (None, "off") and host.read_lowat is None and not host.sack_compression
               else {"host": {
                   **({} if host.jitter in (None, "off") else {"jitter": host.jitter}),
                   **({} if host.read_lowat is None else
                      {"read_lowat": units.parse_size(host.read_lowat, "host.read_lowat", sc.mss)}),
                   **({"sack_compression": True} if host.sack_compression else {})}}),
            **({"links": compiled} if links_in else {"bottleneck": compiled[0]}),
            "flows": flows,
            "web": [_web(g, i, *web_path(g), wire, sc.mss) for i, g in enumerate(web_in)],
            "record": {"interval": units.parse_time(rec.interval, "record.interval"), "cwnd": rec.cwnd,
                       "rtt_samples": rec.rtt_samples, "pcap": None if rec.pcap is None else str(rec.pcap),
                       "pcap_flows": None if rec.pcap_flows is None else list(rec.pcap_flows),
                       # Left out when off, the schema's default, so that scenarios compile (and
                       # cache) as before.
                       **({"cc_state": True} if rec.cc_state else {}),
                       **({} if rec.pcap_link is None else {"pcap_link": rec.pcap_link})},
        }

    def bottleneck_packets(self) -> float:
        """Full-sized packets the links carry in the run at line rate (rate x duration / wire
        size, summed over the links). The simulator's cost is per packet, so this is a run's
        planned work: progress estimates and the catalog's benchmark weigh runs by it."""
        spec = self.compile()
        rate = sum(link["rate"] for link in compiled_links(spec))
        return rate / 8 / (self.mss + HEADER_BYTES) * spec["duration"] / 1e9

    def to_json(self) -> str:
        """The compiled scenario as the JSON the Rust schema reads."""
        return json.dumps(_plain(self.compile(), ""), allow_nan=False)

    def validate(self) -> None:
        """Check every value (the schema's checks, in Rust); ValueError names the key."""
        self.plan()

    def plan(self, check_algorithms: bool = True) -> dict:
        """Check the scenario and expand it into flows and web sessions, as the simulator
        and the testbed both run it: ``{"flows": [{group, algorithm, rtt_ns,
        forward_delay_ns, reverse_delay_ns, start_ns, ...}], "lanes": [...], "sessions":
        [{lane, rtt_ns, first_request_ns}]}``. Start jitter comes from the scenario's seed.
        Without ``check_algorithms`` the names are not looked up in the library's registry
        (the testbed runs the kernel's algorithms and checks them there)."""
        with suggesting():
            return json.loads(_core.plan(self.to_json(), check_algorithms))


def with_host_timing(sc: Scenario) -> Scenario:
    """A copy of `sc` as an ensemble runs it: the hosts' timing noise on (ENSEMBLE_JITTER)
    unless the scenario sets `host.jitter` itself. Seeds that only move start times leave a
    simulated run on one trajectory where the kernel's runs spread; with the noise each seed
    is a run of its own (docs/agreement/README.md)."""
    host = _table(sc.host, Host, "host")
    return sc.replace(host=Host(jitter=ENSEMBLE_JITTER if host.jitter is None else host.jitter,
                                read_lowat=host.read_lowat, sack_compression=host.sack_compression))


def as_on_testbed(sc: Scenario) -> Scenario:
    """A copy of `sc` as an ensemble against the kernel testbed runs it: the hosts' timing
    noise (:func:`with_host_timing`) and the receiving application reading as the testbed's
    sink does (its SO_RCVLOWAT, `cubiclab.testbed.run.sink_rcvlowat`), unless the scenario
    sets `host.read_lowat` itself: a receiver ACKs a PSH segment at once only at a read, and
    the sink's reads made the kernel's ACKs cover one segment 5% of the time where a read
    per segment gave the simulator 15% (docs/agreement/README.md, a21). Its receivers
    compress SACKs as the testbed's kernel does, unless the scenario sets
    `host.sack_compression` itself: in recovery the kernel sent about one SACK per two
    segments where a receiver without it sends one per segment, and Westwood+ counts them
    (docs/agreement/README.md, r02). An algorithm whose clock is the kernel's jiffies (it
    declares an `hz` parameter) runs at the testbed kernel's HZ (`TESTBED_HZ`), as the
    kernel's module or BPF port does there, unless its group sets `hz` itself."""
    from cubiclab.testbed.run import sink_rcvlowat

    sc = with_host_timing(sc)
    if sc.host.read_lowat is None:
        rate = compiled_links(sc.compile())[0]["rate"]
        sc.host.read_lowat = f"{sink_rcvlowat(rate, len(sc.plan(False)['flows']))}B"
    if sc.host.sack_compression is None:
        sc.host.sack_compression = True
    jiffies = {name for name, _, specs in _core.algorithms() if any(p[0] == "hz" for p in specs)}
    for key, cls in (("flows", FlowGroup), ("web", WebGroup)):
        groups = getattr(sc, key)
        for i, g in enumerate(groups):
            g = groups[i] = _table(g, cls, f"{key}[{i}]")
            if g.algorithm in jiffies and "hz" not in g.params:
                g.params = {**g.params, "hz": _core.TESTBED_HZ}
    return sc


def compiled_links(spec: dict) -> list[dict]:
    """The links of a compiled scenario (``Scenario.compile``), the bottleneck's one or each of
    ``links``, in order: the first is the one the run's summary reports on."""
    return spec["links"] if "links" in spec else [spec["bottleneck"]]


def _link(b, at: str, rate: int, delay: int, bdp_bytes: int, wire: int, folder: Path | None) -> dict:
    """A link (the bottleneck, or one of `links`, at key path `at`) in the schema's layout;
    a trace file is named from `folder` (the scenario file's; None: the current folder)."""
    return {
        "rate": rate, "delay": delay,
        "buffer": _buffer(b.buffer, f"{at}.buffer", bdp_bytes, wire),
        "reverse_buffer": _buffer(b.reverse_buffer, f"{at}.reverse_buffer", bdp_bytes, wire),
        "queue": b.queue,
        **{name: _discipline_settings(getattr(b, name), f"{at}.{name}", bdp_bytes, wire) for name in DISCIPLINE_TABLES},
        "loss": b.loss or {"model": "none"}, "reverse_loss": b.reverse_loss or {"model": "none"},
        "schedule": _schedule(b.schedule, f"{at}.schedule", folder),
    }


def _web(g: "WebGroup", i: int, rate: int, delay: int, wire: int, mss: int) -> dict:
    """The web group in the schema's layout. With a target `load`, the think time (or, if
    only the think time is given, the session count) is set so that per direction
    sessions x mean size / (think + about two RTTs of transfer) equals load x rate on the
    wire."""
    at = f"web[{i}]"
    size = units.parse_size(g.mean_size, f"{at}.mean_size", mss=mss)
    rtt_text, kind = g.rtt, "fixed"
    if isinstance(rtt_text, str) and rtt_text.strip().lower().startswith("exp:"):
        kind, rtt_text = "exp", rtt_text.split(":", 1)[1]
    rtt = units.parse_time(rtt_text, f"{at}.rtt")
    ways = 2 if g.direction == "both" else 1
    sessions = g.sessions
    think = None if g.think is None else units.parse_time(g.think, f"{at}.think")
    if g.load is not None:
        load = _num(g.load, f"{at}.load")
        if not 0 < load < 1:
            raise ValueError(f"{at}.load is {load}; allowed: 0 < load < 1 (a fraction of the bottleneck)")
        wire_size = size * wire / mss
        busy = 2 * max(rtt, 2 * delay) / 1e9  # handshake and a short transfer, seconds
        if sessions is None and think is not None:
            per_dir = load * rate * (think / 1e9 + busy) / (8 * wire_size)
            if not per_dir <= MAX_FLOWS // ways:  # also catches inf
                raise ValueError(
                    f"{at}: load {load:g} with think {think / 1e9:g} s needs {per_dir:.3g} sessions per direction; "
                    f"allowed: at most {MAX_FLOWS} sessions in a run; lower the load or the think time")
            sessions = ways * max(1, round(per_dir))
        else:
            sessions = sessions if sessions is not None else 50 * ways
            per_dir = _num(sessions, f"{at}.sessions") // ways
            think_s = per_dir * 8 * wire_size / (load * rate) - busy
            if think_s <= 0.001:
                # Even thinking only a millisecond, these sessions offer less than the load.
                least = math.ceil(load * rate * (0.001 + busy) / (8 * wire_size)) * ways
                raise ValueError(f"{at}.sessions is {sessions:g}: {per_dir:g} sessions per direction cannot offer "
                                 f"{load:g} of the link even without thinking; allowed: at least {least:g} sessions "
                                 "for this load, or a lower load")
            if not think_s * 1e9 <= units.MAX_TIME_NS:  # also catches inf
                raise ValueError(f"{at}.load is {load:g}: {per_dir:g} sessions per direction would think "
                                 f"{think_s:.3g} s between objects; allowed: at most {units.MAX_TIME_NS} "
                                 f"{units.MAX_TIME_TEXT}; "
                                 "raise the load or use fewer sessions")
            think = int(think_s * 1e9)
    return {
        "name": g.name, "sessions": 50 * ways if sessions is None else sessions, "direction": g.direction,
        "mean_size": size, "shape": g.shape, "max_size": g.max_size,
        "think": 10_000_000_000 if think is None else think, "rtt": {kind: rtt},
        "algorithm": g.algorithm, "params": g.params, "recovery": g.recovery,
        **({} if g.route is None else {"route": g.route}),
    }


def _schedule(value, where: str, folder: Path | None = None) -> dict | None:
    """A link's schedule (at key path `where`) in the schema's layout: rate steps with times
    in ns and rates in bits/s, or a Mahimahi trace's opportunities (read here from a shipped
    trace or a file; see `cubiclab.traces`). The schema checks the rest (order, periods, rates)."""
    if value is None:
        return None
    if not isinstance(value, dict) or len({"steps", "trace"} & set(value)) != 1:
        raise ValueError(f"{where} is {value!r}; expected a table with either steps = [[time, rate], ...] "
                         f"(and optionally repeat = time) or trace = a shipped trace's name or a file")
    if "trace" in value:
        from cubiclab.traces import load_trace

        if set(value) != {"trace"}:
            raise ValueError(f"{where}: a trace takes no other key; got {', '.join(sorted(value))}")
        return load_trace(value["trace"], f"{where}.trace", folder)
    unknown = set(value) - {"steps", "repeat"}
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; allowed: steps, repeat")
    steps = value["steps"]
    if not isinstance(steps, list) or not steps or not all(isinstance(s, (list, tuple)) and len(s) == 2 for s in steps):
        raise ValueError(f"{where}.steps is {steps!r}; expected a list of [time, rate] pairs, e.g. "
                         f"[[\"0s\", \"50Mbps\"], [\"10s\", \"5Mbps\"]]")
    return {"kind": "steps",
            "steps": [[units.parse_time(t, f"{where}.steps[{i}][0]"), units.parse_rate(r, f"{where}.steps[{i}][1]")]
                      for i, (t, r) in enumerate(steps)],
            "repeat": None if value.get("repeat") is None else units.parse_time(value["repeat"], f"{where}.repeat")}


def _discipline_settings(table, at: str, bdp_bytes: int, wire: int):
    """A queue discipline's settings (at key path `at`, ending in the discipline's name) with
    its times (its integer keys) in ns and its sizes (its `Limit` keys) as buffers are."""
    if not isinstance(table, dict):
        return table  # the schema refuses it, naming the key
    name = at.rsplit(".", 1)[-1]
    times, sizes = DISCIPLINE_TIMES[name], DISCIPLINE_SIZES[name]

    def value(k, v):
        if k in times and isinstance(v, str):
            return units.parse_time(v, f"{at}.{k}")
        if k in sizes and isinstance(v, (str, int)) and not isinstance(v, bool):
            return _buffer(v, f"{at}.{k}", bdp_bytes, wire)
        return v

    return {k: value(k, v) for k, v in table.items()}


def _num(v, name) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{name} is {v!r}; expected a number")
    try:
        return float(v)
    except OverflowError:  # an int beyond a double's range
        raise ValueError(f"{name} is an integer of {len(str(abs(v)))} digits; expected a number within a double's range") from None


def _buffer(value, fieldname, bdp_bytes, wire) -> dict:
    """A buffer in packets when given in packets or as a fraction of the BDP (rounded to
    whole packets), else in bytes: ``{"packets": n}`` or ``{"bytes": n}``."""
    if isinstance(value, str) and "bdp" in value.lower():
        packets = units.parse_buffer(value, fieldname, bdp_bytes=bdp_bytes) / wire
    elif isinstance(value, str) and any(value.strip().lower().endswith(u) for u in ("packets", "packet", "pkts", "pkt")):
        packets = units.parse_size(value, fieldname, mss=1)
    else:  # parse_buffer: a size, and a refusal that names the %BDP forms too
        return {"bytes": units.parse_buffer(value, fieldname)}
    whole = units.checked_int(packets, fieldname, value, "packets", largest=2**32 - 1)
    if whole == 0 and bdp_bytes and "bdp" in value.lower():  # (a BDP of 0 is a rate of 0: the rate's fault)
        given = " (the default)" if value == _BUFFER_DEFAULT else ""
        raise ValueError(f"{fieldname} is '{value}'{given} of a BDP of {bdp_bytes} bytes (the rate x the largest flow "
                         f"RTT): less than one {wire}-byte packet; allowed: at least one packet: set {fieldname} in "
                         "packets (e.g. \"10packets\") or give the flows a longer rtt")
    return {"packets": whole}


def _rwnd(value, at: str, mss: int):
    """A flow group's rwnd: None (a buffer that never limits), "autotune", or a window size."""
    if value is None or value == "autotune":
        return value
    if isinstance(value, str) and not any(ch.isdigit() for ch in value):
        raise ValueError(f"{at} is {value!r}; allowed: \"autotune\" or a size (e.g. \"64KB\", \"40packets\")")
    return units.parse_size(value, at, mss=mss)


def _tcp_rmem(value, mss: int) -> list[int]:
    """tcp_rmem as "min default max" or three sizes -> three byte counts."""
    parts = value.split() if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)) or len(parts) != 3:
        raise ValueError(f"tcp_rmem is {value!r}; allowed: three sizes \"min default max\" "
                         "(e.g. \"4096 131072 32MB\")")
    return [units.parse_size(x, f"tcp_rmem[{i}]", mss=mss, default_unit="B") for i, x in enumerate(parts)]


def _groups(value, cls, where: str) -> list:
    """A list of `cls` (tables are accepted and checked as from a file)."""
    if isinstance(value, cls):
        raise ValueError(f"{where} must be a list of {cls.__name__}; got one {cls.__name__} (write {where}=[...])")
    if isinstance(value, dict):
        raise ValueError(f"{where} must be a list of tables; got one table (in a file: [[{where}]], not [{where}])")
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where} must be a list of {cls.__name__}; got {type(value).__name__}")
    return [_table(g, cls, f"{where}[{i}]") for i, g in enumerate(value)]


def _table(value, cls, where: str):
    """`value` as a `cls`: itself, or built from a table whose keys are checked; each field's
    type checked (see `_typed`)."""
    if isinstance(value, cls):
        return _typed(value, cls, where)
    if isinstance(value, dict):
        _check_keys(value, cls, where)
        return _typed(cls(**value), cls, where)
    raise ValueError(f"{where} must be a {cls.__name__} or a table; got {type(value).__name__}")


#: The kinds a field's annotation may name, each with its test and its words for an error.
_KINDS = {
    "str": (lambda v: isinstance(v, str), "text"),
    "int": (lambda v: isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)), "an integer"),
    "float": (lambda v: isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)),
              "a number"),
    "bool": (lambda v: isinstance(v, (bool, np.bool_)), "a boolean (true or false)"),
    "dict": (lambda v: isinstance(v, dict), "a table"),
    "list": (lambda v: isinstance(v, (list, tuple)), "a list"),
    "None": (lambda v: v is None, "omitted"),
}


def _typed(obj, cls, where: str):
    """A copy of the dataclass `obj` whose fields have the kinds their annotations name
    (``str | int | None``, ``list[int]``, ``dict``, ...), numpy numbers made Python ones;
    a value of another kind, or a non-finite number, refused naming its key path and the
    kinds allowed. Driven by the annotations, so a field added to a table is checked too;
    a field whose annotation names a table class (flows, record, ...) is checked by its
    own `_table`/`_groups`."""
    changes = {}
    for f in fields(cls):
        kinds = [k.strip() for k in (f.type if isinstance(f.type, str) else f.type.__name__).split("|")]
        items = [k[5:-1] for k in kinds if k.startswith("list[")]
        kinds = ["list" if k.startswith("list[") else k for k in kinds]
        if any(k not in _KINDS for k in kinds) or any(i not in _KINDS for i in items):
            continue
        at = f"{where}.{f.name}" if where else f.name
        value = getattr(obj, f.name)
        allowed = " or ".join(_KINDS[k][1] if k != "list" or not items else f"a list ({_KINDS[items[0]][1]} each)"
                              for k in kinds)
        if not any(_KINDS[k][0](value) for k in kinds):
            if isinstance(f.default, str) and any(c.isdigit() for c in f.default) and _KINDS["float"][0](value):
                allowed += f" with its unit, as the default {f.default!r}"  # rtt=40: a time, e.g. "40ms"
            raise ValueError(f"{at} is {value!r} ({type(value).__name__}); allowed: {allowed}")
        if isinstance(value, (list, tuple)) and items:
            for i, v in enumerate(value):
                if not _KINDS[items[0]][0](v):
                    raise ValueError(f"{at}[{i}] is {v!r} ({type(v).__name__}); allowed: {allowed}")
        plain = _plain(value, at)
        if plain is not value and not isinstance(value, (dict, list, tuple)):
            changes[f.name] = plain
    return dataclasses.replace(obj, **changes) if changes else obj


#: The largest scenario file read: a scenario is a page of TOML (its longest lists, rate
#: steps, are far below this).
MAX_SCENARIO_BYTES = 16 << 20

#: Deeper than this, a value is refused before JSON: the scenario's own depth is 4.
_MAX_DEPTH = 32


def _plain(value, where: str, depth: int = 0):
    """`value` as JSON can carry it to the schema: numpy numbers as Python numbers; a set, an
    object, NaN or infinity, a non-text key or runaway nesting refused, naming the key. The
    schema then checks types and ranges."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"{where or 'scenario'}: nested more than {_MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise ValueError(f"{where or 'scenario'}: key {k!r} is not text")
        return {k: _plain(v, f"{where}.{k}" if where else k, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if all(type(v) is int for v in value):  # a trace's millions of opportunities: already plain
            return list(value)
        return [_plain(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {float(value)} is not a finite number; allowed: a finite number")
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"{where}: {value!r} is a {type(value).__name__}; expected a number, text, "
                     "boolean, list or table")


#: What a run writes into its folder beside the capture (results.Results.write, plots.plot_run).
_RESULT_SUFFIXES = (".json", ".parquet", ".csv", ".png", ".svg")


def _is_file_name(name: str) -> bool:
    """A name for a file inside a folder: no folder part, not hidden, no control characters."""
    return (bool(name) and not name.startswith(".") and name.strip() == name
            and not any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in name))


def _check_keys(d: dict, cls, where: str):
    allowed = [f.name for f in fields(cls)]
    for k in d:
        if k in allowed:
            continue
        if cls is not Scenario and k in (f.name for f in fields(Scenario)):
            # TOML puts a key written below a [table] line into that table.
            raise ValueError(f"{where}: unknown key '{k}'; '{k}' is a key of the scenario itself (the path is "
                             f"'{k}', not '{where}.{k}'): in a file, write it above the first [table] line")
        raise ValueError(did_you_mean(f"{where}: unknown key '{k}'; allowed: {', '.join(allowed)}"))


# ---- docstrings: each field's meaning and unit, from the schema -------------------------

#: Fields the Python edge adds or shapes beyond the schema's description of them ("Class.field"
#: for one class, "field" for all).
_EDGE_DOCS = {
    "Scenario.name": "Label of the run: its output folder and the summary's `scenario` (default: the file's name).",
    "bottleneck": "The one link every flow crosses (a Bottleneck); or give `links` for a path of several.",
    "links": "The path's links (Link, each with a name), instead of `bottleneck`.",
    "record": "What the run records besides the per-interval samples (a Record).",
    "queue": "Queue discipline of both buffers: \"droptail\", or a discipline with a settings table of its own "
             f"({', '.join(DISCIPLINE_TABLES)}).",
    "WebGroup.rtt": "Per-session RTT: a time (\"40ms\") or \"exp:50ms\", exponential with that mean.",
    "algorithm": "A name from the algorithm registry (`cubiclab algorithms`).",
    "params": "Algorithm parameters by name (`cubiclab algorithms` lists names, ranges and units).",
    "recovery": "Loss recovery: \"sack\" (Linux) or \"newreno\".",
    "direction": "\"forward\", \"reverse\" or \"both\" (sessions split evenly).",
    "load": "Fraction of the bottleneck the sessions offer per direction; sets `think`.",
    "reverse_loss": "Random loss on the reverse link (the ACKs').",
}


def _document(cls, definition: dict, intro: str) -> None:
    """`cls`'s docstring: `intro`, then each field with its meaning and unit from the scenario
    schema (the Rust doc comments own them) and its default. The schema measures in ns,
    bits/s and bytes; Python and files write text with units ("40ms", "400Mbps", "64KB")."""
    props = definition.get("properties", {})
    lines = [intro, "", "Times, rates and sizes are written as text with a unit (\"40ms\", \"400Mbps\", \"64KB\", "
             "a buffer also \"100%BDP\"; a bare number is refused); the meanings name the unit the simulator "
             "holds them in (ns, bits/s, bytes). Fields:", ""]
    for f in fields(cls):
        meaning = (_EDGE_DOCS.get(f"{cls.__name__}.{f.name}") or _EDGE_DOCS.get(f.name)
                   or (props.get(f.name) or {}).get("description")) or (
            f"Settings of queue = \"{f.name}\" (a table; docs/reference/scenario.md lists its keys)."
            if f.name in DISCIPLINE_TABLES else "")
        default = f.default if f.default is not MISSING else f.default_factory() if f.default_factory is not MISSING else None
        shown = "" if isinstance(default, (list, dict)) and not default or callable(default) else f" Default: {default!r}."
        lines.append(f"- ``{f.name}``: {' '.join(meaning.split())}{shown if not is_dataclass(default) else ''}")
    cls.__doc__ = "\n".join(lines)


def _document_all() -> None:
    schema = json.loads(_core.scenario_schema())
    defs = schema["definitions"]
    _document(Scenario, schema, schema["description"])
    _document(FlowGroup, defs["FlowGroup"], defs["FlowGroup"]["description"])
    _document(WebGroup, defs["WebGroup"], "Background web sessions (seed 000 Sec. 6.1, seed 002): Pareto objects "
              "after exponential think times.")
    _document(Record, defs["Record"], defs["Record"]["description"])
    _document(Bottleneck, defs["DuplexLink"], "The shared link of a dumbbell. " + defs["DuplexLink"]["description"])
    _document(Link, defs["DuplexLink"], "One link of a path of several ([[links]]), named for its routes. "
              + defs["DuplexLink"]["description"])


_document_all()


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
