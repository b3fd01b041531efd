//! What the emulator records: interval samples of the first link (link.csv) and of each
//! flow (flows.csv), drop and loss events on every link (events.csv), the lateness of
//! deliveries, and the run's summary (summary.txt, also returned, with every link
//! direction's totals). Each direction records on its own (it runs
//! in a thread of its own); [`write`] joins the two.

use std::fmt::Write as _;
use std::fs;

use crate::path::{Direction, Fate, NO_FLOW};
use crate::pcap::Tap;

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
}

/// One interval sample of a direction's bottleneck.
#[derive(Clone, Copy, Default)]
struct LinkRow {
    t: u64,
    queue: (usize, u64),
    max_queue: (usize, u64),
    drops: u64,
    random: u64,
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

/// Counters and records of one direction; times in the records are CLOCK_MONOTONIC.
pub struct Records {
    dir: usize,
    /// CLOCK_MONOTONIC of path time 0.
    start: u64,
    /// Per flow, forward only (a flow's data crosses the forward links), counted on every
    /// link it crosses, as the simulator counts.
    flows: Vec<FlowStats>,
    rows: Vec<LinkRow>,
    flows_csv: String,
    events_csv: String,
    n_events: usize,
    max_events: usize,
    pub events_lost: u64,
    pub late: Lateness,
    /// Largest queue since the last record, and over the run.
    max_q: (usize, u64),
    pub peak_q: (usize, u64),
    /// (drops, random losses, bytes sent) at the last record.
    prev: (u64, u64, u64),
    /// The packet capture of what leaves this direction's link, if asked for.
    pub tap: Option<Tap>,
    /// Every read and write, up to the capacity reserved at the start (`io_trace`), so
    /// that recording never reallocates mid-run.
    io: Vec<Io>,
    pub io_lost: u64,
}

impl Records {
    pub fn new(dir: usize, start: u64, nflows: usize, max_events: usize, tap: Option<Tap>, io_trace: usize) -> Self {
        Records {
            dir,
            start,
            flows: vec![FlowStats::default(); if dir == 0 { nflows } else { 0 }],
            rows: Vec::new(),
            flows_csv: String::new(),
            events_csv: String::new(),
            n_events: 0,
            max_events,
            events_lost: 0,
            late: Lateness::default(),
            max_q: (0, 0),
            peak_q: (0, 0),
            prev: (0, 0, 0),
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

    /// Note the queue after an arrival.
    pub fn queue(&mut self, q: (usize, u64)) {
        self.max_q = (self.max_q.0.max(q.0), self.max_q.1.max(q.1));
    }

    /// The interval record at CLOCK_MONOTONIC `t`.
    pub fn sample(&mut self, t: u64, dir: &Direction) {
        let l = &dir.link;
        let queue = dir.queue();
        self.rows.push(LinkRow {
            t,
            queue,
            max_queue: self.max_q,
            drops: l.drops - self.prev.0,
            random: l.loss.losses - self.prev.1,
            tx_bytes: l.tx_bytes - self.prev.2,
            late_max: self.late.interval_max,
        });
        self.prev = (l.drops, l.loss.losses, l.tx_bytes);
        self.peak_q = (self.peak_q.0.max(self.max_q.0), self.peak_q.1.max(self.max_q.1));
        self.max_q = queue;
        self.late.interval_max = 0;
        for (i, s) in self.flows.iter_mut().enumerate() {
            let _ = writeln!(self.flows_csv, "{t},{i},{},{},{},{}", s.tx_bytes, s.tx_packets, s.drops, s.random);
            *s = FlowStats::default();
        }
    }

    /// The run's end: the peak includes the last, unfinished interval.
    pub fn finish(&mut self) {
        self.peak_q = (self.peak_q.0.max(self.max_q.0), self.peak_q.1.max(self.max_q.1));
    }
}

/// Write link.csv, flows.csv and events.csv into `out` from the records of both
/// directions, and return the lateness of all deliveries.
pub fn write(out: &std::path::Path, fwd: &Records, rev: &Records) -> Result<Lateness, String> {
    let mut link = String::from(
        "t_ns,queue_packets,queue_bytes,max_queue_packets,max_queue_bytes,drops,random_losses,tx_bytes,rev_queue_packets,rev_drops,rev_random_losses,rev_tx_bytes,late_max_ns\n",
    );
    // Both directions sample on the same grid; a direction that stopped a turn early
    // lacks the last row.
    let mut rev_rows = rev.rows.iter().peekable();
    for f in &fwd.rows {
        let r = match rev_rows.peek() {
            Some(r) if r.t == f.t => *rev_rows.next().unwrap(),
            _ => LinkRow::default(),
        };
        let _ = writeln!(
            link,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            f.t,
            f.queue.0,
            f.queue.1,
            f.max_queue.0,
            f.max_queue.1,
            f.drops,
            f.random,
            f.tx_bytes,
            r.queue.0,
            r.drops,
            r.random,
            r.tx_bytes,
            f.late_max.max(r.late_max)
        );
    }
    let flows = format!("t_ns,flow,tx_bytes,tx_packets,drops,random_losses\n{}", fwd.flows_csv);
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

    #[test]
    fn io_rows_stop_at_the_reserved_capacity_and_read_back() {
        // Two rows reserved per direction: the third forward row is counted as lost, not
        // kept (the vector never grows mid-run). Times are path times; the file adds the
        // direction's start (1000 here).
        let mut fwd = Records::new(0, 1000, 1, 10, None, 2);
        let rev = Records::new(1, 1000, 1, 10, None, 2);
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
