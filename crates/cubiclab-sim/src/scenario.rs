//! A scenario in integer units (bits/s, ns, bytes), already parsed from its file. The
//! dumbbell of seed 000 Fig. 7 / seed 001 Fig. 7: every flow crosses one bottleneck (rate,
//! one-way delay, buffer) forward, and its ACKs cross the reverse link; each flow's own
//! two-way propagation RTT comes from its access links.

use cubiclab_cc::{Algorithm, Params};

use crate::loss::LossSpec;
use crate::queue::{CoDelSpec, Limit, RedSpec};
use crate::tcp::Recovery;

/// The queue discipline of the bottleneck buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueKind {
    DropTail,
    Red(RedSpec),
    CoDel(CoDelSpec),
}

/// Which way a web session's objects travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Data on the forward bottleneck, like the long-lived flows.
    Forward,
    /// Data on the reverse bottleneck, sharing it with the long-lived flows' ACKs.
    Reverse,
}

/// How each web session's RTT is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RttDist {
    Fixed(u64),
    /// Exponential with this mean (seed 000 Sec. 6.1), floored at twice the bottleneck
    /// delay plus 1 ms, rounded to whole milliseconds.
    Exponential(u64),
}

/// Background web sessions: each fetches objects one after another, each object a new
/// short TCP transfer (one RTT of handshake, then the data), with Pareto-distributed sizes
/// and exponential think times between objects.
#[derive(Clone, Debug)]
pub struct WebSpec {
    pub group: String,
    pub sessions: u32,
    pub direction: Direction,
    pub mean_size_bytes: u64,
    /// Pareto shape (> 1 for a finite mean).
    pub shape: f64,
    /// Sizes are capped at this multiple of the mean (see `traffic.rs`).
    pub max_size_ratio: f64,
    pub think_mean_ns: u64,
    pub rtt: RttDist,
    pub algorithm: String,
    pub params: Params,
    pub recovery: Recovery,
}

#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// Group label for results (the scenario's flow group).
    pub group: String,
    pub algorithm: String,
    pub params: Params,
    /// Two-way propagation delay, ns (bottleneck both ways plus access links).
    pub rtt_ns: u64,
    pub start_ns: u64,
    /// The application stops handing over data at this time.
    pub stop_ns: Option<u64>,
    /// Bytes to transfer; the flow completes when all are acknowledged.
    pub bytes: Option<u64>,
    pub recovery: Recovery,
    /// Segments per delayed ACK: 2 (Linux), or 1 for no delayed ACKs.
    pub ack_every: u32,
    pub delack_timeout_ns: u64,
    /// Receiver window, segments.
    pub rwnd: u32,
    pub initial_cwnd: u32,
    pub initial_ssthresh: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub seed: u64,
    pub duration_ns: u64,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Header bytes: a data packet is `mss + header_bytes` on the wire.
    pub header_bytes: u32,
    /// Bytes of an ACK on the wire.
    pub ack_bytes: u32,
    pub rate_bps: u64,
    /// One-way propagation delay of the bottleneck, ns.
    pub delay_ns: u64,
    pub buffer: Limit,
    pub reverse_buffer: Limit,
    pub queue: QueueKind,
    /// Random loss on the forward and the reverse bottleneck.
    pub loss: LossSpec,
    pub reverse_loss: LossSpec,
    pub flows: Vec<FlowSpec>,
    pub web: Vec<WebSpec>,
    pub sample_interval_ns: u64,
    /// Each flow starts at its start time plus a uniform draw in [0, jitter).
    pub start_jitter_ns: u64,
    pub min_rto_ns: u64,
    /// Record cwnd and ssthresh at every change (besides the interval samples).
    pub record_cwnd_changes: bool,
    /// Record every RTT sample given to the algorithms.
    pub record_rtt_samples: bool,
}

impl Scenario {
    /// Check everything before a run; the message names the field and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("bottleneck.rate must be > 0".into());
        }
        if self.duration_ns == 0 {
            return Err("duration must be > 0".into());
        }
        if self.sample_interval_ns == 0 {
            return Err("record.interval must be > 0".into());
        }
        if self.mss == 0 || self.mss > 65_000 {
            return Err(format!("mss is {}; allowed: 1..=65000 bytes", self.mss));
        }
        for (name, b) in [("bottleneck.buffer", self.buffer), ("bottleneck.reverse_buffer", self.reverse_buffer)] {
            match b {
                Limit::Packets(0) | Limit::Bytes(0) => return Err(format!("{name} must be > 0")),
                Limit::Bytes(n) if n < (self.mss + self.header_bytes) as u64 => {
                    return Err(format!(
                        "{name} is {n} bytes; it must hold at least one packet ({} bytes)",
                        self.mss + self.header_bytes
                    ))
                }
                _ => {}
            }
        }
        if self.flows.is_empty() && self.web.is_empty() {
            return Err("flows: a scenario needs at least one flow".into());
        }
        self.loss.validate("bottleneck.loss")?;
        self.reverse_loss.validate("bottleneck.reverse_loss")?;
        match self.queue {
            QueueKind::DropTail => {}
            QueueKind::Red(r) => r.validate()?,
            QueueKind::CoDel(c) => {
                if c.target_ns == 0 || c.interval_ns == 0 {
                    return Err("bottleneck.codel: target and interval must be > 0".into());
                }
            }
        }
        for (i, w) in self.web.iter().enumerate() {
            let at = format!("web[{i}] (group '{}')", w.group);
            Algorithm::new(&w.algorithm, &w.params).map_err(|e| format!("{at}: {e}"))?;
            if w.sessions == 0 {
                return Err(format!("{at}: sessions must be > 0"));
            }
            if !(w.shape > 1.0 && w.shape.is_finite()) {
                return Err(format!(
                    "{at}: shape is {}; allowed: > 1 (at or below 1 the Pareto mean is infinite)",
                    w.shape
                ));
            }
            if !(w.max_size_ratio > 1.0 && w.max_size_ratio.is_finite()) {
                return Err(format!("{at}: max_size must be above the mean size"));
            }
            if w.mean_size_bytes == 0 {
                return Err(format!("{at}: mean_size must be > 0"));
            }
            if w.think_mean_ns == 0 {
                return Err(format!("{at}: think must be > 0"));
            }
            if let RttDist::Fixed(r) = w.rtt {
                if r < 2 * self.delay_ns {
                    return Err(format!("{at}: rtt is smaller than twice the bottleneck delay"));
                }
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let at = format!("flows[{i}] (group '{}')", f.group);
            Algorithm::new(&f.algorithm, &f.params).map_err(|e| format!("{at}: {e}"))?;
            if f.rtt_ns < 2 * self.delay_ns {
                return Err(format!(
                    "{at}: rtt {} ms is smaller than twice the bottleneck delay ({} ms); allowed: rtt >= {} ms",
                    f.rtt_ns as f64 / 1e6,
                    self.delay_ns as f64 / 1e6,
                    2.0 * self.delay_ns as f64 / 1e6
                ));
            }
            if let Some(stop) = f.stop_ns {
                if stop <= f.start_ns {
                    return Err(format!("{at}: stop must be after start"));
                }
            }
            if f.bytes == Some(0) {
                return Err(format!("{at}: bytes must be > 0"));
            }
            if f.ack_every == 0 || f.ack_every > 64 {
                return Err(format!("{at}: ack_every is {}; allowed: 1..=64", f.ack_every));
            }
            if f.rwnd == 0 {
                return Err(format!("{at}: rwnd must be > 0"));
            }
            if f.initial_cwnd == 0 {
                return Err(format!("{at}: initial_cwnd must be >= 1"));
            }
        }
        Ok(())
    }

    /// Data packet size on the wire.
    pub fn wire_bytes(&self) -> u32 {
        self.mss + self.header_bytes
    }
}

impl FlowSpec {
    /// A long-lived bulk flow with Linux defaults: SACK, delayed ACKs (2 segments, 40 ms),
    /// initial window 10, a receiver window that never limits.
    pub fn bulk(algorithm: &str, rtt_ns: u64) -> Self {
        Self {
            group: algorithm.to_string(),
            algorithm: algorithm.to_string(),
            params: Params::new(),
            rtt_ns,
            start_ns: 0,
            stop_ns: None,
            bytes: None,
            recovery: Recovery::Sack,
            ack_every: 2,
            delack_timeout_ns: 40_000_000,
            rwnd: 1 << 30,
            initial_cwnd: 10,
            initial_ssthresh: None,
        }
    }
}

impl Scenario {
    /// A dumbbell with the bottleneck delay set to a quarter of `rtt_ns` (the rest is
    /// access delay), a buffer of `buffer`, no flows, 1500-byte packets (MSS 1448), 100 ms
    /// samples, seed 1, no start jitter.
    pub fn dumbbell(rate_bps: u64, rtt_ns: u64, buffer: Limit, duration_ns: u64) -> Self {
        Self {
            seed: 1,
            duration_ns,
            mss: 1448,
            header_bytes: 52,
            ack_bytes: 64,
            rate_bps,
            delay_ns: rtt_ns / 4,
            buffer,
            reverse_buffer: Limit::Packets(100_000),
            queue: QueueKind::DropTail,
            loss: LossSpec::None,
            reverse_loss: LossSpec::None,
            flows: Vec::new(),
            web: Vec::new(),
            sample_interval_ns: 100_000_000,
            start_jitter_ns: 0,
            min_rto_ns: cubiclab_cc::host::rtt::TCP_RTO_MIN_US * 1000,
            record_cwnd_changes: false,
            record_rtt_samples: false,
        }
    }

    /// One bandwidth-delay product in packets for a round trip of `rtt_ns`.
    pub fn bdp_packets(&self, rtt_ns: u64) -> u32 {
        ((self.rate_bps as u128 * rtt_ns as u128) / (8 * self.wire_bytes() as u128 * 1_000_000_000)) as u32
    }
}
