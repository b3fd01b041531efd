"""Each algorithm's decrease and growth facts as the library states them
(`cubiclab.algorithm_info`), with numbers from the kernel sources, and the run-length
physics that asks for them."""

import math

import pytest

import cubiclab
from cubiclab.experiments import physics


def test_decrease_is_the_fraction_kept_from_the_kernel_constants():
    # tcp_cubic.c: beta = 717 in 1/1024 (BICTCP_BETA_SCALE), bic_scale 41: C = 41 * 10 / 2^10.
    cubic = cubiclab.algorithm_info("cubic")
    assert cubic.beta_kept == 717 / 1024
    assert cubic.growth == "cubic" and cubic.growth_constants["c"] == 410 / 1024
    # tcp_cong.c tcp_reno_ssthresh: cwnd >> 1.
    assert cubiclab.algorithm_info("reno").beta_kept == 0.5
    # tcp_bic.c: beta 819 / 1024; tcp_scalable.c: cwnd - (cwnd >> 3) keeps 7/8.
    assert cubiclab.algorithm_info("bic").beta_kept == 819 / 1024
    assert cubiclab.algorithm_info("scalable").beta_kept == 7 / 8
    # tcp_htcp.c: BETA_MIN = 128 >> 1 at the start, up to BETA_MAX = 102 (of 128).
    htcp = cubiclab.algorithm_info("htcp")
    assert (htcp.beta_kept, htcp.beta_kept_bounds) == (0.5, (0.5, 102 / 128))
    # tcp_bbr.c keeps ssthresh on a loss; bbr_min_rtt_win_sec = 10.
    bbr = cubiclab.algorithm_info("bbr")
    assert bbr.beta_kept is None and bbr.growth_constants == {"probe_rtt_interval_s": 10.0}


def test_highspeed_table():
    # tcp_highspeed.c hstcp_aimd_vals: 72 rows of {cwnd, md / 256}: {38, 128} keeps 1/2,
    # {118, 112} keeps 1 - 112/256, the last {89053, 24} keeps 1 - 24/256.
    hs = cubiclab.algorithm_info("highspeed")
    rows = hs.beta_kept_by_window
    assert len(rows) == 72 and rows[0] == (38, 0.5) and rows[1] == (118, 1 - 112 / 256)
    assert rows[-1] == (89053, 1 - 24 / 256) and hs.beta_kept_bounds == (0.5, 1 - 24 / 256)
    # RFC 3649's model, which physics plans with, ends at High_Decrease 0.1 near High_Window:
    # the table's row there removes 25/256, within 3% of it.
    top = next(kept for w, kept in rows if w >= physics.HS_HIGH_WINDOW)
    assert 1 - top == pytest.approx(physics.HS_HIGH_DECREASE, rel=0.03)


def test_beta_names_the_parameter_and_beta_kept_the_fact():
    # beta is kept: cubic's in 1/1024, cubic-2005's and RFC 9438's as a fraction; seed 000's
    # beta, the fraction removed, is cubic-2008's `decrease`, and its old name says so.
    assert cubiclab.algorithm_info("cubic", {"beta": 512}).beta_kept == 0.5
    assert cubiclab.algorithm_info("cubic-2008", {"decrease": 0.3}).beta_kept == pytest.approx(0.7)
    with pytest.raises(ValueError, match="^parameter 'beta' of algorithm 'cubic-2008' is now 'decrease' "
                                         r"\(the fraction of the window removed at a loss, seed 000's beta"):
        cubiclab.check_algorithm("cubic-2008", {"beta": 0.3})
    assert cubiclab.algorithm_info("cubic-2005", {"beta": 0.6}).beta_kept == 0.6
    assert cubiclab.algorithm_info("cubic-rfc9438").beta_kept == 0.7
    # cubic-2.0's clamp: 16 segments per 100 ms = 160/s; the 2.6.18 scaling bug an eighth.
    assert cubiclab.algorithm_info("cubic-2.0").growth_constants["max_increase_per_s"] == 160
    assert cubiclab.algorithm_info("cubic-2.0", {"scaling_bug": 1}).growth_constants["max_increase_per_s"] == 20
    assert math.isinf(cubiclab.algorithm_info("cubic").growth_constants["max_increase_per_s"])


def test_every_algorithm_has_facts_and_parameters_with_ranges():
    for a in cubiclab.algorithms():
        assert a.growth and all(p.min <= p.default <= p.max for p in a.params), a.name


def test_each_parameter_has_the_unit_its_code_reads():
    # tcp_cubic.c divides cwnd * beta by BICTCP_BETA_SCALE (1024) and keeps that; C =
    # bic_scale * 10 / 1024; hystart_ack_delta_us is compared with ACK gaps in us.
    units = {p.name: p.unit for p in cubiclab.algorithm_info("cubic").params}
    assert units["beta"] == "1/1024" and units["bic_scale"] == "10/1024 segments/s^3"
    # hystart is given by name since HyStart++ joined Linux's HyStart (0/1 still mean off/hystart).
    assert units["hystart_ack_delta_us"] == "us" and units["hz"] == "Hz" and units["hystart"] == "name"
    # Seed 000 (cubic-2008) sets ssthresh = cwnd (1 - beta); RFC 9438 keeps cwnd * beta.
    assert cubiclab.algorithm_info("cubic-2008").params[0].unit == "fraction removed"
    assert cubiclab.algorithm_info("cubic-rfc9438").params[0].unit == "fraction kept"
    assert all(p.unit for a in cubiclab.algorithms() for p in a.params)


def test_the_cli_prints_each_parameters_unit(capsys):
    from cubiclab import cli

    assert cli.main(["algorithms"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cubic = lines.index(next(line for line in lines if line.startswith("cubic ")))
    beta = next(line for line in lines[cubic:] if line.split()[0] == "beta")
    assert beta.split()[:4] == ["beta", "default", "717", "1/1024"], beta


def test_bad_names_and_parameters_are_refused():
    with pytest.raises(ValueError, match=r"unknown algorithm 'cubik'; allowed: cubic, "):
        cubiclab.algorithm_info("cubik")
    with pytest.raises(ValueError, match=r"parameter 'beta' of algorithm 'cubic' is 2000"):
        cubiclab.algorithm_info("cubic", {"beta": 2000})


def test_physics_refuses_an_algorithm_it_has_no_rule_for(monkeypatch):
    # every algorithm has a rule today: take vegas's away to see the refusal
    monkeypatch.delitem(physics._RULES, "vegas")
    with pytest.raises(ValueError, match=r"no rule for algorithm 'vegas'; it has rules for cubic, .*reno"):
        physics.epoch_s("vegas", {}, 100, 0.1)
    with pytest.raises(ValueError, match=r"no rule for algorithm 'vegas'"):
        physics.decrease_fraction("vegas", {})


def test_physics_has_a_rule_for_every_algorithm():
    assert [a.name for a in cubiclab.algorithms() if a.growth not in physics._RULES] == []


def test_physics_decrease_is_the_librarys():
    # cubic gives up 1 - 717/1024; cubic-2008 its beta 0.2 (to rounding: 1 - (1 - 0.2)).
    assert physics.decrease_fraction("cubic", {}) == 1 - 717 / 1024
    assert physics.decrease_fraction("cubic-2008", {}) == pytest.approx(0.2, abs=1e-15)
    assert physics.decrease_fraction("htcp", {}) == 0.5


def test_the_cli_lists_every_algorithm_with_its_source_and_parameters(capsys):
    from cubiclab import cli

    assert cli.main(["algorithms"]) == 0
    out = capsys.readouterr().out
    heads = {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines() if not line.startswith(" ")}
    listed = cubiclab.algorithms()
    assert list(heads) == [a.name for a in listed]
    params = [line.split()[0] for line in out.splitlines() if line.startswith("    ") and " default " in line]
    assert params == [p.name for a in listed for p in a.params]
    for a in listed:
        assert heads[a.name] == a.reference
    # A parameter given by name shows its default name and its choices.
    hystart = next(line for line in out.splitlines() if line.split()[0] == "hystart")
    assert hystart.split()[:3] == ["hystart", "default", "hystart"], hystart
    assert "one of off, hystart, hystart++" in hystart


def test_a_parameter_given_by_name():
    cubic = {p.name: p for p in cubiclab.algorithm_info("cubic").params}
    assert cubic["hystart"].choices == ("off", "hystart", "hystart++") and cubic["hystart"].default == 1
    assert cubic["beta"].choices == ()
    cubiclab.check_algorithm("cubic", {"hystart": "hystart++"})
    cubiclab.check_algorithm("cubic-rfc9438", {"hystart": "hystart++"})
    # The former switch: 0 and 1 are off and hystart.
    cubiclab.check_algorithm("cubic", {"hystart": 0})
    with pytest.raises(ValueError, match=r"parameter 'hystart' of algorithm 'cubic' is 'HyStart\+\+'; "
                                         r"allowed: one of off, hystart, hystart\+\+"):
        cubiclab.check_algorithm("cubic", {"hystart": "HyStart++"})
    with pytest.raises(ValueError, match=r"'hystart' of algorithm 'cubic-rfc9438' is 'hystart'; allowed: one of off, "):
        cubiclab.check_algorithm("cubic-rfc9438", {"hystart": "hystart"})
    with pytest.raises(ValueError, match=r"parameter 'beta' of algorithm 'cubic' is 'big'; allowed: an integer in"):
        cubiclab.check_algorithm("cubic", {"beta": "big"})
    # Replay takes names too; HyStart++'s variables join the trace.
    from cubiclab.replay import replay

    trace = "time_us,event,acked,rtt_us\n1000,ack,1,40000\n"
    assert replay("cubic", trace, {"hystart": "hystart++"}).current_round_min_rtt.tolist() == [40000]
    assert "css" not in replay("cubic", trace, {"hystart": "off"})


def test_a_scenario_runs_a_choice_and_refuses_a_bad_one_before_the_run():
    from cubiclab import Bottleneck, FlowGroup, Scenario

    def alone(hystart):
        return Scenario(name="ss", duration="3s", bottleneck=Bottleneck(rate="50Mbps", buffer="100%BDP"),
                        flows=[FlowGroup("cubic", rtt="40ms", params={"hystart": hystart})])

    # "off" is the former hystart = 0, run for run.
    off = cubiclab.simulate(alone("off"))
    assert off.flows.cwnd.tolist() == cubiclab.simulate(alone(0)).flows.cwnd.tolist()
    assert cubiclab.simulate(alone("hystart")).flows.cwnd.tolist() == cubiclab.simulate(alone(1)).flows.cwnd.tolist()
    plus = cubiclab.simulate(alone("hystart++"))
    assert plus.flows.cwnd.tolist() != off.flows.cwnd.tolist()
    with pytest.raises(ValueError, match=r"flows\[0\]\.params: parameter 'hystart' of algorithm 'cubic' is 'fast'; "
                                         r"allowed: one of off, hystart, hystart\+\+"):
        cubiclab.simulate(alone("fast"))
