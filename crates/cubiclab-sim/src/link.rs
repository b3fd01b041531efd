//! A link: a buffer (queue discipline) in front of a transmitter of fixed rate.
//! Propagation is the delay lines' job (see `pipe.rs`).

use crate::engine::Time;
use crate::loss::RandomLoss;
use crate::packet::Packet;
use crate::queue::Queue;

pub struct Link {
    pub rate_bps: u64,
    pub queue: Queue,
    /// The packet being serialized, if any.
    busy: Option<Packet>,
    /// Remainder of bits·1e9 / rate, carried so serialization times are exact on average.
    carry: u64,
    /// Bytes that finished serialization (for utilisation).
    pub tx_bytes: u64,
    /// Congestion drops (buffer full, or the queue discipline).
    pub drops: u64,
    /// Random losses of packets leaving the link.
    pub loss: RandomLoss,
}

/// What became of a packet offered to a link.
pub enum Offer {
    /// Started serializing at once; schedule `TxDone` at this time.
    Started(Time),
    Queued,
    Dropped,
}

impl Link {
    pub fn new(rate_bps: u64, queue: Queue, loss: RandomLoss) -> Self {
        Self { rate_bps, queue, busy: None, carry: 0, tx_bytes: 0, drops: 0, loss }
    }

    #[inline]
    fn serialization(&mut self, size: u32) -> Time {
        let num = size as u128 * 8 * 1_000_000_000 + self.carry as u128;
        let r = self.rate_bps as u128;
        self.carry = (num % r) as u64;
        (num / r) as Time
    }

    #[inline]
    pub fn offer(&mut self, now: Time, p: Packet) -> Offer {
        if self.busy.is_none() {
            self.busy = Some(p);
            return Offer::Started(now + self.serialization(p.size));
        }
        if self.queue.enqueue(now, p) {
            Offer::Queued
        } else {
            self.drops += 1;
            Offer::Dropped
        }
    }

    /// The packet in service is done; returns it, whether random loss took it, and the
    /// finish time of the next packet if one starts.
    #[inline]
    pub fn tx_done(&mut self, now: Time) -> (Packet, bool, Option<Time>) {
        let done = self.busy.take().expect("TxDone on an idle link");
        self.tx_bytes += done.size as u64;
        let lost = self.loss.lose(now);
        let next = self.queue.dequeue(now).map(|p| {
            self.busy = Some(p);
            now + self.serialization(p.size)
        });
        (done, lost, next)
    }

    pub fn in_service_flow(&self, flow: u32) -> usize {
        self.busy.map_or(0, |p| (p.flow == flow && !p.is_ack) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossSpec;
    use crate::queue::{DropTail, Limit};
    use crate::rng::Rng;

    #[test]
    fn serialization_is_exact_on_average() {
        // 1500 B at 7 Mbps = 12000 bits / 7e6 = 1714285.71 ns; three packets = 5142857 ns.
        let mut l = Link::new(
            7_000_000,
            Queue::DropTail(DropTail::new(Limit::Packets(10))),
            RandomLoss::new(LossSpec::None, Rng::new(0, 0)),
        );
        let p = Packet { flow: 0, conn: 0, seq: 0, sack: 0, size: 1500, is_ack: false };
        let Offer::Started(t1) = l.offer(0, p) else { panic!() };
        assert!(matches!(l.offer(0, p), Offer::Queued));
        assert!(matches!(l.offer(0, p), Offer::Queued));
        let (_, _, t2) = l.tx_done(t1);
        let (_, _, t3) = l.tx_done(t2.unwrap());
        assert_eq!(t3.unwrap(), 5_142_857);
    }
}
