//! `westwood`: TCP Westwood+ as Linux ships it, `net/ipv4/tcp_westwood.c` (Linux 6.x, the
//! `in_ack_event` version; read in a 6.x tree with `tcp_snd_cwnd_set`), after Mascolo et al.
//! (MobiCom 2001) and Grieco and Mascolo (CCR 2004).
//!
//! Growth is Reno's. Westwood+ counts the bytes ACKed over windows of at least one RTT (and
//! at least `HZ/20` jiffies), low-pass filters their rate twice (7/8 old, 1/8 new) into
//! `bw_est` (bytes per jiffy), and keeps the least RTT since the last timeout (`rtt_min`,
//! jiffies). A timeout (`CA_EVENT_LOSS`) and the end of a window reduction
//! (`CA_EVENT_COMPLETE_CWR`) set ssthresh, and at the latter also cwnd, to
//! `bw_est * rtt_min / mss` (at least 2) in place of Reno's half. On the fast path an ACK
//! adds its `snd_una` advance; on the slow path a duplicate ACK adds one MSS ahead and a
//! later cumulative ACK pays it back (`westwood_acked_count`).

use crate::clock::{jiffies32, UsecsToJiffies};
use crate::params::{ParamError, ParamSpec, Params};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::tcp::{AckEvent, AckSample, CaEvent, TcpState};
use crate::CongestionControl;

/// TCP Westwood+ (`struct westwood` and the kernel's HZ).
#[derive(Clone, Debug)]
pub struct Westwood {
    hz: u32,
    usecs_to_jiffies: UsecsToJiffies,
    max_usecs: u32,
    /// `bw_ns_est`: the once-filtered rate, bytes per jiffy.
    bw_ns_est: u32,
    /// `bw_est`: the twice-filtered rate, bytes per jiffy.
    bw_est: u32,
    /// `rtt_win_sx`: jiffies when the current sampling window began.
    rtt_win_sx: u32,
    /// `bk`: bytes ACKed in the current sampling window.
    bk: u32,
    /// `snd_una`: the last `snd_una` seen, bytes.
    snd_una: u32,
    /// `cumul_ack`: bytes the last slow-path ACK counted.
    cumul_ack: u32,
    /// `accounted`: bytes counted ahead for duplicate ACKs, not yet paid back.
    accounted: u32,
    /// `rtt`: the last RTT sample, jiffies.
    rtt: u32,
    /// `rtt_min`: the least RTT since the last timeout, jiffies.
    rtt_min: u32,
    /// `first_ack`: no ACK seen yet (`snd_una` is taken from the first).
    first_ack: bool,
    /// `reset_rtt_min`: the next ACK restarts `rtt_min`.
    reset_rtt_min: bool,
}

impl Westwood {
    pub const PARAMS: &'static [ParamSpec] = &[crate::cubic_frame::HZ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("westwood", Self::PARAMS)?;
        let hz = p.u32("hz");
        Ok(Westwood {
            hz,
            usecs_to_jiffies: UsecsToJiffies::new(u64::from(hz)),
            max_usecs: UsecsToJiffies::max_usecs(u64::from(hz)),
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: 0,
            rtt_min: 0,
            first_ack: true,
            reset_rtt_min: true,
        })
    }

    /// `TCP_WESTWOOD_INIT_RTT`: 20 s.
    fn init_rtt(&self) -> u32 {
        20 * self.hz
    }

    /// `TCP_WESTWOOD_RTT_MIN`: the shortest sampling window, 50 ms.
    fn min_window(&self) -> u32 {
        self.hz / 20
    }

    /// `tp->snd_una` in bytes: segments times the MSS, modulo 2^32 like the kernel's
    /// sequence numbers (only differences are read).
    fn una_bytes(tcp: &TcpState) -> u32 {
        tcp.snd_una.wrapping_mul(tcp.mss)
    }

    /// `westwood_filter`: the first sample fills both stages.
    fn filter(&mut self, delta: u32) {
        let sample = self.bk / delta;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = do_filter(self.bw_ns_est, sample);
            self.bw_est = do_filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// `westwood_update_window`: close the sampling window once it spans an RTT.
    fn update_window(&mut self, tcp: &TcpState, now: u32) {
        let delta = now.wrapping_sub(self.rtt_win_sx) as i32;
        if self.first_ack {
            self.snd_una = Self::una_bytes(tcp);
            self.first_ack = false;
        }
        // The kernel compares the s32 delta with a u32: a negative delta reads as huge.
        if self.rtt != 0 && delta as u32 > self.rtt.max(self.min_window()) {
            self.filter(delta as u32);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// `westwood_acked_count`: the bytes a slow-path ACK stands for.
    fn acked_count(&mut self, tcp: &TcpState) -> u32 {
        let una = Self::una_bytes(tcp);
        let mss = tcp.mss;
        // Wraps: sequence-number difference.
        self.cumul_ack = una.wrapping_sub(self.snd_una);
        if self.cumul_ack == 0 {
            // A duplicate ACK: one MSS reached the receiver; counted now, paid back later.
            self.accounted = self.accounted.wrapping_add(mss);
            self.cumul_ack = mss;
        }
        if self.cumul_ack > mss {
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = una;
        self.cumul_ack
    }

    /// `tcp_westwood_bw_rttmin`: the window the estimate fills, segments, at least 2.
    fn bw_rttmin(&self, tcp: &TcpState) -> u32 {
        // Wraps: the kernel multiplies in u32 (bytes per jiffy times jiffies).
        (self.bw_est.wrapping_mul(self.rtt_min) / tcp.mss).max(2)
    }
}

/// `westwood_do_filter`: 7/8 of the old value and 1/8 of the new, in u32 (`7 * a` wraps).
fn do_filter(a: u32, b: u32) -> u32 {
    a.wrapping_mul(7).wrapping_add(b) >> 3
}

impl CongestionControl for Westwood {
    fn init(&mut self, tcp: &mut TcpState, now_ns: u64) {
        self.bk = 0;
        self.bw_ns_est = 0;
        self.bw_est = 0;
        self.accounted = 0;
        self.cumul_ack = 0;
        self.reset_rtt_min = true;
        self.rtt = self.init_rtt();
        self.rtt_min = self.rtt;
        self.rtt_win_sx = jiffies32(now_ns, self.hz);
        self.snd_una = Self::una_bytes(tcp);
        self.first_ack = true;
    }

    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        reno_ssthresh(tcp)
    }

    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        reno_cong_avoid(tcp, acked)
    }

    /// `tcp_westwood_event`.
    fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, _now_ns: u64) {
        match event {
            CaEvent::CompleteCwr => {
                tcp.ssthresh = self.bw_rttmin(tcp);
                tcp.cwnd = tcp.ssthresh;
            }
            CaEvent::Loss => {
                tcp.ssthresh = self.bw_rttmin(tcp);
                self.reset_rtt_min = true;
            }
            // tcp_westwood_event handles no other event.
            CaEvent::TxStart | CaEvent::CwndRestart | CaEvent::EcnIsCe | CaEvent::EcnNoCe => {}
        }
    }

    /// `tcp_westwood_pkts_acked`: the RTT in jiffies (`usecs_to_jiffies`, rounding up).
    fn pkts_acked(&mut self, _tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        if sample.rtt_us > 0 {
            // Truncates the kernel's unsigned long to the u32 field.
            self.rtt = self.usecs_to_jiffies.convert(sample.rtt_us as u32, self.max_usecs) as u32;
        }
    }

    /// `tcp_westwood_ack`.
    fn has_in_ack_event(&self) -> bool {
        true
    }

    fn in_ack_event(&mut self, tcp: &mut TcpState, ev: AckEvent, now_ns: u64) {
        let now = jiffies32(now_ns, self.hz);
        self.update_window(tcp, now);
        if ev.slow_path {
            let counted = self.acked_count(tcp);
            self.bk = self.bk.wrapping_add(counted);
        } else {
            let una = Self::una_bytes(tcp);
            // Wraps: sequence-number difference, and the u32 byte count.
            self.bk = self.bk.wrapping_add(una.wrapping_sub(self.snd_una));
            self.snd_una = una;
        }
        self.update_rtt_min();
    }

    /// `tcp_westwood_info`, in the kernel's units.
    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("bw_est_bytes_per_jiffy", f64::from(self.bw_est));
        out("rtt_jiffies", f64::from(self.rtt));
        out("rtt_min_jiffies", f64::from(self.rtt_min));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::var_of;

    const MS: u64 = 1_000_000;
    const FAST: AckEvent = AckEvent { slow_path: false, ece: false };
    const SLOW: AckEvent = AckEvent { slow_path: true, ece: false };

    /// HZ 1000 (one jiffy a millisecond), MSS 1000 bytes, started at 1 s with snd_una 0.
    fn start() -> (Westwood, TcpState) {
        let mut w = Westwood::new(&Params::new()).unwrap();
        let mut tcp = TcpState { mss: 1000, ..TcpState::default() };
        w.init(&mut tcp, 1000 * MS);
        (w, tcp)
    }

    fn ack(w: &mut Westwood, tcp: &mut TcpState, una: u32, rtt_us: i64, ev: AckEvent, now_ms: u64) {
        tcp.snd_una = una;
        w.pkts_acked(tcp, &AckSample { pkts_acked: 1, rtt_us, in_flight: 0 }, now_ms * MS);
        w.in_ack_event(tcp, ev, now_ms * MS);
    }

    #[test]
    fn initial_values() {
        // TCP_WESTWOOD_INIT_RTT = 20 * HZ; no estimate: bw_rttmin floors at 2.
        let (w, tcp) = start();
        assert_eq!((w.rtt, w.rtt_min, w.rtt_win_sx), (20_000, 20_000, 1000));
        assert_eq!(w.bw_rttmin(&tcp), 2);
    }

    #[test]
    fn windows_close_after_an_rtt_and_filter_twice() {
        // RTT 40 ms (usecs_to_jiffies(40_000) = 40 at HZ 1000). One 10-segment ACK every
        // 10 ms from t = 1010 ms. The first ACK only takes snd_una (first_ack): 0 bytes.
        let (mut w, mut tcp) = start();
        for i in 1..=5u32 {
            ack(&mut w, &mut tcp, 10 * i, 40_000, FAST, 1000 + 10 * u64::from(i));
        }
        // At t = 1050 delta = 50 is not above max(40, HZ/20 = 50): bk holds 4 ACKs.
        assert_eq!((w.bk, w.bw_est), (40_000, 0));
        ack(&mut w, &mut tcp, 60, 40_000, FAST, 1060);
        // t = 1060: delta 60 > 50: the first sample fills both stages, 40_000 / 60 = 666
        // bytes per jiffy; then this ACK's 10_000 bytes start the next window.
        assert_eq!((w.bw_ns_est, w.bw_est, w.bk, w.rtt_win_sx), (666, 666, 10_000, 1060));
        // The next window: 2 more ACKs, closed at t = 1111 (delta 51): sample 30_000 / 51 =
        // 588; bw_ns_est = (7 * 666 + 588) >> 3 = 656, bw_est = (7 * 666 + 656) >> 3 = 664.
        ack(&mut w, &mut tcp, 70, 40_000, FAST, 1070);
        ack(&mut w, &mut tcp, 80, 40_000, FAST, 1080);
        ack(&mut w, &mut tcp, 90, 40_000, FAST, 1111);
        assert_eq!((w.bw_ns_est, w.bw_est), (656, 664));
        // rtt_min restarted at the first ACK from 20 s to 40 jiffies: 664 * 40 / 1000 = 26
        // segments for cwnd and ssthresh at the end of a reduction.
        assert_eq!(w.rtt_min, 40);
        let mut full = TcpState { cwnd: 100, ssthresh: 50, mss: 1000, ..TcpState::default() };
        w.cwnd_event(&mut full, CaEvent::CompleteCwr, 0);
        assert_eq!((full.cwnd, full.ssthresh), (26, 26));
        assert_eq!(var_of(&w, "bw_est_bytes_per_jiffy"), 664.0);
    }

    #[test]
    fn slow_path_counts_duplicates_ahead_and_pays_them_back() {
        // snd_una 10 taken on a first (fast) ACK; two duplicate ACKs on the slow path add
        // one MSS each (accounted 2000); a cumulative ACK of 5 segments (5000 bytes) then
        // adds 5000 - 2000 = 3000: the 5 segments delivered, counted once.
        let (mut w, mut tcp) = start();
        ack(&mut w, &mut tcp, 10, 40_000, FAST, 1001);
        ack(&mut w, &mut tcp, 10, -1, SLOW, 1002);
        ack(&mut w, &mut tcp, 10, -1, SLOW, 1003);
        assert_eq!((w.bk, w.accounted), (2000, 2000));
        ack(&mut w, &mut tcp, 15, 40_000, SLOW, 1004);
        assert_eq!((w.bk, w.accounted), (5000, 0));
        // With 6000 accounted, an ACK of 5000 bytes counts one MSS and keeps 1000.
        let (mut w, mut tcp) = start();
        ack(&mut w, &mut tcp, 10, 40_000, FAST, 1001);
        for t in 0..6 {
            ack(&mut w, &mut tcp, 10, -1, SLOW, 1002 + t);
        }
        ack(&mut w, &mut tcp, 15, 40_000, SLOW, 1010);
        assert_eq!((w.bk, w.accounted), (6000 + 1000, 1000));
        // The fast path adds the advance as it is: a duplicate adds nothing.
        let (mut w, mut tcp) = start();
        ack(&mut w, &mut tcp, 10, 40_000, FAST, 1001);
        ack(&mut w, &mut tcp, 10, -1, FAST, 1002);
        ack(&mut w, &mut tcp, 12, -1, FAST, 1003);
        assert_eq!(w.bk, 2000);
    }

    #[test]
    fn a_timeout_sets_ssthresh_and_restarts_rtt_min() {
        // bw_est 2000 bytes/jiffy, rtt_min 30 jiffies, MSS 1000: 60 segments.
        let (mut w, _) = start();
        (w.bw_est, w.rtt_min, w.rtt, w.reset_rtt_min) = (2000, 30, 50, false);
        let mut tcp = TcpState { cwnd: 100, ssthresh: 80, mss: 1000, ..TcpState::default() };
        assert_eq!(w.ssthresh(&tcp, 0), 50); // tcp_reno_ssthresh first
        w.cwnd_event(&mut tcp, CaEvent::Loss, 0);
        assert_eq!((tcp.cwnd, tcp.ssthresh), (100, 60));
        // The next ACK takes rtt_min from the last sample (50), not min(30, 50).
        w.in_ack_event(&mut tcp, FAST, 1001 * MS);
        assert_eq!(w.rtt_min, 50);
    }

    #[test]
    fn rtt_rounds_up_to_jiffies_and_products_wrap() {
        // usecs_to_jiffies rounds up: 40_001 us is 41 jiffies at HZ 1000, 11 at HZ 250.
        let (mut w, mut tcp) = start();
        w.pkts_acked(&mut tcp, &AckSample { pkts_acked: 1, rtt_us: 40_001, in_flight: 0 }, 0);
        assert_eq!(w.rtt, 41);
        let mut w250 = Westwood::new(&Params::new().set("hz", 250.0)).unwrap();
        w250.pkts_acked(&mut tcp, &AckSample { pkts_acked: 1, rtt_us: 40_001, in_flight: 0 }, 0);
        assert_eq!(w250.rtt, 11);
        // bw_est 2^20 bytes/jiffy times rtt_min 2^12 jiffies = 2^32: 0 in u32, so the
        // kernel's window is the floor 2.
        (w.bw_est, w.rtt_min) = (1 << 20, 1 << 12);
        assert_eq!(w.bw_rttmin(&tcp), 2);
        // 7 * a wraps in the filter: a = 2^30 gives (7 * 2^30 mod 2^32 + 0) >> 3.
        assert_eq!(do_filter(1 << 30, 0), 402_653_184); // 7 * 2^30 - 2^32 = 3 * 2^30, >> 3
    }
}
