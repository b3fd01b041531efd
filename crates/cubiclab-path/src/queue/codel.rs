//! CoDel (RFC 8289): drop at dequeue when the sojourn time has stayed above `target` for at
//! least `interval`, then at intervals shrinking as interval / sqrt(count).
//!
//! With `ecn`, each of these drops of an ECN-capable packet is a mark instead, as Linux's
//! `codel_dequeue` does (include/net/codel_impl.h, Linux 6.18, with `params->ecn`): the
//! packet that enters the dropping state is marked and leaves, the dropping state starts
//! as after a drop; in the dropping state a due packet that `INET_ECN_set_ce` can mark
//! leaves marked, with the next signal scheduled by the control law, ending that dequeue's
//! run of drops. Packets that cannot be marked (Not-ECT) are dropped as without ECN.
//!
//! [`CoDel::judge`] is the one state machine: `sch_codel` runs it on its FIFO, FQ-CoDel
//! (`fq_codel.rs`) on each flow's queue.

use super::{Buffer, Discipline, Fifo, Table, Verdict};
use crate::{PathPacket, Time};

/// CoDel's settings. Defaults: RFC 8289's 5 ms target and 100 ms interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CoDelSpec {
    /// Acceptable standing queue delay, ns (file: "5ms").
    #[serde(rename = "target")]
    pub target_ns: u64,
    /// Time the delay must stay above target before dropping, ns (file: "100ms").
    #[serde(rename = "interval")]
    pub interval_ns: u64,
    /// Mark ECN-capable packets instead of dropping them (`tc ... codel ecn`; off by
    /// default, as sch_codel's `codel_params_init`).
    pub ecn: bool,
}

impl Default for CoDelSpec {
    fn default() -> Self {
        Self { target_ns: 5_000_000, interval_ns: 100_000_000, ecn: false }
    }
}

impl Table for CoDelSpec {
    fn validate(&self, field: &str) -> Result<(), String> {
        for (key, value) in self.times() {
            if value == 0 {
                return Err(format!("{field}.{key} is 0; it must be > 0"));
            }
        }
        Ok(())
    }

    fn times(&self) -> Vec<(&'static str, Time)> {
        vec![("target", self.target_ns), ("interval", self.interval_ns)]
    }
}

pub struct CoDel {
    spec: CoDelSpec,
    mtu: u64,
    first_above_time: Time,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// Where the dequeue under way stands.
    next: Next,
}

/// RFC 8289's `dequeue` takes heads until one leaves; each head asked about here is
/// - `First`: the first of a dequeue;
/// - `AfterDrop`: after a drop in the dropping state (the `while` loop of drops goes on);
/// - `AfterEntry`: after the drop that entered the dropping state (it leaves).
#[derive(Clone, Copy)]
enum Next {
    First,
    AfterDrop,
    AfterEntry,
}

impl CoDel {
    fn control_law(&self, t: Time) -> Time {
        t + (self.spec.interval_ns as f64 / (self.count.max(1) as f64).sqrt()) as Time
    }

    /// RFC 8289 `dodequeue`'s verdict on the head that left after `sojourn` with
    /// `bytes_left` behind it: whether it may be dropped.
    fn ok_to_drop(&mut self, now: Time, sojourn: Time, bytes_left: u64) -> bool {
        if sojourn < self.spec.target_ns || bytes_left <= self.mtu {
            self.first_above_time = 0;
            false
        } else if self.first_above_time == 0 {
            self.first_above_time = now + self.spec.interval_ns;
            false
        } else {
            now >= self.first_above_time
        }
    }

    /// The dropping state's `while`: signal on the head `p` if the next signal is due. A
    /// mark ends the run (the packet leaves; `codel_dequeue`'s `goto end`), the next signal
    /// one control-law step later; after a drop the next head is asked.
    fn signal_if_due<P: PathPacket>(&mut self, now: Time, p: &P) -> Verdict {
        if self.dropping && now >= self.drop_next {
            self.count += 1;
            if self.spec.ecn && p.ecn_capable() {
                self.drop_next = self.control_law(self.drop_next);
                Verdict::Mark
            } else {
                self.next = Next::AfterDrop;
                Verdict::Drop
            }
        } else {
            Verdict::Pass
        }
    }

    /// The verdict on the head `p`, just taken out after `sojourn` ns with `backlog` bytes
    /// left behind it (the whole buffer's: FQ-CoDel passes its total, as Linux passes
    /// `sch->qstats.backlog`). After a `Drop` the next head must be judged at the same
    /// `now`, or [`CoDel::idle`] called if there is none.
    pub(super) fn judge<P: PathPacket>(&mut self, now: Time, p: &P, sojourn: Time, backlog: u64) -> Verdict {
        let ok = self.ok_to_drop(now, sojourn, backlog);
        match std::mem::replace(&mut self.next, Next::First) {
            Next::AfterEntry => Verdict::Pass,
            Next::AfterDrop => {
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
                self.signal_if_due(now, p)
            }
            Next::First if self.dropping => {
                if !ok {
                    self.dropping = false;
                }
                self.signal_if_due(now, p)
            }
            Next::First if ok => {
                self.dropping = true;
                let delta = self.count.wrapping_sub(self.lastcount);
                self.count =
                    if delta > 1 && now.saturating_sub(self.drop_next) < 16 * self.spec.interval_ns { delta } else { 1 };
                self.drop_next = self.control_law(now);
                self.lastcount = self.count;
                if self.spec.ecn && p.ecn_capable() {
                    Verdict::Mark
                } else {
                    self.next = Next::AfterEntry;
                    Verdict::Drop
                }
            }
            Next::First => Verdict::Pass,
        }
    }

    /// `fq_codel_drop` dropped `n` packets of this queue's head: "tell codel to increase
    /// its signal strength also" (`cvars.count += i`; a u32, wrapping as the kernel's).
    pub(super) fn count_drops(&mut self, n: u32) {
        self.count = self.count.wrapping_add(n);
    }
}

impl Discipline for CoDel {
    type Settings = CoDelSpec;

    fn new(spec: &CoDelSpec, b: &Buffer) -> Self {
        Self {
            spec: *spec,
            mtu: b.wire_bytes as u64,
            first_above_time: 0,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            next: Next::First,
        }
    }

    fn depart<P: PathPacket>(&mut self, now: Time, p: &P, sojourn: Time, fifo: &Fifo<P>) -> Verdict {
        self.judge(now, p, sojourn, fifo.len_bytes())
    }

    fn idle(&mut self, _: Time) {
        match std::mem::replace(&mut self.next, Next::First) {
            Next::First => {
                self.first_above_time = 0;
                self.dropping = false;
            }
            Next::AfterDrop => self.dropping = false,
            Next::AfterEntry => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::queue::{Limit, Queue, QueueDiscipline, QueueSettings};
    use crate::rng::Rng;
    use crate::test_packet::{ect, pkt, Pkt};

    #[test]
    fn a_standing_queue_starts_drops_after_an_interval_and_sojourn_falls() {
        // Arrivals at 1.05x the service rate build a standing queue. CoDel must not drop
        // during the first `interval` above target, must drop after it, and the drops
        // (interval / sqrt(count) apart) must pull the sojourn time back toward the target:
        // removing the 5% excess (41.7 of 833 packets/s) needs sqrt(count) / interval >= 41.7,
        // count ~ 17, reached within about 2 interval sqrt(17) ~ 0.8 s.
        let spec = CoDelSpec { target_ns: 5_000_000, interval_ns: 100_000_000, ecn: false };
        let b = Buffer { limit: Limit::Packets(10_000), wire_bytes: 1500, rate_bps: 10_000_000, rng: Rng::new(0, 0) };
        let mut q = Queue::new(QueueDiscipline::CoDel, &QueueSettings { codel: spec, ..Default::default() }, b);
        let service = 1_200_000u64; // 1500 B at 10 Mbps
        let arrival = 1_142_857u64;
        let p = pkt(1500);
        let (mut t_arr, mut t_srv) = (0u64, 0u64);
        // Arrival times of the packets waiting, to measure each one's sojourn here.
        let mut waiting = VecDeque::new();
        let mut first_drop = None;
        let mut late_sojourns = Vec::new();
        while t_srv < 20_000_000_000 {
            if t_arr <= t_srv {
                q.enqueue(t_arr, p);
                waiting.push_back(t_arr);
                t_arr += arrival;
            } else {
                let mut drops = 0;
                let sent = q.dequeue(t_srv, |_| {
                    drops += 1;
                    waiting.pop_front();
                });
                if drops > 0 && first_drop.is_none() {
                    first_drop = Some(t_srv);
                }
                if sent.is_some() {
                    let sojourn = t_srv - waiting.pop_front().expect("a packet left");
                    if t_srv > 15_000_000_000 {
                        late_sojourns.push(sojourn);
                    }
                }
                t_srv += service;
            }
        }
        // The sojourn passes 5 ms after ~5 ms / (1 - 1/1.05) = 105 ms; the first drop comes
        // one interval (100 ms) after that, not before.
        let t = first_drop.expect("CoDel never dropped");
        assert!((200_000_000..320_000_000).contains(&t), "first drop at {t}");
        let mean = late_sojourns.iter().sum::<u64>() as f64 / late_sojourns.len() as f64;
        assert!(mean < 3.0 * spec.target_ns as f64, "late mean sojourn {:.1} ms", mean / 1e6);
    }

    /// 2000 packets like `p` all enqueued at 0 and one dequeued per ms from 1 ms on (so
    /// the k-th dequeue's head waited about k ms), until 600 ms: the times of the marks
    /// and of the drops.
    fn drain(ecn: bool, p: Pkt) -> (Vec<Time>, Vec<Time>) {
        let b = Buffer { limit: Limit::Packets(10_000), wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(0, 0) };
        let settings = QueueSettings { codel: CoDelSpec { ecn, ..CoDelSpec::default() }, ..Default::default() };
        let mut q = Queue::new(QueueDiscipline::CoDel, &settings, b);
        for _ in 0..2000 {
            q.enqueue(0, p);
        }
        let (mut marks, mut drops) = (Vec::new(), Vec::new());
        for ms in 1..=600 {
            let now = ms * 1_000_000;
            if let Some((_, Verdict::Mark)) = q.dequeue(now, |_| drops.push(now)) {
                marks.push(now);
            }
        }
        (marks, drops)
    }

    #[test]
    fn with_ecn_ect_packets_are_marked_on_the_control_law_schedule() {
        // The head dequeued at k ms waited k ms: above the 5 ms target from 5 ms, so the
        // first signal is due one interval later, at 105 ms (codel_should_drop). With ECN it
        // is a mark and the packet leaves; the dropping state starts with count 1 and the
        // next signal at 105 + 100 / sqrt(1) ms. Each due signal then marks the head and
        // schedules the next one at drop_next + interval / sqrt(count) (codel_dequeue's
        // loop: count++, INET_ECN_set_ce, control law from drop_next, goto end), taken by
        // the first dequeue at or after it (whole ms). No packet is dropped.
        let interval = 100_000_000u64;
        let mut expect = vec![105_000_000u64];
        let mut next = 105_000_000 + interval;
        for count in 2u32.. {
            let at = next.div_ceil(1_000_000) * 1_000_000;
            if at > 600_000_000 {
                break;
            }
            expect.push(at);
            next += (interval as f64 / (count as f64).sqrt()) as u64;
        }
        // 105, 205, 276 (205 + 70.7), 334 (+ 57.7), 384 (+ 50), 429 (+ 44.7), ... ms.
        assert_eq!(&expect[..4], &[105_000_000, 205_000_000, 276_000_000, 334_000_000]);
        assert_eq!(drain(true, ect(1500)), (expect, vec![]));
    }

    #[test]
    fn with_ecn_packets_that_cannot_be_marked_are_dropped_as_without() {
        // Not-ECT packets: INET_ECN_set_ce fails, and codel_dequeue drops them as it would
        // without ECN, at the same times.
        let without = drain(false, pkt(1500));
        assert!(without.0.is_empty() && without.1.first() == Some(&105_000_000), "{without:?}");
        assert_eq!(drain(true, pkt(1500)), without);
    }
}
