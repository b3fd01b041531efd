//! `illinois`: TCP-Illinois as Linux ships it, `net/ipv4/tcp_illinois.c` (Linux 6.x, the
//! `ack_sample` version, undo by `tcp_reno_undo_cwnd`), after Liu, Başar and Srikant
//! (Performance Evaluation 65(6), 2008).
//!
//! Loss-based AIMD whose increase `alpha` (segments per RTT, in 1/128) and decrease `beta`
//! (fraction removed, in 1/64) follow the queueing delay, set once per RTT from the RTT
//! samples of the round: with the average delay `da` and the largest `dm` above the least
//! RTT, alpha = 10 while `da <= dm/100` (after `theta` such rounds once it rose above),
//! else `dm * 10 / (dm + da * (10 - 0.3) / 0.3)` on the shifted delays; beta = 1/8 while
//! `da <= dm/10`, 1/2 from `8 dm/10`, linear in between. Below `win_thresh` segments both
//! are Reno's (1 and 1/2); a timeout resets them.

use crate::params::{ParamError, ParamSpec, Params};
use crate::seq::after;
use crate::tcp::{tcp_slow_start, AckSample, CaState, TcpState};
use crate::CongestionControl;

pub(crate) const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// `ALPHA_MIN`: 3/10 in 1/128, 38 (0.297).
pub(crate) const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
pub(crate) const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// `RTT_MAX`: samples are capped so that `dm * ALPHA_MAX` fits in u32 (3.36 s).
const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;
pub(crate) const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
pub(crate) const BETA_MIN: u32 = BETA_SCALE / 8;
pub(crate) const BETA_MAX: u32 = BETA_SCALE / 2;
const BETA_BASE: u32 = BETA_MAX;

/// TCP-Illinois (`struct illinois` and the module parameters).
#[derive(Clone, Debug)]
pub struct Illinois {
    win_thresh: u32,
    theta: u32,
    /// `sum_rtt`: the RTT samples of this round, added, us.
    sum_rtt: u64,
    /// `cnt_rtt` (u16): samples this round.
    cnt_rtt: u16,
    /// `base_rtt`: the least RTT, us.
    base_rtt: u32,
    /// `max_rtt`: the largest RTT, us.
    max_rtt: u32,
    /// `end_seq`: the round ends when an ACK passes it.
    end_seq: u32,
    /// `alpha`: the increase per RTT, 1/128 segments.
    alpha: u32,
    /// `beta`: the fraction a loss removes, 1/64.
    beta: u32,
    /// `acked` (u16): segments the last ACK took off the queue.
    acked: u16,
    /// `rtt_above`: the average delay has left the low zone.
    rtt_above: bool,
    /// `rtt_low` (u8): rounds back in the low zone since.
    rtt_low: u8,
}

impl Illinois {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "win_thresh",
            default: 15.0,
            min: 0.0,
            max: 65535.0,
            integer: true,
            unit: "segments",
            help: "window threshold for starting adaptive sizing: below it alpha and beta are Reno's",
            choices: &[],
        },
        ParamSpec {
            name: "theta",
            default: 5.0,
            min: 0.0,
            max: 255.0,
            integer: true,
            unit: "RTTs",
            help: "rounds of low delay before alpha returns to its maximum (rtt_low is a u8)",
            choices: &[],
        },
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("illinois", Self::PARAMS)?;
        Ok(Illinois {
            win_thresh: p.u32("win_thresh"),
            theta: p.u32("theta"),
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        })
    }

    /// `rtt_reset`: a new round from `snd_nxt`.
    fn rtt_reset(&mut self, tcp: &TcpState) {
        self.end_seq = tcp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// `alpha()`: the increase for average delay `da` and largest delay `dm`, us.
    fn alpha_for(&mut self, mut da: u32, mut dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wraps: the kernel's u8 counter.
            self.rtt_low = self.rtt_low.wrapping_add(1);
            if u32::from(self.rtt_low) < self.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        dm -= d1;
        da -= d1;
        (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN)
    }

    /// `update_params`, once per round.
    fn update_params(&mut self, tcp: &TcpState) {
        if tcp.cwnd < self.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            // max_delay, avg_delay: u32 like the kernel's (the average truncated from u64).
            let dm = self.max_rtt.wrapping_sub(self.base_rtt);
            let da = ((self.sum_rtt / u64::from(self.cnt_rtt)) as u32).wrapping_sub(self.base_rtt);
            self.alpha = self.alpha_for(da, dm);
            self.beta = beta_for(da, dm);
        }
        self.rtt_reset(tcp);
    }
}

/// `beta()`: the decrease for average delay `da` and largest delay `dm`, us.
fn beta_for(da: u32, dm: u32) -> u32 {
    let d2 = dm / 10;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = (8 * dm) / 10;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    // u32 as the kernel's; positive whenever d2 < da < d3.
    (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2)
}

impl CongestionControl for Illinois {
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.alpha = ALPHA_MAX;
        self.beta = BETA_BASE;
        self.base_rtt = 0x7fff_ffff;
        self.max_rtt = 0;
        self.acked = 0;
        self.rtt_low = 0;
        self.rtt_above = false;
        self.rtt_reset(tcp);
    }

    /// `tcp_illinois_ssthresh`: remove `cwnd * beta / 64`, keep at least 2.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        // Wraps: u32 product, as the kernel's (past 2^26 segments).
        tcp.cwnd.wrapping_sub(tcp.cwnd.wrapping_mul(self.beta) >> BETA_SHIFT).max(2)
    }

    /// `tcp_illinois_cong_avoid`; the kernel's `ack` is `snd_una` after this ACK. Slow start
    /// drops what is left over past ssthresh, and avoidance counts `acked` from
    /// `pkts_acked`, then 1.
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        if after(tcp.snd_una, self.end_seq) {
            self.update_params(tcp);
        }
        if !tcp.cwnd_limited {
            return;
        }
        if tcp.in_slow_start() {
            tcp_slow_start(tcp, acked);
            return;
        }
        // Wraps: the u32 count and product, as the kernel's.
        tcp.cwnd_cnt = tcp.cwnd_cnt.wrapping_add(u32::from(self.acked));
        self.acked = 1;
        let delta = tcp.cwnd_cnt.wrapping_mul(self.alpha) >> ALPHA_SHIFT;
        if delta >= tcp.cwnd {
            tcp.cwnd = (tcp.cwnd + delta / tcp.cwnd).min(tcp.cwnd_clamp);
            tcp.cwnd_cnt = 0;
        }
    }

    /// `tcp_illinois_state`: a timeout resets alpha, beta and the round.
    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tcp);
        }
    }

    /// `tcp_illinois_acked`.
    fn pkts_acked(&mut self, _tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        // Truncates to the kernel's u16 field.
        self.acked = sample.pkts_acked as u16;
        if sample.rtt_us < 0 {
            return;
        }
        let rtt = (sample.rtt_us as u64).min(u64::from(RTT_MAX)) as u32;
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        // Wraps: the kernel's u16 counter.
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
        self.sum_rtt += u64::from(rtt);
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("alpha", f64::from(self.alpha) / f64::from(ALPHA_SCALE));
        out("beta", f64::from(self.beta) / f64::from(BETA_SCALE));
        out("base_rtt_us", f64::from(self.base_rtt));
        out("max_rtt_us", f64::from(self.max_rtt));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pkts: u32, rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: pkts, rtt_us, in_flight: 0 }
    }

    /// Congestion avoidance at `cwnd` (above win_thresh), a round begun at snd_nxt 1000
    /// with `samples` taken (base 10 ms and max 30 ms seen before it); the next ACK
    /// (snd_una 1001) ends the round.
    fn round(cwnd: u32, samples: &[i64]) -> (Illinois, TcpState) {
        let mut c = Illinois::new(&Params::new()).unwrap();
        let mut tcp = TcpState { cwnd, ssthresh: 10, snd_una: 900, snd_nxt: 900, ..TcpState::default() };
        c.init(&mut tcp, 0);
        c.pkts_acked(&mut tcp, &sample(1, 10_000), 0);
        c.pkts_acked(&mut tcp, &sample(1, 30_000), 0);
        tcp.snd_nxt = 1000;
        c.rtt_reset(&tcp);
        for &s in samples {
            c.pkts_acked(&mut tcp, &sample(1, s), 0);
        }
        tcp.snd_una = 1001;
        (c, tcp)
    }

    #[test]
    fn constants() {
        // ALPHA_MIN = 3 * 128 / 10 = 38; RTT_MAX = (2^32 - 1) / 1280 = 3_355_443 us.
        assert_eq!((ALPHA_MIN, ALPHA_MAX, RTT_MAX), (38, 1280, 3_355_443));
        assert_eq!((BETA_MIN, BETA_MAX), (8, 32));
    }

    #[test]
    fn low_delay_gives_alpha_max_and_beta_min() {
        // dm = 30_000 - 10_000 = 20_000; samples at 10_100: da = 100 <= dm/100 = 200:
        // alpha 10 (never above), beta 1/8 (da <= dm/10 = 2000).
        let (mut c, mut tcp) = round(100, &[10_100, 10_100]);
        c.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((c.alpha, c.beta), (1280, 8));
        // ssthresh removes 100 * 8 >> 6 = 12: 88.
        assert_eq!(c.ssthresh(&tcp, 0), 88);
    }

    #[test]
    fn high_delay_gives_the_curves() {
        // da = 15_000 - 10_000 = 5000, dm = 20_000: d1 = 200, alpha = (19_800 * 1280) /
        // (19_800 + 4800 * 1242 / 38) = 25_344_000 / (19_800 + 156_884) = 143 (1.12);
        // d2 = 2000, d3 = 16_000: beta = (8 * 16_000 - 32 * 2000 + 24 * 5000) / 14_000 =
        // 184_000 / 14_000 = 13.
        let (mut c, mut tcp) = round(100, &[15_000, 15_000]);
        c.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((c.alpha, c.beta), (143, 13));
        // At the largest delay beta is 1/2: da 20_000 >= d3 16_000.
        let (mut c, mut tcp) = round(100, &[30_000]);
        c.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(c.beta, 32);
    }

    #[test]
    fn alpha_max_returns_after_theta_low_rounds() {
        // Once above, a low round keeps the old alpha until the 5th (theta) low round.
        let (mut c, mut tcp) = round(100, &[15_000]);
        c.cong_avoid(&mut tcp, 1, 0);
        let high = c.alpha;
        for n in 1..=5u32 {
            tcp.snd_nxt = 1000 + 100 * n;
            c.rtt_reset(&tcp);
            c.pkts_acked(&mut tcp, &sample(1, 10_000), 0);
            tcp.snd_una = tcp.snd_nxt + 1;
            c.cong_avoid(&mut tcp, 1, 0);
            assert_eq!(c.alpha, if n < 5 { high } else { 1280 }, "round {n}");
        }
    }

    #[test]
    fn small_windows_are_reno() {
        // cwnd 14 < win_thresh 15: alpha 1, beta 1/2 whatever the delay.
        let (mut c, mut tcp) = round(14, &[10_100, 10_100]);
        c.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((c.alpha, c.beta), (128, 32));
        assert_eq!(c.ssthresh(&tcp, 0), 7);
    }

    #[test]
    fn increase_is_alpha_over_cwnd_per_ack() {
        // alpha 10 (1280), cwnd 100: delta = cnt * 1280 >> 7 = 10 cnt reaches 100 at cnt 10:
        // ten single ACKs add 100 / 100 = 1 segment. pkts_acked said 1 each time.
        let (mut c, mut tcp) = round(100, &[10_100, 10_100]);
        for i in 0..10 {
            c.pkts_acked(&mut tcp, &sample(1, 10_100), 0);
            c.cong_avoid(&mut tcp, 1, 0);
            assert_eq!(tcp.cwnd, if i < 9 { 100 } else { 101 }, "ack {i}");
        }
        // A stretch ACK of 30 segments counts 30 (ca->acked) once: delta = 30 * 10 = 300,
        // cwnd + 300 / 101 = 103.
        c.pkts_acked(&mut tcp, &sample(30, 10_100), 0);
        c.cong_avoid(&mut tcp, 30, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (103, 0));
    }

    #[test]
    fn a_timeout_resets_and_samples_are_capped() {
        let (mut c, mut tcp) = round(100, &[15_000]);
        c.cong_avoid(&mut tcp, 1, 0);
        c.set_state(&mut tcp, CaState::Loss, 0);
        assert_eq!((c.alpha, c.beta, c.rtt_above, c.end_seq), (128, 32, false, 1000));
        // A 10 s sample counts as RTT_MAX.
        c.pkts_acked(&mut tcp, &sample(1, 10_000_000), 0);
        assert_eq!(c.max_rtt, RTT_MAX);
    }
}
