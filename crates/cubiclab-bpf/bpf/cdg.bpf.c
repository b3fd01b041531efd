/* TCP CDG as BPF struct_ops, following cubiclab-cc's cdg.rs (Linux net/ipv4/tcp_cdg.c, 6.x):
 * Reno with a shadow window, the delay-gradient sums over a ring of `window` rounds,
 * HyStart by ACK train and delay, Hayes' delayed-ACK filter. The ring lives in socket
 * storage (the module's kcalloc at init; as there, a failed allocation runs as window 1).
 * The backoff itself calls tcp_enter_cwr, which a BPF congestion control cannot call: the
 * loader runs this port only with backoff_factor 0 (never back off; ports.rs), and the
 * draw (the library's default stream, port.h) is kept so that the code is the module's. */
#include "port.h"

#define HYSTART_ACK_TRAIN 1
#define HYSTART_DELAY 2
#define CDG_UNKNOWN 0
#define CDG_NONFULL 1
#define CDG_FULL 2
#define CDG_BACKOFF 3
#define CDG_WINDOW_MAX 256

struct cdg_minmax {
	__s32 min;
	__s32 max;
};

struct clk_cdg {
	struct cdg_minmax rtt;
	struct cdg_minmax rtt_prev;
	struct cdg_minmax gsum;
	__u8 gfilled;
	__u8 tail;
	__u8 state;
	__u8 delack;
	__u8 has_ring;		/* the module's gradients != NULL */
	__u32 rtt_seq;
	__u32 shadow_wnd;
	__u16 backoff_cnt;
	__u16 sample_cnt;
	__s32 delay_min;
	__u32 last_ack;
	__u32 round_start;
	__u64 random;		/* port_random_u32's state */
};
PORT_STATE_FITS(struct clk_cdg);

struct cdg_ring {
	struct cdg_minmax g[CDG_WINDOW_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cdg_ring);
} cdg_ring SEC(".maps");

#define WINDOW ((__u32)PARAM.window)

static __always_inline __s32 min_not_zero_s32(__s32 a, __s32 b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

/* C's signed division, truncating toward zero, for a positive divisor (BPF has no sdiv
 * before cpu v4). */
static __always_inline __s32 sdiv_pos(__s32 x, __u32 d)
{
	return x < 0 ? -(__s32)((0U - (__u32)x) / d) : (__s32)((__u32)x / d);
}

static __always_inline __s32 div_round_closest_64(__s32 x)
{
	return x > 0 ? sdiv_pos(x + 32, 64) : sdiv_pos(x - 32, 64);
}

/* nexp_u32: exp(-ux / 10^6) * U32_MAX, the module's table as a switch (no const arrays). */
static __always_inline __u32 nexp_v(__u32 i)
{
	switch (i) {
	case 1: return 65518;
	case 2: return 65501;
	case 3: return 65468;
	case 4: return 65401;
	case 5: return 65267;
	case 6: return 65001;
	case 7: return 64470;
	case 8: return 63422;
	case 9: return 61378;
	case 10: return 57484;
	case 11: return 50423;
	case 12: return 38795;
	case 13: return 22965;
	case 14: return 8047;
	case 15: return 987;
	case 16: return 14;
	default: return 65535;
	}
}

static __always_inline __u32 nexp_u32(__u32 ux)
{
	__u32 msb = ux >> 8;
	__u32 res, i;

	if (msb > 0xffff)
		return 0;
	res = 0xffffffffU - (ux & 0xff) * (0xffffffffU / 1000000);
	for (i = 1; i <= 16; i++) {
		if (!msb)
			break;
		res = ((__u64)res * (nexp_v((msb & 1) ? i : 0) + 1)) >> 16;
		msb >>= 1;
	}
	return res;
}

static __always_inline void cdg_hystart_update(struct sock *sk, struct clk_cdg *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 hystart_detect = PARAM.hystart_detect;

	ca->delay_min = min_not_zero_s32(ca->delay_min, ca->rtt.min);
	if (ca->delay_min == 0)
		return;
	if (hystart_detect & HYSTART_ACK_TRAIN) {
		__u32 now_us = (__u32)tp->tcp_mstamp;

		if (ca->last_ack == 0 || !tcp_is_cwnd_limited(sk)) {
			ca->last_ack = now_us;
			ca->round_start = now_us;
		} else if ((__s32)(now_us - (ca->last_ack + 3000)) < 0) {
			__u32 base_owd = max_u32((__u32)ca->delay_min / 2U, 125U);

			ca->last_ack = now_us;
			if ((__s32)((ca->round_start + base_owd) - now_us) < 0) {
				tp->snd_ssthresh = tp->snd_cwnd;
				return;
			}
		}
	}
	if (hystart_detect & HYSTART_DELAY) {
		if (ca->sample_cnt < 8) {
			ca->sample_cnt++;
		} else {
			__s32 thresh = max_u32((__u32)ca->delay_min + (__u32)ca->delay_min / 8U, 125U);

			if (ca->rtt.min > thresh)
				tp->snd_ssthresh = tp->snd_cwnd;
		}
	}
}

static __always_inline __s32 cdg_grad(struct sock *sk, struct clk_cdg *ca)
{
	__s32 gmin = ca->rtt.min - ca->rtt_prev.min;
	__s32 gmax = ca->rtt.max - ca->rtt_prev.max;
	struct cdg_ring *ring = NULL;
	__s32 grad;

	if (ca->has_ring)
		ring = bpf_sk_storage_get(&cdg_ring, sk, NULL, 0);
	if (ring) {
		__u32 t = ca->tail & (CDG_WINDOW_MAX - 1);

		ca->gsum.min += gmin - ring->g[t].min;
		ca->gsum.max += gmax - ring->g[t].max;
		ring->g[t].min = gmin;
		ring->g[t].max = gmax;
		ca->tail = (ca->tail + 1) & (WINDOW - 1);
		gmin = ca->gsum.min;
		gmax = ca->gsum.max;
	}
	grad = gmin > 0 ? gmin : gmax;
	if (!ca->gfilled) {
		if (!ring && WINDOW > 1)
			grad *= WINDOW;
		else if (ca->tail == 0)
			ca->gfilled = 1;
		else
			grad = sdiv_pos(grad * (__s32)WINDOW, ca->tail);
	}
	if (gmin <= -32 || gmax <= -32)
		ca->backoff_cnt = 0;
	if (PARAM.use_tolerance) {
		gmin = div_round_closest_64(gmin);
		gmax = div_round_closest_64(gmax);
		if (gmin > 0 && gmax <= 0)
			ca->state = CDG_FULL;
		else if ((gmin > 0 && gmax > 0) || gmax < 0)
			ca->state = CDG_NONFULL;
	}
	return grad;
}

/* tcp_cdg_backoff up to tcp_enter_cwr: with backoff_factor 0 (the only value the loader
 * runs) nexp_u32 is U32_MAX and no draw passes it. */
static __always_inline bool cdg_backoff(struct clk_cdg *ca, __u32 grad)
{
	return port_random_u32(&ca->random) > nexp_u32(grad * (__u32)PARAM.backoff_factor);
}

SEC("struct_ops")
void BPF_PROG(cdg_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cdg *ca = inet_csk_ca(sk);

	ca->has_ring = WINDOW > 1 &&
		bpf_sk_storage_get(&cdg_ring, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE) != NULL;
	ca->rtt_seq = tp->snd_nxt;
	ca->shadow_wnd = tp->snd_cwnd;
	ca->random = PORT_RANDOM_DEFAULT;
}

SEC("struct_ops")
void BPF_PROG(cdg_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cdg *ca = inet_csk_ca(sk);
	__u32 prior_snd_cwnd;

	log_cong_avoid(sk);
	if (tcp_in_slow_start(tp) && PARAM.hystart_detect)
		cdg_hystart_update(sk, ca);
	if ((__s32)(ca->rtt_seq - ack) < 0 && (ca->rtt.min || ca->rtt.max)) {
		__s32 grad = 0;

		if (ca->rtt_prev.min || ca->rtt_prev.max)
			grad = cdg_grad(sk, ca);
		ca->rtt_seq = tp->snd_nxt;
		ca->rtt_prev = ca->rtt;
		ca->rtt.min = 0;
		ca->rtt.max = 0;
		ca->last_ack = 0;
		ca->sample_cnt = 0;
		if (grad > 0 && cdg_backoff(ca, grad))
			return;
	}
	if (!tcp_is_cwnd_limited(sk)) {
		ca->shadow_wnd = min_u32(ca->shadow_wnd, tp->snd_cwnd);
		return;
	}
	prior_snd_cwnd = tp->snd_cwnd;
	reno_cong_avoid(sk, acked);
	ca->shadow_wnd = max_u32(ca->shadow_wnd, ca->shadow_wnd + (tp->snd_cwnd - prior_snd_cwnd));
}

SEC("struct_ops")
void BPF_PROG(cdg_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cdg *ca = inet_csk_ca(sk);
	__s32 rtt;

	log_pkts_acked(sk, sample);
	if (sample->rtt_us <= 0)
		return;
	rtt = sample->rtt_us;
	if (tp->sacked_out == 0) {
		if (sample->pkts_acked == 1 && ca->delack) {
			if (rtt < ca->rtt.min)
				ca->rtt.min = rtt;
			ca->delack--;
			return;
		} else if (sample->pkts_acked > 1 && ca->delack < 5) {
			ca->delack++;
		}
	}
	ca->rtt.min = min_not_zero_s32(ca->rtt.min, rtt);
	if (rtt > ca->rtt.max)
		ca->rtt.max = rtt;
}

SEC("struct_ops")
__u32 BPF_PROG(cdg_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cdg *ca = inet_csk_ca(sk);

	if (ca->state == CDG_BACKOFF)
		return max_u32(2U, (tp->snd_cwnd * min_u32(1024U, PARAM.backoff_beta)) >> 10);
	if (ca->state == CDG_NONFULL && PARAM.use_tolerance)
		return tp->snd_cwnd;
	ca->shadow_wnd = min_u32(ca->shadow_wnd >> 1, tp->snd_cwnd);
	if (PARAM.use_shadow)
		return max_u32(max_u32(2U, ca->shadow_wnd), tp->snd_cwnd >> 1);
	return max_u32(2U, tp->snd_cwnd >> 1);
}

PORT_RENO_UNDO(cdg)

SEC("struct_ops")
void BPF_PROG(cdg_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_cdg *ca = inet_csk_ca(sk);

	if (ev == CA_EVENT_CWND_RESTART) {
		struct cdg_ring *ring = ca->has_ring ? bpf_sk_storage_get(&cdg_ring, sk, NULL, 0) : NULL;

		if (ring) {
			/* Volatile stores: clang would make the loop a memset, which BPF lacks. */
			for (__u32 i = 0; i < CDG_WINDOW_MAX; i++)
				*(volatile __u64 *)&ring->g[i] = 0;
		}
		/* memset(ca, 0, ...) but the ring, and the draws (not the module's state). */
		ca->rtt.min = ca->rtt.max = 0;
		ca->rtt_prev.min = ca->rtt_prev.max = 0;
		ca->gsum.min = ca->gsum.max = 0;
		ca->gfilled = 0;
		ca->tail = 0;
		ca->state = CDG_UNKNOWN;
		ca->delack = 0;
		ca->backoff_cnt = 0;
		ca->sample_cnt = 0;
		ca->delay_min = 0;
		ca->last_ack = 0;
		ca->round_start = 0;
		ca->rtt_seq = tp->snd_nxt;
		ca->shadow_wnd = tp->snd_cwnd;
	} else if (ev == CA_EVENT_COMPLETE_CWR) {
		ca->state = CDG_UNKNOWN;
		ca->rtt_seq = tp->snd_nxt;
		ca->rtt_prev = ca->rtt;
		ca->rtt.min = 0;
		ca->rtt.max = 0;
	}
}

PORT_OPS(clk_cdg, HOOK(cdg, init) HOOK(cdg, ssthresh) HOOK(cdg, cong_avoid) HOOK(cdg, cwnd_event)
	 HOOK(cdg, undo_cwnd) HOOK(cdg, pkts_acked));
