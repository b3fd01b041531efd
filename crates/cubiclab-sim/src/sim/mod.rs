//! The world: flows, the links in both directions, and the event loop.
//!
//! Path of a data packet: sender → each link of its route in turn (buffer, serialization,
//! random loss), each followed by a delay line (the link's propagation; after the last,
//! also the flow's access delay) → receiver. ACKs go back the same way over their own route.
//! A packet carries its flow and how many hops of its route are still ahead; the flow's
//! route says where it goes next. Flows with the same delay after a hop share a delay line, so the event heap
//! grows with the number of distinct delays, not with the number of flows.
//!
//! Long-lived flows come first (indices 0..n, in plan order); background web sessions
//! follow, each in one flow slot that opens a new connection per object.
//!
//! The jobs live apart: `build` (from the scenario's plan), `events` (packets through links,
//! delay lines, senders and receivers), `host` (the hosts' timing noise, when on), `timers`
//! (retransmission and delayed-ACK timers), `recording` (samples, traces, totals).

mod build;
mod events;
mod host;
mod prefetch;
mod recording;
mod timers;

use cubiclab_cc::{Algorithm, CaState};

use crate::engine::{Ev, EventQueue, Time};
use crate::packet::{Packet, SackOptions};
use crate::pcap::Capture;
use crate::pipe::Pipe;
use crate::record::Results;
use crate::scenario::{Direction, PlannedFlow, Scenario, SessionDraws, WebLane};
use crate::tcp::rcv_window::{ts_ms, PeerWindow};
use crate::tcp::{Receiver, Sender};
use cubiclab_path::Link;

/// What one flow's (or web session's) state holds before its rings grow: the memory
/// estimate's per-flow term.
pub(crate) const FLOW_STATE_BYTES: usize = std::mem::size_of::<Flow>();

struct Flow {
    sender: Sender,
    /// The sender's timer entries pending in the event queue.
    queued: timers::Queued,
    receiver: Receiver,
    /// The sender's reading of the receiver's window field (its scale and unit).
    peer_window: PeerWindow,
    /// The SACK options of its ACKs in flight (an ACK carries only an id).
    sack_options: SackOptions,
    /// The sender's `ts_recent`: the TSval of the last ACK, echoed on its data.
    ts_recent: u16,
    /// One-way delay from the receiver back to the sender, beyond the bottleneck: the
    /// SYN-ACK left that long before the first data (its TSval is the first echoed).
    reverse_delay: Time,
    /// Its data's route and its ACKs', by `Packet::is_ack` (in `Sim::hops`).
    routes: [Route; 2],
    /// Which way its data crosses its route's links (web sessions may go back along it).
    data_dir: Direction,
    /// Connection number, bumped for each web object.
    conn: u16,
    start_ns: Time,
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
    /// Index of its lane (web group and direction) in the plan.
    lane: u32,
    draws: SessionDraws,
    rtt_ns: Time,
    alg: Algorithm,
    object_start: Time,
    object_bytes: u64,
}

/// One hop of a route: the link direction a packet crosses and the delay line after it.
#[derive(Clone, Copy)]
struct Hop {
    /// Index in `Sim::links`.
    link: u32,
    /// Index in `Sim::pipes`.
    pipe: u32,
}

/// A route: `len` hops in `Sim::hops` from `first`, last hop first: the entry of a packet
/// with `hops_left` hops still ahead is `first + hops_left`, one index per packet.
#[derive(Clone, Copy)]
struct Route {
    first: u32,
    len: u32,
}

impl Route {
    /// Index in `Sim::hops` of the hop a packet with `hops_left` hops ahead is on.
    #[inline]
    fn at(self, hops_left: usize) -> usize {
        self.first as usize + hops_left
    }

    /// Index of its first hop.
    #[inline]
    fn start(self) -> usize {
        self.at(self.len as usize - 1)
    }
}

/// What the run counted on one link direction at the last sample.
#[derive(Clone, Copy, Default)]
struct LinkMarks {
    tx_bytes: u64,
    /// Its capacity, bits (with a schedule).
    capacity_bits: u128,
    drops: u64,
    marks: u64,
    losses: u64,
}

pub struct Sim {
    sc: Scenario,
    q: EventQueue,
    now: Time,
    /// Every link direction, by `Direction::of_link`.
    links: Vec<Link<Packet>>,
    /// Every route's hops, each route's side by side.
    hops: Vec<Hop>,
    flows: Vec<Flow>,
    pipes: Vec<Pipe>,
    /// The hosts' timing model (`[host] jitter`; None: off).
    host: Option<host::HostTiming>,
    /// With the model on, the host each delay line ends at (lines that end routes are then
    /// apart from the others, by side), by pipe index.
    pipe_ends: Vec<Option<host::Side>>,
    web: Vec<Session>,
    /// Web group and direction of each session lane.
    lanes: Vec<WebLane>,
    /// The long-lived flows as planned (labels and RTTs for the totals).
    planned: Vec<PlannedFlow>,
    res: Results,
    /// The packet capture, with `record.pcap`.
    capture: Option<Capture>,
    /// Each link's forward direction at the last sample (by the link's index).
    link_marks: Vec<LinkMarks>,
}

impl Sim {
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
        self.run_until_or_events(until, u64::MAX)
    }

    /// [`Sim::run_until`], stopping early after `max_events` events (simulated time then
    /// stays at the last event's): a bound on the wall time of one call whatever the
    /// scenario, so that a caller can check for Ctrl-C between calls.
    // Never inlined: benches/sim_speed.py counts the instructions inside this symbol.
    #[inline(never)]
    pub fn run_until_or_events(&mut self, until: Time, max_events: u64) -> bool {
        let until = until.min(self.sc.duration_ns);
        for _ in 0..max_events {
            let Some((t, ev)) = self.q.pop_until(until) else {
                self.now = until;
                return until >= self.sc.duration_ns;
            };
            self.now = t;
            self.dispatch(ev);
        }
        false
    }

    /// Run to the end and return the results. A capture (`record.pcap`) is closed on the
    /// way; a failure to write it is printed, since the results stand without it (callers
    /// that must know use `run_until`, [`Sim::close_capture`] and `finish`, as the
    /// bindings do).
    pub fn run(mut self) -> Results {
        self.run_until(self.sc.duration_ns);
        if let Err(e) = self.close_capture() {
            eprintln!("cubiclab-sim: {e}");
        }
        self.finish()
    }

    /// Flush the packet capture and move it into place (`record.pcap`); call before
    /// [`Sim::finish`]. Without a capture, nothing to do.
    pub fn close_capture(&mut self) -> Result<(), String> {
        self.capture.as_mut().map_or(Ok(()), Capture::close)
    }

    // Inlined into the event loop: called out of line, its entry and exit (saving and
    // restoring the registers its handlers use) cost about 19 instructions per event.
    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::TxDone(link) => self.on_tx_done(link),
            Ev::PipeOut(pipe) => self.on_pipe_out(pipe),
            Ev::DelAck(f) => self.on_delack(f),
            Ev::SackAck(f) => self.on_sack_timer(f),
            Ev::Rto(f) => self.on_rto_event(f),
            Ev::Pace(f) => self.on_pace_event(f),
            Ev::Start(f) => {
                let fl = &mut self.flows[f as usize];
                fl.sender.start(self.now);
                // The first data echoes the SYN-ACK's timestamp: the receiver's first RTT
                // sample is the handshake's.
                fl.ts_recent = ts_ms(self.now.saturating_sub(fl.reverse_delay));
                self.transmit(f);
            }
            Ev::Stop(f) => {
                let s = &mut self.flows[f as usize].sender;
                s.app_limit = s.tcp().snd_nxt;
            }
            Ev::Object(f) => self.start_object(f),
            Ev::Sample => self.sample(),
            Ev::Tick | Ev::Due => unreachable!("the event queue handles its own ticks and due runs"),
        }
    }

    /// Data packets of long-lived flow `f` anywhere in the network (queue, link, delay line):
    /// for the conservation check `sent = arrived + dropped + lost + in network`.
    pub fn in_network(&self, f: u32) -> u64 {
        let data_of_f = |p: &Packet| p.flow == f && !p.is_ack();
        let route = self.flows[f as usize].routes[0];
        let hops = &self.hops[route.at(0)..route.at(route.len as usize)];
        let mut pipes: Vec<u32> = hops.iter().map(|h| h.pipe).collect();
        // Hops with the same delay share a delay line: count each line once.
        pipes.sort_unstable();
        pipes.dedup();
        let queued: usize = hops
            .iter()
            .map(|h| {
                let l = &self.links[h.link as usize];
                l.queue.count(data_of_f) + l.in_service().map_or(0, |p| data_of_f(p) as usize)
            })
            .sum();
        let delayed: usize = pipes.iter().map(|&p| self.pipes[p as usize].count_flow(f)).sum();
        (queued + delayed) as u64
    }

    /// (segments sent, arrived at the receiver, dropped by the buffer, lost at random) of
    /// flow `f` so far.
    pub fn flow_counts(&self, f: u32) -> (u64, u64, u64, u64) {
        let fl = &self.flows[f as usize];
        (fl.sender.stats.segments_sent, fl.arrived, fl.total_drops, fl.random_losses)
    }

    /// The receive window of flow `f`'s receiver (its buffer, clamp and `rcv_ssthresh`).
    pub fn receive_window(&self, f: u32) -> &crate::tcp::RcvWindow {
        self.flows[f as usize].receiver.window()
    }

    pub fn cwnd(&self, f: u32) -> (u32, u32, CaState) {
        let t = self.flows[f as usize].sender.tcp();
        (t.cwnd, t.ssthresh, t.ca_state)
    }
}
