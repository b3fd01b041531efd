//! `scalable`: Tom Kelly's Scalable TCP as Linux ships it, `net/ipv4/tcp_scalable.c`
//! (Linux 6.x; read in a 6.17-rc tree): `TCP_SCALABLE_AI_CNT` 100 and
//! `TCP_SCALABLE_MD_SCALE` 3, i.e. the paper's a = 0.01 per ACK and b = 1/8.
//!
//! Above 100 segments the window grows by one segment per 100 ACKed segments (about 1% per
//! RTT, a multiplicative increase); below it the rule is Reno's, one segment per window. A loss
//! removes `cwnd >> 3`. Undo is `tcp_reno_undo_cwnd` (the trait's default). Older kernels
//! (2.6.x to 4.x) used an AI count of 50 "to account for delayed ack"; set `ai_cnt` = 50 for
//! them.

use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_cong_avoid_ai, tcp_slow_start, TcpState};
use crate::CongestionControl;

/// Scalable TCP: multiplicative increase, 1/8 decrease.
#[derive(Clone, Debug)]
pub struct Scalable {
    /// `TCP_SCALABLE_AI_CNT`: ACKed segments per one-segment increase, once `cwnd` exceeds it.
    ai_cnt: u32,
    /// `TCP_SCALABLE_MD_SCALE`: a loss removes `cwnd >> md_scale`.
    md_scale: u32,
}

impl Scalable {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "ai_cnt",
            default: 100.0,
            min: 1.0,
            max: 1e9,
            integer: true,
            unit: "segments",
            help: "TCP_SCALABLE_AI_CNT: segments ACKed per one-segment increase above this window",
            choices: &[],
        },
        ParamSpec {
            name: "md_scale",
            default: 3.0,
            min: 1.0,
            max: 31.0,
            integer: true,
            unit: "2^-n removed",
            help: "TCP_SCALABLE_MD_SCALE: a loss removes cwnd >> md_scale",
            choices: &[],
        },
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("scalable", Self::PARAMS)?;
        Ok(Scalable { ai_cnt: p.u32("ai_cnt"), md_scale: p.u32("md_scale") })
    }
}

impl CongestionControl for Scalable {
    /// `tcp_scalable_ssthresh`: `max(cwnd - (cwnd >> 3), 2)`.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        (tcp.cwnd - (tcp.cwnd >> self.md_scale)).max(2)
    }

    /// `tcp_scalable_cong_avoid`: slow start, then `tcp_cong_avoid_ai(min(cwnd, 100))`.
    fn cong_avoid(&mut self, tcp: &mut TcpState, mut acked: u32, _now_ns: u64) {
        if !tcp.cwnd_limited {
            return;
        }
        if tcp.in_slow_start() {
            acked = tcp_slow_start(tcp, acked);
            if acked == 0 {
                return;
            }
        }
        let w = tcp.cwnd.min(self.ai_cnt);
        tcp_cong_avoid_ai(tcp, w, acked);
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("ai_cnt", self.ai_cnt as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{replay, Event, ReplayStart, TraceEvent};
    use crate::Algorithm;

    fn scalable() -> Scalable {
        Scalable::new(&Params::new()).unwrap()
    }

    fn ca(cwnd: u32) -> TcpState {
        TcpState { cwnd, ssthresh: cwnd, ..TcpState::default() }
    }

    #[test]
    fn ssthresh_removes_one_eighth() {
        let mut s = scalable();
        // 100 - (100 >> 3) = 100 - 12 = 88.
        assert_eq!(s.ssthresh(&ca(100), 0), 88);
        // 1000 - 125 = 875: b = 1/8 exactly when 8 divides cwnd.
        assert_eq!(s.ssthresh(&ca(1000), 0), 875);
        // 7 - 0 = 7: below 8 segments nothing is removed; 1 is floored to 2.
        assert_eq!(s.ssthresh(&ca(7), 0), 7);
        assert_eq!(s.ssthresh(&ca(1), 0), 2);
        // md_scale 1 is Reno's halving: 100 - 50 = 50.
        let mut half = Scalable::new(&Params::new().set("md_scale", 1.0)).unwrap();
        assert_eq!(half.ssthresh(&ca(100), 0), 50);
    }

    #[test]
    fn one_percent_per_rtt_above_ai_cnt() {
        // cwnd 1000 > 100: w = 100, so 1000 single ACKs (one RTT) add 1000 / 100 = 10
        // segments: 1% of the window, whatever its size (the window grows by 1.01 per RTT).
        let mut s = scalable();
        let mut tcp = ca(1000);
        for _ in 0..1000 {
            s.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (1010, 0));
        // At 100_000 segments one RTT adds 1000.
        let mut tcp = ca(100_000);
        for _ in 0..100_000 {
            s.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!(tcp.cwnd, 101_000);
    }

    #[test]
    fn reno_rule_below_ai_cnt() {
        // cwnd 50 < 100: w = cwnd = 50, so 50 ACKs add exactly one segment.
        let mut s = scalable();
        let mut tcp = ca(50);
        for _ in 0..49 {
            s.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!(tcp.cwnd, 50);
        s.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (51, 0));
    }

    #[test]
    fn stretch_ack_and_ai_cnt_parameter() {
        // An ACK of 250 segments at cwnd 1000 with w = 100: 2 segments, 50 carried.
        let mut s = scalable();
        let mut tcp = ca(1000);
        s.cong_avoid(&mut tcp, 250, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (1002, 50));
        // ai_cnt 50 (Linux 2.6.x-4.x): 1000 ACKs add 1000 / 50 = 20.
        let mut old = Scalable::new(&Params::new().set("ai_cnt", 50.0)).unwrap();
        let mut tcp = ca(1000);
        for _ in 0..1000 {
            old.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!(tcp.cwnd, 1020);
    }

    #[test]
    fn slow_start_leftover_goes_to_congestion_avoidance() {
        // cwnd 10, ssthresh 12, an ACK of 5: slow start takes 2 (to 12), the 3 left are
        // credited with w = min(12, 100) = 12, not enough for a segment.
        let mut s = scalable();
        let mut tcp = TcpState { ssthresh: 12, ..TcpState::default() };
        s.cong_avoid(&mut tcp, 5, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (12, 3));
    }

    #[test]
    fn replay_loss_then_undo() {
        // From cwnd 800 (ssthresh 800: congestion avoidance), a loss gives 800 - 100 = 700;
        // undo restores max(700, prior_cwnd 800) = 800 (tcp_reno_undo_cwnd).
        let evs = [
            TraceEvent { time_us: 0, event: Event::Loss, snd_una: None, snd_nxt: None },
            TraceEvent { time_us: 10, event: Event::Undo, snd_una: None, snd_nxt: None },
        ];
        let alg = Algorithm::new("scalable", &Params::new()).unwrap();
        let rows = replay(alg, ReplayStart { cwnd: 800, ssthresh: 800 }, &evs);
        assert_eq!((rows[0].cwnd, rows[0].ssthresh), (700, 700));
        assert_eq!(rows[1].cwnd, 800);
    }

    #[test]
    fn extreme_values_do_not_panic() {
        // 10^6 segments, ACKs of u32::MAX: tcp_cong_avoid_ai saturates, nothing traps.
        let mut s = scalable();
        let mut tcp = ca(1_000_000);
        s.cong_avoid(&mut tcp, u32::MAX, u64::MAX);
        assert!(tcp.cwnd > 1_000_000);
        assert_eq!(s.ssthresh(&ca(1_000_000), 0), 875_000);
    }
}
