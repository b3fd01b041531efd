//! Queue disciplines of a link's buffer. A closed enum, so the per-packet path has no
//! dynamic dispatch.

pub mod droptail;

use crate::engine::Time;
use crate::packet::Packet;
pub use droptail::DropTail;

/// How a buffer's limit is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

/// A queue discipline.
pub enum Queue {
    DropTail(DropTail),
}

impl Queue {
    /// Offer a packet; false if it was dropped.
    #[inline]
    pub fn enqueue(&mut self, now: Time, p: Packet) -> bool {
        match self {
            Queue::DropTail(q) => q.enqueue(now, p),
        }
    }

    #[inline]
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        match self {
            Queue::DropTail(q) => q.dequeue(now),
        }
    }

    pub fn len_packets(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.len_packets(),
        }
    }

    pub fn len_bytes(&self) -> u64 {
        match self {
            Queue::DropTail(q) => q.len_bytes(),
        }
    }

    pub fn count_flow(&self, flow: u32) -> usize {
        match self {
            Queue::DropTail(q) => q.count_flow(flow),
        }
    }
}
