//! Drop-tail: accept while the buffer has room (in packets or bytes), drop arrivals
//! otherwise. The limit is the queue's, so every verdict is `Pass`.

use super::{Buffer, Discipline};

pub struct DropTail;

impl Discipline for DropTail {
    type Settings = ();

    fn new(_: &(), _: &Buffer) -> Self {
        DropTail
    }
}

#[cfg(test)]
mod tests {
    use crate::queue::tests::queue;
    use crate::queue::{Limit, QueueDiscipline, Verdict};
    use crate::test_packet::pkt;

    #[test]
    fn packet_limit_drops_the_arrival_that_does_not_fit() {
        let mut q = queue(QueueDiscipline::DropTail, Limit::Packets(2));
        assert_eq!((q.enqueue(0, pkt(1500)), q.enqueue(0, pkt(1500))), (Verdict::Pass, Verdict::Pass));
        assert_eq!(q.enqueue(0, pkt(64)), Verdict::Drop);
        assert_eq!(q.len_packets(), 2);
    }

    #[test]
    fn byte_limit_counts_bytes() {
        // 3000 bytes hold two 1500-byte packets, then a 64-byte ACK does not fit.
        let mut q = queue(QueueDiscipline::DropTail, Limit::Bytes(3000));
        assert_eq!((q.enqueue(0, pkt(1500)), q.enqueue(0, pkt(1500))), (Verdict::Pass, Verdict::Pass));
        assert_eq!(q.enqueue(0, pkt(64)), Verdict::Drop);
        q.dequeue(0, |_| panic!("drop-tail drops no head"));
        assert_eq!(q.enqueue(0, pkt(64)), Verdict::Pass);
        assert_eq!(q.len_bytes(), 1564);
    }
}
