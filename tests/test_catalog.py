"""The reproduction catalog's pipeline, not the papers: every entry runs end to end in tiny
mode (seconds of simulated time, one seed: every verdict indicative), the claims table is
snapshot-tested, verdicts follow from confidence intervals, run lengths from the physics,
scenario files are package data. Nothing here requires a paper's claim to hold."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cubiclab.experiments import CATALOG, reproduce
from cubiclab.experiments import base, physics, stability
from cubiclab.experiments.claims import (EVIDENCE, EXTENSION, FAILS, FRACTION, HOLDS, INCONCLUSIVE, INDICATIVE, KINDS,
                                         NONNEGATIVE, NOT_CONVERGED, ONE_TRAJ, PAPER, SENSITIVITY, SIMULATION, TEXT, UNBOUNDED,
                                         Above, Band, Below,
                                         Censored, ClaimSpec, Verdict, jain, judge, mean_ci, median_order_interval)

ENTRIES = sorted(CATALOG)
SNAPSHOT = Path(__file__).parent / "snapshots" / "claims.json"


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    outcomes = reproduce(None, mode="tiny", out=out, progress=False, log=None)
    return out, {o.name: o for o in outcomes}


def test_catalog_covers_every_seed():
    # and the CUBIC-against-BBR entries of papers outside the seeds (issue 16)
    assert {e.seed for e in CATALOG.values()} == {"000", "001", "002", "003", "004", "outside"}


@pytest.mark.parametrize("name", ENTRIES)
def test_entry_runs_tiny(tiny_run, name):
    out, outcomes = tiny_run
    o = outcomes[name]
    assert not o.error, o.error
    assert [v.spec.id for v in o.verdicts] == [c.id for c in CATALOG[name].table()]
    # one short run per point: never holds or does not hold
    assert {v.verdict for v in o.verdicts} <= {INDICATIVE, "not measured"}
    doc = json.loads((out / name / "claims.json").read_text())
    assert [c["id"] for c in doc["claims"]] == [v.spec.id for v in o.verdicts]
    # The folder can move: figures are named relative to it; the run says what made it.
    assert [out / p for p in doc["figures"]] == [Path(p) for p in o.figures]
    assert all(not Path(p).is_absolute() for p in doc["figures"])
    assert set(doc["provenance"]) == {"version", "build", "commit", "command", "machine"}
    assert doc["evidence"] == o.evidence == CATALOG[name].evidence
    for p in o.figures:
        assert Path(p).stat().st_size > 1000
    for table in o.data:
        assert (out / name / f"{table}.parquet").exists()


def test_entries_that_compute_say_what_they_compute_from():
    # Entries without runs compute from formulas or a model; every other one simulates packets.
    for name, e in CATALOG.items():
        computes = type(e).compute is not base.Experiment.compute
        assert (e.evidence != SIMULATION) == computes, name
        assert e.evidence in EVIDENCE, name


def test_report_is_self_contained_and_tallies_by_kind(tiny_run):
    out, outcomes = tiny_run
    html = (out / "report.html").read_text()
    assert "Headline: paper claims of the seeds judged on packets:" in html
    assert "version: <code>" in html and "commit: <code>" in html and "command: <code>" in html
    assert html.count("Consistency check, not evidence") == sum(bool(c.construction) for e in CATALOG.values()
                                                                for c in e.table())
    assert 'src="http' not in html and "href='http" not in html
    for name in ENTRIES:
        assert f"id='{name}'" in html
    for kind in KINDS:
        assert f"<td>{kind}</td>" in html
    assert "indicative" in html


def _table() -> dict:
    return {name: [c.row() for c in e.table()] for name, e in sorted(CATALOG.items())}


def _unexplained_tolerance_changes(old: dict, new: dict) -> list[str]:
    """Claims whose tolerance differs between two claims tables without a 'was OLD' entry
    in the new row's tolerance_history."""
    before = {(name, r["id"]): r for name, rows in old.items() for r in rows}
    return [f"{name} {r['id']}: {before[(name, r['id'])]['tolerance']} -> {r['tolerance']}"
            for name, rows in new.items() for r in rows
            if (name, r["id"]) in before and before[(name, r["id"])]["tolerance"] != r["tolerance"]
            and not any(h.startswith(f"was {before[(name, r['id'])]['tolerance']}") for h in r["tolerance_history"])]


def test_a_tolerance_changed_after_the_fact_keeps_the_old_one():
    old = {"e": [{"id": "a", "tolerance": "0.5 ± 0.1"}, {"id": "b", "tolerance": "> 0"}]}
    new = {"e": [{"id": "a", "tolerance": "0.5 ± 0.2", "tolerance_history": []},
                 {"id": "b", "tolerance": "> 0.1", "tolerance_history": ["was > 0: the margin of a tie"]}]}
    assert _unexplained_tolerance_changes(old, new) == ["e a: 0.5 ± 0.1 -> 0.5 ± 0.2"]


def test_claims_table_snapshot():
    # Every claim's quote, metric, tolerance and sidedness, frozen: a change shows up here
    # as a diff to review (regenerate with CUBICLAB_UPDATE_SNAPSHOTS=1 and commit the file).
    # A tolerance that changes must keep the old one in its tolerance_history, with the
    # reason, before the snapshot may be regenerated.
    table = _table()
    assert _unexplained_tolerance_changes(json.loads(SNAPSHOT.read_text()), table) == []
    if os.environ.get("CUBICLAB_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    assert table == json.loads(SNAPSHOT.read_text())


def test_claims_are_declared_fully():
    for name, e in CATALOG.items():
        for c in e.table():
            assert c.quote and c.where and c.metric and c.rationale, (name, c.id)
            assert c.kind in KINDS
            if isinstance(c.accept, Band):
                assert c.accept.half > 0
    kinds = {c.kind for e in CATALOG.values() for c in e.table()}
    assert kinds == {PAPER, SENSITIVITY, EXTENSION}


def test_the_papers_algorithms_by_default():
    # seed 000 describes Algorithm 1 (cubic-2008), seed 001 the 2005 CUBIC, seed 002 Cubic 2.0;
    # other CUBICs appear only in the sensitivity runs of their variant. The BBR papers outside
    # the seeds measured the Linux CUBIC of their day, today's `cubic`.
    paper = {"000": "cubic-2008", "001": "cubic-2005", "002": "cubic-2.0"}
    for name, e in CATALOG.items():
        for run in e.runs(base.TINY):
            algs = {g.algorithm for g in run.scenario.flows}
            variant = run.tags.get("variant", "paper")
            if variant != "paper":
                sub, _, replaced = base.VARIANTS[variant]
                assert not algs & (set(replaced) - {sub}), name
                assert sub in algs or replaced != base.PAPER_CUBICS, name
            elif e.seed != "outside":
                assert "cubic" not in algs, name
                if e.seed in paper and any(a.startswith("cubic") for a in algs):
                    assert paper[e.seed] in algs, (name, algs)


# ---- verdicts from intervals -----------------------------------------------------------------


def _spec(accept, transient=False, censored=False):
    return ClaimSpec("x", "q", "Sec. 1", TEXT, "p", "m", "", accept, "r", transient=transient, censored=censored)


def test_mean_ci_uses_student_t():
    # 1..5: mean 3, s = sqrt(2.5) = 1.5811, t(0.975, 4) = 2.776: 2.776 * 1.5811 / sqrt(5) = 1.963.
    m, ci, n = mean_ci([1, 2, 3, 4, 5])
    assert (m, n) == (3.0, 5) and ci == pytest.approx(1.963, abs=1e-3)
    assert math.isnan(mean_ci([1.0])[1]) and mean_ci([])[2] == 0


def test_verdict_from_the_interval():
    band = _spec(Band(1.0, 0.2))
    # mean 1.0, s = 0.01: CI ± 0.0124 inside [0.8, 1.2].
    assert judge(band, [0.99, 1.0, 1.01, 1.0, 1.0]).verdict == HOLDS
    # mean 2.0: wholly outside.
    assert judge(band, [1.99, 2.0, 2.01, 2.0, 2.0]).verdict == FAILS
    # mean 1.2 with spread 0.1: straddles the edge 1.2.
    v = judge(band, [1.1, 1.3, 1.2, 1.1, 1.3])
    assert v.verdict == INCONCLUSIVE and "straddles" in v.note
    # a one-sided ordering: difference 0.05 ± 0.0124 above a margin of 0.02 holds; a tie does not.
    above = _spec(Above(0.02, 0.05))
    assert judge(above, [0.04, 0.05, 0.06, 0.05, 0.05]).verdict == HOLDS
    assert judge(above, [-0.01, 0.0, 0.01, 0.0, 0.0]).verdict == FAILS


def test_seeds_that_move_nothing_are_called_one_trajectory():
    band = _spec(Band(1.0, 0.2))
    # spread 0.0019 < 1% of the scale 0.2 (0.002): the seeds sampled nothing; the interval
    # [1.0, 1.0015] would hold, but it decides nothing, and the note says which side it lies on.
    v = judge(band, [1.0, 1.0019, 1.0, 1.001, 1.0])
    assert v.verdict == ONE_TRAJ and "move it by 0.0019" in v.note and "lies inside the tolerance" in v.note
    assert judge(band, [2.0, 2.0019, 2.0, 2.001, 2.0]).note.endswith("lies outside the tolerance)")
    # spread 0.0021 >= 0.002: an ensemble's interval, judged as one.
    v = judge(band, [1.0, 1.0021, 1.0, 1.001, 1.0])
    assert v.verdict == HOLDS and v.note == ""


def test_the_interval_is_clipped_to_the_metrics_bounds():
    # Utilisations 0.97, 1, 1, 0.98, 1: mean 0.99, s = sqrt(8e-4 / 4) = 0.014142, CI
    # 2.776 x 0.014142 / sqrt(5) = 0.017557: [0.97244, 1.00756]. No run can exceed 1, so a
    # fraction's interval is [0.97244, 1]: inside 0.98 ± 0.02 = [0.96, 1].
    vals = [0.97, 1.0, 1.0, 0.98, 1.0]
    unbounded = judge(_spec(Band(0.98, 0.02)), vals)
    assert unbounded.verdict == INCONCLUSIVE and unbounded.interval[1] == pytest.approx(1.00756, abs=1e-5)
    v = judge(dataclasses.replace(_spec(Band(0.98, 0.02)), bounds=FRACTION), vals)
    assert v.verdict == HOLDS and v.clipped
    assert v.interval == pytest.approx((0.97244, 1.0), abs=1e-5)
    assert v.ours == "0.99, 95% CI [0.972, 1] (n = 5)" and v.to_dict()["ci95_interval"][1] == 1.0
    # clipping never moves an interval that lies inside the bounds
    inside = judge(dataclasses.replace(_spec(Band(0.5, 0.1)), bounds=FRACTION), [0.49, 0.5, 0.51])
    assert not inside.clipped and inside.ours.startswith("0.5 ± ")
    # Jain's index of n flows: 1/n when one flow takes everything, 1 when all are equal
    assert (jain(4).lo, jain(4).hi) == (0.25, 1.0) and str(jain(2)) == "[0.5, 1]"
    assert NONNEGATIVE.clip(-0.3, 2.0) == (0.0, 2.0) and str(UNBOUNDED) == ""
    with pytest.raises(ValueError, match="n is 0; allowed: >= 1 flows"):
        jain(0)


def test_bounds_are_declared_per_metric_kind():
    # every claim whose metric is a utilisation or a share of the link, and not a difference
    # of two, declares the fraction's bounds (one declaration, claims.FRACTION)
    for name, e in CATALOG.items():
        for c in e.table():
            m = c.metric.lower()
            if ("utilisation" in m or "share of the link" in m) and not any(
                    w in m for w in ("minus", " - ", "difference", "over ")):
                assert c.bounds == FRACTION, (name, c.id, c.metric)


def test_drift_between_halves_is_not_converged():
    band = _spec(Band(1.0, 0.2))
    # mean 1, s = 0.01414, 95% CI 2.776 x 0.01414 / sqrt(5) = 0.0176: inside 1 ± 0.2
    vals = [0.98, 1.0, 1.02, 1.0, 1.0]
    # the halves differ by 0.5 (> the band's 0.2) in every seed: drifting.
    v = judge(band, vals, first=[0.75] * 5, second=[1.25] * 5)
    assert v.verdict == NOT_CONVERGED and v.drift == pytest.approx(0.5)
    # a small drift (0.1 < 0.2) is judged normally
    assert judge(band, vals, first=[0.95] * 5, second=[1.05] * 5).verdict == HOLDS
    # a transient claim has no halves to compare
    assert judge(_spec(Band(1.0, 0.2), transient=True), vals, [0.0] * 5, [2.0] * 5).verdict == HOLDS


def test_quick_mode_is_indicative_and_models_are_exact():
    band = _spec(Band(1.0, 0.2))
    v = judge(band, [1.0], indicative=True)
    assert v.verdict == INDICATIVE and "inside" in v.note
    assert judge(band, [1.5], exact=True).verdict == FAILS
    assert judge(band, [1.0, 1.0, 1.0], indicative=True).verdict == INDICATIVE


def test_modes_and_seeds():
    assert base.mode_named("full", 7).seeds == 7
    with pytest.raises(ValueError, match="seeds is 1; allowed: >= 2 in full mode"):
        base.mode_named("full", 1)
    with pytest.raises(ValueError, match="mode is 'fast'"):
        base.mode_named("fast")
    runs = CATALOG["s003-cubic-tahoe"].runs(base.mode_named("full", 3))
    assert sorted({r.seed for r in runs}) == [1, 2, 3]


def test_stability_reruns_double_the_duration_and_take_other_seeds():
    m = base.mode_named("full", 3)
    e = CATALOG["s003-cubic-tahoe"]
    planned, longer, other = (e.runs(r) for r in stability.reruns(m).values())
    # the same conditions, each run's warm-up and window doubled: twice the duration
    for a, b in zip(planned, longer):
        assert b.scenario.compile()["duration"] == 2 * a.scenario.compile()["duration"]
        assert b.tags["warmup_s"] == pytest.approx(2 * a.tags["warmup_s"])
    # the next three seeds, durations unchanged
    assert sorted({r.seed for r in other}) == [4, 5, 6]
    assert [r.scenario.duration for r in other] == [r.scenario.duration for r in planned]


def test_stability_flags_only_holds_against_does_not_hold():
    def out(name, verdicts):
        return base.Outcome(name, "", "000", "", "", verdicts=[
            Verdict(dataclasses.replace(_spec(Band(1.0, 0.2)), id=i), verdict=v) for i, v in verdicts.items()])
    rows = stability.compare({
        "as planned": [out("e", {"a": HOLDS, "b": HOLDS, "c": HOLDS})],
        "2x duration": [out("e", {"a": FAILS, "b": INCONCLUSIVE, "c": HOLDS})],
        "other seeds": [out("e", {"a": HOLDS, "b": HOLDS, "c": HOLDS})]})
    got = {r["claim"]: (r["flips"], r["changes"]) for r in rows}
    assert got == {"a": (True, True), "b": (False, True), "c": (False, False)}
    md = stability.markdown(rows, ["as planned", "2x duration", "other seeds"])
    assert md.startswith("1 of 3 claims flip") and md.index("| e | a |") < md.index("| e | b |")


def test_stability_names_values_that_cross_their_tolerance():
    # Tolerance 1 ± 0.2 = [0.8, 1.2]. Claim a's mean goes 1.1 -> 1.25 -> 1.1: it crosses the
    # edge even though no interval decided (all inconclusive); b's stays inside (0.9, 0.85, 1.0);
    # c was not measured in one rerun, so only two values count, both inside.
    def out(name, means):
        return base.Outcome(name, "", "000", "", "", verdicts=[
            Verdict(dataclasses.replace(_spec(Band(1.0, 0.2)), id=i), mean=m, n=0 if m is None else 5,
                    verdict=INCONCLUSIVE) for i, m in means.items()])
    rows = stability.compare({
        "as planned": [out("e", {"a": 1.1, "b": 0.9, "c": 1.0})],
        "2x duration": [out("e", {"a": 1.25, "b": 0.85, "c": None})],
        "other seeds": [out("e", {"a": 1.1, "b": 1.0, "c": 1.1})]})
    assert {r["claim"]: r["crosses"] for r in rows} == {"a": True, "b": False, "c": False}
    md = stability.markdown(rows, ["as planned", "2x duration", "other seeds"])
    assert "0 change verdict at all; 1 cross their tolerance (e a)." in md


# ---- run lengths from the physics ------------------------------------------------------------


def test_run_length_from_the_epoch():
    # One cubic-2008 flow, 100 Mb/s, 100 ms, buffer 100% BDP: 8333 packets/s on the wire of 1500
    # bytes, BDP 833.3 packets, buffer round(833.3) = 833: W = 1666.3 at loss.
    # K = cbrt(W beta / C) = cbrt(1666.3 x 0.2 / 0.4) = 9.41 s; the TCP-friendly window grows
    # 3 beta / (2 - beta) = 1/3 packet per RTT and would need 0.2 W / (1/3) x 0.1 = 100 s: K wins.
    # Convergence: ln 0.1 / ln 0.8 = 10.32 epochs = 97.1 s; slow start log2(W / 10) x 0.1 + K.
    from cubiclab.scenario import Bottleneck, FlowGroup, Scenario

    sc = Scenario(flows=[FlowGroup("cubic-2008", rtt="100ms")], bottleneck=Bottleneck(rate="100Mbps"))
    rl = physics.run_length(sc, epochs=10, min_window_s=30, max_s=1e9, max_packets=1e12)
    assert rl.epoch_s == pytest.approx(9.41, abs=0.01)
    assert rl.convergence_s == pytest.approx(97.1, abs=0.2)
    assert rl.window_s == pytest.approx(94.1, abs=0.1) and rl.epochs == pytest.approx(10, abs=0.01)
    assert rl.warmup_s == pytest.approx(0.1 * math.log2(166.63) + 9.41 + 97.1, abs=0.2)
    capped = physics.run_length(sc, epochs=10, min_window_s=30, max_s=60, max_packets=1e12)
    assert capped.capped and capped.duration_s == pytest.approx(60, abs=0.2) and capped.window_s >= 30


def test_window_epochs_bound_the_mean_of_a_sawtooth():
    # A flow's rate over one epoch of length 1 ramps from 1 - b to 1 (mean 1 - b/2). A window
    # of n epochs starting at phase p has a mean that strays from 1 - b/2 by at most
    # b / (4 (2 - b) n), reached when it holds half an epoch more than whole ones, starting at
    # a loss (p = 0) or mid-epoch: integrated numerically here, phase by phase.
    import numpy as np

    def worst(b, n):
        dt = 1e-4
        t = np.arange(0.0, 12.0, dt)
        rate = (1 - b) + b * (t % 1.0)
        cum = np.concatenate([[0.0], np.cumsum(rate) * dt])
        k = int(round(n / dt))
        starts = np.arange(0, int(1 / dt), 50)
        means = (cum[starts + k] - cum[starts]) / n
        return np.abs(means / (1 - b / 2) - 1).max()

    for b in (0.2, 0.3, 0.5):
        for n in (1.5, 2.5, 4.5):
            bound = b / (4 * (2 - b) * n)
            assert worst(b, n) == pytest.approx(bound, rel=0.01)
        assert worst(b, 3.0) < 1e-3  # whole epochs: no error at any phase
        # the plan's count: each half of the window (the stationarity check's) within change / 2,
        # the bound (tight at half an epoch over whole ones) solved for n
        n = physics.window_epochs(b, 0.1)
        assert b / (4 * (2 - b) * n / 2) == pytest.approx(0.05) and worst(b, n / 2) <= 0.05 * 1.001
    with pytest.raises(ValueError, match="decrease 1 must be in"):
        physics.window_epochs(1.0, 0.1)


def test_window_epochs_bound_the_cov_of_a_sawtooth():
    # The same ramp's coefficient of variation over whole epochs is (b / sqrt 12) / (1 - b/2);
    # over n epochs from any phase it strays by at most (1 / (3 sqrt 3) + b / (4 (2 - b))) / n
    # of it (to first order: 0.74-0.93 of that numerically, at half an epoch over whole ones),
    # integrated numerically here; the plan's count holds each half of the window within
    # change / 2.
    import numpy as np

    def worst(b, n):
        dt = 2e-4
        t = np.arange(0.0, 12.0, dt)
        rate = (1 - b) + b * (t % 1.0)
        k = int(round(n / dt))
        exact = b / math.sqrt(12) / (1 - b / 2)
        covs = [rate[s:s + k].std() / rate[s:s + k].mean() for s in range(0, int(1 / dt), 25)]
        return np.abs(np.array(covs) / exact - 1).max()

    for b in (0.2, 0.5):
        bound = 1 / (3 * math.sqrt(3)) + b / (4 * (2 - b))
        for n in (1.5, 2.5, 3.5):
            assert 0.7 * bound / n < worst(b, n) <= bound / n
        n = physics.window_epochs(b, 0.1, spread=True)
        assert bound / (n / 2) == pytest.approx(0.05) and worst(b, n / 2) <= 0.05


def test_run_length_from_a_material_change():
    # The cubic-2008 flow of test_run_length_from_the_epoch (K = 9.41 s, b = 0.2): a material
    # change of 5% asks 0.2 / (1.8 x 0.05) = 2.22 epochs, 20.9 s, in place of the fixed 10;
    # the warm-up is the same, and `asked` says how many epochs the plan wants.
    from cubiclab.scenario import Bottleneck, FlowGroup, Scenario

    sc = Scenario(flows=[FlowGroup("cubic-2008", rtt="100ms")], bottleneck=Bottleneck(rate="100Mbps"))
    fixed = physics.run_length(sc, epochs=10, min_window_s=0, max_s=1e9, max_packets=1e12)
    rl = physics.run_length(sc, epochs=10, min_window_s=0, max_s=1e9, max_packets=1e12, change=0.05)
    assert rl.asked == pytest.approx(2.222, abs=1e-3) and fixed.asked == 10
    assert rl.window_s == pytest.approx(20.9, abs=0.1) and rl.warmup_s == fixed.warmup_s
    assert rl.epochs == pytest.approx(rl.asked, abs=0.01) and not rl.capped


def test_the_default_full_plan_runs_every_entry_as_planned():
    # No run of the default full mode is cut by the budget: each holds the epochs its plan
    # asks (the fixed 10, or an entry's derived count), but for runs read as a transient,
    # which run their comparison's plan.
    from cubiclab.experiments.base import FULL

    for name, e in CATALOG.items():
        for r in e.runs(FULL):
            assert not r.tags["capped"], (name, r.tags)
            if not r.tags["transient"] and math.isfinite(r.tags["asked"]):
                assert r.tags["epochs"] >= r.tags["asked"] - 0.05, (name, r.tags)


def test_runs_with_their_own_warmups_share_one_window_length():
    # s001-exp3 compares five protocols' CoV at each buffer: one window length for all, each
    # opened after the run's own warm-up (shared_warmup = False), which is its own plan's.
    from collections import defaultdict

    from cubiclab.experiments.base import FULL

    e = CATALOG["s001-exp3"]
    by_buffer = defaultdict(list)
    for r in e.runs(FULL):
        by_buffer[r.tags["buffer"]].append(r)
    for rs in by_buffer.values():
        (window,) = {round(float(r.scenario.duration[:-1]) - r.tags["warmup_s"], 1) for r in rs}
        assert len({r.tags["warmup_s"] for r in rs}) > 1
        for r in rs:
            own = e.run_length(r.scenario, FULL)
            assert r.tags["warmup_s"] == own.warmup_s and own.window_s <= window + 0.05


class _Pair(base.Experiment):
    # two protocols compared on one link; standard TCP's epoch (0.5 x 166.8 x 0.2 = 16.7 s,
    # 55 s to converge: a 270 s plan) is read as a transient over Cubic 2.0's 123.9 s plan
    name, seed, figure, title = "zz-pair", "002", "Fig. 0", "a transient"
    claims = (_spec(Band(0.5, 0.5)),)
    transient_runs = {"standard TCP": {"alg": "reno"}}

    def conditions(self, mode):
        sc = base.vary(base.load_scenario("s002_two_flows"), rate="10Mbps")
        return [(base.vary(sc, groups={"first": {"algorithm": a}, "second": {"algorithm": a}}), {"alg": a})
                for a in ("cubic-2.0", "reno")]

    def per_run(self, run, res, t0, t1):
        from cubiclab import metrics

        return {"u": metrics.link_utilization(res.link, t0, t1)}

    def values(self, rows):
        return {"x": rows.u.mean()}


def test_runs_read_as_a_transient_run_their_comparisons_plan(tmp_path, monkeypatch):
    mode = dataclasses.replace(_SHORT_MODE, max_s=200)
    cubic, reno = _Pair().runs(mode)[::2]
    assert not reno.tags["capped"] and reno.tags["transient"] and not cubic.tags["transient"]
    assert reno.scenario.duration == cubic.scenario.duration == "123.9s"
    assert reno.tags["epochs"] == pytest.approx(43.7 / 16.7, abs=0.1)
    # without the label standard TCP's plan sets the comparison's length, and the budget caps it
    plain = type("Plain", (_Pair,), {"transient_runs": {}})().runs(mode)[2]
    assert plain.tags["capped"] and float(plain.scenario.duration[:-1]) > 200
    # indicative modes run every run alike
    assert not any(r.tags["transient"] for r in _Pair().runs(base.TINY))
    monkeypatch.setitem(CATALOG, _Pair.name, _Pair())
    (o,) = reproduce(["zz-pair"], mode=mode, out=tmp_path, progress=False, log=None, report=False)
    (v,) = o.verdicts
    assert v.verdict != NOT_CONVERGED and math.isnan(v.drift)
    assert "It reads standard TCP as a transient from the start" in v.note


def test_run_length_with_unequal_shares_and_a_warmup_floor():
    # Two reno flows, 100 Mb/s, 100 ms, buffer 100% BDP: a pipe of 833.3 + 833 = 1666.3 packets.
    # Equal halves: W = 833.2 at loss, a W/2-RTT epoch of 41.7 s. With a 10% share the
    # flow holds 166.6 packets: 8.33 s, and ten epochs are 83.3 s. The floor lifts the
    # warm-up (last start + slow start + convergence = 0 + 0.1 log2(16.66) + 8.33 + 8.33 x
    # ln 0.1 / ln 0.5 = 36.4 s) to 100 s.
    from cubiclab.scenario import Bottleneck, FlowGroup, Scenario

    sc = Scenario(flows=[FlowGroup("reno", name="big", rtt="100ms"), FlowGroup("reno", name="small", rtt="100ms")],
                  bottleneck=Bottleneck(rate="100Mbps"))
    equal = physics.run_length(sc, max_s=1e9, max_packets=1e12, measured=("small",))
    assert equal.epoch_s == pytest.approx(41.66, abs=0.01)
    rl = physics.run_length(sc, max_s=1e9, max_packets=1e12, measured=("small",), shares={"small": 0.1})
    assert rl.epoch_s == pytest.approx(8.33, abs=0.01) and rl.window_s == pytest.approx(83.3, abs=0.1)
    assert rl.warmup_s == pytest.approx(36.4, abs=0.1)
    floor = physics.run_length(sc, max_s=1e9, max_packets=1e12, measured=("small",), shares={"small": 0.1},
                               min_warmup_s=100)
    assert floor.warmup_s == 100 and floor.window_s == rl.window_s
    with pytest.raises(ValueError, match="no flow group named nope"):
        physics.run_length(sc, shares={"nope": 0.5})


def test_seed_002_convergence_holds_six_epochs_of_the_run():
    # The hold: six epochs of Cubic 2.0 on s002_convergence's path. 250 Mb/s of 1500-byte
    # packets = 20833 packets/s; 200 ms: a BDP of 4167 packets and as much buffer, W = 4167
    # each at loss; K = cbrt(W (1 - 819/1024) / (410/1024)) = cbrt(4167 x 0.2002 / 0.4004)
    # = 12.77 s; 6 K = 76.6 s.
    from types import SimpleNamespace

    import numpy as np
    import pandas as pd

    from cubiclab.experiments import seed002

    sc = base.load_scenario("s002_convergence")
    assert seed002.HOLD_EPOCHS * physics.run_length(sc).epoch_s == pytest.approx(76.6, abs=0.1)
    # Two flows sampled every 0.5 s to 320 s, the second from 30 s: 100 Mb/s against 50
    # (outside 20% of their mean 75), equal over (100, 150] and from 200 on, 20 over (290,
    # 300]. Smoothed over 20 samples (10 s), the second is in the band (>= 66.7, its mean with
    # 100 within 20%) from 103.5 to 156.5 s (50 + 2.5 j >= 66.7 from j = 7 samples after 100;
    # 100 - 2.5 j >= 66.7 up to j = 13 after 150), a 53.5 s stretch shorter than the hold, and
    # again from 203.5 to 294 s (100 - 4 j >= 66.7 up to j = 8 after 290), 91 s: converged at
    # 203.5 - 30 = 173.5 s. "To the end of the run" would wait for 306 s (20 + 4 j >= 66.7 from
    # j = 12 after 300): 276 s.
    t = np.arange(1, 641) * 0.5
    second = np.where(t <= 30, 0.0, 50.0)
    second[((t > 100) & (t <= 150)) | (t > 200)] = 100.0
    second[(t > 290) & (t <= 300)] = 20.0
    flows = pd.DataFrame({"t": np.r_[t, t], "flow": np.r_[np.zeros(t.size), np.ones(t.size)].astype(int),
                          "throughput_bps": np.r_[np.full(t.size, 100.0), second]})
    res = SimpleNamespace(flows=flows, totals=pd.DataFrame({"flow": [0, 1], "start_s": [0.0, 30.0]}),
                          summary={"duration_s": 320.0})
    assert seed002._convergence_s(sc, res) == (pytest.approx(173.5), False)
    # never in the band: the rest of the run after the second start, 320 - 30 = 290 s, flagged
    level = res.flows.assign(throughput_bps=np.where(res.flows.flow == 1, 20.0, 100.0))
    assert seed002._convergence_s(sc, SimpleNamespace(**{**vars(res), "flows": level})) == (290.0, True)
    # the hold decides: a 50 s hold takes the first stretch
    from cubiclab.experiments.common import converged_after

    assert converged_after(res, [0, 1], 30.0, hold=50.0) == pytest.approx(73.5)


def test_seed_002_convergence_runs_both_algorithms_on_cubics_clock():
    # H-TCP's own plan would be shorter (its epochs are); both run Cubic 2.0's length, so
    # a run that never converges counts the same rest of the run for either.
    runs = CATALOG["s002-convergence"].runs(base.FULL)
    lengths = {r.tags["alg"]: r.scenario.duration for r in runs}
    assert lengths["htcp"] == lengths["cubic-2.0"]
    sc = base.load_scenario("s002_convergence")
    own = physics.run_length(base.vary(sc, groups={"first": {"algorithm": "htcp"}, "second": {"algorithm": "htcp"}}))
    assert own.duration_s < float(lengths["htcp"].rstrip("s"))


def test_epochs_of_the_rivals():
    # Reno: W/2 RTTs. STCP: 1/8 of W at W/100 packets per RTT = 12.5 RTTs. Cubic 2.0 at
    # W = 10000, RTT 200 ms: K = cbrt(10000 x 0.2 / 0.4) = 17.1 s; its clamp of 160 packets/s
    # needs 0.2 x 10000 / 160 = 12.5 s, so K (the larger) stands.
    assert physics.epoch_s("reno", {}, 100, 0.1) == pytest.approx(5.0)
    assert physics.epoch_s("scalable", {}, 1000, 0.1) == pytest.approx(1.25)
    assert physics.epoch_s("cubic-2.0", {"tcp_friendliness": 0}, 10000, 0.2) == pytest.approx(17.1, abs=0.1)
    # with the 2.6.18 bug the clamp is 20 packets/s: 2000 / 20 = 100 s
    assert physics.epoch_s("cubic-2.0", {"tcp_friendliness": 0, "scaling_bug": 1}, 10000, 0.2) == pytest.approx(100,
                                                                                                           abs=0.2)



def test_epochs_of_the_later_growth_laws():
    # Hybla grows rho^2 packets per RTT, rho = srtt / rtt0 in eighths (floored), at least 1:
    # at 200 ms and rtt0 25 ms rho = 8, so Reno's epoch of W = 100 (50 RTTs = 10 s) over 64;
    # 40 ms: 8 x 40 / 25 = 12.8 eighths, floored 12: rho 1.5, so 45 RTTs of 40 ms / 2.25 for
    # W = 90; below rtt0 (10 ms) rho is 1, Reno's 50 x 0.01; rtt0 50 ms at 200 ms: rho 4.
    assert physics.epoch_s("hybla", {}, 100, 0.2) == pytest.approx(10 / 64)
    assert physics.epoch_s("hybla", {}, 90, 0.04) == pytest.approx(45 * 0.04 / 2.25)
    assert physics.epoch_s("hybla", {}, 100, 0.01) == pytest.approx(0.5)
    assert physics.epoch_s("hybla", {"rtt0": 50}, 100, 0.2) == pytest.approx(10 / 16)
    assert physics.decrease_fraction("hybla", {}) == 0.5
    # YeAH in its slow mode halves (after 16 slow rounds) and regains W/2 at one packet per
    # RTT: 50 RTTs of 100 ms for W = 100, not Scalable's 1/8 of W at W/100 per RTT (1.25 s).
    assert physics.decrease_fraction("yeah", {}) == 0.5
    assert physics.epoch_s("yeah", {}, 100, 0.1) == pytest.approx(5.0)
    assert physics.epoch_s("yeah", {}, 1000, 0.1) == pytest.approx(50.0)
    # LP and DCTCP: Reno's loss epoch, W/2 RTTs.
    assert physics.epoch_s("lp", {}, 100, 0.1) == pytest.approx(5.0)
    assert physics.epoch_s("dctcp", {}, 100, 0.1) == pytest.approx(5.0)
    # BBRv3 as BBR: its epoch is the PROBE_RTT interval, bbr_probe_rtt_win_ms = 5000 (v1's
    # min-RTT window is 10 s), whatever the window.
    assert physics.epoch_s("bbr3", {}, 100, 0.1) == pytest.approx(5.0)
    assert physics.epoch_s("bbr3", {"probe_rtt_win_ms": 8000}, 10000, 0.1) == pytest.approx(8.0)
    assert physics.epoch_s("bbr", {}, 100, 0.1) == pytest.approx(10.0)


def test_epochs_of_the_delay_and_bandwidth_rivals():
    # w = 100 packets at loss, rtt = 0.1 s.
    # vegas, westwood, cdg: halve at a loss (tcp_reno_ssthresh; westwood's BDP with a buffer
    # of one BDP), regain 50 packets at one per RTT: 50 * 0.1 = 5 s.
    for name in ("vegas", "westwood", "cdg"):
        assert physics.decrease_fraction(name, {}) == 0.5
        assert physics.epoch_s(name, {}, 100, 0.1) == pytest.approx(5.0)
    # veno above its backlog threshold: halves, one packet every other RTT: 2 * 5 = 10 s.
    assert physics.decrease_fraction("veno", {}) == 0.5
    assert physics.epoch_s("veno", {}, 100, 0.1) == pytest.approx(10.0)
    # illinois at maximum delay: beta_max 1/2; alpha_min per RTT, ALPHA_MIN = (3 << 7) / 10
    # = 38 in tcp_illinois's ALPHA_SHIFT 7 fixed point, 38/128: 5 s / (38/128).
    assert physics.decrease_fraction("illinois", {}) == 0.5
    assert physics.epoch_s("illinois", {}, 100, 0.1) == pytest.approx(5 * 128 / 38)
    # nv keeps its beta_kept, 3276/4096 of the window; gives up 820/4096, regains
    # 100 * 820/4096 packets at one per RTT.
    assert physics.decrease_fraction("nv", {}) == pytest.approx(820 / 4096)
    assert physics.epoch_s("nv", {}, 100, 0.1) == pytest.approx(100 * 820 / 4096 * 0.1)

# ---- package data, CLI, errors -----------------------------------------------------------------


def test_scenarios_are_package_data():
    names = base.scenario_names()
    assert "s000_fig6" in names and len(names) >= 14
    for n in names:
        base.load_scenario(n).compile()
    with pytest.raises(ValueError, match="no catalog scenario 'nope'; there are: s000_eq6, s000_fig10"):
        base.load_scenario("nope")


def test_cli_list_and_errors(tmp_path, capsys):
    # One run as a program (the module entry point); the rest in this process, where each
    # check costs no interpreter start and import of the scientific stack.
    from cubiclab import cli

    lst = subprocess.run([sys.executable, "-m", "cubiclab.cli", "reproduce", "--list"], capture_output=True, text=True)
    assert lst.returncode == 0 and all(n in lst.stdout for n in ENTRIES)

    def run(*argv):
        code = cli.main(["reproduce", *argv])
        out, err = capsys.readouterr()
        return code, out, err

    # s000-tcp-mode: a model entry without figures, the cheapest to run
    code, out, err = run("s000-tcp-mode", "--mode", "tiny", "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    assert "bic_tcp_mode_below_14" in out and "consistency check: 4 indicative" in out  # true by the code it transcribes
    code, _, err = run("s999-nothing")
    assert code == 2 and "no catalog entry 's999-nothing'" in err
    code, _, err = run("s000-tcp-mode", "--seeds", "1")
    assert code == 2 and "seeds is 1" in err
    # the stability check end to end on a model entry (no simulations): nothing can flip
    code, out, err = run("s000-tcp-mode", "--stability", "--out", str(tmp_path / "stab"), "--quiet")
    assert code == 0, err
    assert "0 of 4 claims flip" in out and (tmp_path / "stab" / "stability.md").is_file()
    code, _, err = run("s000-tcp-mode", "--stability", "--quick")
    assert code == 2 and "--stability reruns full mode" in err
    for argv, why in ((["--budget-scale", "0.5"], "(--budget-scale) is 0.5 in full mode;"),
                      (["--budget-scale", "nan"], "(--budget-scale) is nan in full mode;"),
                      (["--budget-scale", "2", "--quick"], "(--budget-scale) is 2 in quick mode;"),
                      (["--budget-scale", "2", "--stability"], None)):
        code, out, err = run("s000-tcp-mode", *argv, "--out", str(tmp_path / "scaled"), "--quiet")
        if why is None:  # a valid scale: the stability check runs (a model entry: no simulations)
            assert code == 0 and "0 of 4 claims flip" in out, err
        else:
            assert code == 2 and why in err and "allowed: a number >= 1, in full mode" in err, err
    code, _, err = run("s000-tcp-mode", "--budget-scale", "2", "--testbed")
    assert code == 2 and "--budget-scale lengthens the simulator's runs; drop --testbed" in err


def test_a_model_entry_explains_its_verdict_with_computed_numbers(tmp_path):
    from cubiclab.experiments.base import mode_named

    out = CATALOG["s001-friendly-region"].analyse(None, mode_named("full", None, None), tmp_path)
    note = {v.spec.id: v.note for v in out.verdicts}["boundary_100ms"]
    # Eq. 5 = sqrt(3/(2p)) at p* = C (4 - beta) / (4 beta) RTT^3 / 2.25:
    # 0.4 x 4.75 x 1e-3 / 2.25 = 8.44e-4, 5.9 times the printed 1.44e-4; with beta = 0.8,
    # (4 - 0.8) / 3.2 = 1: 0.4 x 1e-3 / 2.25 = 1.78e-4.
    assert "p = 0.000844" in note and "5.9 times the printed 0.000144" in note and "at 0.000178" in note


def test_a_random_model_is_judged_as_an_ensemble(tmp_path):
    from cubiclab.experiments.base import mode_named

    # s004-fig4's validator is random: one value per validator seed (3 here), a real interval;
    # s001-friendly-region's boundary is a formula: one exact value.
    (v,) = CATALOG["s004-fig4"].analyse(None, mode_named("full", 3), tmp_path / "a").verdicts
    assert v.n == 3 and len(set(v.values)) == 3 and v.ci > 0
    v = CATALOG["s001-friendly-region"].analyse(None, mode_named("full", 3), tmp_path / "b").verdicts[0]
    assert (v.n, v.ci) == (1, 0.0)


def test_a_broken_entry_does_not_sink_the_report(tmp_path, monkeypatch):
    from cubiclab.experiments.base import Experiment

    class Broken(Experiment):
        name, seed, figure, title = "zz-broken", "000", "Fig. 0", "raises"
        claims = (_spec(Band(1.0, 0.1)),)

        def compute(self, mode, outdir):
            raise RuntimeError("a bug in the analysis")

    class Fine(Experiment):
        name, seed, figure, title = "zz-fine", "000", "Fig. 0", "computes"
        claims = (_spec(Band(1.0, 0.1)),)

        def compute(self, mode, outdir):
            return {"x": 1.05}, {}, []

    for cls in (Broken, Fine):
        monkeypatch.setitem(CATALOG, cls.name, cls())
    outs = {o.name: o for o in reproduce(["zz-"], mode="full", out=tmp_path, progress=False, log=None)}
    assert "RuntimeError: a bug in the analysis" in outs["zz-broken"].error
    assert [v.verdict for v in outs["zz-fine"].verdicts] == [HOLDS]
    assert "a bug in the analysis" in (tmp_path / "report.html").read_text()


class _Short(base.Experiment):
    name, seed, figure, title = "zz-short", "002", "Fig. 0", "capped"
    claims = (_spec(Band(0.5, 0.5)), dataclasses.replace(_spec(Band(0.5, 0.5), transient=True), id="t"))

    def conditions(self, mode):
        return [(base.vary(base.load_scenario("s002_two_flows"), rate="10Mbps"), {})]

    def per_run(self, run, res, t0, t1):
        from cubiclab import metrics

        return {"u": metrics.link_utilization(res.link, t0, t1)}

    def values(self, rows):
        return {"x": rows.u.iloc[0], "t": rows.u.iloc[0]}


# Two Cubic 2.0 flows at 200 ms on 10 Mb/s (833.3 packets/s; BDP 166.7 + buffer 167 packets:
# W = 166.8 each at loss) need K = cbrt(166.8 x 0.2002 / 0.4004) = 4.37 s per epoch; the second
# starts at 30 s. Plan: warm-up 30 + slow start 0.2 log2(16.68) + K = 5.18 s + convergence K x
# ln 0.1 / ln 0.8 = 45.04 s = 80.2 s, then ten epochs, 43.7 s: 123.9 s. A 6 s budget caps it (a
# window of 2 s, under half an epoch); 123.9 / 6 = 20.65 times that budget runs it as planned.
_SHORT_MODE = base.Mode("full", seeds=2, epochs=10, min_window_s=2, max_s=6, max_packets=1e6, coarse=True,
                        indicative=False)


def test_the_budget_scale_runs_capped_runs_as_planned():
    capped = _Short().runs(_SHORT_MODE)[0]
    assert capped.tags["capped"] and capped.scenario.compile()["duration"] == 6e9
    assert capped.tags["planned_s"] == pytest.approx(123.9, abs=0.1)
    assert capped.tags["scale_to_plan"] == pytest.approx(20.65, abs=0.01)
    scaled = _Short().runs(dataclasses.replace(_SHORT_MODE, budget_scale=20.7))
    for r in scaled:
        assert not r.tags["capped"] and r.tags["epochs"] == pytest.approx(10, abs=0.05)
        assert r.scenario.compile()["duration"] / 1e9 == pytest.approx(123.9, abs=0.05)
        assert r.tags["warmup_s"] == pytest.approx(80.2, abs=0.05)
    # a scale short of the plan lengthens the run by the scale: 6 s x 10 = 60 s
    half = _Short().runs(dataclasses.replace(_SHORT_MODE, budget_scale=10))[0]
    assert half.tags["capped"] and half.scenario.compile()["duration"] / 1e9 == pytest.approx(60, abs=0.05)
    # at scale 1 the runs (their cache keys) are the unscaled mode's
    assert [r.key for r in CATALOG["s003-cubic-tahoe"].runs(base.mode_named("full", budget_scale=1))] == [
        r.key for r in CATALOG["s003-cubic-tahoe"].runs(base.FULL)]
    with pytest.raises(ValueError, match="is 2 in quick mode; allowed: a number >= 1, in full mode"):
        base.mode_named("quick", budget_scale=2)
    with pytest.raises(ValueError, match="is 0.9 in full mode"):
        base.mode_named("full", budget_scale=0.9)


def test_a_window_cut_short_by_the_budget_is_not_judged(tmp_path, monkeypatch):
    class Short(_Short):
        pass

    monkeypatch.setitem(CATALOG, Short.name, Short())
    (o,) = reproduce(["zz-short"], mode=_SHORT_MODE, out=tmp_path, progress=False, log=None, report=False)
    v = {v.spec.id: v for v in o.verdicts}
    assert v["x"].verdict == NOT_CONVERGED and "too short for a steady state" in v["x"].note
    # the scale that reaches the plan (20.65, rounded up), and the entry's CPU time there:
    # each run's measured simulation time times 123.9 s / 6 s
    assert "`--budget-scale 20.7` runs it as planned (10 epochs)" in v["x"].note
    rows = o.data["runs"]
    projected = (rows.sim_s * 123.9 / 6).sum() / 3600
    assert f"about {projected:.1f} CPU hours for the entry's 2 runs" in v["x"].note
    assert v["t"].verdict != NOT_CONVERGED  # a transient claim is about the run as a whole


def _maturin() -> str | None:
    import shutil

    found = shutil.which("maturin") or str(Path(sys.base_prefix) / "bin" / "maturin")
    return found if Path(found).exists() else None


@pytest.mark.skipif(_maturin() is None, reason="maturin (a test extra) is not installed")
def test_a_built_wheel_runs_an_entry(tmp_path):
    # Not editable: the wheel alone must carry the scenario files. The build reuses the
    # workspace's cargo target folder, so only the link step runs when the extension is built.
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "CARGO_TARGET_DIR": str(repo / "target")}
    subprocess.run([_maturin(), "build", "--release", "--quiet", "-o", str(tmp_path / "dist")], cwd=repo, env=env,
                   check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("cubiclab-*.whl"))
    venv = tmp_path / "venv"
    # numpy, pandas, pyarrow and matplotlib come from the interpreter's own site-packages
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True)
    code = ("import cubiclab, json; from cubiclab.experiments import reproduce; "
            "o = reproduce(['s004-packet'], mode='tiny', out='out', progress=False, log=None)[0]; "
            "print(json.dumps([cubiclab.__file__, o.error, [v.verdict for v in o.verdicts]]))")
    out = subprocess.run([py, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    where, error, verdicts = json.loads(out.stdout.strip().splitlines()[-1])
    assert str(venv) in where and not error and verdicts


# ---- censored times ----------------------------------------------------------------------------


def test_the_median_interval_from_order_statistics():
    # P(Bin(n, 1/2) < k) x 2 off the coverage: n = 5, k = 1: 1 - 2/32 = 0.9375 (no k reaches
    # 95%); n = 10, k = 2: 1 - 2 x 11/1024 = 0.97852; k = 3 would give 1 - 2 x 56/1024 = 0.89.
    assert median_order_interval(5) == (1, pytest.approx(0.9375))
    assert median_order_interval(10) == (2, pytest.approx(0.978515625))
    # n = 20: P(Bin <= 5) = 21700/2^20, coverage 0.95861 at k = 6; P(Bin <= 6) = 60460/2^20
    # gives 0.88468 at k = 7.
    assert median_order_interval(20) == (6, pytest.approx(1 - 2 * 21700 / 2**20))


def test_censored_times_are_judged_on_the_median_never_averaged():
    within = _spec(Below(200, 50), censored=True)
    # All five converged: the interval [smallest, largest] = [100, 190] lies below 200.
    v = judge(within, [100.0, 190.0, 120.0, 130.0, 110.0])
    assert v.verdict == HOLDS and v.interval == (100.0, 190.0) and v.mean == 120.0
    # One never converged within the 150 s it had: the largest upper bound is infinite, so
    # the interval [100, inf) straddles 200, though the median (120) is far below.
    v = judge(within, [100.0, Censored(150.0), 120.0, 130.0, 110.0])
    assert v.verdict == INCONCLUSIVE and v.interval == (100.0, math.inf) and "1 of 5 values censored" in v.note
    # All censored beyond 275 s: "around 220 s" (165-275) fails, the interval starting at 300.
    around = _spec(Band(220, 55), censored=True)
    v = judge(around, [Censored(300.0)] * 5)
    assert v.verdict == FAILS and v.interval[0] == 300.0
    # A difference bounded on one side: Cubic at least 210 s slower in every run holds "> 10".
    slower = _spec(Above(10, 10), censored=True)
    assert judge(slower, [Censored(210.0), 60.0, Censored(150.0), 40.0, 30.0]).verdict == HOLDS


def test_every_utilisation_says_which():
    # One meaning per word: a claim that measures a utilisation names the link's or the flows'.
    from cubiclab.experiments.claims import FLOWS_UTILISATION, LINK_UTILISATION

    for name, e in CATALOG.items():
        for c in e.table():
            if "utilisation" in c.metric:
                assert LINK_UTILISATION in c.metric or FLOWS_UTILISATION in c.metric, (name, c.id)


def test_full_mode_seeds_draw_the_hosts_timing_noise():
    # Full mode's ensembles run with [host] jitter = "testbed" (seeds then vary what varies on
    # a real host, and an interval is a sample's), except where a model's deterministic loss
    # needs one trajectory (s000-eq6); the indicative modes' single runs keep it off.
    from cubiclab.experiments.base import FULL, TINY

    for name, e in CATALOG.items():
        for r in e.runs(FULL)[:1]:
            assert r.scenario.host.jitter == (None if name == "s000-eq6" else "testbed"), name
        for r in e.runs(TINY)[:1]:
            assert r.scenario.host.jitter is None, name


def test_runs_compared_across_protocols_share_one_window():
    # s003-cubic-tahoe compares CUBIC, Tahoe and both together on each link: at each link and
    # buffer, every run gets the longest warm-up and window any of them plans, so each lasts
    # as long as the longest plan of its comparison (none is capped here).
    from collections import defaultdict

    from cubiclab.experiments.base import FULL

    groups = defaultdict(list)
    for r in CATALOG["s003-cubic-tahoe"].runs(FULL):
        groups[(r.tags["link"], r.tags["buffer"])].append(r)
    compared = [rs for rs in groups.values() if len({r.tags["who"] for r in rs}) > 1]
    assert compared
    for rs in compared:
        assert not any(r.tags["capped"] for r in rs)
        assert len({(r.scenario.duration, r.tags["warmup_s"]) for r in rs}) == 1
        longest = max(r.tags["planned_s"] for r in rs)
        assert float(rs[0].scenario.duration[:-1]) == pytest.approx(longest, abs=0.05)  # "%g" of seconds


def test_s002_missing_drop_compares_cubic_and_htcp_over_one_window():
    # similar_to_htcp divides Cubic 2.0's CoV by H-TCP's at 50 sessions: both runs share one
    # warm-up and one window (the review found 112 s against 80 s), at least the 400 s that
    # 'hundreds of seconds' asks of sustained_unfairness.
    from cubiclab.experiments.base import FULL

    runs = CATALOG["s002-missing-drop"].runs(FULL)
    for n in (25, 50):
        rs = [r for r in runs if r.tags["sessions"] == n]
        assert {r.tags["alg"] for r in rs} == {"cubic-2.0", "htcp"}
        assert len({(r.scenario.duration, r.tags["warmup_s"]) for r in rs}) == 1
        assert float(rs[0].scenario.duration[:-1]) - rs[0].tags["warmup_s"] >= 400 - 0.05  # "%g" of seconds


def test_a_claim_is_measured_on_its_own_runs():
    # claim_runs narrows a claim to the runs it reads (a tuple: any of its values), so that
    # the check of their windows' epochs reads those runs only: s000-fig8's utilisation of
    # the high-speed protocols is not withheld for TCP-SACK's 2000 s epochs at 324 ms.
    import pandas as pd

    e = CATALOG["s000-fig8"]
    rows = pd.DataFrame([r.tags for r in e.runs(base.TINY)])
    spec = {c.id: c for c in e.table()}
    assert set(e._claim_rows(spec["hs_utilise"], rows).alg) == {"cubic-2008", "bic", "highspeed"}
    assert set(e._claim_rows(spec["sack_underutilises"], rows).alg) == {"reno"}
    assert len(e._claim_rows(spec["cubic_bic_fairer"], rows)) == len(rows)


def test_each_command_writes_the_report_of_the_entries_it_ran(tmp_path, capsys):
    # What reproduce-a-figure.md says: one report for the entries named together; a later
    # command into the same folder rewrites it with its own, the earlier entries' folders kept.
    from cubiclab.cli import main

    def entries_in_report():
        html = (tmp_path / "report.html").read_text()
        return {name for name in ("s000-fig3", "s000-tcp-mode") if name in html}

    main(["reproduce", "s000-fig3", "s000-tcp-mode", "--mode", "tiny", "--out", str(tmp_path), "--quiet"])
    assert entries_in_report() == {"s000-fig3", "s000-tcp-mode"}
    main(["reproduce", "s000-tcp-mode", "--mode", "tiny", "--out", str(tmp_path), "--quiet"])
    assert entries_in_report() == {"s000-tcp-mode"} and (tmp_path / "s000-fig3" / "claims.json").exists()
    page = (Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "reproduce-a-figure.md").read_text()
    assert "Each `cubiclab reproduce` rewrites it with its own entries" in page
