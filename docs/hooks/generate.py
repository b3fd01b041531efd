"""MkDocs hook: add the generated pages (scenario, results and CLI references, the
catalog) to the site at build time. Nothing generated is written into docs/."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).parent))

from catalog_pages import catalog_pages  # noqa: E402
from cli_reference import cli_reference  # noqa: E402
from results_reference import results_reference  # noqa: E402
from scenario_reference import scenario_reference  # noqa: E402


def generated_pages() -> dict[str, str | bytes]:
    """{path under docs/: content} of every generated page."""
    return {
        "reference/scenario.md": scenario_reference(),
        "reference/results.md": results_reference(),
        "reference/cli.md": cli_reference(),
        **catalog_pages(),
    }


def on_files(files, config):
    for path, content in generated_pages().items():
        files.append(File.generated(config, path, content=content))
    return files
