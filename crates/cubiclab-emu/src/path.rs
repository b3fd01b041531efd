//! One link direction of the emulated path: the link (`cubiclab-path`, the simulator's own
//! code) followed by per-flow delay lines, over packets held in a slab; [`crate::chain`]
//! joins a way's link directions along the flows' routes.
//!
//! The bottleneck sees segments: a super-packet read from TUN is offered segment by
//! segment, each with its own size on the wire, so buffer limits, drops, RED, CoDel,
//! random loss and serialization are as if the sender had segmented it. A [`Seg`] names its
//! packet's slot; the slot is freed when its last segment is delivered or dropped.
//!
//! Time here is the path's: nanoseconds since the start of the run (`Link`'s clock, so the
//! Poisson loss process and RED's idle time start at 0 as in the simulator).

use std::collections::VecDeque;

use cubiclab_path::{Ecn, Link, LinkSpec, Offer, PathPacket, RateSchedule, Time};

use crate::tun::{Header, MAX_PACKET};

/// Flow index of a packet that matches no configured flow.
pub const NO_FLOW: u16 = u16::MAX;
/// Packets up to this size are copied into a small buffer, so a queue of ACKs does not
/// hold 64 KB per packet.
const SMALL: usize = 2048;

/// One segment of a packet in the slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub slot: u32,
    pub index: u16,
    pub flow: u16,
    pub bytes: u32,
    /// Its ECN field: its packet's, until a discipline marks it CE (then only this
    /// segment leaves with CE).
    pub ecn: Ecn,
}

impl PathPacket for Seg {
    #[inline]
    fn wire_bytes(&self) -> u32 {
        self.bytes
    }

    #[inline]
    fn flow_key(&self) -> u64 {
        self.flow as u64
    }

    #[inline]
    fn ecn(&self) -> Ecn {
        self.ecn
    }

    #[inline]
    fn mark_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }
}

pub struct Slot {
    pub buf: Vec<u8>,
    pub header: Header,
    /// Segments not yet delivered or dropped.
    alive: u16,
}

/// Packets in flight, each in a buffer of its own; buffers and slots are reused, so once
/// the slab has grown to the path's load nothing is allocated per packet.
#[derive(Default)]
pub struct Slab {
    pub slots: Vec<Slot>,
    free: Vec<u32>,
    small: Vec<Vec<u8>>,
    big: Vec<Vec<u8>>,
}

impl Slab {
    /// A buffer to read the next packet into.
    pub fn read_buffer(&mut self) -> Vec<u8> {
        self.big.pop().unwrap_or_else(|| vec![0u8; MAX_PACKET])
    }

    /// Give back a read buffer that received nothing.
    pub fn unused(&mut self, buf: Vec<u8>) {
        self.big.push(buf);
    }

    /// Keep the `len` bytes read into `buf` (copied into a small buffer if they fit one).
    pub fn insert(&mut self, mut buf: Vec<u8>, len: usize, header: Header) -> u32 {
        if len <= SMALL {
            let mut small = self.small.pop().unwrap_or_else(|| Vec::with_capacity(SMALL));
            small.clear();
            small.extend_from_slice(&buf[..len]);
            self.big.push(buf);
            buf = small;
        } else {
            buf.truncate(len);
        }
        let slot = Slot { buf, header, alive: header.segments };
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() as u32 - 1
            }
        }
    }

    /// TCP sequence number of a segment (0 if its packet is not TCP).
    pub fn seq(&self, s: Seg) -> u32 {
        self.slots[s.slot as usize].header.segment_seq(s.index)
    }

    /// `n` segments of `slot` are gone; frees it after the last.
    pub fn release(&mut self, slot: u32, n: u16) {
        let s = &mut self.slots[slot as usize];
        s.alive -= n;
        if s.alive == 0 {
            let mut buf = std::mem::take(&mut s.buf);
            if buf.capacity() >= MAX_PACKET {
                buf.resize(MAX_PACKET, 0);
                self.big.push(buf);
            } else {
                self.small.push(buf);
            }
            self.free.push(slot);
        }
    }
}

/// Segments of one direction with one delay, in order of release; `due` in path time.
struct DelayLine {
    delay: Time,
    /// Its segments go on to another link ([`Direction::take_through`]), not to the
    /// device ([`Direction::deliver`]).
    through: bool,
    fifo: VecDeque<(Time, Seg)>,
}

/// What happened to a segment on the way (for the caller's records).
pub enum Fate<'a> {
    /// Dropped by the buffer or the queue discipline at this path time; its TCP sequence
    /// number.
    Dropped(Time, Seg, u32),
    /// Lost at random as it left the link at this path time.
    Lost(Time, Seg, u32),
    /// Left the link at this path time (counted whether or not random loss then took it,
    /// which the flag says); its packet.
    Sent(Time, Seg, &'a Slot, bool),
}

/// One direction of a link: the link, then the delay lines (one hop of a [`crate::chain::Chain`]).
pub struct Direction {
    pub link: Link<Seg>,
    /// Finish time of the segment in service, if any.
    next_done: Option<Time>,
    lines: Vec<DelayLine>,
    /// Delay line per flow index, and for packets of no flow.
    line_of_flow: Vec<usize>,
    line_default: usize,
    /// Segments offered to the link.
    pub arrivals: u64,
    /// Segments that left the link.
    pub tx_segments: u64,
    /// The largest queue after an arrival since the last [`Direction::take_max_queue`].
    max_queue: (usize, u64),
}

impl Direction {
    /// A link direction whose random streams are numbered from `stream` (0 forward, 1
    /// reverse for the first link), with the flows' delays, the default delay for other
    /// packets, and which flows go on to another link after their delay (`through[flow]`).
    pub fn new(
        spec: &LinkSpec,
        schedule: Option<&RateSchedule>,
        seed: u64,
        stream: u32,
        flow_delays: &[Time],
        default_delay: Time,
        through: &[bool],
    ) -> Self {
        let mut lines: Vec<DelayLine> = Vec::new();
        let mut line_for =
            |delay: Time, through: bool| match lines.iter().position(|l| (l.delay, l.through) == (delay, through)) {
                Some(i) => i,
                None => {
                    lines.push(DelayLine { delay, through, fifo: VecDeque::new() });
                    lines.len() - 1
                }
            };
        let line_of_flow =
            flow_delays.iter().enumerate().map(|(f, &d)| line_for(d, through.get(f) == Some(&true))).collect();
        let line_default = line_for(default_delay, false);
        let mut link = Link::new(spec, seed, stream);
        if let Some(s) = schedule {
            link.vary(s.clone());
        }
        let max_queue = (0, 0);
        Direction { link, next_done: None, lines, line_of_flow, line_default, arrivals: 0, tx_segments: 0, max_queue }
    }

    /// Without a rate the link is a wire: segments go straight to their delay line.
    fn unlimited(&self) -> bool {
        self.link.rate_bps == 0
    }

    fn enter_line(&mut self, t: Time, s: Seg) {
        let li = self.line_of_flow.get(s.flow as usize).copied().unwrap_or(self.line_default);
        let line = &mut self.lines[li];
        line.fifo.push_back((t + line.delay, s));
    }

    /// Finish every transmission due by `now`, in order, each at its own finish time (the
    /// virtual clock: the rate is exact however late the loop wakes).
    pub fn advance(&mut self, now: Time, slab: &mut Slab, mut fate: impl FnMut(Fate<'_>)) {
        while let Some(fin) = self.next_done.filter(|&t| t <= now) {
            let (s, lost, next) = self.link.tx_done(fin, |d| {
                fate(Fate::Dropped(fin, d, slab.seq(d)));
                slab.release(d.slot, 1);
            });
            self.next_done = next;
            self.leave(fin, s, lost, slab, &mut fate);
        }
    }

    /// Segment `s` left the link at `t`: counted as sent, then lost at random (`lost`) or
    /// into its delay line.
    fn leave(&mut self, t: Time, s: Seg, lost: bool, slab: &mut Slab, fate: &mut impl FnMut(Fate<'_>)) {
        self.tx_segments += 1;
        fate(Fate::Sent(t, s, &slab.slots[s.slot as usize], lost));
        if lost {
            fate(Fate::Lost(t, s, slab.seq(s)));
            slab.release(s.slot, 1);
        } else {
            self.enter_line(t, s);
        }
    }

    /// Offer every segment of the packet in `slot`, which arrived at `now`.
    pub fn offer(&mut self, now: Time, slot: u32, flow: u16, slab: &mut Slab, mut fate: impl FnMut(Fate<'_>)) {
        self.advance(now, slab, &mut fate);
        let h = slab.slots[slot as usize].header;
        let ecn = Ecn::from_bits(h.ip_ecn);
        for index in 0..h.segments {
            self.offer_segment(now, Seg { slot, index, flow, bytes: h.segment_bytes(index), ecn }, slab, &mut fate);
        }
    }

    /// Offer one segment at `now` (the link has advanced to `now`).
    pub fn offer_segment(&mut self, now: Time, s: Seg, slab: &mut Slab, mut fate: impl FnMut(Fate<'_>)) {
        self.arrivals += 1;
        if self.unlimited() {
            let lost = self.link.loss.lose(now);
            self.leave(now, s, lost, slab, &mut fate);
            return;
        }
        let dropped = |d: Seg| {
            fate(Fate::Dropped(now, d, slab.seq(d)));
            slab.release(d.slot, 1);
        };
        match self.link.offer(now, s, dropped) {
            Offer::Started(fin) => self.next_done = Some(fin),
            Offer::Queued => {}
            Offer::Dropped => {
                fate(Fate::Dropped(now, s, slab.seq(s)));
                slab.release(s.slot, 1);
            }
        }
        let q = self.queue();
        self.max_queue = (self.max_queue.0.max(q.0), self.max_queue.1.max(q.1));
    }

    /// The largest queue (packets, bytes) after an arrival since the last call; the next
    /// interval starts from the queue as it is now.
    pub fn take_max_queue(&mut self) -> (usize, u64) {
        let now = self.queue();
        std::mem::replace(&mut self.max_queue, now)
    }

    /// Finish time of the segment in service, if any.
    pub fn next_tx_done(&self) -> Option<Time> {
        self.next_done
    }

    /// Due time of the first segment that goes on to another link.
    pub fn next_through(&self) -> Option<Time> {
        self.lines.iter().filter(|l| l.through).filter_map(|l| l.fifo.front().map(|e| e.0)).min()
    }

    /// Take the first segment that goes on to another link, with its due time.
    pub fn take_through(&mut self) -> Option<(Time, Seg)> {
        let line = self.lines.iter_mut().filter(|l| l.through && !l.fifo.is_empty()).min_by_key(|l| l.fifo[0].0)?;
        line.fifo.pop_front()
    }

    /// The earliest path time something is due: a transmission or a delivery.
    pub fn next_due(&self) -> Option<Time> {
        let lines = self.lines.iter().filter_map(|l| l.fifo.front().map(|e| e.0)).min();
        match (self.next_done, lines) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Hand `deliver` every run of segments due by `now` that leaves the path here: (its
    /// first segment, count, due time of each). A run is consecutive segments of one
    /// packet with one ECN field (a mark splits a super-packet), at most `max_run` long.
    pub fn deliver(&mut self, now: Time, max_run: u32, mut deliver: impl FnMut(Seg, u16, &[Time])) {
        let mut dues = [0 as Time; 64];
        for line in self.lines.iter_mut().filter(|l| !l.through) {
            while let Some(&(due, first)) = line.fifo.front() {
                if due > now {
                    break;
                }
                line.fifo.pop_front();
                dues[0] = due;
                let mut n = 1u16;
                while (n as u32) < max_run.min(64) {
                    match line.fifo.front() {
                        Some(&(d, s))
                            if d <= now && s.slot == first.slot && s.index == first.index + n && s.ecn == first.ecn =>
                        {
                            line.fifo.pop_front();
                            dues[n as usize] = d;
                            n += 1;
                        }
                        _ => break,
                    }
                }
                deliver(first, n, &dues[..n as usize]);
            }
        }
    }

    /// Packets and bytes waiting in the buffer.
    pub fn queue(&self) -> (usize, u64) {
        (self.link.queue.len_packets(), self.link.queue.len_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubiclab_path::{Limit, LossSpec, QueueDiscipline, QueueSettings};

    fn header(segments: u16, gso: u16) -> Header {
        Header {
            hdr_len: 52,
            ip_hl: 20,
            gso_size: gso,
            segments,
            ip_len: 52 + segments as u32 * gso as u32,
            ..Default::default()
        }
    }

    #[test]
    fn segments_of_a_super_packet_are_serialized_and_delivered_one_by_one() {
        // 10 Mbit/s, 1500-byte segments: 1.2 ms each; delay 5 ms. A super-packet of 3
        // segments arriving at 0 leaves the link at 1.2, 2.4, 3.6 ms and is due at 6.2, 7.4,
        // 8.6 ms. With a buffer of one packet the third segment is dropped (one in service,
        // one waiting).
        let spec = LinkSpec {
            rate_bps: 10_000_000,
            buffer: Limit::Packets(1),
            queue: QueueDiscipline::DropTail,
            settings: QueueSettings::default(),
            loss: LossSpec::None,
            packet_bytes: 1500,
        };
        let mut d = Direction::new(&spec, None, 1, 0, &[5_000_000], 0, &[]);
        let mut slab = Slab::default();
        let buf = slab.read_buffer();
        let slot = slab.insert(buf, 4500, header(3, 1448));
        let mut dropped = vec![];
        d.offer(0, slot, 0, &mut slab, |f| {
            if let Fate::Dropped(t, s, _) = f {
                dropped.push((t, s.index))
            }
        });
        assert_eq!(dropped, vec![(0, 2)]);
        d.advance(10_000_000, &mut slab, |_| {});
        let mut runs = vec![];
        d.deliver(7_000_000, 64, |first, n, dues| runs.push((first.index, n, dues.to_vec())));
        assert_eq!(runs, vec![(0, 1, vec![6_200_000])]);
        runs.clear();
        d.deliver(9_000_000, 64, |first, n, dues| runs.push((first.index, n, dues.to_vec())));
        assert_eq!(runs, vec![(1, 1, vec![7_400_000])]);
        // The dropped segment and the two delivered ones free the slot only when the
        // caller releases the delivered ones.
        slab.release(slot, 2);
        assert_eq!(slab.free, vec![slot]);
    }

    #[test]
    fn segments_due_together_are_delivered_as_one_run() {
        // No rate limit: all three segments are due at the delay and leave as one run,
        // or in runs of at most `max_run`.
        let spec = LinkSpec {
            rate_bps: 0,
            buffer: Limit::Packets(10),
            queue: QueueDiscipline::DropTail,
            settings: QueueSettings::default(),
            loss: LossSpec::None,
            packet_bytes: 1500,
        };
        let mut d = Direction::new(&spec, None, 1, 0, &[], 1000, &[]);
        let mut slab = Slab::default();
        let buf = slab.read_buffer();
        let slot = slab.insert(buf, 4500, header(3, 1448));
        d.offer(0, slot, NO_FLOW, &mut slab, |_| {});
        let mut runs = vec![];
        d.deliver(1000, 2, |first, n, _| runs.push((first.index, n)));
        assert_eq!(runs, vec![(0, 2), (2, 1)]);
    }
}
