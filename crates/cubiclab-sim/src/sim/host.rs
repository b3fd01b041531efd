//! The hosts' timing noise (`[host] jitter = "testbed"`): what makes kernel runs of one
//! scenario differ, drawn from the run's seed.
//!
//! A simulated host handles a packet the instant it arrives, so a run is one trajectory of
//! its seed: seeds that only move the flows' start times by a few ms leave most metrics
//! where they were. A real host does not: on the testbed each packet the emulator delivers
//! is handled some tens to hundreds of microseconds later (the emulator's wake-up lateness,
//! the receiving kernel's softirq and socket work, the sender's ACK processing and its
//! transmit path back into the emulator), a little differently each time, and the runs of
//! one scenario part ways.
//!
//! The model: every packet that leaves the last delay line of its route (data reaching its
//! receiver, an ACK reaching its sender) is handled after a delay drawn independently per
//! packet from that side's distribution, and a host's packets are handled in the order they
//! arrived (a packet never overtakes the one before it on its delay line: the line's exit
//! times only grow). The distributions are the testbed's, measured per packet with
//! `scripts/host_timing.py` (the emulator's io.csv and the sender's `tcp_probe` rows: from
//! the time the emulator was due to deliver a packet to the time the host's answer entered
//! the emulated path) and kept here as quantile tables, linearly interpolated between their
//! points; docs/agreement/README.md has the runs they come from.
//!
//! A kernel run also has a turnaround of its own: with the machine's load, all of a run's
//! delays sit a little earlier or later than another run's, and where a flow's ACK clock
//! lands its segments in the bottleneck's slots ((RTT + both turnarounds) mod a packet's
//! transmission time) moves with it from run to run (docs/agreement/README.md, e05 and
//! e10). Per-packet draws average that out, so the model adds a per-run part: each side's
//! delays in a run are shifted by one amount drawn once from the run's seed (normal, mean
//! 0, the sides correlated as measured), never below the table's fastest delay.
//!
//! Nothing here runs with the model off (the default): runs stay bit-identical to the
//! simulator without it.

use cubiclab_path::Rng;

use crate::engine::Time;
use crate::scenario::{HostJitter, STREAM_HOST};

/// The per-run shifts' own random stream, beside the per-packet draws' (`STREAM_HOST`):
/// the per-packet draws of a seed are the same with and without them.
const STREAM_RUN: u64 = STREAM_HOST + 1;

/// Which host a packet reaches at the end of its route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    /// Data at its receiver: the delay until the receiver's ACK leaves.
    Receiver,
    /// An ACK at its sender: the delay until the data it releases leaves.
    Sender,
}

/// Cumulative probabilities of the tables' points.
const P: [f64; 12] = [0.0, 0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 0.999, 1.0];
/// How long a host had been idle (since the packet before this one reached it) separates
/// its delays into classes: under 50 us it is still at work on the last packet; from 1 ms
/// on its CPU has halted and wakes for this one (this lab's VMs do not poll when idle:
/// `haltpoll.guest_halt_poll_ns=0`), some 40 us more. The class bounds, ns.
const IDLE_NS: [Time; 2] = [50_000, 1_000_000];
/// Per side and idle class, the delay (us) at each probability of `P`: all packets of
/// single CUBIC flows at 10, 50, 100 and 400 Mbit/s (a01, a03, a04, a05; 10 s each, Linux
/// 6.18), by class.
const RECEIVER_US: [[f64; 12]; 3] = [
    [2.1, 6.2, 11.0, 14.9, 23.2, 32.9, 41.9, 53.3, 66.0, 87.8, 130.2, 428.9],
    [6.3, 29.9, 43.7, 50.5, 57.2, 64.5, 74.6, 93.9, 108.3, 159.7, 254.2, 1086.4],
    [47.9, 67.9, 86.4, 90.6, 97.0, 103.4, 129.9, 150.7, 163.8, 327.6, 606.1, 1189.9],
];
const SENDER_US: [[f64; 12]; 3] = [
    [5.9, 10.1, 17.3, 22.7, 32.1, 46.8, 62.7, 81.7, 107.0, 178.6, 637.3, 1238.3],
    [5.8, 14.9, 27.6, 33.9, 43.1, 58.3, 77.0, 100.6, 118.0, 179.1, 593.1, 2187.6],
    [14.8, 70.1, 86.7, 90.5, 95.5, 100.9, 107.7, 121.6, 143.7, 263.3, 595.0, 1125.9],
];

/// The per-run part, measured over ten kernel runs of one scenario (e10: one CUBIC flow,
/// 20 Mbit/s, 40 ms; 15 s each, 12 000 delays a side per run) with
/// `scripts/host_timing.py --dir` (docs/agreement/README.md, "The hosts' per-run
/// turnaround"): per side, the standard deviation (us) of a run's mean delay about the
/// mean over runs, less the share the per-packet spread gives a mean of that many delays
/// (receiver 8.9, sender 12.3; within a run 45.6 and 95.5), by [`Side`]; and the
/// correlation of the two sides' run means (0.96: one machine's state moves both).
const RUN_SD_US: [f64; 2] = [8.9, 12.3];
const RUN_CORRELATION: f64 = 0.96;

impl Side {
    /// The delays of a packet reaching this side's host after it was idle `idle` ns.
    fn table(self, idle: Time) -> &'static [f64; 12] {
        let class = IDLE_NS.partition_point(|&bound| bound <= idle);
        match self {
            Side::Receiver => &RECEIVER_US[class],
            Side::Sender => &SENDER_US[class],
        }
    }
}

/// The run's host timing draws (one random stream for the per-packet draws) and its
/// per-run shifts.
pub(super) struct HostTiming {
    rng: Rng,
    /// This run's shift of every delay, ns, by [`Side`].
    run_shift: [i64; 2],
}

impl HostTiming {
    /// The model of `jitter` for a run seeded with `seed`; `None` when it is off.
    pub(super) fn new(jitter: HostJitter, seed: u64) -> Option<Self> {
        match jitter {
            HostJitter::Off => None,
            HostJitter::Testbed => Some(Self { rng: Rng::new(seed, STREAM_HOST), run_shift: run_shifts(seed) }),
        }
    }

    /// A packet reaching `side` after its host was idle `idle` ns: how long the host takes
    /// to handle it.
    #[inline]
    pub(super) fn delay(&mut self, side: Side, idle: Time) -> Time {
        let table = side.table(idle);
        let shifted = quantile(table, self.rng.uniform()) as i64 + self.run_shift[side as usize];
        shifted.max((table[0] * 1000.0) as i64) as Time
    }
}

/// A run's shifts (ns, by [`Side`]): two standard normal draws from the run's own stream
/// (Box-Muller), the sender's correlated with the receiver's by `RUN_CORRELATION`.
fn run_shifts(seed: u64) -> [i64; 2] {
    let mut rng = Rng::new(seed, STREAM_RUN);
    // 1 - u lies in (0, 1]: its logarithm is finite.
    let r = (-2.0 * (1.0 - rng.uniform()).ln()).sqrt();
    let angle = std::f64::consts::TAU * rng.uniform();
    let (z0, z1) = (r * angle.cos(), r * angle.sin());
    let z_sender = RUN_CORRELATION * z0 + (1.0 - RUN_CORRELATION * RUN_CORRELATION).sqrt() * z1;
    [RUN_SD_US[0] * z0, RUN_SD_US[1] * z_sender].map(|us| (us * 1000.0).round() as i64)
}

/// The table's delay at probability `u` in [0, 1), ns: linear between its points.
fn quantile(us: &[f64; 12], u: f64) -> Time {
    let i = P.partition_point(|&p| p <= u).clamp(1, P.len() - 1);
    let f = (u - P[i - 1]) / (P[i] - P[i - 1]);
    ((us[i - 1] + f * (us[i] - us[i - 1])) * 1000.0) as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_table() {
        // At the points: the table's values; halfway between p = 0.5 and 0.75 (u = 0.625):
        // the mean of the two delays, (67.3 + 96.7) / 2 = 82.0 us.
        let t = &RECEIVER_US[2];
        assert_eq!(quantile(t, 0.0), 47_900);
        assert_eq!(quantile(t, 0.5), 103_400);
        assert_eq!(quantile(t, 0.625), ((103.4 + 129.9) / 2.0 * 1000.0) as Time);
        assert!(quantile(t, 1.0 - f64::EPSILON) <= 1_189_900);
        // Every table rises, so the draws do.
        for t in RECEIVER_US.iter().chain(&SENDER_US) {
            assert!(t.windows(2).all(|w| w[0] <= w[1]));
        }
        // Idle under 50 us, under 1 ms, longer: the three classes.
        assert_eq!(Side::Receiver.table(49_999), &RECEIVER_US[0]);
        assert_eq!(Side::Receiver.table(50_000), &RECEIVER_US[1]);
        assert_eq!(Side::Sender.table(1_000_000), &SENDER_US[2]);
    }

    #[test]
    fn draws_have_the_tables_median_and_come_from_the_seed() {
        // 20 000 draws: the sample median's standard error in probability is
        // 0.5 / sqrt(20 000) = 0.0035, so it lies between the table's p45 and p55 (14 of them away),
        // both moved by the run's shift (p45 lies far above the table's fastest delay).
        let mut h = HostTiming::new(HostJitter::Testbed, 7).expect("on");
        let mut d: Vec<Time> = (0..20_000).map(|_| h.delay(Side::Receiver, 2_000_000)).collect();
        d.sort_unstable();
        let median = d[d.len() / 2] as i64 - h.run_shift[Side::Receiver as usize];
        let t = &RECEIVER_US[2];
        assert!((quantile(t, 0.45) as i64..=quantile(t, 0.55) as i64).contains(&median), "{median}");
        let draws = |seed| {
            let mut h = HostTiming::new(HostJitter::Testbed, seed).expect("on");
            (0..100).map(|_| h.delay(Side::Sender, 0)).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        assert!(HostTiming::new(HostJitter::Off, 7).is_none());
    }

    const SEED_1_SHIFTS: [i64; 2] = [-3_484, -10_665];

    #[test]
    fn a_run_shifts_every_delay_of_a_side_by_one_amount() {
        // The same seed's per-packet draws without the run's shifts (its own stream: they
        // are the old model's), then each moved by the side's shift, never below the
        // table's fastest delay.
        for seed in 1..=50 {
            let mut on = HostTiming::new(HostJitter::Testbed, seed).expect("on");
            let mut plain = HostTiming { rng: Rng::new(seed, STREAM_HOST), run_shift: [0, 0] };
            assert_eq!(on.run_shift, run_shifts(seed));
            for k in 0..300 {
                let (side, idle) = if k % 2 == 0 { (Side::Receiver, 600_000) } else { (Side::Sender, 20_000) };
                let floor = (side.table(idle)[0] * 1000.0) as i64;
                let moved = plain.delay(side, idle) as i64 + on.run_shift[side as usize];
                assert_eq!(on.delay(side, idle) as i64, moved.max(floor));
            }
        }
        assert_ne!(run_shifts(7), run_shifts(8));
        // Seed 1 (a scenario's default), whose shifts tests/test_host_timing.py adds to the
        // round trip: both below the mean, the sender's further (ns).
        assert_eq!(run_shifts(1), SEED_1_SHIFTS);
    }

    #[test]
    fn run_shifts_have_the_measured_spread_and_correlation() {
        // Over n = 40 000 seeds: the mean of a normal with sd s lies within 4 standard
        // errors (4 s / sqrt(n) = 0.02 s) of 0, the sample sd within 4 x s / sqrt(2n)
        // (= 0.014 s) of s, and the correlation within 4 x (1 - r^2) / sqrt(n) (<= 0.02) of r.
        let n = 40_000;
        let shifts: Vec<[f64; 2]> = (0..n).map(|seed| run_shifts(seed).map(|ns| ns as f64 / 1000.0)).collect();
        let mean = |i: usize| shifts.iter().map(|s| s[i]).sum::<f64>() / n as f64;
        let (m0, m1) = (mean(0), mean(1));
        let cov = |i: usize, j: usize| {
            shifts.iter().map(|s| (s[i] - [m0, m1][i]) * (s[j] - [m0, m1][j])).sum::<f64>() / n as f64
        };
        for (i, m) in [m0, m1].into_iter().enumerate() {
            let sd = RUN_SD_US[i];
            assert!(m.abs() <= 0.02 * sd + 0.001, "side {i}: mean {m}");
            assert!((cov(i, i).sqrt() - sd).abs() <= 0.014 * sd + 0.001, "side {i}: sd {}", cov(i, i).sqrt());
        }
        let r = cov(0, 1) / (cov(0, 0) * cov(1, 1)).sqrt();
        assert!((r - RUN_CORRELATION).abs() <= 0.02, "correlation {r}");
    }
}
