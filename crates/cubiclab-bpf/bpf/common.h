/* What every cubiclab BPF object shares (the ports and the tracing programs): the kernel's
 * view of the socket, its clocks, the port log, and the few tcp_cong.c helpers the ports
 * call. What only the ports share is in port.h. */
#ifndef CUBICLAB_BPF_COMMON_H
#define CUBICLAB_BPF_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

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

/* What the per-ACK check needs to replay a port exactly, kept by every port in the last 24
 * bytes of its per-socket area (after its own state) and read by the witness
 * (watch.bpf.c) at the next tcp_probe: whether the port's hooks ran for an ACK, and the
 * inputs of the ACK the trace cannot give exactly, its clock, its RTT sample and the
 * sample's in_flight (6.x: bytes delivered since the newest delivered segment was sent). */
struct port_log {
	__u32 clock_us;		/* clock_us() at the last pkts_acked, low 32 bits */
	__s32 rtt_us;		/* that call's sample->rtt_us */
	__u32 acked_calls;	/* pkts_acked calls so far */
	__u32 cong_avoid_calls;	/* cong_avoid calls so far */
	__u32 in_flight;	/* the last pkts_acked call's sample->in_flight, bytes */
	__u32 undo_calls;	/* undo_cwnd calls so far */
};

#define CA_PRIV_SIZE sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv)
/* The room a port's own per-socket state may take. */
#define PORT_STATE_MAX (CA_PRIV_SIZE - sizeof(struct port_log))
#define PORT_STATE_FITS(type) _Static_assert(sizeof(type) <= PORT_STATE_MAX, #type " overlaps the port log")

static __always_inline struct port_log *port_log(const struct sock *sk)
{
	return (struct port_log *)((char *)inet_csk_ca(sk) + PORT_STATE_MAX);
}

/* The port's clock, in microseconds of CLOCK_MONOTONIC: tp->tcp_mstamp, which the kernel
 * refreshes once at the top of every ACK (tcp_rcv_established, right after tcp_probe) and
 * of every retransmission timer, so every hook of one ACK reads the same time, and the
 * check can give the replay exactly that time (the port log's clock_us). */
static __always_inline __u64 clock_us(const struct sock *sk)
{
	return tcp_sk(sk)->tcp_mstamp;
}

/* tcp_jiffies32 as the library computes it from the clock (clock.rs jiffies32):
 * floor(t * HZ / 10^6) modulo 2^32, the kernel's jiffies rate and resolution. The kernel's
 * own jiffies counter is not used: it advances in the tick handler, which a busy virtual
 * CPU can run late, and may advance between two hooks of one ACK. */
static __always_inline __u32 jiffies32(const struct sock *sk)
{
	__u64 us = clock_us(sk);

	return (__u32)(us / USEC_PER_SEC * HZ + us % USEC_PER_SEC * HZ / USEC_PER_SEC);
}

/* Every port's pkts_acked starts with this (ports whose algorithm has no pkts_acked get
 * one that only logs). */
static __always_inline void log_pkts_acked(const struct sock *sk, const struct ack_sample *sample)
{
	struct port_log *log = port_log(sk);

	log->clock_us = (__u32)clock_us(sk);
	log->rtt_us = sample->rtt_us;
	log->in_flight = sample->in_flight;
	log->acked_calls++;
}

/* Every port's undo_cwnd starts with this. */
static __always_inline void log_undo(const struct sock *sk)
{
	port_log(sk)->undo_calls++;
}

/* Every port's cong_avoid starts with this. */
static __always_inline void log_cong_avoid(const struct sock *sk)
{
	port_log(sk)->cong_avoid_calls++;
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
