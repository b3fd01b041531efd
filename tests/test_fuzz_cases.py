"""Every input issue 18 found to crash, hang, exhaust memory or be misread, as a regression
test: each is refused before anything runs with a ValueError naming its key and what is
allowed (from the CLI: exit 2 and one line)."""

from __future__ import annotations

import pytest

from cubiclab import Bottleneck, FlowGroup, Scenario, cli
from cubiclab.replay import replay


def flow(**kw):
    return {"duration": "1s", "flows": [{"rtt": "40ms", **kw}]}


def with_(**kw):
    return {"duration": "1s", "flows": [{"rtt": "40ms"}], **kw}


CASES = {
    # huge finite numbers and values just above 2^64 - 1 (ns, bit/s, bytes)
    "rtt 1e300s": (flow(rtt="1e300s"), "flows[0].rtt", "at most 1152921504606846976 ns (about 36.5 years)"),
    "rate 1e300Tbps": (with_(bottleneck={"rate": "1e300Tbps"}), "bottleneck.rate", "at most"),
    "buffer 1e306packets": (with_(bottleneck={"buffer": "1e306packets"}), "bottleneck.buffer", "at most"),
    "load 5e-324": (with_(web=[{"load": 5e-324}]), "web[0].load", "allowed"),
    "duration 2^64 ns": (with_(duration="18446744074s"), "duration", "at most 1152921504606846976 ns (about 36.5 years)"),
    "rate 2e19bps": (with_(bottleneck={"rate": "2e19bps"}), "bottleneck.rate", "at most"),
    "buffer 1e30%BDP": (with_(bottleneck={"buffer": "1e30%BDP"}), "bottleneck.buffer", "at most"),
    # wrong types
    "params []": (flow(params=[]), "flows[0].params", "a table"),
    "params text": (flow(params="beta=717"), "flows[0].params", "a table"),
    "red = 5": (with_(bottleneck={"queue": "red", "red": 5}), "bottleneck.red", "a table"),
    "loss model list": (with_(bottleneck={"loss": {"model": ["bernoulli"]}}), "bottleneck.loss.model", "allowed"),
    "web algorithm list": (with_(web=[{"algorithm": ["cubic"]}]), "web[0].algorithm", "allowed"),
    "web algorithm 5": (with_(web=[{"algorithm": 5}]), "web[0].algorithm", "allowed"),
    "name = 7": (flow(name=7), "flows[0].name", "allowed"),
    "one table for flows": ({"flows": {"rtt": "40ms"}}, "flows", "[[flows]]"),
    "deep params": (flow(params={"a": {"b": {"c": {"d": 1}}}}), "flows[0].params", "allowed"),
    # errors that must name the field
    "web algorithm unknown": (with_(web=[{"algorithm": "nope"}]), "web[0].algorithm", "allowed: cubic"),
    "param out of range": (flow(params={"beta": -1}), "flows[0].params", "allowed"),
    # booleans are booleans
    "rtt_samples 'false'": (with_(record={"rtt_samples": "false"}), "record.rtt_samples", "a boolean"),
    "gentle 'false'": (with_(bottleneck={"red": {"gentle": "false"}}), "bottleneck.red.gentle", "a boolean"),
    "delayed_ack 'false'": (flow(delayed_ack="false"), "flows[0].delayed_ack", "a boolean"),
    # tables of features that are off are still checked
    "codel interval 0 under droptail": (with_(bottleneck={"codel": {"interval": "0s"}}),
                                        "bottleneck.codel.interval", "> 0"),
    "step threshold 0 under droptail": (with_(bottleneck={"step": {"threshold": "0packets"}}),
                                        "bottleneck.step.threshold", "at least 1 packet"),
    "step threshold bare number": (with_(bottleneck={"step": {"threshold": 20}}), "bottleneck.step.threshold",
                                   "100packets"),
    "red max_p 2 under droptail": (with_(bottleneck={"red": {"max_p": 2.0}}), "bottleneck.red.max_p", "allowed"),
    "gilbert under no loss elsewhere": (with_(bottleneck={"reverse_loss": {"model": "gilbert", "p_gb": 2,
                                                                          "p_bg": 0, "loss_good": 0, "loss_bad": 0}}),
                                        "bottleneck.reverse_loss.p_gb", "allowed"),
    "ack_every with delayed_ack off": (flow(delayed_ack=False, ack_every=0), "flows[0].ack_every", "allowed"),
    # bounded resources: the figure and the limit
    "initial_cwnd 2^30": (flow(initial_cwnd=1 << 30), "flows[0].initial_cwnd", "allowed: at most 4 GiB"),
    "web sessions from load": (with_(bottleneck={"rate": "1Gbps"}, web=[{"load": 0.5, "think": "1000s"}]),
                               "web[0]", "at most 100000 sessions"),
    "record.interval 1ns": (with_(record={"interval": "1ns"}), "record.interval", "allowed: at most 4 GiB"),
    "poisson 1e12 per s": (with_(bottleneck={"loss": {"model": "poisson", "rate": 1e12}}),
                           "bottleneck.loss.rate", "allowed: at most"),
    "start spacing overflows": (flow(count=1000, start_spacing="18446744073s"), "flows[0].start_spacing",
                                "allowed: at most"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_naming_the_key(case):
    d, key, allowed = CASES[case]
    with pytest.raises(ValueError) as e:
        Scenario.from_dict(d).validate()
    msg = str(e.value)
    assert msg.startswith(key), msg
    assert allowed in msg, msg


@pytest.mark.parametrize("make, key", [
    (lambda: Scenario(flows=FlowGroup()), "flows must be a list"),
    (lambda: Scenario(flows=[FlowGroup()], record=None), "record must be"),
    (lambda: Scenario(flows=[FlowGroup()], bottleneck=5), "bottleneck must be"),
    (lambda: Scenario(flows=[FlowGroup()], mss="1448"), "mss is"),
    (lambda: Scenario(flows=[FlowGroup(params={"beta": {1, 2}})]), "flows[0].params.beta"),
    (lambda: Scenario(flows=[FlowGroup(params={"beta": float("nan")})]), "flows[0].params.beta"),
])
def test_python_objects_of_the_wrong_type(make, key):
    with pytest.raises(ValueError, match=None) as e:
        make().validate()
    assert str(e.value).startswith(key), str(e.value)


def test_python_tables_are_taken_as_groups():
    # Dicts where the dataclasses are expected are read as the file's tables.
    sc = Scenario(flows=[{"rtt": "40ms"}], bottleneck={"rate": "10Mbps"}, duration="1s")
    assert sc.plan()["flows"][0]["rtt_ns"] == 40_000_000
    sc = Scenario(flows=[FlowGroup()], bottleneck=Bottleneck(rate="10Mbps"), record={"interval": "1s"})
    sc.validate()


@pytest.mark.parametrize("content, expect", [
    (b"\xef\xbb\xbfduration = '1s'\n[[flows]]\nrtt = '40ms'\n", None),  # a BOM is read past
    (b"duration = '1s'\xff\n", "not UTF-8 text (byte 15"),
    (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    (b"[flows]\nrtt = '40ms'\n", "flows must be a list of tables"),
])
def test_files(tmp_path, content, expect):
    path = tmp_path / "s.toml"
    path.write_bytes(content)
    if expect is None:
        Scenario.load(path).validate()
        return
    with pytest.raises(ValueError) as e:
        Scenario.load(path)
    assert str(e.value).startswith(str(path)) and expect in str(e.value), str(e.value)


@pytest.mark.parametrize("trace, expect", [
    ("time_us,event,acked,rtt_us\n0,ack,1\n", "line 2: 3 fields; the header has 4 columns"),
    ("time_us,event,acked,rtt_us\n0,ack,1,5,6\n", "line 2: 5 fields"),
    ("time_us,event,event\n", "trace header: column 'event' appears twice"),
    ("", "trace is empty"),
])
def test_traces(trace, expect):
    with pytest.raises(ValueError, match=expect.replace("(", r"\(").replace("[", r"\[")):
        replay("reno", trace)


@pytest.mark.parametrize("value", [-1, 0, 2**32, True, 1.5])
def test_replay_initial_cwnd(value):
    with pytest.raises(ValueError, match=r"initial_cwnd is .*; allowed: an integer in \[1, 1073741824\]"):
        replay("reno", "time_us,event,acked,rtt_us\n0,ack,1,40000\n", initial_cwnd=value)


def one_line_error(capsys, argv) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("argv, expect", [
    (["model", "markov", "--capacity", "1e300bps"], "capacity: '1e300bps' is too large"),
    (["model", "markov", "--alpha", "1e-308"], "alpha: 1e-308"),
    (["model", "markov", "--states", "100000"], "states: 100000 states need 596.0 GiB"),
    (["model", "validate", "--alpha", "1e-300", "--events", "10"], "alpha: 1e-300"),
])
def test_model_arguments(capsys, argv, expect):
    assert expect in one_line_error(capsys, argv)


@pytest.mark.parametrize("name, expect", [
    ("../escaped", "cannot be a folder inside --out"),
    ("/tmp/absolute", "cannot be a folder inside --out"),
    ("", "cannot be a folder inside --out"),
    (".hidden", "cannot be a folder inside --out"),
    ("a" * 5000, "name is 5000 bytes long"),
])
def test_output_names_stay_inside_out(tmp_path, capsys, name, expect):
    path = tmp_path / "s.toml"
    path.write_text(f"name = {name!r}\nduration = '100ms'\n[[flows]]\nrtt = '40ms'\n".replace("'", '"'))
    err = one_line_error(capsys, ["run", str(path), "--out", str(tmp_path / "out"), "--quiet", "--no-plots"])
    assert expect in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "escaped").exists()


def test_a_folder_as_the_scenario(tmp_path, capsys):
    assert "is not a file" in one_line_error(capsys, ["run", str(tmp_path)])
