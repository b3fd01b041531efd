"""The documentation site builds with warnings as errors, and every code block of the
tutorials runs as a reader would run it: the blocks of a page in order, in one fresh
folder, `sh` blocks in bash (a `cd` carries over to the next block, as in a terminal) and
`python` blocks in one namespace per page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md")) + [ROOT / "docs" / "index.md"]
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)
# Commands of the getting-started page that a test cannot repeat inside itself: the whole
# install (the test runs in the installed package) and the whole test suite.
NOT_RUN = ("python3 -m pip install -e '.[test]' && cubiclab run", "bash scripts/test.sh")


def code_blocks(page: Path) -> list[tuple[str, str]]:
    """(language, code) of every fenced block of a page, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(page.read_text())]


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
    for i, (lang, code) in enumerate(code_blocks(page)):
        where = f"{page.name} block {i + 1} ({lang})"
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
        elif lang == "python":
            old = Path.cwd()
            os.chdir(cwd)
            try:
                exec(compile(code, where, "exec"), namespace)
            finally:
                os.chdir(old)
        elif lang not in ("toml", "text", "bibtex"):
            raise AssertionError(f"{where}: a block in '{lang}' is neither run nor declared as shown-only")
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_code_runs(page, tmp_path):
    run_page(page, tmp_path)


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
