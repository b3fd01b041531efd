//! The sender's record of every outstanding segment, Linux-style: per-segment SACKED, LOST
//! and RETRANS marks in a ring indexed by segment number, and the counters `sacked_out`,
//! `lost_out` and `retrans_out` from which `packets_in_flight` follows (Linux
//! `tcp_packets_in_flight`, the RFC 6675 "pipe").
//!
//! A retransmission is itself judged lost once a segment sent after it has been delivered
//! (the RACK rule of RFC 8985 applied to retransmissions, with no reordering window: the
//! simulated paths never reorder). Retransmissions go out in time order, so a FIFO of them
//! suffices.
//!
//! Every operation is amortized O(1) per segment: the cumulative ACK walks each segment
//! once, and loss marking and the retransmission search move cursors that only go forward
//! (until a timeout restarts them).

use std::collections::VecDeque;

use cubiclab_cc::host::rate::TxStamp;
use cubiclab_cc::seq::before;

use super::rack::sent_after;
use crate::engine::Time;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// Retransmitted and not yet acknowledged.
const RETRANS: u8 = 4;
/// Retransmitted at least once (Karn: no RTT sample from it).
const EVER_RETRANS: u8 = 8;

/// What a cumulative ACK covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    /// Segments newly acknowledged (the distance snd_una moved).
    pub acked: u32,
    /// Of those, segments not SACKed before (newly delivered).
    pub newly_delivered: u32,
    /// Send time of the oldest never-retransmitted segment covered (RFC 6298 sample).
    pub first_sent: Option<Time>,
    /// Send time of the newest never-retransmitted segment covered (the CC's RTT sample).
    pub last_sent: Option<Time>,
    /// The first never-retransmitted segment covered (F-RTO's `FLAG_ORIG_SACK_ACKED`).
    pub first_orig: Option<u32>,
    /// Latest transmission time of any segment covered and not SACKed before
    /// (retransmissions included), and that segment (the highest of equal times).
    pub latest_tx: Option<Time>,
    pub latest_seq: u32,
    /// A segment covered was ever retransmitted (`FLAG_RETRANS_DATA_ACKED`: Karn forbids
    /// an RTT sample from the ACK's timing).
    pub retrans_acked: bool,
}

pub struct Scoreboard {
    flags: Vec<u8>,
    sent: Vec<Time>,
    /// Each segment's delivery-rate stamp from its last transmission (`tcp_rate.c`).
    stamps: Vec<TxStamp>,
    mask: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Segments ever marked lost, a retransmission lost again counting anew (Linux
    /// `tp->lost`); the difference across an ACK is what it newly marked.
    pub lost_marked: u64,
    /// First segment not yet judged by the loss rule.
    mark_seq: u32,
    /// No segment in [snd_una, retx_seq) is waiting for retransmission.
    retx_seq: u32,
    /// While `lost_out > 0`, no segment at or after `lost_end` is marked lost: the search
    /// for the next retransmission stops there instead of walking the rest of the window
    /// on every transmission after each new loss (at 10 Gbit/s, tens of thousands of
    /// segments per mark).
    lost_end: u32,
    /// Outstanding retransmissions in the order they were sent: (segment, time).
    retx_fifo: VecDeque<(u32, Time)>,
}

impl Scoreboard {
    pub fn new() -> Self {
        Self {
            flags: vec![0; 64],
            sent: vec![0; 64],
            stamps: vec![TxStamp::default(); 64],
            mask: 63,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_marked: 0,
            mark_seq: 0,
            retx_seq: 0,
            lost_end: 0,
            retx_fifo: VecDeque::new(),
        }
    }

    /// Forget everything for a new connection, keeping the allocated ring.
    pub fn clear(&mut self) {
        self.sacked_out = 0;
        self.lost_out = 0;
        self.retrans_out = 0;
        self.mark_seq = 0;
        self.retx_seq = 0;
        self.retx_fifo.clear();
    }

    /// Make room for the segments [una, nxt]; allocates only while the window grows.
    #[inline]
    pub fn reserve(&mut self, una: u32, nxt: u32) {
        let need = nxt.wrapping_sub(una) as usize + 1;
        if need > self.flags.len() {
            self.grow(una, nxt, need);
        }
    }

    /// The rings doubled until `need` segments fit, [una, nxt) moved over (rare: per send
    /// the check above is all that runs).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, una: u32, nxt: u32, need: usize) {
        let mut cap = self.flags.len();
        while cap < need {
            cap *= 2;
        }
        let mut flags = vec![0; cap];
        let mut sent = vec![0; cap];
        let mut stamps = vec![TxStamp::default(); cap];
        let new_mask = cap as u32 - 1;
        let mut s = una;
        while s != nxt {
            flags[(s & new_mask) as usize] = self.flags[(s & self.mask) as usize];
            sent[(s & new_mask) as usize] = self.sent[(s & self.mask) as usize];
            stamps[(s & new_mask) as usize] = self.stamps[(s & self.mask) as usize];
            s = s.wrapping_add(1);
        }
        self.flags = flags;
        self.sent = sent;
        self.stamps = stamps;
        self.mask = new_mask;
    }

    #[inline]
    fn idx(&self, seq: u32) -> usize {
        (seq & self.mask) as usize
    }

    /// A segment left the sender (`una..=seq` must fit: call `reserve` first).
    #[inline]
    pub fn on_send(&mut self, seq: u32, now: Time, retransmit: bool) {
        let i = self.idx(seq);
        if retransmit {
            if self.flags[i] & RETRANS != 0 {
                return;
            }
            self.retrans_out += 1;
            self.flags[i] |= RETRANS | EVER_RETRANS;
            self.retx_fifo.push_back((seq, now));
        } else {
            self.flags[i] = 0;
        }
        self.sent[i] = now;
    }

    /// `tcp_undo_cwnd_reduction(sk, true)`: no segment in [una, nxt) is lost any more;
    /// RACK judges them again from `una`.
    pub fn unmark_lost(&mut self, una: u32, nxt: u32) {
        let mut s = una;
        while s != nxt {
            let i = self.idx(s);
            self.flags[i] &= !LOST;
            s = s.wrapping_add(1);
        }
        self.lost_out = 0;
        self.mark_seq = una;
        self.retx_seq = una;
    }

    /// A tail loss probe resent `seq` at `now` (`__tcp_retransmit_skb` alone): it is
    /// retransmitted for Karn and RACK, but not counted in `retrans_out`.
    pub fn on_probe(&mut self, seq: u32, now: Time) {
        let i = self.idx(seq);
        self.flags[i] |= EVER_RETRANS;
        self.sent[i] = now;
    }

    /// The cumulative ACK moved snd_una from `una` to `new_una`.
    #[inline]
    pub fn cum_ack(&mut self, una: u32, new_una: u32) -> Acked {
        let mut out = Acked { acked: new_una.wrapping_sub(una), ..Acked::default() };
        let mut s = una;
        while s != new_una {
            let i = self.idx(s);
            let f = self.flags[i];
            if f & SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                out.newly_delivered += 1;
            }
            if f & LOST != 0 {
                self.lost_out -= 1;
            }
            if f & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            out.retrans_acked |= f & EVER_RETRANS != 0;
            if f & SACKED == 0 && !matches!(out.latest_tx, Some(x) if self.sent[i] < x) {
                out.latest_tx = Some(self.sent[i]);
                out.latest_seq = s;
            }
            if f & EVER_RETRANS == 0 && f & SACKED == 0 {
                let t = self.sent[i];
                out.first_sent.get_or_insert(t);
                out.first_orig.get_or_insert(s);
                out.last_sent = Some(t);
            }
            self.flags[i] = 0;
            s = s.wrapping_add(1);
        }
        if !before(new_una, self.mark_seq) {
            self.mark_seq = new_una;
        }
        if !before(new_una, self.retx_seq) {
            self.retx_seq = new_una;
        }
        out
    }

    /// A SACK for `seq` (within [una, nxt)). Returns `None` if it was SACKed before, else
    /// its last send time and whether it was ever retransmitted (no RTT sample then).
    pub fn sack(&mut self, seq: u32) -> Option<(Time, bool)> {
        let i = self.idx(seq);
        let f = self.flags[i];
        if f & SACKED != 0 {
            return None;
        }
        self.detect_lost_retransmits(self.sent[i]);
        self.sacked_out += 1;
        if f & LOST != 0 {
            self.lost_out -= 1;
        }
        if f & RETRANS != 0 {
            self.retrans_out -= 1;
        }
        self.flags[i] = SACKED | (f & EVER_RETRANS);
        Some((self.sent[i], f & EVER_RETRANS != 0))
    }

    /// Retransmissions sent before `delivered_tx` (the transmission time of a segment just
    /// delivered) and still unacknowledged are lost. Returns how many were marked.
    #[inline]
    pub fn detect_lost_retransmits(&mut self, delivered_tx: Time) -> u32 {
        // Most ACKs find no retransmission outstanding: no call then.
        if self.retx_fifo.is_empty() {
            return 0;
        }
        self.mark_lost_retransmits(delivered_tx)
    }

    fn mark_lost_retransmits(&mut self, delivered_tx: Time) -> u32 {
        let mut marked = 0;
        while let Some(&(seq, t)) = self.retx_fifo.front() {
            if t >= delivered_tx {
                break;
            }
            self.retx_fifo.pop_front();
            if self.flags[self.idx(seq)] & RETRANS != 0 && self.mark_lost(seq) {
                marked += 1;
            }
        }
        marked
    }

    /// RACK's marking (`tcp_rack_detect_loss`): a hole sent before the most recently sent
    /// delivered segment (`rack_xmit`, ties broken by sequence against `rack_seq`) is lost
    /// once `wait` (RACK's RTT plus the reordering window) has passed since it was sent. Holes not yet retransmitted were sent in
    /// sequence order, so the rule is monotone in the sequence number and a forward cursor
    /// suffices; retransmissions are judged by `detect_lost_retransmits`. Returns the number
    /// newly marked and the send time of the first hole sent before the RACK segment but
    /// not yet expired (it arms the reorder timer).
    pub fn rack_mark_lost(
        &mut self,
        nxt: u32,
        rack_xmit: Time,
        rack_seq: u32,
        now: Time,
        wait: Time,
    ) -> (u32, Option<Time>) {
        let mut marked = 0;
        while self.mark_seq != nxt {
            let i = self.idx(self.mark_seq);
            let f = self.flags[i];
            if f & (SACKED | LOST | RETRANS) == 0 {
                let sent = self.sent[i];
                if !sent_after(rack_xmit, rack_seq, sent, self.mark_seq) {
                    break;
                }
                if sent + wait > now {
                    return (marked, Some(sent));
                }
                self.flags[i] |= LOST;
                self.count_lost(self.mark_seq);
                self.lost_marked += 1;
                marked += 1;
                if before(self.mark_seq, self.retx_seq) {
                    self.retx_seq = self.mark_seq;
                }
            }
            self.mark_seq = self.mark_seq.wrapping_add(1);
        }
        (marked, None)
    }

    /// A segment not marked lost before now is: count it, and keep `lost_end` past it.
    #[inline]
    fn count_lost(&mut self, seq: u32) {
        self.lost_out += 1;
        let end = seq.wrapping_add(1);
        // The first lost segment restarts the bound (those before it were acknowledged).
        if self.lost_out == 1 || before(self.lost_end, end) {
            self.lost_end = end;
        }
    }

    /// Mark one segment lost (NewReno: the head after three duplicate ACKs or a partial ACK).
    pub fn mark_lost(&mut self, seq: u32) -> bool {
        let i = self.idx(seq);
        let f = self.flags[i];
        if f & SACKED != 0 || (f & LOST != 0 && f & RETRANS == 0) {
            return false;
        }
        // A retransmission that is itself lost is no longer in flight.
        if f & RETRANS != 0 {
            self.retrans_out -= 1;
        }
        if f & LOST == 0 {
            self.count_lost(seq);
        }
        self.flags[i] = (f & !RETRANS) | LOST;
        self.lost_marked += 1;
        if before(seq, self.retx_seq) {
            self.retx_seq = seq;
        }
        true
    }

    /// A timeout (Linux `tcp_timeout_mark_lost`): the head and every segment not SACKed
    /// and sent at or before `sent_by` (RACK: more than the latest delivered segment's RTT
    /// ago) is lost; a lost retransmission is no longer in flight. Segments sent since keep
    /// their marks and are judged later by the usual rules.
    pub fn timeout_mark_lost(&mut self, una: u32, nxt: u32, sent_by: Time) {
        let mut s = una;
        let mut first_kept = None;
        while s != nxt {
            let i = self.idx(s);
            let f = self.flags[i];
            if f & SACKED == 0 && (s == una || self.sent[i] <= sent_by) {
                // tcp_mark_skb_lost: a lost retransmission leaves flight and counts as a
                // new loss; a segment already lost and not retransmitted is left alone; any
                // other becomes lost (a retransmission not yet judged stays in flight, L|R).
                if f & LOST != 0 {
                    if f & RETRANS != 0 {
                        self.retrans_out -= 1;
                        self.flags[i] = f & !RETRANS;
                        self.lost_marked += 1;
                    }
                } else {
                    self.count_lost(s);
                    self.flags[i] = f | LOST;
                    self.lost_marked += 1;
                }
            } else if f & SACKED == 0 && first_kept.is_none() {
                first_kept = Some(s);
            }
            s = s.wrapping_add(1);
        }
        self.mark_seq = first_kept.unwrap_or(nxt);
        self.retx_seq = una;
        let (flags, mask) = (&self.flags, self.mask);
        self.retx_fifo.retain(|&(seq, _)| flags[(seq & mask) as usize] & RETRANS != 0);
    }

    /// The next segment marked lost and not yet retransmitted, if any, below `limit`.
    #[inline]
    pub fn next_retransmit(&mut self, una: u32, limit: u32) -> Option<u32> {
        if self.lost_out == 0 {
            return None;
        }
        if before(self.retx_seq, una) {
            self.retx_seq = una;
        }
        let end = if before(self.lost_end, limit) { self.lost_end } else { limit };
        while self.retx_seq != end && !before(end, self.retx_seq) {
            let f = self.flags[self.idx(self.retx_seq)];
            if f & LOST != 0 && f & RETRANS == 0 {
                return Some(self.retx_seq);
            }
            self.retx_seq = self.retx_seq.wrapping_add(1);
        }
        None
    }

    /// Forget retransmissions below `una` (acknowledged) at the head of the FIFO.
    #[inline]
    pub fn trim_retransmits(&mut self, una: u32) {
        while let Some(&(seq, _)) = self.retx_fifo.front() {
            if !before(seq, una) {
                break;
            }
            self.retx_fifo.pop_front();
        }
    }

    /// Segment `seq`'s last transmission: its time and its delivery-rate stamp.
    #[inline]
    pub fn transmission(&self, seq: u32) -> (Time, TxStamp) {
        let i = self.idx(seq);
        (self.sent[i], self.stamps[i])
    }

    /// Stamp the transmission of `seq` just recorded by [`Scoreboard::on_send`].
    #[inline]
    pub fn set_stamp(&mut self, seq: u32, stamp: TxStamp) {
        let i = self.idx(seq);
        self.stamps[i] = stamp;
    }

    /// When `seq` was last sent.
    #[inline]
    pub fn sent_at(&self, seq: u32) -> Time {
        self.sent[self.idx(seq)]
    }

    /// Whether `seq` was ever retransmitted.
    #[inline]
    pub fn ever_retransmitted(&self, seq: u32) -> bool {
        self.flags[self.idx(seq)] & EVER_RETRANS != 0
    }

    /// Whether `seq` is SACKed.
    #[inline]
    pub fn is_sacked(&self, seq: u32) -> bool {
        self.flags[self.idx(seq)] & SACKED != 0
    }

    /// Whether a retransmission is unacknowledged (`tcp_any_retrans_done`: one in flight,
    /// or the head was retransmitted).
    #[inline]
    pub fn any_retrans_done(&self, una: u32) -> bool {
        self.retrans_out > 0 || self.ever_retransmitted(una)
    }
}

impl Default for Scoreboard {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hole_sent_before_a_delivered_segment_is_lost_once_expired() {
        // Segments 0..10 sent at 0; 2 is lost; 3 and 4 SACKed at 100 ms: 2 was sent before
        // 4 (same time, lower sequence). With RACK's RTT 100 ms and a 25 ms window it
        // expires only at 125 ms: not lost at 100 ms (the reorder timer waits for the hole
        // sent at 0); with the window gone (three SACKed) it is lost at once.
        let mut sb = Scoreboard::new();
        for s in 0..10 {
            sb.on_send(s, 0, false);
        }
        let a = sb.cum_ack(0, 2);
        assert_eq!((a.acked, a.newly_delivered), (2, 2));
        sb.sack(3);
        sb.sack(4);
        let ms = 1_000_000;
        assert_eq!(sb.rack_mark_lost(10, 0, 4, 100 * ms, 125 * ms), (0, Some(0)));
        sb.sack(5);
        assert_eq!(sb.rack_mark_lost(10, 0, 5, 100 * ms, 100 * ms), (1, None));
        assert_eq!((sb.sacked_out, sb.lost_out), (3, 1));
        assert_eq!(sb.next_retransmit(2, 10), Some(2));
        sb.on_send(2, 1, true);
        assert_eq!(sb.retrans_out, 1);
        assert_eq!(sb.next_retransmit(2, 10), None);
        // The retransmission is ACKed with 3..5: una jumps to 6, counters return to zero,
        // and only 2 was newly delivered by the cumulative ACK (3..5 were SACKed before).
        let a = sb.cum_ack(2, 6);
        assert_eq!((a.acked, a.newly_delivered), (4, 1));
        assert_eq!((sb.sacked_out, sb.lost_out, sb.retrans_out), (0, 0, 0));
        assert_eq!(a.first_sent, None, "Karn: no sample from a retransmitted segment");
    }

    #[test]
    fn a_retransmission_is_lost_when_later_data_is_delivered() {
        // 0..6 sent at t=0; 1 lost and retransmitted at t=10; new segment 6 sent at t=20.
        // A SACK for 6 (sent at 20 > 10) proves the retransmission of 1 was lost.
        let mut sb = Scoreboard::new();
        for s in 0..6 {
            sb.on_send(s, 0, false);
        }
        sb.cum_ack(0, 1);
        for s in 2..5 {
            sb.sack(s);
        }
        // RACK with no window (three SACKed): 1, sent with 4 at 0 but below it, is lost.
        sb.rack_mark_lost(6, 0, 4, 100, 100);
        assert_eq!(sb.next_retransmit(1, 6), Some(1));
        sb.on_send(1, 10, true);
        sb.on_send(6, 20, false);
        assert_eq!((sb.lost_out, sb.retrans_out), (1, 1));
        sb.sack(6);
        assert_eq!((sb.lost_out, sb.retrans_out), (1, 0));
        assert_eq!(sb.next_retransmit(1, 7), Some(1));
    }

    #[test]
    fn timeout_marks_everything_not_sacked() {
        let mut sb = Scoreboard::new();
        for s in 0..8 {
            sb.on_send(s, 0, false);
        }
        sb.sack(5);
        sb.timeout_mark_lost(0, 8, 0);
        assert_eq!((sb.lost_out, sb.sacked_out), (7, 1));
        assert_eq!(sb.next_retransmit(0, 8), Some(0));
    }

    #[test]
    fn timeout_spares_segments_sent_within_the_rack_rtt() {
        // tcp_timeout_mark_lost: the head always; others only once tcp_rack_skb_timeout
        // expired. 0..4 sent at t = 0, 4..8 at t = 50; a timeout that spares what was sent
        // after t = 10 marks 0..4 and leaves 4..8 in flight, to be judged later.
        let mut sb = Scoreboard::new();
        for s in 0..8 {
            sb.on_send(s, if s < 4 { 0 } else { 50 }, false);
        }
        sb.timeout_mark_lost(0, 8, 10);
        assert_eq!(sb.lost_out, 4);
        assert_eq!(sb.next_retransmit(0, 8), Some(0));
        // SACKs of 5..7 (sent at 50, after 4 by sequence) then mark 4 lost by RACK once its
        // RTT has passed (here 60 - 50 >= 10), as before the timeout.
        for s in 5..8 {
            sb.sack(s);
        }
        assert_eq!(sb.rack_mark_lost(8, 50, 7, 60, 10), (1, None));
    }

    #[test]
    fn timeout_counts_each_loss_once() {
        // tcp_mark_skb_lost: 0..4 sent at 0; RACK marked 1 lost (lost_marked 1) and 1 was not
        // yet retransmitted; 2 was lost and retransmitted (L|R). A timeout marks 0 and 3 (new
        // losses), leaves 1 alone (already lost, not retransmitted: not counted again) and
        // counts the retransmission of 2 lost (it leaves flight): tp->lost 2 + 3 = 5.
        let mut sb = Scoreboard::new();
        for s in 0..4 {
            sb.on_send(s, 0, false);
        }
        sb.mark_lost(1);
        sb.mark_lost(2);
        sb.on_send(2, 1, true);
        assert_eq!((sb.lost_marked, sb.lost_out, sb.retrans_out), (2, 2, 1));
        sb.timeout_mark_lost(0, 4, 10);
        assert_eq!((sb.lost_marked, sb.lost_out, sb.retrans_out), (5, 4, 0));
    }

    #[test]
    fn the_next_retransmission_is_the_lowest_lost_segment_not_resent() {
        // Random sends, cumulative ACKs, RACK marks, timeouts, undos and retransmissions on
        // a window of up to 300 segments, with SACKs (RACK) or NewReno's marks of the head:
        // `next_retransmit` (which stops at `lost_end`) answers what a scan of the whole
        // window [una, nxt) does, and after a segment is resent the search has walked no
        // further than the highest lost segment.
        for reno in [false, true] {
            let mut sb = Scoreboard::new();
            let (mut una, mut nxt, mut now) = (0u32, 0u32, 0u64);
            let mut x = 12345u64;
            for _ in 0..20_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = (x >> 33) as u32;
                let window = nxt.wrapping_sub(una);
                now += 1;
                match r % 8 {
                    0 | 1 if window < 300 => {
                        sb.reserve(una, nxt);
                        sb.on_send(nxt, now, false);
                        nxt = nxt.wrapping_add(1);
                    }
                    2 if window > 0 && !reno => {
                        sb.sack(una.wrapping_add(r / 8 % window));
                    }
                    2 if window > 0 => {
                        sb.mark_lost(una);
                    }
                    3 if r / 8 % 4 == 0 => {
                        let new_una = una.wrapping_add(r / 32 % (window + 1));
                        sb.cum_ack(una, new_una);
                        una = new_una;
                    }
                    4 if !reno => {
                        sb.rack_mark_lost(nxt, now.saturating_sub(r as u64 / 8 % 50), nxt, now, r as u64 / 400 % 30);
                    }
                    5 if r / 8 % 64 == 0 => sb.timeout_mark_lost(una, nxt, now.saturating_sub(r as u64 / 512 % 40)),
                    5 if r / 8 % 64 == 1 => sb.unmark_lost(una, nxt),
                    _ => {}
                }
                let scan = (0..nxt.wrapping_sub(una)).map(|k| una.wrapping_add(k)).find(|&s| {
                    let f = sb.flags[sb.idx(s)];
                    f & LOST != 0 && f & RETRANS == 0
                });
                assert_eq!(sb.next_retransmit(una, nxt), scan);
                if let Some(s) = scan.filter(|_| r % 3 == 0) {
                    sb.on_send(s, now, true);
                    sb.next_retransmit(una, nxt);
                    assert!(sb.lost_out == 0 || !before(sb.lost_end, sb.retx_seq));
                }
            }
        }
    }

    #[test]
    fn grows_and_keeps_marks() {
        let mut sb = Scoreboard::new();
        for s in 0..60 {
            sb.on_send(s, s as u64, false);
        }
        sb.sack(30);
        sb.reserve(0, 200);
        for s in 60..200 {
            sb.on_send(s, s as u64, false);
        }
        assert_eq!(sb.sack(30), None);
        assert_eq!(sb.sack(150), Some((150, false)));
    }
}
