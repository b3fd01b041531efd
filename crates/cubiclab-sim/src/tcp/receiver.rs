//! The receiving end: cumulative ACKs, one SACK block for the segment that arrived out of
//! order, and delayed ACKs (every second in-order segment, or a timer; Linux
//! `tcp_send_delayed_ack` with its 40 ms minimum). Out-of-order arrivals, duplicates and
//! hole fills are acknowledged at once (RFC 5681 Sec. 4.2).

use crate::engine::Time;
use crate::packet::NO_SACK;

/// What the receiver wants done after a segment arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckAction {
    /// Send an ACK now with this SACK value.
    Now { sack: u32 },
    /// Hold the ACK; arm the delayed-ACK timer if it is not armed.
    Delay,
}

pub struct Receiver {
    /// Next in-order segment expected.
    pub rcv_nxt: u32,
    /// Received segments above `rcv_nxt`, as a ring of bits indexed by segment number.
    ooo: Vec<u64>,
    ooo_count: u32,
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
    pub fn new(ack_every: u32) -> Self {
        Self {
            rcv_nxt: 0,
            ooo: vec![0; 16],
            ooo_count: 0,
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

    /// A data segment arrived. Returns the in-order segments it delivered and the ACK to send.
    #[inline]
    pub fn on_data(&mut self, seq: u32, now: Time) -> (u32, AckAction) {
        self.arrived += 1;
        let ahead = seq.wrapping_sub(self.rcv_nxt) as i32;
        if ahead < 0 {
            // Duplicate of delivered data (a spurious retransmission): ACK at once.
            return (0, AckAction::Now { sack: NO_SACK });
        }
        if ahead > 0 {
            self.reserve(ahead as u32);
            if !self.bit(seq) {
                self.set_bit(seq, true);
                self.ooo_count += 1;
            }
            return (0, AckAction::Now { sack: seq });
        }
        // In order: deliver it and any run of buffered segments behind it.
        let start = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        let filled_hole = self.ooo_count > 0;
        while self.ooo_count > 0 && self.bit(self.rcv_nxt) {
            self.set_bit(self.rcv_nxt, false);
            self.ooo_count -= 1;
            self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        }
        let delivered = self.rcv_nxt.wrapping_sub(start);
        if filled_hole {
            self.pending = 0;
            return (delivered, AckAction::Now { sack: NO_SACK });
        }
        if self.pending == 0 {
            self.held_at = now;
        }
        self.pending += 1;
        if self.pending >= self.ack_every {
            self.pending = 0;
            (delivered, AckAction::Now { sack: NO_SACK })
        } else {
            (delivered, AckAction::Delay)
        }
    }

    /// Arrival time of the oldest segment waiting for a delayed ACK, if any.
    pub fn held_since(&self) -> Option<Time> {
        (self.pending > 0).then_some(self.held_at)
    }

    /// An ACK was just sent for everything received: nothing is pending.
    pub fn acked_now(&mut self) {
        self.pending = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_second_segment_is_acked() {
        let mut r = Receiver::new(2);
        assert_eq!(r.on_data(0, 0), (1, AckAction::Delay));
        assert_eq!(r.on_data(1, 0), (1, AckAction::Now { sack: NO_SACK }));
    }

    #[test]
    fn hole_then_fill_delivers_the_run() {
        // 0 arrives, 1 is lost, 2..=4 arrive out of order (each SACKed at once), then 1
        // fills the hole and releases 1..=4: four segments, rcv_nxt = 5.
        let mut r = Receiver::new(2);
        r.on_data(0, 0);
        for s in 2..=4 {
            assert_eq!(r.on_data(s, 0), (0, AckAction::Now { sack: s }));
        }
        assert_eq!(r.on_data(1, 0), (4, AckAction::Now { sack: NO_SACK }));
        assert_eq!(r.rcv_nxt, 5);
    }

    #[test]
    fn ring_grows_for_far_segments() {
        let mut r = Receiver::new(1);
        r.on_data(5000, 0);
        assert_eq!(r.on_data(0, 0).0, 1);
        for s in 1..5000 {
            r.on_data(s, 0);
        }
        assert_eq!(r.rcv_nxt, 5001);
    }
}
