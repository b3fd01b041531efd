//! The dumbbell world: flows, the bottleneck in both directions, and the event loop.
//!
//! Path of a data packet: sender → bottleneck (buffer, serialization, random loss) → the
//! flow's delay line for that direction (bottleneck propagation plus its access links) →
//! receiver. ACKs go back through the other direction's bottleneck and delay line. All of a
//! flow's access delay sits after the bottleneck: for one shared bottleneck only the loop
//! delay matters, and it saves two events per packet. Flows with the same delay share a
//! delay line (packets carry their flow), so the event heap grows with the number of
//! distinct RTTs, not with the number of flows.
//!
//! Long-lived flows come first (indices 0..n); background web sessions follow, each in one
//! flow slot that opens a new connection per object.

use cubiclab_cc::{Algorithm, CaState};

use crate::engine::{Ev, EventQueue, Time};
use crate::link::{Link, Offer};
use crate::loss::RandomLoss;
use crate::packet::{Packet, NO_SACK};
use crate::pipe::Pipe;
use crate::queue::{CoDel, DropTail, Queue, Red};
use crate::record::{FlowTotals, Results};
use crate::rng::Rng;
use crate::scenario::{Direction, QueueKind, RttDist, Scenario};
use crate::tcp::receiver::AckAction;
use crate::tcp::{Receiver, Sender, SenderConfig};
use crate::traffic::BoundedPareto;

const FWD: u32 = 0;
const REV: u32 = 1;

/// Random streams: one per component, numbered apart so they never collide.
const STREAM_START: u64 = 0;
const STREAM_LINK: u64 = 1 << 40;
const STREAM_WEB: u64 = 2 << 40;

struct Flow {
    sender: Sender,
    receiver: Receiver,
    /// Delay lines (indices in `Sim::pipes`) after the forward and the reverse bottleneck.
    fwd: u32,
    rev: u32,
    /// The link this flow's data crosses (its ACKs cross the other one).
    data_link: u32,
    /// Connection number, bumped for each web object.
    conn: u16,
    start_ns: Time,
    delack_timeout: Time,
    /// Counters since the last sample.
    tx_bytes: u64,
    delivered_segs: u64,
    drops: u32,
    last_retx: u64,
    /// Whole-run counters.
    total_drops: u64,
    random_losses: u64,
    total_delivered: u64,
    arrived: u64,
    fct_ns: Option<u64>,
    last_cwnd: u32,
    last_ssthresh: u32,
    /// Index in `Sim::web` for a web session.
    web: Option<u32>,
}

/// A background web session's own state.
struct Session {
    group: u32,
    rng: Rng,
    rtt_ns: Time,
    alg: Algorithm,
    sizes: BoundedPareto,
    object_start: Time,
    object_bytes: u64,
}

pub struct Sim {
    sc: Scenario,
    q: EventQueue,
    now: Time,
    links: [Link; 2],
    flows: Vec<Flow>,
    pipes: Vec<Pipe>,
    web: Vec<Session>,
    res: Results,
    link_tx_mark: u64,
    link_drop_mark: u64,
    link_loss_mark: u64,
}

/// The delay line with `delay`, shared by every flow with that delay.
fn pipe_for(pipes: &mut Vec<Pipe>, delay: Time) -> u32 {
    match pipes.iter().position(|p| p.delay == delay) {
        Some(i) => i as u32,
        None => {
            pipes.push(Pipe::new(delay));
            (pipes.len() - 1) as u32
        }
    }
}

impl Sim {
    /// Build a simulation; the scenario is validated first.
    pub fn new(sc: Scenario) -> Result<Self, String> {
        sc.validate()?;
        let mut sim = Self {
            q: EventQueue::default(),
            now: 0,
            links: [Self::link(&sc, FWD), Self::link(&sc, REV)],
            flows: Vec::new(),
            pipes: Vec::new(),
            web: Vec::new(),
            res: Results::default(),
            link_tx_mark: 0,
            link_drop_mark: 0,
            link_loss_mark: 0,
            sc,
        };
        for i in 0..sim.sc.flows.len() {
            let f = sim.sc.flows[i].clone();
            let alg = Algorithm::new(&f.algorithm, &f.params).map_err(|e| e.0)?;
            let cfg = SenderConfig {
                recovery: f.recovery,
                min_rto_ns: sim.sc.min_rto_ns,
                rwnd: f.rwnd,
                initial_cwnd: f.initial_cwnd,
                initial_ssthresh: f.initial_ssthresh,
            };
            let app_limit = f.bytes.map_or(u32::MAX, |b| sim.segments(b));
            let jitter = Rng::new(sim.sc.seed, STREAM_START + i as u64).below(sim.sc.start_jitter_ns);
            let start = f.start_ns + jitter;
            sim.q.push(start, Ev::Start(i as u32));
            if let Some(stop) = f.stop_ns {
                sim.q.push(stop.max(start), Ev::Stop(i as u32));
            }
            sim.add_flow(alg, cfg, app_limit, f.rtt_ns, FWD, f.ack_every, f.delack_timeout_ns, start, None);
        }
        for (g, w) in sim.sc.web.clone().iter().enumerate() {
            let alg = Algorithm::new(&w.algorithm, &w.params).map_err(|e| e.0)?;
            let cfg = SenderConfig {
                recovery: w.recovery,
                min_rto_ns: sim.sc.min_rto_ns,
                rwnd: 1 << 30,
                initial_cwnd: 10,
                initial_ssthresh: None,
            };
            for k in 0..w.sessions {
                let mut rng = Rng::new(sim.sc.seed, STREAM_WEB + ((g as u64) << 24) + k as u64);
                let floor = 2 * sim.sc.delay_ns + 1_000_000;
                let rtt_ns = match w.rtt {
                    RttDist::Fixed(r) => r,
                    // Whole milliseconds, so sessions share delay lines.
                    RttDist::Exponential(mean) => {
                        let r = (rng.exponential(mean as f64) as u64).max(floor);
                        r.div_ceil(1_000_000) * 1_000_000
                    }
                };
                let link = if w.direction == Direction::Reverse { REV } else { FWD };
                let first = (rng.exponential(w.think_mean_ns as f64)) as Time;
                let f = sim.flows.len() as u32;
                let sizes = BoundedPareto::with_mean(w.mean_size_bytes as f64, w.shape, w.max_size_ratio);
                let session =
                    Session { group: g as u32, rng, rtt_ns, alg: alg.clone(), sizes, object_start: 0, object_bytes: 0 };
                sim.web.push(session);
                let web = Some(sim.web.len() as u32 - 1);
                sim.add_flow(alg.clone(), cfg.clone(), 0, rtt_ns, link, 2, 40_000_000, first, web);
                sim.q.push(first, Ev::Object(f));
            }
        }
        sim.q.push(sim.sc.sample_interval_ns, Ev::Sample);
        Ok(sim)
    }

    fn link(sc: &Scenario, dir: u32) -> Link {
        let (limit, loss) = if dir == FWD { (sc.buffer, &sc.loss) } else { (sc.reverse_buffer, &sc.reverse_loss) };
        let pkt_ns = (sc.wire_bytes() as f64 * 8e9) / sc.rate_bps as f64;
        let queue = match sc.queue {
            QueueKind::DropTail => Queue::DropTail(DropTail::new(limit)),
            QueueKind::Red(spec) => {
                Queue::Red(Red::new(spec, limit, pkt_ns, Rng::new(sc.seed, STREAM_LINK + 10 + dir as u64)))
            }
            QueueKind::CoDel(spec) => Queue::CoDel(CoDel::new(spec, limit, sc.wire_bytes())),
        };
        Link::new(sc.rate_bps, queue, RandomLoss::new(loss.clone(), Rng::new(sc.seed, STREAM_LINK + dir as u64)))
    }

    fn segments(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.sc.mss as u64).clamp(1, u32::MAX as u64 - 1) as u32
    }

    #[allow(clippy::too_many_arguments)]
    fn add_flow(
        &mut self,
        alg: Algorithm,
        cfg: SenderConfig,
        app_limit: u32,
        rtt_ns: Time,
        data_link: u32,
        ack_every: u32,
        delack_timeout: Time,
        start_ns: Time,
        web: Option<u32>,
    ) {
        let mut sender = Sender::new(alg, cfg, self.sc.mss);
        sender.app_limit = app_limit;
        // The bottleneck's propagation plus half of the access delay each way.
        let access = rtt_ns - 2 * self.sc.delay_ns;
        let fwd = pipe_for(&mut self.pipes, self.sc.delay_ns + access / 2);
        let rev = pipe_for(&mut self.pipes, self.sc.delay_ns + (access - access / 2));
        self.flows.push(Flow {
            sender,
            receiver: Receiver::new(ack_every),
            fwd,
            rev,
            data_link,
            conn: 0,
            start_ns,
            delack_timeout,
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
            web,
        });
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn duration(&self) -> Time {
        self.sc.duration_ns
    }

    pub fn events(&self) -> u64 {
        self.q.processed
    }

    /// Run until simulated time `until` (capped at the scenario's duration). Returns true
    /// when the run is complete.
    pub fn run_until(&mut self, until: Time) -> bool {
        let until = until.min(self.sc.duration_ns);
        while let Some((t, ev)) = self.q.pop_until(until) {
            self.now = t;
            self.dispatch(ev);
        }
        self.now = until;
        until >= self.sc.duration_ns
    }

    /// Run to the end and return the results.
    pub fn run(mut self) -> Results {
        self.run_until(self.sc.duration_ns);
        self.finish()
    }

    #[inline]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::TxDone(link) => self.on_tx_done(link),
            Ev::PipeOut(pipe) => self.on_pipe_out(pipe),
            Ev::DelAck(f) => self.on_delack(f),
            Ev::Rto(f) => self.on_rto_event(f),
            Ev::Start(f) => {
                self.flows[f as usize].sender.start(self.now);
                self.transmit(f);
            }
            Ev::Stop(f) => {
                let s = &mut self.flows[f as usize].sender;
                s.app_limit = s.tcp().snd_nxt;
            }
            Ev::Object(f) => self.start_object(f),
            Ev::Sample => self.sample(),
            Ev::Tick => unreachable!("the event queue handles its own ticks"),
        }
    }

    /// A web session requests its next object: a new connection in its slot, whose data
    /// starts one RTT later (the handshake and the request).
    fn start_object(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let s = &mut self.web[fl.web.expect("Object event for a long-lived flow") as usize];
        let bytes = s.sizes.sample(&mut s.rng) as u64;
        s.object_start = now;
        s.object_bytes = bytes.max(1);
        let segs = bytes.div_ceil(self.sc.mss as u64).clamp(1, u32::MAX as u64 - 1) as u32;
        fl.conn = fl.conn.wrapping_add(1);
        fl.sender.reset(s.alg.clone(), segs);
        fl.receiver.reset();
        fl.start_ns = now;
        fl.fct_ns = None;
        self.q.push(now + s.rtt_ns, Ev::Start(f));
    }

    #[inline]
    fn offer(&mut self, link: u32, p: Packet) {
        match self.links[link as usize].offer(self.now, p) {
            Offer::Started(t) => self.q.push(t, Ev::TxDone(link)),
            Offer::Queued => {}
            Offer::Dropped => self.count_drop(p),
        }
    }

    #[inline]
    fn count_drop(&mut self, p: Packet) {
        if !p.is_ack {
            let f = &mut self.flows[p.flow as usize];
            f.drops += 1;
            f.total_drops += 1;
        }
    }

    /// Send whatever the flow's window allows now.
    #[inline]
    fn transmit(&mut self, f: u32) {
        let size = self.sc.wire_bytes();
        let (link, conn) = {
            let fl = &self.flows[f as usize];
            (fl.data_link, fl.conn)
        };
        while let Some((seq, _)) = self.flows[f as usize].sender.next_segment(self.now) {
            self.offer(link, Packet { flow: f, conn, seq, sack: NO_SACK, size, is_ack: false });
        }
        self.sync_rto(f);
        self.trace_cwnd(f);
    }

    /// Keep at most one heap entry per retransmission timer (see `on_rto_event`).
    #[inline]
    fn sync_rto(&mut self, f: u32) {
        let s = &mut self.flows[f as usize].sender;
        if s.rto_deadline != 0 && (s.rto_queued == 0 || s.rto_queued > s.rto_deadline) {
            s.rto_queued = s.rto_deadline;
            self.q.push_timer(s.rto_deadline, Ev::Rto(f));
        }
    }

    fn on_rto_event(&mut self, f: u32) {
        let now = self.now;
        let s = &mut self.flows[f as usize].sender;
        if s.rto_queued != now {
            return; // superseded by an earlier entry
        }
        s.rto_queued = 0;
        if s.rto_deadline == 0 {
            return;
        }
        if s.rto_deadline > now {
            // Re-armed later since this entry was queued: move it.
            s.rto_queued = s.rto_deadline;
            let d = s.rto_deadline;
            self.q.push_timer(d, Ev::Rto(f));
            return;
        }
        let events = s.stats.loss_events;
        s.on_rto(now);
        self.note_loss(f, events, true);
        self.transmit(f);
    }

    #[inline]
    fn on_tx_done(&mut self, link: u32) {
        let (p, lost, next) = self.links[link as usize].tx_done(self.now);
        if let Some(t) = next {
            self.q.push(t, Ev::TxDone(link));
        }
        let mut head_drops = 0;
        self.links[link as usize].queue.drain_dropped(|d| {
            head_drops += 1;
            if !d.is_ack {
                let f = &mut self.flows[d.flow as usize];
                f.drops += 1;
                f.total_drops += 1;
            }
        });
        self.links[link as usize].drops += head_drops;
        let fl = &mut self.flows[p.flow as usize];
        if !p.is_ack {
            fl.tx_bytes += p.size as u64;
        }
        if lost {
            if !p.is_ack {
                fl.random_losses += 1;
            }
            return;
        }
        let id = if link == FWD { fl.fwd } else { fl.rev };
        if let Some(t) = self.pipes[id as usize].push(self.now, p) {
            self.q.push(t, Ev::PipeOut(id));
        }
    }

    #[inline]
    fn on_pipe_out(&mut self, id: u32) {
        let (p, next) = self.pipes[id as usize].pop();
        if let Some(t) = next {
            self.q.push(t, Ev::PipeOut(id));
        }
        if p.conn != self.flows[p.flow as usize].conn {
            return; // a straggler of a finished web object
        }
        if p.is_ack {
            self.on_ack_arrival(p);
        } else {
            self.on_data_arrival(p);
        }
    }

    fn send_ack(&mut self, f: u32, sack: u32) {
        let fl = &mut self.flows[f as usize];
        fl.receiver.acked_now();
        let ack =
            Packet { flow: f, conn: fl.conn, seq: fl.receiver.rcv_nxt, sack, size: self.sc.ack_bytes, is_ack: true };
        let link = 1 - fl.data_link;
        self.offer(link, ack);
    }

    fn on_data_arrival(&mut self, p: Packet) {
        let now = self.now;
        let fl = &mut self.flows[p.flow as usize];
        fl.arrived += 1;
        let (delivered, action) = fl.receiver.on_data(p.seq, now);
        fl.delivered_segs += delivered as u64;
        fl.total_delivered += delivered as u64;
        match action {
            AckAction::Now { sack } => self.send_ack(p.flow, sack),
            AckAction::Delay => {
                // One pending heap entry per timer; `on_delack` moves it if it is early.
                if fl.receiver.delack_deadline == 0 {
                    fl.receiver.delack_deadline = now + fl.delack_timeout;
                    self.q.push_timer(now + fl.delack_timeout, Ev::DelAck(p.flow));
                }
            }
        }
    }

    fn on_delack(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.receiver.delack_deadline != now {
            return;
        }
        // Linux arms the timer when a segment is held and cancels it when an ACK goes out;
        // here the entry stays and is re-aimed at the oldest held segment's deadline.
        match fl.receiver.held_since() {
            Some(t) if t + fl.delack_timeout > now => {
                fl.receiver.delack_deadline = t + fl.delack_timeout;
                self.q.push_timer(t + fl.delack_timeout, Ev::DelAck(f));
            }
            Some(_) => {
                fl.receiver.delack_deadline = 0;
                self.send_ack(f, NO_SACK);
            }
            None => fl.receiver.delack_deadline = 0,
        }
    }

    fn on_ack_arrival(&mut self, p: Packet) {
        let now = self.now;
        let fl = &mut self.flows[p.flow as usize];
        let events = fl.sender.stats.loss_events;
        fl.sender.on_ack(now, p.seq, p.sack);
        if fl.sender.stats.loss_events != events {
            self.note_loss(p.flow, events, false);
        }
        let fl = &mut self.flows[p.flow as usize];
        if self.sc.record_rtt_samples && fl.web.is_none() && fl.sender.last_rtt_us >= 0 {
            self.res.traces.rtt_t_ns.push(now);
            self.res.traces.rtt_flow.push(p.flow);
            self.res.traces.rtt_us.push(fl.sender.last_rtt_us);
            fl.sender.last_rtt_us = -1;
        }
        if fl.fct_ns.is_none() && fl.sender.finished() {
            fl.fct_ns = Some(now - fl.start_ns);
            if let Some(w) = fl.web {
                self.object_done(p.flow, w);
                return;
            }
        }
        self.transmit(p.flow);
    }

    /// A web object is fully acknowledged: record it, think, then request the next one.
    fn object_done(&mut self, f: u32, w: u32) {
        let now = self.now;
        let s = &mut self.web[w as usize];
        let think = self.sc.web[s.group as usize].think_mean_ns as f64;
        let o = &mut self.res.web;
        o.t_ns.push(s.object_start);
        o.session.push(f);
        o.group.push(s.group);
        o.bytes.push(s.object_bytes);
        o.fct_ns.push(now - s.object_start);
        let next = now + s.rng.exponential(think) as Time;
        self.flows[f as usize].sender.rto_deadline = 0;
        self.q.push(next, Ev::Object(f));
    }

    /// Record a congestion event of flow `f` if its count moved past `before`.
    fn note_loss(&mut self, f: u32, before: u64, timeout: bool) {
        let fl = &self.flows[f as usize];
        let st = fl.sender.stats;
        if st.loss_events != before && fl.web.is_none() {
            let t = &mut self.res.traces;
            t.loss_t_ns.push(self.now);
            t.loss_flow.push(f);
            t.loss_cwnd.push(st.last_loss_cwnd);
            t.loss_timeout.push(timeout);
        }
    }

    #[inline]
    fn trace_cwnd(&mut self, f: u32) {
        if !self.sc.record_cwnd_changes {
            return;
        }
        let fl = &mut self.flows[f as usize];
        let (c, s) = (fl.sender.tcp().cwnd, fl.sender.tcp().ssthresh);
        if fl.web.is_none() && (c != fl.last_cwnd || s != fl.last_ssthresh) {
            fl.last_cwnd = c;
            fl.last_ssthresh = s;
            let t = &mut self.res.traces;
            t.cwnd_t_ns.push(self.now);
            t.cwnd_flow.push(f);
            t.cwnd.push(c);
            t.cwnd_ssthresh.push(s);
        }
    }

    fn sample(&mut self) {
        let now = self.now;
        let dt = self.sc.sample_interval_ns as f64 / 1e9;
        let mss = self.sc.mss as f64;
        let r = &mut self.res.flows;
        for (i, fl) in self.flows.iter_mut().enumerate().take(self.sc.flows.len()) {
            r.t_ns.push(now);
            r.flow.push(i as u32);
            r.cwnd.push(fl.sender.tcp().cwnd);
            r.ssthresh.push(fl.sender.tcp().ssthresh);
            r.srtt_us.push(fl.sender.srtt_us() as u32);
            r.throughput_bps.push(fl.tx_bytes as f64 * 8.0 / dt);
            r.goodput_bps.push(fl.delivered_segs as f64 * mss * 8.0 / dt);
            r.drops.push(fl.drops);
            r.retransmits.push((fl.sender.stats.retransmits - fl.last_retx) as u32);
            r.ca_state.push(fl.sender.tcp().ca_state as u8);
            fl.tx_bytes = 0;
            fl.delivered_segs = 0;
            fl.drops = 0;
            fl.last_retx = fl.sender.stats.retransmits;
        }
        let l = &self.links[FWD as usize];
        let lr = &mut self.res.link;
        lr.t_ns.push(now);
        lr.queue_packets.push(l.queue.len_packets() as u32);
        lr.queue_bytes.push(l.queue.len_bytes());
        lr.drops.push((l.drops - self.link_drop_mark) as u32);
        lr.random_losses.push((l.loss.losses - self.link_loss_mark) as u32);
        lr.utilization.push((l.tx_bytes - self.link_tx_mark) as f64 * 8.0 / (self.sc.rate_bps as f64 * dt));
        self.link_drop_mark = l.drops;
        self.link_tx_mark = l.tx_bytes;
        self.link_loss_mark = l.loss.losses;
        let next = now + self.sc.sample_interval_ns;
        if next <= self.sc.duration_ns {
            self.q.push(next, Ev::Sample);
        }
    }

    /// Data packets of forward flow `f` anywhere in the network (queue, link, delay line):
    /// for the conservation check `sent = arrived + dropped + lost + in network`.
    pub fn in_network(&self, f: u32) -> u64 {
        let l = &self.links[FWD as usize];
        (l.queue.count_flow(f) + l.in_service_flow(f) + self.pipes[self.flows[f as usize].fwd as usize].count_flow(f))
            as u64
    }

    /// (segments sent, arrived at the receiver, dropped by the buffer, lost at random) of
    /// flow `f` so far.
    pub fn flow_counts(&self, f: u32) -> (u64, u64, u64, u64) {
        let fl = &self.flows[f as usize];
        (fl.sender.stats.segments_sent, fl.arrived, fl.total_drops, fl.random_losses)
    }

    pub fn cwnd(&self, f: u32) -> (u32, u32, CaState) {
        let t = self.flows[f as usize].sender.tcp();
        (t.cwnd, t.ssthresh, t.ca_state)
    }

    pub fn finish(mut self) -> Results {
        for (i, fl) in self.flows.iter().enumerate().take(self.sc.flows.len()) {
            let spec = &self.sc.flows[i];
            let st = fl.sender.stats;
            self.res.totals.push(FlowTotals {
                flow: i as u32,
                group: spec.group.clone(),
                algorithm: spec.algorithm.clone(),
                rtt_ns: spec.rtt_ns,
                start_ns: fl.start_ns,
                segments_sent: st.segments_sent,
                retransmits: st.retransmits,
                timeouts: st.timeouts,
                loss_events: st.loss_events,
                drops: fl.total_drops,
                random_losses: fl.random_losses,
                delivered_bytes: fl.total_delivered * self.sc.mss as u64,
                fct_ns: fl.fct_ns,
            });
        }
        let web_bytes: u64 = self.flows[self.sc.flows.len()..]
            .iter()
            .filter(|f| f.data_link == FWD)
            .map(|f| f.total_delivered * self.sc.mss as u64)
            .sum();
        self.res.web_forward_delivered_bytes = web_bytes;
        self.res.events = self.q.processed;
        self.res.sim_ns = self.now;
        self.res.bottleneck_tx_bytes = self.links[FWD as usize].tx_bytes;
        self.res.bottleneck_drops = self.links[FWD as usize].drops;
        self.res.bottleneck_random_losses = self.links[FWD as usize].loss.losses;
        self.res
    }
}
