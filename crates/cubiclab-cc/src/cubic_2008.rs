//! `cubic-2008`: Algorithm 1 of Ha, Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP
//! Variant" (ACM SIGOPS OSR 2008; seed 000), the paper's pseudo-code of Linux CUBIC v2.2
//! (2.6.25), with its Eqs. 1-4 and the hooks of its Section 4.2.
//!
//! The pseudo-code is followed literally, in real numbers (f64, seconds), with the window
//! and its counter as integers in [`TcpState`]:
//! - β = 0.2 is the *decrease*: the window keeps 1 − β = 0.8 of itself (3.6);
//!   C = 0.4; K = ∛(W_last_max·β/C) (Eq. 2, computed from W_last_max, not from the
//!   distance to the current window); target = origin + C(t − K)³ with
//!   t = now + dMin − epoch_start, one minimum RTT ahead (3.2).
//! - cnt = cwnd/(target − cwnd), or 100·cwnd when the target is not above cwnd (3.4, 3.5).
//!   On each ACK the window grows by one when `cwnd_cnt > cnt`, else `cwnd_cnt` counts the
//!   ACK: one increase every ⌈cnt⌉ + 1 ACKs (⌊cnt⌋ + 2 when cnt is whole), one ACK slower
//!   than Linux, which tests `>=`.
//! - TCP friendliness (3.3): W_tcp grows by 3β/(2−β) per window of ACKs (1/3 for β = 0.2)
//!   from the window at the start of the epoch, Eq. 4:
//!   W_tcp(t) = W_max(1−β) + 3β/(2−β)·t/RTT; when W_tcp > cwnd, cnt is at most
//!   cwnd/(W_tcp − cwnd).
//! - Fast convergence (3.7): a loss below W_last_max sets W_last_max = cwnd·(2−β)/2.
//! - Loss: epoch_start = 0, ssthresh = cwnd = cwnd·(1−β) (rounded down, at least 2 as in
//!   Linux). Timeout: `cubic_reset()` (Linux's `bictcp_state` on entering Loss; the minimum
//!   delay is reset too, Section 4.2 item 6). Slow start while cwnd <= ssthresh, one
//!   segment per ACK. No HyStart. Undo returns max(cwnd, W_last_max) (Section 4.2 item 5).
//!
//! "On each ACK" is read as "on each acknowledged segment": the pseudo-code has one segment
//! per ACK and no delayed-ACK compensation, so an ACK of n segments runs the per-ACK body
//! n times at the same instant. This keeps the paper's per-RTT rates for any ACK ratio.

use crate::cubic_frame::{count_ack, GrowthRule, SlowStart};
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{AckSample, TcpState};

/// Algorithm 1 with its parameters.
#[derive(Clone, Debug)]
pub struct Cubic2008 {
    beta: f64,
    c: f64,
    fast_convergence: bool,
    tcp_friendliness: bool,
    /// 3β/(2−β): the Reno-fair additive increase per RTT.
    alpha: f64,
    // State of Algorithm 1 (`cubic_reset` zeroes all of it).
    w_last_max: f64,
    /// Seconds; `None` is the pseudo-code's `epoch_start <= 0`.
    epoch_start: Option<f64>,
    origin_point: f64,
    d_min: f64,
    w_tcp: f64,
    k: f64,
    ack_cnt: f64,
    // Kept for traces.
    cnt: f64,
    target: f64,
}

impl Cubic2008 {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "decrease",
            default: 0.2,
            min: 0.01,
            max: 0.99,
            integer: false,
            unit: "fraction removed",
            help: "multiplicative decrease, the paper's beta: the window keeps 1 - decrease",
            choices: &[],
        },
        ParamSpec {
            name: "c",
            default: 0.4,
            min: 1e-4,
            max: 1e6,
            integer: false,
            unit: "segments/s^3",
            help: "cubic coefficient C",
            choices: &[],
        },
        ParamSpec::switch("fast_convergence", true, "W_last_max = cwnd*(2-decrease)/2 on a loss below it"),
        ParamSpec::switch("tcp_friendliness", true, "grow at least as fast as the emulated Reno window (Eq. 4)"),
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-2008", Self::PARAMS)?;
        let beta = p.f64("decrease");
        let mut s = Self {
            beta,
            c: p.f64("c"),
            fast_convergence: p.bool("fast_convergence"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            alpha: 3.0 * beta / (2.0 - beta),
            w_last_max: 0.0,
            epoch_start: None,
            origin_point: 0.0,
            d_min: 0.0,
            w_tcp: 0.0,
            k: 0.0,
            ack_cnt: 0.0,
            cnt: 0.0,
            target: 0.0,
        };
        s.cubic_reset();
        Ok(s)
    }

    /// `cubic_reset()`.
    fn cubic_reset(&mut self) {
        self.w_last_max = 0.0;
        self.epoch_start = None;
        self.origin_point = 0.0;
        self.d_min = 0.0;
        self.w_tcp = 0.0;
        self.k = 0.0;
        self.ack_cnt = 0.0;
    }

    /// `cubic_update()`: the ACKs per one-segment increase.
    fn cubic_update(&mut self, cwnd: f64, now: f64) -> f64 {
        self.ack_cnt += 1.0;
        if self.epoch_start.is_none() {
            self.epoch_start = Some(now);
            if cwnd < self.w_last_max {
                self.k = (self.w_last_max * self.beta / self.c).cbrt();
                self.origin_point = self.w_last_max;
            } else {
                self.k = 0.0;
                self.origin_point = cwnd;
            }
            self.ack_cnt = 1.0;
            self.w_tcp = cwnd;
        }
        let t = now + self.d_min - self.epoch_start.unwrap_or(now);
        let target = self.origin_point + self.c * (t - self.k).powi(3);
        self.target = target;
        let mut cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100.0 * cwnd };
        if self.tcp_friendliness {
            // cubic_tcp_friendliness()
            self.w_tcp += self.alpha * self.ack_cnt / cwnd;
            self.ack_cnt = 0.0;
            if self.w_tcp > cwnd {
                let max_cnt = cwnd / (self.w_tcp - cwnd);
                if cnt > max_cnt {
                    cnt = max_cnt;
                }
            }
        }
        cnt
    }
}

impl GrowthRule for Cubic2008 {
    const SLOW_START: SlowStart = SlowStart::PerSegment { max: u32::MAX };

    /// `cubic_reset()`: at the start, and on a "Timeout" (the connection enters Loss).
    fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.cubic_reset();
    }

    /// "Packet loss": the new ssthresh (the host then sets cwnd to it).
    fn on_congestion(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let cwnd = f64::from(tcp.cwnd);
        self.epoch_start = None;
        self.w_last_max =
            if cwnd < self.w_last_max && self.fast_convergence { cwnd * (2.0 - self.beta) / 2.0 } else { cwnd };
        // The tiny bias keeps e.g. 1000 × 0.8 from rounding down to 799.
        ((cwnd * (1.0 - self.beta) + 1e-9).floor() as u32).max(2)
    }

    /// "On each ACK" in congestion avoidance, for one acknowledged segment.
    fn grow(&mut self, tcp: &mut TcpState, _acked: u32, now_ns: u64) {
        let cnt = self.cubic_update(f64::from(tcp.cwnd), now_ns as f64 * 1e-9);
        self.cnt = cnt;
        count_ack(tcp, f64::from(tcp.cwnd_cnt) > cnt);
    }

    fn restore(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        tcp.cwnd.max(self.w_last_max as u32)
    }

    /// dMin ← min(dMin, RTT).
    fn on_ack(&mut self, _tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        if sample.rtt_us >= 0 {
            let rtt = sample.rtt_us as f64 * 1e-6;
            self.d_min = if self.d_min > 0.0 { self.d_min.min(rtt) } else { rtt };
        }
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("w_last_max", self.w_last_max);
        out("k_s", self.k);
        out("origin", self.origin_point);
        out("target", self.target);
        out("w_tcp", self.w_tcp);
        out("cnt", self.cnt);
        out("d_min_ms", self.d_min * 1e3);
        out("epoch_start_s", self.epoch_start.unwrap_or(0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Event, ReplayStart, Replayer};
    use crate::test_support::{ack, ack_clock, ev, var};
    use crate::Algorithm;
    use crate::CongestionControl;

    /// Congestion avoidance at cwnd `w`, one ACK (RTT sample), then a loss at `w`.
    fn loss_at(params: &Params, w: u32, rtt_us: u64) -> Replayer {
        let a = Algorithm::Cubic2008(Cubic2008::new(params).unwrap());
        let mut r = Replayer::new(a, ReplayStart { cwnd: w, ssthresh: w / 2 }, 1_000_000);
        r.step(&ack(1_000_000, 1, rtt_us));
        r.host.tcp.cwnd = w;
        r.step(&ev(1_000_001, Event::Loss));
        r
    }

    #[test]
    fn loss_keeps_80_percent_and_fast_convergence_remembers_90() {
        // (3.6): ssthresh = cwnd = 1000·(1 − 0.2) = 800, W_last_max = 1000.
        let mut a = Cubic2008::new(&Params::new()).unwrap();
        assert_eq!(a.ssthresh(&TcpState { cwnd: 1000, ..TcpState::default() }, 0), 800);
        assert_eq!(a.w_last_max, 1000.0);
        // (3.7): the next loss at 900 < 1000 gives W_last_max = 900·(2 − 0.2)/2 = 810,
        // ssthresh 720; undo (Section 4.2) returns max(cwnd, W_last_max) = 810.
        let mut tcp = TcpState { cwnd: 900, ..TcpState::default() };
        assert_eq!(a.ssthresh(&tcp, 0), 720);
        assert!((a.w_last_max - 810.0).abs() < 1e-9);
        tcp.cwnd = 720;
        assert_eq!(a.undo_cwnd(&mut tcp, 0), 810);
    }

    #[test]
    fn k_and_target_follow_eqs_1_and_2() {
        // After the loss at 1000 (cwnd 800, dMin 0.1 s): the first ACK is slow start
        // (cwnd <= ssthresh: 801), the next starts the epoch with cwnd 801 < W_last_max:
        // K = ∛(1000·0.2/0.4) = ∛500 = 7.937 s, origin 1000, t = dMin = 0.1:
        // target = 1000 + 0.4(0.1 − 7.937)³ = 807.46, cnt = 801/(807.46 − 801) = 124.0.
        let mut r = loss_at(&Params::new(), 1000, 100_000);
        assert_eq!(r.host.tcp.cwnd, 800);
        r.step(&ack(1_000_002, 1, 100_000));
        assert_eq!(r.host.tcp.cwnd, 801);
        r.step(&ack(1_000_003, 1, 100_000));
        let k = 500f64.cbrt();
        assert!((var(&r, "k_s") - k).abs() < 1e-12);
        assert_eq!(var(&r, "origin"), 1000.0);
        let t = 1.000003 + 0.1 - 1.000003;
        let want = 1000.0 + 0.4 * (t - k).powi(3);
        assert!((var(&r, "target") - want).abs() < 1e-6, "{} vs {want}", var(&r, "target"));
        assert!((var(&r, "cnt") - 801.0 / (want - 801.0)).abs() < 1e-6);
        // Plateau: at t = K (now = epoch + K − dMin) the target is W_last_max.
        let at_k = 1_000_003 + ((k - 0.1) * 1e6).round() as u64;
        r.step(&ack(at_k, 1, 100_000));
        assert!((var(&r, "target") - 1000.0).abs() < 1e-3, "{}", var(&r, "target"));
        // Convex side: 10 s past K, target = 1000 + 0.4·10³ = 1400.
        r.step(&ack(at_k + 10_000_000, 1, 100_000));
        assert!((var(&r, "target") - 1400.0).abs() < 1e-3, "{}", var(&r, "target"));
    }

    #[test]
    fn an_ack_of_n_segments_counts_n() {
        // cnt ≈ 124 after the loss above: the window rises on the ACK after cwnd_cnt
        // exceeds cnt, so 126 single-segment ACKs (124 + 2) or one ACK of 126 segments both
        // add one segment.
        let mut a = loss_at(&Params::new(), 1000, 100_000);
        let mut b = loss_at(&Params::new(), 1000, 100_000);
        a.step(&ack(1_000_002, 1, 100_000));
        b.step(&ack(1_000_002, 1, 100_000));
        for i in 0..126 {
            a.step(&ack(1_000_003 + i, 1, 100_000));
        }
        b.step(&ack(1_000_003, 126, 100_000));
        assert_eq!((a.host.tcp.cwnd, b.host.tcp.cwnd), (802, 802));
        assert_eq!(a.host.tcp.cwnd_cnt, b.host.tcp.cwnd_cnt);
    }

    #[test]
    fn tcp_mode_follows_eq_4() {
        // RTT 5 ms (ACK every other segment; each segment counts): W_tcp grows 3β/(2−β) =
        // 1/3 per window of ACKs from 801 at the epoch, Eq. 4:
        // W_tcp(4 s) = 801 + (1/3)·4/0.005 = 1067.7, while the cubic target is still
        // below W_max (1000 + 0.4(4.005 − 7.937)³ = 975.7): TCP mode, and cwnd follows
        // W_tcp (cnt = cwnd/(W_tcp − cwnd)): it steps up once W_tcp passes its integer
        // value, so it stays within one segment above and two below.
        let mut r = loss_at(&Params::new(), 1000, 5_000);
        ack_clock(&mut r, 1_000_002, 5_000, 2, 4_000_000);
        let w_tcp = var(&r, "w_tcp");
        assert!((w_tcp - 1067.7).abs() < 1.5, "w_tcp {w_tcp}");
        let cwnd = f64::from(r.host.tcp.cwnd);
        assert!(cwnd <= w_tcp + 1.0 && cwnd >= w_tcp - 2.0, "cwnd {cwnd} w_tcp {w_tcp}");
        // Without TCP friendliness the window stays on the curve, W(4) ≈ 975.6.
        let mut r = loss_at(&Params::new().set("tcp_friendliness", 0.0), 1000, 5_000);
        ack_clock(&mut r, 1_000_002, 5_000, 2, 4_000_000);
        assert!((970..=978).contains(&r.host.tcp.cwnd), "cwnd {}", r.host.tcp.cwnd);
    }

    #[test]
    fn growth_in_real_time_is_independent_of_rtt() {
        // TCP friendliness off, loss at 1000: after 4 s both a 20 ms and a 200 ms flow sit on
        // W(4) = 1000 + 0.4(4 − 7.937)³ = 975.6, the 200 ms one aiming 0.2 s ahead (the
        // curve rises 3C(K − t)² ≈ 18.6/s there: up to ~4 segments higher).
        let p = Params::new().set("tcp_friendliness", 0.0);
        let mut a = loss_at(&p, 1000, 20_000);
        ack_clock(&mut a, 1_000_002, 20_000, 1, 4_000_000);
        let mut b = loss_at(&p, 1000, 200_000);
        ack_clock(&mut b, 1_000_002, 200_000, 1, 4_000_000);
        let (x, y) = (a.host.tcp.cwnd, b.host.tcp.cwnd);
        assert!((971..=980).contains(&x) && (971..=981).contains(&y), "{x} {y}");
        assert!(x.abs_diff(y) <= 5, "{x} {y}");
    }

    #[test]
    fn timeout_resets_everything() {
        // cubic_reset(): W_last_max = 0 and dMin = 0, so undo after a timeout returns
        // max(cwnd, 0): the window stays at 1.
        let mut r = loss_at(&Params::new(), 1000, 100_000);
        r.step(&ev(1_000_010, Event::Rto));
        assert_eq!((r.host.tcp.cwnd, r.host.tcp.ssthresh), (1, 640));
        assert_eq!((var(&r, "w_last_max"), var(&r, "d_min_ms")), (0.0, 0.0));
        r.step(&ev(1_000_011, Event::Undo));
        assert_eq!(r.host.tcp.cwnd, 1);
    }
}
