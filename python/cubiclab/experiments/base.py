"""The pieces every catalog entry is made of: claims with verdicts, the Experiment class,
scenario files and what this build of the simulator supports."""

from __future__ import annotations

import copy
import math
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from cubiclab.scenario import Bottleneck, Scenario
from cubiclab.sweep import Run, SweepResult

SCENARIO_DIRS = [
    Path(__file__).resolve().parents[3] / "scenarios",  # the repository's scenarios/
    Path(__file__).resolve().parent / "scenarios",  # an installed copy, if any
]

# ---- claims ----------------------------------------------------------------------------


@dataclass
class Claim:
    """One statement of a paper, checked against our numbers.

    paper: the paper's value or statement as printed; ours: what we measured; tolerance:
    what counts as agreement; holds: True / False, or None when it could not be tested;
    note: the honest sentence shown when it does not hold (or why it was not tested);
    robust: the test suite asserts it in --quick mode."""

    id: str
    text: str
    paper: str
    ours: str
    tolerance: str
    holds: bool | None
    note: str = ""
    robust: bool = False

    @property
    def verdict(self) -> str:
        return {True: "holds", False: "does not hold", None: "not tested"}[self.holds]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict
        return d


def _fmt(x, digits=3) -> str:
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}"


def _mk(id, text, paper, ours, tol, holds, note, robust, why_not_tested="") -> Claim:
    if holds is None:
        return Claim(id, text, paper, _fmt(ours), tol, None, why_not_tested or note, robust)
    return Claim(id, text, paper, _fmt(ours), tol, bool(holds), "" if holds else note, robust)


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def approx(id: str, text: str, paper_value: float, ours: float, tol: float, paper: str | None = None,
           note: str = "", robust: bool = False, unit: str = "") -> Claim:
    """Holds if |ours - paper_value| <= tol."""
    holds = None if _nan(ours) else abs(ours - paper_value) <= tol
    return _mk(id, text, paper or f"{_fmt(paper_value)}{unit}", ours, f"± {_fmt(tol)}{unit}", holds, note, robust,
               "no value could be measured")


def at_least(id: str, text: str, paper: str, ours: float, bound: float, note: str = "",
             robust: bool = False) -> Claim:
    holds = None if _nan(ours) else ours >= bound
    return _mk(id, text, paper, ours, f">= {_fmt(bound)}", holds, note, robust, "no value could be measured")


def at_most(id: str, text: str, paper: str, ours: float, bound: float, note: str = "",
            robust: bool = False) -> Claim:
    holds = None if _nan(ours) else ours <= bound
    return _mk(id, text, paper, ours, f"<= {_fmt(bound)}", holds, note, robust, "no value could be measured")


def check(id: str, text: str, paper: str, ours: str, holds: bool | None, tolerance: str, note: str = "",
          robust: bool = False) -> Claim:
    """A claim whose test is computed by the caller (e.g. a comparison of two curves)."""
    return _mk(id, text, paper, ours, tolerance, holds, note, robust, note)


def untested(id: str, text: str, paper: str, why: str) -> Claim:
    return Claim(id, text, paper, "n/a", "n/a", None, why, False)


# ---- what this build supports ----------------------------------------------------------


def features() -> set[str]:
    """Simulator features present in this build: "web" (background web sessions), and the
    bottleneck's "loss", "queue", "red", "codel"."""
    out = set()
    if "web" in {f.name for f in fields(Scenario)}:
        out.add("web")
    bn = {f.name for f in fields(Bottleneck)}
    out |= {k for k in ("loss", "queue", "red", "codel") if k in bn}
    return out


def algorithm_available(name: str) -> bool:
    from cubiclab.algorithms import check_algorithm

    try:
        check_algorithm(name)
        return True
    except ValueError:
        return False


def scenario_path(name: str) -> Path:
    for d in SCENARIO_DIRS:
        p = d / f"{name}.toml"
        if p.exists():
            return p
    raise ValueError(f"scenario file '{name}.toml' not found in {', '.join(str(d) for d in SCENARIO_DIRS)}")


def load_scenario(name: str) -> tuple[Scenario, list[str]]:
    """Read scenarios/<name>.toml. Sections this build does not support yet (background web
    traffic, random loss, AQM) are removed, and a sentence saying so is returned with the
    scenario, so the entry still runs and its report says what was left out."""
    p = scenario_path(name)
    data = tomllib.loads(p.read_text())
    have = features()
    caveats = []
    if "web" in data and "web" not in have:
        data.pop("web")
        caveats.append("The paper's background web traffic is not in this build of the simulator; "
                       "these runs have none, so the measured flows share the link only among themselves.")
    bn = data.get("bottleneck", {})
    for key in ("loss", "queue", "red", "codel"):
        if key in bn and key not in have:
            bn.pop(key)
            caveats.append(f"bottleneck.{key} is not in this build of the simulator; left out.")
    sc = Scenario.from_dict(data, where=p.name)
    if "name" not in data:
        sc.name = name
    return sc, caveats


def scaled_web(sc: Scenario, factor: float) -> Scenario:
    """Scale the number of background web sessions (when the build has them)."""
    web = getattr(sc, "web", None)
    if not web:
        return sc
    sc = copy.deepcopy(sc)
    for w in sc.web:
        if getattr(w, "sessions", None):
            w.sessions = max(1, int(round(w.sessions * factor)))
    return sc


def vary(sc: Scenario, rate=None, rtt=None, buffer=None, duration=None, seed=None, name=None,
         groups: dict | None = None) -> Scenario:
    """A copy of `sc` with the bottleneck rate/buffer, every flow group's RTT, the duration
    or seed changed; `groups` = {group name: {attribute: value}} changes single groups
    (e.g. {"hs": {"algorithm": "bic"}})."""
    sc = copy.deepcopy(sc)
    if rate is not None:
        sc.bottleneck.rate = rate
    if buffer is not None:
        sc.bottleneck.buffer = buffer
    if rtt is not None:
        for g in sc.flows:
            g.rtt = rtt
    if duration is not None:
        sc.duration = duration
    if seed is not None:
        sc.seed = seed
    if name is not None:
        sc.name = name
    for gname, attrs in (groups or {}).items():
        matched = [g for g in sc.flows if g.name == gname]
        if not matched:
            raise ValueError(f"scenario '{sc.name}' has no flow group named '{gname}'")
        for g in matched:
            for k, v in attrs.items():
                if not hasattr(g, k):
                    raise ValueError(f"flow group has no field '{k}'")
                setattr(g, k, copy.deepcopy(v))
    return sc


def ms(x: float) -> str:
    return f"{x:g}ms"


def mbps(x: float) -> str:
    return f"{x:g}Mbps"


# ---- experiments ------------------------------------------------------------------------


@dataclass
class Outcome:
    """What an entry produced: data tables, figure files, claims, caveats; or why it was
    skipped."""

    name: str
    title: str
    seed: str
    figure: str
    setup: str
    data: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    caveats: list = field(default_factory=list)
    skipped: str = ""
    error: str = ""
    wall_s: float = 0.0
    runs: int = 0


class Experiment:
    """A catalog entry. Subclasses set the class attributes and implement `runs` (the
    simulations, possibly none) and `analyse` (metrics, figures, claims)."""

    name = ""
    seed = ""  # "000" ... "004"
    figure = ""  # e.g. "Fig. 5"
    title = ""
    setup = ""  # the paper's setup and where ours differs
    algorithms: tuple = ()  # algorithm names the entry needs
    needs: tuple = ()  # simulator features it cannot do without (e.g. ("loss",))

    def __init__(self):
        self.caveats: list[str] = []

    def missing(self) -> str:
        """Why this entry cannot run in this build ("" if it can)."""
        gone = [a for a in self.algorithms if not algorithm_available(a)]
        if gone:
            return (f"needs algorithm(s) {', '.join(gone)}, not in this build (see `cubiclab algorithms`); "
                    f"the entry runs once they are merged")
        lacking = [f for f in self.needs if f not in features()]
        if lacking:
            return (f"needs simulator feature(s) {', '.join(lacking)}, not in this build; "
                    f"the entry runs once they are merged")
        return ""

    def scenario(self, name: str) -> Scenario:
        sc, cav = load_scenario(name)
        for c in cav:
            if c not in self.caveats:
                self.caveats.append(c)
        return sc

    def runs(self, quick: bool) -> list[Run]:
        return []

    def analyse(self, sweep: SweepResult, quick: bool, outdir: Path) -> Outcome:
        # Every entry that runs defines this; only an entry skipped for a missing feature
        # (which never gets here) may leave it out.
        raise TypeError(f"catalog entry '{self.name}' defines no analysis")

    def outcome(self, **kw) -> Outcome:
        return Outcome(self.name, self.title, self.seed, self.figure, self.setup, caveats=list(self.caveats), **kw)


CATALOG: dict[str, Experiment] = {}


def register(cls):
    inst = cls()
    if inst.name in CATALOG:
        raise ValueError(f"two catalog entries named '{inst.name}'")
    CATALOG[inst.name] = inst
    return cls
