//! RED (Floyd and Jacobson, 1993) with "gentle" mode (Floyd, 2000), counting the average
//! queue in packets. On each arrival the average moves toward the instantaneous queue with
//! weight `w_q` (decayed over idle time as if small packets had left, as the paper does);
//! the marking probability ramps from 0 at `min_th` to `max_p` at `max_th` (then, gentle,
//! to 1 at 2 `max_th`), and the count since the last drop spreads drops uniformly:
//! p_a = p_b / (1 - count p_b). The buffer's hard limit still applies.
//!
//! With `ecn`, a decision to drop an ECN-capable packet marks it instead, as Linux's
//! sch_red does (net/sched/sch_red.c `red_enqueue`, Linux 6.18): `RED_PROB_MARK` marks an
//! ECT or CE packet (`INET_ECN_set_ce` succeeds) and drops a Not-ECT one; `RED_HARD_MARK`
//! (here: a probability of 1, above max_th, or 2 max_th when gentle) does the same, unless
//! `harddrop` (`TC_RED_HARDDROP`) drops every packet there. With `nodrop` (`TC_RED_NODROP`,
//! Linux 5.7 on, only with `ecn`: `red_validate_flags`), a Not-ECT packet that either
//! decision would drop is queued instead, unmarked; `harddrop` still drops first.

use super::{Buffer, Discipline, Fifo, Table, Verdict};
use crate::rng::Rng;
use crate::{PathPacket, Time};

/// RED's settings (thresholds in packets). Defaults: Floyd's recommended 5 / 15 packets,
/// max_p 0.1, w_q 0.002, gentle; no ECN, as `tc qdisc add ... red` without `ecn`.
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
    /// Mark ECN-capable packets instead of dropping them (`tc ... red ecn`).
    pub ecn: bool,
    /// With `ecn`: still drop every packet where the probability is 1 (`tc ... red harddrop`).
    pub harddrop: bool,
    /// With `ecn`: queue a Not-ECT packet RED decided to signal to instead of dropping it
    /// (`tc ... red ecn nodrop`). Default off.
    pub nodrop: bool,
}

impl Default for RedSpec {
    fn default() -> Self {
        Self { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true, ecn: false, harddrop: false, nodrop: false }
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
        if self.nodrop && !self.ecn {
            // red_validate_flags: "nodrop mode is only meaningful with ECN".
            return Err(format!("{field}.nodrop is true; allowed: true only with {field}.ecn = true"));
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

impl Red {
    /// The verdict on `p` that RED decided to signal to (`red_enqueue`): a drop without ECN
    /// or if `hard` (harddrop above the ramp); else a mark if `p` can take one; else, with
    /// `nodrop`, queued as it is; else a drop.
    fn mark_or_drop<P: PathPacket>(&self, p: &P, hard: bool) -> Verdict {
        if !self.spec.ecn || hard {
            Verdict::Drop
        } else if p.ecn_capable() {
            Verdict::Mark
        } else if self.spec.nodrop {
            Verdict::Pass
        } else {
            Verdict::Drop
        }
    }
}

impl Discipline for Red {
    type Settings = RedSpec;

    fn new(spec: &RedSpec, b: &Buffer) -> Self {
        let pkt_time_ns = b.wire_bytes as f64 * 8e9 / b.rate_bps as f64;
        Self { spec: *spec, avg: 0.0, count: -1, idle_since: Some(0), pkt_time: pkt_time_ns.max(1.0), rng: b.rng.clone() }
    }

    fn arrive<P: PathPacket>(&mut self, now: Time, p: &P, fifo: &Fifo<P>, full: bool) -> Verdict {
        let q = fifo.len_packets() as f64;
        match self.idle_since.take() {
            Some(t) => {
                let m = (now.saturating_sub(t)) as f64 / self.pkt_time;
                self.avg *= (1.0 - self.spec.w_q).powf(m);
            }
            None => self.avg += self.spec.w_q * (q - self.avg),
        }
        let pb = self.spec.ramp(self.avg);
        let verdict = if pb <= 0.0 {
            self.count = -1;
            Verdict::Pass
        } else if pb >= 1.0 {
            // RED_HARD_MARK.
            self.count = 0;
            self.mark_or_drop(p, self.spec.harddrop)
        } else {
            self.count += 1;
            let pa = pb / (1.0 - (self.count as f64 * pb)).max(pb);
            if self.rng.uniform() < pa {
                // RED_PROB_MARK.
                self.count = 0;
                self.mark_or_drop(p, false)
            } else {
                Verdict::Pass
            }
        };
        if (verdict == Verdict::Drop || full) && fifo.is_empty() {
            self.idle_since = Some(now);
        }
        verdict
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
    use crate::queue::{Limit, Policy, Queue, Single};
    use crate::test_packet::{self, Pkt};

    fn pkt() -> Pkt {
        test_packet::pkt(1500)
    }

    fn ect() -> Pkt {
        test_packet::ect(1500)
    }

    /// A RED queue whose average and instantaneous queue are both `q` packets.
    fn held_at(spec: RedSpec, q: usize, seed: u64) -> Queue<Pkt> {
        // 1500-byte packets at 12 Gbit/s take 1000 ns each (the unit of the idle decay).
        let b = Buffer { limit: Limit::Packets(1000), wire_bytes: 1500, rate_bps: 12_000_000_000, rng: Rng::new(1, seed) };
        let mut red = Red::new(&spec, &b);
        red.avg = q as f64;
        red.idle_since = None;
        let mut fifo = Fifo::default();
        for _ in 0..q {
            fifo.push(0, pkt());
        }
        Queue { policy: Policy::Red(Single { fifo, limit: b.limit, discipline: red }) }
    }

    /// The verdicts on `n` arrivals of `p` to `queue`, each accepted one followed by a
    /// departure (so the queue stays where it is).
    fn verdicts(queue: &mut Queue<Pkt>, p: Pkt, n: u64) -> Vec<Verdict> {
        (0..n)
            .map(|i| {
                let v = queue.enqueue(i, p);
                if v != Verdict::Drop {
                    queue.dequeue(i, |_| unreachable!("RED drops only arrivals"));
                }
                v
            })
            .collect()
    }

    #[test]
    fn measured_drop_rate_follows_the_ramp() {
        // Hold the instantaneous queue at q packets (one dequeue per accepted arrival) so
        // that avg stays at q. The n-th arrival after a drop is dropped with probability
        // p_a(n) = p_b / (1 - n p_b) (capped at 1), so the gap X between drops has
        // P(X = n) = p_a(n) prod_{k<n} (1 - p_a(k)) and the drop fraction is 1 / E[X]
        // (for small p_b about 2 p_b / (1 + p_b), Floyd and Jacobson Sec. 7).
        let spec = RedSpec { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true, ..RedSpec::default() };
        for q in [8usize, 12, 20] {
            let n = 200_000;
            let drops = verdicts(&mut held_at(spec, q, q as u64), pkt(), n).iter().filter(|&&v| v == Verdict::Drop).count();
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
        let s = RedSpec { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true, ..RedSpec::default() };
        assert_eq!(s.ramp(4.0), 0.0);
        assert!((s.ramp(10.0) - 0.05).abs() < 1e-12);
        assert!((s.ramp(22.5) - 0.55).abs() < 1e-12);
        assert_eq!(s.ramp(30.0), 1.0);
        assert!(RedSpec { min_th: 20.0, ..s }.validate("bottleneck.red").unwrap_err().contains("min_th"));
    }

    #[test]
    fn with_ecn_the_drops_of_ect_packets_become_marks() {
        // sch_red's RED_PROB_MARK with `ecn`: INET_ECN_set_ce marks an ECT packet where RED
        // without ECN drops it; the decision (the average, the count, the random draw) is the
        // same, and a marked packet is queued, so with one departure per accepted arrival the
        // queue, hence every later decision, stays the same too. Not-ECT packets are still
        // dropped. Queue held at 12: p_b = 0.1 (12 - 5) / 10 = 0.07, about 13% of arrivals.
        let plain = RedSpec::default();
        let ecn = RedSpec { ecn: true, ..plain };
        let n = 20_000;
        let dropped = verdicts(&mut held_at(plain, 12, 7), ect(), n);
        let marked = verdicts(&mut held_at(ecn, 12, 7), ect(), n);
        let to_mark = |v: &Verdict| if *v == Verdict::Drop { Verdict::Mark } else { *v };
        assert_eq!(marked, dropped.iter().map(to_mark).collect::<Vec<_>>());
        let signals = marked.iter().filter(|&&v| v == Verdict::Mark).count() as f64 / n as f64;
        assert!((0.08..0.2).contains(&signals), "{signals}");
        assert_eq!(verdicts(&mut held_at(ecn, 12, 7), pkt(), n), dropped);
    }

    #[test]
    fn above_the_ramp_ect_packets_are_marked_unless_harddrop() {
        // Gentle, max_th 15: the probability is 1 from an average of 30 (RED_HARD_MARK). With
        // `ecn` sch_red marks an ECT packet there and drops a Not-ECT one; with `harddrop` it
        // drops both.
        let ecn = RedSpec { ecn: true, ..RedSpec::default() };
        assert_eq!(ecn.ramp(30.0), 1.0);
        assert_eq!(verdicts(&mut held_at(ecn, 30, 0), ect(), 3), vec![Verdict::Mark; 3]);
        assert_eq!(verdicts(&mut held_at(ecn, 30, 0), pkt(), 3), vec![Verdict::Drop; 3]);
        let hard = RedSpec { harddrop: true, ..ecn };
        assert_eq!(verdicts(&mut held_at(hard, 30, 0), ect(), 3), vec![Verdict::Drop; 3]);
        // A marked packet carries CE when it leaves.
        let mut q = held_at(ecn, 30, 0);
        q.enqueue(0, ect());
        let sent: Vec<bool> = std::iter::from_fn(|| q.dequeue(0, |_| unreachable!()).map(|(p, _)| p.ce)).collect();
        assert_eq!(sent.last(), Some(&true));
    }

    #[test]
    fn with_nodrop_packets_that_cannot_be_marked_are_queued_instead_of_dropped() {
        // red_enqueue with `ecn nodrop`: where INET_ECN_set_ce fails (Not-ECT) the packet is
        // enqueued, unmarked, on both RED_PROB_MARK and RED_HARD_MARK; ECT packets are marked
        // as without nodrop. The decisions themselves (count reset, random draws) are those
        // of plain RED, so at a held queue of 12 (p_b 0.07) the same arrivals are signalled
        // to: with nodrop none is dropped and no packet is marked.
        let ecn = RedSpec { ecn: true, ..RedSpec::default() };
        let nodrop = RedSpec { nodrop: true, ..ecn };
        let n = 20_000;
        assert_eq!(verdicts(&mut held_at(nodrop, 12, 7), pkt(), n), vec![Verdict::Pass; n as usize]);
        assert_eq!(verdicts(&mut held_at(nodrop, 12, 7), ect(), n), verdicts(&mut held_at(ecn, 12, 7), ect(), n));
        assert!(verdicts(&mut held_at(ecn, 12, 7), pkt(), n).contains(&Verdict::Drop));
        // Above the ramp (RED_HARD_MARK): Not-ECT queued, ECT marked; a Not-ECT packet
        // queued under nodrop leaves without CE.
        assert_eq!(verdicts(&mut held_at(nodrop, 30, 0), pkt(), 3), vec![Verdict::Pass; 3]);
        assert_eq!(verdicts(&mut held_at(nodrop, 30, 0), ect(), 3), vec![Verdict::Mark; 3]);
        let mut q = held_at(nodrop, 30, 0);
        q.enqueue(0, pkt());
        let sent: Vec<bool> = std::iter::from_fn(|| q.dequeue(0, |_| unreachable!()).map(|(p, _)| p.ce)).collect();
        assert_eq!(sent.last(), Some(&false));
        // harddrop is tested first: above the ramp it drops both kinds, nodrop or not.
        let hard = RedSpec { harddrop: true, ..nodrop };
        assert_eq!(verdicts(&mut held_at(hard, 30, 0), pkt(), 3), vec![Verdict::Drop; 3]);
        assert_eq!(verdicts(&mut held_at(hard, 30, 0), ect(), 3), vec![Verdict::Drop; 3]);
        // Below it harddrop does not apply: nodrop queues the Not-ECT packets.
        assert_eq!(verdicts(&mut held_at(hard, 12, 7), pkt(), n), vec![Verdict::Pass; n as usize]);
    }

    #[test]
    fn nodrop_without_ecn_is_refused() {
        // red_validate_flags refuses TC_RED_NODROP without TC_RED_ECN.
        let spec = RedSpec { nodrop: true, ..RedSpec::default() };
        assert_eq!(
            spec.validate("bottleneck.red").unwrap_err(),
            "bottleneck.red.nodrop is true; allowed: true only with bottleneck.red.ecn = true"
        );
        assert!(RedSpec { ecn: true, ..spec }.validate("bottleneck.red").is_ok());
    }
}
