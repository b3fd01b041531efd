//! A user-space bottleneck between two network namespaces, in the manner of Mahimahi
//! (Netravali et al., USENIX ATC 2015): one process holds a TUN device in the sender's
//! namespace (side A) and one in the receiver's (side B), reads every IP packet the kernel
//! routes into either, and writes it into the other after the emulated path.
//!
//! The path of a packet is the simulator's (`crates/cubiclab-sim/src/sim.rs`): forward
//! (A → B) through the bottleneck — a drop-tail buffer in packets or bytes in front of a
//! transmitter of fixed rate, random loss applied to packets as they leave it (as
//! `link.rs` does) — then the flow's forward delay line; backward (B → A) through the
//! reverse bottleneck and the flow's reverse delay line. The buffer counts the packets
//! waiting, not the one being serialized (as the simulator's `DropTail`). A flow is told
//! apart by its server port (the TCP destination port forward, the source port backward);
//! other packets (ICMP, unknown ports) take the default delays.
//!
//! Times are CLOCK_MONOTONIC nanoseconds, the clock of the kernel's `mono` trace clock, so
//! the emulator's records line up with `tcp_probe`. Serialization is scheduled on the
//! virtual clock (a packet starts when the previous one finished, not when the loop noticed
//! it), so the rate is exact on average however late the loop wakes; the lateness of each
//! delivery (time written minus time due) is measured and reported.
//!
//! The TUN devices are created without `IFF_VNET_HDR`, so they offer no segmentation
//! offload and the kernel hands over packets of at most the MTU (`validate_xmit_skb`
//! segments GSO skbs in software). `tun_net_xmit` orphans each skb, so TCP Small Queues
//! does not throttle the sender: the emulated buffer, not the sender's socket, fills.

use std::collections::{HashMap, VecDeque};
use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

pub static STOP: AtomicBool = AtomicBool::new(false);

/// Buffer limit of a bottleneck queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

/// Random loss on packets leaving a bottleneck.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    None,
    Bernoulli {
        p: f64,
    },
    /// Loss events as a Poisson process of `rate` per second; each takes the next packet.
    Poisson {
        rate: f64,
    },
    Gilbert {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

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
    pub rate_bps: u64,
    pub rev_rate_bps: u64,
    pub limit: Limit,
    pub rev_limit: Limit,
    pub loss: LossModel,
    pub rev_loss: LossModel,
    pub seed: u64,
    pub flows: Vec<FlowCfg>,
    pub default_fwd_delay_ns: u64,
    pub default_rev_delay_ns: u64,
    /// Hard bound on the run, from the start.
    pub max_duration_ns: u64,
    pub sample_ns: u64,
    pub mtu: usize,
    /// Directory for link.csv, flows.csv, events.csv, summary.txt.
    pub out: String,
    /// Stop when this descriptor reaches end of file (the parent's pipe).
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
}

fn parse_limit(v: &str) -> Result<Limit, String> {
    let mut it = v.split_whitespace();
    let kind = it.next().unwrap_or("");
    let n: u64 = it.next().ok_or("limit: missing value")?.parse().map_err(|e| format!("limit: {e}"))?;
    match kind {
        "packets" => Ok(Limit::Packets(n)),
        "bytes" => Ok(Limit::Bytes(n)),
        _ => Err(format!("limit kind '{kind}'; allowed: packets, bytes")),
    }
}

fn parse_loss(v: &str) -> Result<LossModel, String> {
    let w: Vec<&str> = v.split_whitespace().collect();
    let num = |i: usize| -> Result<f64, String> {
        w.get(i).ok_or(format!("loss '{v}': missing value"))?.parse::<f64>().map_err(|e| format!("loss '{v}': {e}"))
    };
    match w.first().copied().unwrap_or("none") {
        "none" => Ok(LossModel::None),
        "bernoulli" => Ok(LossModel::Bernoulli { p: num(1)? }),
        "poisson" => Ok(LossModel::Poisson { rate: num(1)? }),
        "gilbert" => Ok(LossModel::Gilbert { p_gb: num(1)?, p_bg: num(2)?, loss_good: num(3)?, loss_bad: num(4)? }),
        m => Err(format!("loss model '{m}'; allowed: none, bernoulli, poisson, gilbert")),
    }
}

impl Config {
    /// Parse `key value` lines (`#` comments). Keys: netns_a, tun_a, netns_b, tun_b,
    /// netns_home, rate_bps, rev_rate_bps (0: no limit), limit / rev_limit
    /// (`packets N` | `bytes N`), loss / rev_loss (`none` | `bernoulli P` | `poisson RATE`
    /// | `gilbert P_GB P_BG LOSS_GOOD LOSS_BAD`), seed, flow (`PORT FWD_NS REV_NS`, repeated),
    /// default_delay (`FWD_NS REV_NS`), max_duration_ns, sample_ns, mtu, out, ctl_fd,
    /// max_events, epoch_ns, sched_fifo.
    pub fn parse(text: &str) -> Result<Config, String> {
        let mut c = Config {
            netns_a: String::new(),
            tun_a: String::new(),
            netns_b: String::new(),
            tun_b: String::new(),
            netns_home: None,
            rate_bps: 0,
            rev_rate_bps: 0,
            limit: Limit::Packets(1000),
            rev_limit: Limit::Packets(100_000),
            loss: LossModel::None,
            rev_loss: LossModel::None,
            seed: 1,
            flows: Vec::new(),
            default_fwd_delay_ns: 0,
            default_rev_delay_ns: 0,
            max_duration_ns: 60_000_000_000,
            sample_ns: 100_000_000,
            mtu: 1500,
            out: String::new(),
            ctl_fd: None,
            max_events: 1_000_000,
            epoch_ns: None,
            sched_fifo: 0,
        };
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let v = v.trim();
            let int = |v: &str| v.parse::<u64>().map_err(|e| format!("line {}: {k}: {e}", n + 1));
            match k {
                "netns_a" => c.netns_a = v.into(),
                "tun_a" => c.tun_a = v.into(),
                "netns_b" => c.netns_b = v.into(),
                "tun_b" => c.tun_b = v.into(),
                "netns_home" => c.netns_home = Some(v.into()),
                "rate_bps" => c.rate_bps = int(v)?,
                "rev_rate_bps" => c.rev_rate_bps = int(v)?,
                "limit" => c.limit = parse_limit(v)?,
                "rev_limit" => c.rev_limit = parse_limit(v)?,
                "loss" => c.loss = parse_loss(v)?,
                "rev_loss" => c.rev_loss = parse_loss(v)?,
                "seed" => c.seed = int(v)?,
                "flow" => {
                    let w: Vec<&str> = v.split_whitespace().collect();
                    if w.len() != 3 {
                        return Err(format!("line {}: flow needs PORT FWD_NS REV_NS", n + 1));
                    }
                    let port = int(w[0])?;
                    if port == 0 || port > 65535 {
                        return Err(format!("line {}: port {port} out of range", n + 1));
                    }
                    c.flows.push(FlowCfg { port: port as u16, fwd_delay_ns: int(w[1])?, rev_delay_ns: int(w[2])? });
                }
                "default_delay" => {
                    let w: Vec<&str> = v.split_whitespace().collect();
                    if w.len() != 2 {
                        return Err(format!("line {}: default_delay needs FWD_NS REV_NS", n + 1));
                    }
                    c.default_fwd_delay_ns = int(w[0])?;
                    c.default_rev_delay_ns = int(w[1])?;
                }
                "max_duration_ns" => c.max_duration_ns = int(v)?,
                "sample_ns" => c.sample_ns = int(v)?.max(1_000_000),
                "mtu" => c.mtu = int(v)? as usize,
                "out" => c.out = v.into(),
                "ctl_fd" => c.ctl_fd = Some(int(v)? as RawFd),
                "max_events" => c.max_events = int(v)? as usize,
                "epoch_ns" => c.epoch_ns = Some(int(v)?),
                "sched_fifo" => c.sched_fifo = int(v)?.min(99) as i32,
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
        Ok(c)
    }
}

// ---- clock, randomness -------------------------------------------------------------------

pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// SplitMix64 (Steele, Lea, Flood 2014): small, seedable, good enough for loss draws.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

pub struct Loss {
    model: LossModel,
    rng: Rng,
    bad: bool,
    next_event_ns: u64,
}

impl Loss {
    pub fn new(model: LossModel, seed: u64, now: u64) -> Self {
        let mut l = Loss { model, rng: Rng::new(seed), bad: false, next_event_ns: u64::MAX };
        if let LossModel::Poisson { rate } = model {
            l.next_event_ns = l.poisson_gap(now, rate);
        }
        l
    }
    fn poisson_gap(&mut self, from: u64, rate: f64) -> u64 {
        if rate <= 0.0 {
            return u64::MAX;
        }
        let u = 1.0 - self.rng.uniform(); // (0, 1]
        from.saturating_add((-u.ln() / rate * 1e9) as u64)
    }
    /// Whether the packet leaving at `now` is lost.
    pub fn lose(&mut self, now: u64) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => self.rng.uniform() < p,
            LossModel::Poisson { rate } => {
                if now >= self.next_event_ns {
                    self.next_event_ns = self.poisson_gap(now, rate);
                    true
                } else {
                    false
                }
            }
            LossModel::Gilbert { p_gb, p_bg, loss_good, loss_bad } => {
                let flip = self.rng.uniform() < if self.bad { p_bg } else { p_gb };
                if flip {
                    self.bad = !self.bad;
                }
                self.rng.uniform() < if self.bad { loss_bad } else { loss_good }
            }
        }
    }
}

// ---- the bottleneck -----------------------------------------------------------------------

pub const NO_FLOW: u16 = u16::MAX;

pub struct Pkt {
    pub buf: Vec<u8>,
    pub len: usize,
    pub flow: u16,
    pub arrived_ns: u64,
}

/// A drop-tail buffer in front of a transmitter of `rate_bps` (0: infinitely fast).
pub struct Link {
    pub rate_bps: u64,
    pub limit: Limit,
    queue: VecDeque<Pkt>,
    pub queue_bytes: u64,
    /// The packet being serialized and the time it is done.
    busy: Option<(Pkt, u64)>,
    carry: u128,
    pub loss: Loss,
    pub drops: u64,
    pub random_losses: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub arrivals: u64,
}

pub enum Offer {
    Accepted,
    Dropped(Pkt),
}

impl Link {
    pub fn new(rate_bps: u64, limit: Limit, loss: Loss) -> Self {
        Link {
            rate_bps,
            limit,
            queue: VecDeque::new(),
            queue_bytes: 0,
            busy: None,
            carry: 0,
            loss,
            drops: 0,
            random_losses: 0,
            tx_bytes: 0,
            tx_packets: 0,
            arrivals: 0,
        }
    }

    /// Serialization time of `len` bytes, carrying the remainder so the long-run rate is
    /// exact.
    fn serialization(&mut self, len: usize) -> u64 {
        if self.rate_bps == 0 {
            return 0;
        }
        let num = len as u128 * 8 * 1_000_000_000 + self.carry;
        let r = self.rate_bps as u128;
        self.carry = num % r;
        (num / r) as u64
    }

    pub fn queue_packets(&self) -> usize {
        self.queue.len()
    }

    pub fn offer(&mut self, now: u64, p: Pkt) -> Offer {
        self.arrivals += 1;
        if self.busy.is_none() {
            let fin = now + self.serialization(p.len);
            self.busy = Some((p, fin));
            return Offer::Accepted;
        }
        let full = match self.limit {
            Limit::Packets(n) => self.queue.len() as u64 >= n,
            Limit::Bytes(b) => self.queue_bytes + p.len as u64 > b,
        };
        if full {
            self.drops += 1;
            return Offer::Dropped(p);
        }
        self.queue_bytes += p.len as u64;
        self.queue.push_back(p);
        Offer::Accepted
    }

    /// Time the packet in service finishes, if any.
    pub fn next_done(&self) -> Option<u64> {
        self.busy.as_ref().map(|b| b.1)
    }

    /// Take the packet in service if it finished by `now`: (packet, finish time, lost).
    /// The next packet starts at that finish time.
    pub fn take_done(&mut self, now: u64) -> Option<(Pkt, u64, bool)> {
        match &self.busy {
            Some((_, fin)) if *fin <= now => {}
            _ => return None,
        }
        let (p, fin) = self.busy.take().unwrap();
        self.tx_bytes += p.len as u64;
        self.tx_packets += 1;
        if let Some(q) = self.queue.pop_front() {
            self.queue_bytes -= q.len as u64;
            let next = fin + self.serialization(q.len);
            self.busy = Some((q, next));
        }
        let lost = self.loss.lose(fin);
        if lost {
            self.random_losses += 1;
        }
        Some((p, fin, lost))
    }
}

/// Packets of one direction with one delay, in order of release.
struct DelayLine {
    delay: u64,
    q: VecDeque<(u64, Pkt)>,
}

struct Direction {
    link: Link,
    lines: Vec<DelayLine>,
    /// Delay line index per flow index, and for unclassified packets.
    line_of_flow: Vec<usize>,
    line_default: usize,
    in_fd: RawFd,
    out_fd: RawFd,
    /// Whether the flow's port is the destination (forward) or source (backward) port.
    by_dport: bool,
    delivered: u64,
    write_errors: u64,
}

fn line_for(lines: &mut Vec<DelayLine>, delay: u64) -> usize {
    if let Some(i) = lines.iter().position(|l| l.delay == delay) {
        return i;
    }
    lines.push(DelayLine { delay, q: VecDeque::new() });
    lines.len() - 1
}

/// (flow port, TCP sequence number) of an IPv4 TCP packet, looking at the destination port
/// if `by_dport`, else the source port.
fn classify(buf: &[u8], by_dport: bool) -> Option<(u16, u32)> {
    if buf.len() < 20 || buf[0] >> 4 != 4 || buf[9] != 6 {
        return None;
    }
    let ihl = (buf[0] & 0x0f) as usize * 4;
    if buf.len() < ihl + 8 {
        return None;
    }
    let t = &buf[ihl..];
    let sport = u16::from_be_bytes([t[0], t[1]]);
    let dport = u16::from_be_bytes([t[2], t[3]]);
    let seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
    Some((if by_dport { dport } else { sport }, seq))
}

// ---- TUN and namespaces --------------------------------------------------------------------

fn errno_str() -> String {
    std::io::Error::last_os_error().to_string()
}

fn enter_netns(path: &str) -> Result<(), String> {
    let c = CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: plain syscalls on a path we own.
    unsafe {
        let fd = libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(format!("open {path}: {}", errno_str()));
        }
        let r = libc::setns(fd, libc::CLONE_NEWNET);
        let e = errno_str();
        libc::close(fd);
        if r != 0 {
            return Err(format!("setns {path}: {e}"));
        }
    }
    Ok(())
}

/// Attach to the TUN device `name` (created beforehand by `ip tuntap add mode tun`) in the
/// current network namespace; non-blocking.
fn open_tun(name: &str) -> Result<RawFd, String> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(format!("device name '{name}' too long"));
    }
    // SAFETY: ifreq is plain data; the ioctl reads the name and flags.
    unsafe {
        let fd = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(format!("open /dev/net/tun: {}", errno_str()));
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (i, b) in name.bytes().enumerate() {
            ifr.ifr_name[i] = b as libc::c_char;
        }
        ifr.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
        if libc::ioctl(fd, libc::TUNSETIFF, &mut ifr as *mut libc::ifreq) < 0 {
            let e = errno_str();
            libc::close(fd);
            return Err(format!("TUNSETIFF {name}: {e}"));
        }
        Ok(fd)
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Stop on SIGTERM, SIGINT and SIGHUP (no SA_RESTART, so a wait returns at once), and
/// when the parent dies.
pub fn install_signal_handlers() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    }
}

// ---- records ---------------------------------------------------------------------------------

/// Lateness histogram: 1 us buckets up to 10 ms, then one overflow bucket.
struct Lateness {
    buckets: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

impl Lateness {
    fn new() -> Self {
        Lateness { buckets: vec![0; 10_001], n: 0, sum: 0, max: 0 }
    }
    fn add(&mut self, ns: u64) {
        let us = (ns / 1000).min(10_000) as usize;
        self.buckets[us] += 1;
        self.n += 1;
        self.sum += ns as u128;
        self.max = self.max.max(ns);
    }
    fn quantile_us(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let target = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, c) in self.buckets.iter().enumerate() {
            acc += c;
            if acc >= target {
                return i as u64;
            }
        }
        10_000
    }
}

struct FlowStats {
    tx_bytes: u64,
    tx_packets: u64,
    drops: u64,
    random: u64,
}

/// What a run did, as `key value` lines.
pub struct Summary(pub Vec<(String, String)>);

impl Summary {
    pub fn text(&self) -> String {
        self.0.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
    }
}

// ---- the loop -----------------------------------------------------------------------------

fn flow_index(map: &HashMap<u16, usize>, buf: &[u8], by_dport: bool) -> (u16, u32) {
    match classify(buf, by_dport) {
        Some((port, seq)) => (map.get(&port).map_or(NO_FLOW, |&i| i as u16), seq),
        None => (NO_FLOW, 0),
    }
}

/// Run the emulator until SIGTERM/SIGINT, end of file on `ctl_fd`, or `max_duration_ns`.
pub fn run(cfg: &Config) -> Result<Summary, String> {
    enter_netns(&cfg.netns_a)?;
    let fd_a = open_tun(&cfg.tun_a)?;
    enter_netns(&cfg.netns_b)?;
    let fd_b = open_tun(&cfg.tun_b).inspect_err(|_| unsafe {
        libc::close(fd_a);
    })?;
    if let Some(home) = &cfg.netns_home {
        enter_netns(home)?;
    }
    // SAFETY: plain prctl / sched_setscheduler on this process.
    let sched = unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        if cfg.sched_fifo > 0 {
            let sp = libc::sched_param { sched_priority: cfg.sched_fifo };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &sp) == 0 {
                "fifo"
            } else {
                "normal (SCHED_FIFO refused)"
            }
        } else {
            "normal"
        }
    };
    let r = run_fds(cfg, fd_a, fd_b, sched);
    // SAFETY: we own both descriptors.
    unsafe {
        libc::close(fd_a);
        libc::close(fd_b);
    }
    r
}

fn run_fds(cfg: &Config, fd_a: RawFd, fd_b: RawFd, sched: &str) -> Result<Summary, String> {
    fs::create_dir_all(&cfg.out).map_err(|e| format!("{}: {e}", cfg.out))?;
    let start = mono_ns();
    let deadline = start.saturating_add(cfg.max_duration_ns);
    let port_map: HashMap<u16, usize> = cfg.flows.iter().enumerate().map(|(i, f)| (f.port, i)).collect();
    let mut dirs: Vec<Direction> = Vec::with_capacity(2);
    for (k, (rate, limit, loss, in_fd, out_fd)) in
        [(cfg.rate_bps, cfg.limit, cfg.loss, fd_a, fd_b), (cfg.rev_rate_bps, cfg.rev_limit, cfg.rev_loss, fd_b, fd_a)]
            .into_iter()
            .enumerate()
    {
        let mut lines = Vec::new();
        let line_of_flow = cfg
            .flows
            .iter()
            .map(|f| line_for(&mut lines, if k == 0 { f.fwd_delay_ns } else { f.rev_delay_ns }))
            .collect();
        let line_default =
            line_for(&mut lines, if k == 0 { cfg.default_fwd_delay_ns } else { cfg.default_rev_delay_ns });
        let seed = cfg.seed.wrapping_mul(2).wrapping_add(k as u64);
        dirs.push(Direction {
            link: Link::new(rate, limit, Loss::new(loss, seed, start)),
            lines,
            line_of_flow,
            line_default,
            in_fd,
            out_fd,
            by_dport: k == 0,
            delivered: 0,
            write_errors: 0,
        });
    }
    let nflows = cfg.flows.len();
    let mut fstats: Vec<FlowStats> =
        (0..nflows).map(|_| FlowStats { tx_bytes: 0, tx_packets: 0, drops: 0, random: 0 }).collect();
    let mut link_csv = String::from(
        "t_ns,queue_packets,queue_bytes,max_queue_packets,max_queue_bytes,drops,random_losses,tx_bytes,rev_queue_packets,rev_drops,rev_random_losses,rev_tx_bytes,late_max_ns\n",
    );
    let mut flows_csv = String::from("t_ns,flow,tx_bytes,tx_packets,drops,random_losses\n");
    let mut events_csv = String::from("t_ns,dir,flow,kind,seq,len\n");
    let mut n_events = 0usize;
    let mut events_lost = 0u64;
    let mut late = Lateness::new();
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let bufsize = cfg.mtu + 128;
    let epoch = cfg.epoch_ns.unwrap_or(start);
    let mut next_sample = if epoch > start {
        epoch - (epoch - start) / cfg.sample_ns * cfg.sample_ns
    } else {
        epoch + ((start - epoch) / cfg.sample_ns + 1) * cfg.sample_ns
    };
    let mut max_q = 0usize;
    let mut max_qb = 0u64;
    let mut peak_q = 0usize;
    let mut peak_qb = 0u64;
    let mut late_max_iv = 0u64;
    let mut prev = [(0u64, 0u64, 0u64); 2]; // drops, random, tx_bytes at the last sample
    let mut rx_errors = 0u64;
    let mut oversize = 0u64;
    let mut polls = 0u64;
    let mut stop_reason = "deadline";
    let mut ctl_buf = [0u8; 64];

    loop {
        let mut now = mono_ns();
        if STOP.load(Ordering::Relaxed) {
            stop_reason = "signal";
            break;
        }
        if now >= deadline {
            break;
        }
        // 1. Read what arrived, up to a batch per side so timing stays tight.
        for d in 0..2 {
            for _ in 0..64 {
                let mut buf = pool.pop().unwrap_or_else(|| vec![0u8; bufsize]);
                // SAFETY: buf has bufsize bytes.
                let n = unsafe { libc::read(dirs[d].in_fd, buf.as_mut_ptr() as *mut libc::c_void, bufsize) };
                if n < 0 {
                    let e = std::io::Error::last_os_error();
                    pool.push(buf);
                    if e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::Interrupted {
                        rx_errors += 1;
                    }
                    break;
                }
                if n == 0 {
                    pool.push(buf);
                    break;
                }
                let len = n as usize;
                if len > cfg.mtu {
                    oversize += 1;
                }
                now = mono_ns();
                let (flow, seq) = flow_index(&port_map, &buf[..len], dirs[d].by_dport);
                let p = Pkt { buf, len, flow, arrived_ns: now };
                let dir = &mut dirs[d];
                match dir.link.offer(now, p) {
                    Offer::Accepted => {}
                    Offer::Dropped(p) => {
                        if d == 0 && (p.flow as usize) < nflows {
                            fstats[p.flow as usize].drops += 1;
                        }
                        if n_events < cfg.max_events {
                            events_csv.push_str(&format!("{now},{d},{},0,{seq},{}\n", p.flow as i32, p.len));
                            n_events += 1;
                        } else {
                            events_lost += 1;
                        }
                        pool.push(p.buf);
                    }
                }
                if d == 0 {
                    let dl = &dirs[0].link;
                    max_q = max_q.max(dl.queue_packets());
                    max_qb = max_qb.max(dl.queue_bytes);
                }
            }
        }
        // 2. Packets that finished serialization enter their delay lines (or are lost).
        now = mono_ns();
        for d in 0..2 {
            let dir = &mut dirs[d];
            while let Some((p, fin, lost)) = dir.link.take_done(now) {
                let fi = p.flow as usize;
                if d == 0 && fi < nflows {
                    fstats[fi].tx_bytes += p.len as u64;
                    fstats[fi].tx_packets += 1;
                }
                if lost {
                    if d == 0 && fi < nflows {
                        fstats[fi].random += 1;
                    }
                    if n_events < cfg.max_events {
                        let seq = classify(&p.buf[..p.len], true).map_or(0, |x| x.1);
                        events_csv.push_str(&format!("{fin},{d},{},1,{seq},{}\n", p.flow as i32, p.len));
                        n_events += 1;
                    } else {
                        events_lost += 1;
                    }
                    pool.push(p.buf);
                    continue;
                }
                let li = if fi < nflows { dir.line_of_flow[fi] } else { dir.line_default };
                let line = &mut dir.lines[li];
                line.q.push_back((fin + line.delay, p));
            }
        }
        // 3. Deliver what is due.
        now = mono_ns();
        for dir in dirs.iter_mut() {
            for line in dir.lines.iter_mut() {
                while let Some((due, _)) = line.q.front() {
                    if *due > now {
                        break;
                    }
                    let (due, p) = line.q.pop_front().unwrap();
                    // SAFETY: p.buf holds p.len bytes.
                    let w = unsafe { libc::write(dir.out_fd, p.buf.as_ptr() as *const libc::c_void, p.len) };
                    if w < 0 {
                        dir.write_errors += 1;
                    } else {
                        dir.delivered += 1;
                    }
                    let l = now.saturating_sub(due);
                    late.add(l);
                    late_max_iv = late_max_iv.max(l);
                    pool.push(p.buf);
                    now = mono_ns();
                }
            }
        }
        // 4. Interval records.
        if now >= next_sample {
            let t = next_sample;
            let f = &dirs[0].link;
            let r = &dirs[1].link;
            link_csv.push_str(&format!(
                "{t},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                f.queue_packets(),
                f.queue_bytes,
                max_q,
                max_qb,
                f.drops - prev[0].0,
                f.random_losses - prev[0].1,
                f.tx_bytes - prev[0].2,
                r.queue_packets(),
                r.drops - prev[1].0,
                r.random_losses - prev[1].1,
                r.tx_bytes - prev[1].2,
                late_max_iv
            ));
            prev[0] = (f.drops, f.random_losses, f.tx_bytes);
            prev[1] = (r.drops, r.random_losses, r.tx_bytes);
            peak_q = peak_q.max(max_q);
            peak_qb = peak_qb.max(max_qb);
            max_q = f.queue_packets();
            max_qb = f.queue_bytes;
            late_max_iv = 0;
            for (i, s) in fstats.iter_mut().enumerate() {
                flows_csv.push_str(&format!("{t},{i},{},{},{},{}\n", s.tx_bytes, s.tx_packets, s.drops, s.random));
                *s = FlowStats { tx_bytes: 0, tx_packets: 0, drops: 0, random: 0 };
            }
            next_sample += cfg.sample_ns;
        }
        // 5. Sleep until the next due event or an arrival.
        let mut next = deadline.min(next_sample);
        for dir in &dirs {
            if let Some(t) = dir.link.next_done() {
                next = next.min(t);
            }
            for line in &dir.lines {
                if let Some((due, _)) = line.q.front() {
                    next = next.min(*due);
                }
            }
        }
        now = mono_ns();
        if next <= now {
            continue;
        }
        let wait = next - now;
        let mut fds = [
            libc::pollfd { fd: fd_a, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: fd_b, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: cfg.ctl_fd.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
        ];
        let ts = libc::timespec {
            tv_sec: (wait / 1_000_000_000) as libc::time_t,
            tv_nsec: (wait % 1_000_000_000) as libc::c_long,
        };
        polls += 1;
        // SAFETY: fds and ts are valid for the call; fd -1 is ignored by ppoll.
        let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 3, &ts, std::ptr::null()) };
        if r > 0 && fds[2].revents != 0 {
            // SAFETY: reading into a local buffer.
            let n = unsafe { libc::read(fds[2].fd, ctl_buf.as_mut_ptr() as *mut libc::c_void, ctl_buf.len()) };
            if n <= 0 {
                stop_reason = "control";
                break;
            }
        }
    }
    let end = mono_ns();
    let f = &dirs[0].link;
    let r = &dirs[1].link;
    peak_q = peak_q.max(max_q);
    peak_qb = peak_qb.max(max_qb);
    let s = |v: &dyn ToString| v.to_string();
    let summary = Summary(vec![
        ("start_ns".into(), s(&start)),
        ("end_ns".into(), s(&end)),
        ("stop".into(), stop_reason.into()),
        ("fwd_arrivals".into(), s(&f.arrivals)),
        ("fwd_tx_packets".into(), s(&f.tx_packets)),
        ("fwd_tx_bytes".into(), s(&f.tx_bytes)),
        ("fwd_drops".into(), s(&f.drops)),
        ("fwd_random_losses".into(), s(&f.random_losses)),
        ("fwd_delivered".into(), s(&dirs[0].delivered)),
        ("fwd_write_errors".into(), s(&dirs[0].write_errors)),
        ("fwd_peak_queue_packets".into(), s(&peak_q)),
        ("fwd_peak_queue_bytes".into(), s(&peak_qb)),
        ("rev_arrivals".into(), s(&r.arrivals)),
        ("rev_tx_packets".into(), s(&r.tx_packets)),
        ("rev_drops".into(), s(&r.drops)),
        ("rev_random_losses".into(), s(&r.random_losses)),
        ("rev_delivered".into(), s(&dirs[1].delivered)),
        ("rev_write_errors".into(), s(&dirs[1].write_errors)),
        ("rx_errors".into(), s(&rx_errors)),
        ("oversize".into(), s(&oversize)),
        ("late_n".into(), s(&late.n)),
        ("late_mean_ns".into(), s(&(if late.n > 0 { (late.sum / late.n as u128) as u64 } else { 0 }))),
        ("late_p50_us".into(), s(&late.quantile_us(0.5))),
        ("late_p99_us".into(), s(&late.quantile_us(0.99))),
        ("late_p999_us".into(), s(&late.quantile_us(0.999))),
        ("late_max_ns".into(), s(&late.max)),
        ("polls".into(), s(&polls)),
        ("events_lost".into(), s(&events_lost)),
        ("scheduling".into(), sched.replace(' ', "_")),
    ]);
    let out = std::path::Path::new(&cfg.out);
    for (name, text) in [("link.csv", &link_csv), ("flows.csv", &flows_csv), ("events.csv", &events_csv)] {
        fs::write(out.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    let mut fh = fs::File::create(out.join("summary.txt")).map_err(|e| e.to_string())?;
    fh.write_all(summary.text().as_bytes()).map_err(|e| e.to_string())?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(len: usize) -> Pkt {
        Pkt { buf: vec![0; len], len, flow: 0, arrived_ns: 0 }
    }

    #[test]
    fn serialization_is_exact_on_average() {
        // 1500 bytes at 10 Mbit/s: 12000 bits / 1e7 = 1.2 ms each; 1000 back-to-back
        // packets finish at exactly 1.2 s.
        let mut l = Link::new(10_000_000, Limit::Packets(2000), Loss::new(LossModel::None, 1, 0));
        for _ in 0..1000 {
            assert!(matches!(l.offer(0, pkt(1500)), Offer::Accepted));
        }
        let mut last = 0;
        while let Some((_, fin, _)) = l.take_done(u64::MAX) {
            last = fin;
        }
        assert_eq!(last, 1_200_000_000);
        // 1000 bytes at 3 Mbit/s: 8000/3e6 s = 2666666.67 ns: the carry makes 3 packets
        // take exactly 8 ms.
        let mut l = Link::new(3_000_000, Limit::Packets(10), Loss::new(LossModel::None, 1, 0));
        for _ in 0..3 {
            l.offer(0, pkt(1000));
        }
        let mut fins = vec![];
        while let Some((_, fin, _)) = l.take_done(u64::MAX) {
            fins.push(fin);
        }
        assert_eq!(fins, vec![2_666_666, 5_333_333, 8_000_000]);
    }

    #[test]
    fn droptail_counts_waiting_packets() {
        // Limit 3 packets: one in service plus three waiting are accepted, the fifth drops.
        let mut l = Link::new(1_000_000, Limit::Packets(3), Loss::new(LossModel::None, 1, 0));
        let acc: Vec<bool> = (0..5).map(|_| matches!(l.offer(0, pkt(100)), Offer::Accepted)).collect();
        assert_eq!(acc, vec![true, true, true, true, false]);
        assert_eq!(l.drops, 1);
        // Bytes: limit 250 holds two 100-byte packets waiting (200), not a third (300).
        let mut l = Link::new(1_000_000, Limit::Bytes(250), Loss::new(LossModel::None, 1, 0));
        let acc: Vec<bool> = (0..4).map(|_| matches!(l.offer(0, pkt(100)), Offer::Accepted)).collect();
        assert_eq!(acc, vec![true, true, true, false]);
        assert_eq!(l.queue_bytes, 200);
    }

    #[test]
    fn bernoulli_rate_within_binomial_error() {
        // p = 0.01, n = 1e6: mean 1e4, sd sqrt(n p (1-p)) = 99.5; allow 5 sd.
        let mut loss = Loss::new(LossModel::Bernoulli { p: 0.01 }, 7, 0);
        let k = (0..1_000_000).filter(|_| loss.lose(0)).count() as f64;
        assert!((k - 10_000.0).abs() < 5.0 * 99.5, "{k}");
    }

    #[test]
    fn classify_reads_ports() {
        let mut b = vec![0u8; 40];
        b[0] = 0x45;
        b[9] = 6;
        b[20..22].copy_from_slice(&40000u16.to_be_bytes());
        b[22..24].copy_from_slice(&47001u16.to_be_bytes());
        b[24..28].copy_from_slice(&123u32.to_be_bytes());
        assert_eq!(classify(&b, true), Some((47001, 123)));
        assert_eq!(classify(&b, false), Some((40000, 123)));
        b[9] = 17;
        assert_eq!(classify(&b, true), None);
    }

    #[test]
    fn config_parses() {
        let c = Config::parse(
            "netns_a /run/netns/a\ntun_a t0\nnetns_b /run/netns/b\ntun_b t1\nout /tmp/x\nrate_bps 10000000\nlimit bytes 30000\nloss bernoulli 0.01\nflow 47000 20000000 20000000\n",
        )
        .unwrap();
        assert_eq!(c.limit, Limit::Bytes(30000));
        assert_eq!(c.loss, LossModel::Bernoulli { p: 0.01 });
        assert_eq!(c.flows[0], FlowCfg { port: 47000, fwd_delay_ns: 20_000_000, rev_delay_ns: 20_000_000 });
        assert!(Config::parse("bogus 1").unwrap_err().contains("unknown key"));
    }
}
