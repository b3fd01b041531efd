//! The receiver's window as Linux 6.x grows it, and the ACK rate that growth sets.
//!
//! `tcp_grow_window` (net/ipv4/tcp_input.c), called for every new data segment of at least
//! 128 bytes, raises `rcv_ssthresh` by `max(2 advmss, 2 len)` up to the room left below
//! `min(window_clamp, tcp_space(sk))`, and whenever it raises it also sets
//! `icsk_ack.quick |= 1`: the ACK that advertises the larger window goes out at once
//! (`__tcp_ack_snd_check`'s quick-ACK branch). So while the window grows the receiver ACKs
//! every segment, and only once `rcv_ssthresh` meets the buffer's limit does it fall back
//! to one ACK per two segments.
//!
//! Measured on the testbed (Linux 6.18, `tp_btf/tcp_probe` on the receiving socket, a02 at
//! 10 Mbit/s / 100 ms): with the sink's forced `SO_RCVBUF` of 8 MB the first advertised
//! window is 8 388 264 bytes, it grows by two segments per segment up to 10 485 760, and
//! `icsk_ack.quick` stays at 16 (16 | 1 = 17, less the one quick ACK sent) for those 724
//! segments, each ACKed alone; then it counts down and the receiver delays ACKs. The
//! whole first slow start fits in those 724 segments.
//!
//! The buffer is `sk_rcvbuf` = 2 x the `SO_RCVBUF` asked for (`sock_setsockopt`); the window
//! it allows is `tcp_win_from_space`: `sk_rcvbuf x scaling_ratio / 256`. The first window
//! uses the default ratio (`TCP_DEFAULT_SCALING_RATIO`, 128), rounded down to whole segments
//! (`tcp_select_initial_window`); the first full segment replaces the ratio by
//! `len x 256 / truesize` (`tcp_measure_rcv_mss`) and the clamp with it. On the testbed's
//! TUN receive path a 1448-byte segment sits in a 2304-byte buffer: ratio 160, as the
//! measured ceiling 10 485 760 = 2 x 8 MB x 160 / 256 shows.
//!
//! Not modelled: the unread data in the buffer lowering `tcp_space` (the testbed's sink
//! reads within a few segments, far below these megabytes) and receive-buffer autotuning
//! (`tcp_rcv_space_adjust`), off when the buffer is forced. A receiver with no forced
//! buffer (the web sessions, whose buffers autotune from `tcp_rmem`) starts from the
//! default `tcp_rmem[1]` window and grows without a ceiling.

/// `TCP_DEFAULT_SCALING_RATIO`: half of the buffer is window until a segment is measured.
const DEFAULT_SCALING_RATIO: u64 = 128;
/// `len x 256 / truesize` of a full segment on the testbed's TUN receive path (1448 / 2304).
const TUN_SCALING_RATIO: u64 = 160;
/// `tcp_rmem[1]`, the default receive buffer of a socket that does not set one.
const DEFAULT_RCVBUF: u64 = 131_072;

/// `rcv_ssthresh` and the limit it grows to, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct RcvWindow {
    ssthresh: u64,
    ceiling: u64,
    mss: u64,
}

impl RcvWindow {
    /// The window of a receiver whose application forced `SO_RCVBUF` to `rcvbuf` bytes, or,
    /// with `None`, left it to autotuning; `mss` is the segment payload.
    pub fn new(rcvbuf: Option<u64>, mss: u32) -> Self {
        let mss = mss as u64;
        let (sk_rcvbuf, ceiling) = match rcvbuf {
            Some(b) => (2 * b, 2 * b * TUN_SCALING_RATIO / 256),
            None => (DEFAULT_RCVBUF, u64::MAX),
        };
        let initial = sk_rcvbuf * DEFAULT_SCALING_RATIO / 256 / mss * mss;
        Self { ssthresh: initial.min(ceiling), ceiling, mss }
    }

    /// `tcp_grow_window` for a new full-sized segment (the simulator sends no others, so
    /// `tcp_event_data_recv`'s 128-byte minimum never applies): whether the window grew,
    /// and so the ACK must go out at once. The step is `max(2 advmss, 2 len)` = two
    /// segments (advmss less the timestamp option is the payload, 1448: the testbed's
    /// 724 growing segments fit 2 x 1448, not 2 x 1460's 719).
    #[inline]
    pub fn grow(&mut self) -> bool {
        if self.ssthresh >= self.ceiling {
            return false;
        }
        self.ssthresh += (2 * self.mss).min(self.ceiling - self.ssthresh);
        true
    }

    /// `tcp_incr_quickack`'s budget: `rcv_wnd / (2 rcv_mss)` quick ACKs.
    #[inline]
    pub fn quickacks(&self) -> u32 {
        (self.ssthresh / (2 * self.mss)).min(u32::MAX as u64) as u32
    }

    /// A window of `bytes` that has stopped growing (tests of the ACK rules around it).
    #[cfg(test)]
    pub(crate) fn fixed(bytes: u64, mss: u32) -> Self {
        Self { ssthresh: bytes, ceiling: bytes, mss: mss as u64 }
    }

    /// The window in bytes (`rcv_ssthresh`).
    pub fn bytes(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_buffer_grows_from_half_to_the_measured_ratio() {
        // SO_RCVBUF 8 MB: sk_rcvbuf 16 777 216; first window 16 777 216 x 128 / 256 =
        // 8 388 608, rounded down to 1448-byte segments: 5793 x 1448 = 8 388 264 (the
        // testbed's first advertised window). Ceiling 16 777 216 x 160 / 256 = 10 485 760.
        // Steps of 2 x 1448 = 2896: (10 485 760 - 8 388 264) / 2896 = 724.3, so 725 segments
        // grow it (the last by the remainder), and the 726th does not.
        let mut w = RcvWindow::new(Some(8 << 20), 1448);
        assert_eq!(w.bytes(), 8_388_264);
        assert_eq!(w.quickacks(), 2896);
        let grown = (0..1000).take_while(|_| w.grow()).count();
        assert_eq!(grown, 725);
        assert_eq!(w.bytes(), 10_485_760);
    }

    #[test]
    fn default_buffer_starts_at_half_of_tcp_rmem_and_keeps_growing() {
        // 131 072 x 128 / 256 = 65 536 -> 45 x 1448 = 65 160; no ceiling (autotuning).
        let mut w = RcvWindow::new(None, 1448);
        assert_eq!(w.bytes(), 65_160);
        assert!((0..100_000).all(|_| w.grow()));
    }
}
