"""Conditions a quoted sentence names, measured in the claim's runs (claims.Requires)."""

import math

import pandas as pd
import pytest

from cubiclab.experiments import CATALOG
from cubiclab.experiments.claims import UNMET, VERDICTS, Requires
from cubiclab.experiments.diagnostics import epoch_cv


def test_epoch_cv_is_the_spread_of_each_flows_epochs():
    # One flow, losses at 0, 1, 2, 3 s: every epoch 1 s, CV 0 (a deterministic loss process).
    assert epoch_cv([0, 1, 2, 3], [0, 0, 0, 0]) == 0.0
    # Epochs of 1 s and 2 s: mean 1.5, population sd 0.5, CV 1/3.
    assert epoch_cv([0, 1, 3], [0, 0, 0]) == pytest.approx(1 / 3)
    # Two flows interleaved: each flow's own gaps (2, 2 and 2, 2), not the gaps between
    # the two flows' events (1 s each).
    assert epoch_cv([0, 1, 2, 3, 4, 5], [0, 1, 0, 1, 0, 1]) == 0.0
    assert math.isnan(epoch_cv([0, 1], [0, 0]))  # one interval: no spread to measure


def test_a_condition_is_met_inside_its_range_only():
    r = Requires("sync_share", "highly unsynchronised conditions", hi=0.5)
    assert r.met(0.2) and r.met(0.5) and not r.met(0.8) and not r.met(math.nan)
    assert UNMET in VERDICTS


def test_runs_that_miss_the_sentences_condition_are_named():
    # s002-missing-drop's sustained_unfairness needs 'highly unsynchronised conditions':
    # at most half of the drop episodes hitting several flows. Its runs (Cubic 2.0, 25
    # sessions, by claim_runs) at 0.8 miss it; H-TCP's runs do not count.
    e = CATALOG["s002-missing-drop"]
    spec = e.claims[0]
    diag = pd.DataFrame({"alg": ["cubic-2.0", "cubic-2.0", "htcp"], "sessions": [25, 25, 25],
                         "sync_share": [0.7, 0.9, 0.1]})
    assert e._unmet(spec, diag) == ("Its runs do not meet the condition its sentence names: 'highly unsynchronised "
                                    "conditions' (sync_share 0.8, it needs [-inf, 0.5]), so they cannot show the "
                                    "claim.")
    assert e._unmet(spec, diag.assign(sync_share=[0.3, 0.5, 0.9])) == ""


def test_the_report_renders_a_condition_not_met():
    # The report colours holds and does not hold; every other verdict, this one included,
    # renders as undecided (it raised a KeyError when the colour table listed verdicts).
    from cubiclab.experiments.base import Outcome
    from cubiclab.experiments.claims import Verdict
    from cubiclab.report import render

    e = CATALOG["s002-missing-drop"]
    v = Verdict(e.claims[0], verdict=UNMET, note="Its runs do not meet the condition its sentence names")
    page = render([Outcome(e.name, e.title, e.seed, e.figure, e.setup, verdicts=[v])])
    assert f"<td class='v untested'>{UNMET}</td>" in page
