//! `veno`: TCP Veno as Linux ships it, `net/ipv4/tcp_veno.c` (Linux 6.x, the `ack_sample`
//! and `tcp_snd_cwnd()` version), after Fu and Liew (IEEE JSAC 21(2), 2003).
//!
//! Reno whose decrease and growth read Vegas' backlog estimate, in half segments:
//! `diff = 2 cwnd - 2 cwnd baseRTT / minRTT`, computed on every ACK once three RTT samples
//! were ever taken (the kernel never resets the count), with `minRTT` the least sample since
//! the previous ACK (none: `0x7fffffff`, so an ACK without a sample reads as congested). Below
//! `beta` = 3 segments the path is "non-congestive": Reno's growth, and a loss keeps 4/5;
//! otherwise growth is one segment every other window and a loss halves. Outside Open it is
//! Reno; undo is `tcp_reno_undo_cwnd` (the trait's default).

use crate::params::{ParamError, ParamSpec, Params};
use crate::reno::reno_cong_avoid;
use crate::tcp::{tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaState, TcpState};
use crate::vegas::{RttFilter, NO_RTT};
use crate::CongestionControl;

/// `V_PARAM_SHIFT`: diff and beta are in half segments.
const V_PARAM_SHIFT: u32 = 1;
/// `beta`: 3 segments of backlog, in half segments.
const BETA: u32 = 3 << V_PARAM_SHIFT;

/// TCP Veno (`struct veno`).
#[derive(Clone, Debug)]
pub struct Veno {
    /// `doing_veno_now`: Open since the last restart; otherwise Reno.
    doing_veno_now: bool,
    /// `basertt`, `minrtt` (since the previous ACK) and `cntrtt` (ever: never cleared).
    rtt: RttFilter,
    /// `inc`: the congestive state's every-other-window switch.
    inc: bool,
    /// `diff`: the backlog estimate, half segments.
    diff: u32,
}

impl Veno {
    /// Veno's beta is a `static const` in the module, not a parameter.
    pub const PARAMS: &'static [ParamSpec] = &[];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        params.check("veno", Self::PARAMS)?;
        Ok(Veno { doing_veno_now: false, rtt: RttFilter::NEW, inc: true, diff: 0 })
    }

    /// `veno_enable`.
    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.rtt.min = NO_RTT;
    }

    /// `tcp_veno_init`.
    fn restart(&mut self) {
        self.rtt.base = NO_RTT;
        self.inc = true;
        self.enable();
    }

    /// The Veno branch of `tcp_veno_cong_avoid`, with three samples taken.
    fn grow(&mut self, tcp: &mut TcpState, mut acked: u32) {
        let rtt = self.rtt.min;
        let target_cwnd = (u64::from(tcp.cwnd) * u64::from(self.rtt.base)) << V_PARAM_SHIFT;
        let target_cwnd = target_cwnd / u64::from(rtt);
        // Wraps: cwnd << 1 in u32, the difference taken in u64 and stored in a u32.
        self.diff = u64::from(tcp.cwnd << V_PARAM_SHIFT).wrapping_sub(target_cwnd) as u32;
        if tcp.in_slow_start() {
            acked = tcp_slow_start(tcp, acked);
        }
        if acked != 0 {
            if self.diff < BETA {
                let w = tcp.cwnd;
                tcp_cong_avoid_ai(tcp, w, acked);
            } else if tcp.cwnd_cnt >= tcp.cwnd {
                if self.inc && tcp.cwnd < tcp.cwnd_clamp {
                    tcp.cwnd += 1;
                    self.inc = false;
                } else {
                    self.inc = true;
                }
                tcp.cwnd_cnt = 0;
            } else {
                // Wraps: the kernel's u32 count.
                tcp.cwnd_cnt = tcp.cwnd_cnt.wrapping_add(acked);
            }
        }
        if tcp.cwnd < 2 {
            tcp.cwnd = 2;
        } else if tcp.cwnd > tcp.cwnd_clamp {
            tcp.cwnd = tcp.cwnd_clamp;
        }
    }
}

impl CongestionControl for Veno {
    fn init(&mut self, _tcp: &mut TcpState, _now_ns: u64) {
        self.restart();
    }

    /// `tcp_veno_ssthresh`: keep 4/5 when not congested, else half; at least 2.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        if self.diff < BETA {
            // Wraps: u32 product, as the kernel's (past 2^30 segments).
            (tcp.cwnd.wrapping_mul(4) / 5).max(2)
        } else {
            (tcp.cwnd >> 1).max(2)
        }
    }

    /// `tcp_veno_cong_avoid`.
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        if !self.doing_veno_now {
            reno_cong_avoid(tcp, acked);
            return;
        }
        if !tcp.cwnd_limited {
            return;
        }
        if self.rtt.count <= 2 {
            reno_cong_avoid(tcp, acked);
        } else {
            self.grow(tcp, acked);
        }
        self.rtt.min = NO_RTT;
    }

    /// `tcp_veno_state`.
    fn set_state(&mut self, _tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    /// `tcp_veno_cwnd_event`.
    fn cwnd_event(&mut self, _tcp: &mut TcpState, event: CaEvent, _now_ns: u64) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart();
        }
    }

    fn pkts_acked(&mut self, _tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        self.rtt.sample(sample);
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("diff_half_segments", f64::from(self.diff));
        out("base_rtt_us", f64::from(self.rtt.base));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rtt_us: i64) -> AckSample {
        AckSample { pkts_acked: 1, rtt_us, in_flight: 0 }
    }

    /// Open, in congestion avoidance at `cwnd`, baseRTT 10001 us, three samples counted; the
    /// next ACK's sample is `rtt_us` (negative: none).
    fn veno(cwnd: u32, rtt_us: i64) -> (Veno, TcpState) {
        let mut v = Veno::new(&Params::new()).unwrap();
        let mut tcp = TcpState { cwnd, ssthresh: 5, ..TcpState::default() };
        v.init(&mut tcp, 0);
        for _ in 0..3 {
            v.pkts_acked(&mut tcp, &sample(10_000), 0);
        }
        v.rtt.min = NO_RTT;
        v.pkts_acked(&mut tcp, &sample(rtt_us), 0);
        (v, tcp)
    }

    #[test]
    fn diff_counts_the_backlog_in_half_segments() {
        // cwnd 100, minRTT 12001: target = 100 * 10001 * 2 / 12001 = 166 (166.67), diff =
        // 200 - 166 = 34 half segments >= beta 6: congested, a loss halves.
        let (mut v, mut tcp) = veno(100, 12_000);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(v.diff, 34);
        assert_eq!(v.ssthresh(&tcp, 0), 50);
        // minRTT = baseRTT: diff 0, a loss keeps 4/5: 100 * 4 / 5 = 80.
        let (mut v, mut tcp) = veno(100, 10_000);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((v.diff, v.ssthresh(&tcp, 0)), (0, 80));
        // 2 segments keep max(8 / 5, 2) = 2.
        assert_eq!(v.ssthresh(&TcpState { cwnd: 2, ..TcpState::default() }, 0), 2);
    }

    #[test]
    fn an_ack_without_a_sample_reads_as_congested() {
        // minRTT stays 0x7fffffff: target = 100 * 10001 * 2 / 2147483647 = 0, diff = 200.
        let (mut v, mut tcp) = veno(100, -1);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(v.diff, 200);
    }

    #[test]
    fn congested_growth_is_one_segment_every_other_window() {
        // diff 34: cwnd_cnt counts to cwnd (100) then, alternately, adds a segment or not.
        let (mut v, mut tcp) = veno(100, 12_000);
        tcp.cwnd_cnt = 100;
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt, v.inc), (101, 0, false));
        tcp.cwnd_cnt = 101;
        v.pkts_acked(&mut tcp, &sample(12_000), 0);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt, v.inc), (101, 0, true));
        // Below cwnd the count grows by the segments ACKed.
        v.pkts_acked(&mut tcp, &sample(12_000), 0);
        v.cong_avoid(&mut tcp, 3, 0);
        assert_eq!(tcp.cwnd_cnt, 3);
    }

    #[test]
    fn uncongested_growth_is_reno() {
        // diff 0: tcp_cong_avoid_ai(cwnd): 100 ACKed segments add one.
        let (mut v, mut tcp) = veno(100, 10_000);
        for _ in 0..100 {
            v.pkts_acked(&mut tcp, &sample(10_000), 0);
            v.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (101, 0));
    }

    #[test]
    fn few_samples_or_outside_open_is_reno() {
        // Two samples ever: Reno's count (cwnd_cnt 1), diff untouched.
        let mut v = Veno::new(&Params::new()).unwrap();
        let mut tcp = TcpState { cwnd: 100, ssthresh: 5, ..TcpState::default() };
        v.init(&mut tcp, 0);
        v.pkts_acked(&mut tcp, &sample(10_000), 0);
        v.pkts_acked(&mut tcp, &sample(20_000), 0);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd_cnt, v.diff), (1, 0));
        // In Disorder, Reno even with samples.
        let (mut v, mut tcp) = veno(100, 12_000);
        v.set_state(&mut tcp, CaState::Disorder, 0);
        v.cong_avoid(&mut tcp, 1, 0);
        assert_eq!((tcp.cwnd_cnt, v.diff), (1, 0));
    }
}
