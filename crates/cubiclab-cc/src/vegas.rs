//! `vegas`: TCP Vegas as Linux ships it, `net/ipv4/tcp_vegas.c` (Linux 6.x; read at
//! torvalds/linux 09c434b8, unchanged in substance through 6.18 but for the
//! `tcp_snd_cwnd()` accessors), after Brakmo and Peterson (IEEE JSAC 13(8), 1995).
//!
//! Once per RTT (when the ACK passes the `snd_nxt` saved a round ago) and only with more
//! than two RTT samples in that round, Vegas compares the window with what the path holds:
//! `diff = cwnd * (minRTT - baseRTT) / baseRTT` segments queued, with `baseRTT` the least
//! RTT ever seen and `minRTT` the least of the round (both `rtt_us + 1`, never zero). In
//! slow start more than `gamma` queued leaves slow start at the window the ACK rate
//! supports (`cwnd * baseRTT / minRTT + 1`); in congestion avoidance above `beta` queued
//! takes one segment off, below `alpha` adds one. Between rounds slow start goes on per
//! ACK; with too few samples, outside Open, or before a round has passed it is Reno. A
//! loss halves (`tcp_reno_ssthresh`); undo is `tcp_reno_undo_cwnd` (the trait's default).

use crate::params::{ParamError, ParamSpec, Params};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::seq::after;
use crate::tcp::{tcp_slow_start, AckSample, CaEvent, CaState, TcpState};
use crate::CongestionControl;

/// The kernel's "no sample yet" for `baseRTT` and `minRTT`.
pub(crate) const NO_RTT: u32 = 0x7fff_ffff;

/// The RTT filter Vegas and Veno share, in us of `rtt_us + 1` ("never allow zero rtt").
#[derive(Clone, Copy, Debug)]
pub(crate) struct RttFilter {
    /// `baseRTT`: the least sample since the last restart.
    pub base: u32,
    /// `minRTT`: the least sample since the algorithm last read it.
    pub min: u32,
    /// `cntRTT` (u16): samples counted since the algorithm last cleared it.
    pub count: u16,
}

impl RttFilter {
    pub const NEW: RttFilter = RttFilter { base: NO_RTT, min: NO_RTT, count: 0 };

    /// `tcp_vegas_pkts_acked`, `tcp_veno_pkts_acked`.
    pub fn sample(&mut self, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // The kernel's s32 rtt_us + 1 in a u32: wraps only past 2^31 us.
        let vrtt = (sample.rtt_us as u32).wrapping_add(1);
        self.base = self.base.min(vrtt);
        self.min = self.min.min(vrtt);
        // Wraps: the kernel's u16 counter.
        self.count = self.count.wrapping_add(1);
    }

    /// "Wipe the slate clean for the next RTT": no sample in the new round yet.
    pub fn wipe(&mut self) {
        self.count = 0;
        self.min = NO_RTT;
    }
}

/// TCP Vegas (`struct vegas`).
#[derive(Clone, Debug)]
pub struct Vegas {
    alpha: u32,
    beta: u32,
    gamma: u32,
    /// `doing_vegas_now`: Open since the last restart; otherwise Reno.
    doing_vegas_now: bool,
    /// `beg_snd_nxt`: the round ends when an ACK passes it.
    beg_snd_nxt: u32,
    /// `baseRTT`, `minRTT` (this round) and `cntRTT` (this round).
    rtt: RttFilter,
}

impl Vegas {
    /// The module parameters (`module_param(alpha/beta/gamma, int, 0644)`), named here for
    /// what they bound (`beta` means the fraction of the window kept everywhere else;
    /// the kernel's names are refused with these, `params::RENAMED`). The kernel
    /// compares them with an unsigned `diff`, so only non-negative values mean what they say;
    /// above 65535 segments queued none is a threshold any window reaches.
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "queue_min",
            default: 2.0,
            min: 0.0,
            max: 65535.0,
            integer: true,
            unit: "segments",
            help: "Linux's alpha, lower bound of packets in network: fewer queued adds a segment per RTT",
            choices: &[],
        },
        ParamSpec {
            name: "queue_max",
            default: 4.0,
            min: 0.0,
            max: 65535.0,
            integer: true,
            unit: "segments",
            help: "Linux's beta, upper bound of packets in network: more queued removes a segment per RTT",
            choices: &[],
        },
        ParamSpec {
            name: "queue_slow_start",
            default: 1.0,
            min: 0.0,
            max: 65535.0,
            integer: true,
            unit: "segments",
            help: "Linux's gamma: more queued than this ends slow start",
            choices: &[],
        },
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("vegas", Self::PARAMS)?;
        Ok(Vegas {
            alpha: p.u32("queue_min"),
            beta: p.u32("queue_max"),
            gamma: p.u32("queue_slow_start"),
            doing_vegas_now: false,
            beg_snd_nxt: 0,
            rtt: RttFilter::NEW,
        })
    }

    /// `vegas_enable`: sample from the next segment sent.
    fn enable(&mut self, tcp: &TcpState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tcp.snd_nxt;
        self.rtt.wipe();
    }

    /// `tcp_vegas_init`: forget `baseRTT` too.
    fn restart(&mut self, tcp: &TcpState) {
        self.rtt.base = NO_RTT;
        self.enable(tcp);
    }

    /// The once-per-RTT decision with more than two samples.
    fn adjust(&mut self, tcp: &mut TcpState, acked: u32) {
        let rtt = self.rtt.min;
        // (u64)cwnd * baseRTT / rtt: the window the ACK rate supports at baseRTT.
        let target_cwnd = u64::from(tcp.cwnd) * u64::from(self.rtt.base) / u64::from(rtt);
        // Wraps: the kernel multiplies in u32 (past 2^32 / queueing-delay-us segments).
        let diff = tcp.cwnd.wrapping_mul(rtt.wrapping_sub(self.rtt.base)) / self.rtt.base;
        if diff > self.gamma && tcp.in_slow_start() {
            // Truncates to u32 and wraps, as `(u32)target_cwnd + 1`.
            tcp.cwnd = tcp.cwnd.min((target_cwnd as u32).wrapping_add(1));
            tcp.ssthresh = tcp.ssthresh.min(tcp.cwnd);
        } else if tcp.in_slow_start() {
            tcp_slow_start(tcp, acked);
        } else if diff > self.beta {
            // cwnd >= 1 always; 0 would be lifted to 2 below.
            tcp.cwnd -= 1;
            tcp.ssthresh = tcp.ssthresh.min(tcp.cwnd);
        } else if diff < self.alpha {
            // Wraps at 2^32 as the kernel's u32 increment (then clamped below).
            tcp.cwnd = tcp.cwnd.wrapping_add(1);
        }
        if tcp.cwnd < 2 {
            tcp.cwnd = 2;
        } else if tcp.cwnd > tcp.cwnd_clamp {
            tcp.cwnd = tcp.cwnd_clamp;
        }
        tcp.ssthresh = tcp.current_ssthresh();
    }
}

impl CongestionControl for Vegas {
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.restart(tcp);
    }

    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        reno_ssthresh(tcp)
    }

    /// `tcp_vegas_cong_avoid`; the kernel's `ack` is `snd_una` after this ACK.
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        if !self.doing_vegas_now {
            reno_cong_avoid(tcp, acked);
            return;
        }
        if after(tcp.snd_una, self.beg_snd_nxt) {
            self.beg_snd_nxt = tcp.snd_nxt;
            // Two samples a round are probably delayed ACKs: no Vegas decision on them.
            if self.rtt.count <= 2 {
                reno_cong_avoid(tcp, acked);
            } else {
                self.adjust(tcp, acked);
            }
            self.rtt.wipe();
        } else if tcp.in_slow_start() {
            tcp_slow_start(tcp, acked);
        }
    }

    /// `tcp_vegas_state`: every move to Open restarts the round; any other state is Reno.
    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Open {
            self.enable(tcp);
        } else {
            self.doing_vegas_now = false;
        }
    }

    /// `tcp_vegas_cwnd_event`: a restart after idle (or any first send with nothing in
    /// flight) waits for fresh samples.
    fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, _now_ns: u64) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart(tcp);
        }
    }

    fn pkts_acked(&mut self, _tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        self.rtt.sample(sample);
    }

    /// `tcp_vegas_get_info`'s `tcpvegas_info`.
    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("enabled", f64::from(u8::from(self.doing_vegas_now)));
        out("rtt_count", f64::from(self.rtt.count));
        out("base_rtt_us", f64::from(self.rtt.base));
        out("min_rtt_us", f64::from(self.rtt.min));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::var_of;

    fn vegas() -> Vegas {
        Vegas::new(&Params::new()).unwrap()
    }

    fn sample(rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: 1, rtt_us, in_flight: 0 }
    }

    /// A connection in Open at `cwnd`/`ssthresh` that saw RTT `base` (us) in an earlier
    /// round, with the round begun at `snd_nxt` 1000 and `samples` RTTs taken in it; the next
    /// ACK (snd_una 1001) ends the round.
    fn round(cwnd: u32, ssthresh: u32, base: i64, samples: &[i64]) -> (Vegas, TcpState) {
        let mut v = vegas();
        let mut tcp = TcpState { cwnd, ssthresh, snd_una: 900, snd_nxt: 1000, ..TcpState::default() };
        v.init(&mut tcp, 0);
        v.pkts_acked(&mut tcp, &sample(base), 0);
        v.set_state(&mut tcp, CaState::Open, 0);
        for &s in samples {
            v.pkts_acked(&mut tcp, &sample(s), 0);
        }
        tcp.snd_una = 1001;
        tcp.snd_nxt = 1100;
        (v, tcp)
    }

    #[test]
    fn samples_are_rtt_plus_one_filtered_by_minimum() {
        // rtt 0 counts as 1 us ("never allow zero rtt"); a negative rtt (no sample) is skipped.
        let (v, _) = round(10, 5, 12_000, &[0, -1, 30_000]);
        assert_eq!(var_of(&v, "base_rtt_us"), 1.0);
        assert_eq!(var_of(&v, "min_rtt_us"), 1.0);
        assert_eq!(var_of(&v, "rtt_count"), 2.0);
    }

    #[test]
    fn congestion_avoidance_holds_between_alpha_and_beta() {
        // baseRTT 10001, minRTT 10501: diff = 100 * 500 / 10001 = 4 (4.99 truncated), not
        // above beta 4 nor below alpha 2: cwnd stays 100, ssthresh max(90, 50 + 25) = 90.
        let (mut v, mut tcp) = round(100, 90, 10_000, &[10_500, 10_500, 10_500]);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.ssthresh), (100, 90));
        // The round restarted from snd_nxt 1100 with the slate wiped.
        assert_eq!((v.beg_snd_nxt, var_of(&v, "rtt_count"), var_of(&v, "min_rtt_us")), (1100, 0.0, 2147483647.0));
    }

    #[test]
    fn above_beta_takes_one_off_below_alpha_adds_one() {
        // minRTT 10601: diff = 100 * 600 / 10001 = 5 > 4: cwnd 99, ssthresh min(90, 99) = 90,
        // then tcp_current_ssthresh = max(90, 49 + 24) = 90.
        let (mut v, mut tcp) = round(100, 90, 10_000, &[10_600, 10_600, 10_600]);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.ssthresh), (99, 90));
        // minRTT 10101: diff = 100 * 100 / 10001 = 0 < 2: cwnd 101, ssthresh
        // max(90, 50 + 25) = 90.
        let (mut v, mut tcp) = round(100, 90, 10_000, &[10_100, 10_100, 10_100]);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.ssthresh), (101, 90));
        // With alpha 0 and beta 0 (a parameter run), diff 1 = 100 * 101 / 10001 takes one off.
        let mut v0 = Vegas::new(&Params::new().set("queue_min", 0.0).set("queue_max", 0.0)).unwrap();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 90, snd_nxt: 1000, ..TcpState::default() };
        v0.init(&mut tcp, 0);
        v0.pkts_acked(&mut tcp, &sample(10_000), 0);
        v0.set_state(&mut tcp, CaState::Open, 0);
        for s in [10_101, 10_101, 10_101] {
            v0.pkts_acked(&mut tcp, &sample(s), 0);
        }
        tcp.snd_una = 1001;
        v0.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, 99);
    }

    #[test]
    fn slow_start_ends_at_the_rate_the_acks_support() {
        // cwnd 40 in slow start, baseRTT 10001, minRTT 12001: diff = 40 * 2000 / 10001 = 7
        // > gamma 1, target = 40 * 10001 / 12001 = 33 (33.33 truncated): cwnd min(40, 34) =
        // 34, ssthresh min(inf, 34) = 34, then max(34, 17 + 8) = 34.
        let (mut v, mut tcp) = round(40, u32::MAX >> 1, 10_000, &[12_000, 12_000, 12_000]);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.ssthresh), (34, 34));
        // diff 0 (no queue) keeps slow start: tcp_slow_start adds the 2 ACKed.
        let (mut v, mut tcp) = round(40, u32::MAX >> 1, 10_000, &[10_000, 10_000, 10_000]);
        v.cong_avoid(&mut tcp, 2, 0);
        assert_eq!(tcp.cwnd, 42);
    }

    #[test]
    fn two_samples_or_mid_round_is_reno() {
        // cntRTT 2 this round: Reno's congestion avoidance (cwnd_cnt 1 of 100), even with a queue.
        let (mut v, mut tcp) = round(100, 90, 10_000, &[20_000, 20_000]);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (100, 1));
        // Mid-round (snd_una not after beg_snd_nxt): slow start grows, avoidance does nothing.
        let (mut v, mut tcp) = round(100, 90, 10_000, &[10_000, 10_000, 10_000]);
        tcp.snd_una = 1000;
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (100, 0));
        let (mut v, mut tcp) = round(30, 90, 10_000, &[10_000, 10_000, 10_000]);
        tcp.snd_una = 1000;
        v.cong_avoid(&mut tcp, 3, 0);
        assert_eq!(tcp.cwnd, 33);
    }

    #[test]
    fn outside_open_it_is_reno_and_open_restarts_the_round() {
        let (mut v, mut tcp) = round(100, 90, 10_000, &[10_600, 10_600, 10_600]);
        v.set_state(&mut tcp, CaState::Disorder, 0);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (100, 1));
        // Back to Open: beg_snd_nxt = snd_nxt 1100, samples forgotten, baseRTT kept.
        v.set_state(&mut tcp, CaState::Open, 0);
        assert_eq!((v.beg_snd_nxt, v.rtt.count, v.rtt.base), (1100, 0, 10_001));
        // A restart after idle forgets baseRTT too.
        v.cwnd_event(&mut tcp, CaEvent::TxStart, 0);
        assert_eq!(v.rtt.base, NO_RTT);
    }

    #[test]
    fn diff_wraps_in_u32_as_the_kernel_multiplies() {
        // cwnd 2^20, baseRTT 8193 (rtt 8192), minRTT 16385: cwnd * (16385 - 8193) = 2^20 *
        // 2^13 = 2^33, 0 mod 2^32, so diff 0 < alpha and the kernel adds a segment although
        // a whole window is queued.
        let (mut v, mut tcp) = round(1 << 20, 1 << 19, 8_192, &[16_384, 16_384, 16_384]);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, (1 << 20) + 1);
    }

    #[test]
    fn loss_halves() {
        let mut v = vegas();
        assert_eq!(v.ssthresh(&TcpState { cwnd: 101, ..TcpState::default() }, 0), 50);
    }
}
