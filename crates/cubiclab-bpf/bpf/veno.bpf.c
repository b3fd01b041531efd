/* TCP Veno as BPF struct_ops, following cubiclab-cc's veno.rs (Linux net/ipv4/tcp_veno.c,
 * 6.x): Vegas' backlog estimate in half segments, diff = 2 cwnd - 2 cwnd baseRTT / minRTT,
 * on every ACK once three RTT samples were ever taken; below beta (3 segments) Reno's growth
 * and a loss keeps 4/5, above one segment every other window and a loss halves. */
#include "port.h"

#define V_PARAM_SHIFT 1
#define VENO_BETA (3U << V_PARAM_SHIFT)
#define NO_RTT 0x7fffffffU

struct clk_veno {
	__u8 doing_veno_now;	/* Open since the last restart */
	__u16 cntrtt;		/* RTT samples ever taken */
	__u32 minrtt;		/* least RTT + 1 since the previous ACK, us */
	__u32 basertt;		/* least RTT + 1 since the last restart, us */
	__u32 inc;		/* every-other-window switch */
	__u32 diff;		/* backlog estimate, half segments */
};
PORT_STATE_FITS(struct clk_veno);

static __always_inline void veno_restart(struct clk_veno *veno)
{
	veno->basertt = NO_RTT;
	veno->inc = 1;
	veno->doing_veno_now = 1;
	veno->minrtt = NO_RTT;
}

SEC("struct_ops")
void BPF_PROG(veno_init, struct sock *sk)
{
	veno_restart(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(veno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_veno *veno = inet_csk_ca(sk);

	log_cong_avoid(sk);
	if (!veno->doing_veno_now) {
		reno_cong_avoid(sk, acked);
		return;
	}
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (veno->cntrtt <= 2) {
		reno_cong_avoid(sk, acked);
	} else {
		__u64 target_cwnd = ((__u64)tp->snd_cwnd * veno->basertt) << V_PARAM_SHIFT;

		target_cwnd /= veno->minrtt;
		veno->diff = (tp->snd_cwnd << V_PARAM_SHIFT) - target_cwnd;
		if (tcp_in_slow_start(tp))
			acked = tcp_slow_start(tp, acked);
		if (acked) {
			if (veno->diff < VENO_BETA) {
				tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
			} else if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
				if (veno->inc && tp->snd_cwnd < tp->snd_cwnd_clamp) {
					tp->snd_cwnd++;
					veno->inc = 0;
				} else {
					veno->inc = 1;
				}
				tp->snd_cwnd_cnt = 0;
			} else {
				tp->snd_cwnd_cnt += acked;
			}
		}
		if (tp->snd_cwnd < 2)
			tp->snd_cwnd = 2;
		else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd_clamp;
	}
	veno->minrtt = NO_RTT;
}

SEC("struct_ops")
__u32 BPF_PROG(veno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct clk_veno *veno = inet_csk_ca(sk);

	if (veno->diff < VENO_BETA)
		return max_u32(tp->snd_cwnd * 4 / 5, 2);
	return max_u32(tp->snd_cwnd >> 1, 2);
}

PORT_RENO_UNDO(veno)

SEC("struct_ops")
void BPF_PROG(veno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct clk_veno *veno = inet_csk_ca(sk);
	__u32 vrtt;

	log_pkts_acked(sk, sample);
	if (sample->rtt_us < 0)
		return;
	vrtt = (__u32)sample->rtt_us + 1;
	if (vrtt < veno->basertt)
		veno->basertt = vrtt;
	veno->minrtt = min_u32(veno->minrtt, vrtt);
	veno->cntrtt++;
}

SEC("struct_ops")
void BPF_PROG(veno_set_state, struct sock *sk, __u8 new_state)
{
	struct clk_veno *veno = inet_csk_ca(sk);

	if (new_state == TCP_CA_Open) {
		veno->doing_veno_now = 1;
		veno->minrtt = NO_RTT;
	} else {
		veno->doing_veno_now = 0;
	}
}

SEC("struct_ops")
void BPF_PROG(veno_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		veno_restart(inet_csk_ca(sk));
}

PORT_OPS(clk_veno, HOOK(veno, init) HOOK(veno, ssthresh) HOOK(veno, cong_avoid) HOOK(veno, set_state)
	 HOOK(veno, cwnd_event) HOOK(veno, undo_cwnd) HOOK(veno, pkts_acked));
