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
//! `ce_threshold` (`tc ... codel ce_threshold`, `tc ... fq_codel ce_threshold`; off by
//! default) is `codel_dequeue`'s last step (label `end`), shared by sch_codel and
//! sch_fq_codel: whatever CoDel decided, the packet leaving is marked if it is ECT or CE and
//! its sojourn exceeds the threshold, both in CoDel's clock units of 1024 ns
//! (`codel_get_time`: ns >> 10, read at enqueue and at dequeue, so the sojourn is the
//! difference of the two truncated readings). CoDel's own `ecn` does not matter. Linux
//! counts it as `ce_mark` beside CoDel's `ecn_mark`; the link counts marked packets, once
//! each. Not modelled: `ce_threshold_selector`/`ce_threshold_mask` (Linux 5.16 on: only
//! packets whose DS field under the mask equals the selector; the path's packets carry no
//! DSCP), so every ECT or CE packet is subject to the threshold, as Linux's default mask 0
//! makes it.
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
    /// Mark an ECT or CE packet that waited longer than this, ns (file: "1ms"; `tc ...
    /// ce_threshold`). Unset: off, Linux's default.
    #[serde(rename = "ce_threshold", skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ns: Option<u64>,
}

impl Default for CoDelSpec {
    fn default() -> Self {
        Self { target_ns: 5_000_000, interval_ns: 100_000_000, ecn: false, ce_threshold_ns: None }
    }
}

/// CoDel's clock, `codel_get_time`: ns in units of 1024 (`CODEL_SHIFT` 10).
const CODEL_SHIFT: u32 = 10;

/// The largest `ce_threshold`: one unit below `CODEL_DISABLED_THRESHOLD` (`INT_MAX` units),
/// the value that means off.
const MAX_CE_THRESHOLD_NS: u64 = (((i32::MAX as u64) - 1) << CODEL_SHIFT) + ((1 << CODEL_SHIFT) - 1);

impl Table for CoDelSpec {
    fn validate(&self, field: &str) -> Result<(), String> {
        for (key, value) in self.times() {
            if value == 0 {
                return Err(format!("{field}.{key} is 0; it must be > 0"));
            }
        }
        if let Some(t) = self.ce_threshold_ns {
            if !(1..=MAX_CE_THRESHOLD_NS).contains(&t) {
                return Err(format!(
                    "{field}.ce_threshold is {t} ns; allowed: unset (off, the default) or 1 ns to \
                     {MAX_CE_THRESHOLD_NS} ns (below 2^31 - 1 units of 1024 ns, Linux's \"off\")"
                ));
            }
        }
        Ok(())
    }

    fn times(&self) -> Vec<(&'static str, Time)> {
        vec![("target", self.target_ns), ("interval", self.interval_ns)]
    }

    fn optional_times(&self) -> Vec<(&'static str, Option<Time>)> {
        vec![("ce_threshold", self.ce_threshold_ns)]
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
        match self.decide(now, p, sojourn, backlog) {
            Verdict::Pass if p.ecn_capable() && self.above_ce_threshold(now, sojourn) => Verdict::Mark,
            verdict => verdict,
        }
    }

    /// `codel_dequeue`'s `end`: whether the head leaving at `now` after `sojourn` ns waited
    /// longer than `ce_threshold`, both in whole units of CoDel's clock.
    #[inline]
    fn above_ce_threshold(&self, now: Time, sojourn: Time) -> bool {
        let waited = (now >> CODEL_SHIFT) - ((now - sojourn) >> CODEL_SHIFT);
        self.spec.ce_threshold_ns.is_some_and(|t| waited > t >> CODEL_SHIFT)
    }

    /// CoDel's own verdict on the head (RFC 8289's state machine, with `ecn`).
    fn decide<P: PathPacket>(&mut self, now: Time, p: &P, sojourn: Time, backlog: u64) -> Verdict {
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
pub(super) mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::queue::{Limit, Queue, QueueDiscipline, QueueSettings};
    use crate::rng::Rng;
    use crate::test_packet::{ect, ect1, pkt, Pkt};

    #[test]
    fn a_standing_queue_starts_drops_after_an_interval_and_sojourn_falls() {
        // Arrivals at 1.05x the service rate build a standing queue. CoDel must not drop
        // during the first `interval` above target, must drop after it, and the drops
        // (interval / sqrt(count) apart) must pull the sojourn time back toward the target:
        // removing the 5% excess (41.7 of 833 packets/s) needs sqrt(count) / interval >= 41.7,
        // count ~ 17, reached within about 2 interval sqrt(17) ~ 0.8 s.
        let spec = CoDelSpec { target_ns: 5_000_000, interval_ns: 100_000_000, ecn: false, ce_threshold_ns: None };
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

    /// sch_codel with `spec`, `p` alone in its FIFO (so CoDel, with no backlog behind it,
    /// never drops: `codel_should_drop`'s `backlog <= mtu`), enqueued at `at` and dequeued
    /// at `now`: the verdict.
    fn alone(spec: CoDelSpec, p: Pkt, at: Time, now: Time) -> Verdict {
        let b = Buffer { limit: Limit::Packets(1000), wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(0, 0) };
        let mut q = Queue::new(QueueDiscipline::CoDel, &QueueSettings { codel: spec, ..Default::default() }, b);
        q.enqueue(at, p);
        q.dequeue(now, |_| panic!("no drop")).expect("the packet leaves").1
    }

    #[test]
    fn ce_threshold_marks_above_it_in_codels_1024_ns_units() {
        // codel_change stores a threshold of 1 ms as (1000 us * 1000) >> 10 = 976 units;
        // codel_dequeue marks (at `end`) when ldelay, now - enqueue time in units, is
        // strictly greater: 977 units or more, whatever `ecn`.
        let t977 = 977 << 10; // 1,000,448 ns
        for ecn in [true, false] {
            let on = CoDelSpec { ecn, ce_threshold_ns: Some(1_000_000), ..CoDelSpec::default() };
            // Enqueued at 0: ldelay is now >> 10; 1 ms and 1,000,447 ns are 976 units.
            assert_eq!(alone(on, ect(1500), 0, 1_000_000), Verdict::Pass);
            assert_eq!(alone(on, ect(1500), 0, t977 - 1), Verdict::Pass);
            assert_eq!(alone(on, ect(1500), 0, t977), Verdict::Mark);
            // Both readings truncated: enqueued at 1023 ns (unit 0), 999,425 ns of sojourn
            // are 977 units; enqueued at 1024 ns (unit 1), 1,000,447 ns are 976.
            assert_eq!(alone(on, ect(1500), 1023, t977), Verdict::Mark);
            assert_eq!(alone(on, ect(1500), 1024, t977 + 1023), Verdict::Pass);
            // INET_ECN_set_ce succeeds on ECT(0), ECT(1) and CE; never on Not-ECT.
            assert_eq!(alone(on, ect1(1500), 0, t977), Verdict::Mark);
            assert_eq!(alone(on, Pkt { ce: true, ..pkt(1500) }, 0, t977), Verdict::Mark);
            assert_eq!(alone(on, pkt(1500), 0, 50_000_000), Verdict::Pass);
            // Unset (codel_params_init: CODEL_DISABLED_THRESHOLD): off.
            assert_eq!(alone(CoDelSpec { ecn, ..CoDelSpec::default() }, ect(1500), 0, 50_000_000), Verdict::Pass);
        }
    }

    #[test]
    fn ce_threshold_leaves_codels_drops_alone() {
        // `drain`'s heads waited k ms at the k-th dequeue: with a 1 ms threshold every ECT
        // packet sent from 2 ms on is above it. The marking comes after CoDel's decisions and
        // changes none of its state, so CoDel (ecn off) drops exactly as without it, first at
        // 105 ms.
        let run = |threshold| {
            let b = Buffer { limit: Limit::Packets(10_000), wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(0, 0) };
            let spec = CoDelSpec { ce_threshold_ns: threshold, ..CoDelSpec::default() };
            ect_drain(Queue::new(QueueDiscipline::CoDel, &QueueSettings { codel: spec, ..Default::default() }, b))
        };
        let (plain, drops) = run(None);
        assert!(plain.iter().all(|&m| !m) && drops.first() == Some(&105_000_000), "{drops:?}");
        let (marked, with_threshold) = run(Some(1_000_000));
        assert_eq!(with_threshold, drops);
        assert!(!marked[0] && marked[1..].iter().all(|&m| m));
    }

    #[test]
    fn ce_threshold_is_refused_outside_linuxs_range() {
        let at = "bottleneck.codel";
        let with = |t| CoDelSpec { ce_threshold_ns: Some(t), ..CoDelSpec::default() }.validate(at);
        assert!(with(1).is_ok() && with(MAX_CE_THRESHOLD_NS).is_ok());
        assert_eq!(MAX_CE_THRESHOLD_NS >> CODEL_SHIFT, i32::MAX as u64 - 1);
        assert!(with(MAX_CE_THRESHOLD_NS + 1).is_err());
        assert_eq!(
            with(0).unwrap_err(),
            "bottleneck.codel.ce_threshold is 0 ns; allowed: unset (off, the default) or 1 ns to \
             2199023254527 ns (below 2^31 - 1 units of 1024 ns, Linux's \"off\")"
        );
    }

    /// 2000 ECT packets enqueued in `q` at 0, one dequeued per ms from 1 ms to 600 ms (the
    /// k-th dequeue's head waited about k ms): whether each packet sent was marked, and the
    /// times of the drops.
    pub(in crate::queue) fn ect_drain(mut q: Queue<Pkt>) -> (Vec<bool>, Vec<Time>) {
        for _ in 0..2000 {
            q.enqueue(0, ect(1500));
        }
        let (mut marked, mut drops) = (Vec::new(), Vec::new());
        for ms in 1..=600u64 {
            let now = ms * 1_000_000;
            let (p, verdict) = q.dequeue(now, |_| drops.push(now)).expect("a packet");
            assert_eq!(p.ce, verdict == Verdict::Mark);
            marked.push(verdict == Verdict::Mark);
        }
        (marked, drops)
    }
}
