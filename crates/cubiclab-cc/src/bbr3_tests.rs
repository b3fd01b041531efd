//! Tests of `bbr3` with numbers derived from Google's v3 `tcp_bbr.c` constants and integer
//! arithmetic.
//!
//! The harness is an ideal path: one ACK of one segment every 100 us (10,000 packets/s),
//! RTT 10 ms, so BDP = 100 packets and every rate sample is 100 packets in 10 ms. v3 rounds
//! the sample up: bw = ceil(100 * 2^24 / 10000) = 167773 (packets/us << 24). A packet-timed
//! round is 101 ACKs (a round starts when `prior_delivered = delivered - 100` reaches the
//! `delivered` of the previous round start).
//!
//! With no pacing rate yet the TSO goal is the floor, 2 segments (the min_rtt allowance
//! 65536 >> (10000 >> 9 = 19) is 0 bytes), so the quantization budget is max(cwnd, 6, 4):
//! bbr_inflight(bw, 1) = ceil(167773 * 10000 / 2^24) = 101, +2 in PROBE_UP.

use super::*;

const GAP_US: u64 = 100;
const RTT_US: i64 = 10_000;
const BDP: u32 = 100;
const BW: u32 = 167_773;

struct Path {
    bbr: Bbr3,
    tcp: TcpState,
    now_us: u64,
    /// In flight before each ACK.
    in_flight: u32,
}

impl Path {
    fn new(params: &Params) -> Self {
        let mut bbr = Bbr3::new(params).unwrap();
        let mut tcp = TcpState { srtt_us: RTT_US as u32, ..TcpState::default() };
        bbr.init(&mut tcp, 0);
        Self { bbr, tcp, now_us: 0, in_flight: BDP }
    }

    /// A path in PROBE_BW: the pipe full at bw, min_rtt 10 ms, a new cycle (DOWN) begun;
    /// the window held at 200 (below its 2 BDP target) by the clamp.
    fn in_probe_bw(params: &Params) -> Self {
        let mut p = Self::new(params);
        p.tcp.delivered = 1000;
        p.tcp.cwnd = 200;
        p.tcp.cwnd_clamp = 200;
        p.bbr.full_bw_reached = true;
        p.bbr.mode = Mode::ProbeBw;
        p.bbr.bw_hi = [BW, BW];
        p.bbr.min_rtt_us = RTT_US as u32;
        p.bbr.probe_rtt_min_us = RTT_US as u32;
        p.bbr.start_bw_probe_down(&p.tcp, 0);
        p.bbr.update_gains();
        p
    }

    /// One ACK of one segment; `f` adjusts its sample.
    fn ack_with(&mut self, f: impl FnOnce(&mut RateSample)) {
        self.now_us += GAP_US;
        self.tcp.in_flight = self.in_flight;
        let mut rs = RateSample {
            prior_delivered: self.tcp.delivered.wrapping_sub(BDP),
            delivered: BDP as i32,
            interval_us: RTT_US,
            rtt_us: RTT_US,
            acked_sacked: 1,
            prior_in_flight: self.in_flight,
            tx_in_flight: self.in_flight,
            ..RateSample::default()
        };
        f(&mut rs);
        self.tcp.delivered += 1;
        self.tcp.delivered_mstamp_us = self.now_us;
        self.bbr.cong_control(&mut self.tcp, &rs, self.now_us * 1000);
    }

    fn ack(&mut self) {
        self.ack_with(|_| {});
    }

    /// From DOWN, which one ACK ends (in flight is under the BDP), the rounds of CRUISE.
    fn rounds_down_and_cruising(&mut self) -> u32 {
        self.ack();
        assert_eq!(self.bbr.phase(), Phase::Cruise);
        let mut rounds = 0;
        while self.bbr.phase() == Phase::Cruise {
            self.round();
            rounds += 1;
        }
        rounds
    }

    /// ACKs until the next round start; returns how many.
    fn round(&mut self) -> u32 {
        let mut n = 0;
        loop {
            self.ack();
            n += 1;
            if self.bbr.round_start {
                return n;
            }
        }
    }
}

#[test]
fn gains_are_the_sources() {
    // 256 * 277 / 100 + 1 = 709 + 1; 256 * 1000 / 2885 = 88; UP 256 * 5 / 4 = 320,
    // DOWN 256 * 91 / 100 = 232, CRUISE and REFILL 256; cwnd gain 2, half a BDP in
    // PROBE_RTT.
    assert_eq!((STARTUP_PACING_GAIN, STARTUP_CWND_GAIN, DRAIN_GAIN, CWND_GAIN), (710, 512, 88, 512));
    assert_eq!(PACING_GAIN, [320, 232, 256, 256]);
    assert_eq!(PROBE_RTT_CWND_GAIN, 128);
    // The parameters' defaults: bbr_beta (loss_decrease) 256 * 30 / 100 = 76, loss_thresh 256 * 2 / 100 = 5,
    // ecn_factor 256 / 3 = 85, ecn_thresh 128, alpha gain 16, headroom 256 * 15 / 100 = 38.
    let b = Bbr3::new(&Params::new()).unwrap();
    let c = &b.cfg;
    assert_eq!((c.beta, c.loss_thresh, c.ecn_factor, c.ecn_thresh), (76, 5, 85, 128));
    assert_eq!((c.ecn_alpha_gain, c.ecn_alpha_init, c.inflight_headroom), (16, 256, 38));
    assert_eq!((c.bw_probe_max_rounds, c.bw_probe_base_us, c.probe_rtt_win_ms), (63, 2_000_000, 5000));
}

#[test]
fn probe_up_raises_the_cwnd_gain_by_a_quarter() {
    // bbr_update_gains: PROBE_BW's cwnd_gain 2 + BBR_UNIT * bw_probe_cwnd_gain / 4 in UP.
    let mut p = Path::in_probe_bw(&Params::new());
    p.bbr.cycle_idx = Phase::Up;
    p.bbr.update_gains();
    assert_eq!((p.bbr.pacing_gain(), p.bbr.cwnd_gain()), (320, 576));
    p.bbr.cycle_idx = Phase::Down;
    p.bbr.update_gains();
    assert_eq!((p.bbr.pacing_gain(), p.bbr.cwnd_gain()), (232, 512));
}

#[test]
fn init_paces_at_the_startup_gain_over_srtt() {
    // bw = 10 * 2^24 / 10000 = 16777; rate = ((16777 * 1448 * 710) >> 8) * 990000 >> 24
    // = 67375764 * 990000 >> 24 = 3975726 B/s (srtt 10 ms is known, so has_seen_rtt).
    let p = Path::new(&Params::new());
    assert_eq!(p.tcp.pacing_rate, 3_975_726);
    assert!(p.tcp.paced && p.bbr.has_seen_rtt);
    assert_eq!((p.bbr.mode(), p.bbr.init_cwnd), (Mode::Startup, 10));
    assert_eq!((p.bbr.inflight_hi(), p.bbr.inflight_lo(), p.bbr.bw_lo()), (u32::MAX, u32::MAX, u32::MAX));
}

#[test]
fn startup_ends_on_a_plateau_of_three_rounds() {
    // v3 counts the sample itself: the first sample sets full_bw, and the next three round
    // starts without a sample >= 5/4 full_bw end STARTUP (full_bw_cnt 1, 2, 3).
    let mut p = Path::new(&Params::new());
    p.bbr.min_rtt_us = RTT_US as u32;
    p.ack();
    assert_eq!(p.bbr.full_bw, BW);
    for cnt in 1..3 {
        p.round();
        assert_eq!((p.bbr.full_bw_cnt, p.bbr.mode()), (cnt, Mode::Startup));
    }
    p.round();
    assert!(p.bbr.full_bw_reached() && p.bbr.full_bw_now);
    assert_ne!(p.bbr.mode(), Mode::Startup);
    // ssthresh records bbr_inflight(max_bw, 1) = 101 (TSO goal from the STARTUP pacing rate:
    // rate(167773, 710) = 39756916 B/s, >> 10 = 38825 bytes + 0 = 26 segments, budget 78).
    assert_eq!(p.tcp.ssthresh, 101);
}

#[test]
fn the_probe_bw_cycle_is_down_cruise_refill_then_three_rounds_up() {
    // DOWN ends at once with 100 in flight (<= bbr_inflight(bw, 1) = 101, no inflight_hi).
    // CRUISE waits for min(bw_probe_max_rounds 63, target_inflight) rounds since DOWN began
    // (from a random head start 0 or 1, get_random_u32_below(2)) - 63 rounds of 10.1 ms are
    // sooner than the 2-3 s wall clock. REFILL lasts one round; UP ends when three round
    // starts bring no sample 25% above full_bw.
    for seed in 0..6 {
        let mut p = Path::in_probe_bw(&Params::new());
        p.bbr.seed_random(seed);
        p.bbr.start_bw_probe_down(&p.tcp, 0);
        let head_start = p.bbr.rounds_since_probe;
        assert!(head_start < 2);
        assert_eq!(p.bbr.phase(), Phase::Down);
        let rounds = p.rounds_down_and_cruising();
        assert_eq!((p.bbr.phase(), rounds), (Phase::Refill, 63 - head_start), "seed {seed}");
        assert_eq!(p.bbr.inflight_lo(), u32::MAX);
        p.round();
        assert_eq!(p.bbr.phase(), Phase::Up);
        assert!(p.bbr.bw_probe_samples);
        for _ in 0..2 {
            p.round();
            assert_eq!(p.bbr.phase(), Phase::Up);
        }
        p.round();
        assert_eq!(p.bbr.phase(), Phase::Down);
    }
}

#[test]
fn a_small_bdp_probes_after_bdp_rounds() {
    // bbr_is_reno_coexistence_probe_time: rounds = min(63, target_inflight), the target
    // capped by cwnd: with cwnd 20, CRUISE ends 20 rounds (less the head start) after DOWN.
    let mut p = Path::in_probe_bw(&Params::new());
    p.tcp.cwnd = 20;
    p.tcp.cwnd_clamp = 20;
    p.in_flight = 20;
    let head_start = p.bbr.rounds_since_probe;
    assert_eq!(p.rounds_down_and_cruising(), 20 - head_start);
}

#[test]
fn loss_above_two_percent_of_the_probe_cuts_inflight_hi_to_seven_tenths_of_the_target() {
    // In PROBE_UP with probe samples, bbr_is_inflight_too_high: lost > tx_in_flight * 5 >> 8.
    // With tx_in_flight 100 the threshold is 1 packet: 1 lost is tolerated, 2 are not.
    // bbr_handle_inflight_too_high then sets inflight_hi = max(tx_in_flight,
    // target_inflight * (256 - 76) >> 8): target = min(bbr_inflight(bw, 1) + 2, cwnd 200)
    // = 103, 103 * 180 >> 8 = 72; and the probe ends (DOWN).
    let up = || {
        let mut p = Path::in_probe_bw(&Params::new());
        p.bbr.cycle_idx = Phase::Up;
        p.bbr.bw_probe_samples = true;
        p.bbr.inflight_hi = 1000;
        p
    };
    let mut p = up();
    p.ack_with(|rs| rs.lost = 1);
    assert_eq!((p.bbr.phase(), p.bbr.inflight_hi()), (Phase::Up, 1000));
    let mut p = up();
    p.ack_with(|rs| {
        rs.lost = 2;
        rs.tx_in_flight = 50;
    });
    assert_eq!((p.bbr.phase(), p.bbr.inflight_hi()), (Phase::Down, 72));
    assert!(p.bbr.prev_probe_too_high && !p.bbr.bw_probe_samples);
    // The flight itself bounds it from below: tx_in_flight 100 > 72.
    let mut p = up();
    p.ack_with(|rs| rs.lost = 2);
    assert_eq!(p.bbr.inflight_hi(), 100);
    // An app-limited sample is not a robust probe: the bound stays, the probe still ends
    // (and with 100 in flight, under 1000 less headroom and the BDP, DOWN ends at once).
    let mut p = up();
    p.ack_with(|rs| {
        rs.lost = 2;
        rs.is_app_limited = true;
    });
    assert_eq!((p.bbr.phase(), p.bbr.inflight_hi()), (Phase::Cruise, 1000));
    assert!(p.bbr.prev_probe_too_high);
}

#[test]
fn a_lossy_round_outside_probing_cuts_the_lower_bounds_by_beta() {
    // bbr_adapt_lower_bounds at a loss round's start while cruising: bw_lo and inflight_lo
    // start at max_bw and cwnd (200), then max(latest, bound * 180 >> 8): inflight_lo =
    // max(inflight_latest 100, 200 * 180 >> 8 = 140) = 140; bw_lo = max(bw_latest,
    // 167773 * 180 >> 8 = 117965) = 167773, the round's samples all being at bw. cwnd is
    // then capped at 140.
    let mut p = Path::in_probe_bw(&Params::new());
    p.ack();
    assert_eq!(p.bbr.phase(), Phase::Cruise);
    p.bbr.bw_latest = 0;
    p.bbr.inflight_latest = 0;
    // A loss marked by this ACK notes a loss round from here (bbr_note_loss).
    p.ack_with(|rs| rs.losses = 1);
    assert!(p.bbr.loss_in_round);
    assert_eq!(p.bbr.inflight_lo(), u32::MAX);
    let start = p.tcp.delivered;
    while !p.bbr.loss_round_start {
        p.ack();
    }
    // The loss round ends when a packet sent after the loss is delivered: 101 ACKs later.
    assert_eq!(p.tcp.delivered, start + BDP + 1);
    assert_eq!((p.bbr.bw_lo(), p.bbr.inflight_lo()), (BW, 140));
    assert_eq!(p.tcp.cwnd, 140);
    assert!(!p.bbr.loss_in_round);
}

#[test]
fn the_ecn_alpha_is_an_ewma_of_the_ce_ratio_per_round() {
    // bbr_update_ecn_alpha: ce_ratio = delivered_ce * 256 / delivered; alpha = (240 * alpha
    // >> 8) + (16 * ce_ratio >> 8). From 256 with half the packets marked: 240 + 8 = 248;
    // then none marked: 248 * 240 >> 8 = 232.
    let ecn = Params::new().set("ecn_low", 1.0);
    let mut p = Path::new(&ecn);
    p.bbr.min_rtt_us = 4000;
    p.tcp.delivered = 100;
    p.tcp.delivered_ce = 50;
    p.bbr.update_ecn_alpha(&p.tcp);
    assert!(p.bbr.ecn_eligible);
    assert_eq!(p.bbr.ecn_alpha(), 248);
    p.tcp.delivered = 200;
    p.bbr.update_ecn_alpha(&p.tcp);
    assert_eq!(p.bbr.ecn_alpha(), 232);
    // Above ecn_max_rtt_us (5 ms) the sender ignores ECN; without ecn_low too.
    let mut far = Path::new(&ecn);
    far.bbr.min_rtt_us = 5001;
    far.bbr.update_ecn_alpha(&far.tcp);
    assert!(!far.bbr.ecn_eligible);
    let mut off = Path::new(&Params::new());
    off.bbr.min_rtt_us = 4000;
    off.bbr.update_ecn_alpha(&off.tcp);
    assert!(!off.bbr.ecn_eligible && !off.bbr.needs_ecn());
    assert!(Bbr3::new(&ecn).unwrap().needs_ecn());
}

#[test]
fn two_rounds_of_half_marked_end_startup() {
    // bbr_check_ecn_too_high_in_startup: ce_ratio >= ecn_thresh (128) in full_ecn_cnt (2)
    // consecutive rounds ends STARTUP with inflight_hi = max(bbr_inflight(max_bw, 1),
    // inflight_latest).
    let mut p = Path::new(&Params::new().set("ecn_low", 1.0));
    p.bbr.min_rtt_us = 4000;
    p.bbr.bw_hi = [BW, BW];
    p.bbr.inflight_latest = 30;
    p.tcp.delivered = 100;
    p.tcp.delivered_ce = 50;
    p.bbr.update_ecn_alpha(&p.tcp);
    assert!(!p.bbr.full_bw_reached());
    p.tcp.delivered = 200;
    p.tcp.delivered_ce = 100;
    p.bbr.update_ecn_alpha(&p.tcp);
    assert!(p.bbr.full_bw_reached());
    // bdp = ceil(167773 * 4000 / 2^24) = 41 (> inflight_latest 30).
    assert_eq!(p.bbr.inflight_hi(), 41);
}

#[test]
fn an_ecn_round_outside_probing_cuts_inflight_lo_by_the_alpha() {
    // bbr_ecn_lower_bounds: inflight_lo * (256 - (alpha * 85 >> 8)) >> 8. The first ACK
    // starts a round with no CE delivered: alpha 256 -> 240 * 256 >> 8 = 240, so the cut
    // keeps 256 - (240 * 85 >> 8 = 79) = 177/256: cwnd 200 -> 138. No bw_lo cut for ECN.
    // (Without ecn_reprobe_gain, which would start a probe on the next ACK, see below.)
    let ecn = Params::new().set("ecn_low", 1.0).set("ecn_reprobe_gain", 0.0);
    let mut p = Path::in_probe_bw(&ecn);
    p.bbr.ecn_eligible = true;
    p.ack();
    assert_eq!(p.bbr.phase(), Phase::Cruise);
    p.ack_with(|rs| rs.is_ece = true);
    assert!(p.bbr.ecn_in_round);
    while !p.bbr.loss_round_start {
        p.ack();
    }
    assert_eq!(p.bbr.ecn_alpha(), 240);
    assert_eq!((p.bbr.inflight_lo(), p.bbr.bw_lo()), (138, u32::MAX));
    assert_eq!(p.tcp.cwnd, 138);
    assert_eq!(p.bbr.phase(), Phase::Cruise);
}

#[test]
fn marks_without_loss_in_a_cycle_start_a_probe_at_once() {
    // bbr_check_time_to_probe_bw: ECN-eligible, CE delivered in this cycle, no loss, Open:
    // REFILL now, with the first round's inflight_hi growth 2^n, n = ilog2(inflight_hi *
    // ecn_reprobe_gain >> 8) = ilog2(200 * 128 >> 8 = 100) = 6.
    let mut p = Path::in_probe_bw(&Params::new().set("ecn_low", 1.0));
    p.bbr.ecn_eligible = true;
    p.bbr.inflight_hi = 200;
    p.ack_with(|rs| rs.delivered_ce = 1);
    assert!(p.bbr.ecn_in_cycle);
    p.ack();
    assert_eq!((p.bbr.phase(), p.bbr.bw_probe_up_rounds), (Phase::Refill, 6));
    // With a loss in the cycle too, no early probe.
    let mut p = Path::in_probe_bw(&Params::new().set("ecn_low", 1.0));
    p.bbr.ecn_eligible = true;
    p.bbr.inflight_hi = 200;
    p.ack_with(|rs| {
        rs.delivered_ce = 1;
        rs.lost = 1;
    });
    p.ack();
    assert_ne!(p.bbr.phase(), Phase::Refill);
}

#[test]
fn ce_marks_above_half_of_a_probe_end_it() {
    // bbr_is_inflight_too_high's ECN half: delivered_ce > delivered * 128 >> 8.
    let mut p = Path::in_probe_bw(&Params::new().set("ecn_low", 1.0));
    p.bbr.ecn_eligible = true;
    p.bbr.cycle_idx = Phase::Up;
    p.bbr.bw_probe_samples = true;
    p.bbr.inflight_hi = 1000;
    p.ack_with(|rs| rs.delivered_ce = 50);
    assert_eq!(p.bbr.phase(), Phase::Up);
    p.ack_with(|rs| rs.delivered_ce = 51);
    assert_eq!((p.bbr.phase(), p.bbr.inflight_hi()), (Phase::Down, 100));
}

#[test]
fn cruising_leaves_fifteen_percent_of_inflight_hi_unused() {
    // bbr_inflight_with_headroom: inflight_hi - max(inflight_hi * 38 >> 8, 1), at least 4:
    // 200 -> 200 - 29 = 171; 4 -> max(3, 4) = 4.
    let mut p = Path::in_probe_bw(&Params::new());
    p.bbr.inflight_hi = 200;
    assert_eq!(p.bbr.inflight_with_headroom(), 171);
    p.bbr.inflight_hi = 4;
    assert_eq!(p.bbr.inflight_with_headroom(), 4);
    p.bbr.inflight_hi = 200;
    p.bbr.cycle_idx = Phase::Cruise;
    p.bbr.bound_cwnd_for_inflight_model(&mut p.tcp);
    assert_eq!(p.tcp.cwnd, 171);
}

#[test]
fn probe_up_grows_inflight_hi_by_doubling_steps_per_round() {
    // bbr_raise_inflight_hi_slope: one packet of inflight_hi per cwnd / 2^rounds delivered;
    // at cwnd 200 the first round adds one per 200 ACKs, the next one per 100, then 50.
    let mut p = Path::in_probe_bw(&Params::new());
    p.bbr.inflight_hi = 200;
    p.bbr.bw_probe_up_rounds = 0;
    p.bbr.raise_inflight_hi_slope(&p.tcp);
    assert_eq!((p.bbr.bw_probe_up_cnt, p.bbr.bw_probe_up_rounds), (200, 1));
    p.bbr.raise_inflight_hi_slope(&p.tcp);
    assert_eq!(p.bbr.bw_probe_up_cnt, 100);
    // 150 ACKs while the window is full at inflight_hi: +1 per 100, 50 carried.
    p.bbr.cycle_idx = Phase::Up;
    p.tcp.is_cwnd_limited = true;
    let rs = RateSample { acked_sacked: 150, ..RateSample::default() };
    p.bbr.probe_inflight_hi_upward(&p.tcp, &rs);
    assert_eq!((p.bbr.inflight_hi(), p.bbr.bw_probe_up_acks), (201, 50));
    // Not cwnd-limited: no growth.
    p.tcp.is_cwnd_limited = false;
    p.bbr.probe_inflight_hi_upward(&p.tcp, &rs);
    assert_eq!(p.bbr.inflight_hi(), 201);
}

#[test]
fn probe_rtt_comes_after_five_seconds_and_holds_half_a_bdp() {
    // HZ 1000: probe_rtt_min_stamp is jiffy 0 (init) and every sample is 10 ms, not below
    // it, so the 5 s filter expires when jiffies > 5000: the ACK at t = 5.001 s.
    let mut p = Path::in_probe_bw(&Params::new());
    while p.now_us < 5_000_900 {
        p.ack();
        assert_eq!(p.bbr.mode(), Mode::ProbeBw, "t {}", p.now_us);
    }
    p.ack();
    assert_eq!(p.bbr.mode(), Mode::ProbeRtt);
    // cwnd <= bbr_probe_rtt_cwnd = max(4, bdp(bw, 128)) = ceil(167773 * 10000 / 2 / 2^24) =
    // 51.
    assert_eq!(p.tcp.cwnd, 51);
    // With 51 in flight, PROBE_RTT lasts 200 ms and a round, then cruises in PROBE_BW.
    p.in_flight = 51;
    let entered = p.now_us;
    while p.bbr.mode() == Mode::ProbeRtt {
        p.ack();
    }
    assert_eq!(p.bbr.phase(), Phase::Cruise);
    assert!((200_000..=202_000).contains(&(p.now_us - entered)), "{}", p.now_us - entered);
}

#[test]
fn undo_restores_the_bounds_saved_at_the_reduction() {
    // bbr_ssthresh saves bw_lo, inflight_lo, inflight_hi; bbr_undo_cwnd takes the max of
    // each with its saved value and returns prior_cwnd.
    let mut p = Path::in_probe_bw(&Params::new());
    p.bbr.inflight_hi = 300;
    p.bbr.inflight_lo = 250;
    p.bbr.bw_lo = 1000;
    assert_eq!(p.bbr.ssthresh(&p.tcp, 0), p.tcp.ssthresh);
    p.bbr.inflight_hi = 100;
    p.bbr.inflight_lo = 80;
    p.bbr.bw_lo = 500;
    assert_eq!(p.bbr.undo_cwnd(&mut p.tcp, 0), 200);
    assert_eq!((p.bbr.inflight_hi(), p.bbr.inflight_lo(), p.bbr.bw_lo()), (300, 250, 1000));
}

#[test]
fn a_timeout_outside_probing_starts_inflight_lo_at_the_window() {
    // bbr_set_state(TCP_CA_Loss): inflight_lo = max(cwnd, prior_cwnd) when not probing and
    // unset; leaving Loss restores cwnd to prior_cwnd.
    let mut p = Path::in_probe_bw(&Params::new());
    p.bbr.prior_cwnd = 150;
    p.bbr.set_state(&mut p.tcp, CaState::Loss, 0);
    assert_eq!(p.bbr.inflight_lo(), 200);
    p.tcp.cwnd = 1;
    p.bbr.set_state(&mut p.tcp, CaState::Open, 0);
    assert_eq!(p.tcp.cwnd, 150);
}

#[test]
fn bad_parameters_are_refused_naming_them() {
    let err = Bbr3::new(&Params::new().set("loss_thresh", 256.0)).unwrap_err();
    assert!(err.0.contains("loss_thresh") && err.0.contains("bbr3"), "{err}");
    let err = Bbr3::new(&Params::new().set("full_ecn_cnt", 4.0)).unwrap_err();
    assert!(err.0.contains("full_ecn_cnt"), "{err}");
}
