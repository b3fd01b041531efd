//! The emulator's configuration: `key value` lines, parsed into the path's own types so the
//! emulator's bottleneck is built by the same constructor as the simulator's.

use std::os::fd::RawFd;

use crate::path::NO_FLOW;
use cubiclab_path::{Limit, LinkSpec, LossSpec, QueueDiscipline, QueueSettings, RateSchedule, ScheduleSpec};

#[derive(Clone, Debug, PartialEq)]
pub struct FlowCfg {
    pub port: u16,
    pub fwd_delay_ns: u64,
    pub rev_delay_ns: u64,
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Namespace files (`/var/run/netns/<name>`) holding the two TUN devices, and the one
    /// the emulator stays in afterwards.
    pub netns_a: String,
    pub tun_a: String,
    pub netns_b: String,
    pub tun_b: String,
    pub netns_home: Option<String>,
    /// The forward (A → B) and reverse bottleneck; a rate of 0 means no bottleneck.
    pub fwd: LinkSpec,
    pub rev: LinkSpec,
    /// The forward rate over time (the scenario's `bottleneck.schedule`), replacing
    /// `fwd.rate_bps`; its time 0 is the records' epoch.
    pub fwd_schedule: Option<RateSchedule>,
    pub seed: u64,
    pub flows: Vec<FlowCfg>,
    pub default_fwd_delay_ns: u64,
    pub default_rev_delay_ns: u64,
    /// Hard bound on the run, from the start.
    pub max_duration_ns: u64,
    pub sample_ns: u64,
    /// Directory for link.csv, flows.csv, events.csv, summary.txt.
    pub out: String,
    /// Stop when this descriptor reaches end of file (the parent's pipe); `epoch N` lines on
    /// it set the records' epoch.
    pub ctl_fd: Option<RawFd>,
    /// Keep at most this many drop events.
    pub max_events: usize,
    /// Interval records fall at `epoch_ns + k * sample_ns` (CLOCK_MONOTONIC); default: the
    /// start of the run.
    pub epoch_ns: Option<u64>,
    /// Run under SCHED_FIFO at this priority (0: normal scheduling). The loop sleeps when
    /// nothing is due, so it takes the CPU only to forward packets, but then at once: on a
    /// busy machine that is what keeps deliveries on time.
    pub sched_fifo: i32,
    /// Accept TCP and UDP segmentation offload from the kernels on both sides (super-packets of up
    /// to 64 KB, queued and timed segment by segment here). Off: one packet per read.
    pub offload: bool,
    /// Most segments handed to the receiving kernel in one write (consecutive segments of
    /// one super-packet that are due together); 1 delivers segment by segment.
    pub max_coalesce: u32,
    /// The loop sleeps at least this long when something is due soon (but wakes at
    /// once for an arrival), so that deliveries come in batches: fewer, larger writes, each
    /// up to this much late. For rates where the kernels' per-write work would otherwise
    /// take a whole core.
    pub min_wait_ns: u64,
    /// Write a pcap of every segment leaving either link here (`pcap.rs`).
    pub pcap: Option<String>,
    /// Capture only these flows (indices into `flows`); default: every packet.
    pub pcap_flows: Option<Vec<u16>>,
    /// Record up to this many reads and writes per direction in io.csv (0: none): when
    /// packets reached the emulator and left it, for finding bursts.
    pub io_trace: usize,
}

/// A link as JSON (`LinkSpec`'s serde layout), checked as the scenario checks it.
fn parse_link(v: &str, field: &str) -> Result<LinkSpec, String> {
    let l: LinkSpec = serde_json::from_str(v).map_err(|e| format!("{field}: {e}"))?;
    if matches!(l.buffer, Limit::Packets(0) | Limit::Bytes(0)) {
        return Err(format!("{field}.buffer must be > 0"));
    }
    if !(40..=65_535).contains(&l.packet_bytes) {
        return Err(format!("{field}.packet_bytes is {}; allowed: 40..=65535", l.packet_bytes));
    }
    l.loss.validate(&format!("{field}.loss"))?;
    l.settings.validate(&format!("{field}.settings"))?;
    Ok(l)
}

/// The `key value` lines that describe both bottlenecks, the forward rate's schedule and
/// the seed, as [`Config::parse`] reads them: the testbed hands the emulator the path the
/// simulator builds from the same scenario (`Scenario::link_spec`, `Schedule::spec`).
pub fn path_text(fwd: &LinkSpec, rev: &LinkSpec, fwd_schedule: Option<&ScheduleSpec>, seed: u64) -> String {
    let json = |l: &LinkSpec| serde_json::to_string(l).expect("a LinkSpec is plain data");
    let schedule = fwd_schedule.map_or(String::new(), |s| {
        format!("fwd_schedule {}\n", serde_json::to_string(s).expect("a ScheduleSpec is plain data"))
    });
    format!("fwd_link {}\nrev_link {}\n{schedule}seed {seed}\n", json(fwd), json(rev))
}

impl Config {
    /// Parse `key value` lines (`#` comments). Keys: netns_a, tun_a, netns_b, tun_b,
    /// netns_home, fwd_link / rev_link (the bottleneck as `LinkSpec` JSON: rate_bps (0: no
    /// limit), buffer, queue, settings, loss, packet_bytes; default: no limit),
    /// fwd_schedule (`ScheduleSpec` JSON), seed, flow
    /// (`PORT FWD_NS REV_NS`, repeated), default_delay (`FWD_NS REV_NS`), max_duration_ns,
    /// sample_ns, out, ctl_fd, max_events, epoch_ns, sched_fifo, offload (0|1),
    /// max_coalesce, min_wait_ns, pcap (a file), pcap_flows (flow indices, in the order of
    /// the `flow` lines), io_trace (records per direction).
    pub fn parse(text: &str) -> Result<Config, String> {
        let link = |buffer| LinkSpec {
            rate_bps: 0,
            buffer,
            queue: QueueDiscipline::DropTail,
            settings: QueueSettings::default(),
            loss: LossSpec::None,
            packet_bytes: 1500,
        };
        let mut c = Config {
            netns_a: String::new(),
            tun_a: String::new(),
            netns_b: String::new(),
            tun_b: String::new(),
            netns_home: None,
            fwd: link(Limit::Packets(1000)),
            rev: link(Limit::Packets(100_000)),
            fwd_schedule: None,
            seed: 1,
            flows: Vec::new(),
            default_fwd_delay_ns: 0,
            default_rev_delay_ns: 0,
            max_duration_ns: 60_000_000_000,
            sample_ns: 100_000_000,
            out: String::new(),
            ctl_fd: None,
            max_events: 1_000_000,
            epoch_ns: None,
            sched_fifo: 0,
            offload: true,
            max_coalesce: 64,
            min_wait_ns: 0,
            pcap: None,
            pcap_flows: None,
            io_trace: 0,
        };
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let v = v.trim();
            let at = |e: String| format!("line {}: {k}: {e}", n + 1);
            let int = |v: &str| v.parse::<u64>().map_err(|e| at(e.to_string()));
            match k {
                "netns_a" => c.netns_a = v.into(),
                "tun_a" => c.tun_a = v.into(),
                "netns_b" => c.netns_b = v.into(),
                "tun_b" => c.tun_b = v.into(),
                "netns_home" => c.netns_home = Some(v.into()),
                "fwd_link" => c.fwd = parse_link(v, "fwd_link").map_err(at)?,
                "rev_link" => c.rev = parse_link(v, "rev_link").map_err(at)?,
                "fwd_schedule" => {
                    let spec: ScheduleSpec = serde_json::from_str(v).map_err(|e| at(e.to_string()))?;
                    c.fwd_schedule = Some(RateSchedule::new(&spec).map_err(at)?);
                }
                "seed" => c.seed = int(v)?,
                "flow" => {
                    let w: Vec<&str> = v.split_whitespace().collect();
                    if w.len() != 3 {
                        return Err(at("needs PORT FWD_NS REV_NS".into()));
                    }
                    let port = int(w[0])?;
                    if port == 0 || port > 65535 {
                        return Err(at(format!("port {port}; allowed: 1..=65535")));
                    }
                    c.flows.push(FlowCfg { port: port as u16, fwd_delay_ns: int(w[1])?, rev_delay_ns: int(w[2])? });
                }
                "default_delay" => {
                    let w: Vec<&str> = v.split_whitespace().collect();
                    if w.len() != 2 {
                        return Err(at("needs FWD_NS REV_NS".into()));
                    }
                    c.default_fwd_delay_ns = int(w[0])?;
                    c.default_rev_delay_ns = int(w[1])?;
                }
                "max_duration_ns" => c.max_duration_ns = int(v)?,
                "sample_ns" => c.sample_ns = int(v)?.max(1_000_000),
                "out" => c.out = v.into(),
                "ctl_fd" => c.ctl_fd = Some(int(v)? as RawFd),
                "max_events" => c.max_events = int(v)? as usize,
                "epoch_ns" => c.epoch_ns = Some(int(v)?),
                "sched_fifo" => c.sched_fifo = int(v)?.min(99) as i32,
                "offload" => c.offload = int(v)? != 0,
                "max_coalesce" => c.max_coalesce = int(v)?.clamp(1, 64) as u32,
                "min_wait_ns" => c.min_wait_ns = int(v)?.min(1_000_000),
                "pcap" => c.pcap = Some(v.into()),
                "io_trace" => c.io_trace = int(v)?.min(50_000_000) as usize,
                "pcap_flows" => {
                    let sel = v.split_whitespace().map(int).collect::<Result<Vec<u64>, _>>()?;
                    if let Some(f) = sel.iter().find(|&&f| f >= NO_FLOW as u64) {
                        return Err(at(format!("flow {f}; allowed: below {NO_FLOW}")));
                    }
                    c.pcap_flows = Some(sel.into_iter().map(|f| f as u16).collect());
                }
                _ => return Err(format!("line {}: unknown key '{k}'", n + 1)),
            }
        }
        for (name, v) in [
            ("netns_a", &c.netns_a),
            ("tun_a", &c.tun_a),
            ("netns_b", &c.netns_b),
            ("tun_b", &c.tun_b),
            ("out", &c.out),
        ] {
            if v.is_empty() {
                return Err(format!("missing key '{name}'"));
            }
        }
        if c.flows.len() >= crate::path::NO_FLOW as usize {
            return Err(format!("{} flows; allowed: fewer than {}", c.flows.len(), crate::path::NO_FLOW));
        }
        if let Some(&f) = c.pcap_flows.iter().flatten().find(|&&f| f as usize >= c.flows.len()) {
            return Err(format!("pcap_flows: flow {f}; allowed: indices below the {} flow lines", c.flows.len()));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubiclab_path::{CoDelSpec, RedSpec};

    const BASE: &str = "netns_a a\ntun_a t\nnetns_b b\ntun_b t\nout o\n";

    #[test]
    fn config_parses() {
        let c = Config::parse(&format!(
            "{BASE}fwd_link {{\"rate_bps\": 10000000, \"buffer\": {{\"bytes\": 30000}}, \"queue\": \"codel\", \"settings\": {{}}, \"loss\": {{\"model\": \"bernoulli\", \"p\": 0.01}}, \"packet_bytes\": 1500}}\nflow 47000 20000000 20000000\nio_trace 5000\n"
        ))
        .unwrap();
        assert_eq!(c.io_trace, 5000);
        assert_eq!(c.fwd.buffer, Limit::Bytes(30000));
        assert_eq!(c.fwd.loss, LossSpec::Bernoulli { p: 0.01 });
        assert_eq!((c.fwd.queue, c.fwd.settings.codel), (QueueDiscipline::CoDel, CoDelSpec::default()));
        assert_eq!(c.flows[0], FlowCfg { port: 47000, fwd_delay_ns: 20_000_000, rev_delay_ns: 20_000_000 });
    }

    #[test]
    fn the_path_text_reads_back_as_the_same_path() {
        let fwd = LinkSpec {
            rate_bps: 123_456_789,
            buffer: Limit::Bytes(98_765),
            queue: QueueDiscipline::Red,
            settings: QueueSettings {
                red: RedSpec { min_th: 7.5, max_th: 21.0, max_p: 0.07, w_q: 0.0021, gentle: false },
                ..QueueSettings::default()
            },
            loss: LossSpec::GilbertElliott { p_gb: 0.011, p_bg: 0.3, loss_good: 0.0, loss_bad: 0.2 },
            packet_bytes: 1500,
        };
        let rev = LinkSpec { buffer: Limit::Packets(17), loss: LossSpec::Poisson { rate_per_s: 2.5 }, ..fwd.clone() };
        let c = Config::parse(&format!("{BASE}{}", path_text(&fwd, &rev, None, 42))).unwrap();
        assert_eq!((c.fwd, c.rev, c.seed), (fwd, rev.clone(), 42));
        assert!(c.fwd_schedule.is_none());
        // A schedule reads back as the path crate builds it: 12 Mbit/s for 1 s, then 6.
        let steps = ScheduleSpec::Steps { steps: vec![(0, 12_000_000), (1_000_000_000, 6_000_000)], repeat_ns: None };
        let c = Config::parse(&format!("{BASE}{}", path_text(&rev, &rev, Some(&steps), 42))).unwrap();
        let s = c.fwd_schedule.expect("given");
        assert_eq!((s.finish(0, 1500), s.finish(1_000_000_000, 1500)), (1_000_000, 1_002_000_000));
        let e =
            Config::parse(&format!("{BASE}fwd_schedule {{\"steps\": {{\"steps\": [[5, 1]], \"repeat_ns\": null}}}}"))
                .unwrap_err();
        assert!(e.contains("fwd_schedule") && e.contains("start at 0"), "{e}");
    }

    #[test]
    fn bad_values_name_the_key() {
        assert!(Config::parse("bogus 1").unwrap_err().contains("unknown key"));
        let link = |loss: &str, red: &str| {
            format!("{BASE}fwd_link {{\"rate_bps\": 1, \"buffer\": {{\"packets\": 5}}, \"queue\": \"red\", \"settings\": {{{red}}}, \"loss\": {loss}, \"packet_bytes\": 1500}}")
        };
        let e = Config::parse(&link("{\"model\": \"bernoulli\", \"p\": 1.5}", "")).unwrap_err();
        assert!(e.contains("fwd_link.loss") && e.contains("[0, 1)"), "{e}");
        let e = Config::parse(&link("{\"model\": \"none\"}", "\"red\": {\"min_th\": 20, \"max_th\": 10}")).unwrap_err();
        assert!(e.contains("fwd_link.settings.red") && e.contains("min_th"), "{e}");
        let e = Config::parse(&link("{\"model\": \"fade\"}", "")).unwrap_err();
        assert!(e.contains("fwd_link") && e.contains("fade"), "{e}");
    }
}
