"""The reproduction report: one self-contained HTML file (figures embedded as base64 PNG)
with the tally by kind and verdict, and per catalog entry the setup, the figures, caveats,
and per claim the paper's sentence, value, ours as mean ± 95% CI, the tolerance, the
verdict and, where it does not hold, the diagnostics measured in its runs."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
from pathlib import Path

from cubiclab.io import atomic_write_text

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
     color:#222;line-height:1.45;padding:0 1em}
h1{font-size:1.6em} h2{font-size:1.25em;margin-top:2.2em;border-bottom:1px solid #ccc;padding-bottom:.2em}
table{border-collapse:collapse;width:100%;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:.35em .5em;vertical-align:top;text-align:left}
th{background:#f4f4f4}
td.v{white-space:nowrap;font-weight:600}
.holds{color:#11772d} .fails{color:#b3261e} .untested{color:#777}
.skipped{color:#777;font-style:italic} .caveat{background:#fff8e1;border-left:4px solid #f0c000;padding:.4em .7em;
 margin:.5em 0;font-size:.92em}
.setup{font-size:.93em;color:#444}
img{max-width:100%;border:1px solid #eee;margin:.4em 0}
.summary td{text-align:right} .summary td:first-child{text-align:left}
code{background:#f4f4f4;padding:0 .2em}
"""


def _img(path: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(Path(path).name)}" src="data:image/png;base64,{data}">'


# A verdict's colour: holds and does not hold; every other verdict decides nothing.
_CLASS = {"holds": "holds", "does not hold": "fails"}


def robustness(out: Path) -> dict:
    """(entry, claim) -> what the sensitivity and stability reruns said of it, from the
    sensitivity.json and stability.json in `out` (written by `cubiclab reproduce
    --sensitivity` / `--stability` with the same --out); empty without them."""
    from cubiclab.experiments.sensitivity import summary

    said: dict = {}
    f = Path(out) / "sensitivity.json"
    if f.is_file():
        for r in json.loads(f.read_text()):
            said.setdefault((r["entry"], r["claim"]), []).append(f"unstated settings: {summary(r)}")
    f = Path(out) / "stability.json"
    if f.is_file():
        for r in json.loads(f.read_text()):
            word = "flips" if r["flips"] else "changes verdict" if r["changes"] else "stable"
            said.setdefault((r["entry"], r["claim"]), []).append(
                f"2x duration and other seeds: {word}" + ("; crosses its tolerance" if r["crosses"] else ""))
    return {k: "; ".join(v) for k, v in said.items()}


def _tally_table(outcomes: list) -> str:
    from cubiclab.experiments import tally
    from cubiclab.experiments.claims import VERDICTS

    counts = tally.count(tally.claim_docs(outcomes))
    rows = [f"<p><b>Headline: {html.escape(tally.headline_text(counts))}.</b> Verdicts from the papers' own "
            "arithmetic and from analytic models are counted apart, and rows true by the construction of "
            "cubiclab's code are consistency checks, not evidence.</p>",
            "<table class='summary'><tr><th>evidence</th><th>row</th>"
            + "".join(f"<th>{v}</th>" for v in VERDICTS) + "</tr>"]
    for (evidence, row), n in counts.items():
        rows.append(f"<tr><td>{html.escape(evidence)}</td><td>{html.escape(row)}</td>"
                    + "".join(f"<td>{n[v]}</td>" for v in VERDICTS) + "</tr>")
    return "".join(rows) + "</table>"


def _provenance_line() -> str:
    from cubiclab.provenance import provenance

    p = provenance()
    return ("<p class='setup'>" + "; ".join(f"{html.escape(k)}: <code>{html.escape(str(v))}</code>"
                                            for k, v in p.items()) + "</p>")


def render(outcomes: list, title: str = "cubiclab: reproduction of the seed experiments", mode=None,
           robust: dict | None = None) -> str:
    """The report's HTML; `robust`: (entry, claim) -> the sensitivity and stability reruns'
    word on it (`robustness`), shown in its own column when given."""
    e = html.escape
    robust = robust or {}
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{_CSS}</style>"
             "</head><body>", f"<h1>{e(title)}</h1>"]
    when = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    what = (f"{mode.name} mode, {mode.seeds} seed(s) per point" if mode else "")
    verdicts = ("Every verdict is indicative (short runs, one seed): none holds or fails." if mode and mode.indicative
                else "A claim holds when the 95% confidence interval of the mean over seeds lies inside its "
                     "tolerance, does not hold when it lies outside, and is inconclusive otherwise; a metric that "
                     "moves between the first and second half of the measured window, or whose window the run budget "
                     "cut below half the planned congestion epochs, is not converged.")
    parts.append(f"<p>Generated {e(when)}, {e(what)}. {e(verdicts)} Paper claims, sensitivity rows (another CUBIC "
                 "in place of the paper's, or a changed condition) and extensions are counted apart. The papers measured "
                 "testbeds (seeds 000, 002), ns-2 (001) or their own models (003, 004); we run one packet "
                 "simulator with the algorithm version each paper ran.</p>")
    parts.append(_provenance_line())
    parts.append(_tally_table(outcomes))
    parts.append("<table class='summary'><tr><th>entry</th><th>paper</th><th>holds</th><th>does not hold</th>"
                 "<th>other</th><th>runs</th><th>time (s)</th></tr>")
    for o in outcomes:
        h = sum(v.verdict == "holds" for v in o.verdicts)
        f = sum(v.verdict == "does not hold" for v in o.verdicts)
        status = " <span class='fails'>(error)</span>" if o.error else ""
        parts.append(f"<tr><td><a href='#{e(o.name)}'>{e(o.name)}</a>{status}</td><td>seed {e(o.seed)} "
                     f"{e(o.figure)}</td><td>{h}</td><td>{f}</td><td>{len(o.verdicts) - h - f}</td><td>{o.runs}</td>"
                     f"<td>{o.wall_s:.1f}</td></tr>")
    parts.append("</table>")
    from cubiclab.experiments.base import PAPERS
    from cubiclab.experiments.claims import SENSITIVITY

    for o in outcomes:
        parts.append(f"<h2 id='{e(o.name)}'>{e(o.name)} — seed {e(o.seed)} {e(o.figure)}: {e(o.title)}</h2>")
        parts.append(f"<p class='setup'>{e(PAPERS.get(o.seed, ''))}. Evidence: {e(o.evidence)}.</p>")
        if o.setup:
            parts.append(f"<p class='setup'>{e(o.setup)}</p>")
        if o.error:
            parts.append(f"<p class='fails'>Error: {e(o.error)}</p>")
        for c in o.caveats:
            parts.append(f"<div class='caveat'>{e(c)}</div>")
        for p in o.figures:
            if str(p).endswith(".png") and Path(p).exists():
                parts.append(_img(p))
        if o.verdicts:
            parts.append("<table><tr><th>claim</th><th>kind</th><th>paper</th><th>ours (mean ± 95% CI)</th>"
                         "<th>tolerance</th><th>verdict</th>" + ("<th>robustness</th>" if robust else "")
                         + "<th>note</th></tr>")
            for v in o.verdicts:
                s = v.spec
                flag = f"<br><b>The paper contradicts itself:</b> {e(s.contradiction)}" if s.contradiction else ""
                # A sensitivity row repeats its paper claim's sentence: name the claim instead.
                said = (f"As {e(s.id.split('@')[0])} above" if s.kind == SENSITIVITY and "@" in s.id
                        else f"{e(s.cited)} ({e(s.where)}, {e(s.source)})")
                check = (f"<br><b>Consistency check, not evidence:</b> {e(s.construction)}" if s.construction
                         else "")
                parts.append(f"<tr><td>{said}{flag}{check}<br><small>Measured: "
                             f"{e(s.metric)}. Why this tolerance: {e(s.rationale)}</small></td><td>{e(s.kind)}</td>"
                             f"<td>{e(s.paper)}</td><td>{e(v.ours)}</td><td>{e(str(s.accept))} {e(s.unit)} "
                             f"({e(s.accept.sided)})</td><td class='v {_CLASS.get(v.verdict, 'untested')}'>"
                             f"{e(v.verdict)}</td>"
                             + (f"<td>{e(robust.get((o.name, s.id), 'not rerun'))}</td>" if robust else "")
                             + f"<td>{e(v.note)}</td></tr>")
            parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(outcomes: list, path: str | Path, mode=None) -> Path:
    """Write the report to `path` atomically and return it, with the robustness column when
    its folder holds sensitivity or stability results."""
    path = Path(path)
    return atomic_write_text(path, render(outcomes, mode=mode, robust=robustness(path.parent)))
