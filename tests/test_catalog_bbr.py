"""The CUBIC-against-BBR catalog entries' metrics (python/cubiclab/experiments/bbr.py),
computed on hand-made rows: the numbers each claim is judged on, never whether it holds."""

from types import SimpleNamespace

import pandas as pd
import pytest

from cubiclab.experiments import CATALOG
from cubiclab.experiments.bbr import retransmitted


def test_buffer_entry_shares_and_retransmission_ratio():
    nan = float("nan")
    rows = pd.DataFrame([
        {"buffer_bdp": 0.1, "who": "both", "bbr_bps": 15e6, "cubic_bps": 5e6, "bbr_retx": 0.5, "cubic_retx": 0.9},
        {"buffer_bdp": 10.0, "who": "both", "bbr_bps": 4e6, "cubic_bps": 16e6, "bbr_retx": 0.0, "cubic_retx": 0.001},
        {"buffer_bdp": 0.1, "who": "bbr", "bbr_bps": 19e6, "cubic_bps": nan, "bbr_retx": 0.04, "cubic_retx": nan},
        {"buffer_bdp": 0.1, "who": "cubic", "bbr_bps": nan, "cubic_bps": 17e6, "bbr_retx": nan, "cubic_retx": 0.01},
    ])
    v = CATALOG["x-bbr-cubic-buffers"].values(rows)
    # Together: 15 / (15 + 5) - 1/2 = 0.25 at 0.1 BDP, 4 / 20 - 1/2 = -0.3 at 10 BDP; each
    # alone at 0.1 BDP: 0.04 / 0.01 = 4 (the together rows' retransmissions do not enter).
    assert v == pytest.approx({"bbr_wins_shallow": 0.25, "cubic_wins_deep": -0.3,
                               "bbr_retransmits_more_shallow": 4.0})


def test_n_cubic_entry_spread_and_fair_share_multiple():
    rows = pd.DataFrame({"n_cubic": [1, 4, 16], "bbr_frac": [0.40, 0.35, 0.30]})
    v = CATALOG["x-bbr-vs-n-cubic"].values(rows)
    # spread 0.40 - 0.30 = 0.10; against 16 CUBIC flows 0.30 is 0.30 x 17 = 5.1 fair shares.
    assert v == pytest.approx({"link_share_flat": 0.10, "link_share_above_fair": 5.1})


def test_rtt_entry_long_flow_share():
    rows = pd.DataFrame([{"buffer_bdp": 1.0, "short_bps": 8e6, "long_bps": 12e6},
                         {"buffer_bdp": 4.0, "short_bps": 4e6, "long_bps": 16e6}])
    v = CATALOG["x-bbr-rtt-unfairness"].values(rows)
    # 12 / 20 - 1/2 = 0.1; 16 / 20 - 1/2 = 0.3.
    assert v == pytest.approx({"long_rtt_wins_one_bdp": 0.1, "long_rtt_wins_deep": 0.3})


def test_loss_entry_ratios():
    rows = pd.DataFrame([{"alg": a, "loss": p, "frac": f} for a, p, f in [
        ("bbr", 0.0, 0.95), ("bbr", 0.02, 0.90), ("bbr", 0.10, 0.80), ("bbr", 0.30, 0.08),
        ("cubic", 0.0, 0.98), ("cubic", 0.02, 0.098), ("cubic", 0.10, 0.01), ("cubic", 0.30, 0.0)]])
    v = CATALOG["x-bbr-random-loss"].values(rows)
    # 0.90 / 0.95; 0.098 / 0.98 = 0.1; 0.08 / 0.80 = 0.1.
    assert v == pytest.approx({"bbr_flat": 0.90 / 0.95, "cubic_collapses": 0.1, "bbr_cliff": 0.1})


def test_retransmissions_per_delivered_segment():
    # Group "a": one flow at 1448 x 8 x 100 bit/s of goodput for 2 s = 200 segments, 10
    # retransmitted in the window: 0.05. A sample at t = 0 lies outside (0, 2] and is ignored.
    flows = pd.DataFrame({"t": [0.0, 1.0, 2.0], "flow": 0, "group": "a",
                          "goodput_bps": [0.0, 1448 * 8 * 100.0, 1448 * 8 * 100.0], "retransmits": [99, 4, 6]})
    assert retransmitted(SimpleNamespace(flows=flows), 0.0, 2.0) == pytest.approx({"a": 0.05})
