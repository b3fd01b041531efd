//! The scenario schema: the one definition of what a run is, in integer units (bits/s, ns,
//! bytes). A path is a list of duplex links (`[[links]]`, each with a name); each flow group
//! names the links its data crosses in order (`route`), and its ACKs cross their reverse
//! directions back (or `ack_route`). `[bottleneck]` is the shorthand for one link that every
//! flow crosses: the dumbbell of seed 000 Fig. 7 / seed 001 Fig. 7. Each flow's own two-way
//! propagation RTT comes from its links plus its access links.
//!
//! Keys are the scenario file's keys (`bottleneck.rate`, `flows[0].rtt`); values are already
//! in base units: the Python edge (`cubiclab.scenario`) parses `"400Mbps"`, `"40ms"`,
//! `"100%BDP"` and solves web loads, then hands this schema plain numbers as JSON. Rust
//! fields carry their unit in their name (`rate_bps`), the file key does not (`rate`).
//! [`Scenario::from_json`] parses and validates in one step; every error names the key path.
//! [`Scenario::plan`] turns flow groups into flows (names, delays, start times).

mod plan;
mod validate;

use std::collections::BTreeMap;

use cubiclab_cc::Params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use plan::{
    rcvbuf_for_window, Direction, Plan, PlannedFlow, PlannedHop, PlannedSession, SessionDraws, WebLane, MAX_HOPS,
};
pub(crate) use plan::{STREAM_ALGORITHM, STREAM_HOST};
pub use validate::{MemoryNeed, MAX_FLOWS, MAX_TIME_NS, MEMORY_BUDGET_BYTES};

use crate::loss::LossSpec;
use crate::queue::{Limit, QueueDiscipline, QueueSettings};
use crate::tcp::Recovery;
use cubiclab_path::{LinkSpec, RateSchedule, ScheduleSpec};

/// IPv4 + TCP + timestamp option: a segment of `mss` payload bytes is `mss + 52` on the wire
/// (1448 + 52 = 1500).
pub const HEADER_BYTES: u32 = 52;
/// Bytes of a pure ACK without SACK blocks on the wire: the same IPv4 + TCP + timestamp
/// option as data, no payload (the smallest packet a run sends). Its SACK option adds
/// [`crate::packet::sack_option_bytes`].
pub const ACK_BYTES: u32 = HEADER_BYTES;

/// A whole run: the bottleneck, the long-lived flow groups, background web sessions and
/// what to record.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seed of every random stream; the same scenario and seed give bit-identical results.
    pub seed: u64,
    /// Simulated time, ns (file: a time such as "60s").
    #[serde(rename = "duration")]
    pub duration_ns: u64,
    /// Payload bytes per segment; packets are mss + 52 bytes on the wire.
    pub mss: u32,
    /// Each flow starts at its start time plus a uniform draw in [0, start_jitter), ns.
    #[serde(rename = "start_jitter")]
    pub start_jitter_ns: u64,
    /// Lower bound of the retransmission timeout, ns (Linux: 200 ms).
    #[serde(rename = "min_rto")]
    pub min_rto_ns: u64,
    /// The receivers' `net.ipv4.tcp_rmem` (min, default, max bytes): where an autotuned
    /// receive buffer starts (default) and how far it may grow (max). Linux 6.18:
    /// 4096 131072 33554432.
    #[serde(default = "default_tcp_rmem")]
    pub tcp_rmem: [u64; 3],
    /// The shorthand for one link named "bottleneck" that every flow crosses (file:
    /// `[bottleneck]`). [`Scenario::parse_json`] moves it into `links`: a parsed scenario
    /// holds its path in `links` alone, so nothing downstream knows the shorthand.
    #[serde(default, skip_serializing)]
    pub bottleneck: Option<DuplexLink>,
    /// The path's links, both ways (file: `[[links]]`, each with a `name`).
    #[serde(default)]
    pub links: Vec<DuplexLink>,
    /// Whether the file gave its path as `[bottleneck]` (its messages then say so).
    #[serde(skip)]
    #[schemars(skip)]
    pub from_shorthand: bool,
    /// Long-lived flow groups.
    #[serde(default)]
    pub flows: Vec<FlowGroup>,
    /// Background web session groups.
    #[serde(default)]
    pub web: Vec<WebGroup>,
    /// The hosts' timing (file: `[host]`).
    #[serde(default)]
    pub host: Host,
    pub record: Record,
}

/// The end hosts' own timing: how long after a packet reaches its host the host's TCP
/// handles it (file: `[host]`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// "off": a host handles each packet the instant it arrives, and a run is one
    /// deterministic trajectory of its seed. "testbed": each packet that reaches its
    /// receiver (data) or its sender (ACKs) waits a delay drawn from the run's seed, from the
    /// distribution measured on this lab's kernel testbed, each side's delays shifted by an
    /// amount drawn once per run, as a kernel run's turnaround moves from run to run
    /// (`scripts/host_timing.py`; the model: `sim/host.rs`), its host's packets kept in
    /// order. Left out: off, but ensembles against the kernel (`cubiclab compare --runs`,
    /// the agreement matrix) turn it on.
    #[serde(default)]
    pub jitter: HostJitter,
    /// A receiving application's read threshold, bytes: it reads once this many wait in its
    /// socket (`SO_RCVLOWAT`, as the testbed's sink sets it); 0: a read at every segment. A
    /// receiver ACKs a full-sized PSH segment at once only at a read (`__tcp_cleanup_rbuf`),
    /// so this sets how often it does. Left out: 0, but ensembles against the kernel set
    /// the testbed sink's value.
    #[serde(default, rename = "read_lowat")]
    pub read_lowat_bytes: u64,
    /// Whether receivers compress SACKs as Linux 4.18+ does (`__tcp_ack_snd_check`): with
    /// data held out of order, the first three duplicate ACKs of one `rcv_nxt` go at once,
    /// later ones are held and sent as one when a timer of min(1 ms, RTT/20) + 100 us
    /// fires or 44 are held (`tcp_comp_sack_*` at their defaults). An algorithm that counts
    /// ACKs (Westwood+) then sees about one per two segments in recovery. Left out: off,
    /// as the 2.6 hosts of the seed papers, but ensembles against the kernel turn it on.
    #[serde(default)]
    pub sack_compression: bool,
}

/// The hosts' timing noise model (`[host] jitter`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HostJitter {
    #[default]
    Off,
    Testbed,
}

/// The name the `[bottleneck]` shorthand gives its one link.
pub const BOTTLENECK: &str = "bottleneck";

/// A link both ways: a forward direction (the data of routes that name it) and a reverse
/// one (their ACKs), each a buffer under the queue discipline in front of a transmitter.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct DuplexLink {
    /// What routes call it (required in `[[links]]`; the `[bottleneck]` shorthand's is
    /// "bottleneck").
    #[serde(default)]
    pub name: Option<String>,
    /// Link rate, bits/s (file: "400Mbps").
    #[serde(rename = "rate")]
    pub rate_bps: u64,
    /// One-way propagation delay, ns (file: "5ms"; default: a quarter of the smallest flow RTT).
    #[serde(rename = "delay")]
    pub delay_ns: u64,
    /// Forward buffer (file: "100%BDP" of the link's rate and the largest flow RTT,
    /// "500packets" or "2MB").
    pub buffer: Limit,
    /// Reverse buffer, where the ACKs queue.
    pub reverse_buffer: Limit,
    /// Queue discipline of both buffers.
    pub queue: QueueDiscipline,
    /// Every discipline's settings table (`red`, `codel`, `step`), checked even when off.
    #[serde(flatten)]
    pub settings: QueueSettings,
    /// Keys that are none of the above (serde cannot deny unknown keys beside a flattened
    /// table): `validate` refuses them, naming the key and what is allowed.
    #[serde(flatten, skip_serializing)]
    #[schemars(skip)]
    pub unknown: BTreeMap<String, serde_json::Value>,
    /// Random loss on the forward link.
    pub loss: LossSpec,
    /// Random loss on the reverse link.
    pub reverse_loss: LossSpec,
    /// The forward rate over time, replacing `rate` there (which still sets the reverse
    /// rate and the BDP of "%BDP" buffers).
    #[serde(default)]
    pub schedule: Option<Schedule>,
}

/// A forward rate that varies in time (file: `schedule = { steps = [["0s", "50Mbps"],
/// ["10s", "5Mbps"]], repeat = "20s" }` or `schedule = { trace = "cellular" }`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Schedule {
    /// Rate steps: [from ns, rate bits/s] pairs, the first from 0; with `repeat` (ns) the
    /// list repeats with that period, else the last rate holds. A rate of 0 is an outage.
    Steps {
        steps: Vec<(u64, u64)>,
        #[serde(default)]
        repeat: Option<u64>,
    },
    /// A Mahimahi trace file: one delivery opportunity of a 1500-byte packet per line, in
    /// ms from the start; it repeats with the period of its last line. `digest` is its
    /// opportunities' when the scenario was compiled (a file that changed since is refused).
    Trace { file: String, digest: String },
}

impl Schedule {
    /// The path's description of it (what the emulator is handed).
    pub fn spec(&self) -> ScheduleSpec {
        match self {
            Schedule::Steps { steps, repeat } => ScheduleSpec::Steps { steps: steps.clone(), repeat_ns: *repeat },
            Schedule::Trace { file, digest } => ScheduleSpec::Trace { file: file.clone(), digest: digest.clone() },
        }
    }

    /// The path's form of it, checked; `at` is the schedule's key path in messages.
    pub fn rate_schedule(&self, at: &str) -> Result<RateSchedule, String> {
        RateSchedule::new(&self.spec()).map_err(|e| format!("{at}: {e}"))
    }
}

/// A group of identical long-lived (or fixed-size) flows.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    /// Label in the results; default: the algorithm, or "algorithm#i" when two groups share it.
    pub name: Option<String>,
    /// A name from the algorithm registry (`cubiclab algorithms`).
    pub algorithm: String,
    /// Algorithm parameters by name (see the registry for names and ranges).
    #[serde(default)]
    pub params: BTreeMap<String, ParamValue>,
    /// Number of flows in the group.
    pub count: u32,
    /// Two-way propagation delay of each flow, ns: its links' delays both ways plus its
    /// access delay.
    #[serde(rename = "rtt")]
    pub rtt_ns: u64,
    /// The links its data crosses, in order, by name (default: the one link of a path that
    /// has one).
    #[serde(default)]
    pub route: Option<Vec<String>>,
    /// The links its ACKs cross, in the order they cross them, the other way from its data
    /// (default: the data's links backwards).
    #[serde(default)]
    pub ack_route: Option<Vec<String>>,
    /// Which way its data goes: "forward" along its route, or "reverse", back along it on
    /// the links' reverse directions, where it shares them with the other flows' ACKs.
    #[serde(default)]
    pub direction: Direction,
    /// Start of the group's first flow, ns.
    #[serde(rename = "start")]
    pub start_ns: u64,
    /// Flow k of the group starts k x start_spacing later, ns.
    #[serde(rename = "start_spacing")]
    pub start_spacing_ns: u64,
    /// The application stops handing over data at this time, ns.
    #[serde(rename = "stop")]
    pub stop_ns: Option<u64>,
    /// Bytes to transfer; the flow completes when all are acknowledged.
    pub bytes: Option<u64>,
    /// Loss recovery: SACK (Linux) or NewReno.
    pub recovery: Recovery,
    /// Whether the receiver delays ACKs (every `ack_every` segments or after `delack_timeout`).
    pub delayed_ack: bool,
    /// Segments per delayed ACK (Linux: 2).
    pub ack_every: u32,
    /// Delayed-ACK timeout, ns (Linux: 40 ms).
    #[serde(rename = "delack_timeout")]
    pub delack_timeout_ns: u64,
    /// Initial congestion window, segments.
    pub initial_cwnd: u32,
    /// Initial slow-start threshold, segments (default: infinite).
    pub initial_ssthresh: Option<u32>,
    /// The receiver's window (default: a forced buffer far above the path's needs, so it
    /// never limits; see [`Rwnd`]).
    pub rwnd: Option<Rwnd>,
    /// ECN (RFC 3168) as Linux's `net.ipv4.tcp_ecn = 1` asks for it (default: off, as
    /// Linux's client side): data is sent ECT(0), a queue's CE mark comes back as ECE and
    /// the sender reduces its window once per window of data (CWR). An algorithm that
    /// needs ECN (`dctcp`) negotiates it whatever this says, and refuses `false`.
    #[serde(default)]
    pub ecn: Option<bool>,
}

/// A flow's receive window: pinned, or left to Linux's autotuning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Rwnd {
    /// The window stays at this many bytes: the receiver forces the buffer whose window
    /// is that (`SO_RCVBUF`; the window reaches it with the first segment).
    Bytes(u64),
    /// "autotune": the buffer starts at `tcp_rmem[1]` and Linux grows it once per RTT
    /// (`tcp_rcv_space_adjust`) up to `tcp_rmem[2]`.
    Mode(RwndMode),
}

/// The named receive-window modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RwndMode {
    Autotune,
}

fn default_tcp_rmem() -> [u64; 3] {
    crate::tcp::rcv_window::TCP_RMEM_DEFAULT
}

/// Which way a web group's objects travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WebDirection {
    /// Data on the forward directions of its route, like the long-lived flows.
    Forward,
    /// Data on the reverse directions, sharing them with the long-lived flows' ACKs.
    Reverse,
    /// Half of the sessions each way.
    Both,
}

/// How each web session's RTT is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RttDist {
    /// Every session has this RTT, ns (file: "40ms").
    Fixed(u64),
    /// Exponential with this mean, ns (file: "exp:50ms"; seed 000 Sec. 6.1), floored at twice
    /// the bottleneck delay plus 1 ms and rounded up to whole milliseconds.
    Exp(u64),
}

/// Background web sessions: each fetches objects one after another, each object a new short
/// TCP transfer (one RTT of handshake, then the data), with Pareto-distributed sizes and
/// exponential think times between objects.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebGroup {
    /// Label in the results; default "web{i}".
    pub name: Option<String>,
    /// Number of sessions (split evenly with direction "both").
    pub sessions: u32,
    pub direction: WebDirection,
    /// Pareto mean object size, bytes.
    #[serde(rename = "mean_size")]
    pub mean_size_bytes: u64,
    /// Pareto shape (> 1 for a finite mean).
    pub shape: f64,
    /// Sizes are capped at this multiple of the mean (the mean is kept; see `traffic.rs`).
    #[serde(rename = "max_size")]
    pub max_size_ratio: f64,
    /// Mean exponential think time between objects, ns.
    #[serde(rename = "think")]
    pub think_mean_ns: u64,
    /// Per-session RTT.
    pub rtt: RttDist,
    /// The links its sessions cross, left to right (default: the one link of a path that has
    /// one): forward sessions send their data that way, reverse ones back along it.
    #[serde(default)]
    pub route: Option<Vec<String>>,
    pub algorithm: String,
    #[serde(default)]
    pub params: BTreeMap<String, ParamValue>,
    pub recovery: Recovery,
}

/// What the run records besides the per-interval samples.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Sampling interval of the per-flow and bottleneck tables, ns.
    #[serde(rename = "interval")]
    pub interval_ns: u64,
    /// "interval": cwnd in the samples only; "changes": also every change of cwnd/ssthresh.
    pub cwnd: CwndRecording,
    /// Record every RTT sample given to the algorithms.
    pub rtt_samples: bool,
    /// Record each long-lived flow's algorithm state every interval (the `cc_state` table).
    #[serde(default)]
    pub cc_state: bool,
    /// Write every packet leaving the bottleneck, or the link `pcap_link` names (both
    /// directions), to this pcap file, with
    /// IPv4/TCP headers for Wireshark and tcptrace (see `pcap.rs` for what they hold).
    #[serde(default)]
    pub pcap: Option<String>,
    /// Capture only these long-lived flows (indices as in the results' `flow` column; web
    /// sessions are then left out); default: every packet.
    #[serde(default)]
    pub pcap_flows: Option<Vec<u32>>,
    /// The link whose two directions the capture holds, by name; default: the first.
    #[serde(default)]
    pub pcap_link: Option<String>,
}

/// How often cwnd is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CwndRecording {
    Interval,
    Changes,
}

impl Scenario {
    /// Parse the JSON the Python edge produces and validate it: the one entry point for
    /// scenarios from outside Rust. The error names the key path and what is allowed.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let sc = Self::parse_json(text)?;
        sc.validate()?;
        Ok(sc)
    }

    /// Parse without the range checks (see [`Scenario::validate`]).
    pub fn parse_json(text: &str) -> Result<Self, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let mut sc: Self = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            if path == "bottleneck" || (path.starts_with("links[") && path.ends_with(']')) {
                // Inside the flattened discipline tables serde knows only their parent: parse
                // the tables alone to name the key.
                if let Some(precise) = discipline_error(text, &path) {
                    return precise;
                }
            }
            // ".", "?" or "[0]": the text as a whole, broken or not a table, not a key.
            let whole = !path.starts_with(|c: char| c.is_ascii_alphabetic());
            path_error(if whole { "scenario" } else { &path }, "", e.into_inner())
        })?;
        sc.expand_shorthand()?;
        Ok(sc)
    }

    /// Move `[bottleneck]` into `links` as the one link named "bottleneck"; a scenario gives
    /// its path one way or the other.
    fn expand_shorthand(&mut self) -> Result<(), String> {
        match (self.bottleneck.take(), self.links.is_empty()) {
            (Some(mut b), true) => {
                if let Some(name) = &b.name {
                    return Err(format!(
                        "bottleneck.name is \"{name}\"; the one link of [bottleneck] is named \"{BOTTLENECK}\" \
                         (name links in [[links]] instead)"
                    ));
                }
                b.name = Some(BOTTLENECK.to_string());
                self.links.push(b);
                self.from_shorthand = true;
                Ok(())
            }
            (Some(_), false) => Err("bottleneck: a scenario gives its path either as [bottleneck] (one link) or as \
                                     [[links]], not both"
                .into()),
            (None, false) => Ok(()),
            (None, true) => Err("links: a scenario needs a path: [bottleneck] or at least one [[links]]".into()),
        }
    }

    /// Key path of link `k` in the file: `bottleneck` for the shorthand, else `links[k]`.
    pub fn link_key(&self, k: usize) -> String {
        if self.from_shorthand {
            BOTTLENECK.to_string()
        } else {
            format!("links[{k}]")
        }
    }

    /// The JSON Schema of a scenario (keys, types, units in the descriptions), from which the
    /// scenario reference in the documentation is generated.
    pub fn json_schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(Scenario)).expect("a schema serialises")
    }

    /// A dumbbell with the bottleneck delay set to a quarter of `rtt_ns` (the rest is access
    /// delay), a buffer of `buffer`, no flows, 1500-byte packets (MSS 1448), 100 ms samples,
    /// seed 1, no start jitter.
    pub fn dumbbell(rate_bps: u64, rtt_ns: u64, buffer: Limit, duration_ns: u64) -> Self {
        Self {
            seed: 1,
            duration_ns,
            mss: 1448,
            start_jitter_ns: 0,
            min_rto_ns: cubiclab_cc::host::rtt::TCP_RTO_MIN_US * 1000,
            tcp_rmem: default_tcp_rmem(),
            bottleneck: None,
            from_shorthand: true,
            links: vec![DuplexLink {
                name: Some(BOTTLENECK.to_string()),
                rate_bps,
                delay_ns: rtt_ns / 4,
                buffer,
                reverse_buffer: Limit::Packets(100_000),
                queue: QueueDiscipline::DropTail,
                settings: QueueSettings::default(),
                unknown: BTreeMap::new(),
                loss: LossSpec::None,
                reverse_loss: LossSpec::None,
                schedule: None,
            }],
            flows: Vec::new(),
            web: Vec::new(),
            host: Host::default(),
            record: Record {
                interval_ns: 100_000_000,
                cwnd: CwndRecording::Interval,
                rtt_samples: false,
                cc_state: false,
                pcap: None,
                pcap_flows: None,
                pcap_link: None,
            },
        }
    }

    /// Link `k` in direction `dir`, as the path crate builds it (the simulator and the
    /// emulator alike).
    pub fn link_spec(&self, k: usize, dir: Direction) -> LinkSpec {
        let b = &self.links[k];
        let (buffer, loss) = match dir {
            Direction::Forward => (b.buffer, &b.loss),
            Direction::Reverse => (b.reverse_buffer, &b.reverse_loss),
        };
        LinkSpec {
            rate_bps: b.rate_bps,
            buffer,
            queue: b.queue,
            settings: b.settings,
            loss: loss.clone(),
            packet_bytes: self.wire_bytes(),
        }
    }

    /// Data packet size on the wire.
    pub fn wire_bytes(&self) -> u32 {
        self.mss + HEADER_BYTES
    }

    /// One bandwidth-delay product of the first link in whole packets for a round trip of `rtt_ns`.
    pub fn bdp_packets(&self, rtt_ns: u64) -> u32 {
        (bdp_bytes(self.links[0].rate_bps, rtt_ns) / u64::from(self.wire_bytes())) as u32
    }
}

/// One bandwidth-delay product in whole bytes: `rate_bps` x `rtt_ns` / 8 / 10^9, rounded
/// down (at most `u64::MAX`). Where every BDP is computed: the plan's receive buffers,
/// `bdp_packets`, and the Python scenario's `"100%BDP"` (through the bindings).
pub fn bdp_bytes(rate_bps: u64, rtt_ns: u64) -> u64 {
    u64::try_from(u128::from(rate_bps) * u128::from(rtt_ns) / 8 / 1_000_000_000).unwrap_or(u64::MAX)
}

/// serde's "expected u64" and "expected struct RedSpec" in the terms of a scenario file: the
/// range of integers allowed, a table.
fn allowed_in_file_terms(message: &str) -> String {
    let (found, expected) = match message.split_once(", expected ") {
        Some(parts) => parts,
        None => return message.to_string(),
    };
    let allowed = match expected {
        "u64" => format!("an integer in [0, {}]", u64::MAX),
        "u32" => format!("an integer in [0, {}]", u32::MAX),
        "f64" => "a number".to_string(),
        e if e.starts_with("struct ") || e == "a map" || e.starts_with("internally tagged enum") => {
            "a table".to_string()
        }
        e => e.to_string(),
    };
    format!("{found}; allowed: {allowed}")
}

/// `at[.path]: message` in the file's terms.
fn path_error(at: &str, path: &str, e: serde_json::Error) -> String {
    let inner = e.to_string();
    // serde_json appends " at line L column C" of the generated JSON: not the user's.
    let inner = allowed_in_file_terms(inner.split(" at line ").next().unwrap_or(&inner));
    if path.is_empty() || path == "." {
        format!("{at}: {inner}")
    } else {
        format!("{at}.{path}: {inner}")
    }
}

/// The error in the discipline tables of the link at key path `at` (`bottleneck` or
/// `links[k]`) of scenario JSON `text`, with its key path.
fn discipline_error(text: &str, at: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let b = match at.strip_prefix("links[").and_then(|k| k.strip_suffix(']')) {
        Some(k) => v.get("links")?.get(k.parse::<usize>().ok()?)?,
        None => v.get(at)?,
    }
    .as_object()?;
    let tables: serde_json::Map<String, serde_json::Value> =
        QueueSettings::table_names().into_iter().filter_map(|k| b.get(&k).map(|t| (k, t.clone()))).collect();
    let json = serde_json::Value::Object(tables).to_string();
    let de = &mut serde_json::Deserializer::from_str(&json);
    let e = serde_path_to_error::deserialize::<_, QueueSettings>(de).err()?;
    let path = e.path().to_string();
    Some(path_error(at, &path, e.into_inner()))
}

impl DuplexLink {
    /// What routes call it.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(BOTTLENECK)
    }
}

impl FlowGroup {
    /// One long-lived bulk flow with Linux defaults: SACK, delayed ACKs (2 segments, 40 ms),
    /// initial window 10, a receiver window that never limits.
    pub fn bulk(algorithm: &str, rtt_ns: u64) -> Self {
        Self {
            name: None,
            algorithm: algorithm.to_string(),
            params: BTreeMap::new(),
            count: 1,
            rtt_ns,
            route: None,
            ack_route: None,
            direction: Direction::Forward,
            start_ns: 0,
            start_spacing_ns: 0,
            stop_ns: None,
            bytes: None,
            recovery: Recovery::Sack,
            delayed_ack: true,
            ack_every: 2,
            delack_timeout_ns: 40_000_000,
            initial_cwnd: 10,
            initial_ssthresh: None,
            rwnd: None,
            ecn: None,
        }
    }
}

/// An algorithm parameter's value in a scenario: a number, or a name for a parameter given
/// by name (`hystart = "hystart++"`); the registry checks it (`cubiclab algorithms` lists
/// what each parameter allows). The file's form of `cubiclab_cc::params::ParamValue`.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamValue {
    /// A number, in the parameter's unit.
    Number(f64),
    /// One of the parameter's choices.
    Name(String),
}

/// By hand rather than serde's untagged form, whose error ("data did not match any
/// variant") names neither what was given nor what is allowed.
impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Value;
        impl serde::de::Visitor<'_> for Value {
            type Value = ParamValue;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a number or a name; allowed: a number in the parameter's unit, or one of its names \
                     (`cubiclab algorithms` lists them)",
                )
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<ParamValue, E> {
                Ok(ParamValue::Number(v))
            }

            // Parameters are f64 (integers past 2^53 round, as in JSON itself).
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ParamValue, E> {
                Ok(ParamValue::Number(v as f64))
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ParamValue, E> {
                Ok(ParamValue::Number(v as f64))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ParamValue, E> {
                Ok(ParamValue::Name(v.to_string()))
            }
        }
        d.deserialize_any(Value)
    }
}

/// The registry's form of a group's `params` table.
fn to_params(map: &BTreeMap<String, ParamValue>) -> Params {
    let mut p = Params::new();
    for (k, v) in map {
        match v {
            ParamValue::Number(x) => p.insert(k, *x),
            ParamValue::Name(name) => p.insert(k, name.as_str()),
        }
    }
    p
}

impl FlowGroup {
    /// The algorithm's parameters as the registry takes them.
    pub fn cc_params(&self) -> Params {
        to_params(&self.params)
    }
}

impl WebGroup {
    /// The algorithm's parameters as the registry takes them.
    pub fn cc_params(&self) -> Params {
        to_params(&self.params)
    }
}

#[cfg(test)]
mod tests;
