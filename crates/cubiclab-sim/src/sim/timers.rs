//! The per-flow timers (retransmission, delayed ACK). Each keeps at most one entry in the
//! event queue's timer wheel: re-arming later leaves the entry where it is, and the entry,
//! when it fires early, moves itself to the new deadline.

use super::Sim;
use crate::engine::Ev;

impl Sim {
    /// Queue the retransmission timer if it is armed and no entry fires at or before it.
    #[inline]
    pub(super) fn sync_rto(&mut self, f: u32) {
        let s = &mut self.flows[f as usize].sender;
        if s.rto_deadline != 0 && (s.rto_queued == 0 || s.rto_queued > s.rto_deadline) {
            s.rto_queued = s.rto_deadline;
            self.q.push_timer(s.rto_deadline, Ev::Rto(f));
        }
    }

    pub(super) fn on_rto_event(&mut self, f: u32) {
        let now = self.now;
        let s = &mut self.flows[f as usize].sender;
        if s.rto_queued != now {
            return; // superseded by an earlier entry
        }
        s.rto_queued = 0;
        if s.rto_deadline == 0 {
            return;
        }
        if s.rto_deadline > now {
            // Re-armed later since this entry was queued: move it.
            s.rto_queued = s.rto_deadline;
            let d = s.rto_deadline;
            self.q.push_timer(d, Ev::Rto(f));
            return;
        }
        let events = s.stats.loss_events;
        let timeout = s.on_rto(now);
        self.note_loss(f, events, timeout);
        self.transmit(f);
    }

    /// A paced sender waits for its departure time: queue one exact entry for it (the
    /// departure time only moves forward, so an entry already queued for it suffices).
    #[inline]
    pub(super) fn sync_pace(&mut self, f: u32) {
        let s = &mut self.flows[f as usize].sender;
        if s.pace_deadline != 0 && s.pace_queued != s.pace_deadline {
            s.pace_queued = s.pace_deadline;
            self.q.push(s.pace_deadline, Ev::Pace(f));
        }
    }

    pub(super) fn on_pace_event(&mut self, f: u32) {
        let s = &mut self.flows[f as usize].sender;
        if s.pace_queued != self.now {
            return; // superseded
        }
        s.pace_queued = 0;
        s.pace_deadline = 0;
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
