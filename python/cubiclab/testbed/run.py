"""Run a scenario's long-lived flows on the real Linux TCP stack through the emulator.

:func:`testbed` builds the namespaces (:mod:`cubiclab.testbed.net`), starts the emulator
(:mod:`cubiclab.testbed.emu`) with the scenario's links, buffers, per-flow routes and
delays and random loss, and for the flows whose data goes each way a sink in the namespace
of their receivers and a source in that of their senders (:mod:`cubiclab.endpoints`,
``bulk.py``): forward flows send from the "sender" namespace (side A of the path) to the
"receiver" one (side B), reverse flows (``direction = "reverse"``) from B to A. It records
``tcp:tcp_probe`` / ``tcp:tcp_cong_state_set`` for the testbed's sending sockets
(:mod:`cubiclab.kernel.tracing`), and returns the results in the simulator's shape
(:mod:`cubiclab.testbed.results`). Everything it created is removed on every exit path.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cubiclab import _core, units
from cubiclab import namespaces as _netns
from cubiclab.endpoints import BULK, WEB
from cubiclab.endpoints.bulk import INFO_COLUMNS
from cubiclab.kernel import tracing as _tracing
from cubiclab.namespaces import KernelLabUnavailable
from cubiclab.scenario import HEADER_BYTES, Scenario, compiled_links
from cubiclab.testbed import bpf as _bpf
from cubiclab.testbed.emu import Emulator, config_text, min_wait_ns, peak_rate_bps
from cubiclab.testbed.net import RECEIVER_IP, SENDER_IP, TunPath

BASE_PORT = 47000
#: Web session i's server listens on WEB_PORT + i (below the ephemeral ports, net.py).
WEB_PORT = 48000
MAX_WEB_SESSIONS = 2000
#: How long a web process may take to exit after the run's end (it resets what is open at
#: once, then writes its records).
WEB_EXIT_S = 10
#: SCHED_FIFO priorities of the emulator and, above it, the sink (with ``realtime``): the
#: sink wakes once per SO_RCVLOWAT of data and reads at once, so the receiving kernel's
#: ACKs do not wait for the emulator's threads (docs/agreement/README.md, a05).
EMU_FIFO = 10
SINK_FIFO = 20
#: The senders' SCHED_FIFO priority until their last flow has opened (below the emulator's):
#: the first flow's SYN wins the first slow start, so the starts keep to their times.
START_FIFO = 5
#: Runs longer than this need ``max_duration`` raised explicitly.
MAX_DURATION_S = 600.0
#: Per direction of a flow's data: the namespace of its sender, of its receiver, and the
#: address its receiver listens on.
ENDS = {"forward": ("sender", "receiver", RECEIVER_IP), "reverse": ("receiver", "sender", SENDER_IP)}


#: The congestion controls this kernel offers (:func:`cubiclab.testbed.bpf.registered`).
kernel_algorithms = _bpf.registered


def availability() -> str | None:
    """None if the testbed can run here, else the reason it cannot."""
    return _netns.availability(tun=True)


@dataclass(frozen=True)
class Compiled:
    """A scenario compiled once, and what the extension makes of that one compiled form for a
    kernel run. The plan, the emulator and the cache key read these, never the scenario."""

    spec: dict
    #: The flow plan (``_core.plan``): the simulator's flows, delays and start times.
    flow_plan: dict
    #: The emulator's path configuration (``_core.emulator_path``): the bottleneck as the
    #: simulator builds it, in the emulator's terms.
    path: str
    #: The background web sessions (``_core.web_schedule``).
    web: list


def compile_scenario(sc: Scenario) -> Compiled:
    """Compile `sc` once and derive from that compiled form all a kernel run needs."""
    text = sc.to_json()
    return Compiled(spec=json.loads(text), flow_plan=json.loads(_core.plan(text, False)),
                    path=_core.emulator_path(text), web=json.loads(_core.web_schedule(text)) if sc.web else [])


@dataclass
class Plan:
    """The scenario in the testbed's terms."""

    scenario: Scenario
    compiled: Compiled
    #: dicts: port, cc, group, direction, route, start_ns, stop_ns, bytes, and the delays of
    #: its packets each way of the path (``fwd_delay_ns``: side A to B, its data's if it
    #: goes forward, its ACKs' if in reverse).
    flows: list = field(default_factory=list)
    #: Background web sessions (``Compiled.web``) with their server's port.
    web: list = field(default_factory=list)
    #: Route metrics (``initcwnd``, ``ssthresh``, ``rto_min``) of every TCP sender's route.
    route_opts: dict = field(default_factory=dict)
    #: BPF ports to register for the run: name -> (library algorithm, params).
    bpf: dict = field(default_factory=dict)
    #: Namespace-wide sysctls that TCP senders need, and receivers: each set in every
    #: namespace where such an end runs (:meth:`namespace_sysctls`).
    sender_sysctls: dict = field(default_factory=dict)
    receiver_sysctls: dict = field(default_factory=dict)
    #: Per way data goes, sysctls its senders need (``net.ipv4.tcp_ecn``), set where they run.
    way_sender_sysctls: dict = field(default_factory=dict)
    #: Per way, sysctls the clients of its web sessions need, set where they run (a web
    #: session's server sends; its client is in the other namespace).
    web_client_sysctls: dict = field(default_factory=dict)
    mtu: int = 1500

    @property
    def spec(self) -> dict:
        return self.compiled.spec

    def ways(self) -> set[str]:
        """The directions data goes in this run: of the long-lived flows and of the web
        sessions (a server sends)."""
        return {f["direction"] for f in self.flows} | {"forward" if s["forward"] else "reverse" for s in self.web}

    def namespace_sysctls(self) -> dict[str, dict]:
        """Per namespace, the sysctls of the ends that run there: the senders' where senders
        run, the receivers' where receivers do. ValueError, naming the setting, where one
        namespace would need two values of it."""
        out: dict[str, dict] = {"sender": {}, "receiver": {}}
        web_ways = {"forward" if s["forward"] else "reverse" for s in self.web}
        for way in sorted(self.ways()):
            snd, rcv = ENDS[way][:2]
            wanted = [(snd, self.sender_sysctls), (rcv, self.receiver_sysctls),
                      (snd, self.way_sender_sysctls.get(way, {}))]
            if way in web_ways:
                wanted.append((rcv, self.web_client_sysctls.get(way, {})))
            for ns, sysctls in wanted:
                for k, v in sysctls.items():
                    if out[ns].setdefault(k, v) != v:
                        raise ValueError(f"flows: the {ns}'s namespace would need {k} = {out[ns][k]} and {v} "
                                         "(senders and receivers run there); the testbed sets it once per namespace")
        return out


def plan(sc: Scenario, max_duration: float = MAX_DURATION_S) -> Plan:
    """Check that the testbed can run `sc` and translate it; ValueError names what cannot.

    The flows (names, per-flow delays, start times with the seed's jitter) come from the
    scenario's one flow plan, the same the simulator runs. The scenario is compiled once,
    here (:func:`compile_scenario`): pass the plan on (``testbed(sc, planned=...)``) rather
    than the scenario, and nothing compiles it again."""
    available = kernel_algorithms()
    p_bpf: dict = {}  # registered name -> (algorithm, params), per flow group with a BPF port
    bpf_names = {}  # flow group index -> its registered name
    for i, g in enumerate(sc.flows):
        if _bpf.check_flow(f"flows[{i}]", g.algorithm, g.params, available):
            bpf_names[i] = _bpf.instance_name(i, g.algorithm)
            p_bpf[bpf_names[i]] = (g.algorithm, dict(g.params))
        if not g.delayed_ack:
            raise ValueError(f"flows[{i}].delayed_ack = false: the kernel's receiver always delays ACKs")
    for i, w in enumerate(sc.web):
        if w.algorithm not in available:
            raise ValueError(f"web[{i}].algorithm is '{w.algorithm}'; this kernel offers: {', '.join(available)}")
        if w.params:
            raise ValueError(f"web[{i}].params: the testbed runs the kernel's {w.algorithm}, whose parameters "
                             "are module-wide (not per socket); remove them")
    compiled = compile_scenario(sc)
    spec = compiled.spec
    flows = compiled.flow_plan["flows"]
    duration_s = spec["duration"] / 1e9
    if duration_s > max_duration:
        raise ValueError(f"duration is {duration_s:g} s; the testbed's bound is {max_duration:g} s "
                         "(raise max_duration / --max-duration to allow it)")
    if len(flows) > 1000:
        raise ValueError(f"{len(flows)} flows; the testbed allows at most 1000")
    p = Plan(scenario=sc, compiled=compiled, mtu=spec["mss"] + HEADER_BYTES, bpf=p_bpf)
    if len(compiled.web) > MAX_WEB_SESSIONS:
        raise ValueError(f"web: {len(compiled.web)} sessions; the testbed allows at most {MAX_WEB_SESSIONS}")
    # Copies: the compiled schedule stays as the extension made it (the cache key hashes it).
    p.web = [dict(s, port=WEB_PORT + i) for i, s in enumerate(compiled.web)]
    recov = {f["recovery"] for f in flows} | {s["recovery"] for s in compiled.web}
    if len(recov) > 1:
        raise ValueError("flows, web: the testbed needs the same recovery (sack or newreno) for all flows "
                         "and web groups (a namespace-wide setting)")
    if recov == {"newreno"}:
        p.sender_sysctls["net.ipv4.tcp_sack"] = 0
    # Autotuned receivers (rwnd = "autotune", web sessions) grow within the plan's tcp_rmem.
    p.receiver_sysctls["net.ipv4.tcp_rmem"] = " ".join(map(str, compiled.flow_plan["tcp_rmem"]))
    iw = {f["initial_cwnd"] for f in flows}
    if len(iw) > 1:
        raise ValueError("flows: the testbed needs the same initial_cwnd for all flows (a route metric)")
    if iw != {10}:
        p.route_opts["initcwnd"] = iw.pop()
    ss = {f["initial_ssthresh"] for f in flows}
    if len(ss) > 1:
        raise ValueError("flows: the testbed needs the same initial_ssthresh for all flows (a route metric)")
    ss = ss.pop()
    if ss is not None:
        p.route_opts["ssthresh"] = ss
    if spec["min_rto"] != 200_000_000:
        p.route_opts["rto_min"] = f"{max(1, spec['min_rto'] // 1_000_000)}ms"
    # The plan lists groups in the scenario's order.
    bpf_cc = {grp: bpf_names[i] for i, grp in enumerate(dict.fromkeys(f["group"] for f in flows)) if i in bpf_names}
    names = [link.get("name") or "bottleneck" for link in compiled_links(spec)]
    for i, f in enumerate(flows):
        # The plan's delays are its data's (forward_delay_ns) and its ACKs'; the emulator's
        # are A to B and B to A: a reverse flow's data goes B to A.
        data, acks = f["forward_delay_ns"], f["reverse_delay_ns"]
        p.flows.append({
            "port": BASE_PORT + i,
            "algorithm": f["algorithm"],  # the library's name; "cc" is what the socket asks for
            "cc": bpf_cc.get(f["group"], f["algorithm"]),
            "group": f["group"],
            "direction": f["direction"],
            # The links its data crosses, by name, in order (link direction k // 2 is link k).
            "route": ">".join(names[h["link"] // 2] for h in f["data_hops"]),
            "start_ns": f["start_ns"],
            "stop_ns": f["stop_ns"],
            "bytes": f["bytes"],
            "fwd_delay_ns": data if f["direction"] == "forward" else acks,
            "rev_delay_ns": acks if f["direction"] == "forward" else data,
            "rtt_ns": f["rtt_ns"],
            # The plan's receive buffer (forced; None: autotuned within the scenario's
            # tcp_rmem): the simulator's receiver sizes its window from the same one.
            "rcvbuf": f["rcvbuf_bytes"],
        })
        # An algorithm that needs ECN has a receiver's half (DCTCP's ECE echo of the CE
        # state): the receiver runs it too, as the simulator's does; the listening socket
        # asks for it, and the accepted one inherits it.
        needs_ecn = _core.algorithm_facts(f["algorithm"])["needs_ecn"]
        p.flows[-1]["receiver_cc"] = p.flows[-1]["cc"] if needs_ecn else None
    _plan_ecn(p, flows)
    p.namespace_sysctls()  # refused here, before anything runs
    if "rto_min" in p.route_opts and spec["min_rto"] < 200_000_000 and len(p.ways()) > 1:
        # The route metric also caps the delayed ACKs of every socket on that route at
        # rto_min - 1 ms (tcp_delack_max, net/ipv4/tcp_output.c), which the simulator's
        # receivers do not do: harmless where only senders use the route.
        raise ValueError(f"min_rto is {spec['min_rto'] / 1e6:g} ms with data both ways (flows[].direction or "
                         "web[].direction): the testbed sets it as the route metric rto_min where senders run, "
                         "and receivers there would delay their ACKs at most rto_min - 1 ms; use min_rto >= 200ms "
                         "or send data one way")
    return p


#: ``net.ipv4.tcp_ecn``: 1 asks for ECN on the connections a namespace opens (and accepts
#: it); 2, Linux's default, only accepts it. An algorithm that needs ECN (DCTCP's
#: TCP_CONG_NEEDS_ECN) asks on its own socket whatever the setting.
TCP_ECN_ASK, TCP_ECN_ACCEPT = 1, 2


def _plan_ecn(p: Plan, flows: list) -> None:
    """Per namespace ``net.ipv4.tcp_ecn`` from the flows' ``ecn``, only where a flow asks for
    ECN (else nothing is set): the testbed's senders open their connections, its receivers
    listen, so the senders' namespace sets 1 where ECN flows send and 2 where flows without
    it send (explicitly, so that a namespace holding both is refused: the setting is one per
    namespace). Receivers accept ECN under 1 and 2 alike: their side needs nothing, but a web
    session's client opens its connection from the other side and must not ask for ECN (the
    simulator's web sessions have none)."""
    asks = {f["direction"]: set() for f in flows}
    for f in flows:
        asks[f["direction"]].add(f["ecn"])
    if not any(True in a for a in asks.values()):
        return
    for way, a in asks.items():
        if len(a) > 1:
            snd = ENDS[way][0]
            raise ValueError(f"flows: {way} flows with ecn = true and without it send from the {snd}'s namespace, "
                             "where net.ipv4.tcp_ecn is one setting; give every flow sending that way the same ecn")
        p.way_sender_sysctls[way] = {"net.ipv4.tcp_ecn": TCP_ECN_ASK if True in a else TCP_ECN_ACCEPT}
    for way in ENDS:
        p.web_client_sysctls[way] = {"net.ipv4.tcp_ecn": TCP_ECN_ACCEPT}


def _buffer_bytes(spec: dict) -> int:
    (kind, n), = compiled_links(spec)[0]["buffer"].items()
    return n * (spec["mss"] + HEADER_BYTES) if kind == "packets" else n


def sink_rcvlowat(rate_bps: int, n_flows: int, tick_ns: int = 10_000_000) -> int:
    """The sink's SO_RCVLOWAT in bytes with `n_flows` long-lived flows on a first link of
    `rate_bps`, sampled every `tick_ns` (testbed's `info_interval`): it wakes once this many
    bytes are waiting, not at every packet the emulator writes, a quarter of a flow's fair
    share per sample, at most 64 KB, so that the samples stay smooth and the sink's CPU time
    small. Its reads are when the receiver ACKs a PSH segment (the simulator's
    `host.read_lowat`, which ensembles against the kernel set to this)."""
    return int(min(65536, max(1, rate_bps * tick_ns / 8e9 / 4 / max(1, n_flows))))


def testbed(scenario: Scenario | dict | str, trace: bool = True, info_interval: str = "10ms",
            max_duration: float = MAX_DURATION_S, progress: bool = False, keep_dir: str | Path | None = None,
            realtime: bool = True, io_trace: int = 0, planned: Plan | None = None):
    """Run `scenario`'s flows as real kernel TCP connections through the emulated
    bottleneck and return a :class:`cubiclab.testbed.results.TestbedResults` (the
    simulator's tables plus ``info``, the TCP_INFO samples, and ``drops``, the emulator's
    drop events).

    `trace`: record cwnd/ssthresh after every ACK from ``tcp:tcp_probe`` (if tracefs is
    usable; otherwise the TCP_INFO samples stand in). `info_interval`: TCP_INFO sampling
    period. `realtime`: run the emulator under SCHED_FIFO (it sleeps when nothing is due;
    on a busy machine this keeps its deliveries on time), and the sink above it. `keep_dir`: keep the run's files
    there (the emulator's records in ``emu/``, the trace's records in ``trace.csv``).
    `io_trace`: have the emulator record up to this many reads and writes per direction
    (``emu/io.csv``: when each packet reached it, how many segments, its sequence and
    acknowledgment numbers, the queue after it;
    when each write left). The receivers' buffers are the
    flow plan's: forced with SO_RCVBUFFORCE (far above the path's BDP without `rwnd`, or the
    buffer of a pinned `rwnd`), or left to the kernel's autotuning (`rwnd = "autotune"`)
    within the scenario's `tcp_rmem`, set in the receiver's namespace. `planned`: the
    caller's ``plan(scenario)``, so that the scenario is not compiled again (`max_duration`
    was checked when it was made). Needs root: raises :class:`KernelLabUnavailable` saying
    why not. Bad or unsupported scenarios raise ValueError before anything is created.
    """
    from cubiclab.testbed.results import build_results

    if planned is not None and planned.scenario is not scenario:
        raise ValueError("planned is another scenario's plan")
    if isinstance(scenario, str):
        scenario = Scenario.load(scenario)
    elif isinstance(scenario, dict):
        scenario = Scenario.from_dict(scenario)
    p = planned or plan(scenario, max_duration)
    reason = availability()
    if reason:
        raise KernelLabUnavailable(f"the testbed {reason}")
    spec = p.spec
    # The first link stands for the bottleneck where one rate is needed (as in the simulator's summary).
    link0 = compiled_links(spec)[0]
    tick_ns = units.parse_time(info_interval, "info_interval")
    if tick_ns < 1_000_000:
        raise ValueError("info_interval must be at least 1ms")
    duration_ns = spec["duration"]
    trace_reason = _tracing.availability() if trace else "tracing not requested"
    tmpctx = tempfile.TemporaryDirectory(prefix="cubiclab-testbed-")
    work = Path(keep_dir) if keep_dir else Path(tmpctx.name)
    work.mkdir(parents=True, exist_ok=True)
    emu = None
    wall0 = time.perf_counter()
    route_opts = {ns: p.route_opts for ns in {ENDS[way][0] for way in p.ways()}}
    with tmpctx, _bpf.Registered(p.bpf), TunPath(mtu=p.mtu, route_opts=route_opts,
                                                sysctls=p.namespace_sysctls()) as net:
        try:
            max_rtt = max([f["rtt_ns"] for f in p.flows] + [s["rtt_ns"] for s in p.web])
            bdp_bytes = _core.bdp_bytes(link0["rate"], max_rtt)
            sndbuf = int(min(max(4 << 20, 4 * (bdp_bytes + _buffer_bytes(spec))), 256 << 20))
            emu_cfg = dict(
                netns_a=net.netns_path("sender"), tun_a="tb0",
                netns_b=net.netns_path("receiver"), tun_b="tb0",
                netns_home=net.netns_path("emulator"),
                flow=[f"{f['port']} {f['fwd_delay_ns']} {f['rev_delay_ns']}" for f in p.flows]
                + [f"{s['port']} {s['forward_delay_ns']} {s['reverse_delay_ns']}" for s in p.web],
                default_delay=f"{link0['delay']} {link0['delay']}",
                max_duration_ns=duration_ns + 60_000_000_000,
                sample_ns=spec["record"]["interval"],
                sched_fifo=EMU_FIFO if realtime else 0,
                min_wait_ns=min_wait_ns(max(peak_rate_bps(link) for link in compiled_links(spec))),
                io_trace=io_trace or None,
            )
            if spec["record"]["pcap"]:
                # The emulator captures what leaves its links, as the simulator's tap does;
                # long-lived flows come first in its flow lines, so their indices are the same.
                emu_cfg["pcap"] = str(Path(spec["record"]["pcap"]).resolve())
                if spec["record"]["pcap_flows"] is not None:
                    emu_cfg["pcap_flows"] = " ".join(map(str, spec["record"]["pcap_flows"]))
                if spec["record"].get("pcap_link") is not None:
                    names = [link.get("name") for link in compiled_links(spec)]
                    emu_cfg["pcap_link"] = names.index(spec["record"]["pcap_link"])
            t_start = time.monotonic_ns()
            emu = Emulator(net.exec_args("emulator"), p.compiled.path + config_text(**emu_cfg), work)
            t_wait = time.monotonic() + 10
            while not (net.carrier("sender") and net.carrier("receiver")):
                if not emu.alive():
                    raise RuntimeError(f"the emulator did not start: {emu.error()}")
                if time.monotonic() > t_wait:
                    raise RuntimeError("the emulator did not attach to the TUN devices within 10 s")
                time.sleep(0.02)
            # The run's time origin, fixed once the emulator is up: far enough ahead for the
            # traffic processes to start (on a loaded machine that takes several times as
            # long as usual, and so did the emulator's start).
            started_in = time.monotonic_ns() - t_start
            epoch = time.monotonic_ns() + max(1_500_000_000, 3 * started_in) + (1_500_000_000 if p.web else 0)
            end = epoch + duration_ns
            emu.set_epoch(epoch)
            rcvlowat = sink_rcvlowat(link0["rate"], len(p.flows), tick_ns)
            # Per way data goes, its long-lived flows (plan indices): a sink where their
            # receivers run, a source where their senders do.
            ways = {w: [i for i, f in enumerate(p.flows) if f["direction"] == w] for w in ENDS}
            ways = {w: flows for w, flows in ways.items() if flows}
            for way, flows in ways.items():
                bulk_cfg = {
                    "host": ENDS[way][2], "epoch_ns": epoch, "end_ns": end, "tick_ns": tick_ns,
                    "rcvlowat": rcvlowat, "info_file": str(work / f"source-info-{way}.csv"),
                    "sink_fifo": SINK_FIFO if realtime else 0,
                    "start_fifo": START_FIFO if realtime else 0,
                    "flows": [{"flow": i, "port": f["port"], "cc": f["cc"], "start_ns": f["start_ns"],
                               "stop_ns": f["stop_ns"], "bytes": f["bytes"], "sndbuf": sndbuf, "rcvbuf": f["rcvbuf"],
                               "receiver_cc": f["receiver_cc"]}
                              for i, f in ((i, p.flows[i]) for i in flows)],
                }
                (work / f"bulk-{way}.json").write_text(json.dumps(bulk_cfg))
            sinks = [net.start(ENDS[way][1], BULK, "sink", work / f"bulk-{way}.json", work / f"sink-{way}.json",
                               what=f"the receiver of the {way} flows")[0] for way in ways]
            web_procs = _start_web(net, p, epoch, end, work)
            tr = None
            if trace_reason is None:
                n_acks = link0["rate"] / 8 / spec["mss"] / 2 * duration_ns / 1e9
                buf_kb = int(min(max(32768, n_acks * 200 / 1024 * 1.5), 262144))
                # A sending socket's destination is its flow's port, on either side.
                flt = f"dport >= {BASE_PORT} && dport < {BASE_PORT + len(p.flows)}"
                tr = _tracing.TraceSession(port=BASE_PORT, filter=flt, strict=False, buffer_kb=buf_kb)
                tr.__enter__()
            try:
                sources = {way: net.start(ENDS[way][0], BULK, "source", work / f"bulk-{way}.json",
                                          work / f"source-{way}.json", what=f"the sender of the {way} flows")[0]
                           for way in ways}
                late = time.monotonic_ns() - epoch
                if late > 0:
                    raise RuntimeError(f"the traffic processes were up only {late / 1e9:.2f} s after the run's start: "
                                       "the machine is too loaded to start a run on time")
                last = 0.0
                while any(src.poll() is None for src in sources.values()):
                    if time.monotonic_ns() > end + 30_000_000_000:
                        raise RuntimeError("the senders did not finish within 30 s of the end of the run")
                    if not emu.alive():
                        raise RuntimeError(f"the emulator stopped during the run: {emu.error()}")
                    if progress and time.monotonic() - last > 1:
                        last = time.monotonic()
                        el = max(0.0, (time.monotonic_ns() - epoch) / 1e9)
                        print(f"\r  testbed {min(el, duration_ns / 1e9):7.1f} / {duration_ns / 1e9:.1f} s",
                              end="", file=sys.stderr)
                    time.sleep(0.05)
                if progress:
                    print(file=sys.stderr)
                for way, src in sources.items():
                    if src.returncode != 0:
                        raise RuntimeError(f"the sender of the {way} flows failed: {src.stderr.read().strip()}")
                records = tr.records() if tr is not None else None
                trace_lost = tr.lost if tr is not None else 0
                if keep_dir and records is not None:
                    records.to_csv(work / "trace.csv", index=False)
            finally:
                if tr is not None:
                    tr.__exit__(None, None, None)
            for sink in sinks:
                sink.terminate()
                sink.wait(10)
            _wait_web(web_procs, end)
            outside = {role: net.device_drops(role) for role in ("sender", "receiver")}
            emu_out = emu.stop()
            emu = None
            source_out, sink_out = _bulk_outputs(work, ways, len(p.flows))  # before the run's folder goes
            web_out = [json.loads((work / f"web-{role}.json").read_text()) for role in ("sender", "receiver")
                       if p.web]
        finally:
            if emu is not None:
                emu.kill()
    if source_out["errors"]:
        raise RuntimeError("the senders reported: " + "; ".join(source_out["errors"]))
    for i, f in enumerate(source_out["flows"]):
        if f.get("cc") not in (None, p.flows[i]["cc"]):
            raise RuntimeError(f"flow {i} runs '{f.get('cc')}', not '{p.flows[i]['cc']}'")
    res = build_results(p, epoch, emu_out, source_out, sink_out, records, trace_lost,
                        trace_reason, time.perf_counter() - wall0, _web_objects(p, epoch, web_out))
    lost_outside = sum(v for d in outside.values() for v in d.values())
    res.summary["drops_outside_emulator"] = lost_outside
    # How late each flow's connect() (its SYN) came after its planned start, in us.
    res.summary["flow_start_late_us"] = [
        None if f.get("t_open_ns") is None else round((f["t_open_ns"] - epoch - p.flows[i]["start_ns"]) / 1e3, 1)
        for i, f in enumerate(source_out["flows"])]
    res.summary["device_drops"] = outside
    res.summary["web_connect_retries"] = sum(w["retries"] for w in web_out)
    web_errors = [e for w in web_out for e in w["errors"]]
    res.summary["web_errors"] = len(web_errors)
    if web_errors:
        import warnings

        warnings.warn(f"{len(web_errors)} web objects were lost to broken connections (first: {web_errors[0]})",
                      RuntimeWarning, stacklevel=2)
    if lost_outside:
        import warnings

        warnings.warn(f"{lost_outside} packets were dropped at the TUN devices before the emulator read them: "
                      "the emulator did not keep up with this rate on this machine", RuntimeWarning, stacklevel=2)
    return res


def _bulk_outputs(work: Path, ways: dict[str, list[int]], nflows: int) -> tuple[dict, dict]:
    """The sources' and sinks' outputs of every way, per plan flow: the sources' ``flows``
    (their sockets: cookie, port, congestion control, completion), ``info`` (every TCP_INFO
    sample, flows by plan index) and ``errors``; the sinks' ``total`` bytes and ``received``
    (per flow, the sample times and the bytes received by each)."""
    flows, infos, errors = [{}] * nflows, [], []
    total, received = [0] * nflows, [None] * nflows
    for way, idx in ways.items():
        src = json.loads((work / f"source-{way}.json").read_text())
        errors += src["errors"]
        infos.append(pd.read_csv(src["info_file"]))
        sink = json.loads((work / f"sink-{way}.json").read_text())
        t = [row[0] for row in sink["samples"]]
        for j, i in enumerate(idx):
            flows[i] = src["flows"][j]
            total[i] = sink["total"][j]
            received[i] = (t, [row[1 + j] for row in sink["samples"]])
    info = pd.concat(infos, ignore_index=True) if infos else pd.DataFrame(columns=INFO_COLUMNS)
    return {"flows": flows, "info": info, "errors": errors}, {"total": total, "received": received}


def _start_web(net: TunPath, p: Plan, epoch: int, end: int, work: Path) -> list[subprocess.Popen]:
    """One web process in each of the sender's and receiver's namespaces: a forward
    session's server (its data crosses the forward bottleneck) lives with the sender, its
    client with the receiver; a reverse session's the other way round."""
    if not p.web:
        return []
    procs = []
    for role, host, peer, serves_forward in (("sender", SENDER_IP, RECEIVER_IP, True),
                                             ("receiver", RECEIVER_IP, SENDER_IP, False)):
        cfg = {
            "host": host, "peer": peer, "epoch_ns": epoch, "end_ns": end,
            "servers": [{"port": s["port"], "cc": s["algorithm"]} for s in p.web if s["forward"] == serves_forward],
            "clients": [{"port": s["port"], "first_request_ns": s["first_request_ns"], "objects": s["objects"]}
                        for s in p.web if s["forward"] != serves_forward],
        }
        (work / f"web-{role}-cfg.json").write_text(json.dumps(cfg))
        proc, _ = net.start(role, WEB, work / f"web-{role}-cfg.json", work / f"web-{role}.json",
                            what=f"the web sessions in the {role}'s namespace")
        procs.append(proc)
    return procs


def _wait_web(procs: list[subprocess.Popen], end_ns: int) -> None:
    """Wait for the web processes, which run until the run's end: the sender's finite
    transfers may finish long before it (s002-completion-order's two 100 MB transfers end
    after ~15 s of a longer run; waiting only WEB_EXIT_S from then made the run fail)."""
    for w in procs:
        timeout = max(0.0, (end_ns - time.monotonic_ns()) / 1e9) + WEB_EXIT_S
        try:
            w.wait(timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the web sessions' process did not exit within {WEB_EXIT_S} s of the end of "
                               "the run") from None


def _web_objects(p: Plan, epoch: int, web_out: list[dict]):
    """The completed web objects in the simulator's columns: t (requested, s), session (its
    flow slot: after the long-lived flows), group, bytes, fct_s (request to the last byte
    acknowledged, the handshake included)."""
    import pandas as pd

    requests = {}
    done = {}
    for out in web_out:
        for port, _, t_req, size in out["requests"]:
            requests.setdefault(port, []).append((t_req, size))
        for port, t_done in out["done"]:
            done.setdefault(port, []).append(t_done)
    rows = []
    for i, s in enumerate(p.web):
        for (t_req, size), t_done in zip(requests.get(s["port"], []), done.get(s["port"], [])):
            rows.append({"t": (t_req - epoch) / 1e9, "session": len(p.flows) + i, "group": s["group"],
                         "bytes": size, "fct_s": (t_done - t_req) / 1e9})
    return pd.DataFrame(rows, columns=["t", "session", "group", "bytes", "fct_s"]).sort_values("t", ignore_index=True)


def cleanup() -> dict:
    """Remove namespaces and trace instances left by killed runs (of this lab's prefix)."""
    return {"namespaces": _netns.cleanup(), "trace_instances": _tracing.cleanup_instances(), "bpf": _bpf.cleanup()}
