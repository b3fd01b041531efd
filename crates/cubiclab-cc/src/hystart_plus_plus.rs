//! HyStart++ (RFC 9406, "HyStart++: Modified Slow Start for TCP", May 2023), the slow start
//! a CUBIC version runs when its `hystart` parameter is `"hystart++"` ([`crate::cubic_frame`]
//! calls it from `pkts_acked` and `cong_avoid`).
//!
//! Section 4.2 in segments: standard slow start grows `min(N, L)` per ACK of N segments;
//! after a round whose minimum RTT rose by `clamp(lastRoundMinRTT / 8, 4 ms, 16 ms)` over the
//! last round's, Conservative Slow Start (CSS) grows a quarter of that, goes back to slow
//! start if a round's minimum falls below the one that started CSS, and after `CSS_ROUNDS`
//! rounds enters congestion avoidance (ssthresh = cwnd). Section 4.3's constants; L is
//! infinite for a paced flow and 8 otherwise. Section 4.4: only the first slow start, while
//! ssthresh has its initial infinite value; later ones (after a loss, a timeout, the end of
//! CSS) are standard slow start, and a loss during either phase is the algorithm's usual
//! response (the host calls `ssthresh`).
//!
//! Rounds as the RFC counts them: `windowEnd` is `snd_nxt` when a round begins, and the
//! round ends when `windowEnd` is acknowledged (`snd_una` after it, as Linux's HyStart in
//! [`crate::cubic`] counts its rounds). The RFC's per-ACK order is increase, then sample
//! and test; here the test runs in `pkts_acked`, before `cong_avoid` grows the window (the
//! order of Linux's hooks), so the ACK that changes the phase grows at the new phase's rate.
//! CSS's quarter is exact: the RFC adds `min(N, L * SMSS) / 4` bytes per ACK, here the
//! segments are summed and every fourth adds one, so cwnd is the RFC's bytes / SMSS, rounded
//! down, whenever SMSS is a multiple of 4.

use crate::seq::after;
use crate::tcp::{TcpState, TCP_INFINITE_SSTHRESH};

/// Lower clamp of the RTT increase that ends slow start, microseconds.
pub const MIN_RTT_THRESH_US: u32 = 4_000;
/// Upper clamp of that increase, microseconds.
pub const MAX_RTT_THRESH_US: u32 = 16_000;
/// The increase is the last round's minimum RTT over this, clamped.
pub const MIN_RTT_DIVISOR: u32 = 8;
/// RTT samples a round needs before its minimum is compared.
pub const N_RTT_SAMPLE: u32 = 8;
/// CSS grows this many times slower than slow start.
pub const CSS_GROWTH_DIVISOR: u32 = 4;
/// Rounds of CSS before congestion avoidance (the round CSS began in counts).
pub const CSS_ROUNDS: u32 = 5;
/// L for a flow that is not paced, segments per ACK; paced, L is infinite.
pub const L_NOT_PACED: u32 = 8;

/// An RTT not measured yet (the RFC's infinity).
const NO_RTT: u32 = u32::MAX;

/// HyStart++'s state (Section 4.2's variables), RTTs in microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyStartPlusPlus {
    /// `snd_nxt` when the round began: the round ends when it is acknowledged.
    window_end: u32,
    last_round_min_rtt: u32,
    current_round_min_rtt: u32,
    rtt_sample_count: u32,
    /// The round minimum that started CSS; [`NO_RTT`] outside CSS.
    css_baseline_min_rtt: u32,
    /// Rounds of CSS ended so far.
    css_rounds: u32,
    /// Segments acknowledged in CSS that have not yet added a segment (below 4).
    css_acked: u32,
}

impl HyStartPlusPlus {
    /// The state at the connection's start (`init`): a round from `snd_nxt`.
    pub fn new(tcp: &TcpState) -> Self {
        HyStartPlusPlus {
            window_end: tcp.snd_nxt,
            last_round_min_rtt: NO_RTT,
            current_round_min_rtt: NO_RTT,
            rtt_sample_count: 0,
            css_baseline_min_rtt: NO_RTT,
            css_rounds: 0,
            css_acked: 0,
        }
    }

    /// Whether HyStart++ runs this ACK: in the first slow start only (Section 4.4).
    #[inline]
    pub fn applies(tcp: &TcpState) -> bool {
        tcp.ssthresh == TCP_INFINITE_SSTHRESH && tcp.in_slow_start()
    }

    /// Whether the flow is in Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        self.css_baseline_min_rtt != NO_RTT
    }

    /// The RTT increase over `last_round_min_rtt` that ends slow start:
    /// `max(MIN_RTT_THRESH, min(last / MIN_RTT_DIVISOR, MAX_RTT_THRESH))`.
    pub fn rtt_thresh(last_round_min_rtt: u32) -> u32 {
        (last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_US, MAX_RTT_THRESH_US)
    }

    /// `pkts_acked`: end the round when `windowEnd` is acknowledged (counting CSS rounds,
    /// entering congestion avoidance after [`CSS_ROUNDS`]), take the ACK's RTT sample
    /// (`rtt_us` < 0: none), and test for the phase change it may show.
    pub fn on_ack(&mut self, tcp: &mut TcpState, rtt_us: i64) {
        if !Self::applies(tcp) {
            // Done: a loss (or the end of CSS) moved ssthresh; CSS, if it ran, is over.
            self.css_baseline_min_rtt = NO_RTT;
            return;
        }
        if after(tcp.snd_una, self.window_end) {
            self.window_end = tcp.snd_nxt;
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = NO_RTT;
            self.rtt_sample_count = 0;
            if self.in_css() {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    self.css_baseline_min_rtt = NO_RTT;
                    tcp.ssthresh = tcp.cwnd;
                    return;
                }
            }
        }
        if rtt_us < 0 {
            return;
        }
        self.current_round_min_rtt = self.current_round_min_rtt.min(rtt_us.min(i64::from(NO_RTT - 1)) as u32);
        self.rtt_sample_count += 1;
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return;
        }
        if self.in_css() {
            // The exit was spurious: the RTT came back down.
            if self.current_round_min_rtt < self.css_baseline_min_rtt {
                self.css_baseline_min_rtt = NO_RTT;
            }
        } else if self.last_round_min_rtt != NO_RTT
            && self.current_round_min_rtt >= self.last_round_min_rtt + Self::rtt_thresh(self.last_round_min_rtt)
        {
            self.css_baseline_min_rtt = self.current_round_min_rtt;
            self.css_rounds = 0;
            self.css_acked = 0;
        }
    }

    /// `cong_avoid` in the first slow start: grow by `min(acked, L)`, a quarter of it in CSS.
    pub fn grow(&mut self, tcp: &mut TcpState, acked: u32) {
        let n = if tcp.paced { acked } else { acked.min(L_NOT_PACED) };
        let increase = if self.in_css() {
            self.css_acked += n;
            let whole = self.css_acked / CSS_GROWTH_DIVISOR;
            self.css_acked %= CSS_GROWTH_DIVISOR;
            whole
        } else {
            n
        };
        tcp.cwnd = tcp.cwnd.saturating_add(increase).min(tcp.cwnd_clamp);
    }

    /// Variables for traces: the phase (0 slow start, 1 CSS) and the round minima (us; 0: none).
    pub fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let us = |v: u32| if v == NO_RTT { 0.0 } else { f64::from(v) };
        out("css", f64::from(u8::from(self.in_css())));
        out("css_rounds", f64::from(self.css_rounds));
        out("last_round_min_rtt", us(self.last_round_min_rtt));
        out("current_round_min_rtt", us(self.current_round_min_rtt));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1000;

    /// A flow in its first slow start at cwnd 20, its first round ending at segment 100.
    fn start() -> (HyStartPlusPlus, TcpState) {
        let tcp = TcpState { cwnd: 20, snd_una: 80, snd_nxt: 100, ..TcpState::default() };
        (HyStartPlusPlus::new(&tcp), tcp)
    }

    /// A round of `samples` ACKs each with `rtt_us`: the first ACK acknowledges the last
    /// round's `windowEnd` (ending it), and `snd_nxt` moves 50 segments on.
    fn round(h: &mut HyStartPlusPlus, tcp: &mut TcpState, rtt_us: i64, samples: u32) {
        tcp.snd_una = h.window_end.wrapping_add(1);
        tcp.snd_nxt = h.window_end.wrapping_add(50);
        for _ in 0..samples {
            h.on_ack(tcp, rtt_us);
        }
    }

    #[test]
    fn rtt_thresh_is_an_eighth_clamped_to_4_and_16_ms() {
        // Section 4.2: max(4 ms, min(minRTT / 8, 16 ms)). 20 ms / 8 = 2.5 ms -> 4 ms;
        // 40 ms / 8 = 5 ms; 128 ms / 8 = 16 ms exactly; 200 ms / 8 = 25 ms -> 16 ms.
        let cases = [(20_000, 4_000), (32_000, 4_000), (40_000, 5_000), (128_000, 16_000), (200_000, 16_000)];
        for (last, thresh) in cases {
            assert_eq!(HyStartPlusPlus::rtt_thresh(last), thresh, "{last}");
        }
    }

    #[test]
    fn slow_start_exits_to_css_at_the_threshold_after_eight_samples() {
        // Last round 40 ms: threshold 5 ms, so a round minimum of 45 ms enters CSS and
        // 44.999 ms does not; the test waits for the 8th sample of the round.
        for (rtt, enters) in [(45 * MS, true), (45 * MS - 1, false)] {
            let (mut h, mut tcp) = start();
            round(&mut h, &mut tcp, 40 * MS, 8);
            round(&mut h, &mut tcp, rtt, 7);
            assert!(!h.in_css());
            h.on_ack(&mut tcp, rtt);
            assert_eq!(h.in_css(), enters, "rtt {rtt}");
            assert_eq!(h.css_baseline_min_rtt, if enters { rtt as u32 } else { NO_RTT });
            // ssthresh is untouched: CSS is still slow start.
            assert_eq!(tcp.ssthresh, TCP_INFINITE_SSTHRESH);
        }
        // No exit in the first round: it has no last round to compare with.
        let (mut h, mut tcp) = start();
        for _ in 0..20 {
            h.on_ack(&mut tcp, 400 * MS);
        }
        assert!(!h.in_css());
    }

    #[test]
    fn css_grows_a_quarter_and_slow_start_at_most_l() {
        // Not paced: L = 8, so an ACK of 10 segments grows 8 in slow start; paced, all 10.
        let (mut h, mut tcp) = start();
        h.grow(&mut tcp, 10);
        assert_eq!(tcp.cwnd, 28);
        tcp.paced = true;
        h.grow(&mut tcp, 10);
        assert_eq!(tcp.cwnd, 38);
        // In CSS, 1/4 of min(N, L): 12 one-segment ACKs add 3 segments (the RFC's 12 x
        // SMSS/4 bytes); an ACK of 10 paced segments adds 10/4 = 2 and keeps 2, which
        // the next 2 single ACKs complete.
        h.css_baseline_min_rtt = 45_000;
        tcp.paced = false;
        for _ in 0..12 {
            h.grow(&mut tcp, 1);
        }
        assert_eq!(tcp.cwnd, 41);
        tcp.paced = true;
        h.grow(&mut tcp, 10);
        assert_eq!((tcp.cwnd, h.css_acked), (43, 2));
        h.grow(&mut tcp, 1);
        h.grow(&mut tcp, 1);
        assert_eq!((tcp.cwnd, h.css_acked), (44, 0));
        // Not paced, 10 acknowledged count as L = 8: two segments.
        tcp.paced = false;
        h.grow(&mut tcp, 10);
        assert_eq!(tcp.cwnd, 46);
    }

    #[test]
    fn css_returns_to_slow_start_when_the_rtt_falls_below_its_baseline() {
        let (mut h, mut tcp) = start();
        round(&mut h, &mut tcp, 40 * MS, 8);
        round(&mut h, &mut tcp, 46 * MS, 8);
        assert_eq!(h.css_baseline_min_rtt, 46_000);
        // The next round's minimum is 45.999 ms < 46 ms: back to slow start on its 8th
        // sample, not before.
        round(&mut h, &mut tcp, 46 * MS - 1, 7);
        assert!(h.in_css());
        h.on_ack(&mut tcp, 46 * MS - 1);
        assert!(!h.in_css());
        // An equal minimum does not end CSS.
        let (mut h, mut tcp) = start();
        round(&mut h, &mut tcp, 40 * MS, 8);
        round(&mut h, &mut tcp, 46 * MS, 8);
        round(&mut h, &mut tcp, 46 * MS, 8);
        assert!(h.in_css());
        assert_eq!(h.css_rounds, 1);
    }

    #[test]
    fn css_ends_in_congestion_avoidance_after_five_rounds() {
        // CSS begins inside round 2 (which counts); the ends of rounds 2..6 are its 5
        // rounds: at the first ACK of round 7, ssthresh = cwnd.
        let (mut h, mut tcp) = start();
        round(&mut h, &mut tcp, 40 * MS, 8);
        round(&mut h, &mut tcp, 46 * MS, 8);
        for r in 1..CSS_ROUNDS {
            round(&mut h, &mut tcp, 46 * MS, 8);
            assert_eq!((h.css_rounds, tcp.ssthresh), (r, TCP_INFINITE_SSTHRESH));
        }
        tcp.cwnd = 77;
        round(&mut h, &mut tcp, 46 * MS, 1);
        assert_eq!((tcp.ssthresh, h.in_css()), (77, false));
        // From then on HyStart++ is done: it does not apply in congestion avoidance, nor
        // in a later slow start (ssthresh is no longer the initial one).
        assert!(!HyStartPlusPlus::applies(&tcp));
        tcp.cwnd = 10;
        assert!(!HyStartPlusPlus::applies(&tcp));
        // A loss in CSS (the host sets ssthresh from the algorithm) ends CSS at the next ACK.
        let (mut h, mut tcp) = start();
        round(&mut h, &mut tcp, 40 * MS, 8);
        round(&mut h, &mut tcp, 46 * MS, 8);
        assert!(h.in_css());
        tcp.ssthresh = 14;
        h.on_ack(&mut tcp, 46 * MS);
        assert!(!h.in_css());
    }

    #[test]
    fn rounds_end_when_window_end_is_acknowledged() {
        // windowEnd 100: snd_una 100 has not acknowledged segment 100; 101 has.
        let (mut h, mut tcp) = start();
        h.on_ack(&mut tcp, 30 * MS);
        tcp.snd_una = 100;
        h.on_ack(&mut tcp, 30 * MS);
        assert_eq!((h.window_end, h.rtt_sample_count), (100, 2));
        (tcp.snd_una, tcp.snd_nxt) = (101, 160);
        h.on_ack(&mut tcp, 35 * MS);
        assert_eq!(
            (h.window_end, h.last_round_min_rtt, h.current_round_min_rtt, h.rtt_sample_count),
            (160, 30_000, 35_000, 1)
        );
        // An ACK without an RTT sample ends a round but counts no sample.
        (tcp.snd_una, tcp.snd_nxt) = (161, 200);
        h.on_ack(&mut tcp, -1);
        assert_eq!((h.window_end, h.current_round_min_rtt, h.rtt_sample_count), (200, NO_RTT, 0));
    }
}
