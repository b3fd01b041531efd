"""The ideal CUBIC window curves of seed 000 (Eqs. 1-4), for plots like its Fig. 1b."""

from __future__ import annotations

import numpy as np
import pandas as pd


def window_curve(
    w_max: float,
    t_end: float,
    rtt: float,
    c: float = 0.4,
    beta: float = 0.2,
    points: int = 500,
) -> pd.DataFrame:
    """W(t) = C (t - K)^3 + W_max with K = cbrt(W_max beta / C) (seed 000 Eqs. 1-2), and
    W_tcp(t) = W_max (1 - beta) + 3 beta / (2 - beta) * t / RTT (Eq. 4).

    `beta` is the *decrease* fraction (seed 000 convention: 0.2 means keep 80%).
    Times in seconds, windows in segments. Returns columns t, w_cubic, w_tcp, w (the max
    of the two: what CUBIC follows, Sec. 3.3).
    """
    if not (0 < beta < 1):
        raise ValueError(f"beta is {beta}; allowed: 0 < beta < 1 (decrease fraction)")
    if c <= 0 or w_max <= 0 or t_end <= 0 or rtt <= 0:
        raise ValueError("c, w_max, t_end and rtt must all be > 0")
    t = np.linspace(0.0, t_end, points)
    k = np.cbrt(w_max * beta / c)
    w_cubic = c * (t - k) ** 3 + w_max
    w_tcp = w_max * (1 - beta) + 3 * beta / (2 - beta) * t / rtt
    return pd.DataFrame({"t": t, "w_cubic": w_cubic, "w_tcp": w_tcp, "w": np.maximum(w_cubic, w_tcp)})
