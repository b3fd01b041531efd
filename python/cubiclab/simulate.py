"""Run the packet simulator on a scenario."""

from __future__ import annotations

import json
import sys
import time

from cubiclab import _core
from cubiclab.io import check_file_target
from cubiclab.suggest import suggesting
from cubiclab.results import Results
from cubiclab.scenario import Scenario

#: Events per call into the simulator: well under a second of wall time at its few million
#: events per second, so Ctrl-C is seen promptly however many events a simulated ms holds.
_MAX_EVENTS_PER_CALL = 1_000_000


def simulate(scenario: Scenario | dict | str, progress: bool = False) -> Results:
    """Simulate `scenario` (a Scenario, a dict in the TOML layout, or a TOML file path) and
    return its Results. Bad input raises ValueError before anything runs. With `progress`,
    simulated seconds and events per second are printed to stderr. Ctrl-C stops the run
    with KeyboardInterrupt and nothing is written.

    >>> import cubiclab
    >>> sc = cubiclab.Scenario(duration="2s", flows=[cubiclab.FlowGroup("reno", rtt="20ms")])
    >>> r = cubiclab.simulate(sc)
    >>> r.summary["utilization"] > 0.5
    True
    """
    if isinstance(scenario, str):
        scenario = Scenario.load(scenario)
    elif isinstance(scenario, dict):
        scenario = Scenario.from_dict(scenario)
    spec_json = scenario.to_json()  # refuses what JSON cannot carry (NaN, objects), naming the key
    spec = json.loads(spec_json)
    pcap = spec["record"]["pcap"]
    if pcap is not None:  # the capture is written beside, then renamed over its target
        check_file_target(pcap, "record.pcap")
        check_file_target(pcap + ".partial", "record.pcap")
    with suggesting():
        sim = _core.Simulation(spec_json)
    duration = sim.duration_ns
    t0 = time.perf_counter()
    step = max(duration // 1000, 1_000_000)
    last_print = t0
    done = False
    while not done:
        chunk_start = time.perf_counter()
        done = sim.run_until(min(sim.now_ns + step, duration), _MAX_EVENTS_PER_CALL)
        # Aim for chunks of ~0.1 s wall time, so Ctrl-C and progress stay responsive.
        spent = time.perf_counter() - chunk_start
        if spent < 0.05:
            step *= 2
        elif spent > 0.2:
            step = max(step // 2, 1_000_000)
        now = time.perf_counter()
        if progress and (now - last_print > 1.0 or done):
            last_print = now
            rate = sim.events / max(now - t0, 1e-9)
            print(f"\r  simulated {sim.now_ns / 1e9:8.2f} / {duration / 1e9:.2f} s  "
                  f"{sim.events / 1e6:8.2f} M events  {rate / 1e6:6.2f} M events/s", end="", file=sys.stderr)
    if progress:
        print(file=sys.stderr)
    wall = time.perf_counter() - t0
    return Results.from_core(scenario, spec, sim.finish(), wall)
