"""Turn a traced kernel flow into a replay trace and the kernel's window after each ACK.

Input: the ``tcp_probe`` / ``tcp_cong_state_set`` records of the sender's socket (see
:mod:`cubiclab.kernel.tracing`) and, when available, the ACKs captured on the sender's
interface (ack number and SACK blocks). Output: a trace for :func:`cubiclab.replay`
(``time_us,event,acked,rtt_us,cwnd_limited,disorder,srtt_us,snd_una,snd_nxt``) and, for every ACK, the
kernel's ``snd_cwnd`` and ``ssthresh`` after it.

How the kernel's ACK processing maps onto replay events (``net/ipv4/tcp_input.c``, 6.18):

* A ``tcp_probe`` record is written at the top of ``tcp_rcv_established()``, before
  ``tcp_ack()``: record *i* holds the state *before* ACK *i*, record *i + 1* the state
  after it (plus any timer that fired in between, which ``tcp_cong_state_set`` shows).
* ``tcp_ack()`` runs ``pkts_acked`` (in ``tcp_clean_rtx_queue``), then
  ``tcp_fastretrans_alert`` (which may enter Recovery, leave it, undo), then
  ``tcp_cong_control``: in CWR/Recovery the window follows PRR; otherwise
  ``cong_avoid`` runs if ``tcp_may_raise_cwnd`` holds, i.e. the ACK advanced ``snd_una``
  (``FLAG_DATA_ACKED``; reordering is never seen here). Its ``acked`` argument is the
  number of segments the ACK newly *delivered* (``tcp_newly_delivered``): newly SACKed
  segments plus cumulatively ACKed ones that were not SACKed before. That differs from the
  ``snd_una`` advance whenever SACK blocks are around: the ACK that ends recovery advances
  ``snd_una`` over the whole window but delivers only the retransmission. The tracepoint
  has no SACK information, so it comes from the captured ACKs; without them the
  ``snd_una`` advance is used (exact only for ACKs without SACK blocks).
* An ACK that leaves nothing in flight (``snd_una`` reaches the ``snd_nxt`` its probe
  found) is followed by ``tx_start``: the next segment, sent before the next ACK, raises
  ``CA_EVENT_TX_START`` (``tcp_event_data_sent``), on which Vegas, Veno and YeAH restart.
  The timeout's retransmission raises it too (everything is marked lost): the replay's
  ``rto`` does. F-RTO's new data after it (the rest still marked lost) raises it again;
  not replayed.
* So: an ACK in Open/Disorder (or Loss, where slow start runs) that advances ``snd_una``
  becomes ``ack`` with ``cwnd_limited=1``; an ACK in Recovery/CWR becomes ``ack`` with
  ``cwnd_limited=0``. Entering Recovery (or CWR) becomes ``loss`` *after* that ACK's
  ``ack`` row (``pkts_acked`` precedes ``ssthresh`` in the kernel too); the replay then
  sets ``cwnd = ssthresh`` at once, which is where PRR ends (``tcp_end_cwnd_reduction``).
  The ACK that returns to Open is compared. A Recovery entered more than ``gap_us`` after
  the ACK came from the RACK reorder timer, so that ACK was processed in Open. ``Loss``
  (the retransmission timer) becomes ``rto`` at its own time. A rise of ``ssthresh`` back
  to the pre-loss value is an undo.

For a BPF port the check reads what the port itself logged (``bpf/common.h``, through
the loader's witness, ``cubiclab-bpf load --watch``; :func:`port_inputs`): how often its
``pkts_acked``, ``cong_avoid`` and ``undo_cwnd`` ran, and the clock and RTT sample of its
last ``pkts_acked`` (before the first data ACK: the SYN-ACK's, which is when its ``init``
ran, :func:`init_clock`; the replay starts there). So the replay gets each ACK's exact time (the port's clock is the
ACK's ``tcp_mstamp``; a time taken from the trace can sit on the other side of a jiffy or
millisecond boundary, which moved a time-gated decision by one ACK and made the flows
diverge in some runs), its RTT sample, its undos, and which ACKs ran none of the hooks.
Those are the ACKs processed while BPF does not run at all: measured on this machine, the
witness misses a ``tcp_probe`` exactly when the softirq that processes the ACK runs on top
of a thread of PID 1 (the virtual machine's agent, ``process_api``'s ``tokio-rt-worker``
threads: every probe over them was missed, no other), with no recursion miss counted for
any program, and the port's ``pkts_acked`` count does not rise across them. Such ACKs
become ``ack_no_cc`` rows, which move ``snd_una`` only. An ACK that arrives in Disorder
is marked (``disorder``): its ``pkts_acked`` sees that state, and the algorithms that
count ACKs only in Open (BIC's and CUBIC v2.x's ``delayed_ack``) skip it.

The sender is cwnd-limited throughout (a bulk sender with a huge send buffer; checked by
:func:`inflight_share`), so ``cwnd_limited`` only encodes whether ``cong_avoid`` runs.

``rtt_us``: CUBIC uses ``delay_min`` only through ``usecs_to_jiffies(delay_min)`` in
``bictcp_update`` and in HyStart. The tracepoint has only the smoothed RTT, but
``srtt`` moves by ``m/8`` per sample, so each sample ``m`` is bounded from consecutive
records: with ``r = srtt_us >> 3``, ``m <= 8 (r' - r) + r + 7``. The kernel's ``delay_min``
(the minimum ``ca_rtt`` over the ACKs since the last reset, and ``ca_rtt <= seq_rtt = m``)
is therefore at most the smallest such bound over the slow-start ACKs that follow each
reset (connection start, every RTO). That bound is written as every ACK's ``rtt_us``; when
it is at most one jiffy (4000 us at HZ=250) the replay's ``usecs_to_jiffies(delay_min)``
equals the kernel's exactly (both are 1), whatever the true value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cubiclab._core import TESTBED_HZ

TCP_INFINITE_SSTHRESH = 0x7FFFFFFF
_REDUCING = ("Recovery", "CWR")


def _u32(x: int) -> int:
    return int(x) & 0xFFFFFFFF


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


@dataclass
class Converted:
    """A replay trace and the kernel's truth for each ACK.

    ``trace``: the replay CSV columns. ``owner``: for each trace row, the ACK (probe index)
    it belongs to. ``truth``: one row per ACK from the seed on, with the kernel's
    ``cwnd_after``/``ssthresh_after``, the state its ``cong_control`` saw (``state_cc``),
    ``compared`` (an ACK in Open/Disorder with no timer before the next ACK), the ``acked``
    used, the ``snd_una`` advance, and whether SACK data was known for it.
    """

    trace: pd.DataFrame
    owner: np.ndarray
    truth: pd.DataFrame
    initial_cwnd: int
    initial_ssthresh: int
    seed_index: int
    seed_reason: str
    delay_min_bound_us: int
    delay_min_certain: bool
    mss: int
    #: The smoothed RTT before the first ACK (``srtt_us >> 3`` of the first probe): the
    #: handshake's sample, which the algorithm's ``init`` saw (Hybla's rho).
    start_srtt_us: int = 0
    #: When the algorithm's ``init`` ran (the handshake's end), on the trace's clock, us:
    #: a port's clock at the SYN-ACK (:func:`init_clock`); None where no witness tells it.
    start_us: int | None = None
    notes: list = field(default_factory=list)


def _probes_and_events(records: pd.DataFrame):
    rec = records[records.event.isin(["probe", "state"])].reset_index(drop=True)
    is_probe = (rec.event == "probe").to_numpy()
    probe_rows = np.flatnonzero(is_probe)
    probes = rec.loc[probe_rows].reset_index(drop=True)
    events: list[list[tuple[int, str]]] = [[] for _ in range(len(probes))]
    for row in np.flatnonzero(~is_probe):
        i = int(np.searchsorted(probe_rows, row)) - 1
        if i >= 0:
            events[i].append((int(rec.time_us[row]), str(rec.state[row])))
    return probes, events


def delivered_from_acks(probes: pd.DataFrame, acks: pd.DataFrame, mss: int):
    """Segments newly delivered by each probe's ACK(s), from the captured ack numbers and
    SACK blocks, the way ``tcp_newly_delivered`` counts them.

    Returns (delivered, sack_seen, aligned): arrays over probes; ``aligned[i]`` is False
    where the captured ACKs could not be matched to the probe (its ``delivered`` is then
    the ``snd_una`` advance). One probe may cover several captured ACKs: pure ACKs with
    equal options are coalesced in the socket backlog (``tcp_add_backlog``) and processed
    as one.
    """
    return _match_acks(probes, acks, mss)[:3]


def _match_acks(probes: pd.DataFrame, acks: pd.DataFrame, mss: int):
    """:func:`delivered_from_acks`, and for each probe the row of `acks` its ACK ended on
    (-1 where not aligned): its timestamp option is the one the kernel parsed (coalesced
    ACKs have equal options)."""
    n = len(probes)
    base = int(probes.snd_una[0])
    una_b = [_s32(int(u) - base) for u in probes.snd_una]
    rel_acks = [_s32(int(a) - base) for a in acks.ack]
    sacks = list(acks.sacks)
    delivered = np.zeros(n, dtype=np.int64)
    sack_seen = np.zeros(n, dtype=bool)
    aligned = np.ones(n, dtype=bool)
    last = np.full(n, -1, dtype=np.int64)
    sacked: set[int] = set()
    j = 0
    # Skip ACKs captured before the first probe (acks of data before tracing began).
    while j < len(rel_acks) and rel_acks[j] < una_b[0]:
        j += 1
    una = una_b[0]
    for i in range(n - 1):
        target = una_b[i + 1]
        got = 0
        ok = False
        while j < len(rel_acks):
            a, blocks = rel_acks[j], sacks[j]
            j += 1
            if a > una:
                for seg in range(una // mss, a // mss):
                    if seg in sacked:
                        sacked.discard(seg)
                    else:
                        got += 1
                una = a
            for k, (s, e) in enumerate(blocks):
                s, e = _s32(s - base), _s32(e - base)
                if e <= una:
                    continue  # D-SACK of data below snd_una
                if k == 0 and len(blocks) > 1:
                    s1, e1 = _s32(blocks[1][0] - base), _s32(blocks[1][1] - base)
                    if s >= s1 and e <= e1:
                        continue  # D-SACK inside the next block
                sack_seen[i] = True
                for seg in range(-(-max(s, una) // mss), e // mss):
                    if seg not in sacked:
                        sacked.add(seg)
                        got += 1
            if a >= target or (target == una_b[i] and a <= una_b[i]):
                ok = a == target or (target == una_b[i] and a <= una_b[i])
                last[i] = j - 1 if ok else -1
                break
        if not ok:
            aligned[i] = False
            got = max(0, (target - una_b[i]) // mss)
            una = max(una, target)
            # Resynchronise on the next captured ACK that reaches the next target.
        delivered[i] = got
    aligned[n - 1] = False
    last[n - 1] = -1
    return delivered, sack_seen, aligned, last


def _option_of(acks: pd.DataFrame, column: str, rows: np.ndarray) -> np.ndarray:
    """The timestamp field `column` of the captured ACKs at `rows` (-1: none, no such row,
    or a capture without it)."""
    if column not in acks:
        return np.full(len(rows), -1, dtype=np.int64)
    values = pd.to_numeric(acks[column], errors="coerce").fillna(-1).to_numpy(np.int64)
    return np.where(rows >= 0, values[rows], -1)


def _tsoffset(probes: pd.DataFrame, seen: pd.DataFrame | None) -> int | None:
    """The flow's ``tp->tsoffset`` as the witness read it (constant for a connection), or
    None without a witness that records it."""
    if seen is None or "tsoffset" not in seen:
        return None
    rows = witness_rows(probes, seen)
    rows = rows[rows >= 0]
    return int(seen.tsoffset.to_numpy(np.int64)[rows[0]]) if len(rows) else None


def witness_rows(probes: pd.DataFrame, seen: pd.DataFrame, lookahead: int = 64) -> np.ndarray:
    """For each probe, the row of ``seen`` (the witness's ``probe`` records, see
    :func:`port_inputs`) that recorded it, or -1: same socket, same ``snd_una``/``snd_nxt``,
    matched in order (the witness fires on the same tracepoint as the trace)."""
    sport = int(probes.sport.iloc[0]) if "sport" in probes and len(probes) else None
    mine = np.flatnonzero(((seen.sport == sport) if sport is not None else np.ones(len(seen), bool))
                          & (seen.kind == "probe"))
    keys = list(zip(seen.snd_una.to_numpy(np.int64)[mine] & 0xFFFFFFFF, seen.snd_nxt.to_numpy(np.int64)[mine] & 0xFFFFFFFF))
    out = np.full(len(probes), -1, dtype=np.int64)
    j = 0
    for i, k in enumerate(zip(probes.snd_una.astype(np.int64) & 0xFFFFFFFF, probes.snd_nxt.astype(np.int64) & 0xFFFFFFFF)):
        for jj in range(j, min(j + lookahead, len(keys))):
            if keys[jj] == k:
                out[i], j = mine[jj], jj + 1
                break
    return out


def _unwrap_us(low32: np.ndarray, near: np.ndarray) -> np.ndarray:
    """Full microsecond times from their low 32 bits, each the one nearest to `near`."""
    d = (low32.astype(np.int64) - near + (1 << 31)) % (1 << 32) - (1 << 31)
    return near + d


@dataclass
class PortInputs:
    """What the port log says of each ACK *i* (probe *i* to *i + 1*); see :func:`port_inputs`."""

    #: The port's hooks ran (its ``pkts_acked`` call count rose).
    ran: np.ndarray
    #: The port's clock on that ACK (us, CLOCK_MONOTONIC), -1 where the log does not tell.
    clock_us: np.ndarray
    #: Its RTT sample (``sample->rtt_us``, -1: none), meaningful where ``known``.
    rtt_us: np.ndarray
    known: np.ndarray
    #: Its ``sample->in_flight`` (6.x: bytes), meaningful where ``known`` (NV reads it).
    in_flight: np.ndarray
    #: The port's undo_cwnd ran on that ACK (1) or not (0); -1 where the log does not tell.
    undo: np.ndarray
    #: ACKs between witness records that are missing (their inputs are not known).
    unwitnessed: int


def port_inputs(probes: pd.DataFrame, seen: pd.DataFrame) -> PortInputs:
    """Read the BPF witness of a port's run (``cubiclab-bpf load --watch``).

    Each witness ``probe`` record holds the port log as the previous ACK left it (the
    port's ``pkts_acked`` count, and that call's clock and RTT sample; ``bpf/common.h``).
    So for ACK *i* the records at probes *i* and *i + 1* tell whether the hooks ran (the
    count rose by one) and with which inputs.

    The witness misses a probe exactly when the kernel runs no BPF program for that ACK,
    the port's hooks included (see the module docs). Over such a gap, from the last
    witnessed probe *a* to the next one *b*, the count rose by the number of ACKs whose
    hooks ran: ACK *a*'s (BPF ran at its probe), and none of the unwitnessed ones, so
    normally by one, and the record at *b* holds ACK *a*'s inputs. Should it rise by more,
    the first ACKs of the gap are taken to have run them, and the inputs of all but the
    last are not known."""
    n = len(probes)
    w = witness_rows(probes, seen)
    t = probes.time_us.to_numpy(dtype=np.int64)
    calls = seen.acked_calls.to_numpy(np.int64)
    clock = seen.clock_us.to_numpy(np.int64)
    rtt = seen.rtt_us.to_numpy(np.int64)
    flight = seen.in_flight.to_numpy(np.int64)
    ran = np.ones(n, dtype=bool)
    clock_us = np.full(n, -1, dtype=np.int64)
    rtt_us = np.full(n, -1, dtype=np.int64)
    in_flight = np.zeros(n, dtype=np.int64)
    known = np.zeros(n, dtype=bool)
    undo = np.full(n, -1, dtype=np.int64)
    undos = seen.undo_calls.to_numpy(np.int64)
    unwitnessed = 0
    seen_at = np.flatnonzero(w >= 0)
    for a, b in zip(seen_at[:-1], seen_at[1:]):
        rose = min(int((calls[w[b]] - calls[w[a]]) & 0xFFFFFFFF), b - a)
        unwitnessed += b - a - 1
        ran[a:b] = False
        ran[a:a + rose] = True
        if b - a == 1:
            undo[a] = int(undos[w[b]] != undos[w[a]])
        if rose:
            last = a + rose - 1
            clock_us[last] = _unwrap_us(clock[w[b]:w[b] + 1], t[last:last + 1])[0]
            rtt_us[last] = rtt[w[b]]
            in_flight[last] = flight[w[b]]
            known[last] = True
    return PortInputs(ran=ran, clock_us=clock_us, rtt_us=rtt_us, known=known, in_flight=in_flight, undo=undo,
                      unwitnessed=unwitnessed)


def init_clock(probes: pd.DataFrame, seen: pd.DataFrame) -> int | None:
    """The port's clock when its ``init`` ran (us, CLOCK_MONOTONIC), from the witness
    record at the first probe, or None if that record does not tell it.

    The sender's ``init`` runs on the SYN-ACK: ``tcp_rcv_state_process`` refreshes
    ``tcp_mstamp`` for a socket in SYN_SENT, then ``tcp_rcv_synsent_state_process`` runs
    ``tcp_ack`` (the port's first ``pkts_acked``, which logs that ``tcp_mstamp``) and
    ``tcp_finish_connect`` (``tcp_init_transfer`` -> ``init``, which reads the same one).
    So the log the first data ACK's probe finds, with one ``pkts_acked`` call counted,
    holds the clock of ``init``: Westwood+'s first sampling window starts at its jiffy
    (``rtt_win_sx``), H-TCP's ``last_cong`` is taken there. The first data ACK comes
    milliseconds later (after the client's own start-up), often in a later jiffy."""
    w = witness_rows(probes.iloc[:1], seen)[0]
    if w < 0 or int(seen.acked_calls.iloc[w]) != 1:
        return None
    near = np.array([int(probes.time_us.iloc[0])], dtype=np.int64)
    return int(_unwrap_us(seen.clock_us.to_numpy(np.int64)[w:w + 1], near)[0])


def rto_clock(events_time_us: list[int], seen: pd.DataFrame, sport: int | None, window_us: int = 1000) -> dict[int, int]:
    """The port's clock at each retransmission timeout (tcp_cong_state_set to Loss), from
    the witness's ``state`` records (``tp->tcp_mstamp``, refreshed by the timer handler
    before the port's hooks run): trace time -> clock, for the timeouts the witness saw."""
    st = seen[(seen.kind == "state") & (seen.ca_state == 4) & ((seen.sport == sport) if sport is not None else True)]
    at = (st.time_ns.to_numpy(np.int64) // 1000)
    out = {}
    for te in events_time_us:
        if not len(at):
            break
        k = int(np.argmin(np.abs(at - te)))
        if abs(int(at[k]) - te) <= window_us:
            out[te] = int(_unwrap_us(st.mstamp_us.to_numpy(np.int64)[k:k + 1], np.array([te]))[0])
    return out


def stale_jiffy(t: np.ndarray, ticks: np.ndarray, tick_us: int) -> np.ndarray:
    """ACKs processed after a jiffy boundary but before the (late) tick that advanced
    ``jiffies`` past it: the kernel read the previous jiffy there.

    ``jiffies`` advance in the tick handler (``tick_nohz_handler`` ->
    ``tick_do_update_jiffies64``), normally a few microseconds after each boundary, but a
    virtual CPU can run it hundreds of microseconds late. An ACK at time ``t`` in jiffy
    ``J`` is stale when the ticks were running (one ran in jiffy ``J - 1``) and the first
    tick of jiffy ``J`` ran after ``t``. (An idle CPU woken by an interrupt updates jiffies
    on entry, but then its ticks were stopped and the first condition fails.)
    """
    j = t // tick_us
    k = np.searchsorted(ticks, t, side="right")  # ticks[k-1] <= t < ticks[k]
    prev_tick = np.where(k > 0, ticks[np.maximum(k - 1, 0)], -1)
    next_tick = np.where(k < len(ticks), ticks[np.minimum(k, len(ticks) - 1)], -1)
    no_tick_yet = (prev_tick // tick_us) < j
    ran_before = (prev_tick >= 0) & ((prev_tick // tick_us) == j - 1)
    late_in_j = (next_tick >= 0) & ((next_tick // tick_us) == j)
    return no_tick_yet & ran_before & late_in_j


def delay_min_bound(probes: pd.DataFrame, period_starts: list[int], in_slow_start: np.ndarray) -> dict[int, int]:
    """Upper bound of CUBIC's ``delay_min`` for each period (keyed by its first probe),
    from the RTT samples recoverable from ``srtt`` during that period's slow start."""
    r = probes.srtt_us.to_numpy(dtype=np.int64)
    out = {}
    bounds = list(period_starts) + [len(probes) - 1]
    for k, start in enumerate(period_starts):
        end = bounds[k + 1]
        best = None
        for i in range(start, end):
            if not in_slow_start[i] or r[i + 1] == r[i] or r[i] == 0:
                continue
            m_max = 8 * (r[i + 1] - r[i]) + r[i] + 7
            if m_max > 0 and (best is None or m_max < best):
                best = int(m_max)
        if best is None:
            seg = r[start:end + 1]
            best = int(seg[seg > 0].min()) if (seg > 0).any() else 1
        out[start] = best
    return out


def convert(
    records: pd.DataFrame,
    mss: int,
    t_stop_us: int | None = None,
    acks: pd.DataFrame | None = None,
    seed: str = "start",
    gap_us: int = 50,
    hz: int = TESTBED_HZ,
    phase_us: int = 0,
    bpf_seen: pd.DataFrame | None = None,
) -> Converted:
    """Build the replay trace (see the module docs).

    `seed`: ``"start"`` replays from the first ACK of the connection; ``"ss_exit"`` from
    the ACK at which the kernel first leaves slow start (HyStart setting ``ssthresh``, or
    the first loss), with the replay seeded by the kernel's ``cwnd``/``ssthresh`` there.
    `phase_us` is subtracted from every time (jiffy phase; 0 when the trace clock is mono).
    `bpf_seen`: the BPF witness of a BPF algorithm's run (see the module docs); ACKs it
    lacks become ``ack_no_cc``.
    """
    probes, events = _probes_and_events(records)
    if t_stop_us is not None:
        keep = int(np.searchsorted(probes.time_us.to_numpy(), t_stop_us))
        probes, events = probes.iloc[:keep].reset_index(drop=True), events[:keep]
    n = len(probes)
    if n < 3:
        raise ValueError(f"only {n} tcp_probe records: nothing to compare")
    notes: list[str] = []
    base = int(probes.snd_una[0])
    una = np.array([_s32(int(u) - base) for u in probes.snd_una], dtype=np.int64)
    nxt = np.array([_s32(int(u) - base) for u in probes.snd_nxt], dtype=np.int64)
    cwnd = probes.cwnd.to_numpy(dtype=np.int64)
    ssth = probes.ssthresh.to_numpy(dtype=np.int64)
    t = probes.time_us.to_numpy(dtype=np.int64) - phase_us
    tick_us = 1_000_000 // hz
    ticks = np.sort(records.time_us[records.event == "tick"].to_numpy(dtype=np.int64)) - phase_us
    stale = stale_jiffy(t, ticks, tick_us) if len(ticks) else np.zeros(n, dtype=bool)
    if stale.any():
        # The algorithm read the previous jiffy: give it the last microsecond of that one.
        t = np.where(stale, (t // tick_us) * tick_us - 1, t)
        notes.append(f"{int(stale.sum())} ACKs came before a late tick advanced jiffies; timed in the previous jiffy")
    d_una = np.zeros(n, dtype=np.int64)
    d_una[:-1] = una[1:] - una[:-1]
    hooks = np.ones(n, dtype=bool)
    log = None
    start_us = None
    rto_at: dict[int, int] = {}
    if bpf_seen is not None:
        log = port_inputs(probes, bpf_seen)
        start_us = init_clock(probes, bpf_seen)
        if start_us is None:
            notes.append("the witness does not tell when the port's init ran: replayed from the first ACK")
        else:
            start_us -= phase_us
        hooks = log.ran
        # The port's own clock where the log tells it (exact; no tick to guess).
        t = np.where(log.known, log.clock_us - phase_us, t)
        if log.unwitnessed:
            notes.append(f"{log.unwitnessed} probes have no witness record (BPF did not run there)")
        unknown = int((log.ran & ~log.known)[:-1].sum())
        if unknown:
            notes.append(f"{unknown} ACKs ran the port's hooks with a clock and RTT sample the log does not "
                         "tell: taken from the trace")
        if not hooks[:-1].all():
            notes.append(f"{int((~hooks[:-1]).sum())} ACKs ran none of the port's hooks (its pkts_acked count did "
                         "not rise): replayed as ack_no_cc")

    if acks is not None and len(acks):
        delivered, sack_seen, aligned, last_ack = _match_acks(probes, acks, mss)
        tsval, tsecr = (_option_of(acks, c, last_ack) for c in ("tsval", "tsecr"))
        # rx_opt.rcv_tsecr is the echo less the socket's tsoffset (tcp_parse_aligned_timestamp;
        # an echo of 0 stays 0), which only the witness knows: without it, no timestamps.
        offset = _tsoffset(probes, bpf_seen)
        stamped = (tsval >= 0) & (tsecr >= 0) & (offset is not None)
        tsecr = np.where(tsecr > 0, (tsecr - (offset or 0)) & 0xFFFFFFFF, 0)
        tsval, tsecr = np.where(stamped, tsval, -1), np.where(stamped, tsecr, -1)
        bad = int((~aligned[:-1]).sum())
        if bad:
            notes.append(f"{bad} ACKs could not be matched to captured packets; used the snd_una advance")
    else:
        delivered = np.maximum(d_una, 0) // mss
        sack_seen = np.zeros(n, dtype=bool)
        aligned = np.zeros(n, dtype=bool)
        tsval = tsecr = np.full(n, -1, dtype=np.int64)
        notes.append("no captured ACKs: acked = snd_una advance / MSS (wrong where SACK blocks were present)")

    if log is not None:
        sport = int(probes.sport.iloc[0]) if "sport" in probes else None
        rto_at = rto_clock([te for evs in events for te, nm in evs if nm == "Loss"], bpf_seen, sport)

    # Walk the states: which ACKs ran cong_avoid, which are compared, where the losses are.
    st = "Open"
    state_cc = []
    timer_evs: list[list[tuple[int, str]]] = []
    entry = np.zeros(n, dtype=bool)
    undo = np.zeros(n, dtype=bool)
    # pkts_acked runs before tcp_fastretrans_alert: it sees the state the ACK arrived in.
    disorder = np.zeros(n, dtype=bool)
    for i in range(n):
        ack_evs, tim = [], []
        for te, name in events[i]:
            if name == "Loss" or (name in _REDUCING and te - (t[i] + phase_us) > gap_us):
                tim.append((te - phase_us, name))
            else:
                ack_evs.append(name)
        before = st
        disorder[i] = before == "Disorder"
        cc = before
        for name in ack_evs:
            if name in _REDUCING and cc not in _REDUCING:
                entry[i] = True
            cc = name
        # The probe's ssthresh is tcp_current_ssthresh(): snd_ssthresh in CWR/Recovery,
        # max(snd_ssthresh, 3/4 cwnd) otherwise, so it rises with cwnd in Open. An undo
        # (tcp_undo_cwnd_reduction) shows as leaving Recovery/CWR with ssthresh above the
        # reduction's, or, in Open (a D-SACK undo), as cwnd jumping by more than cong_avoid
        # can add.
        if i + 1 < n and before in _REDUCING and cc in ("Open", "Disorder") and ssth[i + 1] > ssth[i]:
            undo[i] = True
        if i + 1 < n and before in ("Open", "Disorder") and not ack_evs and not tim:
            if cwnd[i] >= ssth[i] and cwnd[i + 1] - cwnd[i] > 2:
                undo[i] = True
        state_cc.append(cc)
        timer_evs.append(tim)
        st = tim[-1][1] if tim else cc
    state_cc = np.array(state_cc, dtype=object)
    if log is not None:
        # A port counts its undo_cwnd calls: no need to infer undos from the window.
        undo = np.where(log.undo >= 0, log.undo == 1, undo)

    in_ss = cwnd < ssth
    # Seed.
    i0, reason = 0, "connection start"
    init_cwnd, init_ssth = int(cwnd[0]), int(ssth[0])
    if seed == "ss_exit":
        for i in range(n - 1):
            if entry[i] or timer_evs[i]:
                i0, reason = i, "first loss"
                init_cwnd, init_ssth = int(cwnd[i]), int(ssth[i])
                break
            if ssth[i + 1] != ssth[i]:
                # HyStart: ssthresh = cwnd in pkts_acked, then this ACK's cong_avoid
                # already runs congestion avoidance.
                i0, reason = i, "HyStart exit"
                init_cwnd, init_ssth = int(cwnd[i]), int(ssth[i + 1])
                break
        else:
            raise ValueError("the kernel never left slow start in this trace")
    elif seed != "start":
        raise ValueError(f"seed must be 'start' or 'ss_exit', not {seed!r}")

    # delay_min bound per period (reset at start and at every RTO).
    period_starts = [0] + [i for i in range(n) if any(nm == "Loss" for _, nm in timer_evs[i])]
    bounds = delay_min_bound(probes, period_starts, in_ss)
    jiffy_us = 1_000_000 // hz
    certain = all(b <= jiffy_us for b in bounds.values())
    period_of = np.zeros(n, dtype=np.int64)
    for s in period_starts:
        period_of[s:] = s

    # CA_EVENT_TX_START (tcp_event_data_sent): a segment leaves with nothing in flight. ACK i
    # leaves nothing in flight when it takes snd_una to the snd_nxt it found (probe i's); the
    # next segment, sent before ACK i + 1 (probe i + 1's snd_nxt is beyond), raises the event,
    # on which Vegas, Veno and YeAH restart (tcp_vegas_init: baseRTT forgotten, a new round
    # from snd_nxt before that segment). A stretch ACK of a small window does it: Vegas, near
    # cwnd 2-7 on this path, had an ACK of all six segments out about once a second. The idle
    # time ends at the segments before (sent in response to the last ACK that released any).
    restarts = np.zeros(n, dtype=bool)
    restarts[:-1] = (una[1:] == nxt[:-1]) & (nxt[1:] > nxt[:-1])
    released = np.zeros(n, dtype=bool)
    released[:-1] = nxt[1:] > nxt[:-1]
    last_send = np.maximum.accumulate(np.where(released, np.arange(n), -1))
    if restarts[i0:n - 1].any():
        notes.append(f"{int(restarts[i0:n - 1].sum())} ACKs left nothing in flight: replayed with the "
                     "CA_EVENT_TX_START of the segment sent next")

    srtt_after = np.append(probes.srtt_us.to_numpy(dtype=np.int64)[1:], 0)
    rows, owner, truth = [], [], []
    for i in range(i0, n - 1):
        rtt = int(log.rtt_us[i]) if log is not None and log.known[i] else bounds[int(period_of[i])]
        # Segments modulo 2^32, as the replay reads them (with wrapping differences).
        seq = dict(snd_una=_u32(int(una[i + 1] // mss)), snd_nxt=_u32(int(nxt[i + 1] // mss)))
        # With a TX_START after it, the ACK's own row keeps the snd_nxt it found; the event's
        # row moves it on.
        ack_seq = dict(seq, snd_nxt=_u32(int(nxt[i] // mss))) if restarts[i] else seq
        if undo[i]:
            rows.append(dict(time_us=int(t[i]), event="undo", acked="", rtt_us="", cwnd_limited="", disorder="", srtt_us="", **seq))
            owner.append(i)
        runs = state_cc[i] not in _REDUCING and d_una[i] > 0
        if entry[i]:
            runs = False
        acked = int(delivered[i])
        ev = "ack" if hooks[i] else "ack_no_cc"
        if tsval[i] >= 0:
            # The ACK's timestamp option, parsed before tcp_ack (TCP-LP reads it).
            rows.append(dict(time_us=int(t[i]), event="ts", tsval=int(tsval[i]), tsecr=int(tsecr[i]), **seq))
            owner.append(i)
        # The kernel's smoothed RTT after this ACK is in the next probe (exact; for the ports,
        # whose algorithms may read it).
        srtt = int(srtt_after[i]) if log is not None else ""
        # The sample's in_flight the port got (bytes), where its log tells.
        flight = int(log.in_flight[i]) if log is not None and log.known[i] else ""
        rows.append(dict(time_us=int(t[i]), event=ev, acked=acked, rtt_us=rtt, cwnd_limited=int(runs),
                         disorder=int(disorder[i]), srtt_us=srtt, sample_in_flight=flight, **ack_seq))
        owner.append(i)
        if entry[i]:
            rows.append(dict(time_us=int(t[i]), event="loss", acked="", rtt_us="", cwnd_limited="", disorder="",
                             srtt_us="", **ack_seq))
            owner.append(i)
        if restarts[i]:
            k = int(last_send[i - 1]) if i > 0 else -1
            idle = int(t[i] - t[k]) if k >= 0 else 0
            rows.append(dict(time_us=int(t[i]), event="tx_start", idle_us=max(idle, 0), **seq))
            owner.append(i)
        for te, name in timer_evs[i]:
            ev = "rto" if name == "Loss" else "loss"
            te = rto_at.get(te + phase_us, te + phase_us) - phase_us if name == "Loss" else te
            rows.append(dict(time_us=int(te), event=ev, acked="", rtt_us="", cwnd_limited="", disorder="", srtt_us="", **seq))
            owner.append(i)
        truth.append(dict(
            probe=i, time_us=int(t[i]), state_cc=state_cc[i], compared=state_cc[i] in ("Open", "Disorder") and not timer_evs[i],
            cong_avoid=bool(runs and hooks[i]), bpf_ran=bool(hooks[i]), acked=acked, una_advance=int(d_una[i] // mss), sack=bool(sack_seen[i]),
            aligned=bool(aligned[i]), entry=bool(entry[i]), undo=bool(undo[i]),
            timer=",".join(nm for _, nm in timer_evs[i]),
            cwnd_before=int(cwnd[i]), ssthresh_before=int(ssth[i]),
            cwnd_after=int(cwnd[i + 1]), ssthresh_after=int(ssth[i + 1]),
            inflight_after=int((nxt[i + 1] - una[i + 1]) // mss),
        ))
    trace = pd.DataFrame(rows, columns=["time_us", "event", "acked", "rtt_us", "cwnd_limited", "disorder", "srtt_us",
                                        "snd_una", "snd_nxt", "tsval", "tsecr", "sample_in_flight", "idle_us"])
    # Integers or empty: a column that some rows lack (ts rows have no acked) is not read as
    # floats, even in a flow without the loss rows whose empty fields made it text.
    for c in ("acked", "rtt_us", "cwnd_limited", "disorder", "srtt_us", "tsval", "tsecr", "sample_in_flight", "idle_us"):
        trace[c] = trace[c].map(lambda v: "" if pd.isna(v) or v == "" else int(v)).astype(object)
    # A port's clock is truncated to microseconds like the trace's: the two can put an ACK
    # 1 us before the event traced just ahead of it.
    trace["time_us"] = np.maximum.accumulate(trace.time_us.to_numpy(dtype=np.int64)) if len(trace) else trace.time_us
    return Converted(
        trace=trace,
        owner=np.array(owner, dtype=np.int64),
        truth=pd.DataFrame(truth),
        initial_cwnd=init_cwnd,
        initial_ssthresh=init_ssth,
        seed_index=i0,
        seed_reason=reason,
        delay_min_bound_us=min(bounds.values()) if len(bounds) == 1 else max(bounds.values()),
        delay_min_certain=certain,
        mss=mss,
        start_srtt_us=int(probes.srtt_us.iloc[0]),
        start_us=start_us,
        notes=notes,
    )


def inflight_share(truth: pd.DataFrame) -> float:
    """Share of compared ACKs after which the sender had a full window in flight
    (``snd_nxt - snd_una >= cwnd``): evidence that it was cwnd-limited, not app-limited."""
    t = truth[truth["compared"]]
    if not len(t):
        return float("nan")
    return float((t.inflight_after >= t.cwnd_after).mean())
