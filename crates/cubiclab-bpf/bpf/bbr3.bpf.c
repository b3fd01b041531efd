/* BBRv3 (cubiclab-cc's bbr3.rs: google/bbr v3 net/ipv4/tcp_bbr.c at 001a430b) as BPF
 * struct_ops on a mainline kernel: cong_control reads the kernel's struct rate_sample and
 * writes snd_cwnd and sk_pacing_rate. It follows bbr3.rs function by function (same names
 * without the bbr_ prefix; the comments there give the source's reasons).
 *
 * What mainline lacks and how the port makes up for it:
 * - v3's rate sample fields tx_in_flight and lost (packets in flight just after the newest
 *   delivered packet was sent, and packets marked lost since) are not in mainline's
 *   rate_sample. The port keeps, per ACK, tp->delivered, tp->lost and
 *   rs->prior_in_flight as the ACK found them (struct history). The newest delivered
 *   packet was sent while tp->delivered was rs->prior_delivered, so it left after the last
 *   ACK that found delivered at that value and before the next: lost = tp->lost less the
 *   lost count that ACK found (exact unless a timer marked losses in that gap), and
 *   tx_in_flight = that ACK's prior_in_flight, the flight just before the next ACK (an
 *   upper bound: it counts the packets sent after the newest one in that gap, 0 to a few).
 *   Without such an ACK in the history (older than HIST ACKs) the sample's own
 *   prior_in_flight and losses stand in (counted in the hook log's tx_found).
 *   rs->delivered_ce is mainline's own (6.18 has it).
 * - v3's skb_marked_lost hook does not exist: its first half runs at the start of
 *   cong_control for the losses the ACK marked (as bbr3.rs models it).
 * - v3's tso_segs hook does not exist; the kernel's tcp_tso_autosize runs with the
 *   default min_tso_segs (2), which bbr3.rs assumes too.
 * - The random probe wait: bbr3.rs's KernelRandom (xorshift64*, its default seed), so the
 *   replay draws the same numbers; every draw is in the hook log (probe_wait_us,
 *   rounds_since_probe).
 *
 * - ECN: the loader refuses ecn_low = 1 (ports.rs NOT_PORTED): v3 reacts to CE only on a
 *   TCP_ECN_LOW route with a receiver that echoes each CE exactly, which this port does
 *   not set up (it negotiates no ECN); with ecn_low = 0 it reads no CE, as bbr3.rs.
 *
 * The state (about 6 kB with the history) lives in a socket-storage map: icsk_ca_priv
 * (104 bytes on 6.18) keeps only the port log.
 *
 * With its log on (HOOKLOG_ON), every hook writes one record to the ring buffer `hooklog` (struct bbr3_rec): the inputs
 * it read and what it wrote, so that the per-ACK check can replay bbr3.rs on exactly these
 * inputs (cubiclab-bpf replay-bbr3). */
#include "port.h"

#define BW_SCALE 24
#define BW_UNIT (1ULL << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT (1U << BBR_SCALE)
#define GSO_LEGACY_MAX_SIZE 65536ULL
#define TSO_RTT_SHIFT 9
#define TSO_MAX_BYTES (65536ULL - 1 - 320)
#define TCP_MIN_TSO_SEGS 2
#define PACING_MARGIN_PERCENT 1
#define STARTUP_PACING_GAIN (BBR_UNIT * 277 / 100 + 1)
#define STARTUP_CWND_GAIN (BBR_UNIT * 2)
#define DRAIN_GAIN (BBR_UNIT * 1000 / 2885)
#define CWND_GAIN (BBR_UNIT * 2)
#define PROBE_RTT_CWND_GAIN (BBR_UNIT / 2)
#define CWND_MIN_TARGET 4
#define FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define FULL_BW_CNT 3
#define MIN_RTT_WIN_SEC 10
#define EXTRA_ACKED_GAIN BBR_UNIT
#define ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
#define EXTRA_ACKED_MAX_US (100ULL * 1000)
#define EXTRA_ACKED_WIN_RTTS 5
#define TCP_INFINITE_SSTHRESH 0x7fffffffU
#define U32_MAX 0xffffffffU
#define TCP_CA_Recovery 3
#define FLAG_ECE 0x40
#define HIST 512 /* ACKs of history: more than a round's ACKs on the check's path */

enum { STARTUP, DRAIN, PROBE_BW, PROBE_RTT };
/* bbr3.rs Phase (vmlinux.h has names UP and DOWN of its own) */
enum { PH_UP, PH_DOWN, PH_CRUISE, PH_REFILL };
enum { ACK_INIT, ACK_REFILLING, ACK_PROBE_STARTING, ACK_PROBE_FEEDBACK, ACK_PROBE_STOPPING };

#define P(name) ((__u32)PARAM.name)

struct history {
	__u32 delivered;	/* tp->delivered as the ACK found it */
	__u32 lost;		/* tp->lost likewise */
	__u32 in_flight;	/* rs->prior_in_flight */
};

struct bbr3 {
	__u64 rng;
	__u64 cycle_mstamp;
	__u64 ack_epoch_mstamp;
	__u32 min_rtt_us, min_rtt_stamp, probe_rtt_done_stamp, probe_rtt_min_us, probe_rtt_min_stamp;
	__u32 next_rtt_delivered, mode, prev_ca_state, round_start, bw_probe_up_rounds;
	__u32 try_fast_path, idle_restart, probe_rtt_round_done, init_cwnd, pacing_gain, cwnd_gain;
	__u32 full_bw_reached, full_bw_cnt, cycle_idx, has_seen_rtt, prior_cwnd, full_bw;
	__u32 extra_acked[2], ack_epoch_acked, extra_acked_win_rtts, extra_acked_win_idx;
	__u32 full_bw_now, startup_ecn_rounds, loss_in_cycle, ecn_in_cycle, loss_round_delivered;
	__u32 undo_bw_lo, undo_inflight_lo, undo_inflight_hi, bw_latest, bw_lo, bw_hi[2];
	__u32 inflight_latest, inflight_lo, inflight_hi, bw_probe_up_cnt, bw_probe_up_acks;
	__u32 probe_wait_us, ecn_eligible, ecn_alpha, bw_probe_samples, prev_probe_too_high;
	__u32 stopped_risky_probe, rounds_since_probe, loss_round_start, loss_in_round, ecn_in_round;
	__u32 ack_phase, loss_events_in_round, initialized, alpha_last_delivered, alpha_last_delivered_ce;
	__u32 hist_n;
	struct history hist[HIST];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bbr3);
} bbr3_state SEC(".maps");

/* One hook call. Every member is a __u64 read by name from the object's BTF. */
enum { K_CONG_CONTROL, K_INIT, K_SSTHRESH, K_SET_STATE, K_CWND_EVENT, K_UNDO };
struct bbr3_rec {
	__u64 kind, arg, sk, now_us, ret;	/* sk: the socket's address, its key in the log */
	__u64 cwnd, ssthresh, cwnd_clamp, mss, srtt_us, min_rtt_us, prior_cwnd;
	__u64 delivered, delivered_ce, lost, in_flight, is_cwnd_limited, ca_state, app_limited;
	__u64 delivered_mstamp, wstamp_ns, pacing_rate, max_pacing_rate, pacing_shift;
	__u64 rs_prior_delivered, rs_delivered, rs_interval_us, rs_rtt_us, rs_losses, rs_acked_sacked;
	__u64 rs_prior_in_flight, rs_is_app_limited, rs_is_ack_delayed, rs_delivered_ce, rs_is_ece;
	__u64 rs_tx_in_flight, rs_lost, tx_found, rs_prior_mstamp;
	__u64 out_cwnd, out_ssthresh, out_pacing_rate, out_app_limited;
	__u64 mode, cycle_idx, inflight_hi, inflight_lo, bw, probe_wait_us, rounds_since_probe;
};

/* Whether the hooks log at all: the loader sets it for `load --hooklog` (else every
 * hook's record work is dead code the verifier removes). */
const volatile __u32 HOOKLOG_ON SEC(".rodata.hooklog") = 0;

/* Keeps struct bbr3_rec in the object's BTF, where the replay finds its members (clang
 * emits no BTF for a type only inlined code uses). Never written. */
struct bbr3_rec bbr3_rec_layout;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} hooklog SEC(".maps");

/* Records the ring buffer had no room for. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hooklog_lost SEC(".maps");

static __always_inline struct bbr3 *bbr_of(struct sock *sk)
{
	return bpf_sk_storage_get(&bbr3_state, sk, NULL, 0);
}

static __always_inline __u32 packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline bool before32(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline bool after32(__u32 a, __u32 b)
{
	return (__s32)(b - a) < 0;
}

/* tcp_stamp_us_delta: max(t1 - t0, 0). */
static __always_inline __s64 stamp_us_delta(__u64 t1, __u64 t0)
{
	__s64 d = (__s64)(t1 - t0);

	return d > 0 ? d : 0;
}

/* random.rs KernelRandom::below (xorshift64*), from its default seed. */
static __always_inline __u32 random_below(struct bbr3 *b, __u32 n)
{
	__u64 s = b->rng, r;

	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	b->rng = s;
	r = (s * 0x2545F4914F6CDD1DULL) >> 32;
	return (__u32)(((__u64)(__u32)r * n) >> 32);
}

static __always_inline __u32 msecs_to_jiffies(__u32 ms)
{
	return (__u32)(((__u64)ms * HZ + 999) / 1000);
}

static __always_inline __u32 max_bw(const struct bbr3 *b)
{
	return max_u32(b->bw_hi[0], b->bw_hi[1]);
}

static __always_inline __u32 bbr_bw(const struct bbr3 *b)
{
	return min_u32(max_bw(b), b->bw_lo);
}

static __always_inline __u64 bw_to_pacing_rate(struct sock *sk, __u32 bw, __u32 gain)
{
	__u64 rate = bw;

	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - PACING_MARGIN_PERCENT);
	rate >>= BW_SCALE;
	if (rate < 1)
		rate = 1;
	if (rate > sk->sk_max_pacing_rate)
		rate = sk->sk_max_pacing_rate;
	return rate;
}

static __always_inline void init_pacing_rate_from_rtt(struct sock *sk, struct bbr3 *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 srtt = tp->srtt_us >> 3, rtt_us = 1000;
	__u64 bw;

	if (srtt) {
		b->has_seen_rtt = 1;
		rtt_us = max_u32(srtt, 1);
	}
	bw = (__u64)tp->snd_cwnd * BW_UNIT / rtt_us;
	sk->sk_pacing_rate = bw_to_pacing_rate(sk, (__u32)bw, STARTUP_PACING_GAIN);
}

static __always_inline void set_pacing_rate(struct sock *sk, struct bbr3 *b, __u32 bw, __u32 gain)
{
	__u64 rate = bw_to_pacing_rate(sk, bw, gain);

	if (!b->has_seen_rtt && (tcp_sk(sk)->srtt_us >> 3))
		init_pacing_rate_from_rtt(sk, b);
	if (b->full_bw_reached || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

static __always_inline __u32 tso_segs_goal(struct sock *sk, const struct bbr3 *b)
{
	__u64 bytes = sk->sk_pacing_rate >> sk->sk_pacing_shift;
	__u32 r = b->min_rtt_us >> TSO_RTT_SHIFT, mss = max_u32(tcp_sk(sk)->mss_cache, 1);

	if (r < 32)
		bytes += GSO_LEGACY_MAX_SIZE >> r;
	if (bytes > TSO_MAX_BYTES)
		bytes = TSO_MAX_BYTES;
	return max_u32((__u32)bytes / mss, TCP_MIN_TSO_SEGS);
}

static __always_inline void save_cwnd(struct sock *sk, struct bbr3 *b)
{
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;

	if (b->prev_ca_state < TCP_CA_Recovery && b->mode != PROBE_RTT)
		b->prior_cwnd = cwnd;
	else
		b->prior_cwnd = max_u32(b->prior_cwnd, cwnd);
}

static __always_inline __u32 bdp(const struct bbr3 *b, __u32 bw, __u32 gain)
{
	__u64 w;

	if (b->min_rtt_us == U32_MAX)
		return b->init_cwnd;
	w = (__u64)bw * b->min_rtt_us;
	return (__u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

static __always_inline __u32 quantization_budget(struct sock *sk, const struct bbr3 *b, __u32 cwnd)
{
	cwnd = max_u32(cwnd, 3 * tso_segs_goal(sk, b));
	cwnd = max_u32(cwnd, CWND_MIN_TARGET);
	if (b->mode == PROBE_BW && b->cycle_idx == PH_UP)
		cwnd += 2;
	return cwnd;
}

static __always_inline __u32 bbr_inflight(struct sock *sk, const struct bbr3 *b, __u32 bw, __u32 gain)
{
	return quantization_budget(sk, b, bdp(b, bw, gain));
}

static __always_inline __u32 packets_in_net_at_edt(struct sock *sk, const struct bbr3 *b, __u32 inflight_now)
{
	__u64 now_ns = clock_us(sk) * 1000, edt_ns = tcp_sk(sk)->tcp_wstamp_ns;
	__u64 interval_us;
	__u32 interval_delivered, at_edt = inflight_now;

	if (edt_ns < now_ns)
		edt_ns = now_ns;
	interval_us = (edt_ns - now_ns) / 1000;
	interval_delivered = (__u32)(((__u64)bbr_bw(b) * interval_us) >> BW_SCALE);
	if (b->pacing_gain > BBR_UNIT)
		at_edt += tso_segs_goal(sk, b);
	return at_edt > interval_delivered ? at_edt - interval_delivered : 0;
}

static __always_inline __u32 probe_rtt_cwnd(const struct bbr3 *b)
{
	return max_u32(CWND_MIN_TARGET, bdp(b, bbr_bw(b), PROBE_RTT_CWND_GAIN));
}

/* ack_aggregation.rs AckAggregation::cwnd. */
static __always_inline __u32 ack_aggregation_cwnd(const struct bbr3 *b)
{
	__u32 max_aggr = (__u32)((__u64)bbr_bw(b) * EXTRA_ACKED_MAX_US / BW_UNIT);
	__u32 aggr = (EXTRA_ACKED_GAIN * max_u32(b->extra_acked[0], b->extra_acked[1])) >> BBR_SCALE;

	return min_u32(aggr, max_aggr);
}

static __always_inline void set_cwnd(struct sock *sk, struct bbr3 *b, __u32 acked, __u32 bw, __u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd, target;

	if (acked) {
		target = bdp(b, bw, gain);
		target += ack_aggregation_cwnd(b);
		target = quantization_budget(sk, b, target);
		b->try_fast_path = 0;
		if (b->full_bw_reached) {
			cwnd += acked;
			if (cwnd >= target) {
				cwnd = target;
				b->try_fast_path = 1;
			}
		} else if (cwnd < target || cwnd < 2 * b->init_cwnd) {
			cwnd += acked;
		} else {
			b->try_fast_path = 1;
		}
		cwnd = max_u32(cwnd, CWND_MIN_TARGET);
	}
	tp->snd_cwnd = min_u32(cwnd, tp->snd_cwnd_clamp);
	if (b->mode == PROBE_RTT)
		tp->snd_cwnd = min_u32(tp->snd_cwnd, probe_rtt_cwnd(b));
}

static __always_inline void update_round_start(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs)
{
	b->round_start = 0;
	if (rs->interval_us > 0 && !before32(rs->prior_delivered, b->next_rtt_delivered)) {
		b->next_rtt_delivered = tcp_sk(sk)->delivered;
		b->round_start = 1;
	}
}

static __always_inline __u32 bw_sample(const struct rate_sample *rs)
{
	__u64 interval = (__u64)rs->interval_us;

	if (rs->interval_us <= 0 || rs->delivered < 0)
		return 0;
	return (__u32)(((__u64)rs->delivered * BW_UNIT + interval - 1) / interval);
}

static __always_inline void reset_lower_bounds(struct bbr3 *b)
{
	b->bw_lo = U32_MAX;
	b->inflight_lo = U32_MAX;
}

static __always_inline void reset_congestion_signals(struct bbr3 *b)
{
	b->loss_in_round = 0;
	b->ecn_in_round = 0;
	b->loss_in_cycle = 0;
	b->ecn_in_cycle = 0;
	b->bw_latest = 0;
	b->inflight_latest = 0;
}

static __always_inline void reset_full_bw(struct bbr3 *b)
{
	b->full_bw = 0;
	b->full_bw_cnt = 0;
	b->full_bw_now = 0;
}

static __always_inline void set_cycle_idx(struct bbr3 *b, __u32 phase)
{
	b->cycle_idx = phase;
	b->try_fast_path = 0;
}

static __always_inline void pick_probe_wait(struct bbr3 *b)
{
	b->rounds_since_probe = random_below(b, P(bw_probe_rand_rounds));
	b->probe_wait_us = P(bw_probe_base_us) + random_below(b, P(bw_probe_rand_us));
}

static __always_inline void start_bw_probe_refill(struct sock *sk, struct bbr3 *b, __u32 up_rounds)
{
	reset_lower_bounds(b);
	b->bw_probe_up_rounds = up_rounds & 0x1F;
	b->bw_probe_up_acks = 0;
	b->stopped_risky_probe = 0;
	b->ack_phase = ACK_REFILLING;
	b->next_rtt_delivered = tcp_sk(sk)->delivered;
	set_cycle_idx(b, PH_REFILL);
}

static __always_inline void raise_inflight_hi_slope(struct sock *sk, struct bbr3 *b)
{
	__u32 growth_this_round = 1U << (b->bw_probe_up_rounds & 31);

	b->bw_probe_up_rounds = min_u32(b->bw_probe_up_rounds + 1, 30);
	b->bw_probe_up_cnt = max_u32(tcp_sk(sk)->snd_cwnd / growth_this_round, 1);
}

static __always_inline void start_bw_probe_up(struct sock *sk, struct bbr3 *b, __u32 sample_bw)
{
	b->ack_phase = ACK_PROBE_STARTING;
	b->next_rtt_delivered = tcp_sk(sk)->delivered;
	b->cycle_mstamp = clock_us(sk);
	reset_full_bw(b);
	b->full_bw = sample_bw;
	set_cycle_idx(b, PH_UP);
	raise_inflight_hi_slope(sk, b);
}

static __always_inline void start_bw_probe_down(struct sock *sk, struct bbr3 *b)
{
	reset_congestion_signals(b);
	b->bw_probe_up_cnt = U32_MAX;
	pick_probe_wait(b);
	b->cycle_mstamp = clock_us(sk);
	b->ack_phase = ACK_PROBE_STOPPING;
	b->next_rtt_delivered = tcp_sk(sk)->delivered;
	set_cycle_idx(b, PH_DOWN);
}

static __always_inline void start_bw_probe_cruise(struct bbr3 *b)
{
	if (b->inflight_lo != U32_MAX)
		b->inflight_lo = min_u32(b->inflight_lo, b->inflight_hi);
	set_cycle_idx(b, PH_CRUISE);
}

static __always_inline void exit_probe_rtt(struct sock *sk, struct bbr3 *b)
{
	reset_lower_bounds(b);
	if (b->full_bw_reached) {
		b->mode = PROBE_BW;
		start_bw_probe_down(sk, b);
		start_bw_probe_cruise(b);
	} else {
		b->mode = STARTUP;
	}
}

static __always_inline void check_probe_rtt_done(struct sock *sk, struct bbr3 *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 j = jiffies32(sk);

	if (!(b->probe_rtt_done_stamp && after32(j, b->probe_rtt_done_stamp)))
		return;
	b->probe_rtt_min_stamp = j;
	tp->snd_cwnd = max_u32(tp->snd_cwnd, b->prior_cwnd);
	exit_probe_rtt(sk, b);
}

/* The value PROBE_RTT gives tp->app_limited (TcpState::set_app_limited), written back at
 * the end of cong_control (6.18's bpf_tcp_ca lets a port write it) and logged. */
static __always_inline __u32 app_limited_mark(const struct tcp_sock *tp)
{
	__u32 n = tp->delivered + packets_in_flight(tp);

	return n ? n : 1;
}

static __always_inline void update_min_rtt(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs,
					   __u32 *app_limited)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 j = jiffies32(sk), expire;
	bool probe_rtt_expired, min_rtt_expired;

	expire = b->probe_rtt_min_stamp + msecs_to_jiffies(P(probe_rtt_win_ms));
	probe_rtt_expired = after32(j, expire);
	if (rs->rtt_us >= 0 && (rs->rtt_us < (long)b->probe_rtt_min_us || (probe_rtt_expired && !rs->is_ack_delayed))) {
		b->probe_rtt_min_us = (__u32)rs->rtt_us;
		b->probe_rtt_min_stamp = j;
	}
	expire = b->min_rtt_stamp + MIN_RTT_WIN_SEC * HZ;
	min_rtt_expired = after32(j, expire);
	if (b->probe_rtt_min_us <= b->min_rtt_us || min_rtt_expired) {
		b->min_rtt_us = b->probe_rtt_min_us;
		b->min_rtt_stamp = b->probe_rtt_min_stamp;
	}
	if (P(probe_rtt_mode_ms) > 0 && probe_rtt_expired && !b->idle_restart && b->mode != PROBE_RTT) {
		b->mode = PROBE_RTT;
		save_cwnd(sk, b);
		b->probe_rtt_done_stamp = 0;
		b->ack_phase = ACK_PROBE_STOPPING;
		b->next_rtt_delivered = tp->delivered;
	}
	if (b->mode == PROBE_RTT) {
		*app_limited = app_limited_mark(tp);
		if (!b->probe_rtt_done_stamp && packets_in_flight(tp) <= probe_rtt_cwnd(b)) {
			b->probe_rtt_done_stamp = j + msecs_to_jiffies(P(probe_rtt_mode_ms));
			b->probe_rtt_round_done = 0;
			b->next_rtt_delivered = tp->delivered;
		} else if (b->probe_rtt_done_stamp) {
			if (b->round_start)
				b->probe_rtt_round_done = 1;
			if (b->probe_rtt_round_done)
				check_probe_rtt_done(sk, b);
		}
	}
	if (rs->delivered > 0)
		b->idle_restart = 0;
}

static __always_inline void update_gains(struct bbr3 *b)
{
	switch (b->mode) {
	case STARTUP:
		b->pacing_gain = STARTUP_PACING_GAIN;
		b->cwnd_gain = STARTUP_CWND_GAIN;
		break;
	case DRAIN:
		b->pacing_gain = DRAIN_GAIN;
		b->cwnd_gain = STARTUP_CWND_GAIN;
		break;
	case PROBE_BW:
		b->cwnd_gain = CWND_GAIN;
		if (P(bw_probe_cwnd_gain) && b->cycle_idx == PH_UP)
			b->cwnd_gain += BBR_UNIT * P(bw_probe_cwnd_gain) / 4;
		/* bbr_pacing_gain[]: a switch, not a constant array (port.h's rule) */
		switch (b->cycle_idx) {
		case PH_UP:
			b->pacing_gain = BBR_UNIT * 5 / 4;
			break;
		case PH_DOWN:
			b->pacing_gain = BBR_UNIT * 91 / 100;
			break;
		default:
			b->pacing_gain = BBR_UNIT;
		}
		break;
	default:
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = BBR_UNIT;
	}
}

static __always_inline void advance_max_bw_filter(struct bbr3 *b)
{
	if (!b->bw_hi[1])
		return;
	b->bw_hi[0] = b->bw_hi[1];
	b->bw_hi[1] = 0;
}

static __always_inline __u32 target_inflight(struct sock *sk, const struct bbr3 *b)
{
	return min_u32(bbr_inflight(sk, b, bbr_bw(b), BBR_UNIT), tcp_sk(sk)->snd_cwnd);
}

static __always_inline bool is_probing_bandwidth(const struct bbr3 *b)
{
	return b->mode == STARTUP || (b->mode == PROBE_BW && (b->cycle_idx == PH_REFILL || b->cycle_idx == PH_UP));
}

static __always_inline bool has_elapsed_in_phase(struct sock *sk, const struct bbr3 *b, __u32 interval_us)
{
	return stamp_us_delta(clock_us(sk), b->cycle_mstamp + interval_us) > 0;
}

static __always_inline void handle_queue_too_high_in_startup(struct sock *sk, struct bbr3 *b)
{
	b->full_bw_reached = 1;
	b->inflight_hi = max_u32(bbr_inflight(sk, b, max_bw(b), BBR_UNIT), b->inflight_latest);
}

static __always_inline void check_ecn_too_high_in_startup(struct sock *sk, struct bbr3 *b, __u32 ce_ratio)
{
	if (b->full_bw_reached || !b->ecn_eligible || !P(full_ecn_cnt) || !P(ecn_thresh))
		return;
	if (ce_ratio >= P(ecn_thresh))
		b->startup_ecn_rounds = (b->startup_ecn_rounds + 1) & 3;
	else
		b->startup_ecn_rounds = 0;
	if (b->startup_ecn_rounds >= P(full_ecn_cnt))
		handle_queue_too_high_in_startup(sk, b);
}

static __always_inline void update_ecn_alpha(struct sock *sk, struct bbr3 *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__s32 delivered, delivered_ce;
	__u64 ce_ratio, gain = P(ecn_alpha_gain), alpha;

	if (!b->ecn_eligible && PARAM.ecn_low && P(ecn_factor) &&
	    (b->min_rtt_us <= P(ecn_max_rtt_us) || !P(ecn_max_rtt_us)))
		b->ecn_eligible = 1;
	if (!b->ecn_eligible)
		return;
	delivered = (__s32)(tp->delivered - b->alpha_last_delivered);
	delivered_ce = (__s32)(tp->delivered_ce - b->alpha_last_delivered_ce);
	if (delivered <= 0 || delivered_ce < 0)
		return;
	ce_ratio = ((__u64)delivered_ce << BBR_SCALE) / (__u64)delivered;
	alpha = ((BBR_UNIT - gain) * b->ecn_alpha) >> BBR_SCALE;
	alpha += (gain * ce_ratio) >> BBR_SCALE;
	b->ecn_alpha = alpha < BBR_UNIT ? (__u32)alpha : BBR_UNIT;
	b->alpha_last_delivered = tp->delivered;
	b->alpha_last_delivered_ce = tp->delivered_ce;
	check_ecn_too_high_in_startup(sk, b, (__u32)ce_ratio);
}

/* The sample's v3 fields (see the top of this file). */
struct v3_sample {
	__u32 tx_in_flight;
	__s32 lost;
	__s32 delivered_ce;
	bool is_ece;
};

static __always_inline void probe_inflight_hi_upward(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 delta;

	if (!BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited) || tp->snd_cwnd < b->inflight_hi)
		return;
	b->bw_probe_up_acks += rs->acked_sacked;
	if (b->bw_probe_up_acks >= b->bw_probe_up_cnt) {
		delta = b->bw_probe_up_acks / b->bw_probe_up_cnt;
		b->bw_probe_up_acks -= delta * b->bw_probe_up_cnt;
		b->inflight_hi += delta;
		b->try_fast_path = 0;
	}
	if (b->round_start)
		raise_inflight_hi_slope(sk, b);
}

static __always_inline bool is_inflight_too_high(const struct bbr3 *b, const struct rate_sample *rs,
						 const struct v3_sample *v)
{
	__u32 thresh;

	if (v->lost > 0 && v->tx_in_flight) {
		thresh = (__u32)(((__u64)v->tx_in_flight * P(loss_thresh)) >> BBR_SCALE);
		if ((__u32)v->lost > thresh)
			return true;
	}
	if (v->delivered_ce > 0 && rs->delivered > 0 && b->ecn_eligible && P(ecn_thresh)) {
		thresh = (__u32)(((__u64)rs->delivered * P(ecn_thresh)) >> BBR_SCALE);
		if ((__u32)v->delivered_ce > thresh)
			return true;
	}
	return false;
}

static __always_inline __u32 inflight_with_headroom(const struct bbr3 *b)
{
	__u32 headroom;
	__s32 v;

	if (b->inflight_hi == U32_MAX)
		return U32_MAX;
	headroom = max_u32((__u32)(((__u64)b->inflight_hi * P(inflight_headroom)) >> BBR_SCALE), 1);
	v = (__s32)(b->inflight_hi - headroom);
	return v > CWND_MIN_TARGET ? (__u32)v : CWND_MIN_TARGET;
}

static __always_inline void bound_cwnd_for_inflight_model(struct sock *sk, struct bbr3 *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cap = U32_MAX;

	if (!b->initialized)
		return;
	if (b->mode == PROBE_BW && b->cycle_idx != PH_CRUISE)
		cap = b->inflight_hi;
	else if (b->mode == PROBE_RTT || (b->mode == PROBE_BW && b->cycle_idx == PH_CRUISE))
		cap = inflight_with_headroom(b);
	cap = max_u32(min_u32(cap, b->inflight_lo), CWND_MIN_TARGET);
	tp->snd_cwnd = min_u32(cap, tp->snd_cwnd);
}

static __always_inline void init_lower_bounds(struct sock *sk, struct bbr3 *b, bool init_bw)
{
	if (init_bw && b->bw_lo == U32_MAX)
		b->bw_lo = max_bw(b);
	if (b->inflight_lo == U32_MAX)
		b->inflight_lo = tcp_sk(sk)->snd_cwnd;
}

static __always_inline void adapt_lower_bounds(struct sock *sk, struct bbr3 *b)
{
	__u32 ecn_inflight_lo = U32_MAX, ecn_cut;
	__u64 loss_cut;

	if (is_probing_bandwidth(b))
		return;
	if (b->ecn_in_round && P(ecn_factor)) {
		init_lower_bounds(sk, b, false);
		ecn_cut = BBR_UNIT - ((b->ecn_alpha * P(ecn_factor)) >> BBR_SCALE);
		ecn_inflight_lo = (__u32)(((__u64)b->inflight_lo * ecn_cut) >> BBR_SCALE);
	}
	if (b->loss_in_round) {
		init_lower_bounds(sk, b, true);
		loss_cut = BBR_UNIT - P(loss_decrease);
		b->bw_lo = max_u32(b->bw_latest, (__u32)(((__u64)b->bw_lo * loss_cut) >> BBR_SCALE));
		b->inflight_lo = max_u32(b->inflight_latest, (__u32)(((__u64)b->inflight_lo * loss_cut) >> BBR_SCALE));
	}
	b->inflight_lo = min_u32(b->inflight_lo, ecn_inflight_lo);
	b->bw_lo = max_u32(b->bw_lo, 1);
}

static __always_inline void update_latest_delivery_signals(struct sock *sk, struct bbr3 *b,
							   const struct rate_sample *rs, __u32 sample_bw)
{
	b->loss_round_start = 0;
	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;
	b->bw_latest = max_u32(b->bw_latest, sample_bw);
	b->inflight_latest = max_u32(b->inflight_latest, (__u32)rs->delivered);
	if (!before32(rs->prior_delivered, b->loss_round_delivered)) {
		b->loss_round_delivered = tcp_sk(sk)->delivered;
		b->loss_round_start = 1;
	}
}

static __always_inline void advance_latest_delivery_signals(struct bbr3 *b, const struct rate_sample *rs,
							    __u32 sample_bw)
{
	if (b->loss_round_start) {
		b->bw_latest = sample_bw;
		b->inflight_latest = (__u32)rs->delivered;
	}
}

static __always_inline void update_congestion_signals(struct sock *sk, struct bbr3 *b,
						      const struct rate_sample *rs, __u32 sample_bw)
{
	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;
	if (!rs->is_app_limited || sample_bw >= max_bw(b))
		b->bw_hi[1] = max_u32(b->bw_hi[1], sample_bw);
	if (rs->losses > 0)
		b->loss_in_round = 1;
	if (!b->loss_round_start)
		return;
	adapt_lower_bounds(sk, b);
	b->loss_in_round = 0;
	b->ecn_in_round = 0;
}

static __always_inline bool is_reno_coexistence_probe_time(struct sock *sk, const struct bbr3 *b)
{
	return b->rounds_since_probe >= min_u32(P(bw_probe_max_rounds), target_inflight(sk, b));
}

static __always_inline void handle_inflight_too_high(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs,
						     const struct v3_sample *v)
{
	__u64 cut;

	b->prev_probe_too_high = 1;
	b->bw_probe_samples = 0;
	if (!rs->is_app_limited) {
		cut = ((__u64)target_inflight(sk, b) * (BBR_UNIT - P(loss_decrease))) >> BBR_SCALE;
		b->inflight_hi = max_u32(v->tx_in_flight, (__u32)cut);
	}
	if (b->mode == PROBE_BW && b->cycle_idx == PH_UP)
		start_bw_probe_down(sk, b);
}

static __always_inline bool adapt_upper_bounds(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs,
					       const struct v3_sample *v)
{
	if (b->ack_phase == ACK_PROBE_STARTING && b->round_start)
		b->ack_phase = ACK_PROBE_FEEDBACK;
	if (b->ack_phase == ACK_PROBE_STOPPING && b->round_start) {
		b->bw_probe_samples = 0;
		b->ack_phase = ACK_INIT;
		if (b->mode == PROBE_BW && !rs->is_app_limited)
			advance_max_bw_filter(b);
		if (b->mode == PROBE_BW && b->stopped_risky_probe && !b->prev_probe_too_high) {
			start_bw_probe_refill(sk, b, 0);
			return true;
		}
	}
	if (is_inflight_too_high(b, rs, v)) {
		if (b->bw_probe_samples)
			handle_inflight_too_high(sk, b, rs, v);
	} else {
		if (b->inflight_hi == U32_MAX)
			return false;
		if (v->tx_in_flight > b->inflight_hi)
			b->inflight_hi = v->tx_in_flight;
		if (b->mode == PROBE_BW && b->cycle_idx == PH_UP)
			probe_inflight_hi_upward(sk, b, rs);
	}
	return false;
}

static __always_inline bool check_time_to_probe_bw(struct sock *sk, struct bbr3 *b)
{
	__u64 v;
	__u32 n;

	if (P(ecn_reprobe_gain) && b->ecn_eligible && b->ecn_in_cycle && !b->loss_in_cycle &&
	    inet_csk(sk)->icsk_ca_state == TCP_CA_Open) {
		v = ((__u64)b->inflight_hi * P(ecn_reprobe_gain)) >> BBR_SCALE;
		n = v ? fls64(v) - 1 : 0;
		start_bw_probe_refill(sk, b, n);
		return true;
	}
	if (has_elapsed_in_phase(sk, b, b->probe_wait_us) || is_reno_coexistence_probe_time(sk, b)) {
		start_bw_probe_refill(sk, b, 0);
		return true;
	}
	return false;
}

static __always_inline bool check_time_to_cruise(struct sock *sk, const struct bbr3 *b, __u32 inflight, __u32 bw)
{
	if (inflight > inflight_with_headroom(b))
		return false;
	return inflight <= bbr_inflight(sk, b, bw, BBR_UNIT);
}

static __always_inline void update_cycle_phase(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs,
					       const struct v3_sample *v, __u32 sample_bw)
{
	struct tcp_sock *tp = tcp_sk(sk);
	bool done = false;
	__u32 inflight, bw;

	if (!b->full_bw_reached)
		return;
	if (adapt_upper_bounds(sk, b, rs, v))
		return;
	if (b->mode != PROBE_BW)
		return;
	inflight = packets_in_net_at_edt(sk, b, rs->prior_in_flight);
	bw = max_bw(b);
	switch (b->cycle_idx) {
	case PH_CRUISE:
		check_time_to_probe_bw(sk, b);
		break;
	case PH_REFILL:
		if (b->round_start) {
			b->bw_probe_samples = 1;
			start_bw_probe_up(sk, b, sample_bw);
		}
		break;
	case PH_UP:
		if (b->prev_probe_too_high && inflight >= b->inflight_hi) {
			b->stopped_risky_probe = 1;
			done = true;
		} else if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited) && tp->snd_cwnd >= b->inflight_hi) {
			reset_full_bw(b);
			b->full_bw = sample_bw;
		} else if (b->full_bw_now) {
			done = true;
		}
		if (done) {
			b->prev_probe_too_high = 0;
			start_bw_probe_down(sk, b);
		}
		break;
	case PH_DOWN:
		if (check_time_to_probe_bw(sk, b))
			return;
		if (check_time_to_cruise(sk, b, inflight, bw))
			start_bw_probe_cruise(b);
		break;
	}
}

static __always_inline void check_loss_too_high_in_startup(struct sock *sk, struct bbr3 *b,
							   const struct rate_sample *rs, const struct v3_sample *v)
{
	if (b->full_bw_reached)
		return;
	if (rs->losses > 0 && b->loss_events_in_round < 0xF)
		b->loss_events_in_round++;
	if (P(full_loss_cnt) && b->loss_round_start && inet_csk(sk)->icsk_ca_state == TCP_CA_Recovery &&
	    b->loss_events_in_round >= P(full_loss_cnt) && is_inflight_too_high(b, rs, v)) {
		handle_queue_too_high_in_startup(sk, b);
		return;
	}
	if (b->loss_round_start)
		b->loss_events_in_round = 0;
}

static __always_inline void check_full_bw_reached(struct bbr3 *b, const struct rate_sample *rs, __u32 sample_bw)
{
	__u32 thresh;

	if (b->full_bw_now || rs->is_app_limited)
		return;
	thresh = (__u32)(((__u64)b->full_bw * FULL_BW_THRESH) >> BBR_SCALE);
	if (sample_bw >= thresh) {
		reset_full_bw(b);
		b->full_bw = sample_bw;
		return;
	}
	if (!b->round_start)
		return;
	b->full_bw_cnt++;
	b->full_bw_now = b->full_bw_cnt >= FULL_BW_CNT;
	b->full_bw_reached |= b->full_bw_now;
}

static __always_inline void check_drain(struct sock *sk, struct bbr3 *b)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (b->mode == STARTUP && b->full_bw_reached) {
		b->mode = DRAIN;
		tp->snd_ssthresh = bbr_inflight(sk, b, max_bw(b), BBR_UNIT);
		reset_congestion_signals(b);
	}
	if (b->mode == DRAIN &&
	    packets_in_net_at_edt(sk, b, packets_in_flight(tp)) <= bbr_inflight(sk, b, max_bw(b), BBR_UNIT)) {
		b->mode = PROBE_BW;
		start_bw_probe_down(sk, b);
	}
}

/* ack_aggregation.rs AckAggregation::update. */
static __always_inline void update_ack_aggregation(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs,
						   __u32 win_rtts_thresh)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 epoch_us, expected, extra, idx;

	if (!rs->acked_sacked || rs->delivered < 0 || rs->interval_us <= 0)
		return;
	if (b->round_start) {
		b->extra_acked_win_rtts = min_u32(b->extra_acked_win_rtts + 1, 0x1F);
		if (b->extra_acked_win_rtts >= win_rtts_thresh) {
			b->extra_acked_win_rtts = 0;
			b->extra_acked_win_idx ^= 1;
			b->extra_acked[b->extra_acked_win_idx & 1] = 0;
		}
	}
	epoch_us = (__u32)stamp_us_delta(tp->delivered_mstamp, b->ack_epoch_mstamp);
	expected = (__u32)((__u64)bbr_bw(b) * epoch_us / BW_UNIT);
	if (b->ack_epoch_acked <= expected || b->ack_epoch_acked + rs->acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH) {
		b->ack_epoch_acked = 0;
		b->ack_epoch_mstamp = tp->delivered_mstamp;
		expected = 0;
	}
	b->ack_epoch_acked = min_u32(b->ack_epoch_acked + rs->acked_sacked, 0xFFFFF);
	extra = min_u32(b->ack_epoch_acked - expected, tp->snd_cwnd);
	idx = b->extra_acked_win_idx & 1;
	if (extra > b->extra_acked[idx])
		b->extra_acked[idx] = extra & 0xFFFF; /* a u16 in struct bbr */
}

static __always_inline void update_model(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs,
					 const struct v3_sample *v, __u32 sample_bw, __u32 *app_limited)
{
	update_congestion_signals(sk, b, rs, sample_bw);
	update_ack_aggregation(sk, b, rs, b->full_bw_reached ? EXTRA_ACKED_WIN_RTTS : 1);
	check_loss_too_high_in_startup(sk, b, rs, v);
	check_full_bw_reached(b, rs, sample_bw);
	check_drain(sk, b);
	update_cycle_phase(sk, b, rs, v, sample_bw);
	update_min_rtt(sk, b, rs, app_limited);
}

/* The record of one hook: the socket's inputs before it runs. */
static __always_inline struct bbr3_rec *rec_begin(struct sock *sk, __u64 kind, __u64 arg)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_rec *r;

	if (!HOOKLOG_ON)
		return NULL;
	r = bpf_ringbuf_reserve(&hooklog, sizeof(*r), 0);
	if (!r) {
		__u32 k = 0;
		__u64 *n = bpf_map_lookup_elem(&hooklog_lost, &k);

		if (n)
			__sync_fetch_and_add(n, 1);
		return NULL;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->arg = arg;
	r->sk = (__u64)sk;
	r->now_us = clock_us(sk);
	r->cwnd = tp->snd_cwnd;
	r->ssthresh = tp->snd_ssthresh;
	r->cwnd_clamp = tp->snd_cwnd_clamp;
	r->mss = tp->mss_cache;
	r->srtt_us = tp->srtt_us >> 3;
	r->min_rtt_us = tp->rtt_min.s[0].v;
	r->prior_cwnd = tp->prior_cwnd;
	r->delivered = tp->delivered;
	r->delivered_ce = tp->delivered_ce;
	r->lost = tp->lost;
	r->in_flight = packets_in_flight(tp);
	r->is_cwnd_limited = BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
	r->ca_state = inet_csk(sk)->icsk_ca_state;
	r->app_limited = tp->app_limited;
	r->delivered_mstamp = tp->delivered_mstamp;
	r->wstamp_ns = tp->tcp_wstamp_ns;
	r->pacing_rate = sk->sk_pacing_rate;
	r->max_pacing_rate = sk->sk_max_pacing_rate;
	r->pacing_shift = sk->sk_pacing_shift;
	return r;
}

/* ... and what it left. */
static __always_inline void rec_end(struct sock *sk, struct bbr3_rec *r, const struct bbr3 *b, __u64 ret,
				    __u32 app_limited)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!r)
		return;
	r->ret = ret;
	r->out_cwnd = tp->snd_cwnd;
	r->out_ssthresh = tp->snd_ssthresh;
	r->out_pacing_rate = sk->sk_pacing_rate;
	r->out_app_limited = app_limited;
	if (b) {
		r->mode = b->mode;
		r->cycle_idx = b->cycle_idx;
		r->inflight_hi = b->inflight_hi;
		r->inflight_lo = b->inflight_lo;
		r->bw = bbr_bw(b);
		r->probe_wait_us = b->probe_wait_us;
		r->rounds_since_probe = b->rounds_since_probe;
	}
	/* No wake-up per record (it cost ~17 us per ACK): the reader drains every 50 ms. */
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* v3's tx_in_flight and lost from the history (see the top of this file); this ACK's entry
 * first, then the last entry that found tp->delivered at rs->prior_delivered. */
static __always_inline bool v3_fields(struct sock *sk, struct bbr3 *b, const struct rate_sample *rs,
				      struct v3_sample *v)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 n = b->hist_n, have = n < HIST ? n : HIST, lo = 0, hi, mid, at, i;
	__u32 want = rs->prior_delivered;
	struct history *e = &b->hist[n & (HIST - 1)];

	e->delivered = tp->delivered - rs->acked_sacked;
	e->lost = tp->lost - (__u32)rs->losses;
	e->in_flight = rs->prior_in_flight;
	b->hist_n = n + 1;
	have++;
	if (have > HIST)
		have = HIST;
	v->tx_in_flight = rs->prior_in_flight;
	v->lost = rs->losses;
	if (rs->prior_mstamp == 0 || rs->delivered < 0)
		return false;
	/* Entries oldest to newest: k-th is hist[(n + 1 - have + k) % HIST]; delivered
	 * never decreases along them. Find the last with delivered <= want. */
	hi = have;
	for (i = 0; i < 10; i++) {
		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		at = (n + 1 - have + mid) & (HIST - 1);
		if ((__s32)(b->hist[at].delivered - want) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	at = (n + 1 - have + lo - 1) & (HIST - 1);
	if (b->hist[at].delivered != want)
		return false;
	v->tx_in_flight = b->hist[at].in_flight;
	v->lost = (__s32)(tp->lost - b->hist[at].lost);
	return true;
}

SEC("struct_ops")
void BPF_PROG(bbr3_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *b = bbr_of(sk);
	struct bbr3_rec *r = rec_begin(sk, K_CONG_CONTROL, (__u32)flag);
	struct v3_sample v = {};
	__u32 sample_bw, bw, app_limited = tp->app_limited;
	__u32 prev_mode, prev_min_rtt;
	bool found;

	if (!b) {
		rec_end(sk, r, NULL, 0, app_limited);
		return;
	}
	found = v3_fields(sk, b, rs, &v);
	v.delivered_ce = rs->delivered_ce;
	v.is_ece = (flag & FLAG_ECE) != 0;
	if (r) {
		r->rs_prior_delivered = rs->prior_delivered;
		r->rs_delivered = (__u64)(__s64)rs->delivered;
		r->rs_interval_us = (__u64)rs->interval_us;
		r->rs_rtt_us = (__u64)rs->rtt_us;
		r->rs_losses = (__u64)(__s64)rs->losses;
		r->rs_acked_sacked = rs->acked_sacked;
		r->rs_prior_in_flight = rs->prior_in_flight;
		r->rs_is_app_limited = rs->is_app_limited;
		r->rs_is_ack_delayed = rs->is_ack_delayed;
		r->rs_delivered_ce = (__u64)(__s64)v.delivered_ce;
		r->rs_is_ece = v.is_ece;
		r->rs_tx_in_flight = v.tx_in_flight;
		r->rs_lost = (__u64)(__s64)v.lost;
		r->tx_found = found;
		r->rs_prior_mstamp = rs->prior_mstamp;
	}

	if (rs->losses > 0) {
		/* bbr_note_loss */
		if (!b->loss_in_round)
			b->loss_round_delivered = tp->delivered;
		b->loss_in_round = 1;
		b->loss_in_cycle = 1;
	}
	update_round_start(sk, b, rs);
	if (b->round_start) {
		b->rounds_since_probe = min_u32(b->rounds_since_probe + 1, 0xFF);
		update_ecn_alpha(sk, b);
	}
	if (b->ecn_eligible && v.is_ece)
		b->ecn_in_round = 1;
	sample_bw = bw_sample(rs);
	update_latest_delivery_signals(sk, b, rs, sample_bw);
	if (b->try_fast_path && rs->is_app_limited && sample_bw < max_bw(b) && !b->loss_in_round &&
	    !b->ecn_in_round) {
		/* bbr_run_fast_path */
		prev_mode = b->mode;
		prev_min_rtt = b->min_rtt_us;
		check_drain(sk, b);
		update_cycle_phase(sk, b, rs, &v, sample_bw);
		update_min_rtt(sk, b, rs, &app_limited);
		if (!(b->mode == prev_mode && b->min_rtt_us == prev_min_rtt && b->try_fast_path))
			goto control;
		goto out;
	}
	update_model(sk, b, rs, &v, sample_bw, &app_limited);
control:
	update_gains(b);
	bw = bbr_bw(b);
	set_pacing_rate(sk, b, bw, b->pacing_gain);
	set_cwnd(sk, b, rs->acked_sacked, bw, b->cwnd_gain);
	bound_cwnd_for_inflight_model(sk, b);
out:
	advance_latest_delivery_signals(b, rs, sample_bw);
	b->prev_ca_state = inet_csk(sk)->icsk_ca_state;
	if (v.lost > 0)
		b->loss_in_cycle = 1;
	if (v.delivered_ce > 0)
		b->ecn_in_cycle = 1;
	tp->app_limited = app_limited;	/* nothing after update_min_rtt reads it */
	rec_end(sk, r, b, 0, app_limited);
}

SEC("struct_ops")
void BPF_PROG(bbr3_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_rec *r = rec_begin(sk, K_INIT, 0);
	struct bbr3 *b = bpf_sk_storage_get(&bbr3_state, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
	__u32 j = jiffies32(sk);

	if (!b) {
		rec_end(sk, r, NULL, 0, tp->app_limited);
		return;
	}
	__builtin_memset(b, 0, sizeof(*b) - sizeof(b->hist));
	b->rng = 0x9E3779B97F4A7C15ULL;
	b->initialized = 1;
	b->init_cwnd = min_u32(tp->snd_cwnd, 0x7F);
	b->prior_cwnd = tp->prior_cwnd;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	b->next_rtt_delivered = tp->delivered;
	b->prev_ca_state = TCP_CA_Open;
	b->probe_rtt_min_us = tp->rtt_min.s[0].v;
	b->probe_rtt_min_stamp = j;
	b->min_rtt_us = tp->rtt_min.s[0].v;
	b->min_rtt_stamp = j;
	init_pacing_rate_from_rtt(sk, b);
	b->cycle_idx = PH_UP;
	b->mode = STARTUP;
	b->pacing_gain = STARTUP_PACING_GAIN;
	b->cwnd_gain = STARTUP_CWND_GAIN;
	b->ack_epoch_mstamp = clock_us(sk);
	/* bbr_init: cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED) */
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
	b->loss_round_delivered = tp->delivered + 1;
	b->bw_lo = U32_MAX;
	b->inflight_lo = U32_MAX;
	b->inflight_hi = U32_MAX;
	b->bw_probe_up_cnt = U32_MAX;
	b->ack_phase = ACK_INIT;
	b->ecn_alpha = P(ecn_alpha_init);
	rec_end(sk, r, b, 0, tp->app_limited);
}

SEC("struct_ops")
__u32 BPF_PROG(bbr3_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_rec *r = rec_begin(sk, K_SSTHRESH, 0);
	struct bbr3 *b = bbr_of(sk);

	if (b) {
		save_cwnd(sk, b);
		b->undo_bw_lo = b->bw_lo;
		b->undo_inflight_lo = b->inflight_lo;
		b->undo_inflight_hi = b->inflight_hi;
	}
	rec_end(sk, r, b, tp->snd_ssthresh, tp->app_limited);
	return tp->snd_ssthresh;
}

SEC("struct_ops")
void BPF_PROG(bbr3_set_state, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_rec *r = rec_begin(sk, K_SET_STATE, new_state);
	struct bbr3 *b = bbr_of(sk);

	if (b) {
		if (new_state == TCP_CA_Loss) {
			b->prev_ca_state = TCP_CA_Loss;
			reset_full_bw(b);
			if (!is_probing_bandwidth(b) && b->inflight_lo == U32_MAX)
				b->inflight_lo = max_u32(tp->snd_cwnd, b->prior_cwnd);
		} else if (b->prev_ca_state == TCP_CA_Loss) {
			/* bbr_exit_loss_recovery */
			tp->snd_cwnd = max_u32(tp->snd_cwnd, b->prior_cwnd);
			b->try_fast_path = 0;
		}
	}
	rec_end(sk, r, b, 0, tp->app_limited);
}

SEC("struct_ops")
void BPF_PROG(bbr3_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_rec *r = rec_begin(sk, K_CWND_EVENT, event);
	struct bbr3 *b = bbr_of(sk);

	if (b && event == CA_EVENT_TX_START && tp->app_limited) {
		b->idle_restart = 1;
		b->ack_epoch_mstamp = clock_us(sk);
		b->ack_epoch_acked = 0;
		if (b->mode == PROBE_BW)
			set_pacing_rate(sk, b, bbr_bw(b), BBR_UNIT);
		else if (b->mode == PROBE_RTT)
			check_probe_rtt_done(sk, b);
	}
	rec_end(sk, r, b, 0, tp->app_limited);
}

SEC("struct_ops")
__u32 BPF_PROG(bbr3_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_rec *r = rec_begin(sk, K_UNDO, 0);
	struct bbr3 *b = bbr_of(sk);
	__u32 ret = tp->snd_cwnd;

	log_undo(sk);
	if (b) {
		reset_full_bw(b);
		b->loss_in_round = 0;
		b->bw_lo = max_u32(b->bw_lo, b->undo_bw_lo);
		b->inflight_lo = max_u32(b->inflight_lo, b->undo_inflight_lo);
		b->inflight_hi = max_u32(b->inflight_hi, b->undo_inflight_hi);
		b->try_fast_path = 0;
		ret = b->prior_cwnd;
	}
	rec_end(sk, r, b, ret, tp->app_limited);
	return ret;
}

/* bbr_sndbuf_expand: room for the retransmissions of three windows. */
SEC("struct_ops")
__u32 BPF_PROG(bbr3_sndbuf_expand, struct sock *sk)
{
	return 3;
}

PORT_LOG_ONLY_ACKED(bbr3)

PORT_OPS(clk_bbr3, HOOK(bbr3, init) HOOK(bbr3, ssthresh) HOOK(bbr3, cong_control) HOOK(bbr3, set_state)
	 HOOK(bbr3, cwnd_event) HOOK(bbr3, undo_cwnd) HOOK(bbr3, pkts_acked) HOOK(bbr3, sndbuf_expand));
