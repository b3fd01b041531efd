//! The sender against Linux 6.x, one rule per test, driven by a scripted-ACK harness: ACKs
//! (cumulative plus one SACK block), timeouts and idle periods at given times, with the
//! window, the threshold, the state and what goes out asserted after each. Each test names
//! the kernel function it follows and derives its numbers in a comment.

use cubiclab_cc::{Algorithm, CaState, CongestionControl, Params};
use cubiclab_path::{Ecn, PathPacket};
use cubiclab_sim::engine::Time;
use cubiclab_sim::packet::{Packet, SackBlocks};
use cubiclab_sim::tcp::{Recovery, Sender, SenderConfig, Timeout, Timer};

const MS: Time = 1_000_000;

/// A sender with nothing between it and the script: every segment the window allows leaves
/// at once and is recorded.
struct Harness {
    s: Sender,
    now: Time,
}

impl Harness {
    /// `alg` with initial window `iw` (and `ssthresh` when given), SACK recovery, started
    /// at t = 0; the initial window is sent.
    fn new(alg: &str, iw: u32, ssthresh: Option<u32>) -> (Self, Vec<(u32, bool)>) {
        Self::new_app_limited(alg, iw, ssthresh, u32::MAX)
    }

    /// As `new`, with the application handing over `segments` in all.
    fn new_app_limited(alg: &str, iw: u32, ssthresh: Option<u32>, segments: u32) -> (Self, Vec<(u32, bool)>) {
        Self::with(alg, iw, ssthresh, segments, true, true)
    }

    /// As `new`, with the timer the RTO alone and no F-RTO (`tcp_early_retrans = 0`,
    /// `tcp_frto = 0`), for the rules of `tcp_retransmit_timer` and `tcp_enter_loss` (with
    /// probes on, Linux's first expiry before any RTT sample is a probe at
    /// TCP_TIMEOUT_INIT, as the RTO would be; F-RTO would send new data after it).
    fn rto_only(alg: &str, iw: u32, ssthresh: Option<u32>) -> (Self, Vec<(u32, bool)>) {
        Self::with(alg, iw, ssthresh, u32::MAX, false, false)
    }

    /// As `new`, with F-RTO but no probes (the timer is the RTO).
    fn frto_without_probes(alg: &str, iw: u32) -> (Self, Vec<(u32, bool)>) {
        Self::with(alg, iw, None, u32::MAX, false, true)
    }

    fn with(
        alg: &str,
        iw: u32,
        ssthresh: Option<u32>,
        segments: u32,
        loss_probes: bool,
        frto: bool,
    ) -> (Self, Vec<(u32, bool)>) {
        let cfg = SenderConfig {
            recovery: Recovery::Sack,
            min_rto_ns: 200 * MS,
            rwnd: 1 << 20,
            initial_cwnd: iw,
            initial_ssthresh: ssthresh,
            loss_probes,
            frto,
        };
        let mut s = Sender::new(Algorithm::new(alg, &Params::new()).unwrap(), cfg, 1448);
        s.app_limit = segments;
        s.start(0);
        let mut h = Self { s, now: 0 };
        let sent = h.send();
        (h, sent)
    }

    /// Everything the window allows now: (segment, is a retransmission).
    fn send(&mut self) -> Vec<(u32, bool)> {
        std::iter::from_fn(|| self.s.next_segment(self.now).map(|s| (s.seq, s.retransmit))).collect()
    }

    /// An ACK at `t_ms`: cumulative `cum`, a SACK block of the one segment `sack`, no
    /// timestamp echo; then the transmissions.
    fn ack(&mut self, t_ms: u64, cum: u32, sack: Option<u32>) -> Vec<(u32, bool)> {
        let blocks = sack.map_or(SackBlocks::NONE, |s| SackBlocks::of(&[(s, s + 1)]));
        self.ack_with(t_ms, cum, &blocks, 0)
    }

    /// An ACK at `t_ms`: cumulative `cum`, SACK blocks `blocks`, timestamp echo `tsecr`;
    /// then the transmissions.
    fn ack_with(&mut self, t_ms: u64, cum: u32, blocks: &SackBlocks, tsecr: u32) -> Vec<(u32, bool)> {
        self.now = self.now.max(t_ms * MS);
        self.s.on_ack(self.now, cum, blocks, tsecr);
        self.send()
    }

    /// A cumulative ACK of `cum` at `t_ms` with ECE if `ece`; then the transmissions.
    fn ack_ecn(&mut self, t_ms: u64, cum: u32, ece: bool) -> Vec<(u32, bool)> {
        self.now = self.now.max(t_ms * MS);
        self.s.on_ack_ecn(self.now, cum, &SackBlocks::NONE, 0, ece);
        self.send()
    }

    /// The ECN field and CWR flag `tcp_ecn_send` gives a data segment sent now.
    fn ecn_of(&mut self, retransmit: bool) -> (Ecn, bool) {
        let p = self.s.ecn_send(Packet::data(0, 0, 0, 1500, 0, 0), retransmit);
        (p.ecn(), p.is_cwr())
    }

    /// The retransmission timer fires at `t_ms`; then the transmissions.
    fn rto(&mut self, t_ms: u64) -> Vec<(u32, bool)> {
        self.now = t_ms * MS;
        self.s.on_retransmission_timer(self.now);
        self.send()
    }

    fn window(&self) -> (u32, u32, CaState) {
        let t = self.s.tcp();
        (t.cwnd, t.ssthresh, t.ca_state)
    }
}

/// 100 segments out at t = 0, segment 0 lost, then SACKs of 1..=k at 100 ms: Recovery
/// from the third SACK (RFC 6675 DupThresh; all were sent at once, so RACK adds nothing).
fn recovery_after_k_sacks(alg: &str, k: u32) -> Harness {
    let (mut h, sent) = Harness::new(alg, 100, None);
    assert_eq!(sent.len(), 100);
    for s in 1..=k {
        h.ack(100, 0, Some(s));
    }
    assert_eq!(h.window().2, CaState::Recovery);
    h
}

#[test]
fn timeout_in_recovery_keeps_the_threshold_reno() {
    // tcp_enter_loss: ssthresh is recomputed only from Open/Disorder, once snd_una reached
    // high_seq, or in Loss with icsk_retransmits == 0. Here Recovery began at cwnd 100:
    // ssthresh = 100 / 2 = 50, prior_cwnd 100. PRR (tcp_cwnd_reduction, in_flight above
    // ssthresh) lets out ceil(50 d / 100) segments after d deliveries. The SACKs of 1 and 2
    // came in Open and freed room for new segments 100 and 101; after SACKs of 1..=30,
    // d = 28 and prr_out = 14 (the retransmission of 0 and 13 new), so in_flight =
    // 102 + 13 - 30 SACKed - 1 lost + 1 retransmitted = 85 = cwnd.
    // A timeout now must keep 50; recomputing from cwnd 85 would give 42.
    let mut h = recovery_after_k_sacks("reno", 30);
    assert_eq!(h.window(), (85, 50, CaState::Recovery));
    h.rto(400);
    assert_eq!(h.window().1, 50);
    assert_eq!(h.window().2, CaState::Loss);
}

#[test]
fn timeout_in_recovery_keeps_the_threshold_cubic() {
    // As above with CUBIC: ssthresh = 100 * 717 / 1024 = 70; PRR lets out ceil(70 d / 100):
    // after SACKs of 1..=33, d = 31, prr_out = ceil(21.7) = 22, in_flight =
    // 102 + 21 - 33 - 1 + 1 = 90. Recomputing would give 90 * 717 / 1024 = 63; tcp_enter_loss
    // keeps 70.
    let mut h = recovery_after_k_sacks("cubic", 33);
    assert_eq!(h.window(), (90, 70, CaState::Recovery));
    h.rto(400);
    assert_eq!(h.window().1, 70);
}

#[test]
fn timeout_marks_everything_lost_and_restarts_from_one() {
    // tcp_timeout_mark_lost + tcp_enter_loss from Open: ssthresh = reno(100) = 50, every
    // unSACKed segment is lost, so nothing is in flight and cwnd = in_flight + 1 = 1;
    // the head is retransmitted and the timer backs off (tcp_retransmit_timer). The RTO
    // before any sample is TCP_TIMEOUT_INIT, 1 s; backed off once, 2 s.
    let (mut h, _) = Harness::rto_only("reno", 100, None);
    let sent = h.rto(1000);
    assert_eq!(h.window(), (1, 50, CaState::Loss));
    assert_eq!(sent, vec![(0, true)]);
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 3000 * MS, timer: Timer::Retransmit }));
}

/// An algorithm state variable (`CongestionControl::vars`) of the sender's algorithm.
fn alg_var(h: &Harness, name: &str) -> f64 {
    let mut value = None;
    h.s.host.alg.vars(&mut |k, v| {
        if k == name {
            value = Some(v);
        }
    });
    value.unwrap()
}

#[test]
fn the_first_retransmission_after_a_timeout_raises_tx_start() {
    // tcp_retransmit_timer: tcp_enter_loss marks every unSACKed segment lost, so nothing is
    // in flight, and tcp_vegas_state(Loss) disables Vegas. tcp_retransmit_skb then sends the
    // head: tcp_event_data_sent counts in flight before the segment joins retrans_out (after
    // tcp_transmit_skb), 0, and raises CA_EVENT_TX_START, on which tcp_vegas_init forgets
    // baseRTT (0x7fffffff) and enables Vegas again. Before: 10 segments out, 0..=4 ACKed at
    // 100 ms (baseRTT 100 001 us, the sample + 1; segments stay out, so no TX_START on
    // the new data), Vegas on in Open. Without the event: off, baseRTT kept.
    let (mut h, _) = Harness::rto_only("vegas", 10, None);
    h.ack(100, 5, None);
    assert_eq!((alg_var(&h, "enabled"), alg_var(&h, "base_rtt_us")), (1.0, 100_001.0));
    assert_eq!(h.rto(1000), vec![(5, true)]);
    assert_eq!(h.window().2, CaState::Loss);
    assert_eq!((alg_var(&h, "enabled"), alg_var(&h, "base_rtt_us")), (1.0, 2147483647.0));
}

#[test]
fn frto_new_data_after_a_timeout_raises_tx_start() {
    // F-RTO (tcp_process_loss step 2b): the ACK of the timeout's retransmission of 0
    // (TSval 1001, echoed at 1010 ms: RTT 10 ms, so Vegas's baseRTT 10 001) leaves 1..=9
    // marked lost and nothing in flight, and new data goes out instead of retransmissions:
    // tcp_event_data_sent raises TX_START for 10, and tcp_vegas_init forgets baseRTT again.
    let (mut h, _) = Harness::frto_without_probes("vegas", 10);
    assert_eq!(h.rto(1000), vec![(0, true)]);
    assert_eq!(h.ack_with(1010, 1, &SackBlocks::NONE, 1001), vec![(10, false), (11, false)]);
    assert_eq!(alg_var(&h, "base_rtt_us"), 2147483647.0);
}

#[test]
fn second_timeout_before_progress_keeps_the_first_threshold() {
    // tcp_enter_loss in Loss with icsk_retransmits = 1 and snd_una < high_seq: no new
    // ssthresh, however small cwnd is now.
    let (mut h, _) = Harness::rto_only("reno", 100, None);
    h.rto(1000);
    h.rto(3000);
    assert_eq!(h.window(), (1, 50, CaState::Loss));
}

#[test]
fn second_timeout_after_progress_recomputes() {
    // tcp_ack zeroes icsk_retransmits when snd_una advances, so a timeout in Loss after
    // progress is a new congestion event: tcp_enter_loss recomputes ssthresh from the
    // current window. After the first timeout (ssthresh 50, cwnd 1), the ACK of the
    // retransmitted 0 grows cwnd to 2 in slow start (cong_avoid runs in Loss) and sends 1, 2
    // (retransmissions); the second timeout computes reno max(2 / 2, 2) = 2 and cubic
    // max(2 * 717 / 1024, 2) = 2, where keeping the first would leave 50 / 70.
    for (alg, first) in [("reno", 50), ("cubic", 70)] {
        let (mut h, _) = Harness::rto_only(alg, 100, None);
        h.rto(1000);
        assert_eq!(h.window().1, first, "{alg}");
        let sent = h.ack(1100, 1, None);
        assert_eq!(sent, vec![(1, true), (2, true)], "{alg}");
        assert_eq!(h.window().0, 2, "{alg}");
        h.rto(2000);
        assert_eq!(h.window(), (1, 2, CaState::Loss), "{alg}");
    }
}

#[test]
fn loss_ends_without_resetting_the_window() {
    // tcp_process_loss: once snd_una reaches high_seq, tcp_try_undo_recovery returns to
    // Open and cwnd keeps what slow start rebuilt (no tcp_end_cwnd_reduction). IW 4: the
    // timeout leaves ssthresh 2, cwnd 1; ACK of 0 -> cwnd 2 (slow start to ssthresh);
    // ACK of 1, 2 -> congestion avoidance (cnt 2 of 2: cwnd 3); ACK of 3 = high_seq (4)
    // -> Open with cwnd 3.
    let (mut h, _) = Harness::rto_only("reno", 4, None);
    h.rto(1000);
    h.ack(1100, 1, None);
    assert_eq!(h.window(), (2, 2, CaState::Loss));
    h.ack(1200, 3, None);
    assert_eq!(h.window(), (3, 2, CaState::Loss));
    h.ack(1300, 4, None);
    assert_eq!(h.window(), (3, 2, CaState::Open));
}

#[test]
fn recovery_ends_at_ssthresh() {
    // tcp_fastretrans_alert step D: snd_una >= high_seq in Recovery ->
    // tcp_try_undo_recovery (Open) and tcp_end_cwnd_reduction: cwnd = ssthresh. After the
    // reno case above (cwnd 85, snd_nxt 115), everything sent is ACKed at once: Open at
    // cwnd 50, then tcp_cong_control in Open runs cong_avoid with the 85 segments newly
    // delivered (115 - 30 SACKed): congestion avoidance at w = 50 adds 85 / 50 = 1.
    let mut h = recovery_after_k_sacks("reno", 30);
    assert_eq!(h.s.tcp().snd_nxt, 115);
    h.ack(200, 115, None);
    assert_eq!(h.window(), (51, 50, CaState::Open));
}

#[test]
fn prr_adds_one_only_when_nothing_was_newly_marked_lost() {
    // tcp_cwnd_reduction with in_flight at or below ssthresh: sndcnt = min(delta,
    // max(prr_delivered - prr_out, newly_acked_sacked) + 1), the +1 only when snd_una
    // advanced (FLAG_SND_UNA_ADVANCED) AND the ACK newly marked nothing lost (rs->losses).
    // Script (IW 20 sent at t = 0, segments 0..=9 lost): SACKs of 10, 11 at 100 ms (in
    // Open, with one or two SACKed the holes wait out RACK's reordering window, min_rtt / 4
    // = 25 ms; they free room for 20, 21, sent at 100 ms); the SACK of 12 at 101 ms makes
    // three SACKed, the window zero (tcp_rack_reo_wnd) and 0..=9 (sent with 12, lower
    // sequence) lost: Recovery, ssthresh 10, in_flight 22 - 3 - 10 = 9, and PRR
    // (prr_delivered - prr_out = 1 per SACK) keeps in_flight at 10 while it sends the
    // retransmissions of 0..=7, one per SACK (12..=19 at 101..=108 ms).
    // Then at 210 ms the retransmissions of 0..=7 arrive: cum ACK 8, newly_acked_sacked 8,
    // and 20, 21 (sent at 100, before the retransmission of 7 now delivered 102 ms after
    // it) are newly lost by RACK (no reordering window in Recovery; tcp_rack_advance
    // takes a retransmission only if delivered at least min_rtt after it was sent). Now prr_delivered =
    // 8 + 8 = 16, prr_out = 8, in_flight = 14 outstanding - 10 SACKed - 4 lost (8, 9, 20,
    // 21) = 0, delta = 10: sndcnt = min(10, max(16 - 8, 8)) = 8, cwnd = 0 + 8 = 8.
    // Adding the +1 regardless of the new losses would give 9.
    let (mut h, _) = Harness::new("reno", 20, None);
    h.ack(100, 0, Some(10));
    h.ack(100, 0, Some(11));
    for s in 12..=19 {
        let sent = h.ack(s as u64 + 89, 0, Some(s));
        assert_eq!(sent, vec![(s - 12, true)]);
    }
    assert_eq!((h.window(), h.s.in_flight()), ((10, 10, CaState::Recovery), 10));
    let sent = h.ack(210, 8, None);
    assert_eq!(h.window(), (8, 10, CaState::Recovery));
    // The eight it lets out: the lost 8, 9, 20, 21, then new data.
    assert_eq!(sent[..5], [(8, true), (9, true), (20, true), (21, true), (22, false)]);
    assert_eq!(sent.len(), 8);
}

#[test]
fn cwnd_limited_is_remembered_for_the_round() {
    // tcp_cwnd_validate / tcp_is_cwnd_limited: a window that was full at some point of the
    // round counts as used until snd_una passes cwnd_usage_seq, even when the application
    // then has nothing more to send. Reno in congestion avoidance (IW 10, ssthresh 5), the
    // application gives exactly 10 segments: all go out and fill the window. Ten ACKs of
    // one segment each credit 10 to cwnd_cnt at w = 10 (tcp_cong_avoid_ai): cwnd 11.
    // Deciding per send attempt (nothing to send: not limited) would leave 10.
    let (mut h, sent) = Harness::new_app_limited("reno", 10, Some(5), 10);
    assert_eq!(sent.len(), 10);
    for k in 1..=10 {
        h.ack(100 + k as u64, k, None);
    }
    assert_eq!(h.window(), (11, 5, CaState::Open));
}

#[test]
fn slow_start_grows_to_twice_what_was_sent() {
    // tcp_is_cwnd_limited in slow start: cwnd may grow while cwnd < 2 max_packets_out.
    // IW 10 with 3 segments to send: max_packets_out 3, and 10 >= 6, so the ACKs do not
    // grow it. With 6 to send, 10 < 12: each ACK adds one (tcp_slow_start).
    let (mut h, _) = Harness::new_app_limited("reno", 10, None, 3);
    h.ack(100, 3, None);
    assert_eq!(h.window().0, 10);
    let (mut h, _) = Harness::new_app_limited("reno", 10, None, 6);
    h.ack(100, 1, None);
    h.ack(101, 2, None);
    assert_eq!(h.window().0, 12);
}

#[test]
fn window_restarts_after_idle() {
    // tcp_slow_start_after_idle_check / tcp_cwnd_restart: with nothing outstanding and
    // more than an RTO since the last transmission, cwnd halves once per RTO of idle beyond
    // the first, down to the initial window. RTT samples of 100 ms: rto = 100 + rto_min
    // 200 = 300 ms. Slow start 10 -> 20 -> 40 -> 80 over three rounds of 10, 20, 40 (the
    // application's 70 segments), last sent at 200 ms. New data at 900 ms: idle 700 ms;
    // 700 - 300 = 400 > 0: 40; 400 - 300 = 100 > 0: 20; then stop. ssthresh becomes
    // tcp_current_ssthresh = max(infinite, 3/4 80) = infinite.
    let (mut h, _) = Harness::new_app_limited("reno", 10, None, 70);
    h.ack(100, 10, None);
    h.ack(200, 30, None);
    h.ack(300, 70, None);
    assert_eq!(h.window().0, 80);
    assert_eq!(h.s.host.rtt.rto_us(), 300_000);
    h.s.app_limit = 1000;
    h.now = 900 * MS;
    let sent = h.send();
    assert_eq!(h.window(), (20, cubiclab_cc::tcp::TCP_INFINITE_SSTHRESH, CaState::Open));
    assert_eq!(sent.len(), 20);
}

#[test]
fn timeout_spares_what_rack_has_not_yet_timed_out() {
    // tcp_timeout_mark_lost: the head is lost; any other segment only once
    // tcp_rack_skb_timeout (rack.rtt_us after its transmission) expired; tcp_enter_loss
    // then sets cwnd = in_flight + 1. IW 20 at t = 0, 0 lost; SACKs of 1, 2 at 100 ms free
    // room for 20, 21 (sent at 100 ms); the SACK of 3 enters Recovery and retransmits 0.
    // rack.rtt_us = 100 ms (3 was sent at 0). A timeout at 150 ms marks 0 and 4..=19
    // (sent at 0) lost and spares 20, 21: in flight 2, cwnd 3. ssthresh stays reno(20) = 10
    // from the Recovery (tcp_enter_loss in Recovery with snd_una < high_seq).
    let (mut h, _) = Harness::new("reno", 20, None);
    for s in 1..=3 {
        h.ack(100, 0, Some(s));
    }
    assert_eq!(h.window().2, CaState::Recovery);
    let sent = h.rto(150);
    assert_eq!(h.s.in_flight(), 3, "2 spared + the head retransmitted again");
    assert_eq!(h.window(), (3, 10, CaState::Loss));
    assert_eq!(sent, vec![(0, true)]);
}

#[test]
fn rack_reorder_timer_finds_a_loss_with_one_sack() {
    // tcp_rack_reo_wnd / tcp_rack_mark_lost / tcp_rack_reo_timeout. Ten segments sent at
    // t = 0 (the application has no more), 8 lost. Cumulative ACKs of 0..=7 at 100..=107
    // ms (min_rtt 100 ms; slow start while cwnd < 2 x max_packets_out: cwnd 10 + 8 = 18),
    // then the SACK of 9 at 109 ms: one SACKed, Open, so the reordering window is
    // min(min_rtt / 4, srtt) = 25 ms and 8 (sent with 9, lower sequence) expires only at
    // 0 + 109 (RACK's RTT) + 25 = 134 ms. The reorder timer: 25 ms up to whole jiffies
    // (7 x 4 ms = 28) plus TCP_TIMEOUT_MIN (8 ms) = 36 ms -> 145 ms; nothing is marked yet.
    let (mut h, sent) = Harness::new_app_limited("reno", 10, None, 10);
    assert_eq!(sent.len(), 10);
    for k in 1..=8 {
        assert!(h.ack(99 + k as u64, k, None).is_empty());
    }
    assert!(h.ack(109, 8, Some(9)).is_empty());
    assert_eq!(h.window(), (18, cubiclab_cc::tcp::TCP_INFINITE_SSTHRESH, CaState::Open));
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 145 * MS, timer: Timer::ReorderTimeout }));
    // At 145 ms 8 has expired: lost, in flight changes, Recovery (reno: ssthresh 18 / 2 =
    // 9) and one PRR step (tcp_cwnd_reduction(sk, 1, 0)): in_flight 2 - 1 SACKed - 1 lost
    // = 0, sndcnt = max(prr_delivered 1 - prr_out 0, 1) = 1, cwnd = 0 + 1 = 1: the
    // retransmission of 8 goes out.
    assert_eq!(h.rto(145), vec![(8, true)]);
    assert_eq!(h.window(), (1, 9, CaState::Recovery));
    assert_eq!((h.s.stats.loss_events, h.s.stats.timeouts), (1, 0));
}

#[test]
fn tail_loss_probe_turns_a_tail_loss_into_fast_recovery() {
    // tcp_schedule_loss_probe / tcp_send_loss_probe, then RACK. Ten segments at t = 0 (no
    // more data), 8 and 9 lost; ACKs of 0..=7 at 100 ms: every RTT sample 100 ms, so srtt
    // 100 ms and RTO 100 + max(2 x 100, 200) = 300 ms (tcp_rtt_estimator). In Open with two
    // segments out the probe timeout is 2 x srtt + TCP_TIMEOUT_MIN = 208 ms (below the
    // RTO): at 308 ms the last segment, 9, is sent again (no new data).
    let (mut h, _) = Harness::new_app_limited("reno", 10, None, 10);
    for k in 1..=8 {
        h.ack(100, k, None);
    }
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 308 * MS, timer: Timer::LossProbe }));
    assert_eq!(h.rto(308), vec![(9, true)]);
    assert_eq!(h.s.stats.timeouts, 0);
    // Its SACK at 408 ms (cum 8): RACK advances to the probe (sent at 308, 100 ms ago: not
    // ambiguous); 8, sent before it, has waited RACK's RTT 100 ms + min_rtt / 4 = 25 ms:
    // lost, Recovery (reno: ssthresh 18 / 2 = 9, cwnd 10 + 8 in slow start = 18), and
    // PRR lets the retransmission of 8 out (in_flight 0, sndcnt 1): cwnd 1.
    assert_eq!(h.ack(408, 8, Some(9)), vec![(8, true)]);
    assert_eq!(h.window(), (1, 9, CaState::Recovery));
    // The retransmission's ACK at 508 ms ends Recovery at ssthresh, without an RTO.
    h.ack(508, 10, None);
    assert_eq!(h.window(), (9, 9, CaState::Open));
    assert_eq!((h.s.stats.loss_events, h.s.stats.timeouts), (1, 0));
}

#[test]
fn frto_undoes_a_spurious_timeout() {
    // tcp_enter_loss / tcp_process_loss with tcp_frto = 2 (probes off, so the timer is the
    // RTO). IW 10 at t = 0, no ACK within the initial RTO (1 s): Loss from Open, so F-RTO
    // is on; ssthresh max(10 / 2, 2) = 5, everything marked lost (no RACK RTT yet), cwnd
    // in_flight 0 + 1 = 1: the head 0 is retransmitted.
    let (mut h, _) = Harness::frto_without_probes("reno", 10);
    assert_eq!(h.rto(1000), vec![(0, true)]);
    assert_eq!(h.window(), (1, 5, CaState::Loss));
    // The originals were only delayed. ACK of 0 at 1010 ms: snd_una advances below
    // high_seq (10) and snd_nxt = high_seq: step 2b, high_seq = snd_nxt and new data
    // instead of retransmissions: slow start makes cwnd 2 and in flight is 0 (1..=9 lost),
    // so 10 and 11 go out.
    assert_eq!(h.ack(1010, 1, None), vec![(10, false), (11, false)]);
    assert_eq!(h.window(), (2, 5, CaState::Loss));
    // ACK of the original 1 (never retransmitted, below the old high_seq): step 3b,
    // spurious, tcp_try_undo_loss(sk, true): cwnd = reno's undo_cwnd max(2, prior_cwnd
    // 10) = 10, ssthresh back to prior_ssthresh (infinite), Open, 2..=9 no longer lost.
    // Then this ACK's slow start (cwnd 10 < 2 x max_packets_out): 11; in flight 2..=11 =
    // 10, so one new segment, 12.
    assert_eq!(h.ack(1011, 2, None), vec![(12, false)]);
    assert_eq!(h.window(), (11, cubiclab_cc::tcp::TCP_INFINITE_SSTHRESH, CaState::Open));
}

#[test]
fn frto_goes_on_with_recovery_when_the_loss_was_real() {
    // As above up to step 2b; then a duplicate ACK SACKing the new segment 10: the
    // originals were lost (step 3a), F-RTO ends and the lost segments are retransmitted
    // as the window allows: cwnd 2, in flight 11 (new, not SACKed) = 1, so one: 1.
    let (mut h, _) = Harness::frto_without_probes("reno", 10);
    h.rto(1000);
    h.ack(1010, 1, None);
    assert_eq!(h.ack(1020, 1, Some(10)), vec![(1, true)]);
    assert_eq!(h.window(), (2, 5, CaState::Loss));
}

/// TCP_INFINITE_SSTHRESH.
const INFINITE: u32 = 0x7fff_ffff;

#[test]
fn d_sack_of_every_retransmission_undoes_recovery() {
    // 100 segments out at t = 0 (TSval 1); segment 0 is only delayed. SACKs of 1..=3 at
    // 100 ms: Recovery (tcp_enter_recovery: tcp_init_undo with nothing retransmitted,
    // undo_retrans -1; prior_ssthresh = tcp_current_ssthresh = max(infinite, 75)), and the
    // fast retransmit of 0 (tcp_retransmit_skb: undo_retrans 0 + 1 = 1). The original 0 then
    // arrives: ACK of 4 (a partial ACK, no echo so no Eifel). Its retransmission arrives
    // after: the receiver D-SACKs [0, 1) below the ACK (tcp_check_dsack: one duplicate, no
    // more than the one retransmission; dumb counting since 1 <= prior snd_una 4 and
    // 1 > undo_marker 0: undo_retrans 0). tcp_try_undo_dsack: undo_cwnd = reno's
    // max(cwnd, prior_cwnd 100) = 100, ssthresh back to infinite, Open.
    let (mut h, _) = Harness::new("reno", 100, None);
    h.ack(100, 0, Some(1));
    h.ack(100, 0, Some(2));
    let sent = h.ack(100, 0, Some(3));
    assert_eq!(sent.first(), Some(&(0, true)));
    assert_eq!(h.window().1, 50);
    h.ack(150, 4, None);
    assert_eq!(h.window().2, CaState::Recovery);
    h.ack_with(160, 4, &SackBlocks::of(&[(0, 1)]), 0);
    assert_eq!(h.window(), (100, INFINITE, CaState::Open));
}

#[test]
fn a_d_sack_for_a_retransmission_still_needed_does_not_undo() {
    // As above, but two segments (0 and 4) are retransmitted: SACKs of 1..=3 and 5..=7
    // mark both lost (RACK, no window with three SACKed), undo_retrans = 2. The D-SACK of
    // 0 alone leaves 1 (tcp_may_undo false): the reduction stays.
    let (mut h, _) = Harness::new("reno", 100, None);
    let mut retransmitted = Vec::new();
    for s in [1, 2, 3, 5, 6, 7] {
        retransmitted.extend(h.ack(100, 0, Some(s)).into_iter().filter(|&(_, r)| r).map(|(s, _)| s));
    }
    assert_eq!(retransmitted, vec![0, 4]);
    h.ack_with(150, 4, &SackBlocks::of(&[(5, 8)]), 0);
    h.ack_with(160, 4, &SackBlocks::of(&[(0, 1), (5, 8)]), 0);
    assert_eq!(h.window().1, 50);
    assert_eq!(h.window().2, CaState::Recovery);
}

#[test]
fn timestamps_show_a_spurious_timeout_and_undo_it() {
    // Eifel (tcp_process_loss -> tcp_try_undo_loss(sk, false) -> tcp_may_undo ->
    // tcp_packet_delayed). IW 10 at t = 0 (TSval 1), no RTT sample: the RTO fires at 1 s,
    // ssthresh = 10 / 2 = 5, cwnd 1, segment 0 retransmitted with TSval 1001
    // (retrans_stamp). At 1010 ms the ACK of all ten arrives echoing TSval 1: the originals
    // were only late (1 < 1001), so the timeout is undone: undo_cwnd = max(cwnd, prior_cwnd
    // 10), ssthresh back to prior_ssthresh (tcp_current_ssthresh at the timeout: infinite),
    // Open; slow start then adds the ten delivered: cwnd 20. The same ACK echoing the
    // retransmission (TSval 1001) proves nothing: Loss ends at high_seq 10 with ssthresh 5;
    // tcp_reno_cong_avoid slow-starts 1 -> 5 with 4 of the 10 and tcp_cong_avoid_ai takes
    // the other 6 (cwnd_cnt 6 >= 5: cwnd 6).
    for (echo, want) in [(1, (20, INFINITE)), (1001, (6, 5))] {
        let (mut h, _) = Harness::rto_only("reno", 10, None);
        assert_eq!(h.rto(1000), vec![(0, true)]);
        assert_eq!(h.window(), (1, 5, CaState::Loss));
        h.ack_with(1010, 10, &SackBlocks::NONE, echo);
        assert_eq!(h.window(), (want.0, want.1, CaState::Open), "echo {echo}");
    }
}

#[test]
fn three_sack_blocks_tell_what_lost_acks_did_not() {
    // tcp_sacktag_write_queue with several blocks: 20 segments out; the ACKs SACKing 2 and
    // 3 were lost, so the first to arrive carries [2, 5): three segments newly SACKed at
    // once. The next carries [7, 8) in front of [2, 5): only 7 is new (recv_sack_cache
    // skips the rest), so the sender counts 4 SACKed, not 7. RACK (three SACKed: no
    // reordering window) marks 0, 1 and 5, 6 lost: in flight 20 - 4 - 4 = 12.
    let (mut h, _) = Harness::new("reno", 20, None);
    h.ack_with(100, 0, &SackBlocks::of(&[(2, 5)]), 0);
    assert_eq!(h.s.sb.sacked_out, 3);
    h.ack_with(101, 0, &SackBlocks::of(&[(7, 8), (2, 5)]), 0);
    assert_eq!(h.s.sb.sacked_out, 4);
    assert_eq!(h.s.sb.lost_out, 4);
    assert_eq!(h.window().2, CaState::Recovery);
}

#[test]
fn an_ack_of_retransmitted_data_gives_an_rtt_sample_by_its_echo() {
    // tcp_ack_update_rtt's RTTM rule: Karn forbids a sample from the ACK's timing when a
    // retransmitted segment is acknowledged, but the timestamp echo of an ACK that
    // acknowledges data is one, and a valid sample clears the backoff. IW 1: the RTO at
    // 1 s retransmits 0 (TSval 1001) and doubles the timeout to 2 s; the ACK at 1100 ms
    // echoes 1001: sample 1101 - 1001 = 100 ms, so srtt 100 ms and the backoff is 0.
    let (mut h, _) = Harness::rto_only("reno", 1, None);
    h.rto(1000);
    assert_eq!(h.s.srtt_us(), 0);
    h.ack_with(1100, 1, &SackBlocks::NONE, 1001);
    assert_eq!(h.s.srtt_us(), 100_000);
    assert_eq!(h.s.host.rtt.backoff, 0);
}

#[test]
fn a_hole_filled_by_the_delayed_original_undoes_recovery() {
    // tcp_fastretrans_alert in Recovery, on an ACK that advances snd_una:
    // tcp_try_undo_partial. If undo_marker is set and tcp_packet_delayed (the ACK echoes a
    // TSval older than retrans_stamp, the first retransmission's), the hole was filled by
    // the original: with no retransmission still out (retrans_out 0), tcp_undo_cwnd_reduction
    // (cwnd = undo_cwnd, ssthresh = max(ssthresh, prior_ssthresh)) and tcp_try_keep_open
    // (Open: nothing SACKed or lost is left); with one still out, nothing is undone.
    //
    // Reno, IW 100 sent at t = 0 with TSval 1 (tcp_time_stamp_ts: 0 ms + 1). SACKs of 1..=3
    // at 100 ms: Recovery (tcp_enter_recovery: ssthresh 100 / 2 = 50, prior_cwnd 100,
    // prior_ssthresh = tcp_current_ssthresh = infinite; tcp_init_undo: undo_marker 0) and
    // the fast retransmit of 0 with TSval 101 (retrans_stamp 101).
    // At 150 ms the original 0 arrives: ACK of 4 echoing TSval 1 < 101, so
    // tcp_packet_delayed. The cumulative ACK took the retransmission of 0 out of
    // retrans_out (0 left): undo_cwnd = tcp_reno_undo_cwnd = max(cwnd, prior_cwnd) = 100,
    // ssthresh back to infinite, Open. tcp_cong_control then runs in Open on that ACK
    // (tcp_may_raise_cwnd: FLAG_DATA_ACKED): slow start (cwnd 100 < infinite) with the one
    // segment newly delivered (0; 1..=3 were counted when SACKed): cwnd 101.
    let (mut h, _) = Harness::new("reno", 100, None);
    for s in 1..=3 {
        h.ack(100, 0, Some(s));
    }
    assert_eq!(h.window(), (h.window().0, 50, CaState::Recovery));
    assert_eq!(h.s.sb.retrans_out, 1);
    h.ack_with(150, 4, &SackBlocks::NONE, 1);
    assert_eq!(h.window(), (101, INFINITE, CaState::Open));

    // The same with 4 lost too (SACKs of 1..=3 and 5..=7: RACK marks 0 and 4, both
    // retransmitted at 100 ms). The ACK of 4 echoing TSval 1 is delayed evidence again,
    // but the retransmission of 4 is still out (retrans_out 1): tcp_try_undo_partial
    // returns without undoing; the reduction stays (ssthresh 50, Recovery).
    let (mut h, _) = Harness::new("reno", 100, None);
    for s in [1, 2, 3, 5, 6, 7] {
        h.ack(100, 0, Some(s));
    }
    assert_eq!(h.s.sb.retrans_out, 2);
    h.ack_with(150, 4, &SackBlocks::of(&[(5, 8)]), 1);
    assert_eq!(h.s.sb.retrans_out, 1);
    assert_eq!((h.window().1, h.window().2), (50, CaState::Recovery));
}

/// What one transmission sends: (segment, carries PSH).
fn send_marking_push(s: &mut Sender, now: Time) -> Vec<(u32, bool)> {
    std::iter::from_fn(|| s.next_segment(now).map(|s| (s.seq, s.push))).collect()
}

#[test]
fn psh_ends_each_full_tso_packet() {
    // New data leaves in TSO packets of tcp_tso_autosize segments and the last segment of
    // each full packet carries PSH (as measured on the testbed's kernel sender, see
    // Sender::ends_tso_packet). The ACK of 0..=1 at 20 ms: slow start, cwnd 10 + 2 = 12, srtt
    // 20 ms; tcp_update_pacing_rate: 200% x 12 x 1448 B / 20 ms = 1 737 600 B/s;
    // tcp_tso_autosize: 1 737 600 >> 10 = 1696 bytes, no min_rtt bonus (20 000 us >> 9 =
    // 39 shifts out gso_max_size), 1696 / 1448 = 1 segment, raised to tcp_min_tso_segs 2.
    // In flight 8 of 12: segments 10..=13 go as two packets, PSH on 11 and 13. A SACK of 3
    // at 21 ms acknowledges nothing new, so cwnd stays 12 (tcp_may_raise_cwnd wants
    // FLAG_DATA_ACKED with the default reordering of 3), in flight 11: segment 14 goes in a
    // packet cut short by the window, without PSH.
    let cfg = SenderConfig {
        recovery: Recovery::Sack,
        min_rto_ns: 200 * MS,
        rwnd: 1 << 20,
        initial_cwnd: 10,
        initial_ssthresh: None,
        loss_probes: true,
        frto: true,
    };
    let mut s = Sender::new(Algorithm::new("cubic", &Params::new()).unwrap(), cfg, 1448);
    s.start(0);
    let first = send_marking_push(&mut s, 0);
    assert_eq!(first.len(), 10);
    s.on_ack(20 * MS, 2, &SackBlocks::NONE, 0);
    assert_eq!(send_marking_push(&mut s, 20 * MS), [(10, false), (11, true), (12, false), (13, true)]);
    s.on_ack(21 * MS, 2, &SackBlocks::of(&[(3, 4)]), 0);
    assert_eq!(send_marking_push(&mut s, 21 * MS), [(14, false)]);
}

#[test]
fn the_first_deadline_is_a_probe_at_the_initial_timeout_or_the_rto() {
    // tcp_schedule_loss_probe after the initial window (IW 10 at t = 0): no RTT sample, so
    // the probe timeout is TCP_TIMEOUT_INIT, 1 s, capped by the RTO counted from the head's
    // transmission (tcp_rto_delta_us: 0 + 1 s - 0), also 1 s: a probe at 1000 ms. With
    // probes off the timer is the RTO itself (tcp_event_new_data_sent), at 1000 ms.
    let (h, _) = Harness::new("reno", 10, None);
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 1000 * MS, timer: Timer::LossProbe }));
    let (h, _) = Harness::rto_only("reno", 10, None);
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 1000 * MS, timer: Timer::Retransmit }));
    assert_eq!(h.s.pacing_deadline(), None);
}

#[test]
fn an_ack_rearms_the_rto_from_now_and_stops_it_with_nothing_out() {
    // tcp_rearm_rto (probes off, 10 segments in all, sent at t = 0): the ACK of 0..=4 at
    // 100 ms gives the first RTT sample, 100 ms: srtt 100 ms, mdev 2 x 100 = 200 ms,
    // rttvar max(200, rto_min 200) = 200 ms, RTO 100 + 200 = 300 ms (tcp_rtt_estimator,
    // __tcp_set_rto), counted from this ACK: 400 ms. The ACK of everything at 200 ms leaves
    // nothing out: the timer is cleared (inet_csk_clear_xmit_timer).
    let (mut h, _) = Harness::with("reno", 10, None, 10, false, false);
    assert!(h.ack(100, 5, None).is_empty());
    assert_eq!(h.s.host.rtt.rto_us(), 300_000);
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 400 * MS, timer: Timer::Retransmit }));
    h.ack(200, 10, None);
    assert_eq!(h.s.poll_timeout(), None);
}

#[test]
fn a_probe_for_one_segment_waits_for_the_delayed_ack_but_not_past_the_rto() {
    // tcp_schedule_loss_probe with one segment out (10 in all, ACKs of 0..=8 at 100 ms:
    // srtt 100 ms, RTO 300 ms as in the tail loss probe test): 2 x srtt = 200 ms plus
    // TCP_RTO_MIN (200 ms) for the peer's delayed ACK = 400 ms; the ACK advanced snd_una, so
    // the RTO would restart now (advancing_rto) and caps it at 300 ms: a probe at 400 ms.
    let (mut h, _) = Harness::new_app_limited("reno", 10, None, 10);
    for k in 1..=9 {
        h.ack(100, k, None);
    }
    assert_eq!(h.s.packets_out(), 1);
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 400 * MS, timer: Timer::LossProbe }));
}

#[test]
fn a_paced_sender_asks_for_its_next_departure_first() {
    // tcp_pacing_check / tcp_update_skb_after_send on a sender paced at 1 448 000 B/s (one
    // 1448-byte segment per ms; min_rtt 100 ms: no extra TSO bytes), IW 20 at t = 0. Bursts
    // are tcp_tso_autosize's floor of 2 segments (1 448 000 >> 10 = 1414 bytes < 1 MSS).
    // sch_fq leaves the first 10 segments unpaced; the burst that ends them (8, 9) sets the
    // next departure 2 x 1448 B / 1 448 000 B/s = 2 ms later: 10 segments leave at 0 and
    // the next deadline is the pacing timer's at 2 ms, before the probe's at 1 s. At 2 ms
    // the burst of 10, 11 leaves and the next departure is 4 ms.
    let cfg = SenderConfig {
        recovery: Recovery::Sack,
        min_rto_ns: 200 * MS,
        rwnd: 1 << 20,
        initial_cwnd: 20,
        initial_ssthresh: None,
        loss_probes: true,
        frto: true,
    };
    let mut s = Sender::new(Algorithm::new("reno", &Params::new()).unwrap(), cfg, 1448);
    s.start(0);
    s.host.tcp.paced = true;
    s.host.tcp.pacing_rate = 1_448_000;
    s.host.tcp.min_rtt_us = 100_000;
    let mut h = Harness { s, now: 0 };
    assert_eq!(h.send().len(), 10);
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 2 * MS, timer: Timer::Pacing }));
    assert_eq!(h.s.retransmission_timeout(), Some(Timeout { at: 1000 * MS, timer: Timer::LossProbe }));
    h.now = 2 * MS;
    h.s.on_pacing_timer();
    assert_eq!(h.send(), vec![(10, false), (11, false)]);
    assert_eq!(h.s.poll_timeout(), Some(Timeout { at: 4 * MS, timer: Timer::Pacing }));
}

/// Reno with 10 segments out at t = 0 on an ECN connection (`tcp_ecn` = 1).
fn ecn_reno() -> Harness {
    let (mut h, sent) = Harness::new("reno", 10, None);
    assert_eq!(sent.len(), 10);
    h.s.set_ecn(true);
    h
}

#[test]
fn an_ece_ack_enters_cwr_once_per_window() {
    // tcp_try_to_open -> tcp_enter_cwr on FLAG_ECE: tcp_init_cwnd_reduction (ssthresh =
    // 10 / 2 = 5, prior_cwnd 10, high_seq 10), CWR. tcp_cong_control then runs PRR: 9 in
    // flight above ssthresh, prr_delivered 1: ceil(5 x 1 / 10) - 0 = 1, cwnd 9 + 1 = 10:
    // segment 10 goes. A second ECE in CWR changes nothing (state >= CWR): PRR gives
    // ceil(5 x 2 / 10) - 1 = 0, cwnd 9, nothing sent. One reduction counted.
    let mut h = ecn_reno();
    assert_eq!(h.ack_ecn(100, 1, true), [(10, false)]);
    assert_eq!(h.window(), (10, 5, CaState::Cwr));
    assert_eq!(h.ack_ecn(101, 2, true), []);
    assert_eq!(h.window(), (9, 5, CaState::Cwr));
    assert_eq!(h.s.stats.ecn_reductions, 1);
}

#[test]
fn cwr_ends_once_snd_una_passes_high_seq() {
    // tcp_fastretrans_alert step D, TCP_CA_CWR: held while snd_una == high_seq (10), ended
    // by the ACK above it (tcp_end_cwnd_reduction: cwnd = ssthresh 5, then Open; the same
    // ACK's cong_avoid credits one segment towards 6 in congestion avoidance).
    let mut h = ecn_reno();
    h.ack_ecn(100, 1, true);
    for cum in 2..=10 {
        h.ack_ecn(100 + cum as u64, cum, false);
    }
    assert_eq!(h.window().2, CaState::Cwr);
    h.ack_ecn(111, 11, false);
    assert_eq!(h.window(), (5, 5, CaState::Open));
    // ECE again, in the next window: a second reduction, from 5: ssthresh 2.
    h.ack_ecn(112, 12, true);
    assert_eq!((h.window().1, h.window().2, h.s.stats.ecn_reductions), (2, CaState::Cwr, 2));
}

#[test]
fn the_next_new_data_carries_cwr_once_and_retransmissions_are_not_ect() {
    // tcp_ecn_send: new data is ECT(0) and takes TCP_ECN_QUEUE_CWR (set by
    // tcp_init_cwnd_reduction); a retransmission is Not-ECT and leaves the CWR queued.
    let mut h = ecn_reno();
    assert_eq!(h.ecn_of(false), (Ecn::Ect0, false));
    h.ack_ecn(100, 1, true);
    assert_eq!(h.ecn_of(true), (Ecn::NotEct, false));
    assert_eq!(h.ecn_of(false), (Ecn::Ect0, true));
    assert_eq!(h.ecn_of(false), (Ecn::Ect0, false));
}

#[test]
fn ece_is_ignored_without_ecn() {
    // tcp_ecn_rcv_ecn_echo: ECE counts only with TCP_ECN_OK; slow start goes on (10 + 1).
    let (mut h, _) = Harness::new("reno", 10, None);
    h.ack_ecn(100, 1, true);
    assert_eq!(h.window(), (11, 0x7fff_ffff, CaState::Open));
    assert_eq!(h.s.stats.ecn_reductions, 0);
}

#[test]
fn dctcp_negotiates_ecn_and_keeps_ect_on_retransmissions() {
    // tcp_ecn_send_syn: tcp_ca_needs_ecn asks for ECN whatever tcp_ecn says; tcp_ecn_send
    // leaves ECT set on retransmissions for such an algorithm.
    let (mut h, _) = Harness::new("dctcp", 10, None);
    h.s.set_ecn(false);
    assert!(h.s.ecn_ok());
    assert_eq!(h.ecn_of(true), (Ecn::Ect0, false));
}

#[test]
fn dctcp_reduces_by_half_alpha_on_ece() {
    // dctcp_update_alpha runs in tcp_in_ack_event, before tcp_enter_cwr asks ssthresh. Init:
    // alpha 1024, next_seq = snd_nxt at init = 0, so the first ACK (snd_una 1, 1 segment
    // delivered with ECE) ends a window: 1024 - 64 + (1 << 6) / 1 = 1024 (clamped). Then
    // ssthresh = 10 - (10 x 1024) >> 11 = 5. The next window ends when snd_una reaches 11
    // (snd_nxt after that ACK: segment 10 went); ACKs 2..=11 without ECE: alpha = 1024 -
    // 64 = 960 at 11, where CWR also ends (cwnd = ssthresh 5).
    let (mut h, _) = Harness::new("dctcp", 10, None);
    h.s.set_ecn(false);
    h.ack_ecn(100, 1, true);
    assert_eq!(h.window(), (10, 5, CaState::Cwr));
    for cum in 2..=11 {
        h.ack_ecn(100 + cum as u64, cum, false);
    }
    assert_eq!(h.window().2, CaState::Open);
    let mut alpha = 0.0;
    h.s.host.alg.vars(&mut |name, v| {
        if name == "alpha" {
            alpha = v
        }
    });
    assert_eq!(alpha, 960.0 / 1024.0);
}
