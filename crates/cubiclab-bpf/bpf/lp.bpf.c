/* TCP-LP as BPF struct_ops, following cubiclab-cc's lp.rs (Linux net/ipv4/tcp_lp.c, 6.x):
 * Reno, which halves the window (or sets it to 1 within the inference time) when the
 * smoothed one-way delay from the ACK's timestamps (rx_opt.rcv_tsval, rcv_tsecr) reaches 15%
 * of its range, and does not grow within the inference time, 3 (now - tsecr) ms. now is
 * tcp_time_stamp_ts: the port's clock (tcp_mstamp) in ms. */
#include "port.h"

#define LP_TS_HZ 1000U
#define LP_VALID_RHZ (1U << 0)
#define LP_VALID_OWD (1U << 1)
#define LP_WITHIN_THR (1U << 3)
#define LP_WITHIN_INF (1U << 4)

struct clk_lp {
	__u32 flag;		/* LP_* bits */
	__u32 sowd;		/* smoothed one-way delay, 1/8 ms */
	__u32 owd_min;
	__u32 owd_max;
	__u32 owd_max_rsv;	/* the largest delay, kept back */
	__u32 remote_hz;	/* the peer's timestamp ticks per second */
	__u32 remote_ref_time;	/* the previous ACK's rcv_tsval */
	__u32 local_ref_time;	/* the previous ACK's rcv_tsecr */
	__u32 last_drop;	/* now at the last early drop, ms */
	__u32 inference;	/* ms after a drop within which the next sets cwnd to 1 */
};
PORT_STATE_FITS(struct clk_lp);

static __always_inline void lp_flag(struct clk_lp *lp, __u32 bit, bool on)
{
	if (on)
		lp->flag |= bit;
	else
		lp->flag &= ~bit;
}

/* tcp_lp_remote_hz_estimator. */
static __always_inline __u32 lp_remote_hz(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_lp *lp = inet_csk_ca(sk);
	__u32 tsval = tp->rx_opt.rcv_tsval, tsecr = tp->rx_opt.rcv_tsecr;
	__s64 rhz = (__u32)(lp->remote_hz << 6), m;

	if (lp->remote_ref_time && lp->local_ref_time && tsval != lp->remote_ref_time &&
	    tsecr != lp->local_ref_time) {
		m = LP_TS_HZ * (tsval - lp->remote_ref_time) / (tsecr - lp->local_ref_time);
		if (rhz > 0)
			rhz += m - (rhz >> 6);
		else
			rhz = m << 6;
	}
	lp_flag(lp, LP_VALID_RHZ, (rhz >> 6) > 0);
	lp->remote_ref_time = tsval;
	lp->local_ref_time = tsecr;
	return (__u32)(rhz >> 6);
}

/* tcp_lp_rtt_sample, with tcp_lp_owd_calculator. */
static __always_inline void lp_rtt_sample(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_lp *lp = inet_csk_ca(sk);
	__u32 owd = 0;

	lp->remote_hz = lp_remote_hz(sk);
	if (lp->flag & LP_VALID_RHZ)
		owd = tp->rx_opt.rcv_tsval * (LP_TS_HZ / lp->remote_hz) - tp->rx_opt.rcv_tsecr;
	lp_flag(lp, LP_VALID_OWD, owd > 0);
	if (!(lp->flag & LP_VALID_RHZ) || !(lp->flag & LP_VALID_OWD))
		return;
	if (owd < lp->owd_min)
		lp->owd_min = owd;
	if (owd > lp->owd_max) {
		if (owd > lp->owd_max_rsv) {
			lp->owd_max = lp->owd_max_rsv ? lp->owd_max_rsv : owd;
			lp->owd_max_rsv = owd;
		} else {
			lp->owd_max = owd;
		}
	}
	if (lp->sowd)
		lp->sowd += owd - (lp->sowd >> 3);
	else
		lp->sowd = owd << 3;
}

SEC("struct_ops")
void BPF_PROG(lp_init, struct sock *sk)
{
	struct clk_lp *lp = inet_csk_ca(sk);

	lp->flag = 0;
	lp->sowd = 0;
	lp->owd_min = 0xffffffffU;
	lp->owd_max = 0;
	lp->owd_max_rsv = 0;
	lp->remote_hz = 0;
	lp->remote_ref_time = 0;
	lp->local_ref_time = 0;
	lp->last_drop = 0;
	lp->inference = 0;
}

SEC("struct_ops")
void BPF_PROG(lp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct clk_lp *lp = inet_csk_ca(sk);

	log_cong_avoid(sk);
	if (!(lp->flag & LP_WITHIN_INF))
		reno_cong_avoid(sk, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(lp_ssthresh, struct sock *sk)
{
	return max_u32(tcp_sk(sk)->snd_cwnd >> 1, 2);
}

PORT_RENO_UNDO(lp)

SEC("struct_ops")
void BPF_PROG(lp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_lp *lp = inet_csk_ca(sk);
	__u32 now = (__u32)(clock_us(sk) / 1000), delta;
	bool young;

	log_pkts_acked(sk, sample);
	if (sample->rtt_us > 0)
		lp_rtt_sample(sk);
	delta = now - tp->rx_opt.rcv_tsecr;
	if ((__s32)delta > 0)
		lp->inference = 3 * delta;
	young = lp->last_drop && now - lp->last_drop < lp->inference;
	lp_flag(lp, LP_WITHIN_INF, young);
	lp_flag(lp, LP_WITHIN_THR,
		lp->sowd >> 3 < lp->owd_min + 15 * (lp->owd_max - lp->owd_min) / 100);
	if (lp->flag & LP_WITHIN_THR)
		return;
	lp->owd_min = lp->sowd >> 3;
	lp->owd_max = lp->sowd >> 2;
	lp->owd_max_rsv = lp->sowd >> 2;
	tp->snd_cwnd = young ? 1 : max_u32(tp->snd_cwnd >> 1, 1);
	lp->last_drop = now;
}

PORT_OPS(clk_lp, HOOK(lp, init) HOOK(lp, ssthresh) HOOK(lp, cong_avoid) HOOK(lp, undo_cwnd)
	 HOOK(lp, pkts_acked));
