"""The catalog's pages, one per entry, from the entries' declarations
(`cubiclab.experiments.CATALOG`): the paper's figure, the setup, the algorithms, the
command that reruns it. Verdicts and figures exist only after a run: when
`CUBICLAB_CATALOG_RESULTS` names the output folder of `cubiclab reproduce --all --out
DIR`, each page also shows the claims with the paper's value, ours, the tolerance and the
verdict, and the entry's figures (copied into the site)."""

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


def _claims(doc: dict) -> list[str]:
    lines = ["## Claims and verdicts", ""]
    if doc.get("skipped") or doc.get("error"):
        return lines + [f"Not run: {doc.get('skipped') or doc.get('error')}", ""]
    lines += ["| claim | paper | ours | tolerance | verdict |", "|---|---|---|---|---|"]
    for c in doc["claims"]:
        cells = [c["text"], c["paper"], c["ours"], c["tolerance"], f"**{c['verdict']}**"]
        lines.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    notes = [c for c in doc["claims"] if c.get("note")]
    lines.append("")
    lines += [f"- *{c['id']}*: {c['note']}" for c in notes]
    lines += [f"- {c}" for c in doc.get("caveats", [])]
    return lines + [""]


def entry_page(entry, doc: dict | None, figures: list[str]) -> str:
    lines = [f"# {entry.name}: {entry.title}", "",
             f"**Source:** seed {entry.seed}, {entry.figure}: {SEEDS.get(entry.seed, '')}.", ""]
    if entry.setup:
        lines += ["## Setup", "", entry.setup, ""]
    if entry.algorithms:
        lines += ["**Algorithms:** " + ", ".join(f"`{a}`" for a in entry.algorithms), ""]
    lines += ["## Rerun it", "", "```sh", f"cubiclab reproduce {entry.name} --quick   # minutes, indicative",
              f"cubiclab reproduce {entry.name}           # the paper's lengths and grids", "```", "",
              f"The figure (PNG and SVG), the data (Parquet) and `claims.json` land in "
              f"`cubiclab-out/reproduce/{entry.name}/`, and `report.html` beside it shows every "
              "claim with the paper's value, ours, the tolerance and the verdict.", ""]
    if doc is not None:
        lines += _claims(doc)
    for fig in figures:
        lines += [f"![{entry.figure}]({fig})", ""]
    return "\n".join(lines) + "\n"


def catalog_pages() -> dict[str, str | bytes]:
    """{path under docs/: text or bytes}: catalog/index.md and one page per entry."""
    from cubiclab.experiments import CATALOG

    results = results_dir()
    pages: dict[str, str | bytes] = {}
    index = ["# Catalog", "",
             "One entry per figure of the seed papers. Each reruns the paper's experiment, plots it "
             "like the paper's figure and checks the paper's claims: the paper's value, ours, the "
             "tolerance and the verdict. `cubiclab reproduce --list` lists them; "
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
