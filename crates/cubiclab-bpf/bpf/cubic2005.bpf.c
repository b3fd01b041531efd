/* Seed 001's CUBIC (cubic-2005: Rhee and Xu, PFLDnet 2005, Section II.B-C) as BPF
 * struct_ops, in fixed point: this follows cubiclab-cc's cubic_2005_fixed.rs line by line,
 * which states what the fixed point changes against the paper's real-valued rules
 * (cubic_2005.rs) and bounds the difference: time in microseconds of the port's clock,
 * t + RTT and K in 2^-10 s with RTT the kernel's smoothed RTT, K = floor(cbrt(W_max *
 * (1 - beta)/C * 2^30)) with (1 - beta)/C to 2^-20, C and S_max to 2^-10, |t - K| capped at
 * 2^18, a whole-segment target, W_tcp in 2^-20 segments. */
#include "port.h"
#include "fixed.h"

/* Parameters by name (params.h; beta, c and smax in millionths). */
#define P_BETA ((__u64)PARAM.beta)
#define P_C ((__u64)PARAM.c)
#define P_SMAX ((__u64)PARAM.smax)
#define P_TCP_FRIENDLINESS (PARAM.tcp_friendliness != 0)

#define W_SHIFT 20

struct clk_cubic2005 {
	__u64 w_tcp;
	__u32 w_max;
	__u32 k;
	__u32 epoch_start;
	__u32 epoch_set;
	__u32 target;
};
PORT_STATE_FITS(struct clk_cubic2005);

SEC("struct_ops")
void BPF_PROG(cubic2005_init, struct sock *sk)
{
	struct clk_cubic2005 *ca = inet_csk_ca(sk);

	ca->w_max = 0;
	ca->k = 0;
	ca->epoch_set = 0;
	ca->epoch_start = 0;
	ca->w_tcp = 0;
}

SEC("struct_ops")
__u32 BPF_PROG(cubic2005_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cubic2005 *ca = inet_csk_ca(sk);
	__u64 cwnd = tp->snd_cwnd;
	__u64 k_factor_q = ((MICRO - P_BETA) << W_SHIFT) / (P_C ? P_C : 1);
	__u64 beta_q = ((P_BETA << W_SHIFT) + MICRO / 2) / MICRO;

	ca->w_max = tp->snd_cwnd;
	ca->k = cbrt_floor((cwnd * k_factor_q) << (3 * Q10 - W_SHIFT));
	ca->epoch_start = (__u32)clock_us(sk);
	ca->epoch_set = 1;
	ca->w_tcp = cwnd * beta_q;
	return max_u32((__u32)(cwnd * P_BETA / MICRO), 2);
}

SEC("struct_ops")
void BPF_PROG(cubic2005_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cubic2005 *ca = inet_csk_ca(sk);
	__u64 smax_q = q10_of_micro(P_SMAX);
	__u64 alpha_q = ((3 * (MICRO - P_BETA)) << W_SHIFT) / (MICRO + P_BETA);
	__u64 cwnd, srtt, t, offs, cnt = 0, w, tcp_cnt, per_rtt_q;
	__u32 now, delta, target;
	bool limited = false;	/* cnt holds a finite count of ACKs per increase */

	acked = slow_start_first(sk, acked);
	if (!acked)
		return;
	now = (__u32)clock_us(sk);
	cwnd = tp->snd_cwnd;
	if (!ca->epoch_set) {
		/* Congestion avoidance without a loss yet: the curve starts flat at cwnd. */
		ca->w_max = tp->snd_cwnd;
		ca->k = 0;
		ca->w_tcp = cwnd << W_SHIFT;
		ca->epoch_start = now;
		ca->epoch_set = 1;
	}
	srtt = tp->srtt_us >> 3;
	t = (((__u64)(__u32)(now - ca->epoch_start) + srtt) << Q10) / MICRO;
	offs = t < ca->k ? ca->k - t : t - ca->k;
	delta = (__u32)cubic_term(q10_of_micro(P_C), offs, Q10);
	if (t < ca->k)
		target = ca->w_max > delta ? ca->w_max - delta : 0;
	else
		target = ca->w_max + delta < ca->w_max ? 0xffffffff : ca->w_max + delta;
	ca->target = target;
	if (target > tp->snd_cwnd) {
		cnt = div_ceil(cwnd, target - tp->snd_cwnd);
		limited = true;
	}
	if (smax_q > 0 && srtt > 0) {
		/* No more than S_max * RTT segments per RTT. */
		per_rtt_q = smax_q * srtt / MICRO;
		if (per_rtt_q == 0)
			limited = false;
		else if (limited) {
			w = div_ceil(cwnd << Q10, per_rtt_q);
			if (w > cnt)
				cnt = w;
		}
	}
	if (P_TCP_FRIENDLINESS) {
		ca->w_tcp += alpha_q * acked / cwnd;
		w = cwnd << W_SHIFT;
		if (ca->w_tcp > w) {
			tcp_cnt = div_ceil(w, ca->w_tcp - w);
			if (!limited || tcp_cnt < cnt)
				cnt = tcp_cnt;
			limited = true;
		}
	}
	if (limited)
		tcp_cong_avoid_ai(tp, cnt > 0xffffffffULL ? 0xffffffff : (__u32)cnt, acked);
}

PORT_RENO_UNDO(cubic2005)

/* cubic-2005 has no pkts_acked. */
PORT_LOG_ONLY_ACKED(cubic2005)

PORT_OPS(clk_cubic2005, HOOK(cubic2005, init) HOOK(cubic2005, ssthresh)
	 HOOK(cubic2005, cong_avoid) HOOK(cubic2005, undo_cwnd) HOOK(cubic2005, pkts_acked));
