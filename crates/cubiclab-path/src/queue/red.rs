//! RED (Floyd and Jacobson, 1993) with "gentle" mode (Floyd, 2000), counting the average
//! queue in packets. On each arrival the average moves toward the instantaneous queue with
//! weight `w_q` (decayed over idle time as if small packets had left, as the paper does);
//! the marking probability ramps from 0 at `min_th` to `max_p` at `max_th` (then, gentle,
//! to 1 at 2 `max_th`), and the count since the last drop spreads drops uniformly:
//! p_a = p_b / (1 - count p_b). The buffer's hard limit still applies.

use super::{Buffer, Discipline, Fifo, Table, Verdict};
use crate::rng::Rng;
use crate::{PathPacket, Time};

/// RED's settings (thresholds in packets). Defaults: Floyd's recommended 5 / 15 packets,
/// max_p 0.1, w_q 0.002, gentle.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RedSpec {
    /// Average queue (packets) where marking starts.
    pub min_th: f64,
    /// Average queue (packets) where the probability reaches max_p.
    pub max_th: f64,
    /// Drop probability at max_th, in (0, 1].
    pub max_p: f64,
    /// Weight of the average, in (0, 1].
    pub w_q: f64,
    /// Ramp from max_p to 1 between max_th and 2 max_th instead of dropping all.
    pub gentle: bool,
}

impl Default for RedSpec {
    fn default() -> Self {
        Self { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true }
    }
}

impl Table for RedSpec {
    fn validate(&self, field: &str) -> Result<(), String> {
        if !(self.min_th >= 0.0 && self.min_th < self.max_th && self.max_th.is_finite()) {
            return Err(format!("{field}: min_th ({}) must be >= 0 and below max_th ({})", self.min_th, self.max_th));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("{field}.max_p is {}; allowed: (0, 1]", self.max_p));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("{field}.w_q is {}; allowed: (0, 1]", self.w_q));
        }
        Ok(())
    }
}

impl RedSpec {
    /// The drop probability p_b for an average queue `avg` (packets).
    pub fn ramp(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }
}

pub struct Red {
    spec: RedSpec,
    pub avg: f64,
    count: i64,
    idle_since: Option<Time>,
    /// Serialization time of a typical packet, ns (for the idle-time decay).
    pkt_time: f64,
    rng: Rng,
}

impl Discipline for Red {
    type Settings = RedSpec;

    fn new(spec: &RedSpec, b: &Buffer) -> Self {
        let pkt_time_ns = b.wire_bytes as f64 * 8e9 / b.rate_bps as f64;
        Self { spec: *spec, avg: 0.0, count: -1, idle_since: Some(0), pkt_time: pkt_time_ns.max(1.0), rng: b.rng.clone() }
    }

    fn arrive<P: PathPacket>(&mut self, now: Time, _: &P, fifo: &Fifo<P>, full: bool) -> Verdict {
        let q = fifo.len_packets() as f64;
        match self.idle_since.take() {
            Some(t) => {
                let m = (now.saturating_sub(t)) as f64 / self.pkt_time;
                self.avg *= (1.0 - self.spec.w_q).powf(m);
            }
            None => self.avg += self.spec.w_q * (q - self.avg),
        }
        let pb = self.spec.ramp(self.avg);
        let drop = if pb <= 0.0 {
            self.count = -1;
            false
        } else if pb >= 1.0 {
            self.count = 0;
            true
        } else {
            self.count += 1;
            let pa = pb / (1.0 - (self.count as f64 * pb)).max(pb);
            if self.rng.uniform() < pa {
                self.count = 0;
                true
            } else {
                false
            }
        };
        if (drop || full) && fifo.is_empty() {
            self.idle_since = Some(now);
        }
        if drop {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    }

    fn depart<P: PathPacket>(&mut self, now: Time, _: &P, _: Time, fifo: &Fifo<P>) -> Verdict {
        if fifo.is_empty() {
            self.idle_since = Some(now);
        }
        Verdict::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Limit, Policy, Queue};
    use crate::test_packet::{self, Pkt};

    fn pkt() -> Pkt {
        test_packet::pkt(1500)
    }

    #[test]
    fn measured_drop_rate_follows_the_ramp() {
        // Hold the instantaneous queue at q packets (one dequeue per accepted arrival) so
        // that avg stays at q. The n-th arrival after a drop is dropped with probability
        // p_a(n) = p_b / (1 - n p_b) (capped at 1), so the gap X between drops has
        // P(X = n) = p_a(n) prod_{k<n} (1 - p_a(k)) and the drop fraction is 1 / E[X]
        // (for small p_b about 2 p_b / (1 + p_b), Floyd and Jacobson Sec. 7).
        let spec = RedSpec { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true };
        for q in [8usize, 12, 20] {
            // 1500-byte packets at 12 Gbit/s take 1000 ns each (the unit of the idle decay).
            let b = Buffer { limit: Limit::Packets(1000), wire_bytes: 1500, rate_bps: 12_000_000_000, rng: Rng::new(1, q as u64) };
            let mut red = Red::new(&spec, &b);
            red.avg = q as f64;
            red.idle_since = None;
            let mut queue = Queue { fifo: Fifo::default(), l4s: Fifo::default(), limit: b.limit, policy: Policy::Red(red) };
            for _ in 0..q {
                queue.fifo.push(0, pkt());
            }
            let (mut drops, n) = (0u32, 200_000);
            for i in 0..n {
                if queue.enqueue(i, pkt()) == Verdict::Drop {
                    drops += 1;
                } else {
                    queue.dequeue(i, |_| unreachable!("RED drops only arrivals"));
                }
            }
            let pb = spec.ramp(q as f64);
            let (mut survive, mut mean_gap, mut k) = (1.0, 0.0, 1.0);
            while survive > 1e-12 {
                let pa = if 1.0 - k * pb <= 0.0 { 1.0 } else { (pb / (1.0 - k * pb)).min(1.0) };
                mean_gap += k * survive * pa;
                survive *= 1.0 - pa;
                k += 1.0;
            }
            let expect = 1.0 / mean_gap;
            let got = drops as f64 / n as f64;
            assert!((got - expect).abs() < 0.06 * expect + 0.002, "q {q}: pb {pb:.3} expect {expect:.4} got {got:.4}");
        }
    }

    #[test]
    fn ramp_shape() {
        // min 5, max 15, max_p 0.1: 0 below 5, 0.05 at 10, 0.1 at 15, gentle 0.55 at 22.5, 1 at 30.
        let s = RedSpec { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true };
        assert_eq!(s.ramp(4.0), 0.0);
        assert!((s.ramp(10.0) - 0.05).abs() < 1e-12);
        assert!((s.ramp(22.5) - 0.55).abs() < 1e-12);
        assert_eq!(s.ramp(30.0), 1.0);
        assert!(RedSpec { min_th: 20.0, ..s }.validate("bottleneck.red").unwrap_err().contains("min_th"));
    }
}
