//! `cubic-2008-fixed`: seed 000's Algorithm 1 ([`crate::cubic_2008`]) in the integer
//! arithmetic of its BPF port (crates/cubiclab-bpf/bpf/cubic2008.bpf.c follows this file
//! line by line), so that the port can be checked ACK by ACK against exact arithmetic.
//!
//! What the fixed point changes against the real-valued rules, and nothing else:
//! - time is the kernel's jiffies at `hz`, and `t` and K are in 2^-10 s (as in Linux v2.2):
//!   t = ((now + dMin − epoch_start) << 10) / hz, with dMin = `usecs_to_jiffies` of the
//!   smallest RTT sample;
//! - K = ⌊∛(W_last_max · β/C · 2^30)⌋ (2^-10 s), with β/C taken to 2^-20;
//! - C is rounded to 2^-10 (0.4 becomes 410/1024 = 0.40039), and the curve's distance
//!   |t − K| is capped at 2^18 (256 s) so that C·|t − K|³ fits 64 bits;
//! - the target is a whole number of segments: origin ± ⌊C·|t − K|³⌋;
//! - W_tcp is kept in 2^-32 segments and grows by ⌊α·2^32/cwnd⌋ per segment acknowledged
//!   (α = 3β/(2−β) taken to 2^-32);
//! - W_last_max and ssthresh are whole segments (⌊cwnd·(2−β)/2⌋, ⌊cwnd·(1−β)⌋);
//! - an ACK counts at most [`MAX_SEGMENTS_PER_ACK`] segments (the port's loop needs a bound
//!   the verifier can see).
//!
//! β and C arrive in millionths, as the BPF loader passes every real parameter. The tests
//! bound the difference from the real-valued `cubic-2008` on an ACK-clocked flow.

use crate::clock::{jiffies32, UsecsToJiffies};
use crate::cubic_2008::Cubic2008;
use crate::cubic_frame::{count_ack, GrowthRule, SlowStart, HZ};
use crate::intmath::{cbrt_floor, cubic_term, micro, q10_of_micro, MICRO, Q10};
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{AckSample, TcpState};

/// The most segments one ACK runs the per-segment body for.
pub const MAX_SEGMENTS_PER_ACK: u32 = 128;

#[derive(Clone, Debug)]
pub struct Cubic2008Fixed {
    /// β in millionths.
    beta: u64,
    fast_convergence: bool,
    tcp_friendliness: bool,
    hz: u32,
    usecs_to_jiffies: UsecsToJiffies,
    max_usecs: u32,
    /// C in 2^-10 segments/s³, rounded.
    c_q: u64,
    /// β/C in 2^-20 s³ per segment.
    beta_over_c_q: u64,
    /// α = 3β/(2−β) in 2^-32 segments.
    alpha_q: u64,
    w_last_max: u32,
    /// Jiffies; `None` is the pseudo-code's `epoch_start <= 0`.
    epoch_start: Option<u32>,
    origin: u32,
    /// Jiffies; 0 until an RTT sample.
    d_min: u32,
    /// 2^-32 segments.
    w_tcp: u64,
    /// 2^-10 s.
    k: u32,
    cnt: u32,
    target: u32,
}

impl Cubic2008Fixed {
    /// `cubic-2008`'s parameters, then the kernel's HZ.
    pub const PARAMS: &'static [ParamSpec] =
        &[Cubic2008::PARAMS[0], Cubic2008::PARAMS[1], Cubic2008::PARAMS[2], Cubic2008::PARAMS[3], HZ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-2008-fixed", Self::PARAMS)?;
        let (beta, c) = (micro(p.f64("decrease")), micro(p.f64("c")));
        let hz = p.u32("hz");
        let mut s = Self {
            beta,
            fast_convergence: p.bool("fast_convergence"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            hz,
            usecs_to_jiffies: UsecsToJiffies::new(u64::from(hz)),
            max_usecs: UsecsToJiffies::max_usecs(u64::from(hz)),
            c_q: q10_of_micro(c),
            beta_over_c_q: (beta << 20) / c.max(1),
            alpha_q: ((3 * beta) << 32) / (2 * MICRO - beta),
            w_last_max: 0,
            epoch_start: None,
            origin: 0,
            d_min: 0,
            w_tcp: 0,
            k: 0,
            cnt: 0,
            target: 0,
        };
        s.reset();
        Ok(s)
    }

    /// `cubic_reset()`.
    fn reset(&mut self) {
        self.w_last_max = 0;
        self.epoch_start = None;
        self.origin = 0;
        self.d_min = 0;
        self.w_tcp = 0;
        self.k = 0;
    }

    /// `cubic_update()` for one acknowledged segment: the ACKs per one-segment increase.
    fn update(&mut self, cwnd: u32, now: u32) -> u32 {
        let epoch_start = match self.epoch_start {
            Some(e) => e,
            None => {
                if cwnd < self.w_last_max {
                    // wraps: u64 as in the port (W_last_max · β/C < 2^34 s³ in practice).
                    self.k = cbrt_floor(u64::from(self.w_last_max).wrapping_mul(self.beta_over_c_q) << (3 * Q10 - 20));
                    self.origin = self.w_last_max;
                } else {
                    self.k = 0;
                    self.origin = cwnd;
                }
                self.w_tcp = u64::from(cwnd) << 32;
                self.epoch_start = Some(now);
                now
            }
        };
        // wraps: u32 jiffies arithmetic, as in Linux.
        let t = (u64::from(now.wrapping_add(self.d_min).wrapping_sub(epoch_start)) << Q10) / u64::from(self.hz);
        let delta = cubic_term(self.c_q, t.abs_diff(u64::from(self.k)), Q10) as u32;
        let target =
            if t < u64::from(self.k) { self.origin.saturating_sub(delta) } else { self.origin.saturating_add(delta) };
        self.target = target;
        let mut cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.saturating_mul(100) };
        if self.tcp_friendliness {
            let w = u64::from(cwnd) << 32;
            self.w_tcp += self.alpha_q / u64::from(cwnd);
            if self.w_tcp > w {
                let max_cnt = w / (self.w_tcp - w);
                if u64::from(cnt) > max_cnt {
                    cnt = max_cnt as u32;
                }
            }
        }
        cnt
    }
}

impl GrowthRule for Cubic2008Fixed {
    /// Once per acknowledged segment, as `cubic-2008` (up to [`MAX_SEGMENTS_PER_ACK`]).
    const SLOW_START: SlowStart = SlowStart::PerSegment { max: MAX_SEGMENTS_PER_ACK };

    /// `cubic_reset()`: at the start, and when a timeout enters Loss.
    fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.reset();
    }

    fn on_congestion(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let cwnd = u64::from(tcp.cwnd);
        self.epoch_start = None;
        self.w_last_max = if tcp.cwnd < self.w_last_max && self.fast_convergence {
            (cwnd * (2 * MICRO - self.beta) / (2 * MICRO)) as u32
        } else {
            tcp.cwnd
        };
        ((cwnd * (MICRO - self.beta) / MICRO) as u32).max(2)
    }

    fn grow(&mut self, tcp: &mut TcpState, _acked: u32, now_ns: u64) {
        self.cnt = self.update(tcp.cwnd, jiffies32(now_ns, self.hz));
        count_ack(tcp, tcp.cwnd_cnt > self.cnt);
    }

    fn restore(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        tcp.cwnd.max(self.w_last_max)
    }

    /// dMin ← min(dMin, RTT), in jiffies rounded up (at least one).
    fn on_ack(&mut self, _tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        if sample.rtt_us < 0 {
            return;
        }
        let us = sample.rtt_us.min(i64::from(u32::MAX)) as u32;
        let d = (self.usecs_to_jiffies.convert(us, self.max_usecs).min(u64::from(u32::MAX)) as u32).max(1);
        if self.d_min == 0 || d < self.d_min {
            self.d_min = d;
        }
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("w_last_max", f64::from(self.w_last_max));
        out("k_s", f64::from(self.k) / f64::from(1u32 << Q10));
        out("origin", f64::from(self.origin));
        out("target", f64::from(self.target));
        out("w_tcp", self.w_tcp as f64 / 2f64.powi(32));
        out("cnt", f64::from(self.cnt));
        out("d_min_ms", f64::from(self.d_min) * 1000.0 / f64::from(self.hz));
        out("epoch_start_s", self.epoch_start.map_or(0.0, |e| f64::from(e) / f64::from(self.hz)));
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
        // Loss at 1000: ssthresh = cwnd = 1000 · (10^6 − 2·10^5)/10^6 = 800, W_last_max 1000.
        // The next ACK (slow start, cwnd <= ssthresh) gives 801; the one after starts the
        // epoch: K = 8127/1024 s (above), origin 1000, dMin = usecs_to_jiffies(100 ms) = 100
        // jiffies at HZ 1000, t = (100 << 10)/1000 = 102; |t − K| = 8025:
        // target = 1000 − ⌊410 · 8025³ / 2^40⌋ = 1000 − 192 = 808, cnt = 801/7 = 114.
        let p = Params::new();
        let mut r = Replayer::new(
            Algorithm::new("cubic-2008-fixed", &p).unwrap(),
            ReplayStart { cwnd: 1000, ssthresh: 500 },
            1_000_000,
        );
        r.step(&ack(1_000_000, 1, 100_000));
        r.host.tcp.cwnd = 1000;
        r.step(&ev(1_000_001, Event::Loss));
        assert_eq!((r.host.tcp.cwnd, r.host.tcp.ssthresh), (800, 800));
        r.step(&ack(1_000_002, 1, 100_000));
        r.step(&ack(1_000_003, 1, 100_000));
        assert_eq!(var(&r, "k_s"), 8127.0 / 1024.0);
        assert_eq!((var(&r, "origin"), var(&r, "target"), var(&r, "cnt")), (1000.0, 808.0, 114.0));
    }

    #[test]
    fn stays_within_two_segments_of_the_real_valued_rules() {
        // 30 s after a loss at 1000 segments, RTT 100 ms, one segment per ACK, at HZ 1000.
        // The fixed point moves the target by: the floor (< 1 segment); C's rounding
        // (0.4 → 0.40039: 0.00039 · |t − K|³ ≤ 0.00039 · 22.1³ = 4.2 segments at t = 30 s,
        // but 0.2 within the epoch's first 15 s); t's jiffy and K's 2^-10 s quantization
        // (3C(t−K)² · 2 ms ≤ 0.15 segment for |t − K| ≤ 8 s). Either window then follows its
        // own target one segment at a time, so up to the plateau and past it by 7 s the
        // windows differ by at most 2 segments (1 when this was written).
        let real = windows_after_loss("cubic-2008", &Params::new(), 1000, 100_000, 30, 1_000_000);
        let fixed = windows_after_loss("cubic-2008-fixed", &Params::new(), 1000, 100_000, 30, 1_000_000);
        let worst = real.iter().zip(&fixed).take(150).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
        assert!(worst <= 2, "worst difference {worst} segments; real {real:?}\nfixed {fixed:?}");
        // The plateau itself is the same: W_last_max = 1000 reached from below.
        assert!(fixed[..80].iter().all(|&w| w <= 1001), "{fixed:?}");
    }
}
