//! A delay line: packets leave in the order they entered, each after a fixed delay.
//! Only its head is ever scheduled, so the event heap stays small.

use std::collections::VecDeque;

use crate::engine::Time;
use crate::packet::Packet;

pub struct Pipe {
    pub delay: Time,
    fifo: VecDeque<(Time, Packet)>,
}

impl Pipe {
    pub fn new(delay: Time) -> Self {
        Self { delay, fifo: VecDeque::new() }
    }

    /// Put a packet in at `now`; returns its exit time if it is the new head (schedule it).
    #[inline]
    pub fn push(&mut self, now: Time, p: Packet) -> Option<Time> {
        let exit = now + self.delay;
        self.fifo.push_back((exit, p));
        (self.fifo.len() == 1).then_some(exit)
    }

    /// Take the head; returns it and the exit time of the next head, if any.
    #[inline]
    pub fn pop(&mut self) -> (Packet, Option<Time>) {
        let (_, p) = self.fifo.pop_front().expect("PipeOut scheduled for an empty pipe");
        (p, self.fifo.front().map(|e| e.0))
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
