//! Packets through the world: offered to each link of their route, serialized, carried by
//! the delay line after it, received; ACKs back to the sender; web objects opened and closed.

use super::{Flow, Sim};
use crate::engine::Ev;
use crate::packet::{Packet, SackBlocks};
use crate::scenario::Direction;
use crate::tcp::rcv_window::ts_ms;
use crate::tcp::receiver::AckAction;
use crate::tcp::Sender;
use cubiclab_cc::AckEvent;
use cubiclab_path::{Offer, PathPacket};

impl Sim {
    /// A web session requests its next object: a new connection in its slot, whose data
    /// starts one RTT later (the handshake and the request).
    pub(super) fn start_object(&mut self, f: u32) {
        let now = self.now;
        let segs_of = |bytes: u64, mss: u32| bytes.div_ceil(mss as u64).clamp(1, u32::MAX as u64 - 1) as u32;
        let fl = &mut self.flows[f as usize];
        let s = &mut self.web[fl.web.expect("Object event for a long-lived flow") as usize];
        let bytes = s.draws.object_bytes();
        s.object_start = now;
        s.object_bytes = bytes;
        fl.conn = fl.conn.wrapping_add(1);
        fl.sender.reset(s.alg.clone(), segs_of(bytes, self.sc.mss));
        fl.receiver.reset();
        fl.start_ns = now;
        fl.fct_ns = None;
        self.q.push_ahead(now + s.rtt_ns, Ev::Start(f));
    }

    /// A web object is fully acknowledged: record it, think, then request the next one.
    pub(super) fn object_done(&mut self, f: u32, w: u32) {
        self.record_object(f, w);
        let s = &mut self.web[w as usize];
        let next = self.now + s.draws.think_ns();
        self.flows[f as usize].sender.stop_timer();
        self.q.push_ahead(next, Ev::Object(f));
    }

    /// Offer `p` to link direction `link` (the one its route's hop names).
    #[inline(always)]
    fn offer(&mut self, link: u32, p: Packet) {
        match self.links[link as usize].offer(self.now, p, |d| Self::count_drop(&mut self.flows, d)) {
            Offer::Started(t) => self.q.push(t, Ev::TxDone(link)),
            Offer::Queued => {}
            Offer::Dropped => Self::count_drop(&mut self.flows, p),
        }
    }

    /// A packet a link dropped, in its flow's counts (the link counts its own).
    #[inline]
    fn count_drop(flows: &mut [Flow], p: Packet) {
        if !p.is_ack() {
            let f = &mut flows[p.flow as usize];
            f.drops += 1;
            f.total_drops += 1;
        }
    }

    /// Send whatever the flow's window allows now.
    #[inline]
    pub(super) fn transmit(&mut self, f: u32) {
        let size = self.sc.wire_bytes();
        let (route, conn, ts) = {
            let fl = &self.flows[f as usize];
            (fl.routes[0], fl.conn, fl.ts_recent)
        };
        let link = self.hops[route.start()].link;
        let ts_snd = Sender::ts_val(self.now);
        let ecn = self.flows[f as usize].sender.ecn_ok();
        while let Some(s) = self.flows[f as usize].sender.next_segment(self.now) {
            let mut p = Packet::data(f, conn, s.seq, size, ts_snd, ts).routed(route.len);
            if s.push {
                p = p.pushed();
            }
            if ecn {
                p = self.flows[f as usize].sender.ecn_send(p, s.retransmit);
            }
            self.offer(link, p);
        }
        self.sync_rto(f);
        self.sync_pace(f);
        self.trace_cwnd(f);
    }

    #[inline]
    pub(super) fn on_tx_done(&mut self, link: u32) {
        let (p, lost, next) = self.links[link as usize].tx_done(self.now, |d| Self::count_drop(&mut self.flows, d));
        if let Some(t) = next {
            self.q.push(t, Ev::TxDone(link));
            self.prefetch_in_service(link);
        }
        let fl = &mut self.flows[p.flow as usize];
        if !p.is_ack() {
            fl.tx_bytes += p.size as u64;
        }
        if lost {
            if !p.is_ack() {
                fl.random_losses += 1;
            }
            return;
        }
        let id = self.hops[fl.routes[p.is_ack() as usize].at(p.hops_left())].pipe;
        // The capture is of one link, both ways (`record.pcap_link`; the first by default).
        if let Some(c) = self.capture.as_mut().filter(|c| Direction::link_of(link as usize) == c.link) {
            let sack = p.sack().map_or(&SackBlocks::NONE, |id| fl.sack_options.get(id));
            c.packet(self.now, &p, sack);
        }
        let pipe = &mut self.pipes[id as usize];
        let head = match &mut self.host {
            None => pipe.push(self.now, p),
            // The hosts' timing model: a packet at the end of its route waits for its host.
            Some(host) => match self.pipe_ends[id as usize] {
                Some(side) => pipe.push_late(self.now, |idle| host.delay(side, idle), p),
                None => pipe.push(self.now, p),
            },
        };
        if let Some(t) = head {
            self.q.push(t, Ev::PipeOut(id));
        }
    }

    #[inline]
    pub(super) fn on_pipe_out(&mut self, id: u32) {
        let (p, next) = self.pipes[id as usize].pop();
        if let Some(t) = next {
            self.q.push(t, Ev::PipeOut(id));
            self.prefetch_pipe_head(id);
        }
        let fl = &self.flows[p.flow as usize];
        if p.conn != fl.conn {
            return; // a straggler of a finished web object
        }
        if p.hops_left() != 0 {
            let p = p.next_hop();
            let link = self.hops[fl.routes[p.is_ack() as usize].at(p.hops_left())].link;
            self.offer(link, p);
            return;
        }
        if p.is_ack() {
            self.on_ack_arrival(p);
        } else {
            self.on_data_arrival(p);
        }
    }

    pub(super) fn send_ack(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        let sack = fl.receiver.sack_option();
        fl.receiver.acked_now();
        self.send_ack_with(f, sack);
    }

    /// The ACK that SACK compression sent before the blocks changed (the receiver counted
    /// it as sent).
    #[cold]
    fn send_flushed_ack(&mut self, f: u32) {
        if let Some(sack) = self.flows[f as usize].receiver.take_flushed() {
            self.send_ack_with(f, sack);
        }
    }

    /// An ACK of everything received, with SACK option `sack`.
    #[inline(always)]
    fn send_ack_with(&mut self, f: u32, sack: SackBlocks) {
        let fl = &mut self.flows[f as usize];
        let blocks = sack.len;
        let sack = (blocks > 0).then(|| fl.sack_options.push(sack));
        let ts_snd = fl.receiver.ts_echo();
        let win = fl.receiver.select_window();
        let ack = Packet::ack(f, fl.conn, fl.receiver.rcv_nxt, win, ts_snd, ts_ms(self.now), sack, blocks);
        let ece = fl.receiver.ece();
        self.offer_ack(f, ack, ece);
    }

    /// DCTCP's ACK of `rcv_nxt` with ECE as `ece` before the CE state changed
    /// (`__tcp_send_ack(sk, prior_rcv_nxt)`): no SACK option, and the receiver's delayed-ACK
    /// state stays (`tcp_event_ack_sent` ignores an ACK of another `rcv_nxt`).
    fn send_prior_ack(&mut self, f: u32, rcv_nxt: u32, ece: bool) {
        let fl = &mut self.flows[f as usize];
        let win = fl.receiver.select_window();
        let ack = Packet::ack(f, fl.conn, rcv_nxt, win, fl.receiver.ts_echo(), ts_ms(self.now), None, 0);
        self.offer_ack(f, ack, ece);
    }

    /// An ACK onto the flow's ACK route, with ECE if `ece` and, on an ECN connection, the
    /// receiver's ECN field.
    #[inline(always)]
    fn offer_ack(&mut self, f: u32, mut ack: Packet, ece: bool) {
        let fl = &self.flows[f as usize];
        if fl.receiver.ecn_ok() {
            ack = ack.with_ecn(fl.receiver.ack_ecn());
            if ece {
                ack = ack.with_ece();
            }
        }
        let route = fl.routes[1];
        let ack = ack.routed(route.len);
        let link = self.hops[route.start()].link;
        self.offer(link, ack);
    }

    fn on_data_arrival(&mut self, p: Packet) {
        let now = self.now;
        let fl = &mut self.flows[p.flow as usize];
        fl.arrived += 1;
        let ecn = fl.receiver.ecn_ok();
        let (delivered, action) = if ecn {
            fl.receiver.on_data_ecn(p.seq, p.ts_snd, p.ts, p.is_pushed(), p.ecn(), p.is_cwr(), now)
        } else {
            fl.receiver.on_data(p.seq, p.ts_snd, p.ts, p.is_pushed(), now)
        };
        fl.delivered_segs += delivered as u64;
        fl.total_delivered += delivered as u64;
        if ecn {
            if let Some((rcv_nxt, ece)) = fl.receiver.take_prior_ack() {
                self.send_prior_ack(p.flow, rcv_nxt, ece);
            }
        }
        match action {
            AckAction::Now => self.send_ack(p.flow),
            AckAction::Delay => self.arm_delack(p.flow),
            AckAction::Compress(None) => {}
            AckAction::Compress(Some(at)) => self.q.push_timer(at, Ev::SackAck(p.flow)),
            AckAction::FlushThenNow => {
                self.send_flushed_ack(p.flow);
                self.send_ack(p.flow);
            }
            AckAction::FlushThenCompress(at) => {
                self.send_flushed_ack(p.flow);
                self.q.push_timer(at, Ev::SackAck(p.flow));
            }
        }
    }

    fn on_ack_arrival(&mut self, p: Packet) {
        let now = self.now;
        let fl = &mut self.flows[p.flow as usize];
        let events = fl.sender.stats.loss_events;
        fl.ts_recent = p.ts;
        let sack = p.sack().map_or(SackBlocks::NONE, |id| fl.sack_options.take(id));
        // tcp_rcv_established's header prediction fails on SACK blocks (a longer header),
        // on a window field other than the last one and on ECE (a flag the prediction does
        // not expect): the ACK takes the slow path.
        fl.sender.next_ack =
            AckEvent { slow_path: sack.len > 0 || p.win != fl.peer_window.field() || p.is_ece(), ece: false };
        fl.sender.on_ack_ecn(now, p.seq, &sack, p.ts_snd, p.is_ece());
        fl.sender.update_window(p.seq, fl.peer_window.segments(p.win));
        if fl.sender.stats.loss_events != events {
            self.note_loss(p.flow, events, false);
        }
        self.record_rtt_sample(p.flow);
        let fl = &mut self.flows[p.flow as usize];
        if fl.fct_ns.is_none() && fl.sender.finished() {
            fl.fct_ns = Some(now - fl.start_ns);
            if let Some(w) = fl.web {
                self.object_done(p.flow, w);
                return;
            }
        }
        self.transmit(p.flow);
    }
}
