//! Building a simulation from a scenario: every link both ways, then one slot per planned
//! flow and per web session, with their routes, delay lines and first events.

use std::path::Path;

use cubiclab_cc::{Algorithm, CongestionControl};

use super::host::{HostTiming, Side};
use super::{Flow, Hop, LinkMarks, Route, Session, Sim};
use cubiclab_path::{Link, Rng};

use crate::engine::{Ev, EventQueue, Time};
use crate::packet::{Packet, SackOptions};
use crate::pcap::{Announce, Capture};
use crate::pipe::Pipe;
use crate::record::Results;
use crate::scenario::{Direction, PlannedHop, Scenario, STREAM_ALGORITHM};
use crate::tcp::rcv_window::PeerWindow;
use crate::tcp::{RcvWindow, Receiver, Recovery, Sender, SenderConfig};

/// What a flow slot needs besides its sender's configuration.
struct Slot<'a> {
    rtt_ns: Time,
    data_hops: &'a [PlannedHop],
    ack_hops: &'a [PlannedHop],
    data_dir: Direction,
    ack_every: u32,
    delack_timeout: Time,
    /// The receive buffer the receiver forces; `None`: autotuned.
    rcvbuf: Option<u64>,
    start_ns: Time,
    web: Option<u32>,
    /// ECN asked for (`tcp_ecn` = 1).
    ecn: bool,
}

impl Sim {
    /// Build a simulation; the scenario is validated first.
    pub fn new(sc: Scenario) -> Result<Self, String> {
        sc.validate()?;
        let plan = sc.plan();
        let mut sim = Self {
            q: EventQueue::default(),
            now: 0,
            links: sc.link_directions().map(|(k, dir)| Self::link(&sc, k, dir)).collect(),
            hops: Vec::new(),
            flows: Vec::new(),
            pipes: Vec::new(),
            host: HostTiming::new(sc.host.jitter, sc.seed),
            pipe_ends: Vec::new(),
            web: Vec::new(),
            lanes: plan.lanes.clone(),
            planned: plan.flows.clone(),
            res: Results::default(),
            capture: None,
            link_marks: vec![LinkMarks::default(); sc.links.len()],
            sc,
        };
        for (i, f) in plan.flows.iter().enumerate() {
            let alg = Algorithm::new(&f.algorithm, &f.params).map_err(|e| e.0)?;
            let cfg = SenderConfig {
                recovery: f.recovery,
                min_rto_ns: sim.sc.min_rto_ns,
                // The SYN-ACK's window, set from the receiver in `add_flow`.
                rwnd: 0,
                initial_cwnd: f.initial_cwnd,
                initial_ssthresh: f.initial_ssthresh,
                loss_probes: true,
                frto: true,
            };
            let app_limit = f.bytes.map_or(u32::MAX, |b| sim.segments(b));
            sim.q.push_ahead(f.start_ns, Ev::Start(i as u32));
            if let Some(stop) = f.stop_ns {
                sim.q.push_ahead(stop.max(f.start_ns), Ev::Stop(i as u32));
            }
            let slot = Slot {
                rtt_ns: f.rtt_ns,
                data_hops: &f.data_hops,
                ack_hops: &f.ack_hops,
                data_dir: f.direction,
                ack_every: f.ack_every,
                delack_timeout: f.delack_timeout_ns,
                rcvbuf: f.rcvbuf_bytes,
                start_ns: f.start_ns,
                web: None,
                ecn: f.ecn,
            };
            sim.add_flow(alg, cfg, app_limit, slot);
        }
        for s in &plan.sessions {
            let lane = &plan.lanes[s.lane as usize];
            let w = &sim.sc.web[lane.web_group];
            let alg = Algorithm::new(&w.algorithm, &w.cc_params()).map_err(|e| e.0)?;
            let cfg = SenderConfig {
                recovery: w.recovery,
                min_rto_ns: sim.sc.min_rto_ns,
                rwnd: 0,
                initial_cwnd: 10,
                initial_ssthresh: None,
                loss_probes: true,
                frto: true,
            };
            let f = sim.flows.len() as u32;
            sim.web.push(Session {
                lane: s.lane,
                draws: s.draws.clone(),
                rtt_ns: s.rtt_ns,
                alg: alg.clone(),
                object_start: 0,
                object_bytes: 0,
            });
            let slot = Slot {
                rtt_ns: s.rtt_ns,
                data_hops: &s.data_hops,
                ack_hops: &s.ack_hops,
                data_dir: lane.direction,
                ack_every: 2,
                delack_timeout: 40_000_000,
                rcvbuf: None,
                start_ns: s.first_request_ns,
                web: Some(sim.web.len() as u32 - 1),
                ecn: false,
            };
            sim.add_flow(alg, cfg, 0, slot);
            sim.q.push_ahead(s.first_request_ns, Ev::Object(f));
        }
        for k in 0..sim.sc.links.len() {
            if let Some(s) = &sim.sc.links[k].schedule {
                let schedule = s.rate_schedule(&format!("{}.schedule", sim.sc.link_key(k)))?;
                sim.links[Direction::Forward.of_link(k)].vary(schedule);
            }
        }
        sim.q.push(sim.sc.record.interval_ns, Ev::Sample);
        if let Some(path) = &sim.sc.record.pcap {
            let receivers = sim.flows.iter().map(|f| Announce::of(f.receiver.window())).collect();
            let capture = Capture::create(
                Path::new(path),
                sim.sc.pcap_link(),
                sim.sc.mss,
                receivers,
                sim.planned.len(),
                sim.sc.record.pcap_flows.as_deref(),
            )?;
            sim.capture = Some(capture);
        }
        Ok(sim)
    }

    /// Link `k` in direction `dir`, built by the path crate from the scenario and seed (its
    /// random streams are numbered apart from the plan's, `scenario::plan`).
    fn link(sc: &Scenario, k: usize, dir: Direction) -> Link<Packet> {
        Link::new(&sc.link_spec(k, dir), sc.seed, Scenario::link_stream(k, dir))
    }

    /// Segments of `bytes` payload, at least one.
    pub(super) fn segments(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.sc.mss as u64).clamp(1, u32::MAX as u64 - 1) as u32
    }

    fn add_flow(&mut self, mut alg: Algorithm, mut cfg: SenderConfig, app_limit: u32, slot: Slot) {
        if alg.takes_run_seed() {
            // The flow's own stream of the run's seed, so flows draw apart and runs repeat.
            alg.seed_random(Rng::new(self.sc.seed, STREAM_ALGORITHM + self.flows.len() as u64).next_u64());
        }
        let window = RcvWindow::new(slot.rcvbuf, self.sc.tcp_rmem, self.sc.mss);
        cfg.rwnd = window.syn_window_segments();
        let needs_ecn = alg.needs_ecn();
        let recovery = cfg.recovery;
        let mut sender = Sender::new(alg, cfg, self.sc.mss);
        sender.app_limit = app_limit;
        sender.set_ecn(slot.ecn);
        let mut receiver = Receiver::new(slot.ack_every, slot.delack_timeout, slot.rtt_ns, window);
        // The receiver runs the flow's algorithm too (DCTCP's CE echo is the receiving
        // socket's), and accepts ECN (Linux's tcp_ecn = 2 default).
        receiver.set_ecn(sender.ecn_ok(), needs_ecn);
        receiver.set_read_lowat(self.segments(self.sc.host.read_lowat_bytes));
        // Without SACK (a NewReno flow: the testbed turns tcp_sack off) Linux sends every
        // duplicate ACK ("!tcp_is_sack(tp) -> send_now").
        if self.sc.host.sack_compression && recovery == Recovery::Sack {
            receiver.set_sack_compression();
        }
        let routes = [self.add_route(slot.data_hops, Side::Receiver), self.add_route(slot.ack_hops, Side::Sender)];
        let reverse = slot.ack_hops.iter().map(|h| h.delay_ns).sum();
        self.flows.push(Flow {
            sender,
            queued: Default::default(),
            receiver,
            peer_window: PeerWindow::new(window.wscale(), self.sc.mss),
            sack_options: SackOptions::default(),
            ts_recent: 0,
            reverse_delay: reverse,
            routes,
            data_dir: slot.data_dir,
            conn: 0,
            start_ns: slot.start_ns,
            tx_bytes: 0,
            delivered_segs: 0,
            drops: 0,
            last_retx: 0,
            total_drops: 0,
            random_losses: 0,
            total_delivered: 0,
            arrived: 0,
            fct_ns: None,
            last_cwnd: 0,
            last_ssthresh: 0,
            web: slot.web,
        });
    }

    /// A route's hops, with the delay line after each, in the hop table (last hop first);
    /// the route ends at `end`'s host.
    fn add_route(&mut self, hops: &[PlannedHop], end: Side) -> Route {
        let last = hops.len().saturating_sub(1);
        let pipes: Vec<u32> = hops
            .iter()
            .enumerate()
            .map(|(i, h)| self.pipe_for(h.delay_ns, (i == last && self.host.is_some()).then_some(end)))
            .collect();
        let first = self.hops.len() as u32;
        self.hops.extend(hops.iter().zip(pipes).rev().map(|(h, pipe)| Hop { link: h.link, pipe }));
        Route { first, len: hops.len() as u32 }
    }

    /// The delay line with `delay` that ends at host side `end` (None: at no host, or the
    /// hosts' timing model is off), shared by every flow with both.
    fn pipe_for(&mut self, delay: Time, end: Option<Side>) -> u32 {
        match self.pipes.iter().zip(&self.pipe_ends).position(|(p, e)| p.delay == delay && *e == end) {
            Some(i) => i as u32,
            None => {
                self.pipes.push(Pipe::new(delay));
                self.pipe_ends.push(end);
                (self.pipes.len() - 1) as u32
            }
        }
    }
}
