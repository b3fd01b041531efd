//! A link: a buffer (a FIFO under a queue discipline) in front of a transmitter of fixed
//! rate, with random loss applied to packets as they leave it. The link counts what the
//! discipline does: every drop and every mark. Propagation is the caller's job (the
//! simulator's delay lines, the emulator's).

use crate::loss::{LossSpec, RandomLoss};
use crate::queue::{Buffer, Limit, Queue, QueueDiscipline, QueueSettings, Verdict};
use crate::rng::Rng;
use crate::schedule::RateSchedule;
use crate::{PathPacket, Time, STREAM_LINK};

/// One direction of a bottleneck, as a scenario describes it (and, as JSON, as the testbed
/// hands it to the emulator).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate_bps: u64,
    pub buffer: Limit,
    pub queue: QueueDiscipline,
    /// The disciplines' settings (only the running one's matter).
    pub settings: QueueSettings,
    pub loss: LossSpec,
    /// Size of a full data packet on the wire (RED's idle decay counts in these; CoDel
    /// keeps dropping only while more than one is queued).
    pub packet_bytes: u32,
}

/// size·8·1e9 / rate of one packet size at one rate, as whole nanoseconds and remainder.
#[derive(Clone, Copy, Default)]
struct Serialization {
    size: u32,
    rate: u64,
    whole_ns: u64,
    remainder: u64,
}

pub struct Link<P> {
    pub rate_bps: u64,
    pub queue: Queue<P>,
    /// The packet being serialized, if any.
    busy: Option<P>,
    /// Remainder of bits·1e9 / rate, carried so serialization times are exact on average.
    carry: u64,
    /// The last packet's serialization. Most packets on a link have the size of the one
    /// before, so the division runs only when the size (or the rate) changes.
    serialization: Serialization,
    /// Bytes that finished serialization (for utilisation).
    pub tx_bytes: u64,
    /// Congestion drops: arrivals the buffer had no room for or the discipline refused,
    /// and heads it dropped at dequeue.
    pub drops: u64,
    /// Packets the discipline marked CE, on arrival or at dequeue.
    pub marks: u64,
    /// Random losses of packets leaving the link.
    pub loss: RandomLoss,
    /// A rate that varies in time, replacing `rate_bps` for serialization ([`Link::vary`]).
    schedule: Option<RateSchedule>,
    /// The path time at which the schedule's time 0 falls ([`Link::set_schedule_origin`]).
    schedule_origin: Time,
}

/// What became of a packet offered to a link.
pub enum Offer {
    /// Started serializing at once; call `tx_done` at this time.
    Started(Time),
    Queued,
    Dropped,
}

impl<P: PathPacket> Link<P> {
    /// Direction `dir` (0 forward, 1 reverse) of the bottleneck of a run seeded with `seed`:
    /// the random streams follow from these two alone, random loss on
    /// `STREAM_LINK + dir`, the buffer's (RED's drops) on `STREAM_LINK + 10 + dir`.
    pub fn new(spec: &LinkSpec, seed: u64, dir: u32) -> Self {
        let buffer = Buffer {
            limit: spec.buffer,
            wire_bytes: spec.packet_bytes,
            rate_bps: spec.rate_bps,
            rng: Rng::new(seed, STREAM_LINK + 10 + dir as u64),
        };
        let queue = Queue::new(spec.queue, &spec.settings, buffer);
        let loss = RandomLoss::new(spec.loss.clone(), Rng::new(seed, STREAM_LINK + dir as u64));
        Self {
            rate_bps: spec.rate_bps,
            queue,
            busy: None,
            carry: 0,
            serialization: Serialization::default(),
            tx_bytes: 0,
            drops: 0,
            marks: 0,
            loss,
            schedule: None,
            schedule_origin: 0,
        }
    }

    /// Serialize at the rate of `schedule` from now on (its time 0 is the run's start,
    /// unless [`Link::set_schedule_origin`] moves it).
    pub fn vary(&mut self, schedule: RateSchedule) {
        self.schedule = Some(schedule);
    }

    /// Make path time `origin` the schedule's time 0: the emulator starts before the run's
    /// flows do, and learns when their time 0 is only then. Before the origin a packet takes
    /// as long as at the schedule's time 0.
    pub fn set_schedule_origin(&mut self, origin: Time) {
        self.schedule_origin = origin;
    }

    /// Bits the link could carry in [0, t): its capacity, for utilisation (with a schedule,
    /// from its origin on).
    pub fn capacity_bits(&self, t: Time) -> u128 {
        match &self.schedule {
            Some(s) => s.capacity_bits(t.saturating_sub(self.schedule_origin)),
            None => self.rate_bps as u128 * t as u128 / 1_000_000_000,
        }
    }

    /// The time a packet of `size` bytes that starts serializing at `start` is done: the
    /// one place the link's rate enters (a rate that varies in time belongs here).
    #[inline]
    fn finish(&mut self, start: Time, size: u32) -> Time {
        if let Some(s) = &self.schedule {
            return match start.checked_sub(self.schedule_origin) {
                Some(at) => self.schedule_origin + s.finish(at, size),
                None => start + s.finish(0, size),
            };
        }
        let rate = self.rate_bps;
        if (self.serialization.size, self.serialization.rate) != (size, rate) {
            let bits_ns = size as u128 * 8 * 1_000_000_000;
            self.serialization = Serialization {
                size,
                rate,
                whole_ns: (bits_ns / rate as u128) as u64,
                remainder: (bits_ns % rate as u128) as u64,
            };
        }
        // (bits_ns + carry) / rate = q + (r + carry) / rate, and with r and carry below the
        // rate the second term is 0 or 1: the same quotient and remainder as dividing.
        let Serialization { whole_ns: q, remainder: r, .. } = self.serialization;
        if self.carry >= rate - r {
            self.carry -= rate - r;
            start + q + 1
        } else {
            self.carry += r;
            start + q
        }
    }

    /// Offer `p` arriving at `now`. Packets already waiting that the discipline drops to
    /// make room for it (FQ-CoDel's fat flow) go to `dropped` (counted here).
    #[inline(always)]
    pub fn offer(&mut self, now: Time, p: P, mut dropped: impl FnMut(P)) -> Offer {
        if self.busy.is_none() {
            self.busy = Some(p);
            return Offer::Started(self.finish(now, p.wire_bytes()));
        }
        let drops = &mut self.drops;
        let verdict = self.queue.admit(now, p, |d| {
            *drops += 1;
            dropped(d);
        });
        match verdict {
            Verdict::Pass => Offer::Queued,
            Verdict::Mark => {
                self.marks += 1;
                Offer::Queued
            }
            Verdict::Drop => {
                self.drops += 1;
                Offer::Dropped
            }
        }
    }

    /// The packet in service is done at `now`; returns it, whether random loss took it,
    /// and the finish time of the next packet if one starts. Each packet the discipline
    /// drops at dequeue on the way to the next one goes to `dropped` (counted here).
    #[inline]
    pub fn tx_done(&mut self, now: Time, mut dropped: impl FnMut(P)) -> (P, bool, Option<Time>) {
        let done = self.busy.take().expect("tx_done on an idle link");
        self.tx_bytes += done.wire_bytes() as u64;
        let lost = self.loss.lose(now);
        let next = self.queue.dequeue(now, |p| {
            self.drops += 1;
            dropped(p);
        });
        let next = next.map(|(p, verdict)| {
            if verdict == Verdict::Mark {
                self.marks += 1;
            }
            self.busy = Some(p);
            self.finish(now, p.wire_bytes())
        });
        (done, lost, next)
    }

    /// The packet being serialized, if any.
    pub fn in_service(&self) -> Option<&P> {
        self.busy.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{ect, pkt, Pkt};

    fn link(queue: QueueDiscipline, rate_bps: u64, buffer: Limit) -> Link<Pkt> {
        let spec = LinkSpec {
            rate_bps,
            buffer,
            queue,
            settings: QueueSettings::default(),
            loss: LossSpec::None,
            packet_bytes: 1500,
        };
        Link::new(&spec, 0, 0)
    }

    fn droptail(rate_bps: u64, buffer: Limit) -> Link<Pkt> {
        link(QueueDiscipline::DropTail, rate_bps, buffer)
    }

    #[test]
    fn the_link_counts_drops_and_marks_on_arrival_and_at_dequeue() {
        // 1500-byte packets at 12 Mbit/s: 1 ms each. The probe discipline (queue/probe.rs)
        // marks ECT packets, and drops others, arriving to 2 or more waiting or leaving
        // after 1 ms or more. At 0: the first packet starts at once; then a plain and an
        // ECT packet queue (0 and 1 waiting), an ECT one is marked (2 waiting: mark 1) and
        // a plain one dropped (3 waiting: drop 1).
        let mut l = link(QueueDiscipline::Probe, 12_000_000, Limit::Packets(10));
        let Offer::Started(t1) = l.offer(0, ect(1500), |_| {}) else { panic!("the link is idle") };
        let offers: Vec<Offer> =
            [pkt(1500), ect(1500), ect(1500), pkt(1500)].map(|p| l.offer(0, p, |_| panic!("no drop"))).into();
        assert!(matches!(offers[..], [Offer::Queued, Offer::Queued, Offer::Queued, Offer::Dropped]));
        assert_eq!((l.drops, l.marks), (1, 1));
        // At 1 ms the plain head waited 1 ms: dropped and handed over (drop 2); the ECT one
        // behind it leaves marked (mark 2), done at 2 ms; the marked one waited 2 ms when
        // it leaves: marked again (mark 3).
        let mut dropped = Vec::new();
        let (_, _, t2) = l.tx_done(t1, |p| dropped.push(p));
        assert_eq!((dropped, t2, l.in_service().map(|p| p.ce)), (vec![pkt(1500)], Some(2_000_000), Some(true)));
        let (done, _, t3) = l.tx_done(2_000_000, |_| panic!("no drop"));
        assert_eq!((done.ce, t3), (true, Some(3_000_000)));
        assert!(l.tx_done(3_000_000, |_| panic!("no drop")).2.is_none());
        assert_eq!((l.drops, l.marks), (2, 3));
    }

    #[test]
    fn a_schedule_runs_from_its_origin() {
        // 12 Mbit/s for the schedule's first second, then 6: a 1500-byte packet takes 1 ms,
        // then 2 ms. With the origin at path time 5 s, a packet at 5.5 s is in the first
        // step, one at 6.5 s in the second; one at 1 s, before the origin, takes as long
        // as at the schedule's time 0.
        const S: Time = 1_000_000_000;
        let mut l = droptail(12_000_000, Limit::Packets(10));
        l.vary(
            RateSchedule::new(&crate::ScheduleSpec::Steps {
                steps: vec![(0, 12_000_000), (S, 6_000_000)],
                repeat_ns: None,
            })
            .unwrap(),
        );
        l.set_schedule_origin(5 * S);
        for (start, fin) in [
            (5 * S + S / 2, 5 * S + S / 2 + S / 1000),
            (6 * S + S / 2, 6 * S + S / 2 + 2 * S / 1000),
            (S, S + S / 1000),
        ] {
            let Offer::Started(t) = l.offer(start, pkt(1500), |_| {}) else { panic!("the link is idle") };
            assert_eq!(t, fin);
            l.tx_done(t, |_| {});
        }
    }

    #[test]
    fn serialization_is_exact_on_average() {
        // 1500 B at 7 Mbps = 12000 bits / 7e6 = 1714285.71 ns; three packets = 5142857 ns.
        let mut l = droptail(7_000_000, Limit::Packets(10));
        let Offer::Started(t1) = l.offer(0, pkt(1500), |_| {}) else { panic!() };
        assert!(matches!(l.offer(0, pkt(1500), |_| {}), Offer::Queued));
        assert!(matches!(l.offer(0, pkt(1500), |_| {}), Offer::Queued));
        let (_, _, t2) = l.tx_done(t1, |_| {});
        let (_, _, t3) = l.tx_done(t2.unwrap(), |_| {});
        assert_eq!(t3.unwrap(), 5_142_857);
    }

    #[test]
    fn serialization_of_mixed_sizes_divides_exactly() {
        // Back to back, sizes changing now and then (data and ACKs), at an awkward rate: each
        // packet ends where sum(bits) * 1e9 / rate, rounded down, says.
        let rate = 999_999_937;
        let mut l = droptail(rate, Limit::Packets(10));
        let (mut now, mut bits_ns) = (0u64, 0u128);
        for k in 0..2000u32 {
            let size = [1500, 1500, 64, 1500, 577, 64][(k % 6) as usize] + k % 2;
            bits_ns += size as u128 * 8 * 1_000_000_000;
            let Offer::Started(t) = l.offer(now, pkt(size), |_| {}) else { panic!("the link is idle") };
            assert_eq!(t as u128, bits_ns / rate as u128);
            l.tx_done(t, |_| {});
            now = t;
        }
    }

    #[test]
    fn the_buffer_counts_waiting_packets_not_the_one_in_service() {
        // Limit 3 packets: one in service plus three waiting are accepted, the fifth drops.
        let mut l = droptail(1_000_000, Limit::Packets(3));
        let acc: Vec<bool> = (0..5).map(|_| !matches!(l.offer(0, pkt(100), |_| {}), Offer::Dropped)).collect();
        assert_eq!(acc, vec![true, true, true, true, false]);
        assert_eq!(l.drops, 1);
    }
}
