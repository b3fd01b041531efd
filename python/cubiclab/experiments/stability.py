"""Is a verdict a property of the paper's claim or of the run? Rerun entries as a careful
user would, with every run twice as long (warm-up and measured window both doubled) and with
other seeds (the next `seeds` of them), and list every claim whose verdict flips between
holds and does not hold. A move to or from inconclusive or not converged is shown but is no
flip: the interval then says it cannot decide. Every verdict change is counted, and a claim
whose value (the mean) lies inside its tolerance in one rerun and outside in another is
named as crossing it, whatever its intervals say."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from cubiclab.experiments.base import mode_named
from cubiclab.experiments.claims import FAILS, HOLDS
from cubiclab.experiments.runner import reproduce
from cubiclab.io import atomic_write_text
from cubiclab.report import write_report

DECISIVE = (HOLDS, FAILS)


def reruns(mode) -> dict:
    """The three runs compared: the mode itself, twice the duration, the next seeds."""
    return {"as planned": mode, "2x duration": dataclasses.replace(mode, stretch=2 * mode.stretch),
            "other seeds": dataclasses.replace(mode, seed_offset=mode.seed_offset + mode.seeds)}


def flips(verdicts: dict) -> bool:
    """`verdicts`: rerun -> verdict of one claim. A flip: both holds and does not hold."""
    return set(DECISIVE) <= set(verdicts.values())


def compare(outcomes: dict) -> list[dict]:
    """One row per claim: its verdict and `ours` in each rerun, and whether it flips.
    `outcomes`: rerun -> that rerun's Outcomes."""
    rows: dict = {}
    for rerun, outs in outcomes.items():
        for o in outs:
            for v in o.verdicts:
                r = rows.setdefault((o.name, v.spec.id), {"entry": o.name, "claim": v.spec.id, "kind": v.spec.kind,
                                                          "tolerance": str(v.spec.accept), "verdicts": {},
                                                          "ours": {}, "inside": {}})
                r["verdicts"][rerun] = v.verdict
                r["ours"][rerun] = v.ours
                if v.n:
                    r["inside"][rerun] = v.inside
    out = list(rows.values())
    for r in out:
        r["flips"] = flips(r["verdicts"])
        r["changes"] = len(set(r["verdicts"].values())) > 1
        r["crosses"] = len(set(r["inside"].values())) > 1
    return out


def markdown(rows: list[dict], reruns_: list[str]) -> str:
    """The comparison as a Markdown table: flips first, then other changes, then the rest."""
    head = "| entry | claim | kind | tolerance | " + " | ".join(reruns_) + " | flips | crosses |\n"
    head += "|---" * (6 + len(reruns_)) + "|\n"
    order = sorted(rows, key=lambda r: (not r["flips"], not r["changes"], not r["crosses"], r["entry"], r["claim"]))
    body = "".join(f"| {r['entry']} | {r['claim']} | {r['kind']} | {r['tolerance']} | " +
                   " | ".join(f"{r['verdicts'].get(k, '-')}: {r['ours'].get(k, '-')}" for k in reruns_) +
                   f" | {'**yes**' if r['flips'] else ''} | {'**yes**' if r['crosses'] else ''} |\n" for r in order)
    n = sum(r["flips"] for r in rows)
    crossing = [f"{r['entry']} {r['claim']}" for r in order if r["crosses"]]
    return (f"{n} of {len(rows)} claims flip between holds and does not hold; "
            f"{sum(r['changes'] for r in rows)} change verdict at all; {len(crossing)} cross their tolerance"
            + (f" ({', '.join(crossing)})" if crossing else "") + ".\n\n" + head + body)


def stability(names: list[str] | None = None, seeds: int | None = None, budget_scale: float | None = None,
              out: str | Path = "cubiclab-out/stability",
              jobs: int | None = None, ray: str | None = None, cache: str | Path | None = None,
              progress: bool = True, log=sys.stderr) -> list[dict]:
    """Run the named entries (all when None) in full mode as planned, at twice the duration
    and with other seeds (full mode's run budget times `budget_scale`); write stability.json and stability.md under `out` and return the
    comparison rows (`compare`). The planned runs share `cache` with `cubiclab reproduce`."""
    out = Path(out)
    cache = Path(cache) if cache else out / "cache"
    outcomes = {}
    for rerun, m in reruns(mode_named("full", seeds, budget_scale)).items():
        if log:
            print(f"cubiclab stability: {rerun}", file=log)
        outcomes[rerun] = reproduce(names, mode=m, out=out / rerun.replace(" ", "-"), jobs=jobs, ray=ray, cache=cache,
                                    progress=progress, report=False, log=log)
    rows = compare(outcomes)
    atomic_write_text(out / "stability.json", json.dumps(rows, indent=2) + "\n")
    atomic_write_text(out / "stability.md", markdown(rows, list(outcomes)))
    # the planned verdicts with their robustness (and the sensitivity reruns', if in `out`)
    write_report(outcomes["as planned"], out / "report.html", mode=mode_named("full", seeds, budget_scale))
    return rows
