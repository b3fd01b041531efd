"""The reproduction report: one self-contained HTML file (figures embedded as base64 PNG)
with, per catalog entry, the setup, the figures, caveats, and per claim the paper's value,
ours, the tolerance and the verdict, with an honest sentence where it does not hold."""

from __future__ import annotations

import base64
import datetime as _dt
import html
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


def _verdict(c) -> str:
    cls = {True: "holds", False: "fails", None: "untested"}[c.holds]
    sym = {True: "✔ holds", False: "✘ does not hold", None: "– not tested"}[c.holds]
    return f'<td class="v {cls}">{sym}</td>'


def render(outcomes: list, title: str = "cubiclab: reproduction of the seed experiments", quick: bool = False,
           extra: str = "") -> str:
    e = html.escape
    n_hold = sum(1 for o in outcomes for c in o.claims if c.holds is True)
    n_fail = sum(1 for o in outcomes for c in o.claims if c.holds is False)
    n_unt = sum(1 for o in outcomes for c in o.claims if c.holds is None)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{_CSS}</style>"
             "</head><body>", f"<h1>{e(title)}</h1>"]
    when = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    mode = "quick mode (shorter runs, coarser grids)" if quick else "full mode"
    parts.append(f"<p>Generated {e(when)} in {mode}. Claims: <span class='holds'>{n_hold} hold</span>, "
                 f"<span class='fails'>{n_fail} do not hold</span>, <span class='untested'>{n_unt} not tested"
                 f"</span>. {extra}</p>")
    # summary table
    parts.append("<table class='summary'><tr><th>entry</th><th>paper</th><th>holds</th><th>does not hold</th>"
                 "<th>not tested</th><th>runs</th><th>time (s)</th></tr>")
    for o in outcomes:
        h = sum(c.holds is True for c in o.claims)
        f = sum(c.holds is False for c in o.claims)
        u = sum(c.holds is None for c in o.claims)
        status = " <span class='skipped'>(skipped)</span>" if o.skipped else (
            " <span class='fails'>(error)</span>" if o.error else "")
        parts.append(f"<tr><td><a href='#{e(o.name)}'>{e(o.name)}</a>{status}</td><td>seed {e(o.seed)} "
                     f"{e(o.figure)}</td><td>{h}</td><td>{f}</td><td>{u}</td><td>{o.runs}</td>"
                     f"<td>{o.wall_s:.1f}</td></tr>")
    parts.append("</table>")
    for o in outcomes:
        parts.append(f"<h2 id='{e(o.name)}'>{e(o.name)} — seed {e(o.seed)} {e(o.figure)}: {e(o.title)}</h2>")
        if o.setup:
            parts.append(f"<p class='setup'>{e(o.setup)}</p>")
        if o.skipped:
            parts.append(f"<p class='skipped'>Skipped: {e(o.skipped)}</p>")
        if o.error:
            parts.append(f"<p class='fails'>Error: {e(o.error)}</p>")
        for c in o.caveats:
            parts.append(f"<div class='caveat'>{e(c)}</div>")
        for p in o.figures:
            if str(p).endswith(".png") and Path(p).exists():
                parts.append(_img(p))
        if o.claims:
            parts.append("<table><tr><th>claim</th><th>paper</th><th>ours</th><th>tolerance</th><th>verdict</th>"
                         "<th>note</th></tr>")
            for c in o.claims:
                parts.append(f"<tr><td>{e(c.text)}</td><td>{e(c.paper)}</td><td>{e(c.ours)}</td>"
                             f"<td>{e(c.tolerance)}</td>{_verdict(c)}<td>{e(c.note)}</td></tr>")
            parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(outcomes: list, path: str | Path, quick: bool = False, extra: str = "") -> Path:
    """Write the report to `path` atomically and return it."""
    return atomic_write_text(Path(path), render(outcomes, quick=quick, extra=extra))
