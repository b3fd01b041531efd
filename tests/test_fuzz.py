"""Property tests of issue 18's contract: every generated input (scenario dicts, TOML files,
replay traces, command lines), valid or malformed, is either refused with a ValueError that
names the key, file or argument at fault, or runs to completion with a utilisation in [0, 1]
and no flow delivering more than arrived. A few hundred examples in all, each a run of at
most 1 s at 20 Mbps; scripts/fuzz_campaign.py runs the same generators at length."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_inputs import (
    FILE_KINDS, FILE_ROLES, check_cli, check_file_case, check_run, check_schedule_trace, check_toml, check_trace,
    drawable, mahimahi_text, malformed_scenario, model_argv, replay_argv, scenario, toml_bytes, trace_text,
)

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(scenario())
def test_valid_scenarios_run_and_conserve_packets(sc):
    assert check_run(sc) == "ran"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(malformed_scenario())
def test_malformed_scenarios_are_refused_naming_the_key_or_run(sc):
    check_run(sc)


@FAST
@given(toml_bytes())
def test_toml_files_are_refused_naming_the_file_or_run(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("toml") / "fuzz.toml"
    path.write_bytes(data)
    check_toml(path)


@FAST
@given(trace_text(), st.sampled_from(["reno", "cubic", "bic", "htcp", "bbr"]))
def test_traces_are_refused_naming_the_line_or_replayed(trace, algorithm):
    check_trace(algorithm, trace)


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


@FAST
@given(mahimahi_text())
def test_schedule_traces_are_refused_naming_the_key_and_file_or_run(tmp_path_factory, data):
    check_schedule_trace(tmp_path_factory.mktemp("trace"), data)


def expected_outcome(kind: str, role: str) -> str:
    if role == "record.pcap":  # a name inside the run's folder, whatever the scenario's folder holds
        return "refused" if kind in ("missing folder", "escape") else "ran"
    if FILE_ROLES[role] == "output":  # any regular or new file the user names; never another kind
        return "refused" if kind in ("folder", "FIFO", "symlink", "missing folder") else "ran"
    if kind == "long trace":  # streamed as a schedule trace; no scenario file or replay trace
        return "ran" if role == "schedule trace" else "refused"
    return "ran" if kind in ("regular", "symlink") else "refused"


@pytest.mark.parametrize("kind, role", [(k, r) for k in FILE_KINDS for r in FILE_ROLES if drawable(k, r)])
def test_every_kind_of_file_where_a_run_names_one(tmp_path, kind, role):
    # Inputs read only from regular files within their cap, outputs never replacing what is
    # not a regular file, nothing written outside --out: refused in one line, or run.
    assert check_file_case(tmp_path, kind, role, "/dev/zero") == expected_outcome(kind, role)


def test_an_integer_beyond_a_double_is_refused_naming_the_key():
    # Found by the malformed-scenario search: a web load of 10**600 raised OverflowError
    # from float() instead of a refusal naming the key.
    import cubiclab

    sc = cubiclab.Scenario.from_dict({"duration": "200ms", "flows": [{"algorithm": "cubic", "rtt": "20ms"}],
                                      "web": [{"load": 10**600, "think": "200ms"}]})
    with pytest.raises(ValueError, match=r"^web\[0\]\.load is an integer of 601 digits"):
        sc.to_json()
