"""The result tables' reference, generated from the columns `record.rs` declares (as
`cubiclab.results.COLUMNS` receives them) and the columns the Python edge derives."""

from __future__ import annotations

INTRO = """# Result tables

`cubiclab.simulate` returns a `Results` whose tables are pandas DataFrames; `cubiclab run`
and `Results.save` write each as Parquet (or CSV) with a `summary.json`. The columns below
are generated from their one declaration, the `table!` blocks of
`crates/cubiclab-sim/src/record.rs`.

Units: the core's tables hold integers in base units named by their suffix (`_ns`, `_us`,
`_bps`, `_bytes`). In pandas, a column with a unit ends with it: times since the start in
seconds (`start_s`, `fct_s`; the sample time `t` is in seconds too), every round-trip time
in milliseconds (`srtt_ms`, `rtt_ms`), rates in bits/s (`_bps`), sizes in bytes (`_bytes`);
windows, thresholds and queues count segments or packets (`cwnd`, `ssthresh`,
`queue_packets`). On the way into pandas, times in ns become seconds (`t_ns` → `t`,
`start_ns` → `start_s`, `fct_ns` → `fct_s`), `srtt_us`, `rtt_us` and `rtt_ns` become
milliseconds (`srtt_ms`, `rtt_ms`), an infinite ssthresh becomes NaN, `ca_state` a
category (`open`, `disorder`, `cwr`, `recovery`, `loss`), and `flows` gains each flow's
`group` and `algorithm`, `totals` its `mean_goodput_bps`. The `run` table becomes part of
`summary`. `cubiclab.replay` gives its events' times as `t` in seconds too (the trace it
reads keeps the kernel's integer `time_us`, an input format).
"""


def results_reference() -> str:
    from cubiclab.results import COLUMNS

    lines = [INTRO]
    for table, cols in COLUMNS.items():
        lines += [f"## `{table}`", "", "| column | meaning |", "|---|---|"]
        lines += [f"| `{name}` | {meaning.replace('|', chr(92) + '|')} |" for name, meaning in cols.items()]
        lines.append("")
    return "\n".join(lines) + "\n"
