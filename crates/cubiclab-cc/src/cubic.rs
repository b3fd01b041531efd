//! `cubic`: Linux CUBIC as shipped today, `net/ipv4/tcp_cubic.c` "TCP CUBIC: Binary Increase
//! Congestion control for TCP v2.3" (`MODULE_VERSION("2.3")`), mainline Linux 6.x as read from
//! a 6.17-rc tree: it includes "tcp_cubic: fix incorrect HyStart round start detection"
//! (net, January 2025), which moved the `hystart_low_window` test from `cubictcp_acked` into
//! `hystart_update`, after the round reset (earlier 6.x releases test it before). Helpers follow the same tree: `tcp_slow_start` and
//! `tcp_cong_avoid_ai` (`net/ipv4/tcp_cong.c`, in [`crate::tcp`]), `usecs_to_jiffies`
//! (`include/linux/jiffies.h`, `kernel/time/time.c`, `kernel/time/timeconst.bc`), and
//! `before`/`after` (`include/net/tcp.h`).
//!
//! Everything is the kernel's integer arithmetic, reproduced operation by operation:
//! beta 717/1024, `bic_scale` 41 with `cube_rtt_scale = bic_scale * 10` and
//! `cube_factor = 2^40 / (bic_scale * 10)` (an RTT of 100 ms is folded into C), the table +
//! one-Newton-step cube root, the epoch clock in jiffies (`tcp_jiffies32`) and HyStart and
//! `delay_min` in microseconds (`tcp_mstamp`). Where C wraps (u32/u64 overflow, s32 casts),
//! this code uses `wrapping_*` or `as` casts, each marked `wraps:`, so no input panics.
//! The kernel says its arithmetic is designed for cwnd < 10^6 segments; above that the
//! wrapped values are the kernel's own.
//!
//! Time: `jiffies = now_ns * hz / 10^9` truncated to u32 (like `tcp_jiffies32`), and
//! microseconds = `now_ns / 1000` truncated to u32 (like `(u32)tcp_mstamp`). Like the kernel,
//! CUBIC takes `epoch_start == 0` to mean "no epoch": an epoch that begins exactly at jiffy 0
//! is restarted at the next update (the kernel hits this when `jiffies` wraps through 0).
//!
//! One deliberate difference: the kernel's TCP-friendliness loop
//! `while (ack_cnt > delta) { ack_cnt -= delta; tcp_cwnd++; }` is computed in closed form (same
//! result, O(1)), and when `delta = (cwnd * beta_scale) >> 3` is 0 — possible only with a
//! non-default `beta` (at most 511 at cwnd 1, 204 at cwnd 2, 60 at cwnd 3) or a wrapped
//! product — and `ack_cnt > 0`, the kernel would spin forever; here the loop is skipped.

use crate::bic_lineage::{
    beta_scale, count_is_fresh, count_toward, cube_factor, cubic_target, epoch_curve, keep_min_delay, kept_window,
    last_max_after_loss, reno_friendly_count, BICTCP_BETA_SCALE, BICTCP_HZ, INITIAL_SSTHRESH,
};
use crate::clock::{self, UsecsToJiffies, USEC_PER_SEC};
use crate::cubic_frame::{GrowthRule, Hystart, SlowStart, HYSTART, HYSTART_DETECT};
use crate::hystart_plus_plus::HyStartPlusPlus;
use crate::intmath::{clock_us, cubic_root};
use crate::params::{ParamError, ParamSpec, Params};
use crate::seq::after;
use crate::tcp::{tcp_cong_avoid_ai, AckSample, CaEvent, TcpState};

const HYSTART_ACK_TRAIN: u32 = 0x1;
const HYSTART_DELAY: u32 = 0x2;
/// Delay samples per round before the delay test may fire.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Clamp of the delay-increase threshold `delay_min >> 3`, microseconds.
const HYSTART_DELAY_MIN: u32 = 4000;
const HYSTART_DELAY_MAX: u32 = 16000;

/// Linux CUBIC: `struct bictcp` plus the module parameters and the constants the module
/// precomputes at load time.
#[derive(Clone, Debug)]
pub struct Cubic {
    // Module parameters.
    fast_convergence: bool,
    beta: u32,
    initial_ssthresh: u32,
    tcp_friendliness: bool,
    /// Linux's HyStart (`hystart = "hystart"`, the module's `hystart = 1`).
    hystart: bool,
    /// `hystart = "hystart++"`: RFC 9406's, which the frame runs.
    hystart_plus_plus: Option<HyStartPlusPlus>,
    hystart_detect: u32,
    hystart_low_window: u32,
    hystart_ack_delta_us: i32,
    hz: u32,
    // Precomputed by cubictcp_register().
    cube_rtt_scale: u32,
    beta_scale: u32,
    cube_factor: u64,
    usecs_to_jiffies: UsecsToJiffies,
    max_usecs: u32,
    // struct bictcp.
    /// Increase cwnd by 1 after this many ACKed segments.
    cnt: u32,
    /// W_max: the window before the last reduction (after fast convergence).
    last_max_cwnd: u32,
    /// cwnd at the last full update.
    last_cwnd: u32,
    /// Jiffies of the last full update.
    last_time: u32,
    /// W of the plateau: origin point of the cubic function.
    bic_origin_point: u32,
    /// Time from epoch start to the plateau, in 1/1024 s.
    bic_k: u32,
    /// Minimum RTT seen, microseconds (0: none yet).
    delay_min: u32,
    /// Jiffies when the current epoch began (0: no epoch).
    epoch_start: u32,
    /// ACKed segments counted toward the Reno-friendly estimate.
    ack_cnt: u32,
    /// Estimated window of a Reno flow (TCP friendliness).
    tcp_cwnd: u32,
    sample_cnt: u8,
    /// HyStart found the exit point.
    found: bool,
    /// Microseconds when the current HyStart round began.
    round_start: u32,
    /// `snd_nxt` when the current round began: the round ends when it is ACKed.
    end_seq: u32,
    /// Microseconds of the last ACK of the current train.
    last_ack: u32,
    /// Minimum RTT of the current round, microseconds.
    curr_rtt: u32,
}

impl Cubic {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "beta",
            default: 717.0,
            min: 1.0,
            max: 1023.0,
            integer: true,
            unit: "1/1024",
            help: "window kept after a loss (717 = 0.7)",
            choices: &[],
        },
        ParamSpec {
            name: "bic_scale",
            default: 41.0,
            min: 1.0,
            max: 100_000.0,
            integer: true,
            unit: "10/1024 segments/s^3",
            help: "cubic scaling: C over the kernel's fixed 100 ms RTT (41 = 0.4)",
            choices: &[],
        },
        ParamSpec::switch("fast_convergence", true, "release bandwidth faster when W_max shrinks"),
        ParamSpec::switch("tcp_friendliness", true, "grow at least as fast as an estimated Reno flow"),
        HYSTART,
        HYSTART_DETECT,
        ParamSpec {
            name: "hystart_low_window",
            default: 16.0,
            min: 0.0,
            max: 2_147_483_647.0,
            integer: true,
            unit: "segments",
            help: "HyStart acts only from this cwnd",
            choices: &[],
        },
        ParamSpec {
            name: "hystart_ack_delta_us",
            default: 2000.0,
            min: 0.0,
            max: 2_147_483_647.0,
            integer: true,
            unit: "us",
            help: "largest ACK spacing inside an ACK train",
            choices: &[],
        },
        ParamSpec { help: "initial ssthresh unless hystart is \"hystart\" (0: leave it)", ..INITIAL_SSTHRESH },
        ParamSpec {
            name: "hz",
            default: 1000.0,
            min: 10.0,
            max: 100_000.0,
            integer: true,
            unit: "Hz",
            help: "kernel HZ: jiffies per second of the epoch clock",
            choices: &[],
        },
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic", Self::PARAMS)?;
        let beta = p.u32("beta");
        let bic_scale = p.u32("bic_scale");
        let hz = p.u32("hz");
        let hystart = Hystart::of(&p);
        Ok(Cubic {
            fast_convergence: p.bool("fast_convergence"),
            beta,
            initial_ssthresh: p.u32("initial_ssthresh"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            hystart: hystart == Hystart::Linux,
            hystart_plus_plus: hystart.plus_plus(),
            hystart_detect: p.u32("hystart_detect"),
            hystart_low_window: p.u32("hystart_low_window"),
            hystart_ack_delta_us: p.u32("hystart_ack_delta_us") as i32,
            hz,
            cube_rtt_scale: bic_scale * 10,
            beta_scale: beta_scale(beta),
            cube_factor: cube_factor(bic_scale),
            usecs_to_jiffies: UsecsToJiffies::new(u64::from(hz)),
            max_usecs: UsecsToJiffies::max_usecs(u64::from(hz)),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: 0,
        })
    }

    /// `tcp_jiffies32`: jiffies since the time origin, modulo 2^32.
    #[inline]
    fn jiffies(&self, now_ns: u64) -> u32 {
        clock::jiffies32(now_ns, self.hz)
    }

    #[inline]
    fn usecs_to_jiffies(&self, u: u32) -> u64 {
        self.usecs_to_jiffies.convert(u, self.max_usecs)
    }

    /// `bictcp_reset()`: zero every field before `unused` in `struct bictcp`, and `found`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = 0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset()`: start a new HyStart round now.
    fn hystart_reset(&mut self, tcp: &TcpState, now_us: u32) {
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = tcp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update()`: recompute `cnt`, the ACKs per one-segment increase.
    fn update(&mut self, cwnd: u32, acked: u32, now: u32) {
        // wraps: u32 counter in C.
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);

        if count_is_fresh(self.last_cwnd, self.last_time, cwnd, now, self.hz) {
            return;
        }

        // At most once per jiffy; a reduction zeroes epoch_start, which forces a recalculation.
        if !(self.epoch_start != 0 && now == self.last_time) {
            self.cubic_cnt(cwnd, acked, now);
        }

        if self.tcp_friendliness {
            // wraps: u32 product in C.
            let delta = cwnd.wrapping_mul(self.beta_scale) >> 3;
            self.cnt = reno_friendly_count(self.cnt, cwnd, delta, &mut self.ack_cnt, &mut self.tcp_cwnd);
        }

        // At most one segment per two ACKed: cwnd grows at most 1.5x per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// The cubic-function part of `bictcp_update()` (before its `tcp_friendliness:` label).
    fn cubic_cnt(&mut self, cwnd: u32, acked: u32, now: u32) {
        self.last_cwnd = cwnd;
        self.last_time = now;

        if self.epoch_start == 0 {
            self.epoch_start = now;
            self.ack_cnt = acked;
            self.tcp_cwnd = cwnd;
            (self.bic_k, self.bic_origin_point) = epoch_curve(self.last_max_cwnd, cwnd, self.cube_factor, cubic_root);
        }

        // t = elapsed epoch time plus one minimum RTT, in 1/1024 s.
        // wraps: (s32) of the jiffy difference, sign-extended into the u64 t, as in C.
        let mut t = (now.wrapping_sub(self.epoch_start) as i32) as i64 as u64;
        t = t.wrapping_add(self.usecs_to_jiffies(self.delay_min));
        t = (t << BICTCP_HZ) / u64::from(self.hz); // wraps: bits shifted out are lost, as in C.
        let bic_target = cubic_target(self.cube_rtt_scale, self.bic_k, self.bic_origin_point, t);
        self.cnt = count_toward(bic_target, cwnd);

        // Before the first loss, grow at least 5% per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// `hystart_ack_delay()`: TSO/GRO cushion, `min(1 ms, 4 * gso_max_size / pacing_rate)`.
    #[inline]
    fn hystart_ack_delay(tcp: &TcpState) -> u32 {
        if tcp.pacing_rate == 0 {
            return 0;
        }
        (u64::from(tcp.gso_max_size) * 4 * USEC_PER_SEC / tcp.pacing_rate).min(1000) as u32
    }

    /// `hystart_update()`: look for the slow-start exit by ACK train length or delay growth.
    fn hystart_update(&mut self, tcp: &mut TcpState, delay: u32, now_us: u32) {
        if after(tcp.snd_una, self.end_seq) {
            self.hystart_reset(tcp, now_us);
        }

        if tcp.cwnd < self.hystart_low_window {
            return;
        }

        if self.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            // Signed comparison in C: (s32) against the int parameter.
            if (now_us.wrapping_sub(self.last_ack) as i32) <= self.hystart_ack_delta_us {
                self.last_ack = now_us;
                // wraps: u32 in C.
                let mut threshold = self.delay_min.wrapping_add(Self::hystart_ack_delay(tcp));
                // Unpaced, the train must outlast half the minimum RTT; paced, the whole of it.
                if !tcp.paced {
                    threshold >>= 1;
                }
                // C compares (s32) with the u32 threshold: the s32 converts to u32.
                if now_us.wrapping_sub(self.round_start) > threshold {
                    self.found = true;
                    tcp.ssthresh = tcp.cwnd;
                }
            }
        }

        if self.hystart_detect & HYSTART_DELAY != 0 {
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                // wraps: u32 in C.
                if self.curr_rtt > self.delay_min.wrapping_add(thresh) {
                    self.found = true;
                    tcp.ssthresh = tcp.cwnd;
                }
            }
        }
    }
}

impl GrowthRule for Cubic {
    const SLOW_START: SlowStart = SlowStart::Segments;

    /// `cubictcp_state()`'s reset: a timeout forgets everything, `delay_min` included, and
    /// starts a HyStart round.
    fn forget(&mut self, tcp: &TcpState, now_ns: u64) {
        self.reset();
        self.hystart_reset(tcp, clock_us(now_ns));
    }

    /// `cubictcp_init()`, after `tcp_assign_congestion_control()` zeroed the private area.
    fn start(&mut self, tcp: &TcpState, now_ns: u64) {
        self.reset();
        self.sample_cnt = 0;
        self.round_start = 0;
        self.end_seq = 0;
        self.last_ack = 0;
        self.curr_rtt = 0;
        if self.hystart {
            self.hystart_reset(tcp, clock_us(now_ns));
        }
    }

    /// `initial_ssthresh` applies only with Linux's HyStart off (with HyStart++, whose slow
    /// start it then is: HyStart++ runs only while ssthresh is infinite).
    fn initial_ssthresh(&self) -> u32 {
        if self.hystart {
            0
        } else {
            self.initial_ssthresh
        }
    }

    /// `cubictcp_recalc_ssthresh()`: end the epoch, set W_max (fast convergence), return
    /// `max(cwnd * beta / 1024, 2)`.
    fn on_congestion(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let cwnd = tcp.cwnd;
        self.epoch_start = 0;
        self.last_max_cwnd =
            last_max_after_loss(cwnd, self.last_max_cwnd, self.beta, BICTCP_BETA_SCALE, self.fast_convergence);
        kept_window(cwnd, self.beta)
    }

    /// `cubictcp_cong_avoid()` after slow start.
    #[inline(always)]
    fn grow(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        let now = self.jiffies(now_ns);
        self.update(tcp.cwnd, acked, now);
        tcp_cong_avoid_ai(tcp, self.cnt, acked);
    }

    /// `cubictcp_cwnd_event()`: after idle, shift the epoch so the curve resumes where it was.
    fn on_event(&mut self, tcp: &mut TcpState, event: CaEvent, now_ns: u64) {
        if event == CaEvent::TxStart {
            let now = self.jiffies(now_ns);
            let delta = now.wrapping_sub(self.jiffies(tcp.lsndtime_ns)) as i32;
            if self.epoch_start != 0 && delta > 0 {
                // wraps: u32 in C.
                self.epoch_start = self.epoch_start.wrapping_add(delta as u32);
                if after(self.epoch_start, now) {
                    self.epoch_start = now;
                }
            }
        }
    }

    // restore: tcp_reno_undo_cwnd, the frame's default.

    #[inline(always)]
    fn hystart_plus_plus(&mut self) -> Option<&mut HyStartPlusPlus> {
        self.hystart_plus_plus.as_mut()
    }

    /// `cubictcp_acked()`: track `delay_min` and run HyStart in slow start.
    #[inline(always)]
    fn on_ack(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
        if sample.rtt_us < 0 {
            return;
        }
        // Discard delay samples right after a reduction (the first second of an epoch).
        let now = self.jiffies(now_ns);
        if self.epoch_start != 0 && (now.wrapping_sub(self.epoch_start) as i32) < self.hz as i32 {
            return;
        }
        // The kernel's ack_sample.rtt_us is an s32: larger samples cannot reach it.
        let delay = (sample.rtt_us.min(i64::from(i32::MAX)) as u32).max(1);
        keep_min_delay(&mut self.delay_min, delay);
        if !self.found && tcp.in_slow_start() && self.hystart {
            self.hystart_update(tcp, delay, clock_us(now_ns));
        }
    }

    fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("last_max_cwnd", f64::from(self.last_max_cwnd));
        out("K", f64::from(self.bic_k));
        out("origin", f64::from(self.bic_origin_point));
        out("epoch_start", f64::from(self.epoch_start));
        out("delay_min", f64::from(self.delay_min));
        out("tcp_cwnd", f64::from(self.tcp_cwnd));
        out("cnt", f64::from(self.cnt));
        out("ack_cnt", f64::from(self.ack_cnt));
        out("found", f64::from(u8::from(self.found)));
        out("last_cwnd", f64::from(self.last_cwnd));
        out("last_time", f64::from(self.last_time));
        if let Some(h) = &self.hystart_plus_plus {
            h.trace(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::MAX_JIFFY_OFFSET;
    use crate::tcp::{CaState, TCP_INFINITE_SSTHRESH};
    use crate::test_support::{plus_plus_acks, plus_plus_round};
    use crate::CongestionControl;

    /// Tests start at 10 s: jiffy 10000 at HZ 1000, away from the `epoch_start == 0` sentinel.
    const T0: u64 = 10_000_000_000;
    const MS: u64 = 1_000_000;

    fn cubic_with(params: &[(&str, f64)]) -> Cubic {
        let mut p = Params::new();
        for &(k, v) in params {
            p.insert(k, v);
        }
        Cubic::new(&p).unwrap()
    }

    fn cubic() -> Cubic {
        cubic_with(&[])
    }

    fn sample(rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: 1, rtt_us, in_flight: 0 }
    }

    /// A loss as `tcp_input.c` applies it: ssthresh from the module, then cwnd = ssthresh at
    /// the end of recovery.
    fn loss(c: &mut Cubic, tcp: &mut TcpState, now: u64) {
        tcp.ssthresh = c.ssthresh(tcp, now);
        tcp.cwnd = tcp.ssthresh;
        tcp.cwnd_cnt = 0;
    }

    #[test]
    fn derived_constants() {
        let c = cubic();
        // beta_scale = 8*(1024+717)/3/(1024-717) = 13928/3 = 4642 (int), /307 = 15 (15.12).
        assert_eq!(c.beta_scale, 15);
        // cube_rtt_scale = bic_scale * 10 = 410 (C = 0.4 over the fixed RTT of 100 ms, * 1024).
        assert_eq!(c.cube_rtt_scale, 410);
        // cube_factor = 2^40 / 410 = 1099511627776 / 410 = 2681735677 (.50).
        assert_eq!(c.cube_factor, 2_681_735_677);
        // Linux 2.6.19's beta 819: 8*1843/3 = 4914, /205 = 23 (23.97).
        assert_eq!(cubic_with(&[("beta", 819.0)]).beta_scale, 23);
        // bic_scale 82 (C = 0.8): 820 and 2^40 / 820 = 1340867838 (.75).
        let c = cubic_with(&[("bic_scale", 82.0)]);
        assert_eq!((c.cube_rtt_scale, c.cube_factor), (820, 1_340_867_838));
    }

    #[test]
    fn k_origin_and_cnt_in_the_concave_region() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 100, ..TcpState::default() };
        c.init(&mut tcp, T0);
        // Loss at cwnd 100: W_max = 100, ssthresh = 100*717/1024 = 70 (70.02).
        loss(&mut c, &mut tcp, T0);
        assert_eq!((c.last_max_cwnd, tcp.cwnd), (100, 70));
        // First ACK in congestion avoidance starts the epoch at jiffy 10001:
        // K = cubic_root(2681735677 * 30) = 4316 (1/1024 s, 4.21 s), origin = W_max = 100.
        // No RTT sample yet (delay_min 0): t = 0, offs = 4316,
        // delta = 410 * 4316^3 >> 40 = 32963108863360 / 2^40 = 29 (29.98), target = 71,
        // cnt = 70 / (71 - 70) = 70. Friendliness: ack_cnt 1 <= 70*15 >> 3 = 131: no change.
        c.cong_avoid(&mut tcp, 1, T0 + MS);
        assert_eq!((c.epoch_start, c.bic_k, c.bic_origin_point, c.cnt), (10_001, 4316, 100, 70));
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (70, 1));
    }

    #[test]
    fn cnt_looks_one_min_rtt_ahead_then_turns_convex() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 100, ..TcpState::default() };
        c.init(&mut tcp, T0);
        c.pkts_acked(&mut tcp, &sample(100_000), T0); // delay_min = 100 ms
        loss(&mut c, &mut tcp, T0);
        // Concave: t = 0 + usecs_to_jiffies(100000) = 100 jiffies -> (100 << 10) / 1000 = 102;
        // offs = 4316 - 102 = 4214, delta = 410 * 4214^3 >> 40 = 30680854461040 / 2^40 = 27,
        // target = 100 - 27 = 73, cnt = 70 / 3 = 23.
        c.cong_avoid(&mut tcp, 1, T0 + MS);
        assert_eq!(c.cnt, 23);
        // Convex, 6 s into the epoch at cwnd 100: t = (6100 << 10) / 1000 = 6246,
        // offs = 6246 - 4316 = 1930, delta = 410 * 1930^3 >> 40 = 2947513370000 / 2^40 = 2,
        // target = 102, cnt = 100 / 2 = 50 (tcp_cwnd is still 70: friendliness idle).
        tcp.cwnd = 100;
        c.cong_avoid(&mut tcp, 1, T0 + MS + 6000 * MS);
        assert_eq!((c.cnt, c.tcp_cwnd), (50, 70));
    }

    #[test]
    fn cnt_in_the_tcp_friendly_region() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 20, ..TcpState::default() };
        c.init(&mut tcp, T0);
        // W_max = 20 with the window back at 20 (as after an undo): ssthresh = 14340/1024 = 14.
        tcp.ssthresh = c.ssthresh(&tcp, T0);
        assert_eq!((tcp.ssthresh, c.last_max_cwnd), (14, 20));
        // Epoch start: K = 0, origin = 20, t = 0, target = 20 <= cwnd, so cnt = 100 * 20 = 2000
        // (no cap of 20: W_max != 0); friendliness: ack_cnt 1 <= 20*15 >> 3 = 37.
        c.cong_avoid(&mut tcp, 1, T0);
        assert_eq!((c.cnt, c.tcp_cwnd, c.ack_cnt), (2000, 20, 1));
        // 32 jiffies later a stretch ACK of 40: ack_cnt = 41. t = (32 << 10) / 1000 = 32,
        // delta = 410 * 32^3 >> 40 = 0, cnt = 2000 again; but 41 > 37: one Reno step,
        // ack_cnt = 4, tcp_cwnd = 21 > 20, so cnt = min(2000, 20 / (21 - 20)) = 20.
        // tcp_cong_avoid_ai(20, 40): cwnd_cnt 1 + 40 = 41 -> cwnd + 2 = 22, cwnd_cnt 1.
        c.cong_avoid(&mut tcp, 40, T0 + 32 * MS);
        assert_eq!((c.cnt, c.tcp_cwnd, c.ack_cnt), (20, 21, 4));
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (22, 1));
    }

    #[test]
    fn cnt_capped_at_20_until_the_first_loss() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 10, ssthresh: 10, ..TcpState::default() };
        c.init(&mut tcp, T0);
        // W_max = 0 <= 10: K = 0, origin = 10, target = 10, cnt = 100 * 10 = 1000, capped to 20
        // ("increase cwnd 5% per RTT"); friendliness: ack_cnt 1 <= 10*15 >> 3 = 18.
        c.cong_avoid(&mut tcp, 1, T0);
        assert_eq!(c.cnt, 20);
        // The same state with W_max = 10 (after a loss at 10) is not capped: cnt = 1000.
        let mut c = cubic();
        c.last_max_cwnd = 10;
        c.cong_avoid(&mut tcp, 1, T0);
        assert_eq!(c.cnt, 1000);
    }

    #[test]
    fn ssthresh_and_fast_convergence() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 100, ..TcpState::default() };
        c.init(&mut tcp, T0);
        // First loss at 100: W_max = 100, ssthresh = 71700/1024 = 70.
        assert_eq!(c.ssthresh(&tcp, T0), 70);
        assert_eq!(c.last_max_cwnd, 100);
        // Second loss at 80 < 100: W_max = 80*(1024+717)/2048 = 139280/2048 = 68,
        // ssthresh = 57360/1024 = 56.
        tcp.cwnd = 80;
        assert_eq!(c.ssthresh(&tcp, T0), 56);
        assert_eq!(c.last_max_cwnd, 68);
        // Without fast convergence W_max is simply 80.
        let mut c = cubic_with(&[("fast_convergence", 0.0)]);
        c.last_max_cwnd = 100;
        assert_eq!(c.ssthresh(&tcp, T0), 56);
        assert_eq!(c.last_max_cwnd, 80);
        // Floor: cwnd 2 -> 1434/1024 = 1 -> 2.
        tcp.cwnd = 2;
        assert_eq!(c.ssthresh(&tcp, T0), 2);
        // A loss ends the epoch.
        c.epoch_start = 1234;
        c.ssthresh(&tcp, T0);
        assert_eq!(c.epoch_start, 0);
    }

    #[test]
    fn jiffy_gating() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 10, ssthresh: 10, ..TcpState::default() };
        c.init(&mut tcp, T0);
        c.cong_avoid(&mut tcp, 1, T0); // full update at jiffy 10000
        assert_eq!((c.last_time, c.last_cwnd, c.ack_cnt), (10_000, 10, 1));
        // Same cwnd, 31 jiffies later: 31 <= HZ/32 = 31, return early, only counting the ACK.
        c.cong_avoid(&mut tcp, 1, T0 + 31 * MS);
        assert_eq!((c.last_time, c.ack_cnt), (10_000, 2));
        // 32 jiffies: a full update.
        c.cong_avoid(&mut tcp, 1, T0 + 32 * MS);
        assert_eq!((c.last_time, c.ack_cnt), (10_032, 3));
        // cwnd changed but still the same jiffy: skip the cubic part (last_cwnd stays 10),
        // run only the friendliness step.
        tcp.cwnd = 11;
        c.cong_avoid(&mut tcp, 1, T0 + 32 * MS + MS / 2);
        assert_eq!((c.last_time, c.last_cwnd, c.ack_cnt), (10_032, 10, 4));
        // Next jiffy: full update with the new window.
        c.cong_avoid(&mut tcp, 1, T0 + 33 * MS);
        assert_eq!((c.last_time, c.last_cwnd), (10_033, 11));
        // With HZ = 250, HZ/32 = 7 jiffies of 4 ms: 28 ms is gated, 32 ms is not.
        let mut c = cubic_with(&[("hz", 250.0)]);
        let mut tcp = TcpState { cwnd: 10, ssthresh: 10, ..TcpState::default() };
        c.init(&mut tcp, T0);
        c.cong_avoid(&mut tcp, 1, T0);
        c.cong_avoid(&mut tcp, 1, T0 + 28 * MS);
        assert_eq!(c.last_time, 2500);
        c.cong_avoid(&mut tcp, 1, T0 + 32 * MS);
        assert_eq!(c.last_time, 2508);
    }

    /// Slow start with room: cwnd 1000 and snd_nxt 1000, so 1-segment ACKs stay in the round.
    fn hystart_setup(c: &mut Cubic) -> TcpState {
        let mut tcp = TcpState { cwnd: 1000, snd_nxt: 1000, ..TcpState::default() };
        c.init(&mut tcp, T0);
        assert_eq!((c.end_seq, c.round_start, c.curr_rtt), (1000, 10_000_000, u32::MAX));
        tcp
    }

    /// The index of the first ACK (spaced `gap_us`, all with `rtt_us`) at which HyStart fires.
    fn hystart_exit(c: &mut Cubic, tcp: &mut TcpState, gap_us: u64, rtt_us: i64, n: u32) -> Option<u32> {
        for i in 1..=n {
            tcp.snd_una = i;
            c.pkts_acked(tcp, &sample(rtt_us), T0 + u64::from(i) * gap_us * 1000);
            if c.found {
                assert_eq!(tcp.ssthresh, tcp.cwnd);
                return Some(i);
            }
            assert_eq!(tcp.ssthresh, TCP_INFINITE_SSTHRESH);
        }
        None
    }

    #[test]
    fn hystart_ack_train_exits_after_half_the_min_rtt() {
        // delay_min = 40 ms, unpaced: threshold = 40000 >> 1 = 20000 us. ACKs every 250 us
        // (< 2000 us: one train): fires at the first i with 250 i > 20000, i = 81.
        // (The delay detector stays quiet: every sample is 40 ms = delay_min.)
        let mut c = cubic();
        let mut tcp = hystart_setup(&mut c);
        assert_eq!(hystart_exit(&mut c, &mut tcp, 250, 40_000, 400), Some(81));
        // Paced: the whole min RTT, 250 i > 40000 -> i = 161.
        let mut c = cubic();
        let mut tcp = hystart_setup(&mut c);
        tcp.paced = true;
        assert_eq!(hystart_exit(&mut c, &mut tcp, 250, 40_000, 400), Some(161));
        // Pacing rate 10^8 B/s: ack delay = min(1000, 65536*4*10^6 / 10^8 = 2621) = 1000 us;
        // unpaced threshold (40000 + 1000) >> 1 = 20500 -> i = 83; paced 41000 -> i = 165.
        let mut c = cubic();
        let mut tcp = hystart_setup(&mut c);
        tcp.pacing_rate = 100_000_000;
        assert_eq!(hystart_exit(&mut c, &mut tcp, 250, 40_000, 400), Some(83));
        let mut c = cubic();
        let mut tcp = hystart_setup(&mut c);
        (tcp.pacing_rate, tcp.paced) = (100_000_000, true);
        assert_eq!(hystart_exit(&mut c, &mut tcp, 250, 40_000, 400), Some(165));
        // Pacing rate 10^9 B/s: 262144000000 / 10^9 = 262 us; (40262 >> 1) = 20131 -> i = 81.
        let mut c = cubic();
        let mut tcp = hystart_setup(&mut c);
        tcp.pacing_rate = 1_000_000_000;
        assert_eq!(hystart_exit(&mut c, &mut tcp, 250, 40_000, 400), Some(81));
        // ACKs 2001 us apart are no train: nothing fires in 400 ACKs (0.8 s).
        let mut c = cubic();
        let mut tcp = hystart_setup(&mut c);
        assert_eq!(hystart_exit(&mut c, &mut tcp, 2001, 40_000, 400), None);
        // Below hystart_low_window (16) nothing fires either.
        let mut c = cubic();
        let mut tcp = hystart_setup(&mut c);
        tcp.cwnd = 15;
        assert_eq!(hystart_exit(&mut c, &mut tcp, 250, 40_000, 400), None);
    }

    #[test]
    fn hystart_rounds_restart_below_the_low_window() {
        // Linux 6.x after "tcp_cubic: fix incorrect HyStart round start detection": the round
        // resets when snd_una passes end_seq even while cwnd < hystart_low_window.
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 10, snd_nxt: 10, ..TcpState::default() };
        c.init(&mut tcp, T0);
        (tcp.snd_una, tcp.snd_nxt) = (11, 30);
        c.pkts_acked(&mut tcp, &sample(40_000), T0 + 5 * MS);
        assert_eq!((c.round_start, c.end_seq, c.sample_cnt), (10_005_000, 30, 0));
    }

    #[test]
    fn hystart_delay_exits_on_min_rtt_plus_an_eighth() {
        // (delay_min, threshold = delay_min + clamp(delay_min >> 3, 4000, 16000)):
        // 40 ms -> 40000 + 5000; 10 ms -> 10000 + clamp(1250) = 14000;
        // 200 ms -> 200000 + clamp(25000) = 216000.
        for (delay_min, threshold) in [(40_000i64, 45_000i64), (10_000, 14_000), (200_000, 216_000)] {
            for (rtt, fires) in [(threshold, false), (threshold + 1, true)] {
                let mut c = cubic();
                let mut tcp = hystart_setup(&mut c);
                c.pkts_acked(&mut tcp, &sample(delay_min), T0);
                // A new round (snd_una 1001 passes end_seq 1000): curr_rtt and sample_cnt reset.
                (tcp.snd_una, tcp.snd_nxt) = (1001, 3000);
                // ACKs 3 ms apart (no ACK train). Samples 1..8 only count; the 9th compares
                // the round's minimum with the threshold.
                for i in 1..=9u64 {
                    c.pkts_acked(&mut tcp, &sample(rtt), T0 + i * 3 * MS);
                    tcp.snd_una += 1;
                    assert_eq!(c.found, fires && i == 9, "delay_min {delay_min} rtt {rtt} ack {i}");
                    if c.found {
                        assert_eq!(tcp.ssthresh, 1000);
                    }
                }
                assert_eq!(c.delay_min, delay_min as u32);
            }
        }
    }

    #[test]
    fn hystart_off_and_initial_ssthresh() {
        let mut tcp = TcpState::default();
        // hystart on: initial_ssthresh is ignored.
        cubic_with(&[("initial_ssthresh", 50.0)]).init(&mut tcp, T0);
        assert_eq!(tcp.ssthresh, TCP_INFINITE_SSTHRESH);
        cubic_with(&[("hystart", 0.0)]).init(&mut tcp, T0);
        assert_eq!(tcp.ssthresh, TCP_INFINITE_SSTHRESH);
        cubic_with(&[("hystart", 0.0), ("initial_ssthresh", 50.0)]).init(&mut tcp, T0);
        assert_eq!(tcp.ssthresh, 50);
        // hystart off: a 40 ms train never ends slow start.
        let mut c = cubic_with(&[("hystart", 0.0)]);
        let mut tcp = hystart_setup_off(&mut c);
        assert_eq!(hystart_exit(&mut c, &mut tcp, 250, 40_000, 400), None);
    }

    #[test]
    fn hystart_off_is_the_former_switch_at_zero() {
        // One parameter, one owner: "off" and "hystart" are the module's hystart = 0 and 1.
        let state = |p: Params| format!("{:?}", Cubic::new(&p).unwrap());
        assert_eq!(state(Params::new().set("hystart", "off")), state(Params::new().set("hystart", 0.0)));
        assert_eq!(state(Params::new().set("hystart", "hystart")), state(Params::new()));
        assert_eq!(state(Params::new().set("hystart", 1.0)), state(Params::new()));
        let (off, linux) = (cubic_with(&[("hystart", 0.0)]), cubic());
        assert!(!off.hystart && off.hystart_plus_plus.is_none() && linux.hystart);
        let err = Cubic::new(&Params::new().set("hystart", "hystart+")).unwrap_err();
        assert!(err.0.contains("'hystart+'; allowed: one of off, hystart, hystart++"), "{err}");
    }

    #[test]
    fn hystart_plus_plus_runs_through_the_frame() {
        // cubic with hystart = "hystart++": slow start one segment per segment, RTT 40 ms,
        // then a round at 45 ms (>= 40 + clamp(40/8 = 5 ms)): CSS from its 8th ACK, which
        // already grows at a quarter. Linux's HyStart stays out (`found` is never set).
        let mut c = Cubic::new(&Params::new().set("hystart", "hystart++")).unwrap();
        let mut tcp = TcpState { cwnd: 10, snd_nxt: 10, cwnd_limited: true, ..TcpState::default() };
        c.init(&mut tcp, T0);
        let mut now = T0;
        plus_plus_round(&mut c, &mut tcp, 40_000, 20, &mut now);
        assert_eq!(tcp.cwnd, 30);
        plus_plus_round(&mut c, &mut tcp, 45_000, 7, &mut now);
        assert_eq!(tcp.cwnd, 37);
        plus_plus_acks(&mut c, &mut tcp, 45_000, 13, &mut now);
        // ACK 8 (CSS) and 9..20: 13 quarter segments = 3, a quarter left.
        assert_eq!(tcp.cwnd, 40);
        assert!(c.hystart_plus_plus.as_ref().unwrap().in_css() && !c.found);
        // Four more rounds at 45 ms (CSS rounds 1..4, the round CSS began in the first);
        // the first ACK of the next ends the fifth: ssthresh = cwnd, congestion avoidance.
        for _ in 0..4 {
            plus_plus_round(&mut c, &mut tcp, 45_000, 8, &mut now);
        }
        assert_eq!((tcp.cwnd, tcp.ssthresh), (48, TCP_INFINITE_SSTHRESH));
        tcp.snd_una = tcp.snd_nxt.wrapping_add(1);
        c.pkts_acked(&mut tcp, &sample(45_000), now + MS);
        assert_eq!(tcp.ssthresh, 48);
        // From here the cubic curve grows the window: the epoch starts at the next ACK.
        c.cong_avoid(&mut tcp, 1, now + MS);
        assert!(c.epoch_start != 0);
        // The variables in traces gain HyStart++'s phase.
        let mut names = Vec::new();
        c.vars(&mut |k, _| names.push(k));
        assert_eq!(names.len(), 15);
        assert!(names.contains(&"css"));
    }

    fn hystart_setup_off(c: &mut Cubic) -> TcpState {
        let mut tcp = TcpState { cwnd: 1000, snd_nxt: 1000, ..TcpState::default() };
        c.init(&mut tcp, T0);
        tcp
    }

    #[test]
    fn pkts_acked_sampling_rules() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 10, ssthresh: 10, ..TcpState::default() };
        c.init(&mut tcp, T0);
        c.pkts_acked(&mut tcp, &sample(-1), T0); // no sample
        assert_eq!(c.delay_min, 0);
        c.pkts_acked(&mut tcp, &sample(0), T0); // 0 counts as 1 us
        assert_eq!(c.delay_min, 1);
        let mut c = cubic();
        c.init(&mut tcp, T0);
        c.cong_avoid(&mut tcp, 1, T0); // epoch starts at jiffy 10000
                                       // Samples within HZ = 1000 jiffies of the epoch start are discarded.
        c.pkts_acked(&mut tcp, &sample(30_000), T0 + 999 * MS);
        assert_eq!(c.delay_min, 0);
        c.pkts_acked(&mut tcp, &sample(30_000), T0 + 1000 * MS);
        assert_eq!(c.delay_min, 30_000);
        // delay_min is a minimum.
        c.pkts_acked(&mut tcp, &sample(50_000), T0 + 1001 * MS);
        c.pkts_acked(&mut tcp, &sample(20_000), T0 + 1002 * MS);
        assert_eq!(c.delay_min, 20_000);
    }

    #[test]
    fn loss_state_resets_everything() {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 100, snd_nxt: 500, ..TcpState::default() };
        c.init(&mut tcp, T0);
        c.pkts_acked(&mut tcp, &sample(40_000), T0);
        loss(&mut c, &mut tcp, T0);
        c.cong_avoid(&mut tcp, 1, T0 + MS);
        c.found = true;
        assert!(c.bic_k > 0 && c.delay_min > 0 && c.epoch_start > 0);
        // An RTO: W_max, K, delay_min (so the next epoch has no look-ahead) and found all go.
        c.set_state(&mut tcp, CaState::Loss, T0 + 2 * MS);
        assert_eq!((c.cnt, c.last_max_cwnd, c.last_cwnd, c.last_time, c.bic_origin_point, c.bic_k), (0, 0, 0, 0, 0, 0));
        assert_eq!((c.delay_min, c.epoch_start, c.ack_cnt, c.tcp_cwnd, c.found), (0, 0, 0, 0, false));
        assert_eq!((c.round_start, c.end_seq, c.curr_rtt, c.sample_cnt), (10_002_000, 500, u32::MAX, 0));
        // Other states leave CUBIC alone.
        c.last_max_cwnd = 7;
        c.set_state(&mut tcp, CaState::Recovery, T0);
        c.set_state(&mut tcp, CaState::Open, T0);
        assert_eq!(c.last_max_cwnd, 7);
    }

    #[test]
    fn tx_start_shifts_the_epoch_by_the_idle_time() {
        let mut c = cubic();
        let mut tcp = TcpState::default();
        c.init(&mut tcp, T0);
        c.epoch_start = 10_000;
        // Idle from 10.5 s to 12.5 s: delta = 2000 jiffies, epoch 10000 -> 12000 (<= now 12500).
        tcp.lsndtime_ns = T0 + 500 * MS;
        c.cwnd_event(&mut tcp, CaEvent::TxStart, T0 + 2500 * MS);
        assert_eq!(c.epoch_start, 12_000);
        // Last send at 9 s, now 12.5 s: 12000 + 3500 = 15500 is after now: clamped to 12500.
        tcp.lsndtime_ns = 9_000 * MS;
        c.cwnd_event(&mut tcp, CaEvent::TxStart, T0 + 2500 * MS);
        assert_eq!(c.epoch_start, 12_500);
        // No epoch, or no idle time, or another event: nothing moves.
        c.cwnd_event(&mut tcp, CaEvent::CwndRestart, T0 + 9000 * MS);
        tcp.lsndtime_ns = T0 + 2500 * MS;
        c.cwnd_event(&mut tcp, CaEvent::TxStart, T0 + 2500 * MS);
        assert_eq!(c.epoch_start, 12_500);
        c.epoch_start = 0;
        tcp.lsndtime_ns = T0;
        c.cwnd_event(&mut tcp, CaEvent::TxStart, T0 + 2500 * MS);
        assert_eq!(c.epoch_start, 0);
    }

    #[test]
    fn undo_is_reno_undo() {
        // tcp_reno_undo_cwnd: max(cwnd, prior_cwnd).
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 50, prior_cwnd: 100, ..TcpState::default() };
        assert_eq!(c.undo_cwnd(&mut tcp, T0), 100);
    }

    #[test]
    fn usecs_to_jiffies_rounds_up() {
        let c = cubic(); // HZ 1000: ceil(u / 1000)
        assert_eq!([0, 1, 1000, 1001].map(|u| c.usecs_to_jiffies(u)), [0, 1, 1, 2]);
        // Above jiffies_to_usecs(MAX_JIFFY_OFFSET) = (u32)(1000 * (2^62 - 2)) = 2^32 - 2000:
        // MAX_JIFFY_OFFSET.
        assert_eq!(c.max_usecs, 4_294_965_296);
        assert_eq!(c.usecs_to_jiffies(4_294_965_296), 4_294_966);
        assert_eq!(c.usecs_to_jiffies(4_294_965_297), MAX_JIFFY_OFFSET);
        let c = cubic_with(&[("hz", 250.0)]); // ceil(u / 4000)
        assert_eq!([4000, 4001].map(|u| c.usecs_to_jiffies(u)), [1, 2]);
        // HZ 300 does not divide 10^6: timeconst.bc gives SHR32 = 43 (least s with
        // ceil(2^s * 300 / 10^6) >= 2^31), MUL32 = 2638827907, ADJ32 = 2^43 * 9999 / 10000
        // = 8795213412905; this is ceil(u * 300 / 10^6) in the signed range.
        let c = cubic_with(&[("hz", 300.0)]);
        assert_eq!(c.usecs_to_jiffies, UsecsToJiffies::Mul { mul: 2_638_827_907, adj: 8_795_213_412_905, shr: 43 });
        // jiffies_to_usecs(MAX_JIFFY_OFFSET) on 64-bit is (j * 10000) / 3 in unsigned long:
        // (2^62 - 2) * 10000 wraps to 2^64 - 20000, / 3, truncated to u32 = 1431649098 us
        // (23.9 min): larger RTTs give MAX_JIFFY_OFFSET, as on a HZ=300 kernel.
        assert_eq!(c.max_usecs, 1_431_649_098);
        assert_eq!(c.usecs_to_jiffies(1_431_649_099), MAX_JIFFY_OFFSET);
        for u in (0..=c.max_usecs).step_by(9973).chain([3333, 3334, c.max_usecs]) {
            assert_eq!(c.usecs_to_jiffies(u), (u64::from(u) * 300).div_ceil(1_000_000), "{u}");
        }
    }

    #[test]
    fn jiffies_follow_hz_and_wrap_at_32_bits() {
        assert_eq!(cubic().jiffies(T0 + 999_999), 10_000);
        assert_eq!(cubic_with(&[("hz", 250.0)]).jiffies(T0 + 3_999_999), 2500);
        assert_eq!(cubic_with(&[("hz", 300.0)]).jiffies(T0 + 3_333_334), 3001);
        // 10^6 s at HZ 1000 is 10^9 jiffies; 5 * 10^6 s wraps: 5*10^9 - 2^32 = 705032704.
        assert_eq!(cubic().jiffies(5_000_000 * 1_000_000_000), 705_032_704);
    }

    /// An ACK-clocked flow after one loss at `w_max`: one-segment ACKs spaced `rtt / cwnd`.
    /// Returns (seconds since the loss, cwnd, tcp_cwnd) every `step_ms`.
    fn ack_clocked(rtt_us: u64, w_max: u32, secs: u64, step_ms: u64) -> (u32, Vec<(f64, u32, u32)>) {
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: w_max, ssthresh: w_max, ..TcpState::default() };
        c.init(&mut tcp, T0);
        c.pkts_acked(&mut tcp, &sample(rtt_us as i64), T0);
        let t_loss = T0 + MS;
        loss(&mut c, &mut tcp, t_loss);
        let (mut now, mut next, mut out) = (t_loss, t_loss, Vec::new());
        while now <= t_loss + secs * 1_000_000_000 {
            if now >= next {
                out.push(((now - t_loss) as f64 / 1e9, tcp.cwnd, c.tcp_cwnd));
                next += step_ms * MS;
            }
            now += rtt_us * 1000 / u64::from(tcp.cwnd);
            c.pkts_acked(&mut tcp, &sample(rtt_us as i64), now);
            c.cong_avoid(&mut tcp, 1, now);
        }
        (c.bic_k, out)
    }

    #[test]
    fn growth_in_real_time_is_independent_of_rtt() {
        // W_max 5000: between the loss and 20 s the Reno estimate grows 0.53 segments per RTT
        // (1 per cwnd*15/8 ACKs), at most 3500 + 20 s / 20 ms * 0.53 = 4033 < cwnd, so both
        // flows follow the cubic curve W(t) = 5000 - 0.4 (K - t)^3 (in seconds), which does not
        // involve the RTT: 20 ms and 80 ms flows have the same window at the same time, up
        // to the one-jiffy granularity of the update (measured: at most 1 segment apart).
        let (_, fast) = ack_clocked(20_000, 5000, 20, 500);
        let (_, slow) = ack_clocked(80_000, 5000, 20, 500);
        assert_eq!(fast.len(), slow.len());
        for (a, b) in fast.iter().zip(&slow) {
            assert!(a.1.abs_diff(b.1) <= 2, "t {} s: {} vs {}", a.0, a.1, b.1);
            assert!(a.2 < a.1 && b.2 < b.1, "t {} s: in the TCP-friendly region", a.0);
        }
        // Not a flat line: the window grew from 3500 by more than 25 %.
        assert!(fast.last().unwrap().1 > 4375);
    }

    #[test]
    fn plateau_at_w_max_around_k() {
        // W_max 5000, ssthresh 5000*717/1024 = 3500: K = cubic_root(2681735677 * 1500) = 15902
        // (1/1024 s) = 15.53 s (exact: cbrt(1500 / 0.4004) = 15.53 s). Within +-1 s of K the
        // curve departs from W_max by at most 0.4 * 1^3 = 0.4 segment, so cwnd stays within
        // one segment of 5000; 5 s either side it is 50 segments away.
        let (k, trace) = ack_clocked(40_000, 5000, 25, 100);
        assert_eq!(k, 15_902);
        assert_eq!(trace[0].1, 3500);
        let t_k = f64::from(k) / 1024.0;
        for &(t, cwnd, _) in &trace {
            if (t - t_k).abs() <= 1.0 {
                assert!(cwnd.abs_diff(5000) <= 1, "t {t} s: cwnd {cwnd}");
            }
            if (t - t_k).abs() >= 5.0 {
                assert!(cwnd.abs_diff(5000) >= 40, "t {t} s: cwnd {cwnd}");
            }
        }
    }

    #[test]
    fn friendliness_with_a_zero_step_does_not_spin() {
        // beta 100: beta_scale = (8*1124/3 = 2997) / 924 = 3, so at cwnd 2 the Reno step is
        // (2*3) >> 3 = 0 ACKs: the kernel's loop would never end; here tcp_cwnd stays put.
        let mut c = cubic_with(&[("beta", 100.0)]);
        let mut tcp = TcpState { cwnd: 2, ssthresh: 2, ..TcpState::default() };
        c.init(&mut tcp, T0);
        c.cong_avoid(&mut tcp, 5, T0);
        assert_eq!((c.beta_scale, c.tcp_cwnd, c.ack_cnt), (3, 2, 5));
    }

    #[test]
    fn a_million_segment_window() {
        // Loss at 10^6: ssthresh = 717000000/1024 = 700195, W_max 10^6.
        // K = cubic_root(2681735677 * 299805) against the exact cbrt(299805 * 2^40 / 410)
        // = 92986.2 (1/1024 s, 90.8 s): within the 0.2 % the kernel claims.
        let mut c = cubic();
        let mut tcp = TcpState { cwnd: 1_000_000, ssthresh: 1_000_000, ..TcpState::default() };
        c.init(&mut tcp, T0);
        loss(&mut c, &mut tcp, T0);
        assert_eq!(tcp.cwnd, 700_195);
        c.cong_avoid(&mut tcp, 1, T0 + MS);
        let exact = (2_681_735_677f64 * 299_805.0).cbrt();
        assert!((f64::from(c.bic_k) - exact).abs() / exact < 0.002, "{} vs {exact}", c.bic_k);
        // 10^6 s later (a wrapped cube) the update still runs and keeps cnt >= 2.
        c.cong_avoid(&mut tcp, 1, T0 + 1_000_000 * 1_000 * MS);
        assert!(c.cnt >= 2);
    }

    #[test]
    fn parameters_are_checked() {
        for (k, v) in [("beta", 1024.0), ("beta", 0.0), ("hz", 5.0), ("hystart_detect", 4.0), ("bic_scale", 0.0)] {
            let err = Cubic::new(&Params::new().set(k, v)).unwrap_err();
            assert!(err.0.contains(k), "{err}");
        }
        assert!(Cubic::new(&Params::new().set("alpha", 1.0)).is_err());
    }

    #[test]
    fn replay_reports_the_variables() {
        use crate::replay::{replay, Event, ReplayStart, TraceEvent};
        // Loss at 100 then one ACK 1 ms later: W_max 100, K 4316, origin 100 (as above).
        let ev = |t, event| TraceEvent { time_us: t, event, snd_una: None, snd_nxt: None };
        let evs = [ev(10_000_000, Event::Loss), ev(10_001_000, crate::test_support::open_ack(1, -1))];
        let alg = crate::Algorithm::new("cubic", &Params::new()).unwrap();
        let rows = replay(alg, ReplayStart { cwnd: 100, ssthresh: 100 }, &evs);
        let var = |name: &str| rows[1].vars.iter().find(|(k, _)| *k == name).unwrap().1;
        assert_eq!((rows[1].cwnd, var("last_max_cwnd"), var("K"), var("origin")), (70, 100.0, 4316.0, 100.0));
        assert_eq!(rows[1].vars.len(), 11);
    }
}
