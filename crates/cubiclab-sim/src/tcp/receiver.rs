//! The receiving end as Linux 6.x acknowledges (`net/ipv4/tcp_input.c`): cumulative ACKs
//! with one SACK block for the segment that arrived out of order; in order, an ACK once
//! more than one full segment is unacknowledged (`__tcp_ack_snd_check`) or while in
//! quick-ACK mode, else a delayed ACK after `ato`. Quick-ACK mode holds for
//! `rcv_wnd / (2 rcv_mss)` ACKs (at most 16) at the first data, after a gap longer than the
//! RTO (`tcp_event_data_recv`) and after a duplicate (`tcp_enter_quickack_mode`), and for
//! one more ACK whenever a segment grows the receive window (`tcp_grow_window`'s
//! `quick |= 1`, see `rcv_window`): while the window grows, every segment is ACKed. `ato`
//! follows the arrival gaps (`tcp_event_data_recv`), doubles when the delayed-ACK timer
//! fires (`tcp_delack_timer_handler`) and the timer waits at most max(RTT, `ato_min`)
//! (`tcp_send_delayed_ack`). Out-of-order arrivals and hole fills are acknowledged at once.
//!
//! Not modelled: SACK compression (Linux sends the first three duplicate ACKs for one
//! `rcv_nxt` at once, then at most one per min(1 ms, RTT/20) with up to three blocks; the
//! sender learns the same segments either way unless ACKs are lost) and D-SACK.

use crate::engine::Time;
use crate::packet::NO_SACK;
use crate::tcp::rcv_window::RcvWindow;

/// What the receiver wants done after a segment arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckAction {
    /// Send an ACK now with this SACK value.
    Now { sack: u32 },
    /// Hold the ACK; arm the delayed-ACK timer if it is not armed.
    Delay,
}

/// Linux `TCP_MAX_QUICKACKS`.
const TCP_MAX_QUICKACKS: u32 = 16;

pub struct Receiver {
    /// Next in-order segment expected.
    pub rcv_nxt: u32,
    /// `icsk_ack.quick`: ACKs still to send at once.
    quick: u32,
    /// `icsk_ack.ato`: the delayed-ACK timeout (0 before the first data).
    ato: Time,
    /// `icsk_ack.lrcvtime`: arrival of the last in-order segment.
    lrcvtime: Time,
    /// `TCP_ATO_MIN` (also `TCP_DELACK_MIN`).
    ato_min: Time,
    /// The path's RTT as the receiver measured it in the handshake, and its RTO.
    rtt: Time,
    rto: Time,
    /// The advertised window (`rcv_ssthresh`): it sizes the quick-ACK count, and its
    /// growth asks for an immediate ACK. `window0` is a new connection's.
    window: RcvWindow,
    window0: RcvWindow,
    /// Received segments above `rcv_nxt`, as a ring of bits indexed by segment number; how
    /// many, and one past the highest (meaningful while any are held).
    ooo: Vec<u64>,
    ooo_count: u32,
    ooo_end: u32,
    /// In-order segments not yet acknowledged.
    pending: u32,
    /// Segments per ACK when delaying (2 in Linux); 1 disables delayed ACKs.
    ack_every: u32,
    /// Time of the pending heap entry of the delayed-ACK timer, 0 when none.
    pub delack_deadline: Time,
    /// Arrival time of the oldest segment held for a delayed ACK.
    held_at: Time,
    /// Segments that arrived (including duplicates).
    pub arrived: u64,
}

impl Receiver {
    /// `ack_every` segments per ACK when delaying (1: no delayed ACKs), `ato_min` the
    /// shortest delayed-ACK timeout, `rtt` the path's round trip, `window` the receive
    /// window of a new connection.
    pub fn new(ack_every: u32, ato_min: Time, rtt: Time, window: RcvWindow) -> Self {
        Self {
            rcv_nxt: 0,
            quick: 0,
            ato: 0,
            lrcvtime: 0,
            ato_min,
            rtt,
            // tcp_rtt_estimator's first sample: rto = rtt + max(2 rtt, 200 ms).
            rto: rtt + (2 * rtt).max(200_000_000),
            window,
            window0: window,
            ooo: vec![0; 16],
            ooo_count: 0,
            ooo_end: 0,
            pending: 0,
            ack_every: ack_every.max(1),
            delack_deadline: 0,
            held_at: 0,
            arrived: 0,
        }
    }

    /// A new connection in the same slot (all earlier data was delivered in order, so the
    /// out-of-order ring is already clear).
    pub fn reset(&mut self) {
        self.rcv_nxt = 0;
        self.pending = 0;
        self.quick = 0;
        self.ato = 0;
        self.window = self.window0;
        debug_assert_eq!(self.ooo_count, 0);
    }

    #[inline]
    fn bit(&self, seq: u32) -> bool {
        let i = (seq as usize) % (self.ooo.len() * 64);
        self.ooo[i / 64] >> (i % 64) & 1 == 1
    }

    #[inline]
    fn set_bit(&mut self, seq: u32, on: bool) {
        let i = (seq as usize) % (self.ooo.len() * 64);
        if on {
            self.ooo[i / 64] |= 1 << (i % 64);
        } else {
            self.ooo[i / 64] &= !(1 << (i % 64));
        }
    }

    /// Grow the ring so that `span` segments above `rcv_nxt` fit (rare; only while windows grow).
    fn reserve(&mut self, span: u32) {
        let cap = self.ooo.len() * 64;
        if (span as usize) < cap {
            return;
        }
        let mut new_len = self.ooo.len();
        while new_len * 64 <= span as usize {
            new_len *= 2;
        }
        let old = std::mem::replace(&mut self.ooo, vec![0; new_len]);
        let old_cap = old.len() * 64;
        for off in 0..old_cap as u32 {
            let seq = self.rcv_nxt.wrapping_add(off);
            let i = (seq as usize) % old_cap;
            if old[i / 64] >> (i % 64) & 1 == 1 {
                self.set_bit(seq, true);
            }
        }
    }

    /// A data segment arrived, echoing the timestamp `tsecr`. Returns the in-order segments
    /// it delivered and the ACK to send.
    #[inline]
    pub fn on_data(&mut self, seq: u32, tsecr: u16, now: Time) -> (u32, AckAction) {
        self.arrived += 1;
        // tcp_rcv_established: tcp_rcv_rtt_measure_ts for every segment.
        self.window.measure_rtt_ts(tsecr, now);
        let ahead = seq.wrapping_sub(self.rcv_nxt) as i32;
        if ahead < 0 {
            // Duplicate of delivered data (a spurious retransmission): tcp_data_queue
            // enters quick-ACK mode and ACKs at once.
            self.incr_quickack(TCP_MAX_QUICKACKS);
            self.ato = self.ato_min;
            return (0, AckAction::Now { sack: NO_SACK });
        }
        if ahead > 0 {
            self.reserve(ahead as u32);
            if !self.bit(seq) {
                self.set_bit(seq, true);
                if self.ooo_count == 0 || (seq.wrapping_add(1).wrapping_sub(self.ooo_end) as i32) > 0 {
                    self.ooo_end = seq.wrapping_add(1);
                }
                self.ooo_count += 1;
                // tcp_data_queue_ofo grows the window and the buffer by the span held.
                self.grow_window();
                self.window.ofo_grow(self.rcv_nxt, self.ooo_end);
            }
            return (0, AckAction::Now { sack: seq });
        }
        // In order: deliver it (tcp_queue_rcv, then tcp_event_data_recv) and any run of
        // buffered segments behind it (tcp_ofo_queue); the application reads it all at once
        // (tcp_recvmsg -> tcp_rcv_space_adjust).
        let start = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        self.event_data_recv(now);
        let filled_hole = self.ooo_count > 0;
        while self.ooo_count > 0 && self.bit(self.rcv_nxt) {
            self.set_bit(self.rcv_nxt, false);
            self.ooo_count -= 1;
            self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        }
        let delivered = self.rcv_nxt.wrapping_sub(start);
        let ooo_end = if self.ooo_count > 0 { self.ooo_end } else { self.rcv_nxt };
        self.window.space_adjust(self.rcv_nxt, ooo_end, now);
        if filled_hole {
            self.pending = 0;
            return (delivered, AckAction::Now { sack: NO_SACK });
        }
        if self.pending == 0 {
            self.held_at = now;
        }
        self.pending += 1;
        // __tcp_ack_snd_check: more than one full segment unacknowledged, or quick-ACK mode.
        if self.pending >= self.ack_every || self.quick > 0 {
            self.pending = 0;
            (delivered, AckAction::Now { sack: NO_SACK })
        } else {
            (delivered, AckAction::Delay)
        }
    }

    /// `tcp_grow_window`: a grown window is advertised at once (`icsk_ack.quick |= 1`).
    #[inline]
    fn grow_window(&mut self) {
        if self.window.grow(self.ooo_count) {
            self.quick |= 1;
        }
    }

    /// `tcp_incr_quickack`: at least `rcv_wnd / (2 rcv_mss)` quick ACKs (2 if that is 0),
    /// at most `max`.
    fn incr_quickack(&mut self, max: u32) {
        let n = match self.window.quickacks() {
            0 => 2,
            n => n,
        };
        self.quick = self.quick.max(n.min(max));
    }

    /// `tcp_event_data_recv` for an in-order segment arriving at `now`.
    fn event_data_recv(&mut self, now: Time) {
        if self.ato == 0 {
            // The first data: the connection is established (tcp_init_buffer_space) and
            // its first full segment measured (tcp_measure_rcv_mss); the delayed-ACK engine
            // starts in quick-ACK mode.
            self.window.established(now);
            self.incr_quickack(TCP_MAX_QUICKACKS);
            self.ato = self.ato_min;
        } else {
            let m = now - self.lrcvtime;
            if m <= self.ato_min / 2 {
                self.ato = self.ato / 2 + self.ato_min / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(self.rto);
            } else if m > self.rto {
                // The sender was idle longer than an RTO: ACK quickly again.
                self.incr_quickack(TCP_MAX_QUICKACKS);
            }
        }
        self.lrcvtime = now;
        self.window.measure_rtt_window(self.rcv_nxt, now);
        self.grow_window();
    }

    /// The window field of an ACK sent now (`tcp_select_window`).
    #[inline]
    pub fn select_window(&mut self) -> u16 {
        self.window.select(self.rcv_nxt, self.ooo_count)
    }

    /// The receive window's state (for tests and recording).
    pub fn window(&self) -> &RcvWindow {
        &self.window
    }

    /// `tcp_send_delayed_ack`: how long an ACK may wait now, min(ato, max(RTT, ato_min)).
    pub fn delack_delay(&self) -> Time {
        if self.ato > self.ato_min {
            self.ato.min(self.rtt.max(self.ato_min))
        } else {
            self.ato_min
        }
    }

    /// `tcp_delack_timer_handler`: the timer had to fire, so `ato` doubles (up to the RTO).
    pub fn delack_fired(&mut self) {
        self.ato = (self.ato * 2).min(self.rto);
    }

    /// Arrival time of the oldest segment waiting for a delayed ACK, if any.
    pub fn held_since(&self) -> Option<Time> {
        (self.pending > 0).then_some(self.held_at)
    }

    /// An ACK was just sent for everything received: nothing is pending, and one quick
    /// ACK is used up (`tcp_dec_quickack_mode`; leaving the mode resets `ato`).
    pub fn acked_now(&mut self) {
        self.pending = 0;
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.ato_min;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// Feed in-order segments `from..to` one `gap` apart from `t`; return which were ACKed at
    /// once (the sim sends the ACK and calls `acked_now`).
    fn feed(r: &mut Receiver, from: u32, to: u32, t: Time, gap: Time) -> Vec<u32> {
        let mut acked = Vec::new();
        for (k, s) in (from..to).enumerate() {
            if let (_, AckAction::Now { .. }) = r.on_data(s, 0, t + k as Time * gap) {
                r.acked_now();
                acked.push(s);
            }
        }
        acked
    }

    /// A receiver of 1448-byte segments whose window stays at `segments`.
    fn fixed(ack_every: u32, rtt: Time, segments: u64) -> Receiver {
        Receiver::new(ack_every, 40 * MS, rtt, RcvWindow::fixed(segments * 1448, 1448))
    }

    #[test]
    fn quick_acks_at_the_start_then_every_second_segment() {
        // tcp_event_data_recv on the first data: tcp_incr_quickack with a window of 10
        // segments -> 10 / 2 = 5 quick ACKs (segments 0..=4), then __tcp_ack_snd_check's
        // "more than one full frame": 6, 8, 10, ...
        let mut r = fixed(2, 100 * MS, 10);
        assert_eq!(feed(&mut r, 0, 12, 0, MS), [0, 1, 2, 3, 4, 6, 8, 10]);
        assert_eq!(r.delack_delay(), 40 * MS);
    }

    #[test]
    fn every_segment_is_acked_while_the_window_grows() {
        // The testbed's receiver: SO_RCVBUF 8 MB, window 8 388 264 -> 10 485 760 bytes in
        // 725 steps of at most 2 x 1448 (rcv_window's test). First data: tcp_incr_quickack
        // -> min(8 388 264 / 2896, 16) = 16 quick ACKs; each growing segment sets
        // quick |= 1 (16 -> 17) and its ACK takes one back (tcp_dec_quickack_mode): 16
        // again, so segments 0..=724 are each ACKed. Then the 16 quick ACKs left are spent
        // on 725..=740, and from 741 on every second segment is ACKed: 742, 744, ...
        let mut r = Receiver::new(
            2,
            40 * MS,
            100 * MS,
            RcvWindow::new(Some(8 << 20), crate::tcp::rcv_window::TCP_RMEM_DEFAULT, 1448),
        );
        let acked = feed(&mut r, 0, 750, 0, MS);
        let expect: Vec<u32> = (0..=740).chain([742, 744, 746, 748]).collect();
        assert_eq!(acked, expect);
    }

    #[test]
    fn quick_acks_again_after_an_idle_gap_longer_than_the_rto() {
        // Receiver RTO from the handshake RTT 100 ms: 100 + max(200, 200) = 300 ms. A gap of
        // 400 ms > 300 ms after the start: tcp_incr_quickack again, with a window of 50
        // segments -> min(25, 16) = 16 quick ACKs, then every second segment (12 of 24).
        let mut r = fixed(2, 100 * MS, 50);
        feed(&mut r, 0, 20, 0, MS);
        let acked = feed(&mut r, 20, 60, 420 * MS, MS);
        assert_eq!(acked.len(), 16 + 12, "{acked:?}");
        assert_eq!(acked[..16], (20..36).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn ato_doubles_when_the_timer_fires_and_follows_arrivals() {
        // tcp_delack_timer_handler: ato = min(2 ato, rto) = 80 ms; the timer then waits
        // min(ato, max(rtt 50 ms, 40 ms)) = 50 ms. A segment 10 ms later (<= ato_min / 2):
        // ato = 80 / 2 + 20 = 60 ms (tcp_event_data_recv).
        let mut r = fixed(2, 50 * MS, 10);
        feed(&mut r, 0, 5, 0, MS);
        r.delack_fired();
        assert_eq!(r.delack_delay(), 50 * MS);
        r.on_data(5, 0, 14 * MS);
        assert_eq!(r.ato, 60 * MS);
    }

    #[test]
    fn hole_then_fill_delivers_the_run() {
        // 0 arrives, 1 is lost, 2..=4 arrive out of order (each SACKed at once), then 1
        // fills the hole and releases 1..=4: four segments, rcv_nxt = 5.
        let mut r = fixed(2, 100 * MS, 10);
        r.on_data(0, 0, 0);
        for s in 2..=4 {
            assert_eq!(r.on_data(s, 0, 0), (0, AckAction::Now { sack: s }));
        }
        assert_eq!(r.on_data(1, 0, 0), (4, AckAction::Now { sack: NO_SACK }));
        assert_eq!(r.rcv_nxt, 5);
    }

    #[test]
    fn ring_grows_for_far_segments() {
        let mut r = fixed(1, 100 * MS, 10);
        r.on_data(5000, 0, 0);
        assert_eq!(r.on_data(0, 0, 0).0, 1);
        for s in 1..5000 {
            r.on_data(s, 0, 0);
        }
        assert_eq!(r.rcv_nxt, 5001);
    }
}
