"""Tests of cubiclab.models and cubiclab.units. Each expected number is derived in a comment
from the equations of the seed papers (000: Ha/Rhee/Xu 2008, 001: Rhee/Xu 2005, 004: Bao/
Wong/Leung) or of the cited references (Mathis 1997, PFTK 1998, RFC 3649)."""

import math
import subprocess
import sys
import time

import numpy as np
import pytest

from cubiclab import cli
from cubiclab.models import markov, response
from cubiclab.models.markov import markov_model
from cubiclab.models.validate import rms_error, simulate_chain
from cubiclab.units import parse_buffer, parse_percent, parse_rate, parse_size, parse_time, parse_time_s

# Seed 004's defaults: C = 100 Mb/s, RTT = 100 ms (W = 1e7 bits), alpha = "1 Mb/s" = 1e6 bits/s^3.
BAO = dict(capacity=100e6, rtt=0.1, alpha=1e6, beta=0.5, loss_rate=1.0, n_states=100)


def x(**kw):
    return markov_model(**{**BAO, **kw}).normalized_throughput


# ---- the Markov chain (seed 004) ---------------------------------------------------------


@pytest.mark.parametrize("beta,lam", [(0.5, 1.0), (0.7, 0.3), (0.9, 5.0), (0.33, 0.0)])
def test_transition_rows_sum_to_one_and_eq10_zeros(beta, lam):
    r = markov_model(**{**BAO, "beta": beta, "loss_rate": lam, "n_states": 60})
    P = r.P
    # Eq. 15 makes each row a distribution; we compute P_iN in closed form (the telescoped
    # sum), so this checks the tmin/tmax bookkeeping of Eqs. 12-14, not an identity.
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert P.min() >= 0.0
    n = P.shape[0]
    i = np.arange(1, n + 1)[:, None]
    j = np.arange(1, n + 1)[None, :]
    # Eq. 10: the window never falls below beta * a_i, so P_ij = 0 for j < beta (i - 0.5).
    below = j < beta * (i - 0.5)
    assert below.any()
    assert np.all(P[below] == 0.0)
    if lam > 0:
        # Every interval strictly above beta a_i is reached with positive probability
        # (the Poisson loss can fall in any time slot); the last column, P_iN, too.
        assert np.all(P[(j > beta * (i - 0.5))] > 0.0)
    else:
        # lambda = 0: no random loss, every epoch ends with a congestion loss at W: P_iN = 1.
        assert np.all(P[:, -1] == 1.0)


def test_stationary_distribution_is_a_fixed_point_and_solvers_agree():
    r = markov_model(**BAO)
    pi = r.pi
    assert pi.min() >= 0 and math.isclose(pi.sum(), 1.0, abs_tol=1e-12)
    assert np.allclose(pi @ r.P, pi, atol=1e-12)  # Eq. 16
    assert list(r.stationary.columns) == ["state", "window", "lower", "upper", "probability"]
    # a_i = (i - 0.5) W / N: a_1 = 0.5 * 1e7 / 100 = 5e4 bits, a_100 = 9.95e6 bits.
    assert r.stationary.window.iloc[0] == 5e4 and r.stationary.window.iloc[-1] == 9.95e6
    for method in ("lstsq", "eig"):
        other = markov_model(**BAO, method=method)
        assert np.allclose(other.pi, pi, atol=1e-10)
        assert math.isclose(other.normalized_throughput, r.normalized_throughput, rel_tol=1e-10)


def test_paper_result_alpha_0_1_to_10_gives_806_percent():
    # Seed 004 Sec. III-B: "When lambda = 1/s, the average normalized throughput increases
    # by about 806% when alpha grows from 0.1 Mb/s to 10 Mb/s" (C = 100 Mb/s, RTT = 100 ms,
    # beta = 0.5, N = 100). With alpha in bits/s^3 (0.1 Mb/s = 1e5) we get x = 0.07529 and
    # 0.68220: 0.68220 / 0.07529 - 1 = +806.07%.
    lo, hi = x(alpha=0.1e6), x(alpha=10e6)
    gain = (hi / lo - 1) * 100
    assert abs(gain - 806) < 1.0, gain
    assert abs(lo - 0.0753) < 1e-3 and abs(hi - 0.6822) < 1e-3


def test_paper_result_beta_0_5_to_0_9_gives_137_percent():
    # Seed 004: "increases by about 137% when beta grows from 0.5 to 0.9" (alpha = 1 Mb/s,
    # lambda = 1, N = 100); beta is the fraction *kept*. We get 0.36254 -> 0.86047: +137.34%.
    lo, hi = x(beta=0.5), x(beta=0.9)
    gain = (hi / lo - 1) * 100
    assert abs(gain - 137) < 1.0, gain


def test_no_random_loss_gives_the_deterministic_cubic_average():
    # lambda = 0: only congestion losses at W, so pi = e_N and tau_NN = D(a_N, (N-0.5)W/N)
    # = cbrt(0) + L = L (the whole concave epoch K). Eq. 19: s = a_N L + alpha/4 (0 - L^4)
    # = a_N L (1 - (1 - beta)/4) since alpha L^3 = (1 - beta) a_N. Eq. 21: x = a_N/W (3 + beta)/4
    # = (1 - 0.5/N)(3 + beta)/4 = 0.995 * 0.875 = 0.870625 for N = 100, beta = 0.5.
    assert math.isclose(x(loss_rate=0.0), 0.995 * 0.875, rel_tol=1e-12)


def test_throughput_depends_on_bdp_over_alpha_only():
    # Seed 004 Sec. III-B: P, pi, s/W and tau depend on C*RTT/alpha only. Scaling C and alpha
    # by 7 (or RTT and alpha by 3) leaves x unchanged.
    base = x()
    assert math.isclose(x(capacity=700e6, alpha=7e6), base, rel_tol=1e-9)
    assert math.isclose(x(rtt=0.3, alpha=3e6), base, rel_tol=1e-9)
    # ...and more random loss or a larger BDP lowers it (Figs. 4, 5).
    assert x(loss_rate=2.0) < base < x(loss_rate=0.5)
    assert x(capacity=1e9) < base


def test_n1000_runs_quickly(capsys):
    times = []
    for _ in range(3):  # best of 3: the machine may be shared
        t = time.perf_counter()
        r = markov_model(**{**BAO, "n_states": 1000})
        times.append(time.perf_counter() - t)
    with capsys.disabled():
        print(f"\n[timing] markov_model N=1000: best {min(times) * 1e3:.0f} ms, worst {max(times) * 1e3:.0f} ms "
              f"(not asserted), x = {r.normalized_throughput:.6f}")
    # N = 1000 refines N = 100 (0.36254) by a quantization correction below 1%.
    assert abs(r.normalized_throughput / x() - 1) < 0.01


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(beta=1.0), r"beta .*\(0, 1\)"),
        (dict(beta=0.0), r"beta .*\(0, 1\)"),
        (dict(alpha=0.0), r"alpha .*> 0"),
        (dict(alpha=-1.0), r"alpha .*> 0"),
        (dict(loss_rate=-0.1), r"loss_rate .*>= 0"),
        (dict(n_states=1), r"n_states .*>= 2"),
        (dict(n_states=2.5), r"n_states .*integer"),
        (dict(capacity=0.0), r"capacity .*> 0"),
        (dict(rtt=-0.1), r"rtt .*> 0"),
    ],
)
def test_bad_model_inputs_name_the_parameter(kw, match):
    with pytest.raises(ValueError, match=match):
        markov_model(**{**BAO, **kw})


def test_growth_time_handles_negative_cube_roots():
    # D(x, y) with y < x needs the real cube root: x = 8e6, y = 7e6, alpha = 1e6, beta = 0.5:
    # cbrt(-1) + cbrt(4) = -1 + 1.5874 = 0.5874 s (a ** (1/3) would give NaN).
    assert math.isclose(float(markov.growth_time(8e6, 7e6, 1e6, 0.5)), -1 + 4 ** (1 / 3), rel_tol=1e-12)
    # Below beta x it is negative: D(8e6, 3e6) = cbrt(-5) + cbrt(4) < 0 (clipped by (.)^+).
    assert markov.growth_time(8e6, 3e6, 1e6, 0.5) < 0
    # and w(x, D(x, y)) = y (Eq. 4 inverts Eq. 5).
    t = markov.growth_time(8e6, 7e6, 1e6, 0.5)
    assert math.isclose(float(markov.window_after(8e6, t, 1e6, 0.5)), 7e6, rel_tol=1e-12)


# ---- the validator (seed 004 Sec. III-A, Eq. 22) ------------------------------------------


def test_rms_error_falls_as_the_number_of_loss_events_grows():
    # Sampling error of a histogram of K correlated draws shrinks like 1/sqrt(K): from
    # K = 100 to 10000 we expect about a tenth; we ask for less than a third, on 5 seeds each.
    pi = markov_model(**BAO).pi
    kw = {k: v for k, v in BAO.items() if k != "n_states"}
    small = [rms_error(pi, simulate_chain(**kw, n_events=100, seed=s).distribution(100)) for s in range(5)]
    large = [rms_error(pi, simulate_chain(**kw, n_events=10000, seed=s).distribution(100)) for s in range(5)]
    assert np.mean(large) < np.mean(small) / 3
    assert max(large) < min(small)


def test_simulator_trajectory_and_throughput():
    kw = {k: v for k, v in BAO.items() if k != "n_states"}
    sim = simulate_chain(**kw, n_events=20000, seed=7)
    xs = sim.windows
    # x_{k+1} = w(x_k, tau_k) lies in [beta x_k, W]: the window only grows after a reduction.
    assert np.all(xs[1:] >= 0.5 * xs[:-1] - 1e-6) and xs.max() <= 1e7 and xs.min() > 0
    # Same seed, same run.
    assert np.array_equal(simulate_chain(**kw, n_events=50, seed=3).windows, simulate_chain(**kw, n_events=50, seed=3).windows)
    # Fig. 4: simulated and analytical throughput agree (model 0.3625; sim 0.36 +- 0.01).
    assert abs(sim.normalized_throughput - x()) < 0.02
    assert rms_error([0.5, 0.5], [1.0, 0.0]) == 0.5  # sqrt((0.25 + 0.25) / 2)


# ---- response functions (seeds 000, 001; Mathis, PFTK, RFC 3649) ------------------------


def test_mathis_and_seed000_example_at_p_1e6_rtt_10ms():
    # sqrt(3 / (2 * 1e-6)) = sqrt(1.5e6) = 1224.74; seed 000 says "1200 packets" (RFC 3649's
    # rounded 1.2/sqrt(p) = 1200 exactly): 1200 * 1500 B * 8 / 10 ms = 1.44 Gbps as it says.
    assert math.isclose(float(response.mathis_window(1e-6)), 1224.744871, rel_tol=1e-9)
    assert math.isclose(response.RFC3649_TCP_CONSTANT / math.sqrt(1e-6) * 1500 * 8 / 0.01, 1.44e9)
    # "CUBIC achieves exactly the same rate as Standard TCP": Eq. 6 gives 1.1741 * (0.01/1e-6)^0.75
    # = 1174.05 < 1224.74, so the TCP-friendly window wins.
    assert math.isclose(float(response.cubic_window(1e-6, 0.01, tcp_friendly=False)), 1174.0549, rel_tol=1e-6)
    assert math.isclose(float(response.cubic_window(1e-6, 0.01)), float(response.mathis_window(1e-6)), rel_tol=1e-12)
    # "whereas HSTCP is about ten times more aggressive": 0.12 / 1e-6^0.835 = 12279.5 = 10.03x.
    ratio = float(response.hstcp_window(1e-6) / response.mathis_window(1e-6))
    assert 9.5 < ratio < 10.5


def test_eq6_constant_from_eq5():
    # (C (4 - beta) / (4 beta))^(1/4) with C = 0.4, beta = 0.2: (0.4 * 3.8 / 0.8)^(1/4) = 1.9^(1/4) = 1.1741.
    assert round(response.cubic_eq6_constant(0.4, 0.2), 2) == 1.17
    assert math.isclose(response.cubic_eq6_constant(0.4, 0.2), 1.9**0.25, rel_tol=1e-12)
    # Seed 001's beta = 0.8 *kept* is the same curve.
    p = np.array([1e-7, 1e-5])
    assert np.allclose(response.cubic_window_rx05(p, 0.1), response.cubic_window(p, 0.1, decrease=0.2))


def test_eq6_short_epoch_ratio_integrates_the_profile():
    # An epoch cut at T = K (1 - x): integrate W(t) = W_max - C (K - t)^3 over [0, T] numerically
    # (1/p = its packets, the average its time-mean) and put that p into Eq. 5. W_max = 342,
    # C = 0.4, beta = 0.2 (K = cbrt(171) = 5.55 s), RTT 10 ms; x = 0.24 is a 4.22 s epoch.
    c, beta, rtt, w_max = 0.4, 0.2, 0.01, 342.0
    k = (w_max * beta / c) ** (1 / 3)
    for x in (0.0, 0.1, 0.24, 0.5):
        t = np.linspace(0.0, k * (1 - x), 200001)
        w = w_max - c * (k - t) ** 3
        mean = float(np.mean((w[1:] + w[:-1]) / 2))  # trapezoid on a uniform grid
        p = rtt / (mean * t[-1])
        expected = mean / float(response.cubic_window(p, rtt, c, beta, tcp_friendly=False))
        assert math.isclose(float(response.cubic_eq6_short_epoch_ratio(x, beta)), expected, rel_tol=1e-6)
    # Closed form at x = 0.24: ((1 - 0.05 * 1.24 * 1.0576) / 0.95)^(1/4) * 0.76^(-3/4) = 0.99588 * 1.22853
    assert math.isclose(float(response.cubic_eq6_short_epoch_ratio(0.24)), 1.22347, rel_tol=1e-4)
    with pytest.raises(ValueError, match="must be in \\[0, 1\\)"):
        response.cubic_eq6_short_epoch_ratio(1.0)


def test_eq5_against_a_numerically_integrated_epoch():
    # Independent check of Eq. 5: one deterministic epoch with W_max = 1000, C = 0.4,
    # beta = 0.2, RTT = 0.1 s. K = cbrt(1000 * 0.2 / 0.4) = 7.937 s. Integrate W(t) on [0, K]:
    # packets = int W dt / RTT, p = 1 / packets, average window = int W dt / K; Eq. 5 at this
    # p must return that average (= 1000 * 3.8 / 4 = 950).
    wmax, c, beta, rtt = 1000.0, 0.4, 0.2, 0.1
    k = (wmax * beta / c) ** (1 / 3)
    t = np.linspace(0, k, 200001)
    w = c * (t - k) ** 3 + wmax
    area = float(np.sum((w[1:] + w[:-1]) / 2 * np.diff(t)))
    p = rtt / area
    assert math.isclose(area / k, 950.0, rel_tol=1e-6)
    assert math.isclose(float(response.cubic_window(p, rtt, c, beta, tcp_friendly=False)), area / k, rel_tol=1e-6)


def test_tcp_friendly_aimd_is_tcp_and_region_boundary():
    # Seed 000 Eq. 3 with alpha = 3 beta / (2 - beta): alpha/2 (2 - beta)/beta = 3/2, i.e. TCP.
    for beta in (0.2, 0.3, 0.5):
        assert np.isclose(response.aimd_window(1e-4, 3 * beta / (2 - beta), beta), response.mathis_window(1e-4))
    # Boundary p* = C (4 - beta)/(4 beta) RTT^3 / 2.25 = 1.9 * 0.1^3 / 2.25 = 8.444e-4 at 100 ms,
    # where Eq. 5 equals Mathis. Seed 001's "0.000144" (0.36 C RTT^3) is NOT reproduced; see
    # the docstring of cubic_tcp_friendly_loss_rate.
    p_star = float(response.cubic_tcp_friendly_loss_rate(0.1))
    assert math.isclose(p_star, 1.9e-3 / 2.25, rel_tol=1e-12)
    assert math.isclose(float(response.cubic_window(p_star, 0.1, tcp_friendly=False)),
                        float(response.mathis_window(p_star)), rel_tol=1e-9)
    assert math.isclose(float(response.cubic_tcp_friendly_rtt(p_star)), 0.1, rel_tol=1e-9)
    assert abs(p_star - 1.44e-4) > 5e-4  # the seed-001 number differs by 5.9x


def test_hstcp_and_padhye():
    # RFC 3649: 0.12 / 0.001^0.835 = 0.12 * 10^2.505 = 38.39 (the switch at Low_Window = 38);
    # below it, standard TCP: p = 0.01 -> sqrt(150) = 12.25.
    assert math.isclose(float(response.hstcp_window(1e-3)), 0.12 * 10**2.505, rel_tol=1e-9)
    assert math.isclose(float(response.hstcp_window(1e-2)), math.sqrt(150), rel_tol=1e-12)
    # PFTK full model: for small p the timeout terms vanish and E[W] -> sqrt(8/(3bp)), so the
    # window B * RTT -> sqrt(3 / (2 b p)) (Mathis): within 0.01% at p = 1e-8.
    assert math.isclose(float(response.padhye_window(1e-8, 0.1)), float(response.mathis_window(1e-8)), rel_tol=1e-4)
    # Timeouts make it lower than Mathis at high loss, and the approximation (Eq. 31) tracks it.
    full, approx = float(response.padhye_window(0.01, 0.1)), float(response.padhye_approx_window(0.01, 0.1))
    assert full < float(response.mathis_window(0.01)) and abs(full / approx - 1) < 0.05
    # Receiver-window limited: at p = 1e-6 E[W] = 1633 > W_max = 20, so the window is ~20.
    assert 19.0 < float(response.padhye_window(1e-6, 0.1, w_max=20)) <= 20.0
    with pytest.raises(ValueError, match=r"p \(loss rate\) must be in \(0, 1\]"):
        response.mathis_window(0.0)


# ---- CLI ------------------------------------------------------------------------------------


def test_cli_model_markov_and_bad_beta(capsys):
    assert cli.main(["model", "markov", "--capacity", "100Mbps", "--rtt", "100ms", "--alpha", "1e6",
                     "--beta", "0.5", "--loss-rate", "1", "--states", "100"]) == 0
    out = capsys.readouterr().out
    assert "normalized throughput: 0.362545" in out and "probability" in out
    assert cli.main(["model", "markov", "--beta", "1.2"]) == 2
    assert "beta" in capsys.readouterr().err
    bad = subprocess.run([sys.executable, "-m", "cubiclab.cli", "model", "markov", "--beta", "0"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "beta" in bad.stderr and "(0, 1)" in bad.stderr


def test_cli_model_json_and_response(capsys):
    import json

    assert cli.main(["model", "markov", "--states", "10", "--alpha", "1Mbps", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["params"]["alpha"] == 1e6 and len(d["stationary"]) == 10
    assert math.isclose(sum(s["probability"] for s in d["stationary"]), 1.0)
    assert cli.main(["model", "response", "--model", "all", "--rtt", "10ms", "--loss", "1e-6", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    w = d["windows"][0]
    assert math.isclose(w["tcp"], 1224.744871, rel_tol=1e-9) and math.isclose(w["cubic"], w["tcp"], rel_tol=1e-12)
    assert cli.main(["model", "response", "--rtt", "fast"]) == 2
    assert "rtt" in capsys.readouterr().err


def test_cli_response_calls_the_fraction_removed_decrease(capsys):
    # One meaning per word: `model markov --beta` and every algorithm's `beta` are the fraction
    # kept; `model response` took --beta as the fraction removed (0.2). It is --decrease now,
    # and --beta is refused naming it. Eq. 5 with decrease 0.3 against 0.2: E[W] scales as
    # ((4 - d) / (4 d))^(1/4) (response.py), the model's own arithmetic.
    import json

    windows = {}
    for d in (0.2, 0.3):
        assert cli.main(["model", "response", "--model", "cubic_pure", "--decrease", str(d), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["decrease"] == d and "beta" not in out
        windows[d] = out["windows"][0]["cubic_pure"]
    ratio = ((4 - 0.3) / (4 * 0.3) / ((4 - 0.2) / (4 * 0.2))) ** 0.25
    assert math.isclose(windows[0.3] / windows[0.2], ratio, rel_tol=1e-9)
    assert cli.main(["model", "response", "--beta", "0.2"]) == 2
    assert "--beta of `model response` is now --decrease" in capsys.readouterr().err


def test_figures_write_pngs(tmp_path):
    from cubiclab.models.figures import reproduce_all

    paths = reproduce_all(tmp_path, quick=True)
    assert set(paths) == {"ha_fig3", "bao_fig3", "bao_fig4", "bao_fig5", "bao_fig6", "bao_fig7"}
    for name, p in paths.items():
        assert p.stat().st_size > 1000 and (tmp_path / f"{name}.csv").exists()


# ---- units ----------------------------------------------------------------------------------


def test_units_rates_and_times():
    assert parse_rate("100Mbps") == 100_000_000
    assert parse_rate("1Gbps") == 10**9 and parse_rate("1.5 Kbps") == 1500 and parse_rate("2Mbit/s") == 2 * 10**6
    assert parse_rate("10MB/s") == 80_000_000  # capital B: bytes
    assert parse_rate("1e6", default_unit="bps") == 10**6
    assert parse_time("100ms") == 100_000_000 and parse_time("250us") == 250_000 and parse_time("1_000ns") == 1000
    assert parse_time_s("0.1s") == 0.1 and parse_time_s("100ms") == 0.1 and parse_time("2min") == 120 * 10**9
    with pytest.raises(ValueError, match=r"rtt: '100' has no unit; accepted forms: .*100ms"):
        parse_time("100", "rtt")
    with pytest.raises(ValueError, match=r"capacity: unknown rate unit 'Mbs'"):
        parse_rate("100Mbs", "capacity")
    with pytest.raises(ValueError, match="negative"):
        parse_time("-5ms", "rtt")
    with pytest.raises(ValueError, match="cannot parse"):
        parse_rate("fast", "capacity")
    with pytest.raises(ValueError, match="cannot parse"):
        parse_time("nan s")
    with pytest.raises(ValueError, match="not a quantity"):
        parse_rate(True)


def test_units_sizes_percent_buffer():
    assert parse_size("1500B") == 1500 and parse_size("64KB") == 64_000 and parse_size("1MiB") == 2**20
    assert parse_size("100packets", mss=1500) == 150_000
    with pytest.raises(ValueError, match="packet size"):
        parse_size("100 packets")
    with pytest.raises(ValueError, match="bits"):
        parse_size("64Kb", "buffer")
    assert parse_percent("1%") == 0.01 and parse_percent("0.5 %") == 0.005 and parse_percent("0.01") == 0.01
    with pytest.raises(ValueError, match="more than 100%"):
        parse_percent("150%", "loss")
    # 100 Mbps x 40 ms = 4e6 bit = 500 kB.
    bdp = 100_000_000 * 40 // 1000 // 8
    assert parse_buffer("100%BDP", bdp_bytes=bdp) == 500_000 and parse_buffer("2xBDP", bdp_bytes=bdp) == 1_000_000
    assert parse_buffer("20packets", mss=1500) == 30_000
    with pytest.raises(ValueError, match="BDP is not known"):
        parse_buffer("100%BDP")


def test_the_python_api_calls_the_fraction_removed_decrease():
    # One meaning per word in the Python API too: a parameter named beta is a fraction kept
    # (markov_model, bridge, every algorithm); the response functions take seed 000's beta,
    # the fraction removed, as `decrease`. Eq. 6's constant at decrease 0.2 is 1.9^(1/4).
    import inspect

    from cubiclab.models import figures

    removed = [response.aimd_window, response.cubic_eq6_constant, response.cubic_window,
               response.cubic_eq6_short_epoch_ratio, response.cubic_tcp_friendly_loss_rate,
               response.cubic_tcp_friendly_rtt, response.response_table, figures.ha_fig3_data]
    for f in removed:
        params = inspect.signature(f).parameters
        assert "beta" not in params and "decrease" in params, f.__name__
    assert math.isclose(response.cubic_eq6_constant(decrease=0.2), 1.9**0.25, rel_tol=1e-12)
    with pytest.raises(ValueError, match="decrease"):
        response.cubic_window(1e-6, 0.01, decrease=1.5)
