//! The sender's timers, as Linux keeps them per socket: the retransmission timer
//! (`icsk_retransmit_timer`), which stands for one event at a time (`icsk_pending`: the
//! RTO, RACK's reorder timeout or a tail loss probe), and the pacing timer. Like quinn-proto's
//! `poll_timeout`, the sender says when it next needs to run and why; the engine calls
//! [`Sender::on_retransmission_timer`] or [`Sender::on_pacing_timer`] then.
//!
//! Adding a timer: a [`Timer`] variant; if it has its own kernel timer, a deadline in
//! `Timers`, answered by [`Sender::poll_timeout`] and a method of its own for the engine; if
//! it shares the retransmission timer (as `ICSK_TIME_*` do), the place that arms it and its
//! arm in [`Sender::on_retransmission_timer`].

use cubiclab_cc::clock::TESTBED_JIFFY_NS;
use cubiclab_cc::host::PrrAck;
use cubiclab_cc::CaState;

use super::{Sender, Timeout, Timer};
use crate::engine::Time;
use crate::tcp::tlp::Tlp;

impl Sender {
    /// The next deadline and which timer it is (the earlier of the two kernel timers; the
    /// retransmission timer on a tie). Settled once the transmissions after an event have
    /// ended (`next_segment` returned `None`), as quinn's after `poll_transmit`.
    pub fn poll_timeout(&self) -> Option<Timeout> {
        let xmit = self.retransmission_timeout();
        match self.pacing_deadline() {
            Some(at) if xmit.is_none_or(|x| at < x.at) => Some(Timeout { at, timer: Timer::Pacing }),
            _ => xmit,
        }
    }

    /// The retransmission timer's deadline and the event it stands for, if armed.
    #[inline]
    pub fn retransmission_timeout(&self) -> Option<Timeout> {
        let t = &self.timers;
        (t.xmit_at != 0).then_some(Timeout { at: t.xmit_at, timer: t.xmit })
    }

    /// The departure time a paced sender waits for, if it waits.
    #[inline]
    pub fn pacing_deadline(&self) -> Option<Time> {
        (self.timers.pacing_at != 0).then_some(self.timers.pacing_at)
    }

    /// The retransmission timer fired at `now` (the caller checked the deadline): as
    /// `tcp_write_timer_handler`, the event it was armed for, which it returns.
    pub fn on_retransmission_timer(&mut self, now: Time) -> Timer {
        let fired = std::mem::replace(&mut self.timers.xmit, Timer::Retransmit);
        match fired {
            Timer::Retransmit => self.retransmit_timeout(now),
            Timer::ReorderTimeout => self.rack_reo_timeout(now),
            Timer::LossProbe => self.send_loss_probe(now),
            Timer::Pacing => unreachable!("the pacing timer has its own deadline"),
        }
        fired
    }

    /// The pacing timer fired (`tcp_pace_kick`): the departure time has come; the engine
    /// transmits.
    pub fn on_pacing_timer(&mut self) {
        self.timers.pacing_at = 0;
    }

    /// The retransmission timer stops (the connection is done).
    pub fn stop_timer(&mut self) {
        self.timers.xmit_at = 0;
        self.timers.probe_on_ack = false;
    }

    /// `tcp_reset_xmit_timer(ICSK_TIME_RETRANS)` from now, for a transmission that restarts
    /// the RTO (the head retransmitted, a probe sent).
    #[inline]
    pub(super) fn restart_rto(&mut self, now: Time) {
        self.timers.xmit_at = now + self.rto();
        self.timers.xmit = Timer::Retransmit;
        self.timers.probe_on_ack = false;
    }

    /// `tcp_set_xmit_timer` at the end of an ACK: the reorder timer if RACK armed one
    /// (`tcp_rack_mark_lost`, in place of the RTO); else, if `snd_una` advanced, a probe if
    /// one may be scheduled (computed at the end of the transmissions, see
    /// `Timers::probe_on_ack`), else `tcp_rearm_rto`.
    #[inline(always)]
    pub(super) fn set_xmit_timer(&mut self, now: Time, reo_timeout: Option<Time>, advanced: bool) {
        if let Some(t) = reo_timeout {
            self.timers.xmit_at = now + t;
            self.timers.xmit = Timer::ReorderTimeout;
        } else if advanced {
            if self.may_schedule_loss_probe() {
                self.timers.probe_on_ack = true;
                self.timers.xmit = Timer::LossProbe;
            } else {
                self.timers.xmit_at = if self.packets_out() > 0 { now + self.rto() } else { 0 };
                self.timers.xmit = Timer::Retransmit;
            }
        }
    }

    /// `tcp_schedule_loss_probe`: in Open with SACK and data out, arm the probe timer;
    /// `advancing_rto`: the RTO would restart now (an ACK advanced `snd_una`), else it
    /// stays counted from the head's transmission. Returns whether it armed.
    #[inline]
    pub(super) fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        if !self.may_schedule_loss_probe() {
            return false;
        }
        self.timers.probe_on_ack = false;
        let srtt = self.host.rtt.srtt_us() * 1000;
        let rto_left = if advancing_rto { self.rto() } else { self.head_rto().saturating_sub(now) };
        let timeout = Tlp::timeout(srtt, self.packets_out(), self.cfg.min_rto_ns, rto_left);
        self.timers.xmit_at = now + timeout;
        self.timers.xmit = Timer::LossProbe;
        true
    }

    /// Whether `tcp_schedule_loss_probe` arms a probe now: in Open (or CWR) with SACK and
    /// data out.
    #[inline]
    fn may_schedule_loss_probe(&self) -> bool {
        self.loss.probes() && self.packets_out() > 0 && matches!(self.host.tcp.ca_state, CaState::Open | CaState::Cwr)
    }

    /// When the RTO counted from the head's transmission falls due (`tcp_rto_delta_us`).
    fn head_rto(&self) -> Time {
        self.sb.sent_at(self.host.tcp.snd_una) + self.rto()
    }

    /// `tcp_rearm_rto` while the timer stands for a probe or a reorder timeout: the RTO
    /// from the head's transmission, at least one jiffy away.
    fn rearm_rto_from_head(&mut self, now: Time) {
        self.timers.xmit_at = self.head_rto().max(now + TESTBED_JIFFY_NS);
        self.timers.xmit = Timer::Retransmit;
    }

    /// `tcp_send_loss_probe`: with no probe outstanding, one segment is due now (sent by
    /// the next `next_segment`, which then re-arms the RTO); else the RTO again.
    fn send_loss_probe(&mut self, now: Time) {
        if self.tlp.high_seq.is_some() || self.packets_out() == 0 {
            self.rearm_rto_from_head(now);
        } else {
            self.timers.probe_due = true;
        }
    }

    /// `tcp_rack_reo_timeout`: mark what has now timed out; if that changed what is in
    /// flight, enter Recovery (with one PRR step, `tcp_cwnd_reduction(sk, 1, 0)`); then the
    /// RTO again, counted from the head's transmission (`tcp_rearm_rto`).
    fn rack_reo_timeout(&mut self, now: Time) {
        self.timers.xmit_at = 0;
        if self.packets_out() == 0 {
            return;
        }
        let prior_in_flight = self.in_flight();
        self.rack_detect_loss(now);
        if self.in_flight() != prior_in_flight && self.host.tcp.ca_state != CaState::Recovery {
            self.start_recovery(now, false);
            if self.host.tcp.ca_state == CaState::Recovery {
                let ack = PrrAck { newly_acked_sacked: 1, newly_lost: 0, una_advanced: false };
                self.host.cwnd_reduction(ack, self.in_flight());
            }
        }
        self.rearm_rto_from_head(now);
    }

    /// Linux `tcp_retransmit_timer`.
    fn retransmit_timeout(&mut self, now: Time) {
        self.timers.xmit_at = 0;
        self.tlp.high_seq = None;
        if self.packets_out() == 0 {
            return;
        }
        self.stats.timeouts += 1;
        if self.host.tcp.ca_state != CaState::Loss {
            self.stats.loss_events += 1;
            self.stats.last_loss_cwnd = self.host.tcp.cwnd;
        }
        self.timeout_mark_lost(now.saturating_sub(self.rack.rtt));
        self.frto.on_enter_loss(self.loss.frto(), self.host.tcp.ca_state, self.host.retransmits);
        self.frto_new_data = false;
        self.host.retransmit_timer(self.in_flight(), self.sb.retrans_out, now);
        self.timers.xmit_at = now + self.rto();
    }
}
