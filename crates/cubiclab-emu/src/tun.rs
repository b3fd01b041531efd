//! The TUN side: attach to a device, read what the kernel routes into it, write packets
//! back, and the IPv4/TCP header arithmetic that cutting a super-packet needs.
//!
//! With offload on, the devices carry a `virtio_net_hdr` in front of every packet
//! (`IFF_VNET_HDR`) and accept TCP and UDP segmentation offload (`TUNSETOFFLOAD`, TSO4 and,
//! where the kernel has it (6.2 on), USO): the sender's kernel hands over super-packets of
//! up to 64 KB (one skb, `gso_size` bytes of payload per segment) instead of segmenting
//! them itself (for UDP: a `UDP_SEGMENT` send, one datagram per segment), and the
//! receiving kernel takes such a packet as one skb, as a NIC's GRO would give it (a UDP
//! socket without `UDP_GRO` gets it cut back into datagrams, `udp_rcv_segment`). The emulator queues and times every segment on
//! its own; when consecutive segments of one super-packet are due together it writes them
//! as one smaller super-packet (`Header::write_range`), else one by one. Checksums are left
//! to the kernel (`VIRTIO_NET_HDR_F_NEEDS_CSUM`: the TCP checksum field holds the
//! pseudo-header sum, as `__tcp_v4_send_check` leaves it), except the IPv4 header's.
//!
//! Without offload the devices carry bare IP packets of at most the MTU
//! (`validate_xmit_skb` segments in software). Either way `tun_net_xmit` orphans each skb,
//! so TCP Small Queues does not throttle the sender: the emulated buffer, not the sender's
//! socket, fills.

use std::os::fd::RawFd;

use cubiclab_path::Ecn;

use crate::sys::errno_str;

/// `struct virtio_net_hdr` (without `num_buffers`): the default `TUNSETVNETHDRSZ`.
pub const VNET_LEN: usize = 10;
const VNET_F_NEEDS_CSUM: u8 = 1;
const VNET_GSO_NONE: u8 = 0;
const VNET_GSO_TCPV4: u8 = 1;
const VNET_GSO_UDP_L4: u8 = 5;
const VNET_GSO_ECN: u8 = 0x80;
/// Largest packet a read returns: an IPv4 packet of 64 KB plus the virtio header.
pub const MAX_PACKET: usize = VNET_LEN + 65_535;

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
/// `TUN_F_USO4 | TUN_F_USO6` (linux/if_tun.h, 6.2): the kernel takes them only together.
const TUN_F_USO: libc::c_uint = 0x20 | 0x40;

/// Attach to the TUN device `name` (created beforehand by `ip tuntap add mode tun`) in the
/// current network namespace; non-blocking. With `offload`, UDP segmentation offload is
/// asked for too and left off on a kernel that refuses it (UDP then arrives one datagram
/// per read).
pub fn open(name: &str, offload: bool) -> Result<RawFd, String> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(format!("device name '{name}' too long"));
    }
    // SAFETY: ifreq is plain data; the ioctls read the name, flags and offload bits.
    unsafe {
        let fd = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(format!("open /dev/net/tun: {}", errno_str()));
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (i, b) in name.bytes().enumerate() {
            ifr.ifr_name[i] = b as libc::c_char;
        }
        let vnet = if offload { libc::IFF_VNET_HDR } else { 0 };
        ifr.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI | vnet) as libc::c_short;
        let fail = |what: &str| {
            let e = errno_str();
            libc::close(fd);
            Err(format!("{what} {name}: {e}"))
        };
        if libc::ioctl(fd, libc::TUNSETIFF, &mut ifr as *mut libc::ifreq) < 0 {
            return fail("TUNSETIFF");
        }
        if offload {
            let f = libc::TUN_F_CSUM | libc::TUN_F_TSO4 | libc::TUN_F_TSO_ECN;
            if libc::ioctl(fd, libc::TUNSETOFFLOAD, (f | TUN_F_USO) as libc::c_ulong) < 0
                && libc::ioctl(fd, libc::TUNSETOFFLOAD, f as libc::c_ulong) < 0
            {
                return fail("TUNSETOFFLOAD");
            }
        }
        Ok(fd)
    }
}

/// What the emulator needs of a packet's headers (after the virtio header, if any).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Header {
    /// Offset of the IP header in the buffer (the virtio header's length, or 0).
    pub ip_at: u16,
    /// Whether the packet is UDP (else TCP, or neither if `hdr_len` is 0).
    pub udp: bool,
    /// IPv4 header bytes, and IPv4 + TCP (or UDP) header bytes (0: neither IPv4 TCP nor
    /// IPv4 UDP).
    pub ip_hl: u16,
    pub hdr_len: u16,
    /// TCP ports (0 if not TCP).
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    /// TCP acknowledgment number (0 if not TCP): what a host's ACK is answering, to time
    /// its turnaround from the data it acknowledges (io.csv).
    pub ack: u32,
    /// Payload bytes per segment of a super-packet (0: one segment).
    pub gso_size: u16,
    /// The virtio header's `VIRTIO_NET_HDR_GSO_ECN`: the super-packet's first segment has CWR.
    pub ecn: bool,
    /// The IPv4 header's ECN field (0 for a packet that is not IPv4): the codepoint the
    /// queue disciplines see, on every segment.
    pub ip_ecn: u8,
    pub segments: u16,
    /// Bytes of the IP packet.
    pub ip_len: u32,
}

impl Header {
    /// Parse the packet in `buf` (`vnet`: whether it starts with a virtio header).
    pub fn parse(buf: &[u8], vnet: bool) -> Header {
        let at = if vnet { VNET_LEN } else { 0 };
        let mut h =
            Header { ip_at: at as u16, segments: 1, ip_len: buf.len().saturating_sub(at) as u32, ..Default::default() };
        let ip = &buf[at.min(buf.len())..];
        if ip.len() < 20 || ip[0] >> 4 != 4 || (ip[9] != IPPROTO_TCP && ip[9] != IPPROTO_UDP) {
            return h;
        }
        h.ip_ecn = ip[1] & 0b11;
        let ip_hl = (ip[0] & 0x0f) as usize * 4;
        let udp = ip[9] == IPPROTO_UDP;
        if ip.len() < ip_hl + if udp { 8 } else { 20 } {
            return h;
        }
        let t = &ip[ip_hl..];
        let hdr_len = ip_hl + if udp { 8 } else { (t[12] >> 4) as usize * 4 };
        if ip.len() < hdr_len {
            return h;
        }
        h.ip_hl = ip_hl as u16;
        h.hdr_len = hdr_len as u16;
        h.udp = udp;
        if !udp {
            h.sport = u16::from_be_bytes([t[0], t[1]]);
            h.dport = u16::from_be_bytes([t[2], t[3]]);
            h.seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
            h.ack = u32::from_be_bytes([t[8], t[9], t[10], t[11]]);
        }
        let gso_type = if udp { VNET_GSO_UDP_L4 } else { VNET_GSO_TCPV4 };
        if vnet && buf[1] & !VNET_GSO_ECN == gso_type {
            let gso = u16::from_ne_bytes([buf[4], buf[5]]);
            let payload = ip.len() - hdr_len;
            if gso > 0 && payload > gso as usize {
                h.gso_size = gso;
                h.ecn = buf[1] & VNET_GSO_ECN != 0;
                h.segments = payload.div_ceil(gso as usize) as u16;
            }
        }
        h
    }

    /// Bytes on the wire of segment `i`: its headers and its share of the payload.
    pub fn segment_bytes(&self, i: u16) -> u32 {
        if self.segments == 1 {
            return self.ip_len;
        }
        let payload = self.ip_len - self.hdr_len as u32;
        let from = i as u32 * self.gso_size as u32;
        self.hdr_len as u32 + (payload - from).min(self.gso_size as u32)
    }

    /// TCP sequence number of segment `i` (0 if not TCP).
    pub fn segment_seq(&self, i: u16) -> u32 {
        if self.udp {
            return 0;
        }
        self.seq.wrapping_add(i as u32 * self.gso_size as u32)
    }

    /// Write segments `from..to` of the packet in `buf` to `fd` with ECN field `ecn` (CE if
    /// a discipline marked them): the packet itself if that is all of it (its IP header
    /// rewritten in place, [`set_ce`]), else new headers (`scratch`) in front of that stretch
    /// of payload.
    pub fn write_range(
        &self,
        fd: RawFd,
        buf: &mut [u8],
        from: u16,
        to: u16,
        ecn: Ecn,
        scratch: &mut [u8; 256],
    ) -> isize {
        if from == 0 && to == self.segments {
            if ecn != Ecn::from_bits(self.ip_ecn) {
                set_ce(&mut buf[self.ip_at as usize..]);
            }
            // SAFETY: buf is valid for its length.
            return unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, buf.len()) };
        }
        let (h, payload) = self.range_headers(buf, from, to, ecn, scratch);
        let iov = [
            libc::iovec { iov_base: h.as_ptr() as *mut libc::c_void, iov_len: h.len() },
            libc::iovec { iov_base: payload.as_ptr() as *mut libc::c_void, iov_len: payload.len() },
        ];
        // SAFETY: both iovecs point into live buffers of the stated lengths.
        unsafe { libc::writev(fd, iov.as_ptr(), 2) }
    }

    /// The headers (virtio, IPv4, TCP or UDP) of segments `from..to` of the super-packet in `buf`,
    /// built in `scratch` with ECN field `ecn`, and that stretch of its payload.
    pub fn range_headers<'a>(
        &self,
        buf: &'a [u8],
        from: u16,
        to: u16,
        ecn: Ecn,
        scratch: &'a mut [u8; 256],
    ) -> (&'a [u8], &'a [u8]) {
        let at = self.ip_at as usize;
        let (ip_hl, hdr_len) = (self.ip_hl as usize, self.hdr_len as usize);
        let gso = self.gso_size as usize;
        let p0 = at + hdr_len + from as usize * gso;
        let p1 = (at + hdr_len + to as usize * gso).min(buf.len());
        let payload = p1 - p0;
        let n = (to - from) as usize;
        let h = &mut scratch[..at + hdr_len];
        h.copy_from_slice(&buf[..at + hdr_len]);
        // virtio header: a super-packet of the remaining segments, or one plain packet.
        h[0] = VNET_F_NEEDS_CSUM;
        h[1] = match (n > 1, self.udp) {
            (false, _) => VNET_GSO_NONE,
            (true, true) => VNET_GSO_UDP_L4,
            (true, false) => VNET_GSO_TCPV4 | if self.ecn { VNET_GSO_ECN } else { 0 },
        };
        h[2..4].copy_from_slice(&(hdr_len as u16).to_ne_bytes());
        h[4..6].copy_from_slice(&(if n > 1 { gso as u16 } else { 0 }).to_ne_bytes());
        h[6..8].copy_from_slice(&(ip_hl as u16).to_ne_bytes());
        // csum_offset: where the checksum field lies in the transport header.
        h[8..10].copy_from_slice(&(if self.udp { 6u16 } else { 16 }).to_ne_bytes());
        // IPv4: ECN field, length, identification (one per segment, as `inet_gso_segment`
        // numbers them), checksum.
        let ip = &mut h[at..];
        ip[1] = (ip[1] & !0b11) | ecn.bits();
        let tot = (hdr_len + payload) as u16;
        ip[2..4].copy_from_slice(&tot.to_be_bytes());
        let id = u16::from_be_bytes([ip[4], ip[5]]).wrapping_add(from);
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[10..12].copy_from_slice(&[0, 0]);
        let c = !fold(sum16(&ip[..ip_hl], 0));
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        // TCP: sequence number; CWR only on the first segment, FIN and PSH only on the
        // last (as `tcp_gso_segment`); the pseudo-header sum for the kernel to finish.
        let (src, dst) = ([ip[12], ip[13], ip[14], ip[15]], [ip[16], ip[17], ip[18], ip[19]]);
        let l4_len = (hdr_len - ip_hl + payload) as u32;
        if self.udp {
            // UDP: the length of the whole stretch (`__udp_gso_segment` gives each
            // datagram its own, adjusting the sum by the difference) and the pseudo-header
            // sum for the kernel to finish, as `udp4_hwcsum` leaves it.
            let udp = &mut ip[ip_hl..];
            udp[4..6].copy_from_slice(&(l4_len as u16).to_be_bytes());
            let pseudo = sum16(&src, 0) + sum16(&dst, 0) + IPPROTO_UDP as u32 + l4_len;
            udp[6..8].copy_from_slice(&fold(pseudo).to_be_bytes());
            return (h, &buf[p0..p1]);
        }
        let tcp = &mut ip[ip_hl..];
        tcp[4..8].copy_from_slice(&self.segment_seq(from).to_be_bytes());
        if from > 0 {
            tcp[13] &= !0x80;
        }
        if to < self.segments {
            tcp[13] &= !0x09;
        }
        let pseudo = sum16(&src, 0) + sum16(&dst, 0) + IPPROTO_TCP as u32 + l4_len;
        tcp[16..18].copy_from_slice(&fold(pseudo).to_be_bytes());
        (h, &buf[p0..p1])
    }
}

/// Set the ECN field of the IPv4 header `ip` to CE, as a router's mark (`INET_ECN_set_ce`),
/// updating its checksum for the one 16-bit word that changed (RFC 1624, eqn. 3:
/// HC' = ~(~HC + ~m + m'), m the word of version, IHL and TOS). The checksum stays right
/// without summing the header again; the caller marks only ECN-capable packets, whose field
/// is ECT(0), ECT(1) or CE already (then nothing changes).
pub fn set_ce(ip: &mut [u8]) {
    let old = u16::from_be_bytes([ip[0], ip[1]]);
    ip[1] |= Ecn::Ce.bits();
    let new = u16::from_be_bytes([ip[0], ip[1]]);
    let hc = u16::from_be_bytes([ip[10], ip[11]]);
    let sum = !hc as u32 + !old as u32 + new as u32;
    ip[10..12].copy_from_slice(&(!fold(sum)).to_be_bytes());
}

/// One's-complement sum of big-endian 16-bit words (RFC 1071), not yet folded.
fn sum16(b: &[u8], mut acc: u32) -> u32 {
    for w in b.chunks(2) {
        acc += u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32;
    }
    acc
}

fn fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A virtio header and an IPv4/TCP packet (20 + 32 header bytes) with `payload` bytes
    /// of payload, a super-packet of `gso`-byte segments if `gso` > 0.
    fn packet(payload: usize, gso: u16) -> Vec<u8> {
        let mut b = vec![0u8; VNET_LEN + 52 + payload];
        if gso > 0 {
            b[1] = VNET_GSO_TCPV4;
            b[4..6].copy_from_slice(&gso.to_ne_bytes());
        }
        let ip = &mut b[VNET_LEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((52 + payload) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&7u16.to_be_bytes());
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[10, 78, 0, 1]);
        ip[16..20].copy_from_slice(&[10, 78, 0, 2]);
        ip[20..22].copy_from_slice(&40000u16.to_be_bytes());
        ip[22..24].copy_from_slice(&47001u16.to_be_bytes());
        ip[24..28].copy_from_slice(&1000u32.to_be_bytes());
        ip[28..32].copy_from_slice(&7000u32.to_be_bytes());
        ip[32] = 8 << 4;
        ip[33] = 0x80 | 0x08 | 0x10 | 0x01; // CWR, PSH, ACK, FIN
        b
    }

    #[test]
    fn a_super_packet_is_counted_segment_by_segment() {
        // 3000 bytes of payload in 1448-byte segments: 1448, 1448, 104; each carries the
        // 52 header bytes on the wire.
        let b = packet(3000, 1448);
        let h = Header::parse(&b, true);
        assert_eq!((h.sport, h.dport, h.seq, h.ack, h.hdr_len, h.segments), (40000, 47001, 1000, 7000, 52, 3));
        let sizes: Vec<u32> = (0..3).map(|i| h.segment_bytes(i)).collect();
        assert_eq!(sizes, vec![1500, 1500, 156]);
        assert_eq!(h.segment_seq(2), 1000 + 2 * 1448);
        // A plain packet is one segment of its IP length.
        let h = Header::parse(&packet(100, 0), true);
        assert_eq!((h.segments, h.segment_bytes(0)), (1, 152));
    }

    #[test]
    fn a_cut_range_gets_its_own_headers() {
        // Write segments 1..3 of the packet above through a pipe and read what was written.
        let mut b = packet(3000, 1448);
        let h = Header::parse(&b, true);
        let mut scratch = [0u8; 256];
        let out = written(|fd| h.write_range(fd, &mut b, 1, 3, Ecn::NotEct, &mut scratch));
        // 10 virtio + 52 headers + 1448 + 104 payload.
        assert_eq!(out.len(), 10 + 52 + 1552);
        let ip = &out[VNET_LEN..];
        assert_eq!((out[1], u16::from_ne_bytes([out[4], out[5]])), (VNET_GSO_TCPV4, 1448));
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 52 + 1552);
        assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 8, "IP id of the second segment");
        // A valid IPv4 header sums to 0xffff.
        assert_eq!(fold(sum16(&ip[..20], 0)), 0xffff);
        assert_eq!(u32::from_be_bytes([ip[24], ip[25], ip[26], ip[27]]), 1000 + 1448);
        // Not the first segment: CWR cleared; the last: FIN and PSH kept.
        assert_eq!(ip[33], 0x08 | 0x10 | 0x01);
        // Pseudo-header sum: 10.78.0.1 + 10.78.0.2 + proto 6 + TCP length 32 + 1552.
        let want = fold(0x0a4e + 0x0001 + 0x0a4e + 0x0002 + 6 + 1584);
        assert_eq!(u16::from_be_bytes([ip[36], ip[37]]), want);
        assert!(ip[52..52 + 1552] == b[VNET_LEN + 52 + 1448..], "payload of segments 1..3");
    }

    #[test]
    fn a_mark_updated_incrementally_gives_the_checksum_summed_from_scratch() {
        // RFC 1624's update of the one word that holds the ECN field against RFC 1071's sum
        // of the whole header, for ECT(0) and ECT(1) under other TOS bits (DSCP), lengths,
        // identifications and addresses, among them headers whose checksum is 0x0000 or
        // 0xffff before or after (where eqn. 2 of RFC 1624 goes wrong and eqn. 3 does not).
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut edges = 0;
        for i in 0..200_000u32 {
            let mut ip = [0u8; 20];
            ip[0] = 0x45;
            ip[1] = (next() as u8 & 0xfc) | [Ecn::Ect0, Ecn::Ect1][i as usize % 2].bits();
            ip[2..10].copy_from_slice(&next().to_be_bytes());
            ip[12..20].copy_from_slice(&next().to_be_bytes());
            let c = !fold(sum16(&ip, 0));
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            let mut scratch_sum = ip;
            scratch_sum[1] |= 0b11;
            scratch_sum[10..12].copy_from_slice(&[0, 0]);
            let want = !fold(sum16(&scratch_sum, 0));
            set_ce(&mut ip);
            assert_eq!(ip[1] & 0b11, Ecn::Ce.bits());
            assert_eq!(u16::from_be_bytes([ip[10], ip[11]]), want, "header {ip:02x?}");
            assert_eq!(fold(sum16(&ip, 0)), 0xffff);
            edges += (c == 0 || c == 0xffff || want == 0 || want == 0xffff) as u32;
        }
        assert!(edges > 0, "some checksums on the edge of ones' complement arithmetic");
    }

    #[test]
    fn marked_segments_are_written_with_ce() {
        // ECT(0) segments 1..3 written marked get CE in their fresh header (its checksum
        // summed over it); the whole packet written marked is rewritten in place.
        let mut b = packet(3000, 1448);
        b[VNET_LEN + 1] = Ecn::Ect0.bits();
        let c = !fold(sum16(&b[VNET_LEN..VNET_LEN + 20], 0));
        b[VNET_LEN + 10..VNET_LEN + 12].copy_from_slice(&c.to_be_bytes());
        let h = Header::parse(&b, true);
        assert_eq!(h.ip_ecn, Ecn::Ect0.bits());
        let mut scratch = [0u8; 256];
        let (hd, _) = h.range_headers(&b, 1, 3, Ecn::Ce, &mut scratch);
        let ip = &hd[VNET_LEN..];
        assert_eq!((ip[1] & 3, fold(sum16(&ip[..20], 0))), (Ecn::Ce.bits(), 0xffff));
        let before = b.clone();
        let out = written(|fd| h.write_range(fd, &mut b, 0, 3, Ecn::Ce, &mut scratch));
        let ip = &out[VNET_LEN..];
        assert_eq!((ip[1] & 3, fold(sum16(&ip[..20], 0))), (Ecn::Ce.bits(), 0xffff));
        let changed: Vec<usize> = (0..out.len()).filter(|&i| out[i] != before[i]).map(|i| i - VNET_LEN).collect();
        assert_eq!(out.len(), before.len());
        assert!(
            changed[0] == 1 && changed[1..].iter().all(|i| [10, 11].contains(i)),
            "only TOS and checksum: {changed:?}"
        );
    }

    /// What `write` wrote into a pipe (it returns the bytes written, as `write_range`).
    fn written(write: impl FnOnce(RawFd) -> isize) -> Vec<u8> {
        let mut fds = [0; 2];
        // SAFETY: fds is a valid out-array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let n = write(fds[1]);
        let mut out = vec![0u8; 8192];
        // SAFETY: out has 8192 bytes; both descriptors are ours.
        let r = unsafe { libc::read(fds[0], out.as_mut_ptr() as *mut libc::c_void, out.len()) };
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        assert_eq!(r, n);
        out.truncate(r as usize);
        out
    }

    /// A virtio header and an IPv4/UDP datagram train: `payload` bytes after the 8-byte
    /// UDP header, cut into `gso`-byte datagrams (a `UDP_SEGMENT` send).
    fn udp_packet(payload: usize, gso: u16) -> Vec<u8> {
        let mut b = vec![0u8; VNET_LEN + 28 + payload];
        b[1] = VNET_GSO_UDP_L4;
        b[4..6].copy_from_slice(&gso.to_ne_bytes());
        let ip = &mut b[VNET_LEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((28 + payload) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&7u16.to_be_bytes());
        ip[9] = 17;
        ip[12..16].copy_from_slice(&[10, 78, 0, 1]);
        ip[16..20].copy_from_slice(&[10, 78, 0, 2]);
        ip[20..22].copy_from_slice(&40000u16.to_be_bytes());
        ip[22..24].copy_from_slice(&46001u16.to_be_bytes());
        ip[24..26].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        for (i, x) in ip[28..].iter_mut().enumerate() {
            *x = i as u8;
        }
        b
    }

    #[test]
    fn a_udp_train_is_cut_into_datagrams() {
        // 3 x 1472 + 100 bytes of payload: four datagrams of 1500, 1500, 1500 and 128
        // bytes on the wire (20 IP + 8 UDP each); no TCP sequence numbers, no flow ports.
        let b = udp_packet(3 * 1472 + 100, 1472);
        let h = Header::parse(&b, true);
        assert!(h.udp);
        assert_eq!((h.hdr_len, h.segments, h.sport, h.dport, h.segment_seq(2)), (28, 4, 0, 0, 0));
        let sizes: Vec<u32> = (0..4).map(|i| h.segment_bytes(i)).collect();
        assert_eq!(sizes, vec![1500, 1500, 1500, 128]);
        // Datagrams 1..3 as a train of their own: UDP_L4 GSO of 1472, IP length
        // 28 + 2 x 1472, UDP length 8 + 2 x 1472, checksum at offset 6 of the UDP header.
        let mut scratch = [0u8; 256];
        let (hd, payload) = h.range_headers(&b, 1, 3, Ecn::NotEct, &mut scratch);
        assert_eq!((hd[1], u16::from_ne_bytes([hd[4], hd[5]])), (VNET_GSO_UDP_L4, 1472));
        assert_eq!((u16::from_ne_bytes([hd[6], hd[7]]), u16::from_ne_bytes([hd[8], hd[9]])), (20, 6));
        let ip = &hd[VNET_LEN..];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 28 + 2 * 1472);
        assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 8, "IP id of the second datagram");
        assert_eq!(fold(sum16(&ip[..20], 0)), 0xffff);
        assert_eq!(u16::from_be_bytes([ip[24], ip[25]]), 8 + 2 * 1472);
        // Pseudo-header sum: 10.78.0.1 + 10.78.0.2 + proto 17 + UDP length 2952.
        let want = fold(0x0a4e + 0x0001 + 0x0a4e + 0x0002 + 17 + 2952);
        assert_eq!(u16::from_be_bytes([ip[26], ip[27]]), want);
        assert!(payload == &b[VNET_LEN + 28 + 1472..VNET_LEN + 28 + 3 * 1472]);
        // The last datagram alone is a plain packet.
        let (hd, payload) = h.range_headers(&b, 3, 4, Ecn::NotEct, &mut scratch);
        assert_eq!((hd[1], payload.len()), (VNET_GSO_NONE, 100));
        assert_eq!(u16::from_be_bytes([hd[VNET_LEN + 24], hd[VNET_LEN + 25]]), 108);
    }
}
