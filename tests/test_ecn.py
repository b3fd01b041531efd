"""The flow group's `ecn` key at the Python edge, and what a run reports of it."""

import pytest

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario


def _scenario(*groups):
    return Scenario(duration="2s", bottleneck=Bottleneck(rate="10Mbps"), flows=list(groups))


def test_ecn_must_be_a_switch():
    with pytest.raises(ValueError, match=r"flows\[0\]\.ecn is 'yes' \(str\); allowed: a boolean \(true or false\) or omitted"):
        cubiclab.simulate(_scenario(FlowGroup("reno", ecn="yes")))


def test_dctcp_refuses_ecn_off():
    # tcp_ecn_send_syn: TCP_CONG_NEEDS_ECN negotiates ECN whatever tcp_ecn says.
    with pytest.raises(ValueError, match=r"flows\[0\]\.ecn is false, but dctcp needs ECN"):
        cubiclab.simulate(_scenario(FlowGroup("dctcp", ecn=False)))


def test_totals_say_which_flows_negotiated_ecn():
    # Drop-tail marks nothing: no CE, no ECN reduction, whichever flows negotiated ECN.
    r = cubiclab.simulate(_scenario(FlowGroup("cubic", ecn=True), FlowGroup("reno"), FlowGroup("dctcp")))
    t = r.totals
    assert list(t["ecn"]) == [True, False, True]
    assert list(t["ecn_reductions"]) == [0, 0, 0] and list(t["ce_marks"]) == [0, 0, 0]


def test_dctcp_is_listed():
    info = cubiclab.algorithm_info("dctcp")
    assert info.beta_kept == 0.5
    assert [p.name for p in info.params] == ["shift_g", "alpha_on_init"]
