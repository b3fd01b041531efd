"""The catalog's tally, one owner for the CLI, the report and the docs page: verdicts
counted by the kind of evidence they rest on (`claims.EVIDENCE`), then by row (paper
claims, sensitivity rows, extensions; the seeds' papers apart from papers outside them);
rows true by the construction of cubiclab's own code are consistency checks, counted apart
and never as evidence. The headline counts the seeds' paper claims judged on packets,
simulated or on the kernel."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from cubiclab.experiments.claims import EVIDENCE, HEADLINE_EVIDENCE, KINDS, PAPER, SIMULATION, VERDICTS

OUTSIDE = " (outside the seeds)"
CONSISTENCY = "consistency check"


def claim_docs(outcomes) -> list[dict]:
    """The entries of `outcomes` as their claims.json documents."""
    return [o.to_doc() for o in outcomes]


def row_of(doc: dict, claim: dict) -> tuple[str, str]:
    """(evidence, row) under which a claim of entry document `doc` is counted."""
    evidence = doc.get("evidence", SIMULATION)
    if claim.get("construction"):
        return evidence, CONSISTENCY
    return evidence, claim["kind"] + (OUTSIDE if doc.get("seed") == "outside" else "")


def count(docs: Iterable[dict]) -> dict[tuple[str, str], Counter]:
    """{(evidence, row): Counter of verdicts}, in the order of EVIDENCE and of the rows."""
    rows = [*(k + w for k in KINDS for w in ("", OUTSIDE)), CONSISTENCY]
    counts = {(e, r): Counter() for e in EVIDENCE for r in rows}
    for d in docs:
        for c in d["claims"]:
            counts[row_of(d, c)][c["verdict"]] += 1
    return {k: n for k, n in counts.items() if n}


def headline(counts: dict[tuple[str, str], Counter]) -> Counter:
    """The seeds' paper claims judged on packets (simulated or on the kernel)."""
    total = Counter()
    for (evidence, row), n in counts.items():
        if evidence in HEADLINE_EVIDENCE and row == PAPER:
            total += n
    return total


def headline_text(counts: dict[tuple[str, str], Counter]) -> str:
    h = headline(counts)
    verdicts = ", ".join(f"{h[v]} {v}" for v in VERDICTS if h[v])
    return f"paper claims of the seeds judged on packets: {sum(h.values())}" + (f": {verdicts}" if verdicts else "")


def markdown_table(counts: dict[tuple[str, str], Counter]) -> list[str]:
    """The tally as Markdown table lines."""
    lines = ["| evidence | row | " + " | ".join(VERDICTS) + " | total |", "|---" * (len(VERDICTS) + 3) + "|"]
    for (evidence, row), n in counts.items():
        lines.append(f"| {evidence} | {row} | " + " | ".join(str(n[v]) for v in VERDICTS) + f" | {sum(n.values())} |")
    return lines
