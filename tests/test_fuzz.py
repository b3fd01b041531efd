"""Property tests of issue 18's contract: every generated input (scenario dicts, TOML files,
replay traces, command lines), valid or malformed, is either refused with a ValueError that
names the key, file or argument at fault, or runs to completion with a utilisation in [0, 1]
and no flow delivering more than arrived. A few hundred examples in all, each a run of at
most 1 s at 20 Mbps; scripts/fuzz_campaign.py runs the same generators at length."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cubiclab
from cubiclab import cli
from cubiclab.scenario import Scenario

from fuzz_inputs import (
    malformed_scenario, model_argv, names_a_key, replay_argv, scenario, toml_bytes, trace_text,
)

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_run(sc) -> None:
    """Run `sc`; a refusal must name its key, a run must conserve packets."""
    try:
        res = cubiclab.simulate(sc)
    except ValueError as e:
        assert names_a_key(str(e)), str(e)
        return
    s = res.summary
    assert 0.0 <= s["utilization"] <= 1.0, s["utilization"]
    assert 0.0 <= s["goodput_utilization"] <= 1.0, s["goodput_utilization"]
    mss = res.scenario.mss
    t = res.totals
    # Delivered payload came from segments that arrived: sent minus dropped and lost ones.
    arrived = (t.segments_sent - t.drops - t.random_losses) * mss
    assert (t.delivered_bytes <= arrived).all(), t[["segments_sent", "drops", "random_losses", "delivered_bytes"]]
    assert (t.drops >= 0).all() and (t.random_losses >= 0).all()


@FAST
@given(scenario())
def test_valid_scenarios_run_and_conserve_packets(sc):
    check_run(sc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(malformed_scenario())
def test_malformed_scenarios_are_refused_naming_the_key_or_run(sc):
    check_run(sc)


@FAST
@given(toml_bytes())
def test_toml_files_are_refused_naming_the_file_or_run(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("toml") / "fuzz.toml"
    path.write_bytes(data)
    try:
        sc = Scenario.load(path)
    except ValueError as e:
        assert str(e).startswith(str(path)), str(e)
        return
    check_run(sc)


@FAST
@given(trace_text(), st.sampled_from(["reno", "cubic", "bic", "htcp"]))
def test_traces_are_refused_naming_the_line_or_replayed(trace, algorithm):
    try:
        df = cubiclab.replay(algorithm, trace)
    except ValueError as e:
        assert str(e).startswith(("line ", "trace")), str(e)
        return
    rows = [r for r in trace.splitlines()[1:] if r.strip() and not r.startswith("#")]
    assert len(df) == len(rows)
    assert (df.cwnd >= 1).all()


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = cli.main(argv)
        except SystemExit as e:  # argparse's usage errors
            rc = e.code
    return rc, err.getvalue()


def check_cli(argv: list[str]) -> None:
    """Exit 0, or exit 2 with one line naming the problem."""
    rc, err = run_cli(argv)
    assert rc in (0, 2), (argv, rc, err)
    if rc == 2:
        assert len(err.strip().splitlines()) == 1 and "error: " in err, (argv, err)


@FAST
@given(model_argv())
def test_model_command_lines(argv):
    check_cli(argv)


@FAST
@given(replay_argv(), trace_text())
def test_replay_command_lines(tmp_path_factory, argv, trace):
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    path.write_text(trace)
    argv.insert(2, str(path))
    check_cli(argv)


@pytest.mark.parametrize("argv", [["replay", "reno", ""], ["run", "/"], ["run", "--duration", "1e300s"],
                                  ["run", "--seed", "-1"], ["model", "markov", "--states", "100000"]])
def test_command_lines_from_the_issue(argv):
    check_cli(argv)
