//! `bbr3`: BBRv3 as Google publishes it, `net/ipv4/tcp_bbr.c` of github.com/google/bbr,
//! branch v3, at commit 001a430b3ddbbc6d9173061a74d8b580c757b91b (`BBR_VERSION 3`).
//! `bbr` stays BBR v1 ([`crate::bbr`]).
//!
//! v3 keeps v1's model (max bandwidth, min RTT, pacing at `gain * bw`) and bounds it by what
//! loss and ECN say: a long-term upper bound on the data in flight (`inflight_hi`, cut to
//! the in-flight level at which loss passed 2% or CE marks 50% of a probe, and at most by
//! `beta` = 0.3 below the target) and short-term lower bounds (`bw_lo`, `inflight_lo`, cut
//! multiplicatively per round with loss or ECN outside of probing: by 30%, or by
//! `ecn_factor * ecn_alpha`, never below what the last round delivered). PROBE_BW is four
//! phases in place of v1's eight-phase gain cycle: DOWN (gain 0.91, until in flight is below
//! both the BDP and `inflight_hi` less 15% headroom), CRUISE (gain 1), REFILL (gain 1, one
//! round at `inflight_hi`), UP (gain 1.25, `inflight_hi` grown by 1, 2, 4, ... packets per
//! round while the window is full). A cycle's probe starts after a random 2-3 s, or sooner
//! after `min(63, BDP)` rounds (Reno coexistence), or at once in a cycle that saw CE marks
//! but no loss (the source's comment says "when the ECN marks cease"; its test is only that
//! the cycle had marks, so with steady marking v3 probes cycle after cycle). STARTUP
//! ends on a bandwidth plateau (3 rounds under 25% growth, counted per sample), on 6 loss
//! events with more than 2% loss in a Recovery round, or on 2 rounds of CE ratio above 50%.
//! PROBE_RTT comes every 5 s (v1: 10 s) at half the BDP (v1: 4 packets).
//!
//! ECN: the sender uses CE marks only on a route the kernel marks as a shallow-threshold ECN
//! environment (`TCP_ECN_LOW`, the `ecn_low` parameter here) and only at min RTTs up to
//! `ecn_max_rtt_us` (5 ms). With `ecn_low` the connection negotiates ECN (a route with
//! `features ecn ecn_low`) and the receiver echoes each segment's CE state exactly (v3's
//! `TCP_CONG_WANTS_CE_EVENTS` with `bbr_precise_ece_ack`, the DCTCP receiver), which is what
//! [`CongestionControl::needs_ecn`] gives. The CE ratio per round is `delivered_ce /
//! delivered` from the connection's counters (`tcp_count_delivered`), its EWMA `ecn_alpha`.
//!
//! The host gives v3 what its TCP core adds to Linux's: the rate sample's `tx_in_flight`,
//! `lost`, `delivered_ce` and `is_ece` ([`RateSample`]) and `tp->is_cwnd_limited`
//! ([`TcpState::is_cwnd_limited`]). The `skb_marked_lost` hook is modelled in half: its
//! `bbr_note_loss` runs at the start of `cong_control` for the packets the ACK marked lost
//! (a timeout's marks are not noted); its probe check (the lost packet's own flight, and
//! `bbr_inflight_hi_from_lost_skb`'s prefix of it at which loss crossed 2%) is left to the
//! ACK's sample, whose `tx_in_flight` then bounds `inflight_hi`. Not modelled: `CA_EVENT_TLP_RECOVERY`, PLB (off by default, `tcp_plb_enabled` = 0), the
//! receiver-side `fast_ack_mode`, and `tso_segs` (the host's `tcp_tso_autosize` with the
//! sysctl's floor of 2 segments gives the same burst at the default GSO size and MSS).
//!
//! All arithmetic is the kernel's: bandwidth in packets per microsecond << 24, gains and
//! fractions in 1/256, `min_rtt_stamp`, `probe_rtt_min_stamp` and `probe_rtt_done_stamp` in
//! jiffies (the `hz` parameter), the cycle and ACK-epoch clocks in microseconds. The
//! kernel's bit fields keep their widths where a value could exceed them.
//!
//! Randomness: the probe wait (`rounds_since_probe` starts at a draw below
//! `bw_probe_rand_rounds`, the wall-clock wait adds a draw below `bw_probe_rand_us`) comes
//! from the run's seed ([`CongestionControl::seed_random`]).

use crate::ack_aggregation::{AckAggregation, EXTRA_ACKED_WIN_RTTS};
use crate::bbr::{stamp_us_delta, Bbr, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, TSO_MAX_BYTES};
use crate::clock::jiffies32;
use crate::host::pacing::TCP_MIN_TSO_SEGS;
use crate::params::{ParamError, ParamSpec, Params};
use crate::random::KernelRandom;
use crate::seq::{after, before};
use crate::tcp::{CaEvent, CaState, RateSample, TcpState, TCP_INFINITE_SSTHRESH};
use crate::CongestionControl;

/// `GSO_LEGACY_MAX_SIZE`: the TSO budget's RTT allowance starts from 64 KB.
const GSO_LEGACY_MAX_SIZE: u64 = 65536;
/// `bbr_tso_rtt_shift`: the RTT allowance halves per 2^9 us of min_rtt.
const TSO_RTT_SHIFT: u32 = 9;
/// `bbr_pacing_margin_percent`: pace 1% below the estimated bandwidth.
const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_startup_pacing_gain`: 4 ln 2, the least gain that doubles the rate per round while
/// sending what slow start would: 710/256.
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// `bbr_startup_cwnd_gain`: 2.
pub const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_drain_gain`: 1/2.885 (88/256), to drain STARTUP's queue in about one round.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: the steady-state window is 2 BDP.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`, indexed by the PROBE_BW phase: UP 5/4, DOWN 91/100, CRUISE and
/// REFILL 1.
pub const PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT];
/// `bbr_probe_rtt_cwnd_gain`: PROBE_RTT holds half a BDP.
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// `bbr_cwnd_min_target`.
pub const CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh`, `bbr_full_bw_cnt`: a plateau is 3 rounds under 25% growth.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// `bbr_fast_path`: skip the model update on app-limited samples that change nothing.
const FAST_PATH: bool = true;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// `enum bbr_pacing_gain_phase`: the PROBE_BW phase (`cycle_idx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// `enum bbr_ack_phase`: how the ACKs now arriving relate to bandwidth probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The tunables (`bbr_param(sk, name)`: static constants in this version of the source,
/// parameters here), fractions in 1/256.
#[derive(Clone, Debug)]
struct Config {
    hz: u32,
    ecn_low: bool,
    /// `bbr_beta` (the parameter `loss_decrease`: a beta here is what is kept).
    beta: u32,
    loss_thresh: u32,
    ecn_factor: u32,
    ecn_thresh: u32,
    ecn_alpha_gain: u32,
    ecn_alpha_init: u32,
    ecn_max_rtt_us: u32,
    ecn_reprobe_gain: u32,
    inflight_headroom: u32,
    bw_probe_cwnd_gain: u32,
    bw_probe_max_rounds: u32,
    bw_probe_rand_rounds: u32,
    bw_probe_base_us: u32,
    bw_probe_rand_us: u32,
    full_loss_cnt: u32,
    full_ecn_cnt: u32,
    probe_rtt_mode_ms: u32,
    probe_rtt_win_ms: u32,
}

/// The congestion-control block, `struct bbr` (v3).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    cfg: Config,
    rng: KernelRandom,
    min_rtt_us: u32,
    min_rtt_stamp: u32,
    probe_rtt_done_stamp: u32,
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u32,
    next_rtt_delivered: u32,
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    round_start: bool,
    /// 5-bit field; `bbr_raise_inflight_hi_slope` keeps it at most 30.
    bw_probe_up_rounds: u32,
    try_fast_path: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    /// 7-bit field: `min(0x7F, cwnd)` at init.
    init_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    /// 2-bit field, at most `FULL_BW_CNT`.
    full_bw_cnt: u32,
    cycle_idx: Phase,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    aggregation: AckAggregation,
    full_bw_now: bool,
    /// 2-bit field.
    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u32,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    bw_latest: u32,
    bw_lo: u32,
    bw_hi: [u32; 2],
    inflight_latest: u32,
    inflight_lo: u32,
    inflight_hi: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    probe_wait_us: u32,
    ecn_eligible: bool,
    /// 9-bit field, 0..=256.
    ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    /// 8-bit field, saturating at 0xFF.
    rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    ack_phase: AckPhase,
    /// 4-bit field, saturating at 0xF.
    loss_events_in_round: u32,
    initialized: bool,
    alpha_last_delivered: u32,
    alpha_last_delivered_ce: u32,
}

/// A fraction in 1/256 as a parameter.
const fn fraction(name: &'static str, default: u32, min: u32, help: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        default: default as f64,
        min: min as f64,
        max: BBR_UNIT as f64,
        integer: true,
        unit: "1/256",
        choices: &[],
        help,
    }
}

/// A count or a time as a parameter.
const fn count(
    name: &'static str,
    default: u32,
    min: u32,
    max: u32,
    unit: &'static str,
    help: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        default: default as f64,
        min: min as f64,
        max: max as f64,
        integer: true,
        unit,
        choices: &[],
        help,
    }
}

impl Bbr3 {
    pub const PARAMS: &'static [ParamSpec] = &[
        Bbr::PARAMS[0],
        ParamSpec::switch(
            "ecn_low",
            false,
            "the route is a shallow-threshold ECN environment (TCP_ECN_LOW): negotiate ECN and react to CE marks",
        ),
        fraction("loss_decrease", BBR_UNIT * 30 / 100, 0, "bbr_beta (a fraction removed): cut of bw_lo and inflight_lo per lossy round, and most cut of inflight_hi below the target on a too-lossy probe"),
        count("loss_thresh", BBR_UNIT * 2 / 100, 1, BBR_UNIT - 1, "1/256", "bbr_loss_thresh: loss rate of a probe's flight that is too high"),
        fraction("ecn_factor", BBR_UNIT / 3, 0, "bbr_ecn_factor: inflight_lo is cut to 1 - ecn_factor * ecn_alpha per marked round (0: no ECN response)"),
        fraction("ecn_thresh", BBR_UNIT / 2, 0, "bbr_ecn_thresh: CE ratio that ends a probe or STARTUP (0: never)"),
        fraction("ecn_alpha_gain", BBR_UNIT / 16, 0, "bbr_ecn_alpha_gain: EWMA gain of the per-round CE ratio"),
        fraction("ecn_alpha_init", BBR_UNIT, 0, "bbr_ecn_alpha_init: ecn_alpha of a new connection"),
        count("ecn_max_rtt_us", 5000, 0, 10_000_000, "us", "bbr_ecn_max_rtt_us: ECN is used only at min RTTs up to this (0: any)"),
        fraction("ecn_reprobe_gain", BBR_UNIT / 2, 0, "bbr_ecn_reprobe_gain: first-round inflight_hi growth, as a fraction of it, of the probe a cycle with CE marks and no loss starts at once (0: no such probe)"),
        fraction("inflight_headroom", BBR_UNIT * 15 / 100, 0, "bbr_inflight_headroom: share of inflight_hi left unused when cruising"),
        count("bw_probe_cwnd_gain", 1, 0, 3, "1/4", "bbr_bw_probe_cwnd_gain: cwnd gain added in PROBE_UP"),
        count("bw_probe_max_rounds", 63, 1, 255, "rounds", "bbr_bw_probe_max_rounds: most rounds between probes (Reno coexistence)"),
        count("bw_probe_rand_rounds", 2, 1, 255, "rounds", "bbr_bw_probe_rand_rounds: random head start of the round count"),
        count("bw_probe_base_us", 2_000_000, 0, 100_000_000, "us", "bbr_bw_probe_base_us: least wall-clock time between probes"),
        count("bw_probe_rand_us", 1_000_000, 1, 100_000_000, "us", "bbr_bw_probe_rand_us: random extra wall-clock time between probes"),
        count("full_loss_cnt", 6, 0, 15, "events", "bbr_full_loss_cnt: loss events in a Recovery round that end STARTUP (0: never)"),
        count("full_ecn_cnt", 2, 0, 3, "rounds", "bbr_full_ecn_cnt: rounds with a high CE ratio that end STARTUP (0: never)"),
        count("probe_rtt_mode_ms", 200, 0, 10_000, "ms", "bbr_probe_rtt_mode_ms: least time in PROBE_RTT (0: no PROBE_RTT)"),
        count("probe_rtt_win_ms", 5000, 1, 10_000, "ms", "bbr_probe_rtt_win_ms: PROBE_RTT comes when min_rtt was not refreshed for this long"),
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("bbr3", Self::PARAMS)?;
        let cfg = Config {
            hz: p.u32("hz"),
            ecn_low: p.bool("ecn_low"),
            beta: p.u32("loss_decrease"),
            loss_thresh: p.u32("loss_thresh"),
            ecn_factor: p.u32("ecn_factor"),
            ecn_thresh: p.u32("ecn_thresh"),
            ecn_alpha_gain: p.u32("ecn_alpha_gain"),
            ecn_alpha_init: p.u32("ecn_alpha_init"),
            ecn_max_rtt_us: p.u32("ecn_max_rtt_us"),
            ecn_reprobe_gain: p.u32("ecn_reprobe_gain"),
            inflight_headroom: p.u32("inflight_headroom"),
            bw_probe_cwnd_gain: p.u32("bw_probe_cwnd_gain"),
            bw_probe_max_rounds: p.u32("bw_probe_max_rounds"),
            bw_probe_rand_rounds: p.u32("bw_probe_rand_rounds"),
            bw_probe_base_us: p.u32("bw_probe_base_us"),
            bw_probe_rand_us: p.u32("bw_probe_rand_us"),
            full_loss_cnt: p.u32("full_loss_cnt"),
            full_ecn_cnt: p.u32("full_ecn_cnt"),
            probe_rtt_mode_ms: p.u32("probe_rtt_mode_ms"),
            probe_rtt_win_ms: p.u32("probe_rtt_win_ms"),
        };
        Ok(Self {
            cfg,
            rng: KernelRandom::default(),
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            init_cwnd: 0,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            aggregation: AckAggregation::default(),
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            bw_lo: u32::MAX,
            bw_hi: [0; 2],
            inflight_latest: 0,
            inflight_lo: u32::MAX,
            inflight_hi: u32::MAX,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: BBR_UNIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            initialized: false,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn phase(&self) -> Phase {
        self.cycle_idx
    }

    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }

    pub fn inflight_hi(&self) -> u32 {
        self.inflight_hi
    }

    pub fn inflight_lo(&self) -> u32 {
        self.inflight_lo
    }

    pub fn bw_lo(&self) -> u32 {
        self.bw_lo
    }

    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// `tcp_jiffies32`.
    #[inline]
    fn jiffies(&self, now_ns: u64) -> u32 {
        jiffies32(now_ns, self.cfg.hz)
    }

    /// `msecs_to_jiffies`.
    #[inline]
    fn msecs_to_jiffies(&self, ms: u32) -> u32 {
        crate::clock::msecs_to_jiffies(ms, self.cfg.hz)
    }

    /// `bbr_can_use_ecn`: ECN negotiated (`ecn_low` makes the connection negotiate it) on a
    /// shallow-threshold route.
    #[inline]
    fn can_use_ecn(&self) -> bool {
        self.cfg.ecn_low
    }

    /// `bbr_max_bw`: the max of the last one or two PROBE_BW cycles.
    #[inline]
    fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `bbr_bw`: the max, bounded by the short-term `bw_lo`.
    #[inline]
    fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    /// `bbr_rate_bytes_per_sec`: the multiplications in the kernel's order, at least 1.
    fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32, margin: u64) -> u64 {
        // wraps: u64 as in the kernel (no overflow up to ~2.9 Tbit/s at gain 2.89).
        let mut rate = rate.wrapping_mul(mss as u64);
        rate = rate.wrapping_mul(gain as u64);
        rate >>= BBR_SCALE;
        rate = rate.wrapping_mul(1_000_000 / 100 * (100 - margin));
        rate >>= BW_SCALE;
        rate.max(1)
    }

    /// `bbr_bw_to_pacing_rate`.
    fn bw_to_pacing_rate(tcp: &TcpState, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(tcp.mss, bw as u64, gain, PACING_MARGIN_PERCENT).min(tcp.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt`: startup gain * cwnd / srtt (1 ms before a sample).
    fn init_pacing_rate_from_rtt(&mut self, tcp: &mut TcpState) {
        let rtt_us = if tcp.srtt_us != 0 {
            self.has_seen_rtt = true;
            tcp.srtt_us.max(1)
        } else {
            1000
        };
        let bw = tcp.cwnd as u64 * BW_UNIT / rtt_us as u64;
        // wraps: bbr_bw_to_pacing_rate takes a u32 bw.
        tcp.pacing_rate = Self::bw_to_pacing_rate(tcp, bw as u32, STARTUP_PACING_GAIN);
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

    /// `bbr_tso_segs_goal` (`bbr_tso_segs_generic` at the legacy GSO size): 1 ms of pacing
    /// (`>> sk_pacing_shift`) plus 64 KB halved per 512 us of min_rtt, at least
    /// `tcp_min_tso_segs`.
    fn tso_segs_goal(&self, tcp: &TcpState) -> u32 {
        let mut bytes = tcp.pacing_rate >> tcp.pacing_shift;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < u32::BITS {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        let bytes = bytes.min(TSO_MAX_BYTES) as u32;
        (bytes / tcp.mss.max(1)).max(TCP_MIN_TSO_SEGS)
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
    // The kernel's rounding, `(x + BW_UNIT - 1) / BW_UNIT`, kept as written.
    #[allow(clippy::manual_div_ceil)]
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return self.init_cwnd;
        }
        let w = bw as u64 * self.min_rtt_us as u64;
        // wraps: u64 product, then truncation to the u32 bdp.
        (((w.wrapping_mul(gain as u64) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT) as u32
    }

    /// `bbr_quantization_budget`: room for three TSO bursts and the minimum window, plus two
    /// packets in PROBE_UP so that small BDPs still probe.
    fn quantization_budget(&self, tcp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(tcp)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            // wraps: u32 as in the kernel.
            cwnd = cwnd.wrapping_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, tcp: &TcpState, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tcp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in flight at the next departure time, less what the path
    /// delivers until then (plus the departing burst when in flight is meant to grow).
    fn packets_in_net_at_edt(&self, tcp: &TcpState, inflight_now: u32, now_ns: u64) -> u32 {
        let edt_ns = tcp.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1000;
        // wraps: truncated to u32 as the kernel's assignment does.
        let interval_delivered = ((self.bw() as u64 * interval_us) >> BW_SCALE) as u32;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt = inflight_at_edt.wrapping_add(self.tso_segs_goal(tcp));
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    /// `bbr_probe_rtt_cwnd`: half a BDP, at least 4 packets.
    fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// `bbr_set_cwnd`: slow-start toward the target (gain * BDP + aggregation + TSO budget)
    /// until the pipe has been full, then snap down to it; PROBE_RTT's cap last.
    fn set_cwnd(&mut self, tcp: &mut TcpState, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tcp.cwnd;
        if acked != 0 {
            let mut target = self.bdp(bw, gain);
            // wraps: u32 sum as in the kernel.
            target = target.wrapping_add(self.aggregation.cwnd(self.bw()));
            target = self.quantization_budget(tcp, target);
            self.try_fast_path = false;
            if self.full_bw_reached {
                cwnd = cwnd.wrapping_add(acked);
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.wrapping_add(acked);
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        tcp.cwnd = cwnd.min(tcp.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tcp.cwnd = tcp.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `bbr_update_round_start`: a packet-timed round ends when a packet sent after its
    /// start is delivered.
    fn update_round_start(&mut self, tcp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && !before(rs.prior_delivered, self.next_rtt_delivered) {
            self.next_rtt_delivered = tcp.delivered;
            self.round_start = true;
        }
    }

    /// `bbr_calculate_bw_sample`: delivered / interval, rounded up (0 without a sample).
    fn bw_sample(rs: &RateSample) -> u32 {
        if rs.interval_us <= 0 || rs.delivered < 0 {
            return 0;
        }
        // wraps: DIV_ROUND_UP_ULL's u64 stored in the u32 ctx->sample_bw.
        (rs.delivered as u64 * BW_UNIT).div_ceil(rs.interval_us as u64) as u32
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, tcp: &mut TcpState, now_ns: u64) {
        let j = self.jiffies(now_ns);
        if !(self.probe_rtt_done_stamp != 0 && after(j, self.probe_rtt_done_stamp)) {
            return;
        }
        self.probe_rtt_min_stamp = j;
        tcp.cwnd = tcp.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tcp, now_ns);
    }

    /// `bbr_update_min_rtt`: the 5 s PROBE_RTT filter, the 10 s min_rtt filter, and
    /// PROBE_RTT's entry and exit.
    fn update_min_rtt(&mut self, tcp: &mut TcpState, rs: &RateSample, now_ns: u64) {
        let j = self.jiffies(now_ns);
        let expire = self.probe_rtt_min_stamp.wrapping_add(self.msecs_to_jiffies(self.cfg.probe_rtt_win_ms));
        let probe_rtt_expired = after(j, expire);
        if rs.rtt_us >= 0 && (rs.rtt_us < self.probe_rtt_min_us as i64 || (probe_rtt_expired && !rs.is_ack_delayed)) {
            self.probe_rtt_min_us = rs.rtt_us as u32;
            self.probe_rtt_min_stamp = j;
        }
        // wraps: jiffies are u32.
        let expire = self.min_rtt_stamp.wrapping_add(crate::bbr::MIN_RTT_WIN_SEC.wrapping_mul(self.cfg.hz));
        let min_rtt_expired = after(j, expire);
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.cfg.probe_rtt_mode_ms > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tcp);
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tcp.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at the reduced window say nothing about the bandwidth.
            tcp.set_app_limited(tcp.in_flight);
            if self.probe_rtt_done_stamp == 0 && tcp.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = j.wrapping_add(self.msecs_to_jiffies(self.cfg.probe_rtt_mode_ms));
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
            Mode::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw => {
                let mut cwnd_gain = CWND_GAIN;
                if self.cfg.bw_probe_cwnd_gain != 0 && self.cycle_idx == Phase::Up {
                    cwnd_gain += BBR_UNIT * self.cfg.bw_probe_cwnd_gain / 4;
                }
                (PACING_GAIN[self.cycle_idx as usize], cwnd_gain)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_advance_max_bw_filter`: each PROBE_BW cycle, start a new window (unless the
    /// current one is empty).
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// `bbr_reset_full_bw`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_target_inflight`: the BDP, unless congestion cut cwnd below it.
    fn target_inflight(&self, tcp: &TcpState) -> u32 {
        self.inflight(tcp, self.bw(), BBR_UNIT).min(tcp.cwnd)
    }

    /// `bbr_is_probing_bandwidth`.
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    /// `bbr_has_elapsed_in_phase`.
    fn has_elapsed_in_phase(&self, interval_us: u32, now_ns: u64) -> bool {
        stamp_us_delta(now_ns / 1000, self.cycle_mstamp + interval_us as u64) > 0
    }

    /// `bbr_handle_queue_too_high_in_startup`: end STARTUP with inflight_hi at what it
    /// delivered.
    fn handle_queue_too_high_in_startup(&mut self, tcp: &TcpState) {
        self.full_bw_reached = true;
        let bdp = self.inflight(tcp, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_check_ecn_too_high_in_startup`.
    fn check_ecn_too_high_in_startup(&mut self, tcp: &TcpState, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible || self.cfg.full_ecn_cnt == 0 || self.cfg.ecn_thresh == 0 {
            return;
        }
        if ce_ratio >= self.cfg.ecn_thresh {
            // wraps: a 2-bit field (full_ecn_cnt <= 3 ends STARTUP before the counter wraps).
            self.startup_ecn_rounds = (self.startup_ecn_rounds + 1) & 3;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= self.cfg.full_ecn_cnt {
            self.handle_queue_too_high_in_startup(tcp);
        }
    }

    /// `bbr_update_ecn_alpha`, once per round: the EWMA of the CE ratio (1/256) since the
    /// last update (the kernel returns the ratio for PLB, which is off).
    fn update_ecn_alpha(&mut self, tcp: &TcpState) {
        if !self.ecn_eligible
            && self.can_use_ecn()
            && self.cfg.ecn_factor != 0
            && (self.min_rtt_us <= self.cfg.ecn_max_rtt_us || self.cfg.ecn_max_rtt_us == 0)
        {
            self.ecn_eligible = true;
        }
        // PLB (the other reader of the ratio) is off: tcp_plb_enabled defaults to 0.
        if !self.ecn_eligible {
            return;
        }
        // wraps: u32 counters, differences read as s32.
        let delivered = tcp.delivered.wrapping_sub(self.alpha_last_delivered) as i32;
        let delivered_ce = tcp.delivered_ce.wrapping_sub(self.alpha_last_delivered_ce) as i32;
        if delivered <= 0 || delivered_ce < 0 {
            return;
        }
        let ce_ratio = ((delivered_ce as u64) << BBR_SCALE) / delivered as u64;
        let gain = self.cfg.ecn_alpha_gain as u64;
        let mut alpha = ((BBR_UNIT as u64 - gain) * self.ecn_alpha as u64) >> BBR_SCALE;
        alpha += (gain * ce_ratio) >> BBR_SCALE;
        self.ecn_alpha = alpha.min(BBR_UNIT as u64) as u32;
        self.alpha_last_delivered = tcp.delivered;
        self.alpha_last_delivered_ce = tcp.delivered_ce;
        // wraps: the u64 ratio passed as u32 (at most 256 here).
        self.check_ecn_too_high_in_startup(tcp, ce_ratio as u32);
    }

    /// `bbr_raise_inflight_hi_slope`: each round of PROBE_UP doubles the growth of
    /// inflight_hi (one packet per `cwnd / 2^rounds` delivered).
    fn raise_inflight_hi_slope(&mut self, tcp: &TcpState) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (tcp.cwnd / growth_this_round).max(1);
    }

    /// `bbr_probe_inflight_hi_upward`: while the window is full at inflight_hi, raise it by
    /// one per `bw_probe_up_cnt` packets delivered.
    fn probe_inflight_hi_upward(&mut self, tcp: &TcpState, rs: &RateSample) {
        if !tcp.is_cwnd_limited || tcp.cwnd < self.inflight_hi {
            return;
        }
        // wraps: u32 sums as in the kernel.
        self.bw_probe_up_acks = self.bw_probe_up_acks.wrapping_add(rs.acked_sacked);
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.wrapping_add(delta);
            self.try_fast_path = false;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tcp);
        }
    }

    /// `bbr_is_inflight_too_high`: loss above `loss_thresh` of the flight, or (with ECN)
    /// CE marks above `ecn_thresh` of the delivered.
    fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight != 0 {
            let loss_thresh = ((rs.tx_in_flight as u64 * self.cfg.loss_thresh as u64) >> BBR_SCALE) as u32;
            if rs.lost as u32 > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible && self.cfg.ecn_thresh != 0 {
            let ecn_thresh = ((rs.delivered as u64 * self.cfg.ecn_thresh as u64) >> BBR_SCALE) as u32;
            if rs.delivered_ce as u32 > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// `bbr_inflight_with_headroom`: inflight_hi less `inflight_headroom` of it (at least
    /// one packet), at least 4.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == u32::MAX {
            return u32::MAX;
        }
        let headroom = (((self.inflight_hi as u64 * self.cfg.inflight_headroom as u64) >> BBR_SCALE) as u32).max(1);
        // wraps: max_t(s32, ...) of a u32 difference.
        (self.inflight_hi.wrapping_sub(headroom) as i32).max(CWND_MIN_TARGET as i32) as u32
    }

    /// `bbr_bound_cwnd_for_inflight_model`: cap cwnd by inflight_hi when probing, by
    /// inflight_hi less headroom when cruising or in PROBE_RTT, and by inflight_lo always.
    fn bound_cwnd_for_inflight_model(&mut self, tcp: &mut TcpState) {
        if !self.initialized {
            return;
        }
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        tcp.cwnd = cap.min(tcp.cwnd);
    }

    /// `bbr_ecn_cut`: 1 - ecn_alpha * ecn_factor.
    fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * self.cfg.ecn_factor) >> BBR_SCALE)
    }

    /// `bbr_init_lower_bounds`.
    fn init_lower_bounds(&mut self, tcp: &TcpState, init_bw: bool) {
        if init_bw && self.bw_lo == u32::MAX {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == u32::MAX {
            self.inflight_lo = tcp.cwnd;
        }
    }

    /// `bbr_adapt_lower_bounds`, once per round outside of probing: with ECN marks, cut
    /// inflight_lo by the ECN cut; with loss, cut bw_lo and inflight_lo by beta, never below
    /// what the last round delivered.
    fn adapt_lower_bounds(&mut self, tcp: &TcpState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = u32::MAX;
        if self.ecn_in_round && self.cfg.ecn_factor != 0 {
            self.init_lower_bounds(tcp, false);
            ecn_inflight_lo = ((self.inflight_lo as u64 * self.ecn_cut() as u64) >> BBR_SCALE) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(tcp, true);
            let loss_cut = (BBR_UNIT - self.cfg.beta) as u64;
            // wraps: the u64 products are truncated to the u32 bounds by max_t(u32, ...).
            self.bw_lo = self.bw_latest.max(((self.bw_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
            self.inflight_lo = self.inflight_latest.max(((self.inflight_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// `bbr_reset_lower_bounds`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u32::MAX;
        self.inflight_lo = u32::MAX;
    }

    /// `bbr_reset_congestion_signals`.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// `bbr_update_latest_delivery_signals`: the max rate and volume delivered this round,
    /// and the loss round's start.
    fn update_latest_delivery_signals(&mut self, tcp: &TcpState, rs: &RateSample, sample_bw: u32) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        // wraps: max_t(u32, ...) of the s32 delivered (valid here, so not negative).
        self.inflight_latest = self.inflight_latest.max(rs.delivered as u32);
        if !before(rs.prior_delivered, self.loss_round_delivered) {
            self.loss_round_delivered = tcp.delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_advance_latest_delivery_signals`: restart the round's filters at a loss round's
    /// start. The host does not flag ACKs of a TLP retransmission
    /// (`is_acking_tlp_retrans_seq`), so the filter always restarts.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            // wraps: the s32 delivered stored in a u32.
            self.inflight_latest = rs.delivered as u32;
        }
    }

    /// `bbr_update_congestion_signals`: the max filter, loss this round, and once per round
    /// the lower bounds.
    fn update_congestion_signals(&mut self, tcp: &TcpState, rs: &RateSample, sample_bw: u32) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(tcp);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_is_reno_coexistence_probe_time`: probe at least every min(63, BDP) rounds.
    fn is_reno_coexistence_probe_time(&self, tcp: &TcpState) -> bool {
        let rounds = self.cfg.bw_probe_max_rounds.min(self.target_inflight(tcp));
        self.rounds_since_probe >= rounds
    }

    /// `bbr_pick_probe_wait`: random head start of the round count, and a wall-clock wait of
    /// 2 s plus up to 1 s.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(self.cfg.bw_probe_rand_rounds);
        // wraps: u32 sum as in the kernel.
        self.probe_wait_us = self.cfg.bw_probe_base_us.wrapping_add(self.rng.below(self.cfg.bw_probe_rand_us));
    }

    /// `bbr_set_cycle_idx`.
    fn set_cycle_idx(&mut self, phase: Phase) {
        self.cycle_idx = phase;
        self.try_fast_path = false;
    }

    /// `bbr_start_bw_probe_refill`: forget the lower bounds, send at the estimate for a round.
    fn start_bw_probe_refill(&mut self, tcp: &TcpState, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        // wraps: a 5-bit field (ilog2 of a u32 is at most 31).
        self.bw_probe_up_rounds = bw_probe_up_rounds & 0x1F;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tcp.delivered;
        self.set_cycle_idx(Phase::Refill);
    }

    /// `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, tcp: &TcpState, sample_bw: u32, now_ns: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tcp.delivered;
        self.cycle_mstamp = now_ns / 1000;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope(tcp);
    }

    /// `bbr_start_bw_probe_down`: a new cycle; pick when its probe comes.
    fn start_bw_probe_down(&mut self, tcp: &TcpState, now_ns: u64) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_mstamp = now_ns / 1000;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tcp.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    /// `bbr_start_bw_probe_cruise`.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != u32::MAX {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    /// `bbr_handle_inflight_too_high`: once per probe, cut inflight_hi to the flight that
    /// was too lossy (at least 1 - beta of the target), and end PROBE_UP.
    fn handle_inflight_too_high(&mut self, tcp: &TcpState, rs: &RateSample, now_ns: u64) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let cut = (self.target_inflight(tcp) as u64 * (BBR_UNIT - self.cfg.beta) as u64) >> BBR_SCALE;
            // wraps: max_t(u32, ...) truncates the product.
            self.inflight_hi = rs.tx_in_flight.max(cut as u32);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(tcp, now_ns);
        }
    }

    /// `bbr_adapt_upper_bounds`: follow the probe's feedback; cut inflight_hi if it shows
    /// too much loss or ECN, else raise it. Returns whether a state transition was decided.
    fn adapt_upper_bounds(&mut self, tcp: &TcpState, rs: &RateSample, now_ns: u64) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tcp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tcp, rs, now_ns);
            }
        } else {
            if self.inflight_hi == u32::MAX {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(tcp, rs);
            }
        }
        false
    }

    /// `bbr_check_time_to_probe_bw`: reprobe at once in a cycle with CE marks and no loss;
    /// else after the wall-clock wait or the Reno-coexistence round count.
    fn check_time_to_probe_bw(&mut self, tcp: &TcpState, now_ns: u64) -> bool {
        if self.cfg.ecn_reprobe_gain != 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tcp.ca_state == CaState::Open
        {
            let v = (self.inflight_hi as u64 * self.cfg.ecn_reprobe_gain as u64) >> BBR_SCALE;
            // ilog2 of 0 is undefined in C; the kernel's inflight_hi is at least 4 here.
            let n = v.checked_ilog2().unwrap_or(0);
            self.start_bw_probe_refill(tcp, n);
            return true;
        }
        if self.has_elapsed_in_phase(self.probe_wait_us, now_ns) || self.is_reno_coexistence_probe_time(tcp) {
            self.start_bw_probe_refill(tcp, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise`: in flight is under both the headroom bound and the BDP.
    fn check_time_to_cruise(&self, tcp: &TcpState, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(tcp, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase`: the PROBE_BW state machine (CRUISE -> REFILL -> UP ->
    /// DOWN -> CRUISE).
    fn update_cycle_phase(&mut self, tcp: &TcpState, rs: &RateSample, sample_bw: u32, now_ns: u64) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(tcp, rs, now_ns) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tcp, rs.prior_in_flight, now_ns);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tcp, now_ns);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tcp, sample_bw, now_ns);
                }
            }
            Phase::Up => {
                let mut is_bw_probe_done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    is_bw_probe_done = true;
                } else if tcp.is_cwnd_limited && tcp.cwnd >= self.inflight_hi {
                    // inflight_hi, not the path, limits growth: no plateau yet.
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    is_bw_probe_done = true;
                }
                if is_bw_probe_done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tcp, now_ns);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tcp, now_ns) {
                    return;
                }
                if self.check_time_to_cruise(tcp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// `bbr_exit_probe_rtt`: back to PROBE_BW (cruising, a new cycle) or STARTUP.
    fn exit_probe_rtt(&mut self, tcp: &TcpState, now_ns: u64) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tcp, now_ns);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_check_loss_too_high_in_startup`: at the end of a Recovery round with at least
    /// `full_loss_cnt` loss events and too much loss, the pipe is full.
    fn check_loss_too_high_in_startup(&mut self, tcp: &TcpState, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        if self.cfg.full_loss_cnt != 0
            && self.loss_round_start
            && tcp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.cfg.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(tcp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_check_full_bw_reached`: a plateau is `FULL_BW_CNT` rounds without a sample 25%
    /// above the last growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if sample_bw >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_check_drain`: STARTUP -> DRAIN once the pipe is full (ssthresh set to the BDP
    /// for the record), DRAIN -> PROBE_BW once in flight at the next departure is one BDP.
    fn check_drain(&mut self, tcp: &mut TcpState, now_ns: u64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tcp.ssthresh = self.inflight(tcp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tcp, tcp.in_flight, now_ns) <= self.inflight(tcp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tcp, now_ns);
        }
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, tcp: &mut TcpState, rs: &RateSample, sample_bw: u32, now_ns: u64) {
        self.update_congestion_signals(tcp, rs, sample_bw);
        // bbr_update_ack_aggregation: v3 restarts the window every round until the pipe is full.
        let win_rtts = if self.full_bw_reached { EXTRA_ACKED_WIN_RTTS } else { 1 };
        let bw = self.bw();
        self.aggregation.update(rs, self.round_start, win_rtts, bw, tcp.delivered_mstamp_us, tcp.cwnd);
        self.check_loss_too_high_in_startup(tcp, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(tcp, now_ns);
        self.update_cycle_phase(tcp, rs, sample_bw, now_ns);
        self.update_min_rtt(tcp, rs, now_ns);
    }

    /// `bbr_run_fast_path`: an app-limited sample below the estimate, without loss or ECN,
    /// changes no model input; if it changes no mode, min_rtt or phase either, skip the
    /// control update too. Returns (skip everything, skip the model update).
    fn run_fast_path(&mut self, tcp: &mut TcpState, rs: &RateSample, sample_bw: u32, now_ns: u64) -> (bool, bool) {
        if FAST_PATH
            && self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round
        {
            let (prev_mode, prev_min_rtt_us) = (self.mode, self.min_rtt_us);
            self.check_drain(tcp, now_ns);
            self.update_cycle_phase(tcp, rs, sample_bw, now_ns);
            self.update_min_rtt(tcp, rs, now_ns);
            if self.mode == prev_mode && self.min_rtt_us == prev_min_rtt_us && self.try_fast_path {
                return (true, true);
            }
            return (false, true);
        }
        (false, false)
    }

    /// `bbr_note_loss`: the first loss of a round starts a loss round.
    fn note_loss(&mut self, tcp: &TcpState) {
        if !self.loss_in_round {
            self.loss_round_delivered = tcp.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr_exit_loss_recovery`.
    fn exit_loss_recovery(&mut self, tcp: &mut TcpState) {
        tcp.cwnd = tcp.cwnd.max(self.prior_cwnd);
        self.try_fast_path = false;
    }
}

impl CongestionControl for Bbr3 {
    /// `bbr_init`.
    fn init(&mut self, tcp: &mut TcpState, now_ns: u64) {
        let j = self.jiffies(now_ns);
        self.initialized = true;
        self.init_cwnd = tcp.cwnd.min(0x7F);
        self.prior_cwnd = tcp.prior_cwnd;
        tcp.ssthresh = TCP_INFINITE_SSTHRESH;
        self.next_rtt_delivered = tcp.delivered;
        self.prev_ca_state = CaState::Open;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.probe_rtt_min_us = tcp.min_rtt_us;
        self.probe_rtt_min_stamp = j;
        self.min_rtt_us = tcp.min_rtt_us;
        self.min_rtt_stamp = j;
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tcp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = Phase::Up;
        self.mode = Mode::Startup;
        self.aggregation.reset(now_ns / 1000);
        self.try_fast_path = false;
        // sk_pacing_status: SK_PACING_NONE -> SK_PACING_NEEDED.
        tcp.paced = true;
        // ECN sampling starts once the first flight is ACKed.
        self.loss_round_delivered = tcp.delivered.wrapping_add(1);
        self.loss_round_start = false;
        self.undo_bw_lo = 0;
        self.undo_inflight_lo = 0;
        self.undo_inflight_hi = 0;
        self.loss_events_in_round = 0;
        self.startup_ecn_rounds = 0;
        self.reset_congestion_signals();
        self.bw_lo = u32::MAX;
        self.bw_hi = [0; 2];
        self.inflight_lo = u32::MAX;
        self.inflight_hi = u32::MAX;
        self.reset_full_bw();
        self.bw_probe_up_cnt = u32::MAX;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.probe_wait_us = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_probe = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.ecn_eligible = false;
        self.ecn_alpha = self.cfg.ecn_alpha_init;
        self.alpha_last_delivered = 0;
        self.alpha_last_delivered_ce = 0;
    }

    /// `bbr_ssthresh`: entering a reduction, save the window and the loss-adapted bounds for
    /// an undo; the threshold is left as is.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        self.save_cwnd(tcp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tcp.ssthresh
    }

    /// Never called: BBRv3 has `cong_control`.
    fn cong_avoid(&mut self, _tcp: &mut TcpState, _acked: u32, _now_ns: u64) {}

    /// `bbr_set_state`: a timeout forgets full_bw and, outside of probing, starts
    /// inflight_lo at the window before it; leaving Loss restores the saved window.
    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == u32::MAX {
                self.inflight_lo = tcp.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            self.exit_loss_recovery(tcp);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle while app-limited, pace at the estimate. The
    /// CE events are the receiver's (its ACKs' ECE), modelled by the host's receiver.
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

    /// v3's receiver echoes CE exactly and the sender negotiates ECN on an `ecn_low` route.
    fn needs_ecn(&self) -> bool {
        self.cfg.ecn_low
    }

    /// `bbr_undo_cwnd`: a spurious loss; restore the bounds saved at its start.
    fn undo_cwnd(&mut self, _tcp: &mut TcpState, _now_ns: u64) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`: rounds, ECN alpha, the latest delivery, then (unless the fast path says
    /// nothing changed) the model, the gains, the pacing rate and the window, bounded by
    /// the inflight model.
    fn cong_control(&mut self, tcp: &mut TcpState, rs: &RateSample, now_ns: u64) {
        // The first half of skb_marked_lost, which the kernel runs as this ACK marked them.
        if rs.losses > 0 {
            self.note_loss(tcp);
        }
        self.update_round_start(tcp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha(tcp);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        let sample_bw = Self::bw_sample(rs);
        self.update_latest_delivery_signals(tcp, rs, sample_bw);
        let (skip_all, skip_model) = self.run_fast_path(tcp, rs, sample_bw, now_ns);
        if !skip_all {
            if !skip_model {
                self.update_model(tcp, rs, sample_bw, now_ns);
            }
            self.update_gains();
            let bw = self.bw();
            self.set_pacing_rate(tcp, bw, self.pacing_gain);
            self.set_cwnd(tcp, rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model(tcp);
        }
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = tcp.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    fn seed_random(&mut self, seed: u64) {
        self.rng.seed(seed);
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("mode", self.mode as u8 as f64);
        out("phase", self.cycle_idx as u8 as f64);
        out("bw", self.bw() as f64);
        out("max_bw", self.max_bw() as f64);
        out("min_rtt_us", self.min_rtt_us as f64);
        out("pacing_gain", self.pacing_gain as f64);
        out("cwnd_gain", self.cwnd_gain as f64);
        out("full_bw_reached", self.full_bw_reached as u8 as f64);
        out("inflight_hi", self.inflight_hi as f64);
        out("inflight_lo", self.inflight_lo as f64);
        out("bw_lo", self.bw_lo as f64);
        out("ecn_alpha", self.ecn_alpha as f64);
        out("rounds_since_probe", self.rounds_since_probe as f64);
        out("extra_acked", self.aggregation.extra_acked() as f64);
        out("prior_cwnd", self.prior_cwnd as f64);
    }
}

#[cfg(test)]
#[path = "bbr3_tests.rs"]
mod tests;
