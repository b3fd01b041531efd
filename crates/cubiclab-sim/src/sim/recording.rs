//! What a run records: interval samples of every long-lived flow and of the bottleneck,
//! the optional traces (cwnd changes, RTT samples), congestion events, web objects, and the
//! totals at the end. The columns are declared in `record.rs`; this file fills them.

use super::Sim;
use crate::engine::Ev;
use crate::record::Results;
use crate::scenario::{CwndRecording, Direction};

impl Sim {
    /// Record a congestion event of flow `f` if its count moved past `before`.
    pub(super) fn note_loss(&mut self, f: u32, before: u64, timeout: bool) {
        let fl = &self.flows[f as usize];
        let st = fl.sender.stats;
        if st.loss_events != before && fl.web.is_none() {
            let t = &mut self.res.losses;
            t.t_ns.push(self.now);
            t.flow.push(f);
            t.cwnd.push(st.last_loss_cwnd);
            t.timeout.push(timeout);
        }
    }

    /// Record the RTT sample the last ACK gave flow `f`'s algorithm, if asked to.
    #[inline]
    pub(super) fn record_rtt_sample(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if self.sc.record.rtt_samples && fl.web.is_none() && fl.sender.last_rtt_us >= 0 {
            let t = &mut self.res.rtt;
            t.t_ns.push(self.now);
            t.flow.push(f);
            t.rtt_us.push(fl.sender.last_rtt_us);
            fl.sender.last_rtt_us = -1;
        }
    }

    #[inline]
    pub(super) fn trace_cwnd(&mut self, f: u32) {
        if self.sc.record.cwnd != CwndRecording::Changes {
            return;
        }
        let fl = &mut self.flows[f as usize];
        let (c, s) = (fl.sender.tcp().cwnd, fl.sender.tcp().ssthresh);
        if fl.web.is_none() && (c != fl.last_cwnd || s != fl.last_ssthresh) {
            fl.last_cwnd = c;
            fl.last_ssthresh = s;
            let t = &mut self.res.cwnd;
            t.t_ns.push(self.now);
            t.flow.push(f);
            t.cwnd.push(c);
            t.ssthresh.push(s);
        }
    }

    /// A completed web object of session `w` in slot `f`.
    pub(super) fn record_object(&mut self, f: u32, w: u32) {
        let s = &self.web[w as usize];
        let o = &mut self.res.web;
        o.t_ns.push(s.object_start);
        o.session.push(f);
        o.group.push(self.lanes[s.lane as usize].group.clone());
        o.bytes.push(s.object_bytes);
        o.fct_ns.push(self.now - s.object_start);
    }

    pub(super) fn sample(&mut self) {
        let now = self.now;
        let dt = self.sc.record.interval_ns as f64 / 1e9;
        let mss = self.sc.mss as f64;
        let r = &mut self.res.flows;
        for (i, fl) in self.flows.iter_mut().enumerate().take(self.planned.len()) {
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
        if self.sc.record.cc_state {
            let st = &mut self.res.cc_state;
            for (i, fl) in self.flows.iter().enumerate().take(self.planned.len()) {
                fl.sender.cc_vars(&mut |var, value| {
                    st.t_ns.push(now);
                    st.flow.push(i as u32);
                    st.var.push(var.to_string());
                    st.value.push(value);
                });
            }
        }
        for (k, spec) in self.sc.links.iter().enumerate() {
            let l = &self.links[Direction::Forward.of_link(k)];
            let mark = &mut self.link_marks[k];
            // Utilisation is of what the link could carry in the interval: its rate, or with
            // a schedule what the schedule offered (NaN through an outage).
            let capacity_bits = match spec.schedule {
                None => spec.rate_bps as f64 * dt,
                Some(_) => {
                    let capacity = l.capacity_bits(now);
                    let offered = (capacity - mark.capacity_bits) as f64;
                    mark.capacity_bits = capacity;
                    offered
                }
            };
            let lr = &mut self.res.link;
            lr.t_ns.push(now);
            lr.link.push(k as u32);
            lr.queue_packets.push(l.queue.len_packets() as u32);
            lr.queue_bytes.push(l.queue.len_bytes());
            lr.drops.push((l.drops - mark.drops) as u32);
            lr.marks.push((l.marks - mark.marks) as u32);
            lr.random_losses.push((l.loss.losses - mark.losses) as u32);
            lr.utilization.push((l.tx_bytes - mark.tx_bytes) as f64 * 8.0 / capacity_bits);
            mark.drops = l.drops;
            mark.marks = l.marks;
            mark.tx_bytes = l.tx_bytes;
            mark.losses = l.loss.losses;
        }
        let next = now + self.sc.record.interval_ns;
        if next <= self.sc.duration_ns {
            self.q.push(next, Ev::Sample);
        }
    }

    /// End the run: per-flow totals and whole-run counters.
    pub fn finish(mut self) -> Results {
        let mss = self.sc.mss as u64;
        let t = &mut self.res.totals;
        for (i, (fl, plan)) in self.flows.iter().zip(&self.planned).enumerate() {
            let st = fl.sender.stats;
            t.flow.push(i as u32);
            t.group.push(plan.group.clone());
            t.algorithm.push(plan.algorithm.clone());
            t.direction.push(plan.direction.name().to_string());
            let names: Vec<&str> =
                plan.data_hops.iter().map(|h| self.sc.links[Direction::link_of(h.link as usize)].name()).collect();
            t.route.push(names.join(">"));
            t.rtt_ns.push(plan.rtt_ns);
            t.start_ns.push(fl.start_ns);
            t.segments_sent.push(st.segments_sent);
            t.retransmits.push(st.retransmits);
            t.timeouts.push(st.timeouts);
            t.loss_events.push(st.loss_events);
            t.drops.push(fl.total_drops);
            t.random_losses.push(fl.random_losses);
            t.delivered_bytes.push(fl.total_delivered * mss);
            t.fct_ns.push(fl.fct_ns);
            t.ecn.push(fl.sender.ecn_ok());
            t.ecn_reductions.push(st.ecn_reductions);
            t.ce_marks.push(fl.receiver.ce_received);
        }
        // `Sim::links` is built in the order of `link_directions`.
        for ((link, dir), l) in self.sc.link_directions().zip(&self.links) {
            let t = &mut self.res.link_totals;
            t.link.push(link as u32);
            t.name.push(self.sc.links[link].name().to_string());
            t.direction.push(dir.name().to_string());
            t.tx_bytes.push(l.tx_bytes);
            t.capacity_bytes.push((l.capacity_bits(self.now) / 8) as u64);
            t.drops.push(l.drops);
            t.marks.push(l.marks);
            t.random_losses.push(l.loss.losses);
        }
        let fwd = &self.links[Direction::Forward.of_link(0)];
        let run = &mut self.res.run;
        run.events.push(self.q.processed);
        run.sim_ns.push(self.now);
        run.bottleneck_tx_bytes.push(fwd.tx_bytes);
        run.bottleneck_capacity_bytes.push((fwd.capacity_bits(self.now) / 8) as u64);
        run.bottleneck_drops.push(fwd.drops);
        run.bottleneck_random_losses.push(fwd.loss.losses);
        run.web_forward_delivered_bytes.push(
            self.flows[self.planned.len()..]
                .iter()
                .filter(|f| f.data_dir == Direction::Forward)
                .map(|f| f.total_delivered * mss)
                .sum(),
        );
        self.res
    }
}
