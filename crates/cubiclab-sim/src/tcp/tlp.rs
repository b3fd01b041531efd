//! Tail loss probe as Linux does it (`net/ipv4/tcp_output.c` `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`; `tcp_input.c` `tcp_process_tlp_ack`; RFC 8985 section 7): in
//! Open with SACK, the retransmission timer first stands for a probe timeout of
//! 2 x srtt (plus `tcp_rto_min` when one segment is out, for the peer's delayed ACK, else
//! `TCP_TIMEOUT_MIN`), never later than the RTO would fire. When it fires, one segment
//! goes out regardless of cwnd: new data if there is any, else the last segment sent again.
//! An ACK beyond the probe's `snd_nxt` after a retransmitted probe shows one loss repaired:
//! the window is reduced once (CWR and back), without Recovery.

use cubiclab_cc::seq::before;

use crate::engine::Time;

/// `TCP_TIMEOUT_MIN` (two jiffies of the testbed's kernel) and one jiffy.
const JIFFY_NS: Time = cubiclab_cc::clock::TESTBED_JIFFY_NS;
const TIMEOUT_MIN_NS: Time = 2 * JIFFY_NS;
/// `TCP_TIMEOUT_INIT`: the probe timeout before any RTT sample.
const TIMEOUT_INIT_NS: Time = 1_000_000_000;

/// `tp->tlp_high_seq` and `tp->tlp_retrans`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tlp {
    /// `snd_nxt` when the outstanding probe was sent; `None`: no probe outstanding.
    pub high_seq: Option<u32>,
    /// The outstanding probe retransmitted the last segment (else it was new data).
    pub retrans: bool,
}

impl Tlp {
    /// `tcp_schedule_loss_probe`'s timeout: 2 x srtt rounded up to jiffies, plus `rto_min`
    /// with one segment out or `TCP_TIMEOUT_MIN` with more (1 s before any RTT sample),
    /// at most `rto_left` (how far off the RTO is), when that is positive.
    pub fn timeout(srtt: Time, packets_out: u32, rto_min: Time, rto_left: Time) -> Time {
        let t = if srtt == 0 {
            TIMEOUT_INIT_NS
        } else {
            (2 * srtt).div_ceil(JIFFY_NS) * JIFFY_NS + if packets_out == 1 { rto_min } else { TIMEOUT_MIN_NS }
        };
        if rto_left > 0 {
            t.min(rto_left.div_ceil(JIFFY_NS) * JIFFY_NS)
        } else {
            t
        }
    }

    /// `tcp_process_tlp_ack` for an ACK of `ack` (`advanced`: it moved `snd_una`;
    /// `news`: it SACKed something new; `dsack_probe`: it D-SACKed the probe,
    /// `FLAG_DSACK_TLP`). Returns whether it shows that the probe repaired a loss, so the
    /// window must be reduced (`tcp_init_cwnd_reduction` ... CWR ... Open).
    pub fn on_ack(&mut self, ack: u32, advanced: bool, news: bool, dsack_probe: bool) -> bool {
        let Some(high) = self.high_seq else { return false };
        if before(ack, high) {
            return false;
        }
        if !self.retrans || dsack_probe {
            // The probe was new data, now acknowledged; or the D-SACK says the original
            // and the probe both arrived: no loss.
            self.high_seq = None;
        } else if before(high, ack) {
            self.high_seq = None;
            return true;
        } else if !advanced && !news {
            // A pure duplicate: the original and the probe both arrived.
            self.high_seq = None;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn probe_timeout_is_two_srtt_with_the_delayed_ack_allowance_for_one_segment() {
        // srtt 50 ms: 100 ms + 8 ms with several segments out, + 200 ms with one; an RTO
        // due in 60 ms caps it; before any sample, 1 s.
        assert_eq!(Tlp::timeout(50 * MS, 5, 200 * MS, 0), 108 * MS);
        assert_eq!(Tlp::timeout(50 * MS, 1, 200 * MS, 0), 300 * MS);
        assert_eq!(Tlp::timeout(50 * MS, 5, 200 * MS, 60 * MS), 60 * MS);
        assert_eq!(Tlp::timeout(0, 5, 200 * MS, 0), 1000 * MS);
    }

    #[test]
    fn a_retransmitted_probe_shows_a_loss_only_when_later_data_is_acked() {
        let mut t = Tlp { high_seq: Some(10), retrans: true };
        assert!(!t.on_ack(9, true, false, false));
        assert!(!t.on_ack(10, true, false, false));
        assert!(t.on_ack(11, true, false, false));
        assert_eq!(t.high_seq, None);
        // A duplicate ACK at high_seq: both copies arrived, no loss.
        let mut t = Tlp { high_seq: Some(10), retrans: true };
        assert!(!t.on_ack(10, false, false, false));
        assert_eq!(t.high_seq, None);
        // A probe of new data just ends when acknowledged.
        let mut t = Tlp { high_seq: Some(10), retrans: false };
        assert!(!t.on_ack(12, true, false, false));
        assert_eq!(t.high_seq, None);
        // A D-SACK of the probe, even on an ACK beyond it: both copies arrived.
        let mut t = Tlp { high_seq: Some(10), retrans: true };
        assert!(!t.on_ack(11, true, false, true));
        assert_eq!(t.high_seq, None);
    }
}
