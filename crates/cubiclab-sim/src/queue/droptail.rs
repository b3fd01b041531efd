//! Drop-tail: accept while the buffer has room (in packets or bytes), drop arrivals otherwise.

use std::collections::VecDeque;

use super::Limit;
use crate::engine::Time;
use crate::packet::Packet;

pub struct DropTail {
    limit: Limit,
    fifo: VecDeque<Packet>,
    bytes: u64,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        Self { limit, fifo: VecDeque::new(), bytes: 0 }
    }

    #[inline]
    pub fn enqueue(&mut self, _now: Time, p: Packet) -> bool {
        let full = match self.limit {
            Limit::Packets(n) => self.fifo.len() >= n as usize,
            Limit::Bytes(b) => self.bytes + p.size as u64 > b,
        };
        if full {
            return false;
        }
        self.bytes += p.size as u64;
        self.fifo.push_back(p);
        true
    }

    #[inline]
    pub fn dequeue(&mut self, _now: Time) -> Option<Packet> {
        let p = self.fifo.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    pub fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    pub fn count_flow(&self, flow: u32) -> usize {
        self.fifo.iter().filter(|p| p.flow == flow && !p.is_ack).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32) -> Packet {
        Packet { flow: 0, conn: 0, seq: 0, sack: 0, size, is_ack: false }
    }

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
