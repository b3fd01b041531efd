//! `cubic-2.2`: Linux CUBIC v2.2 (`MODULE_VERSION("2.2")`, kernels 2.6.25 to 2.6.28), the
//! code seed 000 measured, in the kernel's integer arithmetic.
//!
//! Source read (none copied): `net/ipv4/tcp_cubic.c` and `net/ipv4/tcp_cong.c` of a stored
//! 2.6.26 tree. Against v2.1 (2.6.22-2.6.24) the file drops two rules: the `max_increment`
//! clamp (`min_cnt`) and the gentle start before the first loss (`cnt = 50` while
//! `loss_cwnd == 0`). Against v2.3 (2.6.29 on, [`crate::cubic`]) it has no HyStart, a
//! `delay_min` in jiffies << 3 from `usecs_to_jiffies(rtt_us)`, counts ACKs (not segments)
//! with the delayed-ACK ratio of BIC, and undo returns W_max.
//!
//! What the kernel computes, per ACK in congestion avoidance (`bictcp_update`):
//! - beta 717/1024 is the window *kept* (`ssthresh = max(cwnd·717/1024, 2)`), fast
//!   convergence sets W_max = cwnd·(1024 + 717)/2048 after a loss below it.
//! - K = `cubic_root(cube_factor·(W_max − cwnd))` in 2^-10 s with
//!   `cube_factor = 2^40/(bic_scale·10)`: K³ = (W_max − cwnd)/C, C = 410/1024 = 0.4004,
//!   from the *distance* to the window at the start of the epoch.
//! - `t = (jiffies + delay_min/8 − epoch_start)·1024/HZ`: one minimum RTT ahead;
//!   target = origin ± `410·|t − K|³ >> 40`.
//! - `cnt = cwnd/(target − cwnd)`, or `100·cwnd` at or above the target.
//! - TCP friendliness: `tcp_cwnd` grows by one per `cwnd·beta_scale/8` ACKs with
//!   `beta_scale = 8(1024 + 717)/3/(1024 − 717) = 15` (integer steps): 8/15 = 0.533 per
//!   window of ACKs (the ideal 3(1 − 0.7)/(1 + 0.7) = 0.529); when above cwnd it caps cnt.
//! - `cnt` is divided by the delayed-ACK ratio (packets per ACK, EWMA with gain 1/16, in
//!   1/16 units, from `pkts_acked` in Open), at least 1; `snd_cwnd_cnt` counts ACKs and the
//!   window rises when it reaches `cnt` (`>=`).
//! - Slow start while `cwnd <= ssthresh`: 2.6.26's `tcp_slow_start` (no ABC, no limited
//!   slow start, the defaults) adds `cwnd` to `snd_cwnd_cnt` and takes a segment per `cwnd`
//!   of it: one segment per ACK whenever `snd_cwnd_cnt < cwnd`, which holds here because
//!   the host zeroes it when a reduction starts. So: one segment per ACK.
//!
//! Modelling notes (as in [`crate::cubic_v2_0`]): time is jiffies of `now_ns` at param
//! `hz`; one `cong_avoid` call is one ACK (`acked` is not used, as in 2.6.26, whose hook had
//! no such argument); `tcp_is_cwnd_limited` is the host's `cwnd_limited`.

use crate::bic_lineage::{last_max_after_loss, per_ack_count, update_ack_ratio, ACK_RATIO_SHIFT};
use crate::clock::{jiffies32, UsecsToJiffies};
use crate::cubic::cubic_root;
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{AckSample, CaState, TcpState};
use crate::CongestionControl;

/// `BICTCP_BETA_SCALE`: beta is in 1/1024.
pub const BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: CUBIC's own time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;

/// Linux CUBIC v2.2: `struct bictcp`, the module parameters and the precomputed constants.
#[derive(Clone, Debug)]
pub struct Cubic22 {
    // Module parameters.
    fast_convergence: bool,
    beta: u32,
    initial_ssthresh: u32,
    tcp_friendliness: bool,
    hz: u32,
    // Precomputed in `cubictcp_register`.
    beta_scale: u32,
    cube_rtt_scale: u32,
    cube_factor: u64,
    usecs_to_jiffies: UsecsToJiffies,
    max_usecs: u32,
    // `struct bictcp`.
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    bic_origin_point: u32,
    bic_k: u32,
    delay_min: u32,
    epoch_start: u32,
    ack_cnt: u32,
    tcp_cwnd: u32,
    delayed_ack: u32,
    /// Not in the kernel: the last target, kept for traces.
    bic_target: u32,
}

impl Cubic22 {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "beta",
            default: 717.0,
            min: 1.0,
            max: 1023.0,
            integer: true,
            help: "window kept after a loss, /1024",
        },
        ParamSpec {
            name: "bic_scale",
            default: 41.0,
            min: 1.0,
            max: 1000.0,
            integer: true,
            help: "C = bic_scale*10/1024 (41 gives 0.40)",
        },
        ParamSpec {
            name: "fast_convergence",
            default: 1.0,
            min: 0.0,
            max: 1.0,
            integer: true,
            help: "lower W_max to cwnd*(1024+beta)/2048 on a loss below it",
        },
        ParamSpec {
            name: "tcp_friendliness",
            default: 1.0,
            min: 0.0,
            max: 1.0,
            integer: true,
            help: "grow at least as fast as the emulated Reno window",
        },
        ParamSpec {
            name: "initial_ssthresh",
            default: 0.0,
            min: 0.0,
            max: 2147483647.0,
            integer: true,
            help: "ssthresh set at init, segments (0: leave it)",
        },
        ParamSpec {
            name: "hz",
            default: 1000.0,
            min: 100.0,
            max: 10000.0,
            integer: true,
            help: "kernel HZ (jiffies per second)",
        },
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-2.2", Self::PARAMS)?;
        let beta = p.u32("beta");
        let bic_scale = p.u32("bic_scale");
        let hz = p.u32("hz");
        let mut s = Self {
            fast_convergence: p.bool("fast_convergence"),
            beta,
            initial_ssthresh: p.u32("initial_ssthresh"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            hz,
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / u64::from(bic_scale * 10),
            usecs_to_jiffies: UsecsToJiffies::new(u64::from(hz)),
            max_usecs: UsecsToJiffies::max_usecs(u64::from(hz)),
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
        s.reset();
        Ok(s)
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
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

    /// `bictcp_update`: `cnt`, the ACKs per one-segment increase.
    fn update(&mut self, cwnd: u32, now: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(1);
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (self.hz / 32) as i32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;

        if self.epoch_start == 0 {
            self.epoch_start = now;
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.bic_k = 0;
                self.bic_origin_point = cwnd;
            } else {
                // wraps: u64 product in C.
                self.bic_k = cubic_root(self.cube_factor.wrapping_mul(u64::from(self.last_max_cwnd - cwnd)));
                self.bic_origin_point = self.last_max_cwnd;
            }
        }

        // wraps: u32 jiffies arithmetic in C.
        let t = (now.wrapping_add(self.delay_min >> 3).wrapping_sub(self.epoch_start) << BICTCP_HZ) / self.hz;
        let offs = u64::from(self.bic_k.abs_diff(t));
        // wraps: u64 in C (the kernel's arithmetic is designed for cwnd < 10^6).
        let delta = (u64::from(self.cube_rtt_scale).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
            >> (10 + 3 * BICTCP_HZ)) as u32;
        let target = if t < self.bic_k {
            self.bic_origin_point.wrapping_sub(delta)
        } else {
            self.bic_origin_point.wrapping_add(delta)
        };
        self.bic_target = target;
        self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.wrapping_mul(100) };

        if self.tcp_friendliness {
            let d = cwnd.wrapping_mul(self.beta_scale) >> 3;
            // The kernel's `while (ack_cnt > d) { ack_cnt -= d; tcp_cwnd++; }` in closed form;
            // with d = 0 (only for a non-default beta at cwnd <= 3) the kernel would spin.
            if d > 0 && self.ack_cnt > d {
                let n = (self.ack_cnt - 1) / d;
                self.ack_cnt -= n * d;
                self.tcp_cwnd = self.tcp_cwnd.wrapping_add(n);
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        self.cnt = per_ack_count(self.cnt, self.delayed_ack);
    }
}

impl CongestionControl for Cubic22 {
    /// `bictcp_init`.
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.reset();
        if self.initial_ssthresh != 0 {
            tcp.ssthresh = self.initial_ssthresh;
        }
    }

    /// `bictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let cwnd = tcp.cwnd;
        self.epoch_start = 0;
        self.last_max_cwnd =
            last_max_after_loss(cwnd, self.last_max_cwnd, self.beta, BETA_SCALE, self.fast_convergence);
        self.loss_cwnd = cwnd;
        (cwnd.wrapping_mul(self.beta) / BETA_SCALE).max(2)
    }

    /// `bictcp_cong_avoid`: one call per ACK.
    fn cong_avoid(&mut self, tcp: &mut TcpState, _acked: u32, now_ns: u64) {
        if !tcp.cwnd_limited {
            return;
        }
        if tcp.cwnd <= tcp.ssthresh {
            if tcp.cwnd < tcp.cwnd_clamp {
                tcp.cwnd += 1;
            }
            return;
        }
        self.update(tcp.cwnd, jiffies32(now_ns, self.hz));
        if tcp.cwnd_cnt >= self.cnt {
            if tcp.cwnd < tcp.cwnd_clamp {
                tcp.cwnd += 1;
            }
            tcp.cwnd_cnt = 0;
        } else {
            tcp.cwnd_cnt += 1;
        }
    }

    /// `bictcp_state`: a timeout forgets everything.
    fn set_state(&mut self, _tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }

    /// `bictcp_undo_cwnd`: back to W_max.
    fn undo_cwnd(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        tcp.cwnd.max(self.last_max_cwnd)
    }

    /// `bictcp_acked`: the delayed-ACK ratio in Open, then `delay_min` from the RTT sample,
    /// except in the first second of an epoch (just after recovery).
    fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
        if tcp.ca_state == CaState::Open {
            self.delayed_ack = update_ack_ratio(self.delayed_ack, sample.pkts_acked);
        }
        if sample.rtt_us < 0 {
            return;
        }
        let now = jiffies32(now_ns, self.hz);
        if (now.wrapping_sub(self.epoch_start) as i32) < self.hz as i32 {
            return;
        }
        // The kernel's rtt_us is an s32; usecs_to_jiffies returns unsigned long, truncated
        // to u32 by the assignment, then shifted.
        let us = sample.rtt_us.min(i64::from(i32::MAX)) as u32;
        let mut delay = (self.usecs_to_jiffies.convert(us, self.max_usecs) as u32) << 3;
        if delay == 0 {
            delay = 1;
        }
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("cnt", f64::from(self.cnt));
        out("last_max_cwnd", f64::from(self.last_max_cwnd));
        out("loss_cwnd", f64::from(self.loss_cwnd));
        out("origin", f64::from(self.bic_origin_point));
        out("k_s", f64::from(self.bic_k) / f64::from(1u32 << BICTCP_HZ));
        out("target", f64::from(self.bic_target));
        out("tcp_cwnd", f64::from(self.tcp_cwnd));
        out("delay_min_ms", f64::from(self.delay_min >> 3) * 1000.0 / f64::from(self.hz));
        out("delayed_ack", f64::from(self.delayed_ack) / f64::from(1u32 << ACK_RATIO_SHIFT));
        out("epoch_start_s", f64::from(self.epoch_start) / f64::from(self.hz));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Event, ReplayStart, Replayer};
    use crate::test_support::{ack, ack_clock, ev, var};
    use crate::Algorithm;

    /// Congestion avoidance at cwnd `w` with one ACK setting the RTT, then a loss at `w`,
    /// for `name` ("cubic-2.2" or "cubic-2008"). Starts at 2 s, past the kernel's
    /// first-second discard of delay samples.
    fn loss_at(name: &str, params: &Params, w: u32, rtt_us: u64, per_ack: u32) -> Replayer {
        let a = Algorithm::new(name, params).unwrap();
        let mut r = Replayer::new(a, ReplayStart { cwnd: w, ssthresh: w / 2 }, 2_000_000);
        r.step(&ack(2_000_000, per_ack, rtt_us));
        r.host.tcp.cwnd = w;
        r.step(&ev(2_000_001, Event::Loss));
        r
    }

    #[test]
    fn decrease_keeps_717_of_1024_where_the_paper_keeps_0_8() {
        // cubic-2.2: ssthresh = 1000·717/1024 = 700.2 → 700; cubic-2008: 1000·0.8 = 800.
        let a = loss_at("cubic-2.2", &Params::new(), 1000, 100_000, 2);
        let b = loss_at("cubic-2008", &Params::new(), 1000, 100_000, 2);
        assert_eq!((a.host.tcp.cwnd, a.host.tcp.ssthresh), (700, 700));
        assert_eq!((b.host.tcp.cwnd, b.host.tcp.ssthresh), (800, 800));
        // Fast convergence after a loss at 900 < W_max 1000: cubic-2.2 W_max =
        // 900·(1024 + 717)/2048 = 765.1 → 765; cubic-2008: 900·(2 − 0.2)/2 = 810.
        let mut c = Cubic22::new(&Params::new()).unwrap();
        c.ssthresh(&TcpState { cwnd: 1000, ..TcpState::default() }, 0);
        assert_eq!(c.ssthresh(&TcpState { cwnd: 900, ..TcpState::default() }, 0), 900 * 717 / 1024);
        assert_eq!(c.last_max_cwnd, 765);
        let mut tcp = TcpState { cwnd: 629, ..TcpState::default() };
        assert_eq!(c.undo_cwnd(&mut tcp, 0), 765);
    }

    #[test]
    fn k_from_the_distance_to_w_max_not_from_w_max() {
        // Loss at 1000: cwnd 700; one slow-start ACK (cwnd <= ssthresh) gives 701, the next
        // starts the epoch. cubic-2.2: K = cubic_root(⌊2^40/410⌋·(1000 − 701)) =
        // cubic_root(2681735677·299) = 9284 (2^-10 s) = 9.066 s (exact ∛(299/0.4004) =
        // 9.072 s). cubic-2008: K = ∛(1000·0.2/0.4) = 7.937 s.
        let mut a = loss_at("cubic-2.2", &Params::new(), 1000, 100_000, 2);
        a.step(&ack(2_000_002, 2, 100_000));
        assert_eq!(a.host.tcp.cwnd, 701);
        a.step(&ack(2_000_003, 2, 100_000));
        assert_eq!(var(&a, "k_s"), 9284.0 / 1024.0);
        // The RTT sample at 2 s (jiffy 2000, more than HZ past epoch_start 0) set delay_min
        // = usecs_to_jiffies(100 ms) << 3 = 800, so t = (100·1024)/1000 = 102 and
        // delta = 410·(9284 − 102)³ >> 40 = 288: target = 1000 − 288 = 712,
        // cnt = 701/(712 − 701) = 63, per ACK at ratio 32/16: 63·16/32 = 31.
        assert_eq!(var(&a, "target"), 712.0);
        assert_eq!(var(&a, "cnt"), 31.0);
        let mut b = loss_at("cubic-2008", &Params::new(), 1000, 100_000, 2);
        b.step(&ack(2_000_002, 2, 100_000));
        b.step(&ack(2_000_003, 2, 100_000));
        assert!((var(&b, "k_s") - 500f64.cbrt()).abs() < 1e-12);
    }

    #[test]
    fn one_increase_per_cnt_acks_where_the_paper_needs_cnt_plus_2_segments() {
        // Above: cnt 31 ACKs; cwnd_cnt counts ACKs and the window rises when it reaches
        // cnt (>=): from 0, the epoch's first 31 ACKs take cwnd_cnt to 31, the 32nd adds
        // one. The target, and so cnt, stay put while cwnd is unchanged within HZ/32
        // jiffies. (cubic-2008 compares `>` and counts segments: cnt + 2 segments.)
        let mut a = loss_at("cubic-2.2", &Params::new(), 1000, 100_000, 2);
        a.step(&ack(2_000_002, 2, 100_000));
        a.host.tcp.cwnd_cnt = 0;
        for i in 0..31 {
            a.step(&ack(2_000_003 + i, 2, 100_000));
            assert_eq!(a.host.tcp.cwnd, 701, "ACK {i}");
        }
        a.step(&ack(2_000_034, 2, 100_000));
        assert_eq!(a.host.tcp.cwnd, 702);
    }

    #[test]
    fn reno_friendly_rate_is_8_15_per_window_where_the_paper_has_1_3() {
        // beta_scale = 8·1741/3/307 = 15: tcp_cwnd +1 per cwnd·15/8 ACKs. RTT 2 ms, one
        // segment per ACK (ratio 31/16): in 2 s (1000 windows of ACKs) from 701, about
        // 701 + 1000·8/15 = 1234 (less a few ACKs not yet converted and the window growth
        // within each RTT). cubic-2008 at β = 0.2 adds 1/3 per window from 801: 1134.
        let mut a = loss_at("cubic-2.2", &Params::new(), 1000, 2_000, 1);
        ack_clock(&mut a, 2_000_002, 2_000, 1, 2_000_000);
        let tc = var(&a, "tcp_cwnd");
        assert!((1215.0..=1236.0).contains(&tc), "tcp_cwnd {tc}");
        let mut b = loss_at("cubic-2008", &Params::new(), 1000, 2_000, 1);
        ack_clock(&mut b, 2_000_002, 2_000, 1, 2_000_000);
        let wt = var(&b, "w_tcp");
        assert!((1125.0..=1136.0).contains(&wt), "w_tcp {wt}");
    }

    #[test]
    fn no_gentle_start_before_the_first_loss() {
        // v2.0/v2.1 grow one segment per 50 ACKs until the first loss; v2.2 follows the
        // curve from the start: with no W_max, origin = cwnd, K = 0 and the target is
        // cwnd + (410·t³ >> 40), t = 102 (delay_min 100 ms): 0, so cnt = 100·cwnd.
        let a = Algorithm::new("cubic-2.2", &Params::new().set("initial_ssthresh", 100.0)).unwrap();
        let mut r = Replayer::new(a, ReplayStart::default(), 2_000_000);
        let mut t = 2_000_000;
        while r.host.tcp.cwnd <= 100 {
            r.step(&ack(t, 2, 100_000));
            t += 100;
        }
        assert_eq!(r.host.tcp.cwnd, 101);
        r.step(&ack(t, 2, 100_000));
        assert_eq!((var(&r, "origin"), var(&r, "k_s")), (101.0, 0.0));
        assert_eq!(var(&r, "cnt"), f64::from(101 * 100 * 16 / 32));
    }

    #[test]
    fn timeout_resets_everything_so_undo_keeps_the_window() {
        let mut a = loss_at("cubic-2.2", &Params::new(), 1000, 100_000, 2);
        let row = a.step(&ev(2_000_010, Event::Rto));
        assert_eq!((row.cwnd, row.ssthresh), (1, 490));
        assert_eq!(var(&a, "last_max_cwnd"), 0.0);
        assert_eq!(a.step(&ev(2_000_011, Event::Undo)).cwnd, 1);
    }
}
