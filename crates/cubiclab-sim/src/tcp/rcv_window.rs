//! The receiver's buffer and window as Linux 6.18 sizes them (`net/ipv4/tcp_input.c`,
//! `tcp_output.c`, `include/net/tcp.h`), for an application that reads every byte as soon
//! as it arrives in order (the testbed's sink, within the few segments its `SO_RCVLOWAT`
//! holds): nothing in order waits in the buffer, so `copied_seq = rcv_nxt` and the only
//! memory in use is the out-of-order queue.
//!
//! Two ways to size the buffer, one per flow in the plan:
//!
//! - **Forced** (`SO_RCVBUF`/`SO_RCVBUFFORCE`, `SOCK_RCVBUF_LOCK`): `sk_rcvbuf` is twice
//!   the bytes asked for (`sock_setsockopt`) and never changes.
//! - **Autotuned** (the default of a socket that sets nothing): `sk_rcvbuf` starts at
//!   `tcp_rmem[1]` and `tcp_rcv_space_adjust` grows it once per receiver RTT, up to
//!   `tcp_rmem[2]`.
//!
//! The window the buffer allows is `tcp_win_from_space`: `space x scaling_ratio / 256`.
//! Until a full segment is measured the ratio is `TCP_DEFAULT_SCALING_RATIO` (128, half);
//! the first one replaces it by `len x 256 / truesize` (`tcp_measure_rcv_mss`): on the
//! testbed's TUN receive path a 1448-byte segment sits in a 2304-byte buffer, ratio 160
//! (the forced 8 MB buffer's measured ceiling 10 485 760 = 2 x 8 MB x 160 / 256 shows it).
//!
//! Rules, each at its function below: the first window (`tcp_select_initial_window`,
//! `tcp_init_buffer_space`), the window scale, the clamp after the first segment
//! (`tcp_measure_rcv_mss`, `tcp_set_window_clamp`), `rcv_ssthresh` growth
//! (`tcp_grow_window`), the receiver's RTT (`tcp_rcv_rtt_measure_ts`, `tcp_rcv_rtt_measure`,
//! `tcp_rcv_rtt_update`), the per-RTT buffer growth (`tcp_rcv_space_adjust`,
//! `tcp_rcvbuf_grow`) and the advertised window (`__tcp_select_window`,
//! `tcp_select_window`).
//!
//! Not modelled: memory pressure (`tcp_under_memory_pressure`, `tcp_clamp_window`), the
//! receive queue's collapse and pruning, and `tcp_shrink_window` (off by default).

use cubiclab_cc::seq::before;

use crate::engine::Time;

/// `TCP_DEFAULT_SCALING_RATIO`: half of the buffer is window until a segment is measured.
const DEFAULT_SCALING_RATIO: u64 = 128;
/// `len x 256 / truesize` of a full segment on the testbed's TUN receive path (1448 / 2304).
pub const TUN_SCALING_RATIO: u64 = 160;
/// `net.core.rmem_max` of Linux 6.18 (4 MB; read on the testbed's kernel): only the window
/// scale sees it.
const RMEM_MAX: u64 = 4 << 20;
/// `TCP_MAX_WSCALE`.
const TCP_MAX_WSCALE: u32 = 14;
/// `TCP_INIT_CWND`: `tcp_init_buffer_space` starts `rcvq_space` at ten segments.
const TCP_INIT_CWND: u64 = 10;
/// `SOCK_MIN_RCVBUF / 2` (2 x (2048 + sizeof(struct sk_buff) rounded) / 2): the least window clamp.
const MIN_WINDOW_CLAMP: u64 = 2304;

/// Linux 6.18's `net.ipv4.tcp_rmem`: min, default, max (bytes).
pub const TCP_RMEM_DEFAULT: [u64; 3] = [4096, 131_072, 33_554_432];

/// The receiver's buffer, window and receive-side RTT, in bytes and nanoseconds (sequence
/// numbers in segments of `mss` bytes).
#[derive(Clone, Copy, Debug)]
pub struct RcvWindow {
    mss: u64,
    /// `SOCK_RCVBUF_LOCK`: the buffer was forced and is never autotuned.
    locked: bool,
    /// `tcp_rmem[2]`: autotuning's ceiling.
    rmem_max: u64,
    sk_rcvbuf: u64,
    scaling_ratio: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    rcv_wscale: u32,
    rounding: Rounding,
    /// The window last advertised (`rcv_wnd`) and `rcv_nxt` when it was (`rcv_wup`).
    rcv_wnd: u64,
    rcv_wup: u32,
    /// `rcvq_space`: bytes copied in the last measured RTT, and where and when it began.
    space: u64,
    space_seq: u32,
    space_time: Time,
    /// `rcv_rtt_est.rtt_us` (eight times the estimate, microseconds; 0: none yet), and
    /// when the current copy measurement may end (`rcvq_space.time` + the RTT; never
    /// before the first sample).
    rtt_us8: u64,
    measure_at: Time,
    /// The window and its field while nothing is held out of order: `min(tcp_space,
    /// rcv_ssthresh)` rounded up to the scale's unit, which only grows (kept here so that
    /// an ACK costs no arithmetic).
    target: u64,
    target_field: u16,
    /// `rcv_rtt_last_tsecr`, and the window-based measurement's end (`rcv_rtt_est.seq`,
    /// `.time`).
    last_tsecr: u16,
    rtt_seq: u32,
    rtt_time: Time,
}

/// How `__tcp_select_window` rounds a window: with a scale, up to a multiple of its unit
/// 2^wscale (`mask` = unit - 1); without one, down to whole segments.
#[derive(Clone, Copy, Debug)]
enum Rounding {
    UpToUnit { mask: u64 },
    DownToSegments { mss: u64 },
}

impl Rounding {
    fn new(wscale: u32, mss: u64) -> Self {
        match wscale {
            0 => Rounding::DownToSegments { mss: mss.max(1) },
            s => Rounding::UpToUnit { mask: (1 << s) - 1 },
        }
    }
}

/// `tcp_win_from_space`.
#[inline]
fn win_from_space(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> 8
}

/// `tcp_space_from_win`.
#[inline]
fn space_from_win(win: u64, ratio: u64) -> u64 {
    (win << 8) / ratio
}

/// The TCP timestamp clock (`tcp_time_stamp_ms`), in milliseconds modulo 2^16: enough for
/// differences of up to a minute, which is all an RTT sample needs.
#[inline]
pub fn ts_ms(now: Time) -> u16 {
    (now / 1_000_000) as u16
}

impl RcvWindow {
    /// A new connection's receiver: `rcvbuf` the bytes its application forced with
    /// `SO_RCVBUF` (`None`: autotuned within `tcp_rmem`), `mss` the segment payload (the
    /// advertised MSS less the timestamp option: the testbed's window grows by 2 x 1448).
    pub fn new(rcvbuf: Option<u64>, tcp_rmem: [u64; 3], mss: u32) -> Self {
        let mss = mss as u64;
        let sk_rcvbuf = match rcvbuf {
            Some(b) => 2 * b,
            None => tcp_rmem[1],
        };
        let ratio = DEFAULT_SCALING_RATIO;
        // tcp_openreq_init_rwin -> tcp_select_initial_window with the listener's
        // tcp_full_space: the window rounded down to whole segments; the scale fits the
        // largest buffer the socket could reach (tcp_rmem[2], rmem_max), within the
        // window clamp, which a listener with a forced buffer (SOCK_RCVBUF_LOCK) sets to
        // its full space: a forced buffer's scale fits that buffer alone.
        let full_space = win_from_space(sk_rcvbuf, ratio);
        let rcv_wnd = if full_space > mss { full_space / mss * mss } else { full_space };
        let scale_space = match rcvbuf {
            Some(_) => full_space,
            None => full_space.max(tcp_rmem[2]).max(RMEM_MAX),
        };
        let rcv_wscale = (scale_space.max(1).ilog2().saturating_sub(15)).min(TCP_MAX_WSCALE);
        let mut window_clamp = 65_535u64 << rcv_wscale;
        // tcp_init_buffer_space: the clamp comes down to the full space, less one segment
        // reserved for the application (tcp_app_win 31); rcv_ssthresh under it; rcvq_space
        // at min(rcv_ssthresh, rcv_wnd, 10 segments).
        if window_clamp >= full_space {
            window_clamp = full_space;
        }
        if window_clamp > 2 * mss && window_clamp + mss > full_space {
            window_clamp = (2 * mss).max(full_space - mss);
        }
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        let mut w = Self {
            mss,
            locked: rcvbuf.is_some(),
            rmem_max: tcp_rmem[2],
            sk_rcvbuf,
            scaling_ratio: ratio,
            window_clamp,
            rcv_ssthresh,
            rcv_wscale,
            rounding: Rounding::new(rcv_wscale, mss),
            rcv_wnd,
            rcv_wup: 0,
            space: rcv_ssthresh.min(rcv_wnd).min(TCP_INIT_CWND * mss),
            space_seq: 0,
            space_time: 0,
            rtt_us8: 0,
            measure_at: Time::MAX,
            target: 0,
            target_field: 0,
            last_tsecr: 0,
            rtt_seq: 0,
            rtt_time: 0,
        };
        w.refresh_target();
        w
    }

    /// The window an ACK offers while nothing is held out of order, after `rcv_ssthresh`,
    /// the buffer or the ratio changed.
    fn refresh_target(&mut self) {
        let w = win_from_space(self.sk_rcvbuf, self.scaling_ratio).min(self.rcv_ssthresh);
        self.target = self.round(w);
        self.target_field = self.field(self.target);
    }

    /// `__tcp_select_window`'s rounding of the free space `w`: up to the scale's unit, or
    /// without a scale down to whole segments (the window then stays within one segment
    /// of the free space; the sender counts whole segments either way). One formula for
    /// both, with the [`Rounding`] fixed when the scale was chosen.
    #[inline]
    fn round(&self, w: u64) -> u64 {
        // A mask where there is a scale (every run but a window pinned below 80 KiB): the
        // division is left to the unscaled case, off the usual per-ACK path.
        match self.rounding {
            Rounding::UpToUnit { mask } => (w + mask) & !mask,
            Rounding::DownToSegments { mss } => w / mss * mss,
        }
    }

    /// `tcp_select_window`'s 16-bit field for a window of `w` bytes: at most 65535 units
    /// of the scale.
    #[inline]
    fn field(&self, w: u64) -> u16 {
        (w.min(65_535 << self.rcv_wscale) >> self.rcv_wscale) as u16
    }

    /// The window in the SYN-ACK (`tcp_make_synack`: unscaled, at most 65535 bytes), in
    /// whole segments: all the sender may send before the first ACK.
    pub fn syn_window_segments(&self) -> u32 {
        (self.syn_window() as u64 / self.mss) as u32
    }

    /// The window scale this receiver announced (`rcv_wscale`).
    pub fn wscale(&self) -> u32 {
        self.rcv_wscale
    }

    /// The window field of its SYN or SYN-ACK (`tcp_transmit_skb`, `tcp_make_synack`: the
    /// first window, unscaled, at most 65535 bytes).
    pub fn syn_window(&self) -> u16 {
        self.rcv_wnd.min(65_535) as u16
    }

    /// The connection is established at `now` with the first data (`tcp_init_buffer_space`
    /// starts the copy measurement), the first full segment having been measured
    /// (`tcp_measure_rcv_mss`: a new `scaling_ratio` moves the clamp with it through
    /// `tcp_set_window_clamp`).
    pub fn established(&mut self, now: Time) {
        self.space_time = now;
        self.rearm();
        self.scaling_ratio = TUN_SCALING_RATIO;
        let clamp = win_from_space(self.sk_rcvbuf, self.scaling_ratio).max(MIN_WINDOW_CLAMP);
        if clamp < self.window_clamp {
            self.rcv_ssthresh = self.rcv_ssthresh.min(clamp);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(clamp));
        }
        self.window_clamp = clamp;
        self.space = self.space.min(self.window_clamp);
        self.refresh_target();
    }

    /// `tcp_rcv_rtt_update`: a lower sample is taken at once, a higher one with gain 1/8
    /// (with timestamps, `win_dep` false), or not at all (the window-based measure). The
    /// receive queue is always empty here, so no sample is refused for it.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us << 3;
        let old = self.rtt_us8;
        self.rtt_us8 = if old == 0 || m < old {
            m
        } else if win_dep {
            return;
        } else {
            old - (old >> 3) + sample_us
        };
        self.rearm();
    }

    /// The copy measurement ends one receiver RTT after it began (`tcp_rcv_space_adjust`'s
    /// `time < rcv_rtt_est.rtt_us` test, with the estimate of the moment).
    fn rearm(&mut self) {
        self.measure_at = if self.rtt_us8 == 0 { Time::MAX } else { self.space_time + self.rtt_ns() };
    }

    /// `rcv_rtt_est.rtt_us`: the receiver's RTT estimate, eight times microseconds (0: none
    /// yet).
    #[inline]
    pub fn rtt_us8(&self) -> u64 {
        self.rtt_us8
    }

    /// The receiver's RTT estimate in nanoseconds (0: none yet).
    fn rtt_ns(&self) -> Time {
        (self.rtt_us8 >> 3) * 1000
    }

    /// `tcp_rcv_rtt_measure_ts` for a full segment echoing `tsecr`: once per new echoed
    /// timestamp, the time since it was sent, in whole milliseconds (`tcp_rtt_tsopt_us`;
    /// 0 ms gives no sample).
    #[inline]
    pub fn measure_rtt_ts(&mut self, tsecr: u16, now: Time) {
        if tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        let delta_ms = ts_ms(now).wrapping_sub(tsecr);
        if delta_ms > 0 && delta_ms < u16::MAX / 2 {
            self.rtt_update(delta_ms as u64 * 1000, false);
        }
    }

    /// `tcp_rcv_rtt_measure`, for in-order data (`tcp_event_data_recv`): the time to
    /// receive one window, a lower bound only.
    #[inline]
    pub fn measure_rtt_window(&mut self, rcv_nxt: u32, now: Time) {
        if self.rtt_time != 0 {
            if before(rcv_nxt, self.rtt_seq) {
                return;
            }
            let delta_us = ((now - self.rtt_time) / 1000).max(1);
            self.rtt_update(delta_us, true);
        }
        self.rtt_seq = rcv_nxt.wrapping_add(self.rcv_wnd.div_ceil(self.mss) as u32);
        self.rtt_time = now;
    }

    /// `tcp_space`: the window the free buffer allows, `ooo` segments being held out of
    /// order (each costs its truesize, `len x 256 / scaling_ratio`).
    #[inline]
    fn tcp_space(&self, ooo: u32) -> u64 {
        let used = space_from_win(ooo as u64 * self.mss, self.scaling_ratio);
        win_from_space(self.sk_rcvbuf.saturating_sub(used), self.scaling_ratio)
    }

    /// `tcp_grow_window` for a new full-sized segment (the simulator sends no others, so
    /// `tcp_event_data_recv`'s 128-byte minimum never applies): `rcv_ssthresh` rises by
    /// `max(2 advmss, 2 len)` = two segments (`truesize` passes check #2: 2304 x 160 / 256 =
    /// 1440 <= 1448) up to `min(window_clamp, tcp_space)`. Returns whether it grew, and so
    /// the ACK must go out at once (`icsk_ack.quick |= 1`).
    #[inline]
    pub fn grow(&mut self, ooo: u32) -> bool {
        if self.rcv_ssthresh >= self.window_clamp {
            return false;
        }
        let limit = self.window_clamp.min(self.tcp_space(ooo));
        if self.rcv_ssthresh >= limit {
            return false;
        }
        self.rcv_ssthresh += (2 * self.mss).min(limit - self.rcv_ssthresh);
        self.refresh_target();
        true
    }

    /// `tcp_rcv_space_adjust` after the application copied everything up to `rcv_nxt`:
    /// once per receiver RTT, the bytes copied in it (`copied - inq`, the queue being
    /// empty) grow the buffer if they exceed the last RTT's (`tcp_rcvbuf_grow`). `ooo_end`:
    /// one past the highest segment held out of order (`rcv_nxt` when none).
    #[inline]
    pub fn space_adjust(&mut self, rcv_nxt: u32, ooo_end: u32, now: Time) {
        if now < self.measure_at {
            return;
        }
        let copied = rcv_nxt.wrapping_sub(self.space_seq) as u64 * self.mss;
        if copied > self.space {
            self.rcvbuf_grow(copied, rcv_nxt, ooo_end);
        }
        self.space_seq = rcv_nxt;
        self.space_time = now;
        self.rearm();
    }

    /// `tcp_data_queue_ofo`: out-of-order data grows the buffer by what it spans
    /// (`tcp_rcvbuf_grow` with the current `rcvq_space`).
    pub fn ofo_grow(&mut self, rcv_nxt: u32, ooo_end: u32) {
        self.rcvbuf_grow(self.space, rcv_nxt, ooo_end);
    }

    /// `tcp_rcvbuf_grow(sk, newval)` (Linux 6.18, with "tcp: fix too slow tcp_rcvbuf_grow()
    /// action"): the window for twice the bytes copied ("DRS is always one RTT late"), plus
    /// twice its growth over the last RTT (slow start doubles the rate), plus the
    /// out-of-order span; the buffer that holds it, up to `tcp_rmem[2]`; the clamp follows.
    fn rcvbuf_grow(&mut self, newval: u64, rcv_nxt: u32, ooo_end: u32) {
        let oldval = self.space;
        self.space = newval;
        if self.locked {
            return;
        }
        let mut rcvwin = newval << 1;
        rcvwin += (rcvwin * (newval - oldval.min(newval)) / oldval.max(1)) << 1;
        rcvwin += ooo_end.wrapping_sub(rcv_nxt) as u64 * self.mss;
        let rcvbuf = space_from_win(rcvwin, self.scaling_ratio).min(self.rmem_max);
        if rcvbuf > self.sk_rcvbuf {
            self.sk_rcvbuf = rcvbuf;
            self.window_clamp = win_from_space(rcvbuf, self.scaling_ratio);
            self.refresh_target();
        }
    }

    /// `tcp_select_window` with `__tcp_select_window` for an ACK sent when `rcv_nxt` is
    /// the next segment expected and `ooo` segments are held: the free space, at most
    /// `rcv_ssthresh`, rounded up to the scale's unit; never less than what the last
    /// window still offers (it must not shrink); zero when the free space falls below a
    /// sixteenth of the buffer or one segment. Returns the 16-bit window field.
    #[inline]
    pub fn select(&mut self, rcv_nxt: u32, ooo: u32) -> u16 {
        if ooo == 0 {
            // The free space is the whole buffer's window, never below half of it, and the
            // target only grows: what the last window still offers is within it.
            self.rcv_wnd = self.target;
            self.rcv_wup = rcv_nxt;
            return self.target_field;
        }
        let unit = 1u64 << self.rcv_wscale;
        let allowed = win_from_space(self.sk_rcvbuf, self.scaling_ratio);
        let full = self.window_clamp.min(allowed);
        let mut free = self.tcp_space(ooo);
        let mut new_win = 'w: {
            if free < full >> 1 {
                free &= !(unit - 1);
                if free < allowed >> 4 || free < self.mss.min(full) {
                    break 'w 0;
                }
            }
            self.round(free.min(self.rcv_ssthresh))
        };
        let offered = (self.rcv_wup as u64 * self.mss + self.rcv_wnd).saturating_sub(rcv_nxt as u64 * self.mss);
        // (In segments counted from 0 modulo 2^32 the products above stay exact for any
        // run the simulator can do: 2^32 segments of 1448 bytes is 6 TB.)
        if new_win < offered {
            new_win = (offered + unit - 1) & !(unit - 1);
        }
        self.rcv_wnd = new_win;
        self.rcv_wup = rcv_nxt;
        self.field(new_win)
    }

    /// The window last advertised (`rcv_wnd`, bytes).
    pub fn advertised(&self) -> u64 {
        self.rcv_wnd
    }

    /// `rcv_ssthresh`, the most the window will offer now (bytes).
    pub fn ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// `sk_rcvbuf` (bytes).
    pub fn rcvbuf(&self) -> u64 {
        self.sk_rcvbuf
    }

    /// `window_clamp` (bytes).
    pub fn clamp(&self) -> u64 {
        self.window_clamp
    }

    /// `rcvq_space.space` (bytes).
    pub fn space(&self) -> u64 {
        self.space
    }

    /// `tcp_incr_quickack`'s budget: `rcv_wnd / (2 rcv_mss)` quick ACKs.
    #[inline]
    pub fn quickacks(&self) -> u32 {
        (self.rcv_ssthresh / (2 * self.mss)).min(u32::MAX as u64) as u32
    }

    /// A window of `bytes` that has stopped growing (tests of the ACK rules around it).
    #[cfg(test)]
    pub(crate) fn fixed(bytes: u64, mss: u32) -> Self {
        let mut w = Self::new(Some(bytes), TCP_RMEM_DEFAULT, mss);
        w.scaling_ratio = TUN_SCALING_RATIO;
        w.sk_rcvbuf = (bytes << 8).div_ceil(TUN_SCALING_RATIO);
        w.rcv_ssthresh = bytes;
        w.window_clamp = bytes;
        w.rcv_wnd = bytes;
        w.refresh_target();
        w
    }
}

/// The sender's view of the receiver's window: the 16-bit field of each ACK scaled by the
/// window scale of the handshake (`tcp_ack_update_window`: `snd_wnd = window << snd_wscale`),
/// in whole segments (`tcp_snd_wnd_test`: a segment may leave when it ends inside the
/// window). The last field's conversion is kept, so an unchanged window costs no division.
#[derive(Clone, Copy, Debug)]
pub struct PeerWindow {
    wscale: u32,
    mss: u32,
    field: u16,
    segments: u32,
}

impl PeerWindow {
    pub fn new(wscale: u32, mss: u32) -> Self {
        Self { wscale, mss, field: 0, segments: 0 }
    }

    /// The window field of the last ACK (`snd_wnd >> snd_wscale`, which header prediction
    /// expects the next ACK to repeat).
    #[inline]
    pub fn field(&self) -> u16 {
        self.field
    }

    /// Segments the window `field` allows beyond the ACK that carried it.
    #[inline]
    pub fn segments(&mut self, field: u16) -> u32 {
        if field != self.field {
            self.field = field;
            self.segments = (((field as u64) << self.wscale) / self.mss as u64) as u32;
        }
        self.segments
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn forced_buffer_grows_from_half_to_the_measured_ratio() {
        // SO_RCVBUF 8 MB: sk_rcvbuf 16 777 216; first window 16 777 216 x 128 / 256 =
        // 8 388 608, rounded down to 1448-byte segments: 5793 x 1448 = 8 388 264 (the
        // testbed's first advertised window). tcp_init_buffer_space pulls the clamp to
        // 8 388 608 - 1448 = 8 387 160 and rcv_ssthresh with it; the first segment's
        // ratio 160 lifts the clamp to 16 777 216 x 160 / 256 = 10 485 760 and
        // rcv_ssthresh back to min(rcv_wnd, clamp) = 8 388 264. Steps of 2 x 1448 = 2896:
        // (10 485 760 - 8 388 264) / 2896 = 724.3, so 725 segments grow it (the last by the
        // remainder), and the 726th does not.
        let mut w = RcvWindow::new(Some(8 << 20), TCP_RMEM_DEFAULT, 1448);
        assert_eq!(w.ssthresh(), 8_387_160);
        w.established(0);
        assert_eq!(w.ssthresh(), 8_388_264);
        assert_eq!(w.quickacks(), 2896);
        let grown = (0..1000).take_while(|_| w.grow(0)).count();
        assert_eq!(grown, 725);
        assert_eq!(w.ssthresh(), 10_485_760);
        // A forced buffer never autotunes: a fast-growing copy rate changes nothing.
        w.measure_rtt_ts(ts_ms(MS), 101 * MS);
        w.space_adjust(100_000, 100_000, 200 * MS);
        assert_eq!((w.rcvbuf(), w.clamp()), (16 << 20, 10_485_760));
    }

    #[test]
    fn default_buffer_starts_at_65160_and_stops_at_81920_until_autotuning() {
        // tcp_rmem[1] = 131 072: 131 072 x 128 / 256 = 65 536 -> 45 x 1448 = 65 160, the
        // testbed's first window (the SYN-ACK's, 45 segments). Scale: ilog2(max(65 536,
        // tcp_rmem[2] 32 MB, rmem_max 4 MB)) - 15 = 25 - 15 = 10. tcp_init_buffer_space:
        // clamp 65 536 - 1448 = 64 088, rcvq_space min(64 088, 65 160, 10 x 1448) = 14 480.
        // The first segment: clamp 131 072 x 160 / 256 = 81 920, rcv_ssthresh back to
        // 65 160, then up by 2896 per segment: (81 920 - 65 160) / 2896 = 5.8 -> 6 steps.
        let mut w = RcvWindow::new(None, TCP_RMEM_DEFAULT, 1448);
        assert_eq!(w.syn_window_segments(), 45);
        assert_eq!(w.wscale(), 10);
        assert_eq!((w.clamp(), w.ssthresh(), w.space()), (64_088, 64_088, 14_480));
        w.established(0);
        assert_eq!((w.clamp(), w.ssthresh()), (81_920, 65_160));
        assert_eq!((0..100).take_while(|_| w.grow(0)).count(), 6);
        assert_eq!(w.ssthresh(), 81_920);
        // The advertised window: 81 920 is a multiple of 1024; field 81 920 >> 10 = 80,
        // which the sender reads as 80 << 10 / 1448 = 56 segments.
        assert_eq!(w.select(10, 0), 80);
        assert_eq!(PeerWindow::new(10, 1448).segments(80), 56);
    }

    #[test]
    fn window_scale_fits_tcp_rmem_max_or_the_forced_buffer() {
        // tcp_select_initial_window: ilog2(min(max(full space, tcp_rmem[2], rmem_max),
        // window_clamp)) - 15, within [0, 14]. Autotuned, the clamp is open: Linux 6.18's
        // tcp_rmem[2] 32 MiB gives 25 - 15 = 10; the 6 MiB of kernels before "tcp: increase
        // tcp_rmem[2] to 32 MB" 22 - 15 = 7 (rmem_max 4 MiB is below either).
        let autotuned = |max| RcvWindow::new(None, [4096, 131_072, max], 1448).wscale();
        assert_eq!((autotuned(32 << 20), autotuned(6 << 20)), (10, 7));
        // Forced (tcp_openreq_init_rwin: a listener with SOCK_RCVBUF_LOCK clamps the window
        // to its full space, half of 2 x SO_RCVBUF before the first segment): SO_RCVBUF
        // 8 MiB -> ilog2(8 MiB) - 15 = 8; the plan's largest, 256 MiB -> 13; a pinned 64 KiB
        // window's 52 429 -> 15 - 15 = 0, no scale.
        let forced = |rcvbuf| RcvWindow::new(Some(rcvbuf), TCP_RMEM_DEFAULT, 1448).wscale();
        assert_eq!((forced(8 << 20), forced(256 << 20), forced(52_429)), (8, 13, 0));
    }

    #[test]
    fn a_pinned_window_is_advertised_in_its_own_scale() {
        // rwnd 1 MiB: SO_RCVBUF 1 048 576 x 256 / 320 = 838 861, full space 838 861, scale
        // ilog2(838 861) - 15 = 4. After the first segment the clamp is 2 x 838 861 x 160 /
        // 256 = 1 048 576 and rcv_ssthresh climbs to it; the field tops out at 65 535 units
        // of 16 = 1 048 560 B (tcp_select_window's cap): 724 segments, as 1 MiB would give.
        let mut w = RcvWindow::new(Some(838_861), TCP_RMEM_DEFAULT, 1448);
        w.established(0);
        while w.grow(0) {}
        assert_eq!((w.wscale(), w.clamp(), w.select(1, 0)), (4, 1_048_576, 65_535));
        assert_eq!(PeerWindow::new(4, 1448).segments(65_535), 724);
        // rwnd 64 KiB: SO_RCVBUF 52 429, no scale; the window 65 536 is advertised rounded
        // down to whole segments (__tcp_select_window without a scale): 45 x 1448 = 65 160.
        let mut w = RcvWindow::new(Some(52_429), TCP_RMEM_DEFAULT, 1448);
        w.established(0);
        while w.grow(0) {}
        assert_eq!((w.wscale(), w.clamp(), w.select(1, 0)), (0, 65_536, 65_160));
    }

    #[test]
    fn advertised_window_rounds_up_to_the_scale_and_never_shrinks() {
        // rcv_ssthresh 65 160 + 2896 = 68 056 -> ALIGN(68 056, 1024) = 68 608 = field 67.
        let mut w = RcvWindow::new(None, TCP_RMEM_DEFAULT, 1448);
        w.established(0);
        w.grow(0);
        assert_eq!(w.select(1, 0), 67);
        // 40 segments held out of order take 40 x 1448 x 256 / 160 = 92 672 bytes of the
        // 131 072: tcp_space (131 072 - 92 672) x 160 / 256 = 24 000, below half of
        // 81 920, rounded down to 23 552; the window would shrink to that, but the last
        // one still offers 68 608 from segment 1: the right edge holds (field 67).
        assert_eq!(w.select(1, 40), 67);
    }

    #[test]
    fn receiver_rtt_takes_lower_samples_at_once_and_higher_ones_by_an_eighth() {
        // tcp_rcv_rtt_update: first sample 100 ms -> 800 000 (x8 us); 60 ms is lower: taken;
        // 140 ms: 480 000 - 60 000 + 140 000 = 560 000 -> 70 ms. The same echoed timestamp
        // again gives no sample (rcv_rtt_last_tsecr).
        let mut w = RcvWindow::new(None, TCP_RMEM_DEFAULT, 1448);
        w.measure_rtt_ts(ts_ms(1000 * MS), 1100 * MS);
        assert_eq!(w.rtt_ns(), 100 * MS);
        w.measure_rtt_ts(ts_ms(1200 * MS), 1260 * MS);
        assert_eq!(w.rtt_ns(), 60 * MS);
        w.measure_rtt_ts(ts_ms(1300 * MS), 1440 * MS);
        assert_eq!(w.rtt_ns(), 70 * MS);
        w.measure_rtt_ts(ts_ms(1300 * MS), 2000 * MS);
        assert_eq!(w.rtt_ns(), 70 * MS);
        // The window-based measure only lowers it: one window (65 160 B = 45 segments)
        // in 90 ms is above 70 ms and changes nothing.
        w.measure_rtt_window(0, 2000 * MS);
        w.measure_rtt_window(45, 2090 * MS);
        assert_eq!(w.rtt_ns(), 70 * MS);
    }

    #[test]
    fn buffer_grows_once_per_rtt_from_the_bytes_copied() {
        // Receiver RTT 100 ms. Slow start delivers 10, 20, 40 segments per RTT.
        // RTT 1 (10 segments = 14 480 B) is not above rcvq_space 14 480: no growth.
        // RTT 2, 20 segments = 28 960 B: tcp_rcvbuf_grow: rcvwin = 2 x 28 960 = 57 920,
        // plus 2 x 57 920 x (28 960 - 14 480) / 14 480 = 115 840 -> 173 760; the buffer
        // 173 760 x 256 / 160 = 278 016 > 131 072, so sk_rcvbuf = 278 016 and the clamp
        // 278 016 x 160 / 256 = 173 760.
        // RTT 3, 40 segments = 57 920 B: rcvwin 115 840 + 2 x 115 840 x 28 960 / 28 960 =
        // 347 520 (three times the bytes copied), buffer 347 520 x 256 / 160 = 556 032.
        let mut w = RcvWindow::new(None, TCP_RMEM_DEFAULT, 1448);
        w.established(0);
        w.measure_rtt_ts(ts_ms(MS), 101 * MS);
        w.space_adjust(10, 10, 100 * MS);
        assert_eq!((w.space(), w.rcvbuf()), (14_480, 131_072));
        w.space_adjust(30, 30, 200 * MS);
        assert_eq!((w.space(), w.rcvbuf(), w.clamp()), (28_960, 278_016, 173_760));
        // Within the RTT nothing is measured.
        w.space_adjust(60, 60, 299 * MS);
        assert_eq!(w.space(), 28_960);
        w.space_adjust(70, 70, 300 * MS);
        assert_eq!((w.space(), w.rcvbuf(), w.clamp()), (57_920, 556_032, 347_520));
    }

    #[test]
    fn buffer_stops_at_tcp_rmem_max() {
        // tcp_rmem[2] = 1 MB: 1000 segments in an RTT ask for 3 x 1 448 000 x 256 / 160,
        // far above; sk_rcvbuf stops at 1 048 576 and the clamp at 655 360.
        let mut w = RcvWindow::new(None, [4096, 131_072, 1 << 20], 1448);
        w.established(0);
        w.measure_rtt_ts(ts_ms(MS), 101 * MS);
        w.space_adjust(20, 20, 100 * MS);
        w.space_adjust(1020, 1020, 200 * MS);
        assert_eq!((w.rcvbuf(), w.clamp()), (1 << 20, 655_360));
    }
}
