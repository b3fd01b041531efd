//! BBR's ACK-aggregation estimator (`bbr_update_ack_aggregation` and
//! `bbr_ack_aggregation_cwnd`, the same in Linux's BBR v1 and Google's BBRv3 but for the
//! window v3 uses in STARTUP): the most data ACKed beyond what the bandwidth estimate
//! predicts since the start of an ACK epoch, kept as a max over two windows of a few
//! packet-timed rounds, becomes extra window so that a sender keeps sending through the
//! silences between aggregated ACKs.
//!
//! The kernel's bit fields keep their widths: `extra_acked` is a u16, `ack_epoch_acked` 20
//! bits, `extra_acked_win_rtts` 5 bits.

use crate::bbr::{stamp_us_delta, BBR_SCALE, BW_UNIT};
use crate::tcp::RateSample;

/// `bbr_extra_acked_gain`: the allowance is the whole max extra_acked.
const EXTRA_ACKED_GAIN: u32 = 1 << BBR_SCALE;
/// `bbr_ack_epoch_acked_reset_thresh`: an epoch this long (in packets) is restarted.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`: the allowance is at most 100 ms of bandwidth.
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `bbr_extra_acked_win_rtts`: each of the two windows of the max filter spans 5 rounds.
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;

/// The estimator's part of `struct bbr`.
#[derive(Clone, Debug, Default)]
pub struct AckAggregation {
    /// `ack_epoch_mstamp`: start of the epoch, microseconds.
    epoch_mstamp: u64,
    /// `extra_acked[2]`: the max excess of each window.
    extra_acked: [u16; 2],
    /// `ack_epoch_acked`: packets (S)ACKed in the epoch.
    epoch_acked: u32,
    /// `extra_acked_win_rtts`: age of the current window, rounds.
    win_rtts: u32,
    /// `extra_acked_win_idx`: the current window.
    win_idx: usize,
}

impl AckAggregation {
    /// `bbr_init`'s part: no excess, an epoch starting at `now_us`.
    pub fn reset(&mut self, now_us: u64) {
        *self = Self { epoch_mstamp: now_us, ..Self::default() };
    }

    /// `CA_EVENT_TX_START` while app-limited: a new epoch from `now_us`.
    pub fn restart_epoch(&mut self, now_us: u64) {
        self.epoch_mstamp = now_us;
        self.epoch_acked = 0;
    }

    /// `bbr_extra_acked`: the max excess of the last one or two windows.
    pub fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1]) as u32
    }

    /// `bbr_ack_aggregation_cwnd`: the max excess, at most 100 ms at `bw`.
    pub fn cwnd(&self, bw: u32) -> u32 {
        let max_aggr_cwnd = (bw as u64 * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = (EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// `bbr_update_ack_aggregation` for the ACK of sample `rs` at `delivered_mstamp_us`:
    /// at a round start the window ages and, after `win_rtts_thresh` rounds, the other one
    /// restarts; the epoch restarts when the ACKs fall behind `bw` (or after 2^20
    /// packets); the excess over `bw * epoch`, capped at `cwnd`, feeds the current window.
    pub fn update(
        &mut self,
        rs: &RateSample,
        round_start: bool,
        win_rtts_thresh: u32,
        bw: u32,
        delivered_mstamp_us: u64,
        cwnd: u32,
    ) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1F);
            if self.win_rtts >= win_rtts_thresh {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        // wraps: the kernel's u32 epoch_us.
        let epoch_us = stamp_us_delta(delivered_mstamp_us, self.epoch_mstamp) as u32;
        let mut expected_acked = (bw as u64 * epoch_us as u64 / BW_UNIT) as u32;
        if self.epoch_acked <= expected_acked || self.epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.epoch_acked = 0;
            self.epoch_mstamp = delivered_mstamp_us;
            expected_acked = 0;
        }
        self.epoch_acked = (self.epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra_acked = self.epoch_acked.wrapping_sub(expected_acked).min(cwnd);
        if extra_acked > self.extra_acked[self.win_idx] as u32 {
            // wraps: the field is a u16 in the kernel.
            self.extra_acked[self.win_idx] = extra_acked as u16;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(acked: u32) -> RateSample {
        RateSample { acked_sacked: acked, delivered: 1, interval_us: 1, ..RateSample::default() }
    }

    #[test]
    fn the_excess_over_bw_times_the_epoch_is_kept_capped_at_cwnd() {
        // bw = 2^24 / 100 = 167772: one packet per 100 us. A burst of 10 at t = 0 finds the
        // epoch behind (0 acked <= 0 expected): a new epoch from 0, excess 10. 20 more at
        // t = 500 us, where bw predicts 167772 * 500 >> 24 = 4: still ahead (10 > 4), so
        // excess 30 - 4 = 26. 50 more then: 80 - 4 = 76, capped by cwnd 60. The allowance
        // is min(60, bw * 100 ms = 999 packets).
        let bw = (BW_UNIT / 100) as u32;
        let mut a = AckAggregation::default();
        a.reset(0);
        a.update(&rs(10), false, EXTRA_ACKED_WIN_RTTS, bw, 0, 100);
        assert_eq!(a.extra_acked(), 10);
        a.update(&rs(20), false, EXTRA_ACKED_WIN_RTTS, bw, 500, 100);
        assert_eq!(a.extra_acked(), 26);
        a.update(&rs(50), false, EXTRA_ACKED_WIN_RTTS, bw, 500, 60);
        assert_eq!((a.extra_acked(), a.cwnd(bw)), (60, 60));
        // ACKs behind the estimate restart the epoch: at t = 1 s bw predicts 9999.
        a.update(&rs(1), false, EXTRA_ACKED_WIN_RTTS, bw, 1_000_000, 100);
        assert_eq!(a.extra_acked(), 60);
        // Each round start at a threshold of 1 restarts the other window: after two, the 60
        // is forgotten and the max is the new epochs' single packet.
        for t in [2_000_000, 3_000_000] {
            a.update(&rs(1), true, 1, bw, t, 100);
        }
        assert_eq!(a.extra_acked(), 1);
    }
}
