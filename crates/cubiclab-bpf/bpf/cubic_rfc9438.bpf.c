/* RFC 9438 CUBIC (cubic-rfc9438, Section 4) as BPF struct_ops, in fixed point: this
 * follows cubiclab-cc's cubic_rfc9438_fixed.rs line by line, which states what the fixed
 * point changes against the RFC's real-valued rules (cubic_rfc9438.rs) and bounds the
 * difference: time in microseconds of the port's clock, t, t + RTT and K in 2^-10 s with RTT
 * the kernel's smoothed RTT, W_max, W_cubic and the target in 2^-10 segments, C to 2^-10,
 * |t - K| capped at 2^18, W_est in 2^-20 segments. W_max is held in 32 bits here (windows
 * below 2^22 segments). With `hystart = "hystart++"` the first slow start is RFC 9406's
 * (hystart_pp.h), as cubic_frame.rs runs it. */
#include "port.h"
#include "fixed.h"
#include "hystart_pp.h"

/* Parameters by name (params.h; beta and c in millionths). */
#define P_BETA ((__u64)PARAM.beta)
#define P_C ((__u64)PARAM.c)
#define P_FAST_CONVERGENCE (PARAM.fast_convergence != 0)
#define P_RENO_FRIENDLY (PARAM.reno_friendly != 0)
/* The choice's index in the library's HYSTART_PLUS_PLUS_OR_OFF: off 0, hystart++ 1. */
#define P_HYSTART_PP (PARAM.hystart == 1)

#define Q Q10
#define W_SHIFT 20

/* The variables a congestion event changes and undo restores (Sec 4.9). */
struct curve {
	__u64 w_est;		/* 2^-20 segments */
	__u32 w_max;		/* 2^-10 segments */
	__s32 k;		/* 2^-10 s */
	__u32 epoch_start;	/* us, low 32 bits */
	__u32 cwnd_epoch;
	__u32 cwnd_prior;
	__u16 epoch_set;
	__u16 after_rto;
};

struct clk_rfc9438 {
	struct curve curve;
	struct curve saved;
	__u32 saved_cwnd;
	__u32 saved_ssthresh;
	__u32 has_saved;
};
PORT_STATE_FITS(struct clk_rfc9438);

static __always_inline __u64 c_q(void)
{
	__u64 c = q10_of_micro(P_C);

	return c ? c : 1;
}

/* W_cubic(t) in 2^-10 segments (Eq. 1), t in 2^-10 s. */
static __always_inline __s64 w_cubic_at(const struct curve *cv, __s64 t)
{
	__u64 offs = t < cv->k ? (__u64)(cv->k - t) : (__u64)(t - cv->k);
	__s64 d = (__s64)cubic_term(c_q(), offs, 0);

	return t < cv->k ? (__s64)cv->w_max - d : (__s64)cv->w_max + d;
}

/* The first ACK of a congestion avoidance stage (Sec 4.2, 4.3, 4.8). */
static __always_inline void start_epoch(struct curve *cv, __u32 cwnd, __u32 now)
{
	__u64 w = (__u64)cwnd << Q, dw;
	__s32 root;

	cv->epoch_start = now;
	cv->epoch_set = 1;
	cv->cwnd_epoch = cwnd;
	if (cv->after_rto || cv->w_max == 0) {
		cv->w_max = (__u32)w;
		cv->k = 0;
	} else {
		dw = cv->w_max > w ? cv->w_max - w : w - cv->w_max;
		root = (__s32)cbrt_floor((dw << (3 * Q)) / c_q());
		cv->k = cv->w_max >= w ? root : -root;
	}
	cv->after_rto = 0;
	cv->w_est = (__u64)cwnd << W_SHIFT;
}

SEC("struct_ops")
void BPF_PROG(rfc9438_init, struct sock *sk)
{
	struct clk_rfc9438 *ca = inet_csk_ca(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	if (P_HYSTART_PP)
		hspp_start(sk);
}

/* A congestion event (Sec 4.6, 4.7), saving the state for undo (Sec 4.9). */
SEC("struct_ops")
__u32 BPF_PROG(rfc9438_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_rfc9438 *ca = inet_csk_ca(sk);
	__u64 cwnd = tp->snd_cwnd;

	ca->saved = ca->curve;
	ca->saved_cwnd = tp->snd_cwnd;
	ca->saved_ssthresh = tp->snd_ssthresh;
	ca->has_saved = 1;
	if (P_FAST_CONVERGENCE && (cwnd << Q) < ca->curve.w_max)
		ca->curve.w_max = (__u32)((cwnd << Q) * (MICRO + P_BETA) / (2 * MICRO));
	else
		ca->curve.w_max = (__u32)(cwnd << Q);
	ca->curve.cwnd_prior = tp->snd_cwnd;
	ca->curve.epoch_set = 0;
	return max_u32((__u32)(cwnd * P_BETA / MICRO), 2);
}

SEC("struct_ops")
void BPF_PROG(rfc9438_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_rfc9438 *ca = inet_csk_ca(sk);
	struct curve *cv = &ca->curve;
	__u64 alpha_q = ((3 * (MICRO - P_BETA)) << W_SHIFT) / (MICRO + P_BETA);
	__u64 cwnd, elapsed, alpha, lo, hi, target, w;
	__s64 t, t_rtt, wc;
	__u32 now;

	if (!cong_avoid_begins(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		if (P_HYSTART_PP && hspp_applies(tp)) {
			hspp_grow(sk, acked);
			return;
		}
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	now = (__u32)clock_us(sk);
	if (!cv->epoch_set)
		start_epoch(cv, tp->snd_cwnd, now);
	cwnd = tp->snd_cwnd;
	elapsed = (__u32)(now - cv->epoch_start);
	t = (__s64)((elapsed << Q) / MICRO);
	t_rtt = (__s64)(((elapsed + (tp->srtt_us >> 3)) << Q) / MICRO);

	/* Eq. 4, with alpha_cubic = 1 once W_est has reached cwnd_prior. */
	alpha = cv->w_est >= ((__u64)cv->cwnd_prior << W_SHIFT) ? (1ULL << W_SHIFT) : alpha_q;
	cv->w_est += alpha * acked / cwnd;

	wc = w_cubic_at(cv, t);
	if (P_RENO_FRIENDLY && wc < (__s64)(cv->w_est >> (W_SHIFT - Q))) {
		/* Reno-friendly region: cwnd = W_est, whole segments. */
		w = cv->w_est >> W_SHIFT;
		if (w > tp->snd_cwnd_clamp)
			w = tp->snd_cwnd_clamp;
		if (w > tp->snd_cwnd) {
			tp->snd_cwnd = (__u32)w;
			tp->snd_cwnd_cnt = 0;
		}
		return;
	}
	lo = cwnd << Q;
	hi = lo + lo / 2;
	wc = w_cubic_at(cv, t_rtt);
	target = wc < 0 ? 0 : (__u64)wc;
	if (target < lo)
		target = lo;
	if (target > hi)
		target = hi;
	if (target > lo) {
		w = (lo + (target - lo) - 1) / (target - lo);
		tcp_cong_avoid_ai(tp, w > 0xffffffffULL ? 0xffffffff : (__u32)w, acked);
	}
}

/* Sec 4.8: the next congestion avoidance stage starts a fresh curve. */
SEC("struct_ops")
void BPF_PROG(rfc9438_set_state, struct sock *sk, __u8 new_state)
{
	struct clk_rfc9438 *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		ca->curve.after_rto = 1;
		ca->curve.epoch_set = 0;
	}
}

/* Sec 5.8: idle time does not count in t (measured from lsndtime, the kernel's jiffies). */
SEC("struct_ops")
void BPF_PROG(rfc9438_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct clk_rfc9438 *ca = inet_csk_ca(sk);
	__u32 now = (__u32)clock_us(sk), idle, moved;

	if (event != CA_EVENT_TX_START || !ca->curve.epoch_set)
		return;
	idle = ((__u32)bpf_jiffies64() - tcp_sk(sk)->lsndtime) * (USEC_PER_SEC / HZ);
	moved = ca->curve.epoch_start + idle;
	ca->curve.epoch_start = (__s32)(now - moved) < 0 ? now : moved;
}

/* Sec 4.9: restore everything saved at the congestion event if cwnd is below it. */
SEC("struct_ops")
__u32 BPF_PROG(rfc9438_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_rfc9438 *ca = inet_csk_ca(sk);
	__u32 had = ca->has_saved;

	log_undo(sk);
	ca->has_saved = 0;
	if (had && tp->snd_cwnd < ca->saved_cwnd) {
		ca->curve = ca->saved;
		tp->snd_ssthresh = ca->saved_ssthresh;
		return ca->saved_cwnd;
	}
	return tp->snd_cwnd;
}

/* RFC 9438 has no per-ACK sample rule; HyStart++ takes the ACK's RTT sample. */
SEC("struct_ops")
void BPF_PROG(rfc9438_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	log_pkts_acked(sk, sample);
	if (P_HYSTART_PP)
		hspp_on_ack(sk, sample->rtt_us);
}

PORT_OPS(clk_rfc9438, HOOK(rfc9438, init) HOOK(rfc9438, ssthresh) HOOK(rfc9438, cong_avoid)
	 HOOK(rfc9438, set_state) HOOK(rfc9438, cwnd_event) HOOK(rfc9438, undo_cwnd)
	 HOOK(rfc9438, pkts_acked));
