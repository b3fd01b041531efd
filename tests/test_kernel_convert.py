"""The pieces of the kernel comparison that need no root: trace parsing, the SACK
scoreboard, late-jiffy detection and the event mapping, on small hand-made inputs."""

import numpy as np
import pandas as pd

from cubiclab.kernel.convert import convert, delivered_from_acks, stale_jiffy, witness_rows
from cubiclab.kernel.tracing import parse_trace

LINE = ("          python3-4242    [001] ..s1.  1234.567890: tcp_probe: family=AF_INET "
        "src=10.77.1.1:40000 dest=10.77.2.1:5201 mark=0x0 data_len=0 snd_nxt=0x10 snd_una=0x8 "
        "snd_cwnd=12 ssthresh=2147483647 snd_wnd=65535 srtt=78 rcv_wnd=65535 sock_cookie=1 "
        "skbaddr=000000001 skaddr=000000002")
STATE = ("          <idle>-0       [000] ..s1.  1234.567895: tcp_cong_state_set: family=AF_INET "
         "sport=40000 dport=5201 saddr=10.77.1.1 daddr=10.77.2.1 saddrv6=::ffff:10.77.1.1 "
         "daddrv6=::ffff:10.77.2.1 cong_state=3")


def test_parse_trace_fields_and_time():
    df = parse_trace("# tracer: nop\n" + LINE + "\n" + STATE + "\n")
    assert list(df.event) == ["probe", "state"]
    p = df.iloc[0]
    # 1234.567890 s on the trace clock = 1234567890 us; hex sequence numbers.
    assert (p.time_us, p.snd_nxt, p.snd_una, p.cwnd, p.srtt_us) == (1234567890, 16, 8, 12, 78)
    assert df.state.iloc[1] == "Recovery" and df.time_us.iloc[1] == 1234567895


def _probes(unas):
    return pd.DataFrame({"snd_una": unas})


def test_delivered_counts_sacked_segments_once():
    # MSS 100. ACK 1 acks segment 0. Segment 1 is lost: two dupACKs SACK segments 2 and
    # 3 (one new each), then the retransmission's ACK jumps to 400 but delivers only
    # segment 1: tcp_newly_delivered gives 1, 0+1, 0+1, 1, while snd_una moves 1, 0, 0, 3.
    probes = _probes([0, 100, 100, 100, 400, 400])
    acks = pd.DataFrame({"ack": [100, 100, 100, 400, 400],
                         "sacks": [[], [[200, 300]], [[200, 400]], [], []]})
    delivered, sack_seen, aligned = delivered_from_acks(probes, acks, 100)
    assert list(delivered[:4]) == [1, 1, 1, 1]
    assert list(sack_seen[:4]) == [False, True, True, False]
    assert aligned[:4].all()


def test_delivered_merges_acks_coalesced_in_the_backlog():
    # Two pure ACKs (to 100 and to 300) processed as one skb: one probe, 3 segments.
    probes = _probes([0, 300, 300])
    acks = pd.DataFrame({"ack": [100, 300, 300], "sacks": [[], [], []]})
    delivered, _, aligned = delivered_from_acks(probes, acks, 100)
    assert delivered[0] == 3 and aligned[0]


def test_stale_jiffy_only_before_a_late_tick():
    tick = 4000
    # Ticks ran 5 us after each boundary, except the one after 8000, which ran at 8300.
    ticks = np.array([5, 4005, 8300, 12005])
    t = np.array([4100, 8100, 8299, 8301, 12100])
    # 8100 and 8299 came after boundary 8000 but before its (late) tick: still jiffy 1.
    assert list(stale_jiffy(t, ticks, tick)) == [False, True, True, False, False]


def _rec(rows):
    cols = ["time_us", "event", "snd_nxt", "snd_una", "cwnd", "ssthresh", "srtt_us", "snd_wnd", "data_len", "state", "cpu"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows], columns=cols)


def test_recovery_maps_to_ack_then_loss_and_exit_is_compared():
    inf = 2147483647
    mss = 100
    # Probe rows hold the state before each ACK. ACK 1 enters Recovery (its ack row gets
    # cwnd_limited 0, then a loss row); ACK 2 is inside Recovery; ACK 3 leaves it and
    # delivers one segment (its snd_una jump is 3); ACK 4 is in Open.
    rows = [
        (1000, "probe", 2000, 0, 20, inf, 100, 0, 0, None, 0),
        (2000, "probe", 2100, 100, 20, inf, 100, 0, 0, None, 0),
        (2003, "state", None, None, None, None, None, None, None, "Recovery", 0),
        (3000, "probe", 2100, 100, 19, 10, 100, 0, 0, None, 0),
        (4000, "probe", 2200, 100, 18, 10, 100, 0, 0, None, 0),
        (4003, "state", None, None, None, None, None, None, None, "Open", 0),
        (5000, "probe", 2300, 400, 10, 10, 100, 0, 0, None, 0),
        (6000, "probe", 2400, 500, 10, 10, 100, 0, 0, None, 0),
    ]
    acks = pd.DataFrame({"ack": [100, 100, 100, 400, 500],
                         "sacks": [[], [[200, 300]], [[200, 400]], [], []]})
    conv = convert(_rec(rows), mss, acks=acks)
    assert list(conv.trace.event) == ["ack", "ack", "loss", "ack", "ack", "ack"]
    assert list(conv.trace.cwnd_limited.replace("", -1)) == [1, 0, -1, 0, 1, 1]
    assert list(conv.truth.compared) == [True, False, False, True, True]
    assert conv.truth.acked.iloc[3] == 1 and conv.truth.una_advance.iloc[3] == 3


def test_port_log_tells_which_acks_ran_the_hooks_and_with_which_inputs():
    # Four ACKs in Open of one segment each, probes 1 ms apart. The witness (the loader's
    # tcp_probe BPF program) recorded the probes before ACKs 0, 1, 3 and 4 but not ACK 2's
    # (BPF did not run there), and also holds a row of another socket (sport 9), which
    # must not count. Each record carries the port log as the previous ACK left it: the
    # pkts_acked count rose by one from probe 0 to 1 (ACK 0 ran), by one over the gap 1..3
    # (ACK 1 ran, whose probe BPF saw; ACK 2 did not), by one from 3 to 4 (ACK 3 ran).
    # The log's clock (low 32 bits of tcp_mstamp) and RTT sample are those of the last
    # pkts_acked: ACK 0 read 1003 us, ACK 1 2001 us, ACK 3 4002 us.
    mss = 100
    rows = [(1000 * (i + 1), "probe", 2000 + 100 * i, 100 * i, 20, 10, 100, 0, 0, None, 0) for i in range(5)]
    rec = _rec(rows).assign(sport=7)
    seen = pd.DataFrame({
        "kind": ["probe"] * 5,
        "snd_una": [0, 100, 200, 300, 400], "snd_nxt": [2000, 2100, 2200, 2300, 2400], "sport": [7, 7, 9, 7, 7],
        "acked_calls": [10, 11, 99, 12, 13], "clock_us": [0, 1003, 0, 2001, 4002], "rtt_us": [-1, 500, 0, 600, 700],
        "undo_calls": [0, 0, 0, 0, 0], "ca_state": [0] * 5, "mstamp_us": [0] * 5, "time_ns": [0] * 5,
        "in_flight": [0, 1000, 0, 2000, 3000],
    })
    assert list(witness_rows(rec, seen)) == [0, 1, -1, 3, 4]
    conv = convert(rec, mss, bpf_seen=seen)
    assert list(conv.trace.event) == ["ack", "ack", "ack_no_cc", "ack"]
    assert list(conv.truth.cong_avoid) == [True, True, False, True]
    # The port's clock where the log tells it; the trace's time for the ACK that ran none.
    assert list(conv.trace.time_us) == [1003, 2001, 3000, 4002]
    assert list(conv.trace.rtt_us)[:2] + list(conv.trace.rtt_us)[3:] == [500, 600, 700]
    # And the sample's in_flight (bytes, which NV reads) likewise; none for the ACK that ran none.
    assert list(conv.trace.sample_in_flight) == [1000, 2000, "", 3000]
    # The first record is not the handshake's (its count is not 1): init's time is unknown.
    assert conv.start_us is None
    # The handshake's pkts_acked (on the SYN, just before init, same clock) leaves count 1 and
    # its clock in the first record: the replay starts there (500 us, the low 32 bits unwrapped
    # near the first probe's 1000 us).
    seen1 = seen.assign(acked_calls=[1, 2, 99, 3, 4], clock_us=[500, 1003, 0, 2001, 4002])
    assert convert(rec, mss, bpf_seen=seen1).start_us == 500


def _bbr_record(**kw):
    base = dict(time_ns=0, delivered=0, lost=0, delivered_mstamp=0, packets_out=0, sacked_out=0, lost_out=0,
                retrans_out=0, skb_mstamp_ns=0, tx_first_tx_mstamp=0, tx_delivered_mstamp=0, tx_delivered=0,
                tx_app_limited=0, skb_sacked=0, wstamp_ns=0, skb_end_seq=0, sack_skb_mstamp_ns=0,
                sack_tx_first_tx_mstamp=0, sack_tx_delivered_mstamp=0, sack_tx_delivered=0, sack_tx_app_limited=0,
                sack_skb_sacked=0, sack_skb_end_seq=0, snd_una=0, snd_nxt=0, mss=1448, total_retrans=0, tsoffset=0,
                tsecr=0, ack_seq=0, head_skb_mstamp_ns=0, head_tx_first_tx_mstamp=0, head_tx_delivered_mstamp=0,
                head_tx_delivered=0, head_skb_end_seq=0, head_skb_seq=0, head_skb_sacked=0, head_tx_app_limited=0, min_rtt_us=0, ca_state=0, cwnd=10, pacing_rate=0,
                bbr_mode=0, bbr_bw=0, bbr_min_rtt_us=0, bbr_cycle_idx=0, bbr_pacing_gain=739, bbr_full_bw_reached=0)
    return {**base, **kw}


def test_bbr_rate_sample_rebuilt_as_tcp_rate_does():
    from cubiclab.kernel.bbr_check import to_trace

    # Before the ACK: 10 delivered, 20 in flight; the packet holding the ACK's last byte
    # left at 980000 us with tx stamp delivered = 5, delivered_mstamp = 978000 us, send
    # phase from 975000 us. After it: 12 delivered at tcp_mstamp 1000010 us, min RTT 15 ms.
    # tcp_rate.c: send phase 980000 - 975000 = 5000 us, ACK phase 1000010 - 978000 =
    # 22010 us, interval the longer, 22010 (>= min RTT); delivered 12 - 5 = 7; acked_sacked
    # 2; ca_rtt_us 1000010 - 980000 = 20010; in flight 20 before, 20 - 2 = 18 at cong_control.
    # The ACK moved snd_una by 2 segments; nothing was sent after it before the next record.
    before = _bbr_record(time_ns=1_000_009_000, delivered=10, packets_out=20, skb_mstamp_ns=980_000_000,
                         tx_first_tx_mstamp=975_000, tx_delivered_mstamp=978_000, tx_delivered=5,
                         wstamp_ns=1_000_500_000, snd_una=0, snd_nxt=20 * 1448)
    after = _bbr_record(time_ns=1_000_600_000, delivered=12, delivered_mstamp=1_000_010, packets_out=18,
                        min_rtt_us=15_000, snd_una=2 * 1448, snd_nxt=20 * 1448)
    trace, truth = to_trace(pd.DataFrame([before, after]))
    row = trace.iloc[0]
    assert (row.time_us, row.acked, row.rtt_us) == (1_000_010, 2, 20_010)
    assert (row.rs_prior_delivered, row.rs_delivered, row.rs_interval_us, row.rs_app_limited) == (5, 7, 22_010, 0)
    assert (row.prior_in_flight, row.in_flight, row.wstamp_ns, row.delivered) == (20, 18, 1_000_500_000, 12)
    assert len(truth) == 1
    # An interval shorter than tcp_min_rtt() (30 ms here) makes the sample invalid.
    trace, _ = to_trace(pd.DataFrame([before, {**after, "min_rtt_us": 30_000}]))
    assert trace.rs_interval_us.iloc[0] == -1
    # A retransmitted packet gives no RTT sample; with a timestamp echo the RTT is
    # tcp_rtt_tsopt_us's: 1000010 us is 1000 ms, + tsoffset 7 - TSecr 987 = 20 ms.
    trace, _ = to_trace(pd.DataFrame([{**before, "skb_sacked": 0x80}, after]))
    assert trace.rtt_us.iloc[0] == -1
    trace, _ = to_trace(pd.DataFrame([{**before, "skb_sacked": 0x80, "tsoffset": 7, "tsecr": 987}, after]))
    assert trace.rtt_us.iloc[0] == 20_000
    # Three segments sent after the ACK (snd_nxt + 3 MSS) and one retransmission are not in
    # flight when cong_control ran: 21 in flight at the next record, 17 then.
    later = {**after, "packets_out": 21, "snd_nxt": 23 * 1448, "total_retrans": 1, "retrans_out": 1, "lost_out": 1}
    trace, _ = to_trace(pd.DataFrame([before, later]))
    assert trace.in_flight.iloc[0] == 17
    # A first SACK block ending in a packet sent later (990000 us, stamp delivered = 8 at
    # 985000 us, send phase from 982000) and not SACKed before makes the sample: send phase
    # 990000 - 982000 = 8000, ACK phase 1000010 - 985000 = 15010, delivered 12 - 8 = 4,
    # RTT 10010. Already SACKed (TCPCB_SACKED_ACKED), it does not.
    sacked = {**before, "sack_skb_mstamp_ns": 990_000_000, "sack_tx_first_tx_mstamp": 982_000,
              "sack_tx_delivered_mstamp": 985_000, "sack_tx_delivered": 8}
    trace, _ = to_trace(pd.DataFrame([sacked, after]))
    row = trace.iloc[0]
    assert (row.rs_prior_delivered, row.rs_delivered, row.rs_interval_us, row.rtt_us) == (8, 4, 15_010, 10_010)
    trace, _ = to_trace(pd.DataFrame([{**sacked, "sack_skb_sacked": 0x01}, after]))
    assert (trace.rs_prior_delivered.iloc[0], trace.rs_delivered.iloc[0]) == (5, 7)
    assert trace.ca_state.iloc[0] == "open"
    # In recovery: the packet holding the ACK's last byte was SACKed before (its stamp used);
    # the queue's first packet, a retransmission sent at 995000 us with stamp delivered = 11
    # at 994000 (phase from 993000), is the newest delivered: delivered 12 - 11 = 1, interval
    # max(2000, 6010) = 6010, invalid below the 15 ms minimum RTT; no RTT from a
    # retransmission.
    recovering = {**before, "skb_sacked": 0x01, "ack_seq": 2 * 1448, "head_skb_seq": 0,
                  "head_skb_end_seq": 1448, "head_skb_mstamp_ns": 995_000_000, "head_tx_first_tx_mstamp": 993_000,
                  "head_tx_delivered_mstamp": 994_000, "head_tx_delivered": 11, "head_skb_sacked": 0x82}
    trace, _ = to_trace(pd.DataFrame([recovering, after]))
    row = trace.iloc[0]
    assert (row.rs_prior_delivered, row.rs_delivered, row.rs_interval_us, row.rtt_us) == (11, 1, -1, -1)


def test_init_clock_is_the_handshakes_from_the_first_witness_record():
    # The sender's init runs on the SYN-ACK, in the same tcp_mstamp as the port's first
    # pkts_acked (tcp_rcv_state_process in SYN_SENT: tcp_mstamp_refresh, tcp_ack, then
    # tcp_finish_connect -> init): the record at the first data ACK's probe, with one call
    # counted, holds that clock (low 32 bits, here 2^32 + 400 unwrapped near the probe).
    mss = 100
    rows = [(1000 * (i + 1), "probe", 2000 + 100 * i, 100 * i, 20, 10, 100, 0, 0, None, 0) for i in range(3)]
    rec = _rec(rows).assign(sport=7, time_us=lambda d: d.time_us + (1 << 32))
    seen = pd.DataFrame({
        "kind": ["probe"] * 3, "snd_una": [0, 100, 200], "snd_nxt": [2000, 2100, 2200], "sport": [7] * 3,
        "acked_calls": [1, 2, 3], "clock_us": [400, 1003, 2001], "rtt_us": [90, 500, 600],
        "in_flight": [0] * 3, "undo_calls": [0] * 3, "ca_state": [0] * 3, "mstamp_us": [0] * 3, "time_ns": [0] * 3,
    })
    assert convert(rec, mss, bpf_seen=seen).start_us == (1 << 32) + 400
    # A first record with another count (BPF did not run on the SYN-ACK, or the trace began
    # later) does not tell it: the replay starts at the first ACK, as without a witness.
    conv = convert(rec, mss, bpf_seen=seen.assign(acked_calls=[0, 1, 2]))
    assert conv.start_us is None and any("init" in n for n in conv.notes)
    assert convert(rec, mss).start_us is None


def test_westwood_first_window_starts_at_init():
    # tcp_westwood_init sets rtt_win_sx = tcp_jiffies32; westwood_update_window closes the
    # window on the first ACK with delta > max(rtt, HZ/20) and filters bk / delta. HZ 1000,
    # MSS 1000, RTT 10 ms (10 jiffies < HZ/20 = 50), ACKs of 10 segments every 10 ms from
    # t = 5 ms; the first only takes snd_una (first_ack). Init at t = 0: the ACK at 55 ms
    # closes it (delta 55 > 50) over 4 ACKs, 40000 / 55 = 727 bytes per jiffy. Init at the
    # first ACK (t = 5): delta is 50 there, not above; the ACK at 65 ms closes it over 5
    # ACKs, 50000 / 60 = 833.
    from cubiclab.replay import replay

    trace = "time_us,event,acked,rtt_us\n" + "".join(f"{5000 + 10000 * i},ack,10,10000\n" for i in range(7))
    at_zero = replay("westwood", trace, {"hz": 1000}, mss=1000, start_us=0).bw_est_bytes_per_jiffy
    at_first = replay("westwood", trace, {"hz": 1000}, mss=1000).bw_est_bytes_per_jiffy
    assert list(at_zero[4:7]) == [0, 727, 727]
    assert list(at_first[4:7]) == [0, 0, 833]


def test_an_ack_that_leaves_nothing_in_flight_is_followed_by_tx_start():
    # MSS 100. ACK 0 acks one of six segments out and one more leaves (snd_nxt 600 -> 700).
    # ACK 1, at 3000 us, acks all six (snd_una 700 = the snd_nxt its probe found): the next
    # segment leaves with nothing in flight, and tcp_event_data_sent raises CA_EVENT_TX_START
    # before snd_nxt moves on (to 900 by probe 2). Its ACK row keeps snd_nxt 7 (segments),
    # the tx_start row after it moves it to 9; the last send before it followed ACK 0
    # (at 1000 us), 2000 us earlier. ACK 2 leaves one segment out: no event.
    mss = 100
    rows = [(1000, "probe", 600, 0, 6, 3, 100, 0, 0, None, 0), (3000, "probe", 700, 100, 6, 3, 100, 0, 0, None, 0),
            (5000, "probe", 900, 700, 6, 3, 100, 0, 0, None, 0), (7000, "probe", 1000, 800, 6, 3, 100, 0, 0, None, 0),
            (9000, "probe", 1000, 900, 6, 3, 100, 0, 0, None, 0)]
    conv = convert(_rec(rows), mss)
    tr = conv.trace
    assert list(tr.event) == ["ack", "ack", "tx_start", "ack", "ack"]
    assert list(tr.snd_una) == [1, 7, 7, 8, 9] and list(tr.snd_nxt) == [7, 7, 9, 10, 10]
    assert tr.idle_us.iloc[2] == 2000 and list(conv.owner) == [0, 1, 1, 2, 3]
    assert any("TX_START" in n for n in conv.notes)
