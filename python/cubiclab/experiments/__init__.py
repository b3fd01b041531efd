"""The reproduction catalog: one entry per figure of the seed papers, each with its
scenario (scenarios/*.toml), its runs or sweep, a plot in the style of the paper's figure
and the paper's claims checked with tolerances.

    from cubiclab.experiments import CATALOG, reproduce
    outcomes = reproduce(["s000-fig5"], quick=True, out="out")
    for c in outcomes[0].claims: print(c.text, c.paper, c.ours, c.verdict)

`cubiclab reproduce --list` shows the catalog; `cubiclab reproduce --all --quick` runs it.
"""

from cubiclab.experiments.base import CATALOG, Claim, Experiment, Outcome, features, load_scenario
from cubiclab.experiments import seed000, seed001, seed002, seed003, seed004  # noqa: F401,E402  (registers)
from cubiclab.experiments.runner import reproduce

__all__ = ["CATALOG", "Claim", "Experiment", "Outcome", "features", "load_scenario", "reproduce"]
