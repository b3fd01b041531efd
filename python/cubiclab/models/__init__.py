"""Analytic models of CUBIC and its rivals.

  * `response`: average window against loss rate (Mathis, Padhye/PFTK, HSTCP, CUBIC Eq. 5)
    and the boundary of CUBIC's TCP-friendly region (seeds 000, 001).
  * `markov`: the Markov chain of seed 004 (Bao, Wong, Leung): stationary distribution of
    the window at loss events and the normalized throughput (Eq. 21).
  * `validate`: seed 004's discrete-event validator and the RMS error (Eq. 22).
  * `figures`: seed 000 Fig. 3 and seed 004 Figs. 3-7 as DataFrames and PNGs.

Quick start::

    from cubiclab.models import markov_model, cubic_window
    markov_model(capacity=100e6, rtt=0.1, alpha=1e6, beta=0.5, loss_rate=1.0).normalized_throughput
    cubic_window(1e-6, rtt=0.01)
"""

from cubiclab.models.markov import MarkovResult, markov_model
from cubiclab.models.response import (
    aimd_window,
    cubic_tcp_friendly_loss_rate,
    cubic_tcp_friendly_rtt,
    cubic_window,
    cubic_window_rx05,
    hstcp_window,
    mathis_window,
    padhye_approx_window,
    padhye_throughput,
    padhye_window,
    response_table,
)
from cubiclab.models.validate import SimulationResult, rms_error, simulate_chain

__all__ = [
    "MarkovResult",
    "markov_model",
    "SimulationResult",
    "simulate_chain",
    "rms_error",
    "aimd_window",
    "cubic_window",
    "cubic_window_rx05",
    "cubic_tcp_friendly_loss_rate",
    "cubic_tcp_friendly_rtt",
    "hstcp_window",
    "mathis_window",
    "padhye_throughput",
    "padhye_window",
    "padhye_approx_window",
    "response_table",
]
