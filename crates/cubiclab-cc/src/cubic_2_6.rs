//! What Linux CUBIC v2.0 (kernels 2.6.19 to 2.6.21, [`crate::cubic_v2_0`]) and v2.2 (2.6.25
//! to 2.6.28, [`crate::cubic_2_2`]) share, written once as the kernel of those years wrote
//! it: `struct bictcp` with its delayed-ACK ratio, the module parameters and the constants
//! of `cubictcp_register`, `bictcp_reset`, `bictcp_recalc_ssthresh`, the per-ACK
//! `bictcp_cong_avoid` (`snd_cwnd_cnt` counts ACKs), the cubic part of `bictcp_update`,
//! undo back to W_max and `bictcp_state`. A version implements [`Cubic26`]: its own
//! `bictcp_update` around the shared parts, and its RTT sampling.

use crate::bic_lineage::{
    beta_scale, count_is_fresh, count_toward, cube_factor, cubic_target, epoch_curve, kept_window, last_max_after_loss,
    per_ack_count, reno_friendly_count, ACK_RATIO_SHIFT, BICTCP_BETA_SCALE, BICTCP_HZ,
};
use crate::clock::jiffies32;
use crate::cubic_frame::{count_ack, GrowthRule, SlowStart};
use crate::params::{ParamSpec, Resolved};
use crate::tcp::{AckSample, TcpState};

/// `beta` of v2.2 (v2.0 keeps 819/1024).
pub(crate) const BETA: ParamSpec = ParamSpec {
    name: "beta",
    default: 717.0,
    min: 1.0,
    max: 1023.0,
    integer: true,
    unit: "1/1024",
    help: "window kept after a loss",
    choices: &[],
};
pub(crate) const BIC_SCALE: ParamSpec = ParamSpec {
    name: "bic_scale",
    default: 41.0,
    min: 1.0,
    max: 1000.0,
    integer: true,
    unit: "10/1024 segments/s^3",
    help: "C = bic_scale*10/1024 (41 gives 0.40)",
    choices: &[],
};
pub(crate) const FAST_CONVERGENCE: ParamSpec =
    ParamSpec::switch("fast_convergence", true, "lower W_max to cwnd*(1024+beta)/2048 on a loss below it");
pub(crate) const TCP_FRIENDLINESS: ParamSpec =
    ParamSpec::switch("tcp_friendliness", true, "grow at least as fast as the emulated Reno window");
/// `initial_ssthresh` of v2.2 (v2.0's default is 100).
pub(crate) use crate::bic_lineage::INITIAL_SSTHRESH;

/// `struct bictcp` of v2.0 to v2.2, with the module parameters and the constants
/// `cubictcp_register` precomputes.
#[derive(Clone, Debug)]
pub(crate) struct BicTcp {
    // Module parameters.
    pub(crate) fast_convergence: bool,
    pub(crate) beta: u32,
    pub(crate) initial_ssthresh: u32,
    pub(crate) tcp_friendliness: bool,
    pub(crate) hz: u32,
    // Precomputed in `cubictcp_register`.
    pub(crate) beta_scale: u32,
    pub(crate) cube_rtt_scale: u32,
    pub(crate) cube_factor: u64,
    // `struct bictcp`.
    pub(crate) cnt: u32,
    pub(crate) last_max_cwnd: u32,
    pub(crate) loss_cwnd: u32,
    pub(crate) last_cwnd: u32,
    pub(crate) last_time: u32,
    pub(crate) bic_origin_point: u32,
    pub(crate) bic_k: u32,
    pub(crate) delay_min: u32,
    pub(crate) epoch_start: u32,
    pub(crate) ack_cnt: u32,
    pub(crate) tcp_cwnd: u32,
    pub(crate) delayed_ack: u32,
    /// Not in the kernel: the last `bic_target`, kept for traces.
    pub(crate) bic_target: u32,
}

impl BicTcp {
    /// The module parameters read from `p`; `cube_rtt_scale` is the version's (v2.0 can
    /// reproduce 2.6.18's scaling error).
    pub(crate) fn new(p: &Resolved, cube_rtt_scale: u32) -> Self {
        let beta = p.u32("beta");
        let mut ca = Self {
            fast_convergence: p.bool("fast_convergence"),
            beta,
            initial_ssthresh: p.u32("initial_ssthresh"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            hz: p.u32("hz"),
            beta_scale: beta_scale(beta),
            cube_rtt_scale,
            cube_factor: cube_factor(p.u32("bic_scale")),
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 0,
            bic_target: 0,
        };
        ca.reset();
        ca
    }

    /// `bictcp_reset`: everything, `loss_cwnd` and the delayed-ACK ratio (2 per ACK)
    /// included.
    pub(crate) fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.loss_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = 0;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.bic_target = 0;
    }

    /// The cubic part of `bictcp_update`, for an ACK at jiffy `now` with the target `ahead`
    /// jiffies in the future (the minimum RTT): `cnt` toward the curve. False when the last
    /// count still holds (`HZ / 32` rate limit) and nothing else is to be done.
    pub(crate) fn curve_count(&mut self, cwnd: u32, now: u32, ahead: u32, root: fn(u64) -> u32) -> bool {
        self.ack_cnt = self.ack_cnt.wrapping_add(1);
        if count_is_fresh(self.last_cwnd, self.last_time, cwnd, now, self.hz) {
            return false;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;

        if self.epoch_start == 0 {
            self.epoch_start = now;
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            // K³ = (W_max − cwnd)/C in (2^-10 s)³.
            (self.bic_k, self.bic_origin_point) = epoch_curve(self.last_max_cwnd, cwnd, self.cube_factor, root);
        }

        // t = now + min RTT − epoch start, in 2^-10 s. wraps: u32 jiffies arithmetic in C.
        let t = (now.wrapping_add(ahead).wrapping_sub(self.epoch_start) << BICTCP_HZ) / self.hz;
        self.bic_target = cubic_target(self.cube_rtt_scale, self.bic_k, self.bic_origin_point, u64::from(t));
        self.cnt = count_toward(self.bic_target, cwnd);
        true
    }

    /// The end of `bictcp_update`: TCP friendliness (the Reno estimate grows one segment
    /// per `max(cwnd * beta_scale / 8, min_step)` ACKs), then `cnt` per ACK rather than per
    /// packet.
    pub(crate) fn friendly_per_ack(&mut self, cwnd: u32, min_step: u32) {
        if self.tcp_friendliness {
            // wraps: u32 product in C.
            let d = (cwnd.wrapping_mul(self.beta_scale) >> 3).max(min_step);
            self.cnt = reno_friendly_count(self.cnt, cwnd, d, &mut self.ack_cnt, &mut self.tcp_cwnd);
        }
        // Counts are per packet; cwnd_cnt counts ACKs: divide by packets per ACK.
        self.cnt = per_ack_count(self.cnt, self.delayed_ack);
    }

    /// The variables for traces, with `delay_min` in jiffies.
    pub(crate) fn trace(&self, delay_min_jiffies: u32, out: &mut dyn FnMut(&'static str, f64)) {
        out("cnt", f64::from(self.cnt));
        out("last_max_cwnd", f64::from(self.last_max_cwnd));
        out("loss_cwnd", f64::from(self.loss_cwnd));
        out("origin", f64::from(self.bic_origin_point));
        out("k_s", f64::from(self.bic_k) / f64::from(1u32 << BICTCP_HZ));
        out("target", f64::from(self.bic_target));
        out("tcp_cwnd", f64::from(self.tcp_cwnd));
        out("delay_min_ms", f64::from(delay_min_jiffies) * 1000.0 / f64::from(self.hz));
        out("delayed_ack", f64::from(self.delayed_ack) / f64::from(1u32 << ACK_RATIO_SHIFT));
        out("epoch_start_s", f64::from(self.epoch_start) / f64::from(self.hz));
    }
}

/// A 2.6 CUBIC version: its `struct bictcp`, its `bictcp_update` and its RTT sampling; the
/// rest is the shared code above, through [`GrowthRule`].
pub(crate) trait Cubic26 {
    fn bictcp(&self) -> &BicTcp;
    fn bictcp_mut(&mut self) -> &mut BicTcp;
    /// `bictcp_update` for an ACK at jiffy `now`: set `cnt`.
    fn update(&mut self, cwnd: u32, now: u32);
    /// `pkts_acked` (and v2.0's `measure_delay`): the delayed-ACK ratio and `delay_min`.
    fn sample(&mut self, tcp: &TcpState, sample: &AckSample, now_ns: u64);
    /// `delay_min` in jiffies, for traces.
    fn delay_min_jiffies(&self) -> u32;
}

impl<V: Cubic26> GrowthRule for V {
    /// Slow start one segment per ACK while `cwnd <= ssthresh` (no ABC).
    const SLOW_START: SlowStart = SlowStart::PerAck;

    /// `bictcp_init`, and `bictcp_state`: a timeout forgets everything.
    fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
        self.bictcp_mut().reset();
    }

    fn initial_ssthresh(&self) -> u32 {
        self.bictcp().initial_ssthresh
    }

    /// `bictcp_recalc_ssthresh`.
    fn on_congestion(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let ca = self.bictcp_mut();
        let cwnd = tcp.cwnd;
        ca.epoch_start = 0;
        ca.last_max_cwnd = last_max_after_loss(cwnd, ca.last_max_cwnd, ca.beta, BICTCP_BETA_SCALE, ca.fast_convergence);
        ca.loss_cwnd = cwnd;
        kept_window(cwnd, ca.beta)
    }

    /// `bictcp_cong_avoid` after slow start: one call per ACK, `snd_cwnd_cnt` counts ACKs.
    fn grow(&mut self, tcp: &mut TcpState, _acked: u32, now_ns: u64) {
        self.update(tcp.cwnd, jiffies32(now_ns, self.bictcp().hz));
        count_ack(tcp, tcp.cwnd_cnt >= self.bictcp().cnt);
    }

    /// `bictcp_undo_cwnd`: back to W_max (which fast convergence may have lowered).
    fn restore(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        tcp.cwnd.max(self.bictcp().last_max_cwnd)
    }

    fn on_ack(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
        self.sample(tcp, sample, now_ns);
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.bictcp().trace(self.delay_min_jiffies(), out);
    }
}
