"""Replay a converted kernel trace through a cubiclab algorithm and compare, ACK by ACK.

A mismatch is classified by what the trace says about that ACK and the ones before it:

* ``inherited``: an earlier ACK already diverged and the replay has not re-converged;
  only the first ACK of each divergent run carries a root cause.
* ``one_ack_early`` / ``one_ack_late``: the replay's window took the same step one ACK
  before / after the kernel (the next / previous kernel value matches).
* ``after_loss_exit``: the first compared ACK after a recovery, undo or RTO.
* ``unmatched_acks``: the captured ACKs could not be matched, so ``acked`` is a guess.
* ``sack_ack``: the ACK carried SACK blocks (its ``acked`` is the delivered count).
* ``jiffy_boundary``: the ACK is within `lag_us` after a jiffy boundary, where the
  kernel may still have read the previous jiffy.
* ``other``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from cubiclab._core import TESTBED_HZ
from cubiclab.kernel.convert import Converted
from cubiclab.replay import replay


@dataclass
class Comparison:
    algorithm: str
    params: dict
    table: pd.DataFrame  # one row per compared ACK
    matched: int
    compared: int

    @property
    def share(self) -> float:
        return self.matched / self.compared if self.compared else float("nan")

    def mismatches(self) -> pd.DataFrame:
        return self.table[~self.table["match"]]

    def causes(self) -> dict:
        return self.mismatches().cause.value_counts().to_dict()


def compare(conv: Converted, algorithm: str, params: dict | None = None, hz: int = TESTBED_HZ,
            lag_us: int = 100, handshake_acked: bool = False) -> Comparison:
    """Replay `conv.trace` through `algorithm` (seeded with the kernel's window at the seed
    ACK) and compare ``cwnd`` and ``ssthresh`` after every compared ACK."""
    params = dict(params or {})
    # Replayed from the connection's start, init sees the handshake's RTT as the kernel's did,
    # at the handshake's time where the port's log tells it (convert.init_clock).
    from_start = conv.seed_index == 0
    handshake = conv.start_srtt_us if from_start and conv.start_srtt_us > 0 else None
    # The connection's MSS: NV's rate and window are in its bytes.
    out = replay(algorithm, conv.trace, params, conv.initial_cwnd, conv.initial_ssthresh, mss=conv.mss,
                 handshake_rtt_us=handshake, start_us=conv.start_us if from_start else None,
                 handshake_acked=handshake_acked)
    # The state after an ACK is the replay row of the last event that ACK owns.
    last_row = pd.Series(np.arange(len(conv.owner))).groupby(conv.owner).max()
    tr = conv.truth.copy()
    rows = last_row.reindex(tr.probe).to_numpy()
    tr["replay_cwnd"] = out.cwnd.to_numpy()[rows]
    tr["replay_ssthresh"] = out.ssthresh.to_numpy()[rows]
    # The probe reports tcp_current_ssthresh(); compared ACKs end in Open/Disorder, where
    # that is max(snd_ssthresh, 3/4 cwnd).
    c = tr.replay_cwnd.to_numpy()
    tr["replay_ssthresh_reported"] = np.maximum(tr.replay_ssthresh.to_numpy(), (c >> 1) + (c >> 2))
    tr["match"] = (tr.replay_cwnd == tr.cwnd_after) & (tr.replay_ssthresh_reported == tr.ssthresh_after)
    jiffy_us = 1_000_000 // hz
    causes = []
    prev_match = True
    after_exit = True
    k_cwnd = tr.cwnd_after.to_numpy()
    for n, r in enumerate(tr.itertuples()):
        if not r.compared:
            if r.entry or r.undo or r.timer:
                after_exit = True
            causes.append("")
            continue
        if r.match:
            causes.append("")
        elif not prev_match:
            causes.append("inherited")
        elif after_exit:
            causes.append("after_loss_exit")
        elif not r.aligned:
            causes.append("unmatched_acks")
        elif n + 1 < len(tr) and r.replay_cwnd == k_cwnd[n + 1] and r.replay_cwnd != r.cwnd_after:
            causes.append("one_ack_early")
        elif n > 0 and r.replay_cwnd == k_cwnd[n - 1] and r.replay_cwnd != r.cwnd_after:
            causes.append("one_ack_late")
        elif r.sack:
            causes.append("sack_ack")
        elif r.time_us % jiffy_us < lag_us:
            causes.append("jiffy_boundary")
        else:
            causes.append("other")
        prev_match = bool(r.match)
        after_exit = False
    tr["cause"] = causes
    table = tr[tr["compared"].astype(bool)].reset_index(drop=True)
    return Comparison(algorithm, params, table, int(table["match"].sum()), len(table))
