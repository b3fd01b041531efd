//! CoDel (RFC 8289): drop at dequeue when the sojourn time has stayed above `target` for at
//! least `interval`, then at intervals shrinking as interval / sqrt(count).

use std::collections::VecDeque;

use super::Limit;
use crate::{PathPacket, Time};

/// CoDel's settings. Defaults: RFC 8289's 5 ms target and 100 ms interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CoDelSpec {
    /// Acceptable standing queue delay, ns (file: "5ms").
    #[serde(rename = "target")]
    pub target_ns: u64,
    /// Time the delay must stay above target before dropping, ns (file: "100ms").
    #[serde(rename = "interval")]
    pub interval_ns: u64,
}

impl Default for CoDelSpec {
    fn default() -> Self {
        Self { target_ns: 5_000_000, interval_ns: 100_000_000 }
    }
}

impl CoDelSpec {
    /// Check the settings; `field` is the key path in messages.
    pub fn validate(&self, field: &str) -> Result<(), String> {
        for (key, value) in [("target", self.target_ns), ("interval", self.interval_ns)] {
            if value == 0 {
                return Err(format!("{field}.{key} is 0; it must be > 0"));
            }
        }
        Ok(())
    }
}

pub struct CoDel<P> {
    spec: CoDelSpec,
    limit: Limit,
    fifo: VecDeque<(Time, P)>,
    bytes: u64,
    mtu: u64,
    first_above_time: Time,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// Packets dropped at dequeue since the caller last drained them.
    pub dropped: Vec<P>,
    /// Sojourn time of the last packet dequeued, ns.
    pub last_sojourn: Time,
}

impl<P: PathPacket> CoDel<P> {
    pub fn new(spec: CoDelSpec, limit: Limit, mtu: u32) -> Self {
        Self {
            spec,
            limit,
            fifo: VecDeque::new(),
            bytes: 0,
            mtu: mtu as u64,
            first_above_time: 0,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            dropped: Vec::new(),
            last_sojourn: 0,
        }
    }

    pub fn enqueue(&mut self, now: Time, p: P) -> bool {
        if self.limit.full(self.fifo.len(), self.bytes, p.wire_bytes()) {
            return false;
        }
        self.bytes += p.wire_bytes() as u64;
        self.fifo.push_back((now, p));
        true
    }

    fn control_law(&self, t: Time) -> Time {
        t + (self.spec.interval_ns as f64 / (self.count.max(1) as f64).sqrt()) as Time
    }

    /// RFC 8289 `dodequeue`: the head packet and whether it may be dropped.
    fn dodequeue(&mut self, now: Time) -> Option<(P, bool)> {
        let (enq, p) = self.fifo.pop_front()?;
        self.bytes -= p.wire_bytes() as u64;
        let sojourn = now - enq;
        self.last_sojourn = sojourn;
        let ok = if sojourn < self.spec.target_ns || self.bytes <= self.mtu {
            self.first_above_time = 0;
            false
        } else if self.first_above_time == 0 {
            self.first_above_time = now + self.spec.interval_ns;
            false
        } else {
            now >= self.first_above_time
        };
        Some((p, ok))
    }

    pub fn dequeue(&mut self, now: Time) -> Option<P> {
        let Some((mut p, mut ok)) = self.dodequeue(now) else {
            self.first_above_time = 0;
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.dropped.push(p);
                self.count += 1;
                match self.dodequeue(now) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((q, o)) => {
                        p = q;
                        ok = o;
                    }
                }
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if ok {
            self.dropped.push(p);
            let next = self.dodequeue(now);
            self.dropping = true;
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count =
                if delta > 1 && now.saturating_sub(self.drop_next) < 16 * self.spec.interval_ns { delta } else { 1 };
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
            return next.map(|(q, _)| q);
        }
        Some(p)
    }

    pub fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    pub fn iter(&self) -> impl Iterator<Item = &P> {
        self.fifo.iter().map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::pkt;

    #[test]
    fn a_standing_queue_starts_drops_after_an_interval_and_sojourn_falls() {
        // Arrivals at 1.05x the service rate build a standing queue. CoDel must not drop
        // during the first `interval` above target, must drop after it, and the drops
        // (interval / sqrt(count) apart) must pull the sojourn time back toward the target:
        // removing the 5% excess (41.7 of 833 packets/s) needs sqrt(count) / interval >= 41.7,
        // count ~ 17, reached within about 2 interval sqrt(17) ~ 0.8 s.
        let spec = CoDelSpec { target_ns: 5_000_000, interval_ns: 100_000_000 };
        let mut q = CoDel::new(spec, Limit::Packets(10_000), 1500);
        let service = 1_200_000u64; // 1500 B at 10 Mbps
        let arrival = 1_142_857u64;
        let p = pkt(1500);
        let (mut t_arr, mut t_srv) = (0u64, 0u64);
        let mut first_drop = None;
        let mut late_sojourns = Vec::new();
        while t_srv < 20_000_000_000 {
            if t_arr <= t_srv {
                q.enqueue(t_arr, p);
                t_arr += arrival;
            } else {
                q.dequeue(t_srv);
                if !q.dropped.is_empty() && first_drop.is_none() {
                    first_drop = Some((t_srv, q.last_sojourn));
                }
                q.dropped.clear();
                if t_srv > 15_000_000_000 {
                    late_sojourns.push(q.last_sojourn);
                }
                t_srv += service;
            }
        }
        // The sojourn passes 5 ms after ~5 ms / (1 - 1/1.05) = 105 ms; the first drop comes
        // one interval (100 ms) after that, not before.
        let (t, _) = first_drop.expect("CoDel never dropped");
        assert!((200_000_000..320_000_000).contains(&t), "first drop at {t}");
        let mean = late_sojourns.iter().sum::<u64>() as f64 / late_sojourns.len() as f64;
        assert!(mean < 3.0 * spec.target_ns as f64, "late mean sojourn {:.1} ms", mean / 1e6);
    }
}
