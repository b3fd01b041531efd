/* What every cubiclab BPF port shares: the per-instance parameters, the kernel's view of
 * the socket, its clocks, and the few tcp_cong.c helpers the ports call.
 *
 * Parameters: the loader writes one value per parameter of the library algorithm of the
 * same name, in the order of its ParamSpec table (cubiclab-cc), into PARAM[] before the
 * object is loaded; integers as they are, real numbers in millionths (PARAM_MICRO). The
 * section is read-only once loaded, so the verifier sees constants. Each load is its own
 * instance (own maps, own registered name): two flows of one run can differ.
 */
#ifndef CUBICLAB_BPF_COMMON_H
#define CUBICLAB_BPF_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define MAX_PARAMS 16
/* Real-valued parameters are passed in millionths. */
#define PARAM_MICRO 1000000ULL

const volatile __u64 PARAM[MAX_PARAMS] SEC(".rodata.params") = {};

extern unsigned long CONFIG_HZ __kconfig;
#define HZ ((__u32)CONFIG_HZ)
#define USEC_PER_SEC 1000000U

/* The kernel's tcp_cong.c helpers, called as kfuncs (the library's tcp.rs mirrors them). */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

#define TCP_CA_Open 0
#define TCP_CA_Loss 4
#define CA_EVENT_TX_START 0

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* tcp_jiffies32. */
static __always_inline __u32 jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

/* usecs_to_jiffies() for an HZ that divides 10^6 (100, 250, 1000: the loader refuses other
 * kernels), rounding up, as include/linux/jiffies.h does. */
static __always_inline __u32 usecs_to_jiffies(__u32 u)
{
	__u32 per = USEC_PER_SEC / HZ;

	return (u + per - 1) / per;
}

static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* include/net/tcp.h tcp_is_cwnd_limited() of 6.x: limited this round, or in slow start
 * below twice the most segments outstanding. */
static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

/* fls64: 1-based index of the highest set bit, 0 for 0 (BPF has no count-leading-zeros). */
static __always_inline __u32 fls64(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) { n += 1; x >>= 1; }
	return n + (__u32)x;
}

static __always_inline __u32 max_u32(__u32 a, __u32 b)
{
	return a > b ? a : b;
}

static __always_inline __u32 min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;
}

char _license[] SEC("license") = "GPL";

#endif
