//! RACK, the loss detection of Linux 4.18+ (`net/ipv4/tcp_recovery.c`, RFC 8985): a segment
//! not yet delivered is lost once a segment sent after it has been delivered and more than
//! the latest RTT plus a reordering window has passed since it was sent. The window is
//! `min_rtt / 4` (at most srtt) until Recovery or until `reordering` (3) segments are
//! SACKed, then zero (`tcp_rack_reo_wnd`); a segment still inside it arms the reorder
//! timer (`tcp_rack_mark_lost`, `tcp_rack_reo_timeout`).
//!
//! Once reordering has been seen (`reord_seen`, `tcp_check_sack_reordering`), the window
//! stays open in Recovery too, and a D-SACK then widens it by one step of `min_rtt / 4`
//! per round trip, for 16 recoveries (`tcp_rack_update_reo_wnd`). The simulated paths
//! never reorder, so in a run `reord_seen` stays 0; scripted ACKs exercise the rest.
//! `tcp_min_rtt` is a plain minimum: its window (`tcp_min_rtt_wlen`, 300 s) is longer than
//! the runs.

use cubiclab_cc::seq::{after, before};
use cubiclab_cc::CaState;

use crate::engine::Time;

/// RFC 6675 DupThresh, Linux's default `tp->reordering` (`sysctl_tcp_reordering`): RACK's
/// window closes once this many segments are SACKed, and NewReno's duplicate ACKs enter
/// Recovery at it.
pub const DUPTHRESH: u32 = 3;

/// `TCP_TIMEOUT_MIN`: two jiffies of the testbed's kernel added to the reorder timeout.
const TIMEOUT_MIN_NS: Time = 2 * JIFFY_NS;
const JIFFY_NS: Time = cubiclab_cc::clock::TESTBED_JIFFY_NS;

/// `tcp_rack_sent_after`: sent later, or at the same time with a higher sequence.
#[inline]
pub fn sent_after(t1: Time, seq1: u32, t2: Time, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && after(seq1, seq2))
}

/// `TCP_RACK_RECOVERY_THRESH`: recoveries a widened window persists.
const TCP_RACK_RECOVERY_THRESH: u8 = 16;

/// `tp->rack`, `tp->reord_seen` and `tcp_min_rtt`.
#[derive(Clone, Copy, Debug)]
pub struct Rack {
    /// `rack.mstamp`, `rack.end_seq`: the most recently sent delivered segment.
    pub xmit: Time,
    pub seq: u32,
    /// `rack.rtt_us`: the RTT of the last delivered segment taken.
    pub rtt: Time,
    /// `rack.advanced`: a segment was delivered since the last detection.
    advanced: bool,
    min_rtt: Time,
    /// `reo_wnd_steps`: the window in units of `min_rtt / 4`.
    pub reo_wnd_steps: u8,
    /// `reo_wnd_persist`: recoveries left before the window returns to one step.
    pub reo_wnd_persist: u8,
    /// `dsack_seen`: a D-SACK after reordering asks for a wider window.
    pub dsack_seen: bool,
    /// `last_delivered`: `tp->delivered` when the window last widened.
    last_delivered: u32,
    /// `tp->reord_seen`: times reordering was detected.
    pub reord_seen: u32,
}

impl Default for Rack {
    fn default() -> Self {
        Self {
            xmit: 0,
            seq: 0,
            rtt: 0,
            advanced: false,
            min_rtt: Time::MAX,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_delivered: 0,
            reord_seen: 0,
        }
    }
}

impl Rack {
    /// `tcp_rack_advance`: segment `seq`, last sent at `xmit`, was delivered at `now`. An
    /// RTT below the minimum from a retransmitted segment is ambiguous and ignored.
    #[inline]
    pub fn advance(&mut self, now: Time, xmit: Time, seq: u32, retransmitted: bool) {
        let rtt = now - xmit;
        if retransmitted && rtt < self.min_rtt {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(xmit, seq, self.xmit, self.seq) {
            self.xmit = xmit;
            self.seq = seq;
        }
    }

    /// `tcp_update_rtt_min` with the ACK's RTT sample.
    #[inline]
    pub fn update_min_rtt(&mut self, rtt: Time) {
        self.min_rtt = self.min_rtt.min(rtt);
    }

    /// Whether a delivery since the last detection asks for one (`tcp_rack_mark_lost`),
    /// clearing the mark.
    #[inline]
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// Force a new detection (`tcp_undo_cwnd_reduction`'s `rack.advanced = 1`).
    #[inline]
    pub fn force_detection(&mut self) {
        self.advanced = true;
    }

    /// `tcp_rack_reo_wnd`: with no reordering seen, zero in Recovery or Loss or once
    /// `reordering` segments are SACKed; else min(min_rtt / 4 x steps, srtt).
    #[inline]
    pub fn reo_wnd(&self, state: CaState, sacked_out: u32, srtt: Time) -> Time {
        if self.reord_seen == 0 && (state >= CaState::Recovery || sacked_out >= DUPTHRESH) {
            0
        } else {
            (self.min_rtt / 4 * self.reo_wnd_steps as Time).min(srtt)
        }
    }

    /// `tcp_check_sack_reordering`: segment `low_seq`, never retransmitted, was delivered
    /// after `fack` (the highest SACKed) was: reordering.
    #[inline]
    pub fn check_reordering(&mut self, low_seq: u32, fack: u32) {
        if before(low_seq, fack) {
            self.reord_seen += 1;
        }
    }

    /// `tcp_dsack_seen`'s part for RACK: a D-SACK after reordering was seen, not for a
    /// loss probe, may mean RACK retransmitted too early.
    #[inline]
    pub fn dsack(&mut self, for_probe: bool) {
        if self.reord_seen > 0 && !for_probe {
            self.dsack_seen = true;
        }
    }

    /// `tcp_rack_update_reo_wnd` once per ACK, with the rate sample's `prior_delivered` and
    /// `tp->delivered`: a pending D-SACK widens the window by one step (at most once per
    /// round trip: one from before the last widening is disregarded) and makes it persist
    /// 16 recoveries; with none left, it returns to one step.
    pub fn update_reo_wnd(&mut self, prior_delivered: u32, delivered: u32) {
        if prior_delivered == 0 {
            return;
        }
        if after(self.last_delivered, prior_delivered) {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = self.reo_wnd_steps.saturating_add(1);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.reo_wnd_persist = TCP_RACK_RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }

    /// `tcp_try_undo_recovery` without an undo: one recovery of the persistence used.
    #[inline]
    pub fn recovered(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// `tcp_try_undo_dsack`: a recovery undone by D-SACKs keeps the window one more.
    #[inline]
    pub fn undone_by_dsack(&mut self) {
        self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(TCP_RACK_RECOVERY_THRESH);
    }

    /// `tcp_rack_mark_lost`'s timer for a segment sent at `sent` still inside the window:
    /// its remaining time rounded up to jiffies, plus `TCP_TIMEOUT_MIN`, at most `rto`.
    #[inline]
    pub fn reo_timeout(&self, now: Time, sent: Time, reo_wnd: Time, rto: Time) -> Time {
        let remaining = (sent + self.rtt + reo_wnd).saturating_sub(now);
        (remaining.div_ceil(JIFFY_NS) * JIFFY_NS + TIMEOUT_MIN_NS).min(rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn window_is_a_quarter_of_min_rtt_until_recovery_or_three_sacks() {
        // min_rtt 100 ms -> 25 ms (below srtt 120 ms); zero in Recovery or at 3 SACKed.
        let mut r = Rack::default();
        r.update_min_rtt(100 * MS);
        r.update_min_rtt(140 * MS);
        assert_eq!(r.reo_wnd(CaState::Open, 2, 120 * MS), 25 * MS);
        assert_eq!(r.reo_wnd(CaState::Open, 2, 20 * MS), 20 * MS);
        assert_eq!(r.reo_wnd(CaState::Open, 3, 120 * MS), 0);
        assert_eq!(r.reo_wnd(CaState::Recovery, 0, 120 * MS), 0);
    }

    #[test]
    fn a_d_sack_after_reordering_widens_the_window_once_per_round_for_16_recoveries() {
        // tcp_rack_update_reo_wnd with min_rtt 100 ms: no reordering seen -> a D-SACK is
        // ignored (tcp_dsack_seen). After reordering, the window stays open in Recovery
        // (tcp_rack_reo_wnd) and a D-SACK widens it to 2 x 25 = 50 ms, remembered at
        // delivered 100; a second D-SACK on an ACK whose prior_delivered 90 predates that is
        // disregarded; one at prior_delivered 120 gives 3 steps, 75 ms (srtt 200 ms caps
        // at 200). 16 recoveries later the window is back to one step.
        let mut r = Rack::default();
        r.update_min_rtt(100 * MS);
        r.dsack(false);
        assert!(!r.dsack_seen);
        r.check_reordering(5, 9);
        assert_eq!(r.reo_wnd(CaState::Recovery, 5, 200 * MS), 25 * MS);
        r.dsack(false);
        r.update_reo_wnd(80, 100);
        assert_eq!(r.reo_wnd(CaState::Recovery, 5, 200 * MS), 50 * MS);
        r.dsack(false);
        r.update_reo_wnd(90, 110);
        assert_eq!(r.reo_wnd_steps, 2);
        r.dsack(false);
        r.update_reo_wnd(120, 150);
        assert_eq!(r.reo_wnd(CaState::Open, 0, 200 * MS), 75 * MS);
        // A D-SACK for a loss probe never widens it.
        r.dsack(true);
        assert!(!r.dsack_seen);
        for _ in 0..15 {
            r.recovered();
            r.update_reo_wnd(200, 210);
        }
        assert_eq!(r.reo_wnd_steps, 3);
        r.recovered();
        r.update_reo_wnd(200, 210);
        assert_eq!(r.reo_wnd_steps, 1);
    }

    #[test]
    fn advance_keeps_the_most_recently_sent_and_breaks_ties_by_sequence() {
        let mut r = Rack::default();
        r.update_min_rtt(100 * MS);
        r.advance(110 * MS, 10 * MS, 5, false);
        r.advance(112 * MS, 10 * MS, 3, false);
        assert_eq!((r.xmit, r.seq, r.rtt), (10 * MS, 5, 102 * MS));
        // A retransmission delivered faster than min_rtt is ambiguous: ignored.
        r.advance(150 * MS, 100 * MS, 1, true);
        assert_eq!(r.seq, 5);
        assert!(r.take_advanced() && !r.take_advanced());
    }

    #[test]
    fn reorder_timeout_rounds_up_to_jiffies_plus_two() {
        // Sent at 0, RTT 100 ms, window 25 ms, now 101 ms: 24 ms left = 6 jiffies, + 2
        // jiffies = 32 ms; an RTO of 20 ms caps it.
        let r = Rack { rtt: 100 * MS, ..Rack::default() };
        assert_eq!(r.reo_timeout(101 * MS, 0, 25 * MS, 1000 * MS), 32 * MS);
        assert_eq!(r.reo_timeout(101 * MS, 0, 25 * MS, 20 * MS), 20 * MS);
    }
}
