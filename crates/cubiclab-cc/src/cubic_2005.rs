//! `cubic-2005`: the original CUBIC of Rhee and Xu, "CUBIC: A New TCP-Friendly High-Speed
//! TCP Variant" (PFLDnet 2005; seed 001), Section II.B-C, with its evaluation's settings
//! β = 0.8, C = 0.4, S_max = 160.
//!
//! - β is the fraction *kept*: "the window reduces to βW_max at the time of the last
//!   reduction". So K = ∛(W_max(1−β)/C) makes W(0) = βW_max, and
//!   W_cubic(t) = C(t − K)³ + W_max (Eq. 1), t the time since the last window reduction.
//! - S_max: "we clamp the window increment to be no more than S_max per second", so that the
//!   window grows linearly in real time far from W_max.
//! - TCP mode (Section II.C): a Reno flow with the same average rate grows by
//!   α = 3(1−β)/(1+β) per RTT (0.5 in the text's arithmetic; 1/3 for β = 0.8), so
//!   W_tcp(t) = W_max·β + α·t/RTT (Eq. 4); when W_tcp is above W_cubic the window follows
//!   W_tcp. The S_max clamp does not apply to the TCP mode.
//! - No fast convergence (the paper has none) and no special timeout rule: a timeout is a
//!   window reduction like a loss, and the epoch restarts from it.
//!
//! The paper gives the window as a function of time, not a per-ACK rule; this follows the
//! per-ACK form of the Linux v2.0 code written from it (its header cites this paper), with
//! real numbers: on each ACK of n segments in congestion avoidance the window moves toward
//! W_cubic(t + RTT) by n·(target − cwnd)/cwnd, at most n·S_max·RTT/cwnd (S_max per second
//! whatever the RTT), and W_tcp grows by n·α/cwnd (Eq. 4 at a constant RTT). RTT is the
//! smoothed RTT. Increments use the host's integer `cwnd_cnt`, with the ACKs per segment
//! rounded up so that growth never exceeds the equations. Before any loss W_max is the
//! window at the end of slow start (K = 0). Undo is Reno's (the paper defines none).

use crate::cubic_frame::{GrowthRule, SlowStart};
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_cong_avoid_ai, TcpState};

/// The PFLDnet 2005 CUBIC.
#[derive(Clone, Debug)]
pub struct Cubic2005 {
    beta: f64,
    c: f64,
    smax: f64,
    tcp_friendliness: bool,
    /// 3(1−β)/(1+β).
    alpha: f64,
    w_max: f64,
    k: f64,
    /// Seconds; the time of the last window reduction, or the first ACK after slow start.
    epoch_start: Option<f64>,
    w_tcp: f64,
    // Kept for traces.
    target: f64,
}

impl Cubic2005 {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "beta",
            default: 0.8,
            min: 0.01,
            max: 0.99,
            integer: false,
            unit: "fraction kept",
            help: "fraction of the window kept after a loss",
            choices: &[],
        },
        ParamSpec {
            name: "c",
            default: 0.4,
            min: 1e-4,
            max: 100.0,
            integer: false,
            unit: "segments/s^3",
            help: "cubic coefficient C",
            choices: &[],
        },
        ParamSpec {
            name: "smax",
            default: 160.0,
            min: 0.0,
            max: 1e9,
            integer: false,
            unit: "segments/s",
            help: "largest window increase per second (0: no clamp)",
            choices: &[],
        },
        ParamSpec::switch("tcp_friendliness", true, "TCP mode: follow W_tcp (Eq. 4) when it is above W_cubic"),
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-2005", Self::PARAMS)?;
        let beta = p.f64("beta");
        Ok(Self {
            beta,
            c: p.f64("c"),
            smax: p.f64("smax"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            alpha: 3.0 * (1.0 - beta) / (1.0 + beta),
            w_max: 0.0,
            k: 0.0,
            epoch_start: None,
            w_tcp: 0.0,
            target: 0.0,
        })
    }

    /// Eq. 1.
    #[inline]
    fn w_cubic(&self, t: f64) -> f64 {
        self.c * (t - self.k).powi(3) + self.w_max
    }
}

impl GrowthRule for Cubic2005 {
    const SLOW_START: SlowStart = SlowStart::Segments;

    fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.w_max = 0.0;
        self.k = 0.0;
        self.epoch_start = None;
        self.w_tcp = 0.0;
    }

    /// A timeout is a window reduction like a loss: the curve is kept.
    fn on_timeout(&mut self, _tcp: &TcpState, _now_ns: u64) {}

    /// The window reduction: remember W_max, start the epoch, keep β of the window.
    fn on_congestion(&mut self, tcp: &TcpState, now_ns: u64) -> u32 {
        let cwnd = f64::from(tcp.cwnd);
        self.w_max = cwnd;
        self.k = (cwnd * (1.0 - self.beta) / self.c).cbrt();
        self.epoch_start = Some(now_ns as f64 * 1e-9);
        self.w_tcp = cwnd * self.beta;
        // The tiny bias keeps e.g. 1000 × 0.8 from rounding down to 799.
        ((cwnd * self.beta + 1e-9).floor() as u32).max(2)
    }

    /// Congestion avoidance after Reno's slow start.
    fn grow(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        let now = now_ns as f64 * 1e-9;
        let cwnd = f64::from(tcp.cwnd);
        let epoch = *self.epoch_start.get_or_insert_with(|| {
            // Congestion avoidance without a loss yet: the curve starts flat at cwnd.
            self.w_max = cwnd;
            self.k = 0.0;
            self.w_tcp = cwnd;
            now
        });
        let rtt = f64::from(tcp.srtt_us) * 1e-6;
        let target = self.w_cubic(now - epoch + rtt);
        self.target = target;
        // ACKed segments per one-segment increase (real), as small as the curve asks...
        let mut w = if target > cwnd { cwnd / (target - cwnd) } else { f64::INFINITY };
        // ...but no more than S_max·RTT segments per RTT, S_max per second.
        if self.smax > 0.0 && rtt > 0.0 {
            w = w.max(cwnd / (self.smax * rtt));
        }
        if self.tcp_friendliness {
            self.w_tcp += self.alpha * f64::from(acked) / cwnd;
            if self.w_tcp > cwnd {
                w = w.min(cwnd / (self.w_tcp - cwnd));
            }
        }
        if w.is_finite() {
            tcp_cong_avoid_ai(tcp, w.ceil().min(f64::from(u32::MAX)) as u32, acked);
        }
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("w_max", self.w_max);
        out("k_s", self.k);
        out("target", self.target);
        out("w_tcp", self.w_tcp);
        out("epoch_start_s", self.epoch_start.unwrap_or(0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Event, ReplayStart, Replayer};
    use crate::test_support::{ack, ack_clock, ev, var};
    use crate::{Algorithm, CongestionControl};

    /// Congestion avoidance at cwnd `w`, one ACK (RTT sample), then a loss at `w` at 1 s.
    fn loss_at(params: &Params, w: u32, rtt_us: u64) -> Replayer {
        let a = Algorithm::Cubic2005(Cubic2005::new(params).unwrap());
        let mut r = Replayer::new(a, ReplayStart { cwnd: w, ssthresh: w / 2 }, 999_999);
        r.step(&ack(999_999, 1, rtt_us));
        r.host.tcp.cwnd = w;
        r.step(&ev(1_000_000, Event::Loss));
        r
    }

    /// cwnd at the end of each of `secs` seconds after the loss.
    fn per_second(r: &mut Replayer, rtt_us: u64, per_ack: u32, secs: u64) -> Vec<u32> {
        let mut out = vec![r.host.tcp.cwnd];
        let mut t = 1_000_001;
        for _ in 0..secs {
            t = ack_clock(r, t, rtt_us, per_ack, 1_000_000);
            out.push(r.host.tcp.cwnd);
        }
        out
    }

    #[test]
    fn beta_is_the_fraction_kept() {
        // "the window reduces to βW_max": 0.8·1000 = 800; K = ∛(1000·0.2/0.4) = ∛500 and
        // W(0) = 1000 + 0.4(−∛500)³ = 1000 − 200 = 800 = βW_max; W(K) = W_max (plateau).
        let mut a = Cubic2005::new(&Params::new()).unwrap();
        assert_eq!(a.ssthresh(&TcpState { cwnd: 1000, ..TcpState::default() }, 0), 800);
        assert_eq!(a.w_max, 1000.0);
        assert!((a.k - 500f64.cbrt()).abs() < 1e-12);
        assert!((a.w_cubic(0.0) - 800.0).abs() < 1e-9);
        assert!((a.w_cubic(a.k) - 1000.0).abs() < 1e-12);
        // No fast convergence: the next loss at 900 remembers 900.
        a.ssthresh(&TcpState { cwnd: 900, ..TcpState::default() }, 0);
        assert_eq!(a.w_max, 900.0);
        // β = 0.5 keeps half: 500, K = ∛(1000·0.5/0.4) = ∛1250.
        let mut h = Cubic2005::new(&Params::new().set("beta", 0.5)).unwrap();
        assert_eq!(h.ssthresh(&TcpState { cwnd: 1000, ..TcpState::default() }, 0), 500);
        assert!((h.k - 1250f64.cbrt()).abs() < 1e-12);
    }

    #[test]
    fn target_is_the_curve_one_rtt_ahead() {
        // Loss at t = 1 s (the epoch); an ACK at 1 s + (K − RTT) aims at W(K) = 1000, an
        // ACK 10 s later at W(K + 10) = 1000 + 0.4·1000 = 1400.
        let mut r = loss_at(&Params::new(), 1000, 100_000);
        let k = 500f64.cbrt();
        let t = 1_000_000 + ((k - 0.1) * 1e6).round() as u64;
        r.step(&ack(t, 1, 100_000));
        assert!((var(&r, "target") - 1000.0).abs() < 1e-3, "{}", var(&r, "target"));
        r.step(&ack(t + 10_000_000, 1, 100_000));
        assert!((var(&r, "target") - 1400.0).abs() < 1e-3, "{}", var(&r, "target"));
    }

    #[test]
    fn smax_clamps_growth_to_160_per_second_whatever_the_rtt() {
        // Loss at 10000: cwnd 8000, K = ∛(2000/0.4) = 17.1 s, the curve first rises at
        // 3CK² = 351/s. The clamp allows S_max·RTT per RTT: one segment per
        // ⌈cwnd/(160·RTT)⌉ ACKed, ≈ 160/s (a little less from the rounding up:
        // 160·(cwnd/16)/⌈cwnd/16⌉ ≥ 159.7 at 100 ms). Same at 50 ms and 200 ms: linear in
        // real time, independent of the RTT.
        for rtt in [50_000, 100_000, 200_000] {
            let mut r = loss_at(&Params::new(), 10_000, rtt);
            let w = per_second(&mut r, rtt, 2, 3);
            assert_eq!(w[0], 8000);
            for s in 0..3 {
                let g = w[s + 1] - w[s];
                assert!((157..=160).contains(&g), "rtt {rtt} second {s}: +{g} ({w:?})");
            }
        }
        // S_max = 0 lifts the clamp: the first second follows the curve (each RTT reaching
        // the target set one RTT before, so cwnd(t) ≈ W(t)): W(1) − 8000 =
        // 0.4(17.1³ − 16.1³) ≈ 331, twice the clamped 160.
        let mut r = loss_at(&Params::new().set("smax", 0.0), 10_000, 100_000);
        let w = per_second(&mut r, 100_000, 2, 1);
        assert!((320..=345).contains(&(w[1] - w[0])), "{w:?}");
    }

    #[test]
    fn tcp_mode_follows_eq_4() {
        // Eq. 4 with β = 0.8: W_tcp = 800 + 3(0.2/1.8)·t/RTT = 800 + t/(3·RTT). RTT 5 ms,
        // t = 4 s: 800 + 266.7 = 1066.7, above W_cubic(4) = 1000 + 0.4(4 − 7.937)³ = 975.6:
        // TCP mode, cwnd follows W_tcp (ACKs per segment rounded up: at most one behind).
        let mut r = loss_at(&Params::new(), 1000, 5_000);
        ack_clock(&mut r, 1_000_001, 5_000, 2, 4_000_000);
        let w_tcp = var(&r, "w_tcp");
        assert!((w_tcp - 1066.7).abs() < 1.5, "w_tcp {w_tcp}");
        let cwnd = f64::from(r.host.tcp.cwnd);
        assert!(cwnd <= w_tcp + 1.0 && cwnd >= w_tcp - 2.0, "cwnd {cwnd} w_tcp {w_tcp}");
        // Without the TCP mode cwnd stays on the cubic curve.
        let mut r = loss_at(&Params::new().set("tcp_friendliness", 0.0), 1000, 5_000);
        ack_clock(&mut r, 1_000_001, 5_000, 2, 4_000_000);
        assert!((970..=978).contains(&r.host.tcp.cwnd), "cwnd {}", r.host.tcp.cwnd);
    }

    #[test]
    fn growth_in_real_time_is_independent_of_rtt() {
        // Loss at 1000, TCP mode off: at 4 s both a 20 ms and a 200 ms flow are near
        // W(4) = 975.6 (each aims one of its RTTs ahead).
        let p = Params::new().set("tcp_friendliness", 0.0);
        let mut a = loss_at(&p, 1000, 20_000);
        ack_clock(&mut a, 1_000_001, 20_000, 1, 4_000_000);
        let mut b = loss_at(&p, 1000, 200_000);
        ack_clock(&mut b, 1_000_001, 200_000, 1, 4_000_000);
        let (x, y) = (a.host.tcp.cwnd, b.host.tcp.cwnd);
        assert!((971..=981).contains(&x) && (971..=981).contains(&y), "{x} {y}");
        assert!(x.abs_diff(y) <= 5, "{x} {y}");
    }

    #[test]
    fn congestion_avoidance_without_a_loss_starts_flat() {
        // Slow start ends at ssthresh 100 without a loss: W_max = 100, K = 0, so the curve
        // 100 + 0.4t³ and W_tcp = 100 + t/(3·RTT) start level with cwnd.
        let mut r = Replayer::new(
            Algorithm::new("cubic-2005", &Params::new()).unwrap(),
            ReplayStart { cwnd: 100, ssthresh: 100 },
            0,
        );
        r.step(&ack(0, 1, 100_000));
        assert_eq!((var(&r, "w_max"), var(&r, "k_s")), (100.0, 0.0));
        // target = W(0 + 0.1) = 100.0004: under one segment, so cwnd holds.
        assert!((var(&r, "target") - 100.0004).abs() < 1e-9);
        let mut alg = Cubic2005::new(&Params::new()).unwrap();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 100, srtt_us: 100_000, ..TcpState::default() };
        alg.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, 100);
    }
}
