//! The emulated path of one way (A → B or B → A): this way's direction of every link (a
//! [`Direction`]: the link, then its delay lines), each packet following its flow's route
//! across them, as in the simulator (`sim/events.rs`): offered to its route's first link,
//! then after each link's delay line to the next, and written out after the last.
//!
//! A segment goes on to the next link at the time its delay line releases it, not when the
//! loop notices: [`Chain::advance`] takes the completions of every link and the releases of
//! every delay line in order of time (the virtual clock), so a link is never offered a
//! segment at a time before one it has already advanced to. A path of one link is one
//! [`Direction`] used exactly as before.

use cubiclab_path::Time;

use crate::config::{HopCfg, LinkWay};
use crate::path::{Direction, Fate, Seg, Slab};

/// No next link: the route ends here.
const END: u16 = u16::MAX;

pub struct Chain {
    /// This way's direction of each link, by the link's index in the path.
    pub hops: Vec<Direction>,
    /// Per flow, the link its route starts at (packets of no flow take link 0).
    first: Vec<u16>,
    /// Per flow and link (`flow * links + link`), the link its route crosses next, or END.
    next: Vec<u16>,
    /// Whether any route crosses more than one link; if none does, the links are apart.
    joined: bool,
}

impl Chain {
    /// `links` in the path's order; `routes[f]`: flow f's hops this way (a route crosses a
    /// link at most once); packets of no flow take link 0 and then `default_delay`.
    pub fn new(links: &[LinkWay<'_>], seed: u64, routes: &[Vec<HopCfg>], default_delay: Time) -> Self {
        let n = links.len();
        let mut next = vec![END; routes.len() * n];
        for (f, r) in routes.iter().enumerate() {
            for w in r.windows(2) {
                next[f * n + w[0].link as usize] = w[1].link;
            }
        }
        let hops = links
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let hop = |r: &Vec<HopCfg>| r.iter().find(|h| h.link as usize == k).map(|h| h.delay_ns);
                // A flow that does not cross link k never enters its lines: any delay will do.
                let delays: Vec<Time> = routes.iter().map(|r| hop(r).unwrap_or(default_delay)).collect();
                let through: Vec<bool> = (0..routes.len()).map(|f| next[f * n + k] != END).collect();
                Direction::new(l.spec, l.schedule, seed, l.stream, &delays, default_delay, &through)
            })
            .collect();
        let joined = next.iter().any(|&j| j != END);
        Chain { hops, first: routes.iter().map(|r| r[0].link).collect(), next, joined }
    }

    /// Take, in order of time up to `now`, every completed transmission (into its delay
    /// line, or lost) and every segment released to its next link (offered at its release
    /// time). Ties: completions first, as a link finishes what is due before it is offered
    /// more ([`Direction::offer`]). `fate` hears of each segment with its link's index.
    pub fn advance(&mut self, now: Time, slab: &mut Slab, mut fate: impl FnMut(usize, Fate<'_>)) {
        if !self.joined {
            // No segment goes from one link to another (a path of one link): each link
            // finishes what is due by now on its own, without looking for the next event.
            for (k, h) in self.hops.iter_mut().enumerate() {
                h.advance(now, slab, |f| fate(k, f));
            }
            return;
        }
        loop {
            let mut first: Option<(Time, bool, usize)> = None;
            for (k, h) in self.hops.iter().enumerate() {
                for e in [h.next_tx_done().map(|t| (t, false, k)), h.next_through().map(|t| (t, true, k))] {
                    if e.is_some() && (first.is_none() || e < first) {
                        first = e;
                    }
                }
            }
            let Some((t, through, k)) = first.filter(|e| e.0 <= now) else {
                return;
            };
            if !through {
                self.hops[k].advance(t, slab, |f| fate(k, f));
                continue;
            }
            let (due, s) = self.hops[k].take_through().expect("a segment is due");
            let j = self.next[s.flow as usize * self.hops.len() + k] as usize;
            self.hops[j].advance(due, slab, |f| fate(j, f));
            self.hops[j].offer_segment(due, s, slab, |f| fate(j, f));
        }
    }

    /// Offer every segment of the packet in `slot`, which arrived at `now`, to the first
    /// link of its flow's route.
    pub fn offer(&mut self, now: Time, slot: u32, flow: u16, slab: &mut Slab, mut fate: impl FnMut(usize, Fate<'_>)) {
        self.advance(now, slab, &mut fate);
        let k = self.first.get(flow as usize).map_or(0, |&k| k as usize);
        self.hops[k].offer(now, slot, flow, slab, |f| fate(k, f));
    }

    /// Hand `deliver` every run of segments due by `now` at the end of its route (see
    /// [`Direction::deliver`]).
    pub fn deliver(&mut self, now: Time, max_run: u32, mut deliver: impl FnMut(Seg, u16, &[Time])) {
        for h in &mut self.hops {
            h.deliver(now, max_run, &mut deliver);
        }
    }

    /// The earliest path time something is due on any link.
    pub fn next_due(&self) -> Option<Time> {
        self.hops.iter().filter_map(Direction::next_due).min()
    }

    /// The schedules' time 0 (the records' epoch), in path time.
    pub fn set_schedule_origin(&mut self, t: Time) {
        for h in &mut self.hops {
            h.link.set_schedule_origin(t);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::path::NO_FLOW;
    use crate::tun::Header;
    use cubiclab_path::{Limit, LinkSpec, LossSpec, QueueDiscipline, QueueSettings};

    const MS: Time = 1_000_000;

    pub(crate) fn spec(rate_bps: u64, buffer: u32, loss: LossSpec) -> LinkSpec {
        LinkSpec {
            rate_bps,
            buffer: Limit::Packets(buffer),
            queue: QueueDiscipline::DropTail,
            settings: QueueSettings::default(),
            loss,
            packet_bytes: 1500,
        }
    }

    /// A packet of `segments` segments of 1500 bytes on the wire.
    pub(crate) fn packet(slab: &mut Slab, segments: u16) -> u32 {
        let h = Header {
            hdr_len: 52,
            ip_hl: 20,
            gso_size: 1448,
            segments,
            ip_len: 52 + segments as u32 * 1448,
            ..Default::default()
        };
        let buf = slab.read_buffer();
        slab.insert(buf, h.ip_len as usize, h)
    }

    fn hops(h: &[(u16, Time)]) -> Vec<HopCfg> {
        h.iter().map(|&(link, delay_ns)| HopCfg { link, delay_ns }).collect()
    }

    /// (slot, index, due) of every segment delivered by `now`.
    fn delivered(c: &mut Chain, slab: &mut Slab, now: Time) -> Vec<(u32, u16, Time)> {
        c.advance(now, slab, |_, _| {});
        let mut out = vec![];
        c.deliver(now, 64, |first, n, dues| {
            out.extend((0..n).map(|i| (first.slot, first.index + i, dues[i as usize])));
        });
        out.sort_by_key(|e| e.2);
        out
    }

    /// Links 0 and 1 at 10 and 5 Mbit/s, 5 ms after each.
    fn two_links(routes: &[Vec<HopCfg>]) -> Chain {
        let (a, b) = (spec(10_000_000, 100, LossSpec::None), spec(5_000_000, 100, LossSpec::None));
        let links =
            [LinkWay { spec: &a, schedule: None, stream: 0 }, LinkWay { spec: &b, schedule: None, stream: 1 << 16 }];
        Chain::new(&links, 1, routes, 0)
    }

    #[test]
    fn a_segment_crosses_each_link_of_its_route_then_its_delay() {
        // Flow 0 crosses both links. A 1500-byte segment takes 1500 x 8 / 10 Mbit/s = 1.2 ms
        // on link 0 and 2.4 ms on link 1. Two segments arriving at 0 leave link 0 at 1.2
        // and 2.4 ms, reach link 1 at 6.2 and 7.4 ms; there the first leaves at 6.2 + 2.4 =
        // 8.6 ms and the second, queued behind it, at 8.6 + 2.4 = 11.0 ms; each is due 5 ms
        // later: 13.6 and 16.0 ms. The loop looks only at 20 ms: the second link is still
        // offered each segment at its own time.
        let mut c = two_links(&[hops(&[(0, 5 * MS), (1, 5 * MS)])]);
        let mut slab = Slab::default();
        let slot = packet(&mut slab, 2);
        c.offer(0, slot, 0, &mut slab, |_, _| {});
        assert_eq!(delivered(&mut c, &mut slab, 20 * MS), vec![(slot, 0, 13_600_000), (slot, 1, 16_000_000)]);
        let counts = |d: &Direction| (d.arrivals, d.tx_segments, d.link.tx_bytes);
        assert_eq!((counts(&c.hops[0]), counts(&c.hops[1])), ((2, 2, 3000), (2, 2, 3000)));
    }

    #[test]
    fn a_route_of_the_second_link_skips_the_first_and_shares_the_second() {
        // Flow 1 crosses link 1 only: its segment arriving at 6.0 ms leaves link 1 at 6.0 +
        // 2.4 = 8.4 ms, due 5 ms later at 13.4 ms; link 0 never sees it. Flow 0's segment,
        // from link 0 at 1.2 ms, reaches link 1 at 6.2 ms behind it: it leaves at 8.4 + 2.4 =
        // 10.8 ms, due at 15.8 ms (alone it would leave at 8.6).
        let mut c = two_links(&[hops(&[(0, 5 * MS), (1, 5 * MS)]), hops(&[(1, 5 * MS)])]);
        let mut slab = Slab::default();
        let long = packet(&mut slab, 1);
        c.offer(0, long, 0, &mut slab, |_, _| {});
        let cross = packet(&mut slab, 1);
        let mut links = vec![];
        c.offer(6 * MS, cross, 1, &mut slab, |k, _| links.push(k));
        assert_eq!(links, vec![0], "by 6 ms only link 0's transmission has finished");
        assert_eq!(delivered(&mut c, &mut slab, 20 * MS), vec![(cross, 0, 13_400_000), (long, 0, 15_800_000)]);
        assert_eq!((c.hops[0].arrivals, c.hops[1].arrivals), (1, 2));
    }

    #[test]
    fn packets_of_no_flow_take_the_first_link_and_the_default_delay() {
        // 1.2 ms on link 0, then the default delay of 3 ms: due at 4.2 ms.
        let (a, b) = (spec(10_000_000, 100, LossSpec::None), spec(5_000_000, 100, LossSpec::None));
        let links = [LinkWay { spec: &a, schedule: None, stream: 0 }, LinkWay { spec: &b, schedule: None, stream: 1 }];
        let mut c = Chain::new(&links, 1, &[hops(&[(1, 5 * MS)])], 3 * MS);
        let mut slab = Slab::default();
        let slot = packet(&mut slab, 1);
        c.offer(0, slot, NO_FLOW, &mut slab, |_, _| {});
        assert_eq!(delivered(&mut c, &mut slab, 20 * MS), vec![(slot, 0, 4_200_000)]);
    }

    /// What a one-link path did: every fate (kind, link time, slot, index) and delivery.
    #[derive(Default, Debug, PartialEq)]
    struct Log(Vec<(u8, Time, u32, u16)>, Vec<(u32, u16, u16, Vec<Time>)>);

    impl Log {
        fn fate(&mut self, f: Fate<'_>) {
            let (kind, t, s): (u8, Time, Seg) = match f {
                Fate::Dropped(t, s, _) => (0, t, s),
                Fate::Lost(t, s, _) => (1, t, s),
                Fate::Sent(t, s, _, _) => (2, t, s),
            };
            self.0.push((kind, t, s.slot, s.index));
        }
    }

    #[test]
    fn one_link_gives_the_fates_of_one_direction() {
        // The same arrivals through a Direction (the one-link path before chains) and a
        // Chain of that one link: a small buffer and random loss so that every fate occurs,
        // two flows with delays of their own and packets of no flow; the loop wakes at
        // irregular times. Fates and deliveries must be the same, in the same order.
        let s = spec(10_000_000, 4, LossSpec::Bernoulli { p: 0.1 });
        let (delays, default) = ([10 * MS, 20 * MS], 7 * MS);
        let mut d = Direction::new(&s, None, 42, 0, &delays, default, &[]);
        let routes = [hops(&[(0, delays[0])]), hops(&[(0, delays[1])])];
        let mut c = Chain::new(&[LinkWay { spec: &s, schedule: None, stream: 0 }], 42, &routes, default);
        let (mut slab_d, mut slab_c) = (Slab::default(), Slab::default());
        let (mut log_d, mut log_c) = (Log::default(), Log::default());
        let mut released = 0;
        for i in 0..400u64 {
            let t = i * 700_000;
            let (segments, flow) = ((i % 3 + 1) as u16, [0, 1, NO_FLOW][(i % 5 % 3) as usize]);
            let slot = packet(&mut slab_d, segments);
            assert_eq!(slot, packet(&mut slab_c, segments));
            d.offer(t, slot, flow, &mut slab_d, |f| log_d.fate(f));
            c.offer(t, slot, flow, &mut slab_c, |k, f| {
                assert_eq!(k, 0);
                log_c.fate(f)
            });
            if i % 7 == 0 {
                let now = t + 300_000;
                d.advance(now, &mut slab_d, |f| log_d.fate(f));
                c.advance(now, &mut slab_c, |_, f| log_c.fate(f));
                d.deliver(now, 64, |s, n, dues| log_d.1.push((s.slot, s.index, n, dues.to_vec())));
                c.deliver(now, 64, |s, n, dues| log_c.1.push((s.slot, s.index, n, dues.to_vec())));
                for &(slot, _, n, _) in &log_d.1[released..] {
                    slab_d.release(slot, n);
                    slab_c.release(slot, n);
                }
                released = log_d.1.len();
            }
            assert_eq!(d.next_due(), c.next_due());
        }
        let kinds = |l: &Log, k| l.0.iter().filter(|e| e.0 == k).count();
        assert!(kinds(&log_d, 0) > 0 && kinds(&log_d, 1) > 0 && log_d.1.len() > 50, "every fate occurs");
        assert_eq!(log_d, log_c);
    }
}
