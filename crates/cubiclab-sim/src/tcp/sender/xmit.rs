//! Transmission (`tcp_write_xmit`): the pacing check, a due loss probe, F-RTO's new data,
//! lost segments, then new data in TSO packets with PSH on the last segment of each; the
//! window's use validated and a loss probe scheduled at the end of each round.

use cubiclab_cc::host::pacing::{tso_segs, TCP_MIN_TSO_SEGS};
use cubiclab_cc::seq::before;
use cubiclab_cc::CongestionControl;

use super::{Segment, Sender, Timer};
use crate::engine::Time;

impl Sender {
    /// The next segment to transmit now, if the window and the data allow one: a lost
    /// segment first, then new data. A `None` ends
    /// one `tcp_write_xmit`: the window's use is then validated for the round.
    #[inline]
    pub fn next_segment(&mut self, now: Time) -> Option<Segment> {
        if !self.started {
            return None;
        }
        // tcp_pacing_check comes first in tcp_write_xmit.
        if let Some(at) = self.pacer.wait_until(&self.host.tcp, now) {
            self.timers.pacing_at = at;
            let cwnd_full = self.in_flight() >= self.host.tcp.cwnd;
            self.end_burst(now, cwnd_full);
            return None;
        }
        self.timers.pacing_at = 0;
        if self.timers.probe_due {
            return Some(self.send_probe(now));
        }
        let in_flight = self.in_flight();
        if self.frto_new_data {
            // tcp_xmit_recovery's REXMIT_NEW: new data if the window lets any out; if none
            // could go, F-RTO ends and the lost segments are retransmitted.
            let nxt = self.host.tcp.snd_nxt;
            if in_flight < self.host.tcp.cwnd && nxt != self.app_limit && self.window_allows(nxt) {
                self.burst.new_data = true;
                if in_flight == 0 && self.packets_out() > 0 {
                    // tcp_event_data_sent: after a timeout's retransmission was ACKed the
                    // rest is still marked lost, nothing in flight: TX_START. (With nothing
                    // outstanding send_new restarts; elsewhere new data never leaves with
                    // segments out but none in flight: a lost one is retransmitted first.)
                    self.host.tx_start(now);
                }
                return Some(self.send_new(now));
            }
            self.frto_new_data = false;
            if before(self.host.high_seq, nxt) {
                self.end_burst(now, in_flight >= self.host.tcp.cwnd);
                return None;
            }
            self.frto.active = false;
        }
        if in_flight >= self.host.tcp.cwnd {
            self.end_burst(now, true);
            return None;
        }
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        if let Some(seq) = self.sb.next_retransmit(una, nxt) {
            if in_flight == 0 {
                // tcp_event_data_sent: the first retransmission after a timeout, everything
                // outstanding marked lost.
                self.host.tx_start(now);
            }
            self.sb.on_send(seq, now, true);
            self.host.on_retransmit(Self::ts_val(now));
            self.rate_sent(seq, now, true);
            self.after_send(now, true);
            if seq == una {
                // Linux tcp_xmit_retransmit_queue: retransmitting the head restarts the timer.
                self.restart_rto(now);
            }
            return Some(Segment { seq, retransmit: true, push: false });
        }
        let window_ok = self.window_allows(nxt);
        if nxt == self.app_limit || !window_ok {
            self.end_burst(now, false);
            return None;
        }
        self.burst.new_data = true;
        Some(self.send_new(now))
    }

    /// The probe: new data if the application and the receive window allow it, else the
    /// last segment sent again (`__tcp_retransmit_skb`: a retransmission, but not counted in
    /// `retrans_out`); then `tlp_high_seq = snd_nxt` and the RTO from now.
    fn send_probe(&mut self, now: Time) -> Segment {
        self.timers.probe_due = false;
        let nxt = self.host.tcp.snd_nxt;
        let probe = if nxt != self.app_limit && self.window_allows(nxt) {
            self.tlp.retrans = false;
            self.send_new(now)
        } else {
            let last = nxt.wrapping_sub(1);
            self.sb.on_probe(last, now);
            self.rate_sent(last, now, false);
            self.stats.segments_sent += 1;
            self.stats.retransmits += 1;
            self.host.on_transmit(now);
            self.tlp.retrans = true;
            Segment { seq: last, retransmit: true, push: false }
        };
        self.tlp.high_seq = Some(self.host.tcp.snd_nxt);
        self.restart_rto(now);
        probe
    }

    /// Send the next new segment.
    #[inline(always)]
    fn send_new(&mut self, now: Time) -> Segment {
        let (una, nxt) = (self.host.tcp.snd_una, self.host.tcp.snd_nxt);
        if self.packets_out() == 0 && self.stats.segments_sent > 0 {
            self.host.restart_after_idle(now, self.cfg.initial_cwnd);
        }
        self.sb.reserve(una, nxt.wrapping_add(1));
        self.sb.on_send(nxt, now, false);
        self.rate_sent(nxt, now, false);
        self.host.tcp.snd_nxt = nxt.wrapping_add(1);
        let push = self.ends_tso_packet();
        self.after_send(now, false);
        Segment { seq: nxt, retransmit: false, push }
    }

    /// Whether the new segment being sent carries PSH: new data leaves in TSO packets of `tcp_tso_autosize`
    /// segments (at least `tcp_min_tso_segs` = 2), and the last segment of each full
    /// packet carries PSH; a packet cut short by the window does not (`tso_fragment`
    /// moves PSH to the part left behind). Measured on the testbed's kernel sender
    /// (a17, `scripts/link_pcap.py` and the emulator's read log): 95% of its 2-segment
    /// packets end with PSH, 2% of its single segments carry it, 3% of retransmissions.
    /// It matters to the receiver, which ACKs a PSH segment at once ([`Receiver::on_data`]).
    /// An approximation elsewhere (docs/agreement/README.md, a17): at a04 (100 Mbit/s) the
    /// kernel marks 11.7% of segments, this rule none (every packet is cut short there),
    /// yet the single-segment ACKs agree (0.1% / 0.0%); the kernel's placement is not traced.
    ///
    /// [`Receiver::on_data`]: crate::tcp::receiver::Receiver::on_data
    #[inline(always)]
    fn ends_tso_packet(&mut self) -> bool {
        if self.burst.tso_left == 0 {
            self.burst.tso_left = tso_segs(&self.host.tcp, self.min_tso_segs()).max(1);
        }
        self.burst.tso_left -= 1;
        self.burst.tso_left == 0
    }

    /// `tcp_tso_segs`' floor: the algorithm's `min_tso_segs`, else the sysctl's
    /// `tcp_min_tso_segs`. Only BBR has one, and BBR paces: an unpaced sender skips the call.
    #[inline(always)]
    fn min_tso_segs(&self) -> u32 {
        if self.host.tcp.paced {
            self.host.alg.min_tso_segs(&self.host.tcp).unwrap_or(TCP_MIN_TSO_SEGS)
        } else {
            TCP_MIN_TSO_SEGS
        }
    }

    /// `tcp_rate_skb_sent`: stamp segment `seq`, leaving now (before `snd_nxt` moves).
    /// `counted`: the scoreboard already counts it in flight (a retransmission is in
    /// `retrans_out` from `on_send`; the kernel counts it after the stamp, so the stamp's
    /// in-flight, `tcp_packets_in_flight + pcount`, is the same either way).
    #[inline]
    fn rate_sent(&mut self, seq: u32, now: Time, counted: bool) {
        let packets_out = self.packets_out();
        let in_flight = self.in_flight() + u32::from(!counted);
        let stamp = self.host.rate.skb_sent(&mut self.host.tcp, packets_out, in_flight, now / 1000);
        self.sb.set_stamp(seq, stamp);
    }

    /// End of a `tcp_write_xmit`: `tcp_cwnd_validate` if it sent something or the window
    /// is full, and a loss probe scheduled after new data (one per tail episode).
    #[inline(always)]
    fn end_burst(&mut self, now: Time, cwnd_full: bool) {
        self.pacer.end_burst(&mut self.host.tcp);
        if self.burst.sent || cwnd_full {
            self.host.cwnd_validate(cwnd_full);
        }
        let rearmed = self.burst.new_data && self.schedule_loss_probe(now, false);
        if self.timers.probe_on_ack && !rearmed {
            // Nothing new went out: the ACK's probe, as it would have been computed then
            // (nothing it depends on has changed since).
            self.schedule_loss_probe(now, true);
        }
        self.burst = Default::default();
    }

    /// After each transmission: the counters, the window's use, the pacer's next departure
    /// time, and the RTO armed if nothing is (`tcp_event_new_data_sent`).
    #[inline]
    fn after_send(&mut self, now: Time, retransmit: bool) {
        self.stats.segments_sent += 1;
        if retransmit {
            self.stats.retransmits += 1;
        }
        self.burst.sent = true;
        self.host.on_transmit(now);
        if self.host.tcp.paced {
            let min_tso = self.min_tso_segs();
            self.pacer.sent(&mut self.host.tcp, min_tso, now);
        } else {
            self.pacer.sent_unpaced(&mut self.host.tcp, now);
        }
        if self.timers.xmit_at == 0 && !self.timers.probe_on_ack {
            self.timers.xmit_at = now + self.rto();
            self.timers.xmit = Timer::Retransmit;
        }
    }
}
