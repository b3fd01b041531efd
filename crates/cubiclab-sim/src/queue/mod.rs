//! Queue disciplines of a link's buffer. A closed enum, so the per-packet path has no
//! dynamic dispatch.

pub mod codel;
pub mod droptail;
pub mod red;

use crate::engine::Time;
use crate::packet::Packet;
pub use codel::{CoDel, CoDelSpec};
pub use droptail::DropTail;
pub use red::{Red, RedSpec};

/// How a buffer's limit is counted: `{"packets": n}` or `{"bytes": n}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

/// A queue discipline.
pub enum Queue {
    DropTail(DropTail),
    Red(Red),
    CoDel(CoDel),
}

impl Queue {
    /// Offer a packet; false if it was dropped.
    #[inline]
    pub fn enqueue(&mut self, now: Time, p: Packet) -> bool {
        match self {
            Queue::DropTail(q) => q.enqueue(now, p),
            Queue::Red(q) => q.enqueue(now, p),
            Queue::CoDel(q) => q.enqueue(now, p),
        }
    }

    #[inline]
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        match self {
            Queue::DropTail(q) => q.dequeue(now),
            Queue::Red(q) => q.dequeue(now),
            Queue::CoDel(q) => q.dequeue(now),
        }
    }

    /// Packets the discipline dropped at dequeue since the last call (CoDel), handed to `f`.
    #[inline]
    pub fn drain_dropped(&mut self, mut f: impl FnMut(Packet)) {
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

    pub fn count_flow(&self, flow: u32) -> usize {
        match self {
            Queue::DropTail(q) => q.count_flow(flow),
            Queue::Red(q) => q.count_flow(flow),
            Queue::CoDel(q) => q.count_flow(flow),
        }
    }
}
