//! Whether the window was used, remembered for the round as Linux 6.x does
//! (`tcp_output.c` `tcp_cwnd_validate`, `include/net/tcp.h` `tcp_is_cwnd_limited`).
//!
//! Deciding it per send attempt would call a sender app-limited whenever an ACK opens room
//! it has not yet filled; Linux instead keeps the strongest signal seen in the current
//! window (`is_cwnd_limited`, `max_packets_out`) until `snd_una` passes `cwnd_usage_seq`.

use crate::seq::before;
use crate::tcp::TcpState;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwndUsage {
    /// `is_cwnd_limited`: the window was full at some transmission this round.
    is_cwnd_limited: bool,
    /// `max_packets_out`: most segments outstanding this round.
    max_packets_out: u32,
    /// `cwnd_usage_seq`: the round ends when `snd_una` reaches it.
    cwnd_usage_seq: u32,
}

impl Default for CwndUsage {
    fn default() -> Self {
        // A new connection counts as window-limited until it shows otherwise.
        Self { is_cwnd_limited: true, max_packets_out: 0, cwnd_usage_seq: 0 }
    }
}

impl CwndUsage {
    /// `tcp_cwnd_validate` after `tcp_write_xmit` sent something or found the window full.
    pub fn validate(&mut self, is_cwnd_limited: bool, tcp: &TcpState) {
        let packets_out = tcp.snd_nxt.wrapping_sub(tcp.snd_una);
        let round_over = !before(tcp.snd_una, self.cwnd_usage_seq);
        if round_over || is_cwnd_limited || (!self.is_cwnd_limited && packets_out > self.max_packets_out) {
            self.is_cwnd_limited = is_cwnd_limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = tcp.snd_nxt;
        }
    }

    /// A trace states `tcp_is_cwnd_limited()` directly (the replay driver).
    pub fn assume(&mut self, cwnd_limited: bool) {
        self.is_cwnd_limited = cwnd_limited;
        self.max_packets_out = 0;
    }

    /// `tp->is_cwnd_limited`: the window was full at some transmission this round.
    #[inline]
    pub fn flag(&self) -> bool {
        self.is_cwnd_limited
    }

    /// `tcp_is_cwnd_limited`: limited this round, or in slow start below twice the most
    /// segments outstanding (so slow start may double what was actually sent).
    pub fn is_cwnd_limited(&self, tcp: &TcpState) -> bool {
        self.is_cwnd_limited || (tcp.in_slow_start() && tcp.cwnd < 2 * self.max_packets_out)
    }
}
