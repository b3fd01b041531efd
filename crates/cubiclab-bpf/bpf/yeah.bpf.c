/* YeAH-TCP as BPF struct_ops, following cubiclab-cc's yeah.rs (Linux net/ipv4/tcp_yeah.c,
 * 6.x, on tcp_vegas.c's RTT filter and hooks): Scalable growth (min(cwnd, 100)) or Reno's
 * after slow start; once per RTT with more than two samples, queue = cwnd (minRTT - baseRTT)
 * / minRTT; above 80 queued (or a delay above baseRTT / 8) the next round is Reno, and above
 * 80 the window drops by min(queue, cwnd / 2), not below reno_count. A loss removes the last
 * queue estimate, between cwnd / 8 and cwnd / 2, or half after 16 Reno rounds. The module's
 * snd_cwnd_clamp of at most 2^32 / 128 is not writable from BPF; below it nothing differs. */
#include "port.h"
#include "vegas_filter.h"

#define YEAH_ALPHA 80U
#define YEAH_GAMMA 1U
#define YEAH_DELTA 3
#define YEAH_EPSILON 1
#define YEAH_PHY 8U
#define YEAH_RHO 16U
#define YEAH_ZETA 50U
#define SCALABLE_AI_CNT 100U
#define RENO_ROUNDS_MAX 0xffffffU

struct clk_yeah {
	struct vegas_filter rtt;	/* first, as tcp_yeah.c's struct vegas */
	__u32 last_q;		/* the last backlog estimate, segments */
	__u32 doing_reno_now;	/* consecutive Reno rounds (0: Scalable) */
	__u32 reno_count;	/* a competing Reno flow's window, segments */
	__u32 fast_count;	/* Scalable rounds since reno_count restarted */
};
PORT_STATE_FITS(struct clk_yeah);

/* vegas_enable, as far as YeAH reads it: a new round. */
static __always_inline void yeah_enable(struct sock *sk)
{
	vegas_filter_round(&((struct clk_yeah *)inet_csk_ca(sk))->rtt, tcp_sk(sk));
}

/* The once-per-RTT decision with more than two samples. */
static __always_inline void yeah_decide(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_yeah *ca = inet_csk_ca(sk);
	__u32 rtt = ca->rtt.min_rtt, delay = rtt - ca->rtt.base_rtt;
	__u32 queue = (__u32)((__u64)tp->snd_cwnd * delay / rtt);

	if (queue > YEAH_ALPHA || delay > ca->rtt.base_rtt / YEAH_PHY) {
		if (queue > YEAH_ALPHA && tp->snd_cwnd > ca->reno_count) {
			__u32 reduction = min_u32(queue / YEAH_GAMMA, tp->snd_cwnd >> YEAH_EPSILON);

			tp->snd_cwnd = max_u32(tp->snd_cwnd - reduction, ca->reno_count);
			tp->snd_ssthresh = tp->snd_cwnd;
		}
		if (ca->reno_count <= 2)
			ca->reno_count = max_u32(tp->snd_cwnd >> 1, 2);
		else
			ca->reno_count++;
		ca->doing_reno_now = min_u32(ca->doing_reno_now + 1, RENO_ROUNDS_MAX);
	} else {
		ca->fast_count++;
		if (ca->fast_count > YEAH_ZETA) {
			ca->reno_count = 2;
			ca->fast_count = 0;
		}
		ca->doing_reno_now = 0;
	}
	ca->last_q = queue;
}

SEC("struct_ops")
void BPF_PROG(yeah_init, struct sock *sk)
{
	struct clk_yeah *ca = inet_csk_ca(sk);

	vegas_filter_restart(&ca->rtt, tcp_sk(sk));
	ca->doing_reno_now = 0;
	ca->last_q = 0;
	ca->reno_count = 2;
}

SEC("struct_ops")
void BPF_PROG(yeah_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_yeah *ca = inet_csk_ca(sk);
	bool grow = false;

	if (!cong_avoid_begins(sk))
		return;
	/* Slow start that uses every segment ACKed goes straight to the round's test. */
	if (tcp_in_slow_start(tp))
		acked = tcp_slow_start(tp, acked);
	else
		grow = true;
	if (acked || grow)
		tcp_cong_avoid_ai(tp, ca->doing_reno_now ? tp->snd_cwnd : min_u32(tp->snd_cwnd, SCALABLE_AI_CNT),
				  acked);
	if ((__s32)(ca->rtt.beg_snd_nxt - ack) < 0) {	/* after(ack, beg_snd_nxt) */
		if (ca->rtt.cnt_rtt > 2)
			yeah_decide(sk);
		vegas_filter_round(&ca->rtt, tp);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(yeah_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_yeah *ca = inet_csk_ca(sk);
	__u32 half = max_u32(tp->snd_cwnd >> 1, 2), reduction;
	__s32 kept;

	if (ca->doing_reno_now < YEAH_RHO)
		reduction = max_u32(min_u32(ca->last_q, half), tp->snd_cwnd >> YEAH_DELTA);
	else
		reduction = half;
	ca->fast_count = 0;
	ca->reno_count = max_u32(ca->reno_count >> 1, 2);
	kept = (__s32)(tp->snd_cwnd - reduction);
	return kept > 2 ? (__u32)kept : 2;
}

PORT_RENO_UNDO(yeah)

SEC("struct_ops")
void BPF_PROG(yeah_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	log_pkts_acked(sk, sample);
	vegas_filter_sample(&((struct clk_yeah *)inet_csk_ca(sk))->rtt, sample);
}

SEC("struct_ops")
void BPF_PROG(yeah_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		yeah_enable(sk);
}

SEC("struct_ops")
void BPF_PROG(yeah_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		vegas_filter_restart(&((struct clk_yeah *)inet_csk_ca(sk))->rtt, tcp_sk(sk));
}

PORT_OPS(clk_yeah, HOOK(yeah, init) HOOK(yeah, ssthresh) HOOK(yeah, cong_avoid) HOOK(yeah, set_state)
	 HOOK(yeah, cwnd_event) HOOK(yeah, undo_cwnd) HOOK(yeah, pkts_acked));
