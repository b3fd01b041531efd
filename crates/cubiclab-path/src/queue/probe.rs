//! A discipline for the tests of the `Queue` and `Link` machinery, giving every verdict at
//! both ends: ECN-capable packets are marked, others dropped, on arrival when 2 or more
//! packets wait and on departure after 1 ms or more of waiting. (The real step marker,
//! `step.rs`, never drops.)

use super::{Buffer, Discipline, Fifo, Verdict};
use crate::{PathPacket, Time};

/// Packets waiting from which an arrival is marked.
const K: usize = 2;
/// Sojourn from which a departure is marked, ns.
const SOJOURN_NS: Time = 1_000_000;

pub struct Probe;

fn mark_or_drop<P: PathPacket>(p: &P) -> Verdict {
    if p.ecn_capable() {
        Verdict::Mark
    } else {
        Verdict::Drop
    }
}

impl Discipline for Probe {
    type Settings = ();

    fn new(_: &(), _: &Buffer) -> Self {
        Probe
    }

    fn arrive<P: PathPacket>(&mut self, _: Time, p: &P, fifo: &Fifo<P>, _: bool) -> Verdict {
        if fifo.len_packets() >= K {
            mark_or_drop(p)
        } else {
            Verdict::Pass
        }
    }

    fn depart<P: PathPacket>(&mut self, _: Time, p: &P, sojourn: Time, _: &Fifo<P>) -> Verdict {
        if sojourn >= SOJOURN_NS {
            mark_or_drop(p)
        } else {
            Verdict::Pass
        }
    }
}
