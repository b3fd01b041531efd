//! A delay line: packets leave in the order they entered, each after a fixed delay (and,
//! on a line that ends routes under the hosts' timing model, its host's delay).
//! Only its head is ever scheduled, so the event heap stays small.

use std::collections::VecDeque;

use crate::engine::Time;
use crate::packet::Packet;

pub struct Pipe {
    pub delay: Time,
    fifo: VecDeque<(Time, Packet)>,
    /// When the last packet entered ([`Pipe::push_late`] only): the gap before the next
    /// is how long its host was idle.
    last_in: Time,
}

impl Pipe {
    pub fn new(delay: Time) -> Self {
        Self { delay, fifo: VecDeque::new(), last_in: 0 }
    }

    /// Put a packet in at `now`; returns its exit time if it is the new head (schedule it).
    #[inline]
    pub fn push(&mut self, now: Time, p: Packet) -> Option<Time> {
        let exit = now + self.delay;
        self.fifo.push_back((exit, p));
        (self.fifo.len() == 1).then_some(exit)
    }

    /// [`Pipe::push`] of a packet that leaves `extra(idle)` later than the delay, but not
    /// before the packet ahead of it; `idle`: the time since the packet before it entered.
    #[inline]
    pub fn push_late(&mut self, now: Time, extra: impl FnOnce(Time) -> Time, p: Packet) -> Option<Time> {
        let idle = now - std::mem::replace(&mut self.last_in, now);
        let exit = (now + self.delay + extra(idle)).max(self.fifo.back().map_or(0, |e| e.0));
        self.fifo.push_back((exit, p));
        (self.fifo.len() == 1).then_some(exit)
    }

    /// Take the head; returns it and the exit time of the next head, if any.
    #[inline]
    pub fn pop(&mut self) -> (Packet, Option<Time>) {
        let (_, p) = self.fifo.pop_front().expect("PipeOut scheduled for an empty pipe");
        (p, self.fifo.front().map(|e| e.0))
    }

    /// The packet at the head, next to leave.
    #[inline]
    pub fn head(&self) -> Option<&Packet> {
        self.fifo.front().map(|e| &e.1)
    }

    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    pub fn count_flow(&self, flow: u32) -> usize {
        self.fifo.iter().filter(|(_, p)| p.flow == flow && !p.is_ack()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_packets_leave_in_order() {
        // Delay 10; packets in at 0, 1, 2 with extra 50, 5, 0: due at 60, 16, 12, but none may
        // overtake the one ahead, so all three leave at 60. A fourth at 100 with extra 0
        // leaves at 110. The idle times handed to `extra` are the gaps between entries.
        let mut pipe = Pipe::new(10);
        let p = Packet::data(0, 0, 0, 1500, 0, 0);
        let mut idle = vec![];
        let mut push = |now, extra| {
            pipe.push_late(
                now,
                |i| {
                    idle.push(i);
                    extra
                },
                p,
            )
        };
        assert_eq!(push(0, 50), Some(60));
        assert_eq!((push(1, 5), push(2, 0), push(100, 0)), (None, None, None));
        assert_eq!(idle, vec![0, 1, 1, 98]);
        let exits: Vec<Time> = std::iter::from_fn(|| (!pipe.is_empty()).then(|| pipe.pop().1)).flatten().collect();
        assert_eq!(exits, vec![60, 60, 110]);
    }
}
