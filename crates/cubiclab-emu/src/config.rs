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

/// One hop of a flow's route one way: a link (its index in the path) and the delay after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopCfg {
    pub link: u16,
    pub delay_ns: u64,
}

/// A duplex link: per direction (forward, reverse) its spec and the random stream its
/// `Link` numbers from, and the forward rate over time (`S`: a `ScheduleSpec` as
/// [`links_text`] writes it, a `RateSchedule` as the emulator runs it).
#[derive(Clone, Debug)]
pub struct Duplex<S> {
    pub dirs: [(LinkSpec, u32); 2],
    pub fwd_schedule: Option<S>,
}

/// One way of one link as the emulator builds it.
pub struct LinkWay<'a> {
    pub spec: &'a LinkSpec,
    pub schedule: Option<&'a RateSchedule>,
    pub stream: u32,
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
    /// The links after the first (`fwd`/`rev`), for a path of several (`link K fwd|rev
    /// STREAM JSON`, `link_schedule K JSON`).
    pub links: Vec<Duplex<RateSchedule>>,
    pub flows: Vec<FlowCfg>,
    /// Per flow, the hops of its packets each way (forward, reverse): its `route` lines, or
    /// else the first link with its flow line's delay.
    pub routes: Vec<[Vec<HopCfg>; 2]>,
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
    /// Write a pcap of every segment leaving link `pcap_link`, both ways, here (`pcap.rs`).
    pub pcap: Option<String>,
    /// Capture only these flows (indices into `flows`); default: every packet.
    pub pcap_flows: Option<Vec<u16>>,
    /// The link of the chain whose directions the capture holds (default 0, the first).
    pub pcap_link: usize,
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

/// The `key value` lines of a path of links and of the flows' routes across it (`routes[i]`:
/// the hops of the flow of the i-th `flow` line, forward and reverse): the first link as
/// [`path_text`] writes it, the others as `link` and `link_schedule` lines, the routes as
/// `route` lines. A path of one link writes no routes (its flows take it with their flow
/// lines' delays), so its text is [`path_text`]'s.
pub fn links_text(links: &[Duplex<ScheduleSpec>], seed: u64, routes: &[[Vec<HopCfg>; 2]]) -> String {
    let first = &links[0];
    debug_assert_eq!((first.dirs[0].1, first.dirs[1].1), (0, 1), "path_text's link numbers streams 0 and 1");
    let mut text = path_text(&first.dirs[0].0, &first.dirs[1].0, first.fwd_schedule.as_ref(), seed);
    for (k, l) in links.iter().enumerate().skip(1) {
        for (way, (spec, stream)) in WAYS.iter().zip(&l.dirs) {
            text += &format!("link {k} {way} {stream} {}\n", serde_json::to_string(spec).expect("plain data"));
        }
        if let Some(s) = &l.fwd_schedule {
            text += &format!("link_schedule {k} {}\n", serde_json::to_string(s).expect("plain data"));
        }
    }
    if links.len() > 1 {
        for (i, r) in routes.iter().enumerate() {
            for (way, hops) in WAYS.iter().zip(r) {
                let hops: Vec<String> = hops.iter().map(|h| format!("{}:{}", h.link, h.delay_ns)).collect();
                text += &format!("route {i} {way} {}\n", hops.join(" "));
            }
        }
    }
    text
}

/// The two ways of a link in the configuration's words.
const WAYS: [&str; 2] = ["fwd", "rev"];

/// The first `n` words of `v` and the rest (not empty).
fn words(v: &str, n: usize) -> Option<(Vec<&str>, &str)> {
    let mut rest = v.trim();
    let mut w = Vec::with_capacity(n);
    for _ in 0..n {
        let (word, r) = rest.split_once(char::is_whitespace)?;
        w.push(word);
        rest = r.trim_start();
    }
    Some((w, rest)).filter(|(_, rest)| !rest.is_empty())
}

impl Config {
    /// Links in the path.
    pub fn n_links(&self) -> usize {
        1 + self.links.len()
    }

    /// Way `way` (0 forward, 1 reverse) of link `k`.
    pub fn link(&self, k: usize, way: usize) -> LinkWay<'_> {
        let (spec, stream, schedule) = match (k, way) {
            (0, 0) => (&self.fwd, 0, self.fwd_schedule.as_ref()),
            (0, _) => (&self.rev, 1, None),
            _ => {
                let l = &self.links[k - 1];
                (&l.dirs[way].0, l.dirs[way].1, l.fwd_schedule.as_ref().filter(|_| way == 0))
            }
        };
        LinkWay { spec, schedule, stream }
    }

    /// Parse `key value` lines (`#` comments). Keys: netns_a, tun_a, netns_b, tun_b,
    /// netns_home, fwd_link / rev_link (the bottleneck as `LinkSpec` JSON: rate_bps (0: no
    /// limit), buffer, queue, settings, loss, packet_bytes; default: no limit),
    /// fwd_schedule (`ScheduleSpec` JSON), seed, flow
    /// (`PORT FWD_NS REV_NS`, repeated), default_delay (`FWD_NS REV_NS`), max_duration_ns,
    /// sample_ns, out, ctl_fd, max_events, epoch_ns, sched_fifo, offload (0|1),
    /// max_coalesce, min_wait_ns, pcap (a file), pcap_flows (flow indices, in the order of
    /// the `flow` lines), io_trace (records per direction); for a path of several links
    /// (see `Routes`): link, link_schedule, route.
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
            links: Vec::new(),
            flows: Vec::new(),
            routes: Vec::new(),
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
            pcap_link: 0,
            io_trace: 0,
        };
        let mut routes = Routes::default();
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
                "link" | "link_schedule" | "route" => routes.line(k, v).map_err(at)?,
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
                "pcap_link" => c.pcap_link = int(v)? as usize,
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
        routes.finish(&mut c)?;
        if c.pcap_link >= c.n_links() {
            return Err(format!("pcap_link: link {}; the path has {}", c.pcap_link, c.n_links()));
        }
        Ok(c)
    }
}

/// The lines of a path of several links, gathered until the flows are known:
/// `link K fwd|rev STREAM <LinkSpec JSON>` (link K >= 1, numbered on from 1; link 0 is
/// fwd_link / rev_link, streams 0 and 1), `link_schedule K <ScheduleSpec JSON>` (link K's
/// forward rate over time) and `route I fwd|rev K:DELAY_NS ...` (the links the packets of
/// the I-th flow line cross that way, in order, each with the delay after it; they must sum
/// to the flow line's delay that way). A flow without a route line takes link 0 with its
/// flow line's delay.
#[derive(Default)]
struct Routes {
    links: Vec<[Option<(LinkSpec, u32)>; 2]>,
    schedules: Vec<(usize, RateSchedule)>,
    routes: Vec<(usize, usize, Vec<HopCfg>)>,
}

impl Routes {
    fn line(&mut self, key: &str, v: &str) -> Result<(), String> {
        let int = |v: &str| v.parse::<u64>().map_err(|e| format!("'{v}': {e}"));
        let way = |w: &str| WAYS.iter().position(|&x| x == w).ok_or(format!("way '{w}'; allowed: fwd, rev"));
        let link = |k: &str| match int(k)? {
            0 => Err("link 0 is fwd_link / rev_link".to_string()),
            k => Ok(k as usize),
        };
        let (usage, n) = match key {
            "link" => ("K fwd|rev STREAM <LinkSpec JSON>", 3),
            "link_schedule" => ("K <ScheduleSpec JSON>", 1),
            _ => ("I fwd|rev LINK:DELAY_NS ...", 2),
        };
        let (w, rest) = words(v, n).ok_or(format!("needs {usage}"))?;
        match key {
            "link" => {
                let (k, way) = (link(w[0])?, way(w[1])?);
                if k > self.links.len() + 1 {
                    return Err(format!("link {k} before link {}; links are numbered on from 1", self.links.len() + 1));
                }
                if k > self.links.len() {
                    self.links.push([None, None]);
                }
                let spec = parse_link(rest, &format!("link {k} {}", WAYS[way]))?;
                self.links[k - 1][way] = Some((spec, int(w[2])? as u32));
            }
            "link_schedule" => {
                let spec: ScheduleSpec = serde_json::from_str(rest).map_err(|e| e.to_string())?;
                self.schedules.push((link(w[0])?, RateSchedule::new(&spec)?));
            }
            _ => {
                let hops = rest
                    .split_whitespace()
                    .map(|h| {
                        let (k, d) = h.split_once(':').ok_or(format!("hop '{h}'; allowed: LINK:DELAY_NS"))?;
                        Ok(HopCfg { link: int(k)?.min(u16::MAX as u64) as u16, delay_ns: int(d)? })
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                self.routes.push((int(w[0])? as usize, way(w[1])?, hops));
            }
        }
        Ok(())
    }

    /// Check the lines against each other and the flows, and put them into `c`.
    fn finish(self, c: &mut Config) -> Result<(), String> {
        for (i, l) in self.links.into_iter().enumerate() {
            let [Some(fwd), Some(rev)] = l else {
                return Err(format!("link {}: needs both a fwd and a rev line", i + 1));
            };
            c.links.push(Duplex { dirs: [fwd, rev], fwd_schedule: None });
        }
        for (k, s) in self.schedules {
            let l = c.links.get_mut(k - 1).ok_or(format!("link_schedule {k}: no link {k}"))?;
            l.fwd_schedule = Some(s);
        }
        let first = |d| vec![HopCfg { link: 0, delay_ns: d }];
        c.routes = c.flows.iter().map(|f| [first(f.fwd_delay_ns), first(f.rev_delay_ns)]).collect();
        let mut given = vec![[false; 2]; c.flows.len()];
        for (i, way, hops) in self.routes {
            let at = format!("route {i} {}", WAYS[way]);
            let f = c.flows.get(i).ok_or(format!("{at}: no flow line {i}; there are {}", c.flows.len()))?;
            if std::mem::replace(&mut given[i][way], true) {
                return Err(format!("{at}: given twice"));
            }
            for (j, h) in hops.iter().enumerate() {
                if h.link as usize >= c.n_links() {
                    return Err(format!("{at}: link {}; the path has {}", h.link, c.n_links()));
                }
                if hops[..j].iter().any(|x| x.link == h.link) {
                    return Err(format!("{at}: link {} twice", h.link));
                }
            }
            let (sum, delay) = (hops.iter().map(|h| h.delay_ns).sum::<u64>(), [f.fwd_delay_ns, f.rev_delay_ns][way]);
            if sum != delay {
                return Err(format!("{at}: the hops' delays sum to {sum} ns, flow line {i} says {delay}"));
            }
            c.routes[i][way] = hops;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubiclab_path::{CoDelSpec, FqCoDelSpec, RedSpec};

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
                red: RedSpec {
                    min_th: 7.5,
                    max_th: 21.0,
                    max_p: 0.07,
                    w_q: 0.0021,
                    gentle: false,
                    ecn: true,
                    harddrop: false,
                    nodrop: true,
                },
                // An optional time, set (FQ-CoDel's, off by default).
                fq_codel: FqCoDelSpec { ce_threshold_ns: Some(1_000_000), ..FqCoDelSpec::default() },
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
    fn a_path_of_several_links_reads_back_with_its_routes() {
        let link = |rate_bps| LinkSpec {
            rate_bps,
            buffer: Limit::Packets(50),
            queue: QueueDiscipline::DropTail,
            settings: QueueSettings::default(),
            loss: LossSpec::Bernoulli { p: 0.01 },
            packet_bytes: 1500,
        };
        let steps = ScheduleSpec::Steps { steps: vec![(0, 12_000_000), (1_000_000_000, 6_000_000)], repeat_ns: None };
        let links = [
            Duplex { dirs: [(link(20_000_000), 0), (link(30_000_000), 1)], fwd_schedule: None },
            Duplex { dirs: [(link(10_000_000), 65_536), (link(40_000_000), 65_537)], fwd_schedule: Some(steps) },
        ];
        let hop = |link, delay_ns| HopCfg { link, delay_ns };
        // Flow 0 crosses both links (5 ms after the first, 25 after the second, its ACKs
        // the other way round); flow 1 only the second.
        let routes = [
            [vec![hop(0, 5_000_000), hop(1, 25_000_000)], vec![hop(1, 5_000_000), hop(0, 25_000_000)]],
            [vec![hop(1, 15_000_000)], vec![hop(1, 15_000_000)]],
        ];
        let text = links_text(&links, 7, &routes);
        let flows = "flow 47000 30000000 30000000\nflow 47001 15000000 15000000\n";
        let c = Config::parse(&format!("{BASE}{text}{flows}")).unwrap();
        assert_eq!((c.n_links(), c.seed), (2, 7));
        for (k, l) in links.iter().enumerate() {
            for way in 0..2 {
                let got = c.link(k, way);
                assert_eq!((got.spec, got.stream), (&l.dirs[way].0, l.dirs[way].1));
                assert_eq!(got.schedule.is_some(), k == 1 && way == 0);
            }
        }
        assert_eq!(c.routes, routes.to_vec());
        // One link: the text of the path before links, and no routes.
        assert_eq!(links_text(&links[..1], 7, &routes), path_text(&links[0].dirs[0].0, &links[0].dirs[1].0, None, 7));
        let c = Config::parse(&format!("{BASE}{}{flows}", links_text(&links[..1], 7, &routes))).unwrap();
        assert_eq!(c.routes[1], [vec![hop(0, 15_000_000)], vec![hop(0, 15_000_000)]]);
        // What does not fit is refused, naming the line.
        let e = |extra: &str| Config::parse(&format!("{BASE}{text}{flows}{extra}")).unwrap_err();
        assert!(e("route 1 rev 1:15000000\n").contains("route 1 rev: given twice"));
        let e =
            |lines: &str| Config::parse(&format!("{BASE}{}{flows}{lines}", links_text(&links, 7, &[]))).unwrap_err();
        assert!(e("route 1 fwd 1:14000000\n").contains("sum to 14000000 ns, flow line 1 says 15000000"));
        assert!(e("route 0 fwd 1:15000000 1:15000000\n").contains("link 1 twice"));
        assert!(e("route 0 fwd 2:30000000\n").contains("link 2; the path has 2"));
        assert!(e("route 2 fwd 0:1\n").contains("no flow line 2"));
        assert!(e("route 0 fwd\n").contains("needs I fwd|rev LINK:DELAY_NS"));
        assert!(e("link 3 fwd 5 {}\n").contains("link 3 before link 2"));
        assert!(e("link 0 fwd 0 {}\n").contains("link 0 is fwd_link"));
        let one_way = format!("link 2 fwd 9 {}\n", serde_json::to_string(&link(1)).unwrap());
        assert!(e(&one_way).contains("link 2: needs both a fwd and a rev line"));
        assert!(e("link_schedule 2 {\"steps\": {\"steps\": [[0, 1]], \"repeat_ns\": null}}\n").contains("no link 2"));
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
