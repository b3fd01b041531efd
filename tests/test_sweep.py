"""Sweeps: cache keys, parallel runs, resuming after an interruption, ensembles, Ray."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario
from cubiclab.sweep import Cache, Run, SweepError, ensemble, run_key, run_sweep


def small(seed=1, rate="50Mbps", duration="5s"):
    return Scenario(name="t", seed=seed, duration=duration, bottleneck=Bottleneck(rate=rate),
                    flows=[FlowGroup("cubic", count=2, rtt="40ms")])


def test_key_is_the_compiled_scenario_and_seed():
    a, b = small(), small()
    b.name = "another name"
    assert run_key(a) == run_key(b)  # the name does not change what is simulated
    assert run_key(a) != run_key(small(seed=2))
    assert run_key(a) != run_key(small(rate="60Mbps"))
    # "50Mbps" and "50000kbps" compile to the same spec (bits/s): same key.
    assert run_key(a) == run_key(small(rate="50000kbps"))


def test_a_trace_is_keyed_by_its_contents_not_its_place(tmp_path):
    # The same Mahimahi trace in two folders (another install's copy, a moved folder) gives
    # one cache key; a trace with one more opportunity gives another.
    lines = "\n".join(str(t) for t in range(1, 200)) + "\n"
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.trace").write_text(lines)
    (tmp_path / "c.trace").write_text(lines + "200\n")

    def key(path):
        sc = Scenario(duration="1s", bottleneck=Bottleneck(rate="10Mbps", schedule={"trace": str(path)}),
                      flows=[FlowGroup()])
        return run_key(sc)

    assert key(tmp_path / "a" / "x.trace") == key(tmp_path / "b" / "x.trace")
    assert key(tmp_path / "a" / "x.trace") != key(tmp_path / "c.trace")


def test_bottleneck_packets_is_rate_times_duration_over_the_wire_size():
    # 50 Mbit/s / 8 / (1448 + 52 B on the wire) = 4166.67 packets/s; x 5 s = 20833.3.
    assert small().bottleneck_packets() == pytest.approx(50e6 / 8 / 1500 * 5)
    # A smaller MSS means more, smaller packets: 50e6 / 8 / (536 + 52) x 5 s.
    assert small().replace(mss=536).bottleneck_packets() == pytest.approx(50e6 / 8 / 588 * 5)


def test_progress_weighs_runs_by_their_work():
    from cubiclab import sweep

    # Two runs to do besides one cached: a small one (1 unit of work) and a big one (9).
    bar = sweep._Progress(3, 1, enabled=False, work={"small": 1.0, "big": 9.0})
    assert bar.seconds_left(0.0) != bar.seconds_left(0.0)  # NaN: nothing finished yet
    bar.tick("small")
    # 1 unit took 10 s, 9 units are left: 90 s. Counting runs would say 1 run x 10 s = 10 s.
    assert bar.seconds_left(10.0) == pytest.approx(90.0)
    bar.tick("big")
    assert (bar.done, bar.seconds_left(20.0)) == (3, 0.0)


def test_progress_without_work_counts_runs():
    from cubiclab import sweep

    bar = sweep._Progress(4, 0, enabled=False)
    bar.tick()
    # 1 of 4 runs in 10 s: 3 x 10 s left.
    assert bar.seconds_left(10.0) == pytest.approx(30.0)


def test_sweep_runs_caches_and_aggregates(tmp_path):
    runs = ensemble(small(), range(1, 4), rate=50) + ensemble(small(rate="80Mbps"), range(1, 4), rate=80)
    runs.append(Run(small(), {"rate": 50, "dup": True}))  # the same simulation as runs[0]
    r1 = run_sweep(runs, tmp_path, jobs=2, progress=False)
    assert (r1.computed, r1.cached) == (6, 0)  # the duplicate is simulated once
    assert len(Cache(tmp_path).keys()) == 6
    direct = cubiclab.simulate(small(seed=2))
    assert r1.results(1).flows.equals(direct.flows)  # the cached copy is the simulation's
    r2 = run_sweep(runs, tmp_path, jobs=2, progress=False)
    assert (r2.computed, r2.cached) == (0, 6)
    agg = r2.aggregate(lambda res: {"util": res.summary["utilization"]}, by=["rate"])
    one = r2.frame(lambda res: {"util": res.summary["utilization"]})
    # rate 50: seeds 1, 2, 3 and the duplicate of seed 1, four runs.
    assert agg.set_index("rate").loc[50, "util"] == pytest.approx(one.util[[0, 1, 2, 6]].mean())
    assert set(agg.columns) >= {"util", "util_std", "util_min", "util_max", "util_ci95", "n"}
    assert agg.set_index("rate").n.to_dict() == {50: 4, 80: 3}
    # rate 80: three runs, Student's t with 2 degrees of freedom, whose 0.975 quantile is
    # (2p - 1) / sqrt(2 p (1 - p)) = 4.3027: the interval is the mean +- t std / sqrt(3).
    t = 0.95 / (2 * 0.975 * 0.025) ** 0.5
    assert agg.set_index("rate").loc[80, "util_ci95"] == pytest.approx(t * one.util[[3, 4, 5]].std() / 3**0.5)


def test_a_failing_run_is_reported_and_the_others_kept(tmp_path, monkeypatch):
    import cubiclab.sweep as sw

    real = sw._simulate_payload

    def flaky(d):
        if d["seed"] == 2:
            raise RuntimeError("boom")
        return real(d)

    monkeypatch.setattr(sw, "_simulate_payload", flaky)
    runs = ensemble(small(), [1, 2, 3])
    with pytest.raises(SweepError, match="(?s)1 run\\(s\\) failed.*boom"):
        run_sweep(runs, tmp_path, jobs=1, progress=False)
    assert len(Cache(tmp_path).keys()) == 2
    res = run_sweep(runs, tmp_path, jobs=1, progress=False, raise_errors=False)
    assert res.computed == 0 and list(res.failed) == [runs[1].key]


SWEEP_SCRIPT = textwrap.dedent("""
    import sys
    from cubiclab import Bottleneck, FlowGroup, Scenario
    from cubiclab.sweep import ensemble, run_sweep
    sc = Scenario(name="i", duration="20s", bottleneck=Bottleneck(rate="800Mbps"),
                  flows=[FlowGroup("cubic", count=2, rtt="40ms")])
    run_sweep(ensemble(sc, range(1, 11)), sys.argv[1], jobs=2, progress=False)
    print("finished")
""")


def _interrupt(tmp_path, sig):
    """Start the sweep of 10 runs in its own process group; once at least two runs are in
    the cache, send `sig` to the whole group. Returns the number of runs it had finished."""
    cache = tmp_path / "cache"
    p = subprocess.Popen([sys.executable, "-c", SWEEP_SCRIPT, str(cache)], start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while len(Cache(cache).keys()) < 2:
            assert p.poll() is None, p.communicate()
            assert time.time() < deadline, "the sweep made no progress"
            time.sleep(0.05)
        os.killpg(p.pid, sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p.returncode, out, err, cache


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_sweep_resumes_with_every_run_once(tmp_path, sig):
    code, out, err, cache = _interrupt(tmp_path, sig)
    assert code != 0 and "finished" not in out, (code, out, err)
    done = Cache(cache).keys()
    assert 2 <= len(done) < 10
    mtimes = {k: os.stat(Cache(cache).path(k) / "summary.json").st_mtime_ns for k in done}
    if sig == signal.SIGKILL:
        # A run killed while its folder was being written leaves a temporary folder: plant an
        # old one and check that it is cleaned and never counted.
        stale = cache / "zz" / ".deadbeef.abc.tmp"
        stale.mkdir(parents=True)
        (stale / "flows.parquet").write_bytes(b"half")
        os.utime(stale, (time.time() - 7200, time.time() - 7200))
    sc = Scenario(name="i", duration="20s", bottleneck=Bottleneck(rate="800Mbps"),
                  flows=[FlowGroup("cubic", count=2, rtt="40ms")])
    runs = ensemble(sc, range(1, 11))
    res = run_sweep(runs, cache, jobs=2, progress=False)
    # Finished runs were not redone, missing ones were, and each is in the cache once.
    assert res.cached == len(done) and res.computed == 10 - len(done)
    keys = Cache(cache).keys()
    assert sorted(keys) == sorted({r.key for r in runs}) and len(keys) == 10
    for k, t in mtimes.items():
        assert os.stat(Cache(cache).path(k) / "summary.json").st_mtime_ns == t
    leftovers = [p for d in cache.iterdir() for p in d.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    seeds = sorted(json.loads((Cache(cache).path(k) / "scenario.json").read_text())["seed"] for k in keys)
    assert seeds == list(range(1, 11))
    assert res.results(9).summary["utilization"] > 0.5


def test_ray_backend_fills_the_same_cache(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'cubiclab[ray]')")
    runs = ensemble(small(), range(1, 7))
    local = run_sweep(runs[:3], tmp_path, jobs=1, progress=False)  # start locally ...
    assert local.computed == 3
    # A new local instance: /tmp/ray/ray_current_cluster may name a cluster long gone.
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        res = run_sweep(runs, tmp_path, ray="auto", progress=False)  # ... finish on the cluster
    finally:
        ray.shutdown()
    assert (res.cached, res.computed) == (3, 3)
    assert sorted(Cache(tmp_path).keys()) == sorted(r.key for r in runs)
    assert res.results(5).flows.equals(cubiclab.simulate(small(seed=6)).flows)
