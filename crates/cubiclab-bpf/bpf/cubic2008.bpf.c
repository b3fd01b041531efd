/* Seed 000's Algorithm 1 (cubic-2008) as BPF struct_ops, in fixed point: this follows
 * cubiclab-cc's cubic_2008_fixed.rs line by line, which states what the fixed point
 * changes against the paper's real-valued rules (cubic_2008.rs) and bounds the difference:
 * time in the kernel's jiffies with t and K in 2^-10 s, K = floor(cbrt(W_last_max * beta/C
 * * 2^30)) with beta/C to 2^-20, C rounded to 2^-10 and |t - K| capped at 2^18, a whole-
 * segment target, W_tcp in 2^-32 segments, whole-segment W_last_max and ssthresh. */
#include "port.h"
#include "fixed.h"

/* Parameters by name (params.h; decrease, the paper's beta, and c in millionths). */
#define P_BETA ((__u64)PARAM.decrease)
#define P_C ((__u64)PARAM.c)
#define P_FAST_CONVERGENCE (PARAM.fast_convergence != 0)
#define P_TCP_FRIENDLINESS (PARAM.tcp_friendliness != 0)

/* The per-segment loop's bound (the verifier needs one); cubic_2008_fixed.rs has the same. */
#define MAX_SEGMENTS_PER_ACK 128

struct clk_cubic2008 {
	__u64 w_tcp;
	__u32 w_last_max;
	__u32 epoch_start;
	__u32 epoch_set;
	__u32 origin;
	__u32 d_min;
	__u32 k;
	__u32 cnt;
};
PORT_STATE_FITS(struct clk_cubic2008);

static __always_inline void reset(struct clk_cubic2008 *ca)
{
	ca->w_last_max = 0;
	ca->epoch_set = 0;
	ca->epoch_start = 0;
	ca->origin = 0;
	ca->d_min = 0;
	ca->w_tcp = 0;
	ca->k = 0;
}

/* The epoch's start (the first congestion-avoidance segment after a loss): K and origin. */
static __always_inline void start_epoch(struct clk_cubic2008 *ca, __u32 cwnd, __u32 now)
{
	__u64 beta_over_c_q = (P_BETA << 20) / (P_C ? P_C : 1);

	if (cwnd < ca->w_last_max) {
		ca->k = cbrt_floor(((__u64)ca->w_last_max * beta_over_c_q) << (3 * Q10 - 20));
		ca->origin = ca->w_last_max;
	} else {
		ca->k = 0;
		ca->origin = cwnd;
	}
	ca->w_tcp = (__u64)cwnd << 32;
	ca->epoch_start = now;
	ca->epoch_set = 1;
}

/* cubic_update() for one acknowledged segment, the epoch started. */
static __always_inline __u32 update(struct clk_cubic2008 *ca, __u32 cwnd, __u32 now)
{
	__u64 alpha_q = ((3 * P_BETA) << 32) / (2 * MICRO - P_BETA);
	__u64 t, offs, w, max_cnt;
	__u32 delta, target, cnt;

	t = ((__u64)(__u32)(now + ca->d_min - ca->epoch_start) << Q10) / HZ;
	offs = t < ca->k ? ca->k - t : t - ca->k;
	delta = (__u32)cubic_term(q10_of_micro(P_C), offs, Q10);
	if (t < ca->k)
		target = ca->origin > delta ? ca->origin - delta : 0;
	else
		target = ca->origin + delta < ca->origin ? 0xffffffff : ca->origin + delta;
	if (target > cwnd)
		cnt = cwnd / (target - cwnd);
	else
		cnt = cwnd > 0xffffffff / 100 ? 0xffffffff : cwnd * 100;
	if (P_TCP_FRIENDLINESS) {
		w = (__u64)cwnd << 32;
		ca->w_tcp += alpha_q / cwnd;
		if (ca->w_tcp > w) {
			max_cnt = w / (ca->w_tcp - w);
			if ((__u64)cnt > max_cnt)
				cnt = (__u32)max_cnt;
		}
	}
	return cnt;
}

SEC("struct_ops")
void BPF_PROG(cubic2008_init, struct sock *sk)
{
	reset(inet_csk_ca(sk));
}

/* One congestion-avoidance segment, as bpf_loop's callback (a loop the verifier checks
 * once, not once per iteration). */
struct segment_ctx {
	struct tcp_sock *tp;
	struct clk_cubic2008 *ca;
	__u32 now;
};

static long ca_segment(__u64 index, struct segment_ctx *c)
{
	struct tcp_sock *tp = c->tp;
	struct clk_cubic2008 *ca = c->ca;

	ca->cnt = update(ca, tp->snd_cwnd, c->now);
	count_ack(tp, tp->snd_cwnd_cnt > ca->cnt);
	return 0;
}

SEC("struct_ops")
void BPF_PROG(cubic2008_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cubic2008 *ca = inet_csk_ca(sk);
	struct segment_ctx c = { .tp = tp, .ca = ca, .now = jiffies32(sk) };
	__u32 need, room;

	if (!cong_avoid_begins(sk))
		return;
	/* Once per acknowledged segment, as the library's cubic-2008: the window only grows and
	 * ssthresh stays, so an ACK's segments are slow start (one segment each while cwnd <=
	 * ssthresh, none past the clamp: in closed form here), then congestion avoidance. */
	if (acked > MAX_SEGMENTS_PER_ACK)
		acked = MAX_SEGMENTS_PER_ACK;
	if (tp->snd_cwnd <= tp->snd_ssthresh) {
		need = tp->snd_ssthresh + 1 - tp->snd_cwnd;
		room = tp->snd_cwnd_clamp > tp->snd_cwnd ? tp->snd_cwnd_clamp - tp->snd_cwnd : 0;
		if (room < need) {
			tp->snd_cwnd += min_u32(acked, room);
			return;
		}
		need = min_u32(acked, need);
		tp->snd_cwnd += need;
		acked -= need;
	}
	if (!acked)
		return;
	if (!ca->epoch_set)
		start_epoch(ca, tp->snd_cwnd, c.now);
	bpf_loop(acked, ca_segment, &c, 0);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic2008_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cubic2008 *ca = inet_csk_ca(sk);
	__u64 cwnd = tp->snd_cwnd;

	ca->epoch_set = 0;
	if (tp->snd_cwnd < ca->w_last_max && P_FAST_CONVERGENCE)
		ca->w_last_max = (__u32)(cwnd * (2 * MICRO - P_BETA) / (2 * MICRO));
	else
		ca->w_last_max = tp->snd_cwnd;
	return max_u32((__u32)(cwnd * (MICRO - P_BETA) / MICRO), 2);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic2008_undo_cwnd, struct sock *sk)
{
	struct clk_cubic2008 *ca = inet_csk_ca(sk);

	log_undo(sk);
	return max_u32(tcp_sk(sk)->snd_cwnd, ca->w_last_max);
}

SEC("struct_ops")
void BPF_PROG(cubic2008_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		reset(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(cubic2008_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct clk_cubic2008 *ca = inet_csk_ca(sk);
	__s32 rtt_us = sample->rtt_us;
	__u32 d;

	log_pkts_acked(sk, sample);

	if (rtt_us < 0)
		return;
	d = usecs_to_jiffies((__u32)rtt_us);
	if (d == 0)
		d = 1;
	if (ca->d_min == 0 || d < ca->d_min)
		ca->d_min = d;
}

PORT_OPS(clk_cubic2008, HOOK(cubic2008, init) HOOK(cubic2008, ssthresh)
	 HOOK(cubic2008, cong_avoid) HOOK(cubic2008, set_state) HOOK(cubic2008, undo_cwnd)
	 HOOK(cubic2008, pkts_acked));
