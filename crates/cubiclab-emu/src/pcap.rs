//! Packet capture at the bottleneck: every segment as it leaves either direction's link
//! and random loss spares it (the simulator's tap, `cubiclab-sim/src/pcap.rs`), as a
//! classic pcap of raw IPv4 (LINKTYPE_RAW) with the real headers the kernels wrote.
//!
//! - A super-packet (TSO) is written as the segments it stands for, each when it leaves
//!   the link, with the headers it has when the emulator writes it on alone (its own IP
//!   length, identification and sequence number, `Header::range_headers`): what a capture
//!   on a real router would show.
//! - Only headers are kept (IPv4 + TCP with options, at most [`SNAPLEN`] bytes; other
//!   packets their first [`SNAPLEN`] bytes), with the ECN field the segment leaves with
//!   (CE if the link's discipline marked it); each record's original length is the
//!   segment's size on the wire, so tools count bytes right. The TCP checksum field holds
//!   what the kernel left for offload (the pseudo-header sum), not a final checksum.
//! - Times count from the start of the run, as the simulator's do.
//!
//! The loop of each direction appends records to a buffer it owns; a full buffer goes to
//! that direction's writer thread, which writes it to a part file and hands it back, so the
//! loop neither allocates per packet nor waits on the disk. At the end the two part files,
//! each in time order, are merged into the capture (`<path>.partial`, renamed into place).

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use crate::path::{Seg, Slot, NO_FLOW};
use crate::tun::set_ce;
use cubiclab_path::{Ecn, Time};

/// Bytes kept of each packet: the largest IPv4 and TCP headers (60 + 60) and some.
pub const SNAPLEN: usize = 128;
const RECORD_HEADER: usize = 16;
const BUFFER_BYTES: usize = 256 << 10;
/// Buffers per direction made up front; another is made only when the disk falls behind
/// by all of them (counted in `Tap::buffers_made`).
const BUFFERS: usize = 4;
const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
const LINKTYPE_RAW: u32 = 101;

/// One direction's side of the capture: the loop's buffer and the way to its writer.
pub struct Tap {
    /// The link of the chain captured (config `pcap_link`).
    pub link: usize,
    buf: Vec<u8>,
    full: Sender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
    /// Per flow index: whether captured; packets of no flow only when all are.
    selected: Vec<bool>,
    all: bool,
    scratch: [u8; 256],
    pub records: u64,
    pub buffers_made: u64,
    writer: Option<JoinHandle<Result<(), String>>>,
}

impl Tap {
    /// The tap of direction `dir`, writing to `<path>.dir<dir>`; `only`: the flow indices
    /// to capture (None: every packet).
    pub fn new(path: &Path, link: usize, dir: usize, nflows: usize, only: Option<&[u16]>) -> Result<Tap, String> {
        let part = part_path(path, dir);
        let mut file = File::create(&part).map_err(|e| format!("pcap: cannot create '{}': {e}", part.display()))?;
        let (full, to_write) = channel::<Vec<u8>>();
        let (give_back, empty) = channel::<Vec<u8>>();
        for _ in 1..BUFFERS {
            give_back.send(Vec::with_capacity(BUFFER_BYTES)).expect("the receiver is ours");
        }
        let writer = std::thread::spawn(move || {
            let mut failed = None;
            for mut b in to_write {
                if failed.is_none() {
                    failed = file.write_all(&b).err();
                }
                b.clear();
                // The loop may have finished already; then the buffer is simply dropped.
                let _ = give_back.send(b);
            }
            match failed {
                Some(e) => Err(format!("pcap: writing '{}' failed: {e}", part.display())),
                None => Ok(()),
            }
        });
        let selected = (0..nflows as u16).map(|f| only.is_none_or(|o| o.contains(&f))).collect();
        Ok(Tap {
            link,
            buf: Vec::with_capacity(BUFFER_BYTES),
            full,
            empty,
            selected,
            all: only.is_none(),
            scratch: [0; 256],
            records: 0,
            buffers_made: 0,
            writer: Some(writer),
        })
    }

    /// Record segment `s` of the packet in `slot` leaving the link at path time `t`.
    pub fn segment(&mut self, t: Time, s: Seg, slot: &Slot) {
        let keep = if s.flow == NO_FLOW { self.all } else { self.selected[s.flow as usize] };
        if !keep {
            return;
        }
        if self.buf.len() + RECORD_HEADER + SNAPLEN > self.buf.capacity() {
            self.hand_over();
        }
        let h = &slot.header;
        let at = h.ip_at as usize;
        let headers: &[u8] = if h.segments == 1 {
            let end = if h.hdr_len > 0 { at + h.hdr_len as usize } else { slot.buf.len() };
            &slot.buf[at..end.min(at + SNAPLEN).min(slot.buf.len())]
        } else {
            &h.range_headers(&slot.buf, s.index, s.index + 1, s.ecn, &mut self.scratch).0[at..]
        };
        let us = t / 1_000;
        self.buf.extend_from_slice(&((us / 1_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&(headers.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(&s.bytes.to_le_bytes());
        let ip = self.buf.len();
        self.buf.extend_from_slice(headers);
        if h.segments == 1 && s.ecn != Ecn::from_bits(h.ip_ecn) {
            set_ce(&mut self.buf[ip..]);
        }
        self.records += 1;
    }

    /// Send the full buffer to the writer and continue in an empty one.
    fn hand_over(&mut self) {
        let next = self.empty.try_recv().unwrap_or_else(|_| {
            self.buffers_made += 1;
            Vec::with_capacity(BUFFER_BYTES)
        });
        let full = std::mem::replace(&mut self.buf, next);
        // The writer lives until `finish` drops the sender, so it is there to receive.
        let _ = self.full.send(full);
    }

    /// Write what is left and wait for the writer.
    pub fn finish(mut self) -> Result<(), String> {
        if !self.buf.is_empty() {
            let _ = self.full.send(std::mem::take(&mut self.buf));
        }
        let writer = self.writer.take().expect("finished once");
        drop(self);
        writer.join().map_err(|_| "pcap: the writer thread panicked".to_string())?
    }
}

fn part_path(path: &Path, dir: usize) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(format!(".dir{dir}"));
    PathBuf::from(p)
}

/// The capture file from both directions' part files, records in time order (each part
/// is in order already); the parts are removed.
pub fn merge(path: &Path) -> Result<(), String> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let fail = |e: std::io::Error| format!("pcap: writing '{}' failed: {e}", path.display());
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&partial).map_err(fail)?);
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&PCAP_MAGIC.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&(SNAPLEN as u32).to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    out.write_all(&h).map_err(fail)?;
    let mut parts = Vec::new();
    for dir in 0..2 {
        let p = part_path(path, dir);
        parts.push(Part::open(&p).map_err(|e| format!("pcap: reading '{}' failed: {e}", p.display()))?);
    }
    loop {
        let next = (0..2).filter(|&i| parts[i].head.is_some()).min_by_key(|&i| parts[i].time());
        let Some(i) = next else { break };
        out.write_all(&parts[i].record).map_err(fail)?;
        parts[i].advance().map_err(fail)?;
    }
    out.flush().map_err(fail)?;
    drop(out);
    for dir in 0..2 {
        let _ = fs::remove_file(part_path(path, dir));
    }
    fs::rename(&partial, path).map_err(fail)
}

/// A part file read record by record.
struct Part {
    r: BufReader<File>,
    /// The current record's header (None: the part is done) and the whole record.
    head: Option<[u8; RECORD_HEADER]>,
    record: Vec<u8>,
}

impl Part {
    fn open(path: &Path) -> std::io::Result<Part> {
        let mut p = Part { r: BufReader::new(File::open(path)?), head: None, record: Vec::new() };
        p.advance()?;
        Ok(p)
    }

    fn time(&self) -> (u32, u32) {
        let h = self.head.expect("a current record");
        let u = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        (u(0), u(4))
    }

    fn advance(&mut self) -> std::io::Result<()> {
        let mut h = [0u8; RECORD_HEADER];
        match self.r.read_exact(&mut h) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.head = None;
                return Ok(());
            }
            r => r?,
        }
        let incl = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes")) as usize;
        self.record.clear();
        self.record.extend_from_slice(&h);
        self.record.resize(RECORD_HEADER + incl, 0);
        self.r.read_exact(&mut self.record[RECORD_HEADER..])?;
        self.head = Some(h);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::Slab;
    use crate::tun::{Header, VNET_LEN};

    /// A virtio header (a TSO super-packet of 1448-byte segments) and IPv4/TCP headers
    /// (20 + 32 bytes) from port `sport`, sequence number 1000, with `payload` bytes; ECT(0),
    /// its IP checksum right.
    fn packet(sport: u16, payload: usize) -> Vec<u8> {
        let mut b = vec![0u8; VNET_LEN + 52 + payload];
        b[1] = 1; // VIRTIO_NET_HDR_GSO_TCPV4
        b[4..6].copy_from_slice(&1448u16.to_ne_bytes());
        let ip = &mut b[VNET_LEN..];
        ip[0] = 0x45;
        ip[1] = Ecn::Ect0.bits();
        ip[2..4].copy_from_slice(&((52 + payload) as u16).to_be_bytes());
        ip[9] = 6;
        ip[12..20].copy_from_slice(&[10, 78, 0, 1, 10, 78, 0, 2]);
        let sum = !ones_sum(&ip[..20]);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        ip[20..22].copy_from_slice(&sport.to_be_bytes());
        ip[24..28].copy_from_slice(&1000u32.to_be_bytes());
        ip[32] = 8 << 4;
        b
    }

    /// The folded ones' complement sum of a header's 16-bit words (RFC 1071): 0xffff for
    /// an IPv4 header whose checksum is right.
    fn ones_sum(h: &[u8]) -> u16 {
        let mut s: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    fn records(file: &[u8]) -> Vec<(u64, u32, &[u8])> {
        let u = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().unwrap());
        let (mut out, mut at) = (Vec::new(), 24);
        while at < file.len() {
            let incl = u(at + 8) as usize;
            out.push((u(at) as u64 * 1_000_000 + u(at + 4) as u64, u(at + 12), &file[at + 16..at + 16 + incl]));
            at += 16 + incl;
        }
        out
    }

    #[test]
    fn segments_of_both_directions_merge_in_time_order() {
        // Forward: the three segments of a 3000-byte super-packet (1448, 1448, 104 bytes of
        // payload: 1500, 1500, 156 on the wire) at 1, 3 and 5 ms, the second marked CE by
        // the link; reverse: a plain 52-byte packet at 2 ms, marked CE, and one of an
        // unselected flow at 4 ms. All are ECT(0).
        let dir = std::env::temp_dir().join(format!("cubiclab-emu-pcap-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.pcap");
        let mut slab = Slab::default();
        let mut slot = |b: Vec<u8>| {
            let h = Header::parse(&b, true);
            let mut buf = slab.read_buffer();
            buf[..b.len()].copy_from_slice(&b);
            (slab.insert(buf, b.len(), h), h)
        };
        let (big, hb) = slot(packet(5201, 3000));
        let (ack, ha) = slot(packet(5201, 0));
        let (other, ho) = slot(packet(5202, 0));
        let mut fwd = Tap::new(&path, 0, 0, 2, Some(&[0])).unwrap();
        let mut rev = Tap::new(&path, 0, 1, 2, Some(&[0])).unwrap();
        for i in 0..3u16 {
            let ecn = if i == 1 { Ecn::Ce } else { Ecn::Ect0 };
            let s = Seg { slot: big, index: i, flow: 0, bytes: hb.segment_bytes(i), ecn };
            fwd.segment((1 + 2 * i as u64) * 1_000_000, s, &slab.slots[big as usize]);
        }
        let s = Seg { slot: ack, index: 0, flow: 0, bytes: ha.ip_len, ecn: Ecn::Ce };
        rev.segment(2_000_000, s, &slab.slots[ack as usize]);
        let s = Seg { slot: other, index: 0, flow: 1, bytes: ho.ip_len, ecn: Ecn::Ect0 };
        rev.segment(4_000_000, s, &slab.slots[other as usize]);
        assert_eq!((fwd.records, rev.records), (3, 1));
        fwd.finish().unwrap();
        rev.finish().unwrap();
        merge(&path).unwrap();
        let file = fs::read(&path).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        let recs = records(&file);
        let times: Vec<u64> = recs.iter().map(|r| r.0).collect();
        assert_eq!(times, vec![1000, 2000, 3000, 5000]);
        let be16 = |b: &[u8], i: usize| u16::from_be_bytes([b[i], b[i + 1]]) as u32;
        let be32 = |b: &[u8], i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
        // Each record: the 52 header bytes; original length and IP length the segment's;
        // the ECN field it left with (CE: 3, ECT(0): 2), the IP checksum right.
        let want = [(1500, 1000, 2), (52, 1000, 3), (1500, 1000 + 1448, 3), (156, 1000 + 2 * 1448, 2)];
        for (r, (len, seq, ecn)) in recs.iter().zip(want) {
            assert_eq!((r.2.len(), r.1, be16(r.2, 2), be32(r.2, 24)), (52, len, len, seq));
            assert_eq!((r.2[1] & 3, ones_sum(&r.2[..20])), (ecn, 0xffff));
        }
        // The capture leaves the packet itself as the kernel wrote it.
        assert_eq!(slab.slots[ack as usize].buf[VNET_LEN + 1], Ecn::Ect0.bits());
    }
}
