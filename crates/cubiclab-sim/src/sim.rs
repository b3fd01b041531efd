//! The dumbbell world: flows, the bottleneck in both directions, and the event loop.
//!
//! Path of a data packet: sender → forward bottleneck (buffer, serialization) → the flow's
//! forward delay line (bottleneck propagation plus its access links) → receiver. ACKs go
//! back through the reverse bottleneck and the flow's reverse delay line. All of a flow's
//! access delay sits after the bottleneck: for one shared bottleneck only the loop delay
//! matters, and it saves two events per packet. Flows with the same delay share a delay
//! line (packets carry their flow), so the event heap grows with the number of distinct
//! RTTs, not with the number of flows.

use cubiclab_cc::{Algorithm, CaState};

use crate::engine::{Ev, EventQueue, Time};
use crate::link::{Link, Offer};
use crate::packet::{Packet, NO_SACK};
use crate::pipe::Pipe;
use crate::queue::{DropTail, Queue};
use crate::record::{FlowTotals, Results};
use crate::rng::Rng;
use crate::scenario::Scenario;
use crate::tcp::{Receiver, Sender, SenderConfig};

const FWD: u32 = 0;
const REV: u32 = 1;

struct Flow {
    sender: Sender,
    receiver: Receiver,
    /// Indices of this flow's forward and reverse delay lines in `Sim::pipes`.
    fwd: u32,
    rev: u32,
    start_ns: Time,
    delack_timeout: Time,
    /// Counters since the last sample.
    tx_bytes: u64,
    delivered_segs: u64,
    drops: u32,
    last_retx: u64,
    /// Whole-run counters.
    total_drops: u64,
    total_delivered: u64,
    arrived: u64,
    fct_ns: Option<u64>,
    last_cwnd: u32,
    last_ssthresh: u32,
}

pub struct Sim {
    sc: Scenario,
    q: EventQueue,
    now: Time,
    links: [Link; 2],
    flows: Vec<Flow>,
    pipes: Vec<Pipe>,
    res: Results,
    link_tx_mark: u64,
    link_drop_mark: u64,
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
        let mut q = EventQueue::default();
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut pipes: Vec<Pipe> = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            let alg = Algorithm::new(&f.algorithm, &f.params).map_err(|e| e.0)?;
            let cfg = SenderConfig {
                recovery: f.recovery,
                min_rto_ns: sc.min_rto_ns,
                rwnd: f.rwnd,
                initial_cwnd: f.initial_cwnd,
                initial_ssthresh: f.initial_ssthresh,
            };
            let mut sender = Sender::new(alg, cfg, sc.mss);
            if let Some(b) = f.bytes {
                sender.app_limit = b.div_ceil(sc.mss as u64).min(u32::MAX as u64 - 1) as u32;
            }
            // Split the loop delay: the bottleneck's propagation plus half of the access
            // delay each way.
            let access = f.rtt_ns - 2 * sc.delay_ns;
            let fwd_delay = sc.delay_ns + access / 2;
            let rev_delay = sc.delay_ns + (access - access / 2);
            let jitter = Rng::new(sc.seed, i as u64).below(sc.start_jitter_ns);
            let start = f.start_ns + jitter;
            q.push(start, Ev::Start(i as u32));
            if let Some(stop) = f.stop_ns {
                q.push(stop.max(start), Ev::Stop(i as u32));
            }
            flows.push(Flow {
                sender,
                receiver: Receiver::new(f.ack_every),
                fwd: pipe_for(&mut pipes, fwd_delay),
                rev: pipe_for(&mut pipes, rev_delay),
                start_ns: start,
                delack_timeout: f.delack_timeout_ns,
                tx_bytes: 0,
                delivered_segs: 0,
                drops: 0,
                last_retx: 0,
                total_drops: 0,
                total_delivered: 0,
                arrived: 0,
                fct_ns: None,
                last_cwnd: 0,
                last_ssthresh: 0,
            });
        }
        q.push(sc.sample_interval_ns, Ev::Sample);
        let links = [
            Link::new(sc.rate_bps, Queue::DropTail(DropTail::new(sc.buffer))),
            Link::new(
                sc.rate_bps,
                Queue::DropTail(DropTail::new(sc.reverse_buffer)),
            ),
        ];
        Ok(Self {
            sc,
            q,
            now: 0,
            links,
            flows,
            pipes,
            res: Results::default(),
            link_tx_mark: 0,
            link_drop_mark: 0,
        })
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
                s.app_limit = s.tcp.snd_nxt;
            }
            Ev::Sample => self.sample(),
        }
    }

    #[inline]
    fn offer(&mut self, link: u32, p: Packet) {
        match self.links[link as usize].offer(self.now, p) {
            Offer::Started(t) => self.q.push(t, Ev::TxDone(link)),
            Offer::Queued => {}
            Offer::Dropped => {
                if !p.is_ack {
                    let f = &mut self.flows[p.flow as usize];
                    f.drops += 1;
                    f.total_drops += 1;
                }
            }
        }
    }

    /// Send whatever the flow's window allows now.
    #[inline]
    fn transmit(&mut self, f: u32) {
        let size = self.sc.wire_bytes();
        while let Some((seq, _)) = self.flows[f as usize].sender.next_segment(self.now) {
            self.offer(
                FWD,
                Packet {
                    flow: f,
                    seq,
                    sack: NO_SACK,
                    size,
                    is_ack: false,
                },
            );
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
            self.q.push(s.rto_deadline, Ev::Rto(f));
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
            self.q.push(d, Ev::Rto(f));
            return;
        }
        let events = s.stats.loss_events;
        s.on_rto(now);
        self.note_loss(f, events, true);
        self.transmit(f);
    }

    #[inline]
    fn on_tx_done(&mut self, link: u32) {
        let (p, next) = self.links[link as usize].tx_done(self.now);
        if let Some(t) = next {
            self.q.push(t, Ev::TxDone(link));
        }
        let fl = &mut self.flows[p.flow as usize];
        let id = if link == FWD {
            fl.tx_bytes += p.size as u64;
            fl.fwd
        } else {
            fl.rev
        };
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
        if p.is_ack {
            self.on_ack_arrival(p);
        } else {
            self.on_data_arrival(p);
        }
    }

    fn on_data_arrival(&mut self, p: Packet) {
        let now = self.now;
        let fl = &mut self.flows[p.flow as usize];
        fl.arrived += 1;
        let (delivered, action) = fl.receiver.on_data(p.seq, now);
        fl.delivered_segs += delivered as u64;
        fl.total_delivered += delivered as u64;
        match action {
            crate::tcp::receiver::AckAction::Now { sack } => {
                fl.receiver.acked_now();
                let ack = Packet {
                    flow: p.flow,
                    seq: fl.receiver.rcv_nxt,
                    sack,
                    size: self.sc.ack_bytes,
                    is_ack: true,
                };
                self.offer(REV, ack);
            }
            crate::tcp::receiver::AckAction::Delay => {
                // One pending heap entry per timer; `on_delack` moves it if it is early.
                if fl.receiver.delack_deadline == 0 {
                    fl.receiver.delack_deadline = now + fl.delack_timeout;
                    self.q.push(now + fl.delack_timeout, Ev::DelAck(p.flow));
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
                self.q.push(t + fl.delack_timeout, Ev::DelAck(f));
            }
            Some(_) => {
                fl.receiver.delack_deadline = 0;
                fl.receiver.acked_now();
                let ack = Packet {
                    flow: f,
                    seq: fl.receiver.rcv_nxt,
                    sack: NO_SACK,
                    size: self.sc.ack_bytes,
                    is_ack: true,
                };
                self.offer(REV, ack);
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
        if self.sc.record_rtt_samples
            && fl.sender.stats.rtt_samples > 0
            && fl.sender.last_rtt_us >= 0
        {
            self.res.traces.rtt_t_ns.push(now);
            self.res.traces.rtt_flow.push(p.flow);
            self.res.traces.rtt_us.push(fl.sender.last_rtt_us);
            fl.sender.last_rtt_us = -1;
        }
        if fl.fct_ns.is_none() && fl.sender.finished() {
            fl.fct_ns = Some(now - fl.start_ns);
        }
        self.transmit(p.flow);
    }

    /// Record a congestion event of flow `f` if its count moved past `before`.
    fn note_loss(&mut self, f: u32, before: u64, timeout: bool) {
        let st = self.flows[f as usize].sender.stats;
        if st.loss_events != before {
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
        let (c, s) = (fl.sender.tcp.cwnd, fl.sender.tcp.ssthresh);
        if c != fl.last_cwnd || s != fl.last_ssthresh {
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
        for (i, fl) in self.flows.iter_mut().enumerate() {
            r.t_ns.push(now);
            r.flow.push(i as u32);
            r.cwnd.push(fl.sender.tcp.cwnd);
            r.ssthresh.push(fl.sender.tcp.ssthresh);
            r.srtt_us.push((fl.sender.rtt.srtt / 1000) as u32);
            r.rtt_us.push(fl.sender.tcp.srtt_us as i64);
            r.throughput_bps.push(fl.tx_bytes as f64 * 8.0 / dt);
            r.goodput_bps
                .push(fl.delivered_segs as f64 * mss * 8.0 / dt);
            r.drops.push(fl.drops);
            r.retransmits
                .push((fl.sender.stats.retransmits - fl.last_retx) as u32);
            r.ca_state.push(fl.sender.tcp.ca_state as u8);
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
        lr.utilization
            .push((l.tx_bytes - self.link_tx_mark) as f64 * 8.0 / (self.sc.rate_bps as f64 * dt));
        self.link_drop_mark = l.drops;
        self.link_tx_mark = l.tx_bytes;
        let next = now + self.sc.sample_interval_ns;
        if next <= self.sc.duration_ns {
            self.q.push(next, Ev::Sample);
        }
    }

    /// Packets of flow `f` anywhere in the network (queue, link, delay line): the
    /// conservation check `sent = arrived + dropped + in network`.
    pub fn in_network(&self, f: u32) -> u64 {
        let l = &self.links[FWD as usize];
        (l.queue.count_flow(f)
            + l.in_service_flow(f)
            + self.pipes[self.flows[f as usize].fwd as usize].count_flow(f)) as u64
    }

    /// (segments sent, arrived at the receiver, dropped) of flow `f` so far.
    pub fn flow_counts(&self, f: u32) -> (u64, u64, u64) {
        let fl = &self.flows[f as usize];
        (fl.sender.stats.segments_sent, fl.arrived, fl.total_drops)
    }

    pub fn cwnd(&self, f: u32) -> (u32, u32, CaState) {
        let t = &self.flows[f as usize].sender.tcp;
        (t.cwnd, t.ssthresh, t.ca_state)
    }

    pub fn finish(mut self) -> Results {
        for (i, fl) in self.flows.iter().enumerate() {
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
                delivered_bytes: fl.total_delivered * self.sc.mss as u64,
                fct_ns: fl.fct_ns,
            });
        }
        self.res.events = self.q.processed;
        self.res.sim_ns = self.now;
        self.res.bottleneck_tx_bytes = self.links[FWD as usize].tx_bytes;
        self.res.bottleneck_drops = self.links[FWD as usize].drops;
        self.res
    }
}
