"""Every column that record.rs declares reaches the DataFrames, under its shown name."""

import cubiclab
from cubiclab import Bottleneck, FlowGroup, Scenario
from cubiclab.results import COLUMNS
from cubiclab.scenario import Record


def _shown(col: str) -> str:
    # results._frame: t_ns -> t, every RTT in ms (rtt_ns, rtt_us, srtt_us), other times s.
    if col == "t_ns":
        return "t"
    if col in ("rtt_ns", "rtt_us", "srtt_us"):
        return col.rsplit("_", 1)[0] + "_ms"
    if col.endswith("_ns"):
        return col[:-3] + "_s"
    return col


def test_every_declared_column_arrives():
    r = cubiclab.simulate(Scenario(duration="2s", bottleneck=Bottleneck(rate="10Mbps"),
                                   flows=[FlowGroup("reno", rtt="30ms")], record=Record(cwnd="changes")))
    frames = r.tables()
    assert set(COLUMNS) == set(frames) | {"run"}
    for table, cols in COLUMNS.items():
        assert all(meaning for meaning in cols.values()), f"{table}: a column without its meaning"
        if table != "run":
            missing = {_shown(c) for c in cols} - set(frames[table].columns)
            assert not missing, f"{table}: {missing}"
    # The run table's counters feed the summary: 2 s of one flow at 10 Mbps.
    assert r.summary["events"] > 0 and 0.5 < r.summary["utilization"] <= 1.0
