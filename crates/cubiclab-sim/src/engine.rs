//! The event list: a binary heap of (time, sequence) keys. Packets in flight do not live
//! here — each delay line keeps its own FIFO and has at most one event in the heap — and
//! neither do the per-flow timers (retransmission, delayed ACK): they wait in a wheel of
//! 1 ms slots and leave it, at their exact time, only in the millisecond they are due,
//! sorted once into a run of which only the head is in the heap (with 10,000 flows a
//! millisecond holds some hundred timers, and every packet event would sift through them
//! in the heap). The events far ahead (flows' starts and stops, web sessions' requests)
//! wait in the wheel too and enter the heap itself, keeping the order among same-time
//! events that a push at scheduling would give them. So the heap holds O(links + delay
//! lines) entries whatever the number of flows, web sessions and the windows, and nothing
//! is allocated once the structures have grown.

/// Simulated time in nanoseconds.
pub type Time = u64;

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A link finished serializing its current packet.
    TxDone(u32),
    /// The packet at the head of a delay line arrives.
    PipeOut(u32),
    /// A flow's delayed-ACK timer.
    DelAck(u32),
    /// A flow's compressed-ACK timer (SACK compression).
    SackAck(u32),
    /// A flow's retransmission timer.
    Rto(u32),
    /// A paced flow's next departure time (the kernel's pacing timer).
    Pace(u32),
    /// A flow starts.
    Start(u32),
    /// A flow's application stops sending new data.
    Stop(u32),
    /// A web session requests its next object.
    Object(u32),
    /// Record a sample of every flow and link.
    Sample,
    /// Move the timers due in the next millisecond from the wheel to the due run.
    Tick,
    /// The due run's head, at its key.
    Due,
}

const SLOT_NS: u64 = 1_000_000;
const SLOTS: u64 = 4096;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    ev: Ev,
}

impl Entry {
    /// The order of events: by time, then by `seq`. Keys are unique (`seq`), so any correct
    /// heap, and any sort, gives the same order.
    #[inline]
    fn key(&self) -> u128 {
        // One 128-bit compare: branch-free, unlike the tuple's field by field.
        (self.time as u128) << 64 | self.seq as u128
    }

    /// Earlier, or as early and pushed first.
    #[inline]
    fn before(&self, o: &Entry) -> bool {
        self.key() < o.key()
    }
}

/// A binary min-heap of entries, written out so that it inlines into the event loop: std's
/// `BinaryHeap::pop` was compiled out of line there and cost about 120 instructions per
/// event on a heap of 4 entries.
///
/// The root is taken lazily: [`Heap::take_root`] leaves it in place as a hole, and the next
/// push fills the hole and sifts down from there, one pass instead of a pop's and a push's
/// (the event loop's handlers mostly push the next event of the link or delay line whose
/// event they handle first). A pop or a peek first removes a hole nothing filled.
#[derive(Default)]
struct Heap {
    v: Vec<Entry>,
    /// `v[0]` has been taken and is no longer in the heap.
    root_taken: bool,
}

impl Heap {
    /// The earliest entry, a hole left by `take_root` removed first.
    #[inline]
    fn peek(&mut self) -> Option<&Entry> {
        if self.root_taken {
            self.root_taken = false;
            let last = self.v.pop().expect("a taken root is in the heap");
            if !self.v.is_empty() {
                Self::sift_down(&mut self.v, last);
            }
        }
        self.v.first()
    }

    /// The earliest entry out (after `peek` found one), its place left as a hole.
    #[inline]
    fn take_root(&mut self) -> Entry {
        debug_assert!(!self.root_taken);
        self.root_taken = true;
        self.v[0]
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        if self.root_taken {
            self.root_taken = false;
            Self::sift_down(&mut self.v, e);
            return;
        }
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if !e.before(&self.v[parent]) {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }

    /// Put `e` into the hole at the root, moving earlier children up.
    #[inline]
    fn sift_down(v: &mut [Entry], e: Entry) {
        let n = v.len();
        let mut i = 0;
        loop {
            let mut child = 2 * i + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && v[child + 1].before(&v[child]) {
                child += 1;
            }
            if !v[child].before(&e) {
                break;
            }
            v[i] = v[child];
            i = child;
        }
        v[i] = e;
    }

    #[inline]
    fn len(&self) -> usize {
        self.v.len() - self.root_taken as usize
    }
}

/// Events ordered by time, ties broken by insertion order (deterministic).
pub struct EventQueue {
    heap: Heap,
    seq: u64,
    /// Events popped so far (wheel ticks not counted).
    pub processed: u64,
    /// Entries waiting for their millisecond: (time, event, the sequence number it keeps,
    /// or 0 to take one when it leaves the wheel).
    wheel: Vec<Vec<(Time, Ev, u64)>>,
    /// The timers of the wheel's last millisecond, sorted by key; those before `due_next`
    /// have been popped, and the next one is in the heap as an [`Ev::Due`] entry at its key.
    due: Vec<Entry>,
    due_next: usize,
    /// Every slot before this millisecond has left the wheel.
    cursor_ms: u64,
    in_wheel: usize,
    tick_pending: bool,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self {
            heap: Heap::default(),
            seq: 0,
            processed: 0,
            wheel: (0..SLOTS).map(|_| Vec::new()).collect(),
            due: Vec::new(),
            due_next: 0,
            cursor_ms: 0,
            in_wheel: 0,
            tick_pending: false,
        }
    }
}

impl EventQueue {
    /// Schedule a timer: like `push`, but it waits in the wheel until its millisecond, and
    /// among events of the same time it counts as pushed when it leaves the wheel.
    #[inline]
    pub fn push_timer(&mut self, time: Time, ev: Ev) {
        self.file(time, ev, 0);
    }

    /// Schedule an event far ahead (a flow's start, a web session's next request): it waits
    /// in the wheel like a timer, so that the heap stays as small as the links and delay
    /// lines, but keeps its place among events of the same time as if pushed now.
    #[inline]
    pub fn push_ahead(&mut self, time: Time, ev: Ev) {
        self.seq += 1;
        self.file(time, ev, self.seq);
    }

    /// The millisecond in which an entry leaves the wheel: a timer's own; an event pushed
    /// ahead one earlier, so that it is in the heap, with its sequence number, before the
    /// tick of its own millisecond, which may come after events of its very time.
    #[inline]
    fn due_ms(time: Time, seq: u64) -> u64 {
        if seq == 0 {
            time / SLOT_NS
        } else {
            (time / SLOT_NS).saturating_sub(1)
        }
    }

    #[inline]
    fn file(&mut self, time: Time, ev: Ev, seq: u64) {
        let ms = Self::due_ms(time, seq);
        if ms < self.cursor_ms {
            self.enter(time, ev, seq);
            return;
        }
        // Beyond the wheel's horizon: park in its last slot, to be re-filed from there.
        let slot = ms.min(self.cursor_ms + SLOTS - 1) % SLOTS;
        self.wheel[slot as usize].push((time, ev, seq));
        self.in_wheel += 1;
        if !self.tick_pending {
            self.tick_pending = true;
            let at = self.cursor_ms * SLOT_NS;
            self.push(at, Ev::Tick);
        }
    }

    /// Into the heap, with `seq` if it has one.
    #[inline]
    fn enter(&mut self, time: Time, ev: Ev, seq: u64) {
        if seq == 0 {
            self.push(time, ev);
        } else {
            self.heap.push(Entry { time, seq, ev });
        }
    }

    /// The wheel's next millisecond: its timers form the new due run, with the sequence
    /// numbers a push into the heap would have given them, in the same order; events pushed
    /// ahead enter the heap; the others are filed again.
    fn tick(&mut self) {
        let slot = (self.cursor_ms % SLOTS) as usize;
        let mut entries = std::mem::take(&mut self.wheel[slot]);
        self.in_wheel -= entries.len();
        let this_ms = self.cursor_ms;
        self.cursor_ms += 1;
        // Every timer of the last run was due before this tick's time.
        debug_assert_eq!(self.due_next, self.due.len());
        self.due.clear();
        self.due_next = 0;
        for (time, ev, seq) in entries.drain(..) {
            if Self::due_ms(time, seq) != this_ms {
                self.file(time, ev, seq);
            } else if seq == 0 {
                self.seq += 1;
                self.due.push(Entry { time, seq: self.seq, ev });
            } else {
                self.heap.push(Entry { time, seq, ev });
            }
        }
        self.due.sort_unstable_by_key(Entry::key);
        if let Some(&head) = self.due.first() {
            self.heap.push(Entry { ev: Ev::Due, ..head });
        }
        // Give the allocation back so the slot does not allocate again (unless a far timer
        // was just parked in this very slot again).
        if self.wheel[slot].is_empty() {
            self.wheel[slot] = entries;
        }
        self.tick_pending = false;
        if self.in_wheel > 0 {
            self.tick_pending = true;
            let at = self.cursor_ms * SLOT_NS;
            self.push(at, Ev::Tick);
        }
    }

    /// The due run's head, out; the next one's entry into the heap.
    // Out of line: inlined, it made the event loop around it longer for every event.
    #[inline(never)]
    fn take_due(&mut self) -> Entry {
        let e = self.due[self.due_next];
        self.due_next += 1;
        if let Some(&next) = self.due.get(self.due_next) {
            self.heap.push(Entry { ev: Ev::Due, ..next });
        }
        e
    }

    #[inline(always)]
    pub fn push(&mut self, time: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, ev });
    }

    /// The next event if it is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, Ev)> {
        loop {
            if self.heap.peek()?.time > until {
                return None;
            }
            let e = match self.heap.take_root() {
                Entry { ev: Ev::Tick, .. } => {
                    self.tick();
                    continue;
                }
                Entry { ev: Ev::Due, .. } => self.take_due(),
                e => e,
            };
            self.processed += 1;
            return Some((e.time, e.ev));
        }
    }

    /// Events pending in the heap and the due run (the wheel's not counted).
    pub fn len(&self) -> usize {
        // The due run's head is in both.
        self.heap.len() + (self.due.len() - self.due_next).saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_on_ties() {
        let mut q = EventQueue::default();
        q.push(5, Ev::Sample);
        q.push(3, Ev::Rto(1));
        q.push(3, Ev::Rto(2));
        assert_eq!(q.pop_until(10), Some((3, Ev::Rto(1))));
        assert_eq!(q.pop_until(10), Some((3, Ev::Rto(2))));
        assert_eq!(q.pop_until(4), None);
        assert_eq!(q.pop_until(5), Some((5, Ev::Sample)));
    }

    #[test]
    fn timers_fire_at_their_exact_time_in_order_with_packets() {
        // Timers at 2.5 ms, 1.25 ms and 9 s (beyond the 4.096 s horizon) and a packet event
        // at 2.5 ms pushed after the timer: order by time, then by when each entered the heap.
        let mut q = EventQueue::default();
        q.push_timer(2_500_000, Ev::Rto(1));
        q.push_timer(1_250_000, Ev::DelAck(2));
        q.push_timer(9_000_000_000, Ev::Rto(3));
        q.push(2_500_000, Ev::TxDone(0));
        assert_eq!(q.pop_until(u64::MAX), Some((1_250_000, Ev::DelAck(2))));
        assert_eq!(q.pop_until(u64::MAX), Some((2_500_000, Ev::TxDone(0))));
        assert_eq!(q.pop_until(u64::MAX), Some((2_500_000, Ev::Rto(1))));
        assert_eq!(q.pop_until(u64::MAX), Some((9_000_000_000, Ev::Rto(3))));
        assert_eq!(q.pop_until(u64::MAX), None);
        assert_eq!(q.processed, 4);
    }

    #[test]
    fn events_pushed_ahead_keep_their_place_among_same_time_events() {
        // A start pushed ahead to 5 ms (it waits in the wheel), then a packet event at 5 ms
        // pushed directly much later, and a timer at 5 ms: the start pops first, as if it
        // had been in the heap since it was pushed; the timer, which takes its place when
        // it leaves the wheel, pops after the packet event pushed before that. Also exactly
        // on the millisecond's boundary, where the wheel's tick shares the events' time.
        for at in [5_000_000u64, 5_300_000] {
            let mut q = EventQueue::default();
            q.push_ahead(at, Ev::Start(0));
            q.push_timer(at, Ev::Rto(1));
            q.push(1_000, Ev::TxDone(9));
            assert_eq!(q.pop_until(u64::MAX), Some((1_000, Ev::TxDone(9))));
            q.push(at, Ev::TxDone(2));
            assert_eq!(q.pop_until(u64::MAX), Some((at, Ev::Start(0))));
            assert_eq!(q.pop_until(u64::MAX), Some((at, Ev::TxDone(2))));
            assert_eq!(q.pop_until(u64::MAX), Some((at, Ev::Rto(1))));
            assert_eq!(q.pop_until(u64::MAX), None);
        }
    }

    #[test]
    fn the_heap_pops_by_time_then_push_order() {
        // Times from a fixed permutation with repeats; the expected order is the sort by
        // (time, push order).
        let times: Vec<u64> = (0..200u64).map(|k| (k * 37) % 23).collect();
        let mut q = EventQueue::default();
        for (k, &t) in times.iter().enumerate() {
            q.push(t, Ev::TxDone(k as u32));
        }
        let mut want: Vec<(u64, u32)> = times.iter().enumerate().map(|(k, &t)| (t, k as u32)).collect();
        want.sort();
        let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop_until(u64::MAX))
            .map(|(t, ev)| match ev {
                Ev::TxDone(k) => (t, k),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn pushes_between_pops_keep_the_order() {
        // The event loop's pattern, which fills the taken root's hole: pop one, push none to
        // three later ones. Against a sorted list of (time, push order).
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let (mut x, mut k, mut now) = (7u64, 0u32, 0u64);
        for _ in 0..5000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            for _ in 0..(x >> 62) {
                let t = now + (x >> 40) % 1000;
                q.push(t, Ev::TxDone(k));
                reference.push((t, k));
                k += 1;
                x = x.rotate_left(17);
            }
            reference.sort();
            assert_eq!(q.len(), reference.len());
            if let Some((t, ev)) = q.pop_until(u64::MAX) {
                let (rt, rk) = reference.remove(0);
                assert_eq!((t, ev), (rt, Ev::TxDone(rk)));
                now = t;
            }
        }
    }

    /// The engine's earlier design, kept as the reference for the order of events: every
    /// entry that left the wheel in one list, the earliest (time, sequence number) found by
    /// a scan; timers take their sequence number when they leave the wheel, events pushed
    /// ahead keep theirs and leave it a millisecond early, ticks are entries like any other.
    #[derive(Default)]
    struct Reference {
        list: Vec<(Time, u64, Ev)>,
        seq: u64,
        wheel: std::collections::BTreeMap<u64, Vec<(Time, Ev, u64)>>,
        cursor_ms: u64,
        tick_pending: bool,
    }

    impl Reference {
        fn push(&mut self, time: Time, ev: Ev) {
            self.seq += 1;
            self.list.push((time, self.seq, ev));
        }

        fn file(&mut self, time: Time, ev: Ev, seq: u64) {
            let ms = EventQueue::due_ms(time, seq);
            if ms < self.cursor_ms {
                match seq {
                    0 => self.push(time, ev),
                    _ => self.list.push((time, seq, ev)),
                }
                return;
            }
            // Beyond the wheel's horizon: parked, and filed again from there.
            self.wheel.entry(ms.min(self.cursor_ms + SLOTS - 1)).or_default().push((time, ev, seq));
            if !self.tick_pending {
                self.tick_pending = true;
                self.push(self.cursor_ms * SLOT_NS, Ev::Tick);
            }
        }

        fn pop_until(&mut self, until: Time) -> Option<(Time, Ev)> {
            loop {
                let (i, &(time, _, ev)) = self.list.iter().enumerate().min_by_key(|(_, e)| (e.0, e.1))?;
                if time > until {
                    return None;
                }
                self.list.remove(i);
                if ev != Ev::Tick {
                    return Some((time, ev));
                }
                let this_ms = self.cursor_ms;
                self.cursor_ms += 1;
                for (t, ev, seq) in self.wheel.remove(&this_ms).unwrap_or_default() {
                    match seq {
                        _ if EventQueue::due_ms(t, seq) != this_ms => self.file(t, ev, seq),
                        0 => self.push(t, ev),
                        _ => self.list.push((t, seq, ev)),
                    }
                }
                self.tick_pending = !self.wheel.is_empty();
                if self.tick_pending {
                    self.push(self.cursor_ms * SLOT_NS, Ev::Tick);
                }
            }
        }
    }

    #[test]
    fn timers_in_due_runs_pop_in_the_order_the_heap_gave_them() {
        // Timers, events pushed ahead and packet events on a coarse grid of times, so that
        // they often share a time, and bursts of hundreds of timers in one millisecond; pops
        // between the pushes, also bounded by `until` as the event loop's are; times beyond
        // the wheel's horizon (4.096 s).
        let mut q = EventQueue::default();
        let mut reference = Reference::default();
        let (mut x, mut now, mut k) = (11u64, 0u64, 0u32);
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let ahead = match x >> 61 {
                0..=3 => (x >> 20) % 4_000 * 1_000,
                4 | 5 => (x >> 20) % 40 * 100_000,
                _ => (x >> 20) % 9_000 * 1_000_000,
            };
            let (t, ev) = (now + ahead - ahead % 250_000, Ev::Rto(k));
            k += 1;
            if x % 500 == 0 {
                // A burst of timers at four times of one millisecond (a sort's sizes).
                for i in 0..300 {
                    let (t, ev) = (now + 2_000_000 + i % 4 * 250_000, Ev::DelAck(i as u32));
                    q.push_timer(t, ev);
                    reference.file(t, ev, 0);
                }
            }
            match (x >> 8) % 4 {
                0 => {
                    q.push(t, ev);
                    reference.push(t, ev);
                }
                1 => {
                    q.push_ahead(t, ev);
                    reference.seq += 1;
                    reference.file(t, ev, reference.seq);
                }
                _ => {
                    q.push_timer(t, ev);
                    reference.file(t, ev, 0);
                }
            }
            for _ in 0..(x >> 4) % 3 {
                let until = now + (x >> 30) % 3_000_000;
                let got = q.pop_until(until);
                assert_eq!(got, reference.pop_until(until));
                if let Some((t, _)) = got {
                    now = t;
                }
            }
        }
        while let Some(e) = q.pop_until(u64::MAX) {
            assert_eq!(Some(e), reference.pop_until(u64::MAX));
        }
        assert_eq!(reference.pop_until(u64::MAX), None);
    }
}
