"""Results in a notebook: a one-line repr, an HTML view, and no empty tables of what was not
recorded in the written folder."""

import pytest

import cubiclab
from cubiclab import FlowGroup, Record, Scenario


@pytest.fixture(scope="module")
def res():
    return cubiclab.simulate(Scenario(name="two", duration="2s", flows=[FlowGroup("reno", count=2, rtt="20ms")]))


def test_repr_is_one_short_line(res):
    text = repr(res)
    assert "\n" not in text and len(text) < 300
    assert text.startswith("<Results two: 2 flows, 2 s, utilization ")
    assert f"flows {len(res.flows)}," in text


def test_html_shows_each_flow_and_table(res):
    page = res._repr_html_()
    assert page.count("<table") == 2 and len(page) < 10_000
    for name in res.tables():
        assert f"<td>{name}</td>" in page
    assert page.count("<td>reno</td>") == 4  # group and algorithm of both flows


def test_tables_not_recorded_are_not_written(res, tmp_path):
    names = {p.name for p in res.write(tmp_path, "csv")}
    assert names == {"flows.csv", "link.csv", "losses.csv", "totals.csv", "link_totals.csv", "summary.json"}
    detailed = cubiclab.simulate(Scenario(duration="1s", flows=[FlowGroup("reno", rtt="20ms")],
                                          record=Record(cwnd="changes", rtt_samples=True)))
    (tmp_path / "d").mkdir()
    names = {p.name for p in detailed.write(tmp_path / "d", "csv")}
    assert {"cwnd.csv", "rtt.csv"} <= names
