//! The flow plan: flow groups expanded into flows, with their names, the split of their
//! access delay and their start times (jitter from the scenario's seed); web groups expanded
//! into sessions with their RTTs and first request times. The simulator and the testbed
//! both run from this plan, so one scenario and seed start the same flows at the same times
//! on both.

use cubiclab_cc::Params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
/// The hosts' timing noise (`sim::host`).
pub(crate) const STREAM_HOST: u64 = 3 << 40;
/// Each flow's algorithm's random numbers (`sim::build`; for the algorithms that take the
/// run's seed, `CongestionControl::takes_run_seed`), by flow index.
pub(crate) const STREAM_ALGORITHM: u64 = 4 << 40;

/// Which way data crosses a link: its route's way (forward) or back along it (reverse).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    #[default]
    Forward,
    Reverse,
}

impl Direction {
    /// Index of this direction of link `link` among the run's link directions: each link's
    /// forward direction, then its reverse one ([`Scenario::link_directions`]).
    #[inline]
    pub fn of_link(self, link: usize) -> usize {
        2 * link + self as usize
    }

    /// The link of link direction `index`, whichever way ([`Direction::of_link`] undone).
    #[inline]
    pub fn link_of(index: usize) -> usize {
        index / 2
    }

    /// Its name in result tables, as serde spells it.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
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
    /// The link directions its data crosses, each with the delay after it.
    pub data_hops: Vec<PlannedHop>,
    /// The link directions its ACKs cross, each with the delay after it.
    pub ack_hops: Vec<PlannedHop>,
    /// Which way its data crosses its links (its ACKs the other way).
    pub direction: Direction,
    /// One-way delay of its data (the sum over `data_hops`) and of its ACKs (over `ack_hops`).
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
    /// ECN asked for (`tcp_ecn` = 1); an algorithm that needs it negotiates it anyway.
    pub ecn: bool,
}

/// Most links a route may cross: a packet counts its hop in 4 bits (`packet::Kind`).
pub const MAX_HOPS: usize = 16;

/// One hop of a route: a link direction and the delay line after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PlannedHop {
    /// The link direction ([`Direction::of_link`]).
    pub link: u32,
    /// The delay after it, ns: the link's propagation; after a route's last hop also the
    /// flow's access delay that way (half of its RTT beyond the links, the rest for the
    /// ACKs). All access delay sits after the last link: where it sits before the first
    /// one, only the loop delay matters to a flow.
    pub delay_ns: u64,
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
    pub data_hops: Vec<PlannedHop>,
    pub ack_hops: Vec<PlannedHop>,
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
            let route = self.route_links(w.route.as_deref());
            for &direction in directions {
                let lane = lanes.len() as u32;
                lanes.push(WebLane { group: group.clone(), web_group: i, direction });
                for k in 0..w.sessions / directions.len() as u32 {
                    let mut rng = Rng::new(self.seed, STREAM_WEB + ((lane as u64) << 24) + k as u64);
                    let rtt_ns = match w.rtt {
                        RttDist::Fixed(r) => r,
                        // Whole milliseconds, so that sessions share delay lines.
                        RttDist::Exp(mean) => {
                            let floor = self.exp_rtt_floor_ns(&route);
                            let r = (rng.exponential(mean as f64) as u64).max(floor);
                            r.div_ceil(1_000_000) * 1_000_000
                        }
                    };
                    let first_request_ns = rng.exponential(w.think_mean_ns as f64) as u64;
                    let (data_hops, ack_hops) = match direction {
                        Direction::Forward => self.hops(&route, Direction::Forward, &backwards(&route), rtt_ns),
                        Direction::Reverse => self.hops(&backwards(&route), Direction::Reverse, &route, rtt_ns),
                    };
                    let sizes = BoundedPareto::with_mean(w.mean_size_bytes as f64, w.shape, w.max_size_ratio);
                    let draws = SessionDraws { rng, sizes, think_mean_ns: w.think_mean_ns as f64 };
                    sessions.push(PlannedSession { lane, rtt_ns, data_hops, ack_hops, first_request_ns, draws });
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
        // The fastest link's BDP and every forward buffer: what one flow could ever have in
        // flight on any route (for the one link of a dumbbell, its BDP and buffer).
        let rate = self.links.iter().map(|l| l.rate_bps).max().unwrap_or(0);
        let bdp = bdp_bytes(rate, max_rtt_ns);
        let buffer = self
            .links
            .iter()
            .map(|l| match l.buffer {
                Limit::Packets(n) => n as u64 * self.wire_bytes() as u64,
                Limit::Bytes(b) => b,
            })
            .fold(0u64, u64::saturating_add);
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
        let (data, acks) = self.flow_links(g);
        let (data_hops, ack_hops) = self.hops(&data, g.direction, &acks, g.rtt_ns);
        let total = |hops: &[PlannedHop]| hops.iter().map(|h| h.delay_ns).sum();
        PlannedFlow {
            group,
            algorithm: g.algorithm.clone(),
            params: g.cc_params(),
            rtt_ns: g.rtt_ns,
            direction: g.direction,
            forward_delay_ns: total(&data_hops),
            reverse_delay_ns: total(&ack_hops),
            data_hops,
            ack_hops,
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
            ecn: g.ecn.unwrap_or(false),
        }
    }

    /// The links a flow group's data crosses and those its ACKs cross, in the order they
    /// cross them: its route (backwards when its data goes in reverse), and its `ack_route`,
    /// or else the data's links backwards (the scenario is valid).
    pub fn flow_links(&self, g: &FlowGroup) -> (Vec<usize>, Vec<usize>) {
        let route = self.route_links(g.route.as_deref());
        let data = match g.direction {
            Direction::Forward => route,
            Direction::Reverse => backwards(&route),
        };
        let acks = g.ack_route.as_deref().map_or_else(|| backwards(&data), |r| self.route_links(Some(r)));
        (data, acks)
    }

    /// The links of a route by index (the scenario is valid: every name is known); no
    /// route: the one link.
    pub fn route_links(&self, route: Option<&[String]>) -> Vec<usize> {
        match route {
            None => vec![0],
            Some(names) => names
                .iter()
                .map(|n| self.links.iter().position(|l| l.name() == n).expect("a validated route names known links"))
                .collect(),
        }
    }

    /// The least RTT a web session drawn from `rtt = "exp:..."` gets on `route`: its links'
    /// delays both ways and a millisecond (a draw below it is raised to it).
    pub fn exp_rtt_floor_ns(&self, route: &[usize]) -> u64 {
        2 * self.route_delay_ns(route) + 1_000_000
    }

    /// One-way propagation delay of the links `route` crosses.
    pub fn route_delay_ns(&self, route: &[usize]) -> u64 {
        route.iter().map(|&k| self.links[k].delay_ns).sum()
    }

    /// The hops of data crossing links `data` in direction `way` and of its ACKs crossing
    /// links `acks` the other way, for two-way delay `rtt_ns` (at least both routes'
    /// delays): each hop's delay is its link's; the last of each also carries the access
    /// delay, half of what `rtt_ns` leaves to the forward way, the rest to the reverse.
    pub fn hops(
        &self,
        data: &[usize],
        way: Direction,
        acks: &[usize],
        rtt_ns: u64,
    ) -> (Vec<PlannedHop>, Vec<PlannedHop>) {
        let access = rtt_ns - self.route_delay_ns(data) - self.route_delay_ns(acks);
        let leg = |links: &[usize], way: Direction, extra: u64| -> Vec<PlannedHop> {
            let last = links.len() - 1;
            links
                .iter()
                .enumerate()
                .map(|(i, &k)| PlannedHop {
                    link: way.of_link(k) as u32,
                    delay_ns: self.links[k].delay_ns + if i == last { extra } else { 0 },
                })
                .collect()
        };
        let extra = |way| if way == Direction::Forward { access / 2 } else { access - access / 2 };
        (leg(data, way, extra(way)), leg(acks, way.other(), extra(way.other())))
    }

    /// The random stream number of link `k` in direction `dir` (`cubiclab_path::Link::new`
    /// numbers its streams from it): 0 and 1 for the first link, as when the path was one
    /// bottleneck, then 2^16 apart per link, so the streams of no two links meet.
    pub fn link_stream(k: usize, dir: Direction) -> u32 {
        ((k as u32) << 16) | dir as u32
    }

    /// The run's link directions, in the order [`Direction::of_link`] numbers them.
    pub fn link_directions(&self) -> impl Iterator<Item = (usize, Direction)> + '_ {
        (0..self.links.len()).flat_map(|k| [(k, Direction::Forward), (k, Direction::Reverse)])
    }
}

/// A route's links in the opposite order: the way its ACKs come back.
fn backwards(route: &[usize]) -> Vec<usize> {
    route.iter().rev().copied().collect()
}
