//! Step marking, DCTCP's switch (Alizadeh et al., SIGCOMM 2010, Sec. 3.1; RFC 8257
//! Sec. 3.1): an ECN-capable packet arriving to a queue of more than K (packets or bytes,
//! the instantaneous queue, not an average) is marked CE.
//!
//! A Not-ECT packet above K passes unmarked and is dropped only by the buffer's limit: the
//! step marker is an ECN threshold, not an AQM. DCTCP's switches drop nothing below their
//! buffer (the paper's Sec. 3.1: "packets are marked ... if the queue occupancy is greater
//! than K"; a switch configured as Linux's RED with min = max = K and probability 1, the
//! usual emulation, would drop Not-ECT packets there instead, which is RED's rule, not
//! DCTCP's).

use super::{Buffer, Discipline, Fifo, Limit, Table, Verdict};
use crate::{PathPacket, Time};

/// The step marker's settings (file: `[bottleneck.step] threshold = "20packets"` or a size).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StepSpec {
    /// K: an ECT arrival finding more than this waiting is marked. Default 20 packets, the
    /// paper's K for 1 Gbit/s (Sec. 3.4: K > C x RTT / 7; 65 packets at 10 Gbit/s).
    pub threshold: Limit,
}

impl Default for StepSpec {
    fn default() -> Self {
        Self { threshold: Limit::Packets(20) }
    }
}

impl Table for StepSpec {
    fn validate(&self, at: &str) -> Result<(), String> {
        match self.threshold {
            Limit::Packets(0) | Limit::Bytes(0) => {
                Err(format!("{at}.threshold is 0; allowed: at least 1 packet or 1 byte"))
            }
            _ => Ok(()),
        }
    }
}

pub struct Step {
    threshold: Limit,
}

impl Discipline for Step {
    type Settings = StepSpec;

    fn new(spec: &StepSpec, _: &Buffer) -> Self {
        Step { threshold: spec.threshold }
    }

    #[inline]
    fn arrive<P: PathPacket>(&mut self, _: Time, p: &P, fifo: &Fifo<P>, _: bool) -> Verdict {
        let above = match self.threshold {
            Limit::Packets(k) => fifo.len_packets() > k as usize,
            Limit::Bytes(k) => fifo.len_bytes() > k,
        };
        if above && p.ecn_capable() {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Queue, QueueDiscipline, QueueSettings};
    use crate::rng::Rng;
    use crate::test_packet::{ect, pkt, Pkt};

    fn step(threshold: Limit, limit: Limit) -> Queue<Pkt> {
        let buffer = Buffer { limit, wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(0, 0) };
        let settings = QueueSettings { step: StepSpec { threshold }, ..Default::default() };
        Queue::new(QueueDiscipline::Step, &settings, buffer)
    }

    #[test]
    fn ect_arrivals_above_k_packets_are_marked_others_pass_until_the_limit() {
        // K = 2, limit 5: arrivals 1-3 find 0, 1, 2 waiting (not more than K): pass. The
        // 4th finds 3 > 2: an ECT one is marked, a Not-ECT one passes (no drop below the
        // limit). With 5 waiting the limit drops whatever the threshold says.
        let mut q = step(Limit::Packets(2), Limit::Packets(5));
        let first: Vec<_> = [ect(1500), ect(1500), ect(1500)].map(|p| q.enqueue(0, p)).into();
        assert_eq!(first, vec![Verdict::Pass; 3]);
        assert_eq!((q.enqueue(0, ect(1500)), q.enqueue(0, pkt(1500))), (Verdict::Mark, Verdict::Pass));
        assert_eq!((q.enqueue(0, ect(1500)), q.enqueue(0, pkt(1500))), (Verdict::Drop, Verdict::Drop));
        // Only the 4th carries CE; departures never change a packet.
        let sent: Vec<bool> = std::iter::from_fn(|| q.dequeue(10_000_000, |_| panic!("no drop"))).map(|(p, _)| p.ce).collect();
        assert_eq!(sent, vec![false, false, false, true, false]);
    }

    #[test]
    fn a_byte_threshold_counts_the_bytes_waiting() {
        // K = 3000 bytes: two 1500-byte packets (3000, not more) let an ECT arrival pass; a
        // 64-byte ACK more (3064) makes the next one marked.
        let mut q = step(Limit::Bytes(3000), Limit::Packets(100));
        assert_eq!([pkt(1500), pkt(1500), ect(1500)].map(|p| q.enqueue(0, p)), [Verdict::Pass; 3]);
        let mut q = step(Limit::Bytes(3000), Limit::Packets(100));
        assert_eq!([pkt(1500), pkt(1500), pkt(64)].map(|p| q.enqueue(0, p)), [Verdict::Pass; 3]);
        assert_eq!(q.enqueue(0, ect(1500)), Verdict::Mark);
    }

    #[test]
    fn the_default_is_20_packets_and_zero_is_refused() {
        assert_eq!(StepSpec::default().threshold, Limit::Packets(20));
        let zero = StepSpec { threshold: Limit::Bytes(0) };
        assert_eq!(zero.validate("bottleneck.step").unwrap_err(), "bottleneck.step.threshold is 0; allowed: at least 1 packet or 1 byte");
        assert!(StepSpec::default().validate("bottleneck.step").is_ok());
    }
}
