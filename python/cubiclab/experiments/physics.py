"""Run lengths from the physics of a scenario.

A verdict is about steady state, so each run's length comes from its scenario: every flow's
window at loss (its share of the pipe and the buffer), the congestion epoch its algorithm
needs to regain that window after a decrease (CUBIC: K = cbrt(W beta / C), seed 000 Eq. 2,
or the TCP-friendly window's linear growth when that is faster; TCP: W/2 RTTs; HSTCP: RFC
3649's a(w), b(w); ...), and the number of epochs a synchronised AIMD pair needs to bring a
difference down to a tenth (ln 0.1 / ln(1 - beta)). Warm-up = the last start + slow start
+ convergence; the measured window holds `epochs` epochs of the slowest flow and as many
random losses of the bottleneck's loss model, if it has one (at least `min_window_s`). An
entry may name the flow groups its metrics measure: only their epochs and convergence
count; and, where the flows do not share the pipe equally, the share one flow of a group
holds (a TCP flow beside CUBIC flows is squeezed to a small window, so its epoch is short).
A budget caps the length; the plan then says how many epochs it holds."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cubiclab import units
from cubiclab.scenario import HEADER_BYTES, Scenario

CUBIC_C = 0.4  # seed 000: C = 0.4 (Linux: bic_scale 41 x 10 / 1024)


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

    @property
    def duration_s(self) -> float:
        return self.warmup_s + self.window_s

    def sentence(self) -> str:
        s = (f"warm-up {self.warmup_s:.0f} s (convergence ≈ {self.convergence_s:.0f} s), then {self.window_s:.0f} s "
             f"measured = {self.epochs:.1f} congestion epochs of {self.epoch_s:.2g} s")
        return s + (" (capped by the run budget: fewer than asked)" if self.capped else "")


def decrease_fraction(algorithm: str, params: dict) -> float:
    """The fraction of the window given up at a congestion event."""
    p = params or {}
    if algorithm in ("cubic", "cubic-2.2"):
        return 1 - p.get("beta", 717) / 1024
    if algorithm in ("cubic-2.0", "bic"):
        return 1 - p.get("beta", 819) / 1024
    if algorithm == "cubic-2008":
        return p.get("beta", 0.2)
    if algorithm == "cubic-2005":
        return 1 - p.get("beta", 0.8)
    if algorithm == "cubic-rfc9438":
        return 1 - p.get("beta", 0.7)
    if algorithm == "scalable":
        return 1 / 2 ** p.get("md_scale", 3)
    if algorithm == "highspeed":
        return 0.3  # RFC 3649's b(w) runs from 0.5 at 38 packets to 0.1 at 83000; mid-range
    return 0.5  # reno, tahoe, htcp (0.5 with a full BDP of buffer), and the rest


def _hstcp_epoch_rtts(w: float) -> float:
    """RFC 3649: b(w) = 0.5 + (0.1 - 0.5) (ln w - ln 38) / (ln 83000 - ln 38), a(w) = w^2 p(w)
    2 b / (2 - b) with p(w) = 0.078 / w^1.2; an epoch regains b w at a per RTT."""
    if w <= 38:
        return 0.5 * w
    b = 0.5 - 0.4 * (math.log(w) - math.log(38)) / (math.log(83000) - math.log(38))
    a = w * w * 0.078 / w ** 1.2 * 2 * b / (2 - b)
    return b * w / max(a, 1.0)


def _htcp_epoch_s(w: float, rtt: float) -> float:
    """H-TCP (Leith, Shorten 2004): alpha(D) = 1 + 10 (D - 1) + 0.25 (D - 1)^2 packets per RTT
    for D > 1 s after the last backoff; time to regain half the window, in 10 ms steps."""
    need, grown, t = 0.5 * w, 0.0, 0.0
    while grown < need and t < 3600:
        d = t - 1.0
        a = 1.0 if d <= 0 else 1 + 10 * d + 0.25 * d * d
        grown += a * 0.01 / rtt
        t += 0.01
    return t


def epoch_s(algorithm: str, params: dict, w: float, rtt: float) -> float:
    """Seconds a flow with window `w` (packets) at loss and round-trip time `rtt` (s) needs
    to regain `w` after a decrease: the length of its congestion epoch."""
    p = params or {}
    b = decrease_fraction(algorithm, p)
    reno = 0.5 * w * rtt
    if algorithm.startswith("cubic"):
        c = p.get("c", CUBIC_C) if algorithm in ("cubic-2008", "cubic-2005", "cubic-rfc9438") else \
            p.get("bic_scale", 41) * 10 / 1024
        k = (w * b / c) ** (1 / 3)
        if algorithm == "cubic-2005":  # growth at most Smax packets per RTT
            k = max(k, b * w / p.get("smax", 160) * rtt)
        if algorithm == "cubic-2.0":  # at most max_increment packets per 100 ms, whatever the RTT
            k = max(k, b * w / (p.get("max_increment", 16) * 10 / (8 if p.get("scaling_bug") else 1)))
        if p.get("tcp_friendliness", p.get("reno_friendly", 1)):
            alpha = 3 * b / (2 - b)  # the TCP-friendly window's packets per RTT (seed 000 Eq. 4)
            k = min(k, b * w / alpha * rtt)
        return k
    if algorithm == "bic":
        steps = max(math.log2(max(b * w / 0.01, 2.0)), b * w / p.get("max_increment", 16))
        return min(steps * rtt, reno) if w > p.get("low_window", 14) else reno
    if algorithm == "highspeed":
        return _hstcp_epoch_rtts(w) * rtt
    if algorithm == "scalable":
        per_rtt = max(1.0, w / p.get("ai_cnt", 100))  # Linux: one packet per min(cwnd, ai_cnt) ACKs
        return b * w / per_rtt * rtt
    if algorithm == "htcp":
        return _htcp_epoch_s(w, rtt)
    if algorithm == "bbr":
        return 10.0  # BBR's ProbeRTT interval: its longest cycle
    return reno


def _flows(sc: Scenario):
    """(algorithm, params, rtt s, start s, count, group name) per flow group."""
    for g in sc.flows:
        rtt = units.parse_time(g.rtt, "rtt") / 1e9
        start = units.parse_time(g.start, "start") / 1e9 + (g.count - 1) * units.parse_time(g.start_spacing,
                                                                                              "start_spacing") / 1e9
        yield g.algorithm, dict(g.params), rtt, start, g.count, g.name


def random_loss_rate(spec: dict, rate_pps: float) -> float:
    """Random loss events per second on the bottleneck (0 without a loss model): a metric
    averaged over random losses needs `epochs` of them in its window too."""
    loss = spec["bottleneck"].get("loss") or {}
    if loss.get("model") == "poisson":
        return float(loss.get("rate", 0.0)) or math.inf
    if loss.get("model") == "bernoulli":
        return float(loss.get("p", 0.0)) * rate_pps or math.inf
    return math.inf


def run_length(sc: Scenario, epochs: float = 10.0, min_window_s: float = 30.0, max_s: float = 900.0,
               max_packets: float = 6e7, measured: tuple[str, ...] = (), shares: dict | None = None,
               min_warmup_s: float = 0.0) -> RunLength:
    """Warm-up and measured window for `sc` (see the module's docstring). `measured`: the flow
    groups whose epochs and convergence the entry's metrics measure (default every group;
    every flow's start still counts). `shares`: {group: fraction of the pipe (BDP + buffer)
    one of its flows holds at loss} for groups that do not get an equal share. The warm-up
    is at least `min_warmup_s`. The length is at most `max_s` seconds and `max_packets`
    bottleneck packets; when capped, warm-up and window keep their proportions (the window
    at least `min_window_s`)."""
    spec = sc.compile()
    wire = sc.mss + HEADER_BYTES
    rate_pps = spec["bottleneck"]["rate"] / 8 / wire
    buf = spec["bottleneck"]["buffer"]
    buffer_pkts = buf.get("packets", buf.get("bytes", 0) / wire)
    groups = list(_flows(sc))
    n = max(1, sum(g[4] for g in groups))
    shares = shares or {}
    unknown = (set(measured) | set(shares)) - {g[5] for g in groups}
    if unknown:
        raise ValueError(f"scenario '{sc.name}' has no flow group named {', '.join(sorted(unknown))}")
    epoch = conv = ss = last_start = 0.0
    for alg, params, rtt, start, _, name in groups:
        last_start = max(last_start, start)
        if measured and name not in measured:
            continue
        w = max(2.0, (rate_pps * rtt + buffer_pkts) * shares.get(name, 1 / n))
        e = epoch_s(alg, params, w, rtt)
        b = decrease_fraction(alg, params)
        epoch = max(epoch, e)
        conv = max(conv, e * math.log(0.1) / math.log(1 - b))
        ss = max(ss, rtt * math.log2(max(w / 10, 2.0)) + e)  # slow start, then its overshoot's epoch
    warm = max(min_warmup_s, last_start + ss + conv)
    window = max(min_window_s, epochs * epoch, epochs / random_loss_rate(spec, rate_pps))
    limit = min(max_s, max_packets / max(rate_pps, 1.0))
    planned = warm + window
    capped = planned > limit
    if capped:  # keep the proportions, but never a window shorter than min_window_s
        window = max(min_window_s, limit * window / (warm + window))
        warm = max(0.0, limit - window)
    return RunLength(round(warm, 1), round(window, 1), epoch, conv, window / epoch if epoch else math.inf, capped,
                     planned, limit)
