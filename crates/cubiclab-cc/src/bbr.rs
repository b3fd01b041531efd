//! `bbr`: Linux BBR v1 as the kernel ships it, `net/ipv4/tcp_bbr.c` (read from a 6.x tree),
//! with its windowed max filter from `lib/win_minmax.c` ([`crate::minmax`]).
//!
//! BBR models the path as a bottleneck bandwidth (the max delivery rate of the last 10
//! packet-timed round trips) and a propagation delay (the min RTT of the last 10 s). It paces
//! at `pacing_gain * bw` and caps the window at `cwnd_gain * bw * min_rtt` plus allowances for
//! TSO bursts and ACK aggregation. Its state machine: STARTUP (gain 2/ln 2 until the bandwidth
//! stops growing by 25% for 3 rounds), DRAIN (the inverse gain until in-flight falls to one
//! BDP), PROBE_BW (gains 5/4, 3/4, then six rounds of 1, entered at a random phase), and
//! PROBE_RTT (4 packets for max(200 ms, one round) when min_rtt was not refreshed for 10 s).
//! A long-term estimator detects token-bucket policers (two lossy intervals of consistent
//! rate) and then paces at their average for 48 rounds.
//!
//! BBR replaces `cong_avoid` with `cong_control`: the host hands it a rate sample
//! ([`RateSample`], Linux `tcp_rate.c`) at the end of every ACK and leaves the window and
//! `sk_pacing_rate` to it. All arithmetic is the kernel's integers: bandwidth in packets per
//! microsecond scaled by 2^24 (`BW_SCALE`), gains in 1/256 (`BBR_SCALE`), `min_rtt_stamp` and
//! `probe_rtt_done_stamp` in jiffies (`tcp_jiffies32`, the `hz` parameter), delivery times in
//! microseconds (`tcp_mstamp`). Bit fields keep their widths where a value could exceed them
//! (the ACK-aggregation estimator's, [`crate::ack_aggregation`]).
//!
//! Randomness: the PROBE_BW entry phase is `CYCLE_LEN - 1 - get_random_u32_below(7)`; the
//! kernel's draw is replaced by a seeded generator ([`CongestionControl::seed_random`]).

use crate::ack_aggregation::{AckAggregation, EXTRA_ACKED_WIN_RTTS};
use crate::minmax::Minmax;
use crate::params::{ParamError, ParamSpec, Params};
use crate::random::KernelRandom;
use crate::seq::{after, before};
use crate::tcp::{CaEvent, CaState, RateSample, TcpState, TCP_INFINITE_SSTHRESH, TCP_INIT_CWND};
use crate::CongestionControl;

/// Bandwidth unit: packets per microsecond << 24 (~715 bit/s at 1500 bytes).
pub(crate) const BW_SCALE: u32 = 24;
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains are in 1/256.
pub(crate) const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Phases of the PROBE_BW gain cycle.
const CYCLE_LEN: u32 = 8;
/// Window of the bandwidth filter, round trips.
const BW_RTTS: u32 = CYCLE_LEN + 2;
/// Window of the min_rtt filter, seconds.
pub const MIN_RTT_WIN_SEC: u32 = 10;
/// Time at the minimum window in PROBE_RTT, ms.
const PROBE_RTT_MODE_MS: u32 = 200;
/// Below this pacing rate (bits/s) a TSO burst is one segment.
const MIN_TSO_RATE: u64 = 1_200_000;
/// Pace 1% below the estimated bandwidth.
const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln(2), the smallest gain that doubles the sending rate every round: 739/256.
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// 1/high_gain, to drain STARTUP's queue in about one round: 88/256.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// The steady-state cwnd gain: 2.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains: probe (5/4), drain (3/4), cruise (1) for six phases.
pub const PACING_GAIN: [u32; CYCLE_LEN as usize] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// The PROBE_BW entry phase is drawn among this many.
const CYCLE_RAND: u32 = 7;
/// The smallest window BBR aims for (two delayed-ACK pairs).
pub const CWND_MIN_TARGET: u32 = 4;
/// STARTUP ends after `FULL_BW_CNT` rounds without 25% bandwidth growth.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// Long-term (policer) estimator: interval length in rounds, loss threshold (50/256 ~ 20%),
/// consistency (rates within 1/8 or 4 kbit/s), and how long the policed rate is used.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u32 = 50;
const LT_BW_RATIO: u32 = BBR_UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` with the x86-64 distribution value
/// `MAX_TCP_HEADER` = 320 (`L1_CACHE_ALIGN(128 + MAX_HEADER)`, `MAX_HEADER` = 176).
pub(crate) const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// `tcp_stamp_us_delta`: `max(t1 - t0, 0)`.
#[inline]
pub(crate) fn stamp_us_delta(t1: u64, t0: u64) -> i64 {
    (t1.wrapping_sub(t0) as i64).max(0)
}

/// The congestion-control block, `struct bbr`.
#[derive(Clone, Debug)]
pub struct Bbr {
    hz: u64,
    /// The kernel's random numbers, seeded per run.
    rng: KernelRandom,
    min_rtt_us: u32,
    min_rtt_stamp: u32,
    probe_rtt_done_stamp: u32,
    bw: Minmax,
    rtt_cnt: u32,
    next_rtt_delivered: u32,
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u32,
    lt_last_delivered: u32,
    lt_last_stamp: u32,
    lt_last_lost: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    aggregation: AckAggregation,
}

impl Bbr {
    pub const PARAMS: &'static [ParamSpec] = &[ParamSpec {
        name: "hz",
        default: 1000.0,
        min: 10.0,
        max: 100_000.0,
        integer: true,
        unit: "Hz",
        help: "kernel HZ: jiffies per second of the min_rtt and PROBE_RTT clocks",
        choices: &[],
    }];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("bbr", Self::PARAMS)?;
        Ok(Self {
            hz: p.u64("hz"),
            rng: KernelRandom::default(),
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: Minmax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            aggregation: AckAggregation::default(),
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }

    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }

    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }

    /// The phase (`cycle_idx`) at which each of the first `n` PROBE_BW entries of a flow
    /// seeded with `seed` starts: `(CYCLE_LEN - 1 - draw + 1) mod CYCLE_LEN`. A replay of a
    /// kernel flow picks the seed whose phases are the ones the kernel drew.
    pub fn entry_phases(seed: u64, n: usize) -> Vec<u32> {
        let mut b = Self::new(&Params::new()).expect("default parameters are valid");
        b.seed_random(seed);
        (0..n).map(|_| (CYCLE_LEN - b.random_below(CYCLE_RAND)) & (CYCLE_LEN - 1)).collect()
    }

    /// `tcp_jiffies32` at `now_ns`.
    #[inline]
    fn jiffies(&self, now_ns: u64) -> u32 {
        (now_ns as u128 * self.hz as u128 / 1_000_000_000) as u32
    }

    /// `msecs_to_jiffies`.
    #[inline]
    fn msecs_to_jiffies(&self, ms: u32) -> u32 {
        crate::clock::msecs_to_jiffies(ms, self.hz as u32)
    }

    /// `get_random_u32_below(n)`.
    fn random_below(&mut self, n: u32) -> u32 {
        self.rng.below(n)
    }

    /// `bbr_max_bw`: the windowed max delivery rate, packets/us << 24.
    #[inline]
    fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// `bbr_bw`: the policed rate when the long-term estimator is in use, else the max.
    #[inline]
    fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_bw` in bytes per second (what `bbr_get_info` reports as `bbr_bw_lo/hi`).
    pub fn bw_bytes_per_sec(&self, mss: u32) -> u64 {
        (self.bw() as u64 * mss as u64 * 1_000_000) >> BW_SCALE
    }

    /// `bbr_rate_bytes_per_sec`: the multiplications in the kernel's order (no overflow up to
    /// ~2.9 Tbit/s at gain 2.89).
    fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
        let mut rate = rate.wrapping_mul(mss as u64);
        rate = rate.wrapping_mul(gain as u64);
        rate >>= BBR_SCALE;
        rate = rate.wrapping_mul(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT));
        rate >> BW_SCALE
    }

    /// `bbr_bw_to_pacing_rate`.
    fn bw_to_pacing_rate(tcp: &TcpState, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(tcp.mss, bw as u64, gain).min(tcp.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain * cwnd / srtt (1 ms before any sample).
    fn init_pacing_rate_from_rtt(&mut self, tcp: &mut TcpState) {
        let rtt_us = if tcp.srtt_us != 0 {
            self.has_seen_rtt = true;
            tcp.srtt_us.max(1)
        } else {
            1000
        };
        let bw = tcp.cwnd as u64 * BW_UNIT / rtt_us as u64;
        tcp.pacing_rate = Self::bw_to_pacing_rate(tcp, bw as u32, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: before the pipe is full, the rate only rises.
    fn set_pacing_rate(&mut self, tcp: &mut TcpState, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tcp, bw, gain);
        if !self.has_seen_rtt && tcp.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(tcp);
        }
        if self.full_bw_reached || rate > tcp.pacing_rate {
            tcp.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`: one segment per burst below 1.2 Mbit/s, else two.
    fn min_tso(tcp: &TcpState) -> u32 {
        if tcp.pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: segments in 1 ms (`>> sk_pacing_shift`) of pacing, at most 127.
    pub fn tso_segs_goal(tcp: &TcpState) -> u32 {
        let bytes = (tcp.pacing_rate >> tcp.pacing_shift).min(TSO_MAX_BYTES) as u32;
        (bytes / tcp.mss.max(1)).max(Self::min_tso(tcp)).min(0x7F)
    }

    /// `bbr_save_cwnd`: remember the last good window (not one cut by recovery or PROBE_RTT).
    fn save_cwnd(&mut self, tcp: &TcpState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tcp.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tcp.cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw * min_rtt * gain), or the initial window before any RTT sample.
    // The kernel's own rounding, `(x + BW_UNIT - 1) / BW_UNIT`, kept as written (not
    // `div_ceil`) so that the expression reads against the source line by line.
    #[allow(clippy::manual_div_ceil)]
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u64 * self.min_rtt_us as u64;
        (((w.wrapping_mul(gain as u64) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT) as u32
    }

    /// `bbr_quantization_budget`: room for three TSO bursts, rounded up to even, plus two
    /// packets in the probing phase so small BDPs still probe.
    fn quantization_budget(&self, tcp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.wrapping_add(3 * Self::tso_segs_goal(tcp));
        cwnd = cwnd.wrapping_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.wrapping_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, tcp: &TcpState, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tcp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in-flight at the next departure time, minus what the
    /// path delivers until then (plus the departing burst when inflight is meant to grow).
    fn packets_in_net_at_edt(&self, tcp: &TcpState, inflight_now: u32, now_ns: u64) -> u32 {
        let edt_ns = tcp.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1000;
        let interval_delivered = ((self.bw() as u64 * interval_us) >> BW_SCALE) as u32;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt = inflight_at_edt.wrapping_add(Self::tso_segs_goal(tcp));
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    /// `bbr_ack_aggregation_cwnd`: the extra_acked allowance once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        self.aggregation.cwnd(self.bw())
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of
    /// Recovery, the saved window restored when it ends. Returns the window and whether
    /// packet conservation decides it.
    fn set_cwnd_to_recover_or_restore(&mut self, tcp: &TcpState, rs: &RateSample, acked: u32) -> (u32, bool) {
        let (prev_state, state) = (self.prev_ca_state, tcp.ca_state);
        let mut cwnd = tcp.cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd.wrapping_sub(rs.losses) as i32).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = tcp.delivered;
            cwnd = tcp.in_flight + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(tcp.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: slow-start toward the target (bdp * gain + aggregation + TSO budget),
    /// or snap down to it once the pipe has been full; 4 packets in PROBE_RTT.
    fn set_cwnd(&mut self, tcp: &mut TcpState, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tcp.cwnd;
        if acked != 0 {
            let (c, conservation) = self.set_cwnd_to_recover_or_restore(tcp, rs, acked);
            cwnd = c;
            if !conservation {
                let mut target = self.bdp(bw, gain);
                target = target.wrapping_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(tcp, target);
                if self.full_bw_reached {
                    cwnd = cwnd.wrapping_add(acked).min(target);
                } else if cwnd < target || tcp.delivered < TCP_INIT_CWND {
                    cwnd = cwnd.wrapping_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tcp.cwnd = cwnd.min(tcp.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tcp.cwnd = tcp.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`: a phase lasts min_rtt; the probing phase also waits for
    /// in-flight to reach gain * BDP (or a loss), the draining phase ends early once
    /// in-flight is down to one BDP.
    fn is_next_cycle_phase(&self, tcp: &TcpState, rs: &RateSample, now_ns: u64) -> bool {
        let is_full_length = stamp_us_delta(tcp.delivered_mstamp_us, self.cycle_mstamp) > self.min_rtt_us as i64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tcp, rs.prior_in_flight, now_ns);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tcp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tcp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tcp: &TcpState) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = tcp.delivered_mstamp_us;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, tcp: &TcpState, rs: &RateSample, now_ns: u64) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tcp, rs, now_ns) {
            self.advance_cycle_phase(tcp);
        }
    }

    /// `bbr_reset_probe_bw_mode`: enter the cycle at a random phase other than the draining
    /// one (index 7 - r for r in 0..7, then advanced: 2..=7 or 0).
    fn reset_probe_bw_mode(&mut self, tcp: &TcpState) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(CYCLE_RAND);
        self.advance_cycle_phase(tcp);
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, tcp: &TcpState) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(tcp);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tcp: &TcpState) {
        self.lt_last_stamp = (tcp.delivered_mstamp_us / 1000) as u32;
        self.lt_last_delivered = tcp.delivered;
        self.lt_last_lost = tcp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, tcp: &TcpState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tcp);
    }

    /// `bbr_lt_bw_interval_done`: two consecutive intervals within 1/8 (or 4 kbit/s) of each
    /// other mean a policer; use their average.
    fn lt_bw_interval_done(&mut self, tcp: &TcpState, bw: u32) {
        if self.lt_bw != 0 {
            // The kernel's abs() of a u32 difference goes through a signed int.
            let diff = (bw.wrapping_sub(self.lt_bw) as i32).unsigned_abs();
            if diff.wrapping_mul(BBR_UNIT) <= LT_BW_RATIO.wrapping_mul(self.lt_bw)
                || Self::rate_bytes_per_sec(tcp.mss, diff as u64, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = ((bw as u64 + self.lt_bw as u64) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tcp);
    }

    /// `bbr_lt_bw_sampling`: the long-term (policer) estimator.
    fn lt_bw_sampling(&mut self, tcp: &TcpState, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tcp);
                    self.reset_probe_bw_mode(tcp);
                }
            }
            return;
        }
        // Sampling starts at the first loss, once the policer's tokens are spent.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tcp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        // An interval ends at a loss, when the tokens are exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost = tcp.lost.wrapping_sub(self.lt_last_lost);
        let delivered = tcp.delivered.wrapping_sub(self.lt_last_delivered);
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH.wrapping_mul(delivered) {
            return;
        }
        let mut t = ((tcp.delivered_mstamp_us / 1000) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return;
        }
        if t >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        t *= 1000;
        let bw = delivered as u64 * BW_UNIT / t as u64;
        self.lt_bw_interval_done(tcp, bw as u32);
    }

    /// `bbr_update_bw`: count packet-timed rounds and feed the max filter.
    fn update_bw(&mut self, tcp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if !before(rs.prior_delivered, self.next_rtt_delivered) {
            self.next_rtt_delivered = tcp.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tcp, rs);
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        // An app-limited sample counts only if it beats the model.
        if !rs.is_app_limited || bw >= self.max_bw() as u64 {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw as u32);
        }
    }

    /// `bbr_update_ack_aggregation`: the max excess over 5-10 rounds.
    fn update_ack_aggregation(&mut self, tcp: &TcpState, rs: &RateSample) {
        let bw = self.bw();
        self.aggregation.update(rs, self.round_start, EXTRA_ACKED_WIN_RTTS, bw, tcp.delivered_mstamp_us, tcp.cwnd);
    }

    /// `bbr_check_full_bw_reached`: three non-app-limited rounds without 25% growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP -> DRAIN when the pipe is full (ssthresh is set to one BDP
    /// for the record), DRAIN -> PROBE_BW once in-flight at the next departure is one BDP.
    fn check_drain(&mut self, tcp: &mut TcpState, now_ns: u64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tcp.ssthresh = self.inflight(tcp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tcp, tcp.in_flight, now_ns) <= self.inflight(tcp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tcp);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, tcp: &mut TcpState, now_ns: u64) {
        let j = self.jiffies(now_ns);
        if !(self.probe_rtt_done_stamp != 0 && after(j, self.probe_rtt_done_stamp)) {
            return;
        }
        self.min_rtt_stamp = j;
        tcp.cwnd = tcp.cwnd.max(self.prior_cwnd);
        self.reset_mode(tcp);
    }

    /// `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT entry and exit.
    fn update_min_rtt(&mut self, tcp: &mut TcpState, rs: &RateSample, now_ns: u64) {
        let j = self.jiffies(now_ns);
        let filter_expired = after(j, self.min_rtt_stamp.wrapping_add(MIN_RTT_WIN_SEC * self.hz as u32));
        if rs.rtt_us >= 0 && (rs.rtt_us <= self.min_rtt_us as i64 || (filter_expired && !rs.is_ack_delayed)) {
            self.min_rtt_us = rs.rtt_us as u32;
            self.min_rtt_stamp = j;
        }
        if PROBE_RTT_MODE_MS > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tcp);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at the minimum window say nothing about the bandwidth.
            tcp.set_app_limited(tcp.in_flight);
            if self.probe_rtt_done_stamp == 0 && tcp.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = j.wrapping_add(self.msecs_to_jiffies(PROBE_RTT_MODE_MS));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tcp.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tcp, now_ns);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] }, CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }
}

impl CongestionControl for Bbr {
    /// `bbr_init`.
    fn init(&mut self, tcp: &mut TcpState, now_ns: u64) {
        self.prior_cwnd = 0;
        tcp.ssthresh = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = tcp.min_rtt_us;
        self.min_rtt_stamp = self.jiffies(now_ns);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tcp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tcp);
        self.mode = Mode::Startup;
        self.aggregation.reset(now_ns / 1000);
        // sk_pacing_status: SK_PACING_NONE -> SK_PACING_NEEDED (the stack paces if fq does not).
        tcp.paced = true;
    }

    /// `bbr_ssthresh`: entering recovery, save the window; the threshold is left as is.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        self.save_cwnd(tcp);
        tcp.ssthresh
    }

    /// Never called: BBR has `cong_control`.
    fn cong_avoid(&mut self, _tcp: &mut TcpState, _acked: u32, _now_ns: u64) {}

    /// `bbr_set_state`: a timeout ends the round, forgets full_bw and counts as a loss for
    /// the long-term estimator.
    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Loss {
            let rs = RateSample { losses: 1, ..RateSample::default() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(tcp, &rs);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle while app-limited, pace at the estimated rate.
    fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, now_ns: u64) {
        if event == CaEvent::TxStart && tcp.app_limited != 0 {
            self.idle_restart = true;
            self.aggregation.restart_epoch(now_ns / 1000);
            if self.mode == Mode::ProbeBw {
                self.set_pacing_rate(tcp, self.bw(), BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tcp, now_ns);
            }
        }
    }

    /// `bbr_undo_cwnd`: a spurious slow-down; restart full-pipe detection, keep the window.
    fn undo_cwnd(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tcp);
        tcp.cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`: update the model, then the pacing rate and the window.
    fn cong_control(&mut self, tcp: &mut TcpState, rs: &RateSample, now_ns: u64) {
        self.update_bw(tcp, rs);
        self.update_ack_aggregation(tcp, rs);
        self.update_cycle_phase(tcp, rs, now_ns);
        self.check_full_bw_reached(rs);
        self.check_drain(tcp, now_ns);
        self.update_min_rtt(tcp, rs, now_ns);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(tcp, bw, self.pacing_gain);
        self.set_cwnd(tcp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    fn min_tso_segs(&self, tcp: &TcpState) -> Option<u32> {
        Some(Self::min_tso(tcp))
    }

    fn seed_random(&mut self, seed: u64) {
        self.rng.seed(seed);
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("mode", self.mode as u8 as f64);
        out("bw", self.bw() as f64);
        out("min_rtt_us", self.min_rtt_us as f64);
        out("pacing_gain", self.pacing_gain as f64);
        out("cwnd_gain", self.cwnd_gain as f64);
        out("cycle_idx", self.cycle_idx as f64);
        out("full_bw_reached", self.full_bw_reached as u8 as f64);
        out("rtt_cnt", self.rtt_cnt as f64);
        out("lt_use_bw", self.lt_use_bw as u8 as f64);
        out("lt_bw", self.lt_bw as f64);
        out("extra_acked", self.aggregation.extra_acked() as f64);
        out("prior_cwnd", self.prior_cwnd as f64);
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
