//! `reno`: Linux `tcp_reno_*` in `net/ipv4/tcp_cong.c` (Linux 6.x), the window rule of the
//! papers' "TCP-SACK" (RFC 5681 slow start and congestion avoidance, halve on loss);
//! and `tahoe`: the same growth, but every loss restarts slow start from one segment
//! (RFC 5681 without fast recovery, the blog of seed 003).

use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{tcp_cong_avoid_ai, tcp_slow_start, TcpState};
use crate::CongestionControl;

/// Linux NewReno window rule.
#[derive(Clone, Debug, Default)]
pub struct Reno;

impl Reno {
    pub const PARAMS: &'static [ParamSpec] = &[];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        params.check("reno", Self::PARAMS)?;
        Ok(Reno)
    }
}

/// `tcp_reno_cong_avoid`: slow start below ssthresh, then one segment per window of ACKs.
#[inline]
pub(crate) fn reno_cong_avoid(tcp: &mut TcpState, mut acked: u32) {
    if !tcp.cwnd_limited {
        return;
    }
    if tcp.in_slow_start() {
        acked = tcp_slow_start(tcp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tcp.cwnd;
    tcp_cong_avoid_ai(tcp, w, acked);
}

/// `tcp_reno_ssthresh`: half the window, at least two segments.
#[inline]
pub(crate) fn reno_ssthresh(tcp: &TcpState) -> u32 {
    (tcp.cwnd >> 1).max(2)
}

impl CongestionControl for Reno {
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        reno_ssthresh(tcp)
    }

    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        reno_cong_avoid(tcp, acked)
    }
}

/// TCP Tahoe: Reno's growth, no fast recovery.
#[derive(Clone, Debug, Default)]
pub struct Tahoe;

impl Tahoe {
    pub const PARAMS: &'static [ParamSpec] = &[];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        params.check("tahoe", Self::PARAMS)?;
        Ok(Tahoe)
    }
}

impl CongestionControl for Tahoe {
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        reno_ssthresh(tcp)
    }

    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        reno_cong_avoid(tcp, acked)
    }

    fn fast_recovery(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssthresh_halves_with_floor_two() {
        let mut reno = Reno;
        let tcp = TcpState { cwnd: 101, ..TcpState::default() };
        assert_eq!(reno.ssthresh(&tcp, 0), 50); // 101 >> 1
        let tcp = TcpState { cwnd: 3, ..TcpState::default() };
        assert_eq!(reno.ssthresh(&tcp, 0), 2); // 1, floored to 2
    }

    #[test]
    fn one_segment_per_round_in_congestion_avoidance() {
        // cwnd 20 = ssthresh: 20 ACKs of one segment add exactly one segment (AIMD a = 1).
        let mut reno = Reno;
        let mut tcp = TcpState { cwnd: 20, ssthresh: 20, ..TcpState::default() };
        for _ in 0..20 {
            reno.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!(tcp.cwnd, 21);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut reno = Reno;
        let mut tcp = TcpState { cwnd_limited: false, ..TcpState::default() };
        reno.cong_avoid(&mut tcp, 5, 0);
        assert_eq!(tcp.cwnd, 10);
    }
}
