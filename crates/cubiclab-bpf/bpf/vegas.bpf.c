/* TCP Vegas as BPF struct_ops, following cubiclab-cc's vegas.rs (Linux net/ipv4/tcp_vegas.c,
 * 6.x): once per RTT, with more than two RTT samples in it, diff = cwnd * (minRTT - baseRTT)
 * / baseRTT segments queued; more than gamma ends slow start at cwnd * baseRTT / minRTT + 1,
 * more than beta takes a segment off, fewer than alpha adds one. Reno otherwise; a loss
 * halves (tcp_reno_ssthresh), undo is tcp_reno_undo_cwnd. */
#include "port.h"
#include "vegas_filter.h"

#define TCP_CA_CWR 2
#define TCP_CA_Recovery 3
struct clk_vegas {
	struct vegas_filter rtt;
	__u8 doing_vegas_now;	/* Open since the last restart */
};
PORT_STATE_FITS(struct clk_vegas);

static __always_inline void vegas_enable(struct sock *sk)
{
	struct clk_vegas *ca = inet_csk_ca(sk);

	ca->doing_vegas_now = 1;
	vegas_filter_round(&ca->rtt, tcp_sk(sk));
}

static __always_inline void vegas_restart(struct sock *sk)
{
	((struct clk_vegas *)inet_csk_ca(sk))->rtt.base_rtt = NO_RTT;
	vegas_enable(sk);
}

/* tcp_current_ssthresh. */
static __always_inline __u32 current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u8 state = BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);

	if (state == TCP_CA_CWR || state == TCP_CA_Recovery)
		return tp->snd_ssthresh;
	return max_u32(tp->snd_ssthresh, (tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2));
}

/* The once-per-RTT decision with more than two samples. */
static __always_inline void vegas_adjust(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_vegas *ca = inet_csk_ca(sk);
	__u32 rtt = ca->rtt.min_rtt, base = ca->rtt.base_rtt, diff;
	__u64 target_cwnd;

	target_cwnd = (__u64)tp->snd_cwnd * base / rtt;
	diff = tp->snd_cwnd * (rtt - base) / base;	/* u32, wraps as the kernel's */
	if (diff > (__u32)PARAM.queue_slow_start && tcp_in_slow_start(tp)) {
		tp->snd_cwnd = min_u32(tp->snd_cwnd, (__u32)target_cwnd + 1);
		tp->snd_ssthresh = min_u32(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else if (diff > (__u32)PARAM.queue_max) {
		tp->snd_cwnd--;
		tp->snd_ssthresh = min_u32(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (diff < (__u32)PARAM.queue_min) {
		tp->snd_cwnd++;
	}
	if (tp->snd_cwnd < 2)
		tp->snd_cwnd = 2;
	else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
		tp->snd_cwnd = tp->snd_cwnd_clamp;
	tp->snd_ssthresh = current_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_init, struct sock *sk)
{
	vegas_restart(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_vegas *ca = inet_csk_ca(sk);

	log_cong_avoid(sk);
	if (!ca->doing_vegas_now) {
		reno_cong_avoid(sk, acked);
		return;
	}
	if ((__s32)(ca->rtt.beg_snd_nxt - ack) < 0) {	/* after(ack, beg_snd_nxt) */
		ca->rtt.beg_snd_nxt = tp->snd_nxt;
		if (ca->rtt.cnt_rtt <= 2)
			reno_cong_avoid(sk, acked);
		else
			vegas_adjust(sk, acked);
		ca->rtt.cnt_rtt = 0;
		ca->rtt.min_rtt = NO_RTT;
	} else if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return max_u32(tcp_sk(sk)->snd_cwnd >> 1, 2);
}

PORT_RENO_UNDO(vegas)

SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	log_pkts_acked(sk, sample);
	vegas_filter_sample(&((struct clk_vegas *)inet_csk_ca(sk))->rtt, sample);
}

SEC("struct_ops")
void BPF_PROG(vegas_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		((struct clk_vegas *)inet_csk_ca(sk))->doing_vegas_now = 0;
}

SEC("struct_ops")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		vegas_restart(sk);
}

PORT_OPS(clk_vegas, HOOK(vegas, init) HOOK(vegas, ssthresh) HOOK(vegas, cong_avoid) HOOK(vegas, set_state)
	 HOOK(vegas, cwnd_event) HOOK(vegas, undo_cwnd) HOOK(vegas, pkts_acked));
