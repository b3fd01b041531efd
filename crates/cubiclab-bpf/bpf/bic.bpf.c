/* BIC as BPF struct_ops, following cubiclab-cc's bic.rs (Linux net/ipv4/tcp_bic.c, 6.x).
 * The library runs BIC's clock at HZ 1000 (it has no hz parameter), so the port reads
 * milliseconds of the port's clock (common.h) instead of the kernel's jiffies. */
#include "common.h"

/* Parameters in the order of Bic::PARAMS. */
#define P_BETA ((__u32)PARAM[0])
#define P_MAX_INCREMENT ((__u32)PARAM[1])
#define P_LOW_WINDOW ((__u32)PARAM[2])
#define P_SMOOTH_PART ((__u32)PARAM[3])
#define P_FAST_CONVERGENCE (PARAM[4] != 0)
#define P_INITIAL_SSTHRESH ((__u32)PARAM[5])

#define BETA_SCALE 1024
#define BICTCP_B 4
#define ACK_RATIO_SHIFT 4
#define BIC_HZ 1000

extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

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

	if (ca->last_cwnd == cwnd && (__s32)(now - ca->last_time) <= BIC_HZ / 32)
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
	d = ca->delayed_ack ? ca->delayed_ack : 1;
	ca->cnt = (ca->cnt << ACK_RATIO_SHIFT) / d;
	if (ca->cnt == 0)
		ca->cnt = 1;
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

	log_cong_avoid(sk);
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
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
	if (cwnd < ca->last_max_cwnd && P_FAST_CONVERGENCE)
		ca->last_max_cwnd = cwnd * (BETA_SCALE + P_BETA) / (2 * BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;
	if (cwnd <= P_LOW_WINDOW)
		return max_u32(cwnd >> 1, 2);
	return max_u32(cwnd * P_BETA / BETA_SCALE, 2);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_undo_cwnd, struct sock *sk)
{
	log_undo(sk);
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(bic_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bic_reset(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(bic_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct clk_bic *ca = inet_csk_ca(sk);

	log_pkts_acked(sk, sample);
	if (BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state) == TCP_CA_Open)
		ca->delayed_ack += sample->pkts_acked - (ca->delayed_ack >> ACK_RATIO_SHIFT);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops clk_bic = {
	.init = (void *)bic_init,
	.ssthresh = (void *)bic_ssthresh,
	.cong_avoid = (void *)bic_cong_avoid,
	.set_state = (void *)bic_state,
	.undo_cwnd = (void *)bic_undo_cwnd,
	.pkts_acked = (void *)bic_acked,
	.name = "clk_placeholder",
};
