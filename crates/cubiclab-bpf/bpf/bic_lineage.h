/* The kernel arithmetic BIC and Linux CUBIC v2.0 to v2.3 share, as cubiclab-cc's
 * bic_lineage.rs writes it once (same names, same wrapping u32 arithmetic). */
#ifndef CUBICLAB_BPF_BIC_LINEAGE_H
#define CUBICLAB_BPF_BIC_LINEAGE_H

#define BICTCP_BETA_SCALE 1024
#define BICTCP_HZ 10
#define ACK_RATIO_SHIFT 4

/* The HZ / 32 rate limit at the top of bictcp_update: the last count still holds. */
static __always_inline bool count_is_fresh(__u32 last_cwnd, __u32 last_time, __u32 cwnd, __u32 now, __u32 hz)
{
	return last_cwnd == cwnd && (__s32)(now - last_time) <= (__s32)(hz / 32);
}

/* W_max at a loss: cwnd, or cwnd (1024 + beta) / 2048 with fast convergence below it. */
static __always_inline __u32 last_max_after_loss(__u32 cwnd, __u32 last_max, __u32 beta, bool fast_convergence)
{
	if (cwnd < last_max && fast_convergence)
		return cwnd * (BICTCP_BETA_SCALE + beta) / (2 * BICTCP_BETA_SCALE);
	return cwnd;
}

/* max(cwnd * beta / 1024, 2): the window kept after a loss. */
static __always_inline __u32 kept_window(__u32 cwnd, __u32 beta)
{
	return max_u32(cwnd * beta / BICTCP_BETA_SCALE, 2);
}

/* bictcp_acked: packets per ACK << 4, moving average with gain 1/16. */
static __always_inline __u32 update_ack_ratio(__u32 delayed_ack, __u32 pkts_acked)
{
	return delayed_ack + pkts_acked - (delayed_ack >> ACK_RATIO_SHIFT);
}

/* A per-packet count turned per-ACK: (cnt << 4) / delayed_ack, at least 1. */
static __always_inline __u32 per_ack_count(__u32 cnt, __u32 delayed_ack)
{
	cnt = (cnt << ACK_RATIO_SHIFT) / (delayed_ack ? delayed_ack : 1);
	return cnt ? cnt : 1;
}

/* delay_min after a sample of delay (0 counts as 1): the smallest, 0 being none yet. */
static __always_inline void keep_min_delay(__u32 *delay_min, __u32 delay)
{
	if (delay == 0)
		delay = 1;
	if (*delay_min == 0 || *delay_min > delay)
		*delay_min = delay;
}

#endif
