"""The catalog's pages, one per entry, from the entries' declarations
(`cubiclab.experiments.CATALOG`): the paper's figure, the setup, and the declared claims
table (the paper's sentence quoted, where it is, the paper's value, what we measure and
what counts as agreement, and why), with the command that reruns it. Verdicts and figures
exist only after a run: when `CUBICLAB_CATALOG_RESULTS` names the output folder of
`cubiclab reproduce --all --out DIR`, each page also shows our value and the verdict of
each claim, and the entry's figures (copied into the site)."""

from __future__ import annotations

import json
import os
from pathlib import Path

SEEDS = {
    "000": "Ha, Rhee, Xu, \"CUBIC: A New TCP-Friendly High-Speed TCP Variant\" (2008)",
    "001": "Rhee, Xu, \"CUBIC: A New TCP-Friendly High-Speed TCP Variant\" (PFLDnet 2005)",
    "002": "Leith, Shorten, McCullagh, \"Experimental Evaluation of Cubic TCP\" (PFLDnet 2007)",
    "003": "Shanker, \"Congestion Control II: CUBIC\" (blog post, 2018)",
    "004": "Bao, Wong, Leung, \"A Model for Steady State Throughput of TCP CUBIC\"",
}


def results_dir() -> Path | None:
    value = os.environ.get("CUBICLAB_CATALOG_RESULTS")
    return Path(value) if value else None


def _cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _declared(entry, verdicts: dict | None) -> list[str]:
    """The claims table as declared; with a run's verdicts, ours and the verdict too."""
    lines = ["## Claims", ""]
    for c in entry.table():
        lines += [f"### `{c.id}` ({c.kind})", "", f"> {c.quote}", "",
                  f"*{c.where}, {c.source}.* Paper: **{c.paper}**. We measure {c.metric}"
                  + (f" ({c.unit})" if c.unit else "") + f"; agreement: {c.accept} ({c.accept.sided})"
                  + (f"; the metric lies in {c.bounds}." if str(c.bounds) else "."), "",
                  c.rationale, ""]
        if c.contradiction:
            lines += [f"Where it contradicts: {c.contradiction}", ""]
        for r in c.requires:
            lines += [f"Its runs must meet what the sentence names, '{r.says}': {r}; else the verdict is "
                      "\"condition not met\".", ""]
        v = (verdicts or {}).get(c.id)
        if v is not None:
            lines += [f"**Verdict: {v['verdict']}**, ours {v['ours']}" + (f". {v['note']}" if v.get("note") else "."), ""]
    return lines


def entry_page(entry, doc: dict | None, figures: list[str]) -> str:
    lines = [f"# {entry.name}: {entry.title}", "",
             f"**Source:** seed {entry.seed}, {entry.figure}: {SEEDS.get(entry.seed, '')}.", ""]
    if entry.setup:
        lines += ["## Setup", "", entry.setup, ""]
    if entry.unstated:
        lines += ["## Settings the paper leaves unstated", "",
                  "Each is varied, one at a time, by `cubiclab reproduce --sensitivity`, which says of every "
                  "verdict whether it is robust or depends on the setting.", ""]
        lines += [f"- **{u.key}**: {u.chosen}; varied: " + ", ".join(u.label(v) for v in u.values) for u in entry.unstated]
        lines += [""]
    lines += ["## Rerun it", "", "```sh", f"cubiclab reproduce {entry.name} --mode quick   # indicative, minutes",
              f"cubiclab reproduce {entry.name}                # the paper's lengths, an ensemble of seeds", "```", "",
              f"The figure (PNG and SVG), the data (Parquet) and `claims.json` land in "
              f"`cubiclab-out/reproduce/{entry.name}/`, and `report.html` beside it shows every "
              "claim with the paper's value, ours, the accepted region and the verdict.", ""]
    if doc is not None:
        lines += [f"Shown below: a run in `{doc.get('mode', '?')}` mode."
                  + (f" It failed: {doc['error']}" if doc.get("error") else ""), ""]
        lines += [f"- {c}" for c in doc.get("caveats", [])] + [""]
    verdicts = {c["id"]: c for c in doc["claims"]} if doc is not None else None
    lines += _declared(entry, verdicts)
    for fig in figures:
        lines += [f"![{entry.figure}]({fig})", ""]
    return "\n".join(lines) + "\n"


def catalog_pages(results: Path | None = None) -> dict[str, str | bytes]:
    """{path under docs/: text or bytes}: catalog/index.md and one page per entry, with the
    verdicts and figures of the catalog run in `results` if given."""
    from cubiclab.experiments import CATALOG

    pages: dict[str, str | bytes] = {}
    index = ["# Catalog", "",
             "One entry per figure of the seed papers. Each reruns the paper's experiment, plots it "
             "like the paper's figure and checks the paper's claims, declared before any number: the "
             "paper's sentence, its value, what we measure and what counts as agreement; a run adds "
             "ours and the verdict. `cubiclab reproduce --list` lists them; "
             "[Reproduce a figure](../tutorials/reproduce-a-figure.md) walks through one.", "",
             "| entry | source | what |", "|---|---|---|"]
    for name, entry in CATALOG.items():
        doc, figures = None, []
        if results is not None and (results / name / "claims.json").exists():
            doc = json.loads((results / name / "claims.json").read_text())
            for png in sorted((results / name).glob("*.png")):
                pages[f"catalog/{name}/{png.name}"] = png.read_bytes()
                figures.append(f"{name}/{png.name}")
        pages[f"catalog/{name}.md"] = entry_page(entry, doc, figures)
        index.append(f"| [{name}]({name}.md) | seed {entry.seed}, {entry.figure} | {entry.title} |")
    pages["catalog/index.md"] = "\n".join(index) + "\n"
    return pages
