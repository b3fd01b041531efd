"""cubiclab.stats: the t and F quantiles, the intervals and the three-way verdict that the
catalog and the agreement matrix share. Expected numbers are the distributions' closed
forms or standard tables (4 significant digits), worked out in the comments."""

from __future__ import annotations

import math

import pytest

from cubiclab.stats import (FAILS, HOLDS, INCONCLUSIVE, betainc, f_quantile, mean_ci, sd_ratio, t_cdf, t_quantile,
                            verdict, welch)


def test_incomplete_beta_closed_forms():
    # I_x(1, 1) = x (uniform); I_x(a, 1) = x^a.
    assert betainc(1, 1, 0.3) == pytest.approx(0.3, abs=1e-14)
    assert betainc(3.5, 1, 0.7) == pytest.approx(0.7 ** 3.5, abs=1e-14)
    # I_0.4(2, 3): the binomial tail P(Bin(4, 0.4) >= 2) = 6 .4^2 .6^2 + 4 .4^3 .6 + .4^4
    # = 0.3456 + 0.1536 + 0.0256 = 0.5248, on the continued fraction's direct side ...
    assert betainc(2, 3, 0.4) == pytest.approx(0.5248, abs=1e-14)
    # ... and I_0.8(2, 3) = 6 .8^2 .2^2 + 4 .8^3 .2 + .8^4 = 0.1536 + 0.4096 + 0.4096 = 0.9728 on the
    # reflected side (x > (a + 1) / (a + b + 2) = 3/7).
    assert betainc(2, 3, 0.8) == pytest.approx(0.9728, abs=1e-14)
    assert (betainc(2, 3, 0.0), betainc(2, 3, 1.0)) == (0.0, 1.0)


def test_t_quantiles_match_the_distribution():
    # One degree of freedom is the Cauchy distribution: P(T <= t) = 1/2 + atan(t) / pi, so the
    # 97.5% quantile is tan(0.475 pi) = 12.7062; two: t = sqrt(2) (2p - 1) / sqrt(1 - (2p - 1)^2)
    # = sqrt(2) 0.95 / sqrt(0.0975) = 4.3027.
    assert t_quantile(0.975, 1) == pytest.approx(math.tan(0.475 * math.pi), rel=1e-9)
    assert t_quantile(0.975, 2) == pytest.approx(math.sqrt(2) * 0.95 / math.sqrt(1 - 0.95 ** 2), rel=1e-9)
    # Standard tables: 9 dof 2.262, 18 dof 2.101, 30 dof 2.042; infinite dof: the normal's 1.960.
    for dof, table in ((9, 2.262), (18, 2.101), (30, 2.042), (math.inf, 1.960)):
        assert t_quantile(0.975, dof) == pytest.approx(table, abs=6e-4), dof
    # Fractional dof (Welch) fall between their neighbours.
    assert t_quantile(0.975, 5) < t_quantile(0.975, 4.5) < t_quantile(0.975, 4)
    assert t_cdf(-1.0, 3) == pytest.approx(1 - t_cdf(1.0, 3), abs=1e-15)
    with pytest.raises(ValueError, match="0.5 < p < 1"):
        t_quantile(0.4, 3)


def test_f_quantiles_match_the_distribution():
    # F(2, 2): P(F <= f) = f / (1 + f), so the 97.5% quantile is 39; F(1, 1) is the square of a
    # Cauchy variable: its 97.5% quantile is tan(0.4875 pi)^2 = 647.79.
    assert f_quantile(0.975, 2, 2) == pytest.approx(39.0, rel=1e-9)
    assert f_quantile(0.975, 1, 1) == pytest.approx(math.tan(0.4875 * math.pi) ** 2, rel=1e-9)
    # Standard tables (97.5%): F(9, 9) = 4.026, F(2, 3) = 16.04, F(19, 19) = 2.526.
    for d1, d2, table in ((9, 9, 4.026), (2, 3, 16.04), (19, 19, 2.526)):
        assert f_quantile(0.975, d1, d2) == pytest.approx(table, rel=3e-4), (d1, d2)
    # The lower quantile is the reciprocal of the swapped upper one.
    assert f_quantile(0.025, 4, 7) == pytest.approx(1 / f_quantile(0.975, 7, 4), rel=1e-9)


def test_mean_interval_is_students_t():
    # 1..5: mean 3, s = sqrt(2.5) = 1.5811, t(0.975, 4) = 2.7764: 2.7764 x 1.5811 / sqrt(5) = 1.9632.
    m, half, n = mean_ci([1, 2, 3, 4, 5, math.nan])
    assert (m, n) == (3.0, 5) and half == pytest.approx(1.9632, abs=1e-4)
    assert math.isnan(mean_ci([1.0])[1]) and mean_ci([]) [2] == 0 and mean_ci([2.0, 2.0])[1] == 0


def test_welch_interval():
    # Equal sizes and variances: the Welch-Satterthwaite dof is 2 (n - 1). a = 0..9, b = 10..19:
    # difference -10, each variance 9.1667, se = sqrt(2 x 9.1667 / 10) = 1.3540, dof 18,
    # t(0.975, 18) = 2.1009: half width 2.8447.
    d, lo, hi, dof = welch(range(10), range(10, 20))
    assert (d, dof) == (-10.0, pytest.approx(18.0))
    assert (lo, hi) == pytest.approx((-12.8447, -7.1553), abs=1e-4)
    # Unequal: a = [1, 2, 3] (variance 1), b = [2, 4, 6, 8] (variance 20/3): se^2 = 1/3 + 5/3 = 2,
    # dof = 2^2 / ((1/3)^2 / 2 + (5/3)^2 / 3) = 4 / 0.98148 = 4.0755, below the pooled test's 5.
    d, lo, hi, dof = welch([1, 2, 3], [2, 4, 6, 8])
    assert d == -3.0 and dof == pytest.approx(4.0755, abs=1e-4)
    assert hi - d == pytest.approx(t_quantile(0.975, dof) * math.sqrt(2), rel=1e-12)
    # Constant samples: no spread, a zero-width interval; one value a side: none at all.
    assert welch([1, 1], [0.5, 0.5]) == (0.5, 0.5, 0.5, math.inf)
    assert all(math.isnan(x) for x in welch([1], [2, 3]))


def test_ratio_of_standard_deviations():
    # a = [1, 2, 3] (s = 1), b = [2, 4, 6] (s = 2): ratio 1/2; variance ratio 1/4 over
    # F(0.975; 2, 2) = 39 and times 39: [1/156, 9.75], square-rooted [0.080064, 3.1225].
    r, lo, hi = sd_ratio([1, 2, 3], [2, 4, 6])
    assert r == pytest.approx(0.5)
    assert (lo, hi) == pytest.approx((math.sqrt(1 / 156), math.sqrt(9.75)), rel=1e-9)
    # A spread against none: infinitely wider; none against none: undefined.
    assert sd_ratio([1, 2], [3, 3]) == (math.inf,) * 3
    assert all(math.isnan(x) for x in sd_ratio([3, 3], [3, 3]))


def test_the_three_verdicts():
    assert verdict(0.9, 1.1, 0.8, 1.2) == HOLDS
    assert verdict(1.3, 1.4, 0.8, 1.2) == FAILS
    assert verdict(0.5, 0.7, 0.8, 1.2) == FAILS
    assert verdict(1.1, 1.3, 0.8, 1.2) == INCONCLUSIVE
    assert verdict(0.7, 1.3, 0.8, 1.2) == INCONCLUSIVE  # wider than the region
    # Edges count as inside.
    assert verdict(0.8, 1.2, 0.8, 1.2) == HOLDS
