"""The bridge between seed 004's Markov model and packets: the same CUBIC, the same random
loss, run through the packet simulator, against the model's normalized throughput.

Mapping. The model's window grows as alpha (t - L)^3 in bits; the simulator's CUBIC grows in
packets, so C = alpha / (8 x packet bytes) packets/s^3. The model's beta is the fraction
*kept*; the simulator runs ``cubic-2008`` (real-valued Algorithm 1 of seed 000) with
``decrease = 1 - beta_model``, ``c = C``, and without TCP friendliness or fast convergence, which
the model does not have. Random loss is a Poisson process of rate lambda on the bottleneck
(one packet lost per event); congestion loss comes from a buffer of 2% of the BDP, so the
window tops out at about W = C x RTT as the model assumes.

Where and why they differ:
  * The model's window is a fluid; packets come in whole segments, with one segment's
    serialization and delayed ACKs.
  * The model has no slow start; the simulation starts with one (the first `warmup` is
    discarded) and a loss that lands in a window's Recovery is absorbed by it, where the
    model counts each Poisson event as a reduction.
  * The model's RTT is constant and its congestion loss happens exactly at W; the packet
    path adds queueing up to 2% of an RTT and loses a burst when the buffer overflows.
  * The model states a throughput of w / RTT even after a loss; the simulation's goodput
    dips through recovery.
  * At high lambda (around one loss per second and more at these settings) the windows are
    too small for three duplicate ACKs, and the packet flow waits for retransmission
    timeouts (200 ms floor, backed off): its throughput falls far below the model's, which
    has no timeouts; the model also bottoms out at (3 + beta) / (8N), its first state.

Measured (100 Mbps, 100 ms, alpha 1 Mb/s^3, beta 0.5, 300 s, seed 1): lambda 0.01, 0.1, 0.3,
1, 3 -> model 0.868, 0.843, 0.767, 0.363, 0.030; packets 0.868, 0.835, 0.732, 0.198, 0.000.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cubiclab import units
from cubiclab.models.markov import markov_model

WIRE_BYTES = 1500
PAYLOAD = 1448


def bridge(
    capacity="100Mbps",
    rtt="100ms",
    alpha: float = 1e6,
    beta: float = 0.5,
    loss_rates=(0.01, 0.03, 0.1, 0.3, 1.0, 3.0),
    n_states: int = 100,
    duration="300s",
    warmup="20s",
    seeds: int = 1,
) -> pd.DataFrame:
    """Model and packet simulation over lambda. Columns: loss_rate, model, sim (mean over
    seeds), sim_std, and the parameters."""
    import cubiclab

    c_bps = units.parse_rate(capacity, "capacity")
    rtt_s = units.parse_time_s(rtt, "rtt")
    c_pkts = alpha / (8 * WIRE_BYTES)
    warm = units.parse_time_s(warmup, "warmup")
    rows = []
    for lam in loss_rates:
        model = markov_model(c_bps, rtt_s, alpha, beta, lam, n_states).normalized_throughput
        sims = []
        for seed in range(1, seeds + 1):
            sc = cubiclab.Scenario(
                name=f"bridge-{lam:g}", seed=seed, duration=duration, start_jitter="0ms",
                bottleneck=cubiclab.Bottleneck(rate=capacity, buffer="2%BDP",
                                               loss={"model": "poisson", "rate": float(lam)} if lam > 0 else None),
                flows=[cubiclab.FlowGroup("cubic-2008", rtt=rtt, params={
                    "decrease": 1 - beta, "c": c_pkts, "tcp_friendliness": 0, "fast_convergence": 0})],
                record=cubiclab.Record(interval="1s"),
            )
            r = cubiclab.simulate(sc)
            g = r.flows[r.flows.t > warm].goodput_bps.mean()
            sims.append(g / (c_bps * PAYLOAD / WIRE_BYTES))
        rows.append({"loss_rate": lam, "model": model, "sim": float(np.mean(sims)), "sim_std": float(np.std(sims)),
                     "capacity_bps": c_bps, "rtt_s": rtt_s, "alpha": alpha, "beta": beta, "c_pkts": c_pkts})
    return pd.DataFrame(rows)


def plot_bridge(path, data: pd.DataFrame | None = None):
    """Model against packet simulation over lambda (log x), like seed 004 Fig. 4."""
    from cubiclab.plots import plt, save

    data = bridge() if data is None else data
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(data.loss_rate, data.model, "o-", label="Markov model (Eq. 21)")
    ax.errorbar(data.loss_rate, data.sim, yerr=data.sim_std, fmt="s--", label="packet simulation (cubic-2008)")
    ax.set_xscale("log")
    ax.set_xlabel("random loss rate λ (1/s)")
    ax.set_ylabel("normalized throughput")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    return save(fig, path)
