"""The reproduction catalog in --quick mode: every entry runs (one shared sweep, all local
cores), writes its figures, data and claims, and its robust claims hold; the report is one
self-contained HTML file; the CLI lists and runs entries."""

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cubiclab.experiments import CATALOG, reproduce
from cubiclab.experiments.base import SCENARIO_DIRS, features, load_scenario

ENTRIES = sorted(CATALOG)


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    outcomes = reproduce(None, quick=True, out=out, progress=False, log=None)
    return out, {o.name: o for o in outcomes}


def test_catalog_covers_every_seed():
    seeds = {e.seed for e in CATALOG.values()}
    assert seeds == {"000", "001", "002", "003", "004"}
    # seed 000: Figs. 3, 4, 5, 6, 8, 9, 10; seed 004: Figs. 3-7 and the packet bridge.
    for name in ("s000-fig3", "s000-fig4", "s000-fig5", "s000-fig6", "s000-fig8", "s000-fig9", "s000-fig10a",
                 "s000-fig10bc", "s001-fig3-4", "s001-exp1-2", "s001-exp3", "s002-grid", "s002-convergence",
                 "s002-buffer", "s002-rtt-unfairness", "s002-missing-drop", "s002-fast-convergence",
                 "s003-cubic-tahoe", "s004-fig3", "s004-fig7", "s004-packet"):
        assert name in CATALOG


@pytest.mark.parametrize("name", ENTRIES)
def test_entry_runs_quick_and_robust_claims_hold(quick_run, name):
    out, outcomes = quick_run
    o = outcomes[name]
    # This build has every algorithm and simulator feature the catalog uses, so no entry may
    # skip: a skip here would hide a broken entry.
    assert not o.skipped, o.skipped
    assert not o.error, o.error
    assert o.claims, "every entry checks at least one claim"
    pngs = [p for p in o.figures if str(p).endswith(".png")]
    assert pngs and all(Path(p).stat().st_size > 1000 for p in pngs)
    assert all(Path(str(p)[:-4] + ".svg").exists() for p in pngs)
    doc = json.loads((out / name / "claims.json").read_text())
    assert [c["id"] for c in doc["claims"]] == [c.id for c in o.claims]
    for c in o.claims:
        assert c.verdict in ("holds", "does not hold", "not tested")
        assert c.paper and c.ours and c.tolerance
        if c.holds is False:
            assert c.note, f"{c.id}: a claim that does not hold needs an honest sentence"
    for name_ in o.data:
        assert (out / name / f"{name_}.parquet").exists()
    robust = [c for c in o.claims if c.robust]
    failing = [f"{c.id}: paper {c.paper}, ours {c.ours} ({c.tolerance})" for c in robust if c.holds is not True]
    assert not failing, failing


def test_the_briefs_examples(quick_run):
    # CUBIC takes more than SACK at 82 ms; at 8 ms their ratio is near 1 (seed 000 Fig. 5);
    # utilisation with CUBIC exceeds SACK's at 324 ms (Fig. 8).
    _, outcomes = quick_run
    fig5 = {c.id: c for c in outcomes["s000-fig5"].claims}
    assert fig5["cubic_more_at_82ms"].holds and float(fig5["cubic_more_at_82ms"].ours) > 1
    assert fig5["fair_at_8ms"].holds and abs(float(fig5["fair_at_8ms"].ours) - 1) <= 0.3
    fig8 = {c.id: c for c in outcomes["s000-fig8"].claims}
    assert fig8["cubic_util_above_sack"].holds


def test_report_is_one_self_contained_file(quick_run):
    out, outcomes = quick_run
    html = (out / "report.html").read_text()
    # No external resources: every image is inline.
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", html)
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(imgs) >= len([o for o in outcomes.values() if o.figures])
    assert base64.b64decode(imgs[0])[:8] == b"\x89PNG\r\n\x1a\n"
    for name in ENTRIES:
        assert f"id='{name}'" in html
    assert "does not hold" in html and "holds" in html


def test_every_scenario_file_loads_and_compiles():
    files = sorted(SCENARIO_DIRS[0].glob("*.toml"))
    assert len(files) >= 10
    for f in files:
        sc, caveats = load_scenario(f.stem)
        sc.compile()


def test_missing_features_are_left_out_with_a_caveat(monkeypatch):
    import cubiclab.experiments.base as base

    monkeypatch.setattr(base, "features", lambda: set())
    sc, caveats = base.load_scenario("s000_fig6")
    assert not sc.web and any("background web traffic" in c for c in caveats)
    sc, caveats = base.load_scenario("s004_bridge")
    assert sc.bottleneck.loss is None and any("bottleneck.loss" in c for c in caveats)
    assert "web" in features()  # this build has them


def test_missing_algorithm_skips_with_a_clear_message(monkeypatch):
    import cubiclab.experiments.base as base

    monkeypatch.setattr(base, "algorithm_available", lambda name: name != "cubic-2005")
    assert "cubic-2005" in CATALOG["s001-exp1-2"].missing()
    assert "not in this build" in CATALOG["s001-exp1-2"].missing()
    assert CATALOG["s000-fig5"].missing() == ""


def test_cli_list_run_and_errors(tmp_path):
    cmd = [sys.executable, "-m", "cubiclab.cli", "reproduce"]
    lst = subprocess.run(cmd + ["--list"], capture_output=True, text=True)
    assert lst.returncode == 0 and all(n in lst.stdout for n in ENTRIES)
    run = subprocess.run(cmd + ["s004-fig6", "s004-fig7", "--quick", "--out", str(tmp_path), "--quiet"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "plus_806" in run.stdout and (tmp_path / "report.html").exists()
    assert (tmp_path / "s004-fig6" / "fig6.svg").exists()
    bad = subprocess.run(cmd + ["s999-nothing"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no catalog entry 's999-nothing'" in bad.stderr
    none = subprocess.run(cmd, capture_output=True, text=True)
    assert none.returncode == 2 and "--all" in none.stderr


def test_a_broken_or_skipped_entry_does_not_sink_the_report(tmp_path, monkeypatch):
    from cubiclab.experiments.base import Experiment, approx

    class Broken(Experiment):
        name, seed, figure, title = "zz-broken", "000", "Fig. 0", "raises"

        def analyse(self, sweep, quick, outdir):
            raise RuntimeError("a bug in the analysis")

    class Fine(Experiment):
        name, seed, figure, title = "zz-fine", "000", "Fig. 0", "computes"

        def analyse(self, sweep, quick, outdir):
            # 0.93 against 0.95 +- 0.05 holds; the second claim is 0.5 off and does not.
            return self.outcome(claims=[approx("a", "close", 0.95, 0.93, 0.05),
                                        approx("b", "far", 0.95, 0.45, 0.05, note="because")])

    class Skipped(Experiment):
        name, seed, figure, title = "zz-skipped", "000", "Fig. 0", "needs a missing algorithm"
        algorithms = ("no-such-algorithm",)

    for cls in (Broken, Fine, Skipped):
        monkeypatch.setitem(CATALOG, cls.name, cls())
    outs = {o.name: o for o in reproduce(["zz-"], out=tmp_path, progress=False, log=None)}
    assert "RuntimeError: a bug in the analysis" in outs["zz-broken"].error
    assert [c.verdict for c in outs["zz-fine"].claims] == ["holds", "does not hold"]
    assert "no-such-algorithm" in outs["zz-skipped"].skipped
    html = (tmp_path / "report.html").read_text()
    assert "a bug in the analysis" in html and "Skipped: needs algorithm(s) no-such-algorithm" in html
    assert "because" in html and "1 hold" in html
