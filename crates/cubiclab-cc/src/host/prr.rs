//! Proportional Rate Reduction as Linux 6.x does it (`tcp_input.c` `tcp_cwnd_reduction`,
//! RFC 6937 with Linux's slow-start bound).

/// `prr_delivered` and `prr_out` of one window reduction (Recovery or CWR).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// Segments delivered (ACKed or SACKed) since the reduction began.
    pub delivered: u32,
    /// Segments sent since the reduction began.
    pub out: u32,
}

/// What one ACK told PRR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrrAck {
    /// Segments newly ACKed or SACKed (`acked_sacked`).
    pub newly_acked_sacked: u32,
    /// Segments this ACK newly marked lost (`rs->losses`).
    pub newly_lost: u32,
    /// `FLAG_SND_UNA_ADVANCED`.
    pub una_advanced: bool,
}

impl Prr {
    /// `tcp_cwnd_reduction`: the window after this ACK, or `None` when the ACK delivered
    /// nothing (the window is left alone). `in_flight` is `tcp_packets_in_flight` after the
    /// ACK's marking.
    pub fn on_ack(&mut self, ack: PrrAck, ssthresh: u32, prior_cwnd: u32, in_flight: u32) -> Option<u32> {
        if ack.newly_acked_sacked == 0 || prior_cwnd == 0 {
            return None;
        }
        self.delivered += ack.newly_acked_sacked;
        let delta = ssthresh as i64 - in_flight as i64;
        let mut sndcnt = if delta < 0 {
            // Above ssthresh: send in proportion, ceil(ssthresh * delivered / prior_cwnd).
            let dividend = ssthresh as u64 * self.delivered as u64 + prior_cwnd as u64 - 1;
            (dividend / prior_cwnd as u64) as i64 - self.out as i64
        } else {
            // Below ssthresh: slow start back toward it, one extra segment when snd_una
            // advanced on an ACK that marked nothing newly lost.
            let mut s = (self.delivered as i64 - self.out as i64).max(ack.newly_acked_sacked as i64);
            if ack.una_advanced && ack.newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.out > 0 { 0 } else { 1 });
        Some((in_flight as i64 + sndcnt) as u32)
    }
}
