//! Retransmission timer: RFC 6298's estimator (SRTT and RTTVAR with gains 1/8 and 1/4) and
//! exponential backoff, with the timeout formed the way Linux forms it: Linux floors the
//! *variance term* at `rto_min` (200 ms), `rto = srtt + max(4 rttvar, rto_min)`
//! (`tcp_set_rto`, `rttvar_us = max(mdev_max_us, tcp_rto_min_us)`), not the sum as RFC 6298
//! Sec. 2.4 does. On long paths the difference matters: with the RFC's floor a queue that
//! builds up within one round (slow start, a new competitor) fires spurious timeouts.
//! Maximum 120 s.

pub const RTO_MIN_NS: u64 = 200_000_000;
pub const RTO_MAX_NS: u64 = 120_000_000_000;
/// RFC 6298 initial RTO (1 s).
pub const RTO_INIT_NS: u64 = 1_000_000_000;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt: u64,
    pub rttvar: u64,
    pub min_rto: u64,
    /// Exponent of the backoff after consecutive timeouts.
    pub backoff: u32,
}

impl RttEstimator {
    pub fn new(min_rto: u64) -> Self {
        Self { srtt: 0, rttvar: 0, min_rto, backoff: 0 }
    }

    /// A valid (Karn) sample: RFC 6298 Sec. 2.2-2.3, alpha 1/8, beta 1/4.
    pub fn sample(&mut self, r: u64) {
        if self.srtt == 0 {
            self.srtt = r;
            self.rttvar = r / 2;
        } else {
            let diff = self.srtt.abs_diff(r);
            self.rttvar = self.rttvar - self.rttvar / 4 + diff / 4;
            self.srtt = self.srtt - self.srtt / 8 + r / 8;
        }
        self.backoff = 0;
    }

    /// The current timeout, backed off.
    pub fn rto(&self) -> u64 {
        let base = if self.srtt == 0 { RTO_INIT_NS } else { self.srtt + (4 * self.rttvar).max(self.min_rto) };
        base.saturating_mul(1u64 << self.backoff.min(16)).min(RTO_MAX_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_and_floor() {
        // First sample R: SRTT = R, RTTVAR = R/2, 4 RTTVAR = 2R. For R = 40 ms, 2R = 80 ms is
        // floored at 200 ms: RTO = 240 ms. For R = 200 ms: 200 + 400 = 600 ms; backed off
        // twice, 2.4 s.
        let mut e = RttEstimator::new(RTO_MIN_NS);
        e.sample(40_000_000);
        assert_eq!(e.rto(), 240_000_000);
        let mut e = RttEstimator::new(RTO_MIN_NS);
        e.sample(200_000_000);
        assert_eq!(e.rto(), 600_000_000);
        e.backoff = 2;
        assert_eq!(e.rto(), 2_400_000_000);
    }

    #[test]
    fn steady_rtt_leaves_srtt_plus_the_floor() {
        // Constant samples drive RTTVAR to zero: RTO -> SRTT + 200 ms (Linux), where RFC 6298
        // would give max(SRTT, 200 ms).
        let mut e = RttEstimator::new(RTO_MIN_NS);
        for _ in 0..200 {
            e.sample(300_000_000);
        }
        assert!((e.rto() as i64 - 500_000_000).abs() < 1_000_000, "{}", e.rto());
    }
}
