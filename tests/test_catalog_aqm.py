"""The today's-queues catalog entries' metrics (python/cubiclab/experiments/aqm.py), computed
on hand-made rows and tables: the numbers each claim is judged on, never whether it holds."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from cubiclab.experiments import CATALOG
from cubiclab.experiments.aqm import added_delay_ms, dctcp_sawtooth, queue_delay_ms
from cubiclab.experiments.unstated import link_rate, rtt
from cubiclab.experiments.base import load_scenario


def test_dctcp_sawtooth_from_the_papers_equations():
    # 100 Mbit/s x 10 ms / (1500 x 8 bits) = 83.33 packets. K = 40, N = 2: Q_max = K + N = 42
    # (Eq. 10); A = 1/2 sqrt(2 x 2 x (83.33 + 40)) = 1/2 sqrt(493.3) = 11.105 (Eq. 8);
    # Q_min = 42 - 11.105 = 30.895 (Eq. 11).
    lo, hi = dctcp_sawtooth(100e6, 0.010, 40, 2, 1500)
    assert hi == 42
    assert lo == pytest.approx(42 - 0.5 * math.sqrt(4 * (100e6 * 0.01 / 12000 + 40)))
    assert lo == pytest.approx(30.895, abs=1e-3)


def test_fq_codel_entry_reads_the_fq_codel_runs():
    bulk = {"c20_bps": 5e6, "c40_bps": 5e6, "c80_bps": 5e6, "c160_bps": 4e6}
    rows = pd.DataFrame([{"queue": "fq_codel", "jain": 0.99, "sparse_ms": 1.5, "queue_ms": 6.0, "util": 0.98, **bulk},
                         {"queue": "droptail", "jain": 0.7, "sparse_ms": 90.0, "queue_ms": 80.0, "util": 1.0, **bulk}])
    v = CATALOG["x-fq-codel"].values(rows)
    assert v == {"per_flow_fairness": 0.99, "low_rate_isolated": 1.5, "queues_short": 6.0, "link_full": 0.98}


def test_dctcp_entry_places_the_mean_queue_in_the_sawtooth():
    rows = pd.DataFrame([{"k": 12, "util": 0.97, "place": 0.2}, {"k": 40, "util": 0.99, "place": 0.6}])
    assert CATALOG["x-dctcp-queue"].values(rows) == {"full_throughput_at_bdp_over_7": 0.97, "queue_near_k": 0.6,
                                                     "link_full_at_k40": 0.99}


def test_dualpi2_entry_balance_is_a_log2_ratio():
    rows = pd.DataFrame([{"rate_mbps": 40, "cubic_bps": 10e6, "dctcp_bps": 30e6},
                         {"rate_mbps": 20, "cubic_bps": 16e6, "dctcp_bps": 4e6}])
    # log2(30 / 10) = 1.585; log2(4 / 16) = -2.
    v = CATALOG["x-dualpi2-balance"].values(rows)
    assert v == pytest.approx({"rate_balance": math.log2(3.0), "rate_balance_20M": -2.0})


def test_queue_delay_and_a_groups_added_delay():
    # 20 Mbit/s: a mean backlog of 25,000 bytes is 25,000 x 8 / 20e6 = 10 ms; a sample at
    # t = 0 lies outside (0, 2] and is ignored.
    link = pd.DataFrame({"t": [0.0, 1.0, 2.0], "queue_bytes": [1e9, 20_000.0, 30_000.0]})
    flows = pd.DataFrame({"t": [1.0, 2.0, 1.0], "group": ["s", "s", "b"], "srtt_ms": [41.0, 43.0, 90.0]})
    totals = pd.DataFrame({"group": pd.Categorical(["s", "b"]), "rtt_ms": [40.0, 80.0]})
    res = SimpleNamespace(link=link, flows=flows, totals=totals, summary={"rate_bps": 20e6})
    assert queue_delay_ms(res, 0.0, 2.0) == pytest.approx(10.0)
    # (41 + 43) / 2 - 40 = 2 ms
    assert added_delay_ms(res, "s", 0.0, 2.0) == pytest.approx(2.0)


def test_the_rate_and_rtt_choices_scale_what_they_name():
    sc = load_scenario("x_dualpi2_balance")
    faster = link_rate("40 Mbps").apply(sc, 2.0)
    longer = rtt("40 ms").apply(sc, 0.5)
    assert (faster.bottleneck.rate, sc.bottleneck.rate) == ("80Mbps", "40Mbps")
    assert [g.rtt for g in longer.flows] == ["20ms", "20ms"]
    assert faster.bottleneck.dualpi2 == sc.bottleneck.dualpi2 == {"ecn_mask": "any_ect"}
