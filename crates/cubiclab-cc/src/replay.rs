//! Drive any algorithm from a trace of events and record its state after each one.
//!
//! The driver plays the part of Linux `tcp_input.c` through the shared [`Host`], so its
//! hook order and its ssthresh, PRR and undo rules are the simulator's: on an ACK,
//! `snd_una` moves, the RTT estimator and `pkts_acked` run, Loss ends once the data
//! outstanding at the timeout is acknowledged, then `cong_avoid`. A `loss` event is a whole
//! fast recovery (enter Recovery, then leave it with cwnd = ssthresh); a `rto` event is
//! `tcp_retransmit_timer` with nothing left in flight; `undo` is `tcp_undo_cwnd_reduction`.
//!
//! An `ack_no_cc` is an ACK the kernel processed without running the algorithm's hooks
//! (seen with BPF algorithms, whose programs the kernel sometimes skips: the kernel
//! check's witness tells those ACKs): `snd_una` and the RTT estimator move, nothing else.
//!
//! Trace CSV columns: `time_us,event,acked,rtt_us`, optionally `cwnd_limited` (0/1: the
//! value of `tcp_is_cwnd_limited()` at that ACK), `disorder` (0/1: it arrived in Disorder,
//! see [`Event::Ack`]), `srtt_us` (the smoothed RTT after the ACK), `idle_us` (for `tx_start`), `snd_una` and
//! `snd_nxt` (segments, for HyStart rounds). Without sequence numbers the sender is taken to
//! be always cwnd-limited: after each ACK it sends until `snd_nxt = snd_una + cwnd`.

use crate::host::rtt::{RttEstimator, TCP_RTO_MIN_US};
use crate::host::{Host, PrrAck};
use crate::tcp::{AckSample, CaState, RateSample, TcpState, TCP_INIT_CWND};
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
    Ack { acked: u32, rtt_us: i64, cwnd_limited: bool, disorder: bool, srtt_us: Option<u32> },
    /// An ACK on which the algorithm's hooks did not run (`pkts_acked`, `cong_avoid`).
    AckNoCc { rtt_us: i64 },
    /// A congestion event detected by fast retransmit, through to the end of its recovery.
    Loss,
    /// A retransmission timeout.
    Rto,
    /// First transmission after `idle_us` of idle.
    TxStart { idle_us: u64 },
    /// The last congestion event proved spurious.
    Undo,
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Event::Ack { .. } => "ack",
            Event::AckNoCc { .. } => "ack_no_cc",
            Event::Loss => "loss",
            Event::Rto => "rto",
            Event::TxStart { .. } => "tx_start",
            Event::Undo => "undo",
        }
    }
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

/// A replay: an algorithm in a [`Host`], fed one event at a time.
pub struct Replayer {
    pub host: Host,
    /// A fast-recovery loss was replayed and its ACKs are still arriving: the trace's ACKs
    /// that do not raise the window (`cwnd_limited` false), and the first one that does (it
    /// ends the recovery), reach `pkts_acked` in Recovery, as in Linux, where
    /// `tcp_clean_rtx_queue` runs before `tcp_fastretrans_alert` returns to Open. The
    /// window itself is set at the loss (cwnd = ssthresh, where PRR ends).
    recovery_acks: bool,
}

impl Replayer {
    /// Start a connection at time `now_us`: the algorithm's `init`, then the initial window
    /// sent (unless the trace gives sequence numbers).
    pub fn new(alg: Algorithm, start: ReplayStart, now_us: u64) -> Self {
        let tcp = TcpState { cwnd: start.cwnd.max(1), ssthresh: start.ssthresh.max(1), ..TcpState::default() };
        // Traces carry microseconds; timeouts are not scheduled here, so the tick is moot.
        let mut host = Host::new(alg, tcp, RttEstimator::new(TCP_RTO_MIN_US, 1));
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
            Event::Ack { acked, rtt_us, cwnd_limited, disorder, srtt_us } => {
                let in_flight = h.packets_out();
                let prior_una = h.tcp.snd_una;
                let una = ev.snd_una.unwrap_or(h.tcp.snd_una.wrapping_add(acked));
                let advanced = h.ack_snd_una(una);
                // Linux's ack_sample.pkts_acked counts the segments this ACK took off the
                // retransmission queue (tcp_clean_rtx_queue): the snd_una advance, 0 for a
                // SACK-only ACK, whose newly delivered segments `acked` counts for cong_avoid.
                let pkts_acked = if ev.snd_una.is_some() { h.tcp.snd_una.wrapping_sub(prior_una) } else { acked };
                if let Some(nxt) = ev.snd_nxt {
                    h.tcp.snd_nxt = nxt;
                }
                if rtt_us >= 0 {
                    h.rtt_sample(rtt_us as u64);
                }
                if let Some(srtt) = srtt_us {
                    h.tcp.srtt_us = srtt;
                }
                let sample = AckSample { pkts_acked, rtt_us, in_flight };
                if self.recovery_acks && h.tcp.ca_state == CaState::Open {
                    h.tcp.ca_state = CaState::Recovery;
                    h.pkts_acked(&sample, now);
                    h.tcp.ca_state = CaState::Open;
                    self.recovery_acks = !cwnd_limited;
                } else if disorder && h.tcp.ca_state == CaState::Open {
                    h.tcp.ca_state = CaState::Disorder;
                    h.pkts_acked(&sample, now);
                    h.tcp.ca_state = CaState::Open;
                } else {
                    h.pkts_acked(&sample, now);
                }
                h.try_leave_recovery(now);
                h.assume_cwnd_limited(cwnd_limited);
                let ack = PrrAck { newly_acked_sacked: acked, newly_lost: 0, una_advanced: acked > 0 || advanced };
                h.cong_control(ack, &RateSample::default(), h.packets_out(), now);
                if ev.snd_nxt.is_none() {
                    let want = h.tcp.snd_una.wrapping_add(h.tcp.cwnd);
                    if (want.wrapping_sub(h.tcp.snd_nxt) as i32) > 0 {
                        h.tcp.snd_nxt = want;
                        h.tcp.lsndtime_ns = now;
                    }
                }
            }
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
                    h.enter_recovery(now);
                    // The trace does not detail the recovery: it ends here, as if high_seq
                    // were acknowledged at once.
                    h.high_seq = h.tcp.snd_una;
                    h.try_leave_recovery(now);
                    self.recovery_acks = true;
                } else {
                    // Tahoe: every loss is handled like a timeout, from one segment.
                    h.enter_loss(0, now);
                }
            }
            Event::Rto => {
                self.recovery_acks = false;
                h.retransmit_timer(0, now);
            }
            Event::TxStart { idle_us } => {
                h.tcp.lsndtime_ns = now.saturating_sub(idle_us * 1000);
                h.restart_after_idle(now, TCP_INIT_CWND);
                h.tcp.lsndtime_ns = now;
            }
            Event::Undo => h.undo(now),
        }
        self.row(ev.time_us, ev.event.name())
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
            vars,
        }
    }
}

/// Replay a whole trace through `alg`; one row per event.
pub fn replay(alg: Algorithm, start: ReplayStart, events: &[TraceEvent]) -> Vec<ReplayRow> {
    let t0 = events.first().map_or(0, |e| e.time_us);
    let mut r = Replayer::new(alg, start, t0);
    events.iter().map(|e| r.step(e)).collect()
}

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
    let (c_acked, c_rtt, c_lim, c_dis, c_srtt, c_idle, c_una, c_nxt) = (
        col("acked"),
        col("rtt_us"),
        col("cwnd_limited"),
        col("disorder"),
        col("srtt_us"),
        col("idle_us"),
        col("snd_una"),
        col("snd_nxt"),
    );
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
        let event = match name {
            "ack" => Event::Ack {
                acked: num(get(c_acked), "acked", lineno)?.unwrap_or(1),
                rtt_us: rtt_us()?,
                cwnd_limited: num::<u8>(get(c_lim), "cwnd_limited", lineno)?.map_or(true, |v| v != 0),
                disorder: num::<u8>(get(c_dis), "disorder", lineno)?.is_some_and(|v| v != 0),
                srtt_us: num(get(c_srtt), "srtt_us", lineno)?,
            },
            "ack_no_cc" => Event::AckNoCc { rtt_us: rtt_us()? },
            "loss" => Event::Loss,
            "rto" => Event::Rto,
            "tx_start" => Event::TxStart {
                idle_us: in_range(num(get(c_idle), "idle_us", lineno)?, "idle_us", MAX_TIME_US)?.unwrap_or(0),
            },
            "undo" => Event::Undo,
            other => {
                return Err(format!(
                    "line {lineno}: event '{other}' is unknown; allowed: ack, ack_no_cc, loss, rto, tx_start, undo"
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
    use crate::Params;

    fn ack(t: u64, acked: u32) -> TraceEvent {
        TraceEvent {
            time_us: t,
            event: Event::Ack { acked, rtt_us: 10_000, cwnd_limited: true, disorder: false, srtt_us: None },
            snd_una: None,
            snd_nxt: None,
        }
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
        let ack = Event::Ack { acked: 1, rtt_us: 10_000, cwnd_limited: true, disorder: false, srtt_us: None };
        for i in 1..=9 {
            r.step(&seq(i, i as u32, ack));
        }
        let row = r.step(&seq(10, 10, Event::AckNoCc { rtt_us: 10_000 }));
        assert_eq!((row.cwnd, row.cwnd_cnt, r.host.tcp.snd_una), (10, 9, 10));
        let row = r.step(&seq(11, 11, ack));
        assert_eq!((row.cwnd, row.cwnd_cnt), (11, 0));
    }

    #[test]
    fn tahoe_restarts_from_one() {
        let evs = [TraceEvent { time_us: 0, event: Event::Loss, snd_una: None, snd_nxt: None }];
        let rows = replay(Algorithm::new("tahoe", &Params::new()).unwrap(), ReplayStart::default(), &evs);
        assert_eq!((rows[0].cwnd, rows[0].ssthresh), (1, 5));
    }

    #[test]
    fn csv_parses_and_rejects_with_line_numbers() {
        let evs = parse_trace_csv("time_us,event,acked,rtt_us\n0,ack,2,100\n5,loss,,\n9,tx_start,,\n9,ack_no_cc,2,7\n")
            .unwrap();
        assert_eq!(evs.len(), 4);
        assert_eq!(evs[3].event, Event::AckNoCc { rtt_us: 7 });
        assert_eq!(
            evs[0].event,
            Event::Ack { acked: 2, rtt_us: 100, cwnd_limited: true, disorder: false, srtt_us: None }
        );
        let err = parse_trace_csv("time_us,event\n0,ack\n1,lose\n").unwrap_err();
        assert!(err.contains("line 3") && err.contains("'lose'"), "{err}");
        let err = parse_trace_csv("time_us,event,foo\n").unwrap_err();
        assert!(err.contains("'foo'"), "{err}");
        let err = parse_trace_csv("time_us,event\n5,ack\n4,ack\n").unwrap_err();
        assert!(err.contains("back in time"), "{err}");
    }
}
