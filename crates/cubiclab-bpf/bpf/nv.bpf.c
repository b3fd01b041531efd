/* TCP-NV as BPF struct_ops, following cubiclab-cc's nv.rs (Linux net/ipv4/tcp_nv.c, 6.x):
 * Reno's growth while allowed; per ACK the RTT average, the rate in_flight * 80000 / avg_rtt
 * (the 6.x sample's in_flight, bytes) and the least RTT; once per round a decrease of 30% of
 * the window above max_win (the rate's window at the least RTT + pad), or growth allowed 2
 * below it. The kernel's jiffies are the port's clock's (common.h jiffies32, as the library
 * takes them); get_random_bytes is a draw of the library's default stream (port.h
 * port_random_below), which the check's replay draws too. nv_catchup (never set)
 * and the BPF_SOCK_OPS_BASE_RTT bounds (no sock_ops program) are left out, as in nv.rs. */
#include "port.h"

#define NV_INIT_RTT 0xffffffffU
#define NV_MIN_CWND 4
#define NV_MIN_CWND_GROW 2
#define NV_TSO_CWND_BOUND 80
#define NV_PAD_BUFFER 2
#define NV_CONG_DEC_MULT (30 * 128 / 100)
#define NV_SSTHRESH_FACTOR 8
#define NV_RTT_FACTOR 128
#define NV_LOSS_DEC_FACTOR 819
#define NV_GROWTH_RATE_NEG 8
#define NV_DEC_EVAL_MIN_CALLS 60
#define NV_INC_EVAL_MIN_CALLS 20
#define NV_SSTHRESH_EVAL_MIN_CALLS 30
#define NV_STOP_RTT_CNT 10
#define NV_RTT_MIN_CNT 2
#define TCP_INFINITE_SSTHRESH 0x7fffffffU

struct clk_nv {
	__u32 min_rtt_reset_jiffies;
	__s8 growth_factor;
	__u8 allow_cwnd_growth;
	__u8 reset;
	__u8 eval_call_cnt;
	__u8 nv_min_cwnd;
	__u8 rtt_cnt;
	__u32 last_rtt;
	__u32 min_rtt;
	__u32 min_rtt_new;
	__u32 rtt_max_rate;
	__u32 rtt_start_seq;
	__u32 last_snd_una;
	__u32 no_cong_cnt;
	__u64 random;		/* port_random_u32's state */
};
PORT_STATE_FITS(struct clk_nv);

/* tcpnv_reset. */
static __always_inline void nv_restart(struct clk_nv *ca, const struct tcp_sock *tp)
{
	ca->reset = 0;
	ca->no_cong_cnt = 0;
	ca->rtt_cnt = 0;
	ca->last_rtt = 0;
	ca->rtt_max_rate = 0;
	ca->rtt_start_seq = tp->snd_una;
	ca->eval_call_cnt = 0;
	ca->last_snd_una = tp->snd_una;
}

SEC("struct_ops")
void BPF_PROG(nv_init, struct sock *sk)
{
	struct clk_nv *ca = inet_csk_ca(sk);

	nv_restart(ca, tcp_sk(sk));
	ca->allow_cwnd_growth = 1;
	ca->min_rtt_reset_jiffies = jiffies32(sk) + 2 * HZ;
	ca->min_rtt = NV_INIT_RTT;
	ca->min_rtt_new = NV_INIT_RTT;
	ca->nv_min_cwnd = NV_MIN_CWND;
	ca->growth_factor = 0;
	ca->random = PORT_RANDOM_DEFAULT;
}

SEC("struct_ops")
void BPF_PROG(nv_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_nv *ca = inet_csk_ca(sk);
	__u32 cnt;

	if (!cong_avoid_begins(sk) || !ca->allow_cwnd_growth)
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	if (ca->growth_factor < 0)
		cnt = tp->snd_cwnd << -ca->growth_factor;
	else
		cnt = max_u32(4U, tp->snd_cwnd >> ca->growth_factor);
	tcp_cong_avoid_ai(tp, cnt, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(nv_ssthresh, struct sock *sk)
{
	return max_u32((tcp_sk(sk)->snd_cwnd * NV_LOSS_DEC_FACTOR) >> 10, 2U);
}

PORT_RENO_UNDO(nv)

SEC("struct_ops")
void BPF_PROG(nv_set_state, struct sock *sk, __u8 new_state)
{
	struct clk_nv *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Open && ca->reset) {
		nv_restart(ca, tcp_sk(sk));
	} else if (new_state == TCP_CA_Loss || new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery) {
		ca->reset = 1;
		ca->allow_cwnd_growth = 0;
		if (new_state == TCP_CA_Loss) {
			if (ca->growth_factor > 0)
				ca->growth_factor = 0;
			if (ca->growth_factor > -8)
				ca->growth_factor--;
		}
	}
}

/* The once-per-round decision of tcpnv_acked. */
static __always_inline void nv_decide(struct sock *sk, struct clk_nv *ca, __u32 bytes_acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd_by_slope, max_win;

	ca->rtt_start_seq = tp->snd_nxt;
	if (ca->rtt_cnt < 0xff)
		ca->rtt_cnt++;
	if (ca->eval_call_cnt == 1 && bytes_acked >= (ca->nv_min_cwnd - 1) * tp->mss_cache &&
	    ca->nv_min_cwnd < NV_TSO_CWND_BOUND + 1) {
		ca->nv_min_cwnd = min_u32(ca->nv_min_cwnd + NV_MIN_CWND_GROW, NV_TSO_CWND_BOUND + 1);
		ca->rtt_start_seq = tp->snd_nxt + ca->nv_min_cwnd * tp->mss_cache;
		ca->eval_call_cnt = 0;
		ca->allow_cwnd_growth = 1;
		return;
	}
	cwnd_by_slope = (__u32)(((__u64)ca->rtt_max_rate * ca->min_rtt) / (80000ULL * tp->mss_cache));
	max_win = cwnd_by_slope + (__u32)PARAM.pad;
	if (tp->snd_cwnd > max_win) {
		if (ca->rtt_cnt < NV_RTT_MIN_CNT) {
			return;
		} else if (tp->snd_ssthresh == TCP_INFINITE_SSTHRESH) {
			if (ca->eval_call_cnt < NV_SSTHRESH_EVAL_MIN_CALLS)
				return;
		} else if (ca->eval_call_cnt < NV_DEC_EVAL_MIN_CALLS) {
			if (ca->allow_cwnd_growth && ca->rtt_cnt > NV_STOP_RTT_CNT)
				ca->allow_cwnd_growth = 0;
			return;
		}
		ca->allow_cwnd_growth = 0;
		tp->snd_ssthresh = (NV_SSTHRESH_FACTOR * max_win) >> 3;
		if (tp->snd_cwnd - max_win > 2)
			tp->snd_cwnd -= max_u32(2U, ((tp->snd_cwnd - max_win) * NV_CONG_DEC_MULT) >> 7);
		else
			tp->snd_cwnd = max_win;
		if (ca->growth_factor > 0)
			ca->growth_factor = 0;
		ca->no_cong_cnt = 0;
	} else if (tp->snd_cwnd <= max_win - NV_PAD_BUFFER) {
		if (ca->eval_call_cnt < NV_INC_EVAL_MIN_CALLS)
			return;
		ca->allow_cwnd_growth = 1;
		ca->no_cong_cnt++;
		if (ca->growth_factor < 0 && ca->no_cong_cnt > NV_GROWTH_RATE_NEG) {
			ca->growth_factor++;
			ca->no_cong_cnt = 0;
		}
	} else {
		return;
	}
	ca->eval_call_cnt = 0;
	ca->rtt_cnt = 0;
	ca->rtt_max_rate = 0;
	if (tp->snd_cwnd < (__u32)PARAM.min_cwnd)
		tp->snd_cwnd = (__u32)PARAM.min_cwnd;
}

SEC("struct_ops")
void BPF_PROG(nv_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct clk_nv *ca = inet_csk_ca(sk);
	__u8 state = BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
	__u32 now, avg_rtt, rate, bytes_acked;
	__u64 rate64;

	log_pkts_acked(sk, sample);
	if (sample->rtt_us < 0)
		return;
	if (state != TCP_CA_Open && state != TCP_CA_Disorder)
		return;
	bytes_acked = tp->snd_una - ca->last_snd_una;
	ca->last_snd_una = tp->snd_una;
	if (sample->in_flight == 0)
		return;
	if (ca->last_rtt > 0) {
		avg_rtt = (((__u64)sample->rtt_us) * NV_RTT_FACTOR +
			   ((__u64)ca->last_rtt) * (256 - NV_RTT_FACTOR)) >> 8;
	} else {
		avg_rtt = sample->rtt_us;
		ca->min_rtt = avg_rtt << 1;
	}
	ca->last_rtt = avg_rtt;
	rate64 = ((__u64)sample->in_flight) * 80000;
	rate = (__u32)(rate64 / (avg_rtt ?: 1));
	if (ca->rtt_max_rate < rate)
		ca->rtt_max_rate = rate;
	if (ca->eval_call_cnt < 255)
		ca->eval_call_cnt++;
	if (avg_rtt < ca->min_rtt)
		ca->min_rtt = avg_rtt;
	if (avg_rtt < ca->min_rtt_new)
		ca->min_rtt_new = avg_rtt;
	now = jiffies32(sk);
	if ((__s32)(now - ca->min_rtt_reset_jiffies) >= 0) {
		__s32 rand = port_random_below(&ca->random, 256);

		ca->min_rtt = ca->min_rtt_new;
		ca->min_rtt_new = NV_INIT_RTT;
		ca->min_rtt_reset_jiffies = now + (((__s32)PARAM.reset_period * (384 + rand) * (__s32)HZ) >> 9);
		ca->nv_min_cwnd = max_u32(ca->nv_min_cwnd / 2, NV_MIN_CWND);
	}
	if ((__s32)(ca->rtt_start_seq - tp->snd_una) < 0)
		nv_decide(sk, ca, bytes_acked);
}

PORT_OPS(clk_nv, HOOK(nv, init) HOOK(nv, ssthresh) HOOK(nv, cong_avoid) HOOK(nv, set_state)
	 HOOK(nv, undo_cwnd) HOOK(nv, pkts_acked));
