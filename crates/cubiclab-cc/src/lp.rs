//! `lp`: TCP Low Priority as Linux ships it, `net/ipv4/tcp_lp.c` (Linux 6.x: `tcp_time_stamp_ts`
//! since 6.7, `tcp_snd_cwnd_set`; read in kernel-patches/bpf b930a81d with the 6.7 change),
//! after Kuzmanovic and Knightly (IEEE/ACM ToN 14(4), 2006).
//!
//! Reno, which backs off early when the one-way delay rises. From each ACK's timestamps
//! (`rcv_tsval`, the peer's clock; `rcv_tsecr`, ours echoed less `tsoffset`, so on our
//! clock) LP estimates the peer's
//! timestamp rate (`remote_hz`, filtered 63/64 old) and a relative one-way delay
//! `owd = |tsval * (1000 / remote_hz) - tsecr|` (ms), keeps its least and (second) largest
//! value and smooths it 7/8 old (`sowd`, in 1/8). Whenever the smoothed delay reaches 15% of
//! the way from the least to the largest, `pkts_acked` halves the window (at least 1), or
//! sets it to 1 if the last such drop is younger than the "inference" time, 3 times
//! `now - tsecr`; within that time `cong_avoid` does not grow the window. A loss halves
//! (`tcp_reno_ssthresh`); undo is `tcp_reno_undo_cwnd` (the trait's default). `now` is
//! `tcp_time_stamp_ts`, milliseconds of the connection's clock (`now_ns / 10^6`), so
//! `now - tsecr` is the age of the echoed segment. On the kernel the peer's clock runs at
//! 1000 Hz too and its estimate is often just above 1000, where `LP_RESOL / remote_hz` is 0
//! and the delay is `-tsecr` in u32: the range then spans ~2^32 and the threshold is rarely
//! passed (the per-ACK check saw no early drop).
//!
//! Without timestamps (`rcv_tsval` and `rcv_tsecr` 0, as Linux has them when the option was
//! not negotiated, and as the simulator's hosts give them: they carry no receiver TSval) no
//! delay is ever valid, and the threshold test `0 < 0xffffffff + 15 * (0 - 0xffffffff) / 100`
//! holds in u32 on every ACK: LP is Reno.

use crate::params::{ParamError, ParamSpec, Params};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::tcp::{AckSample, TcpState};
use crate::CongestionControl;

/// `TCP_TS_HZ`, and `LP_RESOL`, the resolution of the one-way delay: 1000 per second.
const TS_HZ: u32 = 1000;
/// `LP_VALID_RHZ`: the peer's timestamp rate is known.
const VALID_RHZ: u32 = 1 << 0;
/// `LP_VALID_OWD`: the last one-way delay is valid.
const VALID_OWD: u32 = 1 << 1;
/// `LP_WITHIN_THR`: the smoothed delay is below the threshold.
const WITHIN_THR: u32 = 1 << 3;
/// `LP_WITHIN_INF`: the last drop is younger than the inference time.
const WITHIN_INF: u32 = 1 << 4;

/// TCP-LP (`struct lp`).
#[derive(Clone, Debug)]
pub struct Lp {
    /// `flag`: the `LP_*` bits.
    flag: u32,
    /// `sowd`: the smoothed one-way delay, 1/8 ms.
    sowd: u32,
    owd_min: u32,
    owd_max: u32,
    /// `owd_max_rsv`: the largest delay, kept back; `owd_max` is the one below it.
    owd_max_rsv: u32,
    /// `remote_hz`: the peer's timestamp ticks per second.
    remote_hz: u32,
    /// `remote_ref_time`, `local_ref_time`: the previous ACK's `rcv_tsval` and `rcv_tsecr`.
    remote_ref_time: u32,
    local_ref_time: u32,
    /// `last_drop`: `now` at the last early drop, ms (0: none).
    last_drop: u32,
    /// `inference`: ms after a drop within which the next one sets the window to 1.
    inference: u32,
}

impl Lp {
    /// LP has no module parameters.
    pub const PARAMS: &'static [ParamSpec] = &[];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        params.check("lp", Self::PARAMS)?;
        Ok(Lp {
            flag: 0,
            sowd: 0,
            owd_min: u32::MAX,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
        })
    }

    fn set(&mut self, bit: u32, on: bool) {
        if on {
            self.flag |= bit;
        } else {
            self.flag &= !bit;
        }
    }

    /// `tcp_lp_remote_hz_estimator`: the peer's ticks per second, 63/64 old and 1/64 new.
    fn remote_hz_estimator(&mut self, tcp: &TcpState) -> u32 {
        // Wraps: `remote_hz << 6` is a u32 shift before it becomes the s64 rhz.
        let mut rhz = i64::from(self.remote_hz << 6);
        let known = self.remote_ref_time != 0 && self.local_ref_time != 0;
        let moved = tcp.rcv_tsval != self.remote_ref_time && tcp.rcv_tsecr != self.local_ref_time;
        if known && moved {
            // Wraps: TCP_TS_HZ times the u32 tick difference is a u32 product (an int times a
            // u32), divided in u32; so m is never negative.
            let remote = tcp.rcv_tsval.wrapping_sub(self.remote_ref_time);
            let m = i64::from(TS_HZ.wrapping_mul(remote) / tcp.rcv_tsecr.wrapping_sub(self.local_ref_time));
            if rhz > 0 {
                rhz += m - (rhz >> 6);
            } else {
                rhz = m << 6;
            }
        }
        self.set(VALID_RHZ, rhz >> 6 > 0);
        self.remote_ref_time = tcp.rcv_tsval;
        self.local_ref_time = tcp.rcv_tsecr;
        // Truncates: the s64 estimate returned as u32.
        (rhz >> 6) as u32
    }

    /// `tcp_lp_owd_calculator`: the relative one-way delay, ms.
    fn owd_calculator(&mut self, tcp: &TcpState) -> u32 {
        self.remote_hz = self.remote_hz_estimator(tcp);
        let mut owd = 0;
        if self.flag & VALID_RHZ != 0 {
            // Wraps: u32 product and difference (`LP_RESOL / remote_hz` is a u32 quotient,
            // 0 above 1000 Hz), assigned to an s64 and so never negative. Our ticks are
            // already LP_RESOL's (`LP_RESOL / TCP_TS_HZ` = 1).
            let remote = tcp.rcv_tsval.wrapping_mul(TS_HZ / self.remote_hz);
            owd = remote.wrapping_sub(tcp.rcv_tsecr);
        }
        self.set(VALID_OWD, owd > 0);
        owd
    }

    /// `tcp_lp_rtt_sample`: the delay's least, largest and smoothed values.
    fn rtt_sample(&mut self, tcp: &TcpState) {
        let mowd = self.owd_calculator(tcp);
        if self.flag & VALID_RHZ == 0 || self.flag & VALID_OWD == 0 {
            return;
        }
        self.owd_min = self.owd_min.min(mowd);
        // Forget the largest of all: owd_max is the one below it.
        if mowd > self.owd_max {
            if mowd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 { mowd } else { self.owd_max_rsv };
                self.owd_max_rsv = mowd;
            } else {
                self.owd_max = mowd;
            }
        }
        if self.sowd != 0 {
            // The s64 error added to the u32 sowd: modulo 2^32, a wrapping sum.
            let err = i64::from(mowd) - i64::from(self.sowd >> 3);
            self.sowd = self.sowd.wrapping_add(err as u32);
        } else {
            // Wraps: the s64 `mowd << 3` stored in the u32 sowd.
            self.sowd = mowd << 3;
        }
    }

    /// The threshold: 15% of the way from the least delay to the largest, in u32 as the
    /// kernel's (`owd_max - owd_min` wraps while no delay was taken: 1).
    fn threshold(&self) -> u32 {
        let range = self.owd_max.wrapping_sub(self.owd_min);
        self.owd_min.wrapping_add(15u32.wrapping_mul(range) / 100)
    }
}

impl CongestionControl for Lp {
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        reno_ssthresh(tcp)
    }

    /// `tcp_lp_cong_avoid`: Reno, outside the inference time.
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        if self.flag & WITHIN_INF == 0 {
            reno_cong_avoid(tcp, acked);
        }
    }

    /// `tcp_lp_pkts_acked`: the delay sample, then the early drop.
    fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
        // tcp_time_stamp_ts: tcp_mstamp / 1000, truncated to u32.
        let now = (now_ns / 1_000_000) as u32;
        if sample.rtt_us > 0 {
            self.rtt_sample(tcp);
        }
        // Wraps: u32 time differences, read as s32 where the kernel does.
        let delta = now.wrapping_sub(tcp.rcv_tsecr);
        if delta as i32 > 0 {
            self.inference = delta.wrapping_mul(3);
        }
        let young = self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference;
        self.set(WITHIN_INF, young);
        self.set(WITHIN_THR, self.sowd >> 3 < self.threshold());
        if self.flag & WITHIN_THR != 0 {
            return;
        }
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        tcp.cwnd = if young { 1 } else { (tcp.cwnd >> 1).max(1) };
        self.last_drop = now;
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("flag", f64::from(self.flag));
        out("sowd_eighths_ms", f64::from(self.sowd));
        out("owd_min_ms", f64::from(self.owd_min));
        out("owd_max_ms", f64::from(self.owd_max));
        out("remote_hz", f64::from(self.remote_hz));
        out("inference_ms", f64::from(self.inference));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn sample() -> AckSample {
        AckSample { pkts_acked: 1, rtt_us: 10_000, in_flight: 0 }
    }

    /// One ACK at `now_ms` carrying the peer's `tsval` and our echoed `tsecr`.
    fn ack(lp: &mut Lp, tcp: &mut TcpState, now_ms: u64, tsval: u32, tsecr: u32) {
        (tcp.rcv_tsval, tcp.rcv_tsecr) = (tsval, tsecr);
        lp.pkts_acked(tcp, &sample(), now_ms * MS);
    }

    fn lp() -> (Lp, TcpState) {
        (Lp::new(&Params::new()).unwrap(), TcpState { cwnd: 100, ssthresh: 50, ..TcpState::default() })
    }

    #[test]
    fn without_timestamps_it_is_reno() {
        // rcv_tsval = rcv_tsecr = 0: no reference time, rhz 0, owd 0: never valid; the
        // threshold 0xffffffff + 15 * (0 - 0xffffffff mod 2^32 = 1) / 100 = 0xffffffff holds.
        let (mut l, mut tcp) = lp();
        for t in 1..100 {
            ack(&mut l, &mut tcp, 1000 + t, 0, 0);
            l.cong_avoid(&mut tcp, 1, 0);
        }
        assert_eq!((l.flag, l.sowd, tcp.cwnd, tcp.cwnd_cnt), (WITHIN_THR, 0, 100, 99));
        assert_eq!(l.threshold(), u32::MAX);
    }

    #[test]
    fn remote_hz_is_learnt_from_the_tick_ratio() {
        // The peer ticks at 1000 Hz like us: the first ACK sets the references; the second,
        // 10 ticks later on both clocks, gives m = 1000 * 10 / 10 = 1000, rhz = 1000 << 6.
        let (mut l, mut tcp) = lp();
        ack(&mut l, &mut tcp, 1000, 5000, 900);
        assert_eq!((l.remote_hz, l.flag & VALID_RHZ), (0, 0));
        ack(&mut l, &mut tcp, 1010, 5010, 910);
        assert_eq!((l.remote_hz, l.flag & VALID_RHZ), (1000, VALID_RHZ));
        // A peer at 250 Hz (2.5 ticks per 10 ms: 3 here): m = 1000 * 3 / 10 = 300; the
        // estimate moves by a 64th of the error: (64000 + 300 - 1000) >> 6 = 989.
        ack(&mut l, &mut tcp, 1020, 5013, 920);
        assert_eq!(l.remote_hz, 989);
    }

    #[test]
    fn owd_is_the_clock_difference_and_sowd_smooths_it() {
        // remote_hz 1000: owd = tsval * (1000 / 1000) - tsecr = 5010 - 910 = 4100 ms
        // (relative: both clocks' offsets are in it). The first delay sets sowd = 4100 << 3
        // and min = max = 4100, so sowd >> 3 < 4100 + 0 fails: the first valid delay always
        // drops (cwnd 50), and the range restarts from sowd (min 4100, max and reserve 8200).
        let (mut l, mut tcp) = lp();
        ack(&mut l, &mut tcp, 1000, 5000, 900);
        ack(&mut l, &mut tcp, 1010, 5010, 910);
        assert_eq!((l.sowd, l.owd_min, l.owd_max, l.owd_max_rsv, tcp.cwnd), (4100 << 3, 4100, 8200, 8200, 50));
        // 6 peer ticks in 10 ms: m = 600, remote_hz (64000 - 400) >> 6 = 993, 1000 / 993 = 1;
        // owd = 5016 - 920 = 4096, the new least; sowd += 4096 - 4100: 32796. Threshold
        // 4096 + 15 * (8200 - 4096) / 100 = 4096 + 615 = 4711 > 4099: no drop.
        ack(&mut l, &mut tcp, 1020, 5016, 920);
        assert_eq!((l.remote_hz, l.owd_min, l.sowd, tcp.cwnd), (993, 4096, 32_796, 50));
        // A peer estimate above 1000 Hz makes LP_RESOL / remote_hz 0: owd = -tsecr in u32.
        let (mut l, mut tcp) = lp();
        ack(&mut l, &mut tcp, 1000, 5000, 900);
        ack(&mut l, &mut tcp, 1010, 5020, 910);
        assert_eq!((l.remote_hz, l.owd_min), (2000, 0u32.wrapping_sub(910)));
    }

    #[test]
    fn a_delay_past_the_threshold_halves_then_drops_to_one() {
        // owd_min 4100, owd_max 4200: threshold 4100 + 15 * 100 / 100 = 4115. sowd 4120 << 3
        // is past it: cwnd halves to 50, the delay range restarts from sowd (min 4120, max
        // and reserve 8240), last_drop = now.
        let (mut l, mut tcp) = lp();
        (l.owd_min, l.owd_max, l.sowd) = (4100, 4200, 4120 << 3);
        ack(&mut l, &mut tcp, 2000, 0, 1990);
        assert_eq!((tcp.cwnd, l.owd_min, l.owd_max, l.owd_max_rsv, l.last_drop), (50, 4120, 8240, 8240, 2000));
        // The inference time: 3 * (now - tsecr) = 3 * 10 = 30 ms. Past the threshold again
        // 20 ms later, within it: cwnd 1, and cong_avoid grows nothing.
        (l.owd_min, l.owd_max) = (4100, 4110);
        ack(&mut l, &mut tcp, 2020, 0, 2010);
        assert_eq!((l.inference, tcp.cwnd, l.flag & WITHIN_INF), (30, 1, WITHIN_INF));
        tcp.ssthresh = 100;
        l.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, 1);
        // 31 ms after that drop, outside the inference time: halves (max(1 >> 1, 1) = 1)
        // and cong_avoid is Reno again.
        (l.owd_min, l.owd_max) = (4100, 4110);
        ack(&mut l, &mut tcp, 2051, 0, 2041);
        assert_eq!((tcp.cwnd, l.flag & WITHIN_INF), (1, 0));
        l.cong_avoid(&mut tcp, 1, 0);
        assert_eq!(tcp.cwnd, 2);
    }

    #[test]
    fn a_negative_age_leaves_the_inference() {
        // now - tsecr as s32 <= 0 (the echo is ahead of our clock by the TSval offset): the
        // inference time keeps its value.
        let (mut l, mut tcp) = lp();
        l.inference = 77;
        ack(&mut l, &mut tcp, 1000, 0, 5000);
        assert_eq!(l.inference, 77);
        // A u32 product: now - tsecr = 2^31 - 1 reads positive, times 3 wraps.
        ack(&mut l, &mut tcp, 0x7fff_ffff, 0, 0);
        assert_eq!(l.inference, 0x7fff_ffffu32.wrapping_mul(3));
    }

    #[test]
    fn a_replay_reads_the_timestamps_of_ts_rows() {
        // The trace of owd_is_the_clock_difference_and_sowd_smooths_it: two ACKs whose
        // timestamps make the first valid delay (4100 ms), which drops cwnd 100 to 50; the
        // same ACKs without ts rows are Reno's (cwnd_cnt counts them).
        use crate::replay::{parse_trace_csv, replay, ReplayStart};
        use crate::Algorithm;
        let start = ReplayStart { cwnd: 100, ssthresh: 50 };
        let with = "time_us,event,acked,rtt_us,tsval,tsecr\n1000000,ts,,,5000,900\n1000000,ack,1,10000,,\n\
                    1010000,ts,,,5010,910\n1010000,ack,1,10000,,\n";
        let rows = replay(Algorithm::new("lp", &Params::new()).unwrap(), start, &parse_trace_csv(with).unwrap());
        assert_eq!((rows[3].event, rows[3].cwnd), ("ack", 50));
        let without = "time_us,event,acked,rtt_us\n1000000,ack,1,10000\n1010000,ack,1,10000\n";
        let rows = replay(Algorithm::new("lp", &Params::new()).unwrap(), start, &parse_trace_csv(without).unwrap());
        assert_eq!((rows[1].cwnd, rows[1].cwnd_cnt), (100, 2));
        let err = parse_trace_csv("time_us,event,tsval\n0,ts,5\n").unwrap_err();
        assert!(err.contains("'tsecr'"), "{err}");
    }
}
