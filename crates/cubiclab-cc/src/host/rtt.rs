//! The retransmission timer's estimator as Linux 6.x computes it (`net/ipv4/tcp_input.c`
//! `tcp_rtt_estimator`, `tcp_set_rto`; `tcp_timer.c` `tcp_retransmit_timer` for backoff).
//!
//! Not RFC 6298's: the variance `mdev` rises with gain 1/4 but falls with gain 1/32 when
//! the RTT drops (Linux's take on Eifel), its maximum over a round (`mdev_max`, floored at
//! `rto_min`) is what the timeout uses, and `rttvar` decays toward that maximum by a quarter
//! of the gap once per round. So `rto = srtt + rttvar >= srtt + rto_min`. The timeout is
//! then rounded up to whole jiffies (`usecs_to_jiffies`), so the tick of the kernel matters.

use crate::seq::after;

/// Linux `TCP_RTO_MIN` (HZ / 5): 200 ms.
pub const TCP_RTO_MIN_US: u64 = 200_000;
/// Linux `TCP_RTO_MAX`: 120 s.
pub const TCP_RTO_MAX_US: u64 = 120_000_000;
/// Linux `TCP_TIMEOUT_INIT`: 1 s before the first RTT sample (RFC 6298).
pub const TCP_TIMEOUT_INIT_US: u64 = 1_000_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    /// `srtt_us`: smoothed RTT in microseconds, scaled by 8 as Linux stores it (0: none).
    srtt_us8: u64,
    /// `mdev_us`: mean deviation, microseconds.
    mdev_us: u64,
    /// `mdev_max_us`: largest `mdev` of the current round, at least `rto_min`.
    mdev_max_us: u64,
    /// `rttvar_us`: the variance term the timeout uses.
    rttvar_us: u64,
    /// `rtt_seq`: the round ends when `snd_una` passes it.
    rtt_seq: u32,
    /// `icsk_rto`: the current timeout, microseconds (whole jiffies), backoff included.
    rto_us: u64,
    /// `icsk_backoff`: timeouts since the last valid RTT sample.
    pub backoff: u32,
    rto_min_us: u64,
    jiffy_us: u64,
}

impl RttEstimator {
    pub fn new(rto_min_us: u64, jiffy_us: u64) -> Self {
        Self {
            srtt_us8: 0,
            mdev_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            rto_us: TCP_TIMEOUT_INIT_US,
            backoff: 0,
            rto_min_us,
            jiffy_us: jiffy_us.max(1),
        }
    }

    /// Smoothed RTT in microseconds (`srtt_us >> 3`), 0 before the first sample.
    #[inline]
    pub fn srtt_us(&self) -> u64 {
        self.srtt_us8 >> 3
    }

    /// The current retransmission timeout (`icsk_rto`), microseconds.
    #[inline]
    pub fn rto_us(&self) -> u64 {
        self.rto_us
    }

    /// `tcp_ack_update_rtt` with a valid sample `m_us` (Karn: from a segment never
    /// retransmitted) on an ACK that leaves `snd_una`, with `snd_nxt` the next to send:
    /// `tcp_rtt_estimator`, `tcp_set_rto`, and the backoff cleared (RFC 6298 5.7).
    #[inline]
    pub fn sample(&mut self, m_us: u64, snd_una: u32, snd_nxt: u32) {
        let m = m_us as i64;
        if self.srtt_us8 != 0 {
            let mut err = m - (self.srtt_us8 >> 3) as i64;
            self.srtt_us8 = (self.srtt_us8 as i64 + err) as u64;
            let mdev = self.mdev_us as i64;
            if err < 0 {
                // A falling RTT moves mdev with gain 1/32 (1/4 of 1/8), so the timeout
                // neither jumps up nor collapses after a drop.
                err = -err - (mdev >> 2);
                if err > 0 {
                    err >>= 3;
                }
            } else {
                err -= mdev >> 2;
            }
            self.mdev_us = (mdev + err) as u64;
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                self.rttvar_us = self.rttvar_us.max(self.mdev_max_us);
            }
            if after(snd_una, self.rtt_seq) {
                // A round ended: rttvar decays a quarter of the way to this round's maximum.
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.rto_min_us;
            }
        } else {
            // First sample: rto = 3 rtt (mdev = 2 rtt), but the variance term at least rto_min.
            self.srtt_us8 = (m_us << 3).max(8);
            self.mdev_us = m_us << 1;
            self.rttvar_us = self.mdev_us.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        self.srtt_us8 = self.srtt_us8.max(1);
        // tcp_set_rto: usecs_to_jiffies rounds up; tcp_bound_rto caps it.
        let rto = self.srtt_us() + self.rttvar_us;
        self.rto_us = (rto.div_ceil(self.jiffy_us) * self.jiffy_us).min(TCP_RTO_MAX_US);
        self.backoff = 0;
    }

    /// `tcp_retransmit_timer`: the timeout doubles, up to `TCP_RTO_MAX`.
    pub fn back_off(&mut self) {
        self.backoff += 1;
        self.rto_us = (self.rto_us << 1).min(TCP_RTO_MAX_US);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One sample per round: `snd_una` passes `rtt_seq` on every sample.
    fn rounds(e: &mut RttEstimator, rtt_us: u64, n: u32, seq: &mut u32) {
        for _ in 0..n {
            *seq += 10;
            e.sample(rtt_us, *seq, *seq + 10);
        }
    }

    #[test]
    fn first_sample_gives_three_rtts_or_rtt_plus_rto_min() {
        // tcp_rtt_estimator, no previous measure: mdev = 2 m, rttvar = max(2 m, 200 ms).
        // m = 40 ms: rttvar = 200 ms, rto = 240 ms. m = 300 ms: rttvar = 600, rto = 900 ms.
        let mut e = RttEstimator::new(TCP_RTO_MIN_US, 1000);
        e.sample(40_000, 0, 10);
        assert_eq!(e.rto_us(), 240_000);
        let mut e = RttEstimator::new(TCP_RTO_MIN_US, 1000);
        e.sample(300_000, 0, 10);
        assert_eq!(e.rto_us(), 900_000);
        // tcp_retransmit_timer doubles it; a valid sample clears the backoff.
        e.back_off();
        e.back_off();
        assert_eq!((e.rto_us(), e.backoff), (3_600_000, 2));
    }

    #[test]
    fn rto_after_a_drop_from_300_to_100_ms_is_390_ms() {
        // Steady 300 ms: mdev -> 0, each round's mdev_max = rto_min, rttvar -> 200 ms,
        // rto -> 500 ms (500.003: integer decay leaves mdev at 3 us; 501 ms in whole
        // milliseconds, 504 in 4 ms jiffies). Then six rounds at 100 ms: srtt = 100 + 200 (7/8)^6 = 189.9 ms;
        // mdev rises only by 1/32 of the error (first step (200 - 0)/8 = 25 ms) and never
        // exceeds the 200 ms floor, so rttvar stays 200: rto = 189.9 + 200 = 389.9 ms,
        // 390 ms in whole milliseconds (HZ 1000) and 392 ms in 4 ms jiffies (HZ 250).
        // RFC 6298's estimator (rttvar gain 1/4 both ways) gives 623 ms after the same six.
        for (jiffy, steady, want) in [(1000, 501_000, 390_000), (4_000, 504_000, 392_000)] {
            let mut e = RttEstimator::new(TCP_RTO_MIN_US, jiffy);
            let mut seq = 0;
            rounds(&mut e, 300_000, 200, &mut seq);
            assert_eq!(e.rto_us(), steady);
            rounds(&mut e, 100_000, 6, &mut seq);
            assert_eq!(e.rto_us(), want);
        }
    }

    #[test]
    fn rto_after_a_rise_from_100_to_300_ms_is_615_ms() {
        // Steady 100 ms: rto = 100 + 200 = 300 ms (mdev decays by a quarter per sample and
        // stops at 3 us, where mdev >> 2 = 0). Then one 300 ms sample per round, in ms:
        //   1: err 200,   srtt 125,     mdev = 0 + 200 - 0         = 200,   rto 325 (+3 us -> 326)
        //   2: err 175,   srtt 146.875, mdev = 200 + 175 - 50      = 325,   rto 471.9 -> 472
        //   3: err 153.1, srtt 166.0,   mdev = 325 + 153.1 - 81.25 = 396.9, rto 562.9 -> 563
        //   4: err 134.0, srtt 182.8,   mdev = 396.9 + 134 - 99.2  = 431.6, rto 614.4 -> 615
        // rttvar follows each new mdev_max at once on a rise, so Linux is not slower than
        // RFC 6298 here (614 ms after the same four samples).
        let mut e = RttEstimator::new(TCP_RTO_MIN_US, 1000);
        let mut seq = 0;
        rounds(&mut e, 100_000, 200, &mut seq);
        assert_eq!(e.rto_us(), 300_000);
        let got: Vec<u64> = (0..4)
            .map(|_| {
                rounds(&mut e, 300_000, 1, &mut seq);
                e.rto_us() / 1000
            })
            .collect();
        assert_eq!(got, [326, 472, 563, 615]);
    }
}
