//! Tests of `bbr` with numbers derived from `tcp_bbr.c`'s constants and integer arithmetic.
//!
//! The harness is an ideal path: one ACK of one segment every 100 us (10,000 packets/s),
//! RTT 10 ms, so BDP = 100 packets and every rate sample is 100 packets in 10 ms:
//! bw = 100 * 2^24 / 10000 = 167772 (packets/us << 24). A packet-timed round is 101 ACKs
//! (a round starts when `prior_delivered = delivered - 100` reaches the `delivered` of the
//! previous round start), the first at ACK 1: rounds start at ACKs 1, 102, 203, 304, ...
//!
//! Pacing rates (`bbr_rate_bytes_per_sec`, MSS 1448): rate(bw, gain) =
//! ((bw * 1448 * gain) >> 8) * 990000 >> 24: gain 739 -> 41381651 B/s, 320 -> 17918982,
//! 256 -> 14335186, 192 -> 10751389, 88 -> 4927720. The TSO goal is (rate >> 10) / 1448:
//! 27, 12, 9, 7 and 3 segments.

use super::*;

const GAP_US: u64 = 100;
const RTT_US: i64 = 10_000;
const BDP: u32 = 100;
const BW: u32 = 167_772;

struct Path {
    bbr: Bbr,
    tcp: TcpState,
    now_us: u64,
    acks: u64,
    /// In flight before each ACK; `None`: the whole window (cwnd-limited).
    in_flight: Option<u32>,
}

impl Path {
    fn new() -> Self {
        let mut bbr = Bbr::new(&Params::new()).unwrap();
        let mut tcp = TcpState { srtt_us: RTT_US as u32, ..TcpState::default() };
        bbr.init(&mut tcp, 0);
        Self { bbr, tcp, now_us: 0, acks: 0, in_flight: None }
    }

    fn ack(&mut self, rtt_us: i64, losses: u32) {
        self.now_us += GAP_US;
        self.acks += 1;
        self.tcp.in_flight = self.in_flight.unwrap_or(self.tcp.cwnd);
        let rs = RateSample {
            prior_delivered: self.tcp.delivered.saturating_sub(BDP),
            delivered: BDP as i32,
            interval_us: RTT_US,
            rtt_us,
            losses,
            acked_sacked: 1,
            prior_in_flight: self.tcp.in_flight,
            ..RateSample::default()
        };
        self.tcp.delivered += 1;
        self.tcp.lost += losses;
        self.tcp.delivered_mstamp_us = self.now_us;
        self.bbr.cong_control(&mut self.tcp, &rs, self.now_us * 1000);
    }

    fn acks(&mut self, n: u64) {
        for _ in 0..n {
            self.ack(RTT_US, 0);
        }
    }

    /// Through STARTUP (full bw at ACK 304) and DRAIN into PROBE_BW.
    fn drive_to_probe_bw(&mut self) {
        self.acks(304);
        self.in_flight = Some(110);
        self.ack(RTT_US, 0);
        assert_eq!(self.bbr.mode(), Mode::ProbeBw);
        self.in_flight = None;
    }
}

#[test]
fn gains_are_the_kernels() {
    // 256 * 2885 / 1000 + 1 = 738 + 1; 256 * 1000 / 2885 = 88; the cycle 5/4, 3/4, 1 x 6.
    assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
    assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
}

#[test]
fn init_paces_at_high_gain_over_the_nominal_rtt() {
    // No RTT yet: 1 ms nominal. bw = 10 * 2^24 / 1000 = 167772, the same scaled rate as the
    // harness path, so the pacing rate is rate(167772, 739) = 41381651 B/s.
    let mut bbr = Bbr::new(&Params::new()).unwrap();
    let mut tcp = TcpState::default();
    bbr.init(&mut tcp, 0);
    assert_eq!(tcp.pacing_rate, 41_381_651);
    assert!(tcp.paced);
    assert_eq!(tcp.ssthresh, TCP_INFINITE_SSTHRESH);
    assert_eq!((bbr.mode(), bbr.pacing_gain(), bbr.cwnd_gain()), (Mode::Startup, HIGH_GAIN, HIGH_GAIN));
}

#[test]
fn startup_ends_after_three_rounds_without_growth_and_drain_ends_at_one_bdp() {
    let mut p = Path::new();
    // Round 1 (ACK 1) sets full_bw = bw; rounds 2, 3, 4 (ACKs 102, 203, 304) see no 25%
    // growth: full_bw_cnt 1, 2, 3 -> full at ACK 304.
    p.acks(303);
    assert_eq!(p.bbr.mode(), Mode::Startup);
    // STARTUP slow-starts toward bdp(bw, 739) = ceil(289.0) + 3 * 27 = 370: +1 per ACK.
    assert_eq!(p.tcp.cwnd, 10 + 303);
    p.ack(RTT_US, 0);
    assert_eq!(p.bbr.mode(), Mode::Drain);
    // ssthresh = bbr_inflight(bw, 1) = 100 + 3 * 27 (STARTUP's TSO goal) = 181 -> even 182.
    assert_eq!(p.tcp.ssthresh, 182);
    assert_eq!(p.tcp.pacing_rate, 4_927_720);
    // DRAIN ends when in-flight <= bbr_inflight(bw, 1) at DRAIN's TSO goal 3: 100 + 9 -> 110.
    p.in_flight = Some(111);
    p.ack(RTT_US, 0);
    assert_eq!(p.bbr.mode(), Mode::Drain);
    p.in_flight = Some(110);
    p.ack(RTT_US, 0);
    assert_eq!(p.bbr.mode(), Mode::ProbeBw);
    assert_eq!(p.bbr.cwnd_gain(), CWND_GAIN);
}

#[test]
fn probe_bw_enters_at_a_random_phase_but_never_the_draining_one() {
    // cycle_idx = 7 - r, r in 0..7, then advanced: {0, 2, 3, 4, 5, 6, 7}, each possible.
    let mut seen = [0u32; 8];
    let tcp = TcpState::default();
    for seed in 0..700 {
        let mut bbr = Bbr::new(&Params::new()).unwrap();
        bbr.seed_random(seed);
        bbr.reset_probe_bw_mode(&tcp);
        seen[bbr.cycle_idx() as usize] += 1;
    }
    assert_eq!(seen[1], 0);
    assert!(seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 50), "{seen:?}");
}

#[test]
fn probe_bw_cwnd_is_two_bdp_plus_the_budgets() {
    let mut p = Path::new();
    p.drive_to_probe_bw();
    let extra = |p: &Path| crate::test_support::var_of(&p.bbr, "extra_acked") as u32;
    // Each phase lasts one min_rtt (100 ACKs); run until the cruising phase 2.
    while p.bbr.cycle_idx() != 2 {
        p.ack(RTT_US, 0);
    }
    p.acks(50);
    // Gain 1: TSO goal 9; target = bdp(bw, 2) = 200, + extra_acked, + 27, rounded up even.
    // ACKs arrive at exactly bw, so extra_acked is only the floor in expected_acked.
    let e = extra(&p);
    assert!(e <= 2, "{e}");
    assert_eq!(p.tcp.cwnd, (200 + e + 27 + 1) & !1);
    // Phase 0 (gain 5/4): TSO goal 12 and 2 more packets: (200 + e + 36 rounded even) + 2.
    while p.bbr.cycle_idx() != 0 {
        p.ack(RTT_US, 0);
    }
    p.acks(50);
    let e = extra(&p);
    assert_eq!(p.tcp.cwnd, ((200 + e + 36 + 1) & !1) + 2);
    assert_eq!(p.tcp.pacing_rate, 17_918_982);
}

#[test]
fn probe_rtt_after_ten_seconds_without_a_lower_rtt() {
    // HZ 1000. min_rtt 10 ms is last refreshed at ACK 305 (t = 30.5 ms, jiffy 30), the
    // end of DRAIN; every later sample is 10.5 ms. The filter expires when
    // jiffies > 30 + 10 * 1000, at t = 10.031 s: ACK 100310.
    let mut p = Path::new();
    p.drive_to_probe_bw();
    while p.acks < 100_309 {
        p.ack(10_500, 0);
    }
    assert_eq!(p.bbr.mode(), Mode::ProbeBw);
    let cwnd_before = p.tcp.cwnd;
    p.ack(10_500, 0);
    assert_eq!(p.bbr.mode(), Mode::ProbeRtt);
    // The expired filter takes the new sample; the window is cut to 4 and saved.
    assert_eq!((p.bbr.min_rtt_us(), p.tcp.cwnd), (10_500, CWND_MIN_TARGET));
    assert_eq!(crate::test_support::var_of(&p.bbr, "prior_cwnd") as u32, cwnd_before);
    assert_eq!(p.tcp.app_limited, p.tcp.delivered + cwnd_before);
    // Next ACK (jiffy 10031): 4 in flight, so PROBE_RTT ends after jiffy 10031 + 200 and a
    // round (done by ACK 100412): the first ACK past jiffy 10231 is at t = 10.232 s, ACK 102320.
    while p.acks < 102_319 {
        p.ack(10_500, 0);
        assert_eq!(p.bbr.mode(), Mode::ProbeRtt, "ACK {}", p.acks);
        assert!(p.tcp.cwnd <= CWND_MIN_TARGET);
    }
    p.ack(10_500, 0);
    assert_eq!(p.bbr.mode(), Mode::ProbeBw);
    assert!(p.tcp.cwnd >= cwnd_before - 2, "{} vs {cwnd_before}", p.tcp.cwnd);
}

#[test]
fn recovery_conserves_packets_then_restores_the_saved_window() {
    let mut p = Path::new();
    p.drive_to_probe_bw();
    p.acks(300);
    let cwnd = p.tcp.cwnd;
    // tcp_enter_recovery: ssthresh hook saves cwnd and leaves ssthresh (182) as it is.
    assert_eq!(p.bbr.ssthresh(&p.tcp, 0), 182);
    p.tcp.ca_state = CaState::Recovery;
    // First ACK in Recovery with 3 losses, 50 in flight: cwnd = in_flight + acked = 51.
    p.in_flight = Some(50);
    p.ack(RTT_US, 3);
    assert_eq!(p.tcp.cwnd, 51);
    // Back to Open: cwnd = max(cwnd, prior_cwnd), then min(cwnd + 1, target).
    p.tcp.ca_state = CaState::Open;
    p.ack(RTT_US, 0);
    assert_eq!(p.tcp.cwnd, cwnd);
    // undo keeps the window and restarts full-pipe detection.
    assert_eq!(p.bbr.undo_cwnd(&mut p.tcp, 0), cwnd);
}

#[test]
fn a_policer_is_detected_from_two_lossy_intervals_of_equal_rate() {
    // In PROBE_BW, a loss starts long-term sampling. With 25% of packets lost (64/256 >=
    // 50/256) and the same delivery rate in two intervals of >= 4 rounds, lt_bw is their
    // average: 10,000 packets/s = 1 packet per 100 us, i.e. 2^24 / 100 = 167772.
    let mut p = Path::new();
    p.drive_to_probe_bw();
    p.ack(RTT_US, 1);
    for _interval in 0..2 {
        // 4 rounds of 101 ACKs, one of them lossy per 4 delivered.
        for i in 0..405 {
            p.ack(RTT_US, u32::from(i % 4 == 3));
        }
    }
    assert_eq!(crate::test_support::var_of(&p.bbr, "lt_use_bw"), 1.0);
    let lt_bw = crate::test_support::var_of(&p.bbr, "lt_bw") as u32;
    assert!(lt_bw.abs_diff(BW) <= BW / 100, "{lt_bw}");
    assert_eq!(p.bbr.pacing_gain(), BBR_UNIT);
}
