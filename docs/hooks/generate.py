"""The generated pages (scenario, results and CLI references, the catalog), from the schema,
the parsers and the catalog. They are committed under docs/, so the repository's links work
without a build: `python docs/hooks/generate.py` rewrites them, and as an MkDocs hook this
module fails the build when one is stale (tests/test_docs.py checks the same). With
CUBICLAB_CATALOG_RESULTS, the built site's catalog pages also show that run's verdicts and
figures (the committed ones show the declared claims)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from catalog_pages import catalog_pages, results_dir  # noqa: E402
from cli_reference import cli_reference  # noqa: E402
from results_reference import results_reference  # noqa: E402
from scenario_reference import scenario_reference  # noqa: E402
from algorithms_reference import algorithms_reference  # noqa: E402
from tutorial_figures import tutorial_figures  # noqa: E402

DOCS = Path(__file__).resolve().parents[1]
COMMAND = "python docs/hooks/generate.py"


def generated_pages(results: Path | None = None) -> dict[str, str | bytes]:
    """{path under docs/: content} of every generated page (with a catalog run's verdicts
    and figures when `results` names its folder)."""
    return {
        "reference/scenario.md": scenario_reference(),
        "reference/results.md": results_reference(),
        "reference/cli.md": cli_reference(),
        "reference/algorithms.md": algorithms_reference(),
        **catalog_pages(results),
    }


def stale_pages() -> list[str]:
    """The committed pages that differ from what the generators write now, those missing, and
    catalog pages of entries that are gone."""
    pages = generated_pages()
    stale = [p for p, text in pages.items() if not (DOCS / p).exists() or (DOCS / p).read_text() != text]
    return stale + sorted(str(p.relative_to(DOCS)) for p in (DOCS / "catalog").glob("*.md")
                          if str(p.relative_to(DOCS)) not in pages)


def write_pages() -> list[str]:
    """Rewrite the committed pages (and remove catalog pages of entries that are gone)."""
    pages = generated_pages()
    for p in (DOCS / "catalog").glob("*.md"):
        if str(p.relative_to(DOCS)) not in pages:
            p.unlink()
    for p, text in pages.items():
        (DOCS / p).parent.mkdir(parents=True, exist_ok=True)
        (DOCS / p).write_text(text)
    return list(pages)


def on_pre_build(config):
    stale = stale_pages()
    if stale:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"generated pages out of date: {', '.join(stale)}; run `{COMMAND}`")


def on_files(files, config):
    """The tutorials' figures join the built site; with a catalog run
    (CUBICLAB_CATALOG_RESULTS), its verdicts and figures replace the committed catalog pages."""
    from mkdocs.structure.files import File

    generated = tutorial_figures()
    results = results_dir()
    if results is not None:
        generated.update(catalog_pages(results))
    for path, content in generated.items():
        old = files.get_file_from_path(path)
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, path, content=content))
    return files


if __name__ == "__main__":
    print("\n".join(write_pages()))
