"""scripts/catalog_tally.py on output folders written here, whose verdicts are known."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("catalog_tally", ROOT / "scripts" / "catalog_tally.py")
catalog_tally = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog_tally)


def _out(folder: Path, verdicts: dict, name: str = "e", seed: str = "000", evidence: str | None = None,
         checks: tuple = ()) -> Path:
    """An output folder with one entry `name` whose claims have the given verdicts; those
    named in `checks` are true by construction."""
    (folder / name).mkdir(parents=True)
    claims = [{"id": k, "kind": "paper claim", "quote": "q", "where": "Fig. 1", "paper": "p", "ours": f"{i} (n = 5)",
               "tolerance": "> 0", "unit": "", "verdict": v, "note": "", "construction": "why" if k in checks else ""}
              for i, (k, v) in enumerate(verdicts.items())]
    doc = {"name": name, "seed": seed, "mode": "full", "claims": claims}
    if evidence:
        doc["evidence"] = evidence
    (folder / name / "claims.json").write_text(json.dumps(doc))
    return folder


def test_tally_counts_verdicts_per_kind(tmp_path):
    docs = catalog_tally.load(_out(tmp_path, {"a": "holds", "b": "holds", "c": "inconclusive"}))
    page = catalog_tally.page(docs, [], None)
    # 2 hold, 0 do not hold, 1 inconclusive, 0 not converged, 0 one trajectory, 0 condition not met,
    # 0 indicative, 0 not measured, 3 in all
    assert "| packet-level simulation | paper claim | 2 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 3 |" in page
    assert "| paper claim (outside the seeds) |" not in page


def test_papers_outside_the_seeds_are_counted_apart(tmp_path):
    _out(tmp_path, {"a": "holds"})
    _out(tmp_path, {"b": "does not hold", "c": "holds"}, name="x", seed="outside")
    page = catalog_tally.page(catalog_tally.load(tmp_path), [], None)
    assert "| packet-level simulation | paper claim | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in page
    assert "| packet-level simulation | paper claim (outside the seeds) | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 2 |" in page


def test_against_lists_changes_and_marks_flips(tmp_path):
    old = catalog_tally.load(_out(tmp_path / "old", {"a": "holds", "b": "holds", "c": "inconclusive", "d": "holds"}))
    new = catalog_tally.load(_out(tmp_path / "new", {"a": "holds", "b": "does not hold", "c": "holds", "x": "holds"}))
    lines = catalog_tally.against(new, old)
    # a, b and c are in both runs (d and x in one only); b and c changed, and only b flipped.
    assert "2 of 3 claims in both runs change verdict; 1 flip between holds and does not hold." in lines
    rows = [r for r in lines if r.startswith("| e |")]
    assert [r.split(" | ")[1] for r in rows] == ["b", "c"]
    assert rows[0].endswith("| **yes** |") and rows[1].endswith("|  |")


def test_evidence_is_counted_apart_and_checks_are_not_evidence(tmp_path):
    # Packets: 2 hold on the simulator, 1 does not on the kernel; a model entry holds 2, one
    # of which is true by construction; arithmetic holds 1.
    _out(tmp_path, {"a": "holds", "b": "holds"})
    _out(tmp_path, {"a": "does not hold"}, name="k", evidence="kernel testbed")
    _out(tmp_path, {"m": "holds", "n": "holds"}, name="m", seed="004", evidence="analytic model", checks=("n",))
    _out(tmp_path, {"x": "holds"}, name="x", evidence="the paper's own arithmetic")
    page = catalog_tally.page(catalog_tally.load(tmp_path), [], None)
    assert "| kernel testbed | paper claim | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in page
    assert "| analytic model | paper claim | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in page
    assert "| analytic model | consistency check | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in page
    assert "| the paper's own arithmetic | paper claim | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in page
    # The headline counts the 3 verdicts on packets: 2 simulated holds, 1 kernel fails.
    assert "**Headline:** paper claims of the seeds judged on packets: 3: 2 holds, 1 does not hold." in page


def test_headline_with_no_verdict_on_packets_ends_at_its_count():
    # An entry run alone with no simulation (s000-fig3) printed "judged on packets: 0: ".
    from collections import Counter

    from cubiclab.experiments.tally import headline_text

    assert headline_text({}) == "paper claims of the seeds judged on packets: 0"
    counts = {("packet-level simulation", "paper claim"): Counter({"holds": 2})}
    assert headline_text(counts) == "paper claims of the seeds judged on packets: 2: 2 holds"
