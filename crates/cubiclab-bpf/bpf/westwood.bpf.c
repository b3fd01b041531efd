/* TCP Westwood+ as BPF struct_ops, following cubiclab-cc's westwood.rs (Linux
 * net/ipv4/tcp_westwood.c, 6.x): Reno's growth; the bytes ACKed per window of at least one
 * RTT (and HZ/20) filtered twice into bw_est, bytes per jiffy; at a timeout and at the end
 * of a window reduction ssthresh (and then cwnd) become bw_est * rtt_min / mss, at least 2.
 * The clock is the port's jiffies (common.h), as the library's. */
#include "port.h"

struct clk_westwood {
	__u32 bw_ns_est;	/* once-filtered rate, bytes per jiffy */
	__u32 bw_est;		/* twice-filtered rate, bytes per jiffy */
	__u32 rtt_win_sx;	/* jiffies when the sampling window began */
	__u32 bk;		/* bytes ACKed in the sampling window */
	__u32 snd_una;		/* the last snd_una seen, bytes */
	__u32 cumul_ack;	/* bytes the last slow-path ACK counted */
	__u32 accounted;	/* bytes counted ahead for duplicate ACKs */
	__u32 rtt;		/* the last RTT sample, jiffies */
	__u32 rtt_min;		/* least RTT since the last timeout, jiffies */
	__u8 first_ack;		/* no ACK seen yet */
	__u8 reset_rtt_min;	/* the next ACK restarts rtt_min */
};
PORT_STATE_FITS(struct clk_westwood);

static __always_inline __u32 do_filter(__u32 a, __u32 b)
{
	return ((7 * a) + b) >> 3;
}

static __always_inline void update_window(struct sock *sk)
{
	struct clk_westwood *w = inet_csk_ca(sk);
	__u32 now = jiffies32(sk);
	__s32 delta = now - w->rtt_win_sx;

	if (w->first_ack) {
		w->snd_una = tcp_sk(sk)->snd_una;
		w->first_ack = 0;
	}
	/* The s32 delta against a u32 bound: a negative delta reads as huge. */
	if (w->rtt && (__u32)delta > max_u32(w->rtt, HZ / 20)) {
		__u32 sample = w->bk / (__u32)delta;

		if (w->bw_ns_est == 0 && w->bw_est == 0) {
			w->bw_ns_est = sample;
			w->bw_est = sample;
		} else {
			w->bw_ns_est = do_filter(w->bw_ns_est, sample);
			w->bw_est = do_filter(w->bw_est, w->bw_ns_est);
		}
		w->bk = 0;
		w->rtt_win_sx = now;
	}
}

static __always_inline void update_rtt_min(struct clk_westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else {
		w->rtt_min = min_u32(w->rtt, w->rtt_min);
	}
}

/* westwood_acked_count: the bytes a slow-path ACK stands for. */
static __always_inline __u32 acked_count(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_westwood *w = inet_csk_ca(sk);
	__u32 mss = tp->mss_cache;

	w->cumul_ack = tp->snd_una - w->snd_una;
	if (!w->cumul_ack) {
		w->accounted += mss;
		w->cumul_ack = mss;
	}
	if (w->cumul_ack > mss) {
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = mss;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}
	w->snd_una = tp->snd_una;
	return w->cumul_ack;
}

static __always_inline __u32 bw_rttmin(const struct sock *sk)
{
	const struct clk_westwood *w = inet_csk_ca(sk);
	return max_u32(w->bw_est * w->rtt_min / tcp_sk(sk)->mss_cache, 2);
}

SEC("struct_ops")
void BPF_PROG(westwood_init, struct sock *sk)
{
	struct clk_westwood *w = inet_csk_ca(sk);

	w->bk = 0;
	w->bw_ns_est = 0;
	w->bw_est = 0;
	w->accounted = 0;
	w->cumul_ack = 0;
	w->reset_rtt_min = 1;
	w->rtt = 20 * HZ;
	w->rtt_min = w->rtt;
	w->rtt_win_sx = jiffies32(sk);
	w->snd_una = tcp_sk(sk)->snd_una;
	w->first_ack = 1;
}

SEC("struct_ops")
void BPF_PROG(westwood_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	log_cong_avoid(sk);
	reno_cong_avoid(sk, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(westwood_ssthresh, struct sock *sk)
{
	return max_u32(tcp_sk(sk)->snd_cwnd >> 1, 2);
}

PORT_RENO_UNDO(westwood)

SEC("struct_ops")
void BPF_PROG(westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct clk_westwood *w = inet_csk_ca(sk);

	log_pkts_acked(sk, sample);
	if (sample->rtt_us > 0)
		w->rtt = usecs_to_jiffies(sample->rtt_us);
}

SEC("struct_ops")
void BPF_PROG(westwood_in_ack_event, struct sock *sk, __u32 flags)
{
	struct clk_westwood *w = inet_csk_ca(sk);

	update_window(sk);
	if (flags & CA_ACK_SLOWPATH) {
		w->bk += acked_count(sk);
	} else {
		__u32 una = tcp_sk(sk)->snd_una;

		w->bk += una - w->snd_una;
		w->snd_una = una;
	}
	update_rtt_min(w);
}

SEC("struct_ops")
void BPF_PROG(westwood_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_westwood *w = inet_csk_ca(sk);

	if (event == CA_EVENT_COMPLETE_CWR) {
		tp->snd_ssthresh = bw_rttmin(sk);
		tp->snd_cwnd = tp->snd_ssthresh;
	} else if (event == CA_EVENT_LOSS) {
		tp->snd_ssthresh = bw_rttmin(sk);
		w->reset_rtt_min = 1;
	}
}

PORT_OPS(clk_westwood, HOOK(westwood, init) HOOK(westwood, ssthresh) HOOK(westwood, cong_avoid)
	 HOOK(westwood, cwnd_event) HOOK(westwood, in_ack_event) HOOK(westwood, undo_cwnd)
	 HOOK(westwood, pkts_acked));
