//! `cubic-rfc9438`: RFC 9438, "CUBIC for Fast and Long-Distance Networks" (Xu, Ha, Rhee,
//! Goel, Eggert; August 2023), Section 4, for a TCP sender counting in segments.
//!
//! - Sec 4.2: W_cubic(t) = C(t − K)³ + W_max with K = ∛((W_max − cwnd_epoch)/C), t the time
//!   since the congestion avoidance stage began (at its first ACK, window cwnd_epoch).
//!   target = W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd], RTT the smoothed RTT.
//! - Sec 4.3: W_est starts at cwnd_epoch and grows by α_cubic·segments_acked/cwnd on each
//!   ACK, α_cubic = 3(1 − β)/(1 + β), and α_cubic = 1 once W_est >= cwnd_prior (the window
//!   when ssthresh was last set). When W_cubic(t) < W_est the flow is in the Reno-friendly
//!   region and cwnd is set to W_est (rounded down to whole segments).
//! - Sec 4.4-4.5: otherwise cwnd grows by (target − cwnd)/cwnd per acknowledged segment,
//!   accounted with the host's integer `cwnd_cnt` (one segment per ⌈cwnd/(target − cwnd)⌉
//!   segments ACKed, never faster than the RFC's rate).
//! - Sec 4.6: on a congestion event ssthresh = cwnd·β (the RFC allows cwnd instead of
//!   flight_size, as Linux does), at least 2; cwnd_prior = cwnd; β_cubic = 0.7.
//! - Sec 4.7: fast convergence, W_max = cwnd·(1 + β)/2 if cwnd < W_max, else cwnd.
//! - Sec 4.8: after a timeout the first congestion avoidance stage uses K = 0 and
//!   W_max = W_est = cwnd_epoch.
//! - Sec 4.9: every congestion event saves the CUBIC state (W_max, K, t_epoch,
//!   cwnd_epoch, W_est, cwnd_prior, and whether the epoch followed a timeout) with cwnd and
//!   ssthresh; undo restores all of it if cwnd is below the saved cwnd, else keeps the
//!   current values. (The host may then raise ssthresh to its own prior_ssthresh, as
//!   Linux's `tcp_undo_cwnd_reduction` does.)
//! - Sec 5.8: t excludes idle periods: a restart after idle shifts t_epoch by the idle time
//!   (as Linux does). Slow start (Sec 4.10) while cwnd < ssthresh is Reno's
//!   (`tcp_slow_start`), or with `hystart = "hystart++"` HyStart++ (RFC 9406,
//!   [`crate::hystart_plus_plus`]) in the first one.
//! - Before any congestion event W_max is undefined: the first stage uses K = 0 and
//!   W_max = cwnd_epoch (Sec 4.10), and cwnd_prior = 0, so α_cubic = 1 (there was no
//!   decrease to compensate for).

use crate::cubic_frame::{GrowthRule, Hystart, SlowStart, HYSTART_PLUS_PLUS_OR_OFF};
use crate::hystart_plus_plus::HyStartPlusPlus;
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_cong_avoid_ai, CaEvent, TcpState};

/// The CUBIC variables of RFC 9438 that a congestion event changes (and undo restores).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Curve {
    /// W_max, segments; 0 until the first congestion event or epoch.
    w_max: f64,
    /// K, seconds.
    k: f64,
    /// t_epoch in nanoseconds; `None` until the next congestion avoidance ACK.
    epoch_start: Option<u64>,
    cwnd_epoch: f64,
    w_est: f64,
    cwnd_prior: f64,
    /// The next (or current) stage follows a timeout (Sec 4.8).
    after_rto: bool,
}

/// State saved at a congestion event (Sec 4.9).
#[derive(Clone, Copy, Debug)]
struct Saved {
    curve: Curve,
    cwnd: u32,
    ssthresh: u32,
}

/// RFC 9438 CUBIC.
#[derive(Clone, Debug)]
pub struct CubicRfc9438 {
    beta: f64,
    c: f64,
    fast_convergence: bool,
    reno_friendly: bool,
    /// 3(1−β)/(1+β).
    alpha_cubic: f64,
    curve: Curve,
    saved: Option<Saved>,
    /// `hystart = "hystart++"`: RFC 9406's slow start, which the frame runs.
    hystart_plus_plus: Option<HyStartPlusPlus>,
    // Kept for traces.
    target: f64,
    w_cubic: f64,
    /// 0: Reno-friendly, 1: concave, 2: convex.
    region: u8,
}

impl CubicRfc9438 {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "beta",
            default: 0.7,
            min: 0.01,
            max: 0.99,
            integer: false,
            unit: "fraction kept",
            help: "beta_cubic: fraction of the window kept after a congestion event",
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
        ParamSpec::switch("fast_convergence", true, "W_max = cwnd*(1+beta)/2 on an event below W_max (Sec 4.7)"),
        ParamSpec::switch("reno_friendly", true, "follow W_est when W_cubic(t) < W_est (Sec 4.3)"),
        HYSTART_PLUS_PLUS_OR_OFF,
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-rfc9438", Self::PARAMS)?;
        let beta = p.f64("beta");
        Ok(Self {
            beta,
            c: p.f64("c"),
            fast_convergence: p.bool("fast_convergence"),
            reno_friendly: p.bool("reno_friendly"),
            alpha_cubic: 3.0 * (1.0 - beta) / (1.0 + beta),
            curve: Curve::default(),
            saved: None,
            hystart_plus_plus: Hystart::of(&p).plus_plus(),
            target: 0.0,
            w_cubic: 0.0,
            region: 0,
        })
    }

    /// Eq. 1, t in seconds.
    #[inline]
    fn w_cubic_at(&self, t: f64) -> f64 {
        self.c * (t - self.curve.k).powi(3) + self.curve.w_max
    }

    /// The first ACK of a congestion avoidance stage (Sec 4.2, 4.3, 4.8).
    fn start_epoch(&mut self, cwnd: f64, now_ns: u64) {
        let cv = &mut self.curve;
        cv.epoch_start = Some(now_ns);
        cv.cwnd_epoch = cwnd;
        if cv.after_rto || cv.w_max <= 0.0 {
            cv.w_max = cwnd;
            cv.k = 0.0;
        } else {
            cv.k = ((cv.w_max - cwnd) / self.c).cbrt();
        }
        cv.after_rto = false;
        cv.w_est = cwnd;
    }
}

impl GrowthRule for CubicRfc9438 {
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
        let cwnd = f64::from(tcp.cwnd);
        let cv = &mut self.curve;
        cv.w_max = if self.fast_convergence && cwnd < cv.w_max { cwnd * (1.0 + self.beta) / 2.0 } else { cwnd };
        cv.cwnd_prior = cwnd;
        cv.epoch_start = None;
        // The tiny bias keeps e.g. 1000 × 0.7 from rounding down to 699.
        ((cwnd * self.beta + 1e-9).floor() as u32).max(2)
    }

    /// Sec 4.2-4.5, after Reno's slow start.
    fn grow(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        let cwnd = f64::from(tcp.cwnd);
        if self.curve.epoch_start.is_none() {
            self.start_epoch(cwnd, now_ns);
        }
        let epoch = self.curve.epoch_start.unwrap_or(now_ns);
        let t = now_ns.saturating_sub(epoch) as f64 * 1e-9;
        let rtt = f64::from(tcp.srtt_us) * 1e-6;

        // Eq. 4, with α_cubic = 1 once W_est has reached cwnd_prior.
        let alpha = if self.curve.w_est >= self.curve.cwnd_prior { 1.0 } else { self.alpha_cubic };
        self.curve.w_est += alpha * f64::from(acked) / cwnd;

        let w_cubic = self.w_cubic_at(t);
        self.w_cubic = w_cubic;
        if self.reno_friendly && w_cubic < self.curve.w_est {
            // Reno-friendly region: cwnd = W_est.
            self.region = 0;
            self.target = self.curve.w_est;
            let w = (self.curve.w_est.floor().min(f64::from(u32::MAX)) as u32).min(tcp.cwnd_clamp);
            if w > tcp.cwnd {
                tcp.cwnd = w;
                tcp.cwnd_cnt = 0;
            }
            return;
        }
        self.region = if cwnd < self.curve.w_max { 1 } else { 2 };
        let target = self.w_cubic_at(t + rtt).clamp(cwnd, 1.5 * cwnd);
        self.target = target;
        if target > cwnd {
            let w = (cwnd / (target - cwnd)).ceil().min(f64::from(u32::MAX)) as u32;
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
            if let Some(epoch) = self.curve.epoch_start.as_mut() {
                let idle = now_ns.saturating_sub(tcp.lsndtime_ns);
                *epoch = epoch.saturating_add(idle).min(now_ns);
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
        out("w_max", cv.w_max);
        out("k_s", cv.k);
        out("w_est", cv.w_est);
        out("cwnd_prior", cv.cwnd_prior);
        out("cwnd_epoch", cv.cwnd_epoch);
        out("w_cubic", self.w_cubic);
        out("target", self.target);
        out("region", f64::from(self.region));
        out("epoch_start_s", cv.epoch_start.map_or(0.0, |e| e as f64 * 1e-9));
        if let Some(h) = &self.hystart_plus_plus {
            h.trace(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Event, ReplayStart, Replayer};
    use crate::test_support::{ack, ack_clock, ev, var};
    use crate::Algorithm;
    use crate::CongestionControl;

    /// `alg` in congestion avoidance at cwnd `w` (one ACK for the RTT sample), loss at 1 s.
    fn loss_at(alg: Algorithm, w: u32, rtt_us: u64) -> Replayer {
        let mut r = Replayer::new(alg, ReplayStart { cwnd: w, ssthresh: w / 2 }, 999_999);
        r.step(&ack(999_999, 1, rtt_us));
        r.host.tcp.cwnd = w;
        r.step(&ev(1_000_000, Event::Loss));
        r
    }

    fn rfc(p: Params) -> Algorithm {
        Algorithm::CubicRfc9438(CubicRfc9438::new(&p).unwrap())
    }

    #[test]
    fn decrease_and_fast_convergence() {
        // Sec 4.6: ssthresh = 1000·0.7 = 700, cwnd_prior = W_max = 1000. Sec 4.7: the next
        // event at 900 < W_max gives W_max = 900·(1 + 0.7)/2 = 765, ssthresh 630.
        let mut a = CubicRfc9438::new(&Params::new()).unwrap();
        assert_eq!(a.ssthresh(&TcpState { cwnd: 1000, ..TcpState::default() }, 0), 700);
        assert_eq!((a.curve.w_max, a.curve.cwnd_prior), (1000.0, 1000.0));
        assert_eq!(a.ssthresh(&TcpState { cwnd: 900, ..TcpState::default() }, 0), 630);
        assert!((a.curve.w_max - 765.0).abs() < 1e-9);
        let mut b = CubicRfc9438::new(&Params::new().set("fast_convergence", 0.0)).unwrap();
        b.ssthresh(&TcpState { cwnd: 1000, ..TcpState::default() }, 0);
        b.ssthresh(&TcpState { cwnd: 900, ..TcpState::default() }, 0);
        assert_eq!(b.curve.w_max, 900.0);
    }

    #[test]
    fn k_w_cubic_and_plateau() {
        // The stage starts at the first ACK after the loss (cwnd_epoch = 700):
        // K = ∛((1000 − 700)/0.4) = ∛750 = 9.0856 s; W_cubic(0) = 1000 − 0.4·750 = 700.
        // At t = K the curve is at W_max; 10 s later at 1000 + 0.4·1000 = 1400.
        let mut r = loss_at(rfc(Params::new()), 1000, 100_000);
        r.step(&ack(1_000_001, 1, 100_000));
        let k = 750f64.cbrt();
        assert!((var(&r, "k_s") - k).abs() < 1e-12);
        assert_eq!((var(&r, "cwnd_epoch"), var(&r, "w_est") > 700.0), (700.0, true));
        assert!((var(&r, "w_cubic") - 700.0).abs() < 1e-9);
        let at_k = 1_000_001 + (k * 1e6).round() as u64;
        r.step(&ack(at_k, 1, 100_000));
        assert!((var(&r, "w_cubic") - 1000.0).abs() < 1e-3, "{}", var(&r, "w_cubic"));
        r.step(&ack(at_k + 10_000_000, 1, 100_000));
        assert!((var(&r, "w_cubic") - 1400.0).abs() < 1e-3, "{}", var(&r, "w_cubic"));
    }

    #[test]
    fn target_is_clamped_to_one_and_a_half_cwnd() {
        // 100 s into the stage W_cubic(t + RTT) ≈ 1000 + 0.4·91³ ≈ 300,000, but the target
        // is 1.5·cwnd = 1050: one segment per ⌈700/350⌉ = 2 ACKed. A stretch ACK of the whole
        // window (700 segments) adds 350, no more: cwnd 1050.
        let mut r = loss_at(rfc(Params::new()), 1000, 100_000);
        r.step(&ack(1_000_001, 1, 100_000));
        assert_eq!(r.host.tcp.cwnd, 700);
        r.step(&ack(101_000_001, 700, 100_000));
        assert_eq!(var(&r, "target"), 1050.0);
        assert_eq!(r.host.tcp.cwnd, 1050);
    }

    #[test]
    fn reno_friendly_w_est_switches_alpha_at_cwnd_prior() {
        // Eq. 4 with α_cubic = 3·0.3/1.7 = 0.5294 per RTT from W_est = 700 until W_est
        // reaches cwnd_prior = 1000: 300/0.5294 = 566.7 RTTs = 2.833 s at RTT 5 ms; then
        // α = 1: at 4 s (800 RTTs) W_est = 1000 + (800 − 566.7) = 1233.3 (it would be
        // 700 + 0.5294·800 = 1123.5 without the switch). W_cubic(4) = 1000 +
        // 0.4(4 − 9.086)³ = 947.4 < W_est: Reno-friendly region, cwnd = ⌊W_est⌋.
        let mut r = loss_at(rfc(Params::new()), 1000, 5_000);
        ack_clock(&mut r, 1_000_001, 5_000, 2, 4_000_000);
        let w_est = var(&r, "w_est");
        assert!((w_est - 1233.3).abs() < 2.0, "w_est {w_est}");
        assert_eq!(var(&r, "region"), 0.0);
        assert_eq!(f64::from(r.host.tcp.cwnd), w_est.floor());
        // reno_friendly = 0: cwnd stays on the curve, near W_cubic(4) = 947.4.
        let mut r = loss_at(rfc(Params::new().set("reno_friendly", 0.0)), 1000, 5_000);
        ack_clock(&mut r, 1_000_001, 5_000, 2, 4_000_000);
        assert!((944..=950).contains(&r.host.tcp.cwnd), "cwnd {}", r.host.tcp.cwnd);
    }

    #[test]
    fn growth_in_real_time_is_independent_of_rtt() {
        // Outside the Reno-friendly region (disabled), after a loss at 1000 a 20 ms and a
        // 200 ms flow are both near W_cubic(5) = 1000 + 0.4(5 − 9.086)³ = 972.7 at 5 s.
        let p = Params::new().set("reno_friendly", 0.0);
        let mut a = loss_at(rfc(p.clone()), 1000, 20_000);
        ack_clock(&mut a, 1_000_001, 20_000, 1, 5_000_000);
        let mut b = loss_at(rfc(p), 1000, 200_000);
        ack_clock(&mut b, 1_000_001, 200_000, 1, 5_000_000);
        let (x, y) = (a.host.tcp.cwnd, b.host.tcp.cwnd);
        assert!((968..=978).contains(&x) && (968..=978).contains(&y), "{x} {y}");
        assert!(x.abs_diff(y) <= 5, "{x} {y}");
    }

    #[test]
    fn timeout_starts_a_flat_curve() {
        // Sec 4.8: RTO at 1000 → ssthresh 700, cwnd 1; slow start to 700; the first
        // congestion avoidance ACK has K = 0 and W_max = W_est = cwnd_epoch = 700.
        let mut r = Replayer::new(rfc(Params::new()), ReplayStart { cwnd: 1000, ssthresh: 500 }, 0);
        r.step(&ev(0, Event::Rto));
        assert_eq!((r.host.tcp.cwnd, r.host.tcp.ssthresh), (1, 700));
        let mut t = 1;
        while r.host.tcp.cwnd < 700 {
            r.step(&ack(t, 1, 10_000));
            t += 10;
        }
        r.step(&ack(t, 1, 10_000));
        assert_eq!((var(&r, "k_s"), var(&r, "w_max"), var(&r, "cwnd_epoch")), (0.0, 700.0, 700.0));
        // W_est = 700 + α·1/700 with α = 0.5294 (W_est < cwnd_prior = 1000).
        assert!((var(&r, "w_est") - (700.0 + 0.9 / 1.7 / 700.0)).abs() < 1e-9);
    }

    #[test]
    fn undo_restores_the_whole_state() {
        // Sec 4.9: a first stage (no event before: K = 0, W_max = cwnd_epoch = 500, α = 1),
        // 2 s of ACKs, a loss, 0.5 s at the reduced window, then undo: cwnd, ssthresh, W_max,
        // K, t_epoch, cwnd_epoch, W_est and cwnd_prior are all back to their values before
        // the loss (ssthresh 450 stays above the host's 3/4·cwnd, so the host keeps it).
        let names = ["w_max", "k_s", "w_est", "cwnd_prior", "cwnd_epoch", "epoch_start_s"];
        let mut r = Replayer::new(rfc(Params::new()), ReplayStart { cwnd: 500, ssthresh: 450 }, 1_000_000);
        let t = ack_clock(&mut r, 1_000_000, 50_000, 1, 2_000_000);
        let before: Vec<f64> = names.iter().map(|n| var(&r, n)).collect();
        let (cwnd, ssthresh) = (r.host.tcp.cwnd, r.host.tcp.ssthresh);
        assert!(cwnd > 530 && before[1] == 0.0 && before[0] == 500.0 && before[5] == 1.0, "{cwnd} {before:?}");
        r.step(&ev(t, Event::Loss));
        assert_eq!(r.host.tcp.cwnd, (f64::from(cwnd) * 0.7 + 1e-9) as u32);
        let t = ack_clock(&mut r, t + 1, 50_000, 1, 500_000);
        assert_ne!(var(&r, "w_est"), before[2]);
        r.step(&ev(t, Event::Undo));
        let after: Vec<f64> = names.iter().map(|n| var(&r, n)).collect();
        assert_eq!(after, before);
        assert_eq!((r.host.tcp.cwnd, r.host.tcp.ssthresh), (cwnd, ssthresh));
        // A second undo finds nothing saved: the window stays.
        r.step(&ev(t + 1, Event::Undo));
        assert_eq!(r.host.tcp.cwnd, cwnd);
    }

    #[test]
    fn undo_keeps_current_state_when_cwnd_already_recovered() {
        // "if cwnd < prior_cwnd" only: a window already back above the saved one stays.
        let mut a = CubicRfc9438::new(&Params::new()).unwrap();
        let mut tcp = TcpState { cwnd: 1000, ssthresh: 800, ..TcpState::default() };
        tcp.ssthresh = a.ssthresh(&tcp, 0);
        tcp.cwnd = 1001;
        assert_eq!(a.undo_cwnd(&mut tcp, 0), 1001);
        assert_eq!((tcp.ssthresh, a.curve.w_max), (700, 1000.0));
    }

    #[test]
    fn idle_time_is_not_in_t() {
        // Sec 5.8: a restart after 3 s idle moves t_epoch 3 s later.
        let mut r = loss_at(rfc(Params::new()), 1000, 100_000);
        r.step(&ack(1_000_001, 1, 100_000));
        let e = var(&r, "epoch_start_s");
        r.step(&ev(5_000_000, Event::TxStart { idle_us: 3_000_000 }));
        assert!((var(&r, "epoch_start_s") - (e + 3.0)).abs() < 1e-9);
    }

    #[test]
    fn variants_differ_on_the_same_loss() {
        // One loss at cwnd 1000, then the first congestion avoidance ACKs:
        // cubic-2008 keeps 1000·(1 − 0.2) = 800; K = ∛(1000·0.2/0.4) = 7.937 s.
        // cubic-2005 keeps β = 0.8: 800; K = ∛(1000·(1 − 0.8)/0.4) = 7.937 s.
        // cubic-rfc9438 keeps 0.7: 700; K = ∛(300/0.4) = 9.086 s.
        // cubic-2.0 keeps ⌊1000·819/1024⌋ = 799; one slow-start ACK (cwnd <= ssthresh) to
        // 800, then K = 8125/1024 = 7.935 s (the kernel's root of ⌊2^40/410⌋·200).
        let cases = [
            ("cubic-2008", 800, 500f64.cbrt()),
            ("cubic-2005", 800, 500f64.cbrt()),
            ("cubic-rfc9438", 700, 750f64.cbrt()),
            ("cubic-2.0", 799, 8125.0 / 1024.0),
        ];
        for (name, kept, k) in cases {
            let mut p = Params::new();
            if name == "cubic-2.0" {
                p = p.set("initial_ssthresh", 0.0);
            }
            let mut r = loss_at(Algorithm::new(name, &p).unwrap(), 1000, 100_000);
            assert_eq!((name, r.host.tcp.cwnd, r.host.tcp.ssthresh), (name, kept, kept));
            r.step(&ack(1_000_001, 1, 100_000));
            r.step(&ack(1_000_002, 1, 100_000));
            assert!((var(&r, "k_s") - k).abs() < 1e-9, "{name}: K {} vs {k}", var(&r, "k_s"));
        }
    }
}
