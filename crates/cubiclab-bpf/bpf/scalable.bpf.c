/* Scalable TCP as BPF struct_ops, following cubiclab-cc's scalable.rs (Linux
 * net/ipv4/tcp_scalable.c, 6.x): slow start, then one segment per min(cwnd, ai_cnt) ACKed
 * segments; a loss removes cwnd >> md_scale. Undo is tcp_reno_undo_cwnd. */
#include "common.h"

/* Parameters in the order of Scalable::PARAMS. */
#define P_AI_CNT ((__u32)PARAM[0])
#define P_MD_SCALE ((__u32)PARAM[1])

extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

SEC("struct_ops")
void BPF_PROG(scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	log_cong_avoid(sk);
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, min_u32(tp->snd_cwnd, P_AI_CNT), acked);
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max_u32(tp->snd_cwnd - (tp->snd_cwnd >> P_MD_SCALE), 2);
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_undo_cwnd, struct sock *sk)
{
	log_undo(sk);
	return tcp_reno_undo_cwnd(sk);
}

/* Scalable has no pkts_acked: this one only keeps the port log. */
SEC("struct_ops")
void BPF_PROG(scalable_acked, struct sock *sk, const struct ack_sample *sample)
{
	log_pkts_acked(sk, sample);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops clk_scalable = {
	.ssthresh = (void *)scalable_ssthresh,
	.cong_avoid = (void *)scalable_cong_avoid,
	.undo_cwnd = (void *)scalable_undo_cwnd,
	.pkts_acked = (void *)scalable_acked,
	.name = "clk_placeholder",
};
