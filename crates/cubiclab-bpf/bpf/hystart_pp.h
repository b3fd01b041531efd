/* HyStart++ (RFC 9406) for a port whose `hystart` parameter chose it: cubiclab-cc's
 * hystart_plus_plus.rs line by line (its comments give the RFC's sections and what the
 * segment arithmetic changes), and cubic_frame.rs's calls of it: hspp_on_ack from
 * pkts_acked, hspp_grow from cong_avoid in the first slow start.
 *
 * The state does not fit in icsk_ca_priv beside a port's own (104 bytes on 6.18, the last
 * 24 the port log's): it lives in a socket-storage map, created at init. */
#ifndef CUBICLAB_BPF_HYSTART_PP_H
#define CUBICLAB_BPF_HYSTART_PP_H

#define HSPP_MIN_RTT_THRESH_US 4000
#define HSPP_MAX_RTT_THRESH_US 16000
#define HSPP_MIN_RTT_DIVISOR 8
#define HSPP_N_RTT_SAMPLE 8
#define HSPP_CSS_GROWTH_DIVISOR 4
#define HSPP_CSS_ROUNDS 5
#define HSPP_L_NOT_PACED 8
#define HSPP_NO_RTT 0xffffffffU
#define TCP_INFINITE_SSTHRESH 0x7fffffffU

struct hspp {
	__u32 window_end;	/* snd_nxt when the round began */
	__u32 last_round_min_rtt;
	__u32 current_round_min_rtt;
	__u32 rtt_sample_count;
	__u32 css_baseline_min_rtt;	/* HSPP_NO_RTT outside CSS */
	__u32 css_rounds;
	__u32 css_acked;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct hspp);
} hspp_state SEC(".maps");

/* init: a round from snd_nxt (HyStartPlusPlus::new). */
static __always_inline void hspp_start(struct sock *sk)
{
	struct hspp *h = bpf_sk_storage_get(&hspp_state, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);

	if (!h)
		return;
	h->window_end = tcp_sk(sk)->snd_nxt;
	h->last_round_min_rtt = HSPP_NO_RTT;
	h->current_round_min_rtt = HSPP_NO_RTT;
	h->rtt_sample_count = 0;
	h->css_baseline_min_rtt = HSPP_NO_RTT;
	h->css_rounds = 0;
	h->css_acked = 0;
}

static __always_inline struct hspp *hspp_of(struct sock *sk)
{
	return bpf_sk_storage_get(&hspp_state, sk, NULL, 0);
}

/* Only the first slow start (Section 4.4). */
static __always_inline bool hspp_applies(const struct tcp_sock *tp)
{
	return tp->snd_ssthresh == TCP_INFINITE_SSTHRESH && tcp_in_slow_start(tp);
}

static __always_inline __u32 hspp_rtt_thresh(__u32 last)
{
	__u32 t = last / HSPP_MIN_RTT_DIVISOR;

	return t < HSPP_MIN_RTT_THRESH_US ? HSPP_MIN_RTT_THRESH_US :
	       t > HSPP_MAX_RTT_THRESH_US ? HSPP_MAX_RTT_THRESH_US : t;
}

/* pkts_acked: end the round when window_end is acknowledged, take the RTT sample, test. */
static __always_inline void hspp_on_ack(struct sock *sk, __s32 rtt_us)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hspp *h = hspp_of(sk);
	__u32 rtt;

	if (!h)
		return;
	if (!hspp_applies(tp)) {
		h->css_baseline_min_rtt = HSPP_NO_RTT;
		return;
	}
	if ((__s32)(tp->snd_una - h->window_end) > 0) {
		h->window_end = tp->snd_nxt;
		h->last_round_min_rtt = h->current_round_min_rtt;
		h->current_round_min_rtt = HSPP_NO_RTT;
		h->rtt_sample_count = 0;
		if (h->css_baseline_min_rtt != HSPP_NO_RTT) {
			h->css_rounds++;
			if (h->css_rounds >= HSPP_CSS_ROUNDS) {
				h->css_baseline_min_rtt = HSPP_NO_RTT;
				tp->snd_ssthresh = tp->snd_cwnd;
				return;
			}
		}
	}
	if (rtt_us < 0)
		return;
	rtt = (__u32)rtt_us;	/* below HSPP_NO_RTT: an s32 */
	if (rtt < h->current_round_min_rtt)
		h->current_round_min_rtt = rtt;
	h->rtt_sample_count++;
	if (h->rtt_sample_count < HSPP_N_RTT_SAMPLE)
		return;
	if (h->css_baseline_min_rtt != HSPP_NO_RTT) {
		if (h->current_round_min_rtt < h->css_baseline_min_rtt)
			h->css_baseline_min_rtt = HSPP_NO_RTT;
	} else if (h->last_round_min_rtt != HSPP_NO_RTT &&
		   (__u64)h->current_round_min_rtt >=
			   (__u64)h->last_round_min_rtt + hspp_rtt_thresh(h->last_round_min_rtt)) {
		h->css_baseline_min_rtt = h->current_round_min_rtt;
		h->css_rounds = 0;
		h->css_acked = 0;
	}
}

/* cong_avoid in the first slow start: min(acked, L), a quarter of it in CSS. L is infinite
 * for a paced socket (sk_pacing_status set by the qdisc or the stack). */
static __always_inline void hspp_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hspp *h = hspp_of(sk);
	__u32 n = sk->sk_pacing_status != SK_PACING_NONE ? acked : min_u32(acked, HSPP_L_NOT_PACED);
	__u32 increase = n, cwnd;

	if (!h)
		return;
	if (h->css_baseline_min_rtt != HSPP_NO_RTT) {
		h->css_acked += n;
		increase = h->css_acked / HSPP_CSS_GROWTH_DIVISOR;
		h->css_acked %= HSPP_CSS_GROWTH_DIVISOR;
	}
	cwnd = tp->snd_cwnd + increase;
	if (cwnd < tp->snd_cwnd)
		cwnd = 0xffffffffU;	/* saturating, as the library's */
	tp->snd_cwnd = min_u32(cwnd, tp->snd_cwnd_clamp);
}

#endif
