"""Simulation results as pandas DataFrames, with Parquet/CSV output and a JSON summary."""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from cubiclab.io import atomic_dir

from cubiclab import _core
from cubiclab.scenario import compiled_links

INFINITE_SSTHRESH = 0x7FFFFFFF
#: Linux's congestion-avoidance states in the kernel's order: the one spelling of ``ca_state``.
CA_STATES = list(_core.CA_STATES)
#: Every core table's columns and their meaning, as ``record.rs`` declares them.
COLUMNS = {table: dict(cols) for table, cols in _core.result_schema()}
HEADER_BYTES = _core.HEADER_BYTES
#: Tables filled only when the scenario asks (record.cwnd = "changes", record.rtt_samples,
#: [[web]] groups, record.cc_state): not written when empty.
OPTIONAL_TABLES = ("cwnd", "rtt", "web", "cc_state")


def _frame(cols: dict) -> pd.DataFrame:
    """One core table as a frame, in the units a reader expects. Each column is taken out of
    `cols` (left empty) as it is converted, and the frame is built from the converted arrays
    without copying them, so a table is held at most once by the core and once by the frame
    (what the run's memory estimate counts), not in the further copies a frame built first
    and converted after makes."""
    first, middle, last = {}, {}, {}
    for col in list(cols):
        values = cols.pop(col)
        if col == "t_ns":
            first["t"] = values / 1e9
        elif col == "rtt_ns":
            last["rtt_ms"] = values / 1e6
        elif col.endswith("_ns"):  # start_ns, fct_ns: seconds; a missing completion time is NaN
            last[col[:-3] + "_s"] = pd.to_numeric(values, errors="coerce").astype(float) / 1e9
        elif col == "ssthresh":
            middle[col] = np.where(values != INFINITE_SSTHRESH, values, np.nan)
        elif col == "ca_state":
            middle[col] = pd.Categorical.from_codes(values, CA_STATES)
        elif col == "var":
            middle[col] = pd.Categorical(values)
        else:
            middle[col] = values
        del values
    # Every RTT in milliseconds, after the times in seconds (the columns' order of the files).
    for col in ("srtt_us", "rtt_us"):
        if col in middle:
            last[col[:-3] + "_ms"] = middle.pop(col) / 1e3
    return pd.DataFrame({**first, **middle, **last}, copy=False)


@dataclass(repr=False)
class Results:
    """What a run produced.

    - ``flows``: one row per flow per interval: t (s), flow, group, algorithm, cwnd,
      ssthresh (NaN while infinite), srtt_ms, throughput_bps (data leaving the
      bottleneck), goodput_bps (in-order payload delivered), drops, retransmits, ca_state.
    - ``link``: one row per link per interval (forward direction): t, link, queue_packets,
      queue_bytes, drops, marks (CE marks of the queue discipline), random_losses, utilization.
    - ``cwnd``: every change of cwnd/ssthresh (with ``record.cwnd = "changes"``).
    - ``rtt``: every RTT sample (with ``record.rtt_samples = true``): t, flow, rtt_ms.
    - ``losses``: every congestion event: t, flow, cwnd before it, timeout.
    - ``totals``: one row per flow.
    - ``web``: one row per completed background web object: t (requested), session, group,
      bytes, fct_s (request to last byte acknowledged, one RTT of handshake included).
    - ``link_totals``: one row per link direction over the run: link, name, direction,
      tx_bytes, capacity_bytes, drops, marks, random_losses.
    - ``cc_state``: each flow's algorithm state per interval (with ``record.cc_state =
      true``): t, flow, var, value, one row per variable (CUBIC's last_max_cwnd, K,
      epoch_start, ...; BBR's mode, bw, min_rtt_us, pacing_gain, cwnd_gain, ...);
      ``cc_state_wide()`` has one column per variable.
    - ``summary``: a dict (see ``summary_dict``).
    """

    scenario: object
    flows: pd.DataFrame
    link: pd.DataFrame
    cwnd: pd.DataFrame
    rtt: pd.DataFrame
    losses: pd.DataFrame
    totals: pd.DataFrame
    web: pd.DataFrame
    link_totals: pd.DataFrame = field(default_factory=pd.DataFrame)
    cc_state: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: dict = field(default_factory=dict)

    @classmethod
    def from_core(cls, scenario, spec: dict, raw: dict, wall_s: float) -> "Results":
        """Frames from the core's tables (their columns are declared once, in
        ``cubiclab-sim``'s ``record.rs``; ``cubiclab.results.COLUMNS`` lists them). Times in
        ns become seconds (``t``, ``start_s``, ``fct_s``), RTTs in us or ns milliseconds
        (``srtt_ms``, ``rtt_ms``),
        an infinite ssthresh NaN, and state codes names."""
        frames = {name: _frame(cols) for name, cols in raw.items() if name != "run"}
        duration = spec["duration"] / 1e9
        totals = frames["totals"]
        active = np.maximum(duration - totals["start_s"].to_numpy(), 1e-9)
        totals["mean_goodput_bps"] = totals["delivered_bytes"] * 8 / active
        flows = frames["flows"]
        groups, algs = totals["group"].to_numpy(), totals["algorithm"].to_numpy()
        flows["group"] = pd.Categorical(groups[flows["flow"].to_numpy()] if len(flows) else [])
        flows["algorithm"] = pd.Categorical(algs[flows["flow"].to_numpy()] if len(flows) else [])
        res = cls(scenario, **frames)
        res.summary = res._summary(spec, {k: v[0] for k, v in raw["run"].items()}, wall_s)
        return res

    def _summary(self, spec, run, wall_s) -> dict:
        duration = spec["duration"] / 1e9
        # The run's counters are the first link's, forward (the bottleneck of a dumbbell).
        first = compiled_links(spec)[0]
        rate = first["rate"]
        mss = spec["mss"]
        t = self.totals
        delivered = float(t["delivered_bytes"].sum())
        # Goodput through the first link's forward direction: the flows whose data crosses it.
        name = first.get("name", "bottleneck")
        through = (t["direction"] == "forward") & t["route"].map(lambda r: name in r.split(">"))
        through_first = float(t.loc[through, "delivered_bytes"].sum())
        by_group = t.groupby("group", observed=True)["delivered_bytes"].sum()
        return {
            "scenario": getattr(self.scenario, "name", "scenario"),
            "duration_s": duration,
            "rate_bps": rate,
            "utilization": run["bottleneck_tx_bytes"] * 8 / (rate * duration) if not first.get("schedule")
            else run["bottleneck_tx_bytes"] / run["bottleneck_capacity_bytes"],
            "goodput_utilization": through_first * 8 / (rate * duration) if not first.get("schedule")
            else through_first / run["bottleneck_capacity_bytes"],
            "flows": [
                {
                    "flow": int(r.flow), "group": r.group, "algorithm": r.algorithm,
                    "rtt_ms": float(r.rtt_ms),
                    "mean_throughput_bps": float(r.mean_goodput_bps),
                    "share": float(r.delivered_bytes / delivered) if delivered else 0.0,
                    "loss_events": int(r.loss_events), "timeouts": int(r.timeouts),
                    "retransmits": int(r.retransmits),
                }
                for r in t.itertuples()
            ],
            "group_shares": {str(g): float(v / delivered) if delivered else 0.0 for g, v in by_group.items()},
            "loss_events": int(t["loss_events"].sum()),
            "bottleneck_drops": int(run["bottleneck_drops"]),
            "bottleneck_random_losses": int(run["bottleneck_random_losses"]),
            "web_objects": int(len(self.web)),
            "web_mean_fct_s": float(self.web.fct_s.mean()) if len(self.web) else None,
            "web_forward_load": run["web_forward_delivered_bytes"] * (mss + HEADER_BYTES) / mss * 8
            / (rate * duration),
            "events": int(run["events"]),
            "wall_s": wall_s,
            "events_per_s": run["events"] / wall_s if wall_s > 0 else None,
            "packets_per_s": delivered / mss / wall_s if wall_s > 0 else None,
        }

    def _headline(self) -> str:
        s = self.summary
        return (f"{s.get('scenario', 'scenario')}: {len(self.totals)} flows, {s.get('duration_s', 0):g} s, "
                f"utilization {s.get('utilization', math.nan):.3f}")

    def __repr__(self) -> str:
        """One line a notebook can show: the run and each table's size."""
        sizes = ", ".join(f"{name} {len(df)}" for name, df in self.tables().items())
        return f"<Results {self._headline()}; rows: {sizes}>"

    def _repr_html_(self) -> str:
        """A notebook's view: the run, each flow's line of the summary, the tables' sizes."""
        per_flow = pd.DataFrame(self.summary.get("flows", []))
        sizes = pd.DataFrame([(name, len(df), ", ".join(map(str, df.columns))) for name, df in self.tables().items()],
                             columns=["table", "rows", "columns"])
        return (f"<p><b>Results</b> {html.escape(self._headline())}</p>"
                + per_flow.to_html(index=False, float_format=lambda x: f"{x:.4g}") + sizes.to_html(index=False))

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"flows": self.flows, "link": self.link, "cwnd": self.cwnd, "rtt": self.rtt,
                "losses": self.losses, "totals": self.totals, "web": self.web, "link_totals": self.link_totals,
                "cc_state": self.cc_state}

    def cc_state_wide(self, flow: int) -> pd.DataFrame:
        """One flow's algorithm state with a column per variable its algorithm reports, one
        row per interval (columns t and the variables)."""
        d = self.cc_state[self.cc_state.flow == flow]
        wide = d.pivot(index="t", columns="var", values="value")
        wide.columns = list(wide.columns)
        return wide.reset_index()

    def write(self, folder: str | Path, fmt: str = "parquet") -> list[Path]:
        """Write every table (Parquet or CSV) and summary.json into `folder`, a fresh folder
        of the caller's (see `save` for the all-or-nothing form). The tables of what a run
        records only when asked (``cwnd``, ``rtt``, ``web``: OPTIONAL_TABLES) are left out when
        empty."""
        if fmt not in ("parquet", "csv"):
            raise ValueError(f"format is '{fmt}'; allowed: parquet, csv")
        folder = Path(folder)
        written = []
        for name, df in self.tables().items():
            if name in OPTIONAL_TABLES and df.empty:
                continue
            path = folder / f"{name}.{fmt}"
            if fmt == "parquet":
                df.to_parquet(path, index=False)
            else:
                df.to_csv(path, index=False)
            written.append(path)
        (folder / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        written.append(folder / "summary.json")
        return written

    def save(self, outdir: str | Path, fmt: str = "parquet") -> list[Path]:
        """Write every table and summary.json to `outdir`, all or nothing: into a temporary
        folder that then replaces `outdir` (and whatever an earlier run left there) in one
        step. Returns the paths in `outdir`."""
        outdir = Path(outdir)
        with atomic_dir(outdir, replace=True) as tmp:
            written = self.write(tmp, fmt)
        return [outdir / p.name for p in written]
