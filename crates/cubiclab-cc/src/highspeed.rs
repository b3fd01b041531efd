//! `highspeed`: Sally Floyd's HighSpeed TCP (RFC 3649) as Linux ships it,
//! `net/ipv4/tcp_highspeed.c` (Linux 6.x; read in a 6.17-rc tree).
//!
//! The window's response to a loss depends on its size through the table of RFC 3649
//! Appendix B: for `W_{i-1} < cwnd <= W_i` the increase is a(w) = i + 1 segments per RTT and
//! the decrease b(w) = `md_i / 256` of the window. At 38 segments and below it is Reno
//! (a = 1, b = 0.5); at 83000 segments a ≈ 71 and b ≈ 0.1. Linux tracks the row `ai` only in
//! congestion avoidance, so a loss in slow start halves the window. Each ACK in congestion
//! avoidance credits `ai + 1` whatever the number of segments it covers (as the kernel does).
//! Undo is `tcp_reno_undo_cwnd` (the trait's default). No parameters: the table is the
//! algorithm.

use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_slow_start, TcpState};
use crate::CongestionControl;

/// RFC 3649 Appendix B as Linux tabulates it: (window upper bound `W_i` in segments, decrease
/// `b(W_i)` scaled by 256). Row `i` has a(w) = i + 1.
pub const HSTCP_AIMD_VALS: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

const HSTCP_AIMD_MAX: u32 = HSTCP_AIMD_VALS.len() as u32;

/// HighSpeed TCP.
#[derive(Clone, Debug, Default)]
pub struct HighSpeed {
    /// Row of the AIMD table for the current window (`ca->ai`); a(w) = ai + 1.
    ai: u32,
}

impl HighSpeed {
    pub const PARAMS: &'static [ParamSpec] = &[];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        params.check("highspeed", Self::PARAMS)?;
        Ok(HighSpeed::default())
    }

    fn row(&self) -> (u32, u32) {
        HSTCP_AIMD_VALS[self.ai as usize]
    }
}

impl CongestionControl for HighSpeed {
    /// `hstcp_init`: start at row 0 and clamp the window so that `cwnd * md` fits in 32 bits.
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.ai = 0;
        tcp.cwnd_clamp = tcp.cwnd_clamp.min(0xffff_ffff / 128);
    }

    /// `hstcp_ssthresh`: `max(cwnd - (cwnd * md) >> 8, 2)` with the row of the last ACK.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let md = self.row().1;
        tcp.cwnd.wrapping_sub(tcp.cwnd.wrapping_mul(md) >> 8).max(2)
    }

    /// `hstcp_cong_avoid`: slow start (leftover dropped, as in Linux), else move `ai` to the
    /// row holding `cwnd` and credit `ai + 1` per ACK: `cwnd += a(w) / cwnd`.
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        if !tcp.cwnd_limited {
            return;
        }
        if tcp.in_slow_start() {
            tcp_slow_start(tcp, acked);
            return;
        }
        // Keep W[ai-1] < cwnd <= W[ai].
        if tcp.cwnd > self.row().0 {
            while tcp.cwnd > self.row().0 && self.ai < HSTCP_AIMD_MAX - 1 {
                self.ai += 1;
            }
        } else if self.ai > 0 && tcp.cwnd <= HSTCP_AIMD_VALS[self.ai as usize - 1].0 {
            while self.ai > 0 && tcp.cwnd <= HSTCP_AIMD_VALS[self.ai as usize - 1].0 {
                self.ai -= 1;
            }
        }
        if tcp.cwnd < tcp.cwnd_clamp {
            tcp.cwnd_cnt = tcp.cwnd_cnt.wrapping_add(self.ai + 1);
            if tcp.cwnd_cnt >= tcp.cwnd {
                tcp.cwnd_cnt -= tcp.cwnd;
                tcp.cwnd += 1;
            }
        }
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let (_, md) = self.row();
        out("ai", self.ai as f64);
        out("a", (self.ai + 1) as f64);
        out("b", md as f64 / 256.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{replay, Event, ReplayStart, TraceEvent};
    use crate::Algorithm;

    /// RFC 3649 Sec. 5: b(w) falls linearly in log w from 0.5 at Low_Window 38 to
    /// High_Decrease 0.1 at High_Window 83000.
    fn rfc_b(w: f64) -> f64 {
        (0.1 - 0.5) * (w.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln()) + 0.5
    }

    /// RFC 3649 Sec. 5: a(w) = w^2 p(w) 2 b(w) / (2 - b(w)) with p(w) = 0.078 / w^1.2.
    fn rfc_a(w: f64) -> f64 {
        let p = 0.078 / w.powf(1.2);
        w * w * p * 2.0 * rfc_b(w) / (2.0 - rfc_b(w))
    }

    /// A HighSpeed flow in congestion avoidance at `cwnd`, its row already tracked.
    fn at(cwnd: u32) -> (HighSpeed, TcpState) {
        let mut hs = HighSpeed::default();
        let mut tcp = TcpState { cwnd, ssthresh: 2, ..TcpState::default() };
        hs.init(&mut tcp, 0);
        // Reaching the row takes one ACK; undo its credit so tests start from cnt = 0.
        hs.cong_avoid(&mut tcp, 1, 0);
        tcp.cwnd = cwnd;
        tcp.cwnd_cnt = 0;
        (hs, tcp)
    }

    #[test]
    fn table_matches_rfc3649_equations() {
        // Every row i: md_i = floor(256 b(W_i)) exactly, and W_i is where the RFC's a(w)
        // reaches i + 1 (within 0.05: the table rounds W to whole segments; the largest gap,
        // 0.047, is at the last row).
        for (i, &(w, md)) in HSTCP_AIMD_VALS.iter().enumerate() {
            let w = w as f64;
            assert_eq!(md, (rfc_b(w) * 256.0).floor() as u32, "row {i} w {w}");
            assert!((rfc_a(w) - (i + 1) as f64).abs() < 0.05, "row {i} w {w}: a = {}", rfc_a(w));
        }
    }

    #[test]
    fn reno_at_38_and_point_one_at_83000() {
        // w <= 38: row 0, a = 1, b = 128/256 = 0.5: ssthresh(38) = 38 - 19 = 19, Reno's.
        let (mut hs, tcp) = at(38);
        assert_eq!((hs.ai + 1, hs.row().1), (1, 128));
        assert_eq!(hs.ssthresh(&tcp, 0), 19);
        // RFC 3649 Sec. 5 design point: b(83000) = 0.1, a(83000) = 70.7.
        assert!((rfc_b(83000.0) - 0.1).abs() < 1e-12 && (rfc_a(83000.0) - 70.73).abs() < 0.01);
        // Linux: 79517 < 83000 <= 84035 is row 70, so a = 71 and md = 25 (b = 0.098):
        // ssthresh = 83000 - (83000 * 25 >> 8) = 83000 - 8105 = 74895.
        let (mut hs, tcp) = at(83000);
        assert_eq!((hs.ai, hs.row().1), (70, 25));
        assert_eq!(hs.ssthresh(&tcp, 0), 74895);
    }

    #[test]
    fn ssthresh_at_table_rows() {
        // cwnd 1000: 851 < 1000 <= 1058, row 7, md 83: 1000 - (83000 >> 8 = 324) = 676.
        let (mut hs, tcp) = at(1000);
        assert_eq!(hs.ai, 7);
        assert_eq!(hs.ssthresh(&tcp, 0), 676);
        // cwnd 10000: 9991 < 10000 <= 10661, row 29, md 52: 10000 - 2031 = 7969.
        let (mut hs, tcp) = at(10000);
        assert_eq!(hs.ai, 29);
        assert_eq!(hs.ssthresh(&tcp, 0), 7969);
        // Beyond the table (10^6 segments) the last row holds: md 24, 10^6 - 93750 = 906250.
        let (mut hs, tcp) = at(1_000_000);
        assert_eq!(hs.ai, 71);
        assert_eq!(hs.ssthresh(&tcp, 0), 906_250);
    }

    #[test]
    fn loss_in_slow_start_halves() {
        // ai only moves in congestion avoidance: a loss at 1000 in slow start uses row 0.
        let mut hs = HighSpeed::default();
        let mut tcp = TcpState { cwnd: 1000, ..TcpState::default() };
        hs.init(&mut tcp, 0);
        hs.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, hs.ai), (1001, 0));
        assert_eq!(hs.ssthresh(&tcp, 0), 501); // 1001 - (1001 * 128 >> 8 = 500)
    }

    #[test]
    fn row_tracks_window_both_ways() {
        let (mut hs, mut tcp) = at(5000);
        assert_eq!(hs.ai, 19); // 4596 < 5000 <= 5036
        tcp.cwnd = 118; // exactly W_1: row 1
        hs.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(hs.ai, 1);
        tcp.cwnd = 119; // just above W_1: row 2
        hs.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(hs.ai, 2);
    }

    #[test]
    fn increase_per_rtt_is_a_of_w() {
        // cwnd 1000, row 7: each ACK credits a = 8. One RTT = 1000 ACKs = 8000 credits; the
        // window takes 1000, 1001, ..., 1006 of them (7021) and the next needs 1007 > 979:
        // +7 segments per RTT, against a(1000) = 7.74 from RFC 3649's formula.
        let (mut hs, mut tcp) = at(1000);
        for _ in 0..1000 {
            hs.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (1007, 979));
        assert!((rfc_a(1000.0) - 7.74).abs() < 0.01);
        // cwnd 40000, row 55 (38992 < 40000 <= 40808), a = 56: 40000 ACKs credit 2_240_000;
        // 55 increments take sum(40000..=40054) = 2_201_485, the 56th needs 40055 > 38515.
        let (mut hs, mut tcp) = at(40000);
        assert_eq!(hs.ai, 55);
        for _ in 0..40000 {
            hs.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (40055, 38515));
    }

    #[test]
    fn stretch_ack_credits_once() {
        // Linux ignores the count of an ACK in congestion avoidance: an ACK of 50 segments at
        // cwnd 38 (a = 1) credits 1, like an ACK of one.
        let (mut hs, mut tcp) = at(38);
        hs.cong_avoid(&mut tcp, 50, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (38, 1));
    }

    #[test]
    fn init_clamps_window() {
        // 0xffffffff / 128 = 33554431, so cwnd * md (md <= 128) cannot overflow 32 bits.
        let (_, tcp) = at(100);
        assert_eq!(tcp.cwnd_clamp, 33_554_431);
    }

    #[test]
    fn replay_loss_then_undo() {
        // Start in congestion avoidance at 2000 (row 11, 1793 < 2000 <= 2076, md 74); one
        // ACK moves the row (and credits 12 of 2000). Loss: 2000 - (148000 >> 8 = 578) = 1422.
        // Undo restores max(1422, prior_cwnd 2000).
        let ev = |t, event| TraceEvent { time_us: t, event, snd_una: None, snd_nxt: None };
        let evs = [ev(0, crate::test_support::open_ack(1, 10_000)), ev(1, Event::Loss), ev(2, Event::Undo)];
        let alg = Algorithm::new("highspeed", &Params::new()).unwrap();
        let rows = replay(alg, ReplayStart { cwnd: 2000, ssthresh: 1000 }, &evs);
        assert_eq!((rows[0].cwnd, rows[0].cwnd_cnt), (2000, 12));
        assert_eq!(rows[0].vars, vec![("ai", 11.0), ("a", 12.0), ("b", 74.0 / 256.0)]);
        assert_eq!((rows[1].cwnd, rows[1].ssthresh), (1422, 1422));
        assert_eq!(rows[2].cwnd, 2000);
    }

    #[test]
    fn extreme_values_do_not_panic() {
        // 10^6-segment windows and huge ACKs; ssthresh stays within [2, cwnd].
        let (mut hs, mut tcp) = at(1_000_000);
        for _ in 0..100_000 {
            hs.cong_avoid(&mut tcp, u32::MAX, u64::MAX);
        }
        let ss = hs.ssthresh(&tcp, 0);
        assert!((2..=tcp.cwnd).contains(&ss));
        tcp.cwnd = tcp.cwnd_clamp; // the largest window init allows: cwnd * 128 fits
        hs.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(hs.ssthresh(&tcp, 0), 33_554_431 - ((33_554_431 * 24) >> 8));
    }
}
