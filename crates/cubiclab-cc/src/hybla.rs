//! `hybla`: TCP Hybla as Linux ships it, `net/ipv4/tcp_hybla.c` (Linux 6.x: `srtt_us`,
//! `tcp_snd_cwnd_set`, `rtt0` bounded by `param_set_uint_minmax`, the slow-start shift capped
//! at 16; read in kernel-patches/bpf cc9ae575), after Caini and Firrincieli (International
//! Journal of Satellite Communications, 2004).
//!
//! Hybla makes a long-RTT flow grow as a flow of RTT `rtt0` (25 ms) would: with
//! `rho = srtt / rtt0` (at least 1, in eighths), slow start adds `2^rho - 1` segments per
//! ACK and congestion avoidance `rho^2 / cwnd`, both in 1/128 of a segment, the fractions
//! carried in `snd_cwnd_cents`. `2^rho` is `2^int(rho)` times a table of `2^(k/8)` in 1/128.
//! Each ACK counts once, whatever it acknowledges. `rho` is recomputed when the smoothed RTT
//! falls below the least seen so far (`init` takes the handshake's and sets `cwnd = rho`).
//! Outside Open it is Reno; a loss halves (`tcp_reno_ssthresh`); undo is
//! `tcp_reno_undo_cwnd` (the trait's default).
//!
//! The kernel reads `tp->srtt_us`, the smoothed RTT in 1/8 us; [`TcpState::srtt_us`] is that
//! shifted down by 3 (what `tcp_probe` reports). Both uses give the kernel's results exactly:
//! `srtt_us / (rtt0 * 1000) = floor(floor(srtt_us / 8) / (rtt0 * 125))`, and the test
//! `srtt_us < minrtt_us` differs from the shifted one only where the shifted values are
//! equal, where the kernel recomputes the same `rho` and keeps the same shifted minimum.

use crate::params::{ParamError, ParamSpec, Params};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::tcp::{CaState, TcpState};
use crate::CongestionControl;

/// `hybla_fraction`: `2^(k/8)` in 1/128 for the eighths of `rho`, k = 0..7.
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// `hybla_init`: the window clamp Hybla sets.
pub const CWND_CLAMP: u32 = 65535;
/// The largest `rho` the slow-start shift takes (`min(ca->rho, 16U)`).
const MAX_SHIFT: u32 = 16;

/// TCP Hybla (`struct hybla` and the module parameter).
#[derive(Clone, Debug)]
pub struct Hybla {
    /// `rtt0 * USEC_PER_MSEC / 8`: the reference RTT in the units of [`TcpState::srtt_us`].
    rtt0_us: u32,
    /// `hybla_en`: Open; otherwise Reno.
    enabled: bool,
    /// `snd_cwnd_cents`: the fractions of a segment not yet added, 1/128.
    cents: u32,
    /// `rho`: integer part.
    rho: u32,
    /// `rho_3ls`: rho in 1/8.
    rho_3ls: u32,
    /// `rho2_7ls`: rho^2 in 1/128.
    rho2_7ls: u32,
    /// `minrtt_us` shifted down by 3: the least smoothed RTT seen, us.
    min_srtt_us: u32,
}

impl Hybla {
    /// `module_param_cb(rtt0, ...)`, set with `param_set_uint_minmax(1, U32_MAX / 1000)`.
    pub const PARAMS: &'static [ParamSpec] = &[ParamSpec {
        name: "rtt0",
        default: 25.0,
        min: 1.0,
        max: 4_294_967.0,
        integer: true,
        unit: "ms",
        choices: &[],
        help: "reference RTT: a longer flow grows as one of this RTT would (rho = srtt / rtt0: 2^rho - 1 per ACK in slow start, rho^2 per RTT after)",
    }];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("hybla", Self::PARAMS)?;
        Ok(Hybla {
            rtt0_us: p.u32("rtt0") * 125,
            enabled: true,
            cents: 0,
            rho: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            min_srtt_us: 0,
        })
    }

    /// `hybla_recalc_param`.
    fn recalc(&mut self, tcp: &TcpState) {
        self.rho_3ls = (tcp.srtt_us / self.rtt0_us).max(8);
        self.rho = self.rho_3ls >> 3;
        // Wraps: u32 square and shift (rho_3ls past 2^15, srtt past 1 s per ms of rtt0 * 4).
        self.rho2_7ls = self.rho_3ls.wrapping_mul(self.rho_3ls) << 1;
    }
}

impl CongestionControl for Hybla {
    /// `hybla_init`: rho from the handshake's smoothed RTT; the window starts at rho.
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.rho = 0;
        self.rho_3ls = 0;
        self.rho2_7ls = 0;
        self.cents = 0;
        self.enabled = true;
        tcp.cwnd_clamp = CWND_CLAMP;
        self.recalc(tcp);
        self.min_srtt_us = tcp.srtt_us;
        tcp.cwnd = self.rho;
    }

    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        reno_ssthresh(tcp)
    }

    /// `hybla_cong_avoid`: one increment per ACK, `acked` unread (but by Reno's fallback).
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        if tcp.srtt_us < self.min_srtt_us {
            self.recalc(tcp);
            self.min_srtt_us = tcp.srtt_us;
        }
        if !tcp.cwnd_limited {
            return;
        }
        if !self.enabled {
            reno_cong_avoid(tcp, acked);
            return;
        }
        if self.rho == 0 {
            self.recalc(tcp);
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let slow_start = tcp.in_slow_start();
        let increment = if slow_start {
            // 2^rho - 1 segments: 2^int(rho) * 2^frac(rho), in 1/128.
            (1u32 << self.rho.min(MAX_SHIFT)) * FRACTIONS[rho_fractions as usize] - 128
        } else {
            // rho^2 / cwnd segments, in 1/128 (the kernel divides by a window of at least 1).
            let increment = self.rho2_7ls / tcp.cwnd.max(1);
            if increment < 128 {
                // Wraps: the kernel's u32 count.
                tcp.cwnd_cnt = tcp.cwnd_cnt.wrapping_add(1);
            }
            increment
        };
        let odd = increment % 128;
        // Wraps: the kernel's u32 window (tcp_snd_cwnd_set only warns).
        tcp.cwnd = tcp.cwnd.wrapping_add(increment >> 7);
        self.cents += odd;
        while self.cents >= 128 {
            tcp.cwnd = tcp.cwnd.wrapping_add(1);
            self.cents -= 128;
            tcp.cwnd_cnt = 0;
        }
        // Below 1/128 per ACK: one segment once a window of ACKs was counted.
        if increment == 0 && odd == 0 && tcp.cwnd_cnt >= tcp.cwnd {
            tcp.cwnd = tcp.cwnd.wrapping_add(1);
            tcp.cwnd_cnt = 0;
        }
        if slow_start {
            tcp.cwnd = tcp.cwnd.min(tcp.ssthresh);
        }
        tcp.cwnd = tcp.cwnd.min(tcp.cwnd_clamp);
    }

    /// `hybla_state`.
    fn set_state(&mut self, _tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        self.enabled = new_state == CaState::Open;
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("rho_eighths", f64::from(self.rho_3ls));
        out("cents", f64::from(self.cents));
        out("min_srtt_us", f64::from(self.min_srtt_us));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Started with a handshake srtt of `srtt_us`, then in slow start (ssthresh infinite)
    /// or congestion avoidance at `cwnd` (ssthresh 2).
    fn hybla(srtt_us: u32) -> (Hybla, TcpState) {
        let mut h = Hybla::new(&Params::new()).unwrap();
        let mut tcp = TcpState { srtt_us, ..TcpState::default() };
        h.init(&mut tcp, 0);
        (h, tcp)
    }

    #[test]
    fn rho_is_srtt_over_rtt0_in_eighths() {
        // srtt 100 ms, rtt0 25 ms: rho_3ls = 100000 / 3125 = 32, rho 4, rho^2 in 1/128 =
        // 32 * 32 * 2 = 2048 = 16 << 7. init sets cwnd = rho = 4 and the clamp 65535.
        let (h, tcp) = hybla(100_000);
        assert_eq!((h.rho_3ls, h.rho, h.rho2_7ls), (32, 4, 2048));
        assert_eq!((tcp.cwnd, tcp.cwnd_clamp), (4, 65535));
        // 40 ms: 40000 / 3125 = 12 (12.8): rho 1 and 4/8. Below 25 ms rho_3ls is floored
        // to 8: rho 1, Reno's growth.
        assert_eq!(hybla(40_000).0.rho_3ls, 12);
        assert_eq!(hybla(10_000).0.rho_3ls, 8);
        // The kernel's srtt_us is 8x ours: 8 * 78_124 + 7 = 624_999 < 625_000 = 25 * 1000 *
        // 25, so the kernel's rho_3ls is 24, and 78_124 / 3125 = 24 (24.99) too.
        assert_eq!(hybla(78_124).0.rho_3ls, 24);
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_per_ack() {
        // rho_3ls 32 (rho 4.0): increment = 2^4 * 128 - 128 = 1920 = 15 segments per ACK,
        // so each ACK multiplies the window's growth by 2^rho per RTT.
        let (mut h, mut tcp) = hybla(100_000);
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, h.cents), (4 + 15, 0));
        // An ACK of 5 segments counts once.
        h.cong_avoid(&mut tcp, 5, 0);
        assert_eq!(tcp.cwnd, 34);
        // rho_3ls 12 (rho 1.5): 2 * FRACTIONS[4] - 128 = 2 * 181 - 128 = 234 = 1 segment and
        // 106/128; the second ACK's 212/128 adds one more and keeps 84.
        let (mut h, mut tcp) = hybla(40_000);
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, h.cents), (1 + 1, 106));
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, h.cents), (2 + 1 + 1, 84));
        // Slow start stops at ssthresh.
        let (mut h, mut tcp) = hybla(100_000);
        tcp.ssthresh = 10;
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, 10);
    }

    #[test]
    fn rho_shift_is_capped_at_16() {
        // srtt 60 s: rho_3ls = 19200, rho 2400; 2^min(2400, 16) * 128 - 128 = 8388480 = 65535
        // segments in 1/128: the window is at the clamp.
        let (mut h, mut tcp) = hybla(60_000_000);
        tcp.cwnd = 10;
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, 65535);
    }

    #[test]
    fn congestion_avoidance_adds_rho_squared_over_cwnd() {
        // rho 4: 2048 / 100 = 20 (1/128) per ACK, counted in cwnd_cnt as below 128: six
        // ACKs leave 120 in cents, the seventh carries one segment and keeps 12.
        let (mut h, mut tcp) = hybla(100_000);
        (tcp.cwnd, tcp.ssthresh) = (100, 2);
        for _ in 0..6 {
            h.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!((tcp.cwnd, h.cents, tcp.cwnd_cnt), (100, 120, 6));
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, h.cents, tcp.cwnd_cnt), (101, 12, 0));
        // rho 1 (srtt 10 ms): 256 / 300 = 0: cwnd_cnt counts the ACKs, one segment per
        // window of them (Reno).
        let (mut h, mut tcp) = hybla(10_000);
        (tcp.cwnd, tcp.ssthresh) = (300, 2);
        for _ in 0..299 {
            h.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (300, 299));
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (301, 0));
    }

    #[test]
    fn a_lower_srtt_recomputes_rho_before_the_limited_test() {
        // Started at 100 ms (rho 4); an ACK at srtt 50 ms, not cwnd-limited: rho_3ls = 16
        // and the minimum 50000, the window untouched.
        let (mut h, mut tcp) = hybla(100_000);
        tcp.srtt_us = 50_000;
        tcp.cwnd_limited = false;
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((h.rho_3ls, h.min_srtt_us, tcp.cwnd), (16, 50_000, 4));
        // A higher srtt later does not raise rho.
        tcp.srtt_us = 200_000;
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(h.rho_3ls, 16);
        // Without a handshake sample (srtt 0 at init) the minimum is 0 and rho stays 1.
        let (mut h, mut tcp) = hybla(0);
        tcp.srtt_us = 100_000;
        h.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(h.rho_3ls, 8);
    }

    #[test]
    fn outside_open_it_is_reno() {
        // Disorder: tcp_reno_cong_avoid, one ACK of 3 in slow start adds 3.
        let (mut h, mut tcp) = hybla(100_000);
        h.set_state(&mut tcp, CaState::Disorder, 0);
        h.cong_avoid(&mut tcp, 3, 0);
        assert_eq!(tcp.cwnd, 7);
        assert_eq!(h.ssthresh(&TcpState { cwnd: 101, ..TcpState::default() }, 0), 50);
    }

    #[test]
    fn rho_squared_wraps_in_u32() {
        // rtt0 1 ms (125 in our units), srtt 4294 s: rho_3ls = 4_294_000_000 / 125 =
        // 34_352_000; its square times 2 wraps in u32 as the kernel's.
        let mut h = Hybla::new(&Params::new().set("rtt0", 1.0)).unwrap();
        let mut tcp = TcpState { srtt_us: 4_294_000_000, ..TcpState::default() };
        h.init(&mut tcp, 0);
        assert_eq!(h.rho_3ls, 34_352_000);
        assert_eq!(h.rho2_7ls, 34_352_000u32.wrapping_mul(34_352_000) << 1);
        let err = Hybla::new(&Params::new().set("rtt0", 0.0)).unwrap_err();
        assert!(err.0.contains("'rtt0'") && err.0.contains("[1, 4294967]"), "{err}");
    }
}
