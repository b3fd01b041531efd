"""The tutorials' figures for the built site, drawn by the pages' own code: a page's python
blocks run in a fresh folder, as a reader (and tests/test_docs.py) runs them, and the
figures they save join the site beside the page. Only the pages listed, whose runs take
seconds; the figures are not committed."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
#: Page under docs/ -> the figures its code saves.
FIGURES = {"tutorials/rivals.md": ["rivals.png"]}
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def tutorial_figures() -> dict[str, bytes]:
    """{path under docs/: PNG bytes} of every listed page's figures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = {}
    for page, names in FIGURES.items():
        old = Path.cwd()
        with tempfile.TemporaryDirectory() as folder:
            os.chdir(folder)
            try:
                namespace: dict = {"__name__": "__tutorial__"}
                for code in PYTHON_BLOCK.findall((DOCS / page).read_text()):
                    exec(compile(code, page, "exec"), namespace)
                for name in names:
                    out[str(Path(page).parent / name)] = Path(folder, name).read_bytes()
            finally:
                os.chdir(old)
                plt.close("all")
    return out
