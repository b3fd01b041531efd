//! The buffer's packets in arrival order, with the counts every discipline reads: packets,
//! bytes, and when each packet arrived, so that its sojourn is known when it leaves.

use std::collections::VecDeque;

use crate::{PathPacket, Time};

pub struct Fifo<P> {
    /// Each packet with the time it was enqueued.
    packets: VecDeque<(Time, P)>,
    bytes: u64,
}

impl<P> Default for Fifo<P> {
    fn default() -> Self {
        Self { packets: VecDeque::new(), bytes: 0 }
    }
}

impl<P: PathPacket> Fifo<P> {
    /// Bytes one waiting packet takes (a buffer that grows by doubling holds up to twice that).
    pub const ENTRY_BYTES: usize = std::mem::size_of::<(Time, P)>();

    #[inline]
    pub fn push(&mut self, now: Time, p: P) {
        self.bytes += p.wire_bytes() as u64;
        self.packets.push_back((now, p));
    }

    /// The head packet and the time it was enqueued.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, P)> {
        let (enqueued, p) = self.packets.pop_front()?;
        self.bytes -= p.wire_bytes() as u64;
        Some((enqueued, p))
    }

    #[inline]
    pub fn len_packets(&self) -> usize {
        self.packets.len()
    }

    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// When the head packet was enqueued.
    #[inline]
    pub fn head_enqueued(&self) -> Option<Time> {
        self.packets.front().map(|&(t, _)| t)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &P> {
        self.packets.iter().map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::pkt;

    #[test]
    fn counts_follow_pushes_and_pops_in_arrival_order() {
        // 1500 + 64 + 577 = 2141 bytes in three packets; popping the first leaves 641 in two,
        // and each packet comes back with the time it was pushed.
        let mut f = Fifo::default();
        f.push(10, pkt(1500));
        f.push(20, pkt(64));
        f.push(30, pkt(577));
        assert_eq!((f.len_packets(), f.len_bytes()), (3, 2141));
        assert_eq!(f.head_enqueued(), Some(10));
        assert_eq!(f.pop(), Some((10, pkt(1500))));
        assert_eq!(f.head_enqueued(), Some(20));
        assert_eq!((f.len_packets(), f.len_bytes()), (2, 641));
        assert_eq!(f.iter().map(|p| p.size).collect::<Vec<_>>(), vec![64, 577]);
        assert_eq!((f.pop(), f.pop()), (Some((20, pkt(64))), Some((30, pkt(577)))));
        assert!(f.is_empty() && f.len_bytes() == 0 && f.pop().is_none());
    }
}
