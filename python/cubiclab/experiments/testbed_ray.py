"""A reproduction's kernel runs spread over a Ray cluster (`cubiclab reproduce --testbed
--ray ADDRESS`).

Each node of the cluster is first asked, by a task pinned to it (:func:`node_report`),
whether it can run the testbed (root, network namespaces, TUN devices; the BPF loader if a
run needs a port) and what it would make of a run: the cache key of one of the runs,
computed there (:func:`cubiclab.testbed.cache_key.kernel_run_key`: the compiled scenario
and flow plan, the emulator's and the testbed code's bytes, the kernel release). A node
that cannot run the testbed, or whose key differs from this machine's (another build or
kernel: its runs would be filed under keys that do not describe them), is refused, and the
reason printed. Each usable node then takes one kernel run at a time (a run needs its
machine to itself; the testbed's kernel-lab lock also keeps the node's other users out),
the next as soon as one finishes; every run checks its key on the node again before it
starts. The results come back to this process, which stores them in the shared cache
(:class:`cubiclab.sweep.Cache`), so an interrupted reproduction keeps what finished and the
same command resumes.
"""

from __future__ import annotations

import socket
import time

from cubiclab.experiments.testbed_backend import LOCK_PAUSE_S, KernelRuns, _duration_text
from cubiclab.sweep import Run, _payload, ray_connect


def node_report(scenario: dict, max_duration: float) -> dict:
    """On a node: its host name and, if it can run the testbed, the cache key it would give
    `scenario` (else the reason it cannot)."""
    from cubiclab.scenario import Scenario
    from cubiclab.testbed.run import availability

    out = {"host": socket.gethostname(), "key": None, "reason": availability()}
    if out["reason"] is None:
        try:
            out["key"] = _plan_here(Scenario.from_dict(scenario), max_duration)[1]
        except Exception as e:  # noqa: BLE001 - a node's failure is its reason
            out["reason"] = f"{type(e).__name__}: {e}"
    return out


def _plan_here(sc, max_duration: float):
    """The testbed's plan of `sc` on this machine and the kernel-run cache key this
    machine's build gives it (ValueError if its testbed cannot run `sc`, e.g. no BPF
    loader for a port)."""
    from cubiclab.experiments.testbed_backend import plan_run
    from cubiclab.testbed.cache_key import kernel_run_key

    p, why = plan_run(Run(sc, {}), max_duration)
    if why:
        raise ValueError(why)
    return p, kernel_run_key(sc, p.compiled)


def kernel_payload(scenario: dict, key: str, max_duration: float, pause_s: float) -> dict:
    """On a node: after `pause_s` (another user of the node's kernel lab may take it
    between two of ours), run `scenario` on the testbed and return its payload, once its
    cache key here is `key`."""
    from cubiclab.scenario import Scenario
    from cubiclab.testbed.run import testbed

    time.sleep(pause_s)
    sc = Scenario.from_dict(scenario)
    p, here = _plan_here(sc, max_duration)
    if here != key:
        raise RuntimeError(f"node {socket.gethostname()} would file this run under {here[:12]}, not {key[:12]}: "
                           "another build of cubiclab or another kernel")
    return _payload(testbed(sc, trace=False, max_duration=max_duration, planned=p))


def run(todo: dict[str, Run], kr: KernelRuns, duration_s, address: str, max_duration: float, log,
        budget_s: float | None = None, probe=node_report, execute=kernel_payload) -> None:
    """Run `todo` (simulator key -> run; `kr.kernel_key` holds each one's kernel key,
    `duration_s(key)` its planned seconds) on the Ray cluster at `address`, one run at a
    time per usable node, storing each result in `kr.cache` as it arrives; failures go to
    `kr.failed`, runs the budget leaves to `kr.pending` (as `testbed_backend.run_all`).
    `probe` and `execute` are what runs on the nodes (:func:`node_report`,
    :func:`kernel_payload`)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    started = ray_connect(address)
    try:
        def on(node_id):
            return NodeAffinitySchedulingStrategy(node_id, soft=False)

        first = next(iter(todo.values()))
        nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
        report = ray.remote(num_cpus=0)(probe)
        answers = ray.get([report.options(scheduling_strategy=on(n)).remote(first.scenario.to_dict(), max_duration)
                           for n in nodes])
        usable = []
        for node, a in zip(nodes, answers):
            expected = kr.kernel_key[next(iter(todo))]
            why = a["reason"] or (None if a["key"] == expected else
                                  f"it would file runs under other cache keys ({a['key'][:12]} for "
                                  f"{expected[:12]}): another build of cubiclab or another kernel")
            if why:
                if log:
                    print(f"cubiclab: Ray node {a['host']} ({node[:8]}) refused: {why}", file=log)
            else:
                usable.append(node)
        if not usable:
            err = RuntimeError(f"no node of the Ray cluster at {address} can run the testbed (see the lines above)")
            kr.failed.update({key: err for key in todo})
            if log:
                print(f"cubiclab: {err}", file=log)
            return
        if log:
            print(f"cubiclab: {len(usable)} Ray node(s) run the {len(todo)} testbed runs, one at a time each",
                  file=log)
        remote = ray.remote(num_cpus=1)(execute)
        queue = list(todo.items())
        free = [(n, 0.0) for n in usable]  # (node, pause before its next run)
        in_flight = {}
        done_n, t_all = 0, time.monotonic()
        try:
            while queue or in_flight:
                while free and queue:
                    key, r = queue[0]
                    if budget_s is not None and time.monotonic() - t_all + duration_s(key) > budget_s:
                        kr.pending.update(k for k, _ in queue)
                        if log:
                            print(f"cubiclab: the testbed budget of {budget_s:g} s leaves {len(queue)} run(s) for "
                                  "the next call", file=log)
                        queue = []
                        break
                    queue.pop(0)
                    node, pause = free.pop(0)
                    ref = remote.options(scheduling_strategy=on(node)).remote(
                        r.scenario.to_dict(), kr.kernel_key[key], max_duration, pause)
                    in_flight[ref] = (key, node, time.monotonic())
                if not in_flight:
                    break
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                key, node, t0 = in_flight.pop(ready[0])
                free.append((node, LOCK_PAUSE_S))
                done_n += 1
                try:
                    payload = ray.get(ready[0])
                except Exception as e:  # noqa: BLE001 - one run's failure must not sink the others
                    kr.failed[key] = e
                    if log:
                        print(f"  testbed run {done_n}/{len(todo)} failed on node {node[:8]}: {type(e).__name__}: "
                              f"{e}", file=log)
                    continue
                kr.cache.store(kr.kernel_key[key], payload)
                if log:
                    print(f"  testbed run {done_n}/{len(todo)} done on node {node[:8]} in "
                          f"{_duration_text(time.monotonic() - t0)}", file=log)
        except BaseException:
            # Ctrl-C: each run stops through its own cleanup (namespaces, emulator), not a kill.
            for ref in in_flight:
                ray.cancel(ref)
            raise
    finally:
        if started:
            ray.shutdown()
