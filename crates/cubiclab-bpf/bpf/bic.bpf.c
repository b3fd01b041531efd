/* BIC as BPF struct_ops, following cubiclab-cc's bic.rs (Linux net/ipv4/tcp_bic.c, 6.x).
 * The library runs BIC's clock at HZ 1000 (it has no hz parameter), so the port reads
 * milliseconds of the port's clock (common.h) instead of the kernel's jiffies. */
#include "port.h"
#include "bic_lineage.h"

/* Parameters by name (params.h). */
#define P_BETA ((__u32)PARAM.beta)
#define P_MAX_INCREMENT ((__u32)PARAM.max_increment)
#define P_LOW_WINDOW ((__u32)PARAM.low_window)
#define P_SMOOTH_PART ((__u32)PARAM.smooth_part)
#define P_FAST_CONVERGENCE (PARAM.fast_convergence != 0)
#define P_INITIAL_SSTHRESH ((__u32)PARAM.initial_ssthresh)

#define BICTCP_B 4
#define BIC_HZ 1000

struct clk_bic {
	__u32 cnt;
	__u32 last_max_cwnd;
	__u32 last_cwnd;
	__u32 last_time;
	__u32 epoch_start;
	__u32 delayed_ack;
};

PORT_STATE_FITS(struct clk_bic);

/* Milliseconds of the port's clock (common.h). */
static __always_inline __u32 bic_jiffies(const struct sock *sk)
{
	return (__u32)(clock_us(sk) / 1000);
}

static __always_inline void bic_reset(struct clk_bic *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->epoch_start = 0;
	ca->delayed_ack = 2 << ACK_RATIO_SHIFT;
}

static __always_inline void bic_update(struct clk_bic *ca, __u32 cwnd, __u32 now)
{
	__u32 max = ca->last_max_cwnd, inc = P_MAX_INCREMENT, dist, d;

	if (count_is_fresh(ca->last_cwnd, ca->last_time, cwnd, now, BIC_HZ))
		return;
	ca->last_cwnd = cwnd;
	ca->last_time = now;
	if (ca->epoch_start == 0)
		ca->epoch_start = now;
	if (cwnd <= P_LOW_WINDOW) {
		ca->cnt = cwnd;
		return;
	}
	if (cwnd < max) {
		dist = (max - cwnd) / BICTCP_B;
		if (dist > inc)
			ca->cnt = cwnd / inc;
		else if (dist <= 1)
			ca->cnt = cwnd * P_SMOOTH_PART / BICTCP_B;
		else
			ca->cnt = cwnd / dist;
	} else if (cwnd < max + BICTCP_B) {
		ca->cnt = cwnd * P_SMOOTH_PART / BICTCP_B;
	} else if (cwnd < max + inc * (BICTCP_B - 1)) {
		d = cwnd - max;
		ca->cnt = cwnd * (BICTCP_B - 1) / (d ? d : 1);
	} else {
		ca->cnt = cwnd / inc;
	}
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20;
	ca->cnt = per_ack_count(ca->cnt, ca->delayed_ack);
}

SEC("struct_ops")
void BPF_PROG(bic_init, struct sock *sk)
{
	bic_reset(inet_csk_ca(sk));
	if (P_INITIAL_SSTHRESH)
		tcp_sk(sk)->snd_ssthresh = P_INITIAL_SSTHRESH;
}

SEC("struct_ops")
void BPF_PROG(bic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_bic *ca = inet_csk_ca(sk);

	acked = slow_start_first(sk, acked);
	if (!acked)
		return;
	bic_update(ca, tp->snd_cwnd, bic_jiffies(sk));
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_bic *ca = inet_csk_ca(sk);
	__u32 cwnd = tp->snd_cwnd;

	ca->epoch_start = 0;
	ca->last_max_cwnd = last_max_after_loss(cwnd, ca->last_max_cwnd, P_BETA, P_FAST_CONVERGENCE);
	if (cwnd <= P_LOW_WINDOW)
		return max_u32(cwnd >> 1, 2);
	return kept_window(cwnd, P_BETA);
}

PORT_RENO_UNDO(bic)

SEC("struct_ops")
void BPF_PROG(bic_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bic_reset(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(bic_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct clk_bic *ca = inet_csk_ca(sk);

	log_pkts_acked(sk, sample);
	if (BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state) == TCP_CA_Open)
		ca->delayed_ack = update_ack_ratio(ca->delayed_ack, sample->pkts_acked);
}

PORT_OPS(clk_bic, HOOK(bic, init) HOOK(bic, ssthresh) HOOK(bic, cong_avoid) HOOK(bic, set_state)
	 HOOK(bic, undo_cwnd) HOOK(bic, pkts_acked));
