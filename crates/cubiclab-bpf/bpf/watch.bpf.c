/* The per-ACK check's witness inside the kernel, for the sockets whose congestion control
 * is one of this loader's instances (its name starts with WATCH_PREFIX):
 *
 * - at every tcp_probe (the top of tcp_rcv_established, before tcp_ack and before
 *   tcp_mstamp_refresh) one record with the socket's sequence numbers and the port log
 *   (common.h) as the previous ACK left it: whether the port's hooks ran for that ACK, its
 *   clock and its RTT sample;
 * - at every tcp_cong_state_set one record with the socket's clock (tp->tcp_mstamp), the
 *   time the port's hooks read on a retransmission timeout.
 *
 * The trace alone cannot give these exactly: its timestamps are taken a few microseconds
 * before the port reads its clock (a jiffy or millisecond boundary between the two moves
 * a time-dependent decision by one ACK), it has no RTT samples, and it cannot tell an ACK
 * on which the port's hooks did not run. */
#include "common.h"
#include <bpf/bpf_endian.h>

#define PREFIX_MAX 16

const volatile char WATCH_PREFIX[PREFIX_MAX] SEC(".rodata.watch") = {};
const volatile __u32 WATCH_PREFIX_LEN SEC(".rodata.watch") = 0;

enum { SEEN_PROBE = 0, SEEN_STATE = 1 };

struct seen {
	__u64 time_ns;		/* bpf_ktime_get_ns: CLOCK_MONOTONIC, the trace's mono clock */
	__u32 snd_una;
	__u32 snd_nxt;
	__u16 sport;
	__u16 dport;
	__u8 kind;		/* SEEN_PROBE or SEEN_STATE */
	__u8 ca_state;		/* SEEN_STATE: the new state */
	__u16 pad;
	__u32 mstamp_us;	/* SEEN_STATE: tp->tcp_mstamp, low 32 bits */
	__u32 snd_cwnd_cnt;
	struct port_log log;	/* SEEN_PROBE */
	__u32 state[6];		/* SEEN_PROBE: the port's first 24 bytes of state (diagnosis) */
	__u32 tsoffset;		/* tp->tsoffset: the kernel takes it off every rcv_tsecr */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} seen SEC(".maps");

/* Records the ring buffer had no room for: a full buffer must not pass for a skipped ACK. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* The socket if its congestion control is one of ours, else NULL. */
static __always_inline struct tcp_sock *watched(struct sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	char name[PREFIX_MAX] = {};
	__u32 i;

	if (!tp)
		return NULL;
	if (bpf_probe_read_kernel(name, sizeof(name), tp->inet_conn.icsk_ca_ops->name))
		return NULL;
	for (i = 0; i < PREFIX_MAX; i++) {
		if (i >= WATCH_PREFIX_LEN)
			break;
		if (name[i] != WATCH_PREFIX[i])
			return NULL;
	}
	return tp;
}

static __always_inline struct seen *record(struct tcp_sock *tp, __u8 kind)
{
	struct seen *r = bpf_ringbuf_reserve(&seen, sizeof(*r), 0);

	if (!r) {
		__u32 k = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &k);

		if (n)
			__sync_fetch_and_add(n, 1);
		return NULL;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->time_ns = bpf_ktime_get_ns();
	r->snd_una = tp->snd_una;
	r->snd_nxt = tp->snd_nxt;
	r->sport = tp->inet_conn.icsk_inet.sk.__sk_common.skc_num;
	r->dport = bpf_ntohs(tp->inet_conn.icsk_inet.sk.__sk_common.skc_dport);
	r->kind = kind;
	r->mstamp_us = (__u32)tp->tcp_mstamp;
	r->snd_cwnd_cnt = tp->snd_cwnd_cnt;
	r->tsoffset = tp->tsoffset;
	return r;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(watch_probe, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = watched(sk);
	struct seen *r;

	if (!tp)
		return 0;
	r = record(tp, SEEN_PROBE);
	if (!r)
		return 0;
	bpf_probe_read_kernel(&r->log, sizeof(r->log),
			      (char *)tp->inet_conn.icsk_ca_priv + PORT_STATE_MAX);
	bpf_probe_read_kernel(&r->state, sizeof(r->state), tp->inet_conn.icsk_ca_priv);
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("tp_btf/tcp_cong_state_set")
int BPF_PROG(watch_state, struct sock *sk, const __u8 ca_state)
{
	struct tcp_sock *tp = watched(sk);
	struct seen *r;

	if (!tp)
		return 0;
	r = record(tp, SEEN_STATE);
	if (!r)
		return 0;
	r->ca_state = ca_state;
	bpf_ringbuf_submit(r, 0);
	return 0;
}
