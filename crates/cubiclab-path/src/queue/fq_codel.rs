//! FQ-CoDel (RFC 8290), as Linux's sch_fq_codel (net/sched/sch_fq_codel.c, Linux 6.18):
//! packets hashed by flow into buckets, each a FIFO under its own CoDel (codel.rs's state
//! machine, with the whole buffer's backlog as the `mtu` test's backlog, as Linux passes
//! `sch->qstats.backlog`), served by deficit round robin from two lists: flows that became
//! active go to the tail of `new_flows` with a quantum of credit and are served first; a
//! flow whose credit is spent gets another quantum at the tail of `old_flows`; a flow found
//! empty leaves the lists, except that one from `new_flows` goes to `old_flows` once if any
//! flow is there (`fq_codel_dequeue`'s guard against starvation, RFC 8290 Sec. 4.2).
//!
//! Overflow is `fq_codel_drop`: when an arrival leaves more packets than the buffer's limit
//! (the link's `buffer`, in packets or bytes, standing for `tc ... limit`) or more bytes than
//! `memory_limit`, the arrival is queued and the flow with the largest backlog loses packets
//! from its head until half its backlog is gone, at most `drop_batch`; its CoDel count grows
//! by as many. Linux counts memory as `skb->truesize`, the kernel's allocation, which the
//! path does not model: here a packet's memory is its size on the wire.
//!
//! Linux hashes the 5-tuple with a key drawn at boot (`skb_get_hash`) and scales the hash to
//! the buckets (`reciprocal_scale`); here the flow key ([`PathPacket::flow_key`]) is hashed
//! with a key drawn from the buffer's random stream, so which flows share a bucket is the
//! same for a seed and changes with it.
//!
//! `ce_threshold` (`tc ... ce_threshold`, off by default) is CoDel's (codel.rs): each
//! flow's CoDel applies it to the packets leaving that flow.

use std::collections::VecDeque;

use super::codel::{CoDel, CoDelSpec};
use super::{mark, Buffer, Discipline, Fifo, Limit, Scheduler, Table, Verdict};
use crate::rng::splitmix;
use crate::{PathPacket, Time};

/// FQ-CoDel's settings (file: `[bottleneck.fq_codel]`). Defaults: `fq_codel_init`'s, Linux
/// 6.18 on x86-64 with an Ethernet device (quantum: its MTU and header, 1514 bytes).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FqCoDelSpec {
    /// Flow buckets (`tc ... flows`), 1 to 65536. Default 1024.
    pub flows: u32,
    /// Bytes of credit a flow gets per round (`tc ... quantum`), 256 to 1048576. Default 1514.
    pub quantum: u32,
    /// Each flow's CoDel target, ns (file: "5ms").
    #[serde(rename = "target")]
    pub target_ns: u64,
    /// Each flow's CoDel interval, ns (file: "100ms").
    #[serde(rename = "interval")]
    pub interval_ns: u64,
    /// Mark ECN-capable packets instead of dropping them. Default on, as Linux's.
    pub ecn: bool,
    /// Most packets one overflow drops from the fattest flow (`tc ... drop_batch`), at
    /// least 1. Default 64.
    pub drop_batch: u32,
    /// Mark an ECT or CE packet that waited longer than this, ns (file: "1ms"; `tc ...
    /// ce_threshold`). Unset: off, Linux's default.
    #[serde(rename = "ce_threshold", skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ns: Option<u64>,
    /// Bytes queued above which an arrival triggers the fat-flow drop (`tc ...
    /// memory_limit`), 1 to 2^31. Default 32 MiB.
    pub memory_limit: u64,
}

impl Default for FqCoDelSpec {
    fn default() -> Self {
        let codel = CoDelSpec::default();
        Self {
            flows: 1024,
            quantum: 1514,
            target_ns: codel.target_ns,
            interval_ns: codel.interval_ns,
            ecn: true,
            drop_batch: 64,
            ce_threshold_ns: None,
            memory_limit: 32 << 20,
        }
    }
}

impl FqCoDelSpec {
    /// The CoDel each flow runs.
    fn codel(&self) -> CoDelSpec {
        CoDelSpec {
            target_ns: self.target_ns,
            interval_ns: self.interval_ns,
            ecn: self.ecn,
            ce_threshold_ns: self.ce_threshold_ns,
        }
    }
}

impl Table for FqCoDelSpec {
    /// The ranges `fq_codel_change` accepts (it raises a quantum below 256 to 256, and
    /// lowers a memory limit above 2^31 to 2^31; a scenario gets an error instead).
    fn validate(&self, at: &str) -> Result<(), String> {
        let ranges: [(&str, u64, u64, u64); 4] = [
            ("flows", self.flows as u64, 1, 65536),
            ("quantum", self.quantum as u64, 256, 1 << 20),
            ("drop_batch", self.drop_batch as u64, 1, u32::MAX as u64),
            ("memory_limit", self.memory_limit, 1, 1 << 31),
        ];
        for (key, value, low, high) in ranges {
            if !(low..=high).contains(&value) {
                return Err(format!("{at}.{key} is {value}; allowed: {low} to {high}"));
            }
        }
        self.codel().validate(at)
    }

    fn times(&self) -> Vec<(&'static str, Time)> {
        self.codel().times()
    }

    fn optional_times(&self) -> Vec<(&'static str, Option<Time>)> {
        self.codel().optional_times()
    }
}

/// One bucket: its packets, its CoDel, its credit and whether it is on a list.
struct Flow<P> {
    packets: Fifo<P>,
    codel: CoDel,
    deficit: i64,
    listed: bool,
}

pub struct FqCoDel<P> {
    flows: Vec<Flow<P>>,
    /// Indices of the flows on each list, in order (each flow is on at most one, so
    /// neither outgrows the capacity reserved at construction).
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    quantum: i64,
    drop_batch: u32,
    memory_limit: u64,
    limit: Limit,
    /// The hash's key.
    key: u64,
    packets: usize,
    bytes: u64,
}

/// The list a flow was served from.
#[derive(Clone, Copy, PartialEq)]
enum List {
    New,
    Old,
}

impl<P> FqCoDel<P> {
    /// Bytes one bucket takes whatever its traffic: its queue, CoDel state and credit, and
    /// its places in the two lists (reserved for every bucket).
    pub const BUCKET_BYTES: usize = std::mem::size_of::<Flow<P>>() + 2 * std::mem::size_of::<u32>();
}

impl<P: PathPacket> FqCoDel<P> {
    pub fn new(spec: &FqCoDelSpec, b: &Buffer) -> Self {
        let n = spec.flows as usize;
        let flows = (0..n)
            .map(|_| Flow { packets: Fifo::default(), codel: CoDel::new(&spec.codel(), b), deficit: 0, listed: false })
            .collect();
        Self {
            flows,
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            quantum: spec.quantum as i64,
            drop_batch: spec.drop_batch,
            memory_limit: spec.memory_limit,
            limit: b.limit,
            key: b.rng.clone().next_u64(),
            packets: 0,
            bytes: 0,
        }
    }

    /// The bucket of flow key `k`: its hash scaled to the number of buckets, as
    /// `reciprocal_scale` scales 32 bits (`(hash * n) >> 32`).
    #[inline]
    fn bucket(&self, k: u64) -> usize {
        let hash = splitmix(&mut (k ^ self.key)) >> 32;
        ((hash * self.flows.len() as u64) >> 32) as usize
    }

    /// `fq_codel_drop`, after an arrival to bucket `arrival` overflowed the buffer: drop
    /// from the head of the flow with the largest backlog (the first of equals) until half
    /// its backlog is gone or `drop_batch` packets are. Each goes to `dropped` but the
    /// arrival itself, the tail of its flow: whether it went is returned.
    fn drop_from_fattest(&mut self, arrival: usize, mut dropped: impl FnMut(P)) -> bool {
        let mut fat = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.packets.len_bytes() > self.flows[fat].packets.len_bytes() {
                fat = i;
            }
        }
        let flow = &mut self.flows[fat];
        let threshold = flow.packets.len_bytes() / 2;
        let (mut n, mut len, mut arrival_dropped) = (0u32, 0u64, false);
        // The whole backlog is at least the threshold, so the loop stops before the flow
        // runs out.
        while let Some((_, p)) = flow.packets.pop() {
            len += p.wire_bytes() as u64;
            n += 1;
            if fat == arrival && flow.packets.is_empty() {
                arrival_dropped = true;
            } else {
                dropped(p);
            }
            if n >= self.drop_batch || len >= threshold {
                break;
            }
        }
        flow.codel.count_drops(n);
        self.packets -= n as usize;
        self.bytes -= len;
        arrival_dropped
    }

    /// Take the head off `list` (the flow being served).
    fn pop(&mut self, list: List) {
        match list {
            List::New => self.new_flows.pop_front(),
            List::Old => self.old_flows.pop_front(),
        };
    }
}

impl<P: PathPacket> Scheduler<P> for FqCoDel<P> {
    fn enqueue(&mut self, now: Time, p: P, mut dropped: impl FnMut(P)) -> Verdict {
        let size = p.wire_bytes();
        let over = self.limit.full(self.packets, self.bytes, size) || self.bytes + size as u64 > self.memory_limit;
        let idx = self.bucket(p.flow_key());
        let flow = &mut self.flows[idx];
        flow.packets.push(now, p);
        self.packets += 1;
        self.bytes += size as u64;
        if !flow.listed {
            flow.listed = true;
            flow.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
        }
        if over && self.drop_from_fattest(idx, &mut dropped) {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    }

    fn dequeue(&mut self, now: Time, mut dropped: impl FnMut(P)) -> Option<(P, Verdict)> {
        loop {
            let (list, idx) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (List::New, i as usize),
                (None, Some(&i)) => (List::Old, i as usize),
                (None, None) => return None,
            };
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                flow.deficit += self.quantum;
                self.pop(list);
                self.old_flows.push_back(idx as u32);
                continue;
            }
            // codel_dequeue on the flow's queue.
            let sent = loop {
                let Some((enqueued, mut p)) = flow.packets.pop() else {
                    flow.codel.idle(now);
                    break None;
                };
                self.packets -= 1;
                self.bytes -= p.wire_bytes() as u64;
                match flow.codel.judge(now, &p, now - enqueued, self.bytes) {
                    Verdict::Drop => dropped(p),
                    Verdict::Mark => {
                        mark(&mut p);
                        break Some((p, Verdict::Mark));
                    }
                    Verdict::Pass => break Some((p, Verdict::Pass)),
                }
            };
            match sent {
                Some((p, verdict)) => {
                    flow.deficit -= p.wire_bytes() as i64;
                    return Some((p, verdict));
                }
                None => {
                    self.pop(list);
                    if list == List::New && !self.old_flows.is_empty() {
                        self.old_flows.push_back(idx as u32);
                    } else {
                        self.flows[idx].listed = false;
                    }
                }
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn count(&self, pred: impl Fn(&P) -> bool) -> usize {
        self.flows.iter().map(|f| f.packets.iter().filter(|p| pred(p)).count()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::codel::tests::ect_drain;
    use crate::queue::{Queue, QueueDiscipline, QueueSettings};
    use crate::rng::Rng;
    use crate::test_packet::{ect, ect1, pkt, Pkt};

    /// A packet of `size` bytes of flow `flow`.
    fn of(flow: u64, size: u32) -> Pkt {
        Pkt { flow, ..pkt(size) }
    }

    fn buffer(limit: Limit, seed: u64) -> Buffer {
        Buffer { limit, wire_bytes: 1514, rate_bps: 12_000_000, rng: Rng::new(seed, 0) }
    }

    fn fq(spec: FqCoDelSpec, limit: Limit) -> Queue<Pkt> {
        Queue::new(QueueDiscipline::FqCoDel, &QueueSettings { fq_codel: spec, ..Default::default() }, buffer(limit, 0))
    }

    /// The flows of the packets dequeued at `now` until the queue is empty.
    fn drain(q: &mut Queue<Pkt>, now: Time) -> Vec<u64> {
        std::iter::from_fn(|| q.dequeue(now, |_| panic!("no drop")).map(|(p, _)| p.flow)).collect()
    }

    #[test]
    fn the_defaults_are_linuxs_and_bad_values_are_refused_naming_the_key() {
        // fq_codel_init (x86-64): 1024 flows, quantum = the Ethernet MTU 1514, drop_batch
        // 64, memory_limit 32 MB, ECN on; codel_params_init: target 5 ms, interval 100 ms.
        let d = FqCoDelSpec::default();
        assert_eq!((d.flows, d.quantum, d.drop_batch, d.memory_limit, d.ecn), (1024, 1514, 64, 33_554_432, true));
        assert_eq!(d.times(), vec![("target", 5_000_000), ("interval", 100_000_000)]);
        let at = "bottleneck.fq_codel";
        // codel_params_init: ce_threshold CODEL_DISABLED_THRESHOLD, off.
        assert_eq!(d.optional_times(), vec![("ce_threshold", None)]);
        // The largest threshold is INT_MAX - 1 units of 1024 ns (INT_MAX means off).
        let top = FqCoDelSpec { ce_threshold_ns: Some(2_199_023_254_527), ..d };
        assert_eq!(top.ce_threshold_ns.map(|t| t >> 10), Some(i32::MAX as u64 - 1));
        assert!(top.validate(at).is_ok());
        assert!(FqCoDelSpec { ce_threshold_ns: Some(2_199_023_254_528), ..d }.validate(at).is_err());
        assert!(d.validate(at).is_ok());
        // fq_codel_change's ranges.
        for (bad, message) in [
            (FqCoDelSpec { flows: 0, ..d }, "bottleneck.fq_codel.flows is 0; allowed: 1 to 65536"),
            (FqCoDelSpec { flows: 65537, ..d }, "bottleneck.fq_codel.flows is 65537; allowed: 1 to 65536"),
            (FqCoDelSpec { quantum: 255, ..d }, "bottleneck.fq_codel.quantum is 255; allowed: 256 to 1048576"),
            (FqCoDelSpec { drop_batch: 0, ..d }, "bottleneck.fq_codel.drop_batch is 0; allowed: 1 to 4294967295"),
            (FqCoDelSpec { memory_limit: (1 << 31) + 1, ..d }, "bottleneck.fq_codel.memory_limit is 2147483649; allowed: 1 to 2147483648"),
            (FqCoDelSpec { interval_ns: 0, ..d }, "bottleneck.fq_codel.interval is 0; it must be > 0"),
            (
                FqCoDelSpec { ce_threshold_ns: Some(0), ..d },
                "bottleneck.fq_codel.ce_threshold is 0 ns; allowed: unset (off, the default) or 1 ns to \
                 2199023254527 ns (below 2^31 - 1 units of 1024 ns, Linux's \"off\")",
            ),
        ] {
            assert_eq!(bad.validate(at).unwrap_err(), message);
        }
    }

    #[test]
    fn the_hash_spreads_flows_as_random_buckets_and_follows_the_seed() {
        // 1024 flows in 1024 buckets, each bucket empty with probability (1 - 1/1024)^1024
        // = 0.3677: 647.5 buckets in use on average, standard deviation about 9.6 (the
        // occupancy distribution's). The same seed gives the same buckets; another seed
        // other collisions.
        let spec = FqCoDelSpec::default();
        let buckets = |seed| {
            let f = FqCoDel::<Pkt>::new(&spec, &buffer(Limit::Packets(10_240), seed));
            (0..1024u64).map(|k| f.bucket(k)).collect::<Vec<_>>()
        };
        let (a, b) = (buckets(1), buckets(2));
        assert_eq!(a, buckets(1));
        assert_ne!(a, b);
        for v in [a, b] {
            let used = v.iter().collect::<std::collections::HashSet<_>>().len();
            assert!((600..=695).contains(&used), "{used} buckets in use");
            assert!(v.iter().all(|&i| i < 1024));
        }
    }

    #[test]
    fn deficit_round_robin_shares_bytes_not_packets() {
        // RFC 8290 Sec. 4.2: each turn a flow sends while its credit is positive, then gets
        // another quantum (1514 bytes) at the tail of old_flows. Flow 1 sends 1514-byte
        // packets, flow 2 514-byte ones, both always backlogged. After k turns each flow has
        // sent k quanta less its credit, which lies in (-packet, quantum]: the bytes sent
        // differ by less than 1514 + 1514, whereas the packets are about 1514 / 514 = 2.95
        // to 1 (with 400 packets: about 101 and 299). Flows 1 and 2 fall in different
        // buckets (seed 0).
        let mut q = fq(FqCoDelSpec::default(), Limit::Packets(10_240));
        let f = FqCoDel::<Pkt>::new(&FqCoDelSpec::default(), &buffer(Limit::Packets(1), 0));
        assert_ne!(f.bucket(1), f.bucket(2));
        for _ in 0..400 {
            q.enqueue(0, of(1, 1514));
            q.enqueue(0, of(2, 514));
        }
        let (mut bytes, mut packets) = ([0i64; 3], [0u32; 3]);
        for _ in 0..400 {
            let (p, _) = q.dequeue(0, |_| panic!("no drop")).expect("backlogged");
            bytes[p.flow as usize] += p.size as i64;
            packets[p.flow as usize] += 1;
        }
        assert!((bytes[1] - bytes[2]).abs() < 2 * 1514, "{bytes:?}");
        assert!((98..=104).contains(&packets[1]), "{packets:?}");
    }

    #[test]
    fn a_new_flow_goes_first_and_an_emptied_one_once_to_the_old_list() {
        // Flow 1: 20 packets of 500 bytes, flow 2 single 100-byte packets. Credits start at
        // the quantum, 1514. Flow 1 sends 1 (credit 1014); flow 2's packet arrives (new,
        // behind flow 1 on new_flows); flow 1 sends 3 more (514, 14, -486), moves to
        // old_flows with 1028; flow 2 sends (1414). Found empty at its next turn while flow
        // 1 is on old_flows, flow 2 goes to old_flows, behind flow 1 (fq_codel_dequeue:
        // "force a pass through old_flows to prevent starvation"), and flow 1 sends (528).
        // Flow 2's next packet therefore is not new: it waits for flow 1's turn to end (28,
        // -472) instead of leaving next, as a new flow's would; then flow 1 sends the rest.
        let mut q = fq(FqCoDelSpec::default(), Limit::Packets(10_240));
        for _ in 0..20 {
            q.enqueue(0, of(1, 500));
        }
        let next = |q: &mut Queue<Pkt>| q.dequeue(0, |_| panic!("no drop")).unwrap().0.flow;
        let mut out = vec![next(&mut q)];
        q.enqueue(0, of(2, 100));
        out.extend((0..5).map(|_| next(&mut q)));
        assert_eq!(out, vec![1, 1, 1, 1, 2, 1]);
        q.enqueue(0, of(2, 100));
        out.extend(drain(&mut q, 0));
        let mut expect = vec![1, 1, 1, 1, 2, 1, 1, 1, 2];
        expect.extend([1; 13]);
        assert_eq!(out, expect);
    }

    #[test]
    fn a_flow_alone_is_judged_as_codel_judges_its_fifo() {
        // One flow, no overflow: the buckets, the lists and the credit change nothing, and
        // the flow's CoDel sees the whole backlog as sch_codel does. 2000 packets at 0, one
        // dequeued per ms for 1 s: the same drops at the same times as CoDel (ECN off).
        let run = |discipline| {
            let settings = QueueSettings {
                fq_codel: FqCoDelSpec { ecn: false, ..Default::default() },
                ..Default::default()
            };
            let mut q = Queue::new(discipline, &settings, buffer(Limit::Packets(10_000), 0));
            for _ in 0..2000 {
                q.enqueue(0, pkt(1514));
            }
            let mut drops = Vec::new();
            for ms in 1..=1000 {
                q.dequeue(ms * 1_000_000, |_| drops.push(ms));
            }
            drops
        };
        let codel = run(QueueDiscipline::CoDel);
        assert!(codel.len() > 10, "{codel:?}");
        assert_eq!(run(QueueDiscipline::FqCoDel), codel);
    }

    #[test]
    fn ect_packets_of_a_standing_flow_are_marked_not_dropped() {
        // ECN is on by default: the same standing queue of ECT packets is marked where CoDel
        // would drop, the first time at 105 ms (the head waited 105 ms, 100 ms after it first
        // exceeded 5 ms); nothing is dropped.
        let mut q = fq(FqCoDelSpec::default(), Limit::Packets(10_240));
        for _ in 0..2000 {
            q.enqueue(0, ect(1514));
        }
        let marks: Vec<u64> = (1..=300)
            .filter(|ms| q.dequeue(ms * 1_000_000, |_| panic!("no drop")).unwrap().1 == Verdict::Mark)
            .collect();
        assert_eq!(marks, vec![105, 205, 276]);
    }

    #[test]
    fn overflow_drops_half_the_fattest_flows_backlog_from_its_head() {
        // Limit 100 packets: flow 1 holds 90, flow 2 10. Flow 2's arrival makes 101:
        // fq_codel_drop takes flow 1 (135,900 bytes), half of it is 67,950 bytes, reached
        // after 45 packets of 1510 (67,950): those 45, flow 1's oldest, are dropped and the
        // arrival stays. With drop_batch 10, only 10 go.
        for (batch, expect) in [(64, 45), (10, 10)] {
            let mut q = fq(FqCoDelSpec { drop_batch: batch, ..Default::default() }, Limit::Packets(100));
            for seq in 0..90 {
                q.enqueue(0, Pkt { ect: seq % 2 == 1, ..of(1, 1510) });
            }
            for _ in 0..10 {
                q.enqueue(0, of(2, 1510));
            }
            let mut dropped = Vec::new();
            assert_eq!(q.admit(0, of(2, 1510), |p| dropped.push(p)), Verdict::Pass);
            assert_eq!(dropped.len(), expect);
            assert!(dropped.iter().all(|p| p.flow == 1));
            // The head first: packets 0, 1, 2, ... (odd ones ECT, unmarked).
            assert_eq!(dropped.iter().take(4).map(|p| p.ect).collect::<Vec<_>>(), vec![false, true, false, true]);
            assert_eq!(q.len_packets(), 101 - expect);
        }
    }

    #[test]
    fn an_arrival_alone_above_the_limits_is_itself_dropped() {
        // The arrival is queued first, so when its flow is the fattest and it is that flow's
        // only packet, the head fq_codel_drop takes is the arrival itself (NET_XMIT_CN).
        // memory_limit 1000 bytes: a 1514-byte packet alone exceeds it.
        let mut q = fq(FqCoDelSpec { memory_limit: 1000, ..Default::default() }, Limit::Packets(10_240));
        assert_eq!(q.enqueue(0, of(1, 1514)), Verdict::Drop);
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
        // 900 bytes fit; one more 200-byte packet (1100 > 1000) drops half of the fatter
        // flow 1 (its 900-byte head) and keeps flow 2's arrival.
        q.enqueue(0, of(1, 900));
        let mut dropped = Vec::new();
        assert_eq!(q.admit(0, of(2, 200), |p| dropped.push(p)), Verdict::Pass);
        assert_eq!(dropped, vec![of(1, 900)]);
        assert_eq!(drain(&mut q, 0), vec![2]);
        // A byte buffer is a limit as packets are: 3000 bytes hold two 1500-byte packets.
        let mut q = fq(FqCoDelSpec::default(), Limit::Bytes(3000));
        q.enqueue(0, of(1, 1500));
        q.enqueue(0, of(2, 1500));
        let mut dropped = Vec::new();
        assert_eq!(q.admit(0, of(1, 1500), |p| dropped.push(p)), Verdict::Pass);
        assert_eq!(dropped, vec![of(1, 1500)]);
    }

    /// The verdict on `p`, alone in its queue (so CoDel, with no backlog behind it, never
    /// drops: `codel_should_drop`'s `backlog <= mtu`), enqueued at `at` and dequeued at
    /// `now` under a `ce_threshold` of `threshold` ns.
    fn alone(threshold: Option<u64>, ecn: bool, p: Pkt, at: Time, now: Time) -> Verdict {
        let spec = FqCoDelSpec { ce_threshold_ns: threshold, ecn, ..Default::default() };
        let mut q = fq(spec, Limit::Packets(10_240));
        q.enqueue(at, p);
        q.dequeue(now, |_| panic!("no drop")).expect("the packet leaves").1
    }

    #[test]
    fn ce_threshold_marks_above_it_in_codels_1024_ns_units() {
        // fq_codel_change stores a threshold of 1 ms as (1000 us * 1000) >> 10 = 976 units;
        // codel_dequeue marks (at `end`) when ldelay, now - enqueue time in units, is
        // strictly greater: 977 units or more.
        let ms = Some(1_000_000);
        let t977 = 977 << 10; // 1,000,448 ns
        for ecn in [true, false] {
            // Enqueued at 0: ldelay is now >> 10. 1 ms and 1,000,447 ns are 976 units, not
            // above; 1,000,448 ns is 977.
            assert_eq!(alone(ms, ecn, ect(1500), 0, 1_000_000), Verdict::Pass);
            assert_eq!(alone(ms, ecn, ect(1500), 0, t977 - 1), Verdict::Pass);
            assert_eq!(alone(ms, ecn, ect(1500), 0, t977), Verdict::Mark);
            // Both clock readings are truncated: enqueued at 1023 ns (unit 0), a sojourn of
            // 999,425 ns, under 1 ms, is 977 units; enqueued at 1024 ns (unit 1), one of
            // 1,000,447 ns is 976.
            assert_eq!(alone(ms, ecn, ect(1500), 1023, t977), Verdict::Mark);
            assert_eq!(alone(ms, ecn, ect(1500), 1024, t977 + 1023), Verdict::Pass);
            // ECT(1) and CE are marked as ECT(0) (INET_ECN_set_ce succeeds on all three);
            // a Not-ECT packet never is.
            assert_eq!(alone(ms, ecn, ect1(1500), 0, t977), Verdict::Mark);
            assert_eq!(alone(ms, ecn, Pkt { ce: true, ..pkt(1500) }, 0, t977), Verdict::Mark);
            assert_eq!(alone(ms, ecn, pkt(1500), 0, 50_000_000), Verdict::Pass);
        }
        // Unset (the default): off, whatever the sojourn.
        assert_eq!(alone(None, true, ect(1500), 0, 50_000_000), Verdict::Pass);
    }

    #[test]
    fn ce_threshold_marks_whatever_codels_state_and_leaves_its_drops_alone() {
        // One flow of 2000 packets enqueued at 0, one dequeued per ms: the head leaving at k
        // ms waited k ms, so with a 1 ms threshold every packet sent from 2 ms on is above
        // it (1 ms itself is 976 units, not above). The marking step comes after CoDel's
        // decisions and changes none of its state, so CoDel (ecn off, ECT packets) drops
        // exactly as without the threshold: first at 105 ms, then on its control law.
        let run = |threshold| {
            let spec = FqCoDelSpec { ce_threshold_ns: threshold, ecn: false, ..Default::default() };
            ect_drain(fq(spec, Limit::Packets(10_240)))
        };
        let (plain, drops) = run(None);
        assert!(plain.iter().all(|&m| !m));
        assert_eq!(drops.first(), Some(&105_000_000));
        let (marked, with_threshold) = run(Some(1_000_000));
        assert_eq!(with_threshold, drops);
        // Not at 1 ms; at every later dequeue, in CoDel's dropping state or not.
        assert!(!marked[0]);
        assert!(marked[1..].iter().all(|&m| m));
    }
}
