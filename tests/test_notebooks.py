"""The notebooks under examples/ run top to bottom on their small scenarios, and are kept
in the repository without outputs (so diffs show code, not images)."""

from __future__ import annotations

from pathlib import Path

import nbclient  # the docs extra: pip install -e '.[docs]'
import nbformat
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def test_there_are_at_least_three_notebooks():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_are_stripped(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name} cell {i} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    # A fresh folder per notebook: their caches and files do not leak into the repository.
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} drew no figure"


def test_the_docs_command_runs_a_notebook(tmp_path):
    """docs/index.md says how to run a notebook without a browser: the command exists once the
    docs extra is installed (Jupyter's editor is not part of any extra) and runs the notebook."""
    import re
    import shutil
    import subprocess
    import sys

    text = (EXAMPLES.parent / "docs" / "index.md").read_text()
    command = re.search(r"`(jupyter execute [^`]+)`", text).group(1).split()
    notebook = EXAMPLES.parent / command[-1]
    assert notebook in NOTEBOOKS
    copy = tmp_path / notebook.name  # run beside nothing of the repository's
    shutil.copy(notebook, copy)
    jupyter = Path(sys.executable).parent / "jupyter"
    proc = subprocess.run([str(jupyter), *command[1:-1], str(copy)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
