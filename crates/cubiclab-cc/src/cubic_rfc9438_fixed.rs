//! `cubic-rfc9438-fixed`: RFC 9438 CUBIC ([`crate::cubic_rfc9438`], Section 4) in the
//! integer arithmetic of its BPF port (crates/cubiclab-bpf/bpf/cubic_rfc9438.bpf.c follows
//! this file line by line), so that the port can be checked ACK by ACK against exact
//! arithmetic. Same rules (W_max, K, W_est with α_cubic switching to 1 at cwnd_prior,
//! the Reno-friendly region, the target clamped to [cwnd, 1.5·cwnd], fast convergence,
//! the timeout rule, undo of the whole state) and the same parameters as `cubic-rfc9438`.
//!
//! What the fixed point changes against the real-valued rules, and nothing else:
//! - time is microseconds (the port's clock, the ACK's `tcp_mstamp`) and RTT the kernel's
//!   smoothed RTT in microseconds (`srtt_us >> 3`); t, t + RTT and K are in 2^-10 s, floored;
//! - W_max, W_cubic and the target are in 2^-10 segments; fast convergence's
//!   W_max = cwnd·(1+β)/2 is floored there;
//! - K = ±⌊∛(|W_max − cwnd_epoch| · 2^30 / C)⌋ (2^-10 s) with C to 2^-10 (0.4 becomes
//!   0.40039), and |t − K| is capped at 2^18 (256 s) so that C·|t − K|³ fits 64 bits;
//! - W_est is in 2^-20 segments and grows by ⌊α·2^20·acked/cwnd⌋ (α_cubic taken to 2^-20);
//! - the ACKs per one-segment increase are ⌈cwnd/(target − cwnd)⌉ of these integers (the
//!   real-valued version rounds up its real ratio the same way);
//! - after idle (`tx_start`) the epoch moves by the idle time in whole microseconds (the
//!   port measures it from `tp->lsndtime`, in the kernel's jiffies: the kernel keeps no
//!   finer last-send time; the per-ACK check's bulk flows are never idle).
//!
//! β and C arrive in millionths, as the BPF loader passes every real parameter. The tests
//! bound the difference from the real-valued `cubic-rfc9438` on an ACK-clocked flow.

use crate::cubic_frame::{GrowthRule, Hystart, SlowStart};
use crate::cubic_rfc9438::CubicRfc9438;
use crate::hystart_plus_plus::HyStartPlusPlus;
use crate::intmath::{cbrt_floor, clock_us, cubic_term, micro, q10_of_micro, MICRO, Q10 as Q};
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_cong_avoid_ai, CaEvent, TcpState};

/// W_est and α in 2^-20.
const W_SHIFT: u32 = 20;

/// The variables a congestion event changes and undo restores (Sec 4.9).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Curve {
    /// 2^-10 segments; 0 until the first congestion event or epoch.
    w_max: u64,
    /// 2^-10 s, signed (negative when W_max < cwnd_epoch).
    k: i64,
    /// Microseconds (low 32 bits of the clock); `None` until the next congestion
    /// avoidance ACK.
    epoch_start: Option<u32>,
    cwnd_epoch: u32,
    /// 2^-20 segments.
    w_est: u64,
    cwnd_prior: u32,
    after_rto: bool,
}

#[derive(Clone, Copy, Debug)]
struct Saved {
    curve: Curve,
    cwnd: u32,
    ssthresh: u32,
}

#[derive(Clone, Debug)]
pub struct CubicRfc9438Fixed {
    /// β in millionths.
    beta: u64,
    fast_convergence: bool,
    reno_friendly: bool,
    /// C in 2^-10 segments/s³, rounded.
    c_q: u64,
    /// α_cubic = 3(1−β)/(1+β) in 2^-20.
    alpha_q: u64,
    curve: Curve,
    saved: Option<Saved>,
    /// `hystart = "hystart++"`: RFC 9406's slow start, which the frame runs.
    hystart_plus_plus: Option<HyStartPlusPlus>,
    // Kept for traces, 2^-10 segments.
    target: u64,
    w_cubic: i64,
}

impl CubicRfc9438Fixed {
    pub const PARAMS: &'static [ParamSpec] = CubicRfc9438::PARAMS;

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-rfc9438-fixed", Self::PARAMS)?;
        let (beta, c) = (micro(p.f64("beta")), micro(p.f64("c")));
        Ok(Self {
            beta,
            fast_convergence: p.bool("fast_convergence"),
            reno_friendly: p.bool("reno_friendly"),
            c_q: q10_of_micro(c).max(1),
            alpha_q: ((3 * (MICRO - beta)) << W_SHIFT) / (MICRO + beta),
            curve: Curve::default(),
            saved: None,
            hystart_plus_plus: Hystart::of(&p).plus_plus(),
            target: 0,
            w_cubic: 0,
        })
    }

    /// W_cubic(t) in 2^-10 segments (Eq. 1), t in 2^-10 s.
    fn w_cubic_at(&self, t: i64) -> i64 {
        let d = cubic_term(self.c_q, t.abs_diff(self.curve.k), 0) as i64;
        let w_max = self.curve.w_max as i64;
        if t < self.curve.k {
            w_max - d
        } else {
            w_max + d
        }
    }

    /// The first ACK of a congestion avoidance stage (Sec 4.2, 4.3, 4.8).
    fn start_epoch(&mut self, cwnd: u32, now: u32) {
        let c_q = self.c_q;
        let cv = &mut self.curve;
        cv.epoch_start = Some(now);
        cv.cwnd_epoch = cwnd;
        let w = u64::from(cwnd) << Q;
        if cv.after_rto || cv.w_max == 0 {
            cv.w_max = w;
            cv.k = 0;
        } else {
            // K³ = (W_max − cwnd_epoch)/C, in 2^-30 s³: |ΔW| (2^-10) · 2^30 / C (2^-10).
            let root = i64::from(cbrt_floor((cv.w_max.abs_diff(w) << (3 * Q)) / c_q));
            cv.k = if cv.w_max >= w { root } else { -root };
        }
        cv.after_rto = false;
        cv.w_est = u64::from(cwnd) << W_SHIFT;
    }
}

impl GrowthRule for CubicRfc9438Fixed {
    const SLOW_START: SlowStart = SlowStart::Segments;

    #[inline(always)]
    fn hystart_plus_plus(&mut self) -> Option<&mut HyStartPlusPlus> {
        self.hystart_plus_plus.as_mut()
    }

    fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.curve = Curve::default();
        self.saved = None;
    }

    /// A congestion event (Sec 4.6, 4.7), saving the state for undo (Sec 4.9).
    fn on_congestion(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        self.saved = Some(Saved { curve: self.curve, cwnd: tcp.cwnd, ssthresh: tcp.ssthresh });
        let cwnd = u64::from(tcp.cwnd);
        let cv = &mut self.curve;
        cv.w_max = if self.fast_convergence && (cwnd << Q) < cv.w_max {
            (cwnd << Q) * (MICRO + self.beta) / (2 * MICRO)
        } else {
            cwnd << Q
        };
        cv.cwnd_prior = tcp.cwnd;
        cv.epoch_start = None;
        ((cwnd * self.beta / MICRO) as u32).max(2)
    }

    /// Sec 4.2-4.5, after Reno's slow start.
    fn grow(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        let now = clock_us(now_ns);
        if self.curve.epoch_start.is_none() {
            self.start_epoch(tcp.cwnd, now);
        }
        let epoch = self.curve.epoch_start.unwrap_or(now);
        let cwnd = u64::from(tcp.cwnd);
        // wraps: u32 microseconds, as the port's clock.
        let elapsed = u64::from(now.wrapping_sub(epoch));
        let t = ((elapsed << Q) / MICRO) as i64;
        let t_rtt = (((elapsed + u64::from(tcp.srtt_us)) << Q) / MICRO) as i64;

        // Eq. 4, with α_cubic = 1 once W_est has reached cwnd_prior.
        let alpha =
            if self.curve.w_est >= u64::from(self.curve.cwnd_prior) << W_SHIFT { 1 << W_SHIFT } else { self.alpha_q };
        self.curve.w_est += alpha * u64::from(acked) / cwnd;

        let w_cubic = self.w_cubic_at(t);
        self.w_cubic = w_cubic;
        if self.reno_friendly && w_cubic < (self.curve.w_est >> (W_SHIFT - Q)) as i64 {
            // Reno-friendly region: cwnd = W_est, whole segments.
            self.target = self.curve.w_est >> (W_SHIFT - Q);
            let w = ((self.curve.w_est >> W_SHIFT).min(u64::from(u32::MAX)) as u32).min(tcp.cwnd_clamp);
            if w > tcp.cwnd {
                tcp.cwnd = w;
                tcp.cwnd_cnt = 0;
            }
            return;
        }
        let lo = cwnd << Q;
        let target = (self.w_cubic_at(t_rtt).max(0) as u64).clamp(lo, lo + lo / 2);
        self.target = target;
        if target > lo {
            let w = (lo.div_ceil(target - lo)).min(u64::from(u32::MAX)) as u32;
            tcp_cong_avoid_ai(tcp, w, acked);
        }
    }

    /// Sec 4.8: the next congestion avoidance stage starts a fresh curve.
    fn on_timeout(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.curve.after_rto = true;
        self.curve.epoch_start = None;
    }

    /// Sec 5.8: idle time does not count in t.
    fn on_event(&mut self, tcp: &mut TcpState, event: CaEvent, now_ns: u64) {
        if event == CaEvent::TxStart {
            let now = clock_us(now_ns);
            if let Some(epoch) = self.curve.epoch_start.as_mut() {
                let idle = clock_us(now_ns.saturating_sub(tcp.lsndtime_ns));
                // wraps: u32 microseconds; the epoch never passes now.
                let moved = epoch.wrapping_add(idle);
                *epoch = if (now.wrapping_sub(moved) as i32) < 0 { now } else { moved };
            }
        }
    }

    /// Sec 4.9: restore everything saved at the congestion event if cwnd is below it.
    fn restore(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        match self.saved.take() {
            Some(s) if tcp.cwnd < s.cwnd => {
                self.curve = s.curve;
                tcp.ssthresh = s.ssthresh;
                s.cwnd
            }
            _ => tcp.cwnd,
        }
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let cv = &self.curve;
        let q = f64::from(1u32 << Q);
        out("w_max", cv.w_max as f64 / q);
        out("k_s", cv.k as f64 / q);
        out("w_est", cv.w_est as f64 / f64::from(1u32 << W_SHIFT));
        out("cwnd_prior", f64::from(cv.cwnd_prior));
        out("cwnd_epoch", f64::from(cv.cwnd_epoch));
        out("w_cubic", self.w_cubic as f64 / q);
        out("target", self.target as f64 / q);
        out("epoch_start_s", cv.epoch_start.map_or(0.0, |e| f64::from(e) * 1e-6));
        if let Some(h) = &self.hystart_plus_plus {
            h.trace(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Event, ReplayStart, Replayer};
    use crate::tcp::TCP_INFINITE_SSTHRESH;
    use crate::test_support::{ack, ev, plus_plus_round, var, windows_after_loss};
    use crate::{Algorithm, CongestionControl};

    #[test]
    fn k_and_w_cubic_in_fixed_point() {
        // Loss at 1000: ssthresh 700, W_max = 1000 · 2^10. The next ACK starts the stage at
        // cwnd_epoch 700: K = ⌊∛(300 · 2^10 · 2^30 / 410)⌋ = ⌊∛804,520,703,250⌋ = 9300
        // (2^-10 s: 9.082 s; the real K is ∛750 = 9.086 s, C being 0.40039 here). At t = 0,
        // W_cubic = W_max − ⌊410 · 9300³ / 2^30⌋ (2^-10 segments) = 1024000 − 307137.
        let mut r = Replayer::new(
            Algorithm::new("cubic-rfc9438-fixed", &Params::new()).unwrap(),
            ReplayStart { cwnd: 1000, ssthresh: 500 },
            999_999,
        );
        r.step(&ack(999_999, 1, 100_000));
        r.host.tcp.cwnd = 1000;
        r.step(&ev(1_000_000, Event::Loss));
        assert_eq!((r.host.tcp.cwnd, r.host.tcp.ssthresh), (700, 700));
        r.step(&ack(1_000_000, 1, 100_000));
        assert_eq!(var(&r, "k_s"), 9300.0 / 1024.0);
        assert_eq!(var(&r, "w_cubic"), (1_024_000.0 - 307_137.0) / 1024.0);
    }

    #[test]
    fn stays_within_two_segments_of_the_real_valued_rules() {
        // 14 s after a loss at 1000 segments, RTT 100 ms, one segment per ACK. The fixed
        // point moves the curve by: K's floor and C's rounding (K 9.082 s against 9.086 s,
        // C 0.40039 against 0.4: the curves meet W_max 4 ms apart and differ by
        // 0.00039·|t − K|³ ≤ 0.3 segment for |t − K| ≤ 9.1 s); t's 2^-10 s quantization
        // (≤ 1 ms, 3C(t−K)²·1 ms ≤ 0.1 segment there); W_est's 2^-20 rounding (nothing
        // visible); each target floored (< 1 segment). Either window then follows its own
        // target one segment at a time, so they differ by at most 2 segments.
        let real = windows_after_loss("cubic-rfc9438", &Params::new(), 1000, 100_000, 14, 999_999);
        let fixed = windows_after_loss("cubic-rfc9438-fixed", &Params::new(), 1000, 100_000, 14, 999_999);
        let worst = real.iter().zip(&fixed).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
        assert!(worst <= 2, "worst difference {worst} segments; real {real:?}\nfixed {fixed:?}");
    }

    #[test]
    fn both_run_hystart_plus_plus_when_chosen() {
        // The frame runs HyStart++ for either: slow start at 40 ms, a round at 45 ms enters
        // CSS (>= 40 + 5 ms) on its 8th ACK, five CSS rounds end in ssthresh = cwnd; from
        // 10: +20, +7, then 13 + 4 x 8 = 45 quarter segments (11, 1 left) = 48. Standard
        // slow start ("off", the default) would still be doubling.
        for name in ["cubic-rfc9438", "cubic-rfc9438-fixed"] {
            let run = |hystart: &str| {
                let mut alg = Algorithm::new(name, &Params::new().set("hystart", hystart)).unwrap();
                let mut tcp = TcpState { cwnd: 10, snd_nxt: 10, cwnd_limited: true, ..TcpState::default() };
                alg.init(&mut tcp, 0);
                let mut now = 0;
                plus_plus_round(&mut alg, &mut tcp, 40_000, 20, &mut now);
                plus_plus_round(&mut alg, &mut tcp, 45_000, 20, &mut now);
                for _ in 0..5 {
                    plus_plus_round(&mut alg, &mut tcp, 45_000, 8, &mut now);
                }
                (tcp.cwnd, tcp.ssthresh)
            };
            assert_eq!(run("hystart++"), (48, 48), "{name}");
            assert_eq!(run("off"), (10 + 20 + 20 + 40, TCP_INFINITE_SSTHRESH), "{name}");
        }
        // Linux's HyStart is cubic's only: not a choice here.
        let err = Algorithm::new("cubic-rfc9438", &Params::new().set("hystart", "hystart")).unwrap_err();
        assert!(err.0.contains("allowed: one of off, hystart++"), "{err}");
    }
}
