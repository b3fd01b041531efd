//! Arithmetic that BIC and its CUBIC descendants share in Linux (`tcp_bic.c`,
//! `tcp_cubic.c`), written once. Each module keeps its own conditions around these calls,
//! since the kernel versions differ there.

/// `ACK_RATIO_SHIFT`: the delayed-ACK ratio holds packets per ACK << 4.
pub(crate) const ACK_RATIO_SHIFT: u32 = 4;

/// `bictcp_acked`: packets per ACK as a moving average with gain 1/16, in 1/16 units
/// (u32 wrapping makes the subtraction act signed, as in C).
#[inline]
pub(crate) fn update_ack_ratio(delayed_ack: u32, pkts_acked: u32) -> u32 {
    delayed_ack.wrapping_add(pkts_acked.wrapping_sub(delayed_ack >> ACK_RATIO_SHIFT))
}

/// A per-packet ACK count turned per-ACK: `(cnt << 4) / delayed_ack`, at least 1.
#[inline]
pub(crate) fn per_ack_count(cnt: u32, delayed_ack: u32) -> u32 {
    ((cnt << ACK_RATIO_SHIFT) / delayed_ack.max(1)).max(1)
}

/// W_max remembered at a loss: the window, or `cwnd (scale + beta) / (2 scale)` with fast
/// convergence when the window fell below the previous W_max (seed 000 Sec. 3.7).
/// The product wraps in u32 as in C (windows above ~2.4 million segments).
#[inline]
pub(crate) fn last_max_after_loss(cwnd: u32, last_max: u32, beta: u32, scale: u32, fast_convergence: bool) -> u32 {
    if cwnd < last_max && fast_convergence {
        cwnd.wrapping_mul(scale + beta) / (2 * scale)
    } else {
        cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_arithmetic() {
        // 32/16 packets per ACK, one packet ACKed: 32 + 1 - 2 = 31 (the kernel's 31/16).
        assert_eq!(update_ack_ratio(32, 1), 31);
        // cnt 100 per packet at 2 packets per ACK (32/16): 50 per ACK; never 0.
        assert_eq!(per_ack_count(100, 32), 50);
        assert_eq!(per_ack_count(0, 32), 1);
        // CUBIC: loss at 80 below W_max 100: 80 (1024 + 717) / 2048 = 68.
        assert_eq!(last_max_after_loss(80, 100, 717, 1024, true), 68);
        assert_eq!(last_max_after_loss(80, 100, 717, 1024, false), 80);
        assert_eq!(last_max_after_loss(120, 100, 717, 1024, true), 120);
    }
}
