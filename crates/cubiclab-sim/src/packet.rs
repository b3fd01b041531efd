//! A packet: a small `Copy` value moved between queues and delay lines, never boxed.

/// Most SACK blocks an ACK carries: TCP's 40 bytes of options hold the timestamps (12 with
/// their padding) and three blocks (4 + 3 x 8), D-SACK included (Linux
/// `tcp_established_options`).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK option of an ACK: up to three blocks of segments `[start, end)`, the most
/// recently changed first; a D-SACK, when there is one, is block 0 (RFC 2883).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub blocks: [(u32, u32); MAX_SACK_BLOCKS],
    pub len: u8,
}

impl SackBlocks {
    pub const NONE: SackBlocks = SackBlocks { blocks: [(0, 0); MAX_SACK_BLOCKS], len: 0 };

    /// The blocks in the order they were written.
    #[inline]
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..self.len as usize]
    }

    /// Append a block if there is room (later blocks are the ones left out, as Linux does).
    #[inline]
    pub fn push(&mut self, start: u32, end: u32) {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = (start, end);
            self.len += 1;
        }
    }

    /// Blocks of single segments `seqs`, in that order (tests and scripted ACKs).
    pub fn of(seqs: &[(u32, u32)]) -> Self {
        let mut s = Self::NONE;
        for &(a, b) in seqs {
            s.push(a, b);
        }
        s
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Index of the flow in the simulation.
    pub flow: u32,
    /// Connection number within the flow's slot (web sessions open one per object);
    /// packets of an earlier connection are discarded on arrival.
    pub conn: u16,
    /// ACK only: the window field, in units of the receiver's window scale.
    pub win: u16,
    /// True for an ACK, false for data.
    pub is_ack: bool,
    /// Data: segment number. ACK: cumulative acknowledgement (next segment expected).
    pub seq: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// The timestamp option (RFC 7323, 12 bytes counted in the header) in two halves, one
    /// per clock. `ts_snd`, the sender's milliseconds ([`crate::tcp::Sender::ts_val`]): data
    /// carries it as TSval, an ACK echoes the receiver's `ts_recent` as TSecr (0: none).
    pub ts_snd: u32,
    /// `ts`, the receiver's milliseconds modulo 2^16 (`tcp::rcv_window::ts_ms`): an ACK
    /// carries it as TSval, data echoes the last ACK's as TSecr.
    pub ts: u16,
    /// ACK only: the SACK option.
    pub sack: SackBlocks,
}

impl Packet {
    /// A data segment with TSval `ts_snd` echoing `ts`.
    #[inline]
    pub fn data(flow: u32, conn: u16, seq: u32, size: u32, ts_snd: u32, ts: u16) -> Self {
        Packet { flow, conn, win: 0, is_ack: false, seq, size, ts_snd, ts, sack: SackBlocks::NONE }
    }
}

impl cubiclab_path::PathPacket for Packet {
    #[inline]
    fn wire_bytes(&self) -> u32 {
        self.size
    }
}
