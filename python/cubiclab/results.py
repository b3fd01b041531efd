"""Simulation results as pandas DataFrames, with Parquet/CSV output and a JSON summary."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from cubiclab.io import atomic_path, atomic_write_text

INFINITE_SSTHRESH = 0x7FFFFFFF
CA_STATES = ["open", "disorder", "cwr", "recovery", "loss"]


@dataclass
class Results:
    """What a run produced.

    - ``flows``: one row per flow per interval: t (s), flow, group, algorithm, cwnd,
      ssthresh (NaN while infinite), srtt_ms, throughput_bps (data leaving the
      bottleneck), goodput_bps (in-order payload delivered), drops, retransmits, ca_state.
    - ``link``: one row per interval: t, queue_packets, queue_bytes, drops, utilization.
    - ``cwnd``: every change of cwnd/ssthresh (with ``record.cwnd = "changes"``).
    - ``rtt``: every RTT sample (with ``record.rtt_samples = true``).
    - ``losses``: every congestion event: t, flow, cwnd before it, timeout.
    - ``totals``: one row per flow.
    - ``web``: one row per completed background web object: t (requested), session, group,
      bytes, fct_s (request to last byte acknowledged, one RTT of handshake included).
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
    summary: dict = field(default_factory=dict)

    @classmethod
    def from_core(cls, scenario, spec: dict, raw: dict, wall_s: float) -> "Results":
        groups = [f["group"] for f in spec["flows"]]
        algs = [f["algorithm"] for f in spec["flows"]]
        flows = pd.DataFrame(raw["flows"])
        flows.insert(0, "t", flows.pop("t_ns") / 1e9)
        flows["group"] = pd.Categorical([groups[i] for i in flows["flow"]])
        flows["algorithm"] = pd.Categorical([algs[i] for i in flows["flow"]])
        flows["ssthresh"] = flows["ssthresh"].where(flows["ssthresh"] != INFINITE_SSTHRESH).astype(float)
        flows["srtt_ms"] = flows.pop("srtt_us") / 1e3
        flows["ca_state"] = pd.Categorical.from_codes(flows["ca_state"].astype(int), CA_STATES)
        link = pd.DataFrame(raw["link"])
        link.insert(0, "t", link.pop("t_ns") / 1e9)
        cwnd = pd.DataFrame(raw["cwnd"])
        cwnd.insert(0, "t", cwnd.pop("t_ns") / 1e9)
        cwnd["ssthresh"] = cwnd["ssthresh"].where(cwnd["ssthresh"] != INFINITE_SSTHRESH).astype(float)
        rtt = pd.DataFrame(raw["rtt"])
        rtt.insert(0, "t", rtt.pop("t_ns") / 1e9)
        losses = pd.DataFrame(raw["losses"])
        losses.insert(0, "t", losses.pop("t_ns") / 1e9)
        totals = pd.DataFrame(raw["totals"])
        totals["rtt_ms"] = totals.pop("rtt_ns") / 1e6
        totals["start_s"] = totals.pop("start_ns") / 1e9
        totals["fct_s"] = [math.nan if v is None else v / 1e9 for v in totals.pop("fct_ns")]
        duration = spec["duration_ns"] / 1e9
        active = np.maximum(duration - totals["start_s"].to_numpy(), 1e-9)
        totals["mean_goodput_bps"] = totals["delivered_bytes"] * 8 / active
        web = pd.DataFrame(raw["web"])
        web.insert(0, "t", web.pop("t_ns") / 1e9)
        web_groups = [w["group"] for w in spec.get("web", [])]
        web["group"] = [web_groups[g] for g in web["group"]] if len(web) else []
        web["fct_s"] = web.pop("fct_ns") / 1e9
        res = cls(scenario, flows, link, cwnd, rtt, losses, totals, web)
        res.summary = res._summary(spec, raw, wall_s)
        return res

    def _summary(self, spec, raw, wall_s) -> dict:
        duration = spec["duration_ns"] / 1e9
        rate = spec["rate_bps"]
        t = self.totals
        delivered = float(t["delivered_bytes"].sum())
        by_group = t.groupby("group", observed=True)["delivered_bytes"].sum()
        return {
            "scenario": getattr(self.scenario, "name", "scenario"),
            "duration_s": duration,
            "rate_bps": rate,
            "utilization": raw["bottleneck_tx_bytes"] * 8 / (rate * duration),
            "goodput_utilization": delivered * 8 / (rate * duration),
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
            "bottleneck_drops": int(raw["bottleneck_drops"]),
            "bottleneck_random_losses": int(raw["bottleneck_random_losses"]),
            "web_objects": int(len(self.web)),
            "web_mean_fct_s": float(self.web.fct_s.mean()) if len(self.web) else None,
            "web_forward_load": raw["web_forward_delivered_bytes"] * (spec["mss"] + 52) / spec["mss"] * 8
            / (rate * duration),
            "events": int(raw["events"]),
            "wall_s": wall_s,
            "events_per_s": raw["events"] / wall_s if wall_s > 0 else None,
            "packets_per_s": delivered / spec["mss"] / wall_s if wall_s > 0 else None,
        }

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"flows": self.flows, "link": self.link, "cwnd": self.cwnd, "rtt": self.rtt,
                "losses": self.losses, "totals": self.totals, "web": self.web}

    def save(self, outdir: str | Path, fmt: str = "parquet") -> list[Path]:
        """Write every table (Parquet or CSV) and summary.json; each file atomically."""
        if fmt not in ("parquet", "csv"):
            raise ValueError(f"format is '{fmt}'; allowed: parquet, csv")
        outdir = Path(outdir)
        written = []
        for name, df in self.tables().items():
            path = outdir / f"{name}.{fmt}"
            with atomic_path(path) as tmp:
                if fmt == "parquet":
                    df.to_parquet(tmp, index=False)
                else:
                    df.to_csv(tmp, index=False)
            written.append(path)
        written.append(atomic_write_text(outdir / "summary.json", json.dumps(self.summary, indent=2) + "\n"))
        return written
