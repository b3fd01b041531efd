"""The seed entries' claim metrics (python/cubiclab/experiments/seed000.py .. seed004.py),
computed on hand-made rows: each entry's per-seed claim values from the rows of its runs
(the columns its per_run produces, the tags its conditions set), through the pipeline's own
per-seed step (Experiment._seed_values), with the right answers derived by hand; and the
per_run measurements that are the entry's own (beyond cubiclab.metrics, which
tests/test_metrics.py covers) on tiny constructed results; the model entries' reductions of
stand-in model tables; the numbers the entries' own explanations quote. Never whether a claim
holds."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from cubiclab.experiments import CATALOG, base, seed000
from cubiclab.experiments.claims import Censored
from cubiclab.models import figures as model_figures

NAN = float("nan")
CUBIC0, CUBIC1, CUBIC2 = "cubic-2008", "cubic-2005", "cubic-2.0"  # the papers' CUBICs: seeds 000, 001, 002


def seed_values(name: str, rows: list[dict], variant_rows: dict | None = None) -> dict:
    """The claim values of `name` for one seed, as the pipeline computes them: `rows` (one
    per run, the paper's runs) get the columns every run's row carries (base.Experiment.
    _analyse) and go through Experiment._seed_values; `variant_rows` = {variant: rows}
    adds the sensitivity runs. Returns {claim id: value} (one seed: one value each)."""
    e = CATALOG[name]
    head = {"seed": 1, "warmup_s": 10.0, "epochs": 10.0, "capped": False, "planned_s": 100.0, "scale_to_plan": 1.0,
            "duration_s": 100.0, "sim_s": 1.0}
    frame = [{**head, "variant": "paper", **r} for r in rows]
    for variant, vr in (variant_rows or {}).items():
        frame += [{**head, "variant": variant, **r} for r in vr]
    per_seed = e._seed_values(pd.DataFrame(frame))
    assert all(len(v) == 1 for v in per_seed.values()), per_seed
    return {k: v[0] for k, v in per_seed.items()}


def paper_ids(name: str) -> set:
    return {c.id for c in CATALOG[name].claims}


def check(name: str, rows: list[dict], expected: dict):
    v = seed_values(name, rows)
    assert set(v) == set(expected)
    assert v == pytest.approx(expected, nan_ok=True)


# ---- seed 000 --------------------------------------------------------------------------------


FIG5_ROWS = [{"rtt": 8, "ratio": 0.95, "epoch_shape": 0.52}, {"rtt": 82, "ratio": 1.6, "epoch_shape": 0.7}]


def test_s000_fig5_ratios_and_epoch_shapes():
    # 8 ms: the ratio 0.95 and the shape 0.52 as they are; 82 ms: 1.6 - 1 = 0.6 ahead, shape 0.7.
    assert paper_ids("s000-fig5") == {"fair_at_8ms", "tcp_mode_at_8ms", "cubic_more_at_82ms",
                                           "cubic_growth_at_82ms"}
    check("s000-fig5", FIG5_ROWS, {"fair_at_8ms": 0.95, "tcp_mode_at_8ms": 0.52, "cubic_more_at_82ms": 0.6,
                                   "cubic_growth_at_82ms": 0.7})


# The seed entries whose claim values the tests below compute from rows (`check`, `seed_values`):
# a new entry fails the next test until it has its own.
ROWS_TESTED = {"s000-eq6", "s000-fig4", "s000-fig5", "s000-fig6", "s000-fig8", "s000-fig9", "s000-fig10a",
               "s000-fig10bc", "s001-fig3-4", "s001-exp1-2", "s001-exp3", "s002-grid", "s002-convergence",
               "s002-fast-convergence", "s002-buffer", "s002-rtt-unfairness", "s002-low-cwnd", "s002-missing-drop",
               "s002-epochs", "s002-completion-order", "s002-long-short", "s002-scaling-bug", "s002-friendliness",
               "s003-cubic-tahoe", "s004-packet", "s000-initial-ssthresh", "s001-rtt-fairness"}


def test_every_seed_entry_with_runs_has_a_values_test():
    with_values = {n for n, e in CATALOG.items()
                   if e.seed != "outside" and type(e).values is not base.Experiment.values}
    assert with_values == ROWS_TESTED


def test_sensitivity_twins_come_from_their_variants_runs_one_value_per_seed():
    # Fig. 5 with the v2.2 and linux variants and two seeds: each twin (id@variant) is computed
    # from its own variant's rows, one value per seed in seed order; the paper's ids from the
    # paper's rows only.
    e = CATALOG["s000-fig5"]
    rows = []
    for seed, bump in ((2, 0.1), (1, 0.0)):  # seed 2 first: the values still come in seed order
        for variant, r8 in (("paper", 1.0), ("v2.2", 0.8), ("linux", 0.5)):
            rows += [{"seed": seed, "variant": variant, "rtt": 8, "ratio": r8 + bump, "epoch_shape": 0.5},
                     {"seed": seed, "variant": variant, "rtt": 82, "ratio": 2.0, "epoch_shape": 0.9}]
    v = e._seed_values(pd.DataFrame(rows))
    assert v["fair_at_8ms"] == pytest.approx([1.0, 1.1])
    assert v["fair_at_8ms@v2.2"] == pytest.approx([0.8, 0.9])
    assert v["fair_at_8ms@linux"] == pytest.approx([0.5, 0.6])
    assert v["cubic_growth_at_82ms@linux"] == pytest.approx([0.9, 0.9])
    # an extension (cubic_more_at_82ms) has no twins
    assert "cubic_more_at_82ms@linux" not in v and v["cubic_more_at_82ms"] == pytest.approx([1.0, 1.0])
    assert set(v) == {c.id for c in e.table()}


FIG6_ROWS = [{"background": True, "cubic": 0.6, "sack": 0.2, "other": 0.15, "utilization": 0.95, "jain": 0.97},
             {"background": False, "cubic": 0.7, "sack": 0.3, "other": 0.0, "utilization": 1.0, "jain": 0.9}]


def test_s000_fig6_shares_with_and_without_background():
    # With background: the eight flows 0.6 + 0.2 = 0.8 (not the link's 0.95, which counts the
    # background), CUBIC 0.6, SACK 0.2, CUBIC's part 0.6 / 0.8 = 0.75, Jain 0.97; without
    # background CUBIC's part 0.7 / (0.7 + 0.3) = 0.7.
    check("s000-fig6", FIG6_ROWS, {"utilization": 0.8, "cubic_link_share": 0.6, "sack_link_share": 0.2, "cubic_fraction": 0.75,
                                   "cubic_fair": 0.97, "cubic_fraction_no_background": 0.7})


def test_s000_fig6_reads_the_background_run_not_the_quiet_one():
    # Broken on purpose: the two runs' tags swapped, so the quiet run's 0.7 would be CUBIC's share.
    swapped = [{**r, "background": not r["background"]} for r in FIG6_ROWS]
    assert seed_values("s000-fig6", swapped)["cubic_link_share"] == pytest.approx(0.7)


FIG8 = {  # alg: {rtt: (fairness, utilisation)}
    CUBIC0: {16: (0.90, 0.97), 324: (0.80, 0.93)},
    "bic": {16: (0.95, 0.96), 324: (0.85, 0.94)},
    "reno": {16: (0.99, 0.97), 324: (0.50, 0.60)},
    "highspeed": {16: (0.70, 0.98), 324: (0.60, 0.92)},
}


def fig8_rows(table=FIG8):
    return [{"alg": a, "rtt": r, "rtt_first": r, "rtt_second": r, "fairness": f, "utilization": u,
             "tput_first": 1e8, "tput_second": 1e8} for a, by in table.items() for r, (f, u) in by.items()]


def test_s000_fig8_fairness_and_utilisation():
    # Fairness averaged over the RTTs: CUBIC 0.85, BIC 0.90, SACK 0.745, HSTCP 0.65:
    # min(CUBIC, BIC) - max(SACK, HSTCP) = 0.85 - 0.745 = 0.105. At 16 ms SACK's 0.99 against
    # the best other, BIC's 0.95: 0.04. Lowest utilisation of CUBIC, BIC, HSTCP over both RTTs:
    # HSTCP's 0.92 at 324 ms. SACK's utilisation 0.97 at 16 ms - 0.60 at 324 ms = 0.37. HSTCP's
    # fairness averaged over the RTTs: 0.65.
    check("s000-fig8", fig8_rows(), {"cubic_bic_fairer": 0.105, "sack_fairest_at_16ms": 0.04, "hs_utilise": 0.92,
                                     "sack_underutilises": 0.37, "hstcp_unfair_same_rtt": 0.65})


def test_s000_fig8_averages_over_rtts_rather_than_taking_one():
    # Broken on purpose: SACK's fairness at 324 ms raised to 0.99 moves its mean to 0.99 and the
    # ordering to 0.85 - 0.99 = -0.14 (a metric reading 16 ms alone would not move).
    table = {**FIG8, "reno": {16: (0.99, 0.97), 324: (0.99, 0.60)}}
    assert seed_values("s000-fig8", fig8_rows(table))["cubic_bic_fairer"] == pytest.approx(-0.14)


# Fig. 9: the 162 ms flow's throughput over the other's at RTT ratio 1 (162 / 162) and 10
# (162 / 16.2): 1 and r. The log-log slope is then log10(r) / log10(10) = log10(r).
FIG9_RATIO_AT_10 = {"reno": 0.1, CUBIC0: 0.2, "highspeed": 0.01, "bic": 0.05}


def fig9_rows():
    rows = []
    for a, r in FIG9_RATIO_AT_10.items():
        rows.append({"alg": a, "rtt_first": 162, "rtt_second": 162.0, "tput_first": 1e8, "tput_second": 1e8,
                     "fairness": 1.0, "utilization": 0.95})
        rows.append({"alg": a, "rtt_first": 162, "rtt_second": 16.2, "tput_first": r * 1e8, "tput_second": 1e8,
                     "fairness": r, "utilization": 0.91 if a == "highspeed" else 0.80})
    # a third point on SACK's line 1 / ratio: RTT ratio 3 (162 / 54), throughput ratio 1/3
    rows.append({"alg": "reno", "rtt_first": 162, "rtt_second": 54.0, "tput_first": 1e8 / 3, "tput_second": 1e8,
                 "fairness": 1 / 3, "utilization": 0.9})
    return rows


def test_s000_fig9_slopes_and_ratios():
    # Slopes: SACK log10(0.1) = -1 (its three points on one line), CUBIC log10(0.2) = -0.699,
    # so CUBIC - SACK = log10(2) = 0.301; HSTCP log10(0.01) = -2, |-2 - (-1)| = 1. At RTT ratio
    # 10: CUBIC 0.2 - SACK 0.1 = 0.1; the lowest of the others, HSTCP's 0.01, minus BIC's 0.05 =
    # -0.04. HSTCP's lowest utilisation: 0.91.
    check("s000-fig9", fig9_rows(), {"sack_inverse_rtt": -1.0, "cubic_slope_like_sack": math.log10(2),
                                     "cubic_above_sack": 0.1, "hstcp_other_slope": 1.0, "bic_lowest": -0.04,
                                     "hstcp_utilise": 0.91})


def test_s000_fig9_ratio_is_the_long_rtt_flow_over_the_other():
    # Broken on purpose: SACK's flows the other way round at RTT ratio 10 (ratio 10, not 0.1)
    # turn its slope to +1.
    rows = fig9_rows()
    for r in rows:
        if r["alg"] == "reno":
            r["tput_first"], r["tput_second"] = r["tput_second"], r["tput_first"]
    assert seed_values("s000-fig9", rows)["sack_inverse_rtt"] == pytest.approx(1.0)


FIG10A = {  # alg: {rtt: (hs_share, sack_share, utilisation)}
    "reno": {10: (0.40, 0.42, 0.97), 160: (0.38, 0.39, 0.90)},
    CUBIC0: {10: (0.45, 0.40, 0.98), 160: (0.55, 0.30, 0.97)},
    "bic": {10: (0.50, 0.35, 0.98), 160: (0.70, 0.20, 0.99)},
    "highspeed": {10: (0.48, 0.37, 0.80), 160: (0.60, 0.25, 0.93)},
}


def test_s000_fig10a_shares():
    # With SACK as the "protocol" all eight flows are SACK: 0.38 + 0.39 = 0.77 at 160 ms.
    # Utilisation at 160 ms (HSTCP's 0.80 at 10 ms does not count): min(0.97, 0.99, 0.93) = 0.93.
    # Share growth 10 -> 160 ms: CUBIC 0.10, BIC 0.20, HSTCP 0.12: 0.10. SACK's share against
    # CUBIC minus the larger against BIC or HSTCP: 0.40 - 0.37 = 0.03 at 10 ms, 0.30 - 0.25 =
    # 0.05 at 160 ms: the smaller, 0.03.
    rows = [{"alg": a, "rtt": r, "hs_share": h, "sack_share": s, "utilization": u, "friendly_ratio": s / h}
            for a, by in FIG10A.items() for r, (h, s, u) in by.items()]
    check("s000-fig10a", rows, {"sack_80pct_at_160ms": 0.77, "hs_full": 0.93, "share_grows_with_rtt": 0.10,
                                "cubic_gives_room": 0.03})


FIG10BC_BWS = (20, 50, 100, 400)
FIG10BC = {  # rtt: {alg: friendly ratio at FIG10BC_BWS Mbps}
    10: {CUBIC0: (1.10, 1.20, 1.00, 0.90), "bic": (0.90, 0.70, 0.50, 0.30), "highspeed": (1.00, 0.80, 0.60, 0.50),
         "reno": (1.0, 1.05, 0.95, 1.0)},
    100: {CUBIC0: (0.50, 0.30, 0.20, 0.10), "bic": (0.60, 0.35, 0.15, 0.05), "highspeed": (0.70, 0.50, 0.30, 0.20),
          "reno": (1.0, 1.0, 1.0, 1.0)},
}


def fig10bc_rows():
    # the link busy 95% but in the SACK-only run at 10 ms, 400 Mbps (91%)
    return [{"alg": a, "rtt": rtt, "bw": b, "friendly_ratio": x, "hs_share": 0.4, "sack_share": 0.4,
             "utilization": 0.91 if (a, rtt, b) == ("reno", 10, 400) else 0.95}
            for rtt, by in FIG10BC.items() for a, xs in by.items() for b, x in zip(FIG10BC_BWS, xs)]


def test_s000_fig10bc_friendliness_ratios():
    # 10 ms: CUBIC's ratio minus the SACK-against-SACK baseline's at each bandwidth: 0.10, 0.15,
    # 0.05, -0.10: 0.15; the baseline runs' lowest utilisation 0.91; lowest - highest bandwidth:
    # BIC 0.90 - 0.30 = 0.60, HSTCP 1.00 - 0.50 = 0.50: 0.50. 100 ms: the lowest ratio at the
    # lowest bandwidth (20) min(0.50, 0.60, 0.70, 1.0) = 0.50; drops CUBIC 0.40, BIC 0.55, HSTCP
    # 0.50: 0.40; below 100 Mbps (100 itself is not below) HSTCP - max(CUBIC, BIC): 0.70 - 0.60 =
    # 0.10 at 20, 0.50 - 0.35 = 0.15 at 50: mean 0.125.
    check("s000-fig10bc", fig10bc_rows(), {"cubic_friendlier_than_sack": 0.15, "sack_full_at_10ms": 0.91,
                                           "bic_hstcp_scalable_10ms": 0.50, "reasonable_100ms": 0.50,
                                           "ratio_drops_100ms": 0.40, "cubic_bic_vs_hstcp_100ms": 0.125})


def test_s000_fig10bc_keeps_the_two_rtts_apart():
    # Broken on purpose: the 100 ms runs tagged 10 ms as well give two runs per point at 10 ms;
    # the entry must refuse rather than mix them.
    rows = [{**r, "rtt": 10} for r in fig10bc_rows()]
    with pytest.raises(ValueError):
        seed_values("s000-fig10bc", rows)


def test_s000_initial_ssthresh_start_up_ratios():
    # Delivered in the first 30 s: 100 Mb/s with v2.0's 100 packets, 200 removed, 220 at one
    # BDP: 200 / 100 = 2, 220 / 200 = 1.1.
    rows = [{"setting": k, "delivered_bps": x, "retransmits": 0.0}
            for k, x in (("v2.0 (100)", 100e6), ("removed", 200e6), ("one BDP", 220e6))]
    check("s000-initial-ssthresh", rows, {"removed_starts_faster": 2.0, "properly_set_helps": 1.1})


def test_s000_fig4_and_eq6_read_their_rows():
    # One run: its plateau fraction and convergence time as they are.
    check("s000-fig4", [{"plateau": 0.3, "convergence_s": 150.0, "never": False}],
          {"plateaus": 0.3, "fair_within_200s": 150.0})
    # a run that never converged (150 s were left after the second start): at least 150 s
    assert seed_values("s000-fig4", [{"plateau": 0.3, "convergence_s": 150.0, "never": True}])[
        "fair_within_200s"] == Censored(150.0)
    # Eq. 6: each point's ratio from the run tagged with its bandwidth and RTT.
    rows = [{"bw": b, "rtt": r, "ratio": x} for (b, r), x in zip(((100, 100), (400, 100), (400, 10)), (1.1, 1.2, 1.3))]
    check("s000-eq6", rows, {"eq6_100mbps_100ms": 1.1, "eq6_400mbps_100ms": 1.2, "eq6_400mbps_10ms": 1.3})


# ---- seed 001 --------------------------------------------------------------------------------


def test_s001_fig3_4_reads_its_run():
    check("s001-fig3-4", [{"plateau": 0.3, "utilization": 0.97, "cubic": 0.7, "tcp": 0.15, "convergence_s": 180.0,
                           "never": False}],
          {"plateaus": 0.3, "utilization": 0.97, "cubic_link_share": 0.7, "tcp_link_share": 0.15, "converge_220s": 180.0})
    assert seed_values("s001-fig3-4", [{"plateau": 0.3, "utilization": 0.97, "cubic": 0.7, "tcp": 0.15,
                                        "convergence_s": 180.0, "never": True}])["converge_220s"] == Censored(180.0)


def test_s000_cube_root_cost_is_the_printed_clocks_ratio():
    # 1032 clocks (bisection) over 79 (table + Newton-Raphson) = 13.06 for both words of it.
    vals, data, figs = CATALOG["s000-cube-root"].compute(base.TINY, None)
    assert vals == pytest.approx({"more_than_10x": 13.063, "almost_10x": 13.063}, abs=5e-4)
    assert (data, figs) == ({}, [])


def test_s001_rtt_fairness_slopes():
    # The 162 ms flow's throughput over the other's against their measured RTT ratio r (150 ms
    # of queueing on both: r = 312 / 166, 312 / 204, 1): the ratio r^-1 for CUBIC (slope -1),
    # r^-2 for standard TCP and r^-1.5 for BIC (slopes -2, -1.5). The propagation delays' ratio
    # (162 / 16 ...) is not read: rtt_other only names the run.
    r = {16: 312 / 166, 54: 312 / 204, 162: 1.0}
    rows = [{"alg": a, "rtt_other": o, "rtt_ratio": r[o], "ratio": r[o] ** k}
            for a, k in ((CUBIC1, -1.0), ("reno", -2.0), ("bic", -1.5)) for o in (16, 54, 162)]
    check("s001-rtt-fairness", rows, {"cubic_linear": -1.0, "tcp_square": -2.0, "bic_square": -1.5})


def test_s001_rtt_fairness_explains_with_the_propagation_delays_ratio():
    # Seed 1's throughput ratios are (162 / o)^-1, seed 2's (162 / o)^-2 over the propagation
    # ratios 162/16 = 10.125, 3, 1: slopes -1 and -2, mean -1.5; measured RTT ratios 2, 1.5, 1.
    rows = pd.DataFrame([{"seed": k, "alg": CUBIC1, "rtt_other": o, "rtt_ratio": r, "ratio": (162 / o) ** -k}
                         for k in (1, 2) for o, r in ((16, 2.0), (54, 1.5), (162, 1.0))])
    e = CATALOG["s001-rtt-fairness"]
    assert e.explain(e.claims[0], rows) == ("Against the propagation delays' ratio (10.1, 3, 1; measured RTTs' 2, 1.5, "
                                            "1) the slope is -1.5 (mean over 2 seeds).")


def test_s001_rtt_fairness_per_run_ratios_of_throughput_and_measured_rtt():
    # Flow 0 (162 ms) 1 Mb/s at srtt 300 and 320 ms (mean 310), flow 1 4 Mb/s at srtt 150 and
    # 160 ms (mean 155), samples at 1 and 2 s; the sample at 3 s lies outside (0, 2]:
    # throughput ratio 1 / 4, RTT ratio 310 / 155 = 2.
    flows = [{"t": t, "flow": f, "group": g, "throughput_bps": b, "srtt_ms": s}
             for f, g, b, ss in ((0, "first", 1e6, (300, 320, 900)), (1, "second", 4e6, (150, 160, 900)))
             for t, s in zip((1.0, 2.0, 3.0), ss)]
    res = results(flows, [{"flow": 0, "group": "first"}, {"flow": 1, "group": "second"}])
    assert CATALOG["s001-rtt-fairness"].per_run(None, res, 0.0, 2.0) == pytest.approx(
        {"ratio": 0.25, "rtt_ratio": 2.0})


EXP12 = {  # rtt: {alg: TCP-friendly ratio at 20, 100, 1000 Mbps}
    10: {CUBIC1: (0.95, 0.90, 0.85), "htcp": (0.90, 0.92, 0.88), "bic": (0.50, 0.60, 0.20),
         "highspeed": (0.70, 0.80, 0.30), "scalable": (0.25, 0.40, 0.10)},
    100: {CUBIC1: (0.80, 0.60, 0.40), "bic": (0.50, 0.30, 0.10), "highspeed": (0.60, 0.40, 0.20),
          "scalable": (0.30, 0.20, 0.10), "htcp": (0.70, 0.50, 0.30)},
}


def exp12_rows():
    rows = [{"alg": a, "rtt": rtt, "bw": b, "ratio": x, "utilization": 0.95}
            for rtt, by in EXP12.items() for a, xs in by.items() for b, x in zip((20, 100, 1000), xs)]
    rows[3]["utilization"] = 0.5  # HTCP at 10 ms, 20 Mbps: a mixed run, not the baseline
    # the TCP-only baseline at 10 ms: 0.97, 0.91, 0.96 busy
    rows += [{"alg": "tcp-only", "rtt": 10, "bw": b, "ratio": math.nan, "utilization": u}
             for b, u in zip((20, 100, 1000), (0.97, 0.91, 0.96))]
    return rows


def test_s001_exp1_2_friendly_ratios():
    # 10 ms: lowest of CUBIC and HTCP 0.85. Ratio(1 Gbps) / ratio(100 Mbps): BIC 0.2 / 0.6 = 1/3,
    # HSTCP 0.3 / 0.8 = 0.375, STCP 0.1 / 0.4 = 0.25: the largest 0.375. At 1 Gbps the lowest
    # other (BIC's 0.20) minus STCP's 0.10 = 0.10. Ratio(100) - ratio(20): BIC 0.10, STCP 0.15:
    # 0.10; the lower of CUBIC (0.85) and HTCP (0.88) minus the higher of BIC (0.20) and HSTCP
    # (0.30): 0.55. At 100 Mbps the lowest ratio, STCP's 0.40. Lowest utilisation of the TCP-only
    # baseline 0.91 (the mixed run's 0.5 does not count). 100 ms: the lowest ratio at 20 Mbps,
    # STCP's 0.30; ratio(20) - ratio(1000): 0.4, 0.4, 0.4, 0.2, 0.4: 0.2; mean ratios CUBIC 0.6,
    # BIC 0.3, HSTCP 0.4, STCP 0.2, HTCP 0.5: 0.6 - 0.5 = 0.1.
    check("s001-exp1-2", exp12_rows(), {"cubic_htcp_friendly_10ms": 0.85, "others_drop_10ms": 0.375,
                                        "stcp_worst_10ms": 0.10, "bic_hstcp_next": 0.55, "bic_stcp_worse_at_20": 0.10,
                                        "tcp_full_bandwidth": 0.91, "reasonable_over_20_100ms": 0.30,
                                        "ratio_drops_100ms": 0.2, "reasonable_over_100": 0.40,
                                        "cubic_best_100ms": 0.1})


EXP3 = {20: {CUBIC1: 0.03, "bic": 0.05, "highspeed": 0.04, "scalable": 0.06, "htcp": 0.08},
        200: {CUBIC1: 0.05, "bic": 0.02, "highspeed": 0.03, "scalable": 0.04, "htcp": 0.06}}
EXP3_10S = {20: {CUBIC1: 0.02, "bic": 0.02, "highspeed": 0.01, "scalable": 0.03, "htcp": 0.01},
            200: {CUBIC1: 0.01, "bic": 0.02, "highspeed": 0.02, "scalable": 0.03, "htcp": 0.04}}


def test_s001_exp3_cov_orderings():
    # 20% BDP: median of the others' CoV (0.04, 0.05, 0.06, 0.08) = 0.055 - CUBIC's 0.03 = 0.025;
    # min(STCP 0.06, HTCP 0.08) - 0.03 = 0.03. 200%: median (0.02, 0.03, 0.04, 0.06) = 0.035 -
    # 0.05 = -0.015; min(0.04, 0.06) - 0.05 = -0.01. At 10 s, 20%: median (0.01, 0.01, 0.02,
    # 0.03) = 0.015 - 0.02 = -0.005, min(0.03, 0.01) - 0.02 = -0.01; 200%: median (0.02, 0.02,
    # 0.03, 0.04) = 0.025 - 0.01 = 0.015, min(0.03, 0.04) - 0.01 = 0.02.
    rows = [{"alg": a, "buffer": b, "cov_1s": c, "cov_10s": EXP3_10S[b][a], "utilization": 0.95}
            for b, by in EXP3.items() for a, c in by.items()]
    check("s001-exp3", rows, {"cubic_stable_20": 0.025, "stcp_htcp_unstable_20": 0.03, "cubic_stable_200": -0.015,
                              "stcp_htcp_unstable_200": -0.01, "cubic_stable_20_10s": -0.005,
                              "stcp_htcp_unstable_20_10s": -0.01, "cubic_stable_200_10s": 0.015,
                              "stcp_htcp_unstable_200_10s": 0.02})


def test_s001_exp3_coarse_grid():
    # The coarse grid (CUBIC, STCP, HTCP at 20% BDP): the median of the others is the mean of
    # STCP's 0.06 and HTCP's 0.08, 0.07 - 0.03 = 0.04 (at 10 s: (0.03 + 0.01) / 2 - 0.02 = 0);
    # the 200% claims are not measured.
    rows = [{"alg": a, "buffer": 20, "cov_1s": EXP3[20][a], "cov_10s": EXP3_10S[20][a], "utilization": 0.95}
            for a in (CUBIC1, "scalable", "htcp")]
    check("s001-exp3", rows, {"cubic_stable_20": 0.04, "stcp_htcp_unstable_20": 0.03, "cubic_stable_20_10s": 0.0,
                              "stcp_htcp_unstable_20_10s": -0.01})


# ---- seed 002 --------------------------------------------------------------------------------


def test_s002_grid_fairness():
    # No background: median of Jain's 0.99, 0.97, 0.80, 0.96 = (0.96 + 0.97) / 2 = 0.965; with
    # background the lowest, 0.91.
    rows = [{"bw": 10, "rtt": 16, "buffer": b, "sessions": 0, "mean_size": 0, "jain": j, "utilization": 0.9}
            for b, j in ((10, 0.99), (100, 0.97), (20, 0.80), (50, 0.96))]
    rows += [{"bw": 250, "rtt": 100, "buffer": 100, "sessions": s, "mean_size": 100, "jain": j, "utilization": 0.9}
             for s, j in ((25, 0.95), (200, 0.91))]
    check("s002-grid", rows, {"asymptotic_fairness": 0.965, "fair_with_background": 0.91})


@pytest.mark.parametrize("name, rows, expected", [
    # Cubic 2.0 converges in 150 s, H-TCP in 90 s: 60 s slower.
    # ... and 120 s with a backoff to 0.5: 30 s slower at 0.8 than at 0.5.
    # ... and Cubic 2.0's growth slope as its run measured it (the others' are not read).
    ("s002-convergence", [{"alg": CUBIC2, "convergence_s": 150.0, "never": False, "growth_slope": 0.6},
                          {"alg": "cubic-2.0, beta 0.5", "convergence_s": 120.0, "never": False, "growth_slope": NAN},
                          {"alg": "htcp", "convergence_s": 90.0, "never": False, "growth_slope": NAN}],
     {"slower_than_htcp": 60.0, "slower_than_half_backoff": 30.0, "low_cwnd_less_aggressive": 0.6}),
    # without fast convergence 200 s, with it 150 s: 50 s.
    ("s002-fast-convergence", [{"fc": 1, "convergence_s": 150.0, "never": False},
                               {"fc": 0, "convergence_s": 200.0, "never": False}],
     {"fc_faster": 50.0}),
    # the 200 ms flow's share 0.30 when it starts first, 0.55 when second: |0.30 - 0.55| = 0.25.
    ("s002-rtt-unfairness", [{"order": "long_first", "long_share": 0.30}, {"order": "short_first", "long_share": 0.55}],
     {"start_dependent": 0.25}),
    ("s002-low-cwnd", [{"order": "long_first", "long_share": 0.70}, {"order": "short_first", "long_share": 0.55}],
     {"start_dependent": 0.15}),
    # 60 s for the transfer started second against 40 s for the first: 1.5; the standard TCP
    # baseline's 55 s against 50 s: 1.1.
    ("s002-completion-order", [{"alg": CUBIC2, "fct_first": 40.0, "fct_second": 60.0},
                               {"alg": "reno", "fct_first": 50.0, "fct_second": 55.0}],
     {"order_matters": 1.5, "order_matters_tcp": 1.1}),
    # the long flow 150 Mb/s against the short one's 100 Mb/s: 1.5, the baseline's 120 against
    # 40: 3; a short flow that got nothing gives no ratio.
    ("s002-long-short", [{"alg": CUBIC2, "long_bps": 150e6, "short_bps": 100e6},
                         {"alg": "reno", "long_bps": 120e6, "short_bps": 40e6}],
     {"long_advantage": 1.5, "long_advantage_tcp": 3.0}),
    ("s002-long-short", [{"alg": CUBIC2, "long_bps": 150e6, "short_bps": 0.0},
                         {"alg": "reno", "long_bps": 120e6, "short_bps": 40e6}],
     {"long_advantage": NAN, "long_advantage_tcp": 3.0}),
    # utilisation 0.9 with the fixed code, 0.4 with the bug: 0.5.
    ("s002-scaling-bug", [{"bug": 0, "utilization": 0.9}, {"bug": 1, "utilization": 0.4}], {"bug_matters": 0.5}),
    # 10 Mb/s: TCP 4 over Cubic 5 = 0.8; 250 Mb/s: Cubic 150 of 200 = 0.75, minus 1/2 = 0.25.
    ("s002-friendliness", [{"bw": 10, "cubic_bps": 5e6, "tcp_bps": 4e6}, {"bw": 250, "cubic_bps": 150e6,
                                                                           "tcp_bps": 50e6}],
     {"friendly_at_low_bdp": 0.8, "scalable_at_high_bdp": 0.25}),
    # Cubic 2.0, 25 sessions: its longest unfair stretch, 120 s; 50 sessions: CoV 0.30 over
    # H-TCP's 0.25 = 1.2 (the 25-session CoVs do not enter).
    ("s002-missing-drop", [{"alg": a, "sessions": n, "longest_unfair_s": s, "cov_10s": c} for a, n, s, c in (
        (CUBIC2, 25, 120.0, 0.9), (CUBIC2, 50, 30.0, 0.30), ("htcp", 25, 200.0, 0.1), ("htcp", 50, 10.0, 0.25))],
     {"sustained_unfairness": 120.0, "similar_to_htcp": 1.2}),
])
def test_s002_differences_and_ratios(name, rows, expected):
    assert set(expected) == paper_ids(name)
    check(name, rows, expected)


def test_s002_growth_slope_of_each_epoch_against_its_window():
    # Flow 0: losses at 20, 40, 50, 60 s at windows 300, 200, 200, 200; its epochs (40, 50] and
    # (50, 60] rise from 160 to 200: (200 - 160) / 10 = 4 packets/s from a window of 200. Flow 1:
    # losses at 40, 60, 80 at 25; epochs rise from 20 to 25 over 20 s: 0.25 packets/s from 25.
    # Slope: log(4 / 0.25) / log(200 / 25) = log 16 / log 8 = 4/3. The epoch (20, 40] opens
    # before the start (30 s) and stays out (from 10 to 200 in 20 s: it would pull the fit).
    from cubiclab.experiments import seed002

    cwnd = [{"t": 20.0 + k, "flow": 0, "cwnd": 10.0 + 10 * k} for k in range(1, 21)]
    for a in (40.0, 50.0):
        cwnd += [{"t": a + k, "flow": 0, "cwnd": 160.0 + 40 * (k - 1) / 9} for k in range(1, 11)]
    for a in (40.0, 60.0):
        cwnd += [{"t": a + k, "flow": 1, "cwnd": 20.0 + 5 * (k - 1) / 19} for k in range(1, 21)]
    losses = [{"t": t, "flow": 0, "cwnd": w, "timeout": False} for t, w in ((20.0, 300), (40.0, 200), (50.0, 200),
                                                                            (60.0, 200))]
    losses += [{"t": t, "flow": 1, "cwnd": 25.0, "timeout": False} for t in (40.0, 60.0, 80.0)]
    res = results([], [], losses=losses, cwnd=cwnd)
    assert seed002._growth_slope(res, [0, 1], 30.0) == pytest.approx(4 / 3)


def test_s002_buffer_utilisation_below_30pct_bdp():
    # Buffers below 30% BDP are 5 and 20 (30 itself is not below): at 250 Mb/s (0.5 + 0.6) / 2 =
    # 0.55 (30%'s 0.9 and 100%'s 0.99 left out); at 10 Mb/s (0.90 + 0.95) / 2 = 0.925; 0.925 -
    # 0.55 = 0.375.
    by_bw = {250: (0.5, 0.6, 0.9, 0.99), 10: (0.9, 0.95, 0.97, 1.0)}
    rows = [{"bw": bw, "buffer": b, "utilization": u} for bw, us in by_bw.items() for b, u in zip((5, 20, 30, 100), us)]
    check("s002-buffer", rows, {"falls_to_half": 0.55, "speed_matters": 0.375})


def epochs_rows(epochs: dict) -> list[dict]:
    return [{"bw": bw, "bdp_packets": bw * 1e6 * 0.2 / 12000, "epoch_s": e} for bw, e in epochs.items()]


def test_s002_epochs_slope_of_the_two_largest_bdps_per_variant():
    # Paper runs: epochs 16 s and 32 s at 500 and 1000 Mb/s (BDPs 8333 and 16667 packets): slope
    # log 2 / log 2 = 1 (the 250 Mb/s point, 1 s, would pull a fit over all three far below).
    # Linux runs: 10 s and 10 x 2^(1/3) s: slope 1/3, reported as the linux twin only.
    v = seed_values("s002-epochs", epochs_rows({250: 1.0, 500: 16.0, 1000: 32.0}),
                    {"linux": epochs_rows({250: 1.0, 500: 10.0, 1000: 10.0 * 2 ** (1 / 3)})})
    assert v == pytest.approx({"linear_at_high_bdp": 1.0, "linear_at_high_bdp@linux": 1 / 3})


# ---- seeds 003 and 004 -----------------------------------------------------------------------


def tahoe_rows() -> list[dict]:
    def row(link, who, buffer, cubic, tahoe, queue=0.01, epoch=NAN, per_event=NAN):
        return {"link": link, "who": who, "buffer": buffer, "cubic_bps": cubic, "tahoe_bps": tahoe,
                "queue_delay_s": queue, "cubic_epoch_s": epoch, "cubic_drops_per_event": per_event}

    return [row("low", "cubic", 100, 2.0e6, NAN, epoch=8.0, per_event=6.0), row("low", "tahoe", 100, NAN, 1.6e6),
            row("low", "together", 100, 1.5e6, 0.5e6, epoch=5.0, per_event=2.0), row("high", "cubic", 100, 45e6, NAN),
            row("high", "tahoe", 100, NAN, 30e6), row("high", "together", 100, 40e6, 5e6),
            row("high", "cubic", 400, 40e6, NAN, queue=0.132)]


def test_s003_cubic_tahoe_ratios():
    # Low link: CUBIC alone 2.0 / Tahoe alone 1.6 = 1.25; together 1.5 / 0.5 = 3; CUBIC together
    # over alone 1.5 / 2.0 = 0.75; Tahoe together over alone 0.5 / 1.6 = 0.3125. High link
    # together 40 / 5 = 8. CUBIC alone on the high link,
    # 100% BDP over 400%: 45 / 40 - 1 = 0.125; 400%'s queueing delay 0.132 s over the 88 ms base
    # RTT = 1.5. CUBIC's epochs on the low link 5 s beside Tahoe over 8 s alone = 0.625; its
    # drops per congestion event 6 alone over 2 beside Tahoe = 3.
    check("s003-cubic-tahoe", tahoe_rows(), {"alone_low": 1.25, "together_low": 3.0, "together_high": 8.0,
                                             "better_together": 0.75, "tahoe_drops_together": 0.3125,
                                             "big_queue_worse": 0.125,
                                             "queue_delay_grows": 1.5, "backs_off_earlier": 0.625,
                                             "block_dropped_alone": 3.0})


def test_s004_packet_one_value_per_loss_rate():
    # Each loss rate's normalized throughput as it is, under the id the claims table names.
    rows = [{"loss_rate": lam, "sim": x} for lam, x in ((0.01, 0.9), (0.1, 0.8), (1.0, 0.5))]
    assert paper_ids("s004-packet") == {"agree_0.01", "agree_0.1", "agree_1"}
    check("s004-packet", rows, {"agree_0.01": 0.9, "agree_0.1": 0.8, "agree_1": 0.5})


# ---- per_run: the entries' own measurements on tiny constructed results -----------------------


def results(flows: list[dict], totals: list[dict], link: list[dict] | None = None, losses: list[dict] | None = None,
            cwnd: list[dict] | None = None, rate_bps: float = 100e6, duration_s: float = 100.0) -> SimpleNamespace:
    """A stand-in for cubiclab.results.Results with the tables (and columns) per_run reads."""
    return SimpleNamespace(
        flows=pd.DataFrame(flows), totals=pd.DataFrame(totals),
        link=pd.DataFrame(link or [{"t": 1.0, "utilization": 1.0, "queue_bytes": 0.0}]),
        losses=pd.DataFrame(losses or [], columns=["t", "flow", "cwnd", "timeout"]),
        cwnd=pd.DataFrame(cwnd or [], columns=["t", "flow", "cwnd"]),
        summary={"rate_bps": rate_bps, "duration_s": duration_s})


def samples(flow: int, group: str, ts, column: str, values) -> list[dict]:
    return [{"t": float(t), "flow": flow, "group": group, column: float(v)} for t, v in zip(ts, values)]


def test_s000_eq6_per_run_whole_epochs_loss_rate_and_k():
    # Losses of flow 0 at 1, 3 and 5 s (windows 90, 110, 200) in the window (0, 10]; a timeout
    # at 4 s and a loss at 12 s do not count. Whole epochs: (1, 5], two of them, 2 s each.
    # Packets between: samples at 2..5 s of 3 Mb/s, 1 s each: 4 x 3e6 / 12000 = 1000, so
    # p = 2 / 1000 = 0.002. Mean srtt (90 + 110) / 2 ms = 0.1 s; Eq. 6 (C 0.4, beta 0.2):
    # (0.4 x 3.8 / 0.8)^(1/4) (0.1 / 0.002)^(3/4) = 1.9^(1/4) x 50^(3/4) = 22.07 packets; mean
    # window (20 + 22 + 24 + 26) / 4 = 23. K from the windows at loss but the last: (100 x 0.2
    # / 0.4)^(1/3) = 50^(1/3) s.
    ts = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    flows = [{"t": t, "flow": 0, "group": "cubic", "throughput_bps": 3e6, "cwnd": w, "srtt_ms": s}
             for t, w, s in zip(ts, (99, 20, 22, 24, 26, 99), (500, 90, 110, 90, 110, 500))]
    losses = [{"t": t, "flow": 0, "cwnd": w, "timeout": to}
              for t, w, to in ((1.0, 90, False), (3.0, 110, False), (4.0, 5, True), (5.0, 200, False),
                               (12.0, 300, False))]
    res = results(flows, [{"flow": 0, "group": "cubic", "start_s": 0.0, "fct_s": NAN}], losses=losses)
    eq6 = 1.9 ** 0.25 * 50 ** 0.75
    out = CATALOG["s000-eq6"].per_run(None, res, 0.0, 10.0)
    assert out == pytest.approx({"ratio": 23 / eq6, "mean_cwnd": 23.0, "p": 0.002, "epoch_s": 2.0,
                                 "k_s": 50 ** (1 / 3)})
    # one loss in the window: no whole epoch, nothing measured
    assert all(math.isnan(v) for v in CATALOG["s000-eq6"].per_run(None, res, 2.0, 4.5).values())


def test_s000_fig5_per_run_ratio_and_the_cubic_flows_epoch_shape():
    # CUBIC (flow 0) 150 Mb/s against SACK's 100: 1.5. Flow 0's window climbs linearly, 55 to 95
    # over the samples at 1..9 s after each loss (0, 10, 20 s): trough 55 at 1 s, midpoint 5.5 s
    # (window 75), 95 just before the loss: (75 - 55) / (95 - 55) = 0.5 in both epochs. SACK's
    # own epochs (concave: it jumps to 95 at once) would give 1, so the shape is flow 0's.
    flows = samples(0, "cubic", [1, 2], "throughput_bps", [150e6, 150e6]) + samples(1, "sack", [1, 2],
                                                                                    "throughput_bps", [100e6, 100e6])
    cwnd = [{"t": a + k, "flow": 0, "cwnd": 50 + 5 * k} for a in (0, 10) for k in range(1, 10)]
    cwnd += [{"t": a + k, "flow": 1, "cwnd": 55 if k == 1 else 95} for a in (0, 10) for k in range(1, 10)]
    losses = [{"t": t, "flow": f, "cwnd": 100, "timeout": False} for t in (0.0, 10.0, 20.0) for f in (0, 1)]
    res = results(flows, [{"flow": 0, "group": "cubic"}, {"flow": 1, "group": "sack"}], losses=losses, cwnd=cwnd)
    assert CATALOG["s000-fig5"].per_run(None, res, -1.0, 25.0) == pytest.approx({"ratio": 1.5, "epoch_shape": 0.5})


def _eight_flows(hs: str, hs_bps, sack_bps, rate_bps: float, utilization: float):
    flows = [{"t": 1.0, "flow": i, "group": hs, "throughput_bps": b} for i, b in enumerate(hs_bps)]
    flows += [{"t": 1.0, "flow": 4 + i, "group": "sack", "throughput_bps": b} for i, b in enumerate(sack_bps)]
    totals = [{"flow": r["flow"], "group": r["group"], "start_s": 0.0} for r in flows]
    return results(flows, totals, link=[{"t": 1.0, "utilization": utilization, "queue_bytes": 0.0}],
                   rate_bps=rate_bps)


def test_s000_fig6_per_run_shares_and_the_cubic_flows_jain_index():
    # 400 Mb/s: CUBIC 30 + 30 + 10 + 10 = 80 Mb/s = 0.2, SACK 4 x 5 = 20 Mb/s = 0.05, the link
    # 40% busy, so 0.4 - 0.25 = 0.15 was background. Jain of the CUBIC flows only: 80^2 / (4 x
    # (900 + 900 + 100 + 100)) = 0.8 (the SACK flows' equal 5s would raise it).
    res = _eight_flows("cubic", [30e6, 30e6, 10e6, 10e6], [5e6] * 4, 400e6, 0.4)
    assert CATALOG["s000-fig6"].per_run(None, res, 0.0, 2.0) == pytest.approx(
        {"cubic": 0.2, "sack": 0.05, "other": 0.15, "utilization": 0.4, "jain": 0.8})


def test_s000_fig10_per_run_shares_and_per_flow_friendliness():
    # 400 Mb/s: the protocol's four flows 50 Mb/s each (0.5 of the link), SACK's 25 each (0.25):
    # SACK's mean flow over the protocol's, 25 / 50 = 0.5.
    res = _eight_flows("hs", [50e6] * 4, [25e6] * 4, 400e6, 0.9)
    want = {"hs_share": 0.5, "sack_share": 0.25, "utilization": 0.9, "friendly_ratio": 0.5}
    assert CATALOG["s000-fig10a"].per_run(None, res, 0.0, 2.0) == pytest.approx(want)
    assert CATALOG["s000-fig10bc"].per_run(None, res, 0.0, 2.0) == pytest.approx(want)


def test_s000_two_flow_per_run_counts_a_silent_flow_as_zero():
    # The second flow has no sample in the window (it starts later): 0 b/s, fairness 0 / 80 = 0.
    res = results(samples(0, "first", [1, 2], "throughput_bps", [80e6, 80e6]) +
                  samples(1, "second", [5], "throughput_bps", [80e6]),
                  [{"flow": 0, "group": "first"}, {"flow": 1, "group": "second"}],
                  link=[{"t": t, "utilization": u, "queue_bytes": 0.0} for t, u in ((1, 0.5), (2, 0.7), (5, 1.0))])
    assert CATALOG["s000-fig8"].per_run(None, res, 0.0, 2.0) == pytest.approx(
        {"tput_first": 80e6, "tput_second": 0.0, "fairness": 0.0, "utilization": 0.6})


def test_s001_exp3_per_run_mean_cov_of_the_high_speed_flows():
    # 1 s samples, window (0, 4]: flow 0 (hs) 1, 3, 1, 3 Mb/s: mean 2, population std 1, CoV 0.5;
    # flow 1 (hs) constant: 0; mean 0.25. The SACK flow's swings and the sample at t = 0 stay out.
    # Four seconds hold no two 10 s bins: the 10 s CoV is not measured (NaN).
    flows = (samples(0, "hs", range(5), "throughput_bps", [9e6, 1e6, 3e6, 1e6, 3e6]) +
             samples(1, "hs", range(5), "throughput_bps", [9e6, 2e6, 2e6, 2e6, 2e6]) +
             samples(2, "sack", range(5), "throughput_bps", [9e6, 1e6, 9e6, 1e6, 9e6]))
    res = results(flows, [{"flow": f, "group": g} for f, g in ((0, "hs"), (1, "hs"), (2, "sack"))],
                  link=[{"t": t, "utilization": 0.9, "queue_bytes": 0.0} for t in range(5)])
    assert CATALOG["s001-exp3"].per_run(None, res, 0.0, 4.0) == pytest.approx(
        {"cov_1s": 0.25, "cov_10s": NAN, "utilization": 0.9}, nan_ok=True)


def test_s002_missing_drop_longest_unfair_stretch_and_cov():
    # 1 s samples over (0, 70]: seven 10 s bins. Long flows 0-2; per bin (flow 0, 1, 2) is
    # (1, 1, 1) (Jain 1) or (3, 1, 1) (Jain 25 / 33 = 0.76 < 0.9) in the pattern F U F U U U F:
    # the longest unfair stretch is three bins, 30 s. Flow 0's bin means 1,3,1,3,3,3,1: mean 15/7,
    # population std sqrt(48/49) = 4 sqrt(3) / 7, CoV 4 sqrt(3) / 15; flows 1 and 2 are constant
    # (0): mean CoV 4 sqrt(3) / 45. Flow 3 (the web group) would make every bin unfair.
    pattern = "FUFUUUF"
    ts = range(1, 71)
    flows = samples(0, "long", ts, "throughput_bps", [3e6 if pattern[(t - 1) // 10] == "U" else 1e6 for t in ts])
    flows += samples(1, "long", ts, "throughput_bps", [1e6] * 70) + samples(2, "long", ts, "throughput_bps", [1e6] * 70)
    flows += samples(3, "web", ts, "throughput_bps", [50e6] * 70)
    res = results(flows, [{"flow": f, "group": "long" if f < 3 else "web"} for f in range(4)])
    assert CATALOG["s002-missing-drop"].per_run(None, res, 0.0, 70.0) == pytest.approx(
        {"longest_unfair_s": 30.0, "cov_10s": 4 * math.sqrt(3) / 45})


@pytest.mark.parametrize("order, long_share", [("long_first", 0.75), ("short_first", 0.25)])
def test_s002_rtt_unfairness_per_run_follows_the_long_flow(order, long_share):
    # Flow 0 3 Mb/s, flow 1 1 Mb/s: the 200 ms flow is flow 0 when it starts first (3 / 4 =
    # 0.75), flow 1 when it starts second (1 / 4 = 0.25).
    res = results(samples(0, "first", [1, 2], "throughput_bps", [3e6, 3e6]) +
                  samples(1, "second", [1, 2], "throughput_bps", [1e6, 1e6]),
                  [{"flow": 0, "group": "first"}, {"flow": 1, "group": "second"}])
    run = SimpleNamespace(tags={"order": order})
    assert CATALOG["s002-rtt-unfairness"].per_run(run, res, 0.0, 2.0) == pytest.approx({"long_share": long_share})


def test_s002_epochs_per_run_bdp_and_median_epoch():
    # 500 Mb/s x 200 ms / 12000 bits = 8333.3 packets. Congestion events at 5, 15, 35, 65, 120 s
    # and a timeout at 38 s (not a congestion event): in (10, 100] 15, 35, 65, epochs 20 and 30 s,
    # median 25.
    losses = [{"t": t, "flow": 0, "cwnd": 100, "timeout": t == 38.0} for t in (5.0, 15.0, 35.0, 38.0, 65.0, 120.0)]
    res = results(samples(0, "cubic", [1], "throughput_bps", [1e6]), [{"flow": 0, "group": "cubic"}], losses=losses)
    out = CATALOG["s002-epochs"].per_run(SimpleNamespace(tags={"bw": 500}), res, 10.0, 100.0)
    assert out == pytest.approx({"bdp_packets": 500e6 * 0.2 / 12000, "epoch_s": 25.0})


def test_s002_long_short_per_run_over_the_short_transfers_lifetime():
    # The short transfer runs from 60 s for 20 s: (60, 80]. The long flow 150 Mb/s there (its
    # 250 Mb/s before 60 s does not count), the short one 100 Mb/s.
    flows = samples(0, "first", [50, 70, 80, 90], "throughput_bps", [250e6, 150e6, 150e6, 250e6])
    flows += samples(1, "second", [70, 80], "throughput_bps", [100e6, 100e6])
    res = results(flows, [{"flow": 0, "group": "first", "start_s": 0.0, "fct_s": NAN},
                          {"flow": 1, "group": "second", "start_s": 60.0, "fct_s": 20.0}])
    assert CATALOG["s002-long-short"].per_run(None, res, 0.0, 100.0) == pytest.approx(
        {"long_bps": 150e6, "short_bps": 100e6})


def test_s003_per_run_goodputs_and_queueing_delay():
    # 50 Mb/s; CUBIC's goodput 40 Mb/s, Tahoe's 5 (their wire throughputs do not count); queue
    # 687,500 bytes on average in (0, 2] (the sample at t = 0 is outside): 5.5e6 bits / 50e6 b/s
    # = 0.11 s. A run without Tahoe has no Tahoe goodput.
    flows = [{"t": 1.0, "flow": 0, "group": "cubic", "goodput_bps": 40e6, "throughput_bps": 45e6},
             {"t": 1.0, "flow": 1, "group": "tahoe", "goodput_bps": 5e6, "throughput_bps": 6e6}]
    link = [{"t": t, "utilization": 1.0, "queue_bytes": q} for t, q in ((0.0, 9e9), (1.0, 600000.0), (2.0, 775000.0))]
    # CUBIC's congestion events at 0.5, 1.0 and 2.0 s (Tahoe's at 1.5 s and CUBIC's at 2.5 s do
    # not count): gaps 0.5 and 1.0, median 0.75 s; its 9 drops at the queue in (0, 2] (Tahoe's 4
    # do not count) over 3 events: 3 per event.
    flows = [{"t": 1.0, "flow": 0, "group": "cubic", "goodput_bps": 40e6, "throughput_bps": 45e6, "drops": 4},
             {"t": 2.0, "flow": 0, "group": "cubic", "goodput_bps": 40e6, "throughput_bps": 45e6, "drops": 5},
             {"t": 1.0, "flow": 1, "group": "tahoe", "goodput_bps": 5e6, "throughput_bps": 6e6, "drops": 4}]
    losses = [{"t": t, "flow": f, "cwnd": 10, "timeout": False} for t, f in ((0.5, 0), (1.0, 0), (1.5, 1), (2.0, 0),
                                                                             (2.5, 0))]
    link = [{"t": t, "utilization": 1.0, "queue_bytes": q} for t, q in ((0.0, 9e9), (1.0, 600000.0), (2.0, 775000.0))]
    e = CATALOG["s003-cubic-tahoe"]
    res = results(flows, [{"flow": 0, "group": "cubic"}, {"flow": 1, "group": "tahoe"}], link=link, losses=losses,
                  rate_bps=50e6)
    assert e.per_run(None, res, 0.0, 2.0) == pytest.approx({"cubic_bps": 40e6, "tahoe_bps": 5e6, "queue_delay_s": 0.11,
                                                            "cubic_epoch_s": 0.75, "cubic_drops_per_event": 3.0})
    alone = results(flows[:2], [{"flow": 0, "group": "cubic"}], link=link, rate_bps=50e6)
    got = e.per_run(None, alone, 0.0, 2.0)
    assert all(math.isnan(got[k]) for k in ("tahoe_bps", "cubic_epoch_s", "cubic_drops_per_event"))


def test_s004_packet_per_run_goodput_over_payload_capacity():
    # 100 Mb/s carries 1448 payload bytes per 1500-byte packet: 96.53 Mb/s of goodput at most;
    # (70 + 74.8) / 2 = 72.4 Mb/s of goodput is 72.4 / 96.53 = 0.75.
    flows = samples(0, "cubic", [0, 1, 2], "goodput_bps", [99e6, 70e6, 74.8e6])
    res = results(flows, [{"flow": 0, "group": "cubic"}], rate_bps=100e6)
    assert CATALOG["s004-packet"].per_run(None, res, 0.0, 2.0) == pytest.approx({"sim": 0.75})


def _two_cubic_flows_with_tcp(tcp: bool):
    """Two CUBIC flows (the second starting at 20 s) and, with `tcp`, two TCP flows: 1 s
    samples to 300 s, and cwnd traces in (100, 125] of a cubic epoch profile (flow 0) and a
    linear one (flow 1)."""
    ts = range(1, 301)
    flows = samples(0, "cubic", ts, "throughput_bps", [100e6 if t <= 60 else 50e6 for t in ts])
    flows += samples(1, "cubic", range(21, 301), "throughput_bps", [10e6 if t <= 60 else 50e6 for t in range(21, 301)])
    totals = [{"flow": 0, "group": "cubic", "start_s": 0.0}, {"flow": 1, "group": "cubic", "start_s": 20.0}]
    if tcp:
        for f in (2, 3):  # far from the CUBIC flows' mean: inside the convergence band they would never converge
            flows += samples(f, "tcp", ts, "throughput_bps", [10e6] * 300)
            totals.append({"flow": f, "group": "tcp", "start_s": 0.0})
    cwnd, losses = [], []
    for a in (105.0, 115.0):
        for k in range(1, 100):
            s = k / 100  # 0.1 s samples over the 10 s epoch
            cwnd.append({"t": a + 10 * s, "flow": 0, "cwnd": 100 - 40 * (1 - s) ** 3})
            cwnd.append({"t": a + 10 * s, "flow": 1, "cwnd": 60 + 40 * s})
    losses = [{"t": t, "flow": f, "cwnd": 100.0, "timeout": False} for t in (105.0, 115.0, 125.0) for f in (0, 1)]
    link = [{"t": float(t), "utilization": 0.7, "queue_bytes": 0.0} for t in ts]
    return results(flows, totals, link=link, losses=losses, cwnd=cwnd, rate_bps=200e6, duration_s=300.0)


# Convergence of the two CUBIC flows from the second one's start (20 s, not the first's 0 s):
# up to 60 s they send 100 and 10 Mb/s, then 50 each. With 10 s of trailing average, m samples
# after 60 s flow 0 is at 100 - 5m, flow 1 at 10 + 4m, their mean (110 - m) / 2; flow 0 is
# within 20% of it when 45 - 4.5m <= 11 - 0.1m, m >= 7.7: from 68 s on (to the end, 232 s >=
# the 100 s hold): 68 - 20 = 48 s. Plateaus: the cubic profile 100 - 40 (1 - s)^3 is flat
# (moves by less than 3% of its rise over a tenth of the epoch) for 1 - s < sqrt(0.1), a
# fraction 0.316 of the epoch (metrics.plateau_fraction); the linear one never: 0. The
# smaller of the two flows: 0.
CONVERGED_S, PLATEAU_CUBIC = 48.0, math.sqrt(0.1)


def test_s000_fig4_per_run_smaller_plateau_and_convergence_from_the_second_start():
    res = _two_cubic_flows_with_tcp(tcp=False)
    assert CATALOG["s000-fig4"].per_run(None, res, 100.0, 300.0) == pytest.approx(
        {"plateau": 0.0, "convergence_s": CONVERGED_S, "never": False})
    # without the linear flow's losses its plateau is not measured: the cubic flow's is the one
    res.losses = res.losses[res.losses.flow == 0]
    assert CATALOG["s000-fig4"].per_run(None, res, 100.0, 300.0)["plateau"] == pytest.approx(PLATEAU_CUBIC, abs=0.01)


@pytest.mark.parametrize("cubic, htcp, expected", [
    # Cubic 2.0 never converged in the 300 s it had, H-TCP in 90 s: at least 210 s slower.
    ((300.0, True), (90.0, False), Censored(210.0, math.inf)),
    # H-TCP never converged in 300 s, Cubic in 150 s: Cubic at least 150 s faster.
    ((150.0, False), (300.0, True), Censored(-math.inf, -150.0)),
    # neither: the difference could be anything.
    ((300.0, True), (300.0, True), Censored(-math.inf, math.inf)),
])
def test_s002_convergence_bounds_a_difference_with_a_run_that_never_converged(cubic, htcp, expected):
    rows = [{"alg": CUBIC2, "convergence_s": cubic[0], "never": cubic[1], "growth_slope": 0.5},
            {"alg": "cubic-2.0, beta 0.5", "convergence_s": 100.0, "never": False},
            {"alg": "htcp", "convergence_s": htcp[0], "never": htcp[1]}]
    assert seed_values("s002-convergence", rows)["slower_than_htcp"] == expected


def test_s001_fig3_4_per_run_shares_plateau_and_convergence_of_the_cubic_flows():
    # Over (100, 300] on 200 Mb/s: CUBIC 2 x 50 = 100 Mb/s = 0.5, TCP 2 x 10 = 0.1, the link 70%
    # busy. Convergence and plateaus as s000-fig4's, of the CUBIC flows only.
    assert CATALOG["s001-fig3-4"].per_run(None, _two_cubic_flows_with_tcp(tcp=True), 100.0, 300.0) == pytest.approx(
        {"plateau": 0.0, "utilization": 0.7, "cubic": 0.5, "tcp": 0.1, "convergence_s": CONVERGED_S, "never": False})


# ---- model entries: compute's reductions of the model's tables --------------------------------
# The model tables (cubiclab.models.figures) are replaced by constructed ones where computing
# them would cost seconds or hide the reduction; figures are not drawn (the plot functions
# stand in as returning their path).


def test_s000_fig3_values_from_the_response_functions(monkeypatch, tmp_path):
    # The panel gap from a constructed table: HSTCP / CUBIC of 10 and 100 at 10 ms (mean log10
    # 1.5), 1 and 10 at 100 ms (0.5): 1.0; the smaller of the two, 0.5. The rest from the models at p = 1e-6: Mathis
    # sqrt(1.5e6) = 1224.74 packets, x 12000 bits / 10 ms = 1.4697 Gb/s; CUBIC's Eq. 5 at 10 ms,
    # 1.9^(1/4) x (0.01 / 1e-6)^(3/4) = 1174.1, is below TCP's window, so the TCP-friendly floor
    # gives exactly TCP's: 1; HSTCP 0.12 / 1e-6^0.835 = 0.12 x 10^5.01 = 12279.5 over 1224.74 =
    # 10.026.
    table = pd.DataFrame({"rtt": [0.01, 0.01, 0.1, 0.1], "p": [1e-6, 1e-4] * 2, "hstcp": [10.0, 100.0, 1.0, 10.0],
                          "cubic": [1.0] * 4})
    monkeypatch.setattr(model_figures, "ha_fig3_data", lambda p: table)
    monkeypatch.setattr(model_figures, "plot_ha_fig3", lambda path, d: path)
    vals, _, _ = CATALOG["s000-fig3"].compute(base.TINY, tmp_path)
    tcp = math.sqrt(1.5e6)
    assert vals == pytest.approx({"tcp_window": tcp, "tcp_rate": tcp * 12000 / 0.01 / 1e9, "cubic_equals_tcp": 1.0,
                                  "hstcp_10x": 0.12 * 10 ** 5.01 / tcp, "friendlier_than_hstcp": 0.5,
                                  "friendlier_at_short_rtt": 1.0})


def test_s000_tcp_mode_growth_rows(monkeypatch, tmp_path):
    # growth_per_rtt (cubiclab.replay, tested in its own right) stood in for by a table; the
    # entry reports the growth at 12 and 30 packets as it is, and at 100 and 1000 minus TCP's 1.
    growth = {("bic", 12): 1.0, ("bic", 100): 3.5, ("highspeed", 30): 1.1, ("highspeed", 1000): 7.0}
    monkeypatch.setattr(seed000, "growth_per_rtt", lambda alg, w: growth[(alg, w)])
    vals, _, _ = CATALOG["s000-tcp-mode"].compute(base.TINY, tmp_path)
    assert vals == pytest.approx({"bic_tcp_mode_below_14": 1.0, "bic_scalable_above_14": 2.5,
                                  "hstcp_tcp_mode_below_38": 1.1, "hstcp_scalable_above_38": 6.0})


def test_s001_friendly_region_boundary():
    # Eq. 5 = sqrt(3 / (2p)) raised to the 4th power: C (4 - beta) / (4 beta) RTT^3 / p^3 =
    # 9 / (4 p^2), p* = C (4 - beta) RTT^3 / (9 beta) = 0.4 x 3.8 x 0.001 / 1.8 = 8.444e-4 at
    # 100 ms; log10(0.001 / 8.444e-4) = 0.0734 decades below HSTCP's 0.001. The additive
    # increase alpha = 3 (1 - beta) / (1 + beta) at beta = 0.8 kept: 3 x 0.2 / 1.8 = 1/3 (the
    # text prints 0.5). At RTT 1 ms (100 times shorter) the boundary is 100^3 times smaller, 8.444e-10:
    # log10(1e-8 / 8.444e-10) = 1.073 decades below the lowest plotted loss rate.
    vals, _, _ = CATALOG["s001-friendly-region"].compute(base.TINY, None)
    p = 0.4 * 3.8 * 0.1 ** 3 / (9 * 0.2)
    assert vals == pytest.approx({"boundary_100ms": p, "larger_region_than_hstcp": math.log10(1e-3 / p),
                                  "additive_increase_08": 1 / 3,
                                  "friendly_at_any_loss_small_rtt": math.log10(1e-8 / (p / 100 ** 3))})
    assert vals["friendly_at_any_loss_small_rtt"] == pytest.approx(1.073, abs=5e-4)


def _stand_in(monkeypatch, data: str, plot: str, make):
    monkeypatch.setattr(model_figures, data, make)
    monkeypatch.setattr(model_figures, plot, lambda path, d: path)


def test_s004_fig3_rms_reductions(monkeypatch, tmp_path):
    # N = 100: RMS 0.1 at K = 100, 0.01 at K = 10000: log10(0.01 / 0.1) = -1; N = 1000: 0.05 ->
    # 0.004, log10(0.08) = -1.097; the larger, -1 (rows shuffled: the entry sorts by K). At the
    # largest K: log10(0.004 / 0.01) = log10(0.4) = -0.398.
    # A second validator seed with every RMS error 10 times larger has the same ratios: one
    # value per seed, each the same.
    one = pd.DataFrame({"n_states": [100, 100, 100, 1000, 1000], "K": [100, 1000, 10000, 100, 10000],
                        "rms": [0.1, 0.03, 0.01, 0.05, 0.004]}).iloc[[4, 1, 3, 0, 2]]
    d = pd.concat([one.assign(seed=0), one.assign(seed=1, rms=one.rms * 10)])
    _stand_in(monkeypatch, "bao_fig3_data", "plot_bao_fig3", lambda **kw: d)
    vals, _, _ = CATALOG["s004-fig3"].compute(base.TINY, tmp_path)
    assert vals == {"rms_falls_with_k": [pytest.approx(-1.0)] * 2,
                    "rms_falls_with_n": [pytest.approx(math.log10(0.4))] * 2}


def test_s004_fig4_largest_disagreement(monkeypatch, tmp_path):
    # |analytical - simulated| 0.01, 0.03, 0.02: the largest, 0.03 (the sign does not matter).
    # A second validator seed off by 0.05 at lambda 1: its largest, 0.05. One value per seed.
    d = pd.DataFrame({"loss_rate": [0.01, 0.1, 1.0] * 2, "seed": [0] * 3 + [1] * 3, "analytical": [0.9, 0.8, 0.5] * 2,
                      "simulated": [0.89, 0.83, 0.48, 0.9, 0.8, 0.55]})
    _stand_in(monkeypatch, "bao_fig4_data", "plot_bao_fig4", lambda **kw: d)
    vals, _, _ = CATALOG["s004-fig4"].compute(base.TINY, tmp_path)
    assert vals == {"agree": [pytest.approx(0.03), pytest.approx(0.05)]}


def test_s004_fig5_steps_and_drops(monkeypatch, tmp_path):
    # Along increasing C x RTT: lambda 0.01 0.99 .. 0.95 (drop 0.04), lambda 1 0.9 .. 0.5 (drop
    # 0.4), lambda 0.1 falling but for one step up of 0.02: the largest step 0.02; 0.4 - 0.04 =
    # 0.36; the largest throughput 0.99. Rows shuffled: the entry sorts by C x RTT.
    curves = {0.01: [0.99, 0.98, 0.97, 0.96, 0.95], 0.1: [0.95, 0.90, 0.92, 0.80, 0.75], 1.0: [0.9, 0.8, 0.7, 0.6, 0.5]}

    def fig5(bdps):
        assert len(bdps) == 5  # the coarse grid
        rows = [{"bdp": b, "loss_rate": lam, "throughput": x} for lam, xs in curves.items() for b, x in zip(bdps, xs)]
        return pd.DataFrame(rows).sample(frac=1.0, random_state=1)

    _stand_in(monkeypatch, "bao_fig5_data", "plot_bao_fig5", fig5)
    vals, _, _ = CATALOG["s004-fig5"].compute(base.TINY, tmp_path)
    assert vals == pytest.approx({"falls_with_bdp": 0.02, "random_loss_hurts_large_bdp": 0.36, "never_one": 0.99})


def _gains(column: str, ends: dict):
    """A stand-in sweep over `column` whose throughput at lambda goes from ends[lambda][0] at
    the first value to ends[lambda][1] at the last (0.5 between)."""
    def make(**kw):
        xs = kw[column + "s"]
        last = len(xs) - 1
        return pd.DataFrame([{column: x, "loss_rate": lam, "throughput": a if i == 0 else b if i == last else 0.5}
                             for lam, (a, b) in ends.items() for i, x in enumerate(xs)])
    return make


def test_s004_fig6_and_fig7_gains(monkeypatch, tmp_path):
    # Fig. 6, alpha 0.1 -> 10 Mb/s^3: lambda 1 from 0.1 to 0.9, +800%; lambda 0.01 from 0.8 to
    # 0.88, +10%: 10 / 800 = 0.0125. Fig. 7, beta 0.5 -> 0.9: lambda 1 from 0.4 to 0.94, +135%;
    # lambda 0.01 from 0.9 to 0.99, +10%: 135 - 10 = 125 points. The smallest step along the
    # five (coarse) values, 0.5 between the ends: alpha, lambda 0.01, 0.8 -> 0.5: -0.3; beta,
    # lambda 0.01, 0.9 -> 0.5: -0.4.
    _stand_in(monkeypatch, "bao_fig6_data", "plot_bao_fig6", _gains("alpha", {0.01: (0.8, 0.88), 1.0: (0.1, 0.9)}))
    _stand_in(monkeypatch, "bao_fig7_data", "plot_bao_fig7", _gains("beta", {0.01: (0.9, 0.99), 1.0: (0.4, 0.94)}))
    assert CATALOG["s004-fig6"].compute(base.TINY, tmp_path)[0] == pytest.approx(
        {"plus_806": 800.0, "small_lambda_little_gain": 0.0125, "improves_with_alpha": -0.3})
    assert CATALOG["s004-fig7"].compute(base.TINY, tmp_path)[0] == pytest.approx(
        {"plus_137": 135.0, "small_lambda_less_gain": 125.0, "improves_with_beta": -0.4})


def _invariance_calls(monkeypatch) -> tuple[list, dict]:
    """s004-invariance computed with a stand-in model that records its (C, RTT, alpha) and
    answers 0.5, 0.5 + 1e-9, 0.5 - 2e-9, 0.7 in turn."""
    from cubiclab.models import markov

    calls, answers = [], iter([0.5, 0.5 + 1e-9, 0.5 - 2e-9, 0.7])

    def model(c, rtt, alpha, beta, lam, n):
        calls.append((c, rtt, alpha))
        return SimpleNamespace(normalized_throughput=next(answers))

    monkeypatch.setattr(markov, "markov_model", model)
    vals, _, _ = CATALOG["s004-invariance"].compute(base.TINY, None)
    return calls, vals


def test_s004_invariance_reductions(monkeypatch):
    # The three settings sharing C x RTT / alpha (= 100e6 x 0.1 / 1e6 = 10) differ from the
    # first by 1e-9 and 2e-9: the largest, 2e-9; the fourth by 0.2.
    calls, vals = _invariance_calls(monkeypatch)
    assert vals == pytest.approx({"invariant": 2e-9, "not_trivial": 0.2})
    assert [c * r / a for c, r, a in calls[:3]] == pytest.approx([10.0] * 3)


def test_s004_invariance_not_trivial_compares_a_ratio_4_times_smaller(monkeypatch):
    # The not_trivial metric: "|difference| between the first setting and one with C·RTT/α 4
    # times smaller": the first's 100e6 x 0.1 / 1e6 = 10, the fourth's 10 / 4 = 2.5.
    calls, _ = _invariance_calls(monkeypatch)
    (c0, r0, a0), (c, r, a) = calls[0], calls[3]
    assert (c0 * r0 / a0, c * r / a) == (pytest.approx(10.0), pytest.approx(10.0 / 4))
    assert "4 times smaller" in {x.id: x for x in CATALOG["s004-invariance"].claims}["not_trivial"].metric


def _two_flows_3_and_1() -> SimpleNamespace:
    """Flow 0 at 3 Mb/s and flow 1 at 1 Mb/s over (0, 2], the link 90% busy there (and idle
    at t = 0, outside); flow 0 completed in 40 s, flow 1 never."""
    return results(samples(0, "first", [0, 1, 2], "throughput_bps", [9e6, 3e6, 3e6]) +
                   samples(1, "second", [0, 1, 2], "throughput_bps", [9e6, 1e6, 1e6]),
                   [{"flow": 0, "group": "first", "start_s": 0.0, "fct_s": 40.0},
                    {"flow": 1, "group": "second", "start_s": 0.0, "fct_s": NAN}],
                   link=[{"t": t, "utilization": u, "queue_bytes": 0.0} for t, u in ((0, 0.0), (1, 0.9), (2, 0.9))])


@pytest.mark.parametrize("name, expected", [
    # Jain of (3, 1): 4^2 / (2 x 10) = 0.8
    ("s002-grid", {"jain": 0.8, "utilization": 0.9}),
    ("s002-buffer", {"utilization": 0.9}),
    ("s002-scaling-bug", {"utilization": 0.9}),
    # flow 0 is Cubic (the scenario's first group), flow 1 the legacy TCP
    ("s002-friendliness", {"cubic_bps": 3e6, "tcp_bps": 1e6}),
    # a transfer that never completed has no completion time
    ("s002-completion-order", {"fct_first": 40.0, "fct_second": NAN}),
])
def test_s002_per_run_reads(name, expected):
    assert CATALOG[name].per_run(None, _two_flows_3_and_1(), 0.0, 2.0) == pytest.approx(expected, nan_ok=True)


# ---- explanations built from the rows --------------------------------------------------------


def test_s000_fig6_explains_the_contradiction_with_the_runs_numbers():
    e = CATALOG["s000-fig6"]
    rows = pd.DataFrame(FIG6_ROWS[:1])
    spec = next(c for c in e.claims if c.id == "cubic_link_share")
    # background 0.15 of the link, the link 0.95 busy, the eight flows 0.6 + 0.2 = 0.8
    assert e.explain(spec, rows) == (
        "In these runs the background traffic took 15% of the link and the link was 95% busy, the eight flows 80%; "
        "the paper's 72% + 23% with its 15% of background would be 110%.")
    assert e.explain(next(c for c in e.claims if c.id == "cubic_fair"), rows) == ""  # no contradiction declared


def test_s000_eq6_explains_the_short_epoch_with_its_numbers():
    # Epochs T = 8 s against K = 10 s: the loss comes C (K - T)^3 = 0.4 x 8 = 3.2 packets below
    # W_max, 2 s early, x = (K - T) / K = 0.2. The profile's average over the epoch against Eq. 6
    # at that epoch's loss rate (cubic_eq6_short_epoch_ratio's derivation): W_T / W_max = 1 -
    # beta / 4 (1 + x)(1 + x^2) = 0.9376, W_0 / W_max = 1 - beta / 4 = 0.95, (0.9376 / 0.95)^(1/4)
    # (1 - x)^(-3/4) = 1.178. Ours: the rows' mean ratio (1.15 + 1.17) / 2 = 1.160. Within ± 0.1
    # while that ratio <= 1.1, x <= 0.1215 (bisection below): K above 2 s / 0.1215 = 16.5 s,
    # W_max above 0.4 x 16.5^3 / 0.2 = 8926 packets (the entry's 1e-4 grid of x: within 0.5%).
    def ratio(x, beta=0.2):
        return ((1 - beta / 4 * (1 + x) * (1 + x * x)) / (1 - beta / 4)) ** 0.25 * (1 - x) ** -0.75

    lo, hi = 0.0, 0.99
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ratio(mid) <= 1.1 else (lo, mid)
    e = CATALOG["s000-eq6"]
    rows = pd.DataFrame({"epoch_s": [8.0, 8.0, NAN], "k_s": [10.0, 10.0, NAN], "ratio": [1.15, 1.17, NAN]})
    note = e.explain(e.claims[0], rows)  # the run without two losses (NaN) is left out
    assert "T = 8.00 s where Eq. 6 assumes K = 10.00 s" in note
    assert "still 3.2 packets below W_max, 2.00 s before it gets there" in note
    assert f"is {ratio(0.2):.3f} (ours 1.160)" in note and f"{ratio(0.2):.3f}" == "1.178"
    assert f"only for K above {2 / lo:.0f} s" in note
    w_max = float(note.split("W_max above ")[1].split(" packets")[0])
    assert w_max == pytest.approx(0.4 * (2 / lo) ** 3 / 0.2, rel=0.005)
    # epochs longer than K (the loss after W_max): no shortfall to explain, only the two times
    longer = pd.DataFrame({"epoch_s": [12.0], "k_s": [10.0], "ratio": [0.95]})
    assert e.explain(e.claims[0], longer) == "Its congestion epochs last 12.00 s, Eq. 6's K is 10.00 s."
