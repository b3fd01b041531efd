//! RACK, the loss detection of Linux 4.18+ (`net/ipv4/tcp_recovery.c`, RFC 8985): a segment
//! not yet delivered is lost once a segment sent after it has been delivered and more than
//! the latest RTT plus a reordering window has passed since it was sent. The window is
//! `min_rtt / 4` (at most srtt) until Recovery or until `reordering` (3) segments are
//! SACKed, then zero (`tcp_rack_reo_wnd`); a segment still inside it arms the reorder
//! timer (`tcp_rack_mark_lost`, `tcp_rack_reo_timeout`).
//!
//! The simulated paths never reorder and the receiver sends no D-SACK, so `reord_seen`
//! stays 0 and `reo_wnd_steps` 1. `tcp_min_rtt` is a plain minimum: its window
//! (`tcp_min_rtt_wlen`, 300 s) is longer than the runs.

use cubiclab_cc::CaState;

use super::scoreboard::DUPTHRESH;
use crate::engine::Time;

/// `TCP_TIMEOUT_MIN`: two jiffies added to the reorder timeout (HZ 250).
const TIMEOUT_MIN_NS: Time = 2 * JIFFY_NS;
const JIFFY_NS: Time = 4_000_000;

#[inline]
fn seq_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `tcp_rack_sent_after`: sent later, or at the same time with a higher sequence.
#[inline]
pub fn sent_after(t1: Time, seq1: u32, t2: Time, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq_before(seq2, seq1))
}

/// `tp->rack` and `tcp_min_rtt`.
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
}

impl Default for Rack {
    fn default() -> Self {
        Self { xmit: 0, seq: 0, rtt: 0, advanced: false, min_rtt: Time::MAX }
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

    /// `tcp_rack_reo_wnd` with no reordering seen: zero in Recovery or Loss or once
    /// `reordering` segments are SACKed, else min(min_rtt / 4, srtt).
    #[inline]
    pub fn reo_wnd(&self, state: CaState, sacked_out: u32, srtt: Time) -> Time {
        if state >= CaState::Recovery || sacked_out >= DUPTHRESH {
            0
        } else {
            (self.min_rtt / 4).min(srtt)
        }
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
