//! Linux's internal TCP pacing with the earliest-departure-time model
//! (`net/ipv4/tcp_output.c`, 6.x): the connection keeps `tcp_wstamp_ns`, the earliest time
//! its next packet may leave. Without the `fq` qdisc the stack paces only when the
//! algorithm asked for it (`tcp_needs_internal_pacing`: `sk_pacing_status ==
//! SK_PACING_NEEDED`, which BBR sets and CUBIC does not; here [`TcpState::paced`]).
//!
//! Packets leave in TSO bursts of `tcp_tso_segs` segments ([`tso_segs`]): `tcp_write_xmit`
//! stops while `tcp_wstamp_ns` is in the future (`tcp_pacing_check`, which arms the pacing
//! timer), and after each burst `tcp_update_skb_after_send` moves `tcp_wstamp_ns` on by the
//! burst's length at `sk_pacing_rate`, less the credit of an idle gap (at most half), except
//! for the connection's first 10 segments (`data_segs_out < 10`, as `sch_fq` does).
//! A transport that keeps one record per segment gives each segment of a burst the same
//! departure time, as the kernel's `tcp_fragment` copies the burst's stamp to its pieces.

use crate::tcp::TcpState;

/// `sysctl_tcp_min_tso_segs`.
pub const TCP_MIN_TSO_SEGS: u32 = 2;
/// `sysctl_tcp_tso_rtt_log`: `gso_max_size >> (min_rtt_us >> 9)` extra bytes per burst.
const TSO_RTT_LOG: u32 = 9;
/// `sch_fq` (and so the stack) does not pace a connection's first 10 segments.
const UNPACED_SEGS: u64 = 10;

/// `tcp_tso_autosize` with `tcp_tso_segs`' floor: a burst carries about 1 ms of the pacing
/// rate (`sk_pacing_rate >> sk_pacing_shift`), more on short paths, at most
/// `sk_gso_max_size`, and at least `min_tso` segments.
pub fn tso_segs(tcp: &TcpState, min_tso: u32) -> u32 {
    let mut bytes = tcp.pacing_rate >> tcp.pacing_shift;
    let r = tcp.min_rtt_us >> TSO_RTT_LOG;
    if r < u32::BITS {
        bytes += (tcp.gso_max_size >> r) as u64;
    }
    let bytes = bytes.min(tcp.gso_max_size as u64);
    ((bytes / tcp.mss.max(1) as u64) as u32).max(min_tso)
}

/// The burst being sent and the count behind the first-10-segments rule.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Segments the current burst may still take (0: no burst open).
    burst_left: u32,
    /// Segments sent in the current burst.
    burst_len: u32,
    /// `tcp_wstamp_ns` before the burst began (`prior_wstamp`).
    prior_wstamp_ns: u64,
    /// `tp->data_segs_out`.
    data_segs_out: u64,
}

impl Pacer {
    /// `tcp_pacing_check` before a new burst: the time the stack must wait for, if any.
    /// Within a burst, segments leave back to back.
    #[inline]
    pub fn wait_until(&self, tcp: &TcpState, now_ns: u64) -> Option<u64> {
        // `paced` first: an unpaced connection (most) is answered by one test.
        (tcp.paced && self.burst_left == 0 && tcp.wstamp_ns > now_ns).then_some(tcp.wstamp_ns)
    }

    /// One segment leaves at `now_ns`; the first of a burst opens it with [`tso_segs`]
    /// segments (at least `min_tso`, the algorithm's `min_tso_segs`) and stamps it
    /// (`tcp_transmit_skb`: `tcp_wstamp_ns` catches up with the clock). A full burst is
    /// closed at once.
    #[inline]
    pub fn sent(&mut self, tcp: &mut TcpState, min_tso: u32, now_ns: u64) {
        if self.burst_left == 0 {
            self.burst_left = tso_segs(tcp, min_tso).max(1);
            self.burst_len = 0;
            self.prior_wstamp_ns = tcp.wstamp_ns;
            tcp.wstamp_ns = tcp.wstamp_ns.max(now_ns);
        }
        self.burst_left -= 1;
        self.burst_len += 1;
        self.data_segs_out += 1;
        if self.burst_left == 0 {
            self.close(tcp);
        }
    }

    /// One segment of an unpaced connection leaves at `now_ns`: there are no bursts to
    /// size (nothing waits for `tcp_wstamp_ns`), only the count and the clock move. The
    /// algorithm asks for pacing in its `init`, before the first segment, so a connection
    /// is paced or not throughout.
    #[inline]
    pub fn sent_unpaced(&mut self, tcp: &mut TcpState, now_ns: u64) {
        self.data_segs_out += 1;
        tcp.wstamp_ns = tcp.wstamp_ns.max(now_ns);
    }

    /// The sender stops (window full, nothing to send): the burst is as long as it got.
    #[inline]
    pub fn end_burst(&mut self, tcp: &mut TcpState) {
        if self.burst_len > 0 {
            self.close(tcp);
        }
    }

    /// `tcp_update_skb_after_send` for the burst just sent.
    fn close(&mut self, tcp: &mut TcpState) {
        let len = self.burst_len as u64 * tcp.mss as u64;
        self.burst_left = 0;
        self.burst_len = 0;
        let rate = tcp.pacing_rate;
        if tcp.paced && rate != 0 && rate != u64::MAX && self.data_segs_out >= UNPACED_SEGS {
            let len_ns = (len as u128 * 1_000_000_000 / rate as u128) as u64;
            let credit = tcp.wstamp_ns - self.prior_wstamp_ns.min(tcp.wstamp_ns);
            tcp.wstamp_ns += len_ns - (len_ns / 2).min(credit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paced(rate: u64) -> TcpState {
        TcpState { paced: true, pacing_rate: rate, mss: 1000, ..TcpState::default() }
    }

    #[test]
    fn tso_autosize() {
        // 12.5 MB/s >> 10 = 12207 bytes; min_rtt 40 ms: r = 40000 >> 9 = 78 >= 32, no extra;
        // 12207 / 1000 = 12 segments. With min_rtt 1 ms: r = 1, + 65536 >> 1 = 32768 ->
        // 44975 bytes, 44 segments. A slow rate (1 MB/s: 976 bytes) gets the floor of 2.
        let mut t = paced(12_500_000);
        t.min_rtt_us = 40_000;
        assert_eq!(tso_segs(&t, TCP_MIN_TSO_SEGS), 12);
        t.min_rtt_us = 1_000;
        assert_eq!(tso_segs(&t, TCP_MIN_TSO_SEGS), 44);
        let slow = TcpState { min_rtt_us: 40_000, ..paced(1_000_000) };
        assert_eq!(tso_segs(&slow, TCP_MIN_TSO_SEGS), 2);
    }

    #[test]
    fn bursts_advance_the_departure_time() {
        // 1 MB/s and 1000-byte segments: 1 ms per segment. Four 2-segment bursts end with
        // data_segs_out = 2, 4, 6, 8 < 10: not paced, wstamp stays at now = 0. The fifth
        // brings it to 10 and is paced: 2 segments, 2 ms, no idle credit: wstamp = 2 ms.
        let (mut p, mut t) = (Pacer::default(), paced(1_000_000));
        for _ in 0..8 {
            assert_eq!(p.wait_until(&t, 0), None);
            p.sent(&mut t, 2, 0);
        }
        assert_eq!(t.wstamp_ns, 0);
        p.sent(&mut t, 2, 0);
        p.sent(&mut t, 2, 0);
        assert_eq!(t.wstamp_ns, 2_000_000);
        assert_eq!(p.wait_until(&t, 1_000_000), Some(2_000_000));
        // At 2 ms a burst cut short after one segment (the window filled) costs 1 ms.
        p.sent(&mut t, 2, 2_000_000);
        assert_eq!(p.wait_until(&t, 2_000_000), None, "inside a burst");
        p.end_burst(&mut t);
        assert_eq!(t.wstamp_ns, 3_000_000);
    }

    #[test]
    fn an_idle_gap_gives_at_most_half_a_burst_of_credit() {
        // wstamp at 3 ms, the next burst at 10 ms: wstamp jumps to 10 ms (credit 7 ms);
        // a 2-segment burst's 2 ms is halved to 1 ms: wstamp = 11 ms.
        let (mut p, mut t) = (Pacer { data_segs_out: 10, ..Pacer::default() }, paced(1_000_000));
        t.wstamp_ns = 3_000_000;
        p.sent(&mut t, 2, 10_000_000);
        p.sent(&mut t, 2, 10_000_000);
        assert_eq!(t.wstamp_ns, 11_000_000);
    }

    #[test]
    fn unpaced_connections_keep_no_schedule() {
        let mut t = TcpState { pacing_rate: 1_000_000, mss: 1000, ..TcpState::default() };
        let mut p = Pacer { data_segs_out: 10, ..Pacer::default() };
        p.sent(&mut t, 1, 5);
        assert_eq!(p.wait_until(&t, 5), None);
        assert_eq!(t.wstamp_ns, 5);
        // The sender's path for unpaced connections: the count and the clock only.
        let mut q = Pacer { data_segs_out: 10, ..Pacer::default() };
        q.sent_unpaced(&mut t, 7);
        assert_eq!((q.data_segs_out, q.burst_left, t.wstamp_ns), (11, 0, 7));
    }
}
