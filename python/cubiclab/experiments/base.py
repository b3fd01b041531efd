"""The pieces every catalog entry is made of: the modes, scenario files (package data), the
Experiment class that turns conditions x seeds into runs and per-seed claim values into
verdicts, and the Outcome it reports."""

from __future__ import annotations

import copy
import dataclasses
import math
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: the same parser, published as tomli
    import tomli as tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from cubiclab.experiments import physics, plotting
from cubiclab.experiments.claims import (FAILS, HOLDS, INCONCLUSIVE, NOT_CONVERGED, NOT_MEASURED, ONE_TRAJ, PAPER, UNMET,
                                         SENSITIVITY, SIMULATION, Censored, ClaimSpec, judge, then)
from cubiclab.experiments.diagnostics import describe, run_diagnostics
from cubiclab.scenario import Scenario, with_host_timing
from cubiclab.sweep import Run, SweepResult

# ---- modes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    """How much to run. `seeds`: runs per condition; `epochs`, `min_window_s`, `max_s`,
    `max_packets`: the run-length plan's (physics.run_length); `coarse`: the entries' small
    grids; `indicative`: verdicts are never holds / does not hold; `figure_formats`: the
    figures' files. `stretch` multiplies every
    run's planned warm-up and window, `seed_offset` shifts its seeds (1 + offset, ...): the
    stability check's reruns (experiments/stability.py). `budget_scale` (full mode, >= 1)
    multiplies every entry's run budget (`max_s` and the packets, the entry's own
    `full_budget_packets` included), so that runs the budget capped lengthen toward the plan
    (`cubiclab reproduce --budget-scale`); at 1 every run is what the catalog's cache holds.
    `choice` changes one setting the paper leaves unstated (`Experiment.unstated`)."""

    name: str
    seeds: int
    epochs: float
    min_window_s: float
    max_s: float
    max_packets: float
    coarse: bool
    indicative: bool
    stretch: float = 1.0
    seed_offset: int = 0
    budget_scale: float = 1.0
    figure_formats: tuple[str, ...] = ("svg", "png")
    #: (key, value): every run with that unstated setting (`Experiment.unstated`) changed,
    #: the sensitivity reruns' (experiments/sensitivity.py); () runs the entry as planned
    choice: tuple = ()
    #: seeds draw the hosts' timing noise ([host] jitter, measured on the kernel testbed) as
    #: well as start times, so that an ensemble's runs differ as real runs do and its
    #: interval is a sample's, not one trajectory's; the indicative modes' single runs
    #: keep the noise off
    host_timing: bool = False


# Full mode's budget caps no run of the catalog's plan (tests/test_catalog.py): entries whose
# plan needs more packets declare their own budget (`full_budget_packets`); 1200 s holds
# s004-packet's 10 random losses at 0.01 per second (1008 s).
FULL = Mode("full", seeds=5, epochs=10, min_window_s=30, max_s=1200, max_packets=2e7, coarse=False, indicative=False,
            host_timing=True)
QUICK = Mode("quick", seeds=1, epochs=3, min_window_s=10, max_s=120, max_packets=3e6, coarse=True, indicative=True)
# The test suite's: every entry's pipeline end to end in seconds (numbers meaningless).
TINY = Mode("tiny", seeds=1, epochs=1, min_window_s=2, max_s=6, max_packets=1e5, coarse=True, indicative=True,
            figure_formats=("png",))
MODES = {m.name: m for m in (FULL, QUICK, TINY)}


def mode_named(name: str, seeds: int | None = None, budget_scale: float | None = None) -> Mode:
    if name not in MODES:
        raise ValueError(f"mode is {name!r}; allowed: {', '.join(MODES)}")
    m = MODES[name]
    if budget_scale is not None:
        if m.indicative or not budget_scale >= 1:
            raise ValueError(f"budget scale (--budget-scale) is {budget_scale:g} in {name} mode; allowed: a number >= 1, "
                             "in full mode (it multiplies every entry's run budget)")
        m = dataclasses.replace(m, budget_scale=float(budget_scale))
    if seeds is not None:
        if seeds < 1 or (not m.indicative and seeds < 2):
            raise ValueError(f"seeds is {seeds}; allowed: >= 2 in full mode (a confidence interval), >= 1 otherwise")
        m = dataclasses.replace(m, seeds=seeds)
    return m


# Verdicts a measured window too short for a steady state withdraws: what the interval gave,
# and "not measured" (a window without a single congestion event, say).
DECIDED = (HOLDS, FAILS, INCONCLUSIVE, ONE_TRAJ, NOT_MEASURED)

# ---- scenario files ------------------------------------------------------------------------

_SCENARIOS = resources.files("cubiclab") / "scenarios"


def scenario_names() -> list[str]:
    """The catalog's scenario files (package data, so an installed wheel has them)."""
    return sorted(p.name[:-5] for p in _SCENARIOS.iterdir() if p.name.endswith(".toml"))


def load_scenario(name: str) -> Scenario:
    """The catalog scenario `name` (cubiclab/scenarios/<name>.toml)."""
    f = _SCENARIOS / f"{name}.toml"
    if not f.is_file():
        raise ValueError(f"no catalog scenario '{name}'; there are: {', '.join(scenario_names())}")
    data = tomllib.loads(f.read_text())
    sc = Scenario.from_dict(data, where=f"{name}.toml")
    if "name" not in data:
        sc.name = name
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


# The paper's CUBIC of each seed, and the algorithms that replace the paper's in sensitivity
# rows: name -> (algorithm, what it is, the algorithms it replaces).
PAPER_CUBICS = ("cubic-2008", "cubic-2.2", "cubic-2005", "cubic-2.0")
VARIANTS = {
    "linux": ("cubic", "Today's Linux CUBIC (v2.3: beta 0.7, HyStart)", PAPER_CUBICS),
    "v2.2": ("cubic-2.2", "Linux CUBIC v2.2 (2.6.25-2.6.28) as the kernel computed it (beta 717/1024 kept)",
             PAPER_CUBICS),
    "bbr3": ("bbr3", "BBRv3 (Google's published v3)", ("bbr",)),
}


def with_variant(sc: Scenario, variant: str) -> Scenario:
    """`sc` with every algorithm the variant replaces set to the variant's (its defaults)."""
    algorithm, _, replaced = VARIANTS[variant]
    sc = copy.deepcopy(sc)
    for g in sc.flows:
        if g.algorithm in replaced:
            g.algorithm, g.params, g.initial_ssthresh = algorithm, {}, None
    return sc


#: The paper of each seed (the seeds' README), as `--list` and the report name it; entries of
#: papers outside the seeds name theirs in their title and claims.
PAPERS = {
    "000": 'Ha, Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant" (2008)',
    "001": 'Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant" (PFLDnet 2005)',
    "002": 'Leith, Shorten, McCullagh, "Experimental Evaluation of Cubic TCP" (PFLDnet 2007)',
    "003": 'Shanker, "Congestion Control II: CUBIC" (2018)',
    "004": 'Bao, Wong, Leung, "A Model for Steady State Throughput of TCP CUBIC"',
    "outside": "papers outside the seeds (each entry names its own)",
}


# ---- outcomes ------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What an entry produced: data tables, figure files, verdicts, diagnostics, caveats; or
    the error that stopped it."""

    name: str
    title: str
    seed: str
    figure: str
    setup: str
    mode: str = "full"
    data: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    caveats: list = field(default_factory=list)
    error: str = ""
    wall_s: float = 0.0
    runs: int = 0
    #: What its verdicts rest on (`claims.EVIDENCE`).
    evidence: str = SIMULATION

    def to_doc(self, root: Path | None = None) -> dict:
        """The entry as its claims.json holds it; figure paths relative to `root` (the
        output folder), so that the folder can move."""
        def rel(p) -> str:
            p = Path(p)
            return str(p.relative_to(root)) if root is not None and p.is_relative_to(root) else str(p)

        return {"name": self.name, "seed": self.seed, "figure": self.figure, "title": self.title, "mode": self.mode,
                "evidence": self.evidence, "error": self.error, "caveats": self.caveats,
                "claims": [v.to_dict() for v in self.verdicts], "figures": [rel(p) for p in self.figures]}


# ---- experiments ---------------------------------------------------------------------------


class Experiment:
    """A catalog entry.

    Simulation entries implement `conditions` (one scenario per point of the figure),
    `per_run` (metrics of one run over a time window), `values` (one seed's claim values
    from its rows, one per condition) and `plot`. Model entries implement `compute`
    instead. `claims` is the declared table; for each name in `variants` (keys of
    VARIANTS), every condition also runs with that variant's algorithm in place of the ones
    it replaces (a CUBIC for the paper's, bbr3 for bbr), and each paper claim gets a
    sensitivity row (id@name) from those runs."""

    name = ""
    seed = ""  # "000" ... "004"
    # what its verdicts rest on when run on the simulator (claims.EVIDENCE): entries that
    # `compute` say which kind of computation they are
    evidence = SIMULATION
    figure = ""
    title = ""
    setup = ""
    claims: tuple[ClaimSpec, ...] = ()
    variants: tuple[str, ...] = ()
    # claim id -> tags of the runs it is measured on (its diagnostics, conditions and the
    # check that their windows hold enough epochs); a tuple of values: any of them. Default:
    # every run of the entry
    claim_runs: dict = {}
    # flow groups whose congestion epochs and convergence set the run length: the ones the
    # claims' metrics measure (default: every group)
    epoch_groups: tuple[str, ...] = ()
    # bottleneck packets a full-mode run may carry when the mode's budget is smaller (and then
    # no limit in seconds): for an entry whose plan needs longer runs than the default (the
    # plan's total cost, printed by benches/catalog_wall.py, must stay inside the 60 minutes
    # on 2 cores)
    full_budget_packets: float = 0.0
    # full mode: the metrics' material change relative to the quantity they average
    # (physics.window_epochs): the window then holds the epochs that change asks of each
    # measured flow, derived in the entry, instead of the mode's fixed count
    plan_change: float | None = None
    # the metrics are coefficients of variation, not means (physics.window_epochs' spread)
    plan_spread = False
    # full mode: tag filters (as claim_runs), each under a label the notes print, of runs read
    # as a transient: they do not set their comparison's window (the other protocols' plans
    # do), are not judged "not converged", and each claim that reads them says what their
    # window holds
    transient_runs: dict = {}
    # {flow group: fraction of the pipe one of its flows holds at loss}, for groups the
    # scenario does not give an equal share (physics.run_length)
    pipe_shares: dict = {}
    # a full-mode warm-up floor, for a claim about a transient that must be over before the
    # measured window opens
    full_min_warmup_s: float = 0.0
    # tags that name the protocols a claim compares: runs that differ only in them share one
    # measurement window (the longest any of them plans)
    compared_across: tuple[str, ...] = ("alg", "who")
    # False (full mode): the runs of a comparison share the longest window but each opens it
    # after its own warm-up (a steady state's statistics do not depend on when its window opens)
    shared_warmup = True
    # False for an entry whose runs must stay deterministic (a model's deterministic loss
    # assumption): full mode's hosts' timing noise (Mode.host_timing) is then left off
    host_timing = True
    # the settings its paper leaves unstated, each with the range the sensitivity reruns
    # (experiments/unstated.py); the entry's setup says what it chose
    unstated: tuple = ()

    # ---- what to run
    def conditions(self, mode: Mode) -> list[tuple[Scenario, dict]]:
        return []

    def run_length(self, sc: Scenario, mode: Mode) -> physics.RunLength:
        full = not mode.indicative
        own = full and self.full_budget_packets > 0
        packets = max(mode.max_packets, self.full_budget_packets) if own else mode.max_packets
        # an entry's own budget is in packets (the simulator's cost), not seconds
        max_s = math.inf if own else mode.max_s
        return physics.run_length(sc, epochs=mode.epochs, min_window_s=mode.min_window_s,
                                  max_s=max_s * mode.budget_scale, max_packets=packets * mode.budget_scale,
                                  measured=self.epoch_groups, shares=self.pipe_shares,
                                  min_warmup_s=self.full_min_warmup_s if full else 0.0,
                                  change=self.plan_change if full else None, spread=self.plan_spread)

    def table(self) -> list[ClaimSpec]:
        """Every row the entry reports: its claims and their sensitivity twins, one per
        variant."""
        rows = list(self.claims)
        for v in self.variants:
            rows += [dataclasses.replace(c, id=f"{c.id}@{v}", kind=SENSITIVITY,
                                         rationale=f"{VARIANTS[v][1]} in place of the paper's; {c.rationale}")
                     for c in self.claims if c.kind == PAPER]
        return rows

    def runs(self, mode: Mode) -> list[Run]:
        out = []
        conds = self.conditions(mode)
        if mode.choice:
            key, value = mode.choice
            u = next((u for u in self.unstated if u.key == key), None)
            if u is None:
                raise ValueError(f"catalog entry '{self.name}' leaves no '{key}' unstated; its unstated settings: "
                                 f"{', '.join(u.key for u in self.unstated) or 'none'}")
            conds = [(u.apply(sc, value), tags) for sc, tags in conds]
        if mode.host_timing and self.host_timing:
            conds = [(with_host_timing(sc), tags) for sc, tags in conds]
        if self.variants:
            conds = [(sc, {**tags, "variant": "paper"}) for sc, tags in conds] + [
                (with_variant(sc, v), {**tags, "variant": v}) for v in self.variants for sc, tags in conds]
        plans = [(sc, tags, self.run_length(sc, mode)) for sc, tags in conds]
        # Runs compared across protocols measure over one window: each run of a comparison
        # (the same tags but for `compared_across`) gets the longest warm-up and the longest
        # window any of them plans; runs read as a transient count only when the whole
        # comparison is.
        def comparison(tags):
            return tuple(sorted((k, str(v)) for k, v in tags.items() if k not in self.compared_across))

        # (full mode: the indicative modes' short runs are all capped alike)
        transient = (lambda tags: False) if mode.indicative else self._transient
        steady = {comparison(tags) for _, tags, _ in plans if not transient(tags)}
        longest: dict = {}
        for _, tags, rl in plans:
            if transient(tags) and comparison(tags) in steady:
                continue
            w, win, cut = longest.get(comparison(tags), (0.0, 0.0, False))
            longest[comparison(tags)] = (max(w, rl.warmup_s), max(win, rl.window_s), cut or rl.capped)
        for sc, tags, rl in plans:
            warm_s, window_s, cut = longest[comparison(tags)]
            if not self.shared_warmup and not mode.indicative:
                warm_s = rl.warmup_s
            if transient(tags):
                # it runs its comparison's plan, not its own (which it would not fit)
                rl = dataclasses.replace(rl, capped=cut, planned_s=warm_s + window_s)
            warm, window = warm_s * mode.stretch, window_s * mode.stretch
            base = vary(sc, duration=f"{warm + window:g}s")
            # what the budget must be scaled by for this run to last as planned (the budget
            # scales its limit, rl.limit_s, linearly), and the planned length at this stretch
            plan = {"planned_s": rl.planned_s * mode.stretch,
                    "scale_to_plan": mode.budget_scale * rl.planned_s / rl.limit_s}
            epochs = rl.epochs * window_s / rl.window_s if rl.window_s > 0 else rl.epochs
            for k in range(1 + mode.seed_offset, mode.seeds + 1 + mode.seed_offset):
                out.append(Run(vary(base, seed=k), {**tags, "warmup_s": warm, "epochs": round(epochs * mode.stretch, 1),
                                                    "capped": rl.capped, "asked": rl.asked,
                                                    "transient": transient(tags), **plan}))
        return out

    def _transient(self, tags: dict) -> bool:
        """Whether the run with `tags` is read as a transient (`transient_runs`)."""
        return any(_matches(f, tags) for f in self.transient_runs.values())

    # ---- what to measure
    def per_run(self, run: Run, res, t0: float, t1: float) -> dict:
        raise TypeError(f"catalog entry '{self.name}' measures nothing")

    def values(self, rows: pd.DataFrame) -> dict:
        raise TypeError(f"catalog entry '{self.name}' computes no claim values")

    def plot(self, frame: pd.DataFrame, sweep: SweepResult, outdir: Path) -> list:
        return []

    def explain(self, spec: ClaimSpec, rows: pd.DataFrame) -> str:
        """An entry's own sentence about `spec`, computed from the rows (one per run) of the
        runs that measure it, or for a model entry from its one row of computed claim values;
        empty when the shared diagnostics say all there is."""
        return ""

    def compute(self, mode: Mode, outdir: Path) -> tuple[dict, dict, list]:
        """Model entries: (claim values, data tables, figures). A claim's value is a number
        (a deterministic computation) or a list of one number per seed (a random one)."""
        raise TypeError(f"catalog entry '{self.name}' has neither runs nor a model computation")

    # ---- the pipeline
    def analyse(self, sweep: SweepResult | None, mode: Mode, outdir: Path) -> Outcome:
        with plotting.formats(mode.figure_formats):
            return self._analyse(sweep, mode, outdir)

    def _analyse(self, sweep: SweepResult | None, mode: Mode, outdir: Path) -> Outcome:
        if sweep is None or not sweep.runs:
            vals, data, figs = self.compute(mode, outdir)
            verdicts = []
            for c in self.table():
                # a deterministic computation gives one exact value; a random one (a
                # validator's runs) one value per seed, judged as an ensemble
                got = vals.get(c.id, math.nan)
                many = isinstance(got, (list, tuple))
                v = judge(c, got if many else [got], indicative=mode.indicative, exact=not many)
                own = self.explain(c, pd.DataFrame({k: [x] for k, x in vals.items()}))
                if own:
                    v.note = then(v.note, own)
                verdicts.append(v)
            return self.outcome(mode, data=data, figures=figs, verdicts=verdicts)
        frames = {"all": [], "first": [], "second": []}
        diags = []
        for run, res in sweep.items():
            t0, t1 = float(run.tags["warmup_s"]), float(res.summary["duration_s"])
            mid = (t0 + t1) / 2
            head = {**run.tags, "seed": run.seed, "duration_s": t1, "sim_s": float(res.summary.get("wall_s") or 0.0)}
            for w, (a, b) in (("all", (t0, t1)), ("first", (t0, mid)), ("second", (mid, t1))):
                frames[w].append({**head, **self.per_run(run, res, a, b)})
            # transient claims (convergence, completion times) are about the whole run
            d0 = 0.0 if all(c.transient for c in self.claims) else t0
            diags.append({**head, **run_diagnostics(res, d0, t1)})
        frames = {w: pd.DataFrame(rows) for w, rows in frames.items()}
        diag = pd.DataFrame(diags)
        per_seed = {w: self._seed_values(f) for w, f in frames.items()}
        verdicts = []
        for c in self.table():
            mine = self._claim_rows(c, frames["all"])
            read_as_transient = mine.transient.astype(bool) if "transient" in mine else pd.Series(False, mine.index)
            # a value read over a transient has no steady halves to compare
            halves = () if read_as_transient.any() else (per_seed["first"].get(c.id), per_seed["second"].get(c.id))
            v = judge(c, per_seed["all"].get(c.id, []), *halves, indicative=mode.indicative)
            steady = mine[~read_as_transient]
            asked = steady.asked.fillna(mode.epochs) if "asked" in steady else pd.Series(mode.epochs, steady.index)
            worst = (steady.epochs / asked).idxmin() if len(steady) else None
            short, wanted = (steady.epochs[worst], asked[worst]) if worst is not None else (math.inf, mode.epochs)
            if not mode.indicative and not c.transient and v.verdict in DECIDED and short < wanted / 2:
                # a window the run budget cut below half the planned epochs measures the
                # approach to steady state, and a longer run can reverse its verdict
                v.verdict, v.note = NOT_CONVERGED, (
                    f"the measured window of its longest-epoch condition holds {short:g} congestion epochs of the "
                    f"slowest flow (the plan asks {wanted:g}; the run budget capped it): too short for a steady "
                    f"state, not judged (ours would be {v.ours}). " + self._budget_advice(c, frames["all"], mode))
            if read_as_transient.any():
                v.note = then(v.note, self._transient_note(mine[read_as_transient]))
            unmet = self._unmet(c, diag)
            if unmet:
                # the runs cannot show what the sentence is about: no verdict on the value
                # (indicative modes keep their label and say so)
                if not mode.indicative and v.verdict in DECIDED:
                    v.verdict = UNMET
                v.note = then(v.note, unmet)
            if v.verdict in (FAILS, NOT_CONVERGED, INCONCLUSIVE, UNMET) or (
                    mode.indicative and "outside" in v.note):
                v.note = then(v.note, "In its runs: " + describe(self._diag_for(c, diag)))
            own = self.explain(c, self._claim_rows(c, frames["all"]))
            if own:
                v.note = then(v.note, own)
            verdicts.append(v)
        figs = self.plot(frames["all"], sweep, outdir)
        capped = frames["all"][frames["all"].capped.astype(bool)]
        caveats = [f"Run length capped by the {mode.name}-mode budget for {capped.drop_duplicates('epochs').shape[0]} "
                   f"condition(s): their measured windows hold {capped.epochs.min():g} to {capped.epochs.max():g} "
                   f"congestion epochs of the slowest flow (the plan asks for {mode.epochs:g})."] if len(capped) else []
        return self.outcome(mode, data={"runs": frames["all"], "diagnostics": diag}, figures=figs, verdicts=verdicts,
                            caveats=caveats)

    def _seed_values(self, frame: pd.DataFrame) -> dict:
        """claim id -> one value per seed (paper claims from the paper variant's rows,
        sensitivity twins from their variant's; only the paper claims have twins)."""
        out: dict = {}
        wanted = {c.id for c in self.table()}
        for variant, suffix in [("paper", "")] + [(v, f"@{v}") for v in self.variants]:
            f = frame[frame.variant == variant] if self.variants else frame
            for _, rows in f.groupby("seed", sort=True):
                for k, v in self.values(rows.reset_index(drop=True)).items():
                    if k + suffix in wanted:
                        out.setdefault(k + suffix, []).append(v if isinstance(v, Censored) else float(v))
        return out

    def _claim_rows(self, spec: ClaimSpec, rows: pd.DataFrame) -> pd.DataFrame:
        """The rows (one per run) of the runs that measure `spec`: its variant's, narrowed
        by `claim_runs`."""
        d = rows
        if self.variants:
            d = d[d.variant == (spec.id.split("@")[1] if "@" in spec.id else "paper")]
        for k, v in self.claim_runs.get(spec.id.split("@")[0], {}).items():
            d = d[d[k].isin(v)] if isinstance(v, tuple) else d[d[k] == v]
        return d

    def _transient_note(self, rows: pd.DataFrame) -> str:
        """What the window of the runs a claim reads as a transient holds."""
        which = "; ".join(k for k, f in self.transient_runs.items() if any(_matches(f, r) for r in
                                                                           rows.to_dict("records")))

        def span(x: pd.Series, fmt: str) -> str:
            lo, hi = format(x.min(), fmt), format(x.max(), fmt)
            return lo if lo == hi else f"{lo}-{hi}"

        return (f"It reads {which} as a transient from the start, not a steady state: measured over the other "
                f"protocols' plan ({span(rows.duration_s - rows.warmup_s, '.0f')} s after "
                f"{span(rows.warmup_s, '.0f')} s of warm-up), which holds {span(rows.epochs, 'g')} of their congestion "
                "epochs.")

    def _budget_advice(self, spec: ClaimSpec, rows: pd.DataFrame, mode: Mode) -> str:
        """The budget scale that runs every capped run of `spec` as planned, and the CPU time
        of the whole entry at that scale: each run's measured simulation time (the worker's
        clock, `summary.wall_s`: its CPU time on an idle core, more on a busy machine) times
        its length at that scale over its length now, the simulator's cost being per
        bottleneck packet and a run's packets proportional to its length."""
        mine = self._claim_rows(spec, rows)
        k = math.ceil(10 * mine.scale_to_plan.max()) / 10
        at_k = (rows.duration_s * k / mode.budget_scale).clip(upper=rows[["planned_s", "duration_s"]].max(axis=1))
        now, then = rows.sim_s.sum(), (rows.sim_s * at_k / rows.duration_s).sum()
        return (f"`--budget-scale {k:g}` runs it as planned ({mode.epochs:g} epochs): about {then / 3600:.1f} CPU "
                f"hours for the entry's {len(rows)} runs (their measured simulation time, {now / 3600:.2f} h on the "
                "machine that ran them, times each run's planned length over its length now).")

    def _unmet(self, spec: ClaimSpec, diag: pd.DataFrame) -> str:
        """The sentence's conditions (`spec.requires`) its runs miss, as a sentence; empty
        when they meet them all."""
        d = self._diag_for(spec, diag)
        missed = [f"'{r.says}' ({r.diagnostic} {_fmt(d.get(r.diagnostic, math.nan))}, it needs "
                  f"[{_fmt(r.lo)}, {_fmt(r.hi)}])" for r in spec.requires if not r.met(d.get(r.diagnostic, math.nan))]
        return ("Its runs do not meet the condition its sentence names: " + "; ".join(missed) +
                ", so they cannot show the claim.") if missed else ""

    def _diag_for(self, spec: ClaimSpec, diag: pd.DataFrame) -> dict:
        return self._claim_rows(spec, diag).mean(numeric_only=True).to_dict()

    def outcome(self, mode: Mode, **kw) -> Outcome:
        return Outcome(self.name, self.title, self.seed, self.figure, self.setup, mode=mode.name,
                       **{"evidence": self.evidence, **kw})


def _matches(tag_filter: dict, tags: dict) -> bool:
    """Whether `tags` meet a claim_runs-style filter (a tuple: any of its values)."""
    return all(tags.get(k) in v if isinstance(v, tuple) else tags.get(k) == v for k, v in tag_filter.items())


def _fmt(x: float) -> str:
    return "unmeasured" if not math.isfinite(x) and not math.isinf(x) else f"{x:.3g}"


CATALOG: dict[str, Experiment] = {}


def register(cls):
    inst = cls()
    if inst.name in CATALOG:
        raise ValueError(f"two catalog entries named '{inst.name}'")
    ids = [c.id for c in inst.table()]
    if len(ids) != len(set(ids)):
        raise ValueError(f"catalog entry '{inst.name}' declares a claim id twice")
    CATALOG[inst.name] = inst
    return cls
