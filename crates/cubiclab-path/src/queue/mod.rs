//! Queue disciplines of a link's buffer. A closed enum, so the per-packet path has no
//! dynamic dispatch.

pub mod codel;
pub mod droptail;
pub mod red;

use crate::{PathPacket, Time};
pub use codel::{CoDel, CoDelSpec};
pub use droptail::DropTail;
pub use red::{Red, RedSpec};

/// How a buffer's limit is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

impl Limit {
    /// Whether a buffer holding `packets` packets of `bytes` bytes has no room for one more
    /// of `size` bytes.
    #[inline]
    pub fn full(&self, packets: usize, bytes: u64, size: u32) -> bool {
        match *self {
            Limit::Packets(n) => packets >= n as usize,
            Limit::Bytes(b) => bytes + size as u64 > b,
        }
    }
}

/// The queue discipline of a bottleneck buffer, as a scenario names it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueKind {
    DropTail,
    Red(RedSpec),
    CoDel(CoDelSpec),
}

/// A queue discipline with its packets.
pub enum Queue<P> {
    DropTail(DropTail<P>),
    Red(Red<P>),
    CoDel(CoDel<P>),
}

impl<P: PathPacket> Queue<P> {
    /// Offer a packet; false if it was dropped.
    #[inline]
    pub fn enqueue(&mut self, now: Time, p: P) -> bool {
        match self {
            Queue::DropTail(q) => q.enqueue(now, p),
            Queue::Red(q) => q.enqueue(now, p),
            Queue::CoDel(q) => q.enqueue(now, p),
        }
    }

    #[inline]
    pub fn dequeue(&mut self, now: Time) -> Option<P> {
        match self {
            Queue::DropTail(q) => q.dequeue(now),
            Queue::Red(q) => q.dequeue(now),
            Queue::CoDel(q) => q.dequeue(now),
        }
    }

    /// Packets the discipline dropped at dequeue since the last call (CoDel), handed to `f`.
    #[inline]
    pub fn drain_dropped(&mut self, mut f: impl FnMut(P)) {
        if let Queue::CoDel(q) = self {
            for p in q.dropped.drain(..) {
                f(p);
            }
        }
    }

    pub fn len_packets(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.len_packets(),
            Queue::Red(q) => q.len_packets(),
            Queue::CoDel(q) => q.len_packets(),
        }
    }

    pub fn len_bytes(&self) -> u64 {
        match self {
            Queue::DropTail(q) => q.len_bytes(),
            Queue::Red(q) => q.len_bytes(),
            Queue::CoDel(q) => q.len_bytes(),
        }
    }

    /// Packets waiting that satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&P) -> bool) -> usize {
        match self {
            Queue::DropTail(q) => q.iter().filter(|p| pred(p)).count(),
            Queue::Red(q) => q.iter().filter(|p| pred(p)).count(),
            Queue::CoDel(q) => q.iter().filter(|p| pred(p)).count(),
        }
    }
}
