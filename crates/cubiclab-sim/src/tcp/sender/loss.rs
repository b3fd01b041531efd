//! Loss detection and the congestion states it drives (`tcp_fastretrans_alert`): RACK with
//! SACK (`rack.rs`), or NewReno's duplicate ACKs, as the [`LossDetection`] chosen at
//! construction; Recovery, Loss, their ends and undos, F-RTO (`frto.rs`). The flavours differ
//! only in the rules of this file that match on it.

use cubiclab_cc::host::RecoveryEnd;
use cubiclab_cc::seq::before;
use cubiclab_cc::{CaState, CongestionControl};

use super::ack::SackTag;
use super::{LossDetection, Sender};
use crate::engine::Time;
use crate::packet::SackBlocks;
use crate::tcp::frto::{FrtoStep, LossAck};
use crate::tcp::rack::DUPTHRESH;
use crate::tcp::scoreboard::Acked;

impl LossDetection {
    /// Whether tail loss probes are on (`tcp_schedule_loss_probe` wants SACK).
    #[inline]
    pub(super) fn probes(self) -> bool {
        matches!(self, Self::Rack { probes: true, .. })
    }

    /// Whether a timeout starts F-RTO (`tcp_enter_loss`; Linux's basic F-RTO for non-SACK
    /// flows is not modelled).
    #[inline]
    pub(super) fn frto(self) -> bool {
        matches!(self, Self::Rack { frto: true, .. })
    }
}

impl Sender {
    /// What an ACK that found `snd_una` at `prior_una` delivered beyond the cumulative ACK's
    /// segments (`acked`): with SACK, what its option newly tells (`tcp_sacktag_write_queue`);
    /// without, what its being a duplicate tells. Returns the segments newly delivered and
    /// whether a SACK option was processed.
    #[inline(always)]
    pub(super) fn count_delivered(
        &mut self,
        now: Time,
        prior_una: u32,
        sack: &SackBlocks,
        advanced: bool,
        acked: &Acked,
        tag: &mut SackTag,
    ) -> (u32, bool) {
        match self.loss {
            LossDetection::Rack { .. } if sack.len > 0 => {
                self.sacktag(now, prior_una, sack, tag);
                (acked.newly_delivered + tag.delivered, true)
            }
            LossDetection::Rack { .. } => (acked.newly_delivered, false),
            LossDetection::DupAcks => (self.count_dup_acks(advanced, acked), false),
        }
    }

    /// Without SACK, Linux's `tcp_add_reno_sack` / `tcp_remove_reno_sacks`: duplicate ACKs
    /// stand for segments that left the network. Returns the segments newly delivered.
    #[inline(always)]
    fn count_dup_acks(&mut self, advanced: bool, acked: &Acked) -> u32 {
        let mut delivered = acked.newly_delivered;
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
        delivered
    }

    /// `tcp_identify_packet_loss` on an ACK: with SACK, RACK runs when the ACK carried SACK
    /// information (`sacked`), or some is held, or outside Open (`tcp_ack_is_dubious`), and
    /// a segment was delivered since it last ran. Returns the reorder timeout to arm.
    #[inline(always)]
    pub(super) fn detect_loss_on_ack(&mut self, now: Time, sacked: bool) -> Option<Time> {
        match self.loss {
            LossDetection::Rack { .. }
                if (sacked || self.sb.sacked_out > 0 || self.host.tcp.ca_state != CaState::Open)
                    && self.rack.take_advanced() =>
            {
                self.rack_detect_loss(now)
            }
            _ => None,
        }
    }

    /// `tcp_rack_detect_loss`: mark what RACK finds lost; the reorder timeout to arm if a
    /// hole is still inside the reordering window.
    pub(super) fn rack_detect_loss(&mut self, now: Time) -> Option<Time> {
        let srtt = self.host.rtt.srtt_us() * 1000;
        let reo_wnd = self.rack.reo_wnd(self.host.tcp.ca_state, self.sb.sacked_out, srtt);
        let nxt = self.host.tcp.snd_nxt;
        let (_, waiting) = self.sb.rack_mark_lost(nxt, self.rack.xmit, self.rack.seq, now, self.rack.rtt + reo_wnd);
        waiting.map(|sent| self.rack.reo_timeout(now, sent, reo_wnd, self.rto()))
    }

    /// The ACK's alert (`tcp_fastretrans_alert`), for an ACK that found `snd_una` at
    /// `prior_una`, echoing `tsecr`.
    /// `ece`: the ACK carried ECE on an ECN connection (`FLAG_ECE`).
    #[inline(always)]
    pub(super) fn alert(&mut self, now: Time, prior_una: u32, advanced: bool, tag: &SackTag, tsecr: u32, ece: bool) {
        if matches!(self.loss, LossDetection::Rack { .. }) && self.host.alert_only_tries_to_open(self.sb.lost_out > 0) {
            // Most ACKs: the host's rule says the alert is tcp_try_to_open alone, so its
            // summary of the ACK need not be built (with NewReno, duplicate ACKs decide).
            self.try_to_open(ece, now);
        } else {
            let loss_ack = LossAck {
                advanced,
                sacked: tag.newly_sacked,
                orig_acked: tag.orig_acked,
                recovered: !before(self.host.tcp.snd_una, self.host.high_seq),
                new_data_sent: before(self.host.high_seq, self.host.tcp.snd_nxt),
            };
            self.fastretrans_alert(now, prior_una, loss_ack, tsecr, ece);
        }
    }

    /// Linux `tcp_fastretrans_alert`, reduced to the states modelled here: in Loss,
    /// `tcp_process_loss` (Eifel undo, F-RTO); leave Recovery or Loss once `high_seq` is
    /// acknowledged (undoing if `tcp_may_undo`); in Recovery, undo on a partial ACK the
    /// timestamps show was not a retransmission's (`tcp_try_undo_partial`) or once D-SACKs
    /// covered every retransmission (`tcp_try_undo_dsack`), repair the next hole on a
    /// NewReno partial ACK; outside, the D-SACK undo and entering Recovery when the
    /// scoreboard shows a loss. `prior_una` is `snd_una` before the ACK, `tsecr` its echo,
    /// `ece` its `FLAG_ECE` (CWR is entered from Open, `tcp_try_to_open`, and ends once
    /// `snd_una` passes `high_seq`).
    fn fastretrans_alert(&mut self, now: Time, prior_una: u32, loss_ack: LossAck, tsecr: u32, ece: bool) {
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
        if self.loss == LossDetection::DupAcks
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
                // tcp_fastretrans_alert step D.
                self.reset_reno_sack();
                return self.fastretrans_alert(now, prior_una, loss_ack, tsecr, ece);
            }
            // tcp_fastretrans_alert step D for CWR: on to step E in Open.
            RecoveryEnd::CwrEnded => {}
            RecoveryEnd::Undone => {
                self.rack.force_detection();
                return self.fastretrans_alert(now, prior_una, loss_ack, tsecr, ece);
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
                if self.loss == LossDetection::DupAcks && advanced {
                    // tcp_newreno_mark_lost: a partial ACK makes the new head the next hole.
                    self.sb.mark_lost(self.host.tcp.snd_una);
                }
                if self.host.try_undo_dsack(now) {
                    self.rack.undone_by_dsack();
                    self.rack.force_detection();
                    // tcp_try_keep_open; a loss still evident starts a new Recovery.
                    self.fastretrans_alert(now, prior_una, loss_ack, tsecr, ece);
                }
            }
            CaState::Loss => {}
            _ => {
                if self.host.try_undo_dsack(now) {
                    self.rack.undone_by_dsack();
                    self.rack.force_detection();
                }
                // tcp_time_to_recover: RACK marked something lost, or (without SACK) the
                // duplicate ACKs reached DupThresh and the head is newly lost.
                let loss = match self.loss {
                    LossDetection::Rack { .. } => self.sb.lost_out > 0,
                    LossDetection::DupAcks => {
                        self.sb.sacked_out >= DUPTHRESH && self.sb.mark_lost(self.host.tcp.snd_una)
                    }
                };
                if loss {
                    self.start_recovery(now, ece);
                } else {
                    self.try_to_open(ece, now);
                }
            }
        }
    }

    /// `tcp_reset_reno_sack`: without SACK, the duplicate ACKs counted so far stand for
    /// nothing now.
    #[inline]
    fn reset_reno_sack(&mut self) {
        if self.loss == LossDetection::DupAcks {
            self.sb.sacked_out = 0;
        }
    }

    /// [`cubiclab_cc::host::Host::try_to_open`] with the scoreboard's `tcp_any_retrans_done`;
    /// an ECN reduction it begins is counted.
    #[inline]
    fn try_to_open(&mut self, ece: bool, now: Time) {
        let any_retrans = self.sb.any_retrans_done(self.host.tcp.snd_una);
        if self.host.try_to_open(any_retrans, ece, now) {
            self.stats.ecn_reductions += 1;
        }
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
    /// segments sent within the last RTT: a whole window, as the window it halves. `ece`:
    /// the ACK carried ECE (`tcp_enter_recovery`'s `ece_ack`).
    pub(super) fn start_recovery(&mut self, now: Time, ece: bool) {
        self.stats.loss_events += 1;
        self.stats.last_loss_cwnd = self.host.tcp.cwnd;
        if self.host.alg.fast_recovery() {
            self.host.enter_recovery(self.sb.retrans_out, ece, now);
        } else {
            self.frto.active = false;
            self.timeout_mark_lost(now);
            self.host.enter_loss(self.in_flight(), self.sb.retrans_out, now);
        }
    }

    /// Linux `tcp_timeout_mark_lost`: the head, and every segment not SACKed sent at or
    /// before `sent_by` (for a timeout, more than the latest delivered segment's RTT ago:
    /// its RACK timer expired).
    pub(super) fn timeout_mark_lost(&mut self, sent_by: Time) {
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        self.reset_reno_sack();
        self.sb.timeout_mark_lost(una, nxt, sent_by);
    }
}
