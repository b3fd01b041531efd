//! Drop-tail: accept while the buffer has room (in packets or bytes), drop arrivals otherwise.

use std::collections::VecDeque;

use super::Limit;
use crate::{PathPacket, Time};

pub struct DropTail<P> {
    limit: Limit,
    fifo: VecDeque<P>,
    bytes: u64,
}

impl<P: PathPacket> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        Self { limit, fifo: VecDeque::new(), bytes: 0 }
    }

    #[inline]
    pub fn enqueue(&mut self, _now: Time, p: P) -> bool {
        if self.limit.full(self.fifo.len(), self.bytes, p.wire_bytes()) {
            return false;
        }
        self.bytes += p.wire_bytes() as u64;
        self.fifo.push_back(p);
        true
    }

    #[inline]
    pub fn dequeue(&mut self, _now: Time) -> Option<P> {
        let p = self.fifo.pop_front()?;
        self.bytes -= p.wire_bytes() as u64;
        Some(p)
    }

    pub fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    pub fn iter(&self) -> impl Iterator<Item = &P> {
        self.fifo.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::pkt;

    #[test]
    fn packet_limit_drops_the_arrival_that_does_not_fit() {
        let mut q = DropTail::new(Limit::Packets(2));
        assert!(q.enqueue(0, pkt(1500)) && q.enqueue(0, pkt(1500)));
        assert!(!q.enqueue(0, pkt(64)));
        assert_eq!(q.len_packets(), 2);
    }

    #[test]
    fn byte_limit_counts_bytes() {
        // 3000 bytes hold two 1500-byte packets, then a 64-byte ACK does not fit.
        let mut q = DropTail::new(Limit::Bytes(3000));
        assert!(q.enqueue(0, pkt(1500)) && q.enqueue(0, pkt(1500)));
        assert!(!q.enqueue(0, pkt(64)));
        q.dequeue(0);
        assert!(q.enqueue(0, pkt(64)));
        assert_eq!(q.len_bytes(), 1564);
    }
}
