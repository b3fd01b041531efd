//! `htcp`: H-TCP (Shorten and Leith, "H-TCP: TCP for high-speed and long-distance networks",
//! PFLDnet 2004; by the authors of seed 002) as Linux ships it, `net/ipv4/tcp_htcp.c`
//! (Linux 6.x; read in a 6.17-rc tree).
//!
//! The increase per RTT grows with the time Δ since the last congestion event: 1 for the
//! first Δ_L = 1 s (Reno), then 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)², in integer jiffies.
//! With `use_rtt_scaling` it is multiplied by minRTT / 100 ms kept within [0.1, 2], and it
//! is always multiplied by 2(1 − β) so that the average rate does not depend on β. The
//! decrease β is minRTT / maxRTT clamped to [0.5, 0.8] (`BETA_MIN` 64, `BETA_MAX` 102, in
//! 1/128). With `use_bandwidth_switch`, β is 0.5 instead when the achieved throughput changed
//! by more than 20% since the previous congestion event, and again at the event after that
//! (`modeswitch`), as at the first event of a connection.
//!
//! Time is Linux jiffies: `jiffies = now_ns * hz / 10^9` as a wrapping `u32`, and RTT samples
//! in microseconds become jiffies rounded up (`usecs_to_jiffies`). All arithmetic is the
//! kernel's 32-bit arithmetic, wraps included: `(diff / 2)^2` overflows once Δ exceeds about
//! 132 s at HZ = 1000, and alpha then wraps as it does in Linux. `last_cong` = 0 doubles as
//! the kernel's "nothing to undo" mark; since the kernel's jiffies start 5 minutes before
//! wrapping to 0, it rarely sees that, while a connection opened here at time 0 does: its
//! first congestion event cannot be undone and its epoch starts at the beginning of recovery
//! rather than the end.

use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_slow_start, AckSample, CaState, TcpState};
use crate::CongestionControl;

/// 1.0 in the 1/128 fixed point of `alpha`.
const ALPHA_BASE: u32 = 1 << 7;
/// β = 0.5 in 1/128.
pub const BETA_MIN: u8 = 1 << 6;
/// β = 0.8 in 1/128 (102/128 = 0.797).
pub const BETA_MAX: u8 = 102;

/// H-TCP.
#[derive(Clone, Debug)]
pub struct Htcp {
    // Parameters (module parameters and CONFIG_HZ in Linux).
    use_rtt_scaling: bool,
    use_bandwidth_switch: bool,
    hz: u32,
    // State (`struct htcp`); times in jiffies, rates in packets per second.
    /// Increase per RTT, << 7.
    alpha: u32,
    /// Fraction of the window kept at a loss, << 7.
    beta: u8,
    /// Adaptive β allowed (set after one congestion event without a bandwidth switch).
    modeswitch: u8,
    /// Segments ACKed by the current ACK, credited by `cong_avoid`.
    pkts_acked: u16,
    packetcount: u32,
    min_rtt: u32,
    max_rtt: u32,
    /// End of the last congestion event.
    last_cong: u32,
    undo_last_cong: u32,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    /// Smoothed achieved throughput.
    bi: u32,
    lasttime: u32,
}

impl Htcp {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::switch("use_rtt_scaling", true, "scale the increase by minRTT / 100 ms (clamped to [0.1, 2])"),
        ParamSpec::switch(
            "use_bandwidth_switch",
            true,
            "back off by 0.5 when throughput changed by more than 20% since the last loss",
        ),
        ParamSpec {
            name: "hz",
            default: 1000.0,
            min: 10.0,
            max: 10000.0,
            integer: true,
            unit: "Hz",
            help: "kernel CONFIG_HZ: jiffies per second, the clock's resolution",
            choices: &[],
        },
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("htcp", Self::PARAMS)?;
        Ok(Self::fresh(p.bool("use_rtt_scaling"), p.bool("use_bandwidth_switch"), p.u32("hz"), 0))
    }

    /// The state `htcp_init` leaves: all zero but alpha 1, beta 0.5, the epoch from `now`.
    fn fresh(use_rtt_scaling: bool, use_bandwidth_switch: bool, hz: u32, now: u32) -> Self {
        Htcp {
            use_rtt_scaling,
            use_bandwidth_switch,
            hz,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: 0,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: now,
            undo_last_cong: 0,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    /// `jiffies` (wrapping at 32 bits, like `tcp_jiffies32`) at `now_ns`.
    #[inline]
    fn jiffies(&self, now_ns: u64) -> u32 {
        crate::clock::jiffies32(now_ns, self.hz)
    }

    /// `msecs_to_jiffies`: rounded up.
    #[inline]
    fn msecs_to_jiffies(&self, ms: u64) -> u64 {
        (ms * self.hz as u64).div_ceil(1000)
    }

    /// `usecs_to_jiffies`: rounded up.
    #[inline]
    fn usecs_to_jiffies(&self, us: u32) -> u32 {
        (us as u64 * self.hz as u64).div_ceil(1_000_000) as u32
    }

    /// `htcp_cong_time`: jiffies since the last congestion event.
    #[inline]
    fn cong_time(&self, now: u32) -> u32 {
        now.wrapping_sub(self.last_cong)
    }

    /// `htcp_reset`: a congestion event starts; keep what undo needs.
    fn reset(&mut self, now: u32) {
        self.undo_last_cong = self.last_cong;
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now;
    }

    /// `measure_rtt`: minimum RTT, and a maximum that creeps up by at most 20 ms per sample.
    fn measure_rtt(&mut self, state: CaState, srtt: u32) {
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < srtt && srtt as u64 <= self.max_rtt as u64 + self.msecs_to_jiffies(20) {
                self.max_rtt = srtt;
            }
        }
    }

    /// `htcp_beta_update`.
    fn beta_update(&mut self, min_rtt: u32, max_rtt: u32) {
        if self.use_bandwidth_switch {
            let (max_b, old_max_b) = (self.max_b, self.old_max_b);
            self.old_max_b = max_b;
            // Linux `between(5 maxB, 4 old_maxB, 6 old_maxB)`: within ±20%, modulo 2^32.
            let (lo, hi) = (old_max_b.wrapping_mul(4), old_max_b.wrapping_mul(6));
            if hi.wrapping_sub(lo) < max_b.wrapping_mul(5).wrapping_sub(lo) {
                self.beta = BETA_MIN;
                self.modeswitch = 0;
                return;
            }
        }
        if self.modeswitch != 0 && min_rtt as u64 > self.msecs_to_jiffies(10) && max_rtt != 0 {
            // Stored in a u8 as Linux does, then clamped.
            let beta = ((min_rtt << 7) / max_rtt) as u8;
            self.beta = beta.clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = 1;
        }
    }

    /// `htcp_alpha_update`: alpha from the time since the last congestion event.
    fn alpha_update(&mut self, now: u32) {
        let hz = self.hz;
        let mut factor: u32 = 1;
        let mut diff = self.cong_time(now);
        if diff > hz {
            diff -= hz;
            let half = diff / 2;
            factor = 1 + (10u32.wrapping_mul(diff).wrapping_add(half.wrapping_mul(half) / hz)) / hz;
        }
        if self.use_rtt_scaling && self.min_rtt != 0 {
            // 8 × (100 ms / minRTT), clamped to [0.5, 10] << 3. (10 minRTT cannot wrap to 0
            // for any RTT a u32 of microseconds can hold.)
            let scale = ((hz << 3) / 10u32.wrapping_mul(self.min_rtt).max(1)).clamp(1 << 2, 10 << 3);
            factor = (factor << 3) / scale;
            if factor == 0 {
                factor = 1;
            }
        }
        self.alpha = 2u32.wrapping_mul(factor).wrapping_mul((1u32 << 7) - self.beta as u32);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// `htcp_param_update`: at a congestion event, new β and α, and let maxRTT fade.
    fn param_update(&mut self, now: u32) {
        let (min_rtt, max_rtt) = (self.min_rtt, self.max_rtt);
        self.beta_update(min_rtt, max_rtt);
        self.alpha_update(now);
        if min_rtt > 0 && max_rtt > min_rtt {
            self.max_rtt = min_rtt + (max_rtt - min_rtt).wrapping_mul(95) / 100;
        }
    }
}

impl CongestionControl for Htcp {
    /// `htcp_init`.
    fn init(&mut self, _tcp: &mut TcpState, now_ns: u64) {
        let now = self.jiffies(now_ns);
        *self = Self::fresh(self.use_rtt_scaling, self.use_bandwidth_switch, self.hz, now);
    }

    /// `htcp_recalc_ssthresh`.
    fn ssthresh(&mut self, tcp: &TcpState, now_ns: u64) -> u32 {
        let now = self.jiffies(now_ns);
        self.param_update(now);
        (tcp.cwnd.wrapping_mul(self.beta as u32) >> 7).max(2)
    }

    /// `htcp_cong_avoid`: `cwnd += alpha / cwnd` per ACK, in Linux's form: one segment once
    /// `cwnd_cnt * alpha >= cwnd` (the ACK that finds it so is not credited).
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        if !tcp.cwnd_limited {
            return;
        }
        if tcp.in_slow_start() {
            tcp_slow_start(tcp, acked);
            return;
        }
        if tcp.cwnd_cnt.wrapping_mul(self.alpha) >> 7 >= tcp.cwnd {
            if tcp.cwnd < tcp.cwnd_clamp {
                tcp.cwnd += 1;
            }
            tcp.cwnd_cnt = 0;
            let now = self.jiffies(now_ns);
            self.alpha_update(now);
        } else {
            tcp.cwnd_cnt = tcp.cwnd_cnt.wrapping_add(self.pkts_acked as u32);
        }
        self.pkts_acked = 1;
    }

    /// `htcp_state`: the epoch restarts at the end of a congestion event (unless undone);
    /// CWR, Recovery and Loss mark its start.
    fn set_state(&mut self, _tcp: &mut TcpState, new_state: CaState, now_ns: u64) {
        let now = self.jiffies(now_ns);
        match new_state {
            CaState::Open => {
                if self.undo_last_cong != 0 {
                    self.last_cong = now;
                    self.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    /// `htcp_cwnd_undo`: restore the epoch, maxRTT and old_maxB; the window as Reno.
    fn undo_cwnd(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        if self.undo_last_cong != 0 {
            self.last_cong = self.undo_last_cong;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
            self.undo_last_cong = 0;
        }
        tcp.cwnd.max(tcp.prior_cwnd)
    }

    /// `measure_achieved_throughput`: RTT bounds and throughput once per RTT.
    fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
        let now = self.jiffies(now_ns);
        let state = tcp.ca_state;
        if state == CaState::Open {
            self.pkts_acked = sample.pkts_acked as u16;
        }
        if sample.rtt_us > 0 {
            // Linux's sample is an s32 of microseconds; larger ones saturate here.
            let us = sample.rtt_us.min(u32::MAX as i64) as u32;
            self.measure_rtt(state, self.usecs_to_jiffies(us));
        }
        if !self.use_bandwidth_switch {
            return;
        }
        if !matches!(state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount = self.packetcount.wrapping_add(sample.pkts_acked);
        let a = self.alpha >> 7;
        let elapsed = now.wrapping_sub(self.lasttime);
        if self.packetcount >= tcp.cwnd.wrapping_sub(if a != 0 { a } else { 1 })
            && elapsed >= self.min_rtt
            && self.min_rtt > 0
        {
            // elapsed >= min_rtt > 0
            let cur_bi = self.packetcount.wrapping_mul(self.hz) / elapsed;
            if self.cong_time(now) / self.min_rtt <= 3 {
                // Just after a backoff: start afresh.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = 3u32.wrapping_mul(self.bi).wrapping_add(cur_bi) / 4;
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("alpha", self.alpha as f64 / 128.0);
        out("beta", self.beta as f64 / 128.0);
        out("modeswitch", self.modeswitch as f64);
        out("min_rtt_jiffies", self.min_rtt as f64);
        out("max_rtt_jiffies", self.max_rtt as f64);
        out("last_cong_jiffies", self.last_cong as f64);
        out("bi_pps", self.bi as f64);
        out("max_b_pps", self.max_b as f64);
        out("old_max_b_pps", self.old_max_b as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{replay, Event, ReplayStart, TraceEvent};
    use crate::Algorithm;

    const MS: u64 = 1_000_000;

    fn htcp() -> Htcp {
        Htcp::new(&Params::new()).unwrap()
    }

    fn sample(pkts: u32, rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: pkts, rtt_us, in_flight: 100 }
    }

    /// alpha (in 1/128) `delta` jiffies (ms at HZ = 1000) after a congestion event at jiffy 0.
    fn alpha_at(h: &mut Htcp, delta: u32) -> u32 {
        h.last_cong = 0;
        h.alpha_update(delta);
        h.alpha
    }

    #[test]
    fn alpha_follows_time_since_congestion() {
        // minRTT 100 ms: RTT scaling is the identity ((1000 << 3) / (10 * 100) = 8 = 1.0).
        // alpha = 2 (1 - β) factor with β = 0.5, so alpha = factor, and
        // factor = 1 + floor((10 d + (d/2)^2 / HZ) / HZ) with d = Δ - 1 s in jiffies:
        let mut h = htcp();
        h.min_rtt = 100;
        assert_eq!(alpha_at(&mut h, 500), 128); // Δ <= Δ_L: 1
        assert_eq!(alpha_at(&mut h, 1000), 128); // d = 0 is not > 0: 1
                                                 // Δ = 1.5 s: 1 + 10 (0.5) + 0.25^2 = 6.06 -> 1 + (5000 + 62) / 1000 = 6.
        assert_eq!(alpha_at(&mut h, 1500), 6 * 128);
        // Δ = 2 s: 1 + 10 + 0.5^2 = 11.25 -> 1 + (10000 + 250) / 1000 = 11.
        assert_eq!(alpha_at(&mut h, 2000), 11 * 128);
        // Δ = 5 s: 1 + 40 + 2^2 = 45 -> 1 + (40000 + 4000) / 1000 = 45.
        assert_eq!(alpha_at(&mut h, 5000), 45 * 128);
        // Δ = 200 s: (d/2)^2 = 99500^2 = 9_900_250_000 wraps to 1_310_315_408 in 32 bits,
        // so factor = 1 + (1_990_000 + 1_310_315) / 1000 = 3301, not 11891, as in Linux.
        assert_eq!(alpha_at(&mut h, 200_000), 3301 * 128);
        // β = 102/128: alpha = 2 × 45 × (128 - 102) = 2340 (18.28 = 2 (1 - 0.797) 45).
        h.beta = BETA_MAX;
        assert_eq!(alpha_at(&mut h, 5000), 2340);
        // HZ = 250 gives the same factor: Δ = 2 s = 500 jiffies, d = 250:
        // 1 + (2500 + 125^2 / 250) / 250 = 1 + 2562 / 250 = 11; minRTT 25 jiffies = 100 ms.
        let mut h = Htcp::new(&Params::new().set("hz", 250.0)).unwrap();
        h.min_rtt = 25;
        assert_eq!(alpha_at(&mut h, 500), 11 * 128);
    }

    #[test]
    fn alpha_scaled_by_min_rtt() {
        // Δ = 5 s, factor 45; scale = 8000 / (10 minRTT) clamped to [4, 80], then
        // factor = factor × 8 / scale, i.e. × minRTT / 100 ms within [0.1, 2].
        let mut h = htcp();
        h.min_rtt = 200; // scale 4: × 2 -> 90
        assert_eq!(alpha_at(&mut h, 5000), 90 * 128);
        h.min_rtt = 300; // scale 2, clamped to 4: still × 2
        assert_eq!(alpha_at(&mut h, 5000), 90 * 128);
        h.min_rtt = 50; // scale 16: 360 / 16 = 22 (22.5)
        assert_eq!(alpha_at(&mut h, 5000), 22 * 128);
        h.min_rtt = 10; // scale 80: 360 / 80 = 4 (4.5)
        assert_eq!(alpha_at(&mut h, 5000), 4 * 128);
        h.min_rtt = 5; // scale 160, clamped to 80: × 0.1 at most
        assert_eq!(alpha_at(&mut h, 5000), 4 * 128);
        h.min_rtt = 10; // Δ = 1 s: 8 / 80 = 0, raised to 1
        assert_eq!(alpha_at(&mut h, 1000), 128);
        // Without RTT scaling minRTT does not matter.
        let mut h = Htcp::new(&Params::new().set("use_rtt_scaling", 0.0)).unwrap();
        h.min_rtt = 200;
        assert_eq!(alpha_at(&mut h, 5000), 45 * 128);
    }

    #[test]
    fn increase_per_rtt() {
        // alpha = 11 (Δ = 2 s, no RTT yet so no scaling). An ACK finding
        // cwnd_cnt × 11 >= cwnd adds a segment and is not itself credited: at cwnd 100..=110
        // that takes 10 credited ACKs + 1. One RTT (100 ACKs): 9 segments in 99 ACKs,
        // then 1 credit: cwnd 109 — against alpha = 11 ideally, the uncredited ACK costs ~1/11.
        let mut h = htcp();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 2, ..TcpState::default() };
        alpha_at(&mut h, 2000);
        for _ in 0..100 {
            h.cong_avoid(&mut tcp, 1, 2000 * MS);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt, h.alpha), (109, 1, 11 * 128));
        // Δ < 1 s, alpha = 1 (Reno): 100 credits at cwnd 100, the 101st ACK adds the segment.
        let mut h = htcp();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 2, ..TcpState::default() };
        for _ in 0..100 {
            h.cong_avoid(&mut tcp, 1, 500 * MS);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (100, 100));
        h.cong_avoid(&mut tcp, 1, 500 * MS);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (101, 0));
        // minRTT 200 ms, Δ = 2 s: alpha = 22. cwnd 100..=110 needs 5 credits (110 >= w),
        // 6 ACKs each: 11 segments in 66 ACKs; 111..=132 needs 6 credits, 7 ACKs each:
        // 4 segments in 28; 6 ACKs left credit 6 at cwnd 115.
        let mut h = htcp();
        h.min_rtt = 200;
        let mut tcp = TcpState { cwnd: 100, ssthresh: 2, ..TcpState::default() };
        alpha_at(&mut h, 2000);
        assert_eq!(h.alpha, 22 * 128);
        for _ in 0..100 {
            h.cong_avoid(&mut tcp, 1, 2000 * MS);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (115, 6));
    }

    #[test]
    fn ack_credits_its_segments() {
        // In Open, pkts_acked records the ACK's count for cong_avoid (then back to 1).
        let mut h = htcp();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 2, ..TcpState::default() };
        h.pkts_acked(&mut tcp, &sample(3, -1), 0);
        h.cong_avoid(&mut tcp, 3, 0);
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd_cnt, 4);
    }

    #[test]
    fn beta_is_rtt_ratio_within_bounds() {
        // After one congestion event (modeswitch 1), steady throughput (maxB = old_maxB):
        // beta = (minRTT << 7) / maxRTT clamped to [64, 102]; ssthresh = cwnd × beta >> 7.
        let tcp = TcpState { cwnd: 1000, ..TcpState::default() };
        let mut h = htcp();
        let mut at = |min, max| {
            h.modeswitch = 1;
            (h.min_rtt, h.max_rtt) = (min, max);
            let ss = h.ssthresh(&tcp, 0);
            (h.beta, ss, h.max_rtt)
        };
        // 12800 / 150 = 85: 85000 >> 7 = 664; maxRTT fades to 100 + 50 × 95 / 100 = 147.
        assert_eq!(at(100, 150), (85, 664, 147));
        // 12800 / 110 = 116 > 102: 102000 >> 7 = 796.
        assert_eq!(at(100, 110), (102, 796, 109));
        // 12800 / 200 = 64 exactly; 40 / 200 = 25 < 64: both 0.5, 64000 >> 7 = 500.
        assert_eq!(at(100, 200).0, 64);
        assert_eq!(at(40, 200), (64, 500, 192));
        // minRTT <= msecs_to_jiffies(10) = 10: 0.5 whatever maxRTT.
        assert_eq!(at(10, 12).0, 64);
        // The first congestion event never adapts: beta 0.5 and modeswitch set for the next.
        let mut h = htcp();
        (h.min_rtt, h.max_rtt) = (100, 110);
        assert_eq!(h.ssthresh(&tcp, 0), 500);
        assert_eq!(h.modeswitch, 1);
        assert_eq!(h.ssthresh(&tcp, 0), 796);
    }

    #[test]
    fn bandwidth_switch() {
        // between(5 maxB, 4 old, 6 old): maxB within ±20% of old_maxB keeps adaptive beta.
        let tcp = TcpState { cwnd: 1000, ..TcpState::default() };
        let run = |h: &mut Htcp, old: u32, max: u32| {
            (h.modeswitch, h.min_rtt, h.max_rtt, h.old_max_b, h.max_b) = (1, 100, 110, old, max);
            h.ssthresh(&tcp, 0);
            (h.beta, h.modeswitch)
        };
        let mut h = htcp();
        assert_eq!(run(&mut h, 1000, 1200), (102, 1)); // +20%: 6000 - 4000 >= 6000 - 4000
        assert_eq!(run(&mut h, 1000, 800), (102, 1)); // -20%
        assert_eq!(run(&mut h, 1000, 1201), (64, 0)); // 2005 > 2000: switch to 0.5
        assert_eq!(h.old_max_b, 1201);
        assert_eq!(run(&mut h, 1000, 799), (64, 0)); // 3995 - 4000 wraps: outside
                                                     // Off: the change is ignored.
        let mut h = Htcp::new(&Params::new().set("use_bandwidth_switch", 0.0)).unwrap();
        assert_eq!(run(&mut h, 1000, 2000), (102, 1));
    }

    #[test]
    fn rtt_bounds() {
        // Samples in microseconds become jiffies rounded up; maxRTT follows only rises of
        // at most msecs_to_jiffies(20) = 20 per sample, and only in Open.
        let mut h = htcp();
        let mut tcp = TcpState::default();
        let rtt = |h: &mut Htcp, tcp: &mut TcpState, us| {
            h.pkts_acked(tcp, &sample(1, us), 0);
            (h.min_rtt, h.max_rtt)
        };
        assert_eq!(rtt(&mut h, &mut tcp, 100_000), (100, 100));
        assert_eq!(rtt(&mut h, &mut tcp, 130_000), (100, 100)); // 130 > 100 + 20
        assert_eq!(rtt(&mut h, &mut tcp, 115_000), (100, 115));
        assert_eq!(rtt(&mut h, &mut tcp, 130_000), (100, 130)); // 130 <= 135
        assert_eq!(rtt(&mut h, &mut tcp, 89_001), (90, 130)); // 89.001 ms -> 90 jiffies
        assert_eq!(rtt(&mut h, &mut tcp, -1), (90, 130)); // no sample
        tcp.ca_state = CaState::Recovery;
        assert_eq!(rtt(&mut h, &mut tcp, 80_000), (80, 130));
        assert_eq!(rtt(&mut h, &mut tcp, 140_000), (80, 130));
    }

    #[test]
    fn achieved_throughput() {
        // 1 segment per ms at minRTT 100 ms, cwnd 100: the estimate is taken once
        // packetcount >= cwnd - alpha/128 = 99 and 100 jiffies have passed, at t = 100 ms:
        // 100 × 1000 / 100 = 1000 segments/s; within 3 minRTTs of the last congestion
        // (100 / 100 = 1) it restarts minB = maxB = Bi.
        let mut h = htcp();
        let mut tcp = TcpState { cwnd: 100, ..TcpState::default() };
        h.init(&mut tcp, 0);
        for t in 1..=100 {
            h.pkts_acked(&mut tcp, &sample(1, 100_000), t * MS);
        }
        assert_eq!((h.min_b, h.max_b, h.bi, h.packetcount, h.lasttime), (1000, 1000, 1000, 0, 100));
        // 4 segments per ACK from t = 501 ms: 100 at t = 525, 425 jiffies after the last
        // estimate: 100000 / 425 = 235; 525 / 100 = 5 > 3, so Bi = (3 × 1000 + 235) / 4 = 808
        // and maxB keeps 1000.
        for t in 501..=525 {
            h.pkts_acked(&mut tcp, &sample(4, 100_000), t * MS);
        }
        assert_eq!((h.min_b, h.max_b, h.bi, h.lasttime), (1000, 1000, 808, 525));
        // Outside Open/Disorder the count restarts.
        h.pkts_acked(&mut tcp, &sample(4, 100_000), 530 * MS);
        assert_eq!(h.packetcount, 4);
        tcp.ca_state = CaState::Recovery;
        h.pkts_acked(&mut tcp, &sample(4, 100_000), 540 * MS);
        assert_eq!((h.packetcount, h.lasttime), (0, 540));
    }

    #[test]
    fn epoch_restarts_at_end_of_congestion_and_undo_restores_it() {
        let mut tcp = TcpState { cwnd: 50, prior_cwnd: 100, ..TcpState::default() };
        // Epoch from init at 1 s. Recovery at 3 s, Open at 3.1 s: Δ counts from 3.1 s.
        let mut h = htcp();
        h.init(&mut tcp, 1000 * MS);
        h.set_state(&mut tcp, CaState::Recovery, 3000 * MS);
        assert_eq!((h.last_cong, h.undo_last_cong), (3000, 1000));
        h.set_state(&mut tcp, CaState::Open, 3100 * MS);
        assert_eq!((h.last_cong, h.undo_last_cong), (3100, 0));
        // Undone during recovery: the epoch of 1 s and the saved maxRTT and old_maxB return,
        // the window is max(cwnd, prior_cwnd) = 100, and Open then keeps the old epoch.
        let mut h = htcp();
        h.init(&mut tcp, 1000 * MS);
        (h.max_rtt, h.old_max_b) = (130, 500);
        h.set_state(&mut tcp, CaState::Recovery, 3000 * MS);
        (h.max_rtt, h.old_max_b) = (120, 900);
        assert_eq!(h.undo_cwnd(&mut tcp, 3050 * MS), 100);
        assert_eq!((h.last_cong, h.max_rtt, h.old_max_b), (1000, 130, 500));
        h.set_state(&mut tcp, CaState::Open, 3100 * MS);
        assert_eq!(h.last_cong, 1000);
    }

    #[test]
    fn epoch_from_jiffy_zero_cannot_be_undone() {
        // Linux's sentinel: last_cong = 0 means "nothing to undo". A connection whose epoch
        // began at jiffy 0 keeps last_cong at the start of its first recovery (3 s, not the
        // 3.1 s of its end), and undo leaves it there.
        let mut tcp = TcpState::default();
        let mut h = htcp();
        h.init(&mut tcp, 0);
        h.set_state(&mut tcp, CaState::Recovery, 3000 * MS);
        h.set_state(&mut tcp, CaState::Open, 3100 * MS);
        assert_eq!(h.last_cong, 3000);
        h.undo_cwnd(&mut tcp, 3200 * MS);
        assert_eq!(h.last_cong, 3000);
    }

    #[test]
    fn replay_three_losses() {
        // 1 segment per ms, RTT 100 ms with every tenth sample 110 ms: minRTT 100,
        // maxRTT 110, throughput 1000 segments/s throughout. Losses 2 s apart.
        // Loss 1 (Δ = 2000 - 1 jiffies from init at 1 ms, factor 11): old_maxB was 0, so the
        //   bandwidth switch fires: beta 0.5, modeswitch 0; alpha = 2 × 11 × 64 / 128 = 11.
        // Loss 2 (Δ = 2 s): maxB = old_maxB = 1000, but modeswitch was 0: beta 0.5 again,
        //   modeswitch 1; alpha 11.
        // Loss 3: beta = 12800 / 110 = 116 -> 102; alpha = 2 × 11 × 26 = 572 (4.47);
        //   maxRTT fades to 100 + 10 × 95 / 100 = 109.
        let ev = |t, event| TraceEvent { time_us: t, event, snd_una: None, snd_nxt: None };
        let mut evs = Vec::new();
        let mut losses = Vec::new();
        for phase in 0..3u64 {
            for ms in phase * 2000 + 1..=(phase + 1) * 2000 {
                let rtt_us = if ms % 10 == 0 { 110_000 } else { 100_000 };
                evs.push(ev(ms * 1000, crate::test_support::open_ack(1, rtt_us)));
            }
            losses.push(evs.len());
            evs.push(ev((phase + 1) * 2_000_000 + 500, Event::Loss));
        }
        let rows =
            replay(Algorithm::new("htcp", &Params::new()).unwrap(), ReplayStart { cwnd: 100, ssthresh: 100 }, &evs);
        let var = |i: usize, name: &str| rows[i].vars.iter().find(|(k, _)| *k == name).unwrap().1;
        let expect = [(64u32, 11.0, 0.0), (64, 11.0, 1.0), (102, 572.0 / 128.0, 1.0)];
        for (&i, &(beta, alpha, modeswitch)) in losses.iter().zip(&expect) {
            assert_eq!(rows[i].ssthresh, (rows[i - 1].cwnd * beta) >> 7, "loss at row {i}");
            assert_eq!(rows[i].cwnd, rows[i].ssthresh);
            assert_eq!(var(i, "beta"), beta as f64 / 128.0);
            assert_eq!(var(i, "alpha"), alpha);
            assert_eq!(var(i, "modeswitch"), modeswitch);
            assert_eq!(var(i, "min_rtt_jiffies"), 100.0);
            assert_eq!(var(i, "max_b_pps"), 1000.0);
        }
        assert_eq!(var(losses[2], "max_rtt_jiffies"), 109.0);
        // The epoch restarts at the end of each loss (jiffy 2000, 4000, 6000).
        assert_eq!(var(losses[2], "last_cong_jiffies"), 6000.0);
    }

    #[test]
    fn extreme_values_do_not_panic() {
        // 10^6-segment windows, 10^6 s of time, huge RTTs and ACKs: the kernel's 32-bit
        // arithmetic wraps but never traps; ssthresh stays within [2, cwnd].
        for hz in [100.0, 1000.0, 10000.0] {
            let mut h = Htcp::new(&Params::new().set("hz", hz)).unwrap();
            let mut tcp = TcpState { cwnd: 1_000_000, ssthresh: 500_000, ..TcpState::default() };
            h.init(&mut tcp, 0);
            for t in [0u64, 1, 131, 132, 1000, 4295, 100_000, 1_000_000].into_iter() {
                let now = t * 1_000_000_000;
                h.pkts_acked(&mut tcp, &sample(1_000_000, 1_000_000_000_000), now);
                h.pkts_acked(&mut tcp, &sample(u32::MAX, i64::MAX), now + 1);
                for _ in 0..1000 {
                    h.cong_avoid(&mut tcp, 1_000_000, now + 2);
                }
                let ss = h.ssthresh(&tcp, now + 3);
                assert!((2..=tcp.cwnd).contains(&ss), "hz {hz} t {t}: ssthresh {ss} cwnd {}", tcp.cwnd);
                h.set_state(&mut tcp, CaState::Recovery, now + 4);
                h.undo_cwnd(&mut tcp, now + 5);
                h.set_state(&mut tcp, CaState::Open, now + 6);
                tcp.cwnd = 1_000_000;
            }
        }
    }
}
