"""Does a verdict rest on a setting the paper never gave? Rerun every entry at each value of
each setting it leaves unstated (`Experiment.unstated`, experiments/unstated.py), one setting
at a time, everything else as planned, and report each claim as robust (the same verdict at
every value) or as depending on the settings whose values change it."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from cubiclab.experiments.base import Mode, mode_named
from cubiclab.experiments.runner import reproduce, select
from cubiclab.io import atomic_write_text
from cubiclab.report import write_report

PLANNED = "as planned"


def choices(entries) -> dict:
    """(key, value) -> (label, the names of the entries that leave `key` unstated with that
    value in their range), in declaration order."""
    out: dict = {}
    for e in entries:
        for u in e.unstated:
            for value in u.values:
                out.setdefault((u.key, value), (u.label(value), []))[1].append(e.name)
    return out


def compare(planned, varied: dict) -> list[dict]:
    """One row per claim of the planned outcomes: its verdict and `ours` as planned and at
    each varied setting that reran its entry, `robust` (no varied setting changes it) and
    `depends_on` (the keys of the settings that do). A setting changes a claim when it
    changes its verdict or moves its value across the tolerance (in or out): the second
    also in the indicative modes, whose verdicts never change. `varied`: label -> (key,
    that rerun's Outcomes)."""
    rows = {}
    for o in planned:
        for v in o.verdicts:
            rows[(o.name, v.spec.id)] = {"entry": o.name, "claim": v.spec.id, "kind": v.spec.kind,
                                         "verdict": v.verdict, "ours": v.ours, "inside": v.inside, "varied": {},
                                         "depends_on": []}
    for label, (key, outs) in varied.items():
        for o in outs:
            for v in o.verdicts:
                r = rows.get((o.name, v.spec.id))
                if r is None:
                    continue
                r["varied"][label] = {"verdict": v.verdict, "ours": v.ours, "inside": v.inside}
                if (v.verdict, v.inside) != (r["verdict"], r["inside"]) and key not in r["depends_on"]:
                    r["depends_on"].append(key)
    out = list(rows.values())
    for r in out:
        r["robust"] = bool(r["varied"]) and not r["depends_on"]
    return out


def summary(r: dict) -> str:
    """'robust', 'depends on start, buffer' or 'no unstated setting'."""
    if not r["varied"]:
        return "no unstated setting"
    return "robust" if r["robust"] else "depends on " + ", ".join(r["depends_on"])


def markdown(rows: list[dict]) -> str:
    """The table: claims that depend on a setting first, each varied run's verdict beside it."""
    head = "| entry | claim | verdict (as planned) | sensitivity | varied runs |\n|---|---|---|---|---|\n"
    order = sorted(rows, key=lambda r: (r["robust"] or not r["varied"], r["entry"], r["claim"]))
    body = "".join(f"| {r['entry']} | {r['claim']} | {r['verdict']}: {r['ours']} | {summary(r)} | " +
                   "; ".join(f"{k}: {x['verdict']} ({x['ours']})" for k, x in r["varied"].items()) + " |\n"
                   for r in order)
    varied = [r for r in rows if r["varied"]]
    n = sum(not r["robust"] for r in varied)
    return (f"{n} of {len(varied)} claims with unstated settings depend on one "
            f"({len(rows) - len(varied)} claims rest on none).\n\n" + head + body)


def sensitivity(names: list[str] | None = None, mode: str | Mode = "full", seeds: int | None = None,
                budget_scale: float | None = None, out: str | Path = "cubiclab-out/sensitivity",
                jobs: int | None = None, ray: str | None = None, cache: str | Path | None = None,
                progress: bool = True, log=sys.stderr) -> list[dict]:
    """Run the named entries (all when None) as planned and once per value of each setting
    they leave unstated; write sensitivity.json and sensitivity.md under `out` and return the
    rows (`compare`). Every rerun shares `cache` with `cubiclab reproduce`."""
    out = Path(out)
    m = mode if isinstance(mode, Mode) else mode_named(mode, seeds, budget_scale)
    entries = select(names)
    cache = Path(cache) if cache else out / "cache"
    run = dict(jobs=jobs, ray=ray, cache=cache, progress=progress, report=False, log=log)
    if log:
        print(f"cubiclab sensitivity: {PLANNED}", file=log)
    planned = reproduce([e.name for e in entries], mode=m, out=out / "as-planned", **run)
    varied = {}
    for (key, value), (label, who) in choices(entries).items():
        if log:
            print(f"cubiclab sensitivity: {label} ({len(who)} entries)", file=log)
        folder = out / label.replace(" ", "-").replace("=", "-")
        varied[label] = (key, reproduce(who, mode=dataclasses.replace(m, choice=(key, value)), out=folder, **run))
    rows = compare(planned, varied)
    atomic_write_text(out / "sensitivity.json", json.dumps(rows, indent=2) + "\n")
    atomic_write_text(out / "sensitivity.md", markdown(rows))
    write_report(planned, out / "report.html", mode=m)  # the planned verdicts with their robustness
    return rows
