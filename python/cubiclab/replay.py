"""Replay a trace of ACK and loss events through any algorithm (see `cubiclab replay`).

The trace is CSV with columns ``time_us,event,acked,rtt_us`` and optionally
``cwnd_limited``, ``disorder``, ``srtt_us``, ``idle_us``, ``snd_una``, ``snd_nxt``; events are ``ack``,
``ack_no_cc`` (an ACK on which the algorithm's hooks did not run), ``ece`` (an ``ack`` that
carried ECE: CWR from Open, ``dctcp``'s marked count), ``ce`` and ``no_ce`` (the receiver's CE
events), ``loss``, ``rto``, ``tx_start`` and ``undo``. An algorithm with ``cong_control`` (``bbr``) needs every ACK's
delivery-rate sample: ``rs_prior_delivered, rs_delivered, rs_interval_us,
rs_app_limited`` and optionally ``losses, prior_in_flight, in_flight, wstamp_ns, delivered``. Semantics follow Linux ``tcp_input.c`` (the Rust
module ``cubiclab_cc::replay`` documents them).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from cubiclab import _core
from cubiclab.suggest import suggesting

TraceLike = "str | os.PathLike | pd.DataFrame"


#: The largest initial window or threshold a replay takes, segments: the scenario's bound on
#: initial_cwnd, far inside the kernel's 32-bit window arithmetic.
MAX_SEGMENTS = 1 << 30
#: Linux's TCP_INFINITE_SSTHRESH: "no threshold yet", the ssthresh of a new connection
#: (kernel traces start from it).
TCP_INFINITE_SSTHRESH = 0x7FFFFFFF


#: The largest replay trace read: 16 MiB of CSV, about 600,000 events.
MAX_REPLAY_TRACE_BYTES = 16 << 20
#: Bytes the replay holds per event of the trace while it builds its result (the core's
#: columns and the frame's: 3.5 million events took 4.3 GiB).
REPLAY_EVENT_BYTES = 1300
#: The most events (lines) a replay takes, whatever the trace's source (file, text, frame):
#: the run memory budget's worth of REPLAY_EVENT_BYTES, halved for the interpreter and the caller.
MAX_REPLAY_EVENTS = _core.MEMORY_BUDGET_BYTES // 2 // REPLAY_EVENT_BYTES


def read_trace_file(path) -> str:
    """The text of a trace file; a missing file, anything but a regular file, a file over
    MAX_REPLAY_TRACE_BYTES or bytes that are not UTF-8 are refused naming the file."""
    from cubiclab.io import read_input_file

    raw = read_input_file(path, "trace", limit=MAX_REPLAY_TRACE_BYTES)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"trace: '{path}' is not UTF-8 text (byte {e.start}); a trace is CSV text") from None


def _trace_text(trace) -> str:
    if isinstance(trace, pd.DataFrame):
        buf = io.StringIO()
        trace.to_csv(buf, index=False)
        return buf.getvalue()
    if isinstance(trace, os.PathLike):
        return read_trace_file(trace)
    if isinstance(trace, str):
        if "\n" in trace or "," in trace:
            return trace
        if not trace.strip():
            raise ValueError("trace is empty; expected CSV text with a header line "
                             "'time_us,event,acked,rtt_us', a file path or a DataFrame")
        return read_trace_file(trace)
    raise ValueError(f"trace: expected a path, CSV text or a DataFrame, got {type(trace).__name__}")


def _segments(value, field: str, least: int) -> int | None:
    if value is None or (field == "initial_ssthresh" and value == TCP_INFINITE_SSTHRESH):
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_SEGMENTS:
        raise ValueError(f"{field} is {value!r}; allowed: an integer in [{least}, {MAX_SEGMENTS}] segments")
    return value


def _bounded(value, field: str, least: int, most: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise ValueError(f"{field} is {value!r}; allowed: an integer in [{least}, {most}]")
    return value


def _params(params) -> dict:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ValueError(f"params: expected a table of name = value, got {type(params).__name__}")
    for k, v in params.items():
        # A name is a choice (cubic's hystart = "hystart++"); the library checks it.
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise ValueError(f"params: {k!r} = {v!r}; allowed: a parameter name and a number or a name")
    return dict(params)


def replay(
    algorithm: str,
    trace,
    params: dict | None = None,
    initial_cwnd: int | None = None,
    initial_ssthresh: int | None = None,
    mss: int | None = None,
    seed: int | None = None,
    handshake_rtt_us: int | None = None,
    start_us: int | None = None,
    handshake_acked: bool = False,
) -> pd.DataFrame:
    """Feed `trace` to `algorithm` and return its state after every event.

    Columns: t (the event's time, seconds, as in every result table; the trace's time_us / 1e6),
    event, cwnd, ssthresh, cwnd_cnt, ca_state, pacing_rate (bytes/s), then the algorithm's own
    variables (for CUBIC: last_max_cwnd, K, origin, epoch_start, delay_min, tcp_cwnd, cnt,
    found, ...; for BBR mode, bw, min_rtt_us, gains, cycle_idx, ...). `mss` (bytes, default 1448) sets the unit of
    pacing rates; `seed` the algorithm's random numbers (BBR's PROBE_BW entry phase);
    `handshake_rtt_us` the RTT sample a Linux connection has when its congestion control
    starts (BBR's first pacing rate and min_rtt); `start_us` when it started (default: the
    trace's first time); `handshake_acked`: the handshake's ACK reaches `pkts_acked` with that
    sample before `init`, as in Linux (CDG keeps what it saw). Bad names or values raise ValueError naming them.

    >>> import cubiclab
    >>> df = cubiclab.replay("reno", "time_us,event,acked,rtt_us\\n0,ack,1,40000\\n")
    >>> int(df.cwnd.iloc[0])
    11
    """
    if not isinstance(algorithm, str):
        raise ValueError(f"algorithm is {algorithm!r}; allowed: a name (`cubiclab algorithms`)")
    text = _trace_text(trace)
    events = text.count("\n")  # the header's line and a last line without one even out
    if events > MAX_REPLAY_EVENTS:
        raise ValueError(f"trace has {events:,} lines; allowed: at most {MAX_REPLAY_EVENTS:,} events (a replay holds "
                         f"about {REPLAY_EVENT_BYTES:,} bytes per event, {MAX_REPLAY_EVENTS * REPLAY_EVENT_BYTES / 2**30:.1f} "
                         "GiB at most); split the trace")
    with suggesting():
        cols = _core.replay_csv(
            algorithm, text, _params(params),
            _segments(initial_cwnd, "initial_cwnd", 1), _segments(initial_ssthresh, "initial_ssthresh", 2),
            _bounded(mss, "mss", 1, 65535), _bounded(seed, "seed", 0, 2**64 - 1),
            _bounded(handshake_rtt_us, "handshake_rtt_us", 0, 2**32 - 1), _bounded(start_us, "start_us", 0, 2**64 // 1000),
            bool(handshake_acked),
        )
    df = pd.DataFrame(cols)
    df.insert(0, "t", df.pop("time_us") / 1e6)
    return df


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
