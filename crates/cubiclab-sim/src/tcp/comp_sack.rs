//! SACK compression, as a Linux 4.18+ receiver does it (`__tcp_ack_snd_check` in
//! `net/ipv4/tcp_input.c`, its timer `tcp_compressed_ack_kick` in `tcp_timer.c`): while
//! data is held out of order, an ACK that nothing else asks to send at once (no quick-ACK
//! mode, no ICSK_ACK_NOW, not more than one full segment unacknowledged) goes at once only
//! for the first `TCP_FASTRETRANS_THRESH` (3) of one `rcv_nxt`, so that the sender's fast
//! retransmit is not delayed; later ones are held ("compressed") until a timer of
//! min(`tcp_comp_sack_delay_ns`, RTT/20) plus `tcp_comp_sack_slack_ns` fires, or until
//! `tcp_comp_sack_nr` are held, and the one ACK that then leaves carries the SACK blocks
//! of them all. Any ACK that leaves sends what was held (`tcp_event_ack_sent` clears the
//! count and cancels the timer). [`Receiver`](super::Receiver) runs it when
//! `[host] sack_compression` is on.

use crate::engine::Time;

/// `tcp_comp_sack_delay_ns`, `tcp_comp_sack_slack_ns`, `tcp_comp_sack_nr`: Linux's defaults
/// (`tcp_sk_init`), this lab's 6.18 kernel's values (`sysctl net.ipv4.tcp_comp_sack_*`).
pub const COMP_SACK_DELAY: Time = 1_000_000;
pub const COMP_SACK_SLACK: Time = 100_000;
pub const COMP_SACK_NR: u32 = 44;
/// `TCP_FASTRETRANS_THRESH`: duplicate ACKs of one `rcv_nxt` sent before any is held.
pub const FASTRETRANS_THRESH: u32 = 3;

/// What to do with an ACK that SACK compression decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compressed {
    /// Send it now.
    Send,
    /// Hold it; arm the timer for this time if given (`None`: it is armed already).
    Hold(Option<Time>),
}

/// One receiver's SACK-compression state.
#[derive(Clone, Copy, Debug, Default)]
pub struct SackCompression {
    /// `compressed_ack`: ACKs held since the last one left.
    held: u32,
    /// `compressed_ack_rcv_nxt` and `dup_ack_counter`: duplicate ACKs of that `rcv_nxt`
    /// sent at once.
    dup_rcv_nxt: u32,
    dup_acks: u32,
    /// When the armed timer fires (0: not armed; `hrtimer_is_queued`).
    deadline: Time,
}

impl SackCompression {
    /// `__tcp_ack_snd_check` from its SACK test on, for an ACK of `rcv_nxt` at `now` with
    /// out-of-order data held: `delay` is the timer's, [`timer_delay`]. (Its first tests —
    /// quick-ACK mode, ICSK_ACK_NOW, more than a segment unacknowledged — sent at once
    /// without coming here.)
    #[inline]
    pub fn ack_check(&mut self, rcv_nxt: u32, now: Time, delay: Time) -> Compressed {
        if self.held >= COMP_SACK_NR {
            return Compressed::Send;
        }
        if self.dup_rcv_nxt != rcv_nxt {
            self.dup_rcv_nxt = rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < FASTRETRANS_THRESH {
            self.dup_acks += 1;
            return Compressed::Send;
        }
        self.held += 1;
        if self.deadline != 0 {
            return Compressed::Hold(None);
        }
        // hrtimer_start_range_ns(delay, slack): the timer may fire anywhere in the range;
        // alone on its CPU it fires at its end.
        self.deadline = now + delay + COMP_SACK_SLACK;
        Compressed::Hold(Some(self.deadline))
    }

    /// Whether ACKs are held (`tcp_sack_compress_send_ack` sends one only then).
    #[inline]
    pub fn holding(&self) -> bool {
        self.held > 0
    }

    /// An ACK left (`tcp_event_ack_sent`): nothing is held, the timer is cancelled.
    #[inline]
    pub fn sent(&mut self) {
        self.held = 0;
        self.deadline = 0;
    }

    /// The timer entry for `now` fired: whether it is the armed one with ACKs held, whose
    /// ACK is to be sent now (`tcp_compressed_ack_kick`); a cancelled one is ignored.
    pub fn fired(&mut self, now: Time) -> bool {
        if self.deadline != now {
            return false;
        }
        self.deadline = 0;
        self.held > 0
    }
}

/// The timer's delay: 5% of the RTT, at most `tcp_comp_sack_delay_ns`, from the receiver's
/// RTT estimate `rcv_rtt_us8` (`rcv_rtt_est.rtt_us`, eight times microseconds, 0 before a
/// sample) or the socket's smoothed RTT `srtt_us8` (same unit; 0: none) if lower. In the
/// kernel's integers: `rtt * (NSEC_PER_USEC >> 3) / 20` nanoseconds.
#[inline]
pub fn timer_delay(rcv_rtt_us8: u64, srtt_us8: u64) -> Time {
    let rtt = if srtt_us8 != 0 && srtt_us8 < rcv_rtt_us8 { srtt_us8 } else { rcv_rtt_us8 };
    COMP_SACK_DELAY.min(rtt * (1000 >> 3) / 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000;

    #[test]
    fn three_sent_then_held_under_one_timer() {
        // __tcp_ack_snd_check: dup_ack_counter counts 1, 2, 3 (each sent, "goto send_now");
        // the fourth of that rcv_nxt is compressed_ack 1 and starts the timer at
        // now + delay + slack; the fifth finds it queued.
        let mut c = SackCompression::default();
        for _ in 0..3 {
            assert_eq!(c.ack_check(7, 0, 1_000 * US), Compressed::Send);
        }
        assert_eq!(c.ack_check(7, 10 * US, 1_000 * US), Compressed::Hold(Some(1_110 * US)));
        assert_eq!(c.ack_check(7, 20 * US, 1_000 * US), Compressed::Hold(None));
        assert!(c.holding());
        // An earlier (cancelled) entry is ignored; the armed one fires with ACKs held.
        assert!(!c.fired(1_000 * US));
        assert!(c.fired(1_110 * US));
        // tcp_event_ack_sent of that ACK; the next duplicate of the same rcv_nxt is held
        // again (dup_ack_counter stays 3) and re-arms the timer.
        c.sent();
        assert_eq!(c.ack_check(7, 1_200 * US, 1_000 * US), Compressed::Hold(Some(2_300 * US)));
    }

    #[test]
    fn a_new_rcv_nxt_sends_three_again() {
        // compressed_ack_rcv_nxt != rcv_nxt: dup_ack_counter = 0, so the first three ACKs of
        // the new rcv_nxt (a partial hole fill) go at once.
        let mut c = SackCompression::default();
        for _ in 0..4 {
            c.ack_check(7, 0, 0);
        }
        c.sent();
        for _ in 0..3 {
            assert_eq!(c.ack_check(9, 0, 0), Compressed::Send);
        }
        assert_eq!(c.ack_check(9, 0, 0), Compressed::Hold(Some(COMP_SACK_SLACK)));
    }

    #[test]
    fn the_ack_after_44_held_is_sent() {
        // compressed_ack >= tcp_comp_sack_nr (44): "goto send_now", so at most 44 ACKs are
        // folded into the next one.
        let mut c = SackCompression::default();
        for _ in 0..3 {
            c.ack_check(7, 0, 0);
        }
        for _ in 0..44 {
            assert!(matches!(c.ack_check(7, 0, 1_000 * US), Compressed::Hold(_)));
        }
        assert_eq!(c.ack_check(7, 0, 1_000 * US), Compressed::Send);
    }

    #[test]
    fn the_delay_is_a_twentieth_of_the_lower_rtt_at_most_1_ms() {
        // rcv_rtt_est 10 ms (x8 us: 80 000): 80 000 x 125 / 20 = 500 000 ns; a smoothed RTT
        // of 4 ms below it is taken: 200 us; one of 40 ms is not. A 40 ms RTT: 2 ms, capped
        // at tcp_comp_sack_delay_ns (1 ms). No receiver sample yet (0): delay 0, the timer
        // then fires after its slack alone.
        assert_eq!(timer_delay(80_000, 0), 500 * US);
        assert_eq!(timer_delay(80_000, 32_000), 200 * US);
        assert_eq!(timer_delay(80_000, 320_000), 500 * US);
        assert_eq!(timer_delay(320_000, 0), 1_000 * US);
        assert_eq!(timer_delay(0, 320_000), 0);
    }
}
