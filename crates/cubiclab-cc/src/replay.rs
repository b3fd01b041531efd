//! Drive any algorithm from a trace of events and record its state after each one.
//!
//! The driver plays the part of Linux `tcp_input.c` through the shared [`Host`], so its
//! hook order and its ssthresh, PRR and undo rules are the simulator's: on an ACK,
//! `snd_una` moves, the RTT estimator and `pkts_acked` run, Loss ends once the data
//! outstanding at the timeout is acknowledged, then `cong_avoid`. A `loss` event is a whole
//! fast recovery (enter Recovery, then leave it with cwnd = ssthresh), and the trace's ACK
//! that ends it (the first that raises the window again) runs `tcp_end_cwnd_reduction`
//! again, where Linux runs it; a `rto` event is
//! `tcp_retransmit_timer` with nothing left in flight, then its retransmission's
//! `CA_EVENT_TX_START` (`tcp_event_data_sent`); `undo` is `tcp_undo_cwnd_reduction`.
//! A `ts` row (columns `tsval`, `tsecr`) is the timestamp option of the ACK that follows it
//! (`rx_opt.rcv_tsval`, `rcv_tsecr`; TCP-LP reads them); without one they stay 0, a
//! connection without timestamps.
//!
//! ECN: an `ece` row is an `ack` that carried ECE on an ECN connection (`FLAG_ECE`): its
//! segments count into `delivered_ce` (`tcp_count_delivered`), the algorithm's
//! `in_ack_event` gets `CA_ACK_ECE`, and from Open it enters CWR (`tcp_try_to_open` ->
//! `tcp_enter_cwr`: the algorithm's ssthresh, PRR until `snd_una` passes `high_seq`). `ce`
//! and `no_ce` are the receiving socket's `CA_EVENT_ECN_IS_CE` and `CA_EVENT_ECN_NO_CE`.
//! Every ACK runs `in_ack_event` (after `pkts_acked`, as Linux 6.x does).
//!
//! An `ack_no_cc` is an ACK the kernel processed without running the algorithm's hooks
//! (seen with BPF algorithms, whose programs the kernel sometimes skips: the kernel
//! check's witness tells those ACKs): `snd_una` and the RTT estimator move, nothing else.
//!
//! Trace CSV columns: `time_us,event,acked,rtt_us`, optionally `cwnd_limited` (0/1: the
//! value of `tcp_is_cwnd_limited()` at that ACK), `disorder` (0/1: it arrived in Disorder,
//! see [`Event::Ack`]), `srtt_us` (the smoothed RTT after the ACK), `sample_in_flight`
//! (`pkts_acked`'s `sample->in_flight`, bytes, which NV reads), `idle_us` (for
//! `tx_start`), `snd_una` and
//! `snd_nxt` (segments, for HyStart rounds). Without sequence numbers the sender is taken to
//! be always cwnd-limited: after each ACK it sends until `snd_nxt = snd_una + cwnd`.
//!
//! An algorithm with `cong_control` (BBR) reads the ACK's delivery-rate sample
//! (`struct rate_sample` of `tcp_rate.c`), which a trace gives in the columns
//! `rs_prior_delivered`, `rs_delivered` (-1: invalid sample), `rs_interval_us` (-1:
//! invalid) and `rs_app_limited` (0/1), with optionally `losses` (segments newly marked
//! lost by the ACK), `prior_in_flight` and `in_flight` (`tcp_packets_in_flight()` when
//! the ACK arrived and when `cong_control` runs; default: `snd_nxt - snd_una` then) and
//! `wstamp_ns` (`tcp_wstamp_ns`, the next departure time on the trace's clock, ns) and
//! `delivered` (`tp->delivered` after the ACK, on the count `rs_prior_delivered` uses) and
//! `ca_state` (open, disorder, cwr, recovery or loss: the state `cong_control` sees). The
//! row's `acked` is `rs.acked_sacked` and its `rtt_us` `rs.rtt_us`. The driver keeps the
//! connection's `delivered` (unless given), `lost` and `delivered_mstamp` from them as
//! `tcp_rate_gen` does. Such an ACK is [`Event::RateAck`].

use crate::host::rtt::{RttEstimator, TCP_RTO_MIN_US};
use crate::host::{Host, PrrAck};
use crate::seq::after;
use crate::tcp::{AckEvent, AckSample, CaEvent, CaState, RateSample, TcpState, TCP_INIT_CWND};
use crate::{Algorithm, CongestionControl};

/// One event of a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// An ACK of `acked` segments with an RTT sample (`rtt_us < 0`: none). `cwnd_limited`
    /// false means `cong_avoid` is skipped (as Linux does outside Open, or when app-limited).
    /// `disorder`: it arrived in Linux's Disorder state (duplicate ACKs or SACK blocks seen,
    /// no recovery yet), which the host does not model; `pkts_acked` sees that state (the
    /// algorithms that count ACKs only in Open skip it), the rest is as in Open.
    /// `srtt_us`: the sender's smoothed RTT after this ACK (`srtt_us >> 3`) when the trace
    /// knows it (the kernel's tcp_probe does): it replaces the host's own estimate, which
    /// Linux computes from other samples (`seq_rtt`, not the `ca_rtt` the algorithm gets).
    /// `in_flight`: `pkts_acked`'s `sample->in_flight` in bytes when the trace knows it
    /// (column `sample_in_flight`; a port logs it), else `mss` times the segments out before
    /// the ACK (see [`AckSample::in_flight`]).
    Ack { acked: u32, rtt_us: i64, cwnd_limited: bool, disorder: bool, srtt_us: Option<u32>, in_flight: Option<u32> },
    /// An ACK with its delivery-rate sample, for algorithms with `cong_control`; for the
    /// others it is an [`Event::Ack`].
    RateAck { acked: u32, rtt_us: i64, cwnd_limited: bool, rate: AckRate },
    /// An ACK on which the algorithm's hooks did not run (`pkts_acked`, `cong_avoid`).
    AckNoCc { rtt_us: i64 },
    /// An [`Event::Ack`] that carried ECE (see the module docs).
    Ece { acked: u32, rtt_us: i64, cwnd_limited: bool },
    /// The receiver got a CE-marked segment (`CA_EVENT_ECN_IS_CE`).
    Ce,
    /// The receiver got an ECT segment without CE (`CA_EVENT_ECN_NO_CE`).
    NoCe,
    /// A congestion event detected by fast retransmit, through to the end of its recovery.
    Loss,
    /// A retransmission timeout.
    Rto,
    /// First transmission with nothing in flight (`CA_EVENT_TX_START`), `idle_us` after the
    /// last one. The algorithm sees `snd_nxt` before that transmission; the row's `snd_nxt`,
    /// if given, is the one after what it started, taken after the event (Vegas' round,
    /// which `tcp_vegas_init` begins at `snd_nxt`, ends on the first ACK of new data).
    TxStart { idle_us: u64 },
    /// The last congestion event proved spurious.
    Undo,
    /// The next ACK's timestamp option, which `tcp_fast_parse_options` keeps in `rx_opt`
    /// before `tcp_ack` runs: `tsval` (the peer's clock) and `tsecr` (ours echoed, less
    /// the connection's `tsoffset`, as `rx_opt` keeps it).
    Timestamps { tsval: u32, tsecr: u32 },
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Event::Ack { .. } | Event::RateAck { .. } => "ack",
            Event::AckNoCc { .. } => "ack_no_cc",
            Event::Ece { .. } => "ece",
            Event::Ce => "ce",
            Event::NoCe => "no_ce",
            Event::Loss => "loss",
            Event::Rto => "rto",
            Event::TxStart { .. } => "tx_start",
            Event::Undo => "undo",
            Event::Timestamps { .. } => "ts",
        }
    }
}

/// The rate-sample columns of one ACK (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRate {
    /// `rs.prior_delivered`, `rs.delivered`, `rs.interval_us`, `rs.is_app_limited`.
    pub prior_delivered: u32,
    pub delivered: i32,
    pub interval_us: i64,
    pub is_app_limited: bool,
    /// `rs.losses`: segments newly marked lost.
    pub losses: u32,
    /// `rs.prior_in_flight`; `None`: `snd_nxt - snd_una` before the ACK.
    pub prior_in_flight: Option<u32>,
    /// `tcp_packets_in_flight()` at `cong_control`; `None`: `snd_nxt - snd_una` after the ACK.
    pub in_flight: Option<u32>,
    /// `tcp_wstamp_ns`; `None`: no departure scheduled beyond now.
    pub wstamp_ns: Option<u64>,
    /// `tp->delivered` after the ACK; `None`: the replay's own count (the segments ACKed so
    /// far). A Linux connection starts from 1 (the handshake counts as delivered), and
    /// `rs_prior_delivered` is on the connection's count.
    pub delivered_total: Option<u32>,
    /// The congestion state when `cong_control` runs (what `tcp_fastretrans_alert` left);
    /// `None`: the replay's own.
    pub ca_state: Option<CaState>,
}

/// What an [`Event::Ack`] says of the sender beyond the ACK itself.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct AckState {
    disorder: bool,
    srtt_us: Option<u32>,
    /// The ACK carried ECE.
    ece: bool,
    /// `sample->in_flight`, bytes, when the trace gives it.
    in_flight: Option<u32>,
}

/// An event at a time, with optional sequence numbers from the trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEvent {
    pub time_us: u64,
    pub event: Event,
    pub snd_una: Option<u32>,
    pub snd_nxt: Option<u32>,
}

/// The connection's state after one event.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayRow {
    pub time_us: u64,
    pub event: &'static str,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub cwnd_cnt: u32,
    pub ca_state: CaState,
    /// `sk_pacing_rate`, bytes per second (0: not set; only `cong_control` algorithms set
    /// it in a replay).
    pub pacing_rate: u64,
    /// The algorithm's own variables, in the order it reports them.
    pub vars: Vec<(&'static str, f64)>,
}

/// Starting conditions of a replay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayStart {
    pub cwnd: u32,
    pub ssthresh: u32,
}

impl Default for ReplayStart {
    fn default() -> Self {
        let tcp = TcpState::default();
        Self { cwnd: tcp.cwnd, ssthresh: tcp.ssthresh }
    }
}

/// What a replay takes from the connection besides its window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayOptions {
    /// `mss_cache`, bytes (pacing rates are in bytes); `None`: 1448.
    pub mss: Option<u32>,
    /// Seed of the algorithm's random numbers ([`CongestionControl::seed_random`]); `None`:
    /// the algorithm's fixed default stream.
    pub seed: Option<u64>,
    /// An RTT sample taken before `init`, us: the handshake's, which a Linux connection has
    /// in `srtt_us` and `tcp_min_rtt()` when its congestion control starts (BBR's first
    /// pacing rate and min_rtt come from it). `None`: no sample yet.
    pub handshake_rtt_us: Option<u32>,
    /// When the algorithm's `init` ran (the handshake's end), us; `None`: the first event.
    pub start_us: Option<u64>,
    /// The handshake's ACK reaches `pkts_acked` before `init`, with one segment and the
    /// handshake's sample (Linux: `tcp_ack` of the SYN-ACK runs `tcp_clean_rtx_queue`, then
    /// `tcp_finish_connect` runs `init`): an algorithm whose `init` does not clear what
    /// `pkts_acked` saw (CDG's round minimum and maximum) starts from it.
    pub handshake_acked: bool,
}

/// A replay: an algorithm in a [`Host`], fed one event at a time.
pub struct Replayer {
    pub host: Host,
    /// A fast-recovery loss was replayed and its ACKs are still arriving: the trace's ACKs
    /// that do not raise the window (`cwnd_limited` false), and the first one that does (it
    /// ends the recovery), reach `pkts_acked` in Recovery, as in Linux, where
    /// `tcp_clean_rtx_queue` runs before `tcp_fastretrans_alert` returns to Open. The
    /// window itself is set at the loss (cwnd = ssthresh, where PRR ends), and set again by
    /// `tcp_end_cwnd_reduction` on that last ACK.
    recovery_acks: bool,
}

impl Replayer {
    /// Start a connection at time `now_us`: the algorithm's `init`, then the initial window
    /// sent (unless the trace gives sequence numbers).
    pub fn new(alg: Algorithm, start: ReplayStart, now_us: u64) -> Self {
        Self::with_options(alg, start, ReplayOptions::default(), now_us)
    }

    /// [`Self::new`] with the connection's MSS and the algorithm's seed.
    pub fn with_options(mut alg: Algorithm, start: ReplayStart, opts: ReplayOptions, now_us: u64) -> Self {
        let mut tcp = TcpState { cwnd: start.cwnd.max(1), ssthresh: start.ssthresh.max(1), ..TcpState::default() };
        if let Some(mss) = opts.mss {
            tcp.mss = mss.max(1);
        }
        if let Some(seed) = opts.seed {
            alg.seed_random(seed);
        }
        let handshake = opts.handshake_rtt_us;
        // Traces carry microseconds; timeouts are not scheduled here, so the tick is moot.
        let mut host = Host::new(alg, tcp, RttEstimator::new(TCP_RTO_MIN_US, 1));
        if let Some(rtt) = handshake {
            host.rtt_sample(rtt as u64);
            host.update_rtt_min(rtt as u64, now_us * 1000);
            if opts.handshake_acked {
                let mss = host.tcp.mss;
                host.pkts_acked_sample(
                    &AckSample { pkts_acked: 1, rtt_us: i64::from(rtt), in_flight: mss },
                    now_us * 1000,
                );
            }
        }
        // Linux calls init when the handshake completes, before any data is sent.
        host.init(now_us * 1000);
        host.tcp.snd_nxt = host.tcp.snd_una + host.tcp.cwnd;
        Self { host, recovery_acks: false }
    }

    /// Apply one event and return the state after it.
    pub fn step(&mut self, ev: &TraceEvent) -> ReplayRow {
        let now = ev.time_us * 1000;
        let h = &mut self.host;
        match ev.event {
            Event::Ack { acked, rtt_us, cwnd_limited, disorder, srtt_us, in_flight } => self.ack(
                ev,
                acked,
                rtt_us,
                cwnd_limited,
                None,
                AckState { disorder, srtt_us, ece: false, in_flight },
                now,
            ),
            Event::RateAck { acked, rtt_us, cwnd_limited, rate } => {
                self.ack(ev, acked, rtt_us, cwnd_limited, Some(rate), AckState::default(), now)
            }
            Event::Ece { acked, rtt_us, cwnd_limited } => {
                self.ack(ev, acked, rtt_us, cwnd_limited, None, AckState { ece: true, ..AckState::default() }, now)
            }
            Event::Ce => h.alg.cwnd_event(&mut h.tcp, CaEvent::EcnIsCe, now),
            Event::NoCe => h.alg.cwnd_event(&mut h.tcp, CaEvent::EcnNoCe, now),
            Event::AckNoCc { rtt_us } => {
                if let Some(una) = ev.snd_una {
                    h.ack_snd_una(una);
                }
                if let Some(nxt) = ev.snd_nxt {
                    h.tcp.snd_nxt = nxt;
                }
                if rtt_us >= 0 {
                    h.rtt_sample(rtt_us as u64);
                }
            }
            Event::Loss => {
                if h.alg.fast_recovery() {
                    h.enter_recovery(0, false, now);
                    // The trace does not detail the recovery: it ends here, as if high_seq
                    // were acknowledged at once.
                    h.high_seq = h.tcp.snd_una;
                    h.try_leave_recovery(0, now);
                    self.recovery_acks = true;
                } else {
                    // Tahoe: every loss is handled like a timeout, from one segment.
                    h.enter_loss(0, 0, now);
                }
            }
            Event::Rto => {
                self.recovery_acks = false;
                h.retransmit_timer(0, 0, now);
                // tcp_retransmit_timer retransmits the head with nothing in flight, snd_nxt
                // where the sending left it (the row's: Vegas's round starts there).
                if let Some(nxt) = ev.snd_nxt {
                    h.tcp.snd_nxt = nxt;
                }
                h.tx_start(now);
            }
            Event::TxStart { idle_us } => {
                h.tcp.lsndtime_ns = now.saturating_sub(idle_us * 1000);
                h.restart_after_idle(now, TCP_INIT_CWND);
                h.tcp.lsndtime_ns = now;
                if let Some(nxt) = ev.snd_nxt {
                    h.tcp.snd_nxt = nxt;
                }
            }
            Event::Undo => h.undo(now),
            Event::Timestamps { tsval, tsecr } => (h.tcp.rcv_tsval, h.tcp.rcv_tsecr) = (tsval, tsecr),
        }
        self.row(ev.time_us, ev.event.name())
    }

    /// `tcp_ack` for one ACK; `rate` carries the trace's delivery-rate sample.
    #[allow(clippy::too_many_arguments)] // the parsed ACK's values, each its own argument
    fn ack(
        &mut self,
        ev: &TraceEvent,
        acked: u32,
        rtt_us: i64,
        cwnd_limited: bool,
        rate: Option<AckRate>,
        st: AckState,
        now: u64,
    ) {
        let h = &mut self.host;
        let in_flight = h.packets_out();
        // wraps: the kernel's u32 product mss_cache * segments.
        let sample_in_flight = st.in_flight.unwrap_or(h.tcp.mss.wrapping_mul(in_flight));
        let prior_una = h.tcp.snd_una;
        let una = ev.snd_una.unwrap_or(h.tcp.snd_una.wrapping_add(acked));
        let advanced = h.ack_snd_una(una);
        // Linux's ack_sample.pkts_acked counts the segments this ACK took off the
        // retransmission queue (tcp_clean_rtx_queue): the snd_una advance, 0 for a
        // SACK-only ACK, whose newly delivered segments `acked` counts for cong_avoid.
        let pkts_acked = if ev.snd_una.is_some() { h.tcp.snd_una.wrapping_sub(prior_una) } else { acked };
        if rtt_us >= 0 {
            h.rtt_sample(rtt_us as u64);
        }
        if let Some(srtt) = st.srtt_us {
            h.tcp.srtt_us = srtt;
        }
        let sample = AckSample { pkts_acked, rtt_us, in_flight: sample_in_flight };
        // An ACK of the trace's Recovery stretch: Linux runs PRR there, never cong_avoid
        // (whose opening Vegas and Illinois run before they test cwnd_limited).
        let in_recovery = self.recovery_acks && h.tcp.ca_state == CaState::Open && !cwnd_limited;
        let ends_recovery = self.recovery_acks && h.tcp.ca_state == CaState::Open && cwnd_limited;
        if self.recovery_acks && h.tcp.ca_state == CaState::Open {
            h.tcp.ca_state = CaState::Recovery;
            h.pkts_acked_sample(&sample, now);
            h.tcp.ca_state = CaState::Open;
            self.recovery_acks = !cwnd_limited;
        } else if st.disorder && h.tcp.ca_state == CaState::Open {
            h.tcp.ca_state = CaState::Disorder;
            h.pkts_acked_sample(&sample, now);
            h.tcp.ca_state = CaState::Open;
        } else {
            h.pkts_acked_sample(&sample, now);
        }
        if rate.is_none() {
            // tcp_count_delivered (a rate sample's row gives its own count, below).
            h.tcp.delivered = h.tcp.delivered.wrapping_add(acked);
        }
        let delivered = h.tcp.delivered;
        // The trace does not say how the kernel took the ACK: the fast path, whose count
        // (Westwood+'s) differs from the slow path's only after duplicate ACKs.
        h.in_ack_event(AckEvent { slow_path: false, ece: st.ece }, delivered, acked, now);
        h.try_leave_recovery(0, now);
        if ends_recovery {
            // Linux leaves Recovery on this ACK (tcp_fastretrans_alert: after in_ack_event,
            // before cong_avoid) with tcp_end_cwnd_reduction: cwnd = ssthresh unless undone,
            // then CA_EVENT_COMPLETE_CWR, on which Westwood+ sets both from what it measured
            // during the recovery (its bandwidth estimate and least RTT now, not at the loss).
            h.end_cwnd_reduction(now);
        }
        if st.ece && h.tcp.ca_state == CaState::Open {
            // tcp_fastretrans_alert step E: tcp_try_to_open -> tcp_enter_cwr.
            h.enter_cwr(now);
        }
        h.assume_cwnd_limited(cwnd_limited);
        let ack = PrrAck { newly_acked_sacked: acked, newly_lost: 0, una_advanced: acked > 0 || advanced };
        let rs = match rate {
            Some(r) => Self::rate_gen(&mut h.tcp, &r, acked, rtt_us, in_flight, now),
            None => RateSample::default(),
        };
        let in_flight_now = rate.and_then(|r| r.in_flight).unwrap_or(h.packets_out());
        if let Some(state) = rate.and_then(|r| r.ca_state) {
            h.follow_state(state, in_flight_now, now);
        }
        if !in_recovery || h.alg.has_cong_control() {
            h.cong_control(ack, &rs, in_flight_now, now);
        }
        // The row's snd_nxt is the one after the segments this ACK released: the hooks ran
        // before they left (tcp_ack, then tcp_data_snd_check), as Vegas' and HyStart's
        // rounds, which begin at snd_nxt, see it in the kernel.
        match ev.snd_nxt {
            Some(nxt) => h.tcp.snd_nxt = nxt,
            None => {
                let want = h.tcp.snd_una.wrapping_add(h.tcp.cwnd);
                if after(want, h.tcp.snd_nxt) {
                    h.tcp.snd_nxt = want;
                    h.tcp.lsndtime_ns = now;
                }
            }
        }
    }

    /// The connection-wide part of `tcp_rate_gen` (`delivered`, `lost`, `delivered_mstamp`,
    /// the end of an application-limited stretch) and the sample the trace gives.
    fn rate_gen(
        tcp: &mut TcpState,
        r: &AckRate,
        acked: u32,
        rtt_us: i64,
        prior_in_flight: u32,
        now: u64,
    ) -> RateSample {
        tcp.delivered = r.delivered_total.unwrap_or(tcp.delivered.wrapping_add(acked));
        tcp.lost = tcp.lost.wrapping_add(r.losses);
        if tcp.app_limited != 0 && after(tcp.delivered, tcp.app_limited) {
            tcp.app_limited = 0;
        }
        if acked > 0 {
            tcp.delivered_mstamp_us = now / 1000;
        }
        tcp.wstamp_ns = r.wstamp_ns.unwrap_or(0);
        RateSample {
            prior_delivered: r.prior_delivered,
            delivered: r.delivered,
            interval_us: r.interval_us,
            rtt_us,
            losses: r.losses,
            acked_sacked: acked,
            prior_in_flight: r.prior_in_flight.unwrap_or(prior_in_flight),
            is_app_limited: r.is_app_limited,
            is_retrans: false,
            is_ack_delayed: false,
            // A trace of a stock kernel has no BBRv3 sample fields.
            ..RateSample::default()
        }
    }

    fn row(&self, time_us: u64, event: &'static str) -> ReplayRow {
        let mut vars = Vec::new();
        self.host.alg.vars(&mut |k, v| vars.push((k, v)));
        let tcp = &self.host.tcp;
        ReplayRow {
            time_us,
            event,
            cwnd: tcp.cwnd,
            ssthresh: tcp.ssthresh,
            cwnd_cnt: tcp.cwnd_cnt,
            ca_state: tcp.ca_state,
            pacing_rate: tcp.pacing_rate,
            vars,
        }
    }
}

/// Replay a whole trace through `alg`; one row per event.
pub fn replay(alg: Algorithm, start: ReplayStart, events: &[TraceEvent]) -> Vec<ReplayRow> {
    replay_with(alg, start, ReplayOptions::default(), events)
}

/// [`replay`] with the connection's MSS and the algorithm's seed.
pub fn replay_with(alg: Algorithm, start: ReplayStart, opts: ReplayOptions, events: &[TraceEvent]) -> Vec<ReplayRow> {
    let first = events.first().map_or(0, |e| e.time_us);
    let t0 = opts.start_us.map_or(first, |s| s.min(first));
    let mut r = Replayer::with_options(alg, start, opts, t0);
    events.iter().map(|e| r.step(e)).collect()
}

/// Why `alg` cannot replay `events`, if it cannot: an algorithm with `cong_control` needs
/// every ACK's rate sample.
pub fn check_replayable(alg: &Algorithm, name: &str, events: &[TraceEvent]) -> Result<(), String> {
    if !alg.has_cong_control() {
        return Ok(());
    }
    match events.iter().position(|e| matches!(e.event, Event::Ack { .. })) {
        Some(i) => Err(format!(
            "trace: algorithm '{name}' sets its window from delivery-rate samples (cong_control): every ack needs \
             the columns {}; event {} (time_us {}) has none",
            RATE_COLUMNS.join(", "),
            i + 1,
            events[i].time_us
        )),
        None => Ok(()),
    }
}

/// The rate-sample columns an ACK of a `cong_control` algorithm must have.
pub const RATE_COLUMNS: [&str; 4] = ["rs_prior_delivered", "rs_delivered", "rs_interval_us", "rs_app_limited"];

/// The latest time a trace may give, us: its time in ns must fit a u64.
pub const MAX_TIME_US: u64 = u64::MAX / 1000;

/// Parse a trace CSV (see the module docs). Errors name the line and the column.
pub fn parse_trace_csv(text: &str) -> Result<Vec<TraceEvent>, String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let Some((_, header)) = lines.next() else {
        return Err("trace is empty: expected a header line 'time_us,event,acked,rtt_us'".into());
    };
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| cols.iter().position(|c| *c == name);
    const KNOWN: &[&str] = &[
        "time_us",
        "event",
        "acked",
        "rtt_us",
        "cwnd_limited",
        "disorder",
        "srtt_us",
        "idle_us",
        "snd_una",
        "snd_nxt",
        "rs_prior_delivered",
        "rs_delivered",
        "rs_interval_us",
        "rs_app_limited",
        "losses",
        "prior_in_flight",
        "in_flight",
        "wstamp_ns",
        "delivered",
        "ca_state",
        "tsval",
        "tsecr",
        "sample_in_flight",
    ];
    if let Some(bad) = cols.iter().find(|c| !KNOWN.contains(c)) {
        return Err(format!("trace header: unknown column '{bad}'; allowed: {}", KNOWN.join(", ")));
    }
    if let Some(twice) = cols.iter().enumerate().find(|(i, c)| cols[..*i].contains(c)).map(|(_, c)| c) {
        return Err(format!("trace header: column '{twice}' appears twice"));
    }
    let (Some(c_time), Some(c_event)) = (col("time_us"), col("event")) else {
        return Err("trace header must have columns 'time_us' and 'event'".into());
    };
    let (c_acked, c_rtt, c_lim, c_idle, c_una, c_nxt) =
        (col("acked"), col("rtt_us"), col("cwnd_limited"), col("idle_us"), col("snd_una"), col("snd_nxt"));
    let (c_dis, c_srtt, c_sample_inflight) = (col("disorder"), col("srtt_us"), col("sample_in_flight"));
    let rate_cols: Vec<Option<usize>> = RATE_COLUMNS.iter().map(|c| col(c)).collect();
    let (c_losses, c_prior, c_inflight, c_wstamp, c_total, c_state) =
        (col("losses"), col("prior_in_flight"), col("in_flight"), col("wstamp_ns"), col("delivered"), col("ca_state"));
    // An ACK's rate sample: all four rs_ columns, or none of them.
    let rate = |f: &[&str], lineno: usize| -> Result<Option<AckRate>, String> {
        let get = |c: Option<usize>| c.and_then(|c| f.get(c).copied()).filter(|s| !s.is_empty());
        let given: Vec<bool> = rate_cols.iter().map(|c| get(*c).is_some()).collect();
        if !given.iter().any(|g| *g) {
            return Ok(None);
        }
        if let Some(k) = given.iter().position(|g| !g) {
            return Err(format!(
                "line {lineno}: column '{}' is missing; a rate sample needs all of {}",
                RATE_COLUMNS[k],
                RATE_COLUMNS.join(", ")
            ));
        }
        let field = |k: usize| get(rate_cols[k]).unwrap_or_default();
        let parse_err =
            |name: &str, v: &str, allowed: &str| format!("line {lineno}: column '{name}' is '{v}'; allowed: {allowed}");
        let u32_col = |name: &str, v: Option<&str>| -> Result<Option<u32>, String> {
            v.map(|v| v.parse::<u32>().map_err(|_| parse_err(name, v, "an integer in [0, 4294967295]"))).transpose()
        };
        let prior_delivered = u32_col(RATE_COLUMNS[0], Some(field(0)))?.unwrap_or(0);
        let delivered = field(1)
            .parse::<i32>()
            .ok()
            .filter(|d| *d >= -1)
            .ok_or_else(|| parse_err(RATE_COLUMNS[1], field(1), "-1 (invalid sample) or a segment count"))?;
        let interval_us =
            field(2).parse::<i64>().ok().filter(|d| (-1..=u32::MAX as i64).contains(d)).ok_or_else(|| {
                parse_err(RATE_COLUMNS[2], field(2), "-1 (invalid sample) or microseconds up to 4294967295")
            })?;
        let is_app_limited = match field(3) {
            "0" => false,
            "1" => true,
            v => return Err(parse_err(RATE_COLUMNS[3], v, "0 or 1")),
        };
        let wstamp_ns = get(c_wstamp)
            .map(|v| v.parse::<u64>().map_err(|_| parse_err("wstamp_ns", v, "nanoseconds, an integer >= 0")))
            .transpose()?;
        Ok(Some(AckRate {
            prior_delivered,
            delivered,
            interval_us,
            is_app_limited,
            losses: u32_col("losses", get(c_losses))?.unwrap_or(0),
            prior_in_flight: u32_col("prior_in_flight", get(c_prior))?,
            in_flight: u32_col("in_flight", get(c_inflight))?,
            wstamp_ns,
            delivered_total: u32_col("delivered", get(c_total))?,
            ca_state: get(c_state)
                .map(|v| {
                    CaState::ALL
                        .into_iter()
                        .find(|c| c.name() == v)
                        .ok_or_else(|| parse_err("ca_state", v, "open, disorder, cwr, recovery or loss"))
                })
                .transpose()?,
        }))
    };
    let mut out = Vec::new();
    let mut last_time = 0u64;
    for (i, line) in lines {
        let lineno = i + 1;
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != cols.len() {
            return Err(format!("line {lineno}: {} fields; the header has {} columns", f.len(), cols.len()));
        }
        let get = |c: Option<usize>| c.and_then(|c| f.get(c).copied()).filter(|s| !s.is_empty());
        fn num<T: std::str::FromStr>(v: Option<&str>, name: &str, lineno: usize) -> Result<Option<T>, String> {
            v.map(|s| {
                s.parse::<T>().map_err(|_| format!("line {lineno}: column '{name}' is '{s}', not a valid number"))
            })
            .transpose()
        }
        // Times become ns (x 1000) and RTTs Linux's u32 microseconds: larger ones cannot be.
        let in_range = |v: Option<u64>, name: &str, max: u64| match v {
            Some(v) if v > max => Err(format!("line {lineno}: column '{name}' is {v}; allowed: at most {max}")),
            _ => Ok(v),
        };
        let time_us: u64 = in_range(num(get(Some(c_time)), "time_us", lineno)?, "time_us", MAX_TIME_US)?
            .ok_or_else(|| format!("line {lineno}: column 'time_us' is missing"))?;
        if time_us < last_time {
            return Err(format!("line {lineno}: time_us {time_us} goes back in time (previous {last_time})"));
        }
        last_time = time_us;
        let name = get(Some(c_event)).ok_or_else(|| format!("line {lineno}: column 'event' is missing"))?;
        // Linux's RTT samples are u32 microseconds; -1 when the row has none.
        let rtt_us = || match num::<i64>(get(c_rtt), "rtt_us", lineno)? {
            Some(r) if r > u32::MAX as i64 => {
                Err(format!("line {lineno}: column 'rtt_us' is {r}; allowed: at most {}", u32::MAX))
            }
            r => Ok(r.unwrap_or(-1)),
        };
        let acked = || num(get(c_acked), "acked", lineno).map(|a| a.unwrap_or(1));
        let cwnd_limited = || num::<u8>(get(c_lim), "cwnd_limited", lineno).map(|v| v.is_none_or(|v| v != 0));
        let event = match name {
            "ack" => {
                let (acked, cwnd_limited) = (acked()?, cwnd_limited()?);
                match rate(&f, lineno)? {
                    Some(rate) => Event::RateAck { acked, rtt_us: rtt_us()?, cwnd_limited, rate },
                    None => Event::Ack {
                        acked,
                        rtt_us: rtt_us()?,
                        cwnd_limited,
                        disorder: num::<u8>(get(c_dis), "disorder", lineno)?.is_some_and(|v| v != 0),
                        srtt_us: num(get(c_srtt), "srtt_us", lineno)?,
                        in_flight: num(get(c_sample_inflight), "sample_in_flight", lineno)?,
                    },
                }
            }
            "ack_no_cc" => Event::AckNoCc { rtt_us: rtt_us()? },
            "ece" => Event::Ece { acked: acked()?, rtt_us: rtt_us()?, cwnd_limited: cwnd_limited()? },
            "ce" => Event::Ce,
            "no_ce" => Event::NoCe,
            "loss" => Event::Loss,
            "rto" => Event::Rto,
            "tx_start" => Event::TxStart {
                idle_us: in_range(num(get(c_idle), "idle_us", lineno)?, "idle_us", MAX_TIME_US)?.unwrap_or(0),
            },
            "undo" => Event::Undo,
            "ts" => {
                let stamp = |c, name| {
                    num::<u32>(get(c), name, lineno)?.ok_or_else(|| format!("line {lineno}: a ts row needs '{name}'"))
                };
                Event::Timestamps { tsval: stamp(col("tsval"), "tsval")?, tsecr: stamp(col("tsecr"), "tsecr")? }
            }
            other => {
                return Err(format!(
                    "line {lineno}: event '{other}' is unknown; allowed: ack, ack_no_cc, ece, ce, no_ce, loss, rto, \
                     tx_start, undo, ts"
                ))
            }
        };
        out.push(TraceEvent {
            time_us,
            event,
            snd_una: num(get(c_una), "snd_una", lineno)?,
            snd_nxt: num(get(c_nxt), "snd_nxt", lineno)?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bbr::Bbr;
    use crate::Params;

    fn ack(t: u64, acked: u32) -> TraceEvent {
        TraceEvent { time_us: t, event: crate::test_support::open_ack(acked, 10_000), snd_una: None, snd_nxt: None }
    }

    #[test]
    fn reno_slow_start_then_halving() {
        // Slow start from 10: each ACKed segment adds one, so 30 ACKs give 40.
        // A loss then sets ssthresh = cwnd = 40 / 2 = 20.
        let mut evs: Vec<TraceEvent> = (0..30).map(|i| ack(i * 100, 1)).collect();
        evs.push(TraceEvent { time_us: 4000, event: Event::Loss, snd_una: None, snd_nxt: None });
        let rows = replay(Algorithm::new("reno", &Params::new()).unwrap(), ReplayStart::default(), &evs);
        assert_eq!(rows[29].cwnd, 40);
        assert_eq!((rows[30].cwnd, rows[30].ssthresh), (20, 20));
    }

    #[test]
    fn rto_sets_one_segment_and_undo_restores() {
        // RTO at cwnd 10 with infinite ssthresh: ssthresh = 5, cwnd = 1. Undo restores
        // cwnd = max(1, prior_cwnd 10) and ssthresh = prior_ssthresh = max(inf, 7).
        let evs = [
            TraceEvent { time_us: 0, event: Event::Rto, snd_una: None, snd_nxt: None },
            TraceEvent { time_us: 1, event: Event::Undo, snd_una: None, snd_nxt: None },
        ];
        let rows = replay(Algorithm::new("reno", &Params::new()).unwrap(), ReplayStart::default(), &evs);
        assert_eq!((rows[0].cwnd, rows[0].ssthresh, rows[0].ca_state), (1, 5, CaState::Loss));
        assert_eq!((rows[1].cwnd, rows[1].ssthresh), (10, crate::tcp::TCP_INFINITE_SSTHRESH));
    }

    #[test]
    fn a_second_timeout_keeps_the_first_threshold() {
        // An RTO at cwnd 10 gives ssthresh 5 and cwnd 1; a second RTO before the data is
        // recovered must not recompute it (reno would give max(1 >> 1, 2) = 2).
        let evs = [
            TraceEvent { time_us: 0, event: Event::Rto, snd_una: None, snd_nxt: None },
            TraceEvent { time_us: 1, event: Event::Rto, snd_una: None, snd_nxt: None },
        ];
        let rows = replay(Algorithm::new("reno", &Params::new()).unwrap(), ReplayStart::default(), &evs);
        assert_eq!((rows[1].cwnd, rows[1].ssthresh), (1, 5));
    }

    #[test]
    fn a_timeout_after_progress_in_loss_recomputes_the_threshold() {
        // tcp_ack zeroes icsk_retransmits when snd_una advances; tcp_enter_loss in Loss with
        // icsk_retransmits == 0 then recomputes: RTO at cwnd 10 (ssthresh 5, cwnd 1), an ACK
        // of one segment (slow start: cwnd 2), RTO again: reno max(2 / 2, 2) = 2.
        let evs = [
            TraceEvent { time_us: 0, event: Event::Rto, snd_una: None, snd_nxt: None },
            ack(1, 1),
            TraceEvent { time_us: 2, event: Event::Rto, snd_una: None, snd_nxt: None },
        ];
        let rows = replay(Algorithm::new("reno", &Params::new()).unwrap(), ReplayStart::default(), &evs);
        assert_eq!((rows[1].cwnd, rows[1].ca_state), (2, CaState::Loss));
        assert_eq!((rows[2].cwnd, rows[2].ssthresh), (1, 2));
    }

    #[test]
    fn an_ack_without_hooks_moves_only_the_sequence() {
        // Reno in congestion avoidance from cwnd 10 (ssthresh 5): tcp_cong_avoid_ai adds one
        // segment once cwnd_cnt reaches cwnd, so 9 ACKs of one segment leave cwnd 10 with
        // cwnd_cnt 9. An ACK whose hooks did not run (ack_no_cc) changes neither; the next
        // ACK makes cwnd_cnt 10 = cwnd: cwnd 11, cwnd_cnt 0.
        let start = ReplayStart { cwnd: 10, ssthresh: 5 };
        let mut r = Replayer::new(Algorithm::new("reno", &Params::new()).unwrap(), start, 0);
        let seq =
            |t: u64, una: u32, event| TraceEvent { time_us: t, event, snd_una: Some(una), snd_nxt: Some(una + 10) };
        let ack = crate::test_support::open_ack(1, 10_000);
        for i in 1..=9 {
            r.step(&seq(i, i as u32, ack));
        }
        let row = r.step(&seq(10, 10, Event::AckNoCc { rtt_us: 10_000 }));
        assert_eq!((row.cwnd, row.cwnd_cnt, r.host.tcp.snd_una), (10, 9, 10));
        let row = r.step(&seq(11, 11, ack));
        assert_eq!((row.cwnd, row.cwnd_cnt), (11, 0));
    }

    #[test]
    fn westwood_completes_the_reduction_on_the_ack_that_ends_recovery() {
        // Linux 6.x tcp_ack: in_ack_event (tcp_westwood_ack), then tcp_fastretrans_alert,
        // which leaves Recovery with tcp_end_cwnd_reduction -> CA_EVENT_COMPLETE_CWR:
        // ssthresh = cwnd = bw_est * rtt_min / mss from the estimate as that ACK left it.
        // HZ 1000, MSS 1000, init at 0, RTT 10 ms (10 jiffies; windows of > HZ/20 = 50).
        // ACKs of 10 segments at 10..60 ms (the first only takes snd_una): the window closes
        // at 60 over 40 segments, bw_est = 40000 / 60 = 666; the loss there gives
        // 666 * 10 / 1000 = 6. Recovery ACKs of 40 segments at 70..110 and the exit ACK
        // at 120 close the next window first: sample (10000 + 200000) / 60 = 3500,
        // bw_ns_est = (7 * 666 + 3500) >> 3 = 1020, bw_est = (7 * 666 + 1020) >> 3 = 710:
        // 7 segments, then cong_avoid at cwnd = ssthresh only counts (cwnd_cnt 1).
        let mut t = String::from("time_us,event,acked,rtt_us,cwnd_limited\n");
        for i in 1..=6 {
            t += &format!("{},ack,10,10000,1\n", 10_000 * i);
        }
        t += "60000,loss,,,\n";
        for i in 7..=11 {
            t += &format!("{},ack,40,10000,0\n", 10_000 * i);
        }
        t += "120000,ack,1,10000,1\n";
        let evs = parse_trace_csv(&t).unwrap();
        let opts = ReplayOptions { mss: Some(1000), start_us: Some(0), ..ReplayOptions::default() };
        let alg = Algorithm::new("westwood", &Params::new().set("hz", 1000.0)).unwrap();
        let rows = replay_with(alg, ReplayStart::default(), opts, &evs);
        assert_eq!((rows[6].cwnd, rows[6].ssthresh, var(&rows[6], "bw_est_bytes_per_jiffy")), (6, 6, 666.0));
        assert_eq!((rows[11].cwnd, rows[11].ssthresh), (6, 6));
        let exit = &rows[12];
        assert_eq!((exit.cwnd, exit.ssthresh, exit.cwnd_cnt, var(exit, "bw_est_bytes_per_jiffy")), (7, 7, 1, 710.0));
    }

    #[test]
    fn vegas_restarts_at_tx_start_from_the_snd_nxt_before_the_segment() {
        // tcp_event_data_sent raises CA_EVENT_TX_START for a segment sent with nothing in
        // flight; tcp_vegas_cwnd_event runs tcp_vegas_init: baseRTT forgotten and a round
        // begun at snd_nxt before that segment (7 here, all the ACK left), so the first ACK of
        // new data ends it with one sample: Reno's step (cwnd_cnt 0 -> 1), not a decision.
        // Congestion avoidance at cwnd 7 (ssthresh 3); init's round (from snd_nxt 0) ends at
        // the first ACK, of all 7 segments out, with one sample: Reno, cwnd 8. Then 7
        // segments leave and return with RTT 5000 us: the round from snd_nxt 14 ends at
        // snd_una 15 with 3 samples, minRTT = baseRTT = 5001, diff 0 < alpha: cwnd 9.
        // Without the restart baseRTT is the first ACK's 101: diff = 8 * 4900 / 101 = 388
        // > beta, cwnd 7.
        let row = |t: u64, event: &str, acked: &str, rtt: &str, idle: &str, una: u32, nxt: u32| {
            format!("{t},{event},{acked},{rtt},1,{idle},{una},{nxt}\n")
        };
        let header = "time_us,event,acked,rtt_us,cwnd_limited,idle_us,snd_una,snd_nxt\n";
        let t = header.to_owned() + &row(1, "ack", "7", "100", "", 7, 7);
        let restart = row(1, "tx_start", "", "", "900", 7, 14);
        let rest = [
            row(2, "ack", "1", "5000", "", 8, 15),
            row(3, "ack", "1", "5000", "", 9, 16),
            row(4, "ack", "1", "5000", "", 10, 17),
            row(5, "ack", "5", "5000", "", 15, 21),
        ]
        .concat();
        let alg = || Algorithm::new("vegas", &Params::new()).unwrap();
        let start = ReplayStart { cwnd: 7, ssthresh: 3 };
        let rows = replay(alg(), start, &parse_trace_csv(&(t + &restart + &rest)).unwrap());
        assert_eq!((rows[0].cwnd, rows[0].cwnd_cnt), (8, 0));
        assert_eq!((var(&rows[1], "base_rtt_us"), var(&rows[1], "rtt_count")), (2147483647.0, 0.0));
        assert_eq!((rows[2].cwnd, rows[2].cwnd_cnt, var(&rows[2], "rtt_count")), (8, 1, 0.0));
        assert_eq!((rows[5].cwnd, var(&rows[5], "base_rtt_us")), (9, 5001.0));
        let no_restart = row(1, "ack", "7", "100", "", 7, 14) + &rest;
        let rows = replay(alg(), start, &parse_trace_csv(&(header.to_owned() + &no_restart)).unwrap());
        assert_eq!(rows[4].cwnd, 7);
    }

    #[test]
    fn vegas_restarts_at_the_timeouts_retransmission() {
        // tcp_retransmit_timer: tcp_enter_loss (tcp_vegas_state(Loss): Vegas off) marks all
        // outstanding lost; the head's retransmission leaves with nothing in flight, and
        // tcp_event_data_sent's CA_EVENT_TX_START runs tcp_vegas_init: baseRTT forgotten,
        // Vegas on. Before it, two ACKs with RTT 5000 us: baseRTT 5001.
        let t = "time_us,event,acked,rtt_us\n0,ack,1,5000\n1,ack,1,5000\n300000,rto,,\n";
        let rows = replay(
            Algorithm::new("vegas", &Params::new()).unwrap(),
            ReplayStart::default(),
            &parse_trace_csv(t).unwrap(),
        );
        assert_eq!(var(&rows[1], "base_rtt_us"), 5001.0);
        assert_eq!((rows[2].ca_state, var(&rows[2], "enabled")), (CaState::Loss, 1.0));
        assert_eq!(var(&rows[2], "base_rtt_us"), 2147483647.0);
    }

    #[test]
    fn tahoe_restarts_from_one() {
        let evs = [TraceEvent { time_us: 0, event: Event::Loss, snd_una: None, snd_nxt: None }];
        let rows = replay(Algorithm::new("tahoe", &Params::new()).unwrap(), ReplayStart::default(), &evs);
        assert_eq!((rows[0].cwnd, rows[0].ssthresh), (1, 5));
    }

    /// The ideal path of `bbr_tests.rs` as a trace: one ACK of one segment every 100 us,
    /// RTT 10 ms, every rate sample 100 segments in 10 ms (bw = 100 * 2^24 / 10000 =
    /// 167772 packets/us << 24); `in_flight` given from ACK `drain_at` on.
    fn ideal_bbr_trace(acks: u32, drain_at: u32) -> String {
        let mut t = String::from(
            "time_us,event,acked,rtt_us,rs_prior_delivered,rs_delivered,rs_interval_us,rs_app_limited,in_flight\n",
        );
        for i in 0..acks {
            let inflight = if i + 1 >= drain_at { "110".to_string() } else { String::new() };
            t += &format!("{},ack,1,10000,{},100,10000,0,{inflight}\n", 100 * (i + 1), i.saturating_sub(100));
        }
        t
    }

    fn bbr() -> Algorithm {
        Algorithm::new("bbr", &Params::new()).unwrap()
    }

    fn var(row: &ReplayRow, name: &str) -> f64 {
        row.vars.iter().find(|(k, _)| *k == name).unwrap().1
    }

    #[test]
    fn bbr_replays_rate_columns() {
        // First ACK, STARTUP: the pacing rate is bbr_rate_bytes_per_sec(bw 167772, high_gain
        // 739) = ((167772 * 1448 * 739) >> 8) * 990000 >> 24 = 41381651 B/s (the init rate
        // from 10 segments per 10 ms srtt is ten times lower, and STARTUP only raises it).
        // The window grows by the ACKed segment (cwnd 10 < target bdp(739) 289 + 3 * 27 TSO
        // segments): 11.
        let evs = parse_trace_csv(&ideal_bbr_trace(1, u32::MAX)).unwrap();
        assert!(matches!(
            evs[0].event,
            Event::RateAck { rate: AckRate { delivered: 100, interval_us: 10_000, .. }, .. }
        ));
        let rows = replay(bbr(), ReplayStart::default(), &evs);
        assert_eq!((rows[0].cwnd, rows[0].pacing_rate, var(&rows[0], "mode")), (11, 41_381_651, 0.0));
    }

    #[test]
    fn bbr_replay_enters_probe_bw_at_the_seeded_phase() {
        // Rounds start at ACKs 1, 102, 203, 304 (bbr_tests.rs); the bandwidth never grows, so
        // the third round without 25% growth (ACK 304) sets full_bw_reached: DRAIN. At ACK
        // 305, 110 in flight (less than one BDP of 100 plus the 3 * 9 TSO budget, 128) ends
        // DRAIN: PROBE_BW at the phase the seed draws, paced at that phase's gain:
        // ((167772 * 1448 * gain) >> 8) * 990000 >> 24 = 17918982 (5/4), 10751389 (3/4),
        // 14335186 (1) B/s.
        let evs = parse_trace_csv(&ideal_bbr_trace(305, 305)).unwrap();
        let mut phases = std::collections::BTreeSet::new();
        for seed in 0..20 {
            let opts = ReplayOptions { seed: Some(seed), ..ReplayOptions::default() };
            let rows = replay_with(bbr(), ReplayStart::default(), opts, &evs);
            assert_eq!(var(&rows[303], "mode"), 1.0);
            let last = rows.last().unwrap();
            let phase = Bbr::entry_phases(seed, 1)[0];
            assert_eq!((var(last, "mode"), var(last, "cycle_idx")), (2.0, phase as f64));
            let rate = match phase {
                0 => 17_918_982,
                1 => 10_751_389,
                _ => 14_335_186,
            };
            assert_eq!(last.pacing_rate, rate);
            phases.insert(phase);
        }
        // Never the draining phase 1; 20 seeds reach several of the other seven.
        assert!(!phases.contains(&1) && phases.len() >= 4, "{phases:?}");
    }

    #[test]
    fn bbr_starts_from_the_handshake_rtt() {
        // bbr_init takes min_rtt from tcp_min_rtt(): with a 10 ms handshake sample, a first
        // ACK at 12 ms leaves it at 10000 (bbr_update_min_rtt keeps the smaller); without
        // one the first ACK's 12000 becomes the minimum.
        let trace = "time_us,event,acked,rtt_us,rs_prior_delivered,rs_delivered,rs_interval_us,rs_app_limited\n\
                     100,ack,1,12000,0,1,12000,0\n";
        let evs = parse_trace_csv(trace).unwrap();
        let with = ReplayOptions { handshake_rtt_us: Some(10_000), ..ReplayOptions::default() };
        let rows = replay_with(bbr(), ReplayStart::default(), with, &evs);
        assert_eq!(var(&rows[0], "min_rtt_us"), 10_000.0);
        let rows = replay(bbr(), ReplayStart::default(), &evs);
        assert_eq!(var(&rows[0], "min_rtt_us"), 12_000.0);
    }

    #[test]
    fn rate_columns_are_all_or_none_and_required_by_bbr() {
        let err = parse_trace_csv("time_us,event,acked,rtt_us,rs_delivered\n0,ack,1,100,5\n").unwrap_err();
        assert!(err.contains("line 2") && err.contains("'rs_prior_delivered' is missing"), "{err}");
        let err = parse_trace_csv(
            "time_us,event,acked,rtt_us,rs_prior_delivered,rs_delivered,rs_interval_us,rs_app_limited\n0,ack,1,100,0,-2,5,0\n",
        )
        .unwrap_err();
        assert!(err.contains("'rs_delivered' is '-2'"), "{err}");
        let evs = parse_trace_csv("time_us,event,acked,rtt_us\n0,ack,1,100\n").unwrap();
        let err = check_replayable(&bbr(), "bbr", &evs).unwrap_err();
        assert!(err.contains("rs_interval_us") && err.contains("event 1"), "{err}");
        assert!(check_replayable(&Algorithm::new("reno", &Params::new()).unwrap(), "reno", &evs).is_ok());
    }

    #[test]
    fn csv_parses_and_rejects_with_line_numbers() {
        let evs = parse_trace_csv("time_us,event,acked,rtt_us\n0,ack,2,100\n5,loss,,\n9,tx_start,,\n9,ack_no_cc,2,7\n")
            .unwrap();
        assert_eq!(evs.len(), 4);
        assert_eq!(evs[3].event, Event::AckNoCc { rtt_us: 7 });
        assert_eq!(evs[0].event, crate::test_support::open_ack(2, 100));
        let err = parse_trace_csv("time_us,event\n0,ack\n1,lose\n").unwrap_err();
        assert!(err.contains("line 3") && err.contains("'lose'"), "{err}");
        let err = parse_trace_csv("time_us,event,foo\n").unwrap_err();
        assert!(err.contains("'foo'"), "{err}");
        let err = parse_trace_csv("time_us,event\n5,ack\n4,ack\n").unwrap_err();
        assert!(err.contains("back in time"), "{err}");
    }
}
