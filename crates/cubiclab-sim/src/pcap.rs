//! Packet capture of the bottleneck: every packet that leaves either direction of the link
//! (a tap just after the router, on both sides), as a classic pcap file of raw IPv4 with
//! real TCP headers, so that Wireshark's and tcptrace's TCP analysis work on a simulation.
//!
//! What the headers hold:
//! - addresses: flow `f`'s sender is 10.1.f/16, its receiver 10.2.f/16 (f as two octets);
//!   ports: the sender's 10000 + connection number (web sessions open one per object), the
//!   receiver's 5201 (long-lived) or 80 (web);
//! - sequence numbers count payload bytes from 0 (segment n starts at n·mss, wrapping at
//!   2^32 as TCP's do); acknowledgement numbers likewise; an ACK carries its SACK blocks
//!   (up to three, a D-SACK first) in bytes;
//! - the timestamp option: TSval is the capture time in milliseconds; TSecr echoes the
//!   TSval of the connection's latest packet captured the other way (0 before there is
//!   one), as RFC 7323's TS.Recent would at a host sitting at the tap. An endpoint echoes an
//!   older one (the packet it answers reached it a one-way delay after the tap), which
//!   RTT-by-timestamp tools would notice: the capture's TSecr gives the tap's view;
//! - the window: an ACK carries the field its receiver advertised (`tcp_select_window`,
//!   in units of the receiver's window scale, [`crate::tcp::rcv_window`]); data carries
//!   the sender's own, which never grows (it receives no data): a Linux socket with the
//!   default `tcp_rmem` and no buffer set. The scales travel in a SYN (the sender's) and
//!   SYN-ACK (the receiver's: the scale of `tcp_rmem[2]` when autotuned, of the pinned
//!   buffer when forced) written just before each connection's first packet, with the
//!   unscaled first windows of both sides: the simulator has no handshakes, Wireshark
//!   needs them to know the scales;
//! - flags: ACK on every packet after the handshake, PSH on the data segments the sender
//!   marks (the last of each full TSO packet, `Segment::push`), CWR on data and ECE on
//!   ACKs as the hosts set them;
//! - ECN: the IP header's ECN field is the packet's as it leaves the link (CE if a
//!   discipline marked it); a connection whose first packet is ECN-capable has a handshake
//!   that negotiates ECN (RFC 3168 Sec. 6.1.1: SYN with ECE and CWR, SYN-ACK with ECE);
//! - only headers are captured (the payload is not simulated); each record's original
//!   length and the IP total length are the packet's size on the wire, so tools count
//!   bytes right (an ACK's is its headers: 52 bytes and its SACK option, as the
//!   simulator sends it). The TCP checksum is 0 (it would cover the payload); the IP one
//!   is real.
//!
//! Writing costs a copy into a buffered writer per packet: a record is built in a fixed
//! array on the stack, nothing is allocated. The file is written to `<path>.partial` and
//! renamed when the run finishes, so an interrupted run leaves no half-written capture.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use cubiclab_path::{Ecn, PathPacket};

use crate::engine::Time;
use crate::packet::{Packet, SackBlocks};
use crate::scenario::HEADER_BYTES;
use crate::tcp::rcv_window::{RcvWindow, TCP_RMEM_DEFAULT};

/// Bytes of a record's captured part: IPv4 (20) and TCP with the largest options we write
/// (20 + 40: timestamps and three SACK blocks).
const MAX_HEADERS: usize = 80;
/// pcap's microsecond-resolution magic, LINKTYPE_RAW (IPv4 packets with no link header).
const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
const LINKTYPE_RAW: u32 = 101;
/// `TCPOLEN_TSTAMP_ALIGNED`: the timestamp option with its two NOPs.
const TIMESTAMP_OPTION_BYTES: u32 = 12;
const SENDER_PORT_BASE: u16 = 10_000;
const BULK_PORT: u16 = 5201;
const WEB_PORT: u16 = 80;

const TCP_SYN: u8 = 0x02;
const TCP_ACK: u8 = 0x10;
const TCP_PSH_ACK: u8 = 0x18;
const TCP_ECE: u8 = 0x40;
const TCP_CWR: u8 = 0x80;

/// What one side of a connection announces in its SYN or SYN-ACK: its window scale
/// and its first window (unscaled, at most 65535).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Announce {
    pub wscale: u8,
    pub syn_window: u16,
}

impl Announce {
    /// What a receiver with this window announces.
    pub fn of(window: &RcvWindow) -> Self {
        Self { wscale: window.wscale() as u8, syn_window: window.syn_window() }
    }
}

/// Writes the capture; `W` is a file in runs and a `Vec<u8>` in tests.
pub struct PcapWriter<W: Write> {
    out: W,
    mss: u32,
    /// Per flow slot: what its receiver announces (the SYN-ACK).
    receivers: Vec<Announce>,
    /// What every sender announces (the SYN), and the window field of its data.
    sender: Announce,
    sender_window: u16,
    /// Flows below this index are long-lived; the rest are web sessions.
    long_lived: u32,
    /// Per flow slot: the connection whose handshake was written, plus one (0: none yet).
    handshake: Vec<u32>,
    /// Per flow slot: the TSval last written by the sender ([0]) and the receiver ([1]),
    /// which the other side's next packet echoes.
    ts_recent: Vec<[u32; 2]>,
    /// Per flow slot: whether it is captured (`record.pcap_flows`).
    selected: Vec<bool>,
    /// The first write error; reported when the capture is closed.
    error: Option<io::Error>,
}

/// The capture file of a run: written to `<path>.partial`, renamed by [`Capture::close`],
/// removed if the run is dropped before.
pub struct Capture {
    /// The link captured, both directions (`record.pcap_link`).
    pub link: usize,
    writer: PcapWriter<BufWriter<File>>,
    path: PathBuf,
    partial: PathBuf,
    closed: bool,
}

impl Capture {
    /// A capture of link `link`; `receivers`: what each flow slot's receiver announces;
    /// `only`: the long-lived flows to capture (`record.pcap_flows`; None: all packets).
    pub fn create(
        path: &Path,
        link: usize,
        mss: u32,
        receivers: Vec<Announce>,
        long_lived: usize,
        only: Option<&[u32]>,
    ) -> Result<Self, String> {
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file =
            File::create(&partial).map_err(|e| format!("record.pcap: cannot create '{}': {e}", partial.display()))?;
        let writer = PcapWriter::new(BufWriter::with_capacity(1 << 20, file), mss, receivers, long_lived, only)
            .map_err(|e| format!("record.pcap: cannot write '{}': {e}", partial.display()))?;
        Ok(Self { link, writer, path: path.to_path_buf(), partial, closed: false })
    }

    /// Record `p`, an ACK's SACK option `sack`, leaving the bottleneck at `now` (out of
    /// line: the event loop without a capture keeps none of this code).
    #[inline(never)]
    pub fn packet(&mut self, now: Time, p: &Packet, sack: &SackBlocks) {
        self.writer.packet(now, p, sack);
    }

    /// Flush, then rename into place; the error names the file.
    pub fn close(&mut self) -> Result<(), String> {
        self.closed = true;
        let fail = |e: io::Error| format!("record.pcap: writing '{}' failed: {e}", self.path.display());
        if let Some(e) = self.writer.error.take() {
            let _ = std::fs::remove_file(&self.partial);
            return Err(fail(e));
        }
        self.writer.out.flush().map_err(fail)?;
        std::fs::rename(&self.partial, &self.path).map_err(fail)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if !self.closed {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

impl<W: Write> PcapWriter<W> {
    /// Write the file header; `receivers` says what each flow slot's receiver announces
    /// (long-lived slots first, then web ones), `only` which long-lived ones to capture
    /// (None: all).
    pub fn new(
        mut out: W,
        mss: u32,
        receivers: Vec<Announce>,
        long_lived: usize,
        only: Option<&[u32]>,
    ) -> io::Result<Self> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&PCAP_MAGIC.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay 0.
        h[16..20].copy_from_slice(&(MAX_HEADERS as u32).to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        let flows = receivers.len();
        // The sender's socket sets no buffer and its namespace keeps Linux's tcp_rmem. Its
        // SYN's window is tcp_connect_init's: full space rounded down to advmss, the MSS
        // without the timestamp option (not yet agreed), 65 536 -> 44 x 1460 = 64 240 for
        // an mss of 1448. It receives no data, so the window its data carries stays where
        // tcp_init_buffer_space left it (`RcvWindow::select` with nothing received).
        let mut sender_rcv = RcvWindow::new(None, TCP_RMEM_DEFAULT, mss + TIMESTAMP_OPTION_BYTES);
        let sender = Announce::of(&sender_rcv);
        let sender_window = sender_rcv.select(0, 0);
        let selected = match only {
            None => vec![true; flows],
            Some(sel) => (0..flows as u32).map(|f| sel.contains(&f)).collect(),
        };
        Ok(Self {
            out,
            mss,
            receivers,
            sender,
            sender_window,
            long_lived: long_lived as u32,
            handshake: vec![0; flows],
            ts_recent: vec![[0; 2]; flows],
            selected,
            error: None,
        })
    }

    /// Record `p`, an ACK's SACK option `sack`, leaving the bottleneck at `now`.
    #[inline]
    pub fn packet(&mut self, now: Time, p: &Packet, sack: &SackBlocks) {
        if !self.selected[p.flow as usize] {
            return;
        }
        let conn = p.conn as u32 + 1;
        if self.handshake[p.flow as usize] != conn {
            self.handshake[p.flow as usize] = conn;
            self.ts_recent[p.flow as usize] = [0; 2];
            self.write(now, &Header::syn(p, false, self.sender));
            self.write(now, &Header::syn(p, true, self.receivers[p.flow as usize]));
        }
        let h = if p.is_ack() {
            Header {
                to_sender: true,
                seq: 0,
                ack: p.seq.wrapping_mul(self.mss),
                flags: if p.is_ece() { TCP_ACK | TCP_ECE } else { TCP_ACK },
                ecn: p.ecn(),
                window: p.win,
                sack: {
                    let mut bytes = SackBlocks::NONE;
                    for &(a, b) in sack.as_slice() {
                        bytes.push(a.wrapping_mul(self.mss), b.wrapping_mul(self.mss));
                    }
                    bytes
                },
                wscale: None,
                wire: p.size as u32,
                flow: p.flow,
                conn: p.conn,
            }
        } else {
            Header {
                to_sender: false,
                seq: p.seq.wrapping_mul(self.mss),
                ack: 0,
                flags: if p.is_pushed() { TCP_PSH_ACK } else { TCP_ACK } | if p.is_cwr() { TCP_CWR } else { 0 },
                ecn: p.ecn(),
                window: self.sender_window,
                sack: SackBlocks::NONE,
                wscale: None,
                wire: p.size as u32,
                flow: p.flow,
                conn: p.conn,
            }
        };
        self.write(now, &h);
    }

    #[inline]
    fn write(&mut self, now: Time, h: &Header) {
        if self.error.is_some() {
            return;
        }
        let mut rec = [0u8; 16 + MAX_HEADERS];
        let ts_val = (now / 1_000_000) as u32;
        let recent = &mut self.ts_recent[h.flow as usize];
        let side = h.to_sender as usize;
        let ts_ecr = recent[1 - side];
        recent[side] = ts_val;
        let n = h.encode(&mut rec[16..], ts_val, ts_ecr, h.flow < self.long_lived);
        let us = now / 1_000;
        rec[0..4].copy_from_slice(&((us / 1_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(n as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&h.wire.max(n as u32).to_le_bytes());
        if let Err(e) = self.out.write_all(&rec[..16 + n]) {
            self.error = Some(e);
        }
    }

    #[cfg(test)]
    fn into_inner(self) -> W {
        self.out
    }
}

/// One TCP/IPv4 header to encode.
struct Header {
    /// Receiver to sender (ACKs, SYN-ACK) or the other way.
    to_sender: bool,
    seq: u32,
    ack: u32,
    flags: u8,
    /// The IP header's ECN field.
    ecn: Ecn,
    /// The window field.
    window: u16,
    /// The SACK blocks, [left, right) in bytes.
    sack: SackBlocks,
    /// SYN and SYN-ACK: the window scale announced (with MSS and SACK permitted).
    wscale: Option<u8>,
    /// Size on the wire (IP total length).
    wire: u32,
    flow: u32,
    conn: u16,
}

impl Header {
    /// The handshake that carries the window scales: SYN from the sender, SYN-ACK back,
    /// each with what its side announces. Sequence numbers count from 0 after them, so
    /// both ISNs are 2^32 - 1 (and the SYN-ACK acknowledges 0).
    fn syn(p: &Packet, reply: bool, side: Announce) -> Self {
        let ecn = match (p.ecn() != Ecn::NotEct, reply) {
            (false, _) => 0,
            (true, false) => TCP_ECE | TCP_CWR,
            (true, true) => TCP_ECE,
        };
        Header {
            to_sender: reply,
            seq: u32::MAX,
            ack: 0,
            flags: ecn | if reply { TCP_SYN | TCP_ACK } else { TCP_SYN },
            ecn: Ecn::NotEct,
            window: side.syn_window,
            sack: SackBlocks::NONE,
            wscale: Some(side.wscale),
            wire: 0,
            flow: p.flow,
            conn: p.conn,
        }
    }

    /// Encode into `buf`; returns the bytes written.
    fn encode(&self, buf: &mut [u8], ts_val: u32, ts_ecr: u32, bulk: bool) -> usize {
        // TCP options, padded to a multiple of four with NOPs (1), so the header length
        // plus the payload is the size on the wire.
        let mut opt = [1u8; 40];
        let mut o = 0;
        if let Some(wscale) = self.wscale {
            // MSS (2, 4), SACK permitted (4, 2), window scale (3, 3), timestamps (8, 10).
            opt[0..4].copy_from_slice(&[2, 4, 0, 0]);
            opt[4..6].copy_from_slice(&[4, 2]);
            opt[6..9].copy_from_slice(&[3, 3, wscale]);
            o = 10; // one NOP at 9
        } else {
            o += 2; // NOP NOP
        }
        opt[o..o + 2].copy_from_slice(&[8, 10]);
        opt[o + 2..o + 6].copy_from_slice(&ts_val.to_be_bytes());
        opt[o + 6..o + 10].copy_from_slice(&ts_ecr.to_be_bytes());
        o += 10;
        if self.sack.len > 0 {
            let n = self.sack.len as usize;
            opt[o..o + 2].copy_from_slice(&[1, 1]);
            opt[o + 2..o + 4].copy_from_slice(&[5, 2 + 8 * n as u8]);
            o += 4;
            for &(left, right) in self.sack.as_slice() {
                opt[o..o + 4].copy_from_slice(&left.to_be_bytes());
                opt[o + 4..o + 8].copy_from_slice(&right.to_be_bytes());
                o += 8;
            }
        }
        let tcp_len = (20 + o).div_ceil(4) * 4;
        // A SYN has no size on the wire in the simulation; an ACK's is its headers.
        let ip_total = (self.wire as usize).max(20 + tcp_len);
        let (src, dst, sport, dport) = self.endpoints(bulk);
        let (src, dst, sport, dport) = if self.to_sender { (dst, src, dport, sport) } else { (src, dst, sport, dport) };
        // IPv4: version 4, IHL 5; DF; TTL 64; protocol 6.
        let ip = &mut buf[..20];
        ip.fill(0);
        ip[0] = 0x45;
        ip[1] = self.ecn.bits();
        ip[2..4].copy_from_slice(&(ip_total as u16).to_be_bytes());
        ip[6] = 0x40;
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let sum = ip_checksum(ip);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        let tcp = &mut buf[20..20 + tcp_len];
        tcp[0..2].copy_from_slice(&sport.to_be_bytes());
        tcp[2..4].copy_from_slice(&dport.to_be_bytes());
        tcp[4..8].copy_from_slice(&self.seq.to_be_bytes());
        tcp[8..12].copy_from_slice(&self.ack.to_be_bytes());
        tcp[12] = ((tcp_len / 4) as u8) << 4;
        tcp[13] = self.flags;
        tcp[14..16].copy_from_slice(&self.window.to_be_bytes());
        tcp[16..20].fill(0); // checksum (would cover the payload), urgent pointer
        tcp[20..tcp_len].copy_from_slice(&opt[..tcp_len - 20]);
        20 + tcp_len
    }

    fn endpoints(&self, bulk: bool) -> ([u8; 4], [u8; 4], u16, u16) {
        let [_, _, hi, lo] = self.flow.to_be_bytes();
        let sport = SENDER_PORT_BASE.wrapping_add(self.conn);
        ([10, 1, hi, lo], [10, 2, hi, lo], sport, if bulk { BULK_PORT } else { WEB_PORT })
    }
}

/// RFC 791's header checksum: the ones' complement of the ones' complement sum of the
/// header's 16-bit words (with the checksum field zero).
fn ip_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

const _: () = assert!(HEADER_BYTES == 52, "data headers are IPv4 20 + TCP 20 + timestamps 12");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackOptions;
    use crate::scenario::rcvbuf_for_window;

    const MSS: u32 = 1448;

    /// Flow 0 (long-lived) has an autotuned receiver, flow 1 (a web slot) one pinned at
    /// a 1 MiB window.
    fn receivers() -> Vec<Announce> {
        vec![
            Announce::of(&RcvWindow::new(None, TCP_RMEM_DEFAULT, MSS)),
            Announce::of(&RcvWindow::new(Some(rcvbuf_for_window(1 << 20)), TCP_RMEM_DEFAULT, MSS)),
        ]
    }

    fn capture(packets: &[(Time, Packet, SackBlocks)]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), MSS, receivers(), 1, None).unwrap();
        for (t, p, sack) in packets {
            w.packet(*t, p, sack);
        }
        w.into_inner()
    }

    /// An ACK of segment `cum` with window field `win` and the SACK option `sack`, as the
    /// simulator sends it (its size follows its blocks).
    fn ack(cum: u32, win: u16, sack: SackBlocks) -> (Packet, SackBlocks) {
        let id = (sack.len > 0).then(|| SackOptions::default().push(sack));
        (Packet::ack(0, 0, cum, win, 0, 0, id, sack.len), sack)
    }

    /// (captured bytes, original length) of each record, and the captured bytes.
    fn records(file: &[u8]) -> Vec<(usize, u32, &[u8])> {
        let mut out = Vec::new();
        let mut at = 24;
        while at < file.len() {
            let u32_at = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().unwrap());
            let (incl, orig) = (u32_at(at + 8) as usize, u32_at(at + 12));
            out.push((incl, orig, &file[at + 16..at + 16 + incl]));
            at += 16 + incl;
        }
        out
    }

    fn be32(b: &[u8]) -> u32 {
        u32::from_be_bytes(b[..4].try_into().unwrap())
    }

    fn be16(b: &[u8]) -> u16 {
        u16::from_be_bytes([b[0], b[1]])
    }

    /// The window scale option of a SYN or SYN-ACK: MSS (4 bytes) and SACK permitted (2)
    /// come first, so it sits at IPv4 20 + TCP 20 + 6.
    fn wscale_option(syn: &[u8]) -> &[u8] {
        &syn[46..49]
    }

    #[test]
    fn data_and_ack_headers() {
        let data = Packet::data(0, 0, 3, MSS + HEADER_BYTES, 0, 0);
        let (ack, sack) = ack(2, 80, SackBlocks::of(&[(3, 4)]));
        let file = capture(&[(1_500_000_000, data, SackBlocks::NONE), (1_520_000_000, ack, sack)]);
        assert_eq!(&file[..4], &PCAP_MAGIC.to_le_bytes());
        let recs = records(&file);
        // SYN and SYN-ACK before the connection's first packet, then the two packets.
        assert_eq!(recs.len(), 4);
        let (incl, orig, d) = recs[2];
        // Data: IPv4 20 + TCP 20 + NOP NOP timestamps 12 = 52 captured, 1500 on the wire.
        assert_eq!((incl, orig), (52, 1500));
        assert_eq!(be16(&d[2..]), 1500);
        assert_eq!((&d[12..16], &d[16..20]), (&[10, 1, 0, 0][..], &[10, 2, 0, 0][..]));
        assert_eq!(be32(&d[24..]), 3 * MSS); // segment 3 starts at byte 4344
        assert_eq!(d[32] >> 4, 8); // data offset: 32 bytes of TCP header
        assert_eq!(be32(&d[44..]), 1500); // TSval: 1.5 s in ms
                                          // RFC 1071: the header's words, checksum included, sum to 0xffff.
        let sum = d[..20].chunks(2).map(|w| u32::from(be16(w))).sum::<u32>();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff);
        let (incl, orig, a) = recs[3];
        // ACK: IPv4 20 + TCP 20 + timestamps 12 + NOP NOP SACK(10) = 64, its size on the wire.
        assert_eq!((incl, orig), (64, 64));
        assert_eq!(be16(&a[2..]), 64);
        assert_eq!((&a[12..16], &a[16..20]), (&[10, 2, 0, 0][..], &[10, 1, 0, 0][..]));
        assert_eq!(be32(&a[28..]), 2 * MSS);
        assert_eq!(be16(&a[34..]), 80); // the window field the receiver chose
        assert_eq!(&a[52..56], &[1, 1, 5, 10]);
        assert_eq!((be32(&a[56..]), be32(&a[60..])), (3 * MSS, 4 * MSS));
    }

    #[test]
    fn ecn_fields_and_flags_are_the_packets() {
        // An ECN flow: its handshake negotiates ECN (SYN: ECE|CWR, SYN-ACK: ECE); data
        // ECT(0), then data marked CE on the way with CWR set, and an ACK with ECE (pure
        // ACKs are Not-ECT, as Linux sends them). Each IP checksum covers its ECN field.
        let data = |seq| Packet::data(0, 0, seq, MSS + HEADER_BYTES, 0, 0).with_ecn(Ecn::Ect0);
        let (ack, _) = ack(2, 80, SackBlocks::NONE);
        let none = SackBlocks::NONE;
        let file =
            capture(&[(0, data(0), none), (1, data(1).with_cwr().with_ecn(Ecn::Ce), none), (2, ack.with_ece(), none)]);
        let got: Vec<(u8, u8)> = records(&file).iter().map(|r| (r.2[1] & 3, r.2[33])).collect();
        assert_eq!(
            got,
            [
                (0, TCP_SYN | TCP_ECE | TCP_CWR),
                (0, TCP_SYN | TCP_ACK | TCP_ECE),
                (Ecn::Ect0.bits(), TCP_ACK),
                (Ecn::Ce.bits(), TCP_ACK | TCP_CWR),
                (0, TCP_ACK | TCP_ECE)
            ]
        );
        for r in records(&file) {
            let sum = r.2[..20].chunks(2).map(|w| u32::from(be16(w))).sum::<u32>();
            assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff);
        }
        // A flow without ECN: a plain handshake.
        let file = capture(&[(0, Packet::data(0, 0, 0, 1500, 0, 0), none)]);
        assert_eq!((records(&file)[0].2[33], records(&file)[1].2[33]), (TCP_SYN, TCP_SYN | TCP_ACK));
    }

    #[test]
    fn acks_are_as_long_as_their_sack_blocks_make_them() {
        // tcp_options_write: NOP NOP TS (12) always, then NOP NOP SACK kind/length (4) and
        // 8 bytes per block: TCP headers of 32, 44, 52, 60 bytes (data offset 8, 11, 13,
        // 15 words), IP total 52, 64, 72, 80 = the packet's size, captured whole.
        let blocks = [(10, 11), (20, 21), (30, 31)];
        let packets: Vec<(Time, Packet, SackBlocks)> = (0..=3)
            .map(|n| {
                let (p, sack) = ack(2, 80, SackBlocks::of(&blocks[..n]));
                (n as Time, p, sack)
            })
            .collect();
        let file = capture(&packets);
        let acks: Vec<(usize, u32, u16, u8)> =
            records(&file)[2..].iter().map(|&(incl, orig, a)| (incl, orig, be16(&a[2..]), a[32] >> 4)).collect();
        assert_eq!(acks, [(52, 52, 52, 8), (64, 64, 64, 11), (72, 72, 72, 13), (80, 80, 80, 15)]);
    }

    #[test]
    fn timestamps_echo_the_other_sides_latest() {
        // Data at 1.5 s and 1.6 s, an ACK at 1.7 s, data at 1.8 s: the SYN echoes nothing,
        // the SYN-ACK the SYN (1500 ms), the first data the SYN-ACK (1500), the ACK the latest
        // data (1600), the data after it the ACK (1700).
        let data = |seq| Packet::data(0, 0, seq, MSS + HEADER_BYTES, 0, 0);
        let (ack, _) = ack(2, 80, SackBlocks::NONE);
        let none = SackBlocks::NONE;
        let file = capture(&[
            (1_500_000_000, data(0), none),
            (1_600_000_000, data(1), none),
            (1_700_000_000, ack, none),
            (1_800_000_000, data(2), none),
        ]);
        // TSecr: IPv4 20 + TCP 20, then NOP NOP, kind and length, TSval: 40 + 4 + 4 = 48; in
        // the SYNs the timestamps follow 10 bytes of other options: 40 + 10 + 2 + 4 = 56.
        let ecr: Vec<u32> =
            records(&file).iter().enumerate().map(|(i, r)| be32(&r.2[if i < 2 { 56 } else { 48 }..])).collect();
        assert_eq!(ecr, vec![0, 1500, 1500, 1500, 1600, 1700]);
    }

    #[test]
    fn only_the_selected_flows_are_captured() {
        let p = |flow| Packet::data(flow, 0, 0, 1500, 0, 0);
        let mut recv = receivers();
        recv.push(recv[0]);
        let mut w = PcapWriter::new(Vec::new(), MSS, recv, 3, Some(&[2])).unwrap();
        for f in [0, 1, 2, 2] {
            w.packet(0, &p(f), &SackBlocks::NONE);
        }
        // Flow 2's handshake and its two packets.
        let file = w.into_inner();
        let recs = records(&file);
        assert_eq!(recs.len(), 4);
        assert!(recs.iter().all(|r| r.2[15] == 2 || r.2[19] == 2));
    }

    #[test]
    fn handshake_announces_each_sides_scale_and_first_window() {
        let p = |flow, conn| Packet::data(flow, conn, 0, 1500, 0, 0);
        let none = SackBlocks::NONE;
        let recs = records(&capture(&[(0, p(1, 0), none), (1, p(1, 0), none), (2, p(1, 1), none)])).len();
        // Two handshakes (connections 0 and 1 of the web slot) and three packets.
        assert_eq!(recs, 7);
        // The sender (Linux's default tcp_rmem, no buffer set): scale ilog2(max(65 536,
        // tcp_rmem[2] 32 MiB, rmem_max 4 MiB)) - 15 = 25 - 15 = 10; SYN window 65 536
        // rounded down to advmss 1460: 44 x 1460 = 64 240.
        // Flow 0's autotuned receiver: the same scale 10; its SYN-ACK window 65 536 rounded
        // down to 1448 (the timestamps are agreed by then): 45 x 1448 = 65 160.
        // Flow 1's receiver pinned at 1 MiB: SO_RCVBUF 1 048 576 x 256 / 320 = 838 861,
        // full space 838 861 (ratio 1/2 before the first segment); the listener's lock
        // clamps the scale's space to it: ilog2(838 861) - 15 = 19 - 15 = 4; its first
        // window 579 x 1448 = 838 392, in the SYN-ACK at most 65 535.
        for (flow, rcv_scale, rcv_window) in [(0, 10, 65_160), (1, 4, 65_535)] {
            let file = capture(&[(0, p(flow, 0), none)]);
            let recs = records(&file);
            let (syn, synack) = (recs[0].2, recs[1].2);
            assert_eq!((syn[33], synack[33]), (TCP_SYN, TCP_SYN | TCP_ACK));
            assert_eq!(be32(&syn[24..]), u32::MAX); // ISN: data starts at byte 0
            assert_eq!(wscale_option(syn), &[3, 3, 10]);
            assert_eq!(be16(&syn[34..]), 64_240);
            assert_eq!(wscale_option(synack), &[3, 3, rcv_scale]);
            assert_eq!(be16(&synack[34..]), rcv_window);
            // The sender's data carries its own window, which stays where
            // tcp_init_buffer_space left it: rcv_ssthresh = min(64 240, clamp 65 536 - 1460
            // = 64 076) = 64 076, aligned up to 1024: 64 512, field 64 512 >> 10 = 63.
            assert_eq!(be16(&recs[2].2[34..]), 63);
        }
        let file = capture(&[(0, p(1, 0), none)]);
        assert_eq!(be16(&records(&file)[0].2[22..]), WEB_PORT); // flow 1 is a web session
    }
}
