//! PIE (RFC 8033) as Linux 6.18 runs it: `net/sched/sch_pie.c` with `include/net/pie.h`,
//! in its default mode (the queue delay from each departing packet's timestamp, not the
//! drain-rate estimator). Arrivals are dropped early with the probability `prob`, which a
//! timer updates every `tupdate` from the queue delay's distance to `target` and its change
//! since the update before; ECN-capable arrivals are marked instead while `prob` is at most
//! 10%.
//!
//! Linux's fixed-point arithmetic is kept, so that the same delays give the same
//! probabilities: times in psched ticks of 64 ns, the probability in units of
//! `MAX_PROB` = 2^56 - 1, every wrap the kernel relies on marked. The timer runs in path
//! time: first 500 ms after the start (`pie_init`'s `HZ / 2`), then every `tupdate`.
//! (`tupdate` is in jiffies in the kernel: 15 ms is 16 ms on a kernel with HZ = 250.)
//! The buffer's limit is the qdisc's `limit` (Linux's default: 1000 packets); the MTU is a
//! full packet on the wire.

use super::{Buffer, Discipline, Fifo, Table, Verdict};
use crate::rng::Rng;
use crate::{PathPacket, Time};

/// `psched_time_t`: ns >> 6.
const PSCHED_SHIFT: u32 = 6;
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;
/// The probability 1: `U64_MAX >> BITS_PER_BYTE`.
const MAX_PROB: u64 = u64::MAX >> 8;
/// `pie_init` arms the first update half a second (`HZ / 2`) after the start.
const FIRST_UPDATE_NS: Time = 500_000_000;
/// `pie_vars_init`'s burst allowance: 150 ms without early drops.
const BURST_TICKS: u64 = 150_000_000 >> PSCHED_SHIFT;
/// Above this delay the probability grows by 2% more per update (`pie_calculate_probability`).
const HIGH_DELAY_TICKS: u64 = 250_000_000 >> PSCHED_SHIFT;
/// tc's range of alpha and beta, in 1/16 Hz (`pie_calculate_probability`: "0-32").
const GAIN_MAX: u32 = 32;

fn ticks(t: Time) -> u64 {
    t >> PSCHED_SHIFT
}

/// PIE's settings (file: `[bottleneck.pie]`). Defaults: Linux's `pie_params_init`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PieSpec {
    /// The queue delay aimed at, ns (file: "15ms").
    #[serde(rename = "target")]
    pub target_ns: u64,
    /// Time between probability updates, ns (file: "15ms").
    #[serde(rename = "tupdate")]
    pub tupdate_ns: u64,
    /// The integral gain, in tc's units of 1/16 Hz: 2 is RFC 8033's 0.125. 0 to 32.
    pub alpha: u32,
    /// The proportional gain, in 1/16 Hz: 20 is RFC 8033's 1.25. 0 to 32.
    pub beta: u32,
    /// Mark ECN-capable packets instead of dropping them while the probability is at most 10%.
    pub ecn: bool,
    /// Scale the probability by the packet's share of an MTU.
    pub bytemode: bool,
}

impl Default for PieSpec {
    fn default() -> Self {
        Self { target_ns: 15_000_000, tupdate_ns: 15_000_000, alpha: 2, beta: 20, ecn: false, bytemode: false }
    }
}

impl Table for PieSpec {
    fn validate(&self, at: &str) -> Result<(), String> {
        for (key, value) in self.times() {
            if value == 0 {
                return Err(format!("{at}.{key} is 0; it must be > 0"));
            }
        }
        for (key, value) in [("alpha", self.alpha), ("beta", self.beta)] {
            if value > GAIN_MAX {
                return Err(format!("{at}.{key} is {value}; allowed: 0 to {GAIN_MAX} (units of 1/16 Hz, as tc's)"));
            }
        }
        Ok(())
    }

    fn times(&self) -> Vec<(&'static str, Time)> {
        vec![("target", self.target_ns), ("tupdate", self.tupdate_ns)]
    }
}

pub struct Pie {
    spec: PieSpec,
    /// `params->target`, ticks.
    target: u64,
    /// `psched_mtu`: a full packet on the wire, bytes.
    mtu: u64,
    /// The delay of the last packet to leave (0 if it left the queue empty), ticks.
    qdelay: u64,
    /// `qdelay` at the update before, ticks.
    qdelay_old: u64,
    /// Burst allowance left, ticks.
    burst_time: u64,
    /// When the last packet left, ticks (`DTIME_INVALID`: none since the vars' reset).
    dq_tstamp: Option<u64>,
    /// The drop probability, in units of `MAX_PROB`.
    prob: u64,
    /// The probabilities summed since the last drop (the de-randomization).
    accu_prob: u64,
    /// When the timer's next update is due.
    next_update: Time,
    rng: Rng,
}

impl Pie {
    /// `pie_vars_init`: a new burst allowance and measurement cycle.
    fn reset_vars(&mut self) {
        self.burst_time = BURST_TICKS;
        self.dq_tstamp = None;
        self.accu_prob = 0;
    }

    /// `pie_drop_early`: whether an arrival of `size` bytes to `backlog` bytes is dropped
    /// (or marked). Draws only when the accumulated probability leaves it open.
    fn drop_early(&mut self, backlog: u64, size: u64) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < self.target / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * self.mtu {
            return false;
        }
        let local_prob =
            if self.spec.bytemode && size <= self.mtu { size.wrapping_mul(self.prob / self.mtu) } else { self.prob };
        if local_prob == 0 {
            self.accu_prob = 0;
        } else {
            // Wraps as the kernel's u64 would; it cannot reach 2^64 before a drop resets it.
            self.accu_prob = self.accu_prob.wrapping_add(local_prob);
        }
        if self.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if self.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (self.rng.next_u64() >> 8) < local_prob {
            self.accu_prob = 0;
            return true;
        }
        false
    }

    /// `pie_calculate_probability`, the timer's update, with `backlog` bytes waiting.
    fn update(&mut self, backlog: u64) {
        let (qdelay, qdelay_old) = (self.qdelay, self.qdelay_old);
        // A queue that holds packets but had no delay yet is too small to judge.
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let mut alpha = (self.spec.alpha as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut beta = (self.spec.beta as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        // RFC 8033 Sec. 4.2's auto-tuning: below 10% the gains are halved, and quartered
        // again per decade below 1%, down to 1/2048 below 0.0001%.
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100u64;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // The delay differences are u64 in the kernel: a negative one wraps, and so does its
        // product, which read as s64 is the signed product.
        let mut delta = alpha.wrapping_mul(qdelay.wrapping_sub(self.target)) as i64;
        delta = delta.wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old)) as i64);
        let oldprob = self.prob;
        // Above 10%, a step up is at most 2%.
        if delta > (MAX_PROB / (100 / 2)) as i64 && self.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        if qdelay > HIGH_DELAY_TICKS {
            delta += (MAX_PROB / (100 / 2)) as i64;
        }
        // u64 plus s64, wrapping as in C; the wrap is caught below.
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        // No delay for two updates: decay to 63/64.
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        if qdelay < self.target / 2 && qdelay_old < self.target / 2 && self.prob == 0 {
            self.reset_vars();
        }
        self.qdelay_old = qdelay;
    }
}

impl Discipline for Pie {
    type Settings = PieSpec;

    fn new(spec: &PieSpec, b: &Buffer) -> Self {
        let mut pie = Self {
            spec: *spec,
            target: ticks(spec.target_ns),
            mtu: b.wire_bytes as u64,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: None,
            prob: 0,
            accu_prob: 0,
            next_update: FIRST_UPDATE_NS,
            rng: b.rng.clone(),
        };
        pie.reset_vars();
        pie
    }

    fn catch_up<P: PathPacket>(&mut self, now: Time, fifo: &Fifo<P>) {
        while self.next_update <= now {
            self.update(fifo.len_bytes());
            self.next_update += self.spec.tupdate_ns;
        }
    }

    /// `pie_qdisc_enqueue`.
    fn arrive<P: PathPacket>(&mut self, _: Time, p: &P, fifo: &Fifo<P>, full: bool) -> Verdict {
        if full {
            self.accu_prob = 0;
            return Verdict::Drop;
        }
        if !self.drop_early(fifo.len_bytes(), p.wire_bytes() as u64) {
            Verdict::Pass
        } else if self.spec.ecn && self.prob <= MAX_PROB / 10 && p.ecn_capable() {
            Verdict::Mark
        } else {
            self.accu_prob = 0;
            Verdict::Drop
        }
    }

    /// `pie_process_dequeue` without the rate estimator: the packet's delay, and the time
    /// since the last departure taken off the burst allowance.
    fn depart<P: PathPacket>(&mut self, now: Time, _: &P, sojourn: Time, fifo: &Fifo<P>) -> Verdict {
        let now_ticks = ticks(now);
        self.qdelay = now_ticks - ticks(now - sojourn);
        let dtime = self.dq_tstamp.map_or(0, |t| now_ticks - t);
        self.dq_tstamp = Some(now_ticks);
        if fifo.is_empty() {
            self.qdelay = 0;
        }
        if dtime > 0 {
            self.burst_time = self.burst_time.saturating_sub(dtime);
        }
        Verdict::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Limit, Policy, Queue, QueueDiscipline, QueueSettings, Single};
    use crate::test_packet::{ect, pkt, Pkt};

    /// 1 tick = 64 ns: a delay in ms as ticks.
    fn ms(x: f64) -> u64 {
        ticks((x * 1e6) as Time)
    }

    fn fresh(spec: PieSpec) -> Pie {
        let b = Buffer { limit: Limit::Packets(1000), wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(3, 7) };
        Pie::new(&spec, &b)
    }

    /// The probability as a fraction.
    fn p(pie: &Pie) -> f64 {
        pie.prob as f64 / MAX_PROB as f64
    }

    /// One update from probability `from` with delays `qdelay` now and `old` at the update
    /// before (ms), a full queue; the probability after it.
    fn step(from: f64, qdelay: f64, old: f64) -> f64 {
        let mut pie = fresh(PieSpec::default());
        (pie.prob, pie.qdelay, pie.qdelay_old) = ((from * MAX_PROB as f64) as u64, ms(qdelay), ms(old));
        pie.update(100 * 1500);
        p(&pie)
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-4 * want.abs() + 1e-12, "got {got:e}, want {want:e}");
    }

    #[test]
    fn the_update_follows_rfc_8033_with_linux_gains_and_scaling() {
        // RFC 8033 Sec. 4.2: p += alpha (qdelay - target) + beta (qdelay - qdelay_old), with
        // Linux's alpha = 2/16 = 0.125 Hz and beta = 20/16 = 1.25 Hz, target 15 ms, both
        // scaled by 1/2 below p = 10% and by 1/4 more per decade below 1% (1/2048 below
        // 0.0001%, the kernel's `power` loop).
        let (a, b) = (0.125, 1.25);
        // From 0, 20 ms both times: 0.125 / 2048 x 5 ms.
        close(step(0.0, 20.0, 20.0), a / 2048.0 * 0.005);
        // From 5% (scale 1/2): 25 ms after 20 ms.
        close(step(0.05, 25.0, 20.0) - 0.05, a / 2.0 * 0.010 + b / 2.0 * 0.005);
        // From 0.5% (1/8) and from 0.05% (1/32), 30 ms after 30 ms.
        close(step(0.005, 30.0, 30.0) - 0.005, a / 8.0 * 0.015);
        close(step(0.0005, 30.0, 30.0) - 0.0005, a / 32.0 * 0.015);
        // From 20% (unscaled), 10 ms after 12 ms: both terms pull down.
        close(step(0.2, 10.0, 12.0) - 0.2, a * -0.005 + b * -0.002);
        // From 20%, 100 ms after 20 ms: 0.125 x 85 ms + 1.25 x 80 ms = 11% is capped to 2%.
        close(step(0.2, 100.0, 20.0) - 0.2, 0.02);
        // Above 250 ms 2% more: 300 ms steady from 20% is 0.125 x 285 ms = 3.6%, capped to
        // 2%, plus 2%.
        close(step(0.2, 300.0, 300.0) - 0.2, 0.04);
        // Below 0 it stops at 0; at 1 at 1.
        // Below 0 it stops at 0. Above 1 it does not stop: the kernel catches only a wrap
        // of its u64, so 99.9% + 4% is 103.9%, every arrival past the checks dropped.
        assert_eq!(step(0.001, 0.0, 14.0), 0.0);
        close(step(0.999, 300.0, 0.0), 1.039);
    }

    #[test]
    fn no_delay_twice_decays_by_one_64th_and_ends_the_cycle() {
        // An empty queue (backlog 0, qdelay 0 twice) from 20%: first the controller's
        // 0.125 x (0 - 15 ms) = -0.1875%, then x 63/64.
        let mut pie = fresh(PieSpec::default());
        (pie.prob, pie.burst_time) = ((0.2 * MAX_PROB as f64) as u64, 0);
        pie.update(0);
        close(p(&pie), (0.2 - 0.125 * 0.015) * 63.0 / 64.0);
        // Once the probability is 0 and the delay low, the vars are reset: a new burst
        // allowance.
        pie.prob = 1;
        pie.update(0);
        assert_eq!((pie.prob, pie.burst_time), (0, BURST_TICKS));
        // A queue with packets but no delay yet leaves the decay out.
        let mut pie = fresh(PieSpec::default());
        pie.prob = (0.2 * MAX_PROB as f64) as u64;
        pie.update(3000);
        close(p(&pie), 0.2 - 0.125 * 0.015);
    }

    /// A PIE queue at probability `prob` (units of `MAX_PROB`) past its burst allowance,
    /// holding 3 full packets that waited `target`, with the timer stopped.
    fn held(spec: PieSpec, prob: u64) -> Queue<Pkt> {
        let b = Buffer { limit: Limit::Packets(1000), wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(5, 1) };
        let mut pie = Pie::new(&spec, &b);
        (pie.prob, pie.qdelay, pie.burst_time, pie.next_update) =
            (prob, pie.target, 0, Time::MAX);
        let mut fifo = Fifo::default();
        for _ in 0..3 {
            fifo.push(0, pkt(1500));
        }
        Queue { policy: Policy::Pie(Single { fifo, limit: b.limit, discipline: pie }) }
    }

    #[test]
    fn drops_are_derandomized_as_linux_does() {
        // At p = 10%: the accumulated probability n p stays below 0.85 for 8 arrivals after a
        // drop, so none of them is dropped; from the 9th each is dropped with probability p
        // (and surely once n p reaches 8.5). The gaps are 8 + a geometric count of mean 1/p:
        // 18 arrivals between drops, a drop rate of 1/18 = 5.56% rather than 10%.
        let mut q = held(PieSpec::default(), MAX_PROB / 10);
        let (mut drops, mut since, mut min_gap, n) = (0u32, 0u32, u32::MAX, 200_000);
        for _ in 0..n {
            since += 1;
            if q.enqueue(0, pkt(1500)) == Verdict::Drop {
                drops += 1;
                min_gap = min_gap.min(since);
                since = 0;
            } else {
                let Policy::Pie(single) = &mut q.policy else { unreachable!() };
                single.fifo.pop();
            }
        }
        assert_eq!(min_gap, 9);
        let rate = drops as f64 / n as f64;
        assert!((rate - 1.0 / 18.0).abs() < 0.03 / 18.0, "drop rate {rate}");
    }

    #[test]
    fn ecn_marks_up_to_10_percent_then_drops() {
        // With ecn, an ECT arrival PIE would drop is marked while p <= 10%; a Not-ECT one is
        // dropped; above 10% both are dropped. At p = 10% the 9th arrival (accumulated 0.9)
        // has the first chance, the 85th (8.5) a sure one: 200 arrivals see some.
        let ecn = PieSpec { ecn: true, ..PieSpec::default() };
        let verdicts = |spec, prob, p: fn(u32) -> Pkt| {
            let mut q = held(spec, prob);
            let v: Vec<Verdict> = (0..200).map(|_| q.enqueue(0, p(1500))).collect();
            (v.contains(&Verdict::Mark), v.contains(&Verdict::Drop))
        };
        assert_eq!(verdicts(ecn, MAX_PROB / 10, ect), (true, false));
        assert_eq!(verdicts(ecn, MAX_PROB / 10, pkt), (false, true));
        assert_eq!(verdicts(ecn, MAX_PROB / 10 + 1, ect), (false, true));
        assert_eq!(verdicts(PieSpec::default(), MAX_PROB / 10, ect), (false, true));
    }

    #[test]
    fn the_burst_allowance_holds_off_drops_for_150ms_of_departures() {
        // At p = 1 (each arrival dropped once the accumulated 1 passes 0.85: the draw is
        // below 1 always) a fresh allowance of 150 ms is spent by the time between departures
        // (1 ms each here, counted from the first): the arrivals up to 150 ms after the first
        // departure pass, the next one is dropped.
        let mut q = held(PieSpec::default(), MAX_PROB);
        let Policy::Pie(single) = &mut q.policy else { unreachable!() };
        single.discipline.burst_time = BURST_TICKS;
        let mut first_drop = None;
        for t_ms in 1..300u64 {
            let t = t_ms * 1_000_000;
            q.dequeue(t, |_| unreachable!());
            if q.enqueue(t, pkt(1500)) == Verdict::Drop {
                first_drop.get_or_insert(t_ms);
            } else {
                q.enqueue(t, pkt(1500));
            }
        }
        // The first departure (1 ms) starts the clock; 1 ms is 15625 ticks exactly.
        assert_eq!(first_drop, Some(151));
    }

    #[test]
    fn the_timer_starts_at_half_a_second_then_runs_every_tupdate() {
        // A 1 ms-per-packet link fed 2 packets per ms: the delay grows 0.5 ms per ms. PIE
        // updates first at 500 ms (none before, whatever the delay), then every 15 ms.
        let settings = QueueSettings::default();
        let b = Buffer { limit: Limit::Packets(1000), wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(1, 1) };
        let mut q: Queue<Pkt> = Queue::new(QueueDiscipline::Pie, &settings, b);
        let mut first_drop = None;
        let mut probs = Vec::new();
        for t_ms in 0..600u64 {
            let t = t_ms * 1_000_000;
            for _ in 0..2 {
                if q.enqueue(t, pkt(1500)) == Verdict::Drop && first_drop.is_none() {
                    first_drop = Some(t_ms);
                }
            }
            q.dequeue(t, |_| panic!("PIE drops at arrival only"));
            let Policy::Pie(single) = &q.policy else { unreachable!() };
            probs.push(single.discipline.prob);
        }
        assert!(probs[..500].iter().all(|&p| p == 0) && probs[500] > 0, "first update not at 500 ms");
        // Updates at 500, 515, 530 ms only: constant in between.
        let changes: Vec<usize> = (501..600).filter(|&i| probs[i] != probs[i - 1]).collect();
        assert_eq!(changes, vec![515, 530, 545, 560, 575, 590]);
        assert!(first_drop.is_some_and(|t| t > 500), "dropped at {first_drop:?}");
    }

    #[test]
    fn out_of_range_settings_are_refused_naming_the_key() {
        let bad = PieSpec { beta: 33, ..PieSpec::default() };
        assert_eq!(
            bad.validate("bottleneck.pie").unwrap_err(),
            "bottleneck.pie.beta is 33; allowed: 0 to 32 (units of 1/16 Hz, as tc's)"
        );
        let bad = PieSpec { tupdate_ns: 0, ..PieSpec::default() };
        assert_eq!(bad.validate("bottleneck.pie").unwrap_err(), "bottleneck.pie.tupdate is 0; it must be > 0");
        assert!(PieSpec::default().validate("bottleneck.pie").is_ok());
    }
}
