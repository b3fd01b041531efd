//! The bottleneck path, without input or output: a buffer (one FIFO under a queue
//! discipline's verdicts: drop-tail, RED, CoDel, step marking, PIE; or the queues of
//! FQ-CoDel's flows or DualPI2's two) in front of a transmitter of fixed rate,
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
pub use queue::dualpi2::DualPi2Spec;
pub use queue::fq_codel::FqCoDelSpec;
pub use queue::pie::PieSpec;
pub use queue::red::RedSpec;
pub use queue::step::StepSpec;
pub use queue::{CoDel, DropTail, FqCoDel, Limit, Queue, QueueDiscipline, QueueSettings, Red, Step, Verdict};
pub use rng::Rng;
pub use schedule::{RateSchedule, ScheduleSpec};

/// Nanoseconds since the start of the run.
pub type Time = u64;

/// The IP header's ECN field as its two bits on the wire (RFC 3168 Sec. 5): ECT(0) and
/// ECT(1) say the transport can take a mark, CE is the mark. L4S senders use ECT(1)
/// (RFC 9331), classic ones ECT(0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    /// The codepoint of the field's two bits (higher bits ignored).
    #[inline]
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    #[inline]
    pub const fn bits(self) -> u8 {
        self as u8
    }
}

/// What the path needs of a packet: its size on the wire, in bytes, and, for a discipline
/// that marks, its ECN field.
pub trait PathPacket: Copy {
    fn wire_bytes(&self) -> u32;

    /// Its ECN field. A packet without one is Not-ECT.
    #[inline]
    fn ecn(&self) -> Ecn {
        Ecn::NotEct
    }

    /// Whether a discipline may mark it instead of dropping it: ECT(0), ECT(1), or CE
    /// already (a mark on a marked packet leaves it CE, as Linux's `INET_ECN_set_ce`).
    #[inline]
    fn ecn_capable(&self) -> bool {
        self.ecn() != Ecn::NotEct
    }

    /// Set CE. Called only on packets that are `ecn_capable`.
    #[inline]
    fn mark_ce(&mut self) {}

    /// What a flow-queueing discipline hashes to sort it into a flow (FQ-CoDel): equal for
    /// the packets of one transport connection in one direction, as the 5-tuple that Linux's
    /// `skb_get_hash` hashes is. A packet without one is in flow 0.
    #[inline]
    fn flow_key(&self) -> u64 {
        0
    }
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
        /// Its flow (FQ-CoDel's key).
        pub flow: u64,
        /// ECN-capable transport.
        pub ect: bool,
        /// With `ect`: ECT(1), L4S's codepoint, rather than ECT(0).
        pub l4s: bool,
        /// Congestion experienced.
        pub ce: bool,
    }

    impl super::PathPacket for Pkt {
        fn wire_bytes(&self) -> u32 {
            self.size
        }

        fn ecn(&self) -> super::Ecn {
            match (self.ect, self.ce) {
                (_, true) => super::Ecn::Ce,
                (true, false) if self.l4s => super::Ecn::Ect1,
                (true, false) => super::Ecn::Ect0,
                (false, false) => super::Ecn::NotEct,
            }
        }

        fn mark_ce(&mut self) {
            self.ce = true;
        }

        fn flow_key(&self) -> u64 {
            self.flow
        }
    }

    /// A packet of `size` bytes without ECN.
    pub fn pkt(size: u32) -> Pkt {
        Pkt { size, flow: 0, ect: false, l4s: false, ce: false }
    }

    /// An ECN-capable packet of `size` bytes (ECT(0)).
    pub fn ect(size: u32) -> Pkt {
        Pkt { size, flow: 0, ect: true, l4s: false, ce: false }
    }

    /// An L4S packet of `size` bytes (ECT(1)).
    pub fn ect1(size: u32) -> Pkt {
        Pkt { size, flow: 0, ect: true, l4s: true, ce: false }
    }
}
