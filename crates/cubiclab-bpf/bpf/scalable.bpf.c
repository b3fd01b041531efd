/* Scalable TCP as BPF struct_ops, following cubiclab-cc's scalable.rs (Linux
 * net/ipv4/tcp_scalable.c, 6.x): slow start, then one segment per min(cwnd, ai_cnt) ACKed
 * segments; a loss removes cwnd >> md_scale. Undo is tcp_reno_undo_cwnd. */
#include "port.h"

SEC("struct_ops")
void BPF_PROG(scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	acked = slow_start_first(sk, acked);
	if (!acked)
		return;
	tcp_cong_avoid_ai(tp, min_u32(tp->snd_cwnd, (__u32)PARAM.ai_cnt), acked);
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max_u32(tp->snd_cwnd - (tp->snd_cwnd >> (__u32)PARAM.md_scale), 2);
}

PORT_RENO_UNDO(scalable)

/* Scalable has no pkts_acked. */
PORT_LOG_ONLY_ACKED(scalable)

PORT_OPS(clk_scalable, HOOK(scalable, ssthresh) HOOK(scalable, cong_avoid)
	 HOOK(scalable, undo_cwnd) HOOK(scalable, pkts_acked));
