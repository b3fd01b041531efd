//! F-RTO, the detection of spurious retransmission timeouts as Linux does it with its
//! default `net.ipv4.tcp_frto = 2` (RFC 5682's SACK-enhanced version, `tcp_enter_loss` and
//! `tcp_process_loss` in `net/ipv4/tcp_input.c`). After a timeout has retransmitted the
//! head, the first ACK that advances `snd_una` (with `snd_una` still below `high_seq`)
//! lets new data out instead of more retransmissions (step 2b, `REXMIT_NEW`, with
//! `high_seq` moved to `snd_nxt`). If a later ACK then acknowledges or SACKs a segment that
//! was never retransmitted and lies below `high_seq` (`FLAG_ORIG_SACK_ACKED`), the timeout
//! was spurious: `tcp_try_undo_loss(sk, true)` restores the window with the algorithm's
//! `undo_cwnd` and returns to Open (step 3b). A SACK or duplicate ACK after the new data
//! shows the loss was real (step 3a): conventional recovery goes on.

use cubiclab_cc::CaState;

/// What `tcp_process_loss`'s F-RTO part asks of this ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrtoStep {
    /// Nothing beyond conventional Loss processing.
    Continue,
    /// Step 2b: move `high_seq` to `snd_nxt` and send new data (if none can go out, F-RTO
    /// ends and the lost segments are retransmitted).
    SendNew,
    /// Step 3b: the timeout was spurious; undo it.
    Undo,
}

/// The facts of one ACK in Loss that F-RTO reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct LossAck {
    /// It moved `snd_una` (`FLAG_SND_UNA_ADVANCED`).
    pub advanced: bool,
    /// It newly SACKed something (`FLAG_DATA_SACKED`).
    pub sacked: bool,
    /// It (s)acked a never-retransmitted segment below `high_seq` (`FLAG_ORIG_SACK_ACKED`).
    pub orig_acked: bool,
    /// `snd_una` has reached `high_seq`.
    pub recovered: bool,
    /// `snd_nxt` is beyond `high_seq`: new data left since step 2b.
    pub new_data_sent: bool,
}

/// `tp->frto`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Frto {
    pub active: bool,
}

impl Frto {
    /// `tcp_enter_loss`: F-RTO for this Loss episode if enabled (`enabled`: `tcp_frto` on
    /// and SACK in use; Linux's basic F-RTO for non-SACK flows is not modelled) and it
    /// starts a new recovery (from Open, Disorder or CWR) or repeats a timeout
    /// (`icsk_retransmits` > 0).
    pub fn on_enter_loss(&mut self, enabled: bool, state_before: CaState, retransmits: u32) {
        self.active = enabled && (state_before < CaState::Recovery || retransmits > 0);
    }

    /// `tcp_process_loss`'s F-RTO steps for an ACK in Loss.
    pub fn on_ack(&mut self, a: LossAck) -> FrtoStep {
        if !self.active {
            return FrtoStep::Continue;
        }
        if a.orig_acked {
            return FrtoStep::Undo;
        }
        if a.new_data_sent {
            if a.sacked || !a.advanced {
                // Step 3a: the loss was real.
                self.active = false;
            }
        } else if a.advanced && !a.recovered {
            return FrtoStep::SendNew;
        }
        FrtoStep::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enters_only_from_a_new_recovery_or_a_repeated_timeout() {
        let mut f = Frto::default();
        f.on_enter_loss(true, CaState::Open, 0);
        assert!(f.active);
        f.on_enter_loss(true, CaState::Recovery, 0);
        assert!(!f.active);
        f.on_enter_loss(true, CaState::Loss, 1);
        assert!(f.active);
        f.on_enter_loss(false, CaState::Open, 0);
        assert!(!f.active);
    }

    #[test]
    fn new_data_after_the_first_advance_then_undo_or_conventional() {
        let mut f = Frto { active: true };
        let first = LossAck { advanced: true, ..LossAck::default() };
        assert_eq!(f.on_ack(first), FrtoStep::SendNew);
        let spurious = LossAck { advanced: true, orig_acked: true, new_data_sent: true, ..LossAck::default() };
        assert_eq!(f.on_ack(spurious), FrtoStep::Undo);
        let real = LossAck { sacked: true, new_data_sent: true, ..LossAck::default() };
        assert_eq!(f.on_ack(real), FrtoStep::Continue);
        assert!(!f.active);
    }
}
