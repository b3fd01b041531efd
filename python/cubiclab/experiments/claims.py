"""Claims declared before the numbers, and the verdict an ensemble earns.

Each catalog entry declares its claims as one table of `ClaimSpec`s: the paper's sentence
(quoted), where it is, whether its number is stated in the text or read off a figure, what we
measure, what counts as agreement (`Band` two-sided where the paper gives a magnitude;
`Above`/`Below` one-sided for orderings, with a margin) and why. `judge` turns one value per
seed into a `Verdict` (the first three placed by :func:`cubiclab.stats.verdict`, as the
agreement matrix's are):

- holds: the 95% confidence interval of the mean (clipped to the metric's natural bounds,
  `Bounds`: a utilisation cannot exceed 1) lies inside the accepted region;
- does not hold: it lies wholly outside;
- inconclusive: it straddles the boundary;
- not converged: the metric still drifts between the first and the second half of the
  measured window (its mean change is both significant and larger than the claim's scale);
- one trajectory: the seeds move the value by under 1% of the claim's scale, so the runs are
  one trajectory, not a sample, and their interval decides nothing;
- censored values (a convergence time a run ended before seeing, `Censored`) are never
  averaged as numbers: a `censored` claim is judged on the median, whose distribution-free
  interval from order statistics takes each censored value as the bound it is;
- indicative: quick and tiny modes (one seed, short runs) never give holds / does not hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cubiclab.stats import FAILS, HOLDS, INCONCLUSIVE, ONE_TRAJECTORY, mean_ci, verdict

PAPER, SENSITIVITY, EXTENSION = "paper claim", "sensitivity", "extension"
KINDS = (PAPER, SENSITIVITY, EXTENSION)
TEXT, FIGURE, MODEL = "stated in text", "read off figure", "computed from the paper's model"
# a finding of a paper outside the seeds, worded from memory without its text at hand: not a quote
RECALLED = "recalled, not quoted"

# The catalog's two meanings of "utilisation", one name each; every claim's metric says
# which it measures. The papers' "total utilization" is one or the other by their arithmetic
# (seed 000 Fig. 6's 72% + 23% = 95% leaves the background out; seed 001's 98% takes it in).
LINK_UTILISATION = "link utilisation (every byte the bottleneck sent, background included, over its capacity)"
FLOWS_UTILISATION = "flows' utilisation (the named long-lived flows' bytes over the link's capacity, background left out)"

# What a verdict rests on: a packet-level simulation, real Linux TCP on the testbed, an
# analytic model solved by cubiclab (seed 004's Markov chain), or the paper's own formulas and
# rules evaluated (seed 000's Eqs. 1-5, seed 001's friendly region). The tally counts them
# apart, and its headline counts only packets: simulated or real.
SIMULATION, KERNEL, MODEL_EVIDENCE, ARITHMETIC = (
    "packet-level simulation", "kernel testbed", "analytic model", "the paper's own arithmetic")
EVIDENCE = (SIMULATION, KERNEL, MODEL_EVIDENCE, ARITHMETIC)
HEADLINE_EVIDENCE = (SIMULATION, KERNEL)

NOT_CONVERGED, ONE_TRAJ, INDICATIVE, NOT_MEASURED = "not converged", "one trajectory", "indicative", "not measured"
#: The runs do not meet a condition the quoted sentence names (`Requires`): they cannot show
#: the claim, whatever the value.
UNMET = "condition not met"
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE, NOT_CONVERGED, ONE_TRAJ, UNMET, INDICATIVE, NOT_MEASURED)


@dataclass(frozen=True)
class Band:
    """Two-sided: the paper gives a magnitude; agreement is `center` ± `half`."""

    center: float
    half: float

    sided = "two-sided"

    @property
    def lo(self) -> float:
        return self.center - self.half

    @property
    def hi(self) -> float:
        return self.center + self.half

    @property
    def scale(self) -> float:
        return self.half

    def __str__(self) -> str:
        return f"{_num(self.center)} ± {_num(self.half)}"


@dataclass(frozen=True)
class Above:
    """One-sided: the metric must exceed `bound` (for an ordering, a difference that must
    exceed a margin above the ensemble's noise). `scale` is the size of a material change,
    used by the stationarity check."""

    bound: float
    scale: float

    sided = "one-sided"
    lo = property(lambda self: self.bound)
    hi = math.inf

    def __str__(self) -> str:
        return f"> {_num(self.bound)}"


@dataclass(frozen=True)
class Below:
    bound: float
    scale: float

    sided = "one-sided"
    lo = -math.inf
    hi = property(lambda self: self.bound)

    def __str__(self) -> str:
        return f"< {_num(self.bound)}"


@dataclass(frozen=True)
class Bounds:
    """The values a kind of metric can take at all. A Student-t interval is symmetric about
    the mean, so near a natural bound it reaches values no run can give (a utilisation of
    0.99 ± 0.013 spans [0.977, 1.003]); `judge` clips the interval to these bounds."""

    lo: float = -math.inf
    hi: float = math.inf

    def clip(self, lo: float, hi: float) -> tuple[float, float]:
        return max(lo, self.lo), min(hi, self.hi)

    def __str__(self) -> str:
        if self == UNBOUNDED:
            return ""
        return f"[{_num(self.lo)}, {_num(self.hi)}]"


@dataclass(frozen=True)
class Censored:
    """A value known only to lie in [lo, hi]: a convergence time the run ended before seeing
    is at least the time the run had left (hi infinite), and a difference of such times is
    bounded on one side only."""

    lo: float
    hi: float = math.inf


def bounds_of(value) -> tuple[float, float]:
    """(lo, hi) of a value that is a number or `Censored`."""
    return (value.lo, value.hi) if isinstance(value, Censored) else (float(value), float(value))


# The metric kinds, each declared once; a claim names the kind of its metric.
UNBOUNDED = Bounds()
FRACTION = Bounds(0.0, 1.0)  # a utilisation, a share of the link or of a group, a fraction of time
NONNEGATIVE = Bounds(0.0, math.inf)  # a ratio of throughputs or windows, a CoV, a duration


def jain(n: int) -> Bounds:
    """Jain's index of `n` flows, (sum x)^2 / (n sum x^2): 1/n when one flow takes all, 1
    when all are equal."""
    if n < 1:
        raise ValueError(f"Jain's index: n is {n}; allowed: >= 1 flows")
    return Bounds(1.0 / n, 1.0)


def then(note: str, more: str) -> str:
    """`note` followed by the sentence `more`, with the full stop between them."""
    if not note:
        return more
    return f"{note}{'' if note.endswith('.') else '.'} {more}"


def cite(quote: str, source: str) -> str:
    """A claim's sentence in quotation marks, or as it is when `source` is RECALLED."""
    return quote if source == RECALLED else f"“{quote}”"


@dataclass(frozen=True)
class Requires:
    """A condition the quoted sentence names ("in highly unsynchronised conditions"), measured
    in the claim's runs as the mean of a run diagnostic (experiments/diagnostics.py) that must
    lie in [lo, hi]; `says` is the sentence's own words for it."""

    diagnostic: str
    says: str
    lo: float = -math.inf
    hi: float = math.inf

    def met(self, value: float) -> bool:
        return math.isfinite(value) and self.lo <= value <= self.hi

    def __str__(self) -> str:
        return f"{self.diagnostic} in [{_num(self.lo)}, {_num(self.hi)}]"


@dataclass(frozen=True)
class ClaimSpec:
    """One row of an entry's claims table. `transient`: the metric describes a transient
    (a convergence time), so it has no steady-state halves to compare. `bounds`: the natural
    bounds of the metric's kind (FRACTION, NONNEGATIVE, jain(n); UNBOUNDED for differences).
    `tolerance_history`: every earlier tolerance of the claim and why it changed ("was X:
    reason"), so that a tolerance moved after a result is seen keeps its old value beside
    the new one (the claims snapshot test refuses a change without it).
    `censored`: its per-seed values may be `Censored` (times a run ended before seeing);
    it is judged on the median (see `judge`).
    `construction`: why the claim holds by the construction of cubiclab's own code (its
    metric compares a thing with itself, or states an identity of the model): such a row is a
    consistency check of the code, reported apart and never tallied as evidence.
    `requires`: the conditions its sentence names, measured in its runs (`Requires`); runs
    that miss one are judged UNMET, not on their value."""

    id: str
    quote: str
    where: str
    source: str
    paper: str
    metric: str
    unit: str
    accept: Band | Above | Below
    rationale: str
    kind: str = PAPER
    contradiction: str = ""
    transient: bool = False
    bounds: Bounds = UNBOUNDED
    tolerance_history: tuple[str, ...] = ()
    censored: bool = False
    construction: str = ""
    requires: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind is {self.kind!r}; allowed: {', '.join(KINDS)}")
        if self.source not in (TEXT, FIGURE, MODEL, RECALLED):
            raise ValueError(f"claim {self.id}: source is {self.source!r}; allowed: {TEXT!r}, {FIGURE!r}, {MODEL!r}, "
                             f"{RECALLED!r}")

    @property
    def cited(self) -> str:
        """The paper's sentence as a report prints it: in quotation marks unless recalled."""
        return cite(self.quote, self.source)

    def row(self) -> dict:
        """The row as the snapshot and the report show it."""
        return {"id": self.id, "kind": self.kind, "where": self.where, "source": self.source, "quote": self.quote,
                "paper": self.paper, "metric": self.metric, "unit": self.unit, "tolerance": str(self.accept),
                "sided": self.accept.sided, "rationale": self.rationale, "contradiction": self.contradiction,
                "transient": self.transient, "bounds": str(self.bounds), "censored": self.censored,
                "tolerance_history": list(self.tolerance_history),
                "construction": self.construction, "requires": [f"{r.says}: {r}" for r in self.requires]}


@dataclass
class Verdict:
    """A claim judged: its spec, the per-seed values, their mean and 95% CI half-width, the
    drift between the window's halves, and the sentence that explains a verdict."""

    spec: ClaimSpec
    values: list = field(default_factory=list)
    mean: float = math.nan
    ci: float = math.nan
    n: int = 0
    drift: float = math.nan
    drift_ci: float = math.nan
    verdict: str = NOT_MEASURED
    note: str = ""
    #: A censored claim's median interval (not symmetric about anything): replaces mean ± ci.
    median_interval: tuple | None = None

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% confidence interval of the mean (or of a censored claim's median), clipped
        to the metric's bounds."""
        if self.median_interval is not None:
            return self.spec.bounds.clip(*self.median_interval)
        return self.spec.bounds.clip(self.mean - self.ci, self.mean + self.ci)

    @property
    def inside(self) -> bool | None:
        """Whether the value (the mean) lies inside the claim's tolerance, whatever its
        interval says; None unmeasured."""
        return bool(self.spec.accept.lo <= self.mean <= self.spec.accept.hi) if self.n else None

    @property
    def clipped(self) -> bool:
        lo, hi = self.interval
        return math.isfinite(self.ci) and (lo > self.mean - self.ci or hi < self.mean + self.ci)

    @property
    def ours(self) -> str:
        if self.n == 0:
            return "n/a"
        u = f" {self.spec.unit}" if self.spec.unit else ""
        if self.median_interval is not None:
            lo, hi = self.interval
            return f"median {_num(self.mean)}{u}, [{_num(lo)}, {_num(hi)}] (n = {self.n})"
        if self.n == 1 and self.ci == 0:
            return f"{_num(self.mean)}{u} (computed)"
        if self.n == 1 or not math.isfinite(self.ci):
            return f"{_num(self.mean)}{u} (n = {self.n})"
        if self.clipped:
            lo, hi = self.interval
            return f"{_num(self.mean)}{u}, 95% CI [{_num(lo)}, {_num(hi)}] (n = {self.n})"
        return f"{_num(self.mean)} ± {_num(self.ci)}{u} (n = {self.n})"

    def to_dict(self) -> dict:
        return {**self.spec.row(), "values": [list(bounds_of(v)) if isinstance(v, Censored) else float(v)
                                              for v in self.values], "mean": self.mean, "ci95": self.ci,
                "ci95_interval": list(self.interval), "n": self.n, "drift": self.drift, "drift_ci95": self.drift_ci,
                "ours": self.ours,
                "verdict": self.verdict, "note": self.note}




def judge(spec: ClaimSpec, values, first=None, second=None, indicative: bool = False,
          exact: bool = False) -> Verdict:
    """The verdict of `spec` from one value per seed (`values`) and, unless the claim is
    transient, the same metric over the first and second half of each run's window.
    `exact`: one value from a deterministic computation (a model), whose interval is 0."""
    if spec.censored:
        return _judge_median(spec, values, indicative)
    vals = [float(v) for v in values]
    m, ci, n = mean_ci(vals)
    if exact and n == 1:
        ci = 0.0
    v = Verdict(spec, vals, m, ci, n)
    if n == 0:
        v.note = "no value could be measured"
        return v
    if not spec.transient and first is not None and second is not None:
        d = np.asarray(second, dtype=float) - np.asarray(first, dtype=float)
        v.drift, v.drift_ci, _ = mean_ci(d)
    drifting = math.isfinite(v.drift) and abs(v.drift) > spec.accept.scale and (
        not math.isfinite(v.drift_ci) or abs(v.drift) > v.drift_ci)
    a = spec.accept
    if indicative or (n < 2 and not exact):
        lean = "inside" if a.lo <= m <= a.hi else "outside"
        v.verdict = INDICATIVE
        v.note = f"one short run per point: {lean} the tolerance" + (
            f"; drifting by {_num(v.drift)} between the window's halves" if drifting else "")
        return v
    if drifting:
        v.verdict = NOT_CONVERGED
        v.note = (f"the metric moves by {_num(v.drift)} ± {_num(v.drift_ci)} from the first to the second half of the "
                  f"measured window, more than the claim's scale {_num(a.scale)}: not judged")
        return v
    spread = max(vals) - min(vals)
    if n >= 2 and not exact and spread < ONE_TRAJECTORY * a.scale:
        v.verdict = ONE_TRAJ
        v.note = (f"its {n} seeds move it by {_num(spread)}, under {ONE_TRAJECTORY:.0%} of the claim's scale "
                  f"{_num(a.scale)}: what they vary does not change it, so the interval is one trajectory's, not a "
                  f"sample's, and decides nothing (the value lies {'inside' if a.lo <= m <= a.hi else 'outside'} the "
                  "tolerance)")
        return v
    v.verdict = by_interval(v.interval, a)
    if v.verdict == INCONCLUSIVE:
        v.note = f"the 95% interval [{_num(v.interval[0])}, {_num(v.interval[1])}] straddles the tolerance {a}"
    return v


def by_interval(interval: tuple[float, float], accept) -> str:
    """Holds when the interval lies inside the accepted region, does not hold when wholly
    outside it, inconclusive otherwise (:func:`cubiclab.stats.verdict`, as the agreement
    matrix places its intervals)."""
    return verdict(*interval, accept.lo, accept.hi)


def median_order_interval(n: int) -> tuple[int, float]:
    """(k, coverage): the distribution-free interval of a median from `n` values is the k-th
    smallest to the k-th largest, covering it with probability 1 - 2 P(Bin(n, 1/2) < k). The
    largest k whose coverage is at least 95%, or k = 1 when none is (n <= 5: 1 - 2/2^5 =
    93.75% at n = 5)."""
    def coverage(k: int) -> float:
        return 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= 0.95:
        k += 1
    return k, coverage(k)


def _judge_median(spec: ClaimSpec, values, indicative: bool) -> Verdict:
    """A censored claim: the median of the per-seed values, each a number or `Censored`, and
    its order-statistic interval (`median_order_interval`) from the values' lower bounds on
    the left and their upper bounds on the right, so that a censored value widens the
    interval on its open side and is never averaged as a number."""
    pairs = [bounds_of(v) for v in values]
    pairs = [(lo, hi) for lo, hi in pairs if not (math.isnan(lo) or math.isnan(hi))]
    v = Verdict(spec, list(values), n=len(pairs))
    if not pairs:
        v.note = "no value could be measured"
        return v
    lows, highs = sorted(p[0] for p in pairs), sorted(p[1] for p in pairs)
    n, a = len(pairs), spec.accept
    v.mean = float(np.median(lows))
    cut = sum(lo != hi for lo, hi in pairs)
    said = (f"{cut} of {n} values censored (a run that never converged counts as at least the time it ran), "
            "judged on the median, never averaged" if cut else "judged on the median")
    if indicative or n < 2:
        v.verdict = INDICATIVE
        v.note = f"one short run per point: {'inside' if a.lo <= v.mean <= a.hi else 'outside'} the tolerance; {said}"
        return v
    k, cover = median_order_interval(n)
    v.median_interval = (lows[k - 1], highs[n - k])
    v.verdict = by_interval(v.interval, a)
    v.note = (f"{said}; the interval is the {k}{'st' if k == 1 else 'th'} smallest lower bound to the {k}"
              f"{'st' if k == 1 else 'th'} largest upper bound, a distribution-free {cover:.1%} interval of the median")
    return v


def _num(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "n/a" if x is None or math.isnan(x) else ("∞" if x > 0 else "-∞")
    if x == 0:
        return "0"
    if abs(x) >= 1000 or abs(x) < 0.001:
        return f"{x:.3g}"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:.4g}"
