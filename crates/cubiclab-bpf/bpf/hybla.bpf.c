/* TCP Hybla as BPF struct_ops, following cubiclab-cc's hybla.rs (Linux
 * net/ipv4/tcp_hybla.c, 6.x): rho = srtt / rtt0 in eighths (at least 1), recomputed when
 * the smoothed RTT falls below the least seen; per ACK, 2^rho - 1 segments in slow start and
 * rho^2 / cwnd after, in 1/128 with the fractions carried; Reno outside Open. The module's
 * snd_cwnd_clamp of 65535 is not writable from BPF (bpf_tcp_ca's writable fields): the port
 * applies it where the module reads the clamp it set, Reno's fallback excepted. */
#include "port.h"

#define HYBLA_CLAMP 65535U
#define HYBLA_MAX_SHIFT 16U

struct clk_hybla {
	__u8 hybla_en;		/* Open: Hybla; otherwise Reno */
	__u32 cents;		/* fractions of a segment not yet added, 1/128 */
	__u32 rho;		/* integer part */
	__u32 rho_3ls;		/* rho in 1/8 */
	__u32 rho2_7ls;		/* rho^2 in 1/128 */
	__u32 minrtt_us;	/* least srtt_us seen (1/8 us) */
};
PORT_STATE_FITS(struct clk_hybla);

/* hybla_fraction: 2^(k/8) in 1/128, k = 0..7. A switch, not the module's array: clang
 * puts a constant array in .rodata.cst32, which libbpf cannot load. */
static __always_inline __u32 hybla_fraction(__u32 k)
{
	switch (k) {
	case 1: return 139;
	case 2: return 152;
	case 3: return 165;
	case 4: return 181;
	case 5: return 197;
	case 6: return 215;
	case 7: return 234;
	default: return 128;
	}
}

static __always_inline void hybla_recalc(struct sock *sk)
{
	struct clk_hybla *ca = inet_csk_ca(sk);

	ca->rho_3ls = max_u32(tcp_sk(sk)->srtt_us / ((__u32)PARAM.rtt0 * 1000), 8);
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
}

SEC("struct_ops")
void BPF_PROG(hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_hybla *ca = inet_csk_ca(sk);

	ca->rho = 0;
	ca->rho_3ls = 0;
	ca->rho2_7ls = 0;
	ca->cents = 0;
	ca->hybla_en = 1;
	hybla_recalc(sk);
	ca->minrtt_us = tp->srtt_us;
	tp->snd_cwnd = ca->rho;
}

SEC("struct_ops")
void BPF_PROG(hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_hybla *ca = inet_csk_ca(sk);
	__u32 increment, odd, rho_fractions;
	bool slow_start;

	log_cong_avoid(sk);
	if (tp->srtt_us < ca->minrtt_us) {
		hybla_recalc(sk);
		ca->minrtt_us = tp->srtt_us;
	}
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (!ca->hybla_en) {
		reno_cong_avoid(sk, acked);
		return;
	}
	if (ca->rho == 0)
		hybla_recalc(sk);
	rho_fractions = ca->rho_3ls - (ca->rho << 3);
	slow_start = tcp_in_slow_start(tp);
	if (slow_start) {
		increment = (1U << min_u32(ca->rho, HYBLA_MAX_SHIFT)) * hybla_fraction(rho_fractions) - 128;
	} else {
		increment = ca->rho2_7ls / tp->snd_cwnd;
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}
	odd = increment % 128;
	tp->snd_cwnd += increment >> 7;
	ca->cents += odd;
	/* The module loops while cents >= 128; cents stays below 128 between ACKs and odd is
	 * below 128, so once is enough. */
	if (ca->cents >= 128) {
		tp->snd_cwnd++;
		ca->cents -= 128;
		tp->snd_cwnd_cnt = 0;
	}
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= tp->snd_cwnd) {
		tp->snd_cwnd++;
		tp->snd_cwnd_cnt = 0;
	}
	if (slow_start)
		tp->snd_cwnd = min_u32(tp->snd_cwnd, tp->snd_ssthresh);
	tp->snd_cwnd = min_u32(tp->snd_cwnd, HYBLA_CLAMP);
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_ssthresh, struct sock *sk)
{
	return max_u32(tcp_sk(sk)->snd_cwnd >> 1, 2);
}

SEC("struct_ops")
void BPF_PROG(hybla_set_state, struct sock *sk, __u8 new_state)
{
	struct clk_hybla *ca = inet_csk_ca(sk);

	ca->hybla_en = new_state == TCP_CA_Open;
}

PORT_RENO_UNDO(hybla)

/* Hybla has no pkts_acked. */
PORT_LOG_ONLY_ACKED(hybla)

PORT_OPS(clk_hybla, HOOK(hybla, init) HOOK(hybla, ssthresh) HOOK(hybla, cong_avoid) HOOK(hybla, set_state)
	 HOOK(hybla, undo_cwnd) HOOK(hybla, pkts_acked));
