//! The flow plan: flow groups expanded into flows, with their names, the split of their
//! access delay and their start times (jitter from the scenario's seed); web groups expanded
//! into sessions with their RTTs and first request times. The simulator and the testbed
//! both run from this plan, so one scenario and seed start the same flows at the same times
//! on both.

use cubiclab_cc::Params;
use serde::Serialize;

use super::{bdp_bytes, FlowGroup, RttDist, Rwnd, RwndMode, Scenario, WebDirection};
use crate::queue::Limit;
use crate::rng::Rng;
use crate::tcp::rcv_window::TUN_SCALING_RATIO;
use crate::tcp::Recovery;
use crate::traffic::BoundedPareto;

/// The `SO_RCVBUF` whose window is `window` bytes once the first segment has set the
/// receive path's scaling ratio: `2 x SO_RCVBUF x ratio / 256 >= window` (rounded up).
pub fn rcvbuf_for_window(window: u64) -> u64 {
    (window * 256).div_ceil(2 * TUN_SCALING_RATIO)
}

/// Random streams of the plan, numbered apart from each other and from the links' streams
/// (`sim::build`), so that adding a component never shifts another's numbers.
const STREAM_START: u64 = 0;
const STREAM_WEB: u64 = 2 << 40;

/// Which way data crosses the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Forward,
    Reverse,
}

impl Direction {
    /// Index of this direction's link.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The direction the ACKs of this direction's data take.
    #[inline]
    pub fn other(self) -> Self {
        match self {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        }
    }
}

/// One long-lived flow, ready to run.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedFlow {
    /// Label of its group in the results.
    pub group: String,
    pub algorithm: String,
    #[serde(skip)]
    pub params: Params,
    /// Two-way propagation delay.
    pub rtt_ns: u64,
    /// One-way delay after the forward bottleneck (its propagation plus half of the access
    /// delay) and after the reverse one (the rest). All access delay sits after the
    /// bottleneck: for one shared bottleneck only the loop delay matters.
    pub forward_delay_ns: u64,
    pub reverse_delay_ns: u64,
    /// Start time, jitter included.
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub bytes: Option<u64>,
    pub recovery: Recovery,
    /// Segments per ACK: the group's `ack_every` with delayed ACKs, else 1.
    pub ack_every: u32,
    pub delack_timeout_ns: u64,
    /// The receive buffer its receiver forces (`SO_RCVBUF`, bytes), or `None`: autotuned
    /// within the scenario's `tcp_rmem` (the group's `rwnd = "autotune"`). A pinned `rwnd`
    /// forces the buffer whose window is that; without `rwnd`, [`Scenario::default_rcvbuf`].
    /// The testbed's sink asks for this, and the simulator's receiver sizes its window
    /// as Linux does from it (`tcp::rcv_window`).
    pub rcvbuf_bytes: Option<u64>,
    pub initial_cwnd: u32,
    pub initial_ssthresh: Option<u32>,
}

/// One direction of a web group: its sessions share a label and a direction.
#[derive(Clone, Debug, Serialize)]
pub struct WebLane {
    pub group: String,
    /// Index of the web group in the scenario.
    pub web_group: usize,
    pub direction: Direction,
}

/// One background web session.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedSession {
    /// Index in `Plan::lanes`.
    pub lane: u32,
    pub rtt_ns: u64,
    /// When it requests its first object.
    pub first_request_ns: u64,
    /// Object sizes and later think times, continuing the session's stream.
    #[serde(skip)]
    pub draws: SessionDraws,
}

/// A web session's draws after the plan's (its RTT and first think time), from its own
/// stream and in this order: an object's size when it is requested, then the think time
/// after it when it is acknowledged. The simulator draws as the session runs; the testbed
/// takes a run's worth in advance (`objects`).
#[derive(Clone, Debug)]
pub struct SessionDraws {
    rng: Rng,
    sizes: BoundedPareto,
    think_mean_ns: f64,
}

impl SessionDraws {
    /// The next object's size, bytes (at least one).
    pub fn object_bytes(&mut self) -> u64 {
        (self.sizes.sample(&mut self.rng) as u64).max(1)
    }

    /// The think time after the object, ns.
    pub fn think_ns(&mut self) -> u64 {
        self.rng.exponential(self.think_mean_ns) as u64
    }

    /// The objects a session whose first request is at `first_request_ns` requests before
    /// `until_ns`, each with the think time after it: (bytes, think ns).
    pub fn objects(mut self, first_request_ns: u64, until_ns: u64) -> Vec<(u64, u64)> {
        let (mut t, mut objects) = (first_request_ns, Vec::new());
        while t < until_ns {
            let object = (self.object_bytes(), self.think_ns());
            objects.push(object);
            t = t.saturating_add(object.1);
        }
        objects
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub flows: Vec<PlannedFlow>,
    /// The receivers' `tcp_rmem` (the testbed sets it in the receiver's namespace).
    pub tcp_rmem: [u64; 3],
    pub lanes: Vec<WebLane>,
    pub sessions: Vec<PlannedSession>,
}

impl Scenario {
    /// Expand the groups into flows and sessions (the scenario is assumed valid).
    pub fn plan(&self) -> Plan {
        let mut flows = Vec::new();
        for (i, g) in self.flows.iter().enumerate() {
            let group = self.group_name(i, g);
            for k in 0..g.count as u64 {
                let jitter = Rng::new(self.seed, STREAM_START + flows.len() as u64).below(self.start_jitter_ns);
                flows.push(self.planned_flow(g, group.clone(), g.start_ns + k * g.start_spacing_ns + jitter));
            }
        }
        let mut lanes = Vec::new();
        let mut sessions = Vec::new();
        for (i, w) in self.web.iter().enumerate() {
            let group = w.name.clone().unwrap_or_else(|| format!("web{i}"));
            let directions: &[Direction] = match w.direction {
                WebDirection::Forward => &[Direction::Forward],
                WebDirection::Reverse => &[Direction::Reverse],
                WebDirection::Both => &[Direction::Forward, Direction::Reverse],
            };
            for &direction in directions {
                let lane = lanes.len() as u32;
                lanes.push(WebLane { group: group.clone(), web_group: i, direction });
                for k in 0..w.sessions / directions.len() as u32 {
                    let mut rng = Rng::new(self.seed, STREAM_WEB + ((lane as u64) << 24) + k as u64);
                    let rtt_ns = match w.rtt {
                        RttDist::Fixed(r) => r,
                        // Whole milliseconds, so that sessions share delay lines.
                        RttDist::Exp(mean) => {
                            let floor = 2 * self.bottleneck.delay_ns + 1_000_000;
                            let r = (rng.exponential(mean as f64) as u64).max(floor);
                            r.div_ceil(1_000_000) * 1_000_000
                        }
                    };
                    let first_request_ns = rng.exponential(w.think_mean_ns as f64) as u64;
                    let sizes = BoundedPareto::with_mean(w.mean_size_bytes as f64, w.shape, w.max_size_ratio);
                    let draws = SessionDraws { rng, sizes, think_mean_ns: w.think_mean_ns as f64 };
                    sessions.push(PlannedSession { lane, rtt_ns, first_request_ns, draws });
                }
            }
        }
        let max_rtt = flows.iter().map(|f| f.rtt_ns).chain(sessions.iter().map(|s| s.rtt_ns)).max().unwrap_or(0);
        let default_rcvbuf = self.default_rcvbuf(max_rtt);
        for (f, g) in flows.iter_mut().zip(self.flows.iter().flat_map(|g| (0..g.count).map(move |_| g))) {
            f.rcvbuf_bytes = match g.rwnd {
                None => Some(default_rcvbuf),
                Some(Rwnd::Bytes(b)) => Some(rcvbuf_for_window(b)),
                Some(Rwnd::Mode(RwndMode::Autotune)) => None,
            };
        }
        Plan { flows, tcp_rmem: self.tcp_rmem, lanes, sessions }
    }

    /// The receive buffer of a flow without `rwnd`: four times the largest RTT's BDP plus
    /// the bottleneck buffer, within [8 MB, 256 MB], so that the window never limits the
    /// sender (the receive window the kernel derives from it is about 1.25 times as large).
    pub fn default_rcvbuf(&self, max_rtt_ns: u64) -> u64 {
        const MIN: u64 = 8 << 20;
        const MAX: u64 = 256 << 20;
        let bdp = bdp_bytes(self.bottleneck.rate_bps, max_rtt_ns);
        let buffer = match self.bottleneck.buffer {
            Limit::Packets(n) => n as u64 * self.wire_bytes() as u64,
            Limit::Bytes(b) => b,
        };
        bdp.saturating_add(buffer).saturating_mul(4).clamp(MIN, MAX)
    }

    /// The group's label: its name, else its algorithm ("algorithm#i" when two groups share one).
    fn group_name(&self, i: usize, g: &FlowGroup) -> String {
        if let Some(name) = &g.name {
            return name.clone();
        }
        if self.flows.iter().filter(|x| x.algorithm == g.algorithm).count() > 1 {
            format!("{}#{i}", g.algorithm)
        } else {
            g.algorithm.clone()
        }
    }

    fn planned_flow(&self, g: &FlowGroup, group: String, start_ns: u64) -> PlannedFlow {
        let (forward_delay_ns, reverse_delay_ns) = self.loop_delays(g.rtt_ns);
        PlannedFlow {
            group,
            algorithm: g.algorithm.clone(),
            params: g.cc_params(),
            rtt_ns: g.rtt_ns,
            forward_delay_ns,
            reverse_delay_ns,
            start_ns,
            stop_ns: g.stop_ns,
            bytes: g.bytes,
            recovery: g.recovery,
            ack_every: if g.delayed_ack { g.ack_every } else { 1 },
            delack_timeout_ns: g.delack_timeout_ns,
            // Once every flow's RTT is known (`plan`).
            rcvbuf_bytes: None,
            initial_cwnd: g.initial_cwnd,
            initial_ssthresh: g.initial_ssthresh,
        }
    }

    /// (forward, reverse) one-way delays after the bottleneck for a flow or session of
    /// two-way delay `rtt_ns`: the bottleneck's propagation plus half of the access delay each way.
    pub fn loop_delays(&self, rtt_ns: u64) -> (u64, u64) {
        let d = self.bottleneck.delay_ns;
        let access = rtt_ns - 2 * d;
        (d + access / 2, d + (access - access / 2))
    }
}
