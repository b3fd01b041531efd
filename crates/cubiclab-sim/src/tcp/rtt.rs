//! Retransmission timer per RFC 6298, with Linux's 200 ms minimum and 120 s maximum, and
//! exponential backoff.

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
        let base =
            if self.srtt == 0 { RTO_INIT_NS } else { (self.srtt + (4 * self.rttvar).max(1_000_000)).max(self.min_rto) };
        base.saturating_mul(1u64 << self.backoff.min(16)).min(RTO_MAX_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_and_floor() {
        // First sample R: SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 = 3R; for R = 40 ms that
        // is 120 ms, raised to the 200 ms floor. For R = 100 ms: 300 ms.
        let mut e = RttEstimator::new(RTO_MIN_NS);
        e.sample(40_000_000);
        assert_eq!(e.rto(), 200_000_000);
        let mut e = RttEstimator::new(RTO_MIN_NS);
        e.sample(100_000_000);
        assert_eq!(e.rto(), 300_000_000);
        e.backoff = 2;
        assert_eq!(e.rto(), 1_200_000_000);
    }
}
