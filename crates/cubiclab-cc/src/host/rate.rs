//! Delivery-rate estimation as Linux `net/ipv4/tcp_rate.c` (6.x) does it: every transmission
//! stamps the packet with the connection's delivery count and times
//! ([`RateEstimator::skb_sent`], `tcp_rate_skb_sent`); every packet an ACK newly delivers
//! offers its stamp, and the most recently sent one fixes the sample's start
//! ([`RateEstimator::skb_delivered`], `tcp_rate_skb_delivered`); after the ACK the sample is
//! the segments delivered since then over the longer of the send and the ACK phase
//! ([`RateEstimator::gen`], `tcp_rate_gen`). An application that runs out of data marks the
//! connection application-limited until that bubble is delivered
//! ([`RateEstimator::check_app_limited`], `tcp_rate_check_app_limited`).
//!
//! The connection-wide counters BBR reads (`delivered`, `delivered_mstamp`, `app_limited`)
//! live in [`TcpState`]; the per-packet stamp ([`TxStamp`]) lives wherever the transport
//! keeps its per-segment record. Times are microseconds (`tcp_skb_timestamp_us`).

use crate::seq::after;
use crate::tcp::{RateSample, TcpState};

/// `TCPCB_DELIVERED_CE_MASK`: `tx.delivered_ce` is a 20-bit field of the skb's control block.
const TCPCB_DELIVERED_CE_MASK: u32 = (1 << 20) - 1;

const _: () = assert!(std::mem::size_of::<TxStamp>() == 32, "TxStamp grew: a per-segment record, see its doc");

/// What `tcp_rate_skb_sent` writes into a packet (`TCP_SKB_CB(skb)->tx`), with the fields
/// BBRv3's TCP core adds (google/bbr v3 `tcp_rate.c`); 32 bytes, as a per-segment record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxStamp {
    /// `tx.delivered`: `tp->delivered` at the transmission.
    pub delivered: u32,
    /// `tx.is_app_limited` (bit 0) and `tx.delivered_ce` (the 20 bits above it), packed as
    /// the kernel packs its bit fields.
    app_limited_ce: u32,
    /// `tx.delivered_mstamp`: when `tp->delivered` last grew before the transmission.
    pub delivered_mstamp_us: u64,
    /// `tx.first_tx_mstamp`: start of the send phase this packet belongs to.
    pub first_tx_mstamp_us: u64,
    /// `tx.in_flight`: packets in flight with this one (`tcp_set_tx_in_flight`).
    pub in_flight: u32,
    /// `tx.lost`: `tp->lost` at the transmission.
    pub lost: u32,
}

impl TxStamp {
    /// `tx.is_app_limited`.
    #[inline]
    pub fn is_app_limited(&self) -> bool {
        self.app_limited_ce & 1 != 0
    }

    /// `tx.delivered_ce`: `tp->delivered_ce` at the transmission, its low 20 bits.
    #[inline]
    pub fn delivered_ce(&self) -> u32 {
        self.app_limited_ce >> 1
    }
}

/// A delivered packet as `tcp_rate_skb_delivered` sees it.
#[derive(Clone, Copy, Debug)]
pub struct Delivered {
    /// Its stamp from the last transmission.
    pub tx: TxStamp,
    /// `tcp_skb_timestamp_us`: when it was last sent.
    pub sent_us: u64,
    /// `end_seq`, in segments (the segment's number + 1).
    pub end_seq: u32,
    /// `TCPCB_RETRANS`: it was retransmitted.
    pub is_retrans: bool,
}

/// The connection's rate-sampling state (`first_tx_mstamp`, `rate_delivered`, ...) and the
/// sample the current ACK builds.
#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    /// `tp->first_tx_mstamp`: send time of the most recently delivered packet, or of the
    /// first packet sent after an idle period.
    first_tx_mstamp_us: u64,
    /// `rate_delivered`, `rate_interval_us`, `rate_app_limited`: the last sample that was
    /// not application-limited, or the fastest that was (`tcp_get_info`'s delivery rate).
    pub rate_delivered: u32,
    pub rate_interval_us: i64,
    pub rate_app_limited: bool,
    /// This ACK's sample so far: `rs->prior_mstamp` (`None`: no timed packet delivered yet),
    /// `rs->last_end_seq`, and the send-phase interval.
    prior_mstamp_us: Option<u64>,
    last_end_seq: u32,
    /// `rs->prior_lost`, `rs->prior_delivered_ce` (BBRv3's TCP core).
    prior_lost: u32,
    prior_delivered_ce: u32,
    rs: RateSample,
}

impl RateEstimator {
    /// `tcp_rate_skb_sent`: the stamp for a packet leaving at `sent_us` with `packets_out`
    /// packets (before this one) unacknowledged and `in_flight` packets in flight with it.
    /// With nothing in flight, the send phase and the delivery clock restart here, so that
    /// the first ACK measures only this flight.
    #[inline]
    pub fn skb_sent(&mut self, tcp: &mut TcpState, packets_out: u32, in_flight: u32, sent_us: u64) -> TxStamp {
        if packets_out == 0 {
            self.first_tx_mstamp_us = sent_us;
            tcp.delivered_mstamp_us = sent_us;
        }
        TxStamp {
            delivered: tcp.delivered,
            // wraps: delivered_ce is a 20-bit field of the skb's control block.
            app_limited_ce: (tcp.delivered_ce & TCPCB_DELIVERED_CE_MASK) << 1 | u32::from(tcp.app_limited != 0),
            delivered_mstamp_us: tcp.delivered_mstamp_us,
            first_tx_mstamp_us: self.first_tx_mstamp_us,
            in_flight,
            lost: tcp.lost,
        }
    }

    /// The ACK's `rs->prior_delivered` so far: `tp->delivered` when the most recently sent
    /// packet it delivered was sent (0: none yet).
    #[inline]
    pub fn prior_delivered(&self) -> u32 {
        self.rs.prior_delivered
    }

    /// An ACK begins (`tcp_ack` zeroes its `struct rate_sample`).
    #[inline]
    pub fn begin_ack(&mut self) {
        self.prior_mstamp_us = None;
        self.last_end_seq = 0;
        self.rs = RateSample::default();
    }

    /// `tcp_rate_skb_delivered`: packet `d` is newly ACKed or SACKed. The first packet of
    /// the ACK, then any sent later (or at the same time with a higher sequence,
    /// `tcp_skb_sent_after`), becomes the sample's start. The transport offers a packet once:
    /// the kernel zeroes a SACKed packet's `delivered_mstamp` so that the cumulative ACK
    /// that later covers it skips it.
    #[inline]
    pub fn skb_delivered(&mut self, d: Delivered) {
        let sent_after = d.sent_us > self.first_tx_mstamp_us
            || (d.sent_us == self.first_tx_mstamp_us && after(d.end_seq, self.last_end_seq));
        // The kernel tests `!rs->prior_delivered`: a zero count (the first flight) always wins.
        if self.rs.prior_delivered == 0 || sent_after {
            self.rs.prior_delivered = d.tx.delivered;
            self.prior_mstamp_us = Some(d.tx.delivered_mstamp_us);
            self.rs.is_app_limited = d.tx.is_app_limited();
            self.rs.is_retrans = d.is_retrans;
            self.rs.tx_in_flight = d.tx.in_flight;
            self.prior_lost = d.tx.lost;
            self.prior_delivered_ce = d.tx.delivered_ce();
            self.last_end_seq = d.end_seq;
            self.first_tx_mstamp_us = d.sent_us;
            self.rs.interval_us = d.sent_us as i64 - d.tx.first_tx_mstamp_us as i64;
        }
    }

    /// `tcp_rate_gen` at the end of the ACK, after `tcp.delivered` counted the `delivered`
    /// segments it newly ACKed or SACKed and `lost` were newly marked lost. `prior_in_flight`
    /// and `rtt_us` (the newest delivered packet's RTT) fill the rest of the sample `tcp_ack`
    /// hands to `cong_control`. The sample is invalid (`delivered = interval_us = -1`) without
    /// a timed packet, and its interval is -1 when shorter than the minimum RTT (an ACK
    /// compressed below what the path can do).
    #[inline]
    pub fn gen(
        &mut self,
        tcp: &mut TcpState,
        delivered: u32,
        lost: u32,
        now_us: u64,
        prior_in_flight: u32,
        rtt_us: i64,
    ) -> RateSample {
        // The application-limited bubble has been delivered.
        if tcp.app_limited != 0 && after(tcp.delivered, tcp.app_limited) {
            tcp.app_limited = 0;
        }
        if delivered > 0 {
            tcp.delivered_mstamp_us = now_us;
        }
        let mut rs = self.rs;
        rs.acked_sacked = delivered;
        rs.losses = lost;
        rs.prior_in_flight = prior_in_flight;
        rs.rtt_us = rtt_us;
        let Some(prior_mstamp) = self.prior_mstamp_us else {
            rs.delivered = -1;
            rs.interval_us = -1;
            return rs;
        };
        // wraps: u32 counters, differences read as s32 as the kernel's rate_sample holds them.
        rs.delivered = tcp.delivered.wrapping_sub(rs.prior_delivered) as i32;
        rs.lost = tcp.lost.wrapping_sub(self.prior_lost) as i32;
        rs.delivered_ce = (tcp.delivered_ce.wrapping_sub(self.prior_delivered_ce) & TCPCB_DELIVERED_CE_MASK) as i32;
        let snd_us = rs.interval_us;
        let ack_us = now_us as i64 - prior_mstamp as i64;
        rs.interval_us = snd_us.max(ack_us);
        if rs.interval_us < tcp.min_rtt_us as i64 {
            rs.interval_us = -1;
            return rs;
        }
        // Keep the last sample not application-limited, or the fastest that was.
        if !rs.is_app_limited
            || rs.delivered as u64 * self.rate_interval_us as u64 >= self.rate_delivered as u64 * rs.interval_us as u64
        {
            self.rate_delivered = rs.delivered as u32;
            self.rate_interval_us = rs.interval_us;
            self.rate_app_limited = rs.is_app_limited;
        }
        rs
    }

    /// `tcp_rate_check_app_limited`, called when the application writes (`tcp_sendmsg`):
    /// with less than a segment left to send, the window not full and every lost segment
    /// retransmitted, the connection is application-limited until what is in flight now
    /// is delivered (`app_limited` holds that delivery count, at least 1).
    pub fn check_app_limited(tcp: &mut TcpState, unsent: u32, in_flight: u32, lost_out: u32, retrans_out: u32) {
        if unsent == 0 && in_flight < tcp.cwnd && lost_out <= retrans_out {
            tcp.set_app_limited(in_flight);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp() -> TcpState {
        TcpState { min_rtt_us: 0, ..TcpState::default() }
    }

    fn delivered(tx: TxStamp, sent_us: u64, seq: u32) -> Delivered {
        Delivered { tx, sent_us, end_seq: seq + 1, is_retrans: false }
    }

    #[test]
    fn one_flight_measures_its_ack_phase() {
        // 10 segments sent 100 us apart from t = 1000 with nothing in flight before: each
        // stamp holds delivered = 0 and the send phase starts at 1000 (tcp_rate_skb_sent).
        // One ACK at t = 21000 covers all ten: the newest (sent at 1900) is the sample's
        // start; send phase 1900 - 1000 = 900 us, ACK phase 21000 - 1000 = 20000 us
        // (delivered_mstamp was set to the first send); interval = max = 20000 us,
        // delivered = 10 - 0 = 10.
        let (mut r, mut t) = (RateEstimator::default(), tcp());
        let stamps: Vec<_> = (0..10).map(|i| r.skb_sent(&mut t, i, i + 1, 1000 + 100 * i as u64)).collect();
        assert!(stamps.iter().all(|s| s.delivered == 0 && s.first_tx_mstamp_us == 1000));
        r.begin_ack();
        for (i, s) in stamps.iter().enumerate() {
            r.skb_delivered(delivered(*s, 1000 + 100 * i as u64, i as u32));
        }
        t.delivered += 10;
        let rs = r.gen(&mut t, 10, 0, 21_000, 10, 20_000);
        assert_eq!((rs.delivered, rs.interval_us, rs.prior_delivered), (10, 20_000, 0));
        assert_eq!((rs.acked_sacked, rs.rtt_us), (10, 20_000));
        assert_eq!(t.delivered_mstamp_us, 21_000);
    }

    #[test]
    fn the_send_phase_wins_when_acks_are_compressed() {
        // Segment A sent at 0 (stamp: delivered 0, send phase from 0); its ACK at 10000
        // makes A the newest delivered (first_tx_mstamp = 0) and delivered_mstamp = 10000.
        // B sent at 12000 while C (sent at 0 too) is still out: B's stamp is delivered 1,
        // delivered_mstamp 10000, send phase from 0. An ACK for B at 12500: send phase
        // 12000 - 0 = 12000 us beats the ACK phase 12500 - 10000 = 2500 us.
        let (mut r, mut t) = (RateEstimator::default(), tcp());
        let a = r.skb_sent(&mut t, 0, 1, 0);
        r.skb_sent(&mut t, 1, 2, 0);
        r.begin_ack();
        r.skb_delivered(delivered(a, 0, 0));
        t.delivered += 1;
        r.gen(&mut t, 1, 0, 10_000, 2, 10_000);
        let b = r.skb_sent(&mut t, 1, 2, 12_000);
        assert_eq!((b.delivered, b.delivered_mstamp_us, b.first_tx_mstamp_us), (1, 10_000, 0));
        r.begin_ack();
        r.skb_delivered(delivered(b, 12_000, 2));
        t.delivered += 1;
        let rs = r.gen(&mut t, 1, 0, 12_500, 2, 500);
        assert_eq!((rs.delivered, rs.interval_us), (1, 12_000));
    }

    #[test]
    fn bbr3_fields_come_from_the_newest_packets_stamp() {
        // google/bbr v3 tcp_rate.c: the stamp keeps tx.in_flight, tx.lost = tp->lost and
        // tx.delivered_ce; tcp_rate_gen gives lost = tp->lost - tx.lost and delivered_ce =
        // (tp->delivered_ce - tx.delivered_ce) & (2^20 - 1) of the newest packet delivered.
        // Two packets sent with lost 3 and delivered_ce 2^20 - 1 (the mask wraps), then lost
        // 5 and delivered_ce 2^20 + 4 at the ACK: lost 2, delivered_ce 5, in flight 2.
        let (mut r, mut t) = (RateEstimator::default(), tcp());
        t.lost = 3;
        t.delivered_ce = (1 << 20) - 1;
        let a = r.skb_sent(&mut t, 0, 1, 0);
        let b = r.skb_sent(&mut t, 1, 2, 10);
        assert_eq!((b.in_flight, b.lost, b.delivered_ce()), (2, 3, (1 << 20) - 1));
        r.begin_ack();
        r.skb_delivered(delivered(a, 0, 0));
        r.skb_delivered(delivered(b, 10, 1));
        t.delivered += 2;
        t.lost = 5;
        t.delivered_ce = (1 << 20) + 4;
        let rs = r.gen(&mut t, 2, 2, 20_000, 2, 19_990);
        assert_eq!((rs.tx_in_flight, rs.lost, rs.delivered_ce), (2, 2, 5));
        // An invalid sample carries none of them.
        r.begin_ack();
        let rs = r.gen(&mut t, 0, 1, 30_000, 2, -1);
        assert_eq!((rs.lost, rs.delivered_ce), (0, 0));
    }

    #[test]
    fn an_ack_delivering_nothing_is_invalid() {
        // tcp_rate_gen: no packet offered (rs->prior_mstamp == 0) gives delivered = -1 and
        // interval_us = -1; the losses still count.
        let (mut r, mut t) = (RateEstimator::default(), tcp());
        r.skb_sent(&mut t, 0, 1, 0);
        r.begin_ack();
        let rs = r.gen(&mut t, 0, 1, 5_000, 1, -1);
        assert_eq!((rs.delivered, rs.interval_us, rs.losses), (-1, -1, 1));
    }

    #[test]
    fn an_interval_below_min_rtt_is_invalid() {
        // tcp_rate_gen: interval_us < tcp_min_rtt gives interval -1 (delivered stays).
        let (mut r, mut t) = (RateEstimator::default(), TcpState { min_rtt_us: 30_000, ..TcpState::default() });
        let s = r.skb_sent(&mut t, 0, 1, 0);
        r.begin_ack();
        r.skb_delivered(delivered(s, 0, 0));
        t.delivered += 1;
        let rs = r.gen(&mut t, 1, 0, 20_000, 1, 20_000);
        assert_eq!((rs.delivered, rs.interval_us), (1, -1));
    }

    #[test]
    fn app_limited_until_the_bubble_is_delivered() {
        // tcp_rate_check_app_limited with delivered 5 and 3 in flight (cwnd 10, nothing
        // left to send): app_limited = 8. Packets sent now are stamped app-limited; the
        // mark clears once delivered passes 8 (after(9, 8)), not at 8.
        let mut t = TcpState { delivered: 5, cwnd: 10, ..tcp() };
        RateEstimator::check_app_limited(&mut t, 0, 3, 0, 0);
        assert_eq!(t.app_limited, 8);
        let mut r = RateEstimator::default();
        assert!(r.skb_sent(&mut t, 3, 4, 0).is_app_limited());
        t.delivered = 8;
        r.begin_ack();
        r.gen(&mut t, 3, 0, 1_000, 3, -1);
        assert_eq!(t.app_limited, 8);
        t.delivered = 9;
        r.begin_ack();
        r.gen(&mut t, 1, 0, 2_000, 1, -1);
        assert_eq!(t.app_limited, 0);
        // A fresh connection (nothing delivered, nothing in flight) is marked with 1.
        let mut fresh = TcpState { cwnd: 10, ..tcp() };
        RateEstimator::check_app_limited(&mut fresh, 0, 0, 0, 0);
        assert_eq!(fresh.app_limited, 1);
        // A full window is not application-limited.
        let mut full = TcpState { cwnd: 10, ..tcp() };
        RateEstimator::check_app_limited(&mut full, 0, 10, 0, 0);
        assert_eq!(full.app_limited, 0);
    }
}
