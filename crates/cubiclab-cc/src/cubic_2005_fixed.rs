//! `cubic-2005-fixed`: seed 001's CUBIC ([`crate::cubic_2005`], Rhee and Xu, PFLDnet 2005,
//! Section II.B-C) in the integer arithmetic of its BPF port
//! (crates/cubiclab-bpf/bpf/cubic2005.bpf.c follows this file line by line), so that the
//! port can be checked ACK by ACK against exact arithmetic. Same rules, same parameters
//! (β kept, C, S_max, TCP mode) and the same per-ACK form as `cubic-2005`.
//!
//! What the fixed point changes against the real-valued rules, and nothing else:
//! - time is microseconds (the port's clock, the ACK's `tcp_mstamp`) and the RTT is the
//!   kernel's smoothed RTT in microseconds (`srtt_us >> 3`); t + RTT and K are in 2^-10 s:
//!   ⌊(now − epoch_start + srtt) · 2^10 / 10^6⌋;
//! - K = ⌊∛(W_max · (1−β)/C · 2^30)⌋ (2^-10 s), with (1−β)/C taken to 2^-20;
//! - C is rounded to 2^-10 (0.4 becomes 0.40039), and |t − K| is capped at 2^18 (256 s)
//!   so that C·|t − K|³ fits 64 bits;
//! - the target is a whole number of segments: W_max ± ⌊C·|t − K|³⌋;
//! - the S_max clamp uses S_max·RTT in 2^-10 segments (S_max to 2^-10, the product floored);
//! - W_tcp is kept in 2^-20 segments, starts at cwnd·β with β to 2^-20, and grows by
//!   ⌊α·2^20·acked/cwnd⌋ per ACK (α = 3(1−β)/(1+β) taken to 2^-20);
//! - the ACKs per one-segment increase are ⌈cwnd/d⌉ of the integers above (the real-valued
//!   version rounds up its real ratio the same way).
//!
//! β, C and S_max arrive in millionths, as the BPF loader passes every real parameter. The
//! tests bound the difference from the real-valued `cubic-2005` on an ACK-clocked flow.

use crate::cubic_2005::Cubic2005;
use crate::cubic_frame::{GrowthRule, SlowStart};
use crate::intmath::{cbrt_floor, clock_us, cubic_term, micro, q10_of_micro, MICRO, Q10};
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_cong_avoid_ai, TcpState};

/// W_tcp, α and β (for W_tcp) in 2^-20.
const W_SHIFT: u32 = 20;

#[derive(Clone, Debug)]
pub struct Cubic2005Fixed {
    /// β in millionths.
    beta: u64,
    tcp_friendliness: bool,
    /// C in 2^-10 segments/s³, rounded.
    c_q: u64,
    /// S_max in 2^-10 segments/s, rounded.
    smax_q: u64,
    /// (1−β)/C in 2^-20 s³ per segment.
    k_factor_q: u64,
    /// β in 2^-20, rounded.
    beta_q: u64,
    /// α = 3(1−β)/(1+β) in 2^-20.
    alpha_q: u64,
    w_max: u32,
    /// 2^-10 s.
    k: u32,
    /// Microseconds (low 32 bits of the clock); `None` until the epoch starts.
    epoch_start: Option<u32>,
    /// 2^-20 segments.
    w_tcp: u64,
    target: u32,
}

impl Cubic2005Fixed {
    pub const PARAMS: &'static [ParamSpec] = Cubic2005::PARAMS;

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-2005-fixed", Self::PARAMS)?;
        let (beta, c, smax) = (micro(p.f64("beta")), micro(p.f64("c")), micro(p.f64("smax")));
        Ok(Self {
            beta,
            tcp_friendliness: p.bool("tcp_friendliness"),
            c_q: q10_of_micro(c),
            smax_q: q10_of_micro(smax),
            k_factor_q: ((MICRO - beta) << W_SHIFT) / c.max(1),
            beta_q: ((beta << W_SHIFT) + MICRO / 2) / MICRO,
            alpha_q: ((3 * (MICRO - beta)) << W_SHIFT) / (MICRO + beta),
            w_max: 0,
            k: 0,
            epoch_start: None,
            w_tcp: 0,
            target: 0,
        })
    }
}

impl GrowthRule for Cubic2005Fixed {
    const SLOW_START: SlowStart = SlowStart::Segments;

    fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.w_max = 0;
        self.k = 0;
        self.epoch_start = None;
        self.w_tcp = 0;
    }

    /// A timeout is a window reduction like a loss: the curve is kept.
    fn on_timeout(&mut self, _tcp: &TcpState, _now_ns: u64) {}

    /// The window reduction: remember W_max, start the epoch, keep β of the window.
    fn on_congestion(&mut self, tcp: &TcpState, now_ns: u64) -> u32 {
        let cwnd = u64::from(tcp.cwnd);
        self.w_max = tcp.cwnd;
        // wraps: u64 as in the port (W_max · (1−β)/C < 2^34 s³ in practice).
        self.k = cbrt_floor(cwnd.wrapping_mul(self.k_factor_q) << (3 * Q10 - W_SHIFT));
        self.epoch_start = Some(clock_us(now_ns));
        self.w_tcp = cwnd * self.beta_q;
        ((cwnd * self.beta / MICRO) as u32).max(2)
    }

    /// Congestion avoidance after Reno's slow start.
    fn grow(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        let now = clock_us(now_ns);
        let cwnd = u64::from(tcp.cwnd);
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                // Congestion avoidance without a loss yet: the curve starts flat at cwnd.
                self.w_max = tcp.cwnd;
                self.k = 0;
                self.w_tcp = cwnd << W_SHIFT;
                self.epoch_start = Some(now);
                now
            }
        };
        let srtt = u64::from(tcp.srtt_us);
        // wraps: u32 microseconds, as the port's clock.
        let t = ((u64::from(now.wrapping_sub(epoch)) + srtt) << Q10) / MICRO;
        let delta = cubic_term(self.c_q, t.abs_diff(u64::from(self.k)), Q10) as u32;
        let target =
            if t < u64::from(self.k) { self.w_max.saturating_sub(delta) } else { self.w_max.saturating_add(delta) };
        self.target = target;
        // ACKed segments per one-segment increase; None: no increase (the real version's ∞).
        let mut cnt = (target > tcp.cwnd).then(|| cwnd.div_ceil(u64::from(target - tcp.cwnd)));
        if self.smax_q > 0 && srtt > 0 {
            // No more than S_max·RTT segments per RTT.
            // wraps: u64 as in the port (only for S_max·RTT above 1.7·10^7 segments).
            let per_rtt_q = self.smax_q.wrapping_mul(srtt) / MICRO;
            cnt = match (cnt, per_rtt_q) {
                (_, 0) => None,
                (Some(c), q) => Some(c.max((cwnd << Q10).div_ceil(q))),
                (None, _) => None,
            };
        }
        if self.tcp_friendliness {
            self.w_tcp += self.alpha_q * u64::from(acked) / cwnd;
            let w = cwnd << W_SHIFT;
            if self.w_tcp > w {
                let tcp_cnt = w.div_ceil(self.w_tcp - w);
                cnt = Some(cnt.map_or(tcp_cnt, |c| c.min(tcp_cnt)));
            }
        }
        if let Some(c) = cnt {
            tcp_cong_avoid_ai(tcp, c.min(u64::from(u32::MAX)) as u32, acked);
        }
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("w_max", f64::from(self.w_max));
        out("k_s", f64::from(self.k) / f64::from(1u32 << Q10));
        out("target", f64::from(self.target));
        out("w_tcp", self.w_tcp as f64 / f64::from(1u32 << W_SHIFT));
        out("epoch_start_s", self.epoch_start.map_or(0.0, |e| f64::from(e) * 1e-6));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Event, ReplayStart, Replayer};
    use crate::test_support::{ack, ev, var, windows_after_loss};
    use crate::Algorithm;

    #[test]
    fn k_target_and_loss_in_fixed_point() {
        // Loss at 1000: ssthresh = cwnd = 1000 · 800000/10^6 = 800, W_max 1000, and
        // K = ⌊∛(1000 · ⌊0.2/0.4 · 2^20⌋ · 2^10)⌋ = ⌊∛(1000 · 2^29)⌋ = 8127 (2^-10 s).
        // The next ACK, 1 us later with srtt 100 ms (the one sample): t = ⌊(1 + 100000) ·
        // 2^10 / 10^6⌋ = 102, |t − K| = 8025, target = 1000 − ⌊410 · 8025³ / 2^40⌋ =
        // 1000 − 192 = 808 (C = 0.4 → 410/1024).
        let mut r = Replayer::new(
            Algorithm::new("cubic-2005-fixed", &Params::new()).unwrap(),
            ReplayStart { cwnd: 1000, ssthresh: 500 },
            1_000_000,
        );
        r.step(&ack(1_000_000, 1, 100_000));
        r.host.tcp.cwnd = 1000;
        r.step(&ev(1_000_001, Event::Loss));
        assert_eq!((r.host.tcp.cwnd, r.host.tcp.ssthresh), (800, 800));
        assert_eq!(var(&r, "k_s"), 8127.0 / 1024.0);
        r.step(&ack(1_000_002, 1, 100_000));
        assert_eq!((var(&r, "w_max"), var(&r, "target")), (1000.0, 808.0));
        // W_tcp: the loss's cwnd times β, 1000 · ⌊0.8 · 2^20 + 0.5⌋ = 1000 · 838861, plus
        // ⌊α · 2^20 / 800⌋ for the ACK at cwnd 800, with α·2^20 = ⌊3 · 200000 · 2^20 /
        // 1800000⌋ = 349525: 436 (all in 2^-20 segments).
        assert_eq!(var(&r, "w_tcp"), (1000.0 * 838_861.0 + 436.0) / 1_048_576.0);
    }

    #[test]
    fn stays_within_two_segments_of_the_real_valued_rules() {
        // 20 s after a loss at 1000 segments, RTT 100 ms, one segment per ACK. The fixed
        // point moves the target by: the floor (< 1 segment); C's rounding (0.4 → 0.40039:
        // 0.00039 · |t − K|³ ≤ 0.00039 · 8³ = 0.2 segment while |t − K| ≤ 8 s, the first
        // 16 s); t + RTT's and K's 2^-10 s quantization (3C(t−K)² · 1 ms ≤ 0.08 segment
        // there). The S_max clamp (16 segments per RTT here) and W_tcp (0.33 segment per
        // RTT) round by less than a segment's worth of ACKs. Either window then follows
        // its own target one segment at a time, so they differ by at most 2 segments.
        let real = windows_after_loss("cubic-2005", &Params::new(), 1000, 100_000, 16, 1_000_000);
        let fixed = windows_after_loss("cubic-2005-fixed", &Params::new(), 1000, 100_000, 16, 1_000_000);
        let worst = real.iter().zip(&fixed).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
        assert!(worst <= 2, "worst difference {worst} segments; real {real:?}\nfixed {fixed:?}");
        // The plateau: W_max = 1000 at t + RTT = K = 7.94 s, i.e. about 7.8 s after the loss.
        assert_eq!(fixed[78], 1000, "{fixed:?}");
    }
}
