//! The sending end of a bulk TCP flow: the scoreboard's loss detection and the
//! transmission queue around a [`Host`], which holds Linux's TCP around the algorithm
//! (Recovery, Loss, PRR, cwnd validation, the RTO estimator, the hook order) shared with the
//! replay driver. One job per file:
//!
//! - `ack.rs`, per ACK in `tcp_ack`'s order: the cumulative ACK and the SACK update the
//!   scoreboard (`tcp_sacktag_write_queue`); retransmissions sent before a segment now
//!   delivered are lost (RACK on retransmissions); `snd_una` moves, the RTT estimator takes
//!   the oldest never-retransmitted segment newly ACKed (else SACKed), `pkts_acked` gets the
//!   newest (`tcp_clean_rtx_queue`); then loss detection, the delivery-rate sample
//!   (`tcp_rate_gen`, [`cubiclab_cc::host::rate`]) from the newest segment delivered, and
//!   PRR in Recovery, `cong_avoid` otherwise, or the algorithm's own `cong_control` with the
//!   rate sample (`tcp_cong_control`).
//! - `loss.rs`, loss detection, chosen once as a [`LossDetection`]: RACK with SACK
//!   (`rack.rs`), or NewReno's three duplicate ACKs; entering Recovery, and leaving Recovery
//!   and Loss once `snd_una` reaches `high_seq` (`tcp_fastretrans_alert`); F-RTO (`frto.rs`)
//!   tells a spurious timeout and undoes it.
//! - `timers.rs`, Linux's two timers of a socket: the retransmission timer, standing for the
//!   RTO, RACK's reorder timer (`tcp_rack_reo_timeout`) or, in Open with SACK, a tail loss
//!   probe (`tlp.rs`); and the pacing timer. The sender answers [`Sender::poll_timeout`]
//!   with its next deadline and which [`Timer`] it is; the engine calls it back then.
//! - `xmit.rs`, transmission (`tcp_write_xmit`): lost segments first, then new data in TSO
//!   packets of `tcp_tso_autosize` segments whose last carries PSH ([`Segment::push`],
//!   which the receiver ACKs at once); a paced algorithm (BBR) sends at its `sk_pacing_rate`
//!   ([`cubiclab_cc::host::pacing`]); the first transmission after idle restarts the window
//!   (`tcp_cwnd_restart`).
//!
//! Undo (`tcp_try_undo_*`): D-SACKs that cover every retransmission since the reduction
//! began (`undo_retrans` reaching 0), or an ACK echoing a timestamp older than the first
//! retransmission (Eifel, `tcp_packet_delayed`), gives the window back through the
//! algorithm's `undo_cwnd`. Every segment carries the timestamp option (12 bytes, counted
//! in the simulator's 52-byte header, as on the testbed whose kernel has `tcp_timestamps`
//! on); its echo also gives an RTT sample when Karn forbids one (`tcp_ack_update_rtt`).
//!
//! Not modelled: `tcp_tso_should_defer`, pacing by the `fq` qdisc. Algorithms without fast recovery (Tahoe)
//! treat a fast retransmit like a timeout without the backoff.

mod ack;
mod loss;
mod timers;
mod xmit;

use cubiclab_cc::clock::TESTBED_JIFFY_NS;
use cubiclab_cc::host::pacing::Pacer;
use cubiclab_cc::host::rate::RateEstimator;
use cubiclab_cc::host::rtt::RttEstimator;
use cubiclab_cc::host::Host;
use cubiclab_cc::seq::before;
use cubiclab_cc::{AckEvent, Algorithm, CongestionControl, TcpState};

use super::frto::Frto;
use super::rack::Rack;
use super::scoreboard::Scoreboard;
use super::tlp::Tlp;
use crate::engine::Time;
use crate::packet::{Packet, SackBlocks};
use cubiclab_path::Ecn;

/// Loss recovery flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// SACK-based recovery (RFC 6675 loss rule, Linux scoreboard).
    Sack,
    /// NewReno (RFC 6582): duplicate ACKs only; one hole repaired per partial ACK.
    NewReno,
}

#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub recovery: Recovery,
    pub min_rto_ns: u64,
    /// The receiver's window in the SYN-ACK, in segments: what may be sent before the
    /// first ACK brings its own (`update_window`).
    pub rwnd: u32,
    pub initial_cwnd: u32,
    /// Initial ssthresh; `None` is Linux's infinite threshold.
    pub initial_ssthresh: Option<u32>,
    /// Tail loss probes (Linux `net.ipv4.tcp_early_retrans` >= 3, the default).
    pub loss_probes: bool,
    /// F-RTO (Linux `net.ipv4.tcp_frto`, 2 by default).
    pub frto: bool,
}

/// Counters of one sender, for results.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub loss_events: u64,
    pub rtt_samples: u64,
    /// Window just before the last congestion event.
    pub last_loss_cwnd: u32,
    /// ECN reductions: CWR entered on an ACK with ECE (`tcp_enter_cwr`).
    pub ecn_reductions: u64,
}

/// A segment [`Sender::next_segment`] lets out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u32,
    pub retransmit: bool,
    /// It carries the PSH flag (the last of a full TSO packet of new data).
    pub push: bool,
}

/// The sender's timers: the three events Linux's one retransmission timer stands for
/// (`icsk_pending`), and the pacing timer (`tp->pacing_timer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// `ICSK_TIME_RETRANS`: the retransmission timeout.
    Retransmit,
    /// `ICSK_TIME_REO_TIMEOUT`: RACK's reorder timer.
    ReorderTimeout,
    /// `ICSK_TIME_LOSS_PROBE`: the tail loss probe.
    LossProbe,
    /// The pacing timer: the next departure time of a paced sender.
    Pacing,
}

/// A deadline the sender asks to be called back at, and what for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    pub at: Time,
    pub timer: Timer,
}

/// How losses are found, chosen once from [`Recovery`] (Linux's `tcp_is_sack` /
/// `tcp_is_reno`): the flavour's rules are the methods of `loss.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LossDetection {
    /// The SACK scoreboard with RACK (`tcp_rack_mark_lost`); tail loss probes and F-RTO
    /// exist only here (`tcp_schedule_loss_probe` and `tcp_enter_loss` want SACK).
    Rack { probes: bool, frto: bool },
    /// NewReno: duplicate ACKs count as SACKed segments (`tcp_add_reno_sack`), the head is
    /// lost at DupThresh and after each partial ACK.
    DupAcks,
}

impl LossDetection {
    fn new(cfg: &SenderConfig) -> Self {
        match cfg.recovery {
            Recovery::Sack => Self::Rack { probes: cfg.loss_probes, frto: cfg.frto },
            Recovery::NewReno => Self::DupAcks,
        }
    }
}

/// The timers' state (see `timers.rs`).
#[derive(Clone, Copy, Debug)]
struct Timers {
    /// The retransmission timer's deadline (0: off) and what it stands for (never `Pacing`).
    xmit_at: Time,
    xmit: Timer,
    /// An ACK armed the timer for a probe (`tcp_set_xmit_timer`) whose deadline is computed
    /// at the end of the transmissions that follow (`end_burst`): new data among them
    /// re-arms the probe there anyway (`tcp_schedule_loss_probe(sk, false)`, last in Linux
    /// too), so the ACK's computation is skipped most of the time. True only between an
    /// ACK and the end of the transmissions after it.
    probe_on_ack: bool,
    /// The probe timer fired: one segment is due to leave now.
    probe_due: bool,
    /// The departure time a paced sender waits for (0: not waiting).
    pacing_at: Time,
}

/// What the transmissions of one `tcp_write_xmit` have done so far (see `xmit.rs`).
#[derive(Clone, Copy, Debug, Default)]
struct Burst {
    /// Segments were sent (the window's use is validated at the end), and new data among them.
    sent: bool,
    new_data: bool,
    /// Segments the TSO packet being sent may still take (0: none open).
    tso_left: u32,
}

/// The SACK option's memory across ACKs (see `ack.rs`).
#[derive(Clone, Copy, Debug)]
struct SackState {
    /// `tcp_highest_sack_seq` while segments are SACKed: the end of the highest.
    highest: u32,
    /// `recv_sack_cache`: the previous ACK's valid blocks, already processed.
    cache: SackBlocks,
    /// `tp->dsack_dups`: segments D-SACKed so far.
    dsack_dups: u64,
}

pub struct Sender {
    /// The algorithm and Linux's TCP state around it.
    pub host: Host,
    pub sb: Scoreboard,
    cfg: SenderConfig,
    loss: LossDetection,
    /// RACK's state (`tp->rack`, `tcp_min_rtt`).
    rack: Rack,
    /// The tail loss probe outstanding.
    tlp: Tlp,
    /// F-RTO (`tp->frto`), and its step 2b pending: new data before retransmissions.
    frto: Frto,
    frto_new_data: bool,
    /// Segments the application has handed over in total (`u32::MAX`: unlimited).
    pub app_limit: u32,
    /// The receive window's right edge (`tcp_wnd_end`: `snd_una + snd_wnd`), in segments:
    /// a segment below it may be sent (`tcp_snd_wnd_test`).
    wnd_end: u32,
    timers: Timers,
    pacer: Pacer,
    burst: Burst,
    sack: SackState,
    /// How `tcp_rcv_established` takes the next ACK (header prediction), set by the
    /// embedding before [`Sender::on_ack`]; the fast path unless said.
    pub next_ack: AckEvent,
    /// The last RTT sample given to the algorithm, microseconds (for recording).
    pub last_rtt_us: i64,
    pub stats: SenderStats,
    started: bool,
}

impl Sender {
    pub fn new(alg: Algorithm, cfg: SenderConfig, mss: u32) -> Self {
        let tcp = TcpState {
            cwnd: cfg.initial_cwnd.max(1),
            ssthresh: cfg.initial_ssthresh.unwrap_or(cubiclab_cc::tcp::TCP_INFINITE_SSTHRESH),
            mss,
            ..TcpState::default()
        };
        // Timeouts are whole jiffies of the testbed's kernel.
        let rtt = RttEstimator::new(cfg.min_rto_ns / 1000, TESTBED_JIFFY_NS / 1000);
        Self {
            host: Host::new(alg, tcp, rtt),
            sb: Scoreboard::new(),
            wnd_end: cfg.rwnd,
            loss: LossDetection::new(&cfg),
            cfg,
            rack: Rack::default(),
            tlp: Tlp::default(),
            frto: Frto::default(),
            frto_new_data: false,
            app_limit: u32::MAX,
            timers: Timers { xmit_at: 0, xmit: Timer::Retransmit, probe_on_ack: false, probe_due: false, pacing_at: 0 },
            pacer: Pacer::default(),
            burst: Burst::default(),
            sack: SackState { highest: 0, cache: SackBlocks::NONE, dsack_dups: 0 },
            next_ack: AckEvent::default(),
            last_rtt_us: -1,
            stats: SenderStats::default(),
            started: false,
        }
    }

    /// The window state (`snd_cwnd`, `snd_ssthresh`, `snd_una`, ...).
    #[inline]
    pub fn tcp(&self) -> &TcpState {
        &self.host.tcp
    }

    /// The algorithm's own variables by name (`CongestionControl::vars`), for the state table.
    pub fn cc_vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        cubiclab_cc::CongestionControl::vars(&self.host.alg, out);
    }

    /// Smoothed RTT, microseconds (0 before the first sample).
    #[inline]
    pub fn srtt_us(&self) -> u64 {
        self.host.rtt.srtt_us()
    }

    /// The current retransmission timeout in nanoseconds.
    #[inline]
    fn rto(&self) -> Time {
        self.host.rtt.rto_us() * 1000
    }

    /// A new connection in the same slot with a fresh algorithm: keeps the scoreboard's
    /// memory and the cumulative statistics.
    pub fn reset(&mut self, alg: Algorithm, app_limit: u32) {
        let mut sb = std::mem::take(&mut self.sb);
        sb.clear();
        let (stats, ecn_ok) = (self.stats, self.host.ecn_ok);
        *self = Sender::new(alg, self.cfg.clone(), self.host.tcp.mss);
        self.sb = sb;
        self.stats = stats;
        self.host.ecn_ok = ecn_ok;
        self.app_limit = app_limit;
    }

    /// The connection is established: the algorithm's `init`.
    pub fn start(&mut self, now: Time) {
        self.host.init(now);
        self.started = true;
        // The application's first write (`tcp_sendmsg`) finds nothing queued yet.
        let (in_flight, lost_out, retrans_out) = (self.in_flight(), self.sb.lost_out, self.sb.retrans_out);
        RateEstimator::check_app_limited(&mut self.host.tcp, 0, in_flight, lost_out, retrans_out);
    }

    pub fn started(&self) -> bool {
        self.started
    }

    /// The handshake's ECN negotiation (`tcp_ecn_send_syn`): asked for with `tcp_ecn` = 1
    /// (`requested`), or by an algorithm that needs ECN whatever the sysctl says; a Linux
    /// peer (`tcp_ecn` = 2, the default) accepts.
    pub fn set_ecn(&mut self, requested: bool) {
        self.host.ecn_ok = requested || self.host.alg.needs_ecn();
    }

    /// Whether the connection negotiated ECN.
    #[inline]
    pub fn ecn_ok(&self) -> bool {
        self.host.ecn_ok
    }

    /// `tcp_ecn_send` for data segment `p` on an ECN connection: new data is ECT(0), the
    /// first after a reduction began carries CWR; a retransmission is Not-ECT, unless the
    /// algorithm needs ECN (the socket then keeps ECT on every segment).
    #[inline]
    pub fn ecn_send(&mut self, p: Packet, retransmit: bool) -> Packet {
        if !retransmit {
            let p = p.with_ecn(Ecn::Ect0);
            return if self.host.take_queued_cwr() { p.with_cwr() } else { p };
        }
        if self.host.alg.needs_ecn() {
            p.with_ecn(Ecn::Ect0)
        } else {
            p
        }
    }

    /// An ACK for everything below `ack` carried a window of `segments` beyond it
    /// (`tcp_ack_update_window`; the receiver never moves the right edge back).
    #[inline]
    pub fn update_window(&mut self, ack: u32, segments: u32) {
        self.wnd_end = ack.wrapping_add(segments);
    }

    /// Whether the receive window lets segment `seq` out (`tcp_snd_wnd_test`).
    #[inline]
    fn window_allows(&self, seq: u32) -> bool {
        before(seq, self.wnd_end)
    }

    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.host.packets_out()
    }

    /// Linux `tcp_packets_in_flight`: sent, minus SACKed and lost, plus retransmitted.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.sb.retrans_out).saturating_sub(self.sb.sacked_out + self.sb.lost_out)
    }

    /// Everything the application handed over has been acknowledged.
    pub fn finished(&self) -> bool {
        self.app_limit != u32::MAX && self.host.tcp.snd_una == self.app_limit
    }

    /// `tcp_time_stamp_ts`: the TSval of a segment sent at `now`, in milliseconds (Linux's
    /// clock for the option); the 1 added stands for the connection's random offset, which
    /// keeps a real echo from reading 0 ("no echo").
    #[inline]
    pub fn ts_val(now: Time) -> u32 {
        (now / 1_000_000) as u32 + 1
    }
}
