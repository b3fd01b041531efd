/* DCTCP as BPF struct_ops, following cubiclab-cc's dctcp.rs (Linux net/ipv4/tcp_dctcp.c and
 * tcp_dctcp.h, 6.x; RFC 8257): Reno's growth; once per window of data (snd_una passing the
 * snd_nxt of the last update) alpha, in 1/1024, moves by g = 2^-shift_g towards the share of
 * segments delivered by ECE-carrying ACKs (tp->delivered_ce); an ECN reduction keeps
 * cwnd (1 - alpha / 2); entering Recovery or a timeout halves. TCP_CONG_NEEDS_ECN: the
 * socket negotiates ECN whatever net.ipv4.tcp_ecn says, and the receiver's half (the same
 * ops on the accepting socket) echoes ECE as the CE state of the last segment, sending the
 * pending delayed ACK first when that state changes.
 *
 * When the handshake did not negotiate ECN (a peer whose congestion control does not need
 * it refuses an ECT SYN) the socket falls back to Reno, as the module falls back to its
 * dctcp-reno, whose hooks are Reno's: the switch also stops ECT on its data. Left out:
 * PLB's rehash bookkeeping (off unless net.ipv4.tcp_plb_enabled). */
#include "port.h"

/* include/net/tcp.h: the flags a tcp_congestion_ops carries and the ecn_flags bit that
 * makes the receiver set ECE (#defines, so not in vmlinux.h). */
#define TCP_CONG_NEEDS_ECN 0x2
#define TCP_ECN_DEMAND_CWR 0x4
/* TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN (6.18): ECN of either kind negotiated. */
#define TCP_ECN_MODE_ANY 0x11
#define SOL_TCP 6
#define TCP_CONGESTION 13
#define TCP_CA_Recovery 3
#define DCTCP_MAX_ALPHA 1024U
/* The ops' flags member, as one HOOK()-like item of PORT_OPS. */
#define NEEDS_ECN .flags = TCP_CONG_NEEDS_ECN,

struct clk_dctcp {
	__u32 old_delivered;	/* tp->delivered at the last update */
	__u32 old_delivered_ce;	/* tp->delivered_ce at the last update */
	__u32 prior_rcv_nxt;	/* receiver: rcv_nxt after the previous segment */
	__u32 alpha;		/* 1/1024 */
	__u32 next_seq;		/* snd_nxt at the last update: the window ends there */
	__u32 ce_state;		/* receiver: the last segment was CE */
	__u32 loss_cwnd;	/* cwnd at the last reduction, for undo */
};
PORT_STATE_FITS(struct clk_dctcp);

/* dctcp_reset: a new observation window from here. */
static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct clk_dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

/* dctcp_react_to_loss: a loss halves, whatever alpha says. */
static __always_inline void react_to_loss(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_dctcp *ca = inet_csk_ca(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = max_u32(tp->snd_cwnd >> 1, 2);
}

/* The receiver's ECE: set while the CE state is 1 (dctcp_ece_ack_cwr). */
static __always_inline void ece_as(struct tcp_sock *tp, __u32 ce_state)
{
	if (ce_state)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* dctcp_ece_ack_update: an in-sequence segment arrived with (is_ce) or without CE. When
 * the CE state changes, the delayed ACK pending for earlier segments goes first with the
 * old state, and this segment is ACKed at once. */
static __always_inline void ece_ack_update(struct sock *sk, __u32 is_ce)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_dctcp *ca = inet_csk_ca(sk);

	if (ca->ce_state != is_ce) {
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
			ece_as(tp, ca->ce_state);
			bpf_tcp_send_ack(tp, ca->prior_rcv_nxt);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce_state = is_ce;
	ece_as(tp, is_ce);
}

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_dctcp *ca = inet_csk_ca(sk);
	__u8 state = sk->__sk_common.skc_state;

	if (!(tp->ecn_flags & TCP_ECN_MODE_ANY) && state != TCP_LISTEN && state != TCP_CLOSE) {
		char reno[] = "reno";

		bpf_setsockopt(sk, SOL_TCP, TCP_CONGESTION, reno, sizeof(reno));
		return;
	}
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->alpha = min_u32(PARAM.alpha_on_init, DCTCP_MAX_ALPHA);
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	dctcp_reset(tp, ca);
}

/* dctcp_ssthresh: cwnd - cwnd alpha / 2048 (the kernel's u32 product), at least 2. */
SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_dctcp *ca = inet_csk_ca(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	return max_u32(tp->snd_cwnd - ((tp->snd_cwnd * ca->alpha) >> 11), 2);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	log_cong_avoid(sk);
	reno_cong_avoid(sk, acked);
}

/* dctcp_update_alpha: once snd_una passed next_seq, alpha -= alpha >> g (all of it once
 * that is 0: min_not_zero), plus (delivered_ce << (10 - g)) / delivered. */
SEC("struct_ops")
void BPF_PROG(dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_dctcp *ca = inet_csk_ca(sk);
	__u32 shift_g = PARAM.shift_g;
	__u32 alpha = ca->alpha, decay, delivered, delivered_ce;

	if ((__s32)(tp->snd_una - ca->next_seq) < 0)
		return;
	delivered = tp->delivered - ca->old_delivered;
	delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
	decay = alpha >> shift_g;
	alpha -= decay ? min_u32(alpha, decay) : alpha;
	if (delivered_ce) {
		delivered_ce <<= 10 - shift_g;
		delivered_ce /= max_u32(delivered, 1);
		alpha = min_u32(alpha + delivered_ce, DCTCP_MAX_ALPHA);
	}
	ca->alpha = alpha;
	dctcp_reset(tp, ca);
}

/* dctcp_state: entering Recovery halves. */
SEC("struct_ops")
void BPF_PROG(dctcp_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Recovery && new_state != BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state))
		react_to_loss(sk);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE)
		ece_ack_update(sk, ev == CA_EVENT_ECN_IS_CE);
	else if (ev == CA_EVENT_LOSS)
		react_to_loss(sk);
}

/* dctcp_cwnd_undo: the window of the last reduction. */
SEC("struct_ops")
__u32 BPF_PROG(dctcp_undo_cwnd, struct sock *sk)
{
	const struct clk_dctcp *ca = inet_csk_ca(sk);

	log_undo(sk);
	return max_u32(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

PORT_LOG_ONLY_ACKED(dctcp)

PORT_OPS(clk_dctcp, HOOK(dctcp, init) HOOK(dctcp, ssthresh) HOOK(dctcp, cong_avoid) HOOK(dctcp, in_ack_event)
	 HOOK(dctcp, set_state) HOOK(dctcp, cwnd_event) HOOK(dctcp, undo_cwnd) HOOK(dctcp, pkts_acked)
	 NEEDS_ECN);
