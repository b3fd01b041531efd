/* What every cubiclab port shares (the tracing programs do not include it): its parameters
 * by name, and the pieces of tcp_congestion_ops the ports repeat.
 *
 * Parameters: params.h is generated per port by build.rs from the library algorithm's
 * ParamSpec table (cubiclab-cc): struct clk_params has one __u64 member per parameter,
 * named as in the table, so a port reads PARAM.beta, never a position. The loader writes
 * each value at the offset of the member of that name, which it finds in the object's BTF
 * (src/ports.rs); integers as they are, real numbers in millionths. The section is
 * read-only once loaded, so the verifier sees constants. Each load is its own instance
 * (own maps, own registered name): two flows of one run can differ. */
#ifndef CUBICLAB_BPF_PORT_H
#define CUBICLAB_BPF_PORT_H

#include "common.h"
#include "params.h"

#ifdef CLK_HAS_PARAMS
const volatile struct clk_params PARAM SEC(".rodata.params") = {};
/* One member of the port's tcp_congestion_ops: the program named <prefix>_<hook>. */
#define HOOK(prefix, hook) .hook = (void *)prefix##_##hook,

/* The port's tcp_congestion_ops from its HOOK()s. The name is a placeholder ("clk_...")
 * that the loader replaces by the instance's registered name. */
#define PORT_OPS(var, hooks)                                                \
	SEC(".struct_ops.link")                                             \
	struct tcp_congestion_ops var = { hooks .name = "clk_placeholder" }

#endif

extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* The opening of every cong_avoid: count the call, and go on only when the window limited
 * the sender (tcp_is_cwnd_limited). */
static __always_inline bool cong_avoid_begins(struct sock *sk)
{
	log_cong_avoid(sk);
	return tcp_is_cwnd_limited(sk);
}

/* The opening of a 6.x module's cong_avoid (cubic_frame.rs SlowStart::Segments): the
 * above, then tcp_slow_start while cwnd < ssthresh; returns the segments left for
 * congestion avoidance (0: nothing more to do). */
static __always_inline __u32 slow_start_first(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!cong_avoid_begins(sk))
		return 0;
	if (tcp_in_slow_start(tp))
		acked = tcp_slow_start(tp, acked);
	return acked;
}

/* tcp_reno_cong_avoid, for a port whose algorithm falls back on it (after its own log). */
static __always_inline void reno_cong_avoid(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

/* One segment more unless the window is at its clamp (the 2.6.2x kernels' snd_cwnd++). */
static __always_inline void add_segment(struct tcp_sock *tp)
{
	if (tp->snd_cwnd < tp->snd_cwnd_clamp)
		tp->snd_cwnd++;
}

/* The 2.6.2x per-ACK increase (and seed 000 Algorithm 1's): when due, one segment and a
 * fresh count, else count this ACK (cubic_frame.rs count_ack). */
static __always_inline void count_ack(struct tcp_sock *tp, bool due)
{
	if (due) {
		add_segment(tp);
		tp->snd_cwnd_cnt = 0;
	} else {
		tp->snd_cwnd_cnt++;
	}
}

/* The library's seeded stand-in for the kernel's random numbers (cubiclab-cc random.rs
 * KernelRandom): xorshift64* from its default state, the draw reduced to 0..n by the
 * kernel's multiply-shift. A port draws the library's default stream, so the per-ACK check
 * replays the same draws (the replay unseeded); the kernel's own entropy could not be. */
#define PORT_RANDOM_DEFAULT 0x9E3779B97F4A7C15ULL

static __always_inline __u32 port_random_u32(__u64 *state)
{
	__u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (x * 0x2545F4914F6CDD1DULL) >> 32;
}

static __always_inline __u32 port_random_below(__u64 *state, __u32 n)
{
	return ((__u64)port_random_u32(state) * n) >> 32;
}

/* undo_cwnd as tcp_reno_undo_cwnd, logged, for a port whose algorithm has no undo rule. */
#define PORT_RENO_UNDO(prefix)                                              \
	SEC("struct_ops")                                                   \
	__u32 BPF_PROG(prefix##_undo_cwnd, struct sock *sk)                 \
	{                                                                   \
		log_undo(sk);                                               \
		return tcp_reno_undo_cwnd(sk);                              \
	}

/* pkts_acked that only keeps the port log, for a port whose algorithm has none. */
#define PORT_LOG_ONLY_ACKED(prefix)                                         \
	SEC("struct_ops")                                                   \
	void BPF_PROG(prefix##_pkts_acked, struct sock *sk, const struct ack_sample *sample) \
	{                                                                   \
		log_pkts_acked(sk, sample);                                 \
	}

/* One member of the port's tcp_congestion_ops: the program named <prefix>_<hook>. */
#define HOOK(prefix, hook) .hook = (void *)prefix##_##hook,

/* The port's tcp_congestion_ops from its HOOK()s. The name is a placeholder ("clk_...")
 * that the loader replaces by the instance's registered name. */
#define PORT_OPS(var, hooks)                                                \
	SEC(".struct_ops.link")                                             \
	struct tcp_congestion_ops var = { hooks .name = "clk_placeholder" }

#endif
