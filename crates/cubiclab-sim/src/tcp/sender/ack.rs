//! ACK processing (`tcp_ack`): the cumulative ACK and the SACK option on the scoreboard, the
//! RTT samples, and the hooks of the algorithm, in the kernel's order.

use cubiclab_cc::host::rate::Delivered;
use cubiclab_cc::host::PrrAck;
use cubiclab_cc::seq::before;
use cubiclab_cc::{AckEvent, CaState};

use super::Sender;
use crate::engine::Time;
use crate::packet::SackBlocks;
use crate::tcp::scoreboard::Acked;

/// What one ACK's SACK option told (`struct tcp_sacktag_state` and its flags).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SackTag {
    /// Segments newly SACKed, plus D-SACKed duplicates (`sack_delivered`).
    pub(super) delivered: u32,
    /// Something was newly SACKed (`FLAG_DATA_SACKED`).
    pub(super) newly_sacked: bool,
    /// A never-retransmitted segment below `high_seq` was (S)ACKed (`FLAG_ORIG_SACK_ACKED`).
    pub(super) orig_acked: bool,
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

impl Sender {
    /// `tcp_highest_sack_seq`: the end of the highest SACKed segment (`snd_una` with none).
    #[inline]
    pub(super) fn fack(&self) -> u32 {
        if self.sb.sacked_out == 0 {
            self.host.tcp.snd_una
        } else {
            self.sack.highest
        }
    }

    /// Process an ACK of `cum` with SACK blocks `sack` echoing timestamp `tsecr` (0: none),
    /// taken as [`Sender::next_ack`] says, without ECE. Returns the number of segments newly
    /// delivered to the receiver.
    #[inline(always)]
    pub fn on_ack(&mut self, now: Time, cum: u32, sack: &SackBlocks, tsecr: u32) -> u32 {
        self.on_ack_ecn(now, cum, sack, tsecr, false)
    }

    /// [`Sender::on_ack`] for an ACK with the ECE flag if `ece` (read only on an ECN
    /// connection, `tcp_ecn_rcv_ecn_echo`).
    // Inlined into its one caller in the event loop (a saving of its entry and exit per ACK).
    #[inline(always)]
    pub fn on_ack_ecn(&mut self, now: Time, cum: u32, sack: &SackBlocks, tsecr: u32, ece: bool) -> u32 {
        let ece = ece && self.host.ecn_ok;
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
        let high = self.host.high_seq;
        let mut tag = SackTag { orig_acked: acked.first_orig.is_some_and(|s| before(s, high)), ..SackTag::default() };
        let (delivered, sacked) = self.count_delivered(now, una, sack, advanced, &acked, &mut tag);

        // tcp_clean_rtx_queue advances RACK by the cumulatively ACKed segments' latest
        // transmission, with or without SACK (RACK's RTT also spares recent segments at a
        // timeout, tcp_timeout_mark_lost).
        if let Some(t) = acked.latest_tx {
            self.rack.advance(now, t, cum.wrapping_sub(1), acked.last_sent != Some(t));
        }
        let rtt_us = self.rtt_sample(now, &acked, &tag, tsecr);
        let delivered_now = self.host.tcp.delivered.wrapping_add(delivered);
        self.host.tcp.sacked_out = self.sb.sacked_out;
        self.host.pkts_acked(acked.acked, rtt_us, delivered_now, now);

        self.rack.update_reo_wnd(self.host.rate.prior_delivered(), delivered_now);
        // tcp_in_ack_event sees `delivered` counted (tcp_count_delivered); this sender stores
        // it after the state machine below, as its results always had it.
        self.host.in_ack_event(AckEvent { ece, ..self.next_ack }, delivered_now, delivered, now);
        if self.tlp.on_ack(cum, advanced, tag.newly_sacked, tag.dsack_probe) {
            self.stats.loss_events += 1;
            self.stats.last_loss_cwnd = self.host.tcp.cwnd;
            self.host.reduce_after_probe(now);
        }
        let reo_timer = self.detect_loss_on_ack(now, sacked);
        self.alert(now, una, advanced, &tag, tsecr, ece);

        let newly_lost = (self.sb.lost_marked - lost_before) as u32;
        let tcp = &mut self.host.tcp;
        tcp.delivered = delivered_now;
        tcp.lost = self.sb.lost_marked as u32;
        let mut rs = self.host.rate.gen(tcp, delivered, newly_lost, now / 1000, prior_in_flight, rtt_us);
        rs.is_ece = ece;
        let ack = PrrAck { newly_acked_sacked: delivered, newly_lost, una_advanced: advanced };
        let in_flight = self.in_flight();
        self.host.cong_control(ack, &rs, in_flight, now);
        self.host.update_pacing_rate();
        self.set_xmit_timer(now, reo_timer, advanced);
        delivered
    }

    /// `tcp_clean_rtx_queue` / `tcp_ack_update_rtt`: the estimator from the oldest segment
    /// newly ACKed unless a retransmission was among them (Karn), else the oldest newly
    /// SACKed, else (RTTM) the timestamp echo of an ACK that acknowledged data; the
    /// algorithm gets the newest (`ca_rtt_us`), returned (-1: none).
    #[inline(always)]
    fn rtt_sample(&mut self, now: Time, acked: &Acked, tag: &SackTag, tsecr: u32) -> i64 {
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
        rtt_us
    }

    /// `tcp_sacktag_write_queue` for the SACK option of an ACK that found `snd_una` at
    /// `prior_una`: a D-SACK first (`tcp_check_dsack`), then the valid blocks in sequence
    /// order, each segment not yet SACKed tagged once (`tcp_sacktag_one`). Parts the
    /// previous ACK's blocks already covered are skipped (`recv_sack_cache`), so an ACK
    /// costs the segments it newly SACKs, not the size of its blocks.
    pub(super) fn sacktag(&mut self, now: Time, prior_una: u32, opt: &SackBlocks, tag: &mut SackTag) {
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        let blocks = opt.as_slice();
        if self.sb.sacked_out == 0 {
            // tcp_highest_sack_reset; the cache describes nothing still SACKed.
            self.sack.highest = una;
            self.sack.cache = SackBlocks::NONE;
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
        let cache = self.sack.cache;
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
        self.sack.cache = used;
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
        self.sack.dsack_dups += dup_segs as u64;
        if self.sack.dsack_dups > self.stats.retransmits {
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
        if self.sb.sacked_out == 1 || before(self.sack.highest, end) {
            self.sack.highest = end;
        }
    }

    /// `tcp_rate_skb_delivered` for segment `seq`, newly ACKed or SACKed.
    #[inline(always)]
    fn rate_delivered(&mut self, seq: u32) {
        let (sent, tx) = self.sb.transmission(seq);
        let is_retrans = self.sb.ever_retransmitted(seq);
        self.host.rate.skb_delivered(Delivered { tx, sent_us: sent / 1000, end_seq: seq.wrapping_add(1), is_retrans });
    }
}
