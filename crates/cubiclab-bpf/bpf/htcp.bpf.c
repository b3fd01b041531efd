/* H-TCP as BPF struct_ops, following cubiclab-cc's htcp.rs (Linux net/ipv4/tcp_htcp.c,
 * 6.x), on jiffies at the kernel's CONFIG_HZ from the port's clock (common.h). */
#include "port.h"

/* Parameters by name (params.h; hz is the kernel's own). */
#define P_USE_RTT_SCALING (PARAM.use_rtt_scaling != 0)
#define P_USE_BANDWIDTH_SWITCH (PARAM.use_bandwidth_switch != 0)

#define ALPHA_BASE (1U << 7)
#define BETA_MIN (1U << 6)
#define BETA_MAX 102U

struct clk_htcp {
	__u32 alpha;
	__u8 beta;
	__u8 modeswitch;
	__u16 pkts_acked;
	__u32 packetcount;
	__u32 min_rtt;
	__u32 max_rtt;
	__u32 last_cong;
	__u32 undo_last_cong;
	__u32 undo_max_rtt;
	__u32 undo_old_max_b;
	__u32 min_b;
	__u32 max_b;
	__u32 old_max_b;
	__u32 bi;
	__u32 lasttime;
};
PORT_STATE_FITS(struct clk_htcp);

static __always_inline __u32 msecs_to_jiffies(__u32 ms)
{
	return (ms * HZ + 999) / 1000;
}

static __always_inline void htcp_reset(struct clk_htcp *ca, __u32 now)
{
	ca->undo_last_cong = ca->last_cong;
	ca->undo_max_rtt = ca->max_rtt;
	ca->undo_old_max_b = ca->old_max_b;
	ca->last_cong = now;
}

static __always_inline void measure_rtt(struct clk_htcp *ca, __u8 state, __u32 srtt)
{
	if (ca->min_rtt > srtt || ca->min_rtt == 0)
		ca->min_rtt = srtt;
	if (state == TCP_CA_Open) {
		if (ca->max_rtt < ca->min_rtt)
			ca->max_rtt = ca->min_rtt;
		if (ca->max_rtt < srtt && srtt <= ca->max_rtt + msecs_to_jiffies(20))
			ca->max_rtt = srtt;
	}
}

static __always_inline void beta_update(struct clk_htcp *ca, __u32 min_rtt, __u32 max_rtt)
{
	if (P_USE_BANDWIDTH_SWITCH) {
		__u32 max_b = ca->max_b, old_max_b = ca->old_max_b;
		__u32 lo = old_max_b * 4, hi = old_max_b * 6;

		ca->old_max_b = max_b;
		if (hi - lo < max_b * 5 - lo) {
			ca->beta = BETA_MIN;
			ca->modeswitch = 0;
			return;
		}
	}
	if (ca->modeswitch && min_rtt > msecs_to_jiffies(10) && max_rtt) {
		__u8 beta = (__u8)((min_rtt << 7) / max_rtt);

		ca->beta = beta < BETA_MIN ? BETA_MIN : (beta > BETA_MAX ? BETA_MAX : beta);
	} else {
		ca->beta = BETA_MIN;
		ca->modeswitch = 1;
	}
}

static __always_inline void alpha_update(struct clk_htcp *ca, __u32 now)
{
	__u32 factor = 1, diff = now - ca->last_cong, half;

	if (diff > HZ) {
		diff -= HZ;
		half = diff / 2;
		factor = 1 + (10 * diff + half * half / HZ) / HZ;
	}
	if (P_USE_RTT_SCALING && ca->min_rtt) {
		__u32 d = 10 * ca->min_rtt, scale;

		scale = (HZ << 3) / (d ? d : 1);
		scale = scale < (1U << 2) ? (1U << 2) : (scale > (10U << 3) ? (10U << 3) : scale);
		factor = (factor << 3) / scale;
		if (!factor)
			factor = 1;
	}
	ca->alpha = 2 * factor * ((1U << 7) - ca->beta);
	if (!ca->alpha)
		ca->alpha = ALPHA_BASE;
}

SEC("struct_ops")
void BPF_PROG(htcp_init, struct sock *sk)
{
	struct clk_htcp *ca = inet_csk_ca(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->alpha = ALPHA_BASE;
	ca->beta = BETA_MIN;
	ca->pkts_acked = 1;
	ca->last_cong = jiffies32(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_htcp *ca = inet_csk_ca(sk);
	__u32 now = jiffies32(sk), min_rtt = ca->min_rtt, max_rtt = ca->max_rtt;

	beta_update(ca, min_rtt, max_rtt);
	alpha_update(ca, now);
	if (min_rtt > 0 && max_rtt > min_rtt)
		ca->max_rtt = min_rtt + (max_rtt - min_rtt) * 95 / 100;
	return max_u32((tp->snd_cwnd * ca->beta) >> 7, 2);
}

SEC("struct_ops")
void BPF_PROG(htcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_htcp *ca = inet_csk_ca(sk);

	if (!cong_avoid_begins(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	if ((tp->snd_cwnd_cnt * ca->alpha) >> 7 >= tp->snd_cwnd) {
		if (tp->snd_cwnd < tp->snd_cwnd_clamp)
			tp->snd_cwnd++;
		tp->snd_cwnd_cnt = 0;
		alpha_update(ca, jiffies32(sk));
	} else {
		tp->snd_cwnd_cnt += ca->pkts_acked;
	}
	ca->pkts_acked = 1;
}

SEC("struct_ops")
void BPF_PROG(htcp_set_state, struct sock *sk, __u8 new_state)
{
	struct clk_htcp *ca = inet_csk_ca(sk);
	__u32 now = jiffies32(sk);

	if (new_state == TCP_CA_Open) {
		if (ca->undo_last_cong) {
			ca->last_cong = now;
			ca->undo_last_cong = 0;
		}
	} else if (new_state >= 2) { /* CWR, Recovery, Loss */
		htcp_reset(ca, now);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_undo_cwnd, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_htcp *ca = inet_csk_ca(sk);

	log_undo(sk);
	if (ca->undo_last_cong) {
		ca->last_cong = ca->undo_last_cong;
		ca->max_rtt = ca->undo_max_rtt;
		ca->old_max_b = ca->undo_old_max_b;
		ca->undo_last_cong = 0;
	}
	return max_u32(tp->snd_cwnd, tp->prior_cwnd);
}

SEC("struct_ops")
void BPF_PROG(htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_htcp *ca = inet_csk_ca(sk);
	__u8 state = BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
	__u32 now = jiffies32(sk), a, elapsed;
	__s32 rtt_us = sample->rtt_us;

	log_pkts_acked(sk, sample);
	if (state == TCP_CA_Open)
		ca->pkts_acked = (__u16)sample->pkts_acked;
	if (rtt_us > 0)
		measure_rtt(ca, state, usecs_to_jiffies((__u32)rtt_us));
	if (!P_USE_BANDWIDTH_SWITCH)
		return;
	if (state != TCP_CA_Open && state != 1 /* Disorder */) {
		ca->packetcount = 0;
		ca->lasttime = now;
		return;
	}
	ca->packetcount += sample->pkts_acked;
	a = ca->alpha >> 7;
	elapsed = now - ca->lasttime;
	if (ca->packetcount >= tp->snd_cwnd - (a ? a : 1) && elapsed >= ca->min_rtt && ca->min_rtt > 0) {
		__u32 cur_bi = ca->packetcount * HZ / elapsed;

		if ((now - ca->last_cong) / ca->min_rtt <= 3) {
			ca->min_b = cur_bi;
			ca->max_b = cur_bi;
			ca->bi = cur_bi;
		} else {
			ca->bi = (3 * ca->bi + cur_bi) / 4;
			if (ca->bi > ca->max_b)
				ca->max_b = ca->bi;
			if (ca->min_b > ca->max_b)
				ca->min_b = ca->max_b;
		}
		ca->packetcount = 0;
		ca->lasttime = now;
	}
}

PORT_OPS(clk_htcp, HOOK(htcp, init) HOOK(htcp, ssthresh) HOOK(htcp, cong_avoid)
	 HOOK(htcp, set_state) HOOK(htcp, undo_cwnd) HOOK(htcp, pkts_acked));
