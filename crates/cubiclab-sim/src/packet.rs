//! A packet: a small `Copy` value moved between queues and delay lines, never boxed.

/// `sack` value of an ACK that carries no selective acknowledgement.
pub const NO_SACK: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Index of the flow in the simulation.
    pub flow: u32,
    /// Connection number within the flow's slot (web sessions open one per object);
    /// packets of an earlier connection are discarded on arrival.
    pub conn: u16,
    /// Data: segment number. ACK: cumulative acknowledgement (next segment expected).
    pub seq: u32,
    /// ACK only: the out-of-order segment that triggered it (its SACK block), or `NO_SACK`.
    pub sack: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// The timestamp option, milliseconds modulo 2^16 (`tcp::rcv_window::ts_ms`). Data: the
    /// echoed timestamp (TSecr, the last ACK's TSval). ACK: its own TSval.
    pub ts: u16,
    /// ACK only: the window field, in units of the receiver's window scale.
    pub win: u16,
    /// True for an ACK, false for data.
    pub is_ack: bool,
}

impl cubiclab_path::PathPacket for Packet {
    #[inline]
    fn wire_bytes(&self) -> u32 {
        self.size
    }
}
