/* A witness of which ACKs the kernel ran BPF for: one ring-buffer record per tcp_probe
 * (the top of tcp_rcv_established, before tcp_ack) of a socket whose congestion control
 * is one of this loader's instances (its name starts with WATCH_PREFIX).
 *
 * Why: on this machine the kernel sometimes processes an ACK without running any BPF
 * program, the port's hooks included (measured: every ACK this program saw got exactly
 * one pkts_acked call from the port; every ACK it missed got none, snd_una still moving).
 * The per-ACK check must then know which ACKs the port never saw. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

#define PREFIX_MAX 16

const volatile char WATCH_PREFIX[PREFIX_MAX] SEC(".rodata.watch") = {};
const volatile __u32 WATCH_PREFIX_LEN SEC(".rodata.watch") = 0;

struct seen {
	__u64 time_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC, the trace's mono clock */
	__u32 snd_una;
	__u32 snd_nxt;
	__u16 sport;
	__u16 dport;
	__u32 pad;
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

SEC("tp_btf/tcp_probe")
int BPF_PROG(watch_probe, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	const struct tcp_congestion_ops *ops;
	char name[PREFIX_MAX] = {};
	struct seen *r;
	__u32 i;

	if (!tp)
		return 0;
	ops = tp->inet_conn.icsk_ca_ops;
	if (bpf_probe_read_kernel(name, sizeof(name), ops->name))
		return 0;
	for (i = 0; i < PREFIX_MAX; i++) {
		if (i >= WATCH_PREFIX_LEN)
			break;
		if (name[i] != WATCH_PREFIX[i])
			return 0;
	}
	r = bpf_ringbuf_reserve(&seen, sizeof(*r), 0);
	if (!r) {
		__u32 k = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &k);

		if (n)
			__sync_fetch_and_add(n, 1);
		return 0;
	}
	r->time_ns = bpf_ktime_get_ns();
	r->snd_una = tp->snd_una;
	r->snd_nxt = tp->snd_nxt;
	r->sport = tp->inet_conn.icsk_inet.sk.__sk_common.skc_num;
	r->dport = bpf_ntohs(tp->inet_conn.icsk_inet.sk.__sk_common.skc_dport);
	r->pad = 0;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
