//! The bottleneck path, without input or output: a buffer (one FIFO under a queue
//! discipline's verdicts: drop-tail, RED, CoDel) in front of a transmitter of fixed rate,
//! random loss on the packets leaving it, and the seeded random streams these draw from.
//!
//! The simulator (`cubiclab-sim`) and the emulator (`cubiclab-emu`) both build their
//! bottleneck from here with [`Link::new`], so one scenario and seed describe the same path
//! in both: the same drop decisions for the same arrivals at the same times. Time is integer
//! nanoseconds from the start of the run. The caller drives the link: it offers packets,
//! and calls [`Link::tx_done`] at the finish time the link told it.
//!
//! The path is generic over the packet: anything small and `Copy` that knows its size on
//! the wire ([`PathPacket`]); the simulator moves its `Packet`, the emulator a handle to a
//! buffer it owns. Nothing on the per-packet path allocates once the queues have grown.

pub mod link;
pub mod loss;
pub mod queue;
pub mod rng;
pub mod schedule;

pub use link::{Link, LinkSpec, Offer};
pub use loss::{LossSpec, RandomLoss};
pub use queue::codel::CoDelSpec;
pub use queue::red::RedSpec;
pub use queue::{CoDel, DropTail, Limit, Queue, QueueDiscipline, QueueSettings, Red, Verdict};
pub use rng::Rng;
pub use schedule::{RateSchedule, ScheduleSpec};

/// Nanoseconds since the start of the run.
pub type Time = u64;

/// What the path needs of a packet: its size on the wire, in bytes, and, for a discipline
/// that marks, its ECN field.
pub trait PathPacket: Copy {
    fn wire_bytes(&self) -> u32;

    /// Whether it carries ECT(0) or ECT(1), so that a discipline may mark it instead of
    /// dropping it (RFC 3168 Sec. 5). A packet without an ECN field is not.
    #[inline]
    fn ecn_capable(&self) -> bool {
        false
    }

    /// Set CE. Called only on packets that are `ecn_capable`.
    #[inline]
    fn mark_ce(&mut self) {}
}

/// Random stream numbers owned by the path (see `Rng::new`); the simulator's own streams
/// (start jitter, web sessions) are numbered below and above this block, so the two never
/// collide.
pub const STREAM_LINK: u64 = 1 << 40;

#[cfg(test)]
pub(crate) mod test_packet {
    /// A bare packet for the path's own tests.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Pkt {
        pub size: u32,
        /// ECN-capable transport.
        pub ect: bool,
        /// Congestion experienced.
        pub ce: bool,
    }

    impl super::PathPacket for Pkt {
        fn wire_bytes(&self) -> u32 {
            self.size
        }

        fn ecn_capable(&self) -> bool {
            self.ect
        }

        fn mark_ce(&mut self) {
            self.ce = true;
        }
    }

    /// A packet of `size` bytes without ECN.
    pub fn pkt(size: u32) -> Pkt {
        Pkt { size, ect: false, ce: false }
    }

    /// An ECN-capable packet of `size` bytes.
    pub fn ect(size: u32) -> Pkt {
        Pkt { size, ect: true, ce: false }
    }
}
