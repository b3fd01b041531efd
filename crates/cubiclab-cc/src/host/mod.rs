//! Linux's TCP around the congestion-control algorithm, written once: the state machine of
//! Open, Recovery and Loss, the ssthresh rules of entering each, undo, PRR, cwnd validation,
//! the retransmission timer's estimator, and the order in which the algorithm's hooks run.
//! The replay driver ([`crate::replay`]) and the cubiclab simulator's sender both drive an
//! algorithm through a [`Host`]; what detects a loss (a scoreboard, a trace) stays theirs.
//!
//! Every method names the Linux 6.x function it follows (`net/ipv4/tcp_input.c` unless
//! said otherwise). On an ACK the kernel's order is ([`tcp_ack`](https://elixir.bootlin.com)):
//!
//! 1. `snd_una` moves; `icsk_retransmits` is zeroed if it advanced: [`Host::ack_snd_una`];
//! 2. `tcp_clean_rtx_queue`: the RTT estimator ([`Host::rtt_sample`]), then `pkts_acked`
//!    ([`Host::pkts_acked`]); then `tcp_in_ack_event` ([`Host::in_ack_event`]);
//! 3. `tcp_fastretrans_alert`: leave Recovery or Loss once `snd_una >= high_seq`
//!    ([`Host::try_leave_recovery`]), or enter Recovery ([`Host::enter_recovery`]);
//! 4. `tcp_cong_control`: PRR in Recovery, else `cong_avoid` ([`Host::cong_control`]),
//!    then `tcp_update_pacing_rate` ([`Host::update_pacing_rate`]).
//!
//! A timeout is `tcp_retransmit_timer` ([`Host::retransmit_timer`]); a transmission is
//! `tcp_write_xmit`'s accounting ([`Host::on_transmit`], [`Host::cwnd_validate`]).

pub mod cwnd_validate;
pub mod pacing;
pub mod prr;
pub mod rate;
pub mod rtt;

use crate::clock::{TESTBED_HZ, TESTBED_JIFFY_NS};
use crate::minmax::Minmax;
use crate::seq::{after, before};
use crate::tcp::{AckEvent, AckSample, CaEvent, CaState, RateSample, TcpState, TCP_INFINITE_SSTHRESH};
use crate::{Algorithm, CongestionControl};
pub use cwnd_validate::CwndUsage;
pub use prr::{Prr, PrrAck};
pub use rate::RateEstimator;
pub use rtt::RttEstimator;

/// How an ACK that reached `high_seq` ended Recovery or Loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryEnd {
    /// Not ended (below `high_seq`, or not in Recovery or Loss).
    Stay,
    /// Ended with the reduction undone (`tcp_try_undo_recovery` found it spurious).
    Undone,
    /// Ended with the reduction kept.
    Recovered,
    /// An ECN reduction (CWR) ended: back to Open, the ACK is processed on as in Open.
    CwrEnded,
}

/// An algorithm with the TCP state Linux keeps around it.
#[derive(Clone, Debug)]
pub struct Host {
    pub alg: Algorithm,
    pub tcp: TcpState,
    pub rtt: RttEstimator,
    /// `high_seq`: `snd_nxt` when the current Recovery or Loss began.
    pub high_seq: u32,
    /// `icsk_retransmits`: timeouts since `snd_una` last advanced.
    pub retransmits: u32,
    /// `undo_marker`: `snd_una` when the reduction that may still be undone began.
    pub undo_marker: Option<u32>,
    /// `undo_retrans`: retransmissions since then not yet shown spurious by a D-SACK
    /// (negative: none was sent; zero: all were spurious, undo now).
    pub undo_retrans: i32,
    /// `retrans_stamp`: TSval of the first retransmission of this episode (0: none).
    pub retrans_stamp: u32,
    prr: Prr,
    usage: CwndUsage,
    /// `tp->rtt_min`: the windowed minimum RTT behind `tcp.min_rtt_us`.
    rtt_min: Minmax,
    /// Delivery-rate sampling (`tcp_rate.c`).
    pub rate: RateEstimator,
    /// `TCP_ECN_OK`: the connection negotiated ECN (RFC 3168).
    pub ecn_ok: bool,
    /// `TCP_ECN_QUEUE_CWR`: a reduction began; the next new data carries CWR.
    queue_cwr: bool,
}

/// `tcp_jiffies32` of the testbed's kernel, for the min-RTT window.
const NS_PER_JIFFY: u64 = TESTBED_JIFFY_NS;
/// `sysctl_tcp_min_rtt_wlen`: 300 s, in jiffies.
const MIN_RTT_WLEN_JIFFIES: u32 = 300 * TESTBED_HZ;

impl Host {
    pub fn new(alg: Algorithm, tcp: TcpState, rtt: RttEstimator) -> Self {
        Self {
            alg,
            tcp,
            rtt,
            high_seq: 0,
            retransmits: 0,
            undo_marker: None,
            undo_retrans: -1,
            retrans_stamp: 0,
            prr: Prr::default(),
            usage: CwndUsage::default(),
            rtt_min: Minmax { s: [crate::minmax::MinmaxSample { t: 0, v: u32::MAX }; 3] },
            rate: RateEstimator::default(),
            ecn_ok: false,
            queue_cwr: false,
        }
    }

    /// The connection is established (`tcp_init_congestion_control`): the algorithm's `init`.
    pub fn init(&mut self, now: u64) {
        self.alg.init(&mut self.tcp, now);
        self.tcp.lsndtime_ns = now;
    }

    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.tcp.snd_nxt.wrapping_sub(self.tcp.snd_una)
    }

    fn set_state(&mut self, s: CaState, now: u64) {
        // tcp_set_ca_state: the hook sees the old state in tcp.ca_state.
        self.alg.set_state(&mut self.tcp, s, now);
        self.tcp.ca_state = s;
    }

    /// `tcp_ack`: `snd_una` moves to `una`; when it advanced, `icsk_retransmits = 0`
    /// (so a later timeout in Loss computes a fresh ssthresh). Returns whether it advanced.
    #[inline]
    pub fn ack_snd_una(&mut self, una: u32) -> bool {
        let advanced = before(self.tcp.snd_una, una);
        if advanced {
            self.tcp.snd_una = una;
            self.retransmits = 0;
        }
        advanced
    }

    /// `tcp_ack_update_rtt` with a valid sample: `tcp_rtt_estimator`, `tcp_set_rto`.
    #[inline]
    pub fn rtt_sample(&mut self, rtt_us: u64) {
        self.rtt.sample(rtt_us, self.tcp.snd_una, self.tcp.snd_nxt);
        self.tcp.srtt_us = self.rtt.srtt_us() as u32;
    }

    /// `tcp_update_rtt_min`, with the RTT of the newest packet delivered (`ca_rtt_us`; 0
    /// counts as one jiffy): the windowed minimum over `tcp_min_rtt_wlen`.
    #[inline]
    pub fn update_rtt_min(&mut self, ca_rtt_us: u64, now: u64) {
        let rtt = if ca_rtt_us == 0 { (NS_PER_JIFFY / 1000) as u32 } else { ca_rtt_us.min(u32::MAX as u64) as u32 };
        let t = (now / NS_PER_JIFFY) as u32;
        self.tcp.min_rtt_us = self.rtt_min.running_min(MIN_RTT_WLEN_JIFFIES, t, rtt);
    }

    /// `tcp_clean_rtx_queue`'s call of `pkts_acked`, with a sample the caller made.
    #[inline]
    pub fn pkts_acked_sample(&mut self, sample: &AckSample, now: u64) {
        self.alg.pkts_acked(&mut self.tcp, sample, now);
    }

    /// `tcp_clean_rtx_queue`'s call of `pkts_acked`: `pkts_acked` segments off the queue,
    /// the ACK's `rtt_us` (-1: none), and `delivered` (`tp->delivered` with this ACK's
    /// deliveries, which sacktag and the queue walk counted before the call) against the
    /// rate sample's `prior_delivered` for 6.x's `in_flight` in bytes.
    #[inline]
    pub fn pkts_acked(&mut self, pkts_acked: u32, rtt_us: i64, delivered: u32, now: u64) {
        // wraps: u32 delivery counts and the kernel's u32 product with mss_cache.
        let in_flight = self.tcp.mss.wrapping_mul(delivered.wrapping_sub(self.rate.prior_delivered()));
        self.pkts_acked_sample(&AckSample { pkts_acked, rtt_us, in_flight }, now);
    }

    /// `tcp_in_cwnd_reduction`.
    #[inline]
    pub fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tcp.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_init_undo`: the reduction about to be made may be undone once D-SACKs show the
    /// `retrans_out` retransmissions in flight (and all later ones) spurious.
    fn init_undo(&mut self, retrans_out: u32) {
        self.undo_marker = Some(self.tcp.snd_una);
        self.undo_retrans = if retrans_out > 0 { retrans_out as i32 } else { -1 };
    }

    /// `tcp_retransmit_skb`: a retransmission left with timestamp `tsval`; the first of an
    /// episode stamps `retrans_stamp`, and each is one more to be shown spurious.
    pub fn on_retransmit(&mut self, tsval: u32) {
        if self.retrans_stamp == 0 {
            self.retrans_stamp = tsval;
        }
        self.undo_retrans = self.undo_retrans.max(0) + 1;
    }

    /// `tcp_packet_delayed` (Eifel, RFC 3522): the ACK echoes a timestamp older than the
    /// first retransmission, so the original arrived.
    #[inline]
    pub fn packet_delayed(&self, tsecr: u32) -> bool {
        self.retrans_stamp != 0 && tsecr != 0 && before(tsecr, self.retrans_stamp)
    }

    /// `tcp_may_undo`: every retransmission was D-SACKed, or the timestamps show the
    /// originals arrived.
    #[inline]
    pub fn may_undo(&self, tsecr: u32) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(tsecr))
    }

    /// `tcp_sacktag_one` / `tcp_check_dsack`: a D-SACK reports `dup_segs` retransmissions
    /// ending at `end_seq` delivered twice; those sent after the reduction began count.
    pub fn dsacked(&mut self, end_seq: u32, dup_segs: u32) {
        if let Some(marker) = self.undo_marker {
            if self.undo_retrans > 0 && before(marker, end_seq) {
                self.undo_retrans = (self.undo_retrans - dup_segs as i32).max(0);
            }
        }
    }

    /// `tcp_try_to_open`'s `tcp_any_retrans_done` test: with no retransmission left
    /// unacknowledged, the next episode stamps anew.
    pub fn retransmissions_done(&mut self) {
        self.retrans_stamp = 0;
    }

    /// `tcp_try_to_open`, as far as modelled (no Disorder): unless a retransmission is
    /// still unacknowledged (`tcp_any_retrans_done`), `retrans_stamp` is cleared; an ACK
    /// with ECE (`FLAG_ECE`) enters CWR ([`Host::enter_cwr`]). Returns whether a reduction
    /// began (the sender then sets CWR on its next new data, `tcp_ecn_queue_cwr`).
    #[inline]
    pub fn try_to_open(&mut self, any_retrans_done: bool, ece: bool, now: u64) -> bool {
        if !any_retrans_done {
            self.retransmissions_done();
        }
        ece && self.enter_cwr(now)
    }

    /// `tcp_enter_cwr`: an ECN congestion signal. No undo of it (`prior_ssthresh` and
    /// `undo_marker` cleared); from Open or Disorder, `tcp_init_cwnd_reduction` (the
    /// algorithm's ssthresh, PRR from zero, `high_seq = snd_nxt`) and CWR, which holds until
    /// `snd_una` passes `high_seq`: one reduction per window. Returns whether it began.
    pub fn enter_cwr(&mut self, now: u64) -> bool {
        self.tcp.prior_ssthresh = 0;
        if self.tcp.ca_state >= CaState::Cwr {
            return false;
        }
        self.undo_marker = None;
        self.init_cwnd_reduction(now);
        self.set_state(CaState::Cwr, now);
        true
    }

    /// `tcp_count_delivered`'s ECE part, then `tcp_in_ack_event` (Linux 6.14 and later call
    /// it after `tcp_clean_rtx_queue` and RACK's reordering window, before the tail-loss-probe
    /// check and `tcp_fastretrans_alert`): `newly_delivered` segments delivered by an ACK
    /// with ECE count into `delivered_ce`; the hook, if the algorithm has one, gets `ev`
    /// and sees `delivered` as `tcp.delivered` (this ACK's count included: a caller that
    /// stores it later passes it here, and `tcp.delivered` is given back unchanged).
    #[inline]
    pub fn in_ack_event(&mut self, ev: AckEvent, delivered: u32, newly_delivered: u32, now: u64) {
        if ev.ece {
            // A count of segments: wraps as the kernel's u32.
            self.tcp.delivered_ce = self.tcp.delivered_ce.wrapping_add(newly_delivered);
        }
        if self.alg.has_in_ack_event() {
            let stored = std::mem::replace(&mut self.tcp.delivered, delivered);
            self.alg.in_ack_event(&mut self.tcp, ev, now);
            self.tcp.delivered = stored;
        }
    }

    /// Whether `tcp_fastretrans_alert` comes down to [`Host::try_to_open`] alone: in Open,
    /// with no D-SACK undo due (`tcp_try_undo_dsack` does nothing) and `lost` false
    /// (`tcp_time_to_recover`: with RACK, whether any segment is marked lost), there is no
    /// state to leave or enter. Most ACKs are such; a sender may then skip the rest.
    #[inline]
    pub fn alert_only_tries_to_open(&self, lost: bool) -> bool {
        self.tcp.ca_state == CaState::Open && !lost && !self.dsack_undo_due()
    }

    /// `tcp_enter_recovery` with `tcp_init_undo` and `tcp_init_cwnd_reduction`:
    /// `prior_ssthresh`, `high_seq = snd_nxt`, the algorithm's `ssthresh`, PRR from zero,
    /// then `set_state(Recovery)`. `retrans_out`: retransmissions in flight; `ece`: the ACK
    /// carried ECE (`ece_ack`: then the reduction cannot be undone to `prior_ssthresh`).
    pub fn enter_recovery(&mut self, retrans_out: u32, ece: bool, now: u64) {
        self.tcp.prior_ssthresh = 0;
        self.init_undo(retrans_out);
        if !self.in_cwnd_reduction() {
            if !ece {
                self.tcp.prior_ssthresh = self.tcp.current_ssthresh();
            }
            self.init_cwnd_reduction(now);
        }
        self.set_state(CaState::Recovery, now);
    }

    /// `tcp_fastretrans_alert` step D and `tcp_process_loss`: CWR ends once `snd_una`
    /// passes `high_seq` (held until something above it is ACKed, so the CWR flag reached
    /// the receiver) with `tcp_end_cwnd_reduction` and Open. Once `snd_una` reaches
    /// `high_seq`, Recovery ends with `tcp_try_undo_recovery` (undone if `tcp_may_undo`
    /// with the ACK's echo `tsecr`, back to Open either way) and `tcp_end_cwnd_reduction`
    /// (cwnd = ssthresh unless undone, `CA_EVENT_COMPLETE_CWR`); Loss ends with
    /// `tcp_try_undo_recovery` alone (the window keeps what slow start rebuilt).
    #[inline]
    pub fn try_leave_recovery(&mut self, tsecr: u32, now: u64) -> RecoveryEnd {
        if self.tcp.ca_state == CaState::Cwr {
            if !after(self.tcp.snd_una, self.high_seq) {
                return RecoveryEnd::Stay;
            }
            self.end_cwnd_reduction(now);
            self.set_state(CaState::Open, now);
            return RecoveryEnd::CwrEnded;
        }
        if !matches!(self.tcp.ca_state, CaState::Recovery | CaState::Loss) || before(self.tcp.snd_una, self.high_seq) {
            return RecoveryEnd::Stay;
        }
        self.leave_recovery(tsecr, now)
    }

    fn leave_recovery(&mut self, tsecr: u32, now: u64) -> RecoveryEnd {
        let state = self.tcp.ca_state;
        let undone = self.may_undo(tsecr);
        if undone {
            self.undo_cwnd_reduction(now);
        }
        self.set_state(CaState::Open, now);
        if state == CaState::Recovery {
            self.end_cwnd_reduction(now);
        }
        if undone {
            RecoveryEnd::Undone
        } else {
            RecoveryEnd::Recovered
        }
    }

    /// Whether D-SACKs have shown every retransmission of the reduction that may still be
    /// undone spurious (`tcp_try_undo_dsack`'s test).
    #[inline]
    pub fn dsack_undo_due(&self) -> bool {
        self.undo_marker.is_some() && self.undo_retrans == 0
    }

    /// `tcp_try_undo_dsack`: D-SACKs showed every retransmission spurious; undo (the
    /// caller then keeps the connection open, `tcp_try_keep_open`).
    #[inline]
    pub fn try_undo_dsack(&mut self, now: u64) -> bool {
        if self.dsack_undo_due() {
            self.undo_cwnd_reduction(now);
            self.set_state(CaState::Open, now);
            return true;
        }
        false
    }

    /// `tcp_try_undo_loss`: in Loss, F-RTO proved the timeout spurious (`frto_undo`), or
    /// `tcp_may_undo` with the ACK's echo `tsecr` (Eifel); undo, `icsk_retransmits = 0`,
    /// Open. The caller unmarks every lost segment (`tcp_undo_cwnd_reduction(sk, true)`).
    pub fn try_undo_loss(&mut self, tsecr: u32, frto_undo: bool, now: u64) -> bool {
        if frto_undo || self.may_undo(tsecr) {
            self.undo_cwnd_reduction(now);
            self.retransmits = 0;
            self.set_state(CaState::Open, now);
            return true;
        }
        false
    }

    /// `tcp_end_cwnd_reduction`: back to ssthresh unless the reduction was undone.
    /// An algorithm with `cong_control` keeps its window (the kernel returns early).
    pub(crate) fn end_cwnd_reduction(&mut self, now: u64) {
        if self.alg.has_cong_control() {
            return;
        }
        if self.tcp.ssthresh < TCP_INFINITE_SSTHRESH
            && (self.tcp.ca_state == CaState::Cwr || self.undo_marker.is_some())
        {
            self.tcp.cwnd = self.tcp.ssthresh;
        }
        self.alg.cwnd_event(&mut self.tcp, CaEvent::CompleteCwr, now);
    }

    /// `tcp_init_cwnd_reduction`: `high_seq = snd_nxt`, PRR from zero, the algorithm's
    /// ssthresh, CWR queued on an ECN connection (`tcp_ecn_queue_cwr`).
    fn init_cwnd_reduction(&mut self, now: u64) {
        self.high_seq = self.tcp.snd_nxt;
        self.tcp.cwnd_cnt = 0;
        self.tcp.prior_cwnd = self.tcp.cwnd;
        self.prr = Prr::default();
        self.tcp.ssthresh = self.alg.ssthresh(&self.tcp, now);
        self.queue_cwr |= self.ecn_ok;
    }

    /// `tcp_ecn_send`'s CWR: whether this new data segment carries CWR (once per reduction).
    #[inline]
    pub fn take_queued_cwr(&mut self) -> bool {
        std::mem::take(&mut self.queue_cwr)
    }

    /// `tcp_process_tlp_ack` once a tail loss probe proved to have repaired a loss:
    /// `tcp_init_cwnd_reduction` (the algorithm's ssthresh), CWR, `tcp_end_cwnd_reduction`
    /// (cwnd = ssthresh) and `tcp_try_keep_open` back to Open, all on that one ACK.
    pub fn reduce_after_probe(&mut self, now: u64) {
        self.init_cwnd_reduction(now);
        self.set_state(CaState::Cwr, now);
        self.end_cwnd_reduction(now);
        self.set_state(CaState::Open, now);
    }

    /// `tcp_enter_loss` (CWR queued on an ECN connection, as on any reduction), after `tcp_timeout_mark_lost` left `in_flight` segments in flight
    /// (`retrans_out` of them retransmissions). ssthresh is recomputed (and the undo point
    /// set, `tcp_init_undo`) only if no reduction was made inside this window: from Open
    /// or Disorder, once `snd_una` reached `high_seq`, or in Loss with `icsk_retransmits`
    /// zero (`snd_una` advanced since the last timeout). Then cwnd = in flight + 1.
    pub fn enter_loss(&mut self, in_flight: u32, retrans_out: u32, now: u64) {
        let state = self.tcp.ca_state;
        if state <= CaState::Disorder
            || !before(self.tcp.snd_una, self.high_seq)
            || (state == CaState::Loss && self.retransmits == 0)
        {
            self.tcp.prior_ssthresh = self.tcp.current_ssthresh();
            self.tcp.prior_cwnd = self.tcp.cwnd;
            self.tcp.ssthresh = self.alg.ssthresh(&self.tcp, now);
            self.alg.cwnd_event(&mut self.tcp, CaEvent::Loss, now);
            self.init_undo(retrans_out);
        }
        self.tcp.cwnd = in_flight + 1;
        self.tcp.cwnd_cnt = 0;
        self.set_state(CaState::Loss, now);
        self.high_seq = self.tcp.snd_nxt;
        self.queue_cwr |= self.ecn_ok;
    }

    /// `tcp_retransmit_timer` (`tcp_timer.c`): `tcp_enter_loss`, then
    /// `icsk_retransmits += 1` and the timeout doubled.
    pub fn retransmit_timer(&mut self, in_flight: u32, retrans_out: u32, now: u64) {
        self.enter_loss(in_flight, retrans_out, now);
        self.retransmits += 1;
        self.rtt.back_off();
    }

    /// `tcp_cong_control`: an algorithm with its own `cong_control` (BBR) gets the rate
    /// sample and the packets in flight and decides alone. Otherwise, in Recovery or CWR the window follows PRR
    /// (`tcp_cwnd_reduction`); otherwise, if the ACK advanced `snd_una` over new data
    /// (`tcp_may_raise_cwnd`: `FLAG_DATA_ACKED`), the algorithm's `cong_avoid` with the
    /// segments newly delivered, judged cwnd-limited as `tcp_is_cwnd_limited` says.
    #[inline]
    pub fn cong_control(&mut self, ack: PrrAck, rs: &RateSample, in_flight: u32, now: u64) {
        if self.alg.has_cong_control() {
            self.tcp.in_flight = in_flight;
            self.tcp.is_cwnd_limited = self.usage.flag();
            self.alg.cong_control(&mut self.tcp, rs, now);
        } else if self.in_cwnd_reduction() {
            self.cwnd_reduction(ack, in_flight);
        } else if ack.una_advanced {
            self.tcp.cwnd_limited = self.usage.is_cwnd_limited(&self.tcp);
            self.alg.cong_avoid(&mut self.tcp, ack.newly_acked_sacked, now);
            if self.tcp.enter_cwr {
                self.tcp.enter_cwr = false;
                self.enter_cwr(now);
            }
        }
    }

    /// `tcp_cwnd_reduction`: one PRR step, whatever the algorithm (RACK's reorder timeout
    /// calls it directly).
    pub fn cwnd_reduction(&mut self, ack: PrrAck, in_flight: u32) {
        if let Some(cwnd) = self.prr.on_ack(ack, self.tcp.ssthresh, self.tcp.prior_cwnd, in_flight) {
            self.tcp.cwnd = cwnd;
        }
    }

    /// `tcp_update_pacing_rate`: 200% of cwnd * mss / srtt in slow start (below half of
    /// ssthresh), 120% after (`tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio`). CUBIC's
    /// HyStart reads it for its ACK-train threshold. An algorithm with `cong_control` sets
    /// its own rate.
    #[inline]
    pub fn update_pacing_rate(&mut self) {
        if self.alg.has_cong_control() {
            return;
        }
        let srtt_us8 = (self.tcp.srtt_us as u64) << 3;
        if srtt_us8 == 0 {
            return;
        }
        let ratio = if self.tcp.cwnd < self.tcp.ssthresh / 2 { 200 } else { 120 };
        let pkts = self.tcp.cwnd.max(self.packets_out()) as u64;
        let rate = self.tcp.mss as u64 * ((1_000_000 / 100) << 3) * ratio * pkts / srtt_us8;
        self.tcp.pacing_rate = rate.min(self.tcp.max_pacing_rate);
    }

    /// A trace states the congestion state the ACK left (`tcp_fastretrans_alert`'s outcome):
    /// reach it the way Linux does. Recovery is entered with `tcp_enter_recovery` (the
    /// algorithm's ssthresh, then `set_state`), Loss with `tcp_enter_loss` (`in_flight` still
    /// out), any other state with `tcp_set_ca_state` alone.
    pub fn follow_state(&mut self, state: CaState, in_flight: u32, now: u64) {
        if state == self.tcp.ca_state {
            return;
        }
        match state {
            CaState::Recovery => self.enter_recovery(0, false, now),
            CaState::Loss => self.enter_loss(in_flight, 0, now),
            s => self.set_state(s, now),
        }
    }

    /// `tcp_undo_cwnd_reduction`: the reduction proved spurious; the algorithm's
    /// `undo_cwnd` gives the window back and ssthresh returns to `prior_ssthresh`.
    fn undo_cwnd_reduction(&mut self, now: u64) {
        if self.tcp.prior_ssthresh != 0 {
            self.tcp.cwnd = self.alg.undo_cwnd(&mut self.tcp, now);
            if self.tcp.prior_ssthresh > self.tcp.ssthresh {
                self.tcp.ssthresh = self.tcp.prior_ssthresh;
                // tcp_ecn_withdraw_cwr: the reduction is taken back, so is its signal.
                self.queue_cwr = false;
            }
        }
        self.undo_marker = None;
    }

    /// An undo a trace states (the replay driver): `tcp_undo_cwnd_reduction` and back to
    /// Open.
    pub fn undo(&mut self, now: u64) {
        self.undo_cwnd_reduction(now);
        if self.tcp.ca_state != CaState::Open {
            self.set_state(CaState::Open, now);
        }
    }

    /// `tcp_write_xmit`/`tcp_xmit_retransmit_queue`: one segment left at `now`; in a
    /// window reduction it counts toward `prr_out`.
    #[inline]
    pub fn on_transmit(&mut self, now: u64) {
        if self.in_cwnd_reduction() {
            self.prr.out += 1;
        }
        self.tcp.lsndtime_ns = now;
    }

    /// `tcp_cwnd_validate` at the end of a `tcp_write_xmit` that sent something or found
    /// the window full.
    #[inline]
    pub fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        self.usage.validate(is_cwnd_limited, &self.tcp);
    }

    /// A trace states `tcp_is_cwnd_limited()` for the next ACK (the replay driver).
    pub fn assume_cwnd_limited(&mut self, limited: bool) {
        self.usage.assume(limited);
    }

    /// The first transmission with nothing outstanding: `tcp_slow_start_after_idle_check`
    /// (`tcp_cwnd_restart`, RFC 2861: after more than an RTO of idle, ssthresh keeps
    /// 3/4 of cwnd and cwnd halves per RTO idle, down to `restart_window`), then
    /// `CA_EVENT_TX_START` (`tcp_event_data_sent`).
    pub fn restart_after_idle(&mut self, now: u64, restart_window: u32) {
        let idle_us = now.saturating_sub(self.tcp.lsndtime_ns) / 1000;
        let rto_us = self.rtt.rto_us();
        if idle_us > rto_us {
            self.alg.cwnd_event(&mut self.tcp, CaEvent::CwndRestart, now);
            self.tcp.ssthresh = self.tcp.current_ssthresh();
            let restart = restart_window.min(self.tcp.cwnd);
            let mut cwnd = self.tcp.cwnd;
            let mut delta = idle_us as i64 - rto_us as i64;
            while delta > 0 && cwnd > restart {
                cwnd >>= 1;
                delta -= rto_us as i64;
            }
            self.tcp.cwnd = cwnd.max(restart);
        }
        self.tx_start(now);
    }

    /// `CA_EVENT_TX_START`: a data segment (new or retransmitted) leaves with nothing in
    /// flight (`tcp_event_data_sent`: `tcp_packets_in_flight() == 0`, counted before the
    /// segment; a retransmission joins `retrans_out` only after `tcp_transmit_skb`). Besides
    /// the first segment after idle, the first retransmission after a timeout
    /// (`tcp_enter_loss` marks everything outstanding lost).
    pub fn tx_start(&mut self, now: u64) {
        self.alg.cwnd_event(&mut self.tcp, CaEvent::TxStart, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::rtt::TCP_RTO_MIN_US;
    use crate::Params;

    fn host() -> Host {
        let alg = Algorithm::new("reno", &Params::new()).unwrap();
        Host::new(alg, TcpState { cwnd: 10, ..TcpState::default() }, RttEstimator::new(TCP_RTO_MIN_US, 1))
    }

    #[test]
    fn the_alert_is_only_try_to_open_in_open_with_nothing_lost_and_no_undo_due() {
        // tcp_fastretrans_alert in Open: tcp_try_undo_dsack acts only when undo_retrans
        // reached 0 with an undo_marker; then tcp_time_to_recover (RACK: lost_out > 0)
        // enters Recovery, else tcp_try_to_open. Outside Open there is a state to leave.
        let mut h = host();
        assert!(h.alert_only_tries_to_open(false));
        assert!(!h.alert_only_tries_to_open(true));
        h.undo_marker = Some(0);
        h.undo_retrans = 0;
        assert!(!h.alert_only_tries_to_open(false));
        h.undo_retrans = 1;
        assert!(h.alert_only_tries_to_open(false));
        h.tcp.ca_state = CaState::Recovery;
        assert!(!h.alert_only_tries_to_open(false));
    }

    #[test]
    fn try_to_open_clears_the_retransmission_stamp_once_none_is_left() {
        // tcp_try_to_open: `if (!tcp_any_retrans_done(sk)) tp->retrans_stamp = 0;`.
        let mut h = host();
        h.on_retransmit(1234);
        h.try_to_open(true, false, 0);
        assert_eq!(h.retrans_stamp, 1234);
        h.try_to_open(false, false, 0);
        assert_eq!(h.retrans_stamp, 0);
    }

    #[test]
    fn an_ece_ack_enters_cwr_once_per_window() {
        // tcp_try_to_open -> tcp_enter_cwr: ssthresh from the algorithm (reno: 10 >> 1),
        // high_seq = snd_nxt, no undo; a second ECE inside CWR does nothing.
        let mut h = host();
        h.tcp.snd_nxt = 10;
        h.undo_marker = Some(0);
        h.tcp.prior_ssthresh = 99;
        assert!(h.try_to_open(false, true, 0));
        assert_eq!((h.tcp.ca_state, h.tcp.ssthresh, h.high_seq), (CaState::Cwr, 5, 10));
        assert_eq!((h.undo_marker, h.tcp.prior_ssthresh, h.tcp.prior_cwnd), (None, 0, 10));
        assert!(!h.try_to_open(false, true, 0));
        assert_eq!(h.tcp.ssthresh, 5);
        // Without ECE nothing starts.
        let mut h = host();
        assert!(!h.try_to_open(false, false, 0));
        assert_eq!(h.tcp.ca_state, CaState::Open);
    }

    #[test]
    fn cwr_ends_once_snd_una_passes_high_seq() {
        // tcp_fastretrans_alert step D, TCP_CA_CWR: held while snd_una == high_seq (the CWR
        // flag may not have reached the receiver), then tcp_end_cwnd_reduction: cwnd =
        // ssthresh, Open.
        let mut h = host();
        h.tcp.snd_nxt = 10;
        h.enter_cwr(0);
        h.tcp.cwnd = 7;
        h.tcp.snd_una = 10;
        assert_eq!(h.try_leave_recovery(0, 0), RecoveryEnd::Stay);
        h.tcp.snd_una = 11;
        assert_eq!(h.try_leave_recovery(0, 0), RecoveryEnd::CwrEnded);
        assert_eq!((h.tcp.ca_state, h.tcp.cwnd), (CaState::Open, 5));
    }

    #[test]
    fn cwr_reduces_the_window_by_prr() {
        // In CWR tcp_cong_control runs tcp_cwnd_reduction: prior_cwnd 10, ssthresh 5, 8 in
        // flight (above ssthresh): ceil(5 * 2 / 10) - 0 = 1 segment for 2 delivered: cwnd
        // = 8 + 1 = 9; no cong_avoid growth.
        let mut h = host();
        h.tcp.snd_nxt = 10;
        h.enter_cwr(0);
        let ack = PrrAck { newly_acked_sacked: 2, newly_lost: 0, una_advanced: true };
        h.cong_control(ack, &RateSample::default(), 8, 0);
        assert_eq!(h.tcp.cwnd, 9);
    }

    #[test]
    fn recovery_entered_on_an_ece_ack_keeps_no_prior_ssthresh() {
        // tcp_enter_recovery(sk, ece_ack): prior_ssthresh = tcp_current_ssthresh only
        // without ECE (max(ssthresh 4, 3/4 of cwnd 10) = 7 here); with it, 0: not undone.
        let mut h = host();
        h.tcp.ssthresh = 4;
        h.enter_recovery(0, false, 0);
        assert_eq!(h.tcp.prior_ssthresh, 7);
        let mut h = host();
        h.tcp.ssthresh = 4;
        h.enter_recovery(0, true, 0);
        assert_eq!(h.tcp.prior_ssthresh, 0);
    }

    #[test]
    fn ece_acks_count_their_segments_as_delivered_ce() {
        // tcp_count_delivered: delivered_ce += delivered when the ACK carried ECE.
        let mut h = host();
        h.in_ack_event(AckEvent { ece: true, ..AckEvent::default() }, 3, 3, 0);
        h.in_ack_event(AckEvent::default(), 7, 4, 0);
        assert_eq!((h.tcp.delivered_ce, h.tcp.delivered), (3, 0));
    }

    #[test]
    fn every_reduction_queues_cwr_on_an_ecn_connection_once() {
        // tcp_ecn_queue_cwr in tcp_init_cwnd_reduction and tcp_enter_loss, taken by the next
        // new data (tcp_ecn_send); not on a connection without ECN.
        let mut h = host();
        h.enter_cwr(0);
        assert!(!h.take_queued_cwr());
        let mut h = host();
        h.ecn_ok = true;
        h.enter_cwr(0);
        assert!(h.take_queued_cwr());
        assert!(!h.take_queued_cwr());
        h.enter_loss(1, 0, 0);
        assert!(h.take_queued_cwr());
        // tcp_undo_cwnd_reduction restoring a higher ssthresh withdraws it.
        let mut h = host();
        h.ecn_ok = true;
        h.tcp.ssthresh = 4;
        h.enter_recovery(0, false, 0);
        h.undo(0);
        assert!(!h.take_queued_cwr());
    }
}
