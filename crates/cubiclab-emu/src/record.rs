//! What the emulator records: interval samples of every link (link.csv) and of each flow
//! (flows.csv), both ways, marks included (the links' CE marks; a flow's CE-marked
//! segments delivered), drop and loss events on every link (events.csv), the lateness of
//! deliveries, and the run's summary (summary.txt, also returned, with every link
//! direction's totals). Each direction records on its own (it runs in a thread of its
//! own); [`write`] joins the two.

use std::fmt::Write as _;
use std::fs;

use crate::path::{Direction, Fate, Seg, NO_FLOW};
use crate::pcap::Tap;
use cubiclab_path::Ecn;

const LATE_BUCKETS: usize = 10_001;

/// Lateness histogram: 1 us buckets up to 10 ms, then one overflow bucket.
pub struct Lateness {
    buckets: Vec<u64>,
    pub n: u64,
    sum: u128,
    pub max: u64,
    /// Largest since the last interval record.
    interval_max: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness { buckets: vec![0; LATE_BUCKETS], n: 0, sum: 0, max: 0, interval_max: 0 }
    }
}

impl Lateness {
    pub fn add(&mut self, ns: u64) {
        let us = (ns / 1000).min(LATE_BUCKETS as u64 - 1) as usize;
        self.buckets[us] += 1;
        self.n += 1;
        self.sum += ns as u128;
        self.max = self.max.max(ns);
        self.interval_max = self.interval_max.max(ns);
    }

    fn merge(&mut self, o: &Lateness) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.n += o.n;
        self.sum += o.sum;
        self.max = self.max.max(o.max);
    }

    pub fn mean_ns(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            (self.sum / self.n as u128) as u64
        }
    }

    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let target = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, c) in self.buckets.iter().enumerate() {
            acc += c;
            if acc >= target {
                return i as u64;
            }
        }
        LATE_BUCKETS as u64 - 1
    }
}

#[derive(Clone, Copy, Default)]
struct FlowStats {
    tx_bytes: u64,
    tx_packets: u64,
    drops: u64,
    random: u64,
    /// CE-marked segments delivered at the end of its route (to the receiving kernel).
    marks: u64,
}

/// One interval sample of one link's direction.
#[derive(Clone, Copy, Default)]
struct LinkRow {
    t: u64,
    link: usize,
    queue: (usize, u64),
    max_queue: (usize, u64),
    drops: u64,
    random: u64,
    marks: u64,
    tx_bytes: u64,
    late_max: u64,
}

/// What an `io.csv` row records.
#[derive(Clone, Copy)]
pub enum IoKind {
    /// A read from the TUN device: its segments, the bottleneck's queue after them.
    Read,
    /// A write into the other TUN device: its segments, how late its first segment was,
    /// how long the write took (the receiving kernel's work runs in it).
    Write,
    /// The loop's wait ended (`segments`: 0 by its time-out, 1 by a packet or the control
    /// pipe); `late`: how long after the time it was to wake (negative: woken early).
    Wake,
}

/// One row of `io.csv`.
#[derive(Clone, Copy)]
pub struct Io {
    pub t: u64,
    pub kind: IoKind,
    pub segments: u16,
    pub queue: u32,
    /// TCP sequence number of the first segment.
    pub seq: u32,
    /// Its acknowledgment number (reads and writes; 0 in wakes).
    pub ack: u32,
    pub late: i64,
    pub dur: u64,
}

/// A link direction's counters at the last record, and its largest queue over the run.
#[derive(Clone, Copy, Default)]
struct LinkMark {
    drops: u64,
    random: u64,
    marks: u64,
    tx_bytes: u64,
    peak_queue: (usize, u64),
}

/// Counters and records of one direction; times in the records are CLOCK_MONOTONIC.
pub struct Records {
    dir: usize,
    /// CLOCK_MONOTONIC of path time 0.
    start: u64,
    /// Per flow, what of its packets (by port: its data one way, its ACKs the other) left
    /// this direction's links, counted on every link it crosses, as the simulator counts.
    flows: Vec<FlowStats>,
    rows: Vec<LinkRow>,
    /// Per link.
    marks: Vec<LinkMark>,
    flows_csv: String,
    events_csv: String,
    n_events: usize,
    max_events: usize,
    pub events_lost: u64,
    pub late: Lateness,
    /// The packet capture of what leaves this direction's link, if asked for.
    pub tap: Option<Tap>,
    /// Every read and write, up to the capacity reserved at the start (`io_trace`), so
    /// that recording never reallocates mid-run.
    io: Vec<Io>,
    pub io_lost: u64,
}

impl Records {
    pub fn new(
        dir: usize,
        start: u64,
        (nflows, nlinks): (usize, usize),
        max_events: usize,
        tap: Option<Tap>,
        io_trace: usize,
    ) -> Self {
        Records {
            dir,
            start,
            flows: vec![FlowStats::default(); nflows],
            rows: Vec::new(),
            marks: vec![LinkMark::default(); nlinks],
            flows_csv: String::new(),
            events_csv: String::new(),
            n_events: 0,
            max_events,
            events_lost: 0,
            late: Lateness::default(),
            tap,
            io: Vec::with_capacity(io_trace),
            io_lost: 0,
        }
    }

    /// Note a read, a write or a wake-up (its time `t` in path time).
    pub fn io(&mut self, e: Io) {
        if self.io.len() < self.io.capacity() {
            self.io.push(e);
        } else if self.io.capacity() > 0 {
            self.io_lost += 1;
        }
    }

    /// Count what happened to a segment on link `link`.
    pub fn fate(&mut self, link: usize, f: Fate) {
        let (t, s, seq, kind) = match f {
            Fate::Sent(t, s, slot, lost) => {
                if let Some(st) = self.flows.get_mut(s.flow as usize) {
                    st.tx_bytes += s.bytes as u64;
                    st.tx_packets += 1;
                }
                // The tap is after its link's random loss, as the simulator's.
                if let Some(tap) = self.tap.as_mut().filter(|t| !lost && t.link == link) {
                    tap.segment(t, s, slot);
                }
                return;
            }
            Fate::Dropped(t, s, seq) => (t, s, seq, 0),
            Fate::Lost(t, s, seq) => (t, s, seq, 1),
        };
        if let Some(st) = self.flows.get_mut(s.flow as usize) {
            if kind == 0 {
                st.drops += 1;
            } else {
                st.random += 1;
            }
        }
        if self.n_events < self.max_events {
            let flow = if s.flow == NO_FLOW { -1 } else { s.flow as i32 };
            let (t, dir, len) = (self.start + t, self.dir, s.bytes);
            let _ = writeln!(self.events_csv, "{t},{dir},{flow},{kind},{seq},{len},{link}");
            self.n_events += 1;
        } else {
            self.events_lost += 1;
        }
    }

    /// A run of `n` segments from `first` on was written to the receiving side.
    pub fn delivered(&mut self, first: Seg, n: u16) {
        if let Some(st) = self.flows.get_mut(first.flow as usize).filter(|_| first.ecn == Ecn::Ce) {
            st.marks += n as u64;
        }
    }

    /// The interval record at CLOCK_MONOTONIC `t` of this direction's `links`.
    pub fn sample(&mut self, t: u64, links: &mut [Direction]) {
        for (k, (d, m)) in links.iter_mut().zip(&mut self.marks).enumerate() {
            let max_queue = d.take_max_queue();
            let l = &d.link;
            self.rows.push(LinkRow {
                t,
                link: k,
                queue: d.queue(),
                max_queue,
                drops: l.drops - m.drops,
                random: l.loss.losses - m.random,
                marks: l.marks - m.marks,
                tx_bytes: l.tx_bytes - m.tx_bytes,
                late_max: self.late.interval_max,
            });
            (m.drops, m.random, m.marks, m.tx_bytes) = (l.drops, l.loss.losses, l.marks, l.tx_bytes);
            m.peak_queue = (m.peak_queue.0.max(max_queue.0), m.peak_queue.1.max(max_queue.1));
        }
        self.late.interval_max = 0;
        let d = self.dir;
        for (i, s) in self.flows.iter_mut().enumerate() {
            let (tx, n, drops, random, marks) = (s.tx_bytes, s.tx_packets, s.drops, s.random, s.marks);
            let _ = writeln!(self.flows_csv, "{t},{d},{i},{tx},{n},{drops},{random},{marks}");
            *s = FlowStats::default();
        }
    }

    /// The run's end: the peaks include the last, unfinished interval.
    pub fn finish(&mut self, links: &mut [Direction]) {
        for (d, m) in links.iter_mut().zip(&mut self.marks) {
            let q = d.take_max_queue();
            m.peak_queue = (m.peak_queue.0.max(q.0), m.peak_queue.1.max(q.1));
        }
    }

    /// Link `k`'s largest queue over the run (packets, bytes), after [`Records::finish`].
    pub fn peak_queue(&self, k: usize) -> (usize, u64) {
        self.marks[k].peak_queue
    }
}

/// Write link.csv, flows.csv and events.csv into `out` from the records of both
/// directions (the forward's rows, then the reverse's), and return the lateness of all
/// deliveries.
pub fn write(out: &std::path::Path, fwd: &Records, rev: &Records) -> Result<Lateness, String> {
    let mut link = String::from(
        "t_ns,dir,link,queue_packets,queue_bytes,max_queue_packets,max_queue_bytes,drops,random_losses,marks,tx_bytes,\
         late_max_ns\n",
    );
    for r in [fwd, rev] {
        for l in &r.rows {
            let (t, d, k, q, m) = (l.t, r.dir, l.link, l.queue, l.max_queue);
            let (drops, random, marks, tx, late) = (l.drops, l.random, l.marks, l.tx_bytes, l.late_max);
            let _ = writeln!(link, "{t},{d},{k},{},{},{},{},{drops},{random},{marks},{tx},{late}", q.0, q.1, m.0, m.1);
        }
    }
    let flows =
        format!("t_ns,dir,flow,tx_bytes,tx_packets,drops,random_losses,marks\n{}{}", fwd.flows_csv, rev.flows_csv);
    let events = format!("t_ns,dir,flow,kind,seq,len,link\n{}{}", fwd.events_csv, rev.events_csv);
    for (name, text) in [("link.csv", &link), ("flows.csv", &flows), ("events.csv", &events)] {
        fs::write(out.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    if fwd.io.capacity() > 0 {
        let mut io = String::from("t_ns,dir,kind,segments,queue_packets,seq,ack,late_ns,dur_ns\n");
        for r in [fwd, rev] {
            for e in &r.io {
                let kind = match e.kind {
                    IoKind::Read => "read",
                    IoKind::Write => "write",
                    IoKind::Wake => "wake",
                };
                let (t, d) = (r.start + e.t, r.dir);
                let (n, q, seq, ack, late, dur) = (e.segments, e.queue, e.seq, e.ack, e.late, e.dur);
                let _ = writeln!(io, "{t},{d},{kind},{n},{q},{seq},{ack},{late},{dur}");
            }
        }
        fs::write(out.join("io.csv"), io).map_err(|e| format!("io.csv: {e}"))?;
    }
    let mut late = Lateness::default();
    late.merge(&fwd.late);
    late.merge(&rev.late);
    Ok(late)
}

/// What a run did, as `key value` lines.
pub struct Summary(pub Vec<(String, String)>);

impl Summary {
    pub fn text(&self) -> String {
        self.0.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::tests::{packet, spec};
    use crate::path::Slab;
    use cubiclab_path::{Limit, LossSpec, QueueDiscipline, StepSpec};

    #[test]
    fn every_link_is_sampled_and_every_flow_counted_each_way() {
        // Two links at 10 Mbit/s (1500 bytes: 1.2 ms) with a one-packet buffer. At 0, flow
        // 0 offers three segments to link 0: one in service, one queued (the interval's
        // largest queue, 1 packet), one dropped; flow 1 one segment to link 1. By 10 ms
        // link 0 has sent 3000 bytes, link 1 1500. One record at 10 ms: a row per link
        // (this direction's), the queue empty again; per flow its bytes, packets and drops.
        let spec = spec(10_000_000, 1, LossSpec::None);
        let mut links: Vec<Direction> = (0..2).map(|k| Direction::new(&spec, None, 1, k, &[0, 0], 0, &[])).collect();
        let mut slab = Slab::default();
        let (a, b) = (packet(&mut slab, 3), packet(&mut slab, 1));
        let mut fwd = Records::new(0, 1000, (2, 2), 10, None, 0);
        for (k, slot, flow) in [(0, a, 0), (1, b, 1)] {
            links[k].offer(0, slot, flow, &mut slab, |f| fwd.fate(k, f));
        }
        for (k, d) in links.iter_mut().enumerate() {
            d.advance(10_000_000, &mut slab, |f| fwd.fate(k, f));
        }
        fwd.sample(1000 + 10_000_000, &mut links);
        fwd.finish(&mut links);
        assert_eq!((fwd.peak_queue(0), fwd.peak_queue(1)), ((1, 1500), (0, 0)));
        let rev = Records::new(1, 1000, (2, 2), 10, None, 0);
        let dir = std::env::temp_dir().join(format!("cubiclab-emu-links-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        write(&dir, &fwd, &rev).unwrap();
        let read = |name| fs::read_to_string(dir.join(name)).unwrap();
        let (link, flows) = (read("link.csv"), read("flows.csv"));
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            link,
            "t_ns,dir,link,queue_packets,queue_bytes,max_queue_packets,max_queue_bytes,drops,random_losses,marks,\
             tx_bytes,late_max_ns\n10001000,0,0,0,0,1,1500,1,0,0,3000,0\n10001000,0,1,0,0,0,0,0,0,0,1500,0\n"
        );
        assert_eq!(
            flows,
            "t_ns,dir,flow,tx_bytes,tx_packets,drops,random_losses,marks\n10001000,0,0,3000,2,1,0,0\n\
             10001000,0,1,1500,1,0,0,0\n"
        );
    }

    #[test]
    fn a_mark_splits_its_super_packet_and_is_counted_on_the_link_and_the_flow() {
        // A step marker with K = 1 packet at 10 Mbit/s (1.2 ms per 1500 bytes), 5 ms after
        // the link. An ECT(0) super-packet of 4 segments arrives at 0: segment 0 goes into
        // service, 1 and 2 find 0 and 1 waiting (not above K), 3 finds 2 (above K): marked.
        // They are due at 6.2, 7.4, 8.6 and 9.8 ms; at 10 ms the first three leave as one
        // run, the marked one as a run of its own, CE; the link counts one mark, the flow
        // one CE segment delivered.
        let mut link = spec(10_000_000, 100, LossSpec::None);
        link.queue = QueueDiscipline::Step;
        link.settings.step = StepSpec { threshold: Limit::Packets(1) };
        let mut d = Direction::new(&link, None, 1, 0, &[5_000_000], 0, &[]);
        let mut slab = Slab::default();
        let slot = packet(&mut slab, 4);
        slab.slots[slot as usize].header.ip_ecn = Ecn::Ect0.bits();
        let mut fwd = Records::new(0, 0, (1, 1), 10, None, 0);
        d.offer(0, slot, 0, &mut slab, |f| fwd.fate(0, f));
        d.advance(10_000_000, &mut slab, |f| fwd.fate(0, f));
        let mut runs = vec![];
        d.deliver(10_000_000, 64, |first, n, _| {
            runs.push((first.index, n, first.ecn));
            fwd.delivered(first, n);
        });
        assert_eq!(runs, vec![(0, 3, Ecn::Ect0), (3, 1, Ecn::Ce)]);
        assert_eq!(d.link.marks, 1);
        fwd.sample(10_000_000, std::slice::from_mut(&mut d));
        let row = fwd.rows[0];
        assert_eq!((row.marks, row.drops, fwd.flows_csv.as_str()), (1, 0, "10000000,0,0,6000,4,0,0,1\n"));
    }

    #[test]
    fn io_rows_stop_at_the_reserved_capacity_and_read_back() {
        // Two rows reserved per direction: the third forward row is counted as lost, not
        // kept (the vector never grows mid-run). Times are path times; the file adds the
        // direction's start (1000 here).
        let mut fwd = Records::new(0, 1000, (1, 1), 10, None, 2);
        let rev = Records::new(1, 1000, (1, 1), 10, None, 2);
        let row = |t, kind, late| Io { t, kind, segments: 3, queue: 7, seq: 42, ack: 9, late, dur: 5 };
        fwd.io(row(10, IoKind::Read, 0));
        fwd.io(row(20, IoKind::Wake, -4));
        fwd.io(row(30, IoKind::Write, 9));
        assert_eq!((fwd.io.len(), fwd.io_lost), (2, 1));
        let dir = std::env::temp_dir().join(format!("cubiclab-emu-io-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        write(&dir, &fwd, &rev).unwrap();
        let text = fs::read_to_string(dir.join("io.csv")).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            text,
            "t_ns,dir,kind,segments,queue_packets,seq,ack,late_ns,dur_ns\n1010,0,read,3,7,42,9,0,5\n1020,0,wake,3,7,42,9,-4,5\n"
        );
    }
}
