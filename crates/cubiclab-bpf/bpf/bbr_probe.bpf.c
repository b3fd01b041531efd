/* The kernel's own bbr, recorded per ACK: one ring-buffer record per tcp_probe (the top of
 * tcp_rcv_established, before tcp_ack) of a socket whose congestion control is "bbr".
 *
 * A record holds the socket as the ACK finds it (so the state after ACK i is in record
 * i + 1): struct bbr whole (inet_csk_ca, read raw and decoded by the loader), the tcp_sock
 * counters tcp_rate.c keeps (delivered, lost, app_limited, delivered_mstamp, rate_*),
 * cwnd, the packets in flight, sk_pacing_rate and tcp_wstamp_ns. The rate sample that
 * tcp_ack hands to bbr_main is not stored by the kernel, so the record also carries what
 * builds it: the ACK's cumulative sequence and the transmit stamp (TCP_SKB_CB(skb)->tx and
 * the skb's departure time) of the retransmission-queue skb holding the last byte the ACK
 * covers, the newest packet tcp_rate_skb_delivered sees on an ACK without SACK blocks; and,
 * when the ACK carries SACK blocks, the stamp of the skb holding the last byte of its first
 * block (RFC 2018: the block of the segment that triggered the ACK), the newest packet a
 * SACK delivers unless that block was SACKed before.
 *
 * fentry and kprobes on bbr_main are refused by this kernel; tp_btf programs load. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>

#define BBR_PRIV 104 /* sizeof(struct bbr) == ICSK_CA_PRIV_SIZE */
#define RB_DEPTH 40  /* a red-black tree of 2^20 skbs is at most 40 deep */

struct bbr_ack {
	__u64 time_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC, the clock of tcp_clock_ns */
	__u64 tcp_mstamp;
	__u64 delivered_mstamp;
	__u64 wstamp_ns;
	__u64 pacing_rate;
	__u64 skb_mstamp_ns; /* 0: no skb of the queue holds ack_seq - 1 */
	__u64 tx_first_tx_mstamp;
	__u64 tx_delivered_mstamp;
	__u32 ack_seq;
	__u32 snd_una;
	__u32 snd_nxt;
	__u32 cwnd;
	__u32 ssthresh;
	__u32 packets_out;
	__u32 sacked_out;
	__u32 lost_out;
	__u32 retrans_out;
	__u32 delivered;
	__u32 lost;
	__u32 app_limited;
	__u32 srtt_us; /* << 3, as the kernel keeps it */
	__u32 mss;
	__u32 min_rtt_us;
	__u32 rack_rtt_us;
	__u32 rate_delivered;
	__u32 rate_interval_us;
	__u32 tx_delivered;
	__u32 skb_seq;
	__u32 skb_end_seq;
	__u16 sport;
	__u16 dport;
	__u8 ca_state;
	__u8 rate_app_limited;
	__u8 tx_app_limited;
	__u8 skb_sacked;
	__u8 pacing_shift;
	__u8 pad[7];
	__u8 bbr[BBR_PRIV];
	__u64 sack_skb_mstamp_ns; /* 0: no SACK block, or no skb holds its last byte */
	__u64 sack_tx_first_tx_mstamp;
	__u64 sack_tx_delivered_mstamp;
	__u32 sack_end;
	__u32 sack_tx_delivered;
	__u32 sack_skb_end_seq;
	__u8 sack_skb_sacked;
	__u8 sack_tx_app_limited;
	__u8 pad2[2];
	__u32 total_retrans;
	__u32 tsoffset;
	__u32 tsecr; /* the ACK's timestamp echo, 0 without the option */
	__u32 pad3;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} acks SEC(".maps");

/* Records the ring buffer had no room for. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* The skb of the retransmission queue (an rbtree by sequence, root node at `root`) with the
 * largest seq before `ack`: the one holding byte ack - 1. 0 when none. A global function, so
 * the verifier checks it once rather than at every call. */
__noinline __u64 newest_covered(__u64 root, __u32 ack)
{
	__u64 node = root, best = 0;
	__u32 i;

	for (i = 0; i < RB_DEPTH && node; i++) {
		__u64 skb = node - __builtin_offsetof(struct sk_buff, rbnode);
		__u32 seq = 0;

		bpf_probe_read_kernel(&seq, sizeof(seq),
				      (void *)(skb + __builtin_offsetof(struct sk_buff, cb) +
					       __builtin_offsetof(struct tcp_skb_cb, seq)));
		if ((__s32)(seq - ack) < 0) {
			best = skb;
			bpf_probe_read_kernel(&node, sizeof(node),
					      (void *)(node + __builtin_offsetof(struct rb_node, rb_right)));
		} else {
			bpf_probe_read_kernel(&node, sizeof(node),
					      (void *)(node + __builtin_offsetof(struct rb_node, rb_left)));
		}
	}
	return best;
}

/* The ACK's timestamp echo (host order), 0 without the option (NOP NOP TIMESTAMP first, see
 * first_sack_end). */
static __always_inline __u32 ts_echo(void *th)
{
	__u8 opts[12] = {};
	__u8 doff = 0;

	bpf_probe_read_kernel(&doff, 1, th + 12);
	if ((doff >> 4) * 4 < 20 + 12)
		return 0;
	bpf_probe_read_kernel(opts, sizeof(opts), th + 20);
	if (opts[2] != 8 || opts[3] != 10)
		return 0;
	return ((__u32)opts[8] << 24) | ((__u32)opts[9] << 16) | ((__u32)opts[10] << 8) | opts[11];
}

/* The end of the ACK's first SACK block (host order), 0 without one. Linux writes its options
 * 4-byte aligned in a fixed order (tcp_options_write): NOP NOP TIMESTAMP when timestamps are
 * on, then NOP NOP SACK; so the SACK option starts at byte 2, or 14 after a timestamp. A
 * general option walk makes the verifier explore every length sequence (over its 1M limit). */
static __always_inline __u32 first_sack_end(void *th)
{
	__u8 opts[24] = {};
	__u8 doff = 0;
	__u32 at;

	bpf_probe_read_kernel(&doff, 1, th + 12);
	if ((doff >> 4) * 4 < 20 + 12)
		return 0;
	bpf_probe_read_kernel(opts, sizeof(opts), th + 20);
	at = opts[2] == 8 ? 14 : 2;
	if (at == 14 && (doff >> 4) * 4 < 20 + 24)
		return 0;
	if (opts[at] != 5 || opts[at + 1] < 10)
		return 0;
	return ((__u32)opts[at + 6] << 24) | ((__u32)opts[at + 7] << 16) | ((__u32)opts[at + 8] << 8) | opts[at + 9];
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(bbr_probe, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	const struct tcp_congestion_ops *ops;
	char name[4] = {};
	struct tcp_skb_cb cb = {};
	struct bbr_ack *r;
	__u64 newest, root = 0;
	__u32 ack = 0;
	void *th;

	if (!tp)
		return 0;
	ops = tp->inet_conn.icsk_ca_ops;
	if (bpf_probe_read_kernel(name, sizeof(name), ops->name))
		return 0;
	if (name[0] != 'b' || name[1] != 'b' || name[2] != 'r' || name[3] != 0)
		return 0;
	r = bpf_ringbuf_reserve(&acks, sizeof(*r), 0);
	if (!r) {
		__u32 k = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &k);

		if (n)
			__sync_fetch_and_add(n, 1);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->time_ns = bpf_ktime_get_ns();
	/* tcp_rcv_established's skb->data is the TCP header. */
	th = BPF_CORE_READ(skb, data);
	bpf_probe_read_kernel(&ack, sizeof(ack), th + __builtin_offsetof(struct tcphdr, ack_seq));
	r->ack_seq = bpf_ntohl(ack);
	r->tcp_mstamp = tp->tcp_mstamp;
	r->delivered_mstamp = tp->delivered_mstamp;
	r->wstamp_ns = tp->tcp_wstamp_ns;
	r->pacing_rate = tp->inet_conn.icsk_inet.sk.sk_pacing_rate;
	r->pacing_shift = tp->inet_conn.icsk_inet.sk.sk_pacing_shift;
	r->snd_una = tp->snd_una;
	r->snd_nxt = tp->snd_nxt;
	r->cwnd = tp->snd_cwnd;
	r->ssthresh = tp->snd_ssthresh;
	r->packets_out = tp->packets_out;
	r->sacked_out = tp->sacked_out;
	r->lost_out = tp->lost_out;
	r->retrans_out = tp->retrans_out;
	r->delivered = tp->delivered;
	r->lost = tp->lost;
	r->app_limited = tp->app_limited;
	r->srtt_us = tp->srtt_us;
	r->mss = tp->mss_cache;
	r->min_rtt_us = tp->rtt_min.s[0].v;
	r->rack_rtt_us = tp->rack.rtt_us;
	r->rate_delivered = tp->rate_delivered;
	r->rate_interval_us = tp->rate_interval_us;
	r->rate_app_limited = BPF_CORE_READ_BITFIELD_PROBED(tp, rate_app_limited);
	r->ca_state = BPF_CORE_READ_BITFIELD_PROBED(&tp->inet_conn, icsk_ca_state);
	r->sport = tp->inet_conn.icsk_inet.sk.__sk_common.skc_num;
	r->dport = bpf_ntohs(tp->inet_conn.icsk_inet.sk.__sk_common.skc_dport);
	bpf_probe_read_kernel(r->bbr, BBR_PRIV, tp->inet_conn.icsk_ca_priv);
	bpf_probe_read_kernel(&root, sizeof(root), &tp->inet_conn.icsk_inet.sk.tcp_rtx_queue.rb_node);
	newest = newest_covered(root, r->ack_seq);
	if (newest) {
		bpf_probe_read_kernel(&cb, sizeof(cb), (void *)(newest + __builtin_offsetof(struct sk_buff, cb)));
		bpf_probe_read_kernel(&r->skb_mstamp_ns, sizeof(r->skb_mstamp_ns),
				      (void *)(newest + __builtin_offsetof(struct sk_buff, skb_mstamp_ns)));
		r->skb_seq = cb.seq;
		r->skb_end_seq = cb.end_seq;
		r->skb_sacked = cb.sacked;
		r->tx_app_limited = cb.tx.is_app_limited;
		r->tx_delivered = cb.tx.delivered;
		r->tx_first_tx_mstamp = cb.tx.first_tx_mstamp;
		r->tx_delivered_mstamp = cb.tx.delivered_mstamp;
	}
	r->total_retrans = tp->total_retrans;
	r->tsoffset = tp->tsoffset;
	r->tsecr = ts_echo(th);
	r->sack_end = first_sack_end(th);
	newest = r->sack_end ? newest_covered(root, r->sack_end) : 0;
	if (newest) {
		bpf_probe_read_kernel(&cb, sizeof(cb), (void *)(newest + __builtin_offsetof(struct sk_buff, cb)));
		bpf_probe_read_kernel(&r->sack_skb_mstamp_ns, sizeof(r->sack_skb_mstamp_ns),
				      (void *)(newest + __builtin_offsetof(struct sk_buff, skb_mstamp_ns)));
		r->sack_skb_end_seq = cb.end_seq;
		r->sack_skb_sacked = cb.sacked;
		r->sack_tx_app_limited = cb.tx.is_app_limited;
		r->sack_tx_delivered = cb.tx.delivered;
		r->sack_tx_first_tx_mstamp = cb.tx.first_tx_mstamp;
		r->sack_tx_delivered_mstamp = cb.tx.delivered_mstamp;
	}
	bpf_ringbuf_submit(r, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
