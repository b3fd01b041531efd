//! `yeah`: YeAH-TCP as Linux ships it, `net/ipv4/tcp_yeah.c` (Linux 6.x: `tcp_snd_cwnd()`
//! accessors, `max_t(int, cwnd - reduction, 2)` in ssthresh; read in raspberrypi/linux
//! 656a52a8), after Baiocchi, Castellani and Vacirca (PFLDnet 2007), on Vegas' RTT filter
//! and hooks (`tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`).
//!
//! After slow start a window grows as Scalable TCP (one segment per `min(cwnd, 100)` ACKed
//! segments) in the "fast" mode and as Reno in the "slow" mode. Once per RTT (an ACK past
//! the `snd_nxt` saved a round ago, with more than two RTT samples in the round) YeAH
//! estimates the backlog `queue = cwnd (minRTT - baseRTT) / minRTT`; above 80 segments, or
//! with the queueing delay above baseRTT / 8, the next round is slow, and with more than 80
//! queued and `cwnd` above `reno_count` the window drops by `min(queue, cwnd / 2)` at once
//! ("precautionary decongestion"). `reno_count` estimates a competing Reno flow's window. A
//! loss removes the last backlog estimate (between cwnd / 8 and cwnd / 2) unless the flow
//! has been slow for 16 rounds, then half. Undo is `tcp_reno_undo_cwnd` (the trait's
//! default). Every constant is a `#define` in the module: no parameters.

use crate::params::{ParamError, ParamSpec, Params};
use crate::seq::after;
use crate::tcp::{tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaState, TcpState};
use crate::vegas::{RttFilter, NO_RTT};
use crate::CongestionControl;

/// `TCP_YEAH_ALPHA`: segments queued above which the flow is slow and decongests.
pub(crate) const ALPHA: u32 = 80;
/// `TCP_YEAH_GAMMA`: the fraction of the queue decongestion removes, 1/GAMMA.
const GAMMA: u32 = 1;
/// `TCP_YEAH_DELTA`: a loss removes at least `cwnd >> DELTA`.
const DELTA: u32 = 3;
/// `TCP_YEAH_EPSILON`: decongestion removes at most `cwnd >> EPSILON`.
const EPSILON: u32 = 1;
/// `TCP_YEAH_PHY`: a queueing delay above `baseRTT / PHY` makes the flow slow.
const PHY: u32 = 8;
/// `TCP_YEAH_RHO`: slow rounds after which a loss halves.
const RHO: u32 = 16;
/// `TCP_YEAH_ZETA`: fast rounds after which `reno_count` restarts.
const ZETA: u32 = 50;
/// `TCP_SCALABLE_AI_CNT`.
pub(crate) const SCALABLE_AI_CNT: u32 = 100;
/// `doing_reno_now` saturates here.
const RENO_ROUNDS_MAX: u32 = 0xff_ffff;

/// YeAH-TCP (`struct yeah` over `struct vegas`).
#[derive(Clone, Debug)]
pub struct Yeah {
    /// Vegas' `baseRTT`, `minRTT` and `cntRTT` (this round).
    rtt: RttFilter,
    /// Vegas' `beg_snd_nxt`: the round ends when an ACK passes it.
    beg_snd_nxt: u32,
    /// `lastQ`: the last backlog estimate, segments.
    last_q: u32,
    /// `doing_reno_now`: consecutive slow rounds (0: fast, Scalable).
    doing_reno_now: u32,
    /// `reno_count`: the window a competing Reno flow would have, segments.
    reno_count: u32,
    /// `fast_count`: fast rounds since `reno_count` restarted.
    fast_count: u32,
}

impl Yeah {
    pub const PARAMS: &'static [ParamSpec] = &[];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        params.check("yeah", Self::PARAMS)?;
        Ok(Yeah { rtt: RttFilter::NEW, beg_snd_nxt: 0, last_q: 0, doing_reno_now: 0, reno_count: 2, fast_count: 0 })
    }

    /// `vegas_enable`: a new round from the next segment sent.
    fn enable(&mut self, tcp: &TcpState) {
        self.beg_snd_nxt = tcp.snd_nxt;
        self.rtt.wipe();
    }

    /// `tcp_vegas_init`: forget `baseRTT` too.
    fn restart(&mut self, tcp: &TcpState) {
        self.rtt.base = NO_RTT;
        self.enable(tcp);
    }

    /// The once-per-RTT decision with more than two samples in the round.
    fn decide(&mut self, tcp: &mut TcpState) {
        let rtt = self.rtt.min;
        // Wraps: u32 difference (minRTT >= baseRTT while both come from the same samples).
        let delay = rtt.wrapping_sub(self.rtt.base);
        // Truncates: do_div's u64 quotient into the u32 `queue`.
        let queue = (u64::from(tcp.cwnd) * u64::from(delay) / u64::from(rtt)) as u32;
        if queue > ALPHA || delay > self.rtt.base / PHY {
            if queue > ALPHA && tcp.cwnd > self.reno_count {
                let reduction = (queue / GAMMA).min(tcp.cwnd >> EPSILON);
                tcp.cwnd = (tcp.cwnd - reduction).max(self.reno_count);
                tcp.ssthresh = tcp.cwnd;
            }
            if self.reno_count <= 2 {
                self.reno_count = (tcp.cwnd >> 1).max(2);
            } else {
                // Wraps: the kernel's u32 count.
                self.reno_count = self.reno_count.wrapping_add(1);
            }
            self.doing_reno_now = (self.doing_reno_now + 1).min(RENO_ROUNDS_MAX);
        } else {
            // Wraps: u32, though it restarts past ZETA.
            self.fast_count = self.fast_count.wrapping_add(1);
            if self.fast_count > ZETA {
                self.reno_count = 2;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl CongestionControl for Yeah {
    /// `tcp_yeah_init`: Vegas' init, and the clamp that keeps `cwnd * 128` in u32.
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.restart(tcp);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = 2;
        tcp.cwnd_clamp = tcp.cwnd_clamp.min(u32::MAX / 128);
    }

    /// `tcp_yeah_ssthresh`: remove the last backlog, between cwnd/8 and cwnd/2, or half
    /// after RHO slow rounds.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        let half = (tcp.cwnd >> 1).max(2);
        let reduction = if self.doing_reno_now < RHO { self.last_q.min(half).max(tcp.cwnd >> DELTA) } else { half };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        // Wraps: u32 difference read as int (cwnd 1 less 2 is -1, floored to 2).
        (tcp.cwnd.wrapping_sub(reduction) as i32).max(2) as u32
    }

    /// `tcp_yeah_cong_avoid`; the kernel's `ack` is `snd_una` after this ACK.
    fn cong_avoid(&mut self, tcp: &mut TcpState, mut acked: u32, _now_ns: u64) {
        if !tcp.cwnd_limited {
            return;
        }
        // Slow start that uses every segment ACKed goes straight to the round's test;
        // otherwise the count runs, even for an ACK of nothing.
        let grow = if tcp.in_slow_start() {
            acked = tcp_slow_start(tcp, acked);
            acked > 0
        } else {
            true
        };
        if grow {
            let w = if self.doing_reno_now == 0 { tcp.cwnd.min(SCALABLE_AI_CNT) } else { tcp.cwnd };
            tcp_cong_avoid_ai(tcp, w, acked);
        }
        if after(tcp.snd_una, self.beg_snd_nxt) {
            if self.rtt.count > 2 {
                self.decide(tcp);
            }
            self.beg_snd_nxt = tcp.snd_nxt;
            self.rtt.wipe();
        }
    }

    /// `tcp_vegas_state`: every move to Open starts a round (Vegas' on/off switch is never
    /// read by YeAH).
    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Open {
            self.enable(tcp);
        }
    }

    /// `tcp_vegas_cwnd_event`.
    fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, _now_ns: u64) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart(tcp);
        }
    }

    /// `tcp_vegas_pkts_acked`.
    fn pkts_acked(&mut self, _tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        self.rtt.sample(sample);
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("last_queue", f64::from(self.last_q));
        out("reno_rounds", f64::from(self.doing_reno_now));
        out("reno_count", f64::from(self.reno_count));
        out("fast_count", f64::from(self.fast_count));
        out("base_rtt_us", f64::from(self.rtt.base));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: 1, rtt_us, in_flight: 0 }
    }

    /// Open in congestion avoidance at `cwnd` (ssthresh 2), baseRTT 10001 us from an earlier
    /// round, the round begun at snd_nxt 1000 with three samples of `rtt_us`; the next ACK
    /// (snd_una 1001) ends it.
    fn round(cwnd: u32, rtt_us: i64) -> (Yeah, TcpState) {
        let mut y = Yeah::new(&Params::new()).unwrap();
        let mut tcp = TcpState { cwnd, ssthresh: 2, snd_una: 900, snd_nxt: 1000, ..TcpState::default() };
        y.init(&mut tcp, 0);
        y.pkts_acked(&mut tcp, &sample(10_000), 0);
        y.set_state(&mut tcp, CaState::Open, 0);
        for _ in 0..3 {
            y.pkts_acked(&mut tcp, &sample(rtt_us), 0);
        }
        (tcp.snd_una, tcp.snd_nxt) = (1001, 1100);
        (y, tcp)
    }

    #[test]
    fn fast_mode_grows_as_scalable_slow_mode_as_reno() {
        // Mid-round (snd_una 1000 not after 1000), fast: w = min(1000, 100), 100 ACKed
        // segments add one.
        let (mut y, mut tcp) = round(1000, 10_000);
        tcp.snd_una = 1000;
        y.cong_avoid(&mut tcp, 100, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (1001, 0));
        // Slow: w = cwnd, 100 ACKed segments add nothing yet.
        y.doing_reno_now = 1;
        y.cong_avoid(&mut tcp, 100, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (1001, 100));
    }

    #[test]
    fn a_short_queue_keeps_the_flow_fast() {
        // minRTT 10501, baseRTT 10001: queue = 1000 * 500 / 10501 = 47 (47.6) <= 80, delay
        // 500 <= 10001 / 8 = 1250: fast, fast_count 1, lastQ 47; the round restarts.
        let (mut y, mut tcp) = round(1000, 10_500);
        y.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((y.last_q, y.doing_reno_now, y.fast_count, tcp.cwnd), (47, 0, 1, 1000));
        assert_eq!((y.beg_snd_nxt, y.rtt.count, y.rtt.min), (1100, 0, NO_RTT));
    }

    #[test]
    fn a_long_queue_decongests_and_slows() {
        // minRTT 12001: queue = 1000 * 2000 / 12001 = 166 > 80 and cwnd 1000 > reno_count 2:
        // reduction min(166, 500) = 166, cwnd 834 = ssthresh; reno_count was 2, so it
        // becomes max(834 / 2, 2) = 417; one slow round.
        let (mut y, mut tcp) = round(1000, 12_000);
        y.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.ssthresh, y.reno_count, y.doing_reno_now, y.last_q), (834, 834, 417, 1, 166));
        // A delay above baseRTT / 8 with a short queue: slow without decongestion. cwnd 100,
        // minRTT 12001: queue = 100 * 2000 / 12001 = 16, delay 2000 > 1250.
        let (mut y, mut tcp) = round(100, 12_000);
        y.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, y.reno_count, y.doing_reno_now, y.last_q), (100, 50, 1, 16));
        // The window never drops below reno_count (417, then counted up to 418): queue =
        // 500 * 12000 / 22001 = 272, reduction min(272, 250) = 250, cwnd max(250, 417).
        let (mut y, mut tcp) = round(500, 22_000);
        y.reno_count = 417;
        y.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, y.reno_count), (417, 418));
    }

    #[test]
    fn reno_count_restarts_after_zeta_fast_rounds() {
        let (mut y, mut tcp) = round(1000, 10_500);
        (y.reno_count, y.fast_count) = (300, ZETA);
        y.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((y.reno_count, y.fast_count), (2, 0));
    }

    #[test]
    fn loss_removes_the_backlog_within_an_eighth_and_a_half() {
        let (mut y, tcp) = round(1000, 10_000);
        // lastQ 0: at least cwnd >> 3 = 125 removed.
        assert_eq!(y.ssthresh(&tcp, 0), 875);
        // lastQ 300: 300 removed; lastQ 700: capped at 500.
        y.last_q = 300;
        assert_eq!(y.ssthresh(&tcp, 0), 700);
        y.last_q = 700;
        assert_eq!(y.ssthresh(&tcp, 0), 500);
        // After RHO slow rounds, half whatever the backlog; reno_count halves (at least 2)
        // and fast_count restarts at every loss.
        (y.last_q, y.doing_reno_now, y.reno_count, y.fast_count) = (0, RHO, 300, 7);
        assert_eq!(y.ssthresh(&tcp, 0), 500);
        assert_eq!((y.reno_count, y.fast_count), (150, 0));
        // cwnd 1: reduction max(min(0, 2), 0) = 0 keeps 1, floored to 2; with lastQ 5 the
        // reduction is 2 and 1 - 2 = -1 as an int, floored to 2.
        let one = TcpState { cwnd: 1, ..TcpState::default() };
        y.doing_reno_now = 0;
        assert_eq!(y.ssthresh(&one, 0), 2);
        y.last_q = 5;
        assert_eq!(y.ssthresh(&one, 0), 2);
    }

    #[test]
    fn slow_start_then_the_round() {
        // cwnd 10, ssthresh 12, an ACK of 5 at the end of a round with queue 0: slow start
        // to 12, 3 left for Scalable's count (w 12).
        let (mut y, mut tcp) = round(10, 10_000);
        tcp.ssthresh = 12;
        y.cong_avoid(&mut tcp, 5, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt, y.fast_count), (12, 3, 1));
        // Not cwnd-limited: nothing, not even the round.
        let (mut y, mut tcp) = round(10, 10_000);
        tcp.cwnd_limited = false;
        y.cong_avoid(&mut tcp, 5, 0);
        assert_eq!((tcp.cwnd, y.beg_snd_nxt), (10, 1000));
    }

    #[test]
    fn init_clamps_so_that_cwnd_times_128_fits() {
        let mut y = Yeah::new(&Params::new()).unwrap();
        let mut tcp = TcpState::default();
        y.init(&mut tcp, 0);
        assert_eq!(tcp.cwnd_clamp, 33_554_431);
    }
}
