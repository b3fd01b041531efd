//! The sending end of a bulk TCP flow. Around the congestion-control algorithm it plays
//! Linux `tcp_input.c`/`tcp_output.c`, calling the hooks where Linux calls them:
//!
//! - per ACK: the cumulative ACK and SACK update the scoreboard; `pkts_acked` gets the RTT
//!   of the newest never-retransmitted segment delivered; loss detection (RFC 6675 with
//!   SACK, three duplicate ACKs with NewReno) may enter Recovery (`ssthresh`, then
//!   `set_state(Recovery)`); in Recovery the window follows PRR (RFC 6937, Linux
//!   `tcp_cwnd_reduction`) and becomes `ssthresh` when Recovery ends
//!   (`tcp_end_cwnd_reduction`, `CompleteCwr`, `set_state(Open)`); outside Recovery,
//!   `cong_avoid` runs on every ACK that advances `snd_una`;
//! - on a retransmission timeout, `tcp_enter_loss`: `ssthresh`, `cwnd_event(Loss)`,
//!   cwnd = 1, `set_state(Loss)`, everything outstanding marked lost, slow start again;
//! - on the first transmission after idle, `cwnd_event(TxStart)` and, after more than an
//!   RTO of idle, Linux's window restart (`tcp_cwnd_restart`, RFC 2861).
//!
//! Not modelled: spurious-retransmission undo (no timestamps or D-SACK), F-RTO, RACK-TLP,
//! TSO/pacing. Algorithms without fast recovery (Tahoe) treat a fast retransmit like a
//! timeout without the backoff.

use cubiclab_cc::{AckSample, Algorithm, CaEvent, CaState, CongestionControl, TcpState};

use super::rtt::RttEstimator;
use super::scoreboard::{Scoreboard, DUPTHRESH};
use crate::engine::Time;
use crate::packet::NO_SACK;

/// Loss recovery flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// SACK-based recovery (RFC 6675 loss rule, Linux scoreboard).
    Sack,
    /// NewReno (RFC 6582): duplicate ACKs only; one hole repaired per partial ACK.
    NewReno,
}

#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub recovery: Recovery,
    pub min_rto_ns: u64,
    /// Receiver window in segments.
    pub rwnd: u32,
    pub initial_cwnd: u32,
    /// Initial ssthresh; `None` is Linux's infinite threshold.
    pub initial_ssthresh: Option<u32>,
}

/// Counters of one sender, for results.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub loss_events: u64,
    pub rtt_samples: u64,
    /// Window just before the last congestion event.
    pub last_loss_cwnd: u32,
}

pub struct Sender {
    pub alg: Algorithm,
    pub tcp: TcpState,
    pub sb: Scoreboard,
    pub rtt: RttEstimator,
    cfg: SenderConfig,
    /// `snd_nxt` when the current Recovery or Loss began.
    high_seq: u32,
    /// RACK: latest transmission time of any delivered segment.
    rack_tx: Time,
    prr_delivered: u32,
    prr_out: u32,
    /// Segments the application has handed over in total (`u32::MAX`: unlimited).
    pub app_limit: u32,
    /// Timer deadline (0: off) and the time of its pending heap entry (0: none).
    pub rto_deadline: Time,
    pub rto_queued: Time,
    /// The last RTT sample given to the algorithm, microseconds (for recording).
    pub last_rtt_us: i64,
    pub stats: SenderStats,
    started: bool,
}

#[inline]
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl Sender {
    pub fn new(alg: Algorithm, cfg: SenderConfig, mss: u32) -> Self {
        let tcp = TcpState {
            cwnd: cfg.initial_cwnd.max(1),
            ssthresh: cfg.initial_ssthresh.unwrap_or(cubiclab_cc::tcp::TCP_INFINITE_SSTHRESH),
            mss,
            ..TcpState::default()
        };
        let rtt = RttEstimator::new(cfg.min_rto_ns);
        Self {
            alg,
            tcp,
            sb: Scoreboard::new(),
            rtt,
            cfg,
            high_seq: 0,
            rack_tx: 0,
            prr_delivered: 0,
            prr_out: 0,
            app_limit: u32::MAX,
            rto_deadline: 0,
            rto_queued: 0,
            last_rtt_us: -1,
            stats: SenderStats::default(),
            started: false,
        }
    }

    /// A new connection in the same slot with a fresh algorithm: keeps the scoreboard's
    /// memory, the pending timer entry and the cumulative statistics.
    pub fn reset(&mut self, alg: Algorithm, app_limit: u32) {
        let mut sb = std::mem::take(&mut self.sb);
        sb.clear();
        let (stats, queued) = (self.stats, self.rto_queued);
        *self = Sender::new(alg, self.cfg.clone(), self.tcp.mss);
        self.sb = sb;
        self.stats = stats;
        self.rto_queued = queued;
        self.app_limit = app_limit;
    }

    /// The connection is established: the algorithm's `init`.
    pub fn start(&mut self, now: Time) {
        self.alg.init(&mut self.tcp, now);
        self.tcp.lsndtime_ns = now;
        self.started = true;
    }

    pub fn started(&self) -> bool {
        self.started
    }

    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.tcp.snd_nxt.wrapping_sub(self.tcp.snd_una)
    }

    /// Linux `tcp_packets_in_flight`: sent, minus SACKed and lost, plus retransmitted.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.sb.retrans_out).saturating_sub(self.sb.sacked_out + self.sb.lost_out)
    }

    /// Everything the application handed over has been acknowledged.
    pub fn finished(&self) -> bool {
        self.app_limit != u32::MAX && self.tcp.snd_una == self.app_limit
    }

    /// Process an ACK. Returns the number of segments newly delivered to the receiver.
    pub fn on_ack(&mut self, now: Time, cum: u32, sack: u32) -> u32 {
        if before(cum, self.tcp.snd_una) || before(self.tcp.snd_nxt, cum) {
            return 0; // old or impossible ACK
        }
        let una = self.tcp.snd_una;
        let prior_in_flight = self.in_flight();
        let acked = self.sb.cum_ack(una, cum);
        let advanced = acked.acked > 0;
        if advanced {
            self.sb.trim_retransmits(cum);
            if let Some(t) = acked.latest_tx {
                self.sb.detect_lost_retransmits(t);
            }
        }
        self.tcp.snd_una = cum;
        let mut delivered = acked.newly_delivered;
        let mut rtt_from = acked.last_sent;
        let mut rack_tx = acked.latest_tx;

        match self.cfg.recovery {
            Recovery::Sack => {
                if sack != NO_SACK && !before(sack, cum) && before(sack, self.tcp.snd_nxt) {
                    let (new, sent) = self.sb.sack(sack);
                    if new {
                        delivered += 1;
                        if let Some(t) = sent {
                            rtt_from = Some(rtt_from.map_or(t, |r: Time| r.max(t)));
                            rack_tx = Some(rack_tx.map_or(t, |r: Time| r.max(t)));
                        }
                    }
                }
                // Linux tcp_rack_reo_wnd: no reordering window once in Recovery or past
                // DupThresh (the simulated paths never reorder).
                let rack = if self.tcp.ca_state >= CaState::Recovery || self.sb.sacked_out >= DUPTHRESH {
                    rack_tx.map(|t| t.max(self.rack_tx))
                } else {
                    None
                };
                if let Some(t) = rack_tx {
                    self.rack_tx = self.rack_tx.max(t);
                }
                self.sb.mark_losses_sack(self.tcp.snd_nxt, rack);
            }
            Recovery::NewReno => {
                // Linux tcp_add_reno_sack / tcp_remove_reno_sacks: duplicate ACKs stand for
                // segments that left the network.
                if advanced {
                    // Segments already counted as delivered by their duplicate ACKs.
                    let drop = (acked.acked - 1).min(self.sb.sacked_out);
                    self.sb.sacked_out -= drop;
                    delivered -= drop;
                } else if self.packets_out() > 0 {
                    self.sb.sacked_out = (self.sb.sacked_out + 1).min(self.packets_out() - 1);
                    delivered += 1;
                }
            }
        }

        // RTT: the RFC 6298 estimator from the oldest segment, the algorithm from the newest.
        if let Some(t) = acked.first_sent {
            self.rtt.sample(now - t);
        }
        let rtt_us = rtt_from.map_or(-1, |t| ((now - t) / 1000) as i64);
        if rtt_us >= 0 {
            self.stats.rtt_samples += 1;
            self.last_rtt_us = rtt_us;
        }
        self.tcp.srtt_us = (self.rtt.srtt / 1000) as u32;
        self.update_pacing_rate();
        let sample = AckSample { pkts_acked: acked.acked, rtt_us, in_flight: prior_in_flight };
        self.alg.pkts_acked(&mut self.tcp, &sample, now);

        self.fastretrans_alert(now, advanced);

        if self.tcp.ca_state == CaState::Recovery {
            self.prr_reduction(delivered, advanced);
        } else if advanced && delivered > 0 {
            // Linux tcp_cong_avoid(sk, ack, acked_sacked): segments newly delivered.
            self.alg.cong_avoid(&mut self.tcp, delivered, now);
        }

        // Re-arm the timer on forward progress (Linux tcp_rearm_rto).
        if advanced {
            self.rto_deadline = if self.packets_out() > 0 { now + self.rtt.rto() } else { 0 };
        }
        delivered
    }

    /// Linux `tcp_update_pacing_rate`: the rate the stack would pace at (200% of cwnd/srtt
    /// in slow start, 120% after), which CUBIC's HyStart reads for its ACK-train threshold.
    /// No packet is actually paced (no fq here, as on the kernel the papers used).
    fn update_pacing_rate(&mut self) {
        if self.tcp.srtt_us == 0 {
            return;
        }
        let ratio = if self.tcp.cwnd < self.tcp.ssthresh / 2 { 200 } else { 120 };
        let pkts = self.tcp.cwnd.max(self.packets_out()) as u64;
        self.tcp.pacing_rate = self.tcp.mss as u64 * pkts * 1_000_000 / self.tcp.srtt_us as u64 * ratio / 100;
    }

    /// Linux `tcp_fastretrans_alert`, reduced to the states modelled here.
    fn fastretrans_alert(&mut self, now: Time, advanced: bool) {
        match self.tcp.ca_state {
            CaState::Recovery | CaState::Loss if !before(self.tcp.snd_una, self.high_seq) => {
                if self.tcp.ca_state == CaState::Recovery {
                    // tcp_end_cwnd_reduction
                    self.tcp.cwnd = self.tcp.ssthresh;
                    self.alg.cwnd_event(&mut self.tcp, CaEvent::CompleteCwr, now);
                }
                self.set_state(CaState::Open, now);
                self.fastretrans_alert(now, advanced);
            }
            CaState::Recovery => {
                if self.cfg.recovery == Recovery::NewReno && advanced {
                    // Partial ACK: the new head is the next hole.
                    self.sb.mark_lost(self.tcp.snd_una);
                }
            }
            CaState::Loss => {}
            _ => {
                let loss = match self.cfg.recovery {
                    Recovery::Sack => self.sb.lost_out > 0,
                    Recovery::NewReno => self.sb.sacked_out >= DUPTHRESH && self.sb.mark_lost(self.tcp.snd_una),
                };
                if loss {
                    self.enter_recovery(now);
                }
            }
        }
    }

    fn set_state(&mut self, s: CaState, now: Time) {
        self.alg.set_state(&mut self.tcp, s, now);
        self.tcp.ca_state = s;
    }

    /// Linux `tcp_enter_recovery` and `tcp_init_cwnd_reduction`.
    fn enter_recovery(&mut self, now: Time) {
        self.stats.loss_events += 1;
        self.stats.last_loss_cwnd = self.tcp.cwnd;
        if !self.alg.fast_recovery() {
            self.enter_loss(now, false);
            return;
        }
        self.tcp.prior_ssthresh = self.tcp.current_ssthresh();
        self.high_seq = self.tcp.snd_nxt;
        self.tcp.cwnd_cnt = 0;
        self.tcp.prior_cwnd = self.tcp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tcp.ssthresh = self.alg.ssthresh(&self.tcp, now);
        self.set_state(CaState::Recovery, now);
    }

    /// Linux `tcp_cwnd_reduction` (PRR, RFC 6937).
    fn prr_reduction(&mut self, newly_acked_sacked: u32, advanced: bool) {
        if newly_acked_sacked == 0 || self.tcp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight();
        let delta = self.tcp.ssthresh as i64 - in_flight as i64;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.tcp.ssthresh as u64 * self.prr_delivered as u64 + self.tcp.prior_cwnd as u64 - 1;
            (dividend / self.tcp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if advanced {
                s += 1;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tcp.cwnd = (in_flight as i64 + sndcnt).max(1) as u32;
    }

    /// Linux `tcp_enter_loss` (a timeout, or a Tahoe fast retransmit when `timeout` is false).
    fn enter_loss(&mut self, now: Time, timeout: bool) {
        if self.tcp.ca_state != CaState::Loss || !timeout {
            self.tcp.prior_ssthresh = self.tcp.current_ssthresh();
            self.tcp.prior_cwnd = self.tcp.cwnd;
            self.tcp.ssthresh = self.alg.ssthresh(&self.tcp, now);
            self.alg.cwnd_event(&mut self.tcp, CaEvent::Loss, now);
        }
        let (una, nxt) = (self.tcp.snd_una, self.tcp.snd_nxt);
        self.sb.mark_all_lost(una, nxt);
        self.tcp.cwnd = self.in_flight() + 1;
        self.tcp.cwnd_cnt = 0;
        self.high_seq = nxt;
        self.set_state(CaState::Loss, now);
    }

    /// The retransmission timer fired at `now` (the caller checked the deadline).
    pub fn on_rto(&mut self, now: Time) {
        self.rto_deadline = 0;
        if self.packets_out() == 0 {
            return;
        }
        self.stats.timeouts += 1;
        if self.tcp.ca_state != CaState::Loss {
            self.stats.loss_events += 1;
            self.stats.last_loss_cwnd = self.tcp.cwnd;
        }
        self.enter_loss(now, true);
        self.rtt.backoff += 1;
        self.rto_deadline = now + self.rtt.rto();
    }

    /// The next segment to transmit now, if the window and the data allow one: a lost
    /// segment first, then new data. Returns (segment, is_retransmission).
    #[inline]
    pub fn next_segment(&mut self, now: Time) -> Option<(u32, bool)> {
        if !self.started {
            return None;
        }
        let in_flight = self.in_flight();
        if in_flight >= self.tcp.cwnd {
            self.tcp.cwnd_limited = true;
            return None;
        }
        let (una, nxt) = (self.tcp.snd_una, self.tcp.snd_nxt);
        if let Some(seq) = self.sb.next_retransmit(una, nxt) {
            self.sb.on_send(seq, now, true);
            self.after_send(now, true);
            if seq == una {
                // Linux tcp_xmit_retransmit_queue: retransmitting the head restarts the timer.
                self.rto_deadline = now + self.rtt.rto();
            }
            return Some((seq, true));
        }
        let window_ok = nxt.wrapping_sub(una) < self.cfg.rwnd;
        if nxt == self.app_limit || !window_ok {
            // Application- or receiver-limited: Linux tcp_is_cwnd_limited's slow-start rule.
            self.tcp.cwnd_limited = self.tcp.in_slow_start() && self.tcp.cwnd < 2 * self.packets_out();
            return None;
        }
        if self.packets_out() == 0 {
            self.restart_after_idle(now);
        }
        self.sb.reserve(una, nxt.wrapping_add(1));
        self.sb.on_send(nxt, now, false);
        self.tcp.snd_nxt = nxt.wrapping_add(1);
        self.after_send(now, false);
        Some((nxt, false))
    }

    #[inline]
    fn after_send(&mut self, now: Time, retransmit: bool) {
        self.stats.segments_sent += 1;
        if retransmit {
            self.stats.retransmits += 1;
        }
        if self.tcp.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
        self.tcp.lsndtime_ns = now;
        if self.rto_deadline == 0 {
            self.rto_deadline = now + self.rtt.rto();
        }
    }

    /// First transmission with nothing in flight: `CA_EVENT_TX_START`, and Linux's window
    /// restart after more than an RTO of idle (`tcp_slow_start_after_idle_check`).
    fn restart_after_idle(&mut self, now: Time) {
        if self.stats.segments_sent == 0 {
            return;
        }
        let idle = now.saturating_sub(self.tcp.lsndtime_ns);
        let rto = self.rtt.rto();
        if idle > rto {
            self.alg.cwnd_event(&mut self.tcp, CaEvent::CwndRestart, now);
            let restart = self.cfg.initial_cwnd.min(self.tcp.cwnd);
            self.tcp.ssthresh = self.tcp.current_ssthresh();
            let mut d = idle as i64 - rto as i64;
            while d > 0 && self.tcp.cwnd > restart {
                self.tcp.cwnd >>= 1;
                d -= rto as i64;
            }
            self.tcp.cwnd = self.tcp.cwnd.max(restart);
        }
        self.alg.cwnd_event(&mut self.tcp, CaEvent::TxStart, now);
    }
}
