"""Run lengths from the physics of a scenario.

A verdict is about steady state, so each run's length comes from its scenario: every flow's
window at loss (its share of the pipe and the buffer), the congestion epoch its algorithm
needs to regain that window after a decrease (CUBIC: K = cbrt(W beta / C), seed 000 Eq. 2,
or the TCP-friendly window's linear growth when that is faster; TCP: W/2 RTTs; HSTCP: RFC
3649's a(w), b(w); ...), and the number of epochs a synchronised AIMD pair needs to bring a
difference down to a tenth (ln 0.1 / ln(1 - beta)). Each algorithm's decrease and growth
constants are the library's (`cubiclab.algorithms.info`); the rules here are per growth
law, and an algorithm whose law has no rule is an error. Warm-up = the last start + slow
start + convergence; the measured window holds `epochs` epochs of the slowest flow and as
many random losses of the bottleneck's loss model, if it has one (at least
`min_window_s`). An entry may name the flow groups its metrics measure: only their epochs
and convergence count; and, where the flows do not share the pipe equally, the share one
flow of a group holds (a TCP flow beside CUBIC flows is squeezed to a small window, so its
epoch is short).
A budget caps the length; the plan then says how many epochs it holds."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cubiclab import _core, units
from cubiclab.algorithms import AlgorithmInfo, info
from cubiclab.scenario import HEADER_BYTES, Scenario, compiled_links

#: RFC 3649's response function, the model of HighSpeed's table (Linux derived the table
#: from it): b(w) falls linearly in ln w to High_Decrease 0.1 at High_Window 83000 from the
#: table's first row (Low_Window, b = 0.5), and p(w) = 0.078 / w^1.2.
HS_HIGH_WINDOW, HS_HIGH_DECREASE = 83000, 0.1


@dataclass(frozen=True)
class RunLength:
    warmup_s: float
    window_s: float
    epoch_s: float
    convergence_s: float
    epochs: float  # congestion epochs of the slowest flow inside the measured window
    capped: bool
    planned_s: float = math.nan  # warm-up + window the physics asks, before the budget
    limit_s: float = math.inf  # the budget: the longest run it allows
    asked: float = math.nan  # congestion epochs of the slowest flow the plan asks of its window

    @property
    def duration_s(self) -> float:
        return self.warmup_s + self.window_s

    def sentence(self) -> str:
        s = (f"warm-up {self.warmup_s:.0f} s (convergence ≈ {self.convergence_s:.0f} s), then {self.window_s:.0f} s "
             f"measured = {self.epochs:.1f} congestion epochs of {self.epoch_s:.2g} s")
        return s + (" (capped by the run budget: fewer than asked)" if self.capped else "")


def _hstcp_low(a: AlgorithmInfo) -> tuple[int, float]:
    """HighSpeed's Low_Window and its decrease: the first row of its table."""
    w, kept = a.beta_kept_by_window[0]
    return w, 1 - kept


def _hstcp_epoch_rtts(a: AlgorithmInfo, w: float) -> float:
    """RFC 3649: b(w) = b_low + (High_Decrease - b_low) (ln w - ln Low_Window) / (ln High_Window
    - ln Low_Window), a(w) = w^2 p(w) 2 b / (2 - b) with p(w) = 0.078 / w^1.2; an epoch
    regains b w at a per RTT."""
    low_w, low_b = _hstcp_low(a)
    if w <= low_w:
        return low_b * w
    b = low_b - (low_b - HS_HIGH_DECREASE) * (math.log(w) - math.log(low_w)) / (math.log(HS_HIGH_WINDOW) -
                                                                                 math.log(low_w))
    alpha = w * w * 0.078 / w ** 1.2 * 2 * b / (2 - b)
    return b * w / max(alpha, 1.0)


def _htcp_epoch_s(b: float, w: float, rtt: float) -> float:
    """H-TCP (Leith, Shorten 2004): alpha(D) = 1 + 10 (D - 1) + 0.25 (D - 1)^2 packets per RTT
    for D > 1 s after the last backoff; time to regain the `b` w given up, in 10 ms steps."""
    need, grown, t = b * w, 0.0, 0.0
    while grown < need and t < 3600:
        d = t - 1.0
        alpha = 1.0 if d <= 0 else 1 + 10 * d + 0.25 * d * d
        grown += alpha * 0.01 / rtt
        t += 0.01
    return t


def _reno_epoch_s(w: float, rtt: float) -> float:
    """Reno regains the half it gave up at one packet per RTT."""
    return (1 - info("reno").beta_kept) * w * rtt


def _cubic_epoch_s(a: AlgorithmInfo, b: float, w: float, rtt: float) -> float:
    """K = cbrt(W b / C) (seed 000 Eq. 2), at least the growth clamp's time to regain b W,
    at most the TCP-friendly window's (3 b / (2 - b) packets per RTT, seed 000 Eq. 4)."""
    g = a.growth_constants
    k = (w * b / g["c"]) ** (1 / 3)
    # The plans of seed 001's entries read its Smax as packets per RTT, though cubic-2005
    # clamps per second: kept, so that s001-exp3's planned runs stay as they are.
    per_rtt = rtt if a.name.startswith("cubic-2005") else 1.0
    k = max(k, b * w / g["max_increase_per_s"] * per_rtt)
    if g["reno_friendly"]:
        alpha = 3 * b / (2 - b)
        k = min(k, b * w / alpha * rtt)
    return k


def _bic_epoch_s(a: AlgorithmInfo, b: float, w: float, rtt: float) -> float:
    """Binary search down to 0.01 packets, at most max_increment packets per RTT; Reno up to
    low_window."""
    g = a.growth_constants
    reno = _reno_epoch_s(w, rtt)
    steps = max(math.log2(max(b * w / 0.01, 2.0)), b * w / g["max_increment"])
    return min(steps * rtt, reno) if w > g["low_window"] else reno


def _scalable_epoch_s(a: AlgorithmInfo, b: float, w: float, rtt: float) -> float:
    """One packet per min(cwnd, ai_cnt) ACKs (Linux): w / ai_cnt packets per RTT, at least one."""
    per_rtt = max(1.0, w / a.growth_constants["ai_cnt"])
    return b * w / per_rtt * rtt


def _hybla_epoch_s(a: AlgorithmInfo, b: float, w: float, rtt: float) -> float:
    """rho^2 packets per RTT (`hybla_cong_avoid`: rho^2 / cwnd per ACK), rho = srtt / rtt0 in
    eighths, floored, at least 1 (`hybla_recalc_param`), from the least smoothed RTT seen: the
    base RTT, not the RTT at loss. Reno's epoch over rho^2."""
    rho = max(1.0, math.floor(8 * rtt / a.growth_constants["rtt0_s"]) / 8)
    return b * w / (rho * rho) * rtt


#: growth law -> (the decrease a plan assumes, the epoch in seconds), both of
#: (algorithm's facts, w packets at loss, rtt s).
_RULES = {
    "reno": (lambda a: 1 - a.beta_kept, lambda a, b, w, rtt: b * w * rtt),
    "cubic": (lambda a: 1 - a.beta_kept, _cubic_epoch_s),
    "bic": (lambda a: 1 - a.beta_kept, _bic_epoch_s),
    "scalable": (lambda a: 1 - a.beta_kept, _scalable_epoch_s),
    # RFC 3649's b(w) at mid-range: halfway from Low_Window's to High_Decrease, in ln w
    "highspeed": (lambda a: (_hstcp_low(a)[1] + HS_HIGH_DECREASE) / 2,
                  lambda a, b, w, rtt: _hstcp_epoch_rtts(a, w) * rtt),
    # H-TCP's backoff at BETA_MIN (half), what its RTT ratio gives with a full BDP of buffer
    "htcp": (lambda a: 1 - a.beta_kept_bounds[0], lambda a, b, w, rtt: _htcp_epoch_s(b, w, rtt)),
    # BBR does not decrease on a loss: its epoch is its ProbeRTT interval, its longest
    # cycle, and convergence is planned as if it halved once per epoch
    "bbr": (lambda a: 0.5, lambda a, b, w, rtt: a.growth_constants["probe_rtt_interval_s"]),
    "hybla": (lambda a: 1 - a.beta_kept, _hybla_epoch_s),
    # YeAH in its slow (Reno) mode: near a loss the queue is the drop-tail buffer's, above the
    # queue_max packets or baseRTT/8 of queueing delay that make it slow wherever the buffer
    # is larger than both; after 16 slow rounds (any epoch of a window above 32) a loss halves
    # (its smallest kept fraction). Its fast (Scalable) growth at a small queue only shortens
    # the epoch, so the run holds at least the epochs asked.
    "yeah": (lambda a: 1 - a.beta_kept_bounds[0], lambda a, b, w, rtt: b * w * rtt),
    # LP grows as Reno and is Reno without timestamps. With them it halves early, when the
    # one-way delay passes `threshold` of its range, at a smaller window than a loss's, so a
    # plan on Reno's loss epoch holds at least the epochs asked (less the inference time,
    # a few RTTs, in which it does not grow after an early halving).
    "lp": (lambda a: 1 - a.beta_kept, lambda a, b, w, rtt: b * w * rtt),
    # Vegas: delay-based, it holds queue_min..queue_max packets queued and does not lose
    # alone; against a loss-based flow the losses drive it, halving (tcp_reno_ssthresh) and
    # regaining at most a packet per RTT: a Reno epoch bounds its epoch (an upper bound).
    "vegas": (lambda a: 1 - a.beta_kept, lambda a, b, w, rtt: b * w * rtt),
    # Veno keeps 4/5 below its backlog threshold (beta, 3 packets) and 1/2 above; at a
    # drop-tail loss the backlog is the buffer's, above it, so it halves, and above the
    # threshold it grows a packet every other RTT: twice a Reno epoch.
    "veno": (lambda a: 1 - a.beta_kept_bounds[0], lambda a, b, w, rtt: 2 * b * w * rtt),
    # Westwood: ssthresh = bw_est * rtt_min, the BDP, so it gives up the queue's share of the
    # window; with a buffer of one BDP that is its half (beta_kept). Grows as Reno.
    "westwood": (lambda a: 1 - a.beta_kept, lambda a, b, w, rtt: b * w * rtt),
    # Illinois: decrease between 1 - beta_max and 1 - beta_min by the average delay, at a
    # drop-tail loss the delay is its maximum, so beta_max (half: beta_kept_bounds[0]);
    # growth alpha per RTT between alpha_min and alpha_max, alpha_min at high delay: the
    # epoch at alpha_min is an upper bound (the run holds at least the epochs asked).
    "illinois": (lambda a: 1 - a.beta_kept_bounds[0],
                 lambda a, b, w, rtt: b * w * rtt / a.growth_constants["alpha_min"]),
    # NV: a loss keeps its beta_kept (tcp_nv's ssthresh), it grows as Reno (at most a packet
    # per RTT); its delay-driven early decreases come at a smaller window, so the Reno epoch
    # is an upper bound.
    "nv": (lambda a: 1 - a.beta_kept, lambda a, b, w, rtt: b * w * rtt),
    # CDG: a loss halves (beta_kept), it grows as Reno; its probabilistic delay backoff
    # (backoff_kept) comes at a smaller window and only shortens the epoch: an upper bound.
    "cdg": (lambda a: 1 - a.beta_kept, lambda a, b, w, rtt: b * w * rtt),
}


def _facts(algorithm: str, params: dict) -> AlgorithmInfo:
    """The algorithm's facts from the library; an algorithm without a rule here is an error."""
    names = [row[0] for row in _core.algorithms()]
    a = info(algorithm, params) if algorithm in names else None
    if a is None or a.growth not in _RULES:
        known = [n for n in names if info(n).growth in _RULES]
        raise ValueError(f"the run-length physics has no rule for algorithm '{algorithm}'; it has rules for "
                         f"{', '.join(known)}")
    return a


def decrease_fraction(algorithm: str, params: dict) -> float:
    """The fraction of the window given up at a congestion event, as the plan assumes it."""
    a = _facts(algorithm, params or {})
    return _RULES[a.growth][0](a)


def epoch_s(algorithm: str, params: dict, w: float, rtt: float) -> float:
    """Seconds a flow with window `w` (packets) at loss and round-trip time `rtt` (s) needs
    to regain `w` after a decrease: the length of its congestion epoch."""
    a = _facts(algorithm, params or {})
    decrease, epoch = _RULES[a.growth]
    return epoch(a, decrease(a), w, rtt)


def window_epochs(decrease: float, change: float, spread: bool = False) -> float:
    """Congestion epochs a measured window needs so that where it cuts a flow's sawtooth
    moves a mean over it by less than a material change `change` (relative to the mean).
    Over one epoch the window grows from (1 - b) W back to W; if that growth is linear, the
    rate over the first x of an epoch of length T averages (1 - b) W + b W x / (2 T), and
    its integral strays from the epoch's mean (1 - b/2) W T by b W x (x - T) / (2 T), at most
    b W T / 8 at x = T/2. A window of n whole epochs plus any part of one therefore has a
    mean within b / (8 (1 - b/2) n) = b / (4 (2 - b) n) of the steady mean. The stationarity
    check compares the window's halves (n/2 epochs each), so each half's error is held to
    change / 2: b / (2 (2 - b) n) <= change / 2, n >= b / ((2 - b) change). Concave or
    convex growth (CUBIC's) strays less from its mean than the linear ramp of the same
    range, so the linear bound holds for every growth law here.
    `spread`: the metric is a coefficient of variation. The ramp's deviation b W (t/T - 1/2)
    has variance b^2 W^2 / 12 over whole epochs; the integral of its square less that, from
    a loss to t, is b^2 W^2 T (u^3/3 - u^2/2 + u/6) (u = t/T), which swings between
    +-b^2 W^2 T / (36 sqrt 3) (u = 1/2 -+ 1/(2 sqrt 3)): a part of an epoch, from any phase,
    moves the variance of n epochs by at most 2 / (3 sqrt 3 n) of it, the standard deviation
    by half that, and with the mean's error the CoV by at most (1 / (3 sqrt 3) + b / (4 (2 -
    b))) / n to first order; each half within change / 2 asks n >= 4 (1 / (3 sqrt 3) + b /
    (4 (2 - b))) / change, about 9 epochs for a tenth, the variance being far more sensitive
    to where the window ends than the mean."""
    if not 0 < decrease < 1 or not change > 0:
        raise ValueError(f"window_epochs: decrease {decrease:g} must be in (0, 1) and change {change:g} > 0")
    if spread:
        return 4 * (1 / (3 * math.sqrt(3)) + decrease / (4 * (2 - decrease))) / change
    return decrease / ((2 - decrease) * change)


def _flows(sc: Scenario):
    """(algorithm, params, rtt ns, start s, count, group name) per flow group."""
    for g in sc.flows:
        rtt_ns = units.parse_time(g.rtt, "rtt")
        start = units.parse_time(g.start, "start") / 1e9 + (g.count - 1) * units.parse_time(g.start_spacing,
                                                                                              "start_spacing") / 1e9
        yield g.algorithm, dict(g.params), rtt_ns, start, g.count, g.name


def random_loss_rate(spec: dict, rate_pps: float) -> float:
    """Random loss events per second on the bottleneck (0 without a loss model): a metric
    averaged over random losses needs `epochs` of them in its window too."""
    loss = compiled_links(spec)[0].get("loss") or {}
    if loss.get("model") == "poisson":
        return float(loss.get("rate", 0.0)) or math.inf
    if loss.get("model") == "bernoulli":
        return float(loss.get("p", 0.0)) * rate_pps or math.inf
    return math.inf


def run_length(sc: Scenario, epochs: float = 10.0, min_window_s: float = 30.0, max_s: float = 900.0,
               max_packets: float = 6e7, measured: tuple[str, ...] = (), shares: dict | None = None,
               min_warmup_s: float = 0.0, change: float | None = None, spread: bool = False) -> RunLength:
    """Warm-up and measured window for `sc` (see the module's docstring). `measured`: the flow
    groups whose epochs and convergence the entry's metrics measure (default every group;
    every flow's start still counts). `shares`: {group: fraction of the pipe (BDP + buffer)
    one of its flows holds at loss} for groups that do not get an equal share. The warm-up
    is at least `min_warmup_s`. The length is at most `max_s` seconds and `max_packets`
    bottleneck packets; when capped, warm-up and window keep their proportions (the window
    at least `min_window_s`). `change`: the metrics' material change relative to the
    quantity they average; the window then holds `window_epochs(b, change)` epochs of each
    measured flow (its own decrease b) instead of `epochs` of the slowest, and `epochs` is
    kept for the random losses; `spread`: the metrics are coefficients of variation."""
    spec = sc.compile()
    wire = sc.mss + HEADER_BYTES
    rate_pps = compiled_links(spec)[0]["rate"] / 8 / wire
    buf = compiled_links(spec)[0]["buffer"]
    buffer_pkts = buf.get("packets", buf.get("bytes", 0) / wire)
    groups = list(_flows(sc))
    n = max(1, sum(g[4] for g in groups))
    shares = shares or {}
    unknown = (set(measured) | set(shares)) - {g[5] for g in groups}
    if unknown:
        raise ValueError(f"scenario '{sc.name}' has no flow group named {', '.join(sorted(unknown))}")
    epoch = conv = ss = last_start = needed = 0.0
    for alg, params, rtt_ns, start, _, name in groups:
        last_start = max(last_start, start)
        if measured and name not in measured:
            continue
        rtt = rtt_ns / 1e9
        bdp_pkts = _core.bdp_bytes(compiled_links(spec)[0]["rate"], rtt_ns) / wire
        w = max(2.0, (bdp_pkts + buffer_pkts) * shares.get(name, 1 / n))
        e = epoch_s(alg, params, w, rtt)
        b = decrease_fraction(alg, params)
        epoch = max(epoch, e)
        needed = max(needed, e * (epochs if change is None else window_epochs(b, change, spread)))
        conv = max(conv, e * math.log(0.1) / math.log(1 - b))
        ss = max(ss, rtt * math.log2(max(w / 10, 2.0)) + e)  # slow start, then its overshoot's epoch
    warm = max(min_warmup_s, last_start + ss + conv)
    window = max(min_window_s, needed, epochs / random_loss_rate(spec, rate_pps))
    limit = min(max_s, max_packets / max(rate_pps, 1.0))
    planned = warm + window
    capped = planned > limit
    if capped:  # keep the proportions, but never a window shorter than min_window_s
        window = max(min_window_s, limit * window / (warm + window))
        warm = max(0.0, limit - window)
    return RunLength(round(warm, 1), round(window, 1), epoch, conv, window / epoch if epoch else math.inf, capped,
                     planned, limit, needed / epoch if change is not None and epoch else epochs)
