"""Replay a trace of ACK and loss events through any algorithm (see `cubiclab replay`).

The trace is CSV with columns ``time_us,event,acked,rtt_us`` and optionally
``cwnd_limited``, ``idle_us``, ``snd_una``, ``snd_nxt``; events are ``ack``, ``loss``,
``rto``, ``tx_start`` and ``undo``. Semantics follow Linux ``tcp_input.c`` (the Rust
module ``cubiclab_cc::replay`` documents them).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from cubiclab import _core

TraceLike = "str | os.PathLike | pd.DataFrame"


def _trace_text(trace) -> str:
    if isinstance(trace, pd.DataFrame):
        buf = io.StringIO()
        trace.to_csv(buf, index=False)
        return buf.getvalue()
    if isinstance(trace, (os.PathLike, Path)):
        return Path(trace).read_text()
    if isinstance(trace, str):
        if "\n" in trace or "," in trace:
            return trace
        p = Path(trace)
        if not p.exists():
            raise ValueError(f"trace: no such file '{trace}'")
        return p.read_text()
    raise ValueError(f"trace: expected a path, CSV text or a DataFrame, got {type(trace).__name__}")


def replay(
    algorithm: str,
    trace,
    params: dict | None = None,
    initial_cwnd: int | None = None,
    initial_ssthresh: int | None = None,
) -> pd.DataFrame:
    """Feed `trace` to `algorithm` and return its state after every event.

    Columns: time_us, event, cwnd, ssthresh, cwnd_cnt, ca_state, then the algorithm's own
    variables (for CUBIC: last_max_cwnd, K, origin, epoch_start, delay_min, tcp_cwnd, cnt,
    found, ...). Bad names or values raise ValueError naming them.

    >>> import cubiclab
    >>> df = cubiclab.replay("reno", "time_us,event,acked,rtt_us\\n0,ack,1,40000\\n")
    >>> int(df.cwnd.iloc[0])
    11
    """
    cols = _core.replay_csv(
        algorithm, _trace_text(trace), dict(params or {}), initial_cwnd, initial_ssthresh
    )
    return pd.DataFrame(cols)


def builtin_trace(
    rate_mbps: float = 100.0,
    rtt_ms: float = 40.0,
    loss_every_s: float = 8.0,
    duration_s: float = 40.0,
    mss: int = 1448,
) -> pd.DataFrame:
    """A trace of a bulk sender on a saturated bottleneck: ACKs arrive at the link rate
    (the ACK clock of a busy drop-tail link), each with an RTT sample of the base RTT, and
    a fast-retransmit loss every `loss_every_s` seconds."""
    if rate_mbps <= 0 or rtt_ms <= 0 or duration_s <= 0 or loss_every_s <= 0:
        raise ValueError("builtin_trace: rate_mbps, rtt_ms, duration_s, loss_every_s must be > 0")
    pps = rate_mbps * 1e6 / (8 * (mss + 52))
    n = int(duration_s * pps)
    t = (np.arange(n) / pps * 1e6).astype(np.int64)
    df = pd.DataFrame({"time_us": t, "event": "ack", "acked": 1, "rtt_us": int(rtt_ms * 1000)})
    loss_t = (np.arange(loss_every_s, duration_s, loss_every_s) * 1e6).astype(np.int64)
    losses = pd.DataFrame({"time_us": loss_t, "event": "loss", "acked": 0, "rtt_us": -1})
    return pd.concat([df, losses]).sort_values("time_us", kind="stable").reset_index(drop=True)
