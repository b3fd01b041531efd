//! Sans-IO TCP congestion control, shaped like Linux `tcp_congestion_ops`.
//!
//! An algorithm is a pure state machine. It never reads a clock: every hook gets `now_ns`,
//! the time of the event in nanoseconds since an arbitrary origin. The window lives in
//! [`TcpState`], the few fields of Linux's `tcp_sock` that congestion modules read and
//! write (`snd_cwnd`, `snd_cwnd_cnt`, `snd_ssthresh`, ...), counted in segments with the
//! kernel's integer accounting ([`tcp_slow_start`], [`tcp_cong_avoid_ai`]). The transport
//! that embeds an algorithm (the cubiclab simulator, the replay driver, a user-space TCP or
//! QUIC stack) owns `TcpState` and calls the hooks where Linux's `tcp_input.c` calls them.
//!
//! [`Algorithm`] is the registry: a closed enum over every algorithm, built by name with
//! checked parameters, dispatched without boxing.

pub mod ack_aggregation;
pub mod bbr;
pub mod bbr3;
pub mod bic;
mod bic_lineage;
pub mod cdg;
pub mod clock;
pub mod cubic;
pub mod cubic_2005;
pub mod cubic_2005_fixed;
pub mod cubic_2008;
pub mod cubic_2008_fixed;
pub mod cubic_2_2;
mod cubic_2_6;
pub mod cubic_frame;
pub mod cubic_rfc9438;
pub mod cubic_rfc9438_fixed;
pub mod cubic_v2_0;
pub mod dctcp;
pub mod facts;
pub mod highspeed;
pub mod host;
pub mod htcp;
pub mod hybla;
pub mod hystart_plus_plus;
pub mod illinois;
pub mod intmath;
pub mod lp;
pub mod minmax;
pub mod nv;
pub mod params;
pub mod random;
pub mod registry;
pub mod reno;
pub mod replay;
pub mod scalable;
pub mod seq;
pub mod tcp;
#[cfg(test)]
mod test_support;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

pub use params::{ParamError, ParamSpec, Params};
pub use registry::{Algorithm, ALGORITHMS};
pub use tcp::{tcp_cong_avoid_ai, tcp_slow_start, AckEvent, AckSample, CaEvent, CaState, RateSample, TcpState};

/// The hooks of Linux `struct tcp_congestion_ops` (seed 000, Fig. 2), minus `release`
/// (nothing to free) and `get_info` (see [`CongestionControl::vars`]).
///
/// `ssthresh`, `cong_avoid` and `undo_cwnd` are required, as in Linux; the rest default to
/// doing nothing.
pub trait CongestionControl {
    /// Called once when the connection starts, before any other hook.
    fn init(&mut self, _tcp: &mut TcpState, _now_ns: u64) {}

    /// A congestion event (fast retransmit or timeout): return the new slow-start
    /// threshold. Called before the window is reduced, with the window at the event.
    fn ssthresh(&mut self, tcp: &TcpState, now_ns: u64) -> u32;

    /// An ACK advanced the window by `acked` segments: grow `tcp.cwnd`. Linux calls it only
    /// when the congestion state allows the window to rise (Open, Disorder, Loss).
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64);

    /// The congestion state changes to `new_state` (`tcp.ca_state` still holds the old one).
    fn set_state(&mut self, _tcp: &mut TcpState, _new_state: CaState, _now_ns: u64) {}

    /// A window event such as restart after idle.
    fn cwnd_event(&mut self, _tcp: &mut TcpState, _event: CaEvent, _now_ns: u64) {}

    /// Whether the algorithm has an [`Self::in_ack_event`] hook (Linux tests
    /// `ops->in_ack_event` before calling it; the host skips the call's preparation
    /// otherwise).
    fn has_in_ack_event(&self) -> bool {
        false
    }

    /// Linux `TCP_CONG_NEEDS_ECN`: the connection negotiates ECN whatever `tcp_ecn` says
    /// (`tcp_ecn_send_syn`, `tcp_ca_needs_ecn`), and the receiver reports each segment's CE
    /// state to the algorithm (`CA_EVENT_ECN_IS_CE` / `CA_EVENT_ECN_NO_CE`).
    fn needs_ecn(&self) -> bool {
        false
    }

    /// A congestion event proved spurious: return the window to restore.
    /// The default is Linux `tcp_reno_undo_cwnd`.
    fn undo_cwnd(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        tcp.cwnd.max(tcp.prior_cwnd)
    }

    /// Segments were cumulatively acknowledged, with an RTT sample when one is valid.
    fn pkts_acked(&mut self, _tcp: &mut TcpState, _sample: &AckSample, _now_ns: u64) {}

    /// Linux `in_ack_event(sk, flags)`: once per ACK, after `pkts_acked` (6.14 and later:
    /// `tcp_ack` calls it after `tcp_clean_rtx_queue`) and the delivery counts
    /// (`tcp.delivered`, `tcp.delivered_ce`), before the congestion state machine, with what
    /// `tcp_ack` learned of it. Called only if [`Self::has_in_ack_event`].
    fn in_ack_event(&mut self, _tcp: &mut TcpState, _ev: AckEvent, _now_ns: u64) {}

    /// Whether the algorithm sets the window and the pacing rate itself on every ACK
    /// (`ops->cong_control`, as BBR does). The host then calls [`Self::cong_control`] instead
    /// of `cong_avoid`, skips PRR (`tcp_cwnd_reduction`) and the window reset at the end of
    /// recovery (`tcp_end_cwnd_reduction` returns early), and leaves `tcp.pacing_rate` alone
    /// (`tcp_update_pacing_rate` is not called).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// Linux `cong_control(sk, ack, flag, rs)`: called at the end of every ACK's processing,
    /// with the ACK's delivery-rate sample and `tcp.in_flight` current, after the congestion
    /// state machine has run. Only called when [`Self::has_cong_control`] is true.
    fn cong_control(&mut self, _tcp: &mut TcpState, _rs: &RateSample, _now_ns: u64) {}

    /// Linux `min_tso_segs`: the fewest segments per TSO burst; `None` leaves the sysctl
    /// default (`tcp_min_tso_segs`, 2).
    fn min_tso_segs(&self, _tcp: &TcpState) -> Option<u32> {
        None
    }

    /// Seed the algorithm's random numbers (the kernel's `get_random_u32_below`), so the
    /// same scenario and seed give the same run. Algorithms without randomness ignore it.
    fn seed_random(&mut self, _seed: u64) {}

    /// Whether the simulator seeds it from the run's seed (each flow's own stream): the
    /// algorithms added with the seeding (`nv`, `cdg`). BBR and BBRv3 answer false and keep
    /// their default stream, so their simulated results stay what they were.
    fn takes_run_seed(&self) -> bool {
        false
    }

    /// Whether a fast retransmit is followed by fast recovery (cwnd = ssthresh when it ends).
    /// Not a Linux hook: Tahoe answers false and restarts from one segment in slow start.
    fn fast_recovery(&self) -> bool {
        true
    }

    /// The algorithm's own variables, by name, for traces (Linux `get_info` in spirit).
    fn vars(&self, _out: &mut dyn FnMut(&'static str, f64)) {}
}
