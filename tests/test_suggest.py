"""'Did you mean': a refusal of an unknown name suggests the nearest allowed one, read from the
registries and the schema (so names they gain are covered)."""

import re

import pytest

import cubiclab
from cubiclab.cli import main
from cubiclab.scenario import DISCIPLINE_TABLES, Scenario

BASE = {"duration": "1s", "bottleneck": {"rate": "10Mbps"}, "flows": [{"algorithm": "cubic", "rtt": "40ms"}]}


@pytest.mark.parametrize("name", [a.name for a in cubiclab.algorithms()])
def test_every_algorithm_is_suggested_for_its_typo(name):
    with pytest.raises(ValueError, match=f"did you mean '{name}'\\?$"):
        cubiclab.check_algorithm(name + "x")


@pytest.mark.parametrize("name", [p.name for a in cubiclab.algorithms() for p in a.params if a.name == "cubic"])
def test_parameters(name):
    with pytest.raises(ValueError, match=f"did you mean '{name}'\\?$"):
        cubiclab.check_algorithm("cubic", {name[:-1]: 1})


@pytest.mark.parametrize("queue", ["droptail", *DISCIPLINE_TABLES])
def test_queue_disciplines_from_the_schema(queue):
    with pytest.raises(ValueError, match=f"did you mean '{queue}'\\?$"):
        Scenario.from_dict({**BASE, "bottleneck": {"queue": queue + "x"}}).validate()


@pytest.mark.parametrize("where,d,name", [
    ("scenario", {**BASE, "bottlenek": {}}, "bottleneck"),
    ("flows[0]", {**BASE, "flows": [{"countt": 2}]}, "count"),
    ("record.cwnd", {**BASE, "record": {"cwnd": "change"}}, "changes"),
    ("flows[0].algorithm", {**BASE, "flows": [{"algorithm": "renoo"}]}, "reno"),
])
def test_keys_and_values(where, d, name):
    with pytest.raises(ValueError, match=f"^{re.escape(where)}.*did you mean '{name}'\\?$"):
        cubiclab.simulate(d)


def test_nothing_close_no_suggestion():
    with pytest.raises(ValueError) as e:
        cubiclab.check_algorithm("zzzz")
    assert "did you mean" not in str(e.value) and "allowed: cubic" in str(e.value)


def test_cli_choice_and_error(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["run", "--format", "parqet"])
    assert capsys.readouterr().err.endswith("did you mean 'parquet'?\n")
    trace = tmp_path / "t.csv"
    trace.write_text("time_us,event,acked,rtt_us\n0,ack,1,40000\n")
    assert main(["replay", "bbrr", str(trace)]) == 2
    assert capsys.readouterr().err.endswith("did you mean 'bbr'?\n")


@pytest.mark.parametrize("argv, option", [(["run", "--seeed", "3"], "--seed"), (["reproduce", "--lst"], "--list"),
                                          (["replay", "cubic", "t.csv", "--initial-cwd", "2"], "--initial-cwnd")])
def test_cli_unknown_option_suggests_the_subcommands_own(capsys, argv, option):
    # argparse's "unrecognized arguments" lists nothing allowed: the nearest option is read
    # from the subcommand's own parser (run has --seed, reproduce --seeds).
    with pytest.raises(SystemExit):
        main(argv)
    assert capsys.readouterr().err.endswith(f"did you mean '{option}'?\n")


def test_shipped_trace_names():
    from cubiclab.traces import TRACES

    for name in TRACES:
        with pytest.raises(ValueError, match=f"did you mean '{name}'\\?$"):
            Scenario.from_dict({**BASE, "bottleneck": {"schedule": {"trace": name[:-1]}}}).validate()


@pytest.mark.parametrize("key, where, value, default", [
    ("rtt", "flows[0].rtt", 40, "40ms"), ("duration", "duration", 60, "60s")])
def test_a_number_without_its_unit_is_shown_the_default_form(key, where, value, default):
    # rtt = 40: a time is text with its unit; the refusal shows the field's default as the form.
    d = {**BASE, **({key: value} if key == "duration" else {"flows": [{"algorithm": "cubic", key: value}]})}
    with pytest.raises(ValueError, match=f"^{re.escape(where)} is {value} .*with its unit, as the default '{default}'$"):
        Scenario.from_dict(d).validate()


def test_a_buffer_in_percent_is_shown_the_bdp_forms():
    with pytest.raises(ValueError, match=r"^bottleneck\.buffer: .*'100%'.*or relative to the BDP: '100%BDP'"):
        Scenario.from_dict({**BASE, "bottleneck": {"buffer": "100%"}}).validate()


def test_a_bare_multiple_of_the_bdp_above_one_is_refused_as_ambiguous():
    # '100BDP' was a hundred BDPs, silently, where '100%BDP' (one BDP) was meant; a fraction
    # ('0.5BDP') or one BDP stays unambiguous.
    with pytest.raises(ValueError, match=r"^bottleneck\.buffer: '100BDP' is ambiguous; write '100%BDP' .* or '100xBDP'"):
        Scenario.from_dict({**BASE, "bottleneck": {"buffer": "100BDP"}}).validate()
    def buffer(form):
        return Scenario.from_dict({**BASE, "bottleneck": {"buffer": form}}).compile()["bottleneck"]["buffer"]

    for form, same in (("0.5BDP", "50%BDP"), ("1BDP", "100%BDP"), ("3xBDP", "300%BDP")):
        assert buffer(form) == buffer(same)


@pytest.mark.parametrize("make, field, nearest", [
    (lambda: cubiclab.FlowGroup(cont=2), "cont", "count"),
    (lambda: cubiclab.Bottleneck(rat="10Mbps"), "rat", "rate"),
    (lambda: cubiclab.Link(nmae="left"), "nmae", "name"),
    (lambda: cubiclab.Scenario(duraton="1s"), "duraton", "duration"),
    (lambda: cubiclab.scenario.WebGroup(sesions=3), "sesions", "sessions"),
])
def test_a_constructor_keyword_typo_is_shown_the_nearest_field(make, field, nearest):
    # The Python API refuses a misspelt keyword as the TOML path refuses a misspelt key: the
    # nearest field and the allowed ones (Python's own TypeError names neither).
    with pytest.raises(TypeError, match=rf"no field '{field}'; did you mean '{nearest}'\? \(allowed: .*{nearest}"):
        make()
