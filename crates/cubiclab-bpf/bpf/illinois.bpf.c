/* TCP-Illinois as BPF struct_ops, following cubiclab-cc's illinois.rs (Linux
 * net/ipv4/tcp_illinois.c, 6.x): once per RTT, alpha (increase, 1/128 segments per RTT) and
 * beta (fraction removed, 1/64) from the round's average and the largest queueing delay;
 * Reno's values below win_thresh segments and after a timeout. Undo is tcp_reno_undo_cwnd. */
#include "port.h"

#define ALPHA_SHIFT 7
#define ALPHA_SCALE (1U << ALPHA_SHIFT)
#define ALPHA_MIN ((3 * ALPHA_SCALE) / 10)
#define ALPHA_MAX (10 * ALPHA_SCALE)
#define ALPHA_BASE ALPHA_SCALE
#define RTT_MAX (0xffffffffU / ALPHA_MAX)
#define BETA_SHIFT 6
#define BETA_SCALE (1U << BETA_SHIFT)
#define BETA_MIN (BETA_SCALE / 8)
#define BETA_MAX (BETA_SCALE / 2)
#define BETA_BASE BETA_MAX

struct clk_illinois {
	__u64 sum_rtt;		/* the round's RTT samples added, us */
	__u16 cnt_rtt;		/* samples this round */
	__u32 base_rtt;		/* least RTT, us */
	__u32 max_rtt;		/* largest RTT, us */
	__u32 end_seq;		/* the round ends when an ACK passes it */
	__u32 alpha;		/* increase, 1/128 segments per RTT */
	__u32 beta;		/* fraction removed, 1/64 */
	__u16 acked;		/* segments the last ACK took off the queue */
	__u8 rtt_above;		/* the average delay left the low zone */
	__u8 rtt_low;		/* low rounds since */
};
PORT_STATE_FITS(struct clk_illinois);

static __always_inline void rtt_reset(struct sock *sk)
{
	struct clk_illinois *ca = inet_csk_ca(sk);

	ca->end_seq = tcp_sk(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
}

static __always_inline __u32 alpha_for(struct clk_illinois *ca, __u32 da, __u32 dm)
{
	__u32 d1 = dm / 100;

	if (da <= d1) {
		if (!ca->rtt_above)
			return ALPHA_MAX;
		if (++ca->rtt_low < (__u32)PARAM.theta)
			return ca->alpha;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		return ALPHA_MAX;
	}
	ca->rtt_above = 1;
	dm -= d1;
	da -= d1;
	return (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN);
}

static __always_inline __u32 beta_for(__u32 da, __u32 dm)
{
	__u32 d2 = dm / 10, d3;

	if (da <= d2)
		return BETA_MIN;
	d3 = (8 * dm) / 10;
	if (da >= d3 || d3 <= d2)
		return BETA_MAX;
	return (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2);
}

static __always_inline void update_params(struct sock *sk)
{
	struct clk_illinois *ca = inet_csk_ca(sk);

	if (tcp_sk(sk)->snd_cwnd < (__u32)PARAM.win_thresh) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
	} else if (ca->cnt_rtt > 0) {
		__u32 dm = ca->max_rtt - ca->base_rtt;
		__u32 da = (__u32)(ca->sum_rtt / ca->cnt_rtt) - ca->base_rtt;

		ca->alpha = alpha_for(ca, da, dm);
		ca->beta = beta_for(da, dm);
	}
	rtt_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(illinois_init, struct sock *sk)
{
	struct clk_illinois *ca = inet_csk_ca(sk);

	ca->alpha = ALPHA_MAX;
	ca->beta = BETA_BASE;
	ca->base_rtt = 0x7fffffff;
	ca->max_rtt = 0;
	ca->acked = 0;
	ca->rtt_low = 0;
	ca->rtt_above = 0;
	rtt_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(illinois_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_illinois *ca = inet_csk_ca(sk);
	__u32 delta;

	log_cong_avoid(sk);
	if ((__s32)(ca->end_seq - ack) < 0)	/* after(ack, end_seq) */
		update_params(sk);
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	tp->snd_cwnd_cnt += ca->acked;
	ca->acked = 1;
	delta = (tp->snd_cwnd_cnt * ca->alpha) >> ALPHA_SHIFT;
	if (delta >= tp->snd_cwnd) {
		tp->snd_cwnd = min_u32(tp->snd_cwnd + delta / tp->snd_cwnd, tp->snd_cwnd_clamp);
		tp->snd_cwnd_cnt = 0;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(illinois_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_illinois *ca = inet_csk_ca(sk);

	return max_u32(tp->snd_cwnd - ((tp->snd_cwnd * ca->beta) >> BETA_SHIFT), 2);
}

PORT_RENO_UNDO(illinois)

SEC("struct_ops")
void BPF_PROG(illinois_set_state, struct sock *sk, __u8 new_state)
{
	struct clk_illinois *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		rtt_reset(sk);
	}
}

SEC("struct_ops")
void BPF_PROG(illinois_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct clk_illinois *ca = inet_csk_ca(sk);
	__s32 rtt_us = sample->rtt_us;

	log_pkts_acked(sk, sample);
	ca->acked = sample->pkts_acked;
	if (rtt_us < 0)
		return;
	if ((__u32)rtt_us > RTT_MAX)
		rtt_us = RTT_MAX;
	if (ca->base_rtt > (__u32)rtt_us)
		ca->base_rtt = rtt_us;
	if (ca->max_rtt < (__u32)rtt_us)
		ca->max_rtt = rtt_us;
	++ca->cnt_rtt;
	ca->sum_rtt += rtt_us;
}

PORT_OPS(clk_illinois, HOOK(illinois, init) HOOK(illinois, ssthresh) HOOK(illinois, cong_avoid)
	 HOOK(illinois, set_state) HOOK(illinois, undo_cwnd) HOOK(illinois, pkts_acked));
