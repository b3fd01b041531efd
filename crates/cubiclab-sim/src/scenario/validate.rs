//! Every range check of a scenario, in one place, before anything runs. A message names the
//! key path as the scenario file spells it (`flows[0].rtt`) and what is allowed.

use cubiclab_cc::{Algorithm, CongestionControl, Params, ALGORITHMS};

use super::{CwndRecording, DuplexLink, FlowGroup, RttDist, Scenario, WebDirection, WebGroup, ACK_BYTES, MAX_HOPS};
use crate::loss::LossSpec;
use crate::packet::Packet;
use crate::queue::{Fifo, FqCoDel, Limit, QueueDiscipline};
use crate::record::Results;
use crate::sim::FLOW_STATE_BYTES;

const MS: f64 = 1e6;
const GIB: f64 = (1u64 << 30) as f64;

/// At most this many flows or web sessions in one run.
pub const MAX_FLOWS: u64 = 100_000;

/// The longest time any key may give, ns (2^60 ns, about 36.5 years): the simulator adds a
/// handful of times (now, delays, timeouts), and that many sums of 2^60 stay inside u64.
pub const MAX_TIME_NS: u64 = 1 << 60;

/// Memory a run may ask for before it starts: windows, buffers and recorded samples (4 GiB).
pub const MEMORY_BUDGET_BYTES: u64 = 4 << 30;

/// Bytes the sender's scoreboard keeps per segment of its window: flags, send time and
/// delivery-rate stamp, in a ring that grows by doubling (so up to twice that).
pub(super) const SEGMENT_BYTES: u64 = 2 * (1 + 8 + std::mem::size_of::<cubiclab_cc::host::rate::TxStamp>() as u64);

/// Bytes a queued packet takes in a buffer that grows by doubling.
const QUEUED_PACKET_BYTES: u64 = 2 * Fifo::<Packet>::ENTRY_BYTES as u64;

/// Bytes of one recorded value (every column is at most 8 bytes wide, in the simulator and
/// in the Python frames built from its columns).
const VALUE_BYTES: u64 = 8;

/// Bytes of one recorded text value (a `cc_state` variable's name, a web object's group):
/// a String and its allocation in the simulator (24 + 32), then a list entry and a str
/// object in Python (8 + 64).
const TEXT_BYTES: u64 = 24 + 32 + 8 + 64;

/// Columns of the results table `table`.
fn columns(table: &str) -> u64 {
    Results::schema().into_iter().find(|(t, _)| *t == table).map_or(0, |(_, cols)| cols.len() as u64)
}

/// Memory one part of a run holds: the key that sets its size, its bytes, how they add up,
/// and the keys or options that make it smaller.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryNeed {
    pub key: String,
    pub bytes: u64,
    pub what: String,
    pub remedy: String,
}

/// An unknown name is the group's `algorithm` key's fault; any other refusal its `params`'.
fn check_algorithm(name: &str, params: &Params, at: &str) -> Result<(), String> {
    let key = if ALGORITHMS.iter().any(|a| a.name == name) { "params" } else { "algorithm" };
    Algorithm::new(name, params).map(drop).map_err(|e| format!("{at}.{key}: {}", e.0))
}

/// `ecn = false` for an algorithm that needs ECN (`TCP_CONG_NEEDS_ECN`): Linux negotiates
/// it whatever `tcp_ecn` says, so the setting would not hold.
fn check_ecn(g: &FlowGroup, at: &str) -> Result<(), String> {
    let needs = Algorithm::new(&g.algorithm, &g.cc_params()).is_ok_and(|a| a.needs_ecn());
    if needs && g.ecn == Some(false) {
        return Err(format!(
            "{at}.ecn is false, but {} needs ECN (Linux negotiates it whatever tcp_ecn says); allowed: true, or leave it out",
            g.algorithm
        ));
    }
    Ok(())
}

fn positive(value: u64, at: &str) -> Result<(), String> {
    if value == 0 {
        return Err(format!("{at} is 0; it must be > 0"));
    }
    Ok(())
}

impl Scenario {
    /// Check everything before a run; the message names the key and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_path_and_flows()?;
        for (i, g) in self.flows.iter().enumerate() {
            check_algorithm(&g.algorithm, &g.cc_params(), &format!("flows[{i}]"))?;
            check_ecn(g, &format!("flows[{i}]"))?;
        }
        for (i, w) in self.web.iter().enumerate() {
            check_algorithm(&w.algorithm, &w.cc_params(), &format!("web[{i}]"))?;
        }
        Ok(())
    }

    /// `tcp_rmem`: min <= default <= max (`proc_dointvec`'s range), and a default buffer
    /// whose first window (half of it) holds two segments, so a receiver can start.
    fn validate_tcp_rmem(&self) -> Result<(), String> {
        let [min, default, max] = self.tcp_rmem;
        let least = 4 * self.mss as u64;
        if !(1 <= min && min <= default && default <= max && max <= i32::MAX as u64) || default < least {
            return Err(format!(
                "tcp_rmem is {min} {default} {max}; allowed: three sizes min <= default <= max, \
                 at most 2147483647 bytes, with default at least 4 x mss = {least} bytes"
            ));
        }
        Ok(())
    }

    /// Every check but the algorithm names and parameters: for the testbed, whose
    /// algorithms are the kernel's (it checks them against the kernel instead).
    pub fn validate_path_and_flows(&self) -> Result<(), String> {
        if self.links.is_empty() || self.bottleneck.is_some() {
            // `parse_json` moves the shorthand into `links`; built in Rust, fill `links`.
            return Err("links: a scenario needs a path: [bottleneck] or at least one [[links]]".into());
        }
        if !(1..=65_000).contains(&self.mss) {
            return Err(format!("mss is {}; allowed: an integer in [1, 65000] bytes", self.mss));
        }
        if self.seed > i64::MAX as u64 {
            return Err(format!("seed is {}; allowed: an integer in [0, {}]", self.seed, i64::MAX));
        }
        positive(self.duration_ns, "duration")?;
        positive(self.record.interval_ns, "record.interval")?;
        self.validate_tcp_rmem()?;
        if self.record.pcap.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return Err("record.pcap is empty; allowed: a file path (e.g. \"run.pcap\")".into());
        }
        self.validate_times()?;
        self.validate_links()?;
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
        if let Some(sel) = &self.record.pcap_flows {
            self.validate_pcap_flows(sel)?;
        }
        if let Some(name) = &self.record.pcap_link {
            self.validate_pcap_link(name)?;
        }
        if total > MAX_FLOWS {
            return Err(format!("flows and web sessions number {total} in all; allowed: at most {MAX_FLOWS}"));
        }
        self.check_memory(Vec::new())
    }

    /// Every time within [`MAX_TIME_NS`], and the last start of each group too, so that the
    /// simulator's sums of times cannot overflow.
    fn validate_times(&self) -> Result<(), String> {
        let mut times = vec![
            ("duration".to_string(), self.duration_ns),
            ("start_jitter".to_string(), self.start_jitter_ns),
            ("min_rto".to_string(), self.min_rto_ns),
            ("record.interval".to_string(), self.record.interval_ns),
        ];
        for (k, l) in self.links.iter().enumerate() {
            let at = self.link_key(k);
            times.push((format!("{at}.delay"), l.delay_ns));
            times.extend(l.settings.times(&at));
        }
        for (i, g) in self.flows.iter().enumerate() {
            let last_start = (g.count.saturating_sub(1) as u64)
                .checked_mul(g.start_spacing_ns)
                .and_then(|t| t.checked_add(g.start_ns))
                .and_then(|t| t.checked_add(self.start_jitter_ns))
                .unwrap_or(u64::MAX);
            times.extend([
                (format!("flows[{i}].rtt"), g.rtt_ns),
                (format!("flows[{i}].start"), g.start_ns),
                (format!("flows[{i}].start_spacing (the group's last start, with start_jitter)"), last_start),
                (format!("flows[{i}].stop"), g.stop_ns.unwrap_or(0)),
                (format!("flows[{i}].delack_timeout"), g.delack_timeout_ns),
            ]);
        }
        for (i, w) in self.web.iter().enumerate() {
            let (RttDist::Fixed(rtt) | RttDist::Exp(rtt)) = w.rtt;
            times.extend([(format!("web[{i}].think"), w.think_mean_ns), (format!("web[{i}].rtt"), rtt)]);
        }
        match times.into_iter().find(|(_, t)| *t > MAX_TIME_NS) {
            Some((at, t)) => Err(format!(
                "{at} is {t} ns; allowed: at most {MAX_TIME_NS} ns (about {:.1} years)",
                MAX_TIME_NS as f64 / 1e9 / 86_400.0 / 365.25
            )),
            None => Ok(()),
        }
    }

    /// What the run will hold for windows, buffers and samples (the samples twice: as the
    /// core's columns and as the Python frames built from them), each with the key that sets
    /// it and the way to ask for less.
    pub fn memory_needs(&self) -> Vec<MemoryNeed> {
        let mut needs = Vec::new();
        for (i, g) in self.flows.iter().enumerate() {
            needs.push(MemoryNeed {
                key: format!("flows[{i}].initial_cwnd"),
                bytes: g.count as u64 * (g.initial_cwnd as u64 * SEGMENT_BYTES + FLOW_STATE_BYTES as u64),
                what: format!(
                    "{} flows x ({} segments x {SEGMENT_BYTES} bytes of window state + {FLOW_STATE_BYTES} bytes of flow state)",
                    g.count, g.initial_cwnd
                ),
                remedy: format!("a smaller flows[{i}].initial_cwnd or flows[{i}].count"),
            });
        }
        for (k, b) in self.links.iter().enumerate() {
            let at = self.link_key(k);
            for (name, limit, smallest) in
                [("buffer", b.buffer, self.wire_bytes() as u64), ("reverse_buffer", b.reverse_buffer, ACK_BYTES as u64)]
            {
                let packets = match limit {
                    Limit::Packets(n) => n as u64,
                    Limit::Bytes(n) => n / smallest,
                };
                needs.push(MemoryNeed {
                    key: format!("{at}.{name}"),
                    bytes: packets.saturating_mul(QUEUED_PACKET_BYTES),
                    what: format!("{packets} packets x {QUEUED_PACKET_BYTES} bytes when full"),
                    remedy: format!("a smaller {at}.{name}"),
                });
            }
        }
        for (k, b) in self.links.iter().enumerate() {
            let at = self.link_key(k);
            if b.queue == QueueDiscipline::FqCoDel {
                let (buckets, bytes) = (b.settings.fq_codel.flows as u64, FqCoDel::<Packet>::BUCKET_BYTES as u64);
                needs.push(MemoryNeed {
                    key: format!("{at}.fq_codel.flows"),
                    bytes: 2 * buckets * bytes,
                    what: format!("2 directions x {buckets} buckets x {bytes} bytes"),
                    remedy: format!("fewer {at}.fq_codel.flows"),
                });
            }
            if let Some(s) = b.schedule.as_ref().and_then(|s| s.rate_schedule(&at).ok()) {
                needs.push(MemoryNeed {
                    key: format!("{at}.schedule"),
                    bytes: s.heap_bytes(),
                    what: "the schedule's tables (a trace's runs of equal opportunities per ms)".into(),
                    remedy: format!("a shorter or steadier {at}.schedule"),
                });
            }
        }
        needs.extend(self.event_table_needs());
        let samples = self.duration_ns / self.record.interval_ns + 1;
        let row_bytes = self.sample_row_values() * 2 * VALUE_BYTES;
        let (flows, links) = (self.flow_rows_per_sample(), self.links.len());
        needs.push(MemoryNeed {
            key: "record.interval".to_string(),
            bytes: samples.saturating_mul(row_bytes),
            what: format!("{samples} samples x {row_bytes} bytes ({flows} flows and {links} links, in the simulator and in Python)"),
            remedy: "a larger record.interval, fewer flows or a shorter duration".to_string(),
        });
        // After the web groups' objects, which share the key.
        for (i, w) in self.web.iter().enumerate() {
            needs.push(MemoryNeed {
                key: format!("web[{i}].sessions"),
                bytes: w.sessions as u64 * FLOW_STATE_BYTES as u64,
                what: format!("{} sessions x {FLOW_STATE_BYTES} bytes of flow state", w.sessions),
                remedy: format!("fewer web[{i}].sessions"),
            });
        }
        needs
    }

    /// The tables whose rows follow the traffic, at their most: a row per ACK or less
    /// (`cwnd` changes, `rtt` samples, web objects), bounded by the data segments the links
    /// can carry in the run; the `cc_state` variables per sample.
    fn event_table_needs(&self) -> Vec<MemoryNeed> {
        let row = |table: &str| columns(table) * 2 * VALUE_BYTES;
        let duration_s = self.duration_ns as f64 / 1e9;
        // Every link direction at its highest rate (a schedule's peak forward), all in data
        // segments: each ACK answers at least one of them.
        let bits: f64 = self
            .links
            .iter()
            .map(|l| {
                let forward =
                    l.schedule.as_ref().and_then(|s| s.rate_schedule("").ok()).map_or(l.rate_bps, |s| s.peak_bps());
                (forward + l.rate_bps) as f64 * duration_s
            })
            .sum();
        let segments = (bits / (8.0 * self.wire_bytes() as f64)).ceil() as u64;
        let flows = self.flow_rows_per_sample();
        let mut needs = Vec::new();
        let mut add = |key: &str, rows: u64, bytes: u64, what: String, remedy: &str| {
            needs.push(MemoryNeed {
                key: key.into(),
                bytes: rows.saturating_mul(bytes),
                what: format!("{rows} rows x {bytes} bytes at most: {what}"),
                remedy: remedy.into(),
            })
        };
        if self.record.cwnd == CwndRecording::Changes {
            // A row is written after each transmit call if cwnd or ssthresh moved, and a
            // transmit follows each event once: an ACK's arrival (at most one per segment),
            // the retransmission timer, a pacing timer or a flow's start. Only an ACK or the
            // timer changes the pair in an event, but for the two rules a send applies: the
            // restart after an idle longer than the RTO (`tcp_cwnd_restart`) and the
            // application-limited reduction (`tcp_cwnd_application_limited`, once per RTO
            // since `snd_cwnd_stamp`). Each of the three fires at most once per min_rto.
            let per_rto = flows * (self.duration_ns / self.min_rto_ns.max(1) + 1);
            add(
                "record.cwnd",
                segments + 3 * per_rto,
                row("cwnd"),
                format!(
                    "a change per ACK of the {segments} segments the links carry in {duration_s} s, and per flow a timeout, \
                     an idle restart and an application-limited reduction per min_rto"
                ),
                "record.cwnd = \"interval\", a shorter duration or slower links",
            );
        }
        if self.record.rtt_samples {
            add(
                "record.rtt_samples",
                segments,
                row("rtt"),
                format!("a sample per ACK of the {segments} segments the links carry in {duration_s} s"),
                "record.rtt_samples = false, a shorter duration or slower links",
            );
        }
        for (i, w) in self.web.iter().enumerate() {
            // Objects a session starts: one per think time on average; twice that bounds
            // the exponential draws' count over any but the shortest runs. Each takes at
            // least a segment.
            let per_session = 2 * (self.duration_ns / w.think_mean_ns.max(1) + 1);
            let objects = (w.sessions as u64).saturating_mul(per_session).min(segments);
            add(
                &format!("web[{i}].sessions"),
                objects,
                row("web") + TEXT_BYTES,
                format!(
                    "{} sessions x {per_session} objects (twice the duration / think), or a segment each",
                    w.sessions
                ),
                &format!("fewer web[{i}].sessions, a longer web[{i}].think or a shorter duration"),
            );
        }
        if self.record.cc_state {
            let samples = self.duration_ns / self.record.interval_ns + 1;
            let vars: u64 = self
                .flows
                .iter()
                .map(|g| {
                    let mut n = 0u64;
                    if let Ok(a) = Algorithm::new(&g.algorithm, &g.cc_params()) {
                        a.vars(&mut |_, _| n += 1);
                    }
                    g.count as u64 * n
                })
                .sum();
            add(
                "record.cc_state",
                samples.saturating_mul(vars),
                columns("cc_state") * 2 * VALUE_BYTES + TEXT_BYTES,
                format!("{samples} samples x {vars} variables of the flows' algorithms"),
                "record.cc_state = false, a larger record.interval or fewer flows",
            );
        }
        needs
    }

    /// Rows the `flows` table gains per sample: one per long-lived flow.
    pub fn flow_rows_per_sample(&self) -> u64 {
        self.flows.iter().map(|g| g.count as u64).sum()
    }

    /// Values recorded per sample: every column of a flow's and a link's row.
    fn sample_row_values(&self) -> u64 {
        self.flow_rows_per_sample() * columns("flows") + self.links.len() as u64 * columns("link")
    }

    /// [`Self::memory_needs`] and `more` (what the caller adds: the plots) against
    /// [`MEMORY_BUDGET_BYTES`]; the message names the key that asks for most (of `more` when
    /// the run alone fits) and the way to ask for less.
    pub fn check_memory(&self, more: Vec<MemoryNeed>) -> Result<(), String> {
        let sum = |needs: &[MemoryNeed]| needs.iter().fold(0u64, |sum, n| sum.saturating_add(n.bytes));
        let run = self.memory_needs();
        let total = sum(&run).saturating_add(sum(&more));
        if total <= MEMORY_BUDGET_BYTES {
            return Ok(());
        }
        let culprits = if sum(&run) <= MEMORY_BUDGET_BYTES { more } else { run };
        let most = culprits.into_iter().max_by_key(|n| n.bytes).expect("a need over the budget");
        Err(format!(
            "{} asks for {:.1} GiB ({}); the run would need {:.1} GiB in all; allowed: at most {:.0} GiB; ask for less with {}",
            most.key,
            most.bytes as f64 / GIB,
            most.what,
            total as f64 / GIB,
            MEMORY_BUDGET_BYTES as f64 / GIB,
            most.remedy
        ))
    }

    /// Every link: its name (in `[[links]]`, each once) and its own checks.
    fn validate_links(&self) -> Result<(), String> {
        for (k, l) in self.links.iter().enumerate() {
            let at = self.link_key(k);
            if !self.from_shorthand {
                match l.name.as_deref().map(str::trim) {
                    None | Some("") => {
                        return Err(format!("{at}.name is missing; every [[links]] entry needs a name its routes use"))
                    }
                    Some(n) if self.links[..k].iter().any(|o| o.name() == n) => {
                        return Err(format!("{at}.name \"{n}\" is taken by an earlier link; allowed: a name used once"))
                    }
                    _ => {}
                }
            }
            self.validate_link(l, &at)?;
        }
        Ok(())
    }

    fn validate_link(&self, b: &DuplexLink, at: &str) -> Result<(), String> {
        positive(b.rate_bps, &format!("{at}.rate"))?;
        if let Some(s) = &b.schedule {
            s.rate_schedule(&format!("{at}.schedule"))?;
        }
        for (key, limit) in [("buffer", b.buffer), ("reverse_buffer", b.reverse_buffer)] {
            let name = format!("{at}.{key}");
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
        if let Some(key) = b.unknown.keys().next() {
            // The known keys are what a link serialises to (the unknown ones are skipped).
            let known = match serde_json::to_value(b) {
                // `[bottleneck]` has no name of its own.
                Ok(serde_json::Value::Object(m)) => {
                    m.keys().filter(|k| !(self.from_shorthand && *k == "name")).cloned().collect::<Vec<_>>()
                }
                _ => unreachable!("a link serialises to a JSON object"),
            };
            return Err(format!("{at}.{key}: unknown key; allowed: {}", known.join(", ")));
        }
        b.settings.validate(at)?;
        b.loss.validate(&format!("{at}.loss"))?;
        b.reverse_loss.validate(&format!("{at}.reverse_loss"))?;
        // A Poisson loss event takes the next packet to leave; more events per second than
        // the link can send packets (of ACK size, the smallest) lose every packet and only
        // cost time: each packet would walk through the events that fell since the last.
        let packets_per_s = b.rate_bps as f64 / (8.0 * ACK_BYTES as f64);
        for (key, spec) in [("loss", &b.loss), ("reverse_loss", &b.reverse_loss)] {
            if let LossSpec::Poisson { rate_per_s } = *spec {
                if rate_per_s > packets_per_s {
                    return Err(format!(
                        "{at}.{key}.rate is {rate_per_s} events per second; allowed: at most {packets_per_s:.0}, the \
                         packets per second the link can send ({ACK_BYTES}-byte packets at its rate)"
                    ));
                }
            }
        }
        Ok(())
    }

    /// A route (`at`, absent or a list of link names): each name a link's, none twice, at
    /// most [`MAX_HOPS`]; absent only on a path of one link. Returns the links by index.
    fn check_route(&self, route: Option<&[String]>, at: &str) -> Result<Vec<usize>, String> {
        let names = || self.links.iter().map(|l| format!("\"{}\"", l.name())).collect::<Vec<_>>().join(", ");
        let Some(route) = route else {
            if self.links.len() > 1 {
                return Err(format!(
                    "{at} is missing; a path of {} links needs each group's route, a list of link names \
                     from: {}",
                    self.links.len(),
                    names()
                ));
            }
            return Ok(vec![0]);
        };
        if route.is_empty() || route.len() > MAX_HOPS {
            return Err(format!("{at} has {} links; allowed: 1 to {MAX_HOPS} link names", route.len()));
        }
        for (i, n) in route.iter().enumerate() {
            if !self.links.iter().any(|l| l.name() == n) {
                return Err(format!("{at}[{i}] is \"{n}\", not a link; allowed: {}", names()));
            }
            if route[..i].contains(n) {
                return Err(format!("{at}[{i}] repeats link \"{n}\"; allowed: each link once"));
            }
        }
        Ok(self.route_links(Some(route)))
    }

    /// A two-way delay of at least what its data's and its ACKs' links take.
    fn check_rtt(&self, rtt_ns: u64, data: &[usize], acks: &[usize], at: &str) -> Result<(), String> {
        positive(rtt_ns, at)?;
        let (there, back) = (self.route_delay_ns(data), self.route_delay_ns(acks));
        let floor = there + back;
        if rtt_ns < floor {
            let links = if self.from_shorthand { "the bottleneck's" } else { "its links'" };
            return Err(format!(
                "{at} is {} ms, smaller than {links} delays ({} ms one way, {} ms back); allowed: >= {} ms",
                rtt_ns as f64 / MS,
                there as f64 / MS,
                back as f64 / MS,
                floor as f64 / MS
            ));
        }
        Ok(())
    }

    /// `record.pcap_link`: a link's name, with a capture to make of it.
    fn validate_pcap_link(&self, name: &str) -> Result<(), String> {
        if self.record.pcap.is_none() {
            return Err("record.pcap_link is set without record.pcap; allowed: only with a capture file".into());
        }
        if self.links.iter().any(|l| l.name() == name) {
            return Ok(());
        }
        let names: Vec<String> = self.links.iter().map(|l| format!("\"{}\"", l.name())).collect();
        Err(format!("record.pcap_link is \"{name}\", not a link; allowed: {}", names.join(", ")))
    }

    /// The link `record.pcap_link` names (the scenario is valid), else the first.
    pub fn pcap_link(&self) -> usize {
        self.record.pcap_link.as_deref().map_or(0, |n| self.route_links(Some(&[n.to_string()]))[0])
    }

    /// `record.pcap_flows`: long-lived flow indices, each once, with a capture to select from.
    fn validate_pcap_flows(&self, sel: &[u32]) -> Result<(), String> {
        if self.record.pcap.is_none() {
            return Err("record.pcap_flows is set without record.pcap; allowed: only with a capture file".into());
        }
        let n: u64 = self.flows.iter().map(|g| g.count as u64).sum();
        if sel.is_empty() {
            return Err("record.pcap_flows is empty; allowed: long-lived flow indices (omit it to capture all)".into());
        }
        for (i, &f) in sel.iter().enumerate() {
            if f as u64 >= n {
                return Err(format!(
                    "record.pcap_flows[{i}] is {f}; allowed: a long-lived flow index in [0, {}]",
                    n.saturating_sub(1)
                ));
            }
            if sel[..i].contains(&f) {
                return Err(format!("record.pcap_flows[{i}] repeats flow {f}; allowed: each flow once"));
            }
        }
        Ok(())
    }

    fn validate_flow_group(&self, g: &FlowGroup, at: &str) -> Result<(), String> {
        if !(1..=MAX_FLOWS).contains(&(g.count as u64)) {
            return Err(format!("{at}.count is {}; allowed: an integer in [1, {MAX_FLOWS}]", g.count));
        }
        self.check_route(g.route.as_deref(), &format!("{at}.route"))?;
        if let Some(r) = &g.ack_route {
            self.check_route(Some(r), &format!("{at}.ack_route"))?;
        }
        let (data, acks) = self.flow_links(g);
        self.check_rtt(g.rtt_ns, &data, &acks, &format!("{at}.rtt"))?;
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
        if let Some(super::Rwnd::Bytes(b)) = g.rwnd {
            // The largest window TCP can advertise: 65535 << 14 (RFC 7323's scale limit).
            if !(1..=65_535 << 14).contains(&b) {
                return Err(format!(
                    "{at}.rwnd is {b} bytes; allowed: \"autotune\" or a size in [1, 1073725440] bytes"
                ));
            }
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
        let route = self.check_route(w.route.as_deref(), &format!("{at}.route"))?;
        match w.rtt {
            RttDist::Fixed(r) => self.check_rtt(r, &route, &route, &format!("{at}.rtt")),
            RttDist::Exp(m) => {
                positive(m, &format!("{at}.rtt"))?;
                // Draws below the path's round trip are raised to it: with the mean under
                // floor / ln(100), fewer than 1% of the sessions (e^(-floor/mean)) would keep
                // their own RTT and the group would silently be one of fixed RTT.
                let floor = self.exp_rtt_floor_ns(&route);
                let least_mean = floor as f64 / 100f64.ln();
                if (m as f64) < least_mean {
                    return Err(format!(
                        "{at}.rtt is exp:{} ms, but its links' delays raise every RTT to at least {} ms, so fewer than 1% \
                         of the sessions would keep their draw; allowed: a mean >= {:.0} ms (floor / ln 100), or a fixed rtt",
                        m as f64 / MS,
                        floor as f64 / MS,
                        (least_mean / MS).ceil()
                    ));
                }
                Ok(())
            }
        }
    }
}
