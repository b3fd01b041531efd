"""`reproduce --testbed --ray`: kernel runs spread over a Ray cluster (a local one here),
one at a time per node, each result stored by the driver in the shared cache, nodes that
cannot take them refused with the reason. What runs on the nodes is replaced by stand-ins
(a short simulation in place of the kernel run), so no kernel run happens here."""

from __future__ import annotations

import io
import time

import pytest

import cubiclab
from cubiclab.experiments.testbed_backend import KernelRuns
from cubiclab.sweep import Cache, Run

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'cubiclab[ray]')")
from cubiclab.experiments import testbed_ray  # noqa: E402 - needs Ray

KEY = "k" * 64  # the kernel-run key every stand-in node gives the first run


@pytest.fixture(scope="module")
def cluster():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # not a stale cluster
    yield
    ray.shutdown()


def runs(tmp_path, n: int):
    """`n` tiny runs, their KernelRuns with made-up kernel keys (the first KEY)."""
    sc = cubiclab.Scenario(duration="1s", bottleneck=cubiclab.Bottleneck(rate="10Mbps"),
                           flows=[cubiclab.FlowGroup("cubic", rtt="20ms")])
    todo = {r.key: r for r in (Run(sc.replace(seed=s), {}) for s in range(1, n + 1))}
    kr = KernelRuns(Cache(tmp_path / "testbed"))
    kr.kernel_key = {k: KEY if i == 0 else f"{i:064d}" for i, k in enumerate(todo)}
    return todo, kr


# What runs on the nodes is made inside a function, so that Ray ships it by value (its
# workers cannot import this test module).
def able():
    def probe(scenario, max_duration):
        return {"host": "node-a", "key": KEY, "reason": None}
    return probe


def never():
    def execute(*args):
        raise AssertionError("no run may start")
    return execute


def test_a_node_that_cannot_run_the_testbed_is_refused_with_the_reason(cluster, tmp_path):
    todo, kr = runs(tmp_path, 2)

    def unable(scenario, max_duration):
        return {"host": "node-a", "key": None, "reason": "the testbed needs root"}

    log = io.StringIO()
    testbed_ray.run(todo, kr, lambda key: 1.0, "auto", 60, log, probe=unable, execute=never())
    assert "Ray node node-a" in log.getvalue() and "refused: the testbed needs root" in log.getvalue()
    assert set(kr.failed) == set(todo) and "no node of the Ray cluster" in str(kr.failed[next(iter(todo))])
    assert kr.cache.keys() == []


def test_a_node_that_would_file_runs_under_other_keys_is_refused(cluster, tmp_path):
    todo, kr = runs(tmp_path, 1)

    def other_build(scenario, max_duration):
        return {"host": "node-b", "key": "x" * 64, "reason": None}

    log = io.StringIO()
    testbed_ray.run(todo, kr, lambda key: 1.0, "auto", 60, log, probe=other_build, execute=never())
    assert "node-b" in log.getvalue() and "other cache keys" in log.getvalue()
    assert set(kr.failed) == set(todo)


def test_one_run_at_a_time_per_node_each_stored_as_it_arrives(cluster, tmp_path):
    todo, kr = runs(tmp_path, 3)

    def execute(scenario, key, max_duration, pause_s):
        from cubiclab.simulate import simulate
        from cubiclab.sweep import _payload

        t0 = time.time()
        time.sleep(0.3 + pause_s)
        payload = _payload(simulate(cubiclab.Scenario.from_dict(scenario)))
        payload["summary"]["ran"] = [t0, time.time(), pause_s]
        if key == "0" * 63 + "2":
            raise RuntimeError("this run failed")
        return payload

    log = io.StringIO()
    testbed_ray.run(todo, kr, lambda key: 1.0, "auto", 60, log, probe=able(), execute=execute)
    keys = [kr.kernel_key[k] for k in todo]
    # The second run failed (named, the others kept); the others are in the cache whole.
    assert list(kr.failed) == [list(todo)[2]] and "failed on node" in log.getvalue()
    stored = [kr.cache.load(k) for k in keys if k != keys[2]]
    assert len(stored) == 2
    # The cluster's one node has two CPUs, yet ran them one after another, the second after
    # the pause that lets another user of the kernel lab in.
    (a0, a1, pause_a), (b0, b1, pause_b) = sorted(r.summary["ran"] for r in stored)
    assert a1 <= b0 and (pause_a, pause_b) == (0.0, testbed_ray.LOCK_PAUSE_S)


def test_the_budget_leaves_runs_for_the_next_call(cluster, tmp_path):
    todo, kr = runs(tmp_path, 2)
    log = io.StringIO()
    testbed_ray.run(todo, kr, lambda key: 100.0, "auto", 60, log, budget_s=50.0, probe=able(), execute=never())
    assert kr.pending == set(todo) and "leaves 2 run(s)" in log.getvalue()
