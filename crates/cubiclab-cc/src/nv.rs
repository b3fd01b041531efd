//! `nv`: TCP-NV (New Vegas) as Linux ships it, `net/ipv4/tcp_nv.c` (Linux 6.x: the
//! `tcp_snd_cwnd()` accessors, the rate as `in_flight * 80000 / avg_rtt` with `do_div` and
//! the slope's `80000ULL * mss`; read in Kingxukai/linux 9b44fff6), by Lawrence Brakmo.
//!
//! Reno's growth (one segment per `max(4, cwnd)` ACKed, or per `cwnd << k` after `k` losses,
//! the growth factor creeping back one step per 9 uncongested decisions) while NV allows it.
//! On every ACK with an RTT sample in Open or Disorder, NV averages the RTT (half old, half
//! new), takes the delivery rate `in_flight * 80000 / avg_rtt` (hundreds of bits per second;
//! `in_flight` is the 6.x `ack_sample`'s, bytes delivered since the newest acknowledged
//! segment was sent) and keeps its round's largest, and the least average RTT. Once per round
//! (`snd_una` past the round's `snd_nxt`) it compares cwnd with `max_win`, the window the
//! round's rate fills at the least RTT plus `pad` segments: above it (after 2 rounds and 60
//! samples, or 30 in the first slow start) the window drops by 30% of the excess (at least
//! 2; the excess itself when at most 2) and ssthresh becomes `max_win`; at least 2 below it
//! (20 samples) growth is allowed again. A round that got a single call raises NV's own
//! least window (by 2, up to 81) instead. The least RTT is restarted from the one of the
//! last period every `reset_period` (3/4 to 5/4 of it, drawn from the run's seed; the first
//! after 2 s). A loss keeps 80% (`nv_loss_dec_factor` 819/1024, at least 2); undo is
//! `tcp_reno_undo_cwnd` (the trait's default).
//!
//! Sequence numbers are the kernel's bytes: `segments * mss` (wrapping), exact when every
//! segment carries `mss` bytes, as the simulator's and the kernel check's do. The kernel's
//! `jiffies` (unsigned long) is taken as its low 32 bits from the clock
//! ([`crate::clock::jiffies32`]), compared by `time_after_eq`: equal while a reset is less
//! than 2^31 jiffies away. Left out, as the module makes them moot: `nv_catchup` (never set),
//! the bounds of a `BPF_SOCK_OPS_BASE_RTT` program (none runs: `nv_base_rtt` is 0).

use crate::clock::jiffies32;
use crate::cubic_frame::HZ;
use crate::params::{ParamError, ParamSpec, Params};
use crate::random::KernelRandom;
use crate::seq::before;
use crate::tcp::{tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaState, TcpState, TCP_INFINITE_SSTHRESH};
use crate::CongestionControl;

/// `NV_INIT_RTT`: no RTT yet.
const INIT_RTT: u32 = u32::MAX;
/// `NV_MIN_CWND`: NV's own least window starts (and falls back) here.
const MIN_CWND: u8 = 4;
/// `NV_MIN_CWND_GROW`: its step when a round got a single call.
const MIN_CWND_GROW: u8 = 2;
/// `NV_TSO_CWND_BOUND`: its largest value is one more than this.
const TSO_CWND_BOUND: u8 = 80;
/// `nv_pad_buffer`: grow only this far below `max_win`.
const PAD_BUFFER: u32 = 2;
/// `nv_cong_dec_mult`: 30% of the excess, in 1/128 (`30 * 128 / 100`).
const CONG_DEC_MULT: u32 = 30 * 128 / 100;
/// `nv_ssthresh_factor`: ssthresh = `max_win * 8 >> 3`.
const SSTHRESH_FACTOR: u32 = 8;
/// `nv_rtt_factor`: the RTT average keeps 128/256 of the new sample.
const RTT_FACTOR: u64 = 128;
/// `nv_loss_dec_factor`: a loss keeps 819/1024 (80%).
pub(crate) const LOSS_DEC_FACTOR: u32 = 819;
/// `nv_cwnd_growth_rate_neg`: uncongested decisions before a negative growth factor rises.
const GROWTH_RATE_NEG: u32 = 8;
/// `nv_dec_eval_min_calls`, `nv_inc_eval_min_calls`, `nv_ssthresh_eval_min_calls`: samples
/// before a decrease, an increase, and a decrease in the first slow start.
const DEC_EVAL_MIN_CALLS: u8 = 60;
const INC_EVAL_MIN_CALLS: u8 = 20;
const SSTHRESH_EVAL_MIN_CALLS: u8 = 30;
/// `nv_stop_rtt_cnt`: rounds above `max_win` after which growth stops before a decision.
const STOP_RTT_CNT: u8 = 10;
/// `nv_rtt_min_cnt`: rounds before a congestion decision.
const RTT_MIN_CNT: u8 = 2;

/// TCP-NV (`struct tcpnv`).
#[derive(Clone, Debug)]
pub struct Nv {
    // Parameters (module parameters and CONFIG_HZ).
    pad: u32,
    reset_period: i32,
    min_cwnd: u32,
    hz: u32,
    // State.
    /// `nv_min_rtt_reset_jiffies`, low 32 bits.
    min_rtt_reset_jiffies: u32,
    /// `cwnd_growth_factor`: < 0, one segment per `cwnd << -f` ACKed; else per `cwnd >> f`.
    growth_factor: i8,
    allow_cwnd_growth: bool,
    /// `nv_reset`: a reduction happened; the round state restarts on return to Open.
    reset: bool,
    /// `nv_eval_call_cnt`: samples since the last decision (saturates at 255).
    eval_call_cnt: u8,
    /// `ca->nv_min_cwnd`: NV's own least window for a decision (4..=81).
    nv_min_cwnd: u8,
    /// `nv_rtt_cnt`: rounds without a decision (saturates at 255).
    rtt_cnt: u8,
    /// `nv_last_rtt`: the RTT average, us (0: none yet).
    last_rtt: u32,
    /// `nv_min_rtt`, `nv_min_rtt_new`: the least average RTT in use, and the one gathered
    /// for the next period, us.
    min_rtt: u32,
    min_rtt_new: u32,
    /// `nv_rtt_max_rate`: the round's largest rate, hundreds of bits per second.
    rtt_max_rate: u32,
    /// `nv_rtt_start_seq`, `nv_last_snd_una`: bytes.
    rtt_start_seq: u32,
    last_snd_una: u32,
    /// `nv_no_cong_cnt`: consecutive uncongested decisions.
    no_cong_cnt: u32,
    random: KernelRandom,
}

impl Nv {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "pad",
            default: 10.0,
            min: 0.0,
            max: 65535.0,
            integer: true,
            unit: "segments",
            help: "nv_pad: queued segments allowed above the rate's window before a decrease",
            choices: &[],
        },
        ParamSpec {
            name: "reset_period",
            default: 5.0,
            min: 0.0,
            // The kernel's int product nv_reset_period * (384 + 255) * HZ stays below 2^31
            // at HZ <= 10000 (beyond it, signed overflow).
            max: 336.0,
            integer: true,
            unit: "s",
            help: "nv_reset_period: the least RTT restarts every 3/4 to 5/4 of this",
            choices: &[],
        },
        ParamSpec {
            name: "min_cwnd",
            default: 2.0,
            min: 0.0,
            max: 65535.0,
            integer: true,
            unit: "segments",
            help: "nv_min_cwnd: NV's decisions never leave a smaller window",
            choices: &[],
        },
        HZ,
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("nv", Self::PARAMS)?;
        Ok(Nv {
            pad: p.u32("pad"),
            reset_period: p.u32("reset_period") as i32,
            min_cwnd: p.u32("min_cwnd"),
            hz: p.u32("hz"),
            min_rtt_reset_jiffies: 0,
            growth_factor: 0,
            allow_cwnd_growth: true,
            reset: false,
            eval_call_cnt: 0,
            nv_min_cwnd: MIN_CWND,
            rtt_cnt: 0,
            last_rtt: 0,
            min_rtt: INIT_RTT,
            min_rtt_new: INIT_RTT,
            rtt_max_rate: 0,
            rtt_start_seq: 0,
            last_snd_una: 0,
            no_cong_cnt: 0,
            random: KernelRandom::default(),
        })
    }

    /// `tcpnv_reset`: the round state from `snd_una`.
    fn restart(&mut self, tcp: &TcpState) {
        self.reset = false;
        self.no_cong_cnt = 0;
        self.rtt_cnt = 0;
        self.last_rtt = 0;
        self.rtt_max_rate = 0;
        self.rtt_start_seq = bytes(tcp, tcp.snd_una);
        self.eval_call_cnt = 0;
        self.last_snd_una = bytes(tcp, tcp.snd_una);
    }

    /// The period's end: `nv_reset_period * (384 + rand) * HZ >> 9` jiffies on, with `rand`
    /// one random byte (`get_random_bytes(&rand, 1)`).
    fn next_reset(&mut self, now: u32) -> u32 {
        let rand = self.random.below(256) as i32;
        // No wrap: the parameter's range keeps the int product below 2^31.
        let period = (self.reset_period * (384 + rand) * self.hz as i32) >> 9;
        // wraps: the low 32 bits of the kernel's unsigned long jiffies.
        now.wrapping_add(period as u32)
    }

    /// The once-per-round decision of `tcpnv_acked`, `bytes_acked` since the previous ACK.
    fn decide(&mut self, tcp: &mut TcpState, bytes_acked: u32) {
        let mss = tcp.mss;
        self.rtt_start_seq = bytes(tcp, tcp.snd_nxt);
        // u8 counts that stop at 255, as the module's `< 0xff` tests.
        self.rtt_cnt = self.rtt_cnt.saturating_add(1);
        // A single call in the round: the window is too small to measure; raise NV's least.
        // wraps: (u8 - 1) * mss_cache in u32, as the kernel's int promotion then u32.
        if self.eval_call_cnt == 1
            && bytes_acked >= u32::from(self.nv_min_cwnd - 1).wrapping_mul(mss)
            && self.nv_min_cwnd < TSO_CWND_BOUND + 1
        {
            self.nv_min_cwnd = (self.nv_min_cwnd + MIN_CWND_GROW).min(TSO_CWND_BOUND + 1);
            // wraps: byte sequence numbers.
            self.rtt_start_seq = bytes(tcp, tcp.snd_nxt).wrapping_add(u32::from(self.nv_min_cwnd).wrapping_mul(mss));
            self.eval_call_cnt = 0;
            self.allow_cwnd_growth = true;
            return;
        }
        // cwnd_by_slope = max_rate * min_rtt / (80000 * mss), truncated to u32 (wraps).
        let cwnd_by_slope = (u64::from(self.rtt_max_rate) * u64::from(self.min_rtt) / (80_000 * u64::from(mss))) as u32;
        // wraps: u32 + int in u32.
        let max_win = cwnd_by_slope.wrapping_add(self.pad);
        if tcp.cwnd > max_win {
            if self.rtt_cnt < RTT_MIN_CNT {
                return;
            } else if tcp.ssthresh == TCP_INFINITE_SSTHRESH {
                if self.eval_call_cnt < SSTHRESH_EVAL_MIN_CALLS {
                    return;
                }
            } else if self.eval_call_cnt < DEC_EVAL_MIN_CALLS {
                if self.allow_cwnd_growth && self.rtt_cnt > STOP_RTT_CNT {
                    self.allow_cwnd_growth = false;
                }
                return;
            }
            self.allow_cwnd_growth = false;
            // wraps: int * u32 in u32.
            tcp.ssthresh = SSTHRESH_FACTOR.wrapping_mul(max_win) >> 3;
            let excess = tcp.cwnd - max_win;
            if excess > 2 {
                // wraps: u32 product (past 2^27 segments of excess). dec < excess: no wrap below.
                let dec = (excess.wrapping_mul(CONG_DEC_MULT) >> 7).max(2);
                tcp.cwnd -= dec;
            } else {
                // `else if (nv_cong_dec_mult > 0)`: a constant 38.
                tcp.cwnd = max_win;
            }
            if self.growth_factor > 0 {
                self.growth_factor = 0;
            }
            self.no_cong_cnt = 0;
        // wraps: max_win - nv_pad_buffer in u32 (below 2 only when pad < 2).
        } else if tcp.cwnd <= max_win.wrapping_sub(PAD_BUFFER) {
            if self.eval_call_cnt < INC_EVAL_MIN_CALLS {
                return;
            }
            self.allow_cwnd_growth = true;
            // wraps: the kernel's u32 count.
            self.no_cong_cnt = self.no_cong_cnt.wrapping_add(1);
            // nv_cwnd_growth_rate_pos is 0: a non-negative factor never rises.
            if self.growth_factor < 0 && self.no_cong_cnt > GROWTH_RATE_NEG {
                self.growth_factor += 1;
                self.no_cong_cnt = 0;
            }
        } else {
            return;
        }
        self.eval_call_cnt = 0;
        self.rtt_cnt = 0;
        self.rtt_max_rate = 0;
        if tcp.cwnd < self.min_cwnd {
            tcp.cwnd = self.min_cwnd;
        }
    }
}

/// A sequence number in the kernel's bytes: `seq` segments of `mss` bytes.
#[inline]
fn bytes(tcp: &TcpState, seq: u32) -> u32 {
    // wraps: byte sequence numbers are u32 and wrap like the kernel's.
    seq.wrapping_mul(tcp.mss)
}

impl CongestionControl for Nv {
    /// `tcpnv_init`.
    fn init(&mut self, tcp: &mut TcpState, now_ns: u64) {
        self.restart(tcp);
        self.allow_cwnd_growth = true;
        // wraps: jiffies + 2 * HZ in the low 32 bits.
        self.min_rtt_reset_jiffies = jiffies32(now_ns, self.hz).wrapping_add(2 * self.hz);
        self.min_rtt = INIT_RTT;
        self.min_rtt_new = INIT_RTT;
        self.nv_min_cwnd = MIN_CWND;
        self.growth_factor = 0;
    }

    /// `tcpnv_recalc_ssthresh`: keep 819/1024, at least 2.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        // wraps: u32 product, as the kernel's (past 2^22 segments).
        (tcp.cwnd.wrapping_mul(LOSS_DEC_FACTOR) >> 10).max(2)
    }

    /// `tcpnv_cong_avoid`.
    fn cong_avoid(&mut self, tcp: &mut TcpState, mut acked: u32, _now_ns: u64) {
        if !tcp.cwnd_limited || !self.allow_cwnd_growth {
            return;
        }
        if tcp.in_slow_start() {
            acked = tcp_slow_start(tcp, acked);
            if acked == 0 {
                return;
            }
        }
        let cnt = if self.growth_factor < 0 {
            // wraps: u32 shift by up to 8, as the kernel's.
            tcp.cwnd << -self.growth_factor
        } else {
            (tcp.cwnd >> self.growth_factor).max(4)
        };
        tcp_cong_avoid_ai(tcp, cnt, acked);
    }

    /// `tcpnv_state`.
    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Open && self.reset {
            self.restart(tcp);
        } else if matches!(new_state, CaState::Loss | CaState::Cwr | CaState::Recovery) {
            self.reset = true;
            self.allow_cwnd_growth = false;
            if new_state == CaState::Loss {
                if self.growth_factor > 0 {
                    self.growth_factor = 0;
                }
                // nv_cwnd_growth_rate_neg > 0: one step slower, down to -8.
                if self.growth_factor > -8 {
                    self.growth_factor -= 1;
                }
            }
        }
    }

    /// `tcpnv_acked`.
    fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
        if sample.rtt_us < 0 || !matches!(tcp.ca_state, CaState::Open | CaState::Disorder) {
            return;
        }
        let una = bytes(tcp, tcp.snd_una);
        // wraps: byte sequence numbers.
        let bytes_acked = una.wrapping_sub(self.last_snd_una);
        self.last_snd_una = una;
        if sample.in_flight == 0 {
            return;
        }
        // The kernel's u32 avg_rtt from the s64 sample (truncated) and the u64 average.
        let avg_rtt = if self.last_rtt > 0 {
            ((sample.rtt_us as u64 * RTT_FACTOR + u64::from(self.last_rtt) * (256 - RTT_FACTOR)) >> 8) as u32
        } else {
            // wraps: the s64 sample truncated to the u32 avg_rtt, as the kernel's.
            let first = sample.rtt_us as u32;
            // wraps: u32 shift, as the kernel's.
            self.min_rtt = first << 1;
            first
        };
        self.last_rtt = avg_rtt;
        // Hundreds of bits per second: bytes * 8 * 10^6 / 100 / us; truncated to u32 (wraps).
        let rate = (u64::from(sample.in_flight) * 80_000 / u64::from(avg_rtt.max(1))) as u32;
        self.rtt_max_rate = self.rtt_max_rate.max(rate);
        self.eval_call_cnt = self.eval_call_cnt.saturating_add(1);
        self.min_rtt = self.min_rtt.min(avg_rtt);
        self.min_rtt_new = self.min_rtt_new.min(avg_rtt);
        let now = jiffies32(now_ns, self.hz);
        // time_after_eq(now, nv_min_rtt_reset_jiffies) on the low 32 bits.
        if now.wrapping_sub(self.min_rtt_reset_jiffies) as i32 >= 0 {
            self.min_rtt = self.min_rtt_new;
            self.min_rtt_new = INIT_RTT;
            self.min_rtt_reset_jiffies = self.next_reset(now);
            self.nv_min_cwnd = (self.nv_min_cwnd / 2).max(MIN_CWND);
        }
        if before(self.rtt_start_seq, una) {
            self.decide(tcp, bytes_acked);
        }
    }

    fn seed_random(&mut self, seed: u64) {
        self.random.seed(seed);
    }

    fn takes_run_seed(&self) -> bool {
        true
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("min_rtt_us", f64::from(self.min_rtt));
        out("rtt_max_rate_100bps", f64::from(self.rtt_max_rate));
        out("growth_factor", f64::from(self.growth_factor));
        out("allow_growth", f64::from(u8::from(self.allow_cwnd_growth)));
        out("nv_min_cwnd", f64::from(self.nv_min_cwnd));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    const MS: u64 = 1_000_000;

    fn nv() -> (Nv, TcpState) {
        let mut n = Nv::new(&Params::new()).unwrap();
        let mut tcp = TcpState { mss: MSS, cwnd: 200, ssthresh: 50, snd_nxt: 200, ..TcpState::default() };
        n.init(&mut tcp, 0);
        (n, tcp)
    }

    /// An ACK that moves `snd_una` on by `segs`, with `rtt_us` and `in_flight_segs` full
    /// segments in flight (the 6.x sample's bytes).
    fn ack(n: &mut Nv, tcp: &mut TcpState, segs: u32, rtt_us: i64, in_flight_segs: u32, now: u64) {
        tcp.snd_una += segs;
        n.pkts_acked(tcp, &AckSample { pkts_acked: segs, rtt_us, in_flight: in_flight_segs * MSS }, now);
    }

    #[test]
    fn a_loss_keeps_819_of_1024() {
        // (100 * 819) >> 10 = 81900 / 1024 = 79.98 -> 79; (2 * 819) >> 10 = 1 -> the floor 2.
        let (mut n, mut tcp) = nv();
        tcp.cwnd = 100;
        assert_eq!(n.ssthresh(&tcp, 0), 79);
        tcp.cwnd = 2;
        assert_eq!(n.ssthresh(&tcp, 0), 2);
    }

    #[test]
    fn the_rtt_average_starts_from_the_first_sample_and_keeps_half() {
        // First sample 10000: avg 10000 and nv_min_rtt = 20000, then min(20000, 10000).
        // Second 20000: (20000 * 128 + 10000 * 128) >> 8 = 15000.
        let (mut n, mut tcp) = nv();
        ack(&mut n, &mut tcp, 1, 10_000, 100, MS);
        assert_eq!((n.last_rtt, n.min_rtt), (10_000, 10_000));
        ack(&mut n, &mut tcp, 1, 20_000, 100, 2 * MS);
        assert_eq!((n.last_rtt, n.min_rtt, n.min_rtt_new), (15_000, 10_000, 10_000));
        // 100 segments of 1448 bytes in 10 ms: 144800 * 80000 / 10000 = 1158400 hundreds of
        // bits per second (115.84 Mbit/s); the 15 ms average gives 772266.
        assert_eq!(n.rtt_max_rate, 1_158_400);
    }

    #[test]
    fn the_rate_is_truncated_to_u32() {
        // (2^32 - 1) * 80000 / 1 = 80000 * 2^32 - 80000, whose low 32 bits are 2^32 - 80000.
        let (mut n, mut tcp) = nv();
        tcp.snd_una += 1;
        n.pkts_acked(&mut tcp, &AckSample { pkts_acked: 1, rtt_us: 1, in_flight: u32::MAX }, MS);
        assert_eq!(n.rtt_max_rate, 4_294_887_296);
    }

    #[test]
    fn a_congested_round_removes_30_percent_of_the_excess() {
        // 100 segments in flight over 10 ms at the least RTT of 10 ms: cwnd_by_slope =
        // 1158400 * 10000 / (80000 * 1448) = 100, max_win = 100 + pad 10 = 110. The first
        // round ends on the first ACK (rtt_cnt 1 < nv_rtt_min_cnt 2: no decision); the second
        // when snd_una passes that ACK's snd_nxt (200), after 200 samples (>= 60): ssthresh =
        // 8 * 110 >> 3 = 110 and cwnd 200 - (90 * 38 >> 7 = 26) = 174, growth stopped.
        let (mut n, mut tcp) = nv();
        ack(&mut n, &mut tcp, 1, 10_000, 100, MS);
        assert_eq!((n.rtt_cnt, n.rtt_start_seq), (1, 200 * MSS));
        for i in 0..199 {
            ack(&mut n, &mut tcp, 1, 10_000, 100, MS + i);
        }
        assert_eq!((tcp.cwnd, tcp.ssthresh, n.rtt_cnt), (200, 50, 1), "snd_una 200 is not past 200");
        ack(&mut n, &mut tcp, 1, 10_000, 100, 2 * MS);
        assert_eq!((tcp.cwnd, tcp.ssthresh), (174, 110));
        assert!(!n.allow_cwnd_growth);
        assert_eq!((n.rtt_cnt, n.eval_call_cnt, n.rtt_max_rate), (0, 0, 0));
        let before = tcp.cwnd;
        tcp.cwnd_limited = true;
        n.cong_avoid(&mut tcp, 500, 2 * MS);
        assert_eq!(tcp.cwnd, before, "no growth once congestion was found");
    }

    #[test]
    fn a_round_with_one_call_raises_nvs_least_window() {
        // One ACK of 4 segments ends the first round with eval_call_cnt 1 and bytes_acked
        // 4 * 1448 >= (4 - 1) * 1448: nv_min_cwnd 4 + 2 = 6 and the round is stretched by
        // 6 segments' bytes beyond snd_nxt.
        let (mut n, mut tcp) = nv();
        ack(&mut n, &mut tcp, 4, 10_000, 100, MS);
        assert_eq!((n.nv_min_cwnd, n.rtt_start_seq, n.eval_call_cnt), (6, 206 * MSS, 0));
        // With 3 segments (4344 bytes >= 4344) it grows too; with 2 it does not.
        let (mut n, mut tcp) = nv();
        ack(&mut n, &mut tcp, 2, 10_000, 100, MS);
        assert_eq!(n.nv_min_cwnd, 4);
    }

    #[test]
    fn losses_slow_growth_and_uncongested_rounds_restore_it() {
        // A loss: growth_factor -1, one segment per cwnd << 1 ACKed (20 at cwnd 10).
        let (mut n, mut tcp) = nv();
        n.set_state(&mut tcp, CaState::Loss, 0);
        assert_eq!((n.growth_factor, n.allow_cwnd_growth, n.reset), (-1, false, true));
        n.allow_cwnd_growth = true;
        tcp = TcpState { cwnd: 10, ssthresh: 5, cwnd_limited: true, mss: MSS, ..tcp };
        n.cong_avoid(&mut tcp, 19, 0);
        assert_eq!(tcp.cwnd, 10);
        n.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, 11);
        // Nine losses stop at -8 (nv_cwnd_growth_rate_neg > 0 and factor > -8).
        for _ in 0..9 {
            n.set_state(&mut tcp, CaState::Loss, 0);
        }
        assert_eq!(n.growth_factor, -8);
        // Uncongested decisions (cwnd 11 <= max_win 110 - 2, 20+ samples): the 9th raises the
        // factor one step (nv_no_cong_cnt > 8).
        n.set_state(&mut tcp, CaState::Open, 0);
        for round in 1..=9u32 {
            tcp.snd_nxt = tcp.snd_una + 30;
            for _ in 0..30 {
                ack(&mut n, &mut tcp, 1, 10_000, 100, MS);
            }
            ack(&mut n, &mut tcp, 1, 10_000, 100, MS);
            assert!(n.allow_cwnd_growth);
            assert_eq!(n.growth_factor, if round < 9 { -8 } else { -7 }, "round {round}");
        }
    }

    #[test]
    fn the_least_rtt_restarts_after_2_s_then_every_3_4_to_5_4_of_the_period() {
        // At jiffies 2 * HZ: nv_min_rtt takes the gathered one, nv_min_cwnd halves (at least 4)
        // and the next reset is 5 * (384 + rand) * 1000 >> 9 jiffies on: 3750 to 6240.
        let run = |seed: u64| {
            let (mut n, mut tcp) = nv();
            n.seed_random(seed);
            n.nv_min_cwnd = 12;
            ack(&mut n, &mut tcp, 1, 10_000, 100, MS);
            ack(&mut n, &mut tcp, 1, 9_000, 100, 1_999 * MS);
            assert_eq!((n.min_rtt, n.nv_min_cwnd), (9_500, 12));
            ack(&mut n, &mut tcp, 1, 30_000, 100, 2_000 * MS);
            assert_eq!((n.min_rtt, n.min_rtt_new, n.nv_min_cwnd), (9_500, INIT_RTT, 6));
            n.min_rtt_reset_jiffies - 2_000
        };
        let periods: Vec<u32> = (0..50).map(run).collect();
        assert!(periods.iter().all(|p| (3_750..=6_240).contains(p)), "{periods:?}");
        assert!(periods.iter().any(|&p| p != periods[0]), "the draw varies with the seed");
        assert_eq!(run(7), run(7), "and repeats with it");
    }
}
