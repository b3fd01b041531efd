//! Every range check of a scenario, in one place, before anything runs. A message names the
//! key path as the scenario file spells it (`flows[0].rtt`) and what is allowed.

use cubiclab_cc::Algorithm;
use cubiclab_cc::CongestionControl;

use super::{FlowGroup, RttDist, Scenario, WebDirection, WebGroup};
use crate::queue::Limit;

const MS: f64 = 1e6;

/// At most this many flows or web sessions in one run.
pub const MAX_FLOWS: u64 = 100_000;

fn positive(value: u64, at: &str) -> Result<(), String> {
    if value == 0 {
        return Err(format!("{at} is 0; it must be > 0"));
    }
    Ok(())
}

/// The simulator's sender does not yet produce `tcp_rate.c` rate samples or pace packets, so
/// an algorithm that sets its own window from them (`cong_control`, i.e. BBR) cannot run in it.
fn simulable(alg: &Algorithm) -> Result<(), String> {
    if alg.has_cong_control() {
        return Err(format!(
            "algorithm '{}' needs delivery-rate samples and pacing, which the simulator does not model yet",
            alg.name()
        ));
    }
    Ok(())
}

impl Scenario {
    /// Check everything before a run; the message names the key and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_path_and_flows()?;
        for (i, g) in self.flows.iter().enumerate() {
            let alg = Algorithm::new(&g.algorithm, &g.cc_params()).map_err(|e| format!("flows[{i}]: {}", e.0))?;
            simulable(&alg).map_err(|e| format!("flows[{i}]: {e}"))?;
        }
        for (i, w) in self.web.iter().enumerate() {
            let alg = Algorithm::new(&w.algorithm, &w.cc_params()).map_err(|e| format!("web[{i}]: {}", e.0))?;
            simulable(&alg).map_err(|e| format!("web[{i}]: {e}"))?;
        }
        Ok(())
    }

    /// Every check but the algorithm names and parameters: for the testbed, whose
    /// algorithms are the kernel's (it checks them against the kernel instead).
    pub fn validate_path_and_flows(&self) -> Result<(), String> {
        if !(1..=65_000).contains(&self.mss) {
            return Err(format!("mss is {}; allowed: an integer in [1, 65000] bytes", self.mss));
        }
        if self.seed > i64::MAX as u64 {
            return Err(format!("seed is {}; allowed: an integer in [0, {}]", self.seed, i64::MAX));
        }
        positive(self.duration_ns, "duration")?;
        positive(self.record.interval_ns, "record.interval")?;
        self.validate_bottleneck()?;
        if self.flows.is_empty() && self.web.is_empty() {
            return Err("flows: a scenario needs at least one flow group or web group".into());
        }
        let mut total: u64 = 0;
        for (i, g) in self.flows.iter().enumerate() {
            self.validate_flow_group(g, &format!("flows[{i}]"))?;
            total += g.count as u64;
        }
        for (i, w) in self.web.iter().enumerate() {
            self.validate_web_group(w, &format!("web[{i}]"))?;
            total += w.sessions as u64;
        }
        if total > MAX_FLOWS {
            return Err(format!("flows and web sessions number {total} in all; allowed: at most {MAX_FLOWS}"));
        }
        Ok(())
    }

    fn validate_bottleneck(&self) -> Result<(), String> {
        let b = &self.bottleneck;
        positive(b.rate_bps, "bottleneck.rate")?;
        for (name, limit) in [("bottleneck.buffer", b.buffer), ("bottleneck.reverse_buffer", b.reverse_buffer)] {
            match limit {
                Limit::Packets(0) | Limit::Bytes(0) => return Err(format!("{name} is 0; it must be > 0")),
                Limit::Bytes(n) if n < self.wire_bytes() as u64 => {
                    return Err(format!(
                        "{name} is {n} bytes; it must hold at least one packet ({} bytes)",
                        self.wire_bytes()
                    ))
                }
                _ => {}
            }
        }
        crate::queue::validate_settings(b)?;
        b.loss.validate("bottleneck.loss")?;
        b.reverse_loss.validate("bottleneck.reverse_loss")
    }

    fn check_rtt(&self, rtt_ns: u64, at: &str) -> Result<(), String> {
        positive(rtt_ns, at)?;
        let floor = 2 * self.bottleneck.delay_ns;
        if rtt_ns < floor {
            return Err(format!(
                "{at} is {} ms, smaller than twice the bottleneck delay ({} ms one way); allowed: >= {} ms",
                rtt_ns as f64 / MS,
                self.bottleneck.delay_ns as f64 / MS,
                floor as f64 / MS
            ));
        }
        Ok(())
    }

    fn validate_flow_group(&self, g: &FlowGroup, at: &str) -> Result<(), String> {
        if !(1..=MAX_FLOWS).contains(&(g.count as u64)) {
            return Err(format!("{at}.count is {}; allowed: an integer in [1, {MAX_FLOWS}]", g.count));
        }
        self.check_rtt(g.rtt_ns, &format!("{at}.rtt"))?;
        if let Some(stop) = g.stop_ns {
            if stop <= g.start_ns {
                return Err(format!("{at}.stop must be after start"));
            }
        }
        if g.bytes == Some(0) {
            return Err(format!("{at}.bytes is 0; it must be > 0"));
        }
        if !(1..=64).contains(&g.ack_every) {
            return Err(format!("{at}.ack_every is {}; allowed: an integer in [1, 64]", g.ack_every));
        }
        positive(g.delack_timeout_ns, &format!("{at}.delack_timeout"))?;
        if !(1..=1 << 30).contains(&g.initial_cwnd) {
            return Err(format!("{at}.initial_cwnd is {}; allowed: an integer in [1, {}]", g.initial_cwnd, 1 << 30));
        }
        if let Some(s) = g.initial_ssthresh {
            if !(2..=1 << 30).contains(&s) {
                return Err(format!("{at}.initial_ssthresh is {s}; allowed: an integer in [2, {}]", 1 << 30));
            }
        }
        if g.rwnd_bytes == Some(0) {
            return Err(format!("{at}.rwnd is 0; it must be > 0"));
        }
        Ok(())
    }

    fn validate_web_group(&self, w: &WebGroup, at: &str) -> Result<(), String> {
        let ways = if w.direction == WebDirection::Both { 2 } else { 1 };
        if w.sessions < ways {
            return Err(format!("{at}.sessions is {}; allowed: at least {ways} for this direction", w.sessions));
        }
        if !(w.shape > 1.0 && w.shape.is_finite()) {
            return Err(format!("{at}.shape is {}; allowed: > 1 (at or below 1 the Pareto mean is infinite)", w.shape));
        }
        if !(w.max_size_ratio > 1.0 && w.max_size_ratio.is_finite()) {
            return Err(format!("{at}.max_size is {}; allowed: > 1 (a multiple of the mean size)", w.max_size_ratio));
        }
        positive(w.mean_size_bytes, &format!("{at}.mean_size"))?;
        positive(w.think_mean_ns, &format!("{at}.think"))?;
        match w.rtt {
            RttDist::Fixed(r) => self.check_rtt(r, &format!("{at}.rtt")),
            RttDist::Exp(m) => positive(m, &format!("{at}.rtt")),
        }
    }
}
