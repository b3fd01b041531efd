//! `bic`: Binary Increase Congestion control (Xu, Harfoush, Rhee, INFOCOM 2004) as Linux ships
//! it, `net/ipv4/tcp_bic.c` (Linux 6.x; read in a 6.17-rc tree). CUBIC's predecessor, and
//! the default Linux TCP from 2.6.8 to 2.6.18.
//!
//! After a loss at window W the window is cut to W·819/1024 and `last_max_cwnd` remembers W
//! (or less, with fast convergence). Below it BIC searches in binary steps: each RTT it
//! closes a quarter of the distance (`BICTCP_B` = 4), at most `max_increment` = 16 segments;
//! within 7 segments of it, B / `smooth_part` = 1/5 segment per RTT. Above it BIC probes for
//! a new maximum, slowly at first, then faster, then linearly. Windows up to `low_window` = 14 follow Reno. The
//! number of ACKs per increment is divided by the measured packets per ACK
//! (`delayed_ack`, packets/ACK × 16).
//!
//! Differences from the 2004 paper, all Linux's: the counts are integers of segments; the
//! count is recomputed only when the window changed or `HZ / 32` jiffies passed (HZ = 1000
//! here); `set_state(Loss)` forgets everything (`bictcp_reset`); undo is
//! `tcp_reno_undo_cwnd` (the trait's default) in current kernels, where early ones restored
//! `max(cwnd, last_max_cwnd)`. `initial_ssthresh` is 0 (none) in current kernels, 100 in
//! early ones.

use crate::bic_lineage::{
    count_is_fresh, kept_window, last_max_after_loss, per_ack_count, update_ack_ratio, ACK_RATIO_SHIFT,
    BICTCP_BETA_SCALE, INITIAL_SSTHRESH,
};
use crate::cubic_frame::{GrowthRule, SlowStart};
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_cong_avoid_ai, AckSample, CaState, TcpState};

/// Binary search steps a quarter (1/B) of the distance to `last_max_cwnd` per RTT.
const BICTCP_B: u32 = 4;
/// Jiffies per second (Linux `CONFIG_HZ`; 1000 on most distribution kernels).
const HZ: u32 = 1000;

/// Linux `tcp_jiffies32` from the event time.
#[inline]
fn jiffies(now_ns: u64) -> u32 {
    crate::clock::jiffies32(now_ns, HZ)
}

/// BIC TCP.
#[derive(Clone, Debug)]
pub struct Bic {
    // Parameters (module parameters in Linux).
    beta: u32,
    max_increment: u32,
    low_window: u32,
    smooth_part: u32,
    fast_convergence: bool,
    initial_ssthresh: u32,
    // State (`struct bictcp`).
    /// ACKed segments per one-segment increase.
    cnt: u32,
    /// Window before the last reduction (the binary search's upper end).
    last_max_cwnd: u32,
    /// `cwnd` when `cnt` was last computed.
    last_cwnd: u32,
    /// Jiffies when `cnt` was last computed.
    last_time: u32,
    /// Jiffies when the current epoch began (0: none).
    epoch_start: u32,
    /// Packets per ACK << 4, a moving average.
    delayed_ack: u32,
}

impl Bic {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "beta",
            default: 819.0,
            min: 1.0,
            max: 1023.0,
            integer: true,
            unit: "1/1024",
            help: "window kept after a loss (819 = 0.8)",
            choices: &[],
        },
        ParamSpec {
            name: "max_increment",
            default: 16.0,
            min: 1.0,
            max: 1e6,
            integer: true,
            unit: "segments/RTT",
            help: "largest increase per RTT during binary search",
            choices: &[],
        },
        ParamSpec {
            name: "low_window",
            default: 14.0,
            min: 0.0,
            max: 1e6,
            integer: true,
            unit: "segments",
            help: "windows up to this follow Reno (TCP friendliness)",
            choices: &[],
        },
        ParamSpec {
            name: "smooth_part",
            default: 20.0,
            min: 1.0,
            max: 1000.0,
            integer: true,
            unit: "RTTs",
            help: "RTTs to grow from last_max - B to last_max",
            choices: &[],
        },
        ParamSpec::switch(
            "fast_convergence",
            true,
            "lower last_max further when the window shrank since the last loss",
        ),
        INITIAL_SSTHRESH,
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("bic", Self::PARAMS)?;
        let mut bic = Bic {
            beta: p.u32("beta"),
            max_increment: p.u32("max_increment"),
            low_window: p.u32("low_window"),
            smooth_part: p.u32("smooth_part"),
            fast_convergence: p.bool("fast_convergence"),
            initial_ssthresh: p.u32("initial_ssthresh"),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            epoch_start: 0,
            delayed_ack: 0,
        };
        bic.reset();
        Ok(bic)
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.epoch_start = 0;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// `bictcp_update`: ACKs per increment for window `cwnd`.
    fn update(&mut self, cwnd: u32, now: u32) {
        if count_is_fresh(self.last_cwnd, self.last_time, cwnd, now, HZ) {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        if self.epoch_start == 0 {
            self.epoch_start = now;
        }

        if cwnd <= self.low_window {
            self.cnt = cwnd;
            return;
        }

        let (max, inc) = (self.last_max_cwnd, self.max_increment);
        self.cnt = if cwnd < max {
            // Binary search: a quarter of the distance per RTT, at most max_increment.
            let dist = (max - cwnd) / BICTCP_B;
            if dist > inc {
                cwnd / inc
            } else if dist <= 1 {
                cwnd.wrapping_mul(self.smooth_part) / BICTCP_B
            } else {
                cwnd / dist
            }
        } else if cwnd < max.wrapping_add(BICTCP_B) {
            // Max probing: creep just above the old maximum...
            cwnd.wrapping_mul(self.smooth_part) / BICTCP_B
        } else if cwnd < max.wrapping_add(inc.wrapping_mul(BICTCP_B - 1)) {
            // ...then accelerate: (cwnd - max) / 3 segments per RTT...
            // (cwnd >= max + 4 here, so the divisor is at least 4.)
            cwnd.wrapping_mul(BICTCP_B - 1) / cwnd.wrapping_sub(max).max(1)
        } else {
            // ...then linearly, max_increment per RTT.
            cwnd / inc
        };

        // No loss yet (slow start ended by ssthresh, or after a timeout): 5% per RTT at least.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }

        // Per ACK, not per segment: divide by packets per ACK (delayed_ack >= 15 always).
        self.cnt = per_ack_count(self.cnt, self.delayed_ack);
    }
}

impl GrowthRule for Bic {
    const SLOW_START: SlowStart = SlowStart::Segments;

    /// `bictcp_init`, and `bictcp_state`: a timeout forgets the search.
    fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.reset();
    }

    fn initial_ssthresh(&self) -> u32 {
        self.initial_ssthresh
    }

    /// `bictcp_recalc_ssthresh`: remember the window (less with fast convergence), keep
    /// beta/1024 of it, or half at Reno windows.
    fn on_congestion(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let cwnd = tcp.cwnd;
        self.epoch_start = 0;
        self.last_max_cwnd =
            last_max_after_loss(cwnd, self.last_max_cwnd, self.beta, BICTCP_BETA_SCALE, self.fast_convergence);
        if cwnd <= self.low_window {
            (cwnd >> 1).max(2)
        } else {
            kept_window(cwnd, self.beta)
        }
    }

    /// `bictcp_cong_avoid` after slow start.
    fn grow(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        self.update(tcp.cwnd, jiffies(now_ns));
        tcp_cong_avoid_ai(tcp, self.cnt, acked);
    }

    /// `bictcp_acked`: delayed_ack = 15/16 delayed_ack + pkts_acked (in units of 1/16).
    fn on_ack(&mut self, tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        if tcp.ca_state == CaState::Open {
            self.delayed_ack = update_ack_ratio(self.delayed_ack, sample.pkts_acked);
        }
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("cnt", self.cnt as f64);
        out("last_max_cwnd", self.last_max_cwnd as f64);
        out("last_cwnd", self.last_cwnd as f64);
        out("last_time", self.last_time as f64);
        out("epoch_start", self.epoch_start as f64);
        out("ack_ratio", self.delayed_ack as f64 / (1 << ACK_RATIO_SHIFT) as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{replay, Event, ReplayStart, TraceEvent};
    use crate::Algorithm;
    use crate::CongestionControl;

    fn bic() -> Bic {
        Bic::new(&Params::new()).unwrap()
    }

    /// BIC in congestion avoidance at `cwnd` below/above `last_max`, one packet per ACK
    /// (`delayed_ack` = 16) so that `cnt` is the per-segment count of `bictcp_update`.
    fn at(cwnd: u32, last_max: u32) -> (Bic, TcpState) {
        let mut b = bic();
        b.last_max_cwnd = last_max;
        b.delayed_ack = 1 << ACK_RATIO_SHIFT;
        (b, TcpState { cwnd, ssthresh: 2, ..TcpState::default() })
    }

    /// `n` ACKs of one segment, all at time 0 (so `cnt` is recomputed only when cwnd moves).
    fn acks(b: &mut Bic, tcp: &mut TcpState, n: u32) {
        for _ in 0..n {
            b.cong_avoid(tcp, 1, 0);
        }
    }

    fn cnt_at(cwnd: u32, last_max: u32) -> u32 {
        let (mut b, mut tcp) = at(cwnd, last_max);
        b.cong_avoid(&mut tcp, 1, 0);
        b.cnt
    }

    #[test]
    fn ssthresh_beta_and_low_window() {
        let mut b = bic();
        // cwnd 100 > low_window: 100 * 819 / 1024 = 81900 / 1024 = 79 (79.98 truncated).
        let tcp = TcpState { cwnd: 100, ..TcpState::default() };
        assert_eq!(b.ssthresh(&tcp, 0), 79);
        assert_eq!(b.last_max_cwnd, 100);
        // cwnd 14 = low_window: Reno, 14 >> 1 = 7; cwnd 3: 1, floored to 2.
        let tcp = TcpState { cwnd: 14, ..TcpState::default() };
        assert_eq!(b.ssthresh(&tcp, 0), 7);
        let tcp = TcpState { cwnd: 3, ..TcpState::default() };
        assert_eq!(b.ssthresh(&tcp, 0), 2);
        // cwnd 15 just above: 15 * 819 / 1024 = 12285 / 1024 = 11.
        let tcp = TcpState { cwnd: 15, ..TcpState::default() };
        assert_eq!(b.ssthresh(&tcp, 0), 11);
    }

    #[test]
    fn fast_convergence_lowers_last_max() {
        // A loss at 100 below last_max 200: last_max = 100 * (1024 + 819) / 2048
        // = 184300 / 2048 = 89 (89.99 truncated), i.e. (1 + beta) / 2 of the window.
        let (mut b, tcp) = at(100, 200);
        assert_eq!(b.ssthresh(&tcp, 0), 79);
        assert_eq!(b.last_max_cwnd, 89);
        // Without fast convergence it is the window itself.
        let mut b = Bic::new(&Params::new().set("fast_convergence", 0.0)).unwrap();
        b.last_max_cwnd = 200;
        assert_eq!(b.ssthresh(&tcp, 0), 79);
        assert_eq!(b.last_max_cwnd, 100);
        // A loss above the old maximum keeps the window: 250.
        let (mut b, _) = at(0, 200);
        b.ssthresh(&TcpState { cwnd: 250, ..TcpState::default() }, 0);
        assert_eq!(b.last_max_cwnd, 250);
    }

    #[test]
    fn linear_increase_far_below_last_max() {
        // last_max 200, cwnd 100: dist = 100 / 4 = 25 > max_increment 16, so cnt = cwnd / 16:
        // 6 ACKs per segment for cwnd 100..=111, 7 for 112..=127 (dist stays > 16 until 132).
        // One RTT of 100 ACKs: 12 segments for 72 ACKs, then 4 for 28: cwnd 116, +16.
        let (mut b, mut tcp) = at(100, 200);
        acks(&mut b, &mut tcp, 100);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (116, 0));
        // A larger max_increment (32 >= dist 25) makes it a binary-search step: 100 / 25 = 4.
        let mut b = Bic::new(&Params::new().set("max_increment", 32.0)).unwrap();
        b.last_max_cwnd = 200;
        b.delayed_ack = 16;
        let mut tcp = TcpState { cwnd: 100, ssthresh: 2, ..TcpState::default() };
        b.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(b.cnt, 4);
    }

    #[test]
    fn binary_search_toward_last_max() {
        // last_max 200, cwnd 180: dist = 20 / 4 = 5, cnt = 180 / 5 = 36: about dist = 5
        // segments per RTT. Then 181..=183: dist 4, cnt 45; 184: cnt 46; 185: dist 3.
        // 180 ACKs: 36 + 45 + 45 + 45 = 171 reach 184, 9 left: +4 in the RTT.
        assert_eq!(cnt_at(180, 200), 36);
        let (mut b, mut tcp) = at(180, 200);
        acks(&mut b, &mut tcp, 180);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (184, 9));
        // Within B of last_max (dist <= 1): cnt = cwnd * smooth_part / B = 197 * 20 / 4 = 985,
        // a fifth of a segment per RTT.
        assert_eq!(cnt_at(197, 200), 985);
    }

    #[test]
    fn max_probing_above_last_max() {
        // last_max 100. Below 100 + B: cnt = cwnd * 20 / 4, e.g. 102 -> 510.
        assert_eq!(cnt_at(102, 100), 510);
        // Below 100 + 16 * 3 = 148: cnt = 3 cwnd / (cwnd - 100): (cwnd - 100) / 3 per RTT,
        // faster the farther above: 110 -> 330 / 10 = 33, 130 -> 390 / 30 = 13,
        // 147 -> 441 / 47 = 9.
        assert_eq!(cnt_at(110, 100), 33);
        assert_eq!(cnt_at(130, 100), 13);
        assert_eq!(cnt_at(147, 100), 9);
        // From 148 on: linear, cwnd / 16 = 9.
        assert_eq!(cnt_at(148, 100), 9);
        // One RTT from 140: cnt 10 at 140..=142 (30 ACKs), 9 from 143 on (429 / 43 = 9, and
        // cwnd / 16 = 9 for 148..=159): 12 more segments for 108 ACKs, 2 left: 155, +15 per RTT.
        let (mut b, mut tcp) = at(140, 100);
        acks(&mut b, &mut tcp, 140);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (155, 2));
    }

    #[test]
    fn reno_below_low_window_and_cap_without_loss() {
        // cwnd 10 <= 14: cnt = cwnd, one segment per window like Reno.
        let (mut b, mut tcp) = at(10, 0);
        acks(&mut b, &mut tcp, 10);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (11, 0));
        // No loss yet (last_max 0) at cwnd 1000: cwnd / 16 = 62 capped at 20: 5% per RTT.
        assert_eq!(cnt_at(1000, 0), 20);
        // But just above the Reno region the probing rule gives 3 cwnd / cwnd = 3.
        assert_eq!(cnt_at(20, 0), 3);
    }

    #[test]
    fn delayed_ack_ratio() {
        // Default ratio 2 (32 / 16): the count halves, cwnd 100 under last_max 200:
        // cnt = 6, then (6 << 4) / 32 = 3.
        let mut b = bic();
        b.last_max_cwnd = 200;
        let mut tcp = TcpState { cwnd: 100, ssthresh: 2, ..TcpState::default() };
        b.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(b.cnt, 3);
        // One packet per ACK: d += 1 - (d >> 4): 32 -> 31, then 31 + 1 - 1 = 31 for ever
        // (the average cannot fall below 16 s + 15): cnt = 96 / 31 = 3.
        let s1 = AckSample { pkts_acked: 1, rtt_us: 1000, in_flight: 100 };
        for _ in 0..100 {
            b.pkts_acked(&mut tcp, &s1, 0);
        }
        assert_eq!(b.delayed_ack, 31);
        // Four per ACK: rises by 2 per ACK until d >> 4 = 4, i.e. 64: cnt = 96 / 64 = 1.
        let s4 = AckSample { pkts_acked: 4, ..s1 };
        for _ in 0..100 {
            b.pkts_acked(&mut tcp, &s4, 0);
        }
        assert_eq!(b.delayed_ack, 64);
        tcp.cwnd = 101; // force a recomputation: 101 / 16 = 6 -> 96 / 64 = 1
        b.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(b.cnt, 1);
        // Outside Open the average does not move.
        tcp.ca_state = CaState::Recovery;
        b.pkts_acked(&mut tcp, &s1, 0);
        assert_eq!(b.delayed_ack, 64);
    }

    #[test]
    fn recompute_rate_limited_to_hz_over_32() {
        // Same cwnd within HZ / 32 = 31 jiffies (31 ms): cnt is not recomputed even though
        // last_max changed; at 32 ms it is.
        let (mut b, mut tcp) = at(100, 200);
        b.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(b.cnt, 6); // 100 / 16
        b.last_max_cwnd = 120; // dist (120 - 100) / 4 = 5: cnt would be 100 / 5 = 20
        b.cong_avoid(&mut tcp, 1, 31_000_000);
        assert_eq!(b.cnt, 6);
        b.cong_avoid(&mut tcp, 1, 32_000_000);
        assert_eq!(b.cnt, 20);
    }

    #[test]
    fn timeout_forgets_everything() {
        let (mut b, mut tcp) = at(100, 200);
        b.set_state(&mut tcp, CaState::Recovery, 0);
        assert_eq!(b.last_max_cwnd, 200);
        b.set_state(&mut tcp, CaState::Loss, 0);
        assert_eq!((b.last_max_cwnd, b.delayed_ack), (0, 32));
    }

    #[test]
    fn replay_losses_and_timeout() {
        // Slow start 10 -> 100 (90 ACKs). Loss: ssthresh = cwnd = 79, last_max 100. A second
        // loss at 79 < 100: fast convergence, last_max = 79 * 1843 / 2048 = 71, ssthresh =
        // 79 * 819 / 1024 = 63. A timeout: ssthresh = 63 * 819 / 1024 = 50, cwnd 1, and
        // set_state(Loss) resets last_max to 0.
        let ev = |t, event| TraceEvent { time_us: t, event, snd_una: None, snd_nxt: None };
        let mut evs: Vec<TraceEvent> = (0..90).map(|i| ev(i * 100, crate::test_support::open_ack(1, 10_000))).collect();
        evs.extend([ev(10_000, Event::Loss), ev(10_001, Event::Loss), ev(10_002, Event::Rto)]);
        let rows = replay(Algorithm::new("bic", &Params::new()).unwrap(), ReplayStart::default(), &evs);
        let var = |i: usize, name: &str| rows[i].vars.iter().find(|(k, _)| *k == name).unwrap().1;
        assert_eq!(rows[89].cwnd, 100);
        assert_eq!((rows[90].cwnd, rows[90].ssthresh, var(90, "last_max_cwnd")), (79, 79, 100.0));
        assert_eq!((rows[91].cwnd, rows[91].ssthresh, var(91, "last_max_cwnd")), (63, 63, 71.0));
        assert_eq!((rows[92].cwnd, rows[92].ssthresh, var(92, "last_max_cwnd")), (1, 50, 0.0));
    }

    #[test]
    fn an_ack_in_disorder_leaves_delayed_ack() {
        // tcp_bic.c bictcp_acked: delayed_ack += pkts_acked - delayed_ack/16, in Open only.
        // From 2 << 4 = 32, an ACK of 4 segments (snd_una moves by 4) makes it 32 + 4 - 2 =
        // 34, i.e. an ACK ratio of 34/16; the same ACK arriving in Disorder leaves 32 (2.0).
        let ratio = |disorder| {
            let e = TraceEvent {
                time_us: 1000,
                event: Event::Ack {
                    acked: 4,
                    rtt_us: 10_000,
                    cwnd_limited: true,
                    disorder,
                    srtt_us: None,
                    in_flight: None,
                },
                snd_una: Some(4),
                snd_nxt: Some(14),
            };
            let rows = replay(Algorithm::new("bic", &Params::new()).unwrap(), ReplayStart::default(), &[e]);
            rows[0].vars.iter().find(|(k, _)| *k == "ack_ratio").unwrap().1
        };
        assert_eq!((ratio(false), ratio(true)), (34.0 / 16.0, 2.0));
    }

    #[test]
    fn initial_ssthresh_parameter() {
        // initial_ssthresh 50: slow start stops at 50; the 41st ACK is congestion avoidance.
        let ev = |t| TraceEvent {
            time_us: t,
            event: crate::test_support::open_ack(1, 10_000),
            snd_una: None,
            snd_nxt: None,
        };
        let evs: Vec<TraceEvent> = (0..41).map(ev).collect();
        let alg = Algorithm::new("bic", &Params::new().set("initial_ssthresh", 50.0)).unwrap();
        let rows = replay(alg, ReplayStart::default(), &evs);
        assert_eq!((rows[39].cwnd, rows[39].ssthresh), (50, 50));
        // At 50 with last_max 0: 50 >= 0 + 48, linear 50 / 16 = 3; delayed_ack fell to 31
        // after 41 single ACKs: (3 << 4) / 31 = 1. So the 41st ACK adds a whole segment.
        assert_eq!(rows[40].cwnd, 51);
    }

    #[test]
    fn extreme_values_do_not_panic() {
        // 10^6-segment windows, 10^6 s of time, huge ACKs: u32 arithmetic as the kernel's
        // (wrapping), no division by zero; ssthresh stays within [2, cwnd].
        let mut b = bic();
        let mut tcp = TcpState { cwnd: 1_000_000, ssthresh: 2, ..TcpState::default() };
        b.init(&mut tcp, 0);
        for (i, t) in [0u64, 1, 1000, 4_294_967, 4_294_968, 1_000_000].into_iter().enumerate() {
            let now = t * 1_000_000_000;
            let s =
                AckSample { pkts_acked: if i % 2 == 0 { 1_000_000 } else { u32::MAX }, rtt_us: i64::MAX, in_flight: 0 };
            b.pkts_acked(&mut tcp, &s, now);
            for _ in 0..1000 {
                b.cong_avoid(&mut tcp, 1_000_000, now + 1);
            }
            let ss = b.ssthresh(&tcp, now + 2);
            assert!((2..=tcp.cwnd).contains(&ss), "t {t}: ssthresh {ss} cwnd {}", tcp.cwnd);
            tcp.cwnd = 1_000_000 - i as u32; // below last_max: fast convergence next time
            b.cong_avoid(&mut tcp, 1, now + 3);
            b.set_state(&mut tcp, if i % 3 == 2 { CaState::Loss } else { CaState::Recovery }, now + 4);
        }
    }
}
