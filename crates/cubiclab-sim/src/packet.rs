//! A packet: a small `Copy` value moved between queues and delay lines, never boxed.

use std::collections::VecDeque;

use cubiclab_path::Ecn;

/// Most SACK blocks an ACK carries: TCP's 40 bytes of options hold the timestamps (12 with
/// their padding) and three blocks (4 + 3 x 8), D-SACK included (Linux
/// `tcp_established_options`).
pub const MAX_SACK_BLOCKS: usize = 3;

/// Bytes the SACK option of `blocks` blocks adds to an ACK, as Linux lays it out
/// (`tcp_options_write`): one word of NOP, NOP, kind 5 and length, then 8 bytes per block
/// (`tcp_established_options` counts `TCPOLEN_SACK_BASE_ALIGNED` 4 + 8 per block); none
/// without blocks. So 0, 12, 20, 28: a pure ACK of 52, 64, 72 or 80 bytes.
pub const fn sack_option_bytes(blocks: u8) -> u32 {
    if blocks == 0 {
        0
    } else {
        4 + 8 * blocks as u32
    }
}

/// An ACK's size on the wire by its number of SACK blocks (a table: one load per ACK).
const ACK_WIRE_BYTES: [u16; MAX_SACK_BLOCKS + 1] = {
    let mut t = [0; MAX_SACK_BLOCKS + 1];
    let mut n = 0;
    while n <= MAX_SACK_BLOCKS {
        t[n] = (crate::scenario::ACK_BYTES + sack_option_bytes(n as u8)) as u16;
        n += 1;
    }
    t
};

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

/// What a packet is, in one word: data (bit 31 clear; bit 0 its PSH flag, bit 1 its CWR
/// flag), or an ACK (bit 31) with its ECE flag (bit 23) that may carry a SACK option (bit
/// 30), record `id` of its flow's [`SackOptions`] (the low 23 bits); either way, bits 24-27 count the hops of its route
/// still ahead after the one it is on, and bits 28-29 hold its IP ECN field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind(u32);

impl Kind {
    pub const DATA: Kind = Kind(0);
    const ACK_BIT: u32 = 1 << 31;
    const SACK_BIT: u32 = 1 << 30;
    const PSH_BIT: u32 = 1;
    const CWR_BIT: u32 = 1 << 1;
    const ECE_BIT: u32 = 1 << 23;
    const HOP_SHIFT: u32 = 24;
    const HOP_MASK: u32 = 0xf << Self::HOP_SHIFT;
    const ECN_SHIFT: u32 = 28;
    const ECN_MASK: u32 = 0b11 << Self::ECN_SHIFT;
    pub const ACK: Kind = Kind(Self::ACK_BIT);

    #[inline]
    fn ack_with(id: SackId) -> Kind {
        Kind(Self::ACK_BIT | Self::SACK_BIT | id.0)
    }
}

/// The SACK option of one ACK, by its place in the flow's [`SackOptions`]: ids count
/// modulo 2^23, bit 23 being ECE (8 million, still far more than ever in flight: a
/// flow's ACKs in flight fit in its links' buffers and delay lines, a few thousand even
/// at 100 Gb/s over a second of delay with a buffer of a few BDPs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackId(u32);

const SACK_ID_MASK: u32 = Kind::ECE_BIT - 1;

// The hop count fits `MAX_HOPS`.
const _: () = assert!(Kind::HOP_MASK >> Kind::HOP_SHIFT == crate::scenario::MAX_HOPS as u32 - 1);

/// The SACK options of one flow's ACKs in flight, oldest first. An ACK carries only the
/// id of its option (a packet copied through queues and delay lines stays small, and data
/// carries no room for an option it never has); the sender takes the option on arrival.
/// A flow's ACKs arrive in the order they were sent (every queue and delay line is FIFO),
/// so the records before the one taken belong to ACKs that were dropped or discarded and
/// go with it. The ring grows to the most options ever in flight, then allocates no more.
#[derive(Debug, Default)]
pub struct SackOptions {
    records: VecDeque<SackBlocks>,
    /// The id of `records[0]`.
    front: u32,
}

impl SackOptions {
    /// Keep the option of an ACK about to leave; its id goes in the packet.
    #[inline]
    pub fn push(&mut self, opt: SackBlocks) -> SackId {
        let id = self.front.wrapping_add(self.records.len() as u32) & SACK_ID_MASK;
        self.records.push_back(opt);
        SackId(id)
    }

    /// The option of an ACK in flight.
    #[inline]
    pub fn get(&self, id: SackId) -> &SackBlocks {
        &self.records[self.offset(id)]
    }

    /// The option of an ACK that arrived; those of older ACKs, never to arrive, go too.
    #[inline]
    pub fn take(&mut self, id: SackId) -> SackBlocks {
        for _ in 0..self.offset(id) {
            self.records.pop_front();
        }
        self.front = id.0.wrapping_add(1) & SACK_ID_MASK;
        self.records.pop_front().expect("an ACK's SACK option is kept until it arrives")
    }

    /// Records between the front and `id`.
    #[inline]
    fn offset(&self, id: SackId) -> usize {
        (id.0.wrapping_sub(self.front) & SACK_ID_MASK) as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Index of the flow in the simulation.
    pub flow: u32,
    /// Data: segment number. ACK: cumulative acknowledgement (next segment expected).
    pub seq: u32,
    /// The timestamp option (RFC 7323, 12 bytes counted in the header) in two halves, one
    /// per clock. `ts_snd`, the sender's milliseconds ([`crate::tcp::Sender::ts_val`]): data
    /// carries it as TSval, an ACK echoes the receiver's `ts_recent` as TSecr (0: none).
    pub ts_snd: u32,
    /// Data, or an ACK and where its SACK option is.
    kind: Kind,
    /// Connection number within the flow's slot (web sessions open one per object);
    /// packets of an earlier connection are discarded on arrival.
    pub conn: u16,
    /// `ts`, the receiver's milliseconds modulo 2^16 (`tcp::rcv_window::ts_ms`): an ACK
    /// carries it as TSval, data echoes the last ACK's as TSecr.
    pub ts: u16,
    /// ACK only: the window field, in units of the receiver's window scale.
    pub win: u16,
    /// Bytes on the wire (at most 65000 + 52: the scenario's `mss` is at most 65000).
    pub size: u16,
}

/// A packet is copied at every hop (queue, link, delay line): its size is the simulator's
/// speed budget. 24 bytes: four words, four half-words, nothing more.
const _: () = assert!(std::mem::size_of::<Packet>() == 24, "Packet grew: a speed budget, see packet.rs");

impl Packet {
    /// A data segment with TSval `ts_snd` echoing `ts`.
    #[inline]
    pub fn data(flow: u32, conn: u16, seq: u32, size: u32, ts_snd: u32, ts: u16) -> Self {
        Packet { flow, conn, win: 0, kind: Kind::DATA, seq, size: size as u16, ts_snd, ts }
    }

    /// An ACK of everything below `seq` with window field `win`, TSval `ts`, TSecr
    /// `ts_snd`, and its SACK option if it has one, of `blocks` blocks (which set the
    /// ACK's size on the wire).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn ack(
        flow: u32,
        conn: u16,
        seq: u32,
        win: u16,
        ts_snd: u32,
        ts: u16,
        sack: Option<SackId>,
        blocks: u8,
    ) -> Self {
        let kind = sack.map_or(Kind::ACK, Kind::ack_with);
        let size = ACK_WIRE_BYTES[blocks as usize & MAX_SACK_BLOCKS];
        Packet { flow, conn, win, kind, seq, size, ts_snd, ts }
    }

    /// The same data segment with the PSH flag set (where: `Segment::push`).
    #[inline]
    pub fn pushed(mut self) -> Self {
        debug_assert!(!self.is_ack(), "PSH is for data (an ACK's low bits are its SACK id)");
        self.kind.0 |= Kind::PSH_BIT;
        self
    }

    /// Data only: whether it carries the PSH flag.
    #[inline]
    pub fn is_pushed(&self) -> bool {
        self.kind.0 & (Kind::ACK_BIT | Kind::PSH_BIT) == Kind::PSH_BIT
    }

    /// The same data segment with the CWR flag set (`tcp_ecn_send`).
    #[inline]
    pub fn with_cwr(mut self) -> Self {
        debug_assert!(!self.is_ack(), "CWR is for data here (an ACK's low bits are its SACK id)");
        self.kind.0 |= Kind::CWR_BIT;
        self
    }

    /// Data only: whether it carries the CWR flag.
    #[inline]
    pub fn is_cwr(&self) -> bool {
        self.kind.0 & (Kind::ACK_BIT | Kind::CWR_BIT) == Kind::CWR_BIT
    }

    /// The same ACK with the ECE flag set.
    #[inline]
    pub fn with_ece(mut self) -> Self {
        debug_assert!(self.is_ack(), "ECE is for ACKs here (data's bit 23 is free)");
        self.kind.0 |= Kind::ECE_BIT;
        self
    }

    /// ACK only: whether it carries the ECE flag.
    #[inline]
    pub fn is_ece(&self) -> bool {
        self.kind.0 & (Kind::ACK_BIT | Kind::ECE_BIT) == Kind::ACK_BIT | Kind::ECE_BIT
    }

    /// How many hops of its route are still ahead after the one it is on (the link it is
    /// on, or the delay line after that link): 0 on the last, so that arriving at the end
    /// of a route is one test of the packet, not a look at the route.
    #[inline]
    pub fn hops_left(&self) -> usize {
        ((self.kind.0 & Kind::HOP_MASK) >> Kind::HOP_SHIFT) as usize
    }

    /// The same packet about to cross the first hop of a route of `hops` (1 to `MAX_HOPS`).
    #[inline]
    pub fn routed(mut self, hops: u32) -> Self {
        self.kind.0 |= (hops - 1) << Kind::HOP_SHIFT;
        self
    }

    /// The same packet on the next hop of its route (not on its last: see [`Packet::hops_left`]).
    #[inline]
    pub fn next_hop(mut self) -> Self {
        self.kind.0 -= 1 << Kind::HOP_SHIFT;
        self
    }

    /// The same packet with ECN field `ecn`.
    #[inline]
    pub fn with_ecn(mut self, ecn: Ecn) -> Self {
        self.kind.0 = (self.kind.0 & !Kind::ECN_MASK) | (ecn.bits() as u32) << Kind::ECN_SHIFT;
        self
    }

    #[inline]
    pub fn is_ack(&self) -> bool {
        self.kind.0 & Kind::ACK_BIT != 0
    }

    /// ACK only: its SACK option's id, if it carries one.
    #[inline]
    pub fn sack(&self) -> Option<SackId> {
        (self.kind.0 & Kind::SACK_BIT != 0).then_some(SackId(self.kind.0 & SACK_ID_MASK))
    }
}

impl cubiclab_path::PathPacket for Packet {
    #[inline]
    fn wire_bytes(&self) -> u32 {
        self.size as u32
    }

    #[inline]
    fn ecn(&self) -> Ecn {
        Ecn::from_bits((self.kind.0 >> Kind::ECN_SHIFT) as u8)
    }

    #[inline]
    fn mark_ce(&mut self) {
        *self = self.with_ecn(Ecn::Ce);
    }

    /// The 5-tuple's stand-in: the flow, its connection (a web session's objects each open
    /// one, from a new port) and the direction (data or ACKs).
    #[inline]
    fn flow_key(&self) -> u64 {
        self.flow as u64 | (self.conn as u64) << 32 | (self.is_ack() as u64) << 48
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_finds_its_option_and_drops_those_of_lost_acks() {
        let mut ring = SackOptions::default();
        let ids: Vec<SackId> = (0..4).map(|k| ring.push(SackBlocks::of(&[(k, k + 1)]))).collect();
        // The ACK carrying option 0 arrives; those with 1 and 2 were dropped; 3 arrives.
        assert_eq!(ring.take(ids[0]).as_slice(), &[(0, 1)]);
        assert_eq!(ring.get(ids[2]).as_slice(), &[(2, 3)]);
        assert_eq!(ring.take(ids[3]).as_slice(), &[(3, 4)]);
        assert!(ring.records.is_empty());
        let ack = Packet::ack(0, 0, 5, 0, 0, 0, Some(ids[3]), 1);
        assert!(ack.is_ack() && !Packet::data(0, 0, 5, 1500, 0, 0).is_ack());
        // PSH marks data only; an ACK whose SACK id is odd is not a pushed segment.
        let pushed = Packet::data(0, 0, 5, 1500, 0, 0).pushed();
        assert!(pushed.is_pushed() && !pushed.is_ack() && !Packet::data(0, 0, 5, 1500, 0, 0).is_pushed());
        assert!(!Packet::ack(0, 0, 5, 0, 0, 0, Some(SackId(1)), 1).is_pushed());
        assert_eq!((ack.sack(), Packet::ack(0, 0, 5, 0, 0, 0, None, 0).sack()), (Some(ids[3]), None));
    }

    #[test]
    fn the_hop_count_leaves_the_rest_of_the_kind_alone() {
        // On a route of 16 links (the most), 15 hops ahead and then none: the PSH flag, the
        // ACK bit and the SACK id read as before all along.
        let mut ring = SackOptions::default();
        let id = ring.push(SackBlocks::NONE);
        let (mut data, mut ack) =
            (Packet::data(0, 0, 5, 1500, 0, 0).pushed(), Packet::ack(0, 0, 5, 0, 0, 0, Some(id), 1));
        (data, ack) = (data.routed(16), ack.routed(16));
        assert_eq!((data.hops_left(), ack.hops_left()), (15, 15));
        assert!(data.is_pushed() && !data.is_ack() && ack.is_ack() && !ack.is_pushed());
        for _ in 0..crate::scenario::MAX_HOPS - 1 {
            (data, ack) = (data.next_hop(), ack.next_hop());
        }
        assert_eq!((data.hops_left(), ack.hops_left()), (0, 0));
        assert!(data.is_pushed() && !data.is_ack() && ack.is_ack() && !ack.is_pushed());
        assert_eq!(ack.sack(), Some(id));
    }

    #[test]
    fn the_ecn_field_leaves_the_rest_of_the_kind_alone() {
        use cubiclab_path::PathPacket;
        // Every codepoint on a pushed segment two hops from the end, and on an ACK with a
        // SACK id: the field reads back, nothing else moves.
        let mut ring = SackOptions::default();
        let id = ring.push(SackBlocks::NONE);
        let (data, ack) =
            (Packet::data(0, 0, 5, 1500, 0, 0).pushed().routed(3), Packet::ack(0, 0, 5, 0, 0, 0, Some(id), 1));
        assert_eq!(data.ecn(), Ecn::NotEct);
        for ecn in [Ecn::Ect1, Ecn::Ect0, Ecn::Ce, Ecn::NotEct] {
            let (d, a) = (data.with_ecn(ecn), ack.with_ecn(ecn));
            assert_eq!((d.ecn(), a.ecn()), (ecn, ecn));
            assert!(d.is_pushed() && !d.is_ack() && d.hops_left() == 2);
            assert!(a.is_ack() && a.sack() == Some(id) && a.hops_left() == 0);
            assert_eq!(d.next_hop().ecn(), ecn);
        }
        let mut marked = data.with_ecn(Ecn::Ect0);
        marked.mark_ce();
        assert_eq!((marked.ecn(), marked.hops_left()), (Ecn::Ce, 2));
    }

    #[test]
    fn cwr_and_ece_leave_the_rest_of_the_kind_alone() {
        // CWR on a pushed data segment, ECE on an ACK with a SACK id, on a route of 3 hops with
        // ECN CE: each reads back, nothing else moves, and neither reads on the other kind.
        let mut ring = SackOptions::default();
        let id = ring.push(SackBlocks::NONE);
        let data = Packet::data(0, 0, 5, 1500, 0, 0).pushed().routed(3).with_ecn(Ecn::Ce).with_cwr();
        let ack = Packet::ack(0, 0, 5, 0, 0, 0, Some(id), 1).routed(3).with_ece();
        use cubiclab_path::PathPacket;
        assert!(data.is_cwr() && data.is_pushed() && !data.is_ece() && data.hops_left() == 2);
        assert!(ack.is_ece() && !ack.is_cwr() && ack.sack() == Some(id) && ack.hops_left() == 2);
        assert_eq!((data.ecn(), ack.ecn()), (Ecn::Ce, Ecn::NotEct));
        assert!(!Packet::data(0, 0, 5, 1500, 0, 0).pushed().is_cwr());
        assert!(!Packet::ack(0, 0, 5, 0, 0, 0, Some(SackId(1 << 22 | 2)), 1).is_ece());
    }

    #[test]
    fn an_acks_size_follows_its_sack_blocks() {
        // Linux's pure ACK with timestamps: IPv4 20 + TCP 20 + NOP NOP TS(10) = 52 bytes, the
        // HEADER_BYTES of data (no link header is counted on either). tcp_options_write
        // adds the SACK option as NOP NOP kind length (4) + 8 per block
        // (tcp_established_options: TCPOLEN_SACK_BASE_ALIGNED + n x TCPOLEN_SACK_PERBLOCK):
        // 52 + 12 = 64, 52 + 20 = 72, 52 + 28 = 80 (the options then fill TCP's 40 bytes).
        let mut ring = SackOptions::default();
        let sizes: Vec<u16> = (0..=MAX_SACK_BLOCKS as u8)
            .map(|n| {
                let sack = (n > 0).then(|| ring.push(SackBlocks::NONE));
                Packet::ack(0, 0, 0, 0, 0, 0, sack, n).size
            })
            .collect();
        assert_eq!(sizes, [52, 64, 72, 80]);
        assert_eq!(crate::scenario::ACK_BYTES, crate::scenario::HEADER_BYTES);
        assert_eq!(12 + sack_option_bytes(MAX_SACK_BLOCKS as u8), 40, "TCP's option space, full");
    }

    #[test]
    fn ids_wrap_at_2_to_the_23() {
        let mut ring = SackOptions { records: VecDeque::new(), front: SACK_ID_MASK };
        let last = ring.push(SackBlocks::of(&[(1, 2)]));
        let first = ring.push(SackBlocks::of(&[(2, 3)]));
        assert_eq!((last, first), (SackId((1 << 23) - 1), SackId(0)));
        // ACK, SACK and the id's 23 ones: 0xc07f_ffff, hop 0; with ECE, bit 23 as well.
        let ack = Packet::ack(0, 0, 0, 0, 0, 0, Some(last), 1);
        assert_eq!(ack.kind, Kind(0xc07f_ffff));
        assert_eq!((ack.with_ece().kind, ack.with_ece().sack(), ack.is_ece()), (Kind(0xc0ff_ffff), Some(last), false));
        assert_eq!(ring.take(first).as_slice(), &[(2, 3)]);
        assert_eq!(ring.front, 1);
    }
}
