/* Linux CUBIC v2.0 (2.6.19-2.6.21, CUBIC_V == 20) and v2.2 (2.6.25-2.6.28, CUBIC_V == 22)
 * as BPF struct_ops, following cubiclab-cc's cubic_v2_0.rs and cubic_2_2.rs line by line
 * (which cite the kernel sources they follow). Both keep the kernel's integer arithmetic;
 * v2.0 has the max_increment clamp, the gentle start before the first loss, the bisection
 * cube root and receiver-timestamp delays; v2.2 has none of these and the table + Newton
 * cube root. Time is jiffies at the kernel's CONFIG_HZ from the port's clock (common.h). */
#include "port.h"
#include "bic_lineage.h"

/* Parameters by name (params.h: cubic-2.0's or cubic-2.2's table). */
#define P_BETA ((__u32)PARAM.beta)
#define P_BIC_SCALE ((__u32)PARAM.bic_scale)
#define P_FAST_CONVERGENCE (PARAM.fast_convergence != 0)
#define P_TCP_FRIENDLINESS (PARAM.tcp_friendliness != 0)
#define P_INITIAL_SSTHRESH ((__u32)PARAM.initial_ssthresh)
#if CUBIC_V == 20
#define P_MAX_INCREMENT ((__u32)PARAM.max_increment)
#define P_SCALING_BUG (PARAM.scaling_bug != 0)
#define NAME clk_cubic20
#else
#define P_SCALING_BUG 0
#define NAME clk_cubic22
#endif

struct clk_bictcp {
	__u32 cnt;
	__u32 last_max_cwnd;
	__u32 loss_cwnd;
	__u32 last_cwnd;
	__u32 last_time;
	__u32 bic_origin_point;
	__u32 bic_k;
	__u32 delay_min;
	__u32 epoch_start;
	__u32 ack_cnt;
	__u32 tcp_cwnd;
	__u32 delayed_ack;
};
PORT_STATE_FITS(struct clk_bictcp);

static __always_inline void bictcp_reset(struct clk_bictcp *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->loss_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->bic_origin_point = 0;
	ca->bic_k = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->delayed_ack = 2 << ACK_RATIO_SHIFT;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
}

#if CUBIC_V == 20
/* 65536 * cbrt(i), i = 0..7, as the v2.0 file publishes it. */
static const __u64 cubic_table[9] = {0, 65536, 82570, 94519, 104030, 112063, 119087, 125367, 0};

/* Bisection from the table's bracket; the nearer end of the final bracket. */
static __always_inline __u32 cubic_root(__u64 a)
{
	__u64 x = a, y = 1, start, end, mid, c, cs, ce;
	int i;

	if (a == 0)
		return 0;
	for (i = 0; i < 22 && x >= 8; i++) {
		x >>= 3;
		y <<= 1;
	}
	x &= 7;
	start = (y * cubic_table[x]) >> 16;
	end = x == 7 ? y << 1 : (y * cubic_table[x + 1] + 65535) >> 16;
	for (i = 0; i < 64 && start + 1 < end; i++) {
		mid = (start + end) >> 1;
		c = mid * mid * mid;
		if (c < a)
			start = mid;
		else if (c > a)
			end = mid;
		else
			return (__u32)mid;
	}
	cs = start * start * start;
	ce = end * end * end;
	cs = cs > a ? cs - a : a - cs;
	ce = ce > a ? ce - a : a - ce;
	return cs < ce ? (__u32)start : (__u32)end;
}
#else
/* cbrt(x << 18) - 1 for x in 0..63, hand-refined in the kernel. */
static const __u8 cbrt_v[64] = {
	0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
	157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
	200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
	231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
};

/* Table lookup, then one Newton-Raphson step, the division by 3 as * 341 >> 10. */
static __always_inline __u32 cubic_root(__u64 a)
{
	__u32 x, b, shift;

	b = fls64(a);
	if (b < 7)
		return ((__u32)cbrt_v[(__u32)a & 63] + 35) >> 6;
	b = ((b * 84) >> 8) - 1;
	shift = (__u32)(a >> (b * 3)) & 63;
	x = ((__u32)(((__u32)cbrt_v[shift] + 10) << b)) >> 6;
	x = 2 * x + (__u32)(a / ((__u64)x * (__u64)(x - 1)));
	return (x * 341) >> 10;
}
#endif

static __always_inline void bictcp_update(struct clk_bictcp *ca, __u32 cwnd, __u32 now)
{
	__u32 beta_scale = 8 * (BICTCP_BETA_SCALE + P_BETA) / 3 / (BICTCP_BETA_SCALE - P_BETA);
	__u32 cube_rtt_scale = P_SCALING_BUG ? (P_BIC_SCALE << 3) / 10 : P_BIC_SCALE * 10;
	__u64 cube_factor = (1ULL << (10 + 3 * BICTCP_HZ)) / (__u64)(P_BIC_SCALE * 10);
	__u32 t, delay, delta, target, d, n;
	__u64 offs;

	ca->ack_cnt++;
	if (count_is_fresh(ca->last_cwnd, ca->last_time, cwnd, now, HZ))
		return;
	ca->last_cwnd = cwnd;
	ca->last_time = now;

	if (ca->epoch_start == 0) {
		ca->epoch_start = now;
		ca->ack_cnt = 1;
		ca->tcp_cwnd = cwnd;
		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_k = 0;
			ca->bic_origin_point = cwnd;
		} else {
			ca->bic_k = cubic_root(cube_factor * (__u64)(ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}

	delay = P_SCALING_BUG ? ca->delay_min : ca->delay_min >> 3;
	t = ((now + delay - ca->epoch_start) << BICTCP_HZ) / HZ;
	offs = t < ca->bic_k ? ca->bic_k - t : t - ca->bic_k;
	delta = (__u32)((cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ));
	target = t < ca->bic_k ? ca->bic_origin_point - delta : ca->bic_origin_point + delta;
	ca->cnt = target > cwnd ? cwnd / (target - cwnd) : 100 * cwnd;

#if CUBIC_V == 20
	if (ca->delay_min > 0) {
		__u32 div = 10 * P_MAX_INCREMENT * ca->delay_min;
		__u32 min_cnt = (cwnd * HZ * 8) / (div ? div : 1);

		if (ca->cnt < min_cnt)
			ca->cnt = min_cnt;
	}
	if (ca->loss_cwnd == 0)
		ca->cnt = 50;
#endif

	if (P_TCP_FRIENDLINESS) {
		/* The kernel's while (ack_cnt > d) { ack_cnt -= d; tcp_cwnd++; }, closed form. */
		d = (cwnd * beta_scale) >> 3;
		if (d > 0 && ca->ack_cnt > d) {
			n = (ca->ack_cnt - 1) / d;
			ca->ack_cnt -= n * d;
			ca->tcp_cwnd += n;
		}
		if (ca->tcp_cwnd > cwnd) {
			__u32 max_cnt = cwnd / (ca->tcp_cwnd - cwnd);

			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}
	ca->cnt = per_ack_count(ca->cnt, ca->delayed_ack);
}

SEC("struct_ops")
void BPF_PROG(cubic_old_init, struct sock *sk)
{
	bictcp_reset(inet_csk_ca(sk));
	if (P_INITIAL_SSTHRESH)
		tcp_sk(sk)->snd_ssthresh = P_INITIAL_SSTHRESH;
}

SEC("struct_ops")
void BPF_PROG(cubic_old_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_bictcp *ca = inet_csk_ca(sk);

	if (!cong_avoid_begins(sk))
		return;
	/* Slow start while cwnd <= ssthresh, one segment per ACK (cubic_frame.rs PerAck). */
	if (tp->snd_cwnd <= tp->snd_ssthresh) {
		add_segment(tp);
		return;
	}
	bictcp_update(ca, tp->snd_cwnd, jiffies32(sk));
	count_ack(tp, tp->snd_cwnd_cnt >= ca->cnt);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic_old_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_bictcp *ca = inet_csk_ca(sk);
	__u32 cwnd = tp->snd_cwnd;

	ca->epoch_start = 0;
	ca->last_max_cwnd = last_max_after_loss(cwnd, ca->last_max_cwnd, P_BETA, P_FAST_CONVERGENCE);
	ca->loss_cwnd = cwnd;
	return kept_window(cwnd, P_BETA);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic_old_undo_cwnd, struct sock *sk)
{
	struct clk_bictcp *ca = inet_csk_ca(sk);

	log_undo(sk);
	return max_u32(tcp_sk(sk)->snd_cwnd, ca->last_max_cwnd);
}

SEC("struct_ops")
void BPF_PROG(cubic_old_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bictcp_reset(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(cubic_old_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct clk_bictcp *ca = inet_csk_ca(sk);
	__u32 now = jiffies32(sk), delay;
	__u32 pkts = sample->pkts_acked;
	__s32 rtt_us = sample->rtt_us;

	log_pkts_acked(sk, sample);
#if CUBIC_V == 20
	/* measure_delay: jiffies now minus jiffies at the sample's send time, both from the
	 * port's clock (cubic_v2_0.rs: jiffies(now) - jiffies(now - rtt)). */
	if (pkts > 0 && rtt_us >= 0 && (__s32)(now - ca->epoch_start) >= (__s32)HZ) {
		__u64 ns = clock_us(sk) * 1000;
		__u64 sent = ns > (__u64)rtt_us * 1000 ? ns - (__u64)rtt_us * 1000 : 0;

		delay = (__u32)(ns / 1000000000ULL * HZ + ns % 1000000000ULL * HZ / 1000000000ULL) -
			(__u32)(sent / 1000000000ULL * HZ + sent % 1000000000ULL * HZ / 1000000000ULL);
		keep_min_delay(&ca->delay_min, P_SCALING_BUG ? delay : delay << 3);
	}
	if (pkts > 0 && BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state) == TCP_CA_Open)
		ca->delayed_ack = update_ack_ratio(ca->delayed_ack, pkts);
#else
	if (BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state) == TCP_CA_Open)
		ca->delayed_ack = update_ack_ratio(ca->delayed_ack, pkts);
	if (rtt_us < 0)
		return;
	if ((__s32)(now - ca->epoch_start) < (__s32)HZ)
		return;
	keep_min_delay(&ca->delay_min, usecs_to_jiffies((__u32)rtt_us) << 3);
#endif
}

PORT_OPS(NAME, HOOK(cubic_old, init) HOOK(cubic_old, ssthresh) HOOK(cubic_old, cong_avoid)
	 HOOK(cubic_old, set_state) HOOK(cubic_old, undo_cwnd) HOOK(cubic_old, pkts_acked));
