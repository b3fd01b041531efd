"""The catalog's tally as a Markdown page, from the output folder of a full-mode run.

    cubiclab reproduce --all --out OUT                       # the run (full mode)
    cubiclab reproduce NAMES --stability --out STAB          # optional: the stability check
    python3 scripts/catalog_tally.py OUT [--stability STAB ...] [--time TIME.txt] [--against OLD] > docs/catalog-tally.md

Counts verdicts by the kind of evidence they rest on and per row (paper claims apart from
sensitivity rows and extensions, consistency checks apart from all; `cubiclab.experiments.tally`), then
lists every claim: the paper's sentence, the paper's value, ours (mean ± 95% CI over
seeds, with units), the tolerance, the verdict and the note (measured diagnostics where it
does not hold). With `--time`, the run's CPU and wall time from `/usr/bin/time -v`; with
`--stability`, the table that `--stability` wrote; with `--against`, every claim whose verdict
differs from that of an earlier run's output folder OLD (another build of the simulator, say)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from cubiclab.experiments import tally
from cubiclab.experiments.claims import cite


def _cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def load(out: Path) -> list[dict]:
    """Every entry's claims.json under `out`, in name order."""
    docs = [json.loads(p.read_text()) for p in sorted(out.glob("*/claims.json"))]
    if not docs:
        raise SystemExit(f"no */claims.json under {out}: run `cubiclab reproduce --all --out {out}` first")
    return docs


def cpu_and_wall(time_txt: Path) -> str:
    """CPU seconds (user + system) and wall time from a `/usr/bin/time -v` report."""
    t = time_txt.read_text()
    num = {k: float(re.search(rf"{k}.*?: ([\d.]+)", t).group(1)) for k in ("User time", "System time")}
    wall = re.search(r"Elapsed \(wall clock\) time.*?: ([\d:.]+)", t).group(1)
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
    cpu = num["User time"] + num["System time"]
    return (f"{cpu:.0f} CPU seconds (user + system, the simulations included) in {secs:.0f} s of wall time on the "
            f"shared machine; on 2 idle cores that is about {cpu / 2 / 60:.0f} minutes of wall time.")


def against(docs: list[dict], old: list[dict]) -> list[str]:
    """The claims whose verdict differs between `old` and `docs`, as a Markdown section; a
    flip (holds against does not hold) is marked, as in the stability table."""
    before = {(d["name"], c["id"]): c for d in old for c in d["claims"]}
    rows, n, flips = [], 0, 0
    for d in docs:
        for c in d["claims"]:
            b = before.get((d["name"], c["id"]))
            if b is None:
                continue
            n += 1
            if b["verdict"] == c["verdict"]:
                continue
            flip = {b["verdict"], c["verdict"]} == {"holds", "does not hold"}
            flips += flip
            rows.append(f"| {d['name']} | {c['id']} | {c['kind']} | {_cell(c['tolerance'])} | {b['verdict']}: "
                        f"{_cell(b['ours'])} | {c['verdict']}: {_cell(c['ours'])} | {'**yes**' if flip else ''} |")
    return ["## Against the earlier run", "",
            f"{len(rows)} of {n} claims in both runs change verdict; {flips} flip between holds and does not hold.",
            "", "| entry | claim | kind | tolerance | earlier | now | flips |", "|---" * 7 + "|", *rows, ""]


def page(docs: list[dict], stability: list[Path], time_txt: Path | None, old: list[dict] | None = None) -> str:
    counts = tally.count(docs)
    modes = sorted({d["mode"] for d in docs})
    lines = ["# Catalog tally", "",
             f"`cubiclab reproduce --all` in {', '.join(modes)} mode: {len(docs)} entries. Verdicts by the evidence "
             "they rest on (packet-level simulation, the kernel testbed, an analytic model, the paper's own "
             "arithmetic), and per row: paper claims apart from sensitivity rows (another CUBIC in place of the "
             "paper's, or a changed condition), extensions (claims the papers imply but do not state, or our own "
             "checks) and papers outside the seeds; rows true by the construction of cubiclab's code are "
             "consistency checks, not evidence.", "", f"**Headline:** {tally.headline_text(counts)}.", "",
             *tally.markdown_table(counts)]
    errors = [d for d in docs if d.get("error")]
    lines += [""] + [f"- {d['name']} failed: {_cell(d['error'])}" for d in errors] + ([""] if errors else [])
    if time_txt:
        lines += ["## Time", "", cpu_and_wall(time_txt), ""]
    if stability:
        lines += ["## Stability", "", "Each entry below rerun with every run twice as long and with the next seeds "
                  "(`cubiclab reproduce NAMES --stability`); a flip is a claim that holds in one and does not hold in "
                  "another.", ""]
        lines += [(s / "stability.md").read_text() for s in stability]
    if old is not None:
        lines += against(docs, old)
    lines += ["## Every claim", "", "| entry | claim | kind | paper (quoted) | paper's value | ours | tolerance | "
              "verdict | note |", "|---" * 9 + "|"]
    for d in docs:
        for c in d["claims"]:
            lines.append(f"| {d['name']} | {c['id']} | {c['kind']} | {_cell(cite(c['quote'], c.get('source', '')))} "
                         f"({_cell(c['where'])}) | "
                         f"{_cell(c['paper'])} | {_cell(c['ours'])} | {_cell(c['tolerance'])}"
                         f"{' ' + c['unit'] if c['unit'] else ''} | {c['verdict']} | {_cell(c['note'])} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the output folder of `cubiclab reproduce --all`")
    ap.add_argument("--stability", type=Path, action="append", default=[],
                    help="the --out folder of a `--stability` run (repeat for several)")
    ap.add_argument("--time", type=Path, default=None, help="a /usr/bin/time -v report of the run")
    ap.add_argument("--against", type=Path, default=None,
                    help="an earlier run's output folder: list the claims whose verdict differs")
    args = ap.parse_args()
    print(page(load(args.out), args.stability, args.time, None if args.against is None else load(args.against)),
          end="")


if __name__ == "__main__":
    main()
