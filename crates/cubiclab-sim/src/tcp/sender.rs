//! The sending end of a bulk TCP flow: the scoreboard's loss detection and the
//! transmission queue around a [`Host`], which holds Linux's TCP around the algorithm
//! (Recovery, Loss, PRR, cwnd validation, the RTO estimator, the hook order) shared with the
//! replay driver. Per ACK, in `tcp_ack`'s order:
//!
//! - the cumulative ACK and the SACK update the scoreboard; retransmissions sent before a
//!   segment now delivered are lost (RACK on retransmissions);
//! - `snd_una` moves, the RTT estimator takes the oldest never-retransmitted segment newly
//!   ACKed (else SACKed), `pkts_acked` gets the newest (`tcp_clean_rtx_queue`);
//! - loss detection (RACK with SACK, `rack.rs`; three duplicate ACKs with NewReno) may
//!   enter Recovery; a hole still inside RACK's reordering window arms the reorder timer,
//!   whose expiry marks it and enters Recovery (`tcp_rack_reo_timeout`); Recovery and Loss
//!   end once `snd_una` reaches `high_seq` (`tcp_fastretrans_alert`);
//! - the delivery-rate sample (`tcp_rate_gen`, [`cubiclab_cc::host::rate`]) from the
//!   newest segment delivered, whose transmission stamp the scoreboard keeps;
//! - PRR in Recovery, `cong_avoid` otherwise, or the algorithm's own `cong_control` with
//!   the rate sample (`tcp_cong_control`).
//!
//! A paced algorithm (BBR) sends in TSO bursts at its `sk_pacing_rate`
//! ([`cubiclab_cc::host::pacing`]); while the next departure time lies ahead the sender
//! waits for `pace_deadline` (the kernel's pacing timer).
//!
//! A timeout marks what RACK's timer has expired for lost and enters Loss
//! (`tcp_retransmit_timer`, `tcp_timeout_mark_lost`);
//! the first transmission after idle restarts the window (`tcp_cwnd_restart`).
//!
//! New data leaves in TSO packets of `tcp_tso_autosize` segments; the last segment of each
//! full packet carries PSH ([`Segment::push`]), which the receiver ACKs at once.
//!
//! In Open with SACK the timer first stands for a tail loss probe (`tlp.rs`).
//!
//! After a timeout, F-RTO (`frto.rs`) tells a spurious one and undoes it.
//!
//! Undo (`tcp_try_undo_*`): D-SACKs that cover every retransmission since the reduction
//! began (`undo_retrans` reaching 0), or an ACK echoing a timestamp older than the first
//! retransmission (Eifel, `tcp_packet_delayed`), gives the window back through the
//! algorithm's `undo_cwnd`. Every segment carries the timestamp option (12 bytes, counted
//! in the simulator's 52-byte header, as on the testbed whose kernel has `tcp_timestamps`
//! on); its echo also gives an RTT sample when Karn forbids one (`tcp_ack_update_rtt`).
//!
//! Not modelled: `tcp_tso_should_defer`, pacing by the `fq` qdisc. Algorithms without fast recovery (Tahoe)
//! treat a fast retransmit like a timeout without the backoff.

use cubiclab_cc::clock::TESTBED_JIFFY_NS;
use cubiclab_cc::host::pacing::{tso_segs, Pacer, TCP_MIN_TSO_SEGS};
use cubiclab_cc::host::rate::{Delivered, RateEstimator};
use cubiclab_cc::host::rtt::RttEstimator;
use cubiclab_cc::host::{Host, PrrAck, RecoveryEnd};
use cubiclab_cc::{AckSample, Algorithm, CaState, CongestionControl, TcpState};

use super::frto::{Frto, FrtoStep, LossAck};
use super::rack::Rack;
use super::scoreboard::{Scoreboard, DUPTHRESH};
use super::tlp::Tlp;
use crate::engine::Time;
use crate::packet::SackBlocks;

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
    /// The receiver's window in the SYN-ACK, in segments: what may be sent before the
    /// first ACK brings its own (`update_window`).
    pub rwnd: u32,
    pub initial_cwnd: u32,
    /// Initial ssthresh; `None` is Linux's infinite threshold.
    pub initial_ssthresh: Option<u32>,
    /// Tail loss probes (Linux `net.ipv4.tcp_early_retrans` >= 3, the default).
    pub loss_probes: bool,
    /// F-RTO (Linux `net.ipv4.tcp_frto`, 2 by default).
    pub frto: bool,
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

/// A segment [`Sender::next_segment`] lets out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u32,
    pub retransmit: bool,
    /// It carries the PSH flag (the last of a full TSO packet of new data).
    pub push: bool,
}

pub struct Sender {
    /// The algorithm and Linux's TCP state around it.
    pub host: Host,
    pub sb: Scoreboard,
    cfg: SenderConfig,
    /// RACK's state (`tp->rack`, `tcp_min_rtt`).
    rack: Rack,
    /// What the retransmission timer (`rto_deadline`) stands for (`icsk_pending`).
    timer: XmitTimer,
    /// The tail loss probe outstanding, and whether one is due to leave now.
    tlp: Tlp,
    probe_due: bool,
    /// An ACK armed the timer for a probe (`tcp_set_xmit_timer`) whose deadline is computed
    /// at the end of the transmissions that follow (`end_burst`): new data among them
    /// re-arms the probe there anyway (`tcp_schedule_loss_probe(sk, false)`, last in Linux
    /// too), so the ACK's computation is skipped most of the time. True only between an
    /// ACK and the end of the transmissions after it.
    probe_on_ack: bool,
    /// F-RTO (`tp->frto`), and its step 2b pending: new data before retransmissions.
    frto: Frto,
    frto_new_data: bool,
    /// Segments the application has handed over in total (`u32::MAX`: unlimited).
    pub app_limit: u32,
    /// The receive window's right edge (`tcp_wnd_end`: `snd_una + snd_wnd`), in segments:
    /// a segment below it may be sent (`tcp_snd_wnd_test`).
    wnd_end: u32,
    /// Timer deadline (0: off) and the time of its pending heap entry (0: none).
    pub rto_deadline: Time,
    pub rto_queued: Time,
    /// Pacing: the departure time the sender waits for (0: not waiting), and the time of
    /// its pending heap entry (0: none).
    pub pace_deadline: Time,
    pub pace_queued: Time,
    pacer: Pacer,
    /// The last RTT sample given to the algorithm, microseconds (for recording).
    pub last_rtt_us: i64,
    pub stats: SenderStats,
    started: bool,
    /// Segments sent since the window was last validated (one `tcp_write_xmit` call), and
    /// whether new data was among them.
    sent_in_burst: bool,
    new_in_burst: bool,
    /// Segments the TSO packet being sent may still take (0: none open in this
    /// `tcp_write_xmit`).
    tso_left: u32,
    /// `tcp_highest_sack_seq` while segments are SACKed: the end of the highest.
    highest_sack: u32,
    /// `recv_sack_cache`: the previous ACK's valid blocks, already processed.
    sack_cache: SackBlocks,
    /// `tp->dsack_dups`: segments D-SACKed so far.
    dsack_dups: u64,
}

/// What one ACK's SACK option told (`struct tcp_sacktag_state` and its flags).
#[derive(Clone, Copy, Debug, Default)]
struct SackTag {
    /// Segments newly SACKed, plus D-SACKed duplicates (`sack_delivered`).
    delivered: u32,
    /// Something was newly SACKed (`FLAG_DATA_SACKED`).
    newly_sacked: bool,
    /// A never-retransmitted segment below `high_seq` was (S)ACKed (`FLAG_ORIG_SACK_ACKED`).
    orig_acked: bool,
    /// Send times of the first and last never-retransmitted segments newly SACKed.
    first_sackt: Option<Time>,
    last_sackt: Option<Time>,
    /// The lowest segment delivered out of order (`state->reord`).
    reord: Option<u32>,
    /// The D-SACK was for a tail loss probe (`FLAG_DSACK_TLP`).
    dsack_probe: bool,
}

impl SackTag {
    #[inline]
    fn reorder_at(&mut self, seq: u32) {
        if self.reord.is_none_or(|r| before(seq, r)) {
            self.reord = Some(seq);
        }
    }
}

/// The events Linux's one retransmission timer stands for (`icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XmitTimer {
    /// `ICSK_TIME_RETRANS`: the retransmission timeout.
    Rto,
    /// `ICSK_TIME_REO_TIMEOUT`: RACK's reorder timer.
    ReoTimeout,
    /// `ICSK_TIME_LOSS_PROBE`: the tail loss probe.
    LossProbe,
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
        // Timeouts are whole jiffies of the testbed's kernel.
        let rtt = RttEstimator::new(cfg.min_rto_ns / 1000, TESTBED_JIFFY_NS / 1000);
        Self {
            host: Host::new(alg, tcp, rtt),
            sb: Scoreboard::new(),
            wnd_end: cfg.rwnd,
            cfg,
            rack: Rack::default(),
            timer: XmitTimer::Rto,
            tlp: Tlp::default(),
            probe_due: false,
            probe_on_ack: false,
            frto: Frto::default(),
            frto_new_data: false,
            app_limit: u32::MAX,
            rto_deadline: 0,
            rto_queued: 0,
            pace_deadline: 0,
            pace_queued: 0,
            pacer: Pacer::default(),
            last_rtt_us: -1,
            stats: SenderStats::default(),
            started: false,
            sent_in_burst: false,
            new_in_burst: false,
            tso_left: 0,
            highest_sack: 0,
            sack_cache: SackBlocks::NONE,
            dsack_dups: 0,
        }
    }

    /// The window state (`snd_cwnd`, `snd_ssthresh`, `snd_una`, ...).
    #[inline]
    pub fn tcp(&self) -> &TcpState {
        &self.host.tcp
    }

    /// Smoothed RTT, microseconds (0 before the first sample).
    #[inline]
    pub fn srtt_us(&self) -> u64 {
        self.host.rtt.srtt_us()
    }

    /// The current retransmission timeout in nanoseconds.
    #[inline]
    fn rto(&self) -> Time {
        self.host.rtt.rto_us() * 1000
    }

    /// A new connection in the same slot with a fresh algorithm: keeps the scoreboard's
    /// memory, the pending timer entry and the cumulative statistics.
    pub fn reset(&mut self, alg: Algorithm, app_limit: u32) {
        let mut sb = std::mem::take(&mut self.sb);
        sb.clear();
        let (stats, queued, pace_queued) = (self.stats, self.rto_queued, self.pace_queued);
        *self = Sender::new(alg, self.cfg.clone(), self.host.tcp.mss);
        self.sb = sb;
        self.stats = stats;
        self.rto_queued = queued;
        self.pace_queued = pace_queued;
        self.app_limit = app_limit;
    }

    /// The connection is established: the algorithm's `init`.
    pub fn start(&mut self, now: Time) {
        self.host.init(now);
        self.started = true;
        // The application's first write (`tcp_sendmsg`) finds nothing queued yet.
        let (in_flight, lost_out, retrans_out) = (self.in_flight(), self.sb.lost_out, self.sb.retrans_out);
        RateEstimator::check_app_limited(&mut self.host.tcp, 0, in_flight, lost_out, retrans_out);
    }

    pub fn started(&self) -> bool {
        self.started
    }

    /// An ACK for everything below `ack` carried a window of `segments` beyond it
    /// (`tcp_ack_update_window`; the receiver never moves the right edge back).
    #[inline]
    pub fn update_window(&mut self, ack: u32, segments: u32) {
        self.wnd_end = ack.wrapping_add(segments);
    }

    /// Whether the receive window lets segment `seq` out (`tcp_snd_wnd_test`).
    #[inline]
    fn window_allows(&self, seq: u32) -> bool {
        before(seq, self.wnd_end)
    }

    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.host.packets_out()
    }

    /// Linux `tcp_packets_in_flight`: sent, minus SACKed and lost, plus retransmitted.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.sb.retrans_out).saturating_sub(self.sb.sacked_out + self.sb.lost_out)
    }

    /// Everything the application handed over has been acknowledged.
    pub fn finished(&self) -> bool {
        self.app_limit != u32::MAX && self.host.tcp.snd_una == self.app_limit
    }

    /// `tcp_time_stamp_ts`: the TSval of a segment sent at `now`, in milliseconds (Linux's
    /// clock for the option); the 1 added stands for the connection's random offset, which
    /// keeps a real echo from reading 0 ("no echo").
    #[inline]
    pub fn ts_val(now: Time) -> u32 {
        (now / 1_000_000) as u32 + 1
    }

    /// `tcp_highest_sack_seq`: the end of the highest SACKed segment (`snd_una` with none).
    #[inline]
    fn fack(&self) -> u32 {
        if self.sb.sacked_out == 0 {
            self.host.tcp.snd_una
        } else {
            self.highest_sack
        }
    }

    /// Process an ACK of `cum` with SACK blocks `sack` echoing timestamp `tsecr` (0: none).
    /// Returns the number of segments newly delivered to the receiver.
    // Inlined into its one caller in the event loop (a saving of its entry and exit per ACK).
    #[inline(always)]
    pub fn on_ack(&mut self, now: Time, cum: u32, sack: &SackBlocks, tsecr: u32) -> u32 {
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        if before(cum, una) || before(nxt, cum) {
            return 0; // old or impossible ACK
        }
        let prior_in_flight = self.in_flight();
        let prior_fack = self.fack();
        let lost_before = self.sb.lost_marked;
        self.host.rate.begin_ack();
        let acked = self.sb.cum_ack(una, cum);
        if acked.latest_tx.is_some() {
            self.rate_delivered(acked.latest_seq);
        }
        let advanced = self.host.ack_snd_una(cum);
        if advanced {
            self.sb.trim_retransmits(cum);
            if let Some(t) = acked.latest_tx {
                self.sb.detect_lost_retransmits(t);
            }
            // tcp_clean_rtx_queue: a never-retransmitted hole filled below what was
            // SACKed before is reordering.
            if let Some(low) = acked.first_orig {
                self.rack.check_reordering(low, prior_fack);
            }
        }
        let mut delivered = acked.newly_delivered;
        let high = self.host.high_seq;
        let mut tag = SackTag { orig_acked: acked.first_orig.is_some_and(|s| before(s, high)), ..SackTag::default() };
        let sacked = self.cfg.recovery == Recovery::Sack && sack.len > 0;

        match self.cfg.recovery {
            Recovery::Sack => {
                if sacked {
                    self.sacktag(now, una, sack, &mut tag);
                    delivered += tag.delivered;
                }
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
                    // tcp_limit_reno_sacked: SACKed and lost together fit in what is out.
                    let holes = self.sb.lost_out.max(1).min(self.packets_out());
                    let sacked = (self.sb.sacked_out + 1).min(self.packets_out() - holes);
                    delivered += sacked.saturating_sub(self.sb.sacked_out);
                    self.sb.sacked_out = sacked;
                }
            }
        }

        // tcp_clean_rtx_queue advances RACK by the cumulatively ACKed segments' latest
        // transmission, with or without SACK (RACK's RTT also spares recent segments at a
        // timeout, tcp_timeout_mark_lost).
        if let Some(t) = acked.latest_tx {
            self.rack.advance(now, t, cum.wrapping_sub(1), acked.last_sent != Some(t));
        }

        // tcp_clean_rtx_queue / tcp_ack_update_rtt: the estimator from the oldest segment
        // newly ACKed unless a retransmission was among them (Karn), else the oldest newly
        // SACKed, else (RTTM) the timestamp echo of an ACK that acknowledged data; the
        // algorithm gets the newest (ca_rtt_us).
        let (mut seq_rtt, mut ca_rtt) = match acked.retrans_acked {
            false => (acked.first_sent.map(|t| now - t), acked.last_sent.map(|t| now - t)),
            true => (None, None),
        };
        if let Some(t) = tag.last_sackt {
            ca_rtt = Some(ca_rtt.map_or(now - t, |r: Time| r.min(now - t)));
        }
        seq_rtt = seq_rtt.or(tag.first_sackt.map(|t| now - t));
        if seq_rtt.is_none() && tsecr != 0 && acked.acked > 0 {
            let ms = Self::ts_val(now).wrapping_sub(tsecr).max(1) as Time;
            seq_rtt = Some(ms * 1_000_000);
            ca_rtt = seq_rtt;
        }
        let rtt_us = ca_rtt.map_or(-1, |r| (r / 1000) as i64);
        if let Some(r) = seq_rtt {
            self.host.update_rtt_min(rtt_us as u64, now);
            self.host.rtt_sample(r / 1000);
        }
        if let Some(r) = ca_rtt {
            self.stats.rtt_samples += 1;
            self.last_rtt_us = rtt_us;
            self.rack.update_min_rtt(r);
        }
        let sample = AckSample { pkts_acked: acked.acked, rtt_us, in_flight: prior_in_flight };
        self.host.pkts_acked(&sample, now);

        let delivered_now = self.host.tcp.delivered.wrapping_add(delivered);
        self.rack.update_reo_wnd(self.host.rate.prior_delivered(), delivered_now);
        // tcp_ack_is_dubious: only an ACK with SACK information, or one outside Open, goes
        // through tcp_fastretrans_alert and so RACK (tcp_identify_packet_loss).
        if self.tlp.on_ack(cum, advanced, tag.newly_sacked, tag.dsack_probe) {
            self.stats.loss_events += 1;
            self.stats.last_loss_cwnd = self.host.tcp.cwnd;
            self.host.reduce_after_probe(now);
        }
        let mut reo_timer = None;
        if self.cfg.recovery == Recovery::Sack
            && (sacked || self.sb.sacked_out > 0 || self.host.tcp.ca_state != CaState::Open)
            && self.rack.take_advanced()
        {
            reo_timer = self.rack_detect_loss(now);
        }
        if self.cfg.recovery == Recovery::Sack && self.host.alert_only_tries_to_open(self.sb.lost_out > 0) {
            // Most ACKs: the host's rule says the alert is tcp_try_to_open alone, so its
            // summary of the ACK need not be built (with NewReno, duplicate ACKs decide).
            self.try_to_open();
        } else {
            let loss_ack = LossAck {
                advanced,
                sacked: tag.newly_sacked,
                orig_acked: tag.orig_acked,
                recovered: !before(self.host.tcp.snd_una, self.host.high_seq),
                new_data_sent: before(self.host.high_seq, self.host.tcp.snd_nxt),
            };
            self.fastretrans_alert(now, una, loss_ack, tsecr);
        }

        let newly_lost = (self.sb.lost_marked - lost_before) as u32;
        let tcp = &mut self.host.tcp;
        tcp.delivered = delivered_now;
        tcp.lost = self.sb.lost_marked as u32;
        let rs = self.host.rate.gen(tcp, delivered, newly_lost, now / 1000, prior_in_flight, rtt_us);
        let ack = PrrAck { newly_acked_sacked: delivered, newly_lost, una_advanced: advanced };
        let in_flight = self.in_flight();
        self.host.cong_control(ack, &rs, in_flight, now);
        self.host.update_pacing_rate();

        if let Some(t) = reo_timer {
            // tcp_rack_mark_lost armed the reorder timer in place of the RTO.
            self.rto_deadline = now + t;
            self.timer = XmitTimer::ReoTimeout;
        } else if advanced {
            // tcp_set_xmit_timer: a probe if one may be scheduled, else tcp_rearm_rto.
            if self.may_schedule_loss_probe() {
                self.probe_on_ack = true;
                self.timer = XmitTimer::LossProbe;
            } else {
                self.rto_deadline = if self.packets_out() > 0 { now + self.rto() } else { 0 };
                self.timer = XmitTimer::Rto;
            }
        }
        delivered
    }

    /// `tcp_sacktag_write_queue` for the SACK option of an ACK that found `snd_una` at
    /// `prior_una`: a D-SACK first (`tcp_check_dsack`), then the valid blocks in sequence
    /// order, each segment not yet SACKed tagged once (`tcp_sacktag_one`). Parts the
    /// previous ACK's blocks already covered are skipped (`recv_sack_cache`), so an ACK
    /// costs the segments it newly SACKs, not the size of its blocks.
    fn sacktag(&mut self, now: Time, prior_una: u32, opt: &SackBlocks, tag: &mut SackTag) {
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        let blocks = opt.as_slice();
        if self.sb.sacked_out == 0 {
            // tcp_highest_sack_reset; the cache describes nothing still SACKed.
            self.highest_sack = una;
            self.sack_cache = SackBlocks::NONE;
        }
        let (s0, e0) = blocks[0];
        // tcp_check_dsack: block 0 below the cumulative ACK, or inside block 1.
        let dsack = before(s0, una) || (blocks.len() > 1 && !before(s0, blocks[1].0) && !before(blocks[1].1, e0));
        let mut first = 0;
        if dsack {
            let dup_segs = self.dsack_seen(s0, e0, tag);
            if dup_segs > 0 {
                first = 1;
                if !before(prior_una, e0) {
                    // D-SACK for data already acknowledged: "dumb counting".
                    self.host.dsacked(e0, dup_segs);
                } else if before(una, s0) && !before(nxt, e0) {
                    let mut seq = s0;
                    while seq != e0 {
                        self.sacktag_one(now, seq, true, tag);
                        seq = seq.wrapping_add(1);
                    }
                }
            }
        }
        // tcp_is_sackblock_valid, then the blocks in sequence order.
        let mut used = SackBlocks::NONE;
        for &(s, e) in &blocks[first..] {
            if before(una, s) && before(s, e) && !before(nxt, e) {
                used.push(s, e);
            }
        }
        used.blocks[..used.len as usize].sort_unstable_by_key(|&(s, _)| s.wrapping_sub(una));
        let cache = self.sack_cache;
        for &(s, e) in used.as_slice() {
            let mut seq = s;
            while seq != e {
                if let Some(&(_, ce)) = cache.as_slice().iter().find(|&&(cs, ce)| !before(seq, cs) && before(seq, ce)) {
                    // Already processed for an earlier ACK: jump past the cached block.
                    seq = if before(ce, e) { ce } else { e };
                    continue;
                }
                self.sacktag_one(now, seq, false, tag);
                seq = seq.wrapping_add(1);
            }
        }
        self.sack_cache = used;
        // tcp_sacktag_write_queue's end: reordering, except in Loss with nothing to undo.
        if self.host.tcp.ca_state != CaState::Loss || self.host.undo_marker.is_some() {
            let fack = self.fack();
            self.rack.check_reordering(tag.reord.unwrap_or(nxt), fack);
        }
    }

    /// `tcp_dsack_seen`: the segments the D-SACK `[start, end)` reports twice, or 0 if it
    /// is dubious (empty, wider than the window, or more duplicates than retransmissions).
    fn dsack_seen(&mut self, start: u32, end: u32, tag: &mut SackTag) -> u32 {
        let dup_segs = end.wrapping_sub(start);
        if !before(start, end) || dup_segs > self.cfg.rwnd {
            return 0;
        }
        let probe = dup_segs == 1 && self.tlp.high_seq == Some(end);
        self.dsack_dups += dup_segs as u64;
        if self.dsack_dups > self.stats.retransmits {
            return 0;
        }
        self.rack.dsack(probe);
        tag.dsack_probe = probe;
        // A spurious retransmission is delivered.
        tag.delivered += dup_segs;
        dup_segs
    }

    /// `tcp_sacktag_one` for segment `seq` (`dup`: inside a D-SACK).
    #[inline]
    fn sacktag_one(&mut self, now: Time, seq: u32, dup: bool, tag: &mut SackTag) {
        let retransmitted = self.sb.ever_retransmitted(seq);
        let was_sacked = self.sb.is_sacked(seq);
        if dup && retransmitted {
            self.host.dsacked(seq.wrapping_add(1), 1);
            if was_sacked {
                tag.reorder_at(seq);
            }
        }
        if was_sacked {
            return;
        }
        if !retransmitted && before(seq, self.fack()) {
            // A hole filled by an original: reordering.
            tag.reorder_at(seq);
        }
        let Some((t, retransmitted)) = self.sb.sack(seq) else { return };
        self.rate_delivered(seq);
        tag.delivered += 1;
        tag.newly_sacked = true;
        if !retransmitted {
            tag.orig_acked |= before(seq, self.host.high_seq);
            tag.first_sackt.get_or_insert(t);
            tag.last_sackt = Some(t);
        }
        self.rack.advance(now, t, seq, retransmitted);
        let end = seq.wrapping_add(1);
        if self.sb.sacked_out == 1 || before(self.highest_sack, end) {
            self.highest_sack = end;
        }
    }

    /// `tcp_rate_skb_delivered` for segment `seq`, newly ACKed or SACKed.
    #[inline(always)]
    fn rate_delivered(&mut self, seq: u32) {
        let (sent, tx) = self.sb.transmission(seq);
        let is_retrans = self.sb.ever_retransmitted(seq);
        self.host.rate.skb_delivered(Delivered { tx, sent_us: sent / 1000, end_seq: seq.wrapping_add(1), is_retrans });
    }

    /// `tcp_schedule_loss_probe`: in Open with SACK and data out, arm the probe timer;
    /// `advancing_rto`: the RTO would restart now (an ACK advanced `snd_una`), else it
    /// stays counted from the head's transmission. Returns whether it armed.
    #[inline]
    fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        if !self.may_schedule_loss_probe() {
            return false;
        }
        self.probe_on_ack = false;
        let srtt = self.host.rtt.srtt_us() * 1000;
        let rto_left = if advancing_rto { self.rto() } else { self.head_rto().saturating_sub(now) };
        let timeout = Tlp::timeout(srtt, self.packets_out(), self.cfg.min_rto_ns, rto_left);
        self.rto_deadline = now + timeout;
        self.timer = XmitTimer::LossProbe;
        true
    }

    /// Whether `tcp_schedule_loss_probe` arms a probe now: in Open (or CWR) with SACK and
    /// data out.
    #[inline]
    fn may_schedule_loss_probe(&self) -> bool {
        self.cfg.loss_probes
            && self.cfg.recovery == Recovery::Sack
            && self.packets_out() > 0
            && matches!(self.host.tcp.ca_state, CaState::Open | CaState::Cwr)
    }

    /// The retransmission timer stops (the connection is done).
    pub fn stop_timer(&mut self) {
        self.rto_deadline = 0;
        self.probe_on_ack = false;
    }

    /// When the RTO counted from the head's transmission falls due (`tcp_rto_delta_us`).
    fn head_rto(&self) -> Time {
        self.sb.sent_at(self.host.tcp.snd_una) + self.rto()
    }

    /// `tcp_rearm_rto` while the timer stands for a probe or a reorder timeout: the RTO
    /// from the head's transmission, at least one jiffy away.
    fn rearm_rto_from_head(&mut self, now: Time) {
        self.rto_deadline = self.head_rto().max(now + TESTBED_JIFFY_NS);
        self.timer = XmitTimer::Rto;
    }

    /// `tcp_rack_detect_loss`: mark what RACK finds lost; the reorder timeout to arm if a
    /// hole is still inside the reordering window.
    fn rack_detect_loss(&mut self, now: Time) -> Option<Time> {
        let srtt = self.host.rtt.srtt_us() * 1000;
        let reo_wnd = self.rack.reo_wnd(self.host.tcp.ca_state, self.sb.sacked_out, srtt);
        let nxt = self.host.tcp.snd_nxt;
        let (_, waiting) = self.sb.rack_mark_lost(nxt, self.rack.xmit, self.rack.seq, now, self.rack.rtt + reo_wnd);
        waiting.map(|sent| self.rack.reo_timeout(now, sent, reo_wnd, self.rto()))
    }

    /// Linux `tcp_fastretrans_alert`, reduced to the states modelled here: in Loss,
    /// `tcp_process_loss` (Eifel undo, F-RTO); leave Recovery or Loss once `high_seq` is
    /// acknowledged (undoing if `tcp_may_undo`); in Recovery, undo on a partial ACK the
    /// timestamps show was not a retransmission's (`tcp_try_undo_partial`) or once D-SACKs
    /// covered every retransmission (`tcp_try_undo_dsack`), repair the next hole on a
    /// NewReno partial ACK; outside, the D-SACK undo and entering Recovery when the
    /// scoreboard shows a loss. `prior_una` is `snd_una` before the ACK, `tsecr` its echo.
    fn fastretrans_alert(&mut self, now: Time, prior_una: u32, loss_ack: LossAck, tsecr: u32) {
        let advanced = loss_ack.advanced;
        if self.host.tcp.ca_state == CaState::Loss {
            // tcp_process_loss: tcp_try_undo_loss on an advancing ACK (Eifel), then F-RTO.
            if advanced && self.host.try_undo_loss(tsecr, false, now) {
                return self.after_loss_undo();
            }
            match self.frto.on_ack(loss_ack) {
                FrtoStep::Undo => {
                    self.host.try_undo_loss(tsecr, true, now);
                    return self.after_loss_undo();
                }
                FrtoStep::SendNew => {
                    self.host.high_seq = self.host.tcp.snd_nxt;
                    self.frto_new_data = true;
                    return;
                }
                FrtoStep::Continue => {}
            }
        }
        let state = self.host.tcp.ca_state;
        if self.cfg.recovery == Recovery::NewReno
            && matches!(state, CaState::Recovery | CaState::Loss)
            && self.host.tcp.snd_una == self.host.high_seq
        {
            // tcp_is_non_sack_preventing_reopen: without SACK, hold the state until
            // something above high_seq is acknowledged (RFC 6582: no false fast retransmit
            // from the duplicate ACKs of the recovered window).
            if !self.sb.any_retrans_done(self.host.tcp.snd_una) {
                self.host.retransmissions_done();
            }
            return;
        }
        match self.host.try_leave_recovery(tsecr, now) {
            RecoveryEnd::Stay => {}
            RecoveryEnd::Recovered => {
                self.rack.recovered();
                if self.cfg.recovery == Recovery::NewReno {
                    // tcp_fastretrans_alert step D: tcp_reset_reno_sack.
                    self.sb.sacked_out = 0;
                }
                return self.fastretrans_alert(now, prior_una, loss_ack, tsecr);
            }
            RecoveryEnd::Undone => {
                self.rack.force_detection();
                return self.fastretrans_alert(now, prior_una, loss_ack, tsecr);
            }
        }
        match self.host.tcp.ca_state {
            CaState::Recovery => {
                if advanced && self.host.undo_marker.is_some() && self.host.packet_delayed(tsecr) {
                    // tcp_try_undo_partial: the hole was filled by a delayed original.
                    let fack = self.fack();
                    self.rack.check_reordering(prior_una, fack);
                    if self.sb.retrans_out > 0 {
                        return;
                    }
                    if !self.sb.any_retrans_done(self.host.tcp.snd_una) {
                        self.host.retransmissions_done();
                    }
                    self.sb.unmark_lost(self.host.tcp.snd_una, self.host.tcp.snd_nxt);
                    self.host.undo(now);
                    self.rack.force_detection();
                    return;
                }
                if self.cfg.recovery == Recovery::NewReno && advanced {
                    // Partial ACK: the new head is the next hole.
                    self.sb.mark_lost(self.host.tcp.snd_una);
                }
                if self.host.try_undo_dsack(now) {
                    self.rack.undone_by_dsack();
                    self.rack.force_detection();
                    // tcp_try_keep_open; a loss still evident starts a new Recovery.
                    self.fastretrans_alert(now, prior_una, loss_ack, tsecr);
                }
            }
            CaState::Loss => {}
            _ => {
                if self.host.try_undo_dsack(now) {
                    self.rack.undone_by_dsack();
                    self.rack.force_detection();
                }
                let loss = match self.cfg.recovery {
                    Recovery::Sack => self.sb.lost_out > 0,
                    Recovery::NewReno => self.sb.sacked_out >= DUPTHRESH && self.sb.mark_lost(self.host.tcp.snd_una),
                };
                if loss {
                    self.start_recovery(now);
                } else {
                    self.try_to_open();
                }
            }
        }
    }

    /// [`Host::try_to_open`] with the scoreboard's `tcp_any_retrans_done`.
    #[inline]
    fn try_to_open(&mut self) {
        let any_retrans = self.sb.any_retrans_done(self.host.tcp.snd_una);
        self.host.try_to_open(any_retrans);
    }

    /// `tcp_undo_cwnd_reduction(sk, true)` after `tcp_try_undo_loss`: nothing is lost any
    /// more, and RACK judges the segments again.
    fn after_loss_undo(&mut self) {
        self.sb.unmark_lost(self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        self.rack.force_detection();
    }

    /// A loss found outside Recovery: `tcp_enter_recovery`, or for an algorithm without fast
    /// recovery (Tahoe) a restart from one segment (RFC 5681's loss window), as after a
    /// timeout that finds nothing in flight. Follows the RFC, not Linux (which has no
    /// Tahoe): every segment not SACKed is taken for lost, however recently it was sent, so
    /// `tcp_enter_loss`'s in-flight + 1 is one segment and the rest go back N. Marking
    /// only RACK-expired segments, as a Linux timeout does, would keep the window of the
    /// segments sent within the last RTT: a whole window, as the window it halves.
    fn start_recovery(&mut self, now: Time) {
        self.stats.loss_events += 1;
        self.stats.last_loss_cwnd = self.host.tcp.cwnd;
        if self.host.alg.fast_recovery() {
            self.host.enter_recovery(self.sb.retrans_out, now);
        } else {
            self.frto.active = false;
            self.timeout_mark_lost(now);
            self.host.enter_loss(self.in_flight(), self.sb.retrans_out, now);
        }
    }

    /// Linux `tcp_timeout_mark_lost`: the head, and every segment not SACKed sent at or
    /// before `sent_by` (for a timeout, more than the latest delivered segment's RTT ago:
    /// its RACK timer expired).
    fn timeout_mark_lost(&mut self, sent_by: Time) {
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        if self.cfg.recovery == Recovery::NewReno {
            // tcp_reset_reno_sack: the duplicate ACKs counted so far stand for nothing now.
            self.sb.sacked_out = 0;
        }
        self.sb.timeout_mark_lost(una, nxt, sent_by);
    }

    /// The retransmission timer fired at `now` (the caller checked the deadline): as
    /// `tcp_write_timer_handler`, the event it was armed for. Returns whether it was a
    /// retransmission timeout.
    pub fn on_rto(&mut self, now: Time) -> bool {
        match std::mem::replace(&mut self.timer, XmitTimer::Rto) {
            XmitTimer::Rto => {
                self.retransmit_timeout(now);
                true
            }
            XmitTimer::ReoTimeout => {
                self.rack_reo_timeout(now);
                false
            }
            XmitTimer::LossProbe => {
                self.send_loss_probe(now);
                false
            }
        }
    }

    /// `tcp_send_loss_probe`: with no probe outstanding, one segment is due now (sent by
    /// the next `next_segment`, which then re-arms the RTO); else the RTO again.
    fn send_loss_probe(&mut self, now: Time) {
        if self.tlp.high_seq.is_some() || self.packets_out() == 0 {
            self.rearm_rto_from_head(now);
        } else {
            self.probe_due = true;
        }
    }

    /// The probe: new data if the application and the receive window allow it, else the
    /// last segment sent again (`__tcp_retransmit_skb`: a retransmission, but not counted in
    /// `retrans_out`); then `tlp_high_seq = snd_nxt` and the RTO from now.
    fn send_probe(&mut self, now: Time) -> Segment {
        self.probe_due = false;
        let nxt = self.host.tcp.snd_nxt;
        let probe = if nxt != self.app_limit && self.window_allows(nxt) {
            self.tlp.retrans = false;
            self.send_new(now)
        } else {
            let last = nxt.wrapping_sub(1);
            self.sb.on_probe(last, now);
            self.rate_sent(last, now);
            self.stats.segments_sent += 1;
            self.stats.retransmits += 1;
            self.host.on_transmit(now);
            self.tlp.retrans = true;
            Segment { seq: last, retransmit: true, push: false }
        };
        self.tlp.high_seq = Some(self.host.tcp.snd_nxt);
        self.rto_deadline = now + self.rto();
        self.timer = XmitTimer::Rto;
        self.probe_on_ack = false;
        probe
    }

    /// `tcp_rack_reo_timeout`: mark what has now timed out; if that changed what is in
    /// flight, enter Recovery (with one PRR step, `tcp_cwnd_reduction(sk, 1, 0)`); then the
    /// RTO again, counted from the head's transmission (`tcp_rearm_rto`).
    fn rack_reo_timeout(&mut self, now: Time) {
        self.rto_deadline = 0;
        if self.packets_out() == 0 {
            return;
        }
        let prior_in_flight = self.in_flight();
        self.rack_detect_loss(now);
        if self.in_flight() != prior_in_flight && self.host.tcp.ca_state != CaState::Recovery {
            self.start_recovery(now);
            if self.host.tcp.ca_state == CaState::Recovery {
                let ack = PrrAck { newly_acked_sacked: 1, newly_lost: 0, una_advanced: false };
                self.host.cwnd_reduction(ack, self.in_flight());
            }
        }
        self.rearm_rto_from_head(now);
    }

    /// Linux `tcp_retransmit_timer`.
    fn retransmit_timeout(&mut self, now: Time) {
        self.rto_deadline = 0;
        self.tlp.high_seq = None;
        if self.packets_out() == 0 {
            return;
        }
        self.stats.timeouts += 1;
        if self.host.tcp.ca_state != CaState::Loss {
            self.stats.loss_events += 1;
            self.stats.last_loss_cwnd = self.host.tcp.cwnd;
        }
        self.timeout_mark_lost(now.saturating_sub(self.rack.rtt));
        let sack_frto = self.cfg.frto && self.cfg.recovery == Recovery::Sack;
        self.frto.on_enter_loss(sack_frto, self.host.tcp.ca_state, self.host.retransmits);
        self.frto_new_data = false;
        self.host.retransmit_timer(self.in_flight(), self.sb.retrans_out, now);
        self.rto_deadline = now + self.rto();
    }

    /// The next segment to transmit now, if the window and the data allow one: a lost
    /// segment first, then new data. A `None` ends
    /// one `tcp_write_xmit`: the window's use is then validated for the round.
    #[inline]
    pub fn next_segment(&mut self, now: Time) -> Option<Segment> {
        if !self.started {
            return None;
        }
        // tcp_pacing_check comes first in tcp_write_xmit.
        if let Some(at) = self.pacer.wait_until(&self.host.tcp, now) {
            self.pace_deadline = at;
            let cwnd_full = self.in_flight() >= self.host.tcp.cwnd;
            self.end_burst(now, cwnd_full);
            return None;
        }
        self.pace_deadline = 0;
        if self.probe_due {
            return Some(self.send_probe(now));
        }
        let in_flight = self.in_flight();
        if self.frto_new_data {
            // tcp_xmit_recovery's REXMIT_NEW: new data if the window lets any out; if none
            // could go, F-RTO ends and the lost segments are retransmitted.
            let nxt = self.host.tcp.snd_nxt;
            if in_flight < self.host.tcp.cwnd && nxt != self.app_limit && self.window_allows(nxt) {
                self.new_in_burst = true;
                return Some(self.send_new(now));
            }
            self.frto_new_data = false;
            if before(self.host.high_seq, nxt) {
                self.end_burst(now, in_flight >= self.host.tcp.cwnd);
                return None;
            }
            self.frto.active = false;
        }
        if in_flight >= self.host.tcp.cwnd {
            self.end_burst(now, true);
            return None;
        }
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        if let Some(seq) = self.sb.next_retransmit(una, nxt) {
            self.sb.on_send(seq, now, true);
            self.host.on_retransmit(Self::ts_val(now));
            self.rate_sent(seq, now);
            self.after_send(now, true);
            if seq == una {
                // Linux tcp_xmit_retransmit_queue: retransmitting the head restarts the timer.
                self.rto_deadline = now + self.rto();
                self.timer = XmitTimer::Rto;
                self.probe_on_ack = false;
            }
            return Some(Segment { seq, retransmit: true, push: false });
        }
        let window_ok = self.window_allows(nxt);
        if nxt == self.app_limit || !window_ok {
            self.end_burst(now, false);
            return None;
        }
        self.new_in_burst = true;
        Some(self.send_new(now))
    }

    /// Send the next new segment.
    #[inline(always)]
    fn send_new(&mut self, now: Time) -> Segment {
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        if self.packets_out() == 0 && self.stats.segments_sent > 0 {
            self.host.restart_after_idle(now, self.cfg.initial_cwnd);
        }
        self.sb.reserve(una, nxt.wrapping_add(1));
        self.sb.on_send(nxt, now, false);
        self.rate_sent(nxt, now);
        self.host.tcp.snd_nxt = nxt.wrapping_add(1);
        let push = self.ends_tso_packet();
        self.after_send(now, false);
        Segment { seq: nxt, retransmit: false, push }
    }

    /// Whether the new segment being sent carries PSH: new data leaves in TSO packets of `tcp_tso_autosize`
    /// segments (at least `tcp_min_tso_segs` = 2), and the last segment of each full
    /// packet carries PSH; a packet cut short by the window does not (`tso_fragment`
    /// moves PSH to the part left behind). Measured on the testbed's kernel sender
    /// (a17, `scripts/link_pcap.py` and the emulator's read log): 95% of its 2-segment
    /// packets end with PSH, 2% of its single segments carry it, 3% of retransmissions.
    /// It matters to the receiver, which ACKs a PSH segment at once ([`Receiver::on_data`]).
    /// An approximation elsewhere (docs/agreement/README.md, a17): at a04 (100 Mbit/s) the
    /// kernel marks 11.7% of segments, this rule none (every packet is cut short there),
    /// yet the single-segment ACKs agree (0.1% / 0.0%); the kernel's placement is not traced.
    ///
    /// [`Receiver::on_data`]: super::receiver::Receiver::on_data
    #[inline(always)]
    fn ends_tso_packet(&mut self) -> bool {
        if self.tso_left == 0 {
            self.tso_left = tso_segs(&self.host.tcp, self.min_tso_segs()).max(1);
        }
        self.tso_left -= 1;
        self.tso_left == 0
    }

    /// `tcp_tso_segs`' floor: the algorithm's `min_tso_segs`, else the sysctl's
    /// `tcp_min_tso_segs`. Only BBR has one, and BBR paces: an unpaced sender skips the call.
    #[inline(always)]
    fn min_tso_segs(&self) -> u32 {
        if self.host.tcp.paced {
            self.host.alg.min_tso_segs(&self.host.tcp).unwrap_or(TCP_MIN_TSO_SEGS)
        } else {
            TCP_MIN_TSO_SEGS
        }
    }

    /// `tcp_rate_skb_sent`: stamp segment `seq`, leaving now (before `snd_nxt` moves).
    #[inline]
    fn rate_sent(&mut self, seq: u32, now: Time) {
        let packets_out = self.packets_out();
        let stamp = self.host.rate.skb_sent(&mut self.host.tcp, packets_out, now / 1000);
        self.sb.set_stamp(seq, stamp);
    }

    /// End of a `tcp_write_xmit`: `tcp_cwnd_validate` if it sent something or the window
    /// is full, and a loss probe scheduled after new data (one per tail episode).
    #[inline(always)]
    fn end_burst(&mut self, now: Time, cwnd_full: bool) {
        self.pacer.end_burst(&mut self.host.tcp);
        if self.sent_in_burst || cwnd_full {
            self.host.cwnd_validate(cwnd_full);
        }
        let rearmed = self.new_in_burst && self.schedule_loss_probe(now, false);
        if self.probe_on_ack && !rearmed {
            // Nothing new went out: the ACK's probe, as it would have been computed then
            // (nothing it depends on has changed since).
            self.schedule_loss_probe(now, true);
        }
        self.sent_in_burst = false;
        self.new_in_burst = false;
        self.tso_left = 0;
    }

    #[inline]
    fn after_send(&mut self, now: Time, retransmit: bool) {
        self.stats.segments_sent += 1;
        if retransmit {
            self.stats.retransmits += 1;
        }
        self.sent_in_burst = true;
        self.host.on_transmit(now);
        if self.host.tcp.paced {
            let min_tso = self.min_tso_segs();
            self.pacer.sent(&mut self.host.tcp, min_tso, now);
        } else {
            self.pacer.sent_unpaced(&mut self.host.tcp, now);
        }
        if self.rto_deadline == 0 && !self.probe_on_ack {
            self.rto_deadline = now + self.rto();
            self.timer = XmitTimer::Rto;
        }
    }
}
