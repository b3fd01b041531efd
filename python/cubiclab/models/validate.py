"""The discrete-event validator of seed 004 Sec. III-A, and the RMS error of its Eq. 22.

One run: x_1 uniform in (0, W]; at each loss event k the state counter of the interval
holding x_k is increased; tau_k = min(tau_loss, D(x_k, W)) with tau_loss ~ Exp(lambda);
x_{k+1} = w(x_k, tau_k). Unlike the Markov model, the simulated windows are not quantized
(x_k is continuous), so as K grows the simulated distribution converges to the *exact*
distribution of the continuous chain, and the RMS error against the model levels off at
the model's quantization error, which shrinks as N grows (seed 004 Fig. 3).

The throughput of a run is computed exactly from the continuous trajectory:
sum_k int_0^tau_k w(x_k, t) dt / (W sum_k tau_k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cubiclab.models.markov import check_params

__all__ = ["SimulationResult", "simulate_chain", "state_counts", "rms_error"]


@dataclass
class SimulationResult:
    windows: np.ndarray  # x_k, k = 1..K (bits): the window just before each loss event
    durations: np.ndarray  # tau_k (s)
    areas: np.ndarray  # int_0^tau_k w(x_k, t) dt (bit*s)
    W: float
    params: dict

    @property
    def normalized_throughput(self) -> float:
        return float(self.areas.sum() / (self.W * self.durations.sum()))

    def states(self, n_states: int) -> np.ndarray:
        """X_k (1-based): the interval ((i-1)W/N, iW/N] holding x_k."""
        idx = np.ceil(self.windows * n_states / self.W).astype(np.int64)
        return np.clip(idx, 1, n_states)

    def distribution(self, n_states: int, k: int | None = None) -> np.ndarray:
        """The simulated stationary distribution M_i / K over N states (first k events)."""
        return state_counts(self.states(n_states)[:k], n_states) / (len(self.windows) if k is None else k)

    def frame(self, n_states: int) -> pd.DataFrame:
        n = n_states
        idx = np.arange(1, n + 1)
        return pd.DataFrame({"state": idx, "window": (idx - 0.5) * self.W / n, "probability": self.distribution(n)})


def state_counts(states: np.ndarray, n_states: int) -> np.ndarray:
    """M_i: how many of the 1-based states equal i, for i = 1..N."""
    return np.bincount(np.asarray(states, dtype=np.int64) - 1, minlength=n_states)[:n_states].astype(float)


def simulate_chain(
    capacity: float,
    rtt: float,
    alpha: float,
    beta: float,
    loss_rate: float,
    n_events: int,
    seed: int | np.random.Generator | None = 0,
) -> SimulationResult:
    """Run the Sec. III-A simulator for K = n_events loss events (seeded numpy Generator)."""
    capacity, rtt, alpha, beta, lam, _ = check_params(capacity, rtt, alpha, beta, loss_rate)
    if isinstance(n_events, bool) or int(n_events) != n_events or n_events < 1:
        raise ValueError(f"n_events (K) must be an integer >= 1; got {n_events!r}")
    K = int(n_events)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    W = capacity * rtt
    x = W * (1.0 - rng.random())  # uniform in (0, W]
    t_loss = rng.exponential(1.0 / lam, K) if lam > 0 else np.full(K, math.inf)
    xs = np.empty(K)
    taus = np.empty(K)
    areas = np.empty(K)
    keep = 1.0 - beta
    cbrt = math.cbrt
    for k in range(K):
        xs[k] = x
        L = cbrt(keep * x / alpha)
        d_full = cbrt((W - x) / alpha) + L  # D(x_k, W): a congestion loss at W
        tau = t_loss[k] if t_loss[k] < d_full else d_full
        u = tau - L
        taus[k] = tau
        areas[k] = x * tau + alpha / 4.0 * (u**4 - L**4)  # Eq. 19 with the exact tau
        x_next = alpha * u**3 + x if tau < d_full else W
        x = W if x_next > W else x_next
    params = {"capacity": capacity, "rtt": rtt, "alpha": alpha, "beta": beta, "loss_rate": lam, "n_events": K}
    return SimulationResult(xs, taus, areas, W, params)


def rms_error(pi_model, pi_sim) -> float:
    """Eq. 22: sqrt(sum_i (pi_i - pi~_i)^2 / N)."""
    a = np.asarray(pi_model, dtype=float)
    b = np.asarray(pi_sim, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"the two distributions have different lengths: {a.shape} and {b.shape}")
    return float(np.sqrt(np.mean((a - b) ** 2)))
