"""cubiclab.metrics against hand-computed values (each derivation in a comment)."""

import math

import numpy as np
import pandas as pd
import pytest

from cubiclab import metrics as m


def test_jain_index():
    # Equal shares: (4)^2 / (4 * 4) = 1. One flow takes all: 1^2 / (4 * 1) = 1/4.
    assert m.jain_index([3, 3, 3, 3]) == pytest.approx(1.0)
    assert m.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    # (1 + 2 + 3)^2 / (3 * (1 + 4 + 9)) = 36 / 42 = 6/7.
    assert m.jain_index([1, 2, 3]) == pytest.approx(6 / 7)
    assert m.jain_index([0, 0]) == 1.0
    with pytest.raises(ValueError, match=">= 0"):
        m.jain_index([1, -1])
    with pytest.raises(ValueError, match="at least one"):
        m.jain_index([])


def test_ratios_and_shares():
    # mean(2, 4) / mean(3) = 3 / 3 = 1; 6 / 2 = 3.
    assert m.throughput_ratio([2, 4], [3]) == pytest.approx(1.0)
    assert m.throughput_ratio(6, 2) == pytest.approx(3.0)
    assert m.throughput_ratio(1, 0) == math.inf
    # min / max of (2, 8, 4) = 2 / 8.
    assert m.min_max_ratio([2, 8, 4]) == pytest.approx(0.25)
    # Four TCP flows at 10 against four high-speed flows at 20: 10 / 20.
    assert m.tcp_friendly_ratio([10] * 4, [20] * 4) == pytest.approx(0.5)
    # 60 + 20 of 100: 0.6, 0.2 and 0.2 unused.
    sh = m.bandwidth_shares({"cubic": 60, "sack": 20}, 100)
    assert sh == pytest.approx({"cubic": 0.6, "sack": 0.2, "unused": 0.2})


def test_utilization():
    # 5e8 bits in 10 s over 100 Mbit/s: 5e8 / 1e9 = 0.5.
    assert m.utilization(5e8, 100e6, 10) == pytest.approx(0.5)
    link = pd.DataFrame({"t": [0.5, 1.0, 1.5, 2.0], "utilization": [1.0, 0.5, 0.5, 0.0]})
    # Samples after t0 = 0.5: (0.5 + 0.5 + 0) / 3.
    assert m.link_utilization(link, 0.5) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="no samples"):
        m.link_utilization(link, 5.0)


def test_cov_and_timescales():
    # (1, 3): mean 2, population std 1 -> 0.5.
    assert m.cov([1, 3]) == pytest.approx(0.5)
    t = np.arange(1, 21) * 0.1  # 20 samples every 0.1 s
    x = np.tile([0.0, 2.0], 10)  # alternating 0, 2
    c = m.cov_at_timescales(t, x, [0.1, 0.2, 1.0])
    # 0.1 s: the samples themselves, mean 1, std 1 -> 1. 0.2 s: pairs average to 1 -> 0.
    # 1.0 s: two bins of ten, both 1 -> 0.
    assert c[0.1] == pytest.approx(1.0)
    assert c[0.2] == pytest.approx(0.0)
    assert c[1.0] == pytest.approx(0.0)
    # A scale with fewer than two whole bins gives NaN.
    assert math.isnan(m.cov_at_timescales(t, x, [1.5])[1.5])
    # Warm-up: keeping t > 1.0 leaves 10 samples (5 pairs): still 1 at 0.1 s.
    assert m.cov_at_timescales(t, x, [0.1], t0=1.0)[0.1] == pytest.approx(1.0)


def _two_flows():
    t = np.arange(0, 100, 1.0)
    a = np.where(t < 40, 9.0, 5.4)
    b = np.where(t < 10, 0.0, np.where(t < 40, 1.0, 4.6))
    return t, np.column_stack([a, b])


def test_convergence_time():
    t, X = _two_flows()
    # Both run from t = 10 (B > 0). From t = 40 the shares are 5.4 and 4.6 around the fair
    # share 5: off by 0.4, within 10% (0.5) and 20% (1.0). So 40 - 10 = 30 s for both.
    assert m.convergence_time(t, X, 0.2) == pytest.approx(30.0)
    assert m.convergence_time(t, X, 0.1) == pytest.approx(30.0)
    # An excursion at t = 60 (7 and 3: off by 2 > 1) restarts the clock: 61 - 10 = 51 s.
    X2 = X.copy()
    X2[60] = [7.0, 3.0]
    assert m.convergence_time(t, X2, 0.2) == pytest.approx(51.0)
    # With 2 s of trailing mean, t = 60 and 61 both average (5.4, 7) = 6.2 against a share of
    # 5: off by 1.2 > 1, so the flows settle at t = 62: 52 s.
    assert m.convergence_time(t, X2, 0.2, smooth=2.0) == pytest.approx(52.0)
    # A fixed fair share of 6: 5.4 is within 20% (1.2) but 4.6 is not (1.4): never.
    assert math.isnan(m.convergence_time(t, X, 0.2, fair_share=6.0))
    # Unequal to the end: never.
    X3 = X.copy()
    X3[-1] = [9.0, 1.0]
    assert math.isnan(m.convergence_time(t, X3, 0.2))
    # Within the band from the start on: 0.
    assert m.convergence_time(t, X, 0.2, start=50.0) == 0.0


def test_convergence_time_sustained():
    t, X = _two_flows()  # both running from t = 10, within 10% from t = 40 on (see above)
    # A late excursion at t = 95 (9 and 1) decides "to the end of the run": 96 - 10 = 86 s.
    late = X.copy()
    late[95] = [9.0, 1.0]
    assert m.convergence_time(t, late, 0.2) == pytest.approx(86.0)
    # Held for 30 s: t = 40 opens 55 in-band samples (40-94): 40 - 10 = 30 s, as without it.
    assert m.convergence_time(t, late, 0.2, hold=30.0) == pytest.approx(30.0)
    # An excursion at t = 60 leaves 40-59 (20 samples of 1 s: 20 s) and 61-99 (39 s): held
    # for 15 s the first counts (30 s), for 30 s only the second (61 - 10 = 51 s), for 40 s none.
    early = X.copy()
    early[60] = [7.0, 3.0]
    assert m.convergence_time(t, early, 0.2, hold=15.0) == pytest.approx(30.0)
    assert m.convergence_time(t, early, 0.2, hold=30.0) == pytest.approx(51.0)
    assert math.isnan(m.convergence_time(t, early, 0.2, hold=40.0))
    # In the band from the start on (t = 50: 50 in-band samples) for 50 s: 0; for 51 s: never.
    assert m.convergence_time(t, X, 0.2, start=50.0, hold=50.0) == 0.0
    assert math.isnan(m.convergence_time(t, X, 0.2, start=50.0, hold=51.0))


def test_congestion_epochs():
    # Events at 1, 3, 7, 8 s: epochs of 2, 4 and 1 s.
    assert list(m.congestion_epochs([1, 3, 7, 8])) == [2, 4, 1]
    # The epoch ending at 7 s ended in a timeout: dropped, leaving 2 and 1.
    assert list(m.congestion_epochs([1, 3, 7, 8], include_timeouts=False, timeouts=[0, 0, 1, 0])) == [2, 1]


def test_epoch_shape_linear_and_cubic():
    # Linear growth 50 + 5 t sampled every 0.5 s between losses at 0 and 10 s: trough
    # 52.5 at 0.5 s, midpoint (0.5 + 10) / 2 = 5.25 s where the step value is w(5) = 75,
    # end w(9.5) = 97.5: (75 - 52.5) / (97.5 - 52.5) = 0.5.
    t = np.arange(0.5, 10, 0.5)
    assert m.epoch_shape(t, 50 + 5 * t, [0, 10]) == pytest.approx([0.5])
    # Cubic epoch W = 100 - 30 (1 - t/10)^3 ending on its plateau: at the midpoint
    # W = 100 - 30/8, so g1 / (g1 + g2) = (30 - 30/8) / 30 = 7/8 (dense sampling).
    tc = np.arange(0.001, 10, 0.001)
    wc = 100 - 30 * (1 - tc / 10) ** 3
    assert m.epoch_shape(tc, wc, [0, 10])[0] == pytest.approx(0.875, abs=0.002)


def test_plateau_fraction():
    # Linear growth never changes by less than 3% of its rise over a tenth of the epoch: 0.
    t = np.arange(0.01, 10, 0.01)
    assert m.plateau_fraction(t, 50 + 5 * t, [0, 10], [100, 100]) == pytest.approx(0.0)
    # Cubic epoch W = 100 - R u^3, u = 1 - t/10, R = 30, W_max = 100: over a tenth of the
    # epoch it changes by R ((u + 0.05)^3 - (u - 0.05)^3) = R (0.3 u^2 + 0.00025), below
    # 0.03 R when u < 0.315: the last 31.5% of the epoch, all within 20% of W_max.
    wc = 100 - 30 * (1 - t / 10) ** 3
    assert m.plateau_fraction(t, wc, [0, 10], [100, 100]) == pytest.approx(0.315, abs=0.015)
    # The same shape far from W_max (loss window 200: 100 is 50% off) is not a plateau.
    assert m.plateau_fraction(t, wc, [0, 10], [200, 200]) == pytest.approx(0.0)
    assert math.isnan(m.plateau_fraction(t, wc, [5], [100]))


def test_flow_completion_times():
    sizes = [1, 5, 10, 50, 200]
    fcts = [0.1, 0.2, 0.3, 0.4, math.nan]
    d = m.flow_completion_times(sizes, fcts, bins=[1, 10, 100, 1000])
    # [1, 10): 0.1 and 0.2 -> mean 0.15, median 0.15, p95 = 0.1 + 0.95 * 0.1 = 0.195.
    assert list(d["count"]) == [2, 2, 1]
    assert d["mean"][0] == pytest.approx(0.15) and d["p95"][0] == pytest.approx(0.195)
    # [10, 100): 0.3, 0.4 -> 0.35. [100, 1000): one object that never finished.
    assert d["mean"][1] == pytest.approx(0.35)
    assert d["unfinished"][2] == 1 and math.isnan(d["mean"][2])
    # Default bins: one per decade from 1 to 1000.
    assert len(m.flow_completion_times(sizes, fcts)) == 3


def test_helpers_over_results_tables():
    flows = pd.DataFrame({
        "t": [1, 1, 2, 2, 3, 3.0], "flow": [0, 1, 0, 1, 0, 1],
        "group": ["a", "a", "a", "a", "a", "a"], "goodput_bps": [1, 3, 2, 4, 3, 5.0]})
    # Flow 0 after t0 = 1: (2 + 3) / 2 = 2.5; flow 1: (4 + 5) / 2 = 4.5.
    mt = m.mean_throughput(flows, t0=1)
    assert mt[0] == pytest.approx(2.5) and mt[1] == pytest.approx(4.5)
    # Group "a": per-time sums 6, 8 -> 7.
    assert m.mean_throughput(flows, t0=1, by="group")["a"] == pytest.approx(7.0)
    t, X = m.throughput_matrix(flows)
    assert list(t) == [1, 2, 3] and X.shape == (3, 2) and X[2, 1] == 5
    # (1, 2, 3, NaN): mean 2, sample std 1, min 1, max 3, n 3.
    assert m.mean_spread([1, 2, 3, math.nan]) == {"mean": 2.0, "std": 1.0, "min": 1.0, "max": 3.0, "n": 3}


def test_loss_synchronisation_share():
    from cubiclab.experiments.diagnostics import sync_share

    # Bursts with a gap of 0.1 s: {0.00 f0, 0.05 f1} (two flows), {1.0 f0, 1.02 f0} (one flow),
    # {2.0 f1} (one flow): 1 of 3 bursts hits several flows.
    t = [0.0, 0.05, 1.0, 1.02, 2.0]
    f = [0, 1, 0, 0, 1]
    assert sync_share(t, f, gap=0.1) == pytest.approx(1 / 3)
    # unsorted input gives the same; a gap wider than everything makes one burst of two flows
    assert sync_share(t[::-1], f[::-1], gap=0.1) == pytest.approx(1 / 3)
    assert sync_share(t, f, gap=5.0) == 1.0
    assert math.isnan(sync_share([], [], gap=0.1))


def test_diagnostic_sentence_is_built_from_numbers():
    from cubiclab.experiments.diagnostics import describe

    s = describe({"sync_share": 0.25, "recoveries": 12, "timeouts": 0, "window_s": 100.0, "cwnd_at_loss": 135.0,
                  "queue_fill": 0.5, "jain": 0.8, "share_shift": 0.1})
    assert s == ("25% of drop episodes hit several flows at once; 12 fast recoveries and 0 timeouts in 100 s; "
                 "median window at loss 135 packets; queue 50% full on average; Jain's index 0.80, the flows' "
                 "shares still moved by up to 10 points between the window's halves.")


def test_t_quantile_closed_forms():
    from statistics import NormalDist

    from cubiclab.metrics import t_quantile

    for p in (0.9, 0.975, 0.995):
        # dof 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/pi.
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
        # dof 2: F(t) = 1/2 + t / (2 sqrt(2 + t^2)), so t = (2p - 1) / sqrt(2 p (1 - p)).
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
        # Many degrees of freedom: the normal quantile, t = z + (z^3 + z) / (4 dof) + O(dof^-2).
        z = NormalDist().inv_cdf(p)
        assert t_quantile(p, 5000) == pytest.approx(z + (z**3 + z) / 20000, rel=1e-6)
