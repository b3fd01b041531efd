//! The per-flow timers (the sender's retransmission and pacing timers, the receiver's
//! delayed ACK). Each keeps at most one entry in the event queue: re-arming later leaves the
//! entry where it is, and the entry, when it fires early, moves itself to the new deadline.
//! The sender owns its deadlines ([`crate::tcp::Sender::poll_timeout`]); the engine owns
//! which entries it has queued.

use super::Sim;
use crate::engine::{Ev, Time};
use crate::tcp::Timer;

/// The times of a flow's sender timer entries in the event queue (0: none).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Queued {
    /// The retransmission timer's entry, in the timer wheel.
    rto: Time,
    /// The pacing timer's entry, exact.
    pace: Time,
}

impl Sim {
    /// Queue the retransmission timer if it is armed and no entry fires at or before it.
    #[inline]
    pub(super) fn sync_rto(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if let Some(t) = fl.sender.retransmission_timeout() {
            if fl.queued.rto == 0 || fl.queued.rto > t.at {
                fl.queued.rto = t.at;
                self.q.push_timer(t.at, Ev::Rto(f));
            }
        }
    }

    pub(super) fn on_rto_event(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.queued.rto != now {
            return; // superseded by an earlier entry
        }
        fl.queued.rto = 0;
        let Some(t) = fl.sender.retransmission_timeout() else { return };
        if t.at > now {
            // Re-armed later since this entry was queued: move it.
            fl.queued.rto = t.at;
            self.q.push_timer(t.at, Ev::Rto(f));
            return;
        }
        let events = fl.sender.stats.loss_events;
        let fired = fl.sender.on_retransmission_timer(now);
        self.note_loss(f, events, fired == Timer::Retransmit);
        self.transmit(f);
    }

    /// A paced sender waits for its departure time: queue one exact entry for it (the
    /// departure time only moves forward, so an entry already queued for it suffices).
    #[inline]
    pub(super) fn sync_pace(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if let Some(at) = fl.sender.pacing_deadline() {
            if fl.queued.pace != at {
                fl.queued.pace = at;
                self.q.push(at, Ev::Pace(f));
            }
        }
    }

    pub(super) fn on_pace_event(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if fl.queued.pace != self.now {
            return; // superseded
        }
        fl.queued.pace = 0;
        fl.sender.on_pacing_timer();
        self.transmit(f);
    }

    /// A segment is held for a delayed ACK: make sure a timer entry is pending.
    pub(super) fn arm_delack(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.receiver.delack_deadline == 0 {
            let at = now + fl.receiver.delack_delay();
            fl.receiver.delack_deadline = at;
            self.q.push_timer(at, Ev::DelAck(f));
        }
    }

    /// SACK compression's timer (`tcp_compressed_ack_kick`): the held ACKs leave as one.
    pub(super) fn on_sack_timer(&mut self, f: u32) {
        if self.flows[f as usize].receiver.sack_timer_fired(self.now) {
            self.send_ack(f);
        }
    }

    pub(super) fn on_delack(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.receiver.delack_deadline != now {
            return;
        }
        // Linux arms the timer when a segment is held and cancels it when an ACK goes out;
        // here the entry stays and is re-aimed at the oldest held segment's deadline.
        match fl.receiver.held_since() {
            Some(t) if t + fl.receiver.delack_delay() > now => {
                let at = t + fl.receiver.delack_delay();
                fl.receiver.delack_deadline = at;
                self.q.push_timer(at, Ev::DelAck(f));
            }
            Some(_) => {
                fl.receiver.delack_deadline = 0;
                fl.receiver.delack_fired();
                self.send_ack(f);
            }
            None => fl.receiver.delack_deadline = 0,
        }
    }
}
