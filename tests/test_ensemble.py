"""The ensemble yardstick of `cubiclab compare --runs N` and scripts/agreement.py."""

from __future__ import annotations

import math

import pytest

from cubiclab.testbed.ensemble import TOLERANCES, compare_runs, interval, judge


def test_interval_is_students_t_95():
    # [1, 2, 3]: mean 2, sample sd 1, t(0.975, 2 dof) = 4.303: half width 4.303 / sqrt 3 = 2.4843.
    m, lo, hi = interval([1.0, 2.0, 3.0])
    assert m == 2.0
    assert (lo, hi) == pytest.approx((2 - 2.4843, 2 + 2.4843), abs=1e-4)
    # One value: a zero-width interval; NaNs are left out.
    assert interval([5.0, math.nan]) == (5.0, 5.0, 5.0)


def test_verdicts_overlap_or_tolerance():
    # Utilisation is absolute (0.02). Runs that repeat exactly have zero-width intervals,
    # apart here: 0.91 vs 0.94 differ by 0.03 > 0.02; 0.91 vs 0.925 by 0.015, inside.
    assert TOLERANCES["utilization"] == ("abs", 0.02)
    assert not judge("utilization", [0.91, 0.91], [0.94, 0.94])["agrees"]
    assert judge("utilization", [0.91, 0.91], [0.925, 0.925])["agrees"]
    # Retransmissions are relative (20%): 100 vs 125 (constant runs, no overlap): -20% agrees,
    # 100 vs 130 (-23%) differs.
    assert judge("retransmits", [100, 100], [125, 125])["agrees"]
    assert not judge("retransmits", [100, 100], [130, 130])["agrees"]
    # Overlapping intervals agree whatever the tolerance: [100, 200] has half width
    # 12.706 x 70.7 / 1.414 = 635 around 150, so it covers 300.
    assert judge("ss_peak[0]", [100, 200], [300, 300])["agrees"]


def test_compare_runs_judges_every_shared_metric():
    sim = [{"utilization": 0.91, "share[0]": 0.51}] * 2
    kernel = [{"utilization": 0.91, "share[0]": 0.6, "only_kernel": 1.0}] * 2
    rows = compare_runs(sim, kernel)
    assert [r["metric"] for r in rows] == ["utilization", "share[0]"]
    # share: 0.51 vs 0.60, apart, 0.09 > 0.05.
    assert [r["agrees"] for r in rows] == [True, False]
