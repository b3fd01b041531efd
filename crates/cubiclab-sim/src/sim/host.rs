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
//! Nothing here runs with the model off (the default): runs stay bit-identical to the
//! simulator without it.

use cubiclab_path::Rng;

use crate::engine::Time;
use crate::scenario::{HostJitter, STREAM_HOST};

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

/// The run's host timing draws (one random stream for the whole run).
pub(super) struct HostTiming {
    rng: Rng,
}

impl HostTiming {
    /// The model of `jitter` for a run seeded with `seed`; `None` when it is off.
    pub(super) fn new(jitter: HostJitter, seed: u64) -> Option<Self> {
        match jitter {
            HostJitter::Off => None,
            HostJitter::Testbed => Some(Self { rng: Rng::new(seed, STREAM_HOST) }),
        }
    }

    /// A packet reaching `side` after its host was idle `idle` ns: how long the host takes
    /// to handle it.
    #[inline]
    pub(super) fn delay(&mut self, side: Side, idle: Time) -> Time {
        quantile(side.table(idle), self.rng.uniform())
    }
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
        // 0.5 / sqrt(20 000) = 0.0035, so it lies between the table's p45 and p55 (14 of them away).
        let mut h = HostTiming::new(HostJitter::Testbed, 7).expect("on");
        let mut d: Vec<Time> = (0..20_000).map(|_| h.delay(Side::Receiver, 2_000_000)).collect();
        d.sort_unstable();
        let median = d[d.len() / 2];
        let t = &RECEIVER_US[2];
        assert!((quantile(t, 0.45)..=quantile(t, 0.55)).contains(&median), "{median}");
        let draws = |seed| {
            let mut h = HostTiming::new(HostJitter::Testbed, seed).expect("on");
            (0..100).map(|_| h.delay(Side::Sender, 0)).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        assert!(HostTiming::new(HostJitter::Off, 7).is_none());
    }
}
