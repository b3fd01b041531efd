//! The event list: a binary heap of (time, sequence) keys. Packets in flight do not live
//! here — each delay line keeps its own FIFO and has at most one event in the heap — so
//! the heap holds O(links + flows) entries whatever the windows, and pushing allocates
//! nothing once it has grown to that size.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    /// A flow's retransmission timer.
    Rto(u32),
    /// A flow starts.
    Start(u32),
    /// A flow's application stops sending new data.
    Stop(u32),
    /// A web session requests its next object.
    Object(u32),
    /// Record a sample of every flow and link.
    Sample,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (then first pushed) event.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

/// Events ordered by time, ties broken by insertion order (deterministic).
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// Events popped so far.
    pub processed: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, ev });
    }

    /// The next event if it is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, Ev)> {
        if self.heap.peek()?.time > until {
            return None;
        }
        let e = self.heap.pop()?;
        self.processed += 1;
        Some((e.time, e.ev))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
