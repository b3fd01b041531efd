"""The documentation site builds with warnings as errors, and every code block of the
tutorials runs as a reader would run it: the blocks of a page in order, in one fresh
folder, `sh` blocks in bash (a `cd` carries over to the next block, as in a terminal) and
`python` blocks in one namespace per page."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md")) + [ROOT / "docs" / "index.md"]
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)
# Commands of the getting-started page that a test cannot repeat inside itself: the whole
# install (the test runs in the installed package) and the whole test suite.
NOT_RUN = ("python3 -m pip install -e '.[test]' && cubiclab run", "bash scripts/test.sh")


def code_blocks(page: Path) -> list[tuple[str, str, str]]:
    """(language, the rest of the fence's info string, code) of every fenced block of a page,
    in order. A block fenced ```text output``` shows what the block before it prints: the
    test holds the page's text to its output (a `sh` block's or a `python` block's)."""
    return code_blocks_of(page.read_text())


def code_blocks_of(text: str) -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2).strip(), m.group(3)) for m in FENCE.finditer(text)]


def why_no_testbed() -> str:
    """Why the testbed cannot run here ("" if it can): root, namespaces, TUN."""
    from cubiclab.testbed.run import availability

    return availability() or ""


def run_page(page: Path, workdir: Path) -> None:
    env = dict(os.environ, CUBICLAB_REPO=str(ROOT), MPLBACKEND="Agg",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               # The Rust tutorial's crate builds its copy of cubiclab-cc once, beside the project's.
               CARGO_TARGET_DIR=str(ROOT / "target" / "tutorials"))
    cwd = workdir
    namespace: dict = {"__name__": "__tutorial__"}
    printed = ""
    for i, (lang, info, code) in enumerate(code_blocks(page)):
        where = f"{page.name} block {i + 1} ({lang})"
        if lang == "text" and info == "output":
            assert printed.strip() == code.strip(), f"{where}: the page shows\n{code}\nthe code printed\n{printed}"
            continue
        if lang == "sh":
            if code.strip() in NOT_RUN:
                continue
            if "sudo " in code:
                reason = why_no_testbed()
                if reason:
                    pytest.skip(f"{where} needs the testbed: {reason}")
                code = code.replace("sudo ", "")
            cwd_file = workdir / ".tutorial_cwd"
            script = f"set -euo pipefail\n{code}\npwd > '{cwd_file}'\n"
            proc = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=900)
            assert proc.returncode == 0, f"{where} failed:\n{code}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
            cwd = Path(cwd_file.read_text().strip())
            printed = proc.stdout
        elif lang == "python":
            old, out = Path.cwd(), io.StringIO()
            os.chdir(cwd)
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(code, where, "exec"), namespace)
            finally:
                os.chdir(old)
            printed = out.getvalue()
        elif lang not in ("toml", "text", "bibtex"):
            raise AssertionError(f"{where}: a block in '{lang}' is neither run nor declared as shown-only")
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_code_runs(page, tmp_path):
    run_page(page, tmp_path)


def test_capture_commands_name_the_file_the_run_wrote(tmp_path):
    """The terminal commands the capture page gives (tshark, tcptrace) read the capture where
    its run wrote it (they named a `capture.pcap` the page's folder does not hold); with
    tshark installed, its conversation list has one TCP conversation per flow of the run."""
    page = ROOT / "docs" / "tutorials" / "packet-capture.md"
    run_page(page, tmp_path)
    commands = re.findall(r"`((?:tshark|tcptrace) [^`]*)`", page.read_text())
    assert commands
    for command in commands:
        path = next(w for w in command.split() if w.endswith(".pcap"))
        assert (tmp_path / path).is_file(), f"`{command}` names {path}, which the page's run did not write"
    if shutil.which("tshark"):
        import pandas as pd

        tshark = next(c for c in commands if c.startswith("tshark"))
        proc = subprocess.run(tshark.split(), cwd=tmp_path, capture_output=True, text=True, check=True)
        conversations = [line for line in proc.stdout.splitlines() if "<->" in line]
        flows = pd.read_parquet(next(tmp_path.glob("out/*/totals.parquet")))
        assert len(conversations) == len(flows), proc.stdout


def test_readme_replay_commands_run(tmp_path):
    """The README's "Algorithms and replay" commands run as written in an empty folder (they
    replayed a trace.csv a reader does not have: the block now writes one first)."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Algorithms and replay\n", 1)[1].split("\n## ", 1)[0]
    (code,) = [c for lang, _, c in code_blocks_of(section) if lang == "sh"]
    env = dict(os.environ, MPLBACKEND="Agg", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(["bash", "-c", f"set -euo pipefail\n{code}"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


def test_every_tutorial_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in TUTORIALS:
        assert str(page.relative_to(ROOT / "docs")) in nav, page


def test_site_builds_strict(tmp_path):
    """`mkdocs build --strict`: a broken link, a missing page or a docstring mkdocstrings
    cannot render fails the build."""
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert proc.returncode == 0, proc.stderr
    site = tmp_path / "site"
    for page in ["reference/scenario/index.html", "reference/cli/index.html", "reference/api/index.html",
                 "reference/results/index.html", "catalog/index.html", "catalog/s000-fig6/index.html"]:
        assert (site / page).exists(), page
    cli = (site / "reference/cli/index.html").read_text()
    assert "cubiclab reproduce" in cli and "--cwnd-changes" in cli
    scenario = (site / "reference/scenario/index.html").read_text()
    assert "start_spacing" in scenario and "gilbert" in scenario


def test_generated_reference_pages_are_committed_and_current():
    """docs/index.md links the reference and catalog pages: they are in the repository, as
    the schema, the parsers and the catalog generate them now."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from generate import COMMAND, stale_pages
    finally:
        sys.path.pop(0)
    assert stale_pages() == [], f"run `{COMMAND}`"
    for link in re.findall(r"\]\(([^)#]+\.md)\)", (ROOT / "docs" / "index.md").read_text()):
        assert (ROOT / "docs" / link).exists(), link


@pytest.mark.parametrize("section, cls", [("Scenario", "Scenario"), ("DuplexLink", "Bottleneck"),
                                          ("FlowGroup", "FlowGroup"), ("WebGroup", "WebGroup"), ("Record", "Record")])
def test_the_scenario_reference_calls_required_only_what_a_file_must_give(section, cls):
    """A key the Python edge fills in when a file leaves it out is not "required" in the
    reference (its link table called rate, buffer, queue and loss required, and `record`)."""
    from dataclasses import MISSING, fields

    import cubiclab.scenario as s

    text = (ROOT / "docs" / "reference" / "scenario.md").read_text()
    table = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| [^|]* \| ([^|]*) \|", table, re.M)}
    defaulted = [f.name for f in fields(getattr(s, cls))
                 if (f.default, f.default_factory) != (MISSING, MISSING) and f.name in rows]
    assert defaulted
    assert [k for k in defaulted if rows.get(k, "").strip() == "required"] == []


@pytest.mark.parametrize("cls", ["Scenario", "FlowGroup", "WebGroup", "Bottleneck", "Link", "Record"])
def test_every_field_has_its_meaning_and_unit(cls):
    from dataclasses import fields

    import cubiclab.scenario as s

    doc = getattr(s, cls).__doc__
    for f in fields(getattr(s, cls)):
        line = next((x for x in doc.splitlines() if x.startswith(f"- ``{f.name}``: ")), "")
        assert len(line) > len(f"- ``{f.name}``: ") + 10, f"{cls}.{f.name} has no meaning in help()"
    assert "ns, bits/s, bytes" in doc
    # The schema's unit shows: a time field says ns, a rate bits/s.
    if cls == "FlowGroup":
        assert "- ``rtt``: Two-way propagation delay of each flow, ns" in doc
    if cls == "Bottleneck":
        assert "- ``rate``: Link rate, bits/s" in doc


def test_type_hints_offer_only_what_is_accepted():
    """A field whose hint admits an int takes one (`rtt=40` was refused under `str | int`):
    times, rates and sizes are text with a unit."""
    from dataclasses import fields

    import cubiclab
    import cubiclab.scenario as s

    for cls in (s.FlowGroup, s.Bottleneck, s.Record, s.Scenario):
        for f in fields(cls):
            if "int" not in [t.strip() for t in str(f.type).split("|")]:
                continue
            kw = {f.name: 2}
            sc = (cubiclab.Scenario(duration="1s", flows=[s.FlowGroup(**kw)]) if cls is s.FlowGroup else
                  cubiclab.Scenario(duration="1s", bottleneck=s.Bottleneck(**kw), flows=[s.FlowGroup()])
                  if cls is s.Bottleneck else
                  cubiclab.Scenario(duration="1s", record=s.Record(**kw), flows=[s.FlowGroup()])
                  if cls is s.Record else cubiclab.Scenario(**{"duration": "1s", "flows": [s.FlowGroup()], **kw}))
            try:
                sc.validate()
            except ValueError as e:
                assert "has no unit" not in str(e), f"{cls.__name__}.{f.name}: {e}"
