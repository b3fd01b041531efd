"""The ensemble yardstick of `cubiclab compare --runs N` and scripts/agreement.py: the
difference of the means with its Welch interval against ± the tolerance, the ratio of the
spreads with its F interval against a factor 2, and the sequential design."""

from __future__ import annotations

import math

import pytest

from cubiclab.stats import t_quantile
from cubiclab.testbed.ensemble import (AGREES, DIFFERS, MAX_RUNS, STEP_RUNS, TOLERANCES, UNDECIDED, compare_runs,
                                       interval, judge, runs_wanted)

# Ten values with mean 0 and sample standard deviation 1: ±c five times each, s^2 = 10 c^2 / 9 = 1
# for c = sqrt(0.9).
C = math.sqrt(0.9)
UNIT = [C, -C] * 5


def spread(mean: float, sd: float) -> list[float]:
    return [mean + sd * u for u in UNIT]


def test_interval_is_students_t_95():
    # [1, 2, 3]: mean 2, sample sd 1, t(0.975, 2 dof) = 4.3027: half width 4.3027 / sqrt 3 = 2.4842.
    m, lo, hi = interval([1.0, 2.0, 3.0])
    assert m == 2.0
    assert (lo, hi) == pytest.approx((2 - 2.4842, 2 + 2.4842), abs=1e-4)
    # One value: a zero-width interval; NaNs are left out.
    assert interval([5.0, math.nan]) == (5.0, 5.0, 5.0)


def test_the_difference_must_lie_inside_the_tolerance():
    assert TOLERANCES["utilization"] == ("abs", 0.02)
    # Ten runs a side, sd 0.005 each: se = 0.005 sqrt(2 / 10) = 0.002236, dof 18,
    # t = 2.1009: half width 0.004698.
    half = t_quantile(0.975, 18) * 0.005 * math.sqrt(0.2)
    assert half == pytest.approx(0.004698, abs=1e-6)
    # Means 0.950 / 0.960: [-0.0147, -0.0053] inside ±0.02: agrees.
    v = judge("utilization", spread(0.95, 0.005), spread(0.96, 0.005))
    assert v["verdict"] == AGREES and v["agrees"]
    assert (v["diff_lo"], v["diff_hi"]) == pytest.approx((-0.01 - half, -0.01 + half), abs=1e-12)
    # 0.950 / 0.980: [-0.0347, -0.0253], wholly below -0.02: differs.
    assert judge("utilization", spread(0.95, 0.005), spread(0.98, 0.005))["verdict"] == DIFFERS
    # 0.950 / 0.970: [-0.0247, -0.0153] straddles -0.02: undecided.
    assert judge("utilization", spread(0.95, 0.005), spread(0.97, 0.005))["verdict"] == UNDECIDED


def test_overlapping_intervals_no_longer_agree():
    # Issue 31: Cubic 2.0's share 0.269 [0.265, 0.274] simulated against 0.415 [0.268, 0.562]
    # on the kernel, three runs a side, "agreed" because the intervals touched. Runs of that
    # shape: sim 0.265, 0.269, 0.273 (sd 0.004), kernel 0.356, 0.415, 0.474 (sd 0.059). The
    # difference -0.146 has se sqrt(0.004^2/3 + 0.059^2/3) = 0.03414 and Welch dof 2.02, so
    # t = 4.27 and the interval [-0.292, -0.0002] straddles -0.05: undecided, not an agreement.
    v = judge("share[0]", [0.265, 0.269, 0.273], [0.356, 0.415, 0.474])
    assert v["sim_hi"] > v["kernel_lo"]  # the intervals overlap
    assert v["verdict"] == UNDECIDED
    assert v["dof"] == pytest.approx(2.02, abs=0.01)
    # Ten runs a side with the same spreads decide it: se 0.0187, dof 9.1, half width 0.042:
    # [-0.188, -0.104], wholly outside ±0.05.
    v = judge("share[0]", spread(0.269, 0.004), spread(0.415, 0.059))
    assert v["verdict"] == DIFFERS


def test_relative_tolerance_is_of_the_kernels_mean():
    # Retransmissions within 20% of the kernel's mean 100: a band of ±20. Sim 95 ± 2 against
    # kernel 100 ± 2 (sd), ten runs: difference -5 ± 1.88: agrees; sim 70: [-31.9, -28.1]: differs.
    v = judge("retransmits", spread(95, 2), spread(100, 2))
    assert (v["band"], v["verdict"]) == (pytest.approx(20.0), AGREES)
    assert judge("retransmits", spread(70, 2), spread(100, 2))["verdict"] == DIFFERS


def test_the_spreads_are_compared_too():
    # sd 1 against sd 1: ratio 1, interval [1 / sqrt F, sqrt F] with F(0.975; 9, 9) = 4.026:
    # [0.4984, 2.0065], which just straddles [1/2, 2] with ten runs: undecided.
    v = judge("cwnd_mean[0]", spread(100, 1), spread(100, 1))
    assert v["sd_ratio"] == pytest.approx(1.0)
    assert (v["sd_ratio_lo"], v["sd_ratio_hi"]) == pytest.approx((1 / 2.00649, 2.00649), abs=1e-4)
    assert v["spread"] == UNDECIDED
    # Twenty runs a side: F(0.975; 19, 19) = 2.526, sqrt 1.589: [0.629, 1.589] inside: agrees.
    v = judge("cwnd_mean[0]", spread(100, 1) * 2, spread(100, 1) * 2)
    assert v["spread"] == AGREES
    # One trajectory (no spread) against the kernel's: ratio 0, interval [0, 0]: differs.
    v = judge("cwnd_mean[0]", [100.0] * 10, spread(100, 3))
    assert (v["sd_ratio"], v["spread"]) == (0.0, DIFFERS)
    # Both sides' seeds move it by less than 1% of the tolerance (10% of 100: a range under
    # 0.1): one trajectory each, so the ratio (3 here) says nothing and the spreads agree.
    v = judge("cwnd_mean[0]", spread(100, 0.03), spread(100, 0.01))
    assert v["sd_ratio"] == pytest.approx(3.0) and v["sd_ratio_lo"] > 1 and v["spread"] == AGREES
    # No spread on either side at all: agrees too.
    assert judge("loss_events", [0.0] * 10, [0.0] * 10)["spread"] == AGREES


def test_missing_values():
    # No loss on either side (no slow-start peak): agrees; on one side only: differs; one run
    # with a value against several: undecided.
    assert judge("ss_peak[0]", [math.nan] * 3, [math.nan] * 3)["verdict"] == AGREES
    assert judge("ss_peak[0]", [math.nan] * 3, [100.0, 110.0, 120.0])["verdict"] == DIFFERS
    assert judge("ss_peak[0]", [100.0, math.nan, math.nan], [100.0, 110.0, 120.0])["verdict"] == UNDECIDED


def test_compare_runs_judges_every_shared_metric():
    sim = [{"utilization": 0.91 + 0.001 * k, "share[0]": 0.51 + 0.001 * k} for k in range(10)]
    kernel = [{"utilization": 0.91 + 0.001 * k, "share[0]": 0.6 + 0.001 * k, "only_kernel": 1.0} for k in range(10)]
    rows = compare_runs(sim, kernel)
    assert [r["metric"] for r in rows] == ["utilization", "share[0]"]
    # share: 0.51 vs 0.60 with sd 0.003 a side: [-0.093, -0.087], beyond 0.05.
    assert [r["verdict"] for r in rows] == [AGREES, DIFFERS]


def test_the_sequential_design():
    decided = [{"verdict": AGREES}, {"verdict": DIFFERS}]
    open_ = decided + [{"verdict": UNDECIDED}]
    assert runs_wanted(decided, 10) == 10
    assert runs_wanted(open_, 10) == 10 + STEP_RUNS
    assert runs_wanted(open_, MAX_RUNS) == MAX_RUNS
    assert runs_wanted(open_, MAX_RUNS - 1) == MAX_RUNS  # never past the cap
