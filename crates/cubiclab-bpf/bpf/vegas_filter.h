/* Vegas's RTT filter (the part of tcp_vegas.c's struct vegas its users read), as cubiclab-cc's
 * vegas.rs writes it once (RttFilter): the vegas and yeah ports share it as tcp_yeah.c shares
 * tcp_vegas.c's state and its tcp_vegas_pkts_acked. */
#ifndef CUBICLAB_BPF_VEGAS_FILTER_H
#define CUBICLAB_BPF_VEGAS_FILTER_H

/* The kernel's "no sample yet" for baseRTT and minRTT. */
#define NO_RTT 0x7fffffffU

struct vegas_filter {
	__u32 beg_snd_nxt;	/* the round ends when an ACK passes it */
	__u16 cnt_rtt;		/* RTT samples this round */
	__u32 min_rtt;		/* least RTT + 1 this round, us */
	__u32 base_rtt;		/* least RTT + 1 since the last restart, us */
};

/* A new round (vegas_enable's): it ends when an ACK passes snd_nxt. */
static __always_inline void vegas_filter_round(struct vegas_filter *f, const struct tcp_sock *tp)
{
	f->beg_snd_nxt = tp->snd_nxt;
	f->cnt_rtt = 0;
	f->min_rtt = NO_RTT;
}

/* tcp_vegas_init's: baseRTT forgotten, a new round. */
static __always_inline void vegas_filter_restart(struct vegas_filter *f, const struct tcp_sock *tp)
{
	f->base_rtt = NO_RTT;
	vegas_filter_round(f, tp);
}

/* tcp_vegas_pkts_acked: every RTT sample, plus 1 us so that none is 0. */
static __always_inline void vegas_filter_sample(struct vegas_filter *f, const struct ack_sample *sample)
{
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	vrtt = (__u32)sample->rtt_us + 1;
	if (vrtt < f->base_rtt)
		f->base_rtt = vrtt;
	f->min_rtt = min_u32(f->min_rtt, vrtt);
	f->cnt_rtt++;
}

#endif
