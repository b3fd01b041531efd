//! Arithmetic that BIC and its CUBIC descendants share in Linux (`tcp_bic.c`,
//! `tcp_cubic.c` v2.0 to v2.3), written once. Each module keeps its own conditions around
//! these calls, since the kernel versions differ there.

use crate::params::ParamSpec;

/// `BICTCP_BETA_SCALE`: beta is in 1/1024.
pub(crate) const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: CUBIC's own time unit is 2^-10 s.
pub(crate) const BICTCP_HZ: u32 = 10;
/// `ACK_RATIO_SHIFT`: the delayed-ACK ratio holds packets per ACK << 4.
pub(crate) const ACK_RATIO_SHIFT: u32 = 4;

/// The module parameter `initial_ssthresh` that `tcp_bic.c` and every `tcp_cubic.c` declare
/// (default 0: the kernel's own initial ssthresh stays).
pub(crate) const INITIAL_SSTHRESH: ParamSpec = ParamSpec {
    name: "initial_ssthresh",
    default: 0.0,
    min: 0.0,
    max: 2147483647.0,
    integer: true,
    unit: "segments",
    help: "ssthresh set at init (0: leave it)",
    choices: &[],
};

/// `beta_scale` of `cubictcp_register`: the Reno estimate grows one segment per
/// `cwnd * beta_scale / 8` ACKs, `8 (1024 + beta) / 3 / (1024 - beta)` in integer steps.
#[inline]
pub(crate) fn beta_scale(beta: u32) -> u32 {
    8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta)
}

/// `cube_factor` of `cubictcp_register`: `2^40 / (bic_scale * 10)`, so that
/// `cube_root(cube_factor * (W_max - cwnd))` is K in 2^-10 s.
#[inline]
pub(crate) fn cube_factor(bic_scale: u32) -> u64 {
    (1u64 << (10 + 3 * BICTCP_HZ)) / u64::from(bic_scale * 10)
}

/// `max(cwnd * beta / 1024, 2)`: the window kept after a loss (the product wraps in u32 as
/// in C).
#[inline]
pub(crate) fn kept_window(cwnd: u32, beta: u32) -> u32 {
    (cwnd.wrapping_mul(beta) / BICTCP_BETA_SCALE).max(2)
}

/// The rate limit at the top of `bictcp_update`: the last count still holds when the
/// window is unchanged and at most `HZ / 32` jiffies passed since it was computed.
#[inline]
pub(crate) fn count_is_fresh(last_cwnd: u32, last_time: u32, cwnd: u32, now: u32, hz: u32) -> bool {
    last_cwnd == cwnd && (now.wrapping_sub(last_time) as i32) <= (hz / 32) as i32
}

/// The epoch's curve in `bictcp_update`: `(K, origin)`, flat at `cwnd` when the window is at
/// or above W_max, else K = `root(cube_factor * (W_max - cwnd))` (2^-10 s) toward W_max.
#[inline]
pub(crate) fn epoch_curve(last_max_cwnd: u32, cwnd: u32, cube_factor: u64, root: fn(u64) -> u32) -> (u32, u32) {
    if last_max_cwnd <= cwnd {
        (0, cwnd)
    } else {
        // wraps: u64 product in C (only with bic_scale far below 41 and huge windows).
        (root(cube_factor.wrapping_mul(u64::from(last_max_cwnd - cwnd))), last_max_cwnd)
    }
}

/// `bic_target`: `origin ± cube_rtt_scale * |t - K|^3 >> 40` at t (2^-10 s).
#[inline]
pub(crate) fn cubic_target(cube_rtt_scale: u32, k: u32, origin: u32, t: u64) -> u32 {
    let k = u64::from(k);
    let offs = k.abs_diff(t);
    // wraps: u64 products in C, truncated to the u32 delta.
    let delta = (u64::from(cube_rtt_scale).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
        >> (10 + 3 * BICTCP_HZ)) as u32;
    // wraps: u32 in C.
    if t < k {
        origin.wrapping_sub(delta)
    } else {
        origin.wrapping_add(delta)
    }
}

/// ACKs per one-segment increase toward `target`: `cwnd / (target - cwnd)`, or `100 cwnd`
/// (practically none) at or above it.
#[inline]
pub(crate) fn count_toward(target: u32, cwnd: u32) -> u32 {
    if target > cwnd {
        cwnd / (target - cwnd)
    } else {
        // wraps: u32 in C (only for cwnd above 4.2e7).
        cwnd.wrapping_mul(100)
    }
}

/// TCP friendliness of `bictcp_update`: the Reno estimate `tcp_cwnd` gains one segment per
/// `delta` ACKs of `ack_cnt`, and caps `cnt` when it is above the window. Returns the
/// capped `cnt`.
///
/// The kernel's `while (ack_cnt > delta) { ack_cnt -= delta; tcp_cwnd++; }` in closed form
/// (same result, O(1)); with `delta == 0` (a non-default beta at cwnd <= 3, or a wrapped
/// product) the kernel would spin forever, and here the estimate stays put.
#[inline]
pub(crate) fn reno_friendly_count(cnt: u32, cwnd: u32, delta: u32, ack_cnt: &mut u32, tcp_cwnd: &mut u32) -> u32 {
    if delta > 0 && *ack_cnt > delta {
        let k = (*ack_cnt - 1) / delta;
        *ack_cnt -= k * delta;
        // wraps: tcp_cwnd++ on a u32.
        *tcp_cwnd = tcp_cwnd.wrapping_add(k);
    }
    if *tcp_cwnd > cwnd {
        cnt.min(cwnd / (*tcp_cwnd - cwnd))
    } else {
        cnt
    }
}

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

/// `delay_min` after an RTT sample of `delay` (0 counts as 1): the smallest seen, 0 being
/// "none yet".
#[inline]
pub(crate) fn keep_min_delay(delay_min: &mut u32, delay: u32) {
    let delay = delay.max(1);
    if *delay_min == 0 || *delay_min > delay {
        *delay_min = delay;
    }
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
        // 100 * 717 / 1024 = 70 (70.02); at cwnd 2, 1 is raised to 2.
        assert_eq!((kept_window(100, 717), kept_window(2, 717)), (70, 2));
        // 8 * 1741 / 3 = 4642, / 307 = 15; 2^40 / 410 = 2681735677.
        assert_eq!((beta_scale(717), cube_factor(41)), (15, 2_681_735_677));
        // delay_min: the first sample, then only smaller ones; a 0 sample counts as 1.
        let mut d = 0;
        keep_min_delay(&mut d, 40);
        keep_min_delay(&mut d, 50);
        assert_eq!(d, 40);
        keep_min_delay(&mut d, 0);
        assert_eq!(d, 1);
    }

    #[test]
    fn count_freshness_lasts_hz_over_32_jiffies() {
        // HZ 1000: 31 jiffies (1000 / 32) later the count holds, at 32 it does not; nor
        // when the window changed.
        assert!(count_is_fresh(100, 5000, 100, 5031, 1000));
        assert!(!count_is_fresh(100, 5000, 100, 5032, 1000));
        assert!(!count_is_fresh(100, 5000, 101, 5001, 1000));
    }

    #[test]
    fn curve_target_and_count() {
        let root = crate::intmath::cubic_root;
        // At or above W_max the curve is flat at cwnd; below, K = cubic_root(2681735677 * 30)
        // = 4316 toward W_max 100.
        assert_eq!(epoch_curve(100, 120, 2_681_735_677, root), (0, 120));
        assert_eq!(epoch_curve(100, 70, 2_681_735_677, root), (4316, 100));
        // t = 0, K = 4316: 410 * 4316^3 >> 40 = 29 (29.97): 100 - 29 = 71; at t = 2K, 129.
        assert_eq!(cubic_target(410, 4316, 100, 0), 71);
        assert_eq!(cubic_target(410, 4316, 100, 8632), 129);
        // cwnd 70 toward 71: 70 ACKs per segment; at or above the target, 100 cwnd.
        assert_eq!((count_toward(71, 70), count_toward(70, 70)), (70, 7000));
    }

    #[test]
    fn reno_estimate_in_closed_form() {
        // 100 ACKs at a step of 30: the kernel's loop runs 3 times (100 -> 70 -> 40 -> 10),
        // tcp_cwnd 50 -> 53 <= cwnd 60: cnt is not capped.
        let (mut ack_cnt, mut tcp_cwnd) = (100, 50);
        assert_eq!(reno_friendly_count(500, 60, 30, &mut ack_cnt, &mut tcp_cwnd), 500);
        assert_eq!((ack_cnt, tcp_cwnd), (10, 53));
        // Above the window (63 vs 60) the count is at most 60 / 3 = 20; exactly 30 ACKs do
        // not move the estimate (the loop needs more than the step).
        let (mut ack_cnt, mut tcp_cwnd) = (30, 63);
        assert_eq!(reno_friendly_count(500, 60, 30, &mut ack_cnt, &mut tcp_cwnd), 20);
        assert_eq!((ack_cnt, tcp_cwnd), (30, 63));
        // A zero step leaves the estimate alone instead of spinning.
        let (mut ack_cnt, mut tcp_cwnd) = (5, 2);
        assert_eq!(reno_friendly_count(9, 2, 0, &mut ack_cnt, &mut tcp_cwnd), 9);
        assert_eq!((ack_cnt, tcp_cwnd), (5, 2));
    }
}
