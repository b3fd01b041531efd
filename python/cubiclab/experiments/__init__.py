"""The reproduction catalog: one entry per figure of the seed papers (and, marked "outside the
seeds", the CUBIC-against-BBR experiments of later papers, experiments/bbr.py, and the claims
about today's queues, experiments/aqm.py), each with its
scenario (package data: cubiclab/scenarios/*.toml), its runs (conditions x seeds, run
lengths from the physics), a plot in the style of the paper's figure and a declared table
of the paper's claims, judged from ensembles with 95% confidence intervals.

    from cubiclab.experiments import CATALOG, reproduce
    outcomes = reproduce(["s000-fig5"], mode="quick", out="out")
    for v in outcomes[0].verdicts: print(v.spec.quote, v.spec.paper, v.ours, v.verdict)

`cubiclab reproduce --list` shows the catalog; `cubiclab reproduce --all` runs it.
"""

from cubiclab.experiments.base import CATALOG, Experiment, Outcome, load_scenario
from cubiclab.experiments.claims import ClaimSpec, Verdict
from cubiclab.experiments import bbr, aqm, seed000, seed001, seed002, seed003, seed004  # noqa: F401,E402  (registers)
from cubiclab.experiments.runner import reproduce

__all__ = ["CATALOG", "ClaimSpec", "Experiment", "Outcome", "Verdict", "load_scenario", "reproduce"]
