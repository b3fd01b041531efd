"""Response functions: the average congestion window (segments) against the loss rate p.

All functions take numpy arrays or scalars for ``p`` (broadcasting) and return float
arrays (0-d for scalar input, so ``float(f(...))`` works). A loss rate is a probability per
packet, 0 < p <= 1.

Sources:
  * Standard TCP, Mathis et al. (CCR 1997): W = sqrt(3 / (2 b p)); b = packets per ACK.
  * Padhye, Firoiu, Towsley, Kurose (SIGCOMM 1998, "PFTK"): the full model (their Eq. 30,
    with timeouts and a receiver-window limit W_max) and its approximation (Eq. 31).
  * HighSpeed TCP, RFC 3649 Sec. 5: W = 0.12 / p^0.835 above Low_Window = 38 segments,
    standard TCP below.
  * CUBIC under deterministic loss, seed 000 Sec. 5 Eq. 5:
        E[W] = (C (4 - beta) / (4 beta) * (RTT / p)^3)^(1/4)
    with beta the *decrease* fraction (0.2 in Linux CUBIC v2.2), and Eq. 6 (1.17 for
    C = 0.4, beta = 0.2). With the TCP-friendly region (seed 000 Sec. 3.3, Eq. 3-4) CUBIC's
    window is the larger of Eq. 5 and the window of an AIMD with alpha = 3 beta / (2 - beta),
    which Eq. 3 shows to equal standard TCP's sqrt(3 / (2 p)).
  * Seed 001 Sec. II-C (beta = 0.8 *kept*): the same curves with decrease = 1 - 0.8.

In code the fraction removed at a loss is the parameter ``decrease`` (cubiclab's ``beta`` is
always a fraction kept, as in `model markov` and the algorithms' parameters); the formulas
here keep seed 000's symbol, beta = decrease.

Derivation of Eq. 5 (checked here, it is what `cubic_window` computes): with a loss every
1/p packets and no other losses, every epoch starts at (1 - beta) W_max and ends at W_max
after K = cbrt(W_max beta / C) seconds (the concave half of W(t) = C (t - K)^3 + W_max).
Packets sent in an epoch: (1/RTT) int_0^K W(t) dt = W_max K (4 - beta) / (4 RTT) = 1/p.
The time-average window is W_max (4 - beta) / 4. Eliminating W_max = C K^3 / beta gives
K = (4 beta RTT / (C (4 - beta) p))^(1/4) and E[W] = (C (4 - beta) / (4 beta))^(1/4) (RTT/p)^(3/4).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "mathis_window",
    "aimd_window",
    "padhye_throughput",
    "padhye_window",
    "padhye_approx_window",
    "hstcp_window",
    "cubic_window",
    "cubic_window_rx05",
    "cubic_eq6_constant",
    "cubic_eq6_short_epoch_ratio",
    "cubic_tcp_friendly_loss_rate",
    "cubic_tcp_friendly_rtt",
    "response_table",
    "HSTCP_LOW_WINDOW",
    "RFC3649_TCP_CONSTANT",
]

#: RFC 3649: HighSpeed TCP uses the standard response function below this window.
HSTCP_LOW_WINDOW = 38.0
#: RFC 3649 writes standard TCP as W = 1.2 / sqrt(p) (1.2 ~ sqrt(3/2) = 1.2247, rounded).
#: Seed 000's "1200 packets at p = 1e-6" is this constant; Mathis gives 1224.7.
RFC3649_TCP_CONSTANT = 1.2


def _p(p, name: str = "p") -> np.ndarray:
    arr = np.asarray(p, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0) or np.any(arr > 1):
        raise ValueError(f"{name} (loss rate) must be in (0, 1]; got {p!r}")
    return arr


def _pos(x, name: str, what: str = "", allow_inf: bool = False) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0{what}; got {x!r}") from None
    if np.isnan(v) or v <= 0 or (np.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be > 0{what}; got {x!r}")
    return v


def _beta(beta, name: str = "beta") -> float:
    try:
        b = float(beta)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1); got {beta!r}") from None
    if not (0.0 < b < 1.0):
        raise ValueError(f"{name} must be in (0, 1) (exclusive); got {beta!r}")
    return b


def mathis_window(p, b: float = 1.0) -> np.ndarray:
    """Standard TCP (Mathis et al. 1997): W = sqrt(3 / (2 b p)) segments.

    p = 1e-6, b = 1: sqrt(1.5e6) = 1224.74 (seed 000 rounds it to "1200 packets")."""
    p = _p(p)
    b = _pos(b, "b", " (packets acknowledged per ACK)")
    return np.sqrt(3.0 / (2.0 * b * p))


def aimd_window(p, alpha: float, decrease: float) -> np.ndarray:
    """Average window of an AIMD(alpha, beta) flow, seed 000 Eq. 3 (times RTT):

        W = sqrt(alpha / 2 * (2 - beta) / beta / p)

    alpha: segments added per RTT; decrease (beta): the fraction removed (the window drops to
    (1 - beta) W). TCP is alpha = 1, beta = 0.5: sqrt(3 / (2 p)). Seed 001 Eq. 2 writes the
    same with the kept fraction b = 1 - beta: (1 + b) / (1 - b) = (2 - beta) / beta."""
    p = _p(p)
    alpha = _pos(alpha, "alpha", " (segments per RTT)")
    decrease = _beta(decrease, "decrease")
    return np.sqrt(alpha / 2.0 * (2.0 - decrease) / decrease / p)


def _padhye_q_hat(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """PFTK Eq. 24: probability that a loss in a window of w is detected by a timeout."""
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        num = (1.0 - q**3) * (1.0 + q**3 * (1.0 - q ** (w - 3.0)))
        den = 1.0 - q**w
        out = np.where(den > 0, num / den, 1.0)
    return np.minimum(1.0, out)


def padhye_throughput(p, rtt: float, t0: float, b: float = 1.0, w_max: float = np.inf) -> np.ndarray:
    """PFTK full model (SIGCOMM 1998, Eq. 30): throughput in segments per second.

    p: loss rate; rtt, t0 (base timeout) in seconds; b: packets acknowledged per ACK
    (1 here; 2 with delayed ACKs, as in the paper's examples); w_max: receiver window limit in segments.

        E[W]  = (2 + b) / (3 b) + sqrt(8 (1 - p) / (3 b p) + ((2 + b) / (3 b))^2)
        Q(w)  = min(1, (1 - (1-p)^3)(1 + (1-p)^3 (1 - (1-p)^(w-3))) / (1 - (1-p)^w))
        f(p)  = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6
        E[W] < w_max:  B = ((1-p)/p + E[W] + Q(E[W]) / (1-p))
                           / (RTT (b E[W] / 2 + 1) + Q(E[W]) T0 f(p) / (1-p))
        otherwise:     B = ((1-p)/p + w_max + Q(w_max) / (1-p))
                           / (RTT (b w_max / 8 + (1-p) / (p w_max) + 2) + Q(w_max) T0 f(p) / (1-p))

    For small p this tends to 1 / (RTT sqrt(2 b p / 3)), Mathis' law."""
    p = _p(p)
    rtt = _pos(rtt, "rtt", " (seconds)")
    t0 = _pos(t0, "t0", " (seconds, base retransmission timeout)")
    b = _pos(b, "b", " (packets acknowledged per ACK)")
    w_max = _pos(w_max, "w_max", " (segments)", allow_inf=True)
    q = 1.0 - p
    c = (2.0 + b) / (3.0 * b)
    ew = c + np.sqrt(8.0 * q / (3.0 * b * p) + c * c)
    f = 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_q = np.where(q > 0, 1.0 / q, np.inf)
        q_ew = _padhye_q_hat(p, ew)
        # p = 1 gives (1-p)/p = 0 and an infinite timeout term: throughput 0.
        b1 = (q / p + ew + q_ew * inv_q) / (rtt * (b * ew / 2.0 + 1.0) + q_ew * t0 * f * inv_q)
        wm = np.full_like(ew, w_max) if np.isfinite(w_max) else ew
        q_wm = _padhye_q_hat(p, wm)
        b2 = (q / p + wm + q_wm * inv_q) / (rtt * (b * wm / 8.0 + q / (p * wm) + 2.0) + q_wm * t0 * f * inv_q)
    out = np.where(ew < w_max, b1, b2)
    return np.nan_to_num(out, nan=0.0)


def padhye_window(p, rtt: float, t0: float | None = None, b: float = 1.0, w_max: float = np.inf) -> np.ndarray:
    """PFTK full model as an average window: throughput x RTT (segments).

    t0 defaults to 4 RTT (the t_RTO = 4R of RFC 5348, TFRC). b defaults to 1 here so that,
    at small p, the curve meets Mathis' sqrt(3 / (2p)) used by the other response functions."""
    rtt = _pos(rtt, "rtt", " (seconds)")
    t0 = 4.0 * rtt if t0 is None else t0
    return padhye_throughput(p, rtt, t0, b, w_max) * rtt


def padhye_approx_window(p, rtt: float, t0: float | None = None, b: float = 1.0, w_max: float = np.inf) -> np.ndarray:
    """PFTK approximate model (Eq. 31) as a window (segments):
    min(w_max, RTT / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))."""
    p = _p(p)
    rtt = _pos(rtt, "rtt", " (seconds)")
    t0 = _pos(4.0 * rtt if t0 is None else t0, "t0", " (seconds)")
    b = _pos(b, "b", " (packets acknowledged per ACK)")
    w_max = _pos(w_max, "w_max", " (segments)", allow_inf=True)
    den = rtt * np.sqrt(2.0 * b * p / 3.0) + t0 * np.minimum(1.0, 3.0 * np.sqrt(3.0 * b * p / 8.0)) * p * (1 + 32 * p**2)
    return np.minimum(w_max, rtt / den)


def hstcp_window(p, low_window: float = HSTCP_LOW_WINDOW) -> np.ndarray:
    """HighSpeed TCP, RFC 3649: W = 0.12 / p^0.835 where that exceeds Low_Window (38),
    standard TCP (Mathis, sqrt(3 / (2p))) below. The two meet near p = 1.0e-3
    (0.12 / 0.001^0.835 = 38.4, sqrt(1500) = 38.7), so the curve is nearly continuous."""
    p = _p(p)
    hs = 0.12 / p**0.835
    return np.where(hs > low_window, hs, np.sqrt(3.0 / (2.0 * p)))


def cubic_eq6_constant(c: float = 0.4, decrease: float = 0.2) -> float:
    """The constant of seed 000 Eq. 6: (C (4 - beta) / (4 beta))^(1/4).
    C = 0.4, beta = 0.2: (0.4 * 3.8 / 0.8)^(1/4) = 1.9^(1/4) = 1.1741 ("1.17")."""
    c = _pos(c, "C", " (CUBIC scaling constant, segments/s^3)")
    decrease = _beta(decrease, "decrease")
    return float((c * (4.0 - decrease) / (4.0 * decrease)) ** 0.25)


def cubic_window(p, rtt: float, c: float = 0.4, decrease: float = 0.2, tcp_friendly: bool = True) -> np.ndarray:
    """CUBIC's average window under deterministic loss (seed 000 Eq. 5), in segments:

        E[W] = (C (4 - beta) / (4 beta) (RTT / p)^3)^(1/4)

    decrease (seed 000's beta): the fraction removed at a loss (0.2). rtt in seconds, C in
    segments/s^3.
    With tcp_friendly=True (Linux default, seed 000 Fig. 3) the result is
    max(Eq. 5, the AIMD window of Eq. 3 with alpha = 3 beta / (2 - beta)), and the latter
    is exactly sqrt(3 / (2p)) for every beta."""
    p = _p(p)
    rtt = _pos(rtt, "rtt", " (seconds)")
    k = cubic_eq6_constant(c, decrease)
    w = k * (rtt / p) ** 0.75
    if tcp_friendly:
        w = np.maximum(w, aimd_window(p, 3.0 * decrease / (2.0 - decrease), decrease))
    return w


def cubic_eq6_short_epoch_ratio(x, decrease: float = 0.2) -> np.ndarray:
    """What Eq. 6 gets wrong when every loss comes a fraction `x` of K early: the ratio of
    the concave profile's true average window to Eq. 5's for the loss rate that epoch gives.

    Eq. 5 takes the epoch to be K, the time W(t) = W_max - C (K - t)^3 needs to climb back
    to W_max. At packet level the loss comes on the plateau a little before W_max, after
    T = K (1 - x). Over [0, T] the profile averages
        W_T = W_max - C (K^4 - (K - T)^4) / (4 T) = W_max (1 - beta/4 (1 + x)(1 + x^2))
    and sends 1/p = W_T T / RTT packets. Eq. 5 at that p, with C K^3 = beta W_max (so that
    Eq. 5's constant times K^(3/4) is W_0^(1/4), W_0 = W_max (1 - beta/4) its full-epoch
    average), is W_0^(1/4) (W_T (1 - x))^(3/4); hence
        W_T / Eq. 5 = (W_T / W_0)^(1/4) (1 - x)^(-3/4),
    1 at x = 0, and nearly (T / K)^(-3/4): the loss rate of a shorter epoch is higher, for
    which Eq. 5 expects a smaller window. C and RTT cancel."""
    x = np.asarray(x, dtype=float)
    if np.any((x < 0) | (x >= 1)):
        raise ValueError("x (the fraction of K the epoch falls short by) must be in [0, 1)")
    decrease = _beta(decrease, "decrease")
    w_t = 1.0 - decrease / 4.0 * (1.0 + x) * (1.0 + x * x)
    return (w_t / (1.0 - decrease / 4.0)) ** 0.25 * (1.0 - x) ** -0.75


def cubic_window_rx05(p, rtt: float, c: float = 0.4, beta_kept: float = 0.8, tcp_friendly: bool = True) -> np.ndarray:
    """Seed 001's parameterisation: beta = 0.8 is the fraction *kept* after a loss (its
    TCP-mode increment is 3 (1 - beta) / (1 + beta) per RTT, Sec. II-C). Same curve as
    `cubic_window` with beta = 1 - beta_kept."""
    return cubic_window(p, rtt, c, 1.0 - _beta(beta_kept, "beta_kept"), tcp_friendly)


def cubic_tcp_friendly_loss_rate(rtt, c: float = 0.4, decrease: float = 0.2):
    """Boundary of CUBIC's TCP-friendly region: the loss rate p* at which Eq. 5 equals
    standard TCP's sqrt(3 / (2p)). For p > p* CUBIC's window is TCP's (TCP mode).

    Setting (C (4-beta)/(4 beta))^(1/4) (RTT/p)^(3/4) = (3/(2p))^(1/2) and raising to the
    4th power: C (4-beta)/(4 beta) RTT^3 / p^3 = 9 / (4 p^2), so

        p* = C (4 - beta) / (4 beta) * RTT^3 / 2.25,

    i.e. 2.11 C RTT^3 for beta = 0.2. With C = 0.4: p* = 8.44e-4 at RTT = 100 ms and 8.44e-7
    at RTT = 10 ms (so seed 000's example, p = 1e-6 at 10 ms, is inside the TCP-friendly
    region: "CUBIC achieves exactly the same rate as Standard TCP").

    Seed 001 (Sec. II-C) states: "if the packet loss rate is larger than 0.36·C·RTT, then
    CUBIC is TCP-friendly. With C=0.4 and RTT=100ms, when the packet loss rate is larger
    than 0.000144". Its own example fixes the lost exponent: 0.36 * 0.4 * 0.1^3 = 1.44e-4,
    so the formula is 0.36 C RTT^3 (the cube is lost in the text). The *form* C RTT^3 is
    reproducible (it is what equating CUBIC's and TCP's response functions gives); the
    *coefficient* 0.36 is NOT reproducible from the equations we have:
      * Eq. 5 (beta = 0.2 decrease, i.e. 0.8 kept) = Mathis: 2.11 C RTT^3 (8.44e-4);
      * Eq. 5 with beta = 0.8 misread as the decrease: C RTT^3 / 2.25 = 0.444 C RTT^3
        (1.78e-4, the closest to seed 001's 1.44e-4);
      * the epoch argument (TCP growing 1 segment/RTT overtakes the concave cubic within an
        epoch iff K < sqrt(1 / (C RTT)), which matches seed 001's "epoch shorter than
        1/C·RTT" with the root lost) combined with Eq. 5's K(p) = (4 beta RTT / (C (4-beta)
        p))^(1/4): p > 4 beta / (4 - beta) C RTT^3 = 0.21 C RTT^3 (1.0 C RTT^3 with 0.8).
    None gives 0.36; seed 001 omits its proof. This function returns the response-function
    boundary (first bullet)."""
    rtt = np.asarray(rtt, dtype=float)
    if np.any(~np.isfinite(rtt)) or np.any(rtt <= 0):
        raise ValueError(f"rtt must be > 0 (seconds); got {rtt!r}")
    k4 = cubic_eq6_constant(c, decrease) ** 4
    return k4 * rtt**3 / 2.25


def cubic_tcp_friendly_rtt(p, c: float = 0.4, decrease: float = 0.2):
    """The inverse of `cubic_tcp_friendly_loss_rate`: the RTT (s) below which CUBIC is in
    TCP mode at loss rate p: RTT* = (2.25 p / (C (4 - beta) / (4 beta)))^(1/3)."""
    p = _p(p)
    k4 = cubic_eq6_constant(c, decrease) ** 4
    return np.cbrt(2.25 * p / k4)


def response_table(p, rtt: float, model: str = "all", c: float = 0.4, decrease: float = 0.2,
                   b: float = 1.0, t0: float | None = None, w_max: float = np.inf):
    """A pandas DataFrame with column p and one window column (segments) per model.

    model: 'tcp' (Mathis), 'padhye' (PFTK full), 'hstcp', 'cubic' (Eq. 5 with TCP-friendly
    max), 'cubic_pure' (Eq. 5 alone), or 'all'."""
    import pandas as pd

    p = np.atleast_1d(_p(p))
    funcs = {
        "tcp": lambda: mathis_window(p, b),
        "padhye": lambda: padhye_window(p, rtt, t0, b, w_max),
        "hstcp": lambda: hstcp_window(p),
        "cubic": lambda: cubic_window(p, rtt, c, decrease, True),
        "cubic_pure": lambda: cubic_window(p, rtt, c, decrease, False),
    }
    names = list(funcs) if model == "all" else [model]
    for n in names:
        if n not in funcs:
            raise ValueError(f"model must be one of {', '.join(list(funcs) + ['all'])}; got '{model}'")
    _pos(rtt, "rtt", " (seconds)")
    return pd.DataFrame({"p": p, **{n: funcs[n]() for n in names}})
