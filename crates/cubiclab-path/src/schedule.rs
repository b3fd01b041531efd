//! A bottleneck whose rate varies in time, without input or output: when a packet that
//! starts serializing at a given time is done, and how many bytes the link could carry up
//! to a given time. The simulator and the emulator ask the same questions of the same
//! schedule, so a variable link is the same link in both.
//!
//! Two forms:
//! - rate steps: piecewise-constant rates from given times on, optionally repeating with a
//!   period (a rate of 0 is an outage);
//! - a Mahimahi trace: one delivery opportunity per line, in milliseconds from the start;
//!   each opportunity carries one packet of up to [`OPPORTUNITY_BYTES`], and the trace
//!   repeats with the period of its last line, as Mahimahi's link shell does. (Mahimahi
//!   also packs several small packets into one opportunity; here a packet takes whole
//!   opportunities, which only a direction of small packets, the ACKs', would notice.)
//!
//! Both answer in O(log n) from immutable tables built once: nothing per packet allocates.

pub mod trace;

use std::path::Path;
use std::sync::Arc;

use crate::Time;
pub use trace::Trace;

/// Bytes one Mahimahi delivery opportunity carries (its MTU).
pub const OPPORTUNITY_BYTES: u64 = 1500;
const NS_PER_S: u128 = 1_000_000_000;

/// What a scenario gives: checked by [`RateSchedule::new`]. (As JSON, as the testbed hands
/// it to the emulator: `{"steps": {"steps": [[ns, bps], ...], "repeat_ns": null}}` or
/// `{"trace": {"file": "/path/to.trace", "digest": "..."}}`.)
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum ScheduleSpec {
    /// (from time ns, rate bits/s), the first at 0, times strictly increasing; with
    /// `repeat_ns` the whole list repeats with that period (longer than the last time).
    Steps { steps: Vec<(Time, u64)>, repeat_ns: Option<Time> },
    /// A Mahimahi trace file (see [`trace`]) and the digest of its opportunities when it was
    /// first read ([`Trace::digest`]): a file that changed since is refused.
    Trace { file: String, digest: String },
}

#[derive(Clone, Debug)]
pub enum RateSchedule {
    Steps {
        starts: Vec<Time>,
        rates: Vec<u64>,
        /// Bits·ns/1e9 carried before each step's start (prefix integral of the rate).
        carried: Vec<u128>,
        /// Period and the bits·1e9 one period carries; `None`: the last rate holds forever.
        repeat: Option<(Time, u128)>,
    },
    Trace {
        trace: Arc<Trace>,
        period: Time,
    },
}

impl RateSchedule {
    /// Check `spec`; the error says what is wrong (the caller prefixes the key).
    pub fn new(spec: &ScheduleSpec) -> Result<Self, String> {
        match spec {
            ScheduleSpec::Steps { steps, repeat_ns } => {
                if steps.first().map(|s| s.0) != Some(0) {
                    return Err("the first step must start at 0 s".into());
                }
                if steps.windows(2).any(|w| w[1].0 <= w[0].0) {
                    return Err("step times must increase strictly".into());
                }
                let last = steps.last().expect("checked non-empty").0;
                if repeat_ns.is_some_and(|p| p <= last) {
                    return Err("repeat must be longer than the last step's time".into());
                }
                let (starts, rates): (Vec<Time>, Vec<u64>) = steps.iter().copied().unzip();
                if rates.iter().all(|&r| r == 0) {
                    return Err("at least one step needs a rate above 0".into());
                }
                if repeat_ns.is_none() && *rates.last().expect("non-empty") == 0 {
                    return Err("without repeat, the last rate holds forever and must be above 0".into());
                }
                let mut carried = vec![0u128];
                for i in 1..starts.len() {
                    carried.push(carried[i - 1] + rates[i - 1] as u128 * (starts[i] - starts[i - 1]) as u128);
                }
                let repeat = repeat_ns.map(|p| {
                    let n = starts.len() - 1;
                    (p, carried[n] + rates[n] as u128 * (p - starts[n]) as u128)
                });
                Ok(RateSchedule::Steps { starts, rates, carried, repeat })
            }
            ScheduleSpec::Trace { file, digest } => {
                let trace = trace::load(Path::new(file), trace::open(Path::new(file))?, u64::MAX, &mut |_| true)
                    .map_err(|e| format!("'{file}' {e}"))?;
                if trace.digest() != *digest {
                    return Err(format!(
                        "'{file}' changed since the scenario was compiled (digest {}, expected {digest}); compile it again",
                        trace.digest()
                    ));
                }
                Ok(Self::trace(trace))
            }
        }
    }

    /// A read trace's schedule.
    pub fn trace(trace: Arc<Trace>) -> Self {
        let period = trace.period_ms() * 1_000_000;
        RateSchedule::Trace { trace, period }
    }

    /// The highest rate it offers, bits/s: its highest step, or a trace's densest
    /// millisecond (each opportunity carries [`OPPORTUNITY_BYTES`]).
    pub fn peak_bps(&self) -> u64 {
        match self {
            RateSchedule::Steps { rates, .. } => rates.iter().copied().max().unwrap_or(0),
            RateSchedule::Trace { trace, .. } => trace.peak_per_ms() as u64 * OPPORTUNITY_BYTES * 8 * 1000,
        }
    }

    /// Bytes its tables hold (a trace's runs; steps are few).
    pub fn heap_bytes(&self) -> u64 {
        match self {
            RateSchedule::Steps { starts, .. } => starts.len() as u64 * (8 + 8 + 16),
            RateSchedule::Trace { trace, .. } => trace.heap_bytes(),
        }
    }

    /// When a packet of `bytes` that starts serializing at `start` is done.
    pub fn finish(&self, start: Time, bytes: u32) -> Time {
        match self {
            RateSchedule::Steps { .. } => {
                let need = self.carried_until(start) + bytes as u128 * 8 * NS_PER_S;
                self.time_carrying(need)
            }
            RateSchedule::Trace { trace, period } => {
                // The opportunities strictly after `start` (those at a time up to it are
                // gone): the packet takes the next ceil(bytes / 1500) of them.
                let n = trace.opportunities();
                let first = (start / period) * n + trace.count_through(start % period / 1_000_000);
                let last = first + (bytes as u64).div_ceil(OPPORTUNITY_BYTES).max(1) - 1;
                (last / n) * period + trace.ms_of(last % n) * 1_000_000
            }
        }
    }

    /// Bits the link can carry in [0, t] (times 1e9 for steps, to stay in integers: see
    /// [`RateSchedule::capacity_bits`]).
    fn carried_until(&self, t: Time) -> u128 {
        let RateSchedule::Steps { starts, rates, carried, repeat } = self else { unreachable!("steps only") };
        let (cycles, within) = repeat.map_or((0, t), |(p, _)| (t / p, t % p));
        let i = starts.partition_point(|&s| s <= within) - 1;
        let whole = repeat.map_or(0, |(_, bits)| cycles as u128 * bits);
        whole + carried[i] + rates[i] as u128 * (within - starts[i]) as u128
    }

    /// The first time by which the link has carried `need` (bits·1e9, above 0).
    fn time_carrying(&self, need: u128) -> Time {
        let RateSchedule::Steps { starts, rates, carried, repeat } = self else { unreachable!("steps only") };
        // Whole periods first, leaving 0 < need <= one period's bits.
        let (base, need) = match repeat {
            Some((p, bits)) => {
                let cycles = (need - 1) / bits;
                (cycles as Time * p, need - cycles * bits)
            }
            None => (0, need),
        };
        // The last step that starts having carried less than `need`; its rate is above 0,
        // since a step of rate 0 carries nothing and the next would qualify as well.
        let i = carried.partition_point(|&c| c < need) - 1;
        base + starts[i] + (need - carried[i]).div_ceil(rates[i] as u128) as Time
    }

    /// Bits the link can carry in [0, t): its capacity, for utilisation. (An opportunity
    /// at exactly `t` counts after `t`, as the packet it carries finishes at `t` and a
    /// sample taken at `t` comes first.)
    pub fn capacity_bits(&self, t: Time) -> u128 {
        match self {
            RateSchedule::Steps { .. } => self.carried_until(t) / NS_PER_S,
            RateSchedule::Trace { trace, period } => {
                // Opportunities strictly before t % period: at milliseconds up to
                // ceil(within / 1 ms) - 1.
                let within = t % period;
                let before = if within == 0 { 0 } else { trace.count_through((within - 1) / 1_000_000) };
                let count = (t / period) as u128 * trace.opportunities() as u128 + before as u128;
                count * OPPORTUNITY_BYTES as u128 * 8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;
    const S: Time = 1_000_000_000;

    fn steps(steps: &[(Time, u64)], repeat_ns: Option<Time>) -> RateSchedule {
        RateSchedule::new(&ScheduleSpec::Steps { steps: steps.to_vec(), repeat_ns }).unwrap()
    }

    #[test]
    fn a_constant_step_is_a_fixed_rate() {
        // 1500 B at 12 Mbps = 12000 bits / 12e6 = 1 ms.
        let s = steps(&[(0, 12_000_000)], None);
        assert_eq!(s.finish(0, 1500), MS);
        assert_eq!(s.finish(5 * S, 1500), 5 * S + MS);
        assert_eq!(s.capacity_bits(S), 12_000_000);
    }

    #[test]
    fn a_packet_spans_a_step() {
        // 12 Mbps until 0.5 ms, then 6 Mbps: 6000 bits by 0.5 ms, the other 6000 at 6 Mbps
        // take 1 ms more: done at 1.5 ms.
        let s = steps(&[(0, 12_000_000), (MS / 2, 6_000_000)], None);
        assert_eq!(s.finish(0, 1500), 3 * MS / 2);
        // From 1 s on, 6 Mbps: 2 ms per packet.
        assert_eq!(s.finish(S, 1500), S + 2 * MS);
    }

    #[test]
    fn an_outage_holds_packets_until_it_ends_and_steps_repeat() {
        // 12 Mbps for 1 s, nothing for 1 s, repeating: a packet started at 0.9995 s has
        // 0.5 ms of service (6000 bits) before the outage and the rest after it, at 2 s + 0.5 ms.
        let s = steps(&[(0, 12_000_000), (S, 0)], Some(2 * S));
        assert_eq!(s.finish(S - MS / 2, 1500), 2 * S + MS / 2);
        assert_eq!(s.finish(S + MS, 1500), 2 * S + MS);
        // By 5.5 s: two whole periods (12 Mbit each) and the third's first second, 12 Mbit.
        assert_eq!(s.capacity_bits(5 * S + S / 2), 3 * 12_000_000);
        // A packet ending exactly where the 12 Mbps phase ends finishes there, not a period on.
        assert_eq!(s.finish(S - MS, 1500), S);
    }

    #[test]
    fn trace_opportunities_and_their_period() {
        // Opportunities at 1, 1, 3 ms, repeating every 3 ms: 3 packets per 3 ms = 12 Mbps.
        let t = RateSchedule::trace(Arc::new(Trace::read(&b"1\n1\n3\n"[..], u64::MAX, &mut |_| true).unwrap()));
        assert_eq!(t.finish(0, 1500), MS);
        // A packet started at 1 ms (the previous one's end) takes the next opportunity: 3 ms.
        assert_eq!(t.finish(MS, 1500), 3 * MS);
        // After 3 ms the trace starts over: 4 ms, 4 ms, 6 ms.
        assert_eq!(t.finish(3 * MS, 1500), 4 * MS);
        // 3000 B take two opportunities (both at 4 ms), 4500 B three (the third at 6 ms).
        assert_eq!(t.finish(3 * MS, 3000), 4 * MS);
        assert_eq!(t.finish(3 * MS, 4500), 6 * MS);
        // Before 1 s: 333 whole periods of 3 ms (3 opportunities each); the next two come
        // at exactly 1 s, so they count after it.
        assert_eq!(t.capacity_bits(S), 333 * 3 * 1500 * 8);
        assert_eq!(t.capacity_bits(S + 1), (333 * 3 + 2) * 1500 * 8);
    }

    #[test]
    fn bad_schedules_say_why() {
        let err = |spec| RateSchedule::new(&spec).unwrap_err();
        assert!(err(ScheduleSpec::Steps { steps: vec![(S, 1)], repeat_ns: None }).contains("start at 0"));
        assert!(err(ScheduleSpec::Steps { steps: vec![(0, 1), (0, 2)], repeat_ns: None }).contains("increase"));
        assert!(err(ScheduleSpec::Steps { steps: vec![(0, 1), (S, 0)], repeat_ns: None }).contains("last rate"));
        assert!(err(ScheduleSpec::Steps { steps: vec![(0, 1), (S, 2)], repeat_ns: Some(S) }).contains("repeat"));
        let (file, digest) = ("/nonexistent.trace".to_string(), String::new());
        assert!(err(ScheduleSpec::Trace { file, digest }).contains("cannot be opened"));
    }
}
