"""The Markov model of CUBIC's steady-state throughput with congestion and random loss
(seed 004: Bao, Wong, Leung, "A Model for Steady State Throughput of TCP CUBIC").

Notation and units follow the paper:
  * C: bottleneck capacity (bits/s); RTT (s); W = C * RTT the window (bits) at which a
    congestion loss happens (Eq. 1).
  * alpha: CUBIC's window growth factor in bits/s^3. The paper writes "alpha = 1 Mb/s"
    and means 1e6 bits/s^3 (with these units its two stated results are reproduced exactly:
    +806 % and +137 %, see tests/test_models.py).
  * beta: the fraction *kept* at a loss: the window drops to beta * x (footnote 1 of the
    paper: its beta is 1 - beta of Rhee & Xu). Linux CUBIC's 0.7, seed 001's 0.8.
  * lam: rate of the Poisson random-loss process (events per second).
  * N: number of states; state i (1-based in the paper, index i-1 here) is the window
    interval ((i-1)W/N, iW/N] with midpoint a_i = (i - 0.5) W / N.

Window after a reduction at x (Eq. 4): w(x, t) = alpha (t - L(x))^3 + x with
L(x) = cbrt((1 - beta) x / alpha), so w(x, 0) = beta x. The time to grow from beta x to y
(Eq. 5): D(x, y) = cbrt((y - x) / alpha) + L(x). For y < x the first cube root is
*negative* (a real cube root: numpy.cbrt, never ``** (1/3)`` which gives NaN), and for
y < beta x the whole of D is negative: those windows are never reached, hence the (.)^+
of Eq. 12 and the zeros of Eq. 10.

Transition probabilities (Eq. 14): P_ij = exp(-lam tmin_ij) - exp(-lam tmax_ij) with
tmin_ij = (D(a_i, (j-1)W/N))^+ and tmax_ij = (D(a_i, jW/N))^+; P_ij = 0 when
jW/N < beta a_i, i.e. j < beta (i - 0.5) (Eq. 10: both times clip to 0). The last column is
Eq. 15, P_iN = 1 - sum_{j<N} P_ij; the sum telescopes to exp(-lam tmin_i,j0) -
exp(-lam D(a_i, (N-1)W/N)) with exp(-lam tmin_i,j0) = 1 (tmin clips to 0 for the lowest
reachable j0), so P_iN = exp(-lam D(a_i, (N-1)W/N)), which is how it is computed here
(no cancellation); the rows then sum to 1 to rounding, and the tests check that they do.

Stationary distribution (Eqs. 16-17): pi P = pi, sum pi = 1, solved as a linear system
(one balance equation replaced by the normalisation; unique when the chain has a single
recurrent class, which holds for every lam >= 0: with lam = 0 every state jumps to N).
Average transition time (Eq. 18) tau_ij = (D(a_i, (j - 0.5) W/N))^+; area (Eq. 19)
s_ij = a_i tau_ij + alpha/4 ((tau_ij - L_i)^4 - L_i^4); normalized throughput (Eq. 21)
x = sum pi_i P_ij s_ij / (W sum pi_i P_ij tau_ij).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["MarkovResult", "markov_model", "check_params", "growth_time", "window_after"]


def _num(value, name: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number; got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number; got {value!r}") from None
    if math.isnan(v):
        raise ValueError(f"{name} must be a number; got NaN")
    return v


def check_params(capacity, rtt, alpha, beta, lam, n_states=None) -> tuple:
    """Validate the model's inputs; ValueError names the parameter and its allowed range."""
    capacity = _num(capacity, "capacity")
    if not (0 < capacity < math.inf):
        raise ValueError(f"capacity must be > 0 bits/s (finite); got {capacity}")
    rtt = _num(rtt, "rtt")
    if not (0 < rtt < math.inf):
        raise ValueError(f"rtt must be > 0 seconds (finite); got {rtt}")
    alpha = _num(alpha, "alpha")
    if not (0 < alpha < math.inf):
        raise ValueError(f"alpha (window growth factor) must be > 0 bits/s^3 (finite); got {alpha}")
    beta = _num(beta, "beta")
    if not (0 < beta < 1):
        raise ValueError(f"beta (fraction of the window kept at a loss) must be in (0, 1) exclusive; got {beta}")
    lam = _num(lam, "loss_rate")
    if not (0 <= lam < math.inf):
        raise ValueError(f"loss_rate (lambda, random losses per second) must be >= 0 (finite); got {lam}")
    if n_states is not None:
        if isinstance(n_states, bool) or not float(n_states).is_integer():
            raise ValueError(f"n_states (N) must be an integer >= 2; got {n_states!r}")
        n_states = int(n_states)
        if n_states < 2:
            raise ValueError(f"n_states (N) must be an integer >= 2; got {n_states}")
    return capacity, rtt, alpha, beta, lam, n_states


def growth_time(x, y, alpha: float, beta: float):
    """D(x, y), Eq. 5: time (s) to grow from beta*x to y after a reduction at x.

    Negative when y < beta*x (never reached); the caller clips with (.)^+ where needed."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return np.cbrt((y - x) / alpha) + np.cbrt((1.0 - beta) * x / alpha)


def window_after(x, t, alpha: float, beta: float):
    """w(x, t), Eq. 4: the window t seconds after a reduction at x."""
    x = np.asarray(x, dtype=float)
    return alpha * (np.asarray(t, dtype=float) - np.cbrt((1.0 - beta) * x / alpha)) ** 3 + x


@dataclass
class MarkovResult:
    """Outcome of `markov_model`. Windows are in bits (the paper's unit: W = C * RTT)."""

    normalized_throughput: float
    stationary: pd.DataFrame  # columns: state (1..N), window (a_i, bits), lower, upper, probability
    P: np.ndarray  # N x N transition matrix (Eqs. 10, 14, 15), row i = from state i+1
    tau: np.ndarray  # N x N average transition times tau_ij (s), Eq. 18
    s: np.ndarray  # N x N areas s_ij (bit*s), Eq. 19
    params: dict = field(default_factory=dict)
    solver: str = ""
    residual: float = 0.0  # max |pi P - pi|

    @property
    def pi(self) -> np.ndarray:
        return self.stationary["probability"].to_numpy()

    @property
    def throughput_bps(self) -> float:
        """Average throughput in bits/s: normalized throughput times C."""
        return self.normalized_throughput * self.params["capacity"]

    @property
    def mean_loss_interval(self) -> float:
        """Mean time between loss events (s): sum pi_i P_ij tau_ij."""
        return float(self.pi @ (self.P * self.tau).sum(axis=1))

    def to_dict(self) -> dict:
        return {
            "params": self.params,
            "normalized_throughput": self.normalized_throughput,
            "throughput_bps": self.throughput_bps,
            "mean_loss_interval_s": self.mean_loss_interval,
            "solver": self.solver,
            "residual": self.residual,
            "stationary": self.stationary.to_dict(orient="records"),
        }


def _toeplitz_cbrt(offsets_start: float, n_rows: int, n_cols: int, scale: float) -> np.ndarray:
    """M[r, c] = cbrt((c - r + offsets_start) * scale) for r < n_rows, c < n_cols.

    The arguments of the cube roots in Eqs. 12, 13 and 18 depend on j - i only (grid
    points minus midpoints), so 2N cube roots suffice; the N x N matrix is a strided view."""
    m = np.arange(-(n_rows - 1), n_cols, dtype=float) + offsets_start
    g = np.cbrt(m * scale)
    view = np.lib.stride_tricks.sliding_window_view(g, n_cols)  # row s starts at m = s - (n_rows - 1)
    return view[::-1]  # row r starts at m = -r


def transition_matrix(W: float, alpha: float, beta: float, lam: float, n: int) -> tuple:
    """(P, tau, s, a, L) of Eqs. 10-19 for N = n states, all vectorized over i, j."""
    idx = np.arange(1, n + 1, dtype=float)
    a = (idx - 0.5) * W / n  # midpoints a_i
    L = np.cbrt((1.0 - beta) * a / alpha)  # L_i = time from beta a_i back up to a_i
    LL = L[:, None]
    scale = W / (n * alpha)
    # D(a_i, kW/N) for k = 0..N, clipped at 0: (kW/N - a_i) / alpha = (k - (i-1) - 0.5) W/(N alpha).
    # Column k is the lower edge of state k+1 (= the upper edge of state k).
    D_edges = np.maximum(_toeplitz_cbrt(-0.5, n, n + 1, scale) + LL, 0.0)
    tmin = D_edges[:, :-1]
    tmax = D_edges[:, 1:]
    # exp(-lam tmin) - exp(-lam tmax), written with expm1 for accuracy when both are close.
    P = np.exp(-lam * tmin) * -np.expm1(-lam * (tmax - tmin))
    # Eq. 15 (telescoped): P_iN = exp(-lam D(a_i, (N-1) W / N)).
    P[:, -1] = np.exp(-lam * tmin[:, -1])
    # Eq. 18: tau_ij = (D(a_i, (j - 0.5) W/N))^+, argument (j - i) W / (N alpha).
    tau = np.maximum(_toeplitz_cbrt(0.0, n, n, scale) + LL, 0.0)
    s = a[:, None] * tau + alpha / 4.0 * ((tau - LL) ** 4 - LL**4)  # Eq. 19
    return P, tau, s, a, L


def stationary_distribution(P: np.ndarray, method: str = "solve") -> tuple:
    """pi with pi P = pi, sum pi = 1 (Eqs. 16-17). Returns (pi, solver_used, residual).

    method 'solve': replace one balance equation by the normalisation and solve directly
    (O(N^3), exact when the stationary distribution is unique); falls back to 'lstsq' if
    the matrix is singular or the answer is not a probability vector. 'lstsq': least
    squares on the N+1 equations. 'eig': eigenvector of P^T for the eigenvalue closest to 1."""
    n = P.shape[0]
    used = method
    pi = None
    if method == "solve":
        A = P.T - np.eye(n)
        A[-1, :] = 1.0
        rhs = np.zeros(n)
        rhs[-1] = 1.0
        try:
            pi = np.linalg.solve(A, rhs)
        except np.linalg.LinAlgError:
            pi = None
        if pi is None or not np.all(np.isfinite(pi)) or pi.min() < -1e-9:
            used, pi = "lstsq", None
    if method == "lstsq" or used == "lstsq":
        A = np.vstack([P.T - np.eye(n), np.ones((1, n))])
        rhs = np.zeros(n + 1)
        rhs[-1] = 1.0
        pi = np.linalg.lstsq(A, rhs, rcond=None)[0]
    elif method == "eig":
        w, v = np.linalg.eig(P.T)
        k = int(np.argmin(np.abs(w - 1.0)))
        pi = np.real(v[:, k])
        pi = pi / pi.sum()
    elif method != "solve":
        raise ValueError(f"method must be 'solve', 'lstsq' or 'eig'; got '{method}'")
    pi = np.where(pi < 0, 0.0, pi)  # round-off negatives of order 1e-17
    pi = pi / pi.sum()
    residual = float(np.abs(pi @ P - pi).max())
    return pi, used, residual


def markov_model(
    capacity: float,
    rtt: float,
    alpha: float,
    beta: float,
    loss_rate: float,
    n_states: int = 100,
    method: str = "solve",
) -> MarkovResult:
    """Normalized steady-state throughput of CUBIC (seed 004, Eq. 21) and the chain behind it.

    capacity: C in bits/s; rtt: seconds; alpha: bits/s^3 ("1 Mb/s" in the paper = 1e6);
    beta: fraction kept at a loss (0.5 in the paper's figures); loss_rate: lambda, random
    loss events per second; n_states: N.

    >>> r = markov_model(100e6, 0.1, 1e6, 0.5, 1.0, 100)
    >>> round(r.normalized_throughput, 4)
    0.3625
    """
    capacity, rtt, alpha, beta, lam, n = check_params(capacity, rtt, alpha, beta, loss_rate, n_states)
    W = capacity * rtt
    P, tau, s, a, _ = transition_matrix(W, alpha, beta, lam, n)
    pi, used, residual = stationary_distribution(P, method)
    flow = pi[:, None] * P  # P(X_k = i, X_k+1 = j)
    den = float((flow * tau).sum())
    x = float((flow * s).sum() / (W * den)) if den > 0 else float("nan")
    idx = np.arange(1, n + 1)
    stationary = pd.DataFrame(
        {
            "state": idx,
            "window": a,
            "lower": (idx - 1) * W / n,
            "upper": idx * W / n,
            "probability": pi,
        }
    )
    params = {"capacity": capacity, "rtt": rtt, "alpha": alpha, "beta": beta, "loss_rate": lam, "n_states": n, "W": W}
    return MarkovResult(x, stationary, P, tau, s, params, used, residual)
